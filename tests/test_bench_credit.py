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
from agentgym_credit.keys import window_fingerprint


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
    for part in ("## Findings", "cpu_count", "agentgym-credit bench credit --quick", "## Bias vs A^π",
                 "aliased/cue tasks, obs-keyed: HGPO over observation history vs GiGPO on obs anchors",
                 "## Bias vs A^π over observation history"):
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
    assert {"hgpo[obs]·A^H", "hgpo_precision[obs]·A^H", "hgpo[obs]"} <= set(C.SIGNALS)
    assert {"hgpo[obs]·A^H", "hgpo_precision[obs]·A^H"} <= set(C.STEP_TERMS)
    bias = R.read_csv(quick_out / "credit_accuracy_bias.csv")
    main = [r for r in bias if r["signal"] in C.STEP_TERMS]
    assert {r["signal"] for r in main} == set(C.STEP_TERMS)
    assert main and all(isinstance(r["bias"], float) and (math.isnan(r["bias"]) or r["bias"] >= 0) for r in main)
    assert sum(math.isfinite(r["bias"]) for r in main) > 0.9 * len(main)
    levels = {r["signal"] for r in bias}
    assert {f"A_{k}[obs]" for k in range(cfg.history_depth + 1)} <= levels
    info = R.read_csv(quick_out / "credit_accuracy_info.csv")
    for r in info:
        for k in range(cfg.history_depth + 1):
            assert math.isnan(r[f"obs_mixed_{k}"]) or 0.0 <= r[f"obs_mixed_{k}"] <= 1.0
    # on the aliased task level-0 observation groups mix true states (the carried key is not shown)
    assert np.mean([r["obs_mixed_0"] for r in info if r["task"] == "aliased"]) > 0.2


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


def test_obs_history_keys_are_window_fingerprints_of_observations():
    # two trajectories, rows shuffled; obs 7 at t=0 in both, then different paths
    rows = [(0, 0, 7), (0, 1, 8), (0, 2, 9), (1, 0, 7), (1, 1, 9), (1, 2, 9)]
    perm = [4, 0, 5, 2, 1, 3]
    tr, t, o = (np.array([rows[i][j] for i in perm]) for j in range(3))
    s = StepArrays.from_lists(
        group_id=[0] * 6, traj_id=tr.tolist(), t=t.tolist(), reward=[0.0] * 6, done=(t == 2).tolist(),
        state_key=(o + 100 * tr).tolist(), obs_key=o.tolist(), history_keys=[[1, 0, 0]] * 6,
    )
    h = C.obs_history_keys(s)
    assert h.shape == (6, 3) and h.dtype == np.uint64
    for i in range(6):
        mine = o[tr == tr[i]][np.argsort(t[tr == tr[i]])]
        for k in range(3):
            want = window_fingerprint(mine[t[i] - k:t[i] + 1].tolist()) if t[i] >= k else 0
            assert int(h[i, k]) == want, (i, k)
    obs = C.obs_keyed(s)
    assert np.array_equal(obs.history_keys, h) and np.array_equal(obs.state_key, s.state_key)
    # level 0: obs 7 (two states), 9 (three rows, two states), 8 alone -> 5 grouped rows, all mixed
    assert C.mixed_share(obs, 0) == pytest.approx(1.0)
    assert C.mixed_share(C.replace(obs, state_key=obs.obs_key), 0) == 0.0  # obs = state: nothing mixed
    # level 1: (7,8), (8,9), (7,9), (9,9) are all distinct -> no group
    assert math.isnan(C.mixed_share(obs, 1))
    with pytest.raises(ValueError):
        C.obs_history_keys(s, depth=-1)


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
