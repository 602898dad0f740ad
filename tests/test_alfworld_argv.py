"""The stock ALFWorld engine (``fast=False``) keeps the host program's ``sys.argv``.

Measured before the fix: after one ``reset`` ``sys.argv`` was ``['translate.py', 'domain', 'task']`` (textworld's
``PddlEnv`` runs Fast Downward's translator, whose options module parses and rewrites ``sys.argv``).
"""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("alfworld", reason="needs the alfworld extra (bash scripts/install.sh)")

from alfworld_fixtures import private_sas_cache  # noqa: E402,F401

from agentgym_credit.envs.alfworld.env import ALFWorldEnv  # noqa: E402


@pytest.mark.parametrize("fast", [False, True])
def test_engine_keeps_sys_argv(monkeypatch, fast):
    monkeypatch.setattr(sys, "argv", ["my_training_script.py", "--lr", "1e-6"])
    env = ALFWorldEnv(expert=True, fast=fast, num_games=1)
    _, info = env.reset(seed=0)
    for _ in range(3):
        _, _, _, _, info = env.step(info["expert_action"])
    env.close()
    assert sys.argv == ["my_training_script.py", "--lr", "1e-6"]
