"""``gym.make("GridWorld-v0")`` without the ``credit/`` namespace: a named error that names the full id (issue 42)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentgym_credit  # noqa: F401  (registers the ids)
from agentgym_credit.envs.registration import registered_ids
from agentgym_credit.errors import CreditError, EnvIdWithoutNamespace


def test_a_bare_id_names_the_credit_id():
    with pytest.raises(EnvIdWithoutNamespace, match=r"gym\.make\('credit/GridWorld-v0'\)") as e:
        gym.make("GridWorld-v0")
    assert isinstance(e.value, CreditError) and isinstance(e.value, gym.error.Error)
    with pytest.raises(EnvIdWithoutNamespace, match="credit/Household-v0"):
        gym.make("Household-v0")
    assert gym.make("credit/GridWorld-v0").unwrapped.spec.id == "credit/GridWorld-v0"


def test_gymnasiums_own_names_stay_gymnasiums():
    taxi = [k for k in gym.registry if k.startswith("Taxi-v")]  # a name gymnasium uses is left alone
    assert taxi and all(gym.spec(k).entry_point.startswith("gymnasium.") for k in taxi)
    assert "Taxi-v0" not in gym.registry and "credit/Taxi-v0" in registered_ids()
