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
    text = (H.Path(__file__).resolve().parents[1] / "benchmarks" / "credit_heldout.split.md").read_text()
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
