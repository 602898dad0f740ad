"""Configuration of ``bench train_real``: the envs, the arms, :class:`RealTrainConfig` (sizes) and
:class:`RealResult`. Below the entry point (:mod:`.train_real`) and its report (:mod:`.train_real_report`),
which both read it, so the report never imports back from the module that runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.bench.learning.matched_step import REFERENCES, STEPS, is_reference
from agentgym_credit.bench.learning.train_tabular import SCALES
from agentgym_credit.bench.stats.report import check_known
from agentgym_credit.truth.experts import ALFWorldExpertFactory, WebShopExpertFactory
from agentgym_credit.truth.text_policy import DEFAULT_PARTS


@dataclass(frozen=True)
class RealEnv:
    """One env of the benchmark: a picklable factory, the episode limit, and per phase the pool training
    instances are drawn from and the fixed evaluation instances (index ranges ``(lo, hi)``)."""

    name: str
    describe: str
    factory: Callable[[], Any]
    max_steps: int
    train_pool: dict[str, tuple[int, int]]
    eval_tasks: dict[str, tuple[int, int]]


REAL_ENVS: dict[str, RealEnv] = {e.name: e for e in (
    RealEnv("webshop", "WebShop, generated 1k-product catalogue, train goals (500), 15 steps",
            WebShopExpertFactory(1000), 15,
            {"exploration": (0, 200), "confirmation": (300, 450)},
            {"exploration": (200, 300), "confirmation": (450, 500)}),
    RealEnv("alfworld-gen", "ALFWorld, generated games (all six task types), 50 steps",
            ALFWorldExpertFactory(), 50,
            {"exploration": (0, 5000), "confirmation": (20_000, 25_000)},
            {"exploration": (50_000, 50_100), "confirmation": (60_000, 60_100)}),
    RealEnv("alfworld-dev", "ALFWorld, the real dev games (../shared/data/alfworld/dev, 19): train 0-11, held out 12-18",
            ALFWorldExpertFactory((("source", "dev"),)), 50,
            {"exploration": (0, 12), "confirmation": (0, 12)},
            {"exploration": (12, 19), "confirmation": (12, 19)}),
)}
"""The envs; ``alfworld-dev`` has 19 games, so its confirmation phase reuses them (no fresh instances)."""

ARMS: dict[str, tuple[str, dict[str, Any]]] = {
    "grpo": ("grpo", {}),
    "gigpo[state]": ("gigpo", {"anchor": "state_key"}),
    "verl-agent": ("verl-agent", {}),            # GiGPO on observations, as verl-agent computes it
    "hgpo-official": ("hgpo-official", {}),
    "graph[state]": ("graph", {"key": "state_key"}),
    "graph[obs]": ("graph", {"key": "obs_key"}),  # the default graph estimator on agent-visible keys
    "graphgpo": ("graphgpo", {}),
}
"""Label -> (registered estimator, options); γ is the benchmark's where the estimator takes one."""

PHASES = ("exploration", "confirmation")

POLICIES = ("text", "neural")
"""``text``: :class:`~agentgym_credit.truth.text_policy.TextPolicy` (numpy); ``neural``:
:class:`~agentgym_credit.bench.learning.neural_policy.NeuralTextPolicy` (torch, CPU)."""


def check_names(envs: tuple[str, ...], arms: tuple[str, ...], dilute: bool = True) -> None:
    """``ValueError`` naming the first env not in :data:`REAL_ENVS` or arm not in :data:`ARMS`,
    :data:`REFERENCES` or (``dilute``) ``grpo-dilute[q]``."""
    check_known("env", envs, sorted(REAL_ENVS))
    for a in arms:
        if a not in ARMS and a not in REFERENCES and not (dilute and is_reference(a)):
            raise ValueError(f"unknown arm {a!r}; choose from {[*ARMS, *REFERENCES, 'grpo-dilute[q]']}")

REWARDS = ("verl-agent", "env")
"""What the advantages are computed from: ``"verl-agent"`` (10 at the step that wins, else 0: what
verl-agent trains ALFWorld and WebShop on; WebShop wins only with a score of exactly 1) or ``"env"`` (the
env's own reward: on WebShop the partial score of any purchase; on ALFWorld the same as verl-agent's, the
candidates being admissible)."""


@dataclass
class RealTrainConfig:
    """Sizes of one study (see the module docstring)."""

    envs: tuple[str, ...] = ("webshop",)
    arms: tuple[str, ...] = tuple(ARMS)
    phase: str = "exploration"
    seeds: int = 10
    seed_base: int = 0
    sweep_seeds: int = 2
    lrs: tuple[float, ...] = (0.1, 0.3, 1.0)
    budget_steps: int = 30_000
    groups: int = 8
    group_size: int = 8
    train_tasks: int = 64
    eval_rollouts: int = 2
    eval_limit: int | None = None  # at most this many held-out instances (smoke tests); None: the phase's all
    train_eval_rollouts: int = 2   # fixed sampled episodes per training instance at each checkpoint (0: none)
    checkpoints: int = 6
    expert_bonus: float = 1.5
    overlap_weight: float = 2.0
    parts: tuple[str, ...] = DEFAULT_PARTS
    buckets: int = 1 << 16
    adv_scale: str = "rms"
    reward: str = "verl-agent"  # see REWARDS
    gamma: float = 0.95
    history_depth: int = 3
    jobs: int = 1
    ray: str | None = None
    save_policies: bool = True
    out: Path = Path("benchmarks/learning")
    name: str = "training_real"
    progress: bool = True
    command: str = "agentgym-credit bench train_real"
    target: dict[str, float] = field(default_factory=dict)  # env -> success to reach (``target_measure``)
    target_measure: str = "success"  # "success" (held-out) or "success_trained" (fixed training-instance episodes)
    primary: tuple[str, ...] = ()                        # "a:b" pairs, the primary family (per env)
    primary_measure: str = "steps"  # "steps" (to target) or a per-run summary: auc_trained, final_trained, auc, final
    pick_measure: str = "success"   # what the lr sweep maximizes (mean over checkpoints): held-out "success" or
    #                                 "success_trained" (the fixed training-instance episodes)
    predictions: Path | None = None
    policy: str = "text"            # see POLICIES
    step: str = "rms"               # "rms": lrs are rates; "kl": lrs are the mean KL(π_old‖π_new) per update
    min_updates: int = 0            # run at least this many updates even past budget_steps

    def validate(self) -> None:
        check_names(self.envs, self.arms)
        if self.phase not in PHASES:
            raise ValueError(f"phase must be one of {PHASES}, got {self.phase!r}")
        if self.train_eval_rollouts < 0:
            raise ValueError("train_eval_rollouts must be >= 0")
        for k in ("seeds", "groups", "train_tasks", "eval_rollouts", "checkpoints", "jobs", "budget_steps"):
            if getattr(self, k) < 1:
                raise ValueError(f"{k} must be >= 1")
        if self.sweep_seeds < 0 or self.seed_base < 0:
            raise ValueError("sweep_seeds and seed_base must be >= 0")
        if self.group_size < 2:
            raise ValueError("group_size must be >= 2 (group baselines need two rollouts)")
        if not self.lrs or min(self.lrs) <= 0:
            raise ValueError(f"lrs must be positive, got {self.lrs}")
        if self.target_measure not in ("success", "success_trained"):
            raise ValueError(f"target_measure must be 'success' or 'success_trained', got {self.target_measure!r}")
        if self.reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {self.reward!r}")
        if self.pick_measure not in ("success", "success_trained"):
            raise ValueError(f"pick_measure must be 'success' or 'success_trained', got {self.pick_measure!r}")
        if self.pick_measure == "success_trained" and not self.train_eval_rollouts:
            raise ValueError("pick_measure 'success_trained' needs train_eval_rollouts >= 1")
        if self.primary_measure not in ("steps", "auc_trained", "final_trained", "auc", "final"):
            raise ValueError(f"primary_measure must be steps, auc_trained, final_trained, auc or final, "
                             f"got {self.primary_measure!r}")
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {self.policy!r}")
        if self.step not in STEPS:
            raise ValueError(f"step must be one of {STEPS}, got {self.step!r}")
        if self.min_updates < 0:
            raise ValueError("min_updates must be >= 0")
        if self.adv_scale not in SCALES:
            raise ValueError(f"adv_scale must be one of {SCALES}, got {self.adv_scale!r}")
        for p in self.primary:
            a, _, b = p.partition(":")
            if a not in self.arms or b not in self.arms:
                raise ValueError(f"primary comparison {p!r} must be 'arm:arm' of arms run")
        for e in self.envs:
            lo, hi = REAL_ENVS[e].train_pool[self.phase]
            if hi - lo < self.groups:
                raise ValueError(f"{e}: {hi - lo} training instances, fewer than groups = {self.groups}")

    def checkpoint_steps(self) -> np.ndarray:
        """The env-step grid curves are compared on: 0, budget/checkpoints, ..., budget."""
        return np.linspace(0, self.budget_steps, self.checkpoints + 1).round().astype(np.int64)


@dataclass
class RealResult:
    rows: list[dict[str, Any]] = field(default_factory=list)   # fresh-seed runs, one row per checkpoint
    sweep: list[dict[str, Any]] = field(default_factory=list)  # one row per (env, arm, lr, sweep seed)
    picked: dict[str, float] = field(default_factory=dict)     # "env|arm" -> learning rate
    seconds: float = 0.0
    load: tuple[float, float] = (float("nan"), float("nan"))


__all__ = ["RealEnv", "REAL_ENVS", "ARMS", "PHASES", "POLICIES", "REFERENCES", "check_names", "REWARDS", "RealTrainConfig", "RealResult"]
