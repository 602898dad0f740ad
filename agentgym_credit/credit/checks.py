"""Validation of estimator options, with messages that say what is accepted.

- :func:`choice`: a string option among a fixed set;
- :func:`unit_interval`: a discount or lambda in [0, 1];
- :func:`finite` / :func:`positive`: plain numeric options;
- :func:`as_steps`: the ``steps`` argument must be a :class:`StepArrays`.
"""

from __future__ import annotations

import math

from agentgym_credit.credit.steps import StepArrays


def choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    """``value`` if it is one of ``allowed``, else ``ValueError``."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def unit_interval(name: str, value: float) -> float:
    """``value`` as float if 0 <= value <= 1."""
    v = float(value)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1]; got {value!r}")
    return v


def finite(name: str, value: float) -> float:
    """``value`` as a finite float."""
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite; got {value!r}")
    return v


def positive(name: str, value: float, allow_zero: bool = False) -> float:
    """``value`` as a finite float > 0 (or >= 0 with ``allow_zero``)."""
    v = finite(name, value)
    if v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}; got {value!r}")
    return v


def as_steps(steps: object) -> StepArrays:
    """``steps`` itself if it is a :class:`StepArrays`, else ``TypeError``."""
    if not isinstance(steps, StepArrays):
        raise TypeError(f"steps must be a StepArrays (see agentgym_credit.credit.StepArrays), got "
                        f"{type(steps).__name__}")
    return steps


__all__ = ["choice", "unit_interval", "finite", "positive", "as_steps"]
