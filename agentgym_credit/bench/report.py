"""Writing benchmark results: markdown tables, CSV files, PNG line plots, machine description.

- :func:`markdown_table`: a GitHub-flavoured markdown table from headers and rows.
- :func:`fmt_ci`: ``"0.812 ± 0.031"`` from a mean and a confidence half-width.
- :func:`write_csv`: a list of flat dicts to a CSV file (columns in first-seen order).
- :func:`read_csv`: the inverse, numbers parsed back to floats where they parse.
- :func:`plot_panels`: a grid of line plots (one panel per title, one line per label, optional
  error bars) saved as PNG with matplotlib's Agg backend (no display needed).
- :func:`machine_info` / :func:`machine_lines`: platform, CPU count and library versions, and the
  exact command, for the header of every ``benchmarks/*.md``.
- :func:`read_command`: the command line recorded in such a header.
- :func:`progress`: a tqdm progress bar when tqdm is installed, a silent iterator otherwise.
"""

from __future__ import annotations

import csv
import math
import os
import platform
import shlex
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from agentgym_credit.errors import DependencyNotInstalled

T = TypeVar("T")

Line = tuple[Sequence[float], Sequence[float], Sequence[float] | None]
"""One plotted line: ``(x, y, yerr or None)``."""


def fmt_num(x: float, digits: int = 3) -> str:
    """A number for a table: fixed digits, ``"–"`` for NaN/None."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}f}"


def fmt_ci(mean: float, half: float, digits: int = 3) -> str:
    """``mean ± half`` (``mean`` alone when the half-width is unknown)."""
    if mean is None or not math.isfinite(mean):
        return "–"
    if half is None or not math.isfinite(half):
        return fmt_num(mean, digits)
    return f"{mean:.{digits}f} ± {half:.{digits}f}"


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], align: str | None = None) -> str:
    """GitHub markdown table. ``align`` is one letter per column: ``l``, ``r`` or ``c``."""
    headers = [str(h) for h in headers]
    body = [[str(c).replace("|", "\\|").replace("\n", " ") for c in r] for r in rows]
    for r in body:
        if len(r) != len(headers):
            raise ValueError(f"row has {len(r)} cells, table has {len(headers)} columns: {r}")
    align = align or "l" + "r" * (len(headers) - 1)
    if len(align) != len(headers):
        raise ValueError("align needs one letter per column")
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(marks[a] for a in align) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


def write_csv(path: str | os.PathLike, rows: Sequence[Mapping[str, Any]]) -> Path:
    """Write flat dicts as CSV; the columns are the union of keys, in first-seen order."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cols: dict[str, None] = {}
    for r in rows:
        cols.update(dict.fromkeys(r))
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(cols), restval="")
        w.writeheader()
        for r in rows:
            w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in r.items()})
    return path


def read_csv(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read a CSV written by :func:`write_csv`; cells that parse as numbers become floats."""

    def conv(v: str) -> Any:
        try:
            return float(v)
        except ValueError:
            return v

    with Path(path).open(newline="") as f:
        return [{k: conv(v) for k, v in r.items()} for r in csv.DictReader(f)]


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise DependencyNotInstalled("matplotlib", "plot") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


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
    if not panels:
        raise ValueError("nothing to plot: panels is empty")
    plt = _pyplot()
    n = len(panels)
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(max(4.2 * ncols, 7.5), 3.2 * nrows + 0.6), squeeze=False)
    labels: dict[str, Any] = {}
    for ax, (title, lines) in zip(axes.ravel(), panels.items()):
        for label, (x, y, err) in lines.items():
            h = ax.errorbar(x, y, yerr=err, marker="o", ms=3, capsize=2, lw=1.3, label=label)
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
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def machine_info() -> dict[str, str]:
    """Where a benchmark ran: platform, CPU count, Python and library versions."""
    import numpy as np

    info = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": str(os.cpu_count()),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
    }
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_threads"] = str(torch.get_num_threads())
    except ImportError:
        pass
    return info


def machine_lines(command: str | Sequence[str]) -> str:
    """Markdown lines: the exact command and the machine it ran on."""
    cmd = command if isinstance(command, str) else " ".join(shlex.quote(c) for c in command)
    info = machine_info()
    return "\n".join([f"Command: `{cmd}`", "", "Machine: " + ", ".join(f"{k} `{v}`" for k, v in info.items())])


def read_command(md_path: str | os.PathLike) -> str | None:
    """The command recorded by :func:`machine_lines` in a report written earlier (``None`` if absent)."""
    path = Path(md_path)
    if not path.exists():
        return None
    for line in path.read_text().splitlines():
        if line.startswith("Command: `") and line.endswith("`"):
            return line[len("Command: `"):-1]
    return None


def progress(it: Iterable[T], total: int | None = None, desc: str = "", enable: bool = True) -> Iterator[T]:
    """Wrap ``it`` in a tqdm bar (to stderr) if tqdm is installed and ``enable``; else yield as is."""
    if enable:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            pass
        else:
            yield from tqdm(it, total=total, desc=desc, dynamic_ncols=True, leave=False)
            return
    yield from it


__all__ = [
    "Line",
    "fmt_num",
    "fmt_ci",
    "markdown_table",
    "write_csv",
    "read_csv",
    "plot_panels",
    "machine_info",
    "machine_lines",
    "read_command",
    "progress",
]
