"""``bench train_real``: one tiny run per path (in process, process pool), the saved policies, the report."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from agentgym_credit.bench.learning import train_real as T
from agentgym_credit.bench.learning.train_real_report import (
    _comparison_section,
    compare,
    run_summary,
    steps_to_target,
    write_report,
)
from agentgym_credit.truth.text_policy import TextPolicy


def _cfg(tmp_path, **kw):
    base = dict(envs=("webshop",), arms=("grpo", "gigpo[state]"), seeds=1, sweep_seeds=0, lrs=(0.3,),
                budget_steps=300, groups=2, group_size=2, train_tasks=4, checkpoints=1, eval_rollouts=1,
                eval_limit=10, out=tmp_path, progress=False, target={"webshop": 0.5})
    base.update(kw)
    return T.RealTrainConfig(**base)


def test_run_is_deterministic_across_backends_and_saves_policies(tmp_path):
    # groups of 4: on WebShop generator v9 every pair of seed 0's 2-rollout groups ends alike (zero advantages,
    # nothing learned), so the saved policy could not show it was the trained one
    cfg = _cfg(tmp_path, group_size=4)
    res = T.run_benchmark(cfg)
    assert {r["arm"] for r in res.rows} == {"grpo", "gigpo[state]"}
    for arm in cfg.arms:
        rows = [r for r in res.rows if r["arm"] == arm]
        assert rows[0]["env_steps"] == 0 and rows[-1]["env_steps"] >= cfg.budget_steps
        assert 0.0 <= rows[-1]["success"] <= 1.0
        pol, meta = TextPolicy.load(T.policy_path(cfg, "webshop", arm, 0))
        assert meta["arm"] == arm and meta["seed"] == 0 and np.any(pol.w != 0)
    # the same runs in two spawned processes give the same rows
    pooled = T.run_benchmark(replace(cfg, jobs=2, save_policies=False, out=tmp_path / "pool"))
    # a finished run is kept and reused (an interrupted study resumes)
    assert T.run_file(cfg, "webshop", "grpo", 0, 0.3).exists()
    again = T.run_benchmark(cfg)
    assert [r["seconds"] for r in again.rows] == [r["seconds"] for r in res.rows]
    picked = T.run_picked(cfg, {"webshop/grpo": 0.3, "gigpo[state]": 0.3})  # per env/arm or per arm
    assert picked.picked == {"webshop|grpo": 0.3, "webshop|gigpo[state]": 0.3}
    assert [r["seconds"] for r in picked.rows] == [r["seconds"] for r in res.rows]
    def strip(rows):
        return [repr({k: v for k, v in r.items() if "seconds" not in k}) for r in rows]  # repr: nan == nan

    assert strip(res.rows) == strip(pooled.rows)
    paths = write_report(replace(cfg, primary=("gigpo[state]:grpo",), primary_measure="auc_trained"), res)
    md = next(p for p in paths if p.suffix == ".md").read_text()
    assert "## Results: exploration" in md and "Primary family (auc_trained" in md
    assert all(0.0 <= r["success_trained"] <= 1.0 for r in res.rows)


def test_every_arm_runs_one_update(tmp_path):
    cfg = _cfg(tmp_path, arms=tuple(T.ARMS), budget_steps=40, save_policies=False)
    for arm in cfg.arms:
        rows = T.train_one_real("webshop", arm, 3, 0.3, cfg, save=False)
        assert len(rows) == 2 and rows[-1]["iteration"] >= 1


def test_training_and_evaluation_instances_are_disjoint():
    for env in T.REAL_ENVS.values():
        for phase in T.PHASES:
            lo, hi = env.eval_tasks[phase]
            ids = T.train_instances(env, phase, 64, seed=5)
            assert not set(ids) & set(range(lo, hi))
    web = T.REAL_ENVS["webshop"]
    ex = set(range(*web.train_pool["exploration"])) | set(range(*web.eval_tasks["exploration"]))
    conf = set(range(*web.train_pool["confirmation"])) | set(range(*web.eval_tasks["confirmation"]))
    assert not ex & conf  # fresh task instances for the confirmatory run


def test_bad_configs_are_refused(tmp_path):
    for kw in ({"envs": ("nope",)}, {"arms": ("gigpo",)}, {"phase": "final"}, {"group_size": 1},
               {"lrs": (0.0,)}, {"primary": ("grpo:graph[state]",)}, {"primary_measure": "speed"},
               {"target_measure": "reward"}, {"train_eval_rollouts": -1}):
        with pytest.raises(ValueError):
            _cfg(tmp_path, **kw).validate()
    assert T.main(["--envs", "webshop", "--lr-picks", "grpo"]) == 2
    assert T.main(["--envs", "webshop", "--lr-picks", "nowhere/grpo=0.1"]) == 2
    assert T.main(["--envs", "webshop", "--arms", "grpo", "gigpo[state]", "--lr-picks", "grpo=0.1"]) == 2


def test_steps_to_target_and_paired_comparison():
    rows = [{"env_steps": 0, "success": 0.1}, {"env_steps": 100, "success": 0.3}, {"env_steps": 200, "success": 0.5}]
    assert steps_to_target(rows, 0.3, 200) == (100.0, True)
    assert steps_to_target(rows, 0.9, 200) == (200.0, False)
    runs = [{"env": "w", "arm": a, "seed": s, "steps": v} for s in range(4) for a, v in (("x", 100 + s), ("y", 200 + s))]
    c = compare(runs, "w", "x", "y", "steps")
    assert c["n"] == 4 and c["diff"] == -100.0 and c["relative"] < 0
    same = compare([{**r, "steps": 7} for r in runs], "w", "x", "y", "steps")
    assert same["diff"] == 0.0  # null case: equal inputs tie


def test_grid_area_uses_the_same_checkpoints_for_every_run(tmp_path):
    """Issue 41 review: ``--min-updates`` adds a checkpoint past the budget to some runs only, so the registered
    ``auc_trained`` averages different checkpoint sets per arm; ``auc_trained_grid`` uses the budget grid alone
    (per mark, the checkpoint recorded when the run passed it), the same for every run."""
    cfg = _cfg(tmp_path, budget_steps=900, checkpoints=3, target={})

    def run(arm, steps, trained):
        return [{"env": "webshop", "arm": arm, "seed": 0, "lr": 0.3, "env_steps": e, "success": 0.0,
                 "success_greedy": 0.0, "success_trained": t} for e, t in zip(steps, trained)]

    extra = run("grpo", (0, 310, 620, 905, 1130), (0.0, 0.1, 0.2, 0.3, 0.9))  # one update past the budget
    plain = run("gigpo[state]", (0, 305, 610, 910), (0.0, 0.1, 0.2, 0.3))
    two_marks = run("graph[state]", (0, 640, 920), (0.0, 0.2, 0.4))  # one batch passed marks 300 and 600
    s = {r["arm"]: r for r in run_summary(cfg, extra + plain + two_marks)}
    assert s["grpo"]["auc_trained"] == pytest.approx(1.5 / 4)  # registered: every checkpoint after the start
    assert s["gigpo[state]"]["auc_trained"] == pytest.approx(0.2)
    assert s["grpo"]["auc_trained_grid"] == pytest.approx(0.2) == s["gigpo[state]"]["auc_trained_grid"]
    assert s["graph[state]"]["auc_trained_grid"] == pytest.approx((0.2 + 0.2 + 0.4) / 3)
    assert [s[a]["past_budget"] for a in ("grpo", "gigpo[state]", "graph[state]")] == [1, 0, 0]
    short = run("grpo", (0, 310, 620), (0.0, 0.1, 0.2))  # never reached the budget: no grid area
    assert np.isnan(run_summary(cfg, short)[0]["auc_trained_grid"])
    # the report: the registered family first, then the grid family beside it (only when checkpoint sets differ)
    seeds = [[{**r, "seed": k, "success_trained": r["success_trained"] + 0.01 * k * (r["arm"] == "grpo")}
              for r in extra + plain] for k in range(3)]
    fam = replace(cfg, arms=("grpo", "gigpo[state]"), primary=("gigpo[state]:grpo",), primary_measure="auc_trained")
    text = _comparison_section(fam, run_summary(fam, [r for rs in seeds for r in rs]))
    registered, grid = text.split("Sensitivity check, added after the run")
    assert "grpo 1/1" not in grid and "grpo 3/3" in grid and "gigpo[state] 0/3" in grid
    # mean over k of 0.2 − 0.375 − 0.01k (registered) and of 0.2 − 0.2 − 0.01k (grid)
    assert "| -0.185 ± " in registered and "| -0.010 ± " in grid
    same = _comparison_section(fam, run_summary(fam, [r for rs in seeds for r in rs if r["env_steps"] <= 910]))
    assert "Sensitivity" not in same and "auc_trained_grid" not in same


def _batch(env_name, tasks, greedy=False, group_size=8):
    from agentgym_credit.truth.text_policy import TextActor
    from agentgym_credit.wrappers.collector import GroupedRolloutCollector

    env = T.REAL_ENVS[env_name]
    col = GroupedRolloutCollector(env.factory, group_size=group_size, history_depth=3, seed=0,
                                  max_steps=env.max_steps, progress=False)
    try:
        return col.collect(TextActor(TextPolicy(), np.random.default_rng(0), greedy=greedy), tasks=tasks)
    finally:
        col.close()


def test_arms_learn_verl_agents_reward_not_webshops_partial_score(monkeypatch, tmp_path):
    # measured defect (training_webshop*.md): the arms learned from WebShop's partial score of any purchase
    # while success (a score of exactly 1) was scored; verl-agent trains on 10 per win and nothing else
    batch = _batch("webshop", T.train_instances(T.REAL_ENVS["webshop"], "exploration", 8, 0))
    env_r, va = T.training_reward(batch, "env"), T.training_reward(batch, "verl-agent")
    assert len(env_r) == len(va) == len(batch.steps.reward)
    partial = (env_r > 0) & (env_r < 1)
    assert partial.any()  # this batch holds wrong purchases that earn partial credit
    assert np.all(va[partial] == 0.0) and set(np.unique(va)) <= {0.0, 10.0}
    kept = ~batch.traj.failed
    assert int(np.sum(va == 10.0)) == int(np.sum(batch.traj.won[kept])) > 0
    assert T.RealTrainConfig().reward == "verl-agent"
    with pytest.raises(ValueError):
        T.training_reward(batch, "score")
    with pytest.raises(ValueError):
        _cfg(tmp_path, reward="score").validate()
    seen = []
    real = T.training_reward
    monkeypatch.setattr(T, "training_reward", lambda b, rule: seen.append(rule) or real(b, rule))
    T.train_one_real("webshop", "grpo", 0, 0.3, _cfg(tmp_path, budget_steps=20), save=False)
    assert seen and set(seen) == {"verl-agent"}


def test_on_alfworld_the_two_reward_rules_agree():
    from agentgym_credit.envs.alfworld.games import dev_data_dir  # noqa: F401  (the engine is installed)

    batch = _batch("alfworld-gen", [0], greedy=True, group_size=2)
    env_r, va = T.training_reward(batch, "env"), T.training_reward(batch, "verl-agent")
    assert batch.traj.won.any() and np.array_equal(env_r, va)


def test_update_direction_metric_has_its_null_and_known_effect(tmp_path):
    from agentgym_credit.bench.learning import update_direction as U

    pol = TextPolicy()
    assert np.isnan(U.expert_shift(pol, pol, []))
    cfg = U.DirectionConfig(arms=("grpo",), batches=1, groups=2, out=tmp_path, progress=False)
    rows = U.run(cfg)
    by = {(r["arm"], r["reward"]): r for r in rows}
    assert set(by) == {("null", "-"), ("imitate", "-"), ("imitate-path", "-"), ("grpo", "verl-agent"), ("grpo", "env")}
    assert by[("imitate", "-")]["shift_batch"] > 0.05  # the known effect moves towards the expert
    assert all(-1.0 <= r["shift_batch"] <= 1.0 and -1.0 <= r["shift_fresh"] <= 1.0 for r in rows)
    paths = U.write_report(cfg, rows, 1.0, (0.0, 0.0))
    assert "imitate" in paths[0].read_text()
    for bad in ({"lr": 0.0}, {"rewards": ("score",)}, {"group_size": 1}, {"arms": ("nope",)}):
        with pytest.raises(ValueError):
            U.DirectionConfig(**bad).validate()
    assert U.main(["--lr", "-1", "--out", str(tmp_path)]) == 2


def test_runs_under_the_two_reward_rules_are_kept_apart(tmp_path):
    env_run = T.run_file(_cfg(tmp_path, reward="env"), "webshop", "grpo", 0, 0.3)
    win_run = T.run_file(_cfg(tmp_path), "webshop", "grpo", 0, 0.3)
    assert env_run != win_run  # a resumed study never reuses a run trained on the other reward
    assert T.run_file(_cfg(tmp_path, pick_measure="success_trained", train_eval_rollouts=2),
                      "webshop", "grpo", 0, 0.3) == T.run_file(_cfg(tmp_path, train_eval_rollouts=2),
                                                               "webshop", "grpo", 0, 0.3)


def test_the_study_runs_on_a_real_ray_cluster_with_the_same_rows(ray_cluster, tmp_path):
    """``--ray``: each run is one task on a (here local, 2-CPU) Ray cluster; the rows equal the in-process ones."""
    cfg = _cfg(tmp_path, arms=("grpo",), budget_steps=120, save_policies=False)
    local = T.run_benchmark(replace(cfg, out=tmp_path / "local"))
    remote = T.run_benchmark(replace(cfg, ray="auto", out=tmp_path / "ray"))

    def strip(rows):
        return [repr({k: v for k, v in r.items() if "seconds" not in k}) for r in rows]

    assert strip(remote.rows) == strip(local.rows) and len(remote.rows) == 2


DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld" / "dev"


@pytest.mark.skipif(not DEV.is_dir(), reason="needs the dev games in ../shared/data/alfworld/dev")
def test_a_run_on_the_real_alfworld_dev_games(tmp_path):
    """``--envs alfworld-dev``: the real dev games train (games 0-11) and score held-out games (12-18)."""
    cfg = _cfg(tmp_path, envs=("alfworld-dev",), arms=("graph[obs]",), budget_steps=60, groups=1,
               train_tasks=2, eval_limit=1, train_eval_rollouts=1, save_policies=False, target={})
    rows = T.train_one_real("alfworld-dev", "graph[obs]", 0, 0.03, cfg, save=False)
    assert len(rows) == 2 and rows[0]["env_steps"] == 0 and rows[-1]["env_steps"] >= 60
    assert all(0.0 <= r["success"] <= 1.0 and 0.0 <= r["success_trained"] <= 1.0 for r in rows)


def test_rescoring_the_saved_policies_reproduces_the_study_and_refuses_training_instances(tmp_path):
    from agentgym_credit.bench.learning import rescore_real as RS

    cfg = _cfg(tmp_path, budget_steps=120, name="study")
    res = T.run_benchmark(cfg)
    lo = T.REAL_ENVS["webshop"].eval_tasks["exploration"][0]
    rc = RS.RescoreConfig(name="study", out=tmp_path, env="webshop", phase="exploration", tasks=(lo, lo + 10),
                          progress=False)
    rows = RS.rescore(rc)
    # on the study's own held-out episodes the rescored start and final policies give its start and final rows
    study = {(r["arm"], r["env_steps"] == 0): r["success"] for r in res.rows}
    got = {(r["arm"], r["point"]): r["success"] for r in rows}
    assert got[("start", "start")] == study[("grpo", True)] == study[("gigpo[state]", True)]
    for arm in cfg.arms:
        assert got[(arm, "final")] == study[(arm, False)]
    assert RS.rescore(rc) == rows  # kept per policy: a second call reads them back
    paths = RS.write_report(rc, rows, 1.0)
    assert "final / start" in paths[1].read_text()
    start, arms, pairs = RS.summarize(rows)
    assert set(arms) == set(cfg.arms) and [(q["a"], q["b"]) for q in pairs] == [("gigpo[state]", "grpo")]
    for bad in (dict(tasks=(0, 10)), dict(phase="final"), dict(env="nope"), dict(rollouts=0)):
        with pytest.raises(ValueError):
            RS.rescore(replace(rc, **bad))
    with pytest.raises(ValueError, match="no saved policies"):
        RS.rescore(replace(rc, name="other"))
    with pytest.raises(ValueError, match="phase"):
        RS.rescore(replace(rc, phase="confirmation", tasks=None))
    assert RS.main(["--name", "study", "--out", str(tmp_path), "--env", "webshop", "--tasks", "0", "5"]) == 2


def test_from_csv_keeps_the_recorded_commands_settings(tmp_path):
    """Re-rendering a committed report from its CSV with only --from-csv/--out/--name must give the committed
    results section: the phase, step rule, budget and family are in the recorded command, not in the CSV."""
    import shutil

    from agentgym_credit.bench.stats import report as R

    name, src = "matched_kl_known_dose_q04_v9", Path("benchmarks/learning")
    for suffix in (".csv", "_meta.json", ".md"):
        shutil.copy(src / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    assert T.main(["--from-csv", str(tmp_path / f"{name}.csv"), "--out", str(tmp_path), "--name", name]) == 0
    md = (tmp_path / f"{name}.md").read_text()
    committed = (src / f"{name}.md").read_text()
    section = "<!-- results-exploration:start -->"
    assert md.count(section) == 1 and "results-confirmation" not in md
    assert md.split(section)[1] == committed.split(section)[1]
    assert R.read_command(tmp_path / f"{name}.md") == R.read_command(src / f"{name}.md")


def test_best_arm_line_does_not_call_the_2x_goal_met_from_a_zero_start():
    """A start of 0 printed 'nanx; goal >= 2x: met' (any final passes 2 x 0): the goal is undefined there."""
    from agentgym_credit.bench.learning.train_real_report import best_arm_line

    zero = best_arm_line("graph[state]", 0.085, 0.0)
    assert "met" not in zero.replace("undefined", "") and "nan" not in zero and "undefined" in zero
    assert "2.50x; goal >= 2x: met" in best_arm_line("grpo", 0.25, 0.1)
    assert "1.50x; goal >= 2x: not met" in best_arm_line("grpo", 0.15, 0.1)


def test_from_csv_render_of_a_stopped_study_keeps_its_stopped_note(tmp_path):
    """--from-csv renders the rows a CSV holds, finished or not: it must not replace a stopped study's note with
    'Complete: all N runs finished' (only a call that ran or resumed every run of the config knows that)."""
    import shutil

    from agentgym_credit.bench.stats import report as R

    name, src = "matched_kl_known_dose_q04_v9", Path("benchmarks/learning")
    for suffix in ("_meta.json", ".md"):
        shutil.copy(src / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    rows = R.read_csv(src / f"{name}.csv")
    last = (rows[-1]["arm"], rows[-1]["seed"])  # a stopped study's CSV: one run missing
    R.write_csv(tmp_path / f"{name}.csv", [r for r in rows if (r["arm"], r["seed"]) != last])
    note = "## Study state\n\nStopped before it finished: one run missing.\n"
    R.write_section(tmp_path / f"{name}.md", "state-exploration", note)
    assert T.main(["--from-csv", str(tmp_path / f"{name}.csv"), "--out", str(tmp_path), "--name", name]) == 0
    md = (tmp_path / f"{name}.md").read_text()
    assert "Stopped before it finished: one run missing." in md and "Complete: all" not in md


def test_runs_seconds_sums_each_runs_last_time_and_skips_blank_or_missing_times():
    """A resumed render's 'Wall time' is the call's; the runs' own times come from each run's last row. A CSV's
    blank cell, a NaN or a missing key counts as no time instead of crashing or printing nan."""
    from types import SimpleNamespace

    from agentgym_credit.bench.learning.train_real_report import _run_time_words, runs_seconds

    rows = [{"env": "w", "arm": "a", "seed": 0, "seconds": 1.0}, {"env": "w", "arm": "a", "seed": 0, "seconds": 5.0},
            {"env": "w", "arm": "b", "seed": 0, "seconds": ""}, {"env": "w", "arm": "b", "seed": 1},
            {"env": "w", "arm": "c", "seed": 0, "seconds": float("nan")}, {"env": "w", "arm": "d", "seed": 0,
                                                                            "seconds": "7"}]
    assert runs_seconds(rows) == (5, 12.0)
    assert runs_seconds([]) == (0, 0.0)
    one = SimpleNamespace(rows=rows[:2], seconds=0.1)
    assert _run_time_words(one) == " for this call; the run's own time 5 s"
    assert _run_time_words(SimpleNamespace(rows=rows[:2], seconds=5.02)) == ""
