"""The held-out credit benchmark (issue 29): the split, the rule that picks defaults on tuning cells, the
statistics' null case and known effect, and one small real run end to end."""

from __future__ import annotations

from collections import defaultdict
from itertools import product

import numpy as np
import pytest

from agentgym_credit.bench.exact import graph_tuning as G
from agentgym_credit.bench.exact import heldout as H


def test_the_split_is_disjoint_and_matches_the_committed_split_file():
    assert not set(H.TUNING) & set(H.HELD_OUT)
    assert set(H.TUNING) >= {"grid", "aliased", "cue", "household", "graded"}
    text = (H.Path(__file__).resolve().parents[1] / "benchmarks" / "exact" / "credit_heldout.split.md").read_text()
    tuning_part, held_part = text.split("## Held-out families")
    for name, spec in H.TUNING.items():
        assert f"| {name} | `{spec.env_id}`" in tuning_part
    for name, spec in H.HELD_OUT.items():
        assert f"| {name} | `{spec.env_id}` |" in held_part


def _fake(values: dict[str, list[float]], cells) -> dict:
    res: dict = defaultdict(lambda: defaultdict(list))
    for c, (name, per_cell) in ((c, item) for c in cells for item in values.items()):
        res[(*c, name)]["pearson"] = list(per_cell[cells.index(c)])
        res[(*c, name)]["sign_acc"] = list(per_cell[cells.index(c)])
    return res


def _fake_grid(per_setting, kurt_of, cells):
    """Fake tuning rows: every candidate's Pearson per cell from ``per_setting(shrink, terminal, tail, obs)``
    (obs None for state_key) and its kurtosis from ``kurt_of``; GiGPO's kurtosis 5 everywhere."""
    vals, kurt = {}, {}
    for s, t, tl in product(G.SHRINKS, G.TERMINALS, H.TAILS):
        vals[H.candidate_name(s, t, tl)] = per_setting(s, t, tl, None)
        kurt[H.candidate_name(s, t, tl)] = kurt_of(s, t, tl)
        for ob in G.OBS_OPTIONS:
            vals[H.candidate_name(s, t, tl, ob)] = per_setting(s, t, tl, ob)
            kurt[H.candidate_name(s, t, tl, ob)] = kurt_of(s, t, tl)
    res = _fake({k: [[x] * 3 for x in v] for k, v in vals.items()}, cells)
    for c in cells:
        for k, ku in kurt.items():
            res[(*c, k)]["kurt"] = [ku] * 3
        for g in ("gigpo[state]", "gigpo[obs]"):
            res[(*c, g)]["kurt"] = [5.0] * 3
    return res


def test_choose_defaults_minimises_the_worst_regret_not_the_mean():
    cells = [("a", "uniform", 2), ("b", "uniform", 2)]

    def per(s, t, tl, ob):
        # shrink 1: best mean (great on a, poor on b); shrink 0.5: never far from the best; none/none best on obs
        base = {1.0: [0.9, 0.3], 0.5: [0.7, 0.6]}.get(s, [0.2, 0.2])
        bonus = (0.1 if ob == ("none", "none") else 0.0) - 0.05 * (1 - t) - (0.0 if tl == "none" else 0.01)
        return [x + bonus for x in base]

    choice, table = H.choose_defaults(_fake_grid(per, lambda s, t, tl: 6.0, cells), cells, guard=None)
    assert (choice["shrink"], choice["terminal"], choice["tail"], choice["obs"]) == (0.5, 1.0, "none", ("none", "none"))
    assert choice["worst_regret"] == pytest.approx(0.2) and choice["admissible"]
    assert table[0][:4] == (0.5, 1.0, "none", ("none", "none"))


def test_choose_defaults_picks_only_among_levels_the_learning_guard_admits():
    cells = [("a", "uniform", 2), ("b", "uniform", 2)]

    def per(s, t, tl, ob):  # rank with none/none is the most accurate; the guard admits neither
        return [0.9, 0.9] if (tl == "rank" and ob == ("none", "none")) else [0.6 + 0.1 * (s == 0.25), 0.6]

    res = _fake_grid(per, lambda s, t, tl: 6.0, cells)
    free, _ = H.choose_defaults(res, cells, guard=None)
    assert free["tail"] == "rank" and free["obs"] == ("none", "none")
    guarded, table = H.choose_defaults(res, cells)  # the default guard: LEARNING_GUARD
    assert guarded["tail"] in H.LEARNING_GUARD["tail"] and guarded["obs"] in H.LEARNING_GUARD["obs"]
    assert guarded["shrink"] == 0.25 and guarded["admissible"]
    assert all(r[8] == all(v in H.LEARNING_GUARD[k] for k, v in zip(("shrink", "terminal", "tail", "obs"), r[:4]))
               for r in table)


def test_choose_defaults_excludes_heavy_tailed_settings_first():
    cells = [("a", "uniform", 2), ("b", "uniform", 2)]

    def per(s, t, tl, ob):  # tail "none" is the most accurate everywhere ...
        return [0.8, 0.8] if tl == "none" else [0.7, 0.7] if tl == "clip2" else [0.5, 0.5]

    # ... but its kurtosis (30) is above 2 x GiGPO's (5): the admissible clip2 (kurtosis 8) wins
    choice, table = H.choose_defaults(_fake_grid(per, lambda s, t, tl: 30.0 if tl == "none" else 8.0, cells), cells,
                                      guard=None, kurtosis_factor=2.0)
    assert choice["tail"] == "clip2" and choice["admissible"]
    assert choice["limits"] == (10.0, 10.0) and all(not r[8] for r in table if r[2] == "none")
    # nothing admissible: the plain rule over every setting (and it says so)
    choice, _ = H.choose_defaults(_fake_grid(per, lambda s, t, tl: 30.0, cells), cells, guard=None, kurtosis_factor=2.0)
    assert choice["tail"] == "none" and not choice["admissible"]


def test_kurtosis_by_hand():
    assert H.kurtosis(np.array([1.0, -1.0, 1.0, -1.0])) == pytest.approx(1.0)
    assert H.kurtosis(np.array([0.0, 0.0, 0.0, 2.0])) == pytest.approx((0.5 ** 4 * 3 + 1.5 ** 4) / 4 / 0.75 ** 2)
    assert np.isnan(H.kurtosis(np.zeros(5)))


def test_null_case_ties_and_known_effect_wins_on_synthetic_seeds():
    rng = np.random.default_rng(0)
    cells = [(f"f{i}", "uniform", 4) for i in range(8)]
    a = [list(0.7 + 0.02 * rng.standard_normal(6)) for _ in cells]
    b = [list(0.7 + 0.02 * rng.standard_normal(6)) for _ in cells]
    c = [list(0.45 + 0.02 * rng.standard_normal(6)) for _ in cells]
    res = _fake({"x": a, "y": b, "z": c}, cells)
    null = H.compare(res, cells, "x", "y")
    known = H.compare(res, cells, "x", "z")
    assert null["wins"] == null["losses"] == 0
    assert known["wins"] == len(cells) and known["mean"] == pytest.approx(0.25, abs=0.02)


def test_a_small_real_run_scores_every_signal_and_rerenders_from_its_rows(tmp_path):
    out = tmp_path / "gc.md"
    argv = ["--split", "heldout", "--families", "keycorridor", "--policies", "uniform", "--group-sizes", "4",
            "--seeds", "2", "--trajectories", "16", "--out", str(out)]
    assert H.main(argv) == 0
    text = out.read_text()
    assert "## Headline: held-out cells" in text and "truth+noise − truth+noise'" in text
    rows = H.load_rows(out.with_suffix(".csv"))
    cell = ("keycorridor", "uniform", 4)
    for name in list(H.JUDGED) + list(H.REFERENCE):
        assert len(rows[(*cell, name)]["pearson"]) == 2
    # the noisy copies of the exact A^π correlate with it as theory says (1/sqrt(2) and 1/sqrt(5))
    assert np.mean(rows[(*cell, "truth+noise")]["pearson"]) == pytest.approx(0.71, abs=0.12)
    assert np.mean(rows[(*cell, "truth+2noise")]["pearson"]) == pytest.approx(0.45, abs=0.12)
    again = tmp_path / "again.md"
    assert H.main(argv[:-2] + ["--from-csv", str(out.with_suffix(".csv")), "--out", str(again)]) == 0
    assert again.read_text().replace("again.png", "gc.png").split("## Headline")[1] == text.split("## Headline")[1]
    assert out.with_suffix(".png").exists()
    found = tmp_path / "f.md"
    for word in ("first", "second"):  # findings appended to the report, replaced without a rerun
        found.write_text(f"## Findings\n\n{word}")
        assert H.main(["--from-md", str(out), "--findings", str(found)]) == 0
    assert out.read_text().startswith(text.rstrip()) and out.read_text().rstrip().endswith("second")
    assert "first" not in out.read_text().split("## Findings")[1]


def test_unknown_family_for_a_split_is_refused():
    with pytest.raises(SystemExit):
        H.main(["--split", "heldout", "--families", "grid"])


def test_graphs_defaults_are_the_ones_the_tuning_report_chose():
    """The defaults of ``graph`` are issue 41's tuning run's choice (benchmarks/exact/graph_credit_tuning.md)."""
    import inspect
    import re

    from agentgym_credit.credit.graph import OBS_LOOPS, auto_alias, graph

    text = (H.Path(__file__).resolve().parents[1] / H.TUNING_REPORT).read_text()
    m = re.search(r"Chosen: `shrink=([0-9.]+|auto), terminal=([0-9.]+), tail=(\w+); obs_key loops=(\w+), "
                  r"alias=(\w+)`", text)
    assert m, "the tuning report states its choice"
    params = inspect.signature(graph).parameters
    shrink = m.group(1) if m.group(1) == "auto" else float(m.group(1))
    assert params["shrink"].default == shrink
    assert params["terminal"].default == float(m.group(2))
    how, k = H.TAILS[m.group(3)]
    assert params["tail"].default == how and params["tail_k"].default == k
    assert params["loops"].default == "auto" and OBS_LOOPS == m.group(4)
    assert params["alias"].default == "auto" and auto_alias("auto", "obs_key") == m.group(5)
    assert params["lam"].default == 0.0


ISSUE29_OBS = {"key": "obs_key", "loops": "events", "alias": "fallback", "shrink": 0.5, "terminal": 1.0,
               "tail": "none", "tail_k": 3.0}


def _guard_train(task, opts, seeds):
    """A fake tabular run: alias "none" collapses household-small; loops "none" costs AliasedGrid 0.07 at shrink 0.5
    only (so it fails the registered guard and passes on top of today's defaults)."""
    x = 0.1 if (task == "household-small" and opts["alias"] == "none") else 1.0
    if task == "aliased" and opts["loops"] == "none" and opts["shrink"] == 0.5:
        x -= 0.07
    return [x] * seeds


def test_obs_guard_admits_levels_from_the_issue29_base_and_judges_the_pick_whole():
    rows = G.obs_guard(3, train=_guard_train, issue29=ISSUE29_OBS)
    assert [(r["base"], r["obs"]) for r in rows][:2] == [("issue-29 defaults", ("events", "fallback")),
                                                          ("issue-29 defaults", ("none", "fallback"))]
    assert len(rows) == 2 * len(G.OBS_OPTIONS)
    assert G.admitted_obs(rows) == (("events", "fallback"), ("split", "fallback"))
    today = {r["obs"]: r["pass"] for r in rows if r["base"] == "today's defaults"}
    assert today == {("events", "fallback"): True, ("none", "fallback"): True, ("split", "fallback"): True,
                     ("events", "none"): False, ("none", "none"): False}
    # today's defaults trained whole are judged against the issue-29 reference, not against themselves
    worse = G.obs_guard(2, train=lambda t, o, s: [0.5 if o["shrink"] != 0.5 else 1.0] * s, issue29=ISSUE29_OBS)
    own = next(r for r in worse if r["base"] == "today's defaults")
    assert own["obs"] == (G.current_obs_defaults()["loops"], G.current_obs_defaults()["alias"]) and not own["pass"]


def test_tuning_report_chooses_with_the_guard_rerun_and_replays_it_from_its_csv(tmp_path, monkeypatch):
    from agentgym_credit.bench.learning import graph_guard

    assert graph_guard.ISSUE29 == ISSUE29_OBS
    cells = [("grid", "uniform", 2), ("aliased", "uniform", 2)]

    def per(s, t, tl, ob):  # loops "none" is the most accurate obs option; only a guard that admits it picks it
        return [0.6 + 0.1 * (s == 0.25) + 0.2 * (ob == ("none", "fallback")), 0.6]

    csv = tmp_path / "tune.csv.gz"
    res = _fake_grid(per, lambda s, t, tl: 6.0, cells)
    for c in cells:
        res[(*c, "rows")]["n"] = [10, 10, 10]
        for name in list(H.JUDGED) + list(H.REFERENCE):
            res[(*c, name)] |= {"pearson": [0.5] * 3, "sign_acc": [0.5] * 3, "kurt": [3.0] * 3}
    H.save_rows(res, csv)
    argv = ["--split", "tuning", "--families", "grid", "aliased", "--policies", "uniform", "--group-sizes", "2",
            "--seeds", "3", "--from-csv", str(csv)]
    assert H.main(argv + ["--out", str(tmp_path / "plain.md")]) == 0
    assert "obs_key loops=events, alias=fallback`" in (tmp_path / "plain.md").read_text()
    calls = []
    monkeypatch.setattr(graph_guard, "final_success", lambda t, o, s: calls.append(t) or [1.0] * s)
    assert H.main(argv + ["--guard", "--out", str(tmp_path / "guarded.md")]) == 0  # every obs level passes
    text = (tmp_path / "guarded.md").read_text()
    assert "obs_key loops=none, alias=fallback`" in text and "## The learning guard of the obs-key options" in text
    assert len(calls) == 2 * 2 * len(G.OBS_OPTIONS) and (tmp_path / "tune_guard.csv").exists()
    monkeypatch.setattr(graph_guard, "final_success", lambda t, o, s: pytest.fail("replayed, not rerun"))
    assert H.main(argv + ["--out", str(tmp_path / "again.md")]) == 0
    assert (tmp_path / "again.md").read_text().split("## The choice")[1] == text.split("## The choice")[1]


def test_the_committed_guard_rerun_admits_exactly_the_obs_levels_the_rule_uses():
    """LEARNING_GUARD's obs levels are the ones the committed guard rerun admits (events/fallback, split/fallback);
    every alias="none" level fails it, on both bases (benchmarks/exact/graph_credit_tuning.findings.md)."""
    from types import SimpleNamespace

    root = H.Path(__file__).resolve().parents[1]
    csv = root / "benchmarks" / "exact" / "graph_credit_tuning.csv.gz"
    rows = H.guard_rows(SimpleNamespace(from_csv=str(csv), guard=False, guard_seeds=3), csv)
    assert rows is not None and G.admitted_obs(rows) == H.LEARNING_GUARD["obs"]
    assert not any(r["pass"] for r in rows if r["obs"][1] == "none")
    assert all(r["pass"] for r in rows if r["obs"] == (G.current_obs_defaults()["loops"], G.current_obs_defaults()["alias"]))
