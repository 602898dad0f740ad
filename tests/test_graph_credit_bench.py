"""``bench graph_credit`` runs end to end on a tiny configuration and writes its report (no timing asserts)."""

from __future__ import annotations

from agentgym_credit.bench.exact.graph_credit import COMPARISONS, SIGNALS, main
from agentgym_credit.cli import BENCH_NAMES


def test_graph_credit_writes_its_report(tmp_path):
    out = tmp_path / "g.md"
    pred = tmp_path / "p.md"
    pred.write_text("## Predictions\n\n1. graph beats GiGPO.")
    assert main(["--split", "signals", "--tasks", "grid", "graded", "--policies", "uniform", "--group-sizes", "2",
                 "--seeds", "2", "--trajectories", "4", "--instances", "1", "--predictions", str(pred), "--out", str(out)]) == 0
    text = out.read_text()
    assert text.index("## Predictions") < text.index(
        "Command: `python -m agentgym_credit.bench.exact.graph_credit --split signals")
    for name in SIGNALS:
        assert f"| {name} |" in text or f" {name} |" in text
    for a, b in COMPARISONS:
        assert f"| {a} vs {b} |" in text
    assert "### graded" in text and "graph_credit" in BENCH_NAMES


def test_the_default_split_is_the_held_out_run_and_tuning_families_are_refused_there(tmp_path):
    import pytest

    with pytest.raises(SystemExit):  # held-out mode: a tuning family is not a held-out family
        main(["--families", "grid", "--out", str(tmp_path / "x.md")])


def test_findings_are_appended_and_re_rendered_without_a_rerun(tmp_path):
    out, found = tmp_path / "g.md", tmp_path / "f.md"
    found.write_text("## Findings\n\nxyzzy-one")
    assert main(["--split", "signals", "--tasks", "grid", "--policies", "uniform", "--group-sizes", "2", "--seeds", "2",
                 "--trajectories", "4", "--instances", "1", "--findings", str(found), "--out", str(out)]) == 0
    tables = out.read_text().split("## Findings")[0]
    assert out.read_text().rstrip().endswith("xyzzy-one")
    found.write_text("## Findings\n\nsecond")
    assert main(["--split", "signals", "--from-md", str(out), "--findings", str(found), "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith(tables.rstrip()) and text.rstrip().endswith("second") and "xyzzy-one" not in text


def test_the_signals_header_states_graphs_current_defaults(tmp_path):
    """The header said "shrink 1" after the defaults moved (issue 29, then 41): it now reads them off ``graph``."""
    import inspect

    from agentgym_credit.credit.graph import graph

    out = tmp_path / "g.md"
    assert main(["--split", "signals", "--tasks", "grid", "--policies", "uniform", "--group-sizes", "2", "--seeds", "2",
                 "--trajectories", "4", "--instances", "1", "--out", str(out)]) == 0
    text = out.read_text()
    params = inspect.signature(graph).parameters
    for k in ("shrink", "terminal", "tail"):
        assert f"{k} {params[k].default!r}" in text
    assert "(shrink 1)" not in text and not list(tmp_path.glob("*.tmp"))
