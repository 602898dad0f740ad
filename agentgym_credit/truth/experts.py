"""Envs whose ``info`` carries what the behaviour policies of :mod:`.policies` read, rebuilt on restore.

What lives here:

- :class:`WebShopExpertEnv` — :class:`~agentgym_credit.envs.webshop.env.WebShopEnv` that adds to ``info``
  (on reset, step *and* ``set_state``) ``expert_action`` (the scripted expert's next action, in a
  Markov form), ``goal`` (the instruction) and ``candidate_actions`` (concrete actions: the search
  bar's ``search[<query>]`` becomes three searches);
- :class:`WebShopExpertFactory`, :class:`ALFWorldExpertFactory` — picklable zero-argument factories
  (what the collector and the subprocess/Ray backends send to workers).

**The WebShop expert's memory, made Markov.** :class:`~agentgym_credit.envs.webshop.expert.ExpertPolicy`
keeps one bit: "the instruction search failed, search the product title next". Here the bit is a
function of the snapshot: on the search page at env step ``t > 0`` (the expert only comes back to the
search page after a search that failed) it searches the title. The env's step count is in its
snapshot, so the expert's action after ``set_state`` is the one it had before. (ALFWorld's expert is
already a function of the engine's facts, which its snapshot holds: ``ALFWorldEnv(expert=True)``.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentgym_credit.envs.webshop.env import SEARCH_MARKER, WebShopEnv
from agentgym_credit.envs.webshop.expert import ExpertPolicy


class WebShopExpertEnv(WebShopEnv):
    """WebShop with ``expert_action``, ``goal`` and ``candidate_actions`` in ``info`` (module docstring)."""

    def _hint(self, info: dict[str, Any]) -> dict[str, Any]:
        goal = self.goal["instruction_text"]
        info["goal"] = goal
        if self._page_kind == "done":
            info["expert_action"] = None
            info["candidate_actions"] = []
            return info
        expert = ExpertPolicy()
        expert._searched_title = self._page_kind == "search" and self._t > 0  # the Markov form of its bit
        info["expert_action"] = expert.act(self)
        cands = [a for a in info["admissible_actions"] if a != SEARCH_MARKER]
        if SEARCH_MARKER in info["admissible_actions"]:
            title = self.catalog.by_asin[self.goal["asin"]]["Title"]
            words = goal.split()
            cands = [f"search[{goal}]", f"search[{title}]", f"search[{' '.join(words[:4])}]"] + cands
        info["candidate_actions"] = list(dict.fromkeys(cands))
        return info

    def _observe(self, reward_info: dict[str, Any] | None, valid: bool = True) -> tuple[str, dict[str, Any]]:
        obs, info = super()._observe(reward_info, valid)
        return obs, self._hint(info)

    def _restore_snapshot(self, payload: Any) -> tuple[str, dict[str, Any]]:
        obs, info = super()._restore_snapshot(payload)
        return obs, self._hint(dict(info))


@dataclass(frozen=True)
class WebShopExpertFactory:
    """``WebShopExpertEnv(num_products, split=split, cache_dir=cache_dir)`` (picklable)."""

    num_products: int = 1000
    split: str = "train"
    cache_dir: Any = None
    max_steps: int = 15

    def __call__(self) -> WebShopExpertEnv:
        return WebShopExpertEnv(self.num_products, split=self.split, cache_dir=self.cache_dir,
                                max_steps=self.max_steps)


@dataclass(frozen=True)
class ALFWorldExpertFactory:
    """``gym.make("credit/ALFWorld-v0", expert=True, **kwargs)`` (picklable); ``kwargs`` as sorted pairs."""

    kwargs: tuple[tuple[str, Any], ...] = ()

    def __call__(self) -> Any:
        import gymnasium as gym

        import agentgym_credit  # noqa: F401  (registers credit/* in a fresh process)

        return gym.make("credit/ALFWorld-v0", expert=True, **dict(self.kwargs))


__all__ = ["WebShopExpertEnv", "WebShopExpertFactory", "ALFWorldExpertFactory"]
