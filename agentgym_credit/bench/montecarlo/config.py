"""Configuration of ``bench credit_real``: the envs, the behaviour policies and :class:`RealConfig` (sizes).

Below the entry point (:mod:`.credit_real`) and its report (:mod:`.credit_real_report`), which both read it, so
the report never imports back from the module that runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentgym_credit.bench.stats.report import check_known
from agentgym_credit.truth.experts import ALFWorldExpertFactory, WebShopExpertFactory
from agentgym_credit.truth.policies import EpsilonExpert, ScorerSoftmax, SnapshotPolicy


@dataclass(frozen=True)
class EnvSpec:
    """An env of the bench: factory, the tasks its groups play (cycled), the step limit."""

    name: str
    what: str
    factory: Callable[[], Any]
    tasks: tuple[Any, ...]
    max_steps: int


def dev_available() -> bool:
    """Whether the real ALFWorld dev games are on disk (``alfworld-dev`` is skipped without them)."""
    from agentgym_credit.envs.alfworld.games import dev_data_dir

    return dev_data_dir() is not None


DEV_GAMES = 19
"""Playable real ALFWorld dev games (tasks 0-18): ALFWorld's own filter keeps 19 of the 24 dev trials on disk
(:func:`~agentgym_credit.envs.alfworld.games.find_real_games`). Task 19 is out of range: a list of 24 made every
group on tasks 19-23 fail at reset."""


ENVS: dict[str, EnvSpec] = {
    e.name: e for e in (
        EnvSpec("alfworld-gen", "ALFWorld, generated games: one of each of the six task types (games 0-5), then 6-11",
                ALFWorldExpertFactory(), tuple(range(12)), 50),
        EnvSpec("alfworld-dev", "ALFWorld, the real dev games (../shared/data/alfworld/dev)",
                ALFWorldExpertFactory((("source", "dev"),)), tuple(range(DEV_GAMES)), 50),
        EnvSpec("webshop", "WebShop, generated 1k-product catalogue, train goals",
                WebShopExpertFactory(1000), tuple(range(64)), 15),
    )
}

POLICIES: dict[str, SnapshotPolicy] = {
    p.name: p for p in (EpsilonExpert(0.3), ScorerSoftmax(expert_bonus=2.0, overlap_weight=2.0, temperature=1.0))
}
"""Behaviour policies: ε-expert (ε = 0.3) and a softmax over a fixed scorer (expert bonus 2, goal-word overlap 2)."""


@dataclass
class RealConfig:
    """What :func:`run` runs (the full run's sizes; :meth:`quick_config` for ``--quick``)."""

    envs: tuple[str, ...] = ("alfworld-gen", "alfworld-dev", "webshop")
    policies: tuple[str, ...] = tuple(POLICIES)
    sizes: tuple[int, ...] = (4, 8)
    groups: dict[str, int] = field(default_factory=lambda: {"alfworld-gen": 8, "alfworld-dev": 8, "webshop": 24})
    scored: dict[str, int] = field(default_factory=lambda: {"alfworld-gen": 36, "alfworld-dev": 36, "webshop": 120})
    k: int = 6
    k_rest: int = 6
    top: int = 1
    gamma: float = 0.95
    history_depth: int = 3
    pairs: int = 10
    backend: str = "subprocess"
    workers: int = 2
    slots: dict[str, int] = field(default_factory=lambda: {"alfworld-gen": 8, "alfworld-dev": 8, "webshop": 32})
    seed: int = 0
    bootstrap: int = 400
    synthetic_rows: int = 80
    synthetic_tasks: tuple[str, ...] = ("credit/GridWorld-v0", "credit/AliasedGrid-v0", "credit/Household-v0")
    quick: bool = False
    progress: bool = True
    command: str = "agentgym-credit bench credit_real"

    @classmethod
    def quick_config(cls, **kw: Any) -> RealConfig:
        base: dict[str, Any] = dict(
            envs=("alfworld-gen", "webshop"), policies=("eps-expert(0.3)",), sizes=(2, 4),
            groups={"alfworld-gen": 2, "webshop": 4}, scored={"alfworld-gen": 6, "webshop": 12}, k=3, k_rest=2,
            backend="sync", workers=1, bootstrap=100, synthetic_rows=30, pairs=3,
            synthetic_tasks=("credit/GridWorld-v0",), quick=True)
        base.update(kw)
        return cls(**base)

    def validate(self) -> None:
        check_known("env", self.envs, sorted(ENVS))
        check_known("policy", self.policies, sorted(POLICIES))
        if not self.sizes or min(self.sizes) < 2:
            raise ValueError(f"sizes must be >= 2, got {self.sizes}")


__all__ = ["EnvSpec", "ENVS", "POLICIES", "RealConfig", "dev_available"]
