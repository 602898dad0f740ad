"""The env contract: ``check_credit_env`` on every registered env, and on envs broken on purpose."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import agentgym_credit  # noqa: F401  (registers credit/*)
from agentgym_credit.envs.base import CreditEnv
from agentgym_credit.envs.gridworld.model import TabularModel
from agentgym_credit.envs.registration import registered_ids
from agentgym_credit.errors import ContractViolation, ResetNeeded
from agentgym_credit.testing import check_credit_env

# the two engine envs take ~20 and ~60 s at load 10 on 2 cores: with the slow tests (the fast suite checks the
# contract on those engines in test_alfworld_env.py, test_textworld_env.py and test_textworld_snapshot.py)
_ENGINES = {"credit/ALFWorld-v0", "credit/TextWorld-v0"}


@pytest.mark.parametrize("env_id", [pytest.param(i, marks=pytest.mark.slow) if i in _ENGINES else i
                                    for i in registered_ids()])
def test_registered_env_honours_the_contract(env_id):
    env = gym.make(env_id)
    try:
        report = check_credit_env(env, seed=0)
    finally:
        env.close()
    assert "step after episode end raises ResetNeeded" in report.checked
    assert "bad actions are no-ops" in report.checked


_GLOBAL_RNG = np.random.default_rng(0)


class Line(CreditEnv):
    """Positions 0..3 on a line; 'forward' from 2 reaches the goal (reward 1). ``break_`` breaks one rule."""

    ACTIONS = ["forward", "back", "wait"]

    def __init__(self, break_: str = "", horizon: int = 8):
        super().__init__()
        self.break_ = break_
        self.horizon = horizon
        self.episodes = 0
        n = 4
        P = []
        for s in range(n):
            P.append([[(1.0, min(s + 1, n - 1), float(s + 1 == n - 1), s + 1 == n - 1)],
                      [(1.0, max(s - 1, 0), 0.0, False)], [(1.0, s, 0.0, False)]] if s < n - 1 else [])
        acts = [list(self.ACTIONS) if s < n - 1 else [] for s in range(n)]
        self.model = TabularModel([f"pos={s}" for s in range(n)], acts, P, np.eye(n)[0], horizon=horizon)

    def _info(self, valid: bool = True) -> dict[str, Any]:
        key = "const" if self.break_ == "constant_key" else f"pos={self.pos}"
        if self.break_ == "leaky_key":
            key += f";episode={self.episodes}"
        info = {
            "state_key": key,
            "admissible_actions": list(self.model.actions[self.pos]) or None,
            "task_id": "line",
            "won": (1 if self.pos == 3 else 0) if self.break_ == "int_won" else self.pos == 3,
            "action_valid": valid,
        }
        if self.break_ not in ("constant_key", "leaky_key"):
            info["state_index"] = self.pos  # the model check would catch those keys first
        return info

    def _obs(self) -> str:
        return f"You are at {self.pos}. Steps: {self.t}." if self.break_ == "constant_key" else f"You are at {self.pos}."

    def _reset_impl(self, options):
        self.episodes += 1
        self.pos, self.t = 0, 0
        if self.break_ == "random_start":
            self.pos = int(_GLOBAL_RNG.integers(0, 2))  # ignores the reset seed
        return self._obs(), self._info()

    def _step_impl(self, action):
        if self.break_ == "raises_on_unicode" and not action.isascii():
            raise UnicodeError("cannot handle that")
        valid = action in self.model.actions[self.pos] or (self.break_ == "accepts_empty" and action == "")
        self.t += valid
        if valid and action:
            a = self.model.actions[self.pos].index(action)
            _, ns, r, term = self.model.P[self.pos][a][0]
            if self.break_ == "model_mismatch" and action == "back":
                ns = min(ns + 2, 2)
        else:
            ns, r, term = self.pos, 0.0, False
        self.pos = ns
        truncated = self.t >= self.horizon and not term
        return self._obs(), r, term, truncated, self._info(valid)

    def step(self, action):
        out = super().step(action)
        if self.break_ == "no_reset_needed":
            self._needs_reset = False
        return out


def test_a_correct_env_passes_and_reports_what_it_checked():
    report = check_credit_env(Line(), seed=3)
    assert "env agrees with its TabularModel" in report.checked
    assert any(c.startswith("equal states reached twice") for c in report.checked)
    assert report.skipped == ["surface noise: env has no equivalent_state_keys hook",
                              "snapshots: Line does not support get_state/set_state"]
    assert report.steps > 10 and report.resets >= 4


@pytest.mark.parametrize(
    "break_, message",
    [
        ("constant_key", "state_key never changed"),
        ("leaky_key", "not deterministic|Deterministic step info"),
        ("random_start", "not deterministic|different initial state"),
        ("int_won", "info\\['won'\\] must be a bool"),
        ("raises_on_unicode", "raised UnicodeError"),
        ("accepts_empty", "bad action '' at reset was accepted|accepted the empty action"),
        ("model_mismatch", "not an outcome of model.P"),
        ("no_reset_needed", "did not raise ResetNeeded"),
    ],
)
def test_broken_envs_are_caught_with_a_clear_message(break_, message):
    with pytest.raises(ContractViolation, match=message):
        check_credit_env(Line(break_), seed=0, gymnasium_check=break_ not in ("random_start", "int_won"))


def test_an_env_that_never_ends_is_reported():
    with pytest.raises(ContractViolation, match="no episode end within n_steps=2 "):
        check_credit_env(Line(horizon=10_000), seed=0, n_steps=2)


def test_surface_noise_hook_is_used():
    class Noisy(Line):
        def equivalent_state_keys(self, rng, n):
            return [f"pos={self.pos}"] * (n - 1) + [f"pos={self.pos};order={rng.integers(9)}"]

    class Clean(Line):
        def equivalent_state_keys(self, rng, n):
            return [f"pos={self.pos}"] * n

    with pytest.raises(ContractViolation, match="surface noise"):
        check_credit_env(Noisy(), seed=0)
    assert "state_key ignores surface noise (equivalent_state_keys)" in check_credit_env(Clean(), seed=0).checked


def test_a_plain_gymnasium_env_is_refused():
    with pytest.raises(ContractViolation, match="Text"):
        check_credit_env(gym.make("FrozenLake-v1"))


class Unbounded(Line):
    """Lists no admissible actions (an unbounded action set); may suggest valid ones."""

    def _info(self, valid: bool = True) -> dict[str, Any]:
        return {**super()._info(valid), "admissible_actions": None}


def test_unbounded_action_set_uses_the_suggest_action_hook():
    class Suggesting(Unbounded):
        def suggest_action(self, rng):
            return str(rng.choice(self.ACTIONS))

    report = check_credit_env(Suggesting(), seed=0)
    assert "step after episode end raises ResetNeeded" in report.checked
    report = check_credit_env(Unbounded(), seed=0)  # no hook: the walk cannot be checked, and says so
    assert any(s.startswith("random walk") for s in report.skipped)
    assert "step after episode end raises ResetNeeded" not in report.checked


@pytest.mark.parametrize("options", ["task=1", [("task", 1)], 5])
def test_reset_options_that_are_not_a_mapping_are_a_clear_error(options):
    env = Line()
    with pytest.raises(TypeError, match="options must be a dict"):
        env.reset(seed=0, options=options)


def test_a_failed_reset_leaves_the_env_needing_a_reset():
    class Picky(Line):
        def _reset_impl(self, options):
            if options.get("task") == "bad":
                raise ValueError("unknown task 'bad'")
            return super()._reset_impl(options)

    env = Picky()
    env.reset(seed=0)
    env.step("forward")
    with pytest.raises(ValueError, match="unknown task"):
        env.reset(seed=0, options={"task": "bad"})
    with pytest.raises(ResetNeeded):  # not a silent continuation of the old episode
        env.step("forward")
    env.reset(seed=0)
    assert env.step("forward")[4]["state_key"] == "pos=1"


class Lamp(CreditEnv):
    """Positions 0..2 and a lamp; ``read`` is admissible only with the lamp on; ``forward`` from 2 ends
    the episode, paying 1 if the note was read. ``forget`` leaves a fact out of ``state_key``."""

    def __init__(self, forget: str = ""):
        super().__init__()
        self.forget = forget

    def _info(self, valid: bool = True) -> dict[str, Any]:
        key = f"pos={self.pos}"
        if self.forget != "lamp":
            key += f";lamp={self.lamp}"
        if self.forget != "read":
            key += f";read={self.read}"
        acts = ["forward", "toggle lamp"] + (["read"] if self.lamp else [])
        return {"state_key": key, "admissible_actions": acts if self.pos < 3 else [], "task_id": "lamp",
                "won": self.pos == 3 and self.read, "action_valid": valid}

    def _obs(self) -> str:
        return f"You are at {self.pos}. The lamp is {'on' if self.lamp else 'off'}."

    def _reset_impl(self, options):
        self.pos, self.lamp, self.read, self.t = 0, False, False, 0
        return self._obs(), self._info()

    def _step_impl(self, action):
        valid = action in self._info()["admissible_actions"]
        reward, self.t = 0.0, self.t + 1
        if valid and action == "forward":
            self.pos += 1
            reward = float(self.pos == 3 and self.read)
        elif valid and action == "toggle lamp":
            self.lamp = not self.lamp
        elif valid:
            self.read = True
        term = self.pos == 3
        return self._obs(), reward, term, self.t >= 12 and not term, self._info(valid)


def test_a_state_key_that_leaves_out_an_action_relevant_fact_is_caught():
    check_credit_env(Lamp(), seed=0)  # the complete key passes
    with pytest.raises(ContractViolation, match="other admissible actions"):
        check_credit_env(Lamp(forget="lamp"), seed=0)  # the lamp decides whether `read` is admissible
    with pytest.raises(ContractViolation, match="other reward"):
        check_credit_env(Lamp(forget="read"), seed=0)  # reading decides the final reward


def test_text_space_contains_unicode_text_but_not_control_characters():
    # real WebShop titles and LLM actions are unicode ("Café Crème ®", RTL, emoji): valid observations/actions
    from agentgym_credit.envs.base import TextSpace

    space = TextSpace(64)
    assert space.contains("Café Crème ® 10\u2033 \u05e9\u05dc\u05d5\u05dd \U0001f600\n[SEP]\tx")
    assert space.contains(space.sample())
    assert not space.contains("look\x00") and not space.contains(b"look") and not space.contains("x" * 65)

    class Unicode(Line):
        def _obs(self):
            return f"Café n° {self.pos} \u2192 \U0001f600"

    check_credit_env(Unicode(), seed=0)  # gymnasium's check_env asserts the observation is in the space


def test_every_text_space_sample_is_contained():
    # string.printable holds \x0b and \x0c, which the contract counts as control characters
    from agentgym_credit.envs.base import TEXT_CHARSET, TextSpace

    assert "\x0b" not in TEXT_CHARSET and "\x0c" not in TEXT_CHARSET
    space = TextSpace(64, seed=0)
    assert all(space.contains(space.sample()) for _ in range(2000))
