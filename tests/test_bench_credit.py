"""``bench credit``: the --quick run end to end, and the pieces it is built from."""

import math

import numpy as np
import pytest

from agentgym_credit.bench import credit as C
from agentgym_credit.bench import report as R
from agentgym_credit.credit import StepArrays, advantages, step_returns
from agentgym_credit.credit.oracle import episode_windows
from agentgym_credit.credit.policies import RevisitAvoidingPolicy, UniformPolicy
from agentgym_credit.envs.gridworld.model import TabularModel


@pytest.fixture(scope="module")
def quick_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    assert C.main(["--quick", "--out", str(out), "--no-progress"]) == 0
    return out


def test_quick_run_writes_every_output(quick_out):
    for name in ("credit_accuracy.md", "credit_accuracy.csv", "credit_accuracy_runs.csv", "credit_accuracy_bias.csv",
                 "credit_accuracy_info.csv", "credit_accuracy_pearson.png", "credit_accuracy_sign_acc.png"):
        assert (quick_out / name).stat().st_size > 0, name
    assert (quick_out / "credit_accuracy_pearson.png").read_bytes()[:4] == b"\x89PNG"
    md = (quick_out / "credit_accuracy.md").read_text()
    for part in ("## Findings", "cpu_count", "agentgym-credit bench credit --quick", "## Bias vs A^π"):
        assert part in md


def test_quick_run_metrics_are_finite_and_in_range(quick_out):
    cfg = C.CreditBenchConfig.quick_config()
    rows = R.read_csv(quick_out / "credit_accuracy.csv")
    expected = {(t, p, n, s) for t in cfg.tasks for p in cfg.policies for n in cfg.group_sizes for s in C.SIGNALS}
    assert {(r["task"], r["policy"], int(r["N"]), r["signal"]) for r in rows} == expected
    for r in rows:
        for m in ("pearson", "spearman"):
            assert -1.0 <= r[m] <= 1.0, r
        for m in ("sign_acc", "rmse", "nonzero"):
            assert 0.0 <= r[m] <= 1.0, r
    by = {(r["task"], r["policy"], int(r["N"]), r["signal"]): r for r in rows}
    # the perfect-critic reference must beat a signal with no baseline at all, everywhere
    for t, p, n, s in expected:
        if s == "gae(true V)":
            assert by[(t, p, n, s)]["pearson"] > by[(t, p, n, "mc")]["pearson"]
    bias = R.read_csv(quick_out / "credit_accuracy_bias.csv")
    main = [r for r in bias if r["signal"] in C.STEP_TERMS]
    assert main and all(isinstance(r["bias"], float) and (math.isnan(r["bias"]) or r["bias"] >= 0) for r in main)
    assert sum(math.isfinite(r["bias"]) for r in main) > 0.9 * len(main)


def test_true_advantages_are_the_oracle_values_of_the_recorded_rows():
    gt = C.GroundTruth(C.TASKS["cue"], 0.95)
    spec = C.POLICIES["softQ*(T=0.3)×revisit(W=2)"]
    batch = C.collect_run(gt, spec, n=4, groups=3, seed=1, history_depth=2, instances=2)
    truth = C.true_advantages(batch, gt, spec)
    assert np.all(np.isfinite(truth.adv)) and np.allclose(truth.adv, truth.q - truth.v)
    traj = batch.traj_id == batch.traj_id[-1]
    rows = np.flatnonzero(traj)
    model = gt.model(batch.task_id[rows[0]])
    vals = gt.values(spec, batch.task_id[rows[0]])
    s = batch.state_index[rows]
    a = [model.action_index(int(si), batch.action[r]) for si, r in zip(s, rows)]
    for r, si, ai, w in zip(rows, s, a, episode_windows(s.tolist(), a, 2)):
        assert truth.adv[r] == pytest.approx(vals.advantage(int(si), ai, int(batch.t[r]), w))
    # with lam = 1 GAE telescopes to R_t - V: the oracle's V sits on the right rows
    steps = batch.steps
    gae1 = advantages("gae", C.replace(steps, value=truth.v), gamma=0.95, lam=1.0)
    assert np.allclose(gae1, step_returns(steps, 0.95) - truth.v, atol=1e-5)


def test_level_term_is_hgpo_level_alone():
    s = StepArrays.from_lists(
        group_id=[0, 0, 0, 0], traj_id=[0, 0, 1, 1], t=[0, 1, 0, 1], reward=[0.0, 1.0, 0.0, 0.0],
        done=[False, True, False, True], state_key=[5, 6, 5, 6], obs_key=[5, 6, 5, 6],
        history_keys=[[5, 0], [6, 9], [5, 0], [6, 8]],
    )
    a0, has0 = C.level_term(s, 0, gamma=1.0)
    a1, has1 = C.level_term(s, 1, gamma=1.0)
    np.testing.assert_allclose(a0, [0.5, 0.5, -0.5, -0.5])
    assert has0.all() and not has1.any() and np.all(a1 == 0)
    np.testing.assert_allclose(a0, advantages("hgpo", s, gamma=1.0, norm="mean", depth=0))


def test_product_policy_is_a_normalized_stationary_product():
    m = TabularModel(["a", "b"], [["stay", "go"], []],
                     [[[(1.0, 0, 0.0, False)], [(1.0, 1, 1.0, True)]], []], np.array([1.0, 0.0]), horizon=5)
    pol = C.ProductPolicy(UniformPolicy(), RevisitAvoidingPolicy(window=2, factor=0.25))
    assert pol.window == 2 and pol.time_invariant
    p = pol.probs(m, 0, ((0, 0),), 3)
    np.testing.assert_allclose(p, [0.25 / 1.25, 1.0 / 1.25])  # "stay" leads back to a seen state
    with pytest.raises(ValueError):
        C.ProductPolicy()


def test_bad_config_is_a_clear_error(capsys):
    assert C.main(["--quick", "--group-sizes", "1", "--no-progress"]) == 2
    assert "group sizes" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        C.main(["--tasks", "nope"])
