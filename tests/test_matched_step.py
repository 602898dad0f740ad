"""``bench train_real`` at matched policy change: the KL line search, the neural text policy, the reference arms."""

from __future__ import annotations

import numpy as np
import pytest

from agentgym_credit.bench.learning import train_real as T
from agentgym_credit.bench.learning.matched_step import line_search, mean_kl, reference_advantages, text_step
from agentgym_credit.truth.text_policy import TextPolicy
from agentgym_credit.wrappers.collector import GroupedRolloutCollector


def _cfg(tmp_path, **kw):
    base = dict(envs=("webshop",), arms=("grpo",), seeds=1, sweep_seeds=0, lrs=(0.02,), budget_steps=60, groups=3,
                group_size=3, train_tasks=6, checkpoints=1, eval_rollouts=1, eval_limit=4, train_eval_rollouts=1,
                out=tmp_path, progress=False, step="kl")
    base.update(kw)
    return T.RealTrainConfig(**base)


def _rows(policy, tasks=(0, 1, 2), seed=0):
    from agentgym_credit.bench.learning.matched_step import ExpertMarking
    from agentgym_credit.bench.learning.neural_policy import actor_for

    env = T.REAL_ENVS["webshop"]
    col = GroupedRolloutCollector(env.factory, group_size=3, history_depth=3, seed=seed, max_steps=env.max_steps,
                                  progress=False)
    try:
        batch = col.collect(ExpertMarking(actor_for(policy, np.random.default_rng(seed))), tasks=list(tasks))
    finally:
        col.close()
    return [e for e, keep in zip(batch.extras, batch.row_mask()) if keep]


def test_line_search_hits_the_target_and_a_zero_update_is_a_no_op():
    p = [np.array([0.5, 0.3, 0.2]), np.array([0.9, 0.1])]
    d = [np.array([1.0, -1.0, 0.0]), np.array([-2.0, 2.0])]
    a, k = line_search(lambda x: mean_kl(p, d, x), 0.01)
    assert abs(k - 0.01) <= 0.0002 and a > 0 and abs(mean_kl(p, d, a) - k) < 1e-12
    assert line_search(lambda x: mean_kl(p, [np.zeros(3), np.zeros(2)], x), 0.01) == (0.0, 0.0)
    assert mean_kl(p, d, 0.0) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError):
        line_search(lambda x: x, 0.0)


def test_text_step_reaches_the_kl_target_on_the_policys_own_distribution():
    pol = TextPolicy(1.0)
    rows = _rows(pol)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(len(rows))
    before_w = pol.w.copy()
    alpha, kl = text_step(pol, [r["decision"] for r in rows], w, kl_target=0.05)
    assert abs(kl - 0.05) <= 0.001 and alpha > 0 and np.any(pol.w != before_w)
    # the step is the plain REINFORCE update at the rate found
    again = TextPolicy(1.0)
    again.update([r["decision"] for r in rows], w, alpha)
    np.testing.assert_allclose(again.w, pol.w, atol=1e-9)
    assert again.residual.keys() == pol.residual.keys()
    with pytest.raises(ValueError):
        text_step(pol, [r["decision"] for r in rows], w)


def test_neural_policy_starts_at_the_prior_and_its_step_reaches_the_kl_target():
    from agentgym_credit.bench.learning.neural_policy import NeuralTextPolicy

    neural = NeuralTextPolicy(1.0, seed=3)
    rows = _rows(neural)
    text_rows = _rows(TextPolicy(1.0))  # same episodes (same seeds): the neural start policy is the prior
    assert [r["decision"].action for r in rows] == [r["decision"].action for r in text_rows]
    for r, t in zip(rows, text_rows):
        np.testing.assert_allclose(r["decision"].probs, t["decision"].probs, atol=1e-5)
    w = np.random.default_rng(1).standard_normal(len(rows))
    decisions = [r["decision"] for r in rows]
    alpha, kl = neural.step(decisions, w, kl_target=0.02)
    assert abs(kl - 0.02) <= 0.0005 and alpha > 0
    new = neural._log_probs(decisions).detach().numpy()
    at, tot = 0, []
    for d in decisions:
        q = np.exp(new[at:at + len(d.cands)])
        at += len(d.cands)
        tot.append(float(np.sum(d.probs * (np.log(d.probs) - np.log(q)))))
    assert np.mean(tot) == pytest.approx(kl, rel=1e-3)
    _, k2 = neural.step(decisions, np.zeros(len(rows)), lr=1.0)
    assert k2 == 0.0  # a zero update changes nothing
    with pytest.raises(ValueError):
        neural.step(decisions, w, kl_target=0.02, lr=1.0)
    with pytest.raises(ValueError):
        neural.step(decisions, w[:-1], lr=1.0)


def test_reference_arms_null_is_random_sign_and_imitate_marks_the_expert():
    rows = _rows(TextPolicy(1.0))
    null = reference_advantages("null", rows, np.random.default_rng(0))
    assert set(np.unique(null)) <= {-1.0, 1.0} and len(null) == len(rows)
    imi = reference_advantages("imitate", rows, np.random.default_rng(0))
    took = np.array([r["decision"].idx == r["expert_idx"] for r in rows])
    assert took.any() and (~took).any() and abs(imi.sum()) < 1e-9 and np.all(imi[took] > 0) and np.all(imi[~took] < 0)
    with pytest.raises(ValueError):
        reference_advantages("oracle", rows, np.random.default_rng(0))


@pytest.mark.parametrize("policy", ["text", "neural"])
def test_a_kl_matched_run_records_the_achieved_kl_of_every_update(tmp_path, policy):
    cfg = _cfg(tmp_path, policy=policy, min_updates=3)
    rows = T.train_one_real("webshop", "imitate", 0, 0.02, cfg, save=True)
    kls = [float(k) for r in rows for k in r["kls"].split(";") if k]
    assert sum(r["updates"] for r in rows) == len(kls) == rows[-1]["iteration"] >= 3
    assert all(abs(k - 0.02) <= 0.0005 for k in kls)  # imitation is never all-zero
    suffix = ".pt" if policy == "neural" else ".npz"
    assert T.policy_path(cfg, "webshop", "imitate", 0).with_suffix(suffix).exists()
    # the old settings keep the digests of runs made before these options existed
    assert T.run_file(_cfg(tmp_path, step="rms"), "webshop", "grpo", 0, 0.3) != T.run_file(cfg, "webshop", "grpo", 0,
                                                                                          0.3)
    for bad in ({"policy": "lstm"}, {"step": "trust"}, {"min_updates": -1}, {"arms": ("oracle",)}):
        with pytest.raises(ValueError):
            _cfg(tmp_path, **bad).validate()


def test_checks_find_the_null_tie_the_known_effect_and_plan_the_seeds():
    from agentgym_credit.bench.learning import train_real_checks as C

    rng = np.random.default_rng(0)
    summary = [{"env": "w", "arm": a, "seed": s, "auc_trained": base + rng.normal(0, 0.05)}
               for s in range(12) for a, base in (("grpo", 0.3), ("null", 0.3), ("imitate", 0.6))]
    cov, calls, n = C.aa_coverage(summary, "w", ["grpo", "null", "imitate"], "auc_trained")
    assert n == 600 and 0.85 <= cov <= 1.0 and calls == pytest.approx(1 - cov)
    ref = {r[0]: r[4] for r in C.reference_rows(summary, "w", ["grpo", "null", "imitate"], "auc_trained")}
    assert ref["imitate − grpo"] == "win" and ref["null − grpo"] == "tie"
    plan = C.power_plan(summary, "w", [("imitate", "grpo"), ("null", "grpo")], "auc_trained", at=20)
    assert [p["a"] for p in plan] == ["imitate", "null"]
    assert plan[1]["effect"] == pytest.approx(0.15 * plan[1]["base"]) and plan[1]["need"] > 3
    assert 0.0 <= plan[1]["power_at"] <= 1.0
    rows = [{"env": "w", "arm": "grpo", "seed": s, "kls": "0.02;0;0.0199"} for s in range(3)]
    table = C.kl_table(rows + [{"env": "w", "arm": "grpo", "seed": 0, "kls": float("nan")}], "w", ["grpo", "null"])
    assert "0.333" in table and "0.0200 / 0.0200" not in table and "null" not in table


def test_the_command_line_takes_the_policy_the_step_rule_and_the_reference_arms():
    cfg, _ = T.config_from_args(["--policy", "neural", "--step", "kl", "--min-updates", "30", "--lrs", "0.03",
                                 "--arms", "grpo", "null", "imitate"])
    assert (cfg.policy, cfg.step, cfg.min_updates, cfg.arms) == ("neural", "kl", 30, ("grpo", "null", "imitate"))
    cfg.validate()
    with pytest.raises(SystemExit):
        T.config_from_args(["--policy", "lstm"])


@pytest.mark.slow
def test_a_stopped_study_reports_its_finished_runs_and_names_the_missing(tmp_path):
    from agentgym_credit.bench.learning.train_real_report import write_report

    cfg = _cfg(tmp_path, arms=("grpo", "imitate"), min_updates=1, budget_steps=20)
    done = T.run_benchmark(cfg)
    res, missing = T.finished_runs(T.RealTrainConfig(**{**cfg.__dict__, "seeds": 2}))
    assert missing == ["webshop/grpo/1", "webshop/imitate/1"]
    assert [r["seconds"] for r in res.rows] == [r["seconds"] for r in done.rows]
    md = next(p for p in write_report(cfg, res) if p.suffix == ".md").read_text()
    assert "Policy change per update" in md and "imitate" in md
    argv = ["--envs", "webshop", "--arms", "grpo", "imitate", "--step", "kl", "--lrs", "0.02", "--seeds", "2",
            "--sweep-seeds", "0", "--budget-steps", "20", "--min-updates", "1", "--groups", "3", "--group-size", "3",
            "--train-tasks", "6", "--checkpoints", "1", "--eval-rollouts", "1", "--eval-limit", "4",
            "--train-eval-rollouts", "1", "--out", str(tmp_path), "--no-progress", "--finished-only"]
    assert T.main(argv) == 0
    md = (tmp_path / "training_real.md").read_text()
    assert "2 runs finished, 2 missing (webshop/grpo/1, webshop/imitate/1)" in md
    # resumed to the end: the stopped study's note is replaced (the wording of the runs' own times beside the
    # call's wall time depends on how long these tiny runs took: tested without timing in test_train_real.py)
    assert T.main(argv[:-1]) == 0
    md = (tmp_path / "training_real.md").read_text()
    assert "Stopped before it finished" not in md and "Complete: all 4 runs finished" in md


def test_imitate_path_marks_the_expert_only_until_a_trajectory_leaves_its_path():
    from types import SimpleNamespace

    from agentgym_credit.bench.learning.matched_step import expert_path

    # trajectory 0: expert, expert, off, expert (recovery); trajectory 1: off at once; rows out of order
    tid = np.array([0, 1, 0, 0, 0, 1])
    t = np.array([0, 0, 2, 1, 3, 1])
    took = np.array([1, 0, 0, 1, 1, 1], dtype=float)
    assert expert_path(took, tid, t).tolist() == [True, True, True, True, False, False]

    class D:
        def __init__(self, idx):
            self.idx = idx

    rows = [{"decision": D(0 if k else 1), "expert_idx": 0} for k in took]
    adv = reference_advantages("imitate-path", rows, np.random.default_rng(0), SimpleNamespace(traj_id=tid, t=t))
    on = np.array([True, True, True, True, False, False])
    assert np.all(adv[~on] == 0.0) and abs(adv[on].sum()) < 1e-12
    assert np.all(adv[on & (took == 1)] > 0) and np.all(adv[on & (took == 0)] < 0)
    # every-row imitation labels the recovery (row 4) and the row after leaving (row 5) as well
    assert reference_advantages("imitate", rows, np.random.default_rng(0))[[4, 5]].min() > 0
    with pytest.raises(ValueError, match="needs the rows' steps"):
        reference_advantages("imitate-path", rows, np.random.default_rng(0))
    with pytest.raises(ValueError, match="rows but steps"):
        reference_advantages("imitate-path", rows, np.random.default_rng(0), SimpleNamespace(traj_id=tid[:3], t=t[:3]))


def test_the_checks_judge_imitate_path_as_a_known_effect():
    from agentgym_credit.bench.learning import train_real_checks as C

    rng = np.random.default_rng(1)
    summary = [{"env": "w", "arm": a, "seed": s, "auc_trained": base + 0.01 * rng.standard_normal()}
               for s in range(8) for a, base in (("grpo", 0.3), ("null", 0.2), ("imitate-path", 0.5))]
    ref = {r[0]: (r[4], r[5]) for r in C.reference_rows(summary, "w", ["grpo", "null", "imitate-path"],
                                                       "auc_trained")}
    assert ref["imitate-path − grpo"] == ("win", "win") and ref["imitate-path − null"] == ("win", "win")
    assert ref["null − grpo"] == ("loss", "not a win") and "null − imitate-path" not in ref


def test_neural_policy_at_expert_bonus_0_reads_no_expert_command():
    """At ``expert_bonus=0`` the neural policy's distribution depends on the text only: moving the expert's command
    in ``info`` changes nothing; at a bonus above 0 it does (so the check can fail)."""
    from agentgym_credit.bench.learning.neural_policy import NeuralTextPolicy

    obs = ["You are shopping. Instruction: i need a red cotton shirt under 30 dollars"] * 2
    acts = ["search[red cotton shirt]", "click[back to search]", "click[next >]"]
    infos = [{"admissible_actions": acts, "goal": obs[0], "expert_action": acts[0]},
             {"admissible_actions": acts, "goal": obs[0], "expert_action": acts[2]}]
    for bonus, differs in ((0.0, False), (1.0, True)):
        pol = NeuralTextPolicy(bonus, seed=1)
        a, b = (d.probs for _, d in pol.act_batch(obs, infos))
        assert (not np.allclose(a, b)) == differs
