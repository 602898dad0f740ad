"""``bench train``: the tabular policy and its exact success, the text policy and PPO-clip, the summaries,
and a --quick run."""

import math
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest

from agentgym_credit.bench.learning import train_stats as TS
from agentgym_credit.bench.learning.train_tabular import (
    SuccessOracle,
    TabularActor,
    TabularSoftmax,
    policy_gradient,
    scale_advantages,
)
from agentgym_credit.bench.stats import report as R
from agentgym_credit.credit.oracle import evaluate_policy
from agentgym_credit.envs.gridworld.model import TabularModel
from agentgym_credit.wrappers.collector import GroupedRolloutCollector

torch = pytest.importorskip("torch")

from agentgym_credit.bench.learning import train as T  # noqa: E402
from agentgym_credit.bench.learning import train_report as TR  # noqa: E402


def _chain() -> TabularModel:
    # s0 --go--> s1 (p=1) ; s0 --stay--> s0 ; s1 --win--> s2 (won, terminal) p=.5, else s0 ; s1 --quit--> s3 (lose)
    P = [[[(1.0, 0, 0.0, False)], [(1.0, 1, 0.0, False)]],
         [[(0.5, 2, 1.0, True), (0.5, 0, 0.0, False)], [(1.0, 3, 0.0, True)]],
         [], []]
    return TabularModel(["s0", "s1", "win", "lose"], [["stay", "go"], ["win", "quit"], [], []], P,
                        np.array([1.0, 0, 0, 0]), ["a", "b", "c", "d"], horizon=4)


def _random_policy(models, seed):
    pol = TabularSoftmax(models)
    rng = np.random.default_rng(seed)
    pol.step({k: rng.normal(size=v.shape) for k, v in pol.theta.items()}, 1.0)
    return pol


def test_tabular_softmax_starts_uniform_and_normalizes_per_state():
    m = _chain()
    pol = TabularSoftmax({"c": m})
    assert np.allclose(pol.pi("c"), 0.5)
    pol.step({"c": np.array([2.0, 0.0, 0.0, -1.0])}, 1.0)
    p = pol.pi("c")
    assert np.isclose(p[0] + p[1], 1) and np.isclose(p[2] + p[3], 1) and p[0] > p[1] and p[2] > p[3]
    assert np.allclose(pol.behaviour("c").probs(m, 1, (), 0), p[2:])
    with pytest.raises(ValueError, match="shape"):
        TabularSoftmax({"c": m}, init={"c": np.zeros(3)})


def test_exact_success_matches_hand_computation_and_the_oracle():
    m = _chain()
    pol = TabularSoftmax({"c": m})
    so = SuccessOracle(pol, {"c": [2]})
    # uniform policy, horizon 4: enumerate every path of at most 4 steps and add up the winning ones
    p = 0.0
    def walk(s, t, prob):
        nonlocal p
        if t == 4 or s in (2, 3):
            return
        for outs in m.P[s]:
            for q, ns, _, _ in outs:
                if ns == 2:
                    p += prob * 0.5 * q
                else:
                    walk(ns, t + 1, prob * 0.5 * q)
    walk(0, 0, 1.0)
    assert math.isclose(so.success("c"), p, rel_tol=1e-12)
    # with reward 1 only on winning and gamma = 1, V^pi(s0, t=0) is the success probability too
    assert math.isclose(evaluate_policy(m, pol.behaviour("c"), 1.0).value(0, 0), p, rel_tol=1e-9)


def test_exact_success_agrees_with_sampled_rollouts_on_a_real_env():
    env = gym.make("credit/CueCorridor-v0").unwrapped
    ids = env.task_ids()[:2]
    pol = _random_policy({k: env.model_for(k) for k in ids}, 3)
    exact = SuccessOracle(pol, {k: env.won_states(k) for k in ids}).mean_success()
    col = GroupedRolloutCollector("credit/CueCorridor-v0", group_size=500, history_depth=0, progress=False, seed=1)
    try:
        b = col.collect(TabularActor(pol, 5), tasks=ids)
    finally:
        col.close()
    se = math.sqrt(exact * (1 - exact) / 1000)
    assert abs(b.success_rate - exact) < 4 * se
    assert {"task", "s", "a"} <= set(b.extras[0])


def test_policy_gradient_matches_finite_differences():
    m = _chain()
    pol = _random_policy({"c": m}, 0)
    s, a, w = np.array([0, 0, 1, 1, 0]), np.array([1, 0, 0, 1, 1]), np.array([1.0, -0.5, 2.0, 0.3, -1.0])
    g = policy_gradient(pol, ["c"] * 5, s, a, w)["c"]

    def f(theta):
        p = TabularSoftmax({"c": m}, init={"c": theta})
        return float(np.sum(w * np.log(p.pi("c")[p.row("c", s, a)])))

    th = pol.theta["c"]
    fd = np.array([(f(th + 1e-6 * e) - f(th - 1e-6 * e)) / 2e-6 for e in np.eye(len(th))])
    assert np.allclose(g, fd, atol=1e-6)
    with pytest.raises(ValueError, match="one entry per row"):
        policy_gradient(pol, ["c"], s, a, w)


def test_scale_advantages_rms():
    a = np.array([3.0, -4.0, 0.0, 0.0])
    assert np.isclose(np.sqrt(np.mean(scale_advantages(a, "rms") ** 2)), 1.0)
    assert np.array_equal(scale_advantages(a, "none"), a)
    assert np.array_equal(scale_advantages(np.zeros(3), "rms"), np.zeros(3))
    with pytest.raises(ValueError, match="adv_scale"):
        scale_advantages(a, "std")


def test_steps_to_target_and_grid_use_env_steps():
    rows = [{"iteration": 0, "env_steps": 0, "success": 0.1},
            {"iteration": 2, "env_steps": 900, "success": 0.7},
            {"iteration": 1, "env_steps": 400, "success": 0.5}]
    assert TS.steps_to_target(rows, 0.5) == 400
    assert math.isnan(TS.steps_to_target(rows, 0.9))
    assert TS.on_grid(rows, np.array([0, 399, 400, 1000])).tolist() == [0.1, 0.1, 0.5, 0.7]


def test_comparisons_are_paired_and_holm_corrected():
    cfg = T.TrainBenchConfig(tasks=("cue",), estimators=("grpo", "gigpo[state]", "gigpo[obs]"), seeds=10)
    rng = np.random.default_rng(0)
    runs = []
    for s in range(10):
        base = rng.normal(5000, 2000)  # a large seed effect, shared by the pair
        for e, shift in (("grpo", 0), ("gigpo[state]", -1000), ("gigpo[obs]", 0)):
            runs.append({"task": "cue", "estimator": e, "seed": s, "steps_censored": base + shift + rng.normal(0, 100),
                         "final": 0.9})
    comps = {(c["a"], c["b"], c["measure"]): c for c in TS.comparisons(cfg, runs)}
    c = comps[("gigpo[state]", "grpo", "steps_censored")]
    assert c["holm"] == "win" and c["diff"] < 0 and c["n"] == 10  # fewer steps is the win
    assert comps[("gigpo[obs]", "grpo", "steps_censored")]["holm"] == "tie"
    assert comps[("gigpo[state]", "gigpo[obs]", "steps_censored")]["holm"] == "win"
    assert ("hgpo", "gigpo[state]", "final") not in comps  # pairs only among the estimators run


def test_primary_family_is_holm_corrected_on_its_own():
    """A confirmatory run's primary comparisons (label vs GiGPO on the same key, steps to target) get their own
    Holm family: an effect that a 40-comparison family would bury survives a 1-comparison family."""
    ests = ("grpo", "gigpo[state]", "gigpo[obs]", "hgpo", "hgpo+episode", "graph[state]", "graph[obs]",
            "graph_q[obs]", "graphgpo[obs]", "gagpo[obs]")
    rng = np.random.default_rng(1)
    runs = [{"task": "aliased", "estimator": e, "seed": s, "final": 0.9,
             "steps_censored": 10_000 + rng.normal(0, 1_000) - (1_000 if e == "graph[obs]" else 0)}
            for s in range(10) for e in ests]
    plain = T.TrainBenchConfig(tasks=("aliased",), estimators=ests, seeds=10)
    conf = T.TrainBenchConfig(tasks=("aliased",), estimators=ests, seeds=10, primary=("graph[obs]",))
    c0 = {(c["a"], c["b"], c["measure"]): c for c in TS.comparisons(plain, runs)}
    c1 = {(c["a"], c["b"], c["measure"]): c for c in TS.comparisons(conf, runs)}
    key = ("graph[obs]", "gigpo[obs]", "steps_censored")
    assert c0[key]["p"] == c1[key]["p"] and 0.002 < c1[key]["p"] < 0.05  # 34 comparisons: Holm needs < 0.0015
    assert c0[key]["holm"] == "tie" and "primary" not in c0[key]
    assert c1[key]["primary"] == "win" and c1[key]["holm"] == "tie"
    assert sum("primary" in c for c in c1.values()) == 1
    assert "Holm's correction over these 1 comparisons alone" in "\n".join(TR.primary_lines(conf, list(c1.values())))
    with pytest.raises(ValueError, match="primary"):
        T.TrainBenchConfig(estimators=("grpo",), primary=("graph[obs]",)).validate()


def test_rank_correlations_with_learning_speed():
    ests = ("grpo", "gigpo[state]", "gigpo[obs]", "hgpo")
    cfg = T.TrainBenchConfig(tasks=("cue",), estimators=ests)
    auc = {"grpo": 0.5, "gigpo[state]": 0.8, "gigpo[obs]": 0.7, "hgpo": 0.6}
    summary = [{"task": "cue", "estimator": e, "auc": auc[e], "pearson": auc[e], "sign_acc": -auc[e],
                "wsign_acc": float("nan") if e == "hgpo" else auc[e], "grad_cos": 0.3} for e in ests]
    fixed = [{"task": "cue", "estimator": e, "policy": p, "seed": s, "pearson": auc[e] + s, "sign_acc": 0.5,
              "wsign_acc": 0.5, "grad_cos": -auc[e]} for e in ests for p in TS.FIXED_POLICIES for s in (0, 1)]
    R_ = {r["metric"]: r for r in TS.rank_correlations(cfg, summary, fixed)}
    assert R_["pearson"]["along_training"] == 1.0 and R_["sign_acc"]["along_training"] == -1.0
    assert R_["wsign_acc"]["along_training"] == 1.0  # the estimator without a value is left out
    assert R_["grad_cos"]["along_training"] == 0.0  # a constant metric ranks nothing
    assert R_["pearson"]["uniform"] == 1.0 and R_["grad_cos"]["softQ*(T=0.3)"] == -1.0


def test_two_estimators_give_no_best_predictor_rather_than_nan():
    """training_graph_obs*.md (2 estimators) printed "Best predictor along training: Pearson r (mean ρ +nan)"."""
    ests = ("gigpo[obs]", "graph[obs]")
    cfg = T.TrainBenchConfig(tasks=("cue",), estimators=ests)
    summary = [{"task": "cue", "estimator": e, "auc": a, "pearson": a, "sign_acc": a, "wsign_acc": a, "grad_cos": a}
               for e, a in zip(ests, (0.6, 0.9))]
    lines = TR.predicts_lines(cfg, TS.rank_correlations(cfg, summary, []))
    assert "nan" not in "\n".join(lines) and lines[0].startswith("- **Best predictor along training: not measured**")


def test_hidden_change_rows_are_state_changes_the_observation_misses():
    traj = np.array([0, 0, 0, 1, 1])
    t = np.array([0, 1, 2, 0, 1])
    s = np.array([5, 6, 6, 5, 5])
    obs = np.array([1, 1, 2, 1, 1], dtype=np.uint64)
    # row 0: state 5 -> 6, obs 1 -> 1 (hidden); row 1: state unchanged; row 2: last of its trajectory;
    # row 3: state unchanged (a true self-loop); rows are found in any order
    assert TS.hidden_change_rows(traj, t, s, obs).tolist() == [True, False, False, False, False]
    perm = np.array([4, 2, 0, 3, 1])
    assert TS.hidden_change_rows(traj[perm], t[perm], s[perm], obs[perm]).tolist() == [False, False, True, False,
                                                                                      False]


def test_quick_never_writes_over_the_committed_report_by_default():
    from pathlib import Path

    assert T.config_from_args(["--quick"])[0].out == Path("agc-bench")
    assert T.config_from_args([])[0].out == Path("benchmarks/learning")
    cfg = T.config_from_args(["--quick", "--out", "x", "--lrs", "3", "--seeds", "4"])[0]
    assert cfg.out == Path("x") and cfg.lrs == (3.0,) and cfg.seeds == 4 and cfg.quick


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="group_size"):
        T.TrainBenchConfig(group_size=1).validate()
    with pytest.raises(ValueError, match="unknown estimator"):
        T.TrainBenchConfig(estimators=("ppo",)).validate()
    with pytest.raises(ValueError, match="lrs"):
        T.TrainBenchConfig(lrs=(0.0,)).validate()
    with pytest.raises(ValueError, match="bow only"):
        T.TrainBenchConfig(estimators=("gigpo[state]+branch",)).validate()
    with pytest.raises(ValueError, match="adv_scale"):
        T.TrainBenchConfig(adv_scale="max").validate()
    with pytest.raises(ValueError, match="task instances"):
        T.train_one("cue", "grpo", 0, T.TrainBenchConfig.quick_config(train_tasks=10_000))
    assert {"grpo", "gigpo[state]", "gigpo[obs]", "hgpo", "hgpo+episode"} <= set(T.default_estimators())


def test_tabular_run_learns_and_scores_its_credit():
    cfg = T.TrainBenchConfig.quick_config(budget_steps=4000, credit_points=2)
    rows = T.train_one("cue", "gigpo[state]", 0, cfg, 32.0)
    assert rows[0]["env_steps"] == 0 and rows[-1]["env_steps"] >= 4000
    assert rows[-1]["success"] > rows[0]["success"] + 0.2
    credit = [r for r in rows if math.isfinite(r["pearson"])]
    assert len(credit) == 2 and credit[0]["credit_at"] == 0
    first = credit[0]  # at the uniform start every estimator has some signal
    assert -1 <= first["grad_cos"] <= 1 and 0 <= first["wsign_acc"] <= 1 and 0 <= first["sign_acc"] <= 1
    # later, a batch where every rollout wins gives all-zero advantages: no gradient, so no cosine (NaN)
    assert all(math.isnan(r["grad_cos"]) or -1 <= r["grad_cos"] <= 1 for r in credit)
    # same seed, same estimator, same rate: the same run
    assert [r["success"] for r in T.train_one("cue", "gigpo[state]", 0, cfg, 32.0)] == [r["success"] for r in rows]


def test_text_arm_runs_on_an_env_step_budget():
    cfg = T.TrainBenchConfig.quick_config(policy="bow", budget_steps=200, checkpoints=1, eval_tasks=2,
                                          eval_rollouts=1, groups=2, train_tasks=4)
    rows = T.train_one("household-small", "grpo", 0, cfg, 0.01)
    assert [r["env_steps"] for r in rows][0] == 0 and rows[-1]["env_steps"] >= 200
    assert all(0 <= r["success"] <= 1 for r in rows)


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
    batch = SimpleNamespace(extras=ex, row_mask=lambda: np.ones(len(ex), dtype=bool))
    stats = T.ppo_update(m, opt, batch, adv, cfg, torch.Generator().manual_seed(0))
    with torch.no_grad():
        after = m.log_probs([ctx], [cands])[0]
    assert after[0] > before[0] and math.isfinite(stats["loss"])


def test_ppo_update_drops_failed_rows_and_refuses_misaligned_advantages():
    cfg = T.TrainBenchConfig(epochs=1, minibatch=8)
    keep = np.array([True, False, True])
    batch = SimpleNamespace(extras=[{"logp": 0.0, "idx": 0}] * 3, row_mask=lambda: keep)
    with pytest.raises(ValueError, match="kept step rows"):
        T.ppo_update(None, None, batch, np.zeros(3), cfg, torch.Generator().manual_seed(0))


@pytest.mark.slow
def test_quick_run_writes_report_and_rerenders(tmp_path):
    """``bench train --quick`` (every task and estimator, the CI smoke run) end to end, under 2 minutes of CPU
    (process time: a wall-clock limit would fail on a busy machine)."""
    import time

    cpu0 = time.process_time()
    assert T.main(["--quick", "--out", str(tmp_path), "--no-progress"]) == 0
    assert time.process_time() - cpu0 < 120
    rows = R.read_csv(tmp_path / "training.csv")
    cfg = T.TrainBenchConfig.quick_config()
    assert {r["estimator"] for r in rows} == set(cfg.estimators)
    assert {r["task"] for r in rows} == set(cfg.tasks) and {int(r["seed"]) for r in rows} == {0, 1}
    assert all(0.0 <= r["success"] <= 1.0 for r in rows)
    sweep = R.read_csv(tmp_path / "training_sweep.csv")
    assert {float(r["lr"]) for r in sweep} == set(cfg.lrs)
    md = (tmp_path / "training.md").read_text()
    for part in ("## What predicts learning", "## Predictions", "Holm", "## Credit metrics at fixed policies",
                 "cpu_count"):
        assert part in md
    assert (tmp_path / "training.png").read_bytes()[:4] == b"\x89PNG"
    (tmp_path / "training.md").write_text("Command: `agentgym-credit bench train --quick`\n")
    assert T.main(["--quick", "--out", str(tmp_path), "--from-csv", str(tmp_path / "training.csv"),
                   "--note", "rows merged"]) == 0
    md2 = (tmp_path / "training.md").read_text()
    assert "`agentgym-credit bench train --quick`" in md2 and "| cue | grpo |" in md2 and "Note: rows merged" in md2


def test_graph_family_compares_with_gigpo_on_the_same_information():
    assert TS.gigpo_partner("graph[obs]") == "gigpo[obs]"
    assert TS.gigpo_partner("graph_q[oh1]") == "gigpo[obs]"  # observation history: what the agent sees
    assert TS.gigpo_partner("graph[state]") == "gigpo[state]"
    assert TS.gigpo_partner("graphgpo") == "gigpo[state]"
    assert TS.gigpo_partner("graph[h1]") == "gigpo[state]"  # the collector's history keys are true states
    pairs = TS.comparison_pairs(["grpo", "gigpo[obs]", "gigpo[state]", "graph_q[oh1]", "graph_q[obs]"])
    assert ("graph_q[oh1]", "gigpo[obs]") in pairs and ("graph_q[obs]", "gigpo[obs]") in pairs


def test_observation_history_arms_see_only_observations():
    """``history_from="obs_key"`` rebuilds history keys over obs_key: on AliasedGrid (aliased observations)
    the level-1 keys then differ from the collector's true-state keys, and the arm's credit equals the
    estimator on the rebuilt keys; anything else for ``history_from`` is refused."""
    from agentgym_credit.bench.exact.credit_signals import bench_advantages, obs_keyed
    from agentgym_credit.credit import advantages

    col = GroupedRolloutCollector("credit/AliasedGrid-v0", group_size=4, history_depth=2, max_steps=30,
                                  progress=False, seed=0)
    try:
        batch = col.collect(lambda obs, infos: [i["admissible_actions"][0] for i in infos], tasks=[0, 1])
    finally:
        col.close()
    steps = batch.steps
    rebuilt = obs_keyed(steps)
    assert not np.array_equal(rebuilt.history_keys[:, 1], steps.history_keys[:, 1])
    opts = {"key": "history", "level": 1}
    got = bench_advantages("graph_q", steps, history_from="obs_key", **opts)
    np.testing.assert_array_equal(got, advantages("graph_q", rebuilt, **opts))
    np.testing.assert_array_equal(bench_advantages("graph_q", steps, **opts), advantages("graph_q", steps, **opts))
    with pytest.raises(ValueError, match="history_from"):
        bench_advantages("graph_q", steps, history_from="text", **opts)


def test_the_summary_has_a_line_per_task_without_a_grpo_arm():
    """A graph[obs] vs GiGPO[obs] run (no GRPO) summarized only "+nan" before: each task's obs-key line is there."""
    ests = ("gigpo[obs]", "graph[obs]")
    cfg = T.TrainBenchConfig(tasks=("cue",), estimators=ests)
    summary = [{"task": "cue", "estimator": e, "final": f, "seeds": 10} for e, f in zip(ests, (0.99, 1.0))]
    comps = [{"task": "cue", "a": "graph[obs]", "b": "gigpo[obs]", "measure": "steps_censored", "relative": -0.6,
              "holm": "win", "diff": -1600.0, "ci": 300.0}]
    lines = TR.summary_lines(cfg, [], summary, comps)
    assert len(lines) == 1 and lines[0].startswith("- **cue**") and "`graph[obs]` -60% (Holm: fewer steps" in lines[0]


def test_from_csv_keeps_the_recorded_commands_settings(tmp_path):
    """Re-rendering a committed report from its CSVs with only --from-csv/--out must keep what its run was told
    (--seed-base, --primary, --predictions, ...): those settings are in the recorded command, not in the CSV."""
    import shutil

    src = Path("benchmarks/learning")
    for suffix in (".csv", "_sweep.csv", "_credit.csv", ".md"):
        shutil.copy(src / f"training_graph_obs_current{suffix}", tmp_path / f"training_graph_obs_current{suffix}")
    assert T.main(["--from-csv", str(tmp_path / "training_graph_obs_current.csv"), "--out", str(tmp_path),
                   "--name", "training_graph_obs_current", "--no-progress"]) == 0
    md = (tmp_path / "training_graph_obs_current.md").read_text()
    assert "## Primary comparisons" in md and "10 fresh seeds (400..)" in md
    assert "--seed-base 400" in md  # the recorded command stays the report's command
