"""Every install line a user is shown works from a clone, and is run from a clean venv by CI.

Measured before: README's and the error messages' ``pip install 'agentgym-credit[<extra>]'`` failed (the package
is not published), and the ``trainer``/``verl``/``trl`` lines came without the CPU torch pin they need.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib

from agentgym_credit.errors import ENGINES_NO_DEPS, TORCH_CPU_PIN, DependencyNotInstalled, install_commands

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
NEEDS_TORCH = {"trainer", "lora", "verl", "trl", "all"}
CI_SCRIPTS = ((ROOT / "scripts" / "install.sh").read_text()
              + (ROOT / "scripts" / "check_install_lines.sh").read_text()).replace(" -q", "")
_LINE = re.compile(r"pip install [^`\n#]*")


def shown_lines() -> list[tuple[str, str, str]]:
    """(file, the install command, the text before it in its file) for every ``pip install`` a user reads."""
    out = []
    for f in [ROOT / "README.md", *sorted((ROOT / "examples").rglob("README.md"))]:
        text = f.read_text()
        for m in _LINE.finditer(text):
            cmd = m.group(0).strip()
            cmd = cmd if cmd.endswith(" -e .") else cmd.rstrip(".;,)")
            out.append((str(f.relative_to(ROOT)), cmd, text[:m.start()]))
    return out


def _extras(cmd: str) -> set[str] | None:
    m = re.fullmatch(r"pip install -e '\.\[([a-z,]+)\]'", cmd)
    return set(m.group(1).split(",")) if m else None


def test_no_line_installs_the_unpublished_package_by_name():
    bad = [(f, c) for f, c, _ in shown_lines() if "agentgym-credit[" in c or c.startswith("pip install agentgym")]
    assert not bad, bad
    for extra in EXTRAS - {"all", "dev"}:
        assert not any("agentgym-credit[" in c for c in install_commands(extra)), extra


@pytest.mark.parametrize("where,cmd,before", shown_lines(), ids=lambda v: v if isinstance(v, str) and
                         v.startswith("pip") else None)
def test_every_shown_line_is_run_by_ci_from_a_clean_venv(where, cmd, before):
    extras_arg = re.search(r"-e '\.\[[a-z,]+\]'", cmd)
    if extras_arg and f"pip install {extras_arg.group(0)}" in CI_SCRIPTS:
        return  # the same extras, installed by a CI script from a fresh venv
    if cmd in CI_SCRIPTS or cmd in ("pip install -e .", TORCH_CPU_PIN, ENGINES_NO_DEPS):
        return  # run as written by scripts/check_install_lines.sh or scripts/install.sh (both from fresh venvs)
    if cmd.startswith("pip install 'verl[vllm]"):
        return  # verl's GPU stack (vLLM needs CUDA): documented for GPU machines, never run on CPU CI
    extras = _extras(cmd.split("&& ")[-1])
    assert extras is not None, f"{where}: {cmd!r} is not a form CI runs"
    assert extras <= EXTRAS, f"{where}: {cmd!r} names extras pyproject.toml lacks: {extras - EXTRAS}"
    # an extras subset of `.[all,dev]`, which scripts/install.sh installs from a fresh venv
    if extras & NEEDS_TORCH and where == "README.md":  # CPU instructions (examples/verl is for CUDA machines)
        assert TORCH_CPU_PIN in cmd or TORCH_CPU_PIN in before[-400:], f"{where}: {cmd!r} without the torch pin"
    if "alfworld" in extras:
        assert ENGINES_NO_DEPS in before[-400:], f"{where}: {cmd!r} without the engines' --no-deps line"


def test_error_messages_give_working_commands():
    msg = str(DependencyNotInstalled("textworld", "alfworld"))
    assert ENGINES_NO_DEPS in msg and "agentgym-credit[" not in msg
    assert TORCH_CPU_PIN in str(DependencyNotInstalled("torch", "trainer"))


LIGHT = ("webshop", "similarity", "data", "progress", "plot")


def test_error_message_lines_are_run_by_ci():
    """Light extras: check_install_lines.sh runs their messages' commands as printed, in a clean venv. The rest:
    the message is the torch pin / the engines' --no-deps line (both run by install.sh) and then exactly the
    extra's requirement specs, which install.sh installs from a fresh venv through '.[all,dev]'."""
    script = (ROOT / "scripts" / "check_install_lines.sh").read_text()
    assert "install_commands(extra)" in script and all(f'"{e}"' in script for e in LIGHT)
    from agentgym_credit.errors import extra_requirements

    for extra in sorted(EXTRAS - {"all", "dev"}):
        cmds = install_commands(extra)
        if extra in LIGHT:
            continue
        *first, last = cmds
        assert all(c in (TORCH_CPU_PIN, ENGINES_NO_DEPS) for c in first), (extra, first)
        reqs = extra_requirements(extra)
        assert reqs and last == "pip install " + " ".join(f"'{r}'" for r in reqs), (extra, last)
        assert "pip install -e '.[all,dev]'" in CI_SCRIPTS or "-e '.[all,dev]'" in CI_SCRIPTS
