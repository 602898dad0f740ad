"""``bench credit_real --quick``: runs end to end and writes its report; its parts on small inputs."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from agentgym_credit.credit import ESTIMATORS, StepArrays

pytest.importorskip("textworld")
pytest.importorskip("fast_downward")


def _cpu() -> float:
    """CPU seconds (user + system) of this process and its finished children: not wall time, which a
    shared, busy machine stretches."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.mark.slow
def test_quick_run_writes_the_report(tmp_path, monkeypatch):
    from agentgym_credit.bench.montecarlo import credit_real as CM

    kept = {}
    real_run = CM.run

    def keep(cfg):
        kept["cfg"], kept["res"] = cfg, real_run(cfg)
        return kept["res"]

    monkeypatch.setattr(CM, "run", keep)
    c0 = _cpu()
    assert CM.main(["--quick", "--out", str(tmp_path), "--no-progress"]) == 0
    cpu = _cpu() - c0
    assert cpu < 120, f"bench credit_real --quick took {cpu:.0f} s of CPU time (issue 22: under 2 minutes)"
    rows = list(csv.DictReader(open(tmp_path / "credit_real.csv")))
    names = {r["estimator"] for r in rows}
    expected = {"grpo", "rloo", "gigpo[state]", "gigpo[obs]", "gigpo[sim≥0.95 difflib]", "hgpo",
                "tree (+N/2 branched)"} | {n for n in ("graph", "graphgpo", "gagpo") if n in ESTIMATORS}
    assert expected <= names
    assert {r["env"] for r in rows} == {"alfworld-gen", "webshop"}
    for r in rows:
        assert -1.0 <= float(r["pearson"]) <= 1.0
        assert float(r["pearson_lo"]) <= float(r["pearson_hi"])
    pairs = list(csv.DictReader(open(tmp_path / "credit_real_pairs.csv")))
    assert {(p["a"], p["b"]) for p in pairs} >= {("gigpo[state]·A^S", "grpo"), ("hgpo·A^H", "gigpo[state]·A^S")}
    assert all(p["verdict"] in ("a", "b", "tie") for p in pairs)
    # every comparison has a p-value and a Holm verdict over the whole table (the family), the raw verdict kept
    assert all(p["holm"] in ("a", "b", "tie") and 0.0 <= float(p["p"]) <= 1.0 for p in pairs)
    assert {int(p["family"]) for p in pairs} == {len(pairs)}
    assert sum(p["holm"] != "tie" for p in pairs) <= sum(p["verdict"] != "tie" for p in pairs)
    # issue 41.4: every comparison under the robustness lenses, each Holm-corrected over the same family
    for p in pairs:
        assert float(p["se_jk"]) >= 0 and 0.0 <= float(p["p_jk"]) <= 1.0 and -2 <= float(p["spearman_diff"]) <= 2
        assert {p["holm_jk"], p["holm_drop"], p["holm_spearman"]} <= {"a", "b", "tie"}
        assert p["robust"] == str(p["holm_jk"] == p["holm_drop"] == p["holm_spearman"] == p["holm"])
    info = list(csv.DictReader(open(tmp_path / "credit_real_info.csv")))
    assert all(int(i["mc_env_steps"]) > 0 for i in info)
    # the best-action figures have pairs to compare (issue 22: "how often history changes the best action")
    assert sum(int(i["history_compared"]) + int(i["aliasing_compared"]) for i in info) > 0
    best = list(csv.DictReader(open(tmp_path / "credit_real_best_pairs.csv")))
    assert best and {b["kind"] for b in best} <= {"history", "aliasing"}
    syn = list(csv.DictReader(open(tmp_path / "credit_real_synthetic.csv")))
    assert syn and float(syn[0]["coverage"]) >= 0.8
    md = (tmp_path / "credit_real.md").read_text()
    for part in ("## Predictions", "## Sanity", "## alfworld-gen / eps-expert(0.3)", "## What explains them",
                 "## Tallies (Holm-corrected)", "| Holm |", "wall time", "CPU time", "load",
                 "same obs, other state: best differs", "## Robustness of the verdicts", "SE bootstrap / jackknife"):
        assert part in md
    assert "no correction for the number of comparisons" not in md
    # a hand-written findings section survives a rerun of the report
    (tmp_path / "credit_real.md").write_text(md + "\n<!-- findings:start -->\nmine\n<!-- findings:end -->\n")
    from agentgym_credit.bench.stats import report as R

    R.write_section(tmp_path / "credit_real.md", "setup", "new setup")
    assert "mine" in (tmp_path / "credit_real.md").read_text()

    # --scale 2 writes its own report (credit_real_x2.md and CSVs), with the same corrected statistics
    def scaled(cfg):
        assert cfg.groups == {e: 2 * v for e, v in kept["cfg"].groups.items()}
        return kept["res"]

    monkeypatch.setattr(CM, "run", scaled)
    x2 = tmp_path / "x2"
    assert CM.main(["--quick", "--scale", "2", "--out", str(x2), "--no-progress"]) == 0
    md2 = (x2 / "credit_real_x2.md").read_text()
    assert "## Tallies (Holm-corrected)" in md2 and "| Holm |" in md2
    assert (x2 / "credit_real_x2_pairs.csv").exists() and not (x2 / "credit_real.md").exists()


def _steps(state, obs, traj, t, group=None):
    n = len(state)
    return StepArrays.from_lists(group_id=group or [0] * n, traj_id=traj, t=t, reward=[0.0] * n,
                                 done=[tt == max(tt2 for tr2, tt2 in zip(traj, t) if tr2 == tr) for tr, tt in zip(traj, t)],
                                 state_key=state, obs_key=obs)


def test_describe_counts_groups_revisits_and_aliasing():
    from agentgym_credit.bench.montecarlo.credit_real import describe

    # two trajectories: 1,2,1 and 1,3 ; obs 7 shows states 2 and 3 (aliased)
    s = _steps(state=[1, 2, 1, 1, 3], obs=[5, 7, 5, 5, 7], traj=[0, 0, 0, 1, 1], t=[0, 1, 2, 0, 1])
    d = describe(s)
    assert d["revisit"] == pytest.approx(1 / 5)  # state 1 again at t=2 of trajectory 0
    assert d["grouped_state"] == pytest.approx(3 / 5)  # state 1 three times; 2 and 3 alone
    assert d["grouped_obs"] == pytest.approx(1.0)
    assert d["aliasing"] == pytest.approx(2 / 5)  # obs 7's group holds states 2 and 3


def test_metrics_null_case_and_perfect_case():
    from agentgym_credit.bench.montecarlo import credit_real as C
    from agentgym_credit.truth.montecarlo import StepTruth

    rng = np.random.default_rng(0)
    n = 60
    a = rng.normal(size=n)
    truth = StepTruth(np.arange(n), q=a, v=np.zeros(n), adv=a, adv_se=np.full(n, 0.1), adv_half=np.full(n, 0.2),
                      pi_taken=np.full(n, 0.5), env_steps=np.ones(n, dtype=np.int64))
    clusters = np.repeat(np.arange(12), 5)
    C._BOOT[0] = 100
    perfect = C._metrics(a, a, truth, ret=a, clusters=clusters)  # est = A and R_t - V = A: no bias
    assert perfect["pearson"] == pytest.approx(1.0)
    assert perfect["sign_acc"] == 1.0 and perfect["bias"] == pytest.approx(0.0)
    assert perfect["pearson_disatt"] >= perfect["pearson"]
    null = C._metrics(rng.normal(size=n), rng.normal(size=n), truth, ret=a, clusters=clusters)
    assert null["pearson_lo"] < 0 < null["pearson_hi"]  # independent noise: the interval holds 0


def test_paired_difference_null_and_clear_cases():
    from agentgym_credit.bench.montecarlo import credit_real as C

    rng = np.random.default_rng(3)
    truth = rng.normal(size=80)
    clusters = np.repeat(np.arange(16), 5)
    C._BOOT[0] = 200
    good, bad = truth + 0.3 * rng.normal(size=80), rng.normal(size=80)
    assert C.paired_difference(good, bad, truth, clusters)["verdict"] == "a"
    assert C.paired_difference(bad, good, truth, clusters)["verdict"] == "b"
    same = C.paired_difference(good, good.copy(), truth, clusters)
    assert same["diff"] == 0.0 and same["verdict"] == "tie"


def test_paired_difference_p_value_and_holm_null_and_clear_cases():
    from agentgym_credit.bench.montecarlo import credit_real as C

    rng = np.random.default_rng(4)
    truth = rng.normal(size=80)
    clusters = np.repeat(np.arange(16), 5)
    C._BOOT[0] = 200
    good = truth + 0.3 * rng.normal(size=80)
    # an estimator against itself: no difference, p = 1, never a win, before or after the correction
    same = C.paired_difference(good, good.copy(), truth, clusters)
    assert same["diff"] == 0.0 and same["se"] == 0.0 and same["p"] == 1.0
    # a clear gain has a small p (t on 15 df), consistent with its interval
    clear = C.paired_difference(good, rng.normal(size=80), truth, clusters)
    assert clear["verdict"] == "a" and clear["p"] < 1e-4 and clear["groups"] == 16
    # 40 comparisons of two pure-noise estimators: some raw intervals exclude 0 by chance, Holm keeps none
    nulls = [C.paired_difference(rng.normal(size=80), rng.normal(size=80), truth, clusters) for _ in range(40)]
    ps = np.array([x["p"] for x in nulls])
    assert np.mean(ps < 0.05) <= 0.15  # calibrated-to-conservative p under the null
    assert sum(x["verdict"] != "tie" for x in nulls) >= 1  # the uncorrected tally has false wins/losses
    fam = C.holm_family(nulls + [same, clear])
    assert [x["holm"] for x in fam[:-1]] == ["tie"] * 41 and fam[-1]["holm"] == "a"
    assert all(x["family"] == 42 for x in fam) and fam[0]["verdict"] in ("a", "b", "tie")


def test_paired_difference_of_float32_estimates_is_finite():
    """GRPO's float32 advantages of 0.499998/0.499999 (a WebShop quick run): some resamples had a spread
    float32 rounds away, corrcoef gave NaN and the interval was [nan, nan]."""
    from agentgym_credit.bench.montecarlo import credit_real as C

    b = np.array([0, 0, 0, -1.499994, 0.499998, 0.499998, 0.499999, 0.499999, 0.499999, 0.499999, 0.499999,
                  0.499999], np.float32)
    a = np.array([-1.5, 0.5, 0, -1.36, 1.01, 0.71, 0, 0.54, 0.69, 0.85, 0.58, 1.15], np.float32)
    truth = np.array([0.0068, -0.048, 0.0205, 0.0294, 0.2358, -0.0018, 0.1353, -0.0359, 0.1558, 0.0791, -0.008,
                      0.0371])
    C._BOOT[0] = 100
    out = C.paired_difference(a, b, truth, np.repeat(np.arange(4), 3))
    assert np.isfinite([out["diff_lo"], out["diff_hi"], out["se"], out["p"]]).all(), out


def test_tallies_count_holm_and_raw_verdicts_per_env_family():
    from agentgym_credit.bench.montecarlo.credit_real_report import tallies

    def pr(env, verdict, holm, diff):
        return {"env": env, "policy": "p", "N": 4, "a": "x", "b": "y", "diff": diff, "diff_lo": diff - 0.1,
                "diff_hi": diff + 0.1, "p": 0.01, "verdict": verdict, "holm": holm, "family": 4}

    t = tallies([pr("alfworld-gen", "a", "a", 0.3), pr("alfworld-dev", "a", "tie", 0.2),
                 pr("webshop", "b", "b", -0.1), pr("webshop", "tie", "tie", 0.0)])
    by = {x["env"]: x for x in t}
    assert (by["alfworld"]["holm_a"], by["alfworld"]["raw_a"], by["alfworld"]["ties"]) == (1, 2, 1)
    assert by["alfworld"]["best"]["diff"] == 0.3
    assert (by["webshop"]["holm_b"], by["webshop"]["ties"], by["webshop"]["cells"]) == (1, 1, 2)


def test_compare_best_null_and_flip():
    from agentgym_credit.bench.montecarlo.credit_real import compare_best

    q = {"a": (1.0, 0.1, 6), "b": (0.5, 0.1, 6)}
    assert compare_best(q, dict(q)) == {"q_differs": False, "best_differs": False, "comparable": True}
    flip = {"a": (0.5, 0.1, 6), "b": (1.0, 0.1, 6)}
    assert compare_best(q, flip)["best_differs"] and compare_best(q, flip)["q_differs"]
    noisy = {"a": (0.95, 0.3, 6), "b": (1.0, 0.3, 6)}  # argmax flipped, but within the noise
    assert not compare_best(q, noisy)["best_differs"]
    assert not compare_best({"a": (1.0, 0.1, 6)}, {"a": (0.0, 0.1, 6)})["comparable"]


def test_find_pairs_history_and_aliasing():
    from types import SimpleNamespace

    from agentgym_credit.bench.montecarlo.credit_real import find_pairs

    # rows: 0,1 same state (5), different windows; 2 same state and window as 0 (no new comparison);
    # 3,4 same obs (9) at different states; 5 a branch row (not a root: never paired)
    traj = SimpleNamespace(parent=np.array([-1, -1, 0]))
    b = SimpleNamespace(traj=traj, traj_id=np.array([0, 1, 1, 0, 1, 2]), task_id=["t"] * 6,
                        state_key=np.array([5, 5, 5, 6, 7, 5], np.uint64), obs_key=np.array([1, 2, 1, 9, 9, 1], np.uint64),
                        history_keys=np.array([[5, 10], [5, 11], [5, 10], [6, 12], [7, 13], [5, 99]], np.uint64))
    hist = find_pairs(b, "history", 10, 0)
    assert len(hist) == 1 and set(hist[0]) in ({0, 1}, {1, 2})
    assert [set(p) for p in find_pairs(b, "aliasing", 10, 0)] == [{3, 4}]
    assert find_pairs(b, "history", 0, 0) == []
    with pytest.raises(ValueError, match="kind"):
        find_pairs(b, "nope", 1, 0)


def test_best_action_pairs_agree_with_the_exact_oracle():
    """AliasedGrid: same-observation pairs hide different best actions (exact Q); every Monte-Carlo
    'best differs' is a true difference, and pairs whose exact Q agree (same state and t) are never flagged."""
    import gymnasium as gym

    from agentgym_credit.bench.montecarlo.credit_real import best_action_pairs
    from agentgym_credit.credit.oracle import evaluate_policy
    from agentgym_credit.credit.policies import NoisyOptimalPolicy
    from agentgym_credit.truth import MCConfig, RolloutPolicy, TabularPolicy
    from agentgym_credit.wrappers.collector import GroupedRolloutCollector

    base = gym.make("credit/AliasedGrid-v0").unwrapped
    pol = NoisyOptimalPolicy(0.3)
    models = {t: base.model_for(t) for t in base.task_ids()[:3]}
    tp = TabularPolicy(pol, models.__getitem__)
    vals = {t: evaluate_policy(m, pol, gamma=0.95) for t, m in models.items()}
    with GroupedRolloutCollector("credit/AliasedGrid-v0", group_size=4, progress=False, seed=0,
                                 max_steps=int(next(iter(models.values())).horizon or 100)) as col:
        batch = col.collect(RolloutPolicy(tp, seed=0), tasks=list(models), seeds=[0, 1, 2])
        out = best_action_pairs(col.backend, batch, tp, MCConfig(k=8, gamma=0.95), 12, 0)
    assert out["aliasing_compared"] >= 8 and out["history_compared"] >= 8 and out["pair_env_steps"] > 0
    exact_differs = 0
    for d in out["detail"]:
        acts = d["actions"].split(" | ")
        qs = []
        for r in (d["row_a"], d["row_b"]):
            m, s = models[batch.task_id[r]], int(batch.state_index[r])
            qs.append([vals[batch.task_id[r]].q(s, m.action_index(s, a), int(batch.t[r])) for a in acts])
        best_a, best_b = int(np.argmax(qs[0])), int(np.argmax(qs[1]))
        truly = best_a != best_b and qs[0][best_a] > qs[0][best_b] + 1e-9 and qs[1][best_b] > qs[1][best_a] + 1e-9
        exact_differs += truly and d["kind"] == "aliasing"
        if d["best_differs"]:
            assert truly, d  # no false positive
        if np.allclose(qs[0], qs[1]):
            assert not d["best_differs"]
    assert exact_differs >= 1  # aliasing hides the best action at some pairs: the figure can be non-zero


def test_pick_rows_spreads_over_groups():
    from types import SimpleNamespace

    from agentgym_credit.bench.montecarlo.credit_real import pick_rows

    traj = SimpleNamespace(copy=np.array([0, 1, 2, 0, 1, 2]), parent=np.full(6, -1))
    batch = SimpleNamespace(traj=traj, traj_id=np.repeat(np.arange(6), 3),
                            group_id=np.repeat([0, 0, 0, 1, 1, 1], 3))
    rows = pick_rows(batch, n_copies=2, count=6, seed=0)
    assert len(rows) == 6
    assert set(batch.group_id[rows]) == {0, 1} and np.sum(batch.group_id[rows] == 0) == 3
    assert np.all(traj.copy[batch.traj_id[rows]] < 2)
