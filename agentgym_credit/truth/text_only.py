"""Behaviour policies that act on what the agent sees: the observation text, the task text and the step count.

The behaviour policies of :mod:`.policies` read the env's true state or its scripted expert
(``info["expert_action"]``, the PDDL planner on ALFWorld), so they are close to Markov in the *true* state,
which favours estimators keyed on ``state_key``. An agent in training sees text only. What lives here:

- :func:`visible_info` — the part of a step's ``info`` an agent sees: the admissible commands, the task
  text (``goal``: ALFWorld's "Your task is to: …" line of the first observation, WebShop's instruction shown
  on every page) and the step count (``history_t``). Nothing else: no ``state_key``, ``obs_key``,
  ``history_keys``, ``expert_action``, ``state_index`` or ``task_id``. WebShop's search bar
  (``search[<query>]``) becomes searches written from the task text alone (the expert env's
  ``candidate_actions`` also search the target product's title, which the agent never sees, so they are not
  used);
- :class:`ObservationOnly` — wraps any :class:`~agentgym_credit.truth.policies.SnapshotPolicy` so that it
  is called with ``(obs, visible_info(info))`` only: whatever the wrapped policy would read, it cannot read
  the state or the expert. It is still a function of what a restored snapshot gives back (the
  observation, the task and t are rebuilt on restore), so Monte-Carlo truth can follow it;
- :data:`TEXT_ONLY` — the named text-only behaviour policies of the benchmarks.

>>> pi = TEXT_ONLY["text-overlap(T=0.5)"]
>>> info = {"admissible_actions": ["go to desk 1", "take apple 1"], "expert_action": "go to desk 1",
...         "goal": "put an apple in the fridge", "state_key": "s1", "history_t": 3}
>>> acts, p = pi.distribution("You see an apple 1.", info)
>>> acts, bool(p[1] > p[0])
(['go to desk 1', 'take apple 1'], True)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.envs.webshop.env import SEARCH_MARKER
from agentgym_credit.truth.policies import ScorerSoftmax, SnapshotPolicy, candidate_actions
from agentgym_credit.truth.text_policy import TextPolicy, _context_level, _words

VISIBLE = ("admissible_actions", "goal", "history_t")
"""The ``info`` keys a text-only policy sees (:func:`visible_info`)."""


_FILLER = frozenset({"i", "want", "need", "am", "looking", "for", "to", "buy", "purchase", "a", "an", "the", "and",
                     "it", "has", "be", "with", "that", "is", "of", "in", "find", "me", "some", "get", "would", "like"})


def goal_searches(goal: str) -> list[str]:
    """The searches a text-only agent types: the whole task text, and its first eight words that are not filler
    ("i want to buy …")."""
    words = goal.split()
    keys = [w for w in words if w.lower().strip(",.") not in _FILLER][:8]
    return list(dict.fromkeys(s for s in (f"search[{goal}]", f"search[{' '.join(keys)}]") if words))


def visible_info(info: Mapping[str, Any]) -> dict[str, Any]:
    """What an agent sees of a step's ``info`` (module docstring): a new dict with the :data:`VISIBLE` keys only.

    >>> visible_info({"admissible_actions": ["search[<query>]"], "goal": "i want red shoes, size 9",
    ...               "expert_action": "search[red shoes]", "state_key": "x", "history_t": 0})["admissible_actions"]
    ['search[i want red shoes, size 9]', 'search[red shoes, size 9]']
    """
    goal = str(info.get("goal") or "")
    acts: list[str] = []
    for a in info.get("admissible_actions") or ():
        acts.extend(goal_searches(goal) if a == SEARCH_MARKER else [str(a)])
    return {"admissible_actions": acts, "goal": goal, "history_t": int(info.get("history_t", 0) or 0)}


class ObservationOnly:
    """``policy`` called with the observation and :func:`visible_info` only (module docstring).

    ``name`` defaults to ``"text-only:" + policy.name``.
    """

    def __init__(self, policy: SnapshotPolicy, name: str | None = None):
        self.policy = policy
        self.name = name or f"text-only:{policy.name}"

    def distribution(self, obs: str, info: Mapping[str, Any]) -> tuple[list[str], np.ndarray]:
        return self.policy.distribution(str(obs), visible_info(info))

    def __repr__(self) -> str:
        return f"ObservationOnly({self.policy!r})"


class TextScorer:
    """A fixed softmax over a text score, for a policy wrapped in :class:`ObservationOnly` (stated, not learned):

    ``score(a) = overlap·|words(a) ∩ words(goal)| / |words(a)| + context·m(obs, a, goal) + commands[a]``

    with ``m`` the number of goal words (up to 3) in the observation's text right after the command's argument
    (a WebShop result's title and price; 0 when the argument is not in the observation) and ``commands`` a
    bonus per command text (``click[buy now]``) or first word (``look``, ``inventory``, ``examine``), plus
    ``per_step[a]·t`` (t = ``info["history_t"]``: an agent that knows how many steps it has taken commits,
    e.g. buys, more readily later; WebShop's item page does not show the options already chosen), at
    ``temperature``. With ``explore=True`` (ALFWorld) a ``go to …`` command earns its goal overlap only while
    the agent holds something (some admissible command starts with ``put``), so it walks at random until it
    has picked an object up and then heads for the receptacle the task names. Reads ``info["goal"]``,
    ``info["history_t"]`` and the candidate commands only.
    """

    def __init__(self, overlap: float = 4.0, context: float = 1.0, commands: Mapping[str, float] | None = None,
                 temperature: float = 0.5, per_step: Mapping[str, float] | None = None, explore: bool = False,
                 name: str = "text-scorer"):
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.overlap, self.context, self.temperature = float(overlap), float(context), float(temperature)
        self.commands, self.per_step, self.explore = dict(commands or {}), dict(per_step or {}), bool(explore)
        self.name = name

    def distribution(self, obs: str, info: Mapping[str, Any]) -> tuple[list[str], np.ndarray]:
        acts = candidate_actions(info)
        goal = {w for w in _words(str(info.get("goal", ""))) if w != "#"}
        t = int(info.get("history_t", 0) or 0)
        holding = any(a.lower().startswith("put ") for a in acts)
        score = np.empty(len(acts))
        for i, a in enumerate(acts):
            w = set(_words(a))
            lvl = _context_level(obs, a, goal)
            low = a.lower().strip()
            walk = self.explore and low.startswith("go to ") and not holding
            score[i] = (self.overlap * (len(w & goal) / len(w) if w and not walk else 0.0)
                        + self.context * (0 if lvl == "-" else int(lvl.rstrip("+")))
                        + self.commands.get(low, self.commands.get(low.split(" ")[0] if low else "", 0.0))
                        + self.per_step.get(low, 0.0) * t)
        z = np.exp((score - score.max()) / self.temperature)
        return acts, z / z.sum()

    def __repr__(self) -> str:
        return (f"TextScorer(overlap={self.overlap}, context={self.context}, commands={self.commands}, "
                f"per_step={self.per_step}, explore={self.explore}, temperature={self.temperature})")


IMITATION_FILE = Path(__file__).with_name("checkpoints") / "text-imitation-alfworld.npz"
"""The committed checkpoint of ``text-imitation-alfworld``: a :class:`~agentgym_credit.truth.text_policy.TextPolicy`
(no expert bonus; learned parts ``linear`` and ``scene``) that imitated the expert on the dev games 0-11
(``agentgym-credit bench text_imitation --out`` rebuilds it from its seed)."""


IMITATION_TEMPERATURE = 3.0
"""The temperature of the named ``text-imitation-alfworld``: the one of T = 1, 2, 3, 4 whose groups of 8 would
most often have mixed outcomes, from the per-game win rates measured on the 19 dev games (4 rollouts each;
T = 1 wins every training game 0-11 nearly always and no other, so its groups rarely mix). Chosen before any
truth ran, on reward variance alone, not on any estimator's accuracy."""


class SavedTextPolicy:
    """A :class:`~agentgym_credit.truth.text_policy.TextPolicy` read from ``path`` on first use (pickled as its
    path, so a worker reads it itself), its distribution at ``temperature`` (π^(1/T), renormalised). A missing
    or bad file is a
    :class:`~agentgym_credit.errors.PolicyFileError` at that first use."""

    def __init__(self, path: str | Path, name: str, temperature: float = 1.0):
        if not (np.isfinite(temperature) and temperature > 0):
            raise ValueError(f"temperature must be a finite number > 0, got {temperature}")
        self.path, self.name, self.temperature = Path(path), str(name), float(temperature)
        self._policy: TextPolicy | None = None
        self.meta: dict[str, Any] = {}

    def load(self) -> TextPolicy:
        if self._policy is None:
            self._policy, self.meta = TextPolicy.load(self.path)
        return self._policy

    def distribution(self, obs: str, info: Mapping[str, Any]) -> tuple[list[str], np.ndarray]:
        acts, p = self.load().distribution(obs, info)
        if self.temperature != 1.0 and len(p):
            z = np.log(np.maximum(p, 1e-300)) / self.temperature
            p = np.exp(z - z.max())
            p = p / p.sum()
        return acts, p

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_policy": None, "meta": {}}

    def __repr__(self) -> str:
        return f"SavedTextPolicy({str(self.path.name)!r}, temperature={self.temperature:g})"


def imitation_policy(path: str | Path = IMITATION_FILE, temperature: float = 1.0) -> ObservationOnly:
    """The checkpoint at ``path`` at ``temperature``, seeing text only, named ``text-imitation-alfworld``."""
    return ObservationOnly(SavedTextPolicy(path, "text-imitation-alfworld", temperature),
                           name="text-imitation-alfworld")


def text_overlap(temperature: float, overlap_weight: float = 4.0) -> ObservationOnly:
    """A softmax over the goal-word overlap of each admissible command (no expert bonus), seeing text only."""
    return ObservationOnly(ScorerSoftmax(expert_bonus=0.0, overlap_weight=overlap_weight, temperature=temperature),
                           name=f"text-overlap(T={temperature:g})")


TEXT_ONLY: dict[str, ObservationOnly] = {p.name: p for p in (
    text_overlap(0.5),
    ObservationOnly(TextScorer(4.0, 1.0, {"look": -1.0, "inventory": -1.0, "examine": -1.0}, 1.0, explore=True),
                    name="text-scorer-alfworld"),
    ObservationOnly(TextScorer(4.0, 1.0, {"click[buy now]": 2.0, "click[next >]": -1.0, "click[< prev]": -2.0}, 1.0,
                               per_step={"click[buy now]": 0.5}), name="text-scorer-webshop"),
    imitation_policy(temperature=IMITATION_TEMPERATURE),
)}
"""Named text-only behaviour policies. The two ``text-scorer-*`` weights were set by hand on the exploration
games (ALFWorld generated games 0-5, WebShop train goals 0-23, 4 rollouts each), never on the games a study
reports: WebShop 11% full successes (partial rewards in most episodes), 5.9 steps; ALFWorld 4% successes in
50 steps — a text-only rule without the expert rarely finishes an ALFWorld task. ``text-imitation-alfworld``
is learned (:data:`IMITATION_FILE`)."""

__all__ = ["VISIBLE", "visible_info", "goal_searches", "ObservationOnly", "text_overlap", "TEXT_ONLY",
           "IMITATION_FILE", "IMITATION_TEMPERATURE", "SavedTextPolicy", "imitation_policy"]
