"""README's two set-up commands, and the benchmarks guide's generated blocks that match the reports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentgym_credit.bench.stats.readme import extract_sections, lead_points, main, update

ROOT = Path(__file__).resolve().parents[1]


def test_benchmarks_guide_generated_blocks_match_the_benchmark_reports():
    guide = ROOT / "docs" / "benchmarks.md"
    assert main(["--readme", str(guide), "--bench-dir", str(ROOT / "benchmarks"), "--check"]) == 0
    assert "](../benchmarks/" in guide.read_text()  # links and images resolve from docs/


def test_lead_points_keep_the_first_sentence_of_each_finding():
    section = ("## Findings\n\n- **A vs B (grid; N = 4. or 8):** A wins in 3 of 4 cells. More detail here.\n"
               "  - sub point\n- plain point; with a clause\n")
    assert lead_points(section) == ["- **A vs B (grid; N = 4. or 8):** A wins in 3 of 4 cells. …",
                                    "- plain point; with a clause"]
    assert len(lead_points("\n".join(f"- p{i}" for i in range(20)))) == 6


def test_update_rewrites_only_the_marked_block_and_fixes_image_links(tmp_path):
    for room in ("exact", "learning"):
        (tmp_path / room).mkdir()
    (tmp_path / "exact" / "credit_accuracy.md").write_text("# R\n\n## Findings\n\n- a\n\n![p](p.png)\n\n## Other\n\nx\n")
    (tmp_path / "learning" / "training.md").write_text(
        "# T\n\n## Setup\n\ns\n\n## Findings\n\n- f\n\n## Steps to target and final success\n\n| a |\n")
    (tmp_path / "learning" / "training_graph_obs.md").write_text("# O\n\n## Summary\n\n- obs run\n\n## Findings\n\n- g\n")
    readme = ("intro\n<!-- generated:credit_accuracy -->\nold\n<!-- /generated:credit_accuracy -->\nmid\n"
              "<!-- generated:training -->\n<!-- /generated:training -->\n"
              "<!-- generated:training_graph_obs -->\n<!-- /generated:training_graph_obs -->\nend\n")
    out = update(readme, tmp_path)
    assert out.startswith("intro\n") and "\nmid\n" in out and out.endswith("end\n")
    assert "old" not in out and "- a" in out and "\nx\n" not in out.split("mid")[0]
    assert "- f" in out and "| a |" not in out and "\ns\n" not in out  # a summary: tables stay in the report
    assert "(benchmarks/learning/training.md)" in out and "- obs run" in out
    assert update(out, tmp_path) == out  # idempotent
    (tmp_path / "learning" / "training.md").write_text("# T\n\n## Summary\n\nShort. ![p](p.png)\n\n## Findings\n\n- f\n")
    out = update(readme, tmp_path)
    assert "Short. ![p](benchmarks/learning/p.png)" in out and "- f" not in out.split("mid")[1]
    with pytest.raises(KeyError, match="no section"):
        extract_sections("## Findings\n", ["Nope"])
    with pytest.raises(KeyError, match="block"):
        update("no markers", tmp_path)


def test_readme_has_exactly_two_setup_commands_and_ci_runs_the_test_one():
    text = (ROOT / "README.md").read_text()
    setup = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"(?m)^(bash scripts/install\.sh && .+)$", setup)
    assert len(commands) == 2, commands
    test_cmd = commands[1].split("&& ", 1)[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bash scripts/install.sh" in ci and test_cmd in ci


def test_readme_runs_the_fast_suite_and_ci_runs_the_slow_tests_too():
    """``python -m pytest -q`` leaves out the tests marked slow (pyproject's addopts); CI runs README's command and
    then ``-m slow``, going on to the slow tests when the fast ones fail and failing if either did."""
    import tomllib
    opts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "-m 'not slow'" in opts["addopts"], opts["addopts"]
    assert any(m.startswith("slow:") for m in opts["markers"]), opts["markers"]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "python -m pytest -q || status=$?" in ci and "python -m pytest -q -m slow || status=$?" in ci, ci
    assert ci.index("python -m pytest -q -m slow || status=$?") > ci.index("python -m pytest -q || status=$?")
    assert ci[-1] == 'exit "$status"', ci[-1]
