"""Writing benchmark results: markdown tables, CSV files, PNG line plots, machine description.

- :func:`markdown_table`: a GitHub-flavoured markdown table from headers and rows.
- :func:`fmt_ci`: ``"0.812 ± 0.031"`` from a mean and a confidence half-width.
- :func:`write_csv`: a list of flat dicts to a CSV file (columns in first-seen order).
- :func:`read_csv`: the inverse, numbers parsed back to floats where they parse.
- :func:`plot_panels`: a grid of line plots saved as PNG (re-exported from
  :mod:`agentgym_credit.plotting`, where it lives).
- :func:`machine_info` / :func:`machine_lines`: platform, CPU count and library versions, and the
  exact command, for the header of every ``benchmarks/*.md``.
- :func:`read_command`: the command line recorded in such a header.
- :func:`given_options`, :func:`check_known`: the options a command line gave, as a config's keywords; names checked.
- :func:`progress`: a tqdm progress bar when tqdm is installed, a line every 10 s otherwise.
- :func:`write_atomic`: a text file written whole or not at all (temporary file, then ``os.replace``).
- :func:`write_section`: replace (or add) one named section of a markdown file shared by several
  benchmarks (``benchmarks/faults/reliability.md``), atomically, leaving the other sections as they are.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import os
import platform
import secrets
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

# plotting lives below bench and trainer (agentgym_credit.plotting); re-exported here
from agentgym_credit.plotting import Line, plot_panels
from agentgym_credit.plotting import pyplot as _pyplot  # noqa: F401  (old private name)

T = TypeVar("T")


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
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=list(cols), restval="")
    w.writeheader()
    for r in rows:
        w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in r.items()})
    write_atomic(path, buf.getvalue())
    return path


def read_csv(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read a CSV written by :func:`write_csv`: a cell written as an integer comes back an ``int``, one that
    parses as another number a ``float`` (``write_csv`` writes floats by ``repr``, so ``1.0`` stays a float),
    anything else the string."""

    def conv(v: str) -> Any:
        try:
            return int(v)
        except ValueError:
            pass
        try:
            return float(v)
        except ValueError:
            return v

    with Path(path).open(newline="") as f:
        return [{k: conv(v) for k, v in r.items()} for r in csv.DictReader(f)]


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


def recorded_options(md_path: str | os.PathLike) -> list[str]:
    """The options (from the first ``--`` on) of the command a report written earlier records, so a re-render
    from its CSVs keeps what the run was told (seeds, primary family, predictions); ``[]`` if none is recorded."""
    import shlex

    cmd = read_command(md_path)
    if cmd is None:
        return []
    words = shlex.split(cmd)
    first = next((i for i, w in enumerate(words) if w.startswith("--")), len(words))
    return words[first:]


def check_known(kind: str, values: Iterable[Any], known: Sequence[Any]) -> None:
    """Raise ``ValueError("unknown KIND 'x'; choose from KNOWN")`` for the first of ``values`` not in ``known``
    (a config's names checked before a run starts)."""
    for v in values:
        if v not in known:
            raise ValueError(f"unknown {kind} {v!r}; choose from {known}")


def given_options(args: Any, values: Sequence[str] = (), lists: Sequence[str] = (),
                  renamed: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A config's keywords from the options a command line gave: each option of ``values`` that is not None, each
    of ``lists`` that is not empty (as a tuple); ``renamed`` maps an option to its config field where they differ.

    >>> import argparse
    >>> given_options(argparse.Namespace(seeds=3, depth=None, tasks=["cue"], arms=[]), ["seeds", "depth"], ["tasks", "arms"])
    {'seeds': 3, 'tasks': ('cue',)}
    """
    field = (renamed or {}).get
    kw = {field(k, k): getattr(args, k) for k in values if getattr(args, k) is not None}
    return kw | {field(k, k): tuple(getattr(args, k)) for k in lists if getattr(args, k)}


PROGRESS_EVERY_S = 10.0
"""Without tqdm, :func:`progress` prints a line at most this often (and at the start and the end)."""


def progress(it: Iterable[T], total: int | None = None, desc: str = "", enable: bool = True,
             every_s: float | None = None, clock: Callable[[], float] = time.monotonic) -> Iterator[T]:
    """Wrap ``it`` in a tqdm bar (to stderr) if tqdm is installed and ``enable``; without tqdm, a plain line
    ``desc: i/total (s)`` to stderr at the start, then at most every ``every_s`` seconds, and at the end, so no
    long step runs silent; ``enable=False``: yield as is."""
    if not enable:
        yield from it
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        pass
    else:
        yield from tqdm(it, total=total, desc=desc, dynamic_ncols=True, leave=False)
        return
    every = PROGRESS_EVERY_S if every_s is None else every_s
    of = f"/{total}" if total is not None else ""
    start = last = clock()
    print(f"{desc or 'progress'}: 0{of}", file=sys.stderr, flush=True)
    i = 0
    for i, item in enumerate(it, 1):
        yield item
        now = clock()
        if now - last >= every:
            last = now
            print(f"{desc or 'progress'}: {i}{of} ({now - start:.0f} s)", file=sys.stderr, flush=True)
    print(f"{desc or 'progress'}: done, {i}{of} in {clock() - start:.0f} s", file=sys.stderr, flush=True)


def write_section(path: str | os.PathLike, name: str, body: str, *, preamble: str = "") -> Path:
    """Replace the block between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` of ``path`` with
    ``body`` (or append it when absent); other text is kept. A new file starts with ``preamble``.
    Written atomically (a temporary file in the same folder, then ``os.replace``)."""
    path = Path(path)
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = path.read_text() if path.exists() else preamble
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text and end in text:
        head, _, rest = text.partition(start)
        _, _, tail = rest.partition(end)
        text = head + block + tail
    else:
        text = (text.rstrip() + "\n\n" if text.strip() else "") + block + "\n"
    return write_atomic(path, text)


def write_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` (its folder made if missing) through a temporary file in the same folder and
    ``os.replace``, so a reader never sees half a report; the temporary file is removed if the write fails. The file
    keeps its permissions, or gets a new file's (0666 less the umask) rather than the temporary file's 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:  # a fresh name, created with mode 0666 so the umask applies as to any new file (no umask change)
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            if path.exists():
                os.chmod(tmp, path.stat().st_mode & 0o7777)
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


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
    "given_options",
    "check_known",
    "progress",
    "write_section",
    "write_atomic",
]
