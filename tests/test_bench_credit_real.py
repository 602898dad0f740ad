"""``bench credit_real --quick``: runs end to end and writes its report; its parts on small inputs."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from agentgym_credit.credit import ESTIMATORS, StepArrays

pytest.importorskip("textworld")
pytest.importorskip("fast_downward")


@pytest.mark.slow
def test_quick_run_writes_the_report(tmp_path):
    from agentgym_credit.bench.credit_real_report import main

    assert main(["--quick", "--out", str(tmp_path), "--no-progress"]) == 0
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
    info = list(csv.DictReader(open(tmp_path / "credit_real_info.csv")))
    assert all(int(i["mc_env_steps"]) > 0 for i in info)
    syn = list(csv.DictReader(open(tmp_path / "credit_real_synthetic.csv")))
    assert syn and float(syn[0]["coverage"]) >= 0.8
    md = (tmp_path / "credit_real.md").read_text()
    for part in ("## Predictions", "## Sanity", "## alfworld-gen / eps-expert(0.3)", "## What explains them",
                 "wall time", "load"):
        assert part in md
    # a hand-written findings section survives a rerun of the report
    (tmp_path / "credit_real.md").write_text(md + "\n<!-- findings:start -->\nmine\n<!-- findings:end -->\n")
    from agentgym_credit.bench import report as R

    R.write_section(tmp_path / "credit_real.md", "setup", "new setup")
    assert "mine" in (tmp_path / "credit_real.md").read_text()


def _steps(state, obs, traj, t, group=None):
    n = len(state)
    return StepArrays.from_lists(group_id=group or [0] * n, traj_id=traj, t=t, reward=[0.0] * n,
                                 done=[tt == max(tt2 for tr2, tt2 in zip(traj, t) if tr2 == tr) for tr, tt in zip(traj, t)],
                                 state_key=state, obs_key=obs)


def test_describe_counts_groups_revisits_and_aliasing():
    from agentgym_credit.bench.credit_real import describe

    # two trajectories: 1,2,1 and 1,3 ; obs 7 shows states 2 and 3 (aliased)
    s = _steps(state=[1, 2, 1, 1, 3], obs=[5, 7, 5, 5, 7], traj=[0, 0, 0, 1, 1], t=[0, 1, 2, 0, 1])
    d = describe(s)
    assert d["revisit"] == pytest.approx(1 / 5)  # state 1 again at t=2 of trajectory 0
    assert d["grouped_state"] == pytest.approx(3 / 5)  # state 1 three times; 2 and 3 alone
    assert d["grouped_obs"] == pytest.approx(1.0)
    assert d["aliasing"] == pytest.approx(2 / 5)  # obs 7's group holds states 2 and 3


def test_metrics_null_case_and_perfect_case():
    from agentgym_credit.bench import credit_real as C
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
    from agentgym_credit.bench import credit_real as C

    rng = np.random.default_rng(3)
    truth = rng.normal(size=80)
    clusters = np.repeat(np.arange(16), 5)
    C._BOOT[0] = 200
    good, bad = truth + 0.3 * rng.normal(size=80), rng.normal(size=80)
    assert C.paired_difference(good, bad, truth, clusters)["verdict"] == "a"
    assert C.paired_difference(bad, good, truth, clusters)["verdict"] == "b"
    same = C.paired_difference(good, good.copy(), truth, clusters)
    assert same["diff"] == 0.0 and same["verdict"] == "tie"


def test_pick_rows_spreads_over_groups():
    from types import SimpleNamespace

    from agentgym_credit.bench.credit_real import pick_rows

    traj = SimpleNamespace(copy=np.array([0, 1, 2, 0, 1, 2]), parent=np.full(6, -1))
    batch = SimpleNamespace(traj=traj, traj_id=np.repeat(np.arange(6), 3),
                            group_id=np.repeat([0, 0, 0, 1, 1, 1], 3))
    rows = pick_rows(batch, n_copies=2, count=6, seed=0)
    assert len(rows) == 6
    assert set(batch.group_id[rows]) == {0, 1} and np.sum(batch.group_id[rows] == 0) == 3
    assert np.all(traj.copy[batch.traj_id[rows]] < 2)
