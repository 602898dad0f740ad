"""scripts/install.sh explains its one expected pip complaint instead of printing a red ERROR (issue 30).

Measured before, from a fresh venv: the last ``pip install`` printed pip's resolver ERROR (``jericho 3.3.1 requires
spacy>=2.1.0, which is not installed``, expected: the engines are installed with ``--no-deps``) and the import
check printed 7 warnings from verl (5 absent GPU engines, 2 about no accelerator). Now the install passes
``--no-warn-conflicts`` and runs ``pip check`` itself: the jericho/spaCy line becomes one explaining note, any
other conflict is printed and fails the script; the import check's output is shown only when it fails.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "install.sh"


def _filter(report: str, tmp_path: Path) -> str:
    stub = tmp_path / "bin"
    stub.mkdir(exist_ok=True)
    (stub / "python").write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran'}\nexit 1\n")  # sourcing must not install
    (stub / "python").chmod(0o755)
    env = {**os.environ, "PATH": f"{stub}{os.pathsep}{os.environ['PATH']}"}
    r = subprocess.run(["bash", "-c", f"source {SCRIPT} && unexpected_conflicts"], input=report, env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "ran").exists()
    return r.stdout


def test_only_the_expected_conflict_is_filtered(tmp_path):
    assert _filter("jericho 3.3.1 requires spacy>=2.1.0, which is not installed.\n", tmp_path) == ""
    assert _filter("No broken requirements found.\n", tmp_path) == ""
    other = "textworld 1.7.0 requires tatsu==5.8.3, but you have tatsu 5.12.0.\n"
    assert _filter("jericho 3.3.1 requires spacy>=2.1.0, which is not installed.\n" + other, tmp_path) == other
    # pip 26.x: a platform line for the engine that runs here (issue 42: the install failed after pip upgrade)
    newest = "textworld 1.7.0 is not supported on this platform\njericho 3.3.1 requires spacy>=2.1.0, which is not installed.\n"
    assert _filter(newest, tmp_path) == ""
    assert _filter(newest + other, tmp_path) == other
    assert _filter("alfworld 0.4.2 is not supported on this platform\n", tmp_path) != ""  # only textworld's


def _fake_env(tmp_path: Path, pip: str) -> dict[str, str]:
    """A checkout (this install.sh, a pyproject.toml) and a stub ``python`` that says pip ``pip`` and records
    any ``pip install`` it is asked for."""
    (tmp_path / "scripts").mkdir(exist_ok=True)
    (tmp_path / "scripts" / "install.sh").write_text(SCRIPT.read_text())
    if not (tmp_path / "pyproject.toml").exists():
        (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    stub = tmp_path / "bin"
    stub.mkdir(exist_ok=True)
    (stub / "python").write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        f'  *"pip --version"*) echo "pip {pip} from x (python 3.11)";;\n'
        f'  *"pip install"*|*"pip check"*) echo "$*" >> {tmp_path / "installs"}; exit 1;;\n'
        '  *"sys.version"*) echo "3.11.7";;\n'
        "  *) exit 0;;\n"
        "esac\n")
    (stub / "python").chmod(0o755)
    return {**os.environ, "PATH": f"{stub}{os.pathsep}{os.environ['PATH']}",
            "AGC_INSTALL_STAMP": str(tmp_path / "stamp")}


def _run(tmp_path: Path, pip: str, code: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", f"source scripts/install.sh && {code}"], cwd=tmp_path,
                          env=_fake_env(tmp_path, pip), capture_output=True, text=True, timeout=30)


def test_a_rerun_with_nothing_changed_installs_nothing_and_any_change_reinstalls(tmp_path):
    assert _run(tmp_path, "26.0", "up_to_date").returncode == 1  # no stamp yet
    assert _run(tmp_path, "26.0", "write_stamp && up_to_date").returncode == 0
    r = _run(tmp_path, "26.0", "main")
    assert r.returncode == 0 and "installed already" in r.stdout and not (tmp_path / "installs").exists()
    assert _run(tmp_path, "26.1", "up_to_date").returncode == 1  # another pip
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'y'\n")
    assert _run(tmp_path, "26.0", "up_to_date").returncode == 1  # another pyproject.toml
    r = _run(tmp_path, "26.0", "main")
    assert r.returncode != 0 and "[1/5] torch" in r.stdout and (tmp_path / "installs").exists()  # it reinstalls
    _run(tmp_path, "26.0", "write_stamp")
    (tmp_path / "installs").unlink()
    r = _run(tmp_path, "26.0", "main --force")
    assert "[1/5]" in r.stdout and (tmp_path / "installs").exists()


def test_the_install_asks_pip_not_to_print_the_conflict_and_checks_itself():
    text = SCRIPT.read_text()
    final = next(ln for ln in text.splitlines() if "pip install -q -e '.[all,dev]'" in ln)
    assert "--no-warn-conflicts" in final
    assert "python -m pip check" in text and "python -W ignore -c" in text
