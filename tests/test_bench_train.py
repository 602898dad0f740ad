"""``bench train``: the text policy, the PPO-clip update, and a --quick smoke run."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agentgym_credit.bench import report as R  # noqa: E402
from agentgym_credit.bench import train as T  # noqa: E402


def test_hashed_bow_is_stable_and_namespaced():
    f = T.HashedBow(1024)
    a = f("Go to Fridge 1", "a")
    assert a == f("go to fridge 1", "a") == T.HashedBow(1024)("go to fridge 1", "a")
    assert a != f("go to fridge 1", "o")
    assert all(0 <= i < 1024 for i in a) and list(a) == sorted(set(a))
    assert f("", "a") == (0,)
    with pytest.raises(ValueError):
        T.HashedBow(1)


def test_policy_log_probs_are_normalized_per_decision():
    torch.manual_seed(0)
    f = T.HashedBow(256)
    m = T.BowPolicy(256, 8)
    ctx = [f.context("you see a mug", "put a mug in shelf 1", ""), f.context("nothing", "x", "look")]
    cands = [[f(a, "a") for a in ("take mug 1", "look", "go to shelf 1")], [f("look", "a")]]
    lp, owner = m.log_probs(ctx, cands)
    assert owner.tolist() == [0, 0, 0, 1]
    sums = torch.zeros(2).index_add(0, owner, lp.exp())
    assert torch.allclose(sums, torch.ones(2), atol=1e-5)


def test_ppo_update_moves_probability_toward_positive_advantage():
    torch.manual_seed(0)
    f = T.HashedBow(256)
    m = T.BowPolicy(256, 8)
    ctx = f.context("you see a mug", "put a mug in shelf 1", "")
    cands = [f(a, "a") for a in ("take mug 1", "look")]
    with torch.no_grad():
        before = m.log_probs([ctx], [cands])[0]
    ex = [{"ctx": ctx, "cands": cands, "idx": k, "logp": float(before[k])} for k in (0, 1)] * 8
    adv = np.array([1.0, -1.0] * 8)
    cfg = T.TrainBenchConfig(epochs=4, minibatch=8)
    opt = torch.optim.Adam(m.parameters(), lr=0.05)
    stats = T.ppo_update(m, opt, SimpleNamespace(extras=ex, row_mask=lambda: np.ones(len(ex), dtype=bool)), adv, cfg, torch.Generator().manual_seed(0))
    with torch.no_grad():
        after = m.log_probs([ctx], [cands])[0]
    assert after[0] > before[0] and math.isfinite(stats["loss"])


def test_steps_to_target_takes_the_first_evaluation_at_or_above_it():
    rows = [{"iteration": 0, "env_steps": 0, "eval_success": 0.0},
            {"iteration": 10, "env_steps": 500, "eval_success": 0.5},
            {"iteration": 5, "env_steps": 250, "eval_success": 0.6}]
    assert T.steps_to_target(rows, 0.5) == 250
    assert math.isnan(T.steps_to_target(rows, 0.9))


def test_config_rejects_bad_values_and_too_few_tasks():
    with pytest.raises(ValueError, match="group_size"):
        T.TrainBenchConfig(group_size=1).validate()
    with pytest.raises(ValueError, match="unknown estimator"):
        T.TrainBenchConfig(estimators=("ppo",)).validate()
    cfg = T.TrainBenchConfig.quick_config(train_tasks=10_000)
    with pytest.raises(ValueError, match="task instances"):
        T.train_one("household-small", "grpo", 0, cfg)


def test_quick_run_writes_report(tmp_path):
    argv = ["--quick", "--out", str(tmp_path), "--no-progress", "--estimators", "grpo", "gigpo[state]"]
    assert T.main(argv) == 0
    rows = R.read_csv(tmp_path / "training.csv")
    assert {r["estimator"] for r in rows} == {"grpo", "gigpo[state]"}
    for lab in ("grpo", "gigpo[state]"):
        rs = sorted((r for r in rows if r["estimator"] == lab), key=lambda r: r["iteration"])
        assert [r["iteration"] for r in rs] == [0, 2, 4]
        assert rs[0]["env_steps"] == 0 and rs[1]["env_steps"] < rs[2]["env_steps"]
        assert all(0.0 <= r["eval_success"] <= 1.0 for r in rs)
    md = (tmp_path / "training.md").read_text()
    assert "## Findings" in md and "held-out" in md and "cpu_count" in md
    assert (tmp_path / "training.png").read_bytes()[:4] == b"\x89PNG"
    # the report re-renders from the CSV alone, keeping the recorded command
    (tmp_path / "training.md").write_text("Command: `agentgym-credit bench train --quick`\n")
    assert T.main(["--quick", "--out", str(tmp_path), "--from-csv", str(tmp_path / "training.csv"),
                   "--estimators", "grpo", "gigpo[state]"]) == 0
    md = (tmp_path / "training.md").read_text()
    assert "`agentgym-credit bench train --quick`" in md and "| household-small | grpo |" in md


def test_ppo_update_drops_failed_rows_and_refuses_misaligned_advantages():
    torch = pytest.importorskip("torch")
    cfg = T.TrainBenchConfig(epochs=1, minibatch=8)
    keep = np.array([True, False, True])
    batch = SimpleNamespace(extras=[{"logp": 0.0, "idx": 0}] * 3, row_mask=lambda: keep)
    with pytest.raises(ValueError, match="kept step rows"):
        T.ppo_update(None, None, batch, np.zeros(3), cfg, torch.Generator().manual_seed(0))
