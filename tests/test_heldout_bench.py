"""The held-out credit benchmark (issue 29): the split, the rule that picks defaults on tuning cells, the
statistics' null case and known effect, and one small real run end to end."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

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


def test_choose_defaults_minimises_the_worst_regret_not_the_mean():
    cells = [("a", "uniform", 2), ("b", "uniform", 2)]
    vals = {}
    for s in H.SHRINKS:
        for lam in H.LAMS:
            # shrink 1: best mean (great on a, poor on b); shrink 0.5: never far from the best
            per = {1.0: [0.9, 0.3], 0.5: [0.7, 0.6]}.get(s, [0.2, 0.2])
            per = [x - 0.05 * lam for x in per]
            vals[H.candidate_name(s, lam)] = [[x] * 3 for x in per]
            for lp in H.LOOPS:
                bonus = 0.1 if lp == "none" else 0.0
                vals[H.candidate_name(s, lam, lp)] = [[x + bonus] * 3 for x in per]
    choice, table = H.choose_defaults(_fake(vals, cells), cells)
    assert (choice["shrink"], choice["lam"], choice["loops"]) == (0.5, 0.0, "none")
    assert choice["worst_regret"] == pytest.approx(0.2)
    assert table[0][:3] == (0.5, 0.0, "none")


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
    """The defaults of ``graph`` are the tuning run's choice (benchmarks/exact/credit_tuning.md), not the values
    it was built with (shrink 1 had a worst tuning-cell regret of 0.34 against 0.22 for the choice)."""
    import inspect
    import re

    from agentgym_credit.credit.graph import auto_loops, graph

    text = (H.Path(__file__).resolve().parents[1] / "benchmarks" / "exact" / "credit_tuning.md").read_text()
    m = re.search(r"Chosen: `shrink=([0-9.]+|auto)`, `lam=([0-9.]+)`, obs_key `loops='(\w+)'`", text)
    assert m, "the tuning report states its choice"
    params = inspect.signature(graph).parameters
    shrink = m.group(1) if m.group(1) == "auto" else float(m.group(1))
    assert params["shrink"].default == shrink
    assert params["lam"].default == float(m.group(2))
    assert params["loops"].default == "auto" and auto_loops("auto", "obs_key") == m.group(3)
