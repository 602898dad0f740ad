"""Presets named after their source: an estimator with the settings of a published recipe.

What lives here:

- :class:`Preset` and :data:`PRESETS`: name -> (registered estimator, options, source, what differs);
- :func:`preset_options`: a preset's options (``advantages(p.estimator, steps, **preset_options(name))``);
- :func:`hgpo_official`: HGPO with the authors' recipe, registered as ``"hgpo-official"``.

**hgpo-official** follows the HGPO authors' public code (the anonymous ICLR-submission repository
``CazeroZ/hgpo``, commit ``aa64927``: ``hgpo/core_hgpo.py`` and ``examples/gigpo_trainer/run_alfworld.sh``):

- step returns R_t = sum_k gamma^k r_{t+k} with ``algorithm.gamma=0.95`` (its
  ``compute_step_discounted_returns``);
- normalization ``mode="mean_std_norm"`` (the run script's ``algorithm.gigpo.mode``, which the
  trainer passes to HGPO) with the **population** std (``np.std``, ddof = 0) and eps = 1e-6;
  our ``hgpo`` defaults to the sample std (ddof = 1, as ``torch.std`` elsewhere);
- level weights: a level-l group (rows of one ``uid`` group with the same current observation and
  the same l previous observations) enters with weight ``len(history) + 1 = l + 1`` (alpha = 1),
  renormalized over the levels whose advantage is nonzero — our ``weights="paper"``, (k+1)^alpha.
  (``weights="reference"``, (k+2)^alpha, recorded in DESIGN.md as the public code's, is not what
  this commit computes.)
- levels 0..``env.history_length`` = 4 of **observation** history: collect with
  ``history_depth=4`` and ``HistoryFingerprint(key="obs_key")`` (or rebuild ``history_keys`` over
  ``obs_key``) to match it; the preset uses every level ``history_keys`` holds;
- no episode term (HGPO returns the step advantage alone), own return kept in the group mean.

The code's ``algorithm.hgpo.weight_type``/``type`` options are read but not used by its HGPO; the
invalid-action penalty of its run script acts in the actor, not in this advantage.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentgym_credit.credit.hierarchy import hgpo
from agentgym_credit.credit.steps import StepArrays


@dataclass(frozen=True)
class Preset:
    """A named recipe: the registered ``estimator`` and its ``options``, where they come from and
    how they differ from that estimator's defaults."""

    name: str
    estimator: str
    options: tuple[tuple[str, object], ...]
    source: str
    differs: str


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("hgpo-official", "hgpo",
               (("gamma", 0.95), ("norm", "mean_std"), ("std", "population"), ("eps", 1e-6), ("weights", "paper"),
                ("alpha", 1.0), ("episode", False), ("loo", False)),
               "HGPO authors' code, CazeroZ/hgpo@aa64927 (hgpo/core_hgpo.py, examples/gigpo_trainer/run_alfworld.sh)",
               "population std (hgpo's default is the sample std); levels over observation history, K = 4"),
    )
}
"""Presets by name (the verl-agent GiGPO preset is the registered estimator ``"verl-agent"``)."""


def preset_options(name: str) -> dict[str, object]:
    """The options of preset ``name`` for its estimator (a new dict)."""
    try:
        return dict(PRESETS[name].options)
    except KeyError:
        raise KeyError(f"unknown preset {name!r}; presets: {', '.join(sorted(PRESETS))}") from None


def hgpo_official(steps: StepArrays, *, gamma: float = 0.95, std: str = "population", eps: float = 1e-6,
                  alpha: float = 1.0, depth: int | None = None) -> np.ndarray:
    """HGPO with the authors' recipe (module docstring), per row (float64, input order)."""
    return hgpo(steps, gamma=gamma, norm="mean_std", std=std, eps=eps, weights="paper", alpha=alpha, depth=depth,
                episode=False, loo=False)


__all__ = ["Preset", "PRESETS", "preset_options", "hgpo_official"]
