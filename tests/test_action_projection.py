"""ActionProjection: free LLM text -> admissible action, with tricky strings."""

from __future__ import annotations

from typing import Any

import pytest

from agentgym_credit.envs.base import CreditEnv
from agentgym_credit.wrappers import ActionProjection
from agentgym_credit.wrappers.action_projection import extract_action, normalize_action, project_action

ACTIONS = ["go to cabinet 1", "take apple 1 from countertop 1", "click[Buy Now]", "look", "go to cabinet 10"]


class Toy(CreditEnv):
    """Counts valid steps; admissible list fixed (or None = unbounded); invalid text is a no-op."""

    def __init__(self, unbounded: bool = False):
        super().__init__()
        self.unbounded = unbounded
        self.received: list[Any] = []

    def _info(self, valid: bool = True) -> dict[str, Any]:
        return {"state_key": f"n={self.n}", "admissible_actions": None if self.unbounded else list(ACTIONS),
                "task_id": "toy", "won": False, "action_valid": valid}

    def _reset_impl(self, options):
        self.n = 0
        return "start", self._info()

    def _step_impl(self, action):
        self.received.append(action)
        valid = self.unbounded and action.startswith("search[") or action in ACTIONS
        self.n += valid
        return f"step {self.n}", 1.0 if valid else 0.0, False, False, self._info(valid)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<action>go to cabinet 1</action>", "go to cabinet 1"),
        ("<ACTION>\n  look \n</Action>", "look"),
        ("<action>look</action> then maybe <action>go to cabinet 10</action>", "go to cabinet 10"),
        ("Thought: apples are on the counter.\nTAKE apple 1 FROM countertop 1.", "take apple 1 from countertop 1"),
        ("Action: click [buy now]", "click[Buy Now]"),
        ("```\ngo to cabinet 1\n```\n\n", "go to cabinet 1"),
        ("go   to\tcabinet 10", "go to cabinet 10"),
        ("“Look”", "look"),
    ],
)
def test_projects_tricky_text_to_the_admissible_action(text, expected):
    env = ActionProjection(Toy())
    env.reset(seed=0)
    _, reward, _, _, info = env.step(text)
    assert info["projected_action"] == expected
    assert info["action_valid"] is True and reward == 1.0
    assert info["raw_action"] == text
    assert env.unwrapped.received == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n   \n",
        "go to cabinet",  # a prefix is not a match
        "go to cabinet 1 and then look",
        "<action></action>",
        "<action>go to cabinet 1",  # unclosed tag: the last line is the whole text, not an action
        "__import__('os').system('echo pwned')",
        "{{7*7}} ${jndi:ldap://x}",
        "look\x00",
        "x" * 100_000,
        "日本語のアクション ☃ \u202egnp.exe",
    ],
)
def test_unmatched_text_is_an_invalid_no_op_with_penalty(text):
    env = ActionProjection(Toy(), invalid_action_penalty=-0.5)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(text)
    assert info["action_valid"] is False
    assert reward == -0.5
    assert info["state_key"] == "n=0" and obs in ("start", "step 0")
    assert not terminated and not truncated
    assert info["raw_action"] == text


def test_non_string_action_is_passed_on_and_rejected():
    env = ActionProjection(Toy())
    env.reset(seed=0)
    _, reward, _, _, info = env.step(b"look")
    assert info["action_valid"] is False and info["projected_action"] == b"look" and reward == 0.0


def test_unbounded_action_set_passes_extracted_text_through():
    env = ActionProjection(Toy(unbounded=True), invalid_action_penalty=-1.0)
    env.reset(seed=0)
    _, r, _, _, info = env.step("I will search.\n<action>search[red shoes]</action>")
    assert info["projected_action"] == "search[red shoes]" and info["action_valid"] and r == 1.0
    _, r, _, _, info = env.step("click[nothing]")
    assert info["projected_action"] == "click[nothing]" and not info["action_valid"] and r == -1.0


def test_ambiguous_loose_match_is_not_guessed():
    assert project_action("Go-To Cabinet 1", ["go to cabinet 1", "go to cabinet-1"]) is None
    assert project_action("go to cabinet-1", ["go to cabinet 1", "go to cabinet-1"]) == "go to cabinet-1"
    assert project_action("", ["look"]) is None


def test_helpers():
    assert extract_action("") == ""
    assert extract_action("```python\n```") == ""
    assert normalize_action("Answer: LOOK!!") == "look"
    assert normalize_action("action:") == ""


class AliasToy(Toy):
    """Accepts its own alias of an admissible action (as Household accepts ``put X in Y`` for ``in/on``)."""

    def _step_impl(self, action):
        return super()._step_impl("look" if action == "have a look around" else action)


def test_text_the_env_accepts_by_its_own_parsing_is_a_valid_step():
    # the projection finds no admissible match, passes the text on, and the env executes it: the step
    # changed the state, so it is not a no-op and must be neither flagged invalid nor penalized
    env = ActionProjection(AliasToy(), invalid_action_penalty=-0.5)
    env.reset(seed=0)
    _, reward, _, _, info = env.step("have a look around")
    assert info["state_key"] == "n=1"
    assert info["action_valid"] is True and reward == 1.0


def test_household_put_alias_is_not_penalized():
    import gymnasium as gym

    import agentgym_credit  # noqa: F401

    env = ActionProjection(gym.make("credit/Household-v0"), invalid_action_penalty=-0.1)
    _, info = env.reset(seed=0)
    for _ in range(60):
        puts = [a for a in info["admissible_actions"] if a.startswith("put ") and " in/on " in a]
        if puts:
            break
        takes = [a for a in info["admissible_actions"] if a.startswith("take ")]
        gos = [a for a in info["admissible_actions"] if a.startswith("go to ")]
        _, _, term, trunc, info = env.step((takes or gos)[0] if takes or len(gos) < 2 else gos[_ % len(gos)])
        assert not (term or trunc)
    else:
        pytest.skip("no put action reached")
    before = info["state_key"]
    _, reward, _, _, info = env.step(puts[0].replace(" in/on ", " in "))
    assert info["state_key"] != before  # the env executed it
    assert info["action_valid"] is True and reward > -0.1
