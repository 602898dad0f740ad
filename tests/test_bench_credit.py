"""``bench credit``: the --quick run end to end, and the pieces it is built from."""

import math
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from agentgym_credit.bench.exact import credit as C
from agentgym_credit.bench.exact import credit_findings as F
from agentgym_credit.bench.stats import metrics as M
from agentgym_credit.bench.stats import report as R
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


# the --quick run (every task, policy and estimator) takes ~3 min at load 10 on 2 cores: with the slow tests; the
# fast suite runs the same command end to end on a tiny grid (test_the_main_job_from_a_copy_of_the_root...)
@pytest.mark.slow
def test_quick_run_writes_every_output(quick_out):
    for name in ("credit_accuracy.md", "credit_accuracy.csv", "credit_accuracy_runs.csv", "credit_accuracy_bias.csv",
                 "credit_accuracy_info.csv", "credit_accuracy_pearson.png", "credit_accuracy_sign_acc.png"):
        assert (quick_out / name).stat().st_size > 0, name
    assert (quick_out / "credit_accuracy_pearson.png").read_bytes()[:4] == b"\x89PNG"
    md = (quick_out / "credit_accuracy.md").read_text()
    for part in ("## Findings", "cpu_count", "agentgym-credit bench credit --quick", "## Bias vs A^π",
                 "aliased/cue tasks, obs-keyed: HGPO over observation history vs GiGPO on obs anchors",
                 "## Bias vs A^π over observation history", "ties", "Perfect critics", "td0(true V)"):
        assert part in md
    # summaries are calibrated and tallies corrected (issue 21): predictions checked, calibration reported
    for part in ("## Summary", "Holm", "Calibration of the pooled bias interval", "Leave own return out",
                 'step_norm "mean" vs "mean_std"'):
        assert part in md
    assert md.count("**held**") + md.count("**failed**") + md.count("not checked") >= 6
    assert "ceiling" not in md.lower()


@pytest.mark.slow
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
    # the perfect-critic references must beat a signal with no baseline at all, everywhere; with
    # deterministic transitions TD(0) on the exact V^π is A^π itself
    for t, p, n, s in expected:
        if s == "gae(true V)":
            assert by[(t, p, n, s)]["pearson"] > by[(t, p, n, "mc")]["pearson"]
        if s == "td0(true V)":
            assert by[(t, p, n, s)]["pearson"] > 0.999
    assert {"hgpo[obs]·A^H", "hgpo_precision[obs]·A^H", "hgpo[obs]"} <= set(C.SIGNALS)
    assert {"hgpo[obs]·A^H", "hgpo_precision[obs]·A^H"} <= set(C.STEP_TERMS)
    bias = R.read_csv(quick_out / "credit_accuracy_bias.csv")
    main = [r for r in bias if r["signal"] in C.STEP_TERMS]
    assert {r["signal"] for r in main} == set(C.STEP_TERMS)
    assert main and all(isinstance(r["bias"], float) and (math.isnan(r["bias"]) or r["bias"] >= 0) for r in main)
    assert sum(math.isfinite(r["bias"]) for r in main) > 0.9 * len(main)
    assert sum(math.isfinite(r["bias_ci"]) and r["bias_ci"] > 0 for r in main) > 0.9 * len(main)
    pairs = R.read_csv(quick_out / "credit_accuracy_bias_pairs.csv")
    assert {(r["a"], r["b"]) for r in pairs} == set(C.BIAS_PAIRS)
    assert {r["verdict"] for r in pairs} <= {"win", "loss", "tie"}
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
    gae1 = advantages("gae", replace(steps, value=truth.v), gamma=0.95, lam=1.0)
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
    assert C.mixed_share(replace(obs, state_key=obs.obs_key), 0) == 0.0  # obs = state: nothing mixed
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


def test_bias_of_an_unbiased_estimator_on_the_benchmark_grouping_is_zero_within_its_interval():
    # the rows, rollout groups and cells of a real run; an estimator unbiased by construction whose
    # rows share their group's noise, as rows sharing a group baseline do
    gt = C.GroundTruth(C.TASKS["grid"], 0.95)
    spec = C.POLICIES["uniform"]
    cell_ids: dict = {}
    parts = []
    for seed in range(2):
        batch = C.collect_run(gt, spec, n=4, groups=8, seed=seed, history_depth=1, instances=2)
        truth = C.true_advantages(batch, gt, spec, cell_ids)
        parts.append((truth.adv, truth.cell, seed * 1000 + batch.steps.group_id))
    true, cells, groups = (np.concatenate(x) for x in zip(*parts))
    assert len(np.unique(cells)) < len(cells)  # cells repeat, across groups and seeds
    rng = np.random.default_rng(0)
    _, g = np.unique(groups, return_inverse=True)
    b2, naive, covered = [], [], []
    for _ in range(60):
        est = true + rng.normal(0, 0.5, g.max() + 1)[g] + rng.normal(0, 0.2, len(true))
        b2.append(M.bias_squared(est, true, groups, cells)[0])
        naive.append(M.bias_squared(est, true, np.arange(len(est)), cells)[0])  # rows as independent (old metric)
        bias, half = M.cluster_robust_bias(est, true, groups, cells)
        covered.append(bias - half <= 0)

    def unbiased_for_zero(x):
        return abs(np.mean(x)) < 3 * np.std(x) / math.sqrt(len(x))

    assert unbiased_for_zero(b2) and np.mean(covered) >= 0.9
    assert not unbiased_for_zero(naive) and np.mean(naive) > 0  # the old metric finds a bias that is not there


def test_equal_signals_are_ties_in_every_cell():
    cfg = C.CreditBenchConfig(tasks=("grid",), policies=("uniform",), group_sizes=(2, 4), seeds=3)
    rng = np.random.default_rng(0)
    res = C.BenchResult()
    for n in cfg.group_sizes:
        for seed in range(cfg.seeds):
            m = {"pearson": rng.uniform(), "spearman": 0.1, "sign_acc": 0.5, "rmse": 0.9, "nonzero": 1.0}
            for sig in ("a", "b"):
                res.runs.append({"task": "grid", "policy": "uniform", "N": n, "seed": seed, "signal": sig, **m})
    ev = F.Evidence.from_result(cfg, res)
    tl = F.tally(ev, ev.cells(["grid"]), "a", "b")
    assert (tl.wins, tl.losses, tl.ties) == (0, 0, 2) and "every cell a tie" in tl.verdict()
    # a consistent margin over seeds is a win; the same margin with one seed is a tie (no interval)
    for r in res.runs:
        if r["signal"] == "a":
            r["pearson"] += 0.2
    ev = F.Evidence.from_result(cfg, res)
    assert F.tally(ev, ev.cells(["grid"]), "a", "b").wins == 2
    one = C.BenchResult(runs=[r for r in res.runs if r["seed"] == 0])
    ev = F.Evidence.from_result(cfg, one)
    assert F.tally(ev, ev.cells(["grid"]), "a", "b").ties == 2


def test_report_without_matplotlib_is_written_and_plots_are_skipped(tmp_path, monkeypatch, capsys):
    cfg = C.CreditBenchConfig(tasks=("cue",), policies=("uniform",), group_sizes=(2,), seeds=2, trajectories=8,
                              instances=1, history_depth=1, out=tmp_path, progress=False)
    res = C.run_benchmark(cfg)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    paths = C.write_report(cfg, res)
    assert (tmp_path / "credit_accuracy.md").stat().st_size > 0 and "markdown" in paths
    assert not list(tmp_path.glob("*.png"))
    assert "plots skipped" in capsys.readouterr().err


def _copy_of_the_root(tmp_path: Path) -> Path:
    """A checkout as a new user has it: the package, pyproject.toml and an (empty) benchmarks/exact/."""
    src = Path(__file__).resolve().parents[1]
    root = tmp_path / "clone"
    shutil.copytree(src / "agentgym_credit", root / "agentgym_credit",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(src / "pyproject.toml", root / "pyproject.toml")
    (root / "benchmarks" / "exact").mkdir(parents=True)
    return root


def _bench_credit(root: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root), "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "agentgym_credit.cli", "bench", "credit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_main_job_from_a_copy_of_the_root_writes_where_readme_says_and_quick_never_overwrites(tmp_path):
    root = _copy_of_the_root(tmp_path)
    tiny = ["--tasks", "cue", "--policies", "uniform", "--group-sizes", "2", "--seeds", "2", "--trajectories", "8",
            "--instances", "1", "--no-progress"]
    out = _bench_credit(root, root, *tiny)  # README's command 1, run from the root of the checkout
    assert out.returncode == 0, out.stderr[-2000:]
    assert (root / "benchmarks" / "exact" / "credit_accuracy.md").is_file(), out.stdout[-1000:]
    assert not (root / "agc-bench").exists()
    out = _bench_credit(root, root, "--quick", "--out", "benchmarks/exact", *tiny)
    assert out.returncode == 2 and "committed" in out.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = _bench_credit(root, elsewhere, *tiny)  # any other folder: ./agc-bench/
    assert out.returncode == 0 and (elsewhere / "agc-bench" / "credit_accuracy.md").is_file(), out.stderr[-2000:]


def test_the_plots_and_the_summary_show_every_estimator_readme_ranks_graph_included(tmp_path, monkeypatch):
    import io

    import agentgym_credit.plotting as P

    cfg = C.CreditBenchConfig(tasks=("cue",), policies=("uniform",), group_sizes=(2, 4), seeds=2, trajectories=8,
                              instances=1, history_depth=1, out=tmp_path, progress=False)
    res = C.run_benchmark(cfg)
    drawn: dict[str, dict] = {}
    monkeypatch.setattr(P, "plot_dots", lambda path, panels, *a, **k: drawn.setdefault(Path(path).name, panels))
    C._draw_plots(cfg, {(r["task"], r["policy"], r["N"], r["signal"]): r for r in C.summarize(res.runs)}, tmp_path)
    panel = drawn["credit_accuracy_pearson.png"]["cue / uniform"]
    assert {"grpo", "gigpo[state]", "hgpo", "graph"} <= set(panel) and set(panel["graph"]) == {"N=2", "N=4"}
    assert "td0(true V)" not in panel  # the r = 1 reference no longer squashes the estimators
    out = io.StringIO()
    C.print_summary(cfg, res, file=out)
    header = out.getvalue().splitlines()[1]
    assert [c.strip() for c in header.strip("|").split("|")][:4] == ["task", "N", "grpo", "gigpo[state]"]
    assert " graph " in header and " hgpo " in header, header
