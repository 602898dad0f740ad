"""``ActionProjection``: map free LLM text to one admissible action.

What lives here:

- :func:`extract_action` — the action part of a model's reply: the content of the last complete
  ``<action>...</action>`` tag, else the last non-empty line (lines made only of code-fence
  backticks are skipped);
- :func:`normalize_action` — the loose form used for matching: lower case, punctuation removed,
  whitespace collapsed, a leading ``action:`` label dropped;
- :func:`project_action` — extracted text -> admissible action (exact match, then a unique
  normalized match, then a template match) or ``None``;
- :func:`is_template`, :func:`match_template`, :func:`fill_template` — admissible *templates*: an entry with
  ``<placeholder>`` parts (WebShop's ``search[<query>]``) stands for every action that fills them;
- :class:`ActionProjection` — the wrapper.

The text is only compared with strings, never executed or evaluated.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from typing import Any, SupportsFloat

import gymnasium as gym

_TAG = re.compile(r"<action>(.*?)</action>", re.IGNORECASE | re.DOTALL)
_PUNCT = re.compile("[" + re.escape(string.punctuation) + r"\u2018\u2019\u201c\u201d\u00b4`]+")
_WS = re.compile(r"\s+")
_LABEL = re.compile(r"^\s*(?:action|answer)\s*:\s*", re.IGNORECASE)
_FENCE = re.compile(r"^`{3,}\w*$")
_PLACEHOLDER = re.compile(r"<[A-Za-z_][\w ]*>")
_TEMPLATE_CACHE: dict[str, re.Pattern[str]] = {}


def extract_action(text: str) -> str:
    """The action part of an LLM reply (see module docstring); ``""`` when there is none.

    >>> extract_action("I think...\\n<action>go to cabinet 1</action>")
    'go to cabinet 1'
    >>> extract_action("Thought: the door is north.\\n\\n  go north  \\n")
    'go north'
    """
    tags = _TAG.findall(text)
    if tags:
        return tags[-1].strip()
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line and not _FENCE.match(line):
            return line
    return ""


def normalize_action(text: str) -> str:
    """Loose matching form: case, punctuation, whitespace and an ``Action:`` label do not matter.

    >>> normalize_action("  Action:  Click[ Buy Now ]. ")
    'click buy now'
    """
    text = _LABEL.sub("", text)
    return _WS.sub(" ", _PUNCT.sub(" ", text)).strip().lower()


def is_template(action: str) -> bool:
    """Whether an admissible entry is a template with ``<placeholder>`` parts."""
    return _PLACEHOLDER.search(action) is not None


def _template_regex(template: str) -> re.Pattern[str]:
    pat = _TEMPLATE_CACHE.get(template)
    if pat is None:
        parts = _PLACEHOLDER.split(template)
        lits = []
        for lit in parts:
            out = []
            for c in lit:
                if c.isspace():
                    out.append(r"\s*")
                elif c in string.punctuation:
                    out.append(r"\s*" + re.escape(c) + r"\s*")
                else:
                    out.append(re.escape(c))
            lits.append("".join(out))
        pat = re.compile(r"^\s*" + "(.+?)".join(lits) + r"\s*$", re.IGNORECASE | re.DOTALL)
        if len(_TEMPLATE_CACHE) < 1024:
            _TEMPLATE_CACHE[template] = pat
    return pat


def match_template(text: str, template: str) -> str | None:
    """``template`` filled with what ``text`` puts in its placeholders (case/spacing of the fixed
    parts are loose), or ``None``.

    >>> match_template("Search [ red shoes ]", "search[<query>]")
    'search[red shoes]'
    """
    m = _template_regex(template).match(text)
    if m is None:
        return None
    fills = [g.strip() for g in m.groups()]
    return fill_template(template, fills) if all(fills) else None


def fill_template(template: str, values: Sequence[str]) -> str:
    """``template`` with its placeholders replaced, in order, by ``values``.

    >>> fill_template("search[<query>]", ["red shoes"])
    'search[red shoes]'
    """
    it = iter(values)
    return _PLACEHOLDER.sub(lambda _: next(it), template)


def project_action(text: str, admissible: Sequence[str]) -> str | None:
    """The admissible action ``text`` names: exact match, else a *unique* normalized match, else
    the first template it fills (:func:`match_template`).

    Two admissible actions with the same normalized form make a loose match ambiguous: ``None``.

    >>> project_action("GO  North!", ["go north", "go south"])
    'go north'
    >>> project_action("go", ["go north", "go south"]) is None
    True
    >>> project_action("search[usb cable]", ["search[<query>]", "click[Next >]"])
    'search[usb cable]'
    """
    if text in admissible and not is_template(text):
        return text
    key = normalize_action(text)
    if not key:
        return None
    hits = {a for a in admissible if not is_template(a) and normalize_action(a) == key}
    if len(hits) == 1:
        return hits.pop()
    if hits:
        return None
    for a in admissible:
        if is_template(a):
            filled = match_template(text, a)
            if filled is not None:
                return filled
    return None


class ActionProjection(gym.Wrapper[str, str, str, str]):
    """Map free text to an admissible action before the env sees it.

    ``step(text)`` extracts the action (:func:`extract_action`) and projects it on the current
    ``info["admissible_actions"]`` (:func:`project_action`). A match is passed to the env; no match
    passes the extracted text on, which the env contract makes a no-op with
    ``action_valid=False``. When ``admissible_actions`` is ``None`` (an unbounded action set) the
    extracted text is passed through. A non-``str`` action is passed on unchanged (the env rejects
    it as a no-op).

    ``info`` gains ``raw_action`` (the text given to ``step``) and ``projected_action`` (what the
    env received); ``info["action_valid"]`` is ``False`` when the env rejected the action. Text that
    matched no admissible action is still passed on, and an env may accept it by its own parsing
    (Household reads ``put X in Y`` as ``put X in/on Y``): the step then took effect and the env's
    ``action_valid`` stands; only an env that does not report ``action_valid`` gets ``False`` for
    unmatched text. ``invalid_action_penalty`` (e.g. ``-0.1``; default 0) is **added** to the reward
    of every step whose ``action_valid`` is ``False``.

    >>> import gymnasium as gym, agentgym_credit
    >>> env = ActionProjection(gym.make("credit/GridWorld-v0"), invalid_action_penalty=-0.1)
    >>> _, info = env.reset(seed=0)
    >>> first = info["admissible_actions"][0]
    >>> _, r, *_, info = env.step("I should move.\\n<action>" + first.upper() + "</action>")
    >>> info["action_valid"], info["projected_action"] == first
    (True, True)
    >>> _, r, *_, info = env.step("fly to the moon")
    >>> info["action_valid"], r
    (False, -0.1)
    """

    def __init__(self, env: gym.Env, invalid_action_penalty: float = 0.0):
        super().__init__(env)
        self.invalid_action_penalty = float(invalid_action_penalty)
        self._admissible: list[str] | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self._admissible = info.get("admissible_actions")
        return obs, info

    def project(self, action: Any) -> tuple[Any, bool]:
        """``(what the env receives, whether it matched an admissible action)``."""
        if not isinstance(action, str):
            return action, False
        text = extract_action(action)
        if self._admissible is None:
            return text, True
        hit = project_action(text, self._admissible)
        return (text, False) if hit is None else (hit, True)

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        sent, matched = self.project(action)
        obs, reward, terminated, truncated, info = self.env.step(sent)
        # the env knows whether it applied the action; without its word, unmatched text is invalid
        valid = bool(info.get("action_valid", matched))
        info["raw_action"] = action
        info["projected_action"] = sent
        info["action_valid"] = valid
        if not valid:
            reward = float(reward) + self.invalid_action_penalty
        self._admissible = info.get("admissible_actions")
        return obs, reward, terminated, truncated, info


__all__ = ["ActionProjection", "extract_action", "normalize_action", "project_action", "is_template", "match_template",
           "fill_template"]
