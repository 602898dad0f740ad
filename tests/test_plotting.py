"""Every series of a plot gets its own colour and marker (issue 30: benchmarks/exact/credit_accuracy_pearson.png drew
11 series with matplotlib's 10-colour cycle, so grpo and gae(true V) shared a colour)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="matplotlib (the plot extra) not installed")

from agentgym_credit.bench.stats import report as R  # noqa: E402


def _saved_figures(monkeypatch):
    from matplotlib.figure import Figure

    figs = []
    real = Figure.savefig

    def keep(self, *a, **k):
        figs.append(self)
        return real(self, *a, **k)

    monkeypatch.setattr(Figure, "savefig", keep)
    return figs


def _style(line):
    return line.get_color(), line.get_marker()


@pytest.mark.parametrize("n", [11, 25])
def test_eleven_and_more_series_differ_in_colour_and_marker(tmp_path, monkeypatch, n):
    figs = _saved_figures(monkeypatch)
    labels = [f"est{i}" for i in range(n)]
    x = np.arange(4)
    panels = {p: {lab: (x, x * i + p_i, None) for i, lab in enumerate(labels)} for p_i, p in enumerate(("a", "b"))}
    R.plot_panels(tmp_path / "p.png", panels, "N", "r")
    assert (tmp_path / "p.png").stat().st_size > 0
    (fig,) = figs
    per_panel = []
    for ax in fig.axes[:2]:
        lines = {c.get_label(): c.lines[0] for c in ax.containers}  # errorbar: (data line, caps, bars)
        assert set(lines) == set(labels)
        per_panel.append({lab: _style(ln) for lab, ln in lines.items()})
    colours = [c for c, _ in per_panel[0].values()]
    assert len(set(colours)) == n, f"{n} series, {len(set(colours))} colours"
    assert all(m not in ("", "None", None) for _, m in per_panel[0].values())
    assert per_panel[0] == per_panel[1]  # a label looks the same in every panel (one legend for the figure)


def test_series_styles_are_distinct():
    from agentgym_credit.plotting import series_styles

    for n in (1, 10, 11, 20, 21, 40):
        st = series_styles(n)
        assert len(st) == n and len({s["color"] for s in st}) == n
        assert len({(s["color"], s["marker"]) for s in st}) == n
    first = series_styles(12)
    assert first[0]["marker"] != first[10]["marker"] and first[0]["color"] != first[10]["color"]


@pytest.mark.slow  # two 20-panel figures: ~20 s at load 16 on 2 cores
def test_bench_credit_replot_redraws_a_runs_plots_from_its_csv(tmp_path, monkeypatch):
    """``bench credit --replot CSV``: the committed run's numbers, drawn again (no run)."""
    import shutil
    from pathlib import Path

    from agentgym_credit.cli import main

    csv = Path(__file__).resolve().parents[1] / "benchmarks" / "exact" / "credit_accuracy.csv"
    shutil.copy(csv, tmp_path / "credit_accuracy.csv")
    figs = _saved_figures(monkeypatch)
    assert main(["bench", "credit", "--replot", str(tmp_path / "credit_accuracy.csv")]) == 0
    assert (tmp_path / "credit_accuracy_pearson.png").exists() and (tmp_path / "credit_accuracy_sign_acc.png").exists()
    ax = figs[0].axes[0]  # a dot plot: a row per estimator README ranks, a colour per group size N
    assert {"grpo", "gigpo[state]", "hgpo", "graph", "graphgpo"} <= {t.get_text() for t in ax.get_yticklabels()}
    assert len({c.lines[0].get_color() for c in ax.containers}) == 4
    assert main(["bench", "credit", "--replot", str(tmp_path / "missing.csv")]) == 2


def test_dot_plot_draws_every_row_and_refuses_nothing(tmp_path):
    from agentgym_credit.plotting import plot_dots

    panels = {"cue / uniform": {"grpo": {"N=2": (0.2, 0.05), "N=4": (0.25, None)}, "graph": {"N=2": (0.8, 0.1)}},
              "grid / uniform": {"graph": {"N=4": (0.6, 0.02)}}}
    path = plot_dots(tmp_path / "d" / "dots.png", panels, "Pearson r", ncols=2, suptitle="t", legend_title="N")
    assert path.is_file() and path.stat().st_size > 1000
    with pytest.raises(ValueError, match="nothing to plot"):
        plot_dots(tmp_path / "e.png", {}, "x")
