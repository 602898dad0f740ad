"""bench reliability (issue 15 figures): tiny runs of each part, the shared section writer, and the cache
defects the benchmark found (each test failed before its fix):

- ALFWorld translation cache: an entry that is a FIFO hung the reset; ``/dev/zero``, a huge file or a
  decompression bomb were read whole into memory; a forged entry (correct checksum, text that is not a
  translation) made Fast Downward exit the process (exit code 33).
- WebShop index cache: a planted index whose ``vocab`` is numbers crashed the env's construction
  (``TypeError``); a forged index with a correct checksum over a 2-D ``postings_doc`` crashed the first
  search; a zip member inflating to hundreds of MB was read whole.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import tracemalloc
import warnings
import zlib

import numpy as np
import pytest

from agentgym_credit.bench.faults import reliability as R
from agentgym_credit.bench.faults import reliability_caches as RC
from agentgym_credit.bench.stats.report import write_section

pytest.importorskip("pyarrow", reason="RolloutBatch.save needs `pip install -e '.[data]'`")


def test_write_section_replaces_only_its_own_block(tmp_path):
    path = tmp_path / "r.md"
    write_section(path, "alfworld", "ALF 1", preamble="# R\n")
    write_section(path, "mine", "MINE 1")
    write_section(path, "mine", "MINE 2")
    text = path.read_text()
    assert text.startswith("# R\n") and "ALF 1" in text and "MINE 2" in text and "MINE 1" not in text
    assert text.index("ALF 1") < text.index("MINE 2")
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]  # no temporary file left


def test_killed_overwrites_tiny(tmp_path):
    res = R.killed_overwrites(2, tmp_path, groups=4, pad=2000, max_delay=0.4, show=False)
    assert res["kills"] == 2 and res["destroyed"] == 0 and res["kept"] + res["new"] == 2
    assert res["leftover_tmp"] <= 2 and not res["errors"]


def test_worker_kills_subprocess_tiny():
    res = R.worker_kills("subprocess", 2, workers=2, tasks=4, show=False)
    assert res["kills"] == 2 and res["lost"] == 0 and res["failed"] == 0 and res["incomplete_groups"] == 0
    assert res["identical"] == res["collects"] and res["clean_identical"] == 1
    assert res["trajectories"] == res["collects"] * 4 * 4


@pytest.mark.slow
def test_worker_kills_ray_tiny():
    ray = pytest.importorskip("ray", reason="the ray backend needs `pip install -e '.[ray]'`")
    R._start_ray(2)
    try:
        res = R.worker_kills("ray", 2, workers=2, tasks=4, show=False)
    finally:
        ray.shutdown()
    assert res["kills"] == 2 and res["lost"] == 0 and res["failed"] == 0
    assert res["identical"] == res["collects"] and res["clean_identical"] == 1


def test_same_rollouts_sees_a_changed_row():
    from agentgym_credit.wrappers import GroupedRolloutCollector

    col = GroupedRolloutCollector("credit/GridWorld-v0", env_kwargs=R.GRID, group_size=2, max_steps=6,
                                  progress=False)
    a = col.collect(R.hash_policy, tasks=2, seeds=[1, 2])
    b = col.collect(R.hash_policy, tasks=2, seeds=[1, 2])
    assert R.same_rollouts(a, b)
    b.traj.retries[0] = 1  # a re-run trajectory is the same rollout
    assert R.same_rollouts(a, b)
    b.reward[3] += 1.0
    assert not R.same_rollouts(a, b)


def test_main_writes_its_section_and_keeps_the_others(tmp_path):
    out = tmp_path / "reliability.md"
    write_section(out, "alfworld", "## ALFWorld memory\nkept", preamble=R.PREAMBLE)
    assert R.main(["--parts", "caches", "--caches", "webshop", "--kinds", "pickle payload,wrong schema",
                   "--out", str(out), "--no-progress"]) == 0
    text = out.read_text()
    assert "## ALFWorld memory\nkept" in text and "<!-- reliability-caches:start -->" in text
    assert "Prediction (before the run)" in text and "code executed 0, crashes or hangs 0" in text
    assert "Command: `agentgym-credit bench reliability --parts caches" in text


def test_cache_faults_tiny():
    rows = RC.cache_faults(["named pipe"], caches=("alfworld",), timeout=300, show=False)
    rows += RC.cache_faults(["pickle payload", "wrong schema", "forged, valid checksum"], caches=("webshop",),
                            timeout=300, show=False)  # a hang is still caught; 60 s was tight at load 7-8
    for r in rows:
        assert not r["code_executed"] and not r["crash"] and r["same_play"], r
        assert r["rebuilt"] and r["victim_intact"], r
    assert all(r["warnings"] for r in rows if r["kind"] != "named pipe")
    text = RC.cache_section(rows, "cmd", "load", "pred")
    assert "code executed 0, crashes or hangs 0" in text and "not met" in text  # fewer than 10 kinds


# -- the ALFWorld translation cache: entries that are not regular files, or too big -----------------
@pytest.fixture
def sas_entry(tmp_path):
    from agentgym_credit.envs.alfworld import sascache

    key = "ab" * 20
    path = sascache.entry_path(tmp_path, key)
    path.parent.mkdir(parents=True)
    return sascache, path, key


def test_sas_entry_that_is_a_fifo_is_a_miss_not_a_hang(sas_entry):
    sascache, path, key = sas_entry
    os.mkfifo(path)
    got = []
    reader = threading.Thread(target=lambda: got.append(sascache.read_entry(path, key)), daemon=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reader.start()
        reader.join(10)
    try:
        assert not reader.is_alive(), "read_entry blocked on a FIFO"
        assert got == [None]
    finally:
        if reader.is_alive():  # release the blocked reader
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def test_sas_entry_that_is_a_directory_is_a_miss(sas_entry):
    """The first fix (open, then fdopen) raised IsADirectoryError out of reset; the bench's directory kind
    caught it."""
    sascache, path, key = sas_entry
    path.mkdir()
    with pytest.warns(sascache.SasCacheWarning, match="not a regular file"):
        assert sascache.read_entry(path, key) is None
    sascache.write_entry(path, key, "begin_version\n3\nend_version\n")  # cannot replace it: a no-op
    assert path.is_dir()


def test_sas_entry_linked_to_dev_zero_is_a_miss(sas_entry):
    """Read in a child with 2 GiB of address space: an endless read must not take the machine's memory."""
    sascache, path, key = sas_entry
    path.symlink_to("/dev/zero")
    code = ("import resource, sys, warnings; resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30)); "
            "from pathlib import Path; from agentgym_credit.envs.alfworld import sascache as S; "
            "warnings.simplefilter('error', S.SasCacheWarning)\n"
            "try:\n    S.read_entry(Path(sys.argv[1]), sys.argv[2])\nexcept S.SasCacheWarning as w:\n"
            "    print('warned:', w)")
    out = subprocess.run([sys.executable, "-c", code, str(path), key], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("warned:"), out.stderr[-500:]


@pytest.mark.parametrize("kind", ["huge file", "bomb"])
def test_sas_entry_too_big_is_a_miss_without_reading_it_whole(sas_entry, kind):
    sascache, path, key = sas_entry
    if kind == "huge file":
        with open(path, "wb") as f:
            f.truncate(300 * 2**20)
    else:
        body = RC._bomb_zlib(300 * 2**20)
        path.write_bytes(sascache.SAS_CACHE_HEADER + b" " + sascache._digest(body) + b"\n" + body)
    tracemalloc.start()
    try:
        with pytest.warns(sascache.SasCacheWarning):
            assert sascache.read_entry(path, key) is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20, f"read {peak / 2**20:.0f} MiB for a miss"


def test_forged_sas_entry_is_a_miss_not_a_planner_exit(sas_entry):
    sascache, path, key = sas_entry

    def forge(sas: str) -> None:
        body = zlib.compress(json.dumps({"key": key, "sas": sas}).encode())
        path.write_bytes(sascache.SAS_CACHE_HEADER + b" " + sascache._digest(body) + b"\n" + body)

    for bad in ["not a translation\n", "begin_version\n3\nend_version\nbegin_metric\n0\nend_metric\n2\n"]:
        forge(bad)
        with pytest.warns(sascache.SasCacheWarning):
            assert sascache.read_entry(path, key) is None


# -- the WebShop index cache: planted arrays of the wrong type or shape, zip bombs ------------------
@pytest.fixture
def good_index(tmp_path):
    from agentgym_credit.envs.webshop import search as S

    idx = S.BM25Index.build(["red running shoes", "blue shoes", "green tea"], fingerprint="fp")
    return S, idx, tmp_path / "i.npz"


def _meta(S, idx, **kw):
    return np.asarray(json.dumps({"version": S.INDEX_FORMAT_VERSION, "k1": idx.k1, "b": idx.b,
                                  "fingerprint": idx.fingerprint, "checksum": idx.checksum(), **kw}))


def test_index_with_numbers_for_vocab_is_a_cache_error(good_index):
    S, idx, path = good_index
    np.savez(path, vocab=np.arange(len(idx.vocab)), indptr=idx.indptr, postings_doc=idx.postings_doc,
             postings_weight=idx.postings_weight, doc_len=idx.doc_len, meta=_meta(S, idx))
    with pytest.raises(S.IndexCacheError):
        S.BM25Index.load(path)


def test_forged_index_with_2d_postings_is_a_cache_error(good_index):
    S, idx, path = good_index
    forged = S.BM25Index(idx.vocab, idx.indptr, idx.postings_doc.reshape(-1, 1), idx.postings_weight,
                         idx.doc_len, fingerprint="fp")
    np.savez(path, vocab=np.asarray(idx.vocab), indptr=idx.indptr, postings_doc=forged.postings_doc,
             postings_weight=idx.postings_weight, doc_len=idx.doc_len, meta=_meta(S, forged))
    with pytest.raises(S.IndexCacheError):
        S.BM25Index.load(path)


def test_index_zip_bomb_is_refused_before_inflating(good_index):
    S, idx, path = good_index
    arrays = {"vocab": np.asarray(idx.vocab), "indptr": idx.indptr, "postings_doc": idx.postings_doc,
              "postings_weight": idx.postings_weight, "doc_len": idx.doc_len}
    with open(path, "wb") as f:
        RC.bomb_npz(f, arrays, str(_meta(S, idx)), 300 * 2**20)
    assert path.stat().st_size < 2 * 2**20
    tracemalloc.start()
    try:
        with pytest.raises(S.IndexCacheError):
            S.BM25Index.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20, f"inflated {peak / 2**20:.0f} MiB of a bad index"
