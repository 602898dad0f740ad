"""RolloutBatch on disk and in comparisons: atomic save, checked load, unicode, equality (issue 15, items 4, 9, 11)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from test_collector_envs import ChainEnv, chain_policy

from agentgym_credit.errors import DependencyNotInstalled
from agentgym_credit.wrappers import GroupedRolloutCollector, RolloutBatch

pa = pytest.importorskip("pyarrow", reason="Parquet needs `pip install -e '.[data]'`")
import pyarrow.parquet as pq  # noqa: E402


def _batch(n_tasks: int = 3, **kw) -> RolloutBatch:
    col = GroupedRolloutCollector(ChainEnv, group_size=2, max_steps=4, history_depth=2, progress=False, **kw)
    return col.collect(chain_policy, tasks=n_tasks)


def test_failed_save_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "b.parquet"
    good = _batch()
    good.save(path)

    def torn_write(table, where, **kw):  # a writer that dies half way through the file
        with open(where, "wb") as f:
            f.write(b"PAR1 torn")
        raise KeyboardInterrupt

    monkeypatch.setattr(pq, "write_table", torn_write)
    with pytest.raises(KeyboardInterrupt):
        _batch(n_tasks=5).save(path)
    monkeypatch.undo()
    assert RolloutBatch.load(path) == good
    assert [p.name for p in tmp_path.iterdir()] == ["b.parquet"]  # no temporary file left behind


_OVERWRITER = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {tests!r})
    from test_collector_envs import ChainEnv, chain_policy
    from agentgym_credit.wrappers import GroupedRolloutCollector
    col = GroupedRolloutCollector(ChainEnv, group_size=8, max_steps=30, progress=False)
    batch = col.collect(lambda o, i: [{{"action": a, "pad": os.urandom(4000).hex()}} for a in chain_policy(o, i)], tasks=64)
    print("ready", flush=True)
    while True:
        batch.save({path!r})
""")


@pytest.mark.slow
def test_killed_overwrites_never_destroy_the_file(tmp_path):
    """SIGKILL a process while it overwrites a good file, again and again: the file stays loadable."""
    path = tmp_path / "b.parquet"
    good = _batch()
    good.save(path)
    script = _OVERWRITER.format(tests=str(__import__("pathlib").Path(__file__).parent), path=str(path))
    rng = np.random.default_rng(0)
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(float(rng.uniform(1.0, 2.5)))  # in the save loop (the old save tore 5 files of 8 so)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        back = RolloutBatch.load(path)  # the old batch or a complete new one, never a torn file
        assert back == good or back.num_trajectories == 64 * 8
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "b.parquet"]
    assert all(name.startswith(".b.parquet.") for name in leftovers)  # only a killed writer's temp file


def test_lone_surrogate_in_text_round_trips(tmp_path):
    col = GroupedRolloutCollector(ChainEnv, group_size=2, max_steps=3, progress=False)
    batch = col.collect(lambda obs, infos: ["go\ud800north" for _ in obs], tasks=1)
    assert "go\ud800north" in batch.action
    batch.save(tmp_path / "s.parquet")
    back = RolloutBatch.load(tmp_path / "s.parquet")
    assert back.action == batch.action and back == batch
    # the column itself stays valid UTF-8 for other readers
    assert "go\ufffdnorth" in pq.read_table(tmp_path / "s.parquet").column("action").to_pylist()


def _rewrite_meta(src, dst, edit):
    table = pq.read_table(src)
    meta = json.loads(table.schema.metadata[b"agentgym_credit"])
    edit(meta)
    pq.write_table(table.replace_schema_metadata({b"agentgym_credit": json.dumps(meta).encode()}), dst)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m["trajectories"]["length"].__setitem__(0, 99), "trajectory 0 has length 99"),
        (lambda m: m["trajectories"]["group_id"].__setitem__(1, 7), "group"),
        (lambda m: m.__setitem__("format", "agentgym_credit.rollout_batch/0"), "unsupported format"),
        (lambda m: m["trajectories"].pop("won"), "trajectory table"),
        (lambda m: m.__setitem__("history_depth", 5), "history_keys"),
    ],
)
def test_load_says_what_is_inconsistent(tmp_path, edit, message):
    good = _batch()
    good.save(tmp_path / "b.parquet")
    _rewrite_meta(tmp_path / "b.parquet", tmp_path / "bad.parquet", edit)
    with pytest.raises(ValueError, match=message):
        RolloutBatch.load(tmp_path / "bad.parquet")


def test_load_of_a_truncated_file_is_a_clear_error(tmp_path):
    _batch().save(tmp_path / "b.parquet")
    data = (tmp_path / "b.parquet").read_bytes()
    (tmp_path / "t.parquet").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="t.parquet"):
        RolloutBatch.load(tmp_path / "t.parquet")


def test_equality_is_by_content(tmp_path):
    a, b = _batch(seed=1), _batch(seed=1)
    assert a == b and not (a != b)
    a.save(tmp_path / "a.parquet")
    assert RolloutBatch.load(tmp_path / "a.parquet") == a
    c = _batch(seed=1)
    c.reward[0] += 1.0
    assert c != a
    d = _batch(seed=1)
    d.traj.won[0] = not d.traj.won[0]
    assert d != a
    assert (a == "batch") is False
    with pytest.raises(TypeError):
        hash(a)


def test_save_without_pyarrow_names_the_install(tmp_path, monkeypatch):
    batch = _batch()
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(DependencyNotInstalled, match="pyarrow"):
        batch.save(tmp_path / "x.parquet")
    with pytest.raises(DependencyNotInstalled, match="pyarrow"):
        RolloutBatch.load(tmp_path / "x.parquet")


def test_admissible_actions_are_a_column_that_lines_up_with_the_advantages(tmp_path):
    """Issue 15 item 12: what the policy chose from, per row, aligned with ``advantages`` through row_mask."""
    import gymnasium as gym

    import agentgym_credit  # noqa: F401
    from agentgym_credit import credit

    col = GroupedRolloutCollector("credit/Household-v0", group_size=2, max_steps=6, progress=False, seed=1)
    batch = col.collect(lambda obs, infos: [i["admissible_actions"][-1] for i in infos], tasks=[0, 1])
    env = gym.make("credit/Household-v0")
    for r in range(len(batch)):  # the admissible set of the state acted in, as the env lists it
        tt = batch.traj
        if batch.t[r] == 0:
            _, info = env.reset(seed=int(tt.seed[batch.traj_id[r]]), options={"task": batch.task_id[r]})
        assert batch.admissible_actions[r] == info["admissible_actions"]
        assert batch.action[r] in batch.admissible_actions[r]
        _, _, _, _, info = env.step(batch.action[r])
    rows = np.flatnonzero(batch.row_mask())
    adv = credit.advantages("gigpo", batch.steps)
    assert len(rows) == len(adv) == batch.steps.n
    batch.save(tmp_path / "a.parquet")
    back = RolloutBatch.load(tmp_path / "a.parquet")
    assert back.admissible_actions == batch.admissible_actions and back == batch
    both = RolloutBatch.concat([batch, batch])
    assert both.admissible_actions == batch.admissible_actions * 2


def test_steps_carry_the_observation_text_for_similarity_anchors():
    from agentgym_credit import credit

    batch = _batch()
    steps = batch.steps
    rows = np.flatnonzero(batch.row_mask())
    assert list(steps.obs_text) == [batch.observation[r] for r in rows]
    sim = credit.advantages("gigpo", steps, anchor="similarity", threshold=1.0)
    assert np.allclose(sim, credit.advantages("gigpo", steps, anchor="obs_key"))
