"""Matplotlib helpers shared by the benchmarks and the trainer (below both in the data flow).

- :data:`Line`: one plotted line, ``(x, y, yerr or None)``;
- :func:`pyplot`: ``matplotlib.pyplot`` on the Agg backend (no display needed), or
  :class:`~agentgym_credit.errors.DependencyNotInstalled` naming the ``plot`` extra;
- :func:`series_styles`: a colour and a marker for each of ``n`` series, no two alike (up to
  :data:`PALETTE`'s 20 colours; beyond, evenly spaced hues);
- :func:`panel_figure` / :func:`plot_panels`: a grid of line plots (one panel per title, one line per label,
  optional error bars; a label keeps its colour and marker in every panel), as a figure / saved as a PNG;
- :func:`plot_dots`: a grid of dot plots (one panel per title, one row per item, a dot with its interval per
  series), for comparing many items at a glance where lines would crowd;
- :func:`try_plot_panels`: the same, but a missing matplotlib only prints a message and returns
  ``None`` — so a run never loses its other outputs (tables, CSV, checkpoints) to a missing plot.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentgym_credit.errors import DependencyNotInstalled

Line = tuple[Sequence[float], Sequence[float], Sequence[float] | None]
"""One plotted line: ``(x, y, yerr or None)``."""


def pyplot() -> Any:
    """``matplotlib.pyplot`` with the Agg backend; ``DependencyNotInstalled`` without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        raise DependencyNotInstalled("matplotlib", "plot") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


PALETTE: tuple[str, ...] = (
    # matplotlib's tab10, then ten more chosen to stand apart from it and from each other
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#000000", "#000080", "#800000", "#008080", "#ffd700", "#00ff7f", "#ff00ff", "#4b0082", "#a0522d", "#6b8e23",
)
"""Series colours in order: 20, all different."""

MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
"""Series markers, cycled (12)."""


def series_styles(n: int) -> list[dict[str, str]]:
    """``n`` styles ``{"color": ..., "marker": ...}``: distinct colours for every series (the palette, then
    evenly spaced hues beyond 20) and a marker each, so no two series look alike even in greyscale."""
    import colorsys

    colors = list(PALETTE[:n])
    extra = n - len(colors)
    for i in range(extra):
        r, g, b = colorsys.hsv_to_rgb((i + 0.5) / extra, 0.75, 0.55 + 0.35 * (i % 2))
        colors.append(f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}")
    return [{"color": c, "marker": MARKERS[i % len(MARKERS)]} for i, c in enumerate(colors)]


def panel_figure(
    panels: Mapping[str, Mapping[str, Line]],
    xlabel: str,
    ylabel: str,
    ncols: int = 3,
    logx: bool = False,
    suptitle: str | None = None,
    ylim: tuple[float, float] | None = None,
) -> Any:
    """The figure of :func:`plot_panels` (not saved, not closed): a label keeps one style in every panel."""
    if not panels:
        raise ValueError("nothing to plot: panels is empty")
    plt = pyplot()
    n = len(panels)
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(max(4.2 * ncols, 7.5), 3.2 * nrows + 0.6), squeeze=False)
    order = list(dict.fromkeys(label for lines in panels.values() for label in lines))
    style = dict(zip(order, series_styles(len(order))))
    labels: dict[str, Any] = {}
    for ax, (title, lines) in zip(axes.ravel(), panels.items()):
        for label, (x, y, err) in lines.items():
            h = ax.errorbar(x, y, yerr=err, ms=4, capsize=2, lw=1.3, label=label, **style[label])
            labels.setdefault(label, h)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        if logx:
            ax.set_xscale("log", base=2)
        if ylim is not None:
            ax.set_ylim(*ylim)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    fig.legend(list(labels.values()), list(labels), loc="lower center", ncol=min(len(labels), 6), fontsize=8,
               frameon=False)
    if suptitle:
        fig.suptitle(suptitle, fontsize=10)
    fig.tight_layout(rect=(0, 0.06 + 0.02 * (len(labels) > 6), 1, 0.97 if suptitle else 1))
    return fig


def plot_panels(
    path: str | os.PathLike,
    panels: Mapping[str, Mapping[str, Line]],
    xlabel: str,
    ylabel: str,
    ncols: int = 3,
    logx: bool = False,
    suptitle: str | None = None,
    ylim: tuple[float, float] | None = None,
) -> Path:
    """Save a grid of line plots: ``panels[title][label] = (x, y, yerr)``; one legend per figure."""
    fig = panel_figure(panels, xlabel, ylabel, ncols=ncols, logx=logx, suptitle=suptitle, ylim=ylim)
    plt = pyplot()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


Dot = tuple[float, float | None]
"""One dot of :func:`plot_dots`: ``(value, half-width of its interval or None)``."""


def plot_dots(
    path: str | os.PathLike,
    panels: Mapping[str, Mapping[str, Mapping[str, Dot]]],
    xlabel: str,
    ncols: int = 3,
    suptitle: str | None = None,
    legend_title: str | None = None,
) -> Path:
    """Save a grid of dot plots: ``panels[title][row][series] = (value, half-width)``. Rows (the items compared)
    run top to bottom in the order first seen; each series is a dot with a horizontal interval, offset a little
    within its row, and keeps its style in every panel; each panel's x range is its own data's."""
    if not panels:
        raise ValueError("nothing to plot: panels is empty")
    plt = pyplot()
    rows = list(dict.fromkeys(r for panel in panels.values() for r in panel))
    series = list(dict.fromkeys(s for panel in panels.values() for dots in panel.values() for s in dots))
    style = dict(zip(series, series_styles(len(series))))
    n = len(panels)
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(max(3.6 * ncols, 7.5), (0.22 * len(rows) + 0.9) * nrows + 0.7),
                             squeeze=False)
    handles: dict[str, Any] = {}
    step = 0.6 / max(1, len(series))
    for ax, (title, panel) in zip(axes.ravel(), panels.items()):
        for i, row in enumerate(rows):
            for j, s in enumerate(series):
                if s not in panel.get(row, {}):
                    continue
                value, err = panel[row][s]
                y = i + (j - (len(series) - 1) / 2) * step
                h = ax.errorbar([value], [y], xerr=None if err is None else [err], ms=3.5, capsize=1.5, lw=1,
                                ls="none", label=s, **style[s])
                handles.setdefault(s, h)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(rows, fontsize=7)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", alpha=0.3)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=min(len(handles), 8), fontsize=8,
               frameon=False, title=legend_title, title_fontsize=8)
    if suptitle:
        fig.suptitle(suptitle, fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 0.97 if suptitle else 1))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def try_plot_panels(path: str | os.PathLike, panels: Mapping[str, Mapping[str, Line]], **kwargs: Any) -> Path | None:
    """:func:`plot_panels`, or ``None`` and a message on stderr when matplotlib is missing."""
    try:
        return plot_panels(path, panels, **kwargs)
    except DependencyNotInstalled as e:
        print(f"plot skipped ({Path(path).name}): {e}", file=sys.stderr)
        return None


__all__ = ["Line", "Dot", "PALETTE", "MARKERS", "series_styles", "pyplot", "panel_figure", "plot_panels", "plot_dots",
           "try_plot_panels"]
