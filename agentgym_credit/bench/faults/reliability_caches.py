"""Damaged or planted cache files: the cache part of ``bench reliability``.

What lives here:

- :data:`KINDS` — the kinds of bad file, each with what it is for the ALFWorld translation cache
  (:mod:`agentgym_credit.envs.alfworld.sascache`) and for the WebShop index cache
  (:mod:`agentgym_credit.envs.webshop.search`);
- :func:`cache_faults` — for each cache, a clean run fills a temporary cache folder; then for each kind
  the entry is replaced by the bad file and a **fresh interpreter** (memory limited to 8 GiB, 90 s
  limit) builds the env, resets it and plays it with the expert (``credit/ALFWorld-v0`` on a generated
  game; ``credit/WebShop-v0`` on a 200-product catalog, 4 goals). Recorded: code executed (a pickle
  payload would create a marker file), crash (exit code, killed, timed out), a transcript different from
  the clean run's, warnings, the entry afterwards (rebuilt good entry or not), a file outside the cache
  that a symlink points to (must be untouched), peak RSS and seconds;
- :func:`bomb_npz` — an index-like npz holding a zip bomb;
- :func:`cache_section` — the markdown section of ``benchmarks/faults/reliability.md``.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.stats.report import machine_lines, markdown_table, progress

BOMB_BYTES = 512 * 2**20
"""Size of the huge file and of the inflated decompression bomb."""

KINDS: dict[str, tuple[str, str]] = {
    "empty": ("empty file", "empty file"),
    "truncated": ("first half of the good entry", "first half of the good index"),
    "random bytes": ("4 KiB of random bytes", "4 KiB of random bytes"),
    "flipped byte": ("one byte of the body flipped", "one byte in the middle flipped"),
    "pickle payload": ("old-format entry: zlib pickle that runs `os.system`",
                       "npz whose `vocab` is an object array pickling `os.system`"),
    "pickle behind a valid header": ("`agc-sas/1` header and a correct checksum over a zlib pickle",
                                     "zip whose `.npy` members are raw pickle streams"),
    "wrong schema": ("correct header and checksum, JSON list body", "valid npz, `vocab` stored as numbers"),
    "foreign entry": ("a valid entry of another translation", "a valid index of another catalog"),
    "foreign version": ("header `agc-sas/9`", "meta `version: 99`"),
    "forged, valid checksum": ("right key, correct checksum, text that is not SAS",
                               "correct checksum over a 2-D `postings_doc`"),
    "directory": ("a directory in place of the file", "a directory in place of the file"),
    "symlink elsewhere": ("symlink to a file outside the cache", "symlink to a file outside the cache"),
    "symlink to /dev/zero": ("symlink to `/dev/zero` (endless)", "symlink to `/dev/zero` (endless)"),
    "named pipe": ("a FIFO with no writer", "a FIFO with no writer"),
    "huge file": ("512 MiB sparse file", "512 MiB sparse file"),
    "decompression bomb": ("correct header and checksum, body inflates to 512 MiB",
                           "npz member inflating to 512 MiB"),
}
"""Kind name -> (what it is in the ALFWorld translation cache, in the WebShop index cache)."""

CACHES = ("alfworld", "webshop")

_CHILD = r"""
import json, os, resource, sys, time, warnings
resource.setrlimit(resource.RLIMIT_AS, (8 * 2**30, 8 * 2**30))
cache, folder = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
caught = []
warnings.showwarning = lambda m, c, *a, **k: caught.append(f"{c.__name__}: {m}")
warnings.simplefilter("always")
from agentgym_credit.keys import stable_hash
lines = []
if cache == "alfworld":
    os.environ["AGENTGYM_CREDIT_SAS_CACHE"] = folder
    from agentgym_credit.envs.alfworld.env import ALFWorldEnv
    env = ALFWorldEnv(task_types=["pick_and_place_simple"], expert=True)
    obs, info = env.reset(seed=0)
    lines.append(obs)
    for _ in range(30):
        obs, r, term, trunc, info = env.step(info["expert_action"])
        lines.append(f"{obs}|{r}")
        if term or trunc:
            break
else:
    from agentgym_credit.envs.webshop.env import WebShopEnv
    from agentgym_credit.envs.webshop.expert import ExpertPolicy
    env = WebShopEnv(num_products=200, split="test", cache_dir=folder)
    for task in range(4):
        pol = ExpertPolicy()
        obs, info = env.reset(seed=0, options={"task": task})
        lines.append(obs)
        for _ in range(15):
            obs, r, term, trunc, info = env.step(pol.act(env))
            lines.append(f"{obs}|{r}")
            if term or trunc:
                break
print(json.dumps({"digest": stable_hash("\n".join(lines)), "steps": len(lines), "warnings": caught,
                  "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "seconds": time.perf_counter() - t0}))
"""


class _Planted:
    """Unpickling this runs ``touch MARKER``: what a planted cache entry would do."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


def _play(cache: str, folder: Path, timeout: float) -> dict[str, Any]:
    """Run the env in a fresh interpreter on ``folder``; its JSON line, or how it ended."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", _CHILD, cache, str(folder)], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"crash": f"hung (killed after {timeout:g} s)", "seconds": time.perf_counter() - t0}
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1][:160]
        return {"crash": f"exit code {p.returncode}: {tail}", "seconds": time.perf_counter() - t0}
    return json.loads(p.stdout.strip().splitlines()[-1])


def _entry(cache: str, folder: Path) -> Path:
    pattern = "*.sas.z" if cache == "alfworld" else "bm25-*.npz"
    found = sorted(folder.rglob(pattern))
    if len(found) != 1:
        raise RuntimeError(f"expected one {cache} cache entry under {folder}, found {len(found)}")
    return found[0]


def _sas_entry(key: str, doc: Any) -> bytes:
    from agentgym_credit.envs.alfworld import sascache

    body = zlib.compress(json.dumps(doc).encode() if not isinstance(doc, bytes) else doc)
    return sascache.SAS_CACHE_HEADER + b" " + sascache._digest(body) + b"\n" + body


def _bomb_zlib(n: int) -> bytes:
    c = zlib.compressobj(9)
    chunk = b"\0" * 2**20
    return b"".join([c.compress(chunk) for _ in range(n // len(chunk))] + [c.flush()])


def bomb_npz(f: Any, arrays: dict[str, np.ndarray], meta: str, nbytes: int) -> None:
    """Write an index-like npz to the open file ``f`` whose ``postings_weight`` member is ``nbytes`` of
    deflated zeros (a zip bomb: a few hundred kB on disk)."""
    with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, arr in {**arrays, "meta": np.asarray(meta)}.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as m:
                if name != "postings_weight":
                    np.lib.format.write_array(m, arr)
                    continue
                np.lib.format.write_array_header_2_0(m, {"descr": "<f4", "fortran_order": False,
                                                         "shape": (nbytes // 4,)})
                for _ in range(nbytes // 2**20):
                    m.write(bytes(2**20))


def _plant_alfworld(kind: str, path: Path, good: bytes, marker: Path, victim: Path, rng: np.random.Generator
                    ) -> None:
    key = path.name.split(".")[0]
    data: bytes | None = None
    if kind == "empty":
        data = b""
    elif kind == "truncated":
        data = good[: len(good) // 2]
    elif kind == "random bytes":
        data = rng.bytes(4096)
    elif kind == "flipped byte":
        i = len(good) // 2
        data = good[:i] + bytes([good[i] ^ 0xFF]) + good[i + 1:]
    elif kind == "pickle payload":
        data = zlib.compress(pickle.dumps(_Planted(marker)))
    elif kind == "pickle behind a valid header":
        data = _sas_entry(key, pickle.dumps(_Planted(marker)))
    elif kind == "wrong schema":
        data = _sas_entry(key, [1, 2])
    elif kind == "foreign entry":
        data = _sas_entry(key, {"key": "0" * 40, "sas": "begin_version\n3\nend_version\n"})
    elif kind == "foreign version":
        data = b"agc-sas/9" + good[good.index(b" "):]
    elif kind == "forged, valid checksum":
        data = _sas_entry(key, {"key": key, "sas": "not a translation\n"})
    elif kind == "decompression bomb":
        body = _bomb_zlib(BOMB_BYTES)
        from agentgym_credit.envs.alfworld import sascache

        data = sascache.SAS_CACHE_HEADER + b" " + sascache._digest(body) + b"\n" + body
    if data is not None:
        path.write_bytes(data)
    else:
        _plant_file_kind(kind, path, victim)


def _plant_webshop(kind: str, path: Path, good: bytes, marker: Path, victim: Path, rng: np.random.Generator
                   ) -> None:
    from agentgym_credit.envs.webshop import search as S

    if kind in ("empty", "truncated", "random bytes", "flipped byte"):
        i = len(good) // 2
        path.write_bytes({"empty": b"", "truncated": good[:i], "random bytes": rng.bytes(4096),
                          "flipped byte": good[:i] + bytes([good[i] ^ 0xFF]) + good[i + 1:]}[kind])
        return
    if kind in ("directory", "symlink elsewhere", "symlink to /dev/zero", "named pipe", "huge file"):
        _plant_file_kind(kind, path, victim)
        return
    idx = S.BM25Index.load(path)
    arrays = {"vocab": np.asarray(idx.vocab, dtype=np.str_), "indptr": idx.indptr,
              "postings_doc": idx.postings_doc, "postings_weight": idx.postings_weight, "doc_len": idx.doc_len}
    meta = {"version": S.INDEX_FORMAT_VERSION, "k1": idx.k1, "b": idx.b, "fingerprint": idx.fingerprint,
            "checksum": idx.checksum()}
    with open(path, "wb") as f:
        if kind == "pickle payload":
            np.savez(f, **{**arrays, "vocab": np.array([_Planted(marker)], dtype=object)},
                     meta=np.asarray(json.dumps(meta)))
        elif kind == "pickle behind a valid header":
            with zipfile.ZipFile(f, "w") as zf:
                for name in (*arrays, "meta"):
                    zf.writestr(f"{name}.npy", pickle.dumps(_Planted(marker)))
        elif kind == "wrong schema":
            np.savez(f, **{**arrays, "vocab": np.arange(len(idx.vocab))}, meta=np.asarray(json.dumps(meta)))
        elif kind == "foreign entry":
            from agentgym_credit.envs.webshop.env import shared_catalog

            other = shared_catalog(200, 1)
            S.BM25Index.build([S.product_document(p) for p in other.products], fingerprint=other.fingerprint()
                              ).save(f.name)
        elif kind == "foreign version":
            np.savez(f, **arrays, meta=np.asarray(json.dumps({**meta, "version": 99})))
        elif kind == "forged, valid checksum":
            forged = S.BM25Index(idx.vocab, idx.indptr, idx.postings_doc.reshape(-1, 1), idx.postings_weight,
                                 idx.doc_len, k1=idx.k1, b=idx.b, fingerprint=idx.fingerprint)
            np.savez(f, **{**arrays, "postings_doc": forged.postings_doc},
                     meta=np.asarray(json.dumps({**meta, "checksum": forged.checksum()})))
        elif kind == "decompression bomb":
            bomb_npz(f, arrays, json.dumps(meta), BOMB_BYTES)
        else:
            raise ValueError(f"unknown kind {kind!r}")


def _plant_file_kind(kind: str, path: Path, victim: Path) -> None:
    """Kinds that are not file contents: directory, symlinks, FIFO, sparse huge file."""
    path.unlink()
    if kind == "directory":
        path.mkdir()
        (path / "inside").write_text("x")
    elif kind == "symlink elsewhere":
        path.symlink_to(victim)
    elif kind == "symlink to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "named pipe":
        os.mkfifo(path)
    elif kind == "huge file":
        with open(path, "wb") as f:
            f.truncate(BOMB_BYTES)
    else:
        raise ValueError(f"unknown kind {kind!r}")


def _entry_is_good(cache: str, path: Path) -> bool:
    """Whether ``path`` now holds a good entry (a regular file that reads back)."""
    import warnings

    if path.is_symlink() or not path.is_file():
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if cache == "alfworld":
            from agentgym_credit.envs.alfworld import sascache

            return sascache.read_entry(path, path.name.split(".")[0]) is not None
        from agentgym_credit.envs.webshop import search as S

        try:
            S.BM25Index.load(path)
        except Exception:  # noqa: BLE001 — any failure to read back is "not a good entry"
            return False
        return True


def cache_faults(kinds: Sequence[str] | None = None, caches: Sequence[str] = CACHES, *, timeout: float = 90.0,
                 seed: int = 0, show: bool = True) -> list[dict[str, Any]]:
    """One row per (cache, kind): see the module docstring. ``kinds`` default: all of :data:`KINDS`."""
    kinds = list(KINDS) if kinds is None else list(kinds)
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ValueError(f"unknown cache fault kinds {bad}; choose from {list(KINDS)}")
    if not caches or any(c not in CACHES for c in caches):
        raise ValueError(f"caches must be a non-empty subset of {CACHES}, got {list(caches)}")
    rng = np.random.default_rng(seed)
    rows = []
    with tempfile.TemporaryDirectory(prefix="agc-cache-faults-") as tmp:
        root = Path(tmp)
        jobs = [(c, k) for c in caches for k in kinds]
        clean: dict[str, dict[str, Any]] = {}
        for c in caches:
            clean[c] = _play(c, root / f"{c}-clean", timeout)
            if "crash" in clean[c]:
                raise RuntimeError(f"the clean {c} run failed: {clean[c]['crash']}")
        for c, kind in progress(jobs, total=len(jobs), desc="cache faults", enable=show):
            folder = root / f"{c}-{len(rows)}"
            shutil.copytree(root / f"{c}-clean", folder, symlinks=True)
            path = _entry(c, folder)
            good = path.read_bytes()
            marker, victim = root / f"marker-{len(rows)}", root / f"victim-{len(rows)}.txt"
            victim.write_text("a file outside the cache\n")
            (_plant_alfworld if c == "alfworld" else _plant_webshop)(kind, path, good, marker, victim, rng)
            res = _play(c, folder, timeout)
            rows.append({
                "cache": c, "kind": kind, "code_executed": marker.exists(), "crash": res.get("crash", ""),
                "same_play": "crash" not in res and res["digest"] == clean[c]["digest"],
                "warnings": len(res.get("warnings", [])), "warning": (res.get("warnings") or [""])[0][:160],
                "rebuilt": _entry_is_good(c, path), "victim_intact": victim.read_text() == "a file outside the cache\n",
                "maxrss_mib": res.get("maxrss_mib", float("nan")), "seconds": res["seconds"],
                "clean_maxrss_mib": clean[c]["maxrss_mib"],
            })
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()  # a huge or bomb entry left as is would fill the temporary folder
    return rows


def cache_section(rows: list[dict[str, Any]], cmd: str, load_line: str, prediction: str) -> str:
    """The cache section of ``benchmarks/faults/reliability.md``: one row per kind, both caches side by side."""
    by = {(r["cache"], r["kind"]): r for r in rows}
    caches = [c for c in CACHES if any(r["cache"] == c for r in rows)]
    kinds = list(dict.fromkeys(r["kind"] for r in rows))

    def cell(r: dict[str, Any] | None) -> str:
        if r is None:
            return "not run"
        if r["code_executed"]:
            return "**CODE RAN**"
        if r["crash"]:
            return f"**crash** ({r['crash'][:80]})"
        parts = ["plays the same" if r["same_play"] else "**plays differently**",
                 "warned" if r["warnings"] else "no warning", "rebuilt" if r["rebuilt"] else "not rebuilt"]
        if not r["victim_intact"]:
            parts.append("**file outside the cache changed**")
        rss = r["maxrss_mib"] - r["clean_maxrss_mib"]
        if rss > 50:
            parts.append(f"peak RSS +{rss:.0f} MiB")
        return ", ".join(parts)

    table = markdown_table(["kind", *(f"{c}: planted" for c in caches), *(f"{c}: outcome" for c in caches)],
                           [[k, *(KINDS[k][CACHES.index(c)] for c in caches), *(cell(by.get((c, k))) for c in caches)]
                            for k in kinds], align="l" * (1 + 2 * len(caches)))
    code = sum(r["code_executed"] for r in rows)
    crashes = sum(bool(r["crash"]) for r in rows)
    wrong = sum(not r["same_play"] and not r["crash"] for r in rows)
    victims = sum(not r["victim_intact"] for r in rows)
    met = code == 0 and crashes == 0 and wrong == 0 and len(kinds) >= 10
    warns = sorted({r["warning"].split(":")[0] for r in rows if r["warning"]})
    rss = [(r["maxrss_mib"] - r["clean_maxrss_mib"], r["cache"], r["kind"]) for r in rows if not r["crash"]]
    top = max(rss, default=(float("nan"), "-", "-"))
    return "\n".join([
        "## Damaged or planted cache files",
        "", machine_lines(cmd), "", load_line, "",
        "For each cache, a clean run fills a temporary cache folder; then, for each kind, the entry is replaced "
        "by the bad file and a fresh interpreter (address space limited to 8 GiB, 90 s limit) builds the env, "
        "resets it and plays it with the expert (`credit/ALFWorld-v0`: a generated pick-and-place game; "
        "`credit/WebShop-v0`: 200 products, 4 goals). A pickle payload would create a marker file. `plays the "
        "same`: the transcript equals the clean run's; `rebuilt`: a good entry is in place afterwards.",
        "", f"Prediction (before the run): {prediction}", "",
        table, "",
        f"Totals over {len(rows)} runs ({len(kinds)} kinds x {len(caches)} caches): code executed {code}, "
        f"crashes or hangs {crashes}, played differently {wrong}, files outside the cache changed {victims}. "
        f"Warning classes seen: {', '.join(warns) or 'none'}. Largest peak RSS over the clean run: "
        f"{top[0]:+.0f} MiB ({top[1]}, {top[2]}).",
        "", "Defects this benchmark found, each fixed with a test in `tests/test_bench_reliability.py` that "
        "failed before: ALFWorld — a FIFO entry hung the reset, a link to `/dev/zero` was read until memory ran "
        "out, a huge file or a zlib bomb was read or inflated whole (+508 / about +1,020 MiB peak RSS, measured before the fix), a forged "
        "entry (correct checksum, text that is not SAS) made Fast Downward exit the process (exit code 33), and "
        "the first fix of these made a directory entry raise `IsADirectoryError` out of `reset`; WebShop — an "
        "index with numbers for `vocab` crashed the env's construction (`TypeError`), a forged index with a "
        "2-D `postings_doc` crashed the first search, a member inflating to 512 MiB was read whole "
        "(about +1,020 MiB).",
        "", "Goal: 0 code executed and 0 crashes from 10 kinds of damaged or planted cache files: "
        + ("**met**." if met else "**not met** (see the table)."),
    ])


__all__ = ["BOMB_BYTES", "CACHES", "KINDS", "bomb_npz", "cache_faults", "cache_section"]
