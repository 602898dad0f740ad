"""README and docs/ as a newcomer meets them: every snippet runs as a script, unchanged, in an empty folder.

- Every ```python block of README.md and docs/*.md is saved as a script and run with this Python (the
  subprocess backend's workers re-import it, as they would a user's script).
- Every ```bash block runs with ``bash -e`` in an empty folder that sees the clone's ``examples/`` and
  ``scripts/``, unless the line above it says why it is not run (``<!-- not run by the tests: REASON -->``).
- Links between README and the guides resolve; README stays a short front door; every report in
  ``benchmarks/`` is listed in the benchmarks guide.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"(?m)^```(python|bash)\n(.*?)^```", re.S)
_NOT_RUN = re.compile(r"<!-- not run by the tests: (.+?) -->\s*$")


def _blocks():
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for m in _FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
            reason = _NOT_RUN.search(before)
            yield pytest.param(path, line, m.group(1), m.group(2), reason.group(1) if reason else None,
                               id=f"{path.relative_to(ROOT)}:{line}", marks=pytest.mark.slow)


def _sandbox(tmp_path: Path) -> Path:
    for name in ("examples", "scripts"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


@pytest.mark.parametrize("path, line, lang, code, reason", list(_blocks()))
def test_snippet_runs_as_written(path, line, lang, code, reason, tmp_path):
    if reason is not None:
        assert len(reason) > 10, f"{path.name}:{line}: say why the block is not run"
        pytest.skip(f"{path.name}:{line}: {reason}")
    cwd = _sandbox(tmp_path)
    env = {**os.environ, "MPLBACKEND": "Agg", "TRL_EXPERIMENTAL_SILENCE": "1"}
    if lang == "python":
        script = cwd / "snippet.py"
        script.write_text(code, encoding="utf-8")
        cmd = [sys.executable, str(script)]
    else:
        cmd = ["bash", "-e", "-o", "pipefail", "-c", code]
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, f"{path.name}:{line} failed:\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}"


def test_links_between_readme_and_guides_resolve():
    broken = []
    for path in DOCS:
        for target in re.findall(r"\]\((?!https?://|#)([^)#\s]+)", path.read_text(encoding="utf-8")):
            if not (path.parent / target).exists():
                broken.append(f"{path.relative_to(ROOT)} -> {target}")
    assert not broken, broken


def test_readme_is_a_short_front_door():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 400, len(lines)
    first_python = next(i for i, line in enumerate(lines) if line.startswith("```python"))
    assert first_python < 60, f"the first runnable example starts at line {first_python + 1}"
    assert not [line for line in lines if "this session" in line.lower()], "README speaks of how it was made"


def test_every_benchmark_report_is_listed_in_the_benchmarks_guide():
    guide = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    side = (".predictions.md", ".checked.md", ".findings.md", ".split.md")
    reports = [p.relative_to(ROOT / "benchmarks").as_posix() for p in (ROOT / "benchmarks").rglob("*.md")
               if not p.name.endswith(side)]
    missing = sorted(r for r in reports if f"benchmarks/{r}" not in guide)
    assert not missing, f"docs/benchmarks.md does not list {missing}"


def test_benchmark_reports_live_in_the_rooms_of_the_lab():
    rooms = {"exact", "montecarlo", "learning", "stats", "speed", "faults", "envs"}
    stray = sorted(p.name for p in (ROOT / "benchmarks").iterdir() if not (p.is_dir() and p.name in rooms))
    assert not stray, f"benchmarks/ holds only the room folders {sorted(rooms)}; move {stray} into one"
