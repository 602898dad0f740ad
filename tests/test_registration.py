"""Registration of the credit/ namespace: with the import, and through gymnasium's module prefix."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym

import agentgym_credit
from agentgym_credit.envs.registration import ENVS, register_all, registered_ids


def test_import_registers_every_id():
    assert set(registered_ids()) <= set(gym.registry)
    assert {e.id for e in ENVS} == set(registered_ids())
    assert all(e.id.startswith("credit/") and e.description for e in ENVS)
    register_all()  # idempotent: no duplicate-registration error
    assert agentgym_credit.__version__


def test_module_prefix_works_without_importing_the_package():
    code = (
        "import sys, gymnasium as gym\n"
        "assert 'agentgym_credit' not in sys.modules\n"
        "env = gym.make('agentgym_credit:credit/GridWorld-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "print(type(obs).__name__, sorted(info)[:2])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("str ")
