"""Option values the shopper states as a constraint, not by name (issue 45): "the smallest size that holds
over 600 ml" when the page lists 8 / 16 / 33.8 fl oz and the goal is 33.8 fl oz.

What lives here: :func:`measure` (a vocabulary option value as ``(dimension, amount in the dimension's base
unit)``, or None), :func:`constrainable` (whether one product's option list can be asked for this way) and
:func:`constraint_clause` (the seeded clause that names exactly one value of the list: the smallest value
over X, or the largest under X, X drawn strictly between the goal value and its neighbour, sometimes in
metric units).

Why: a script that finds the asked value's words (or their unit conversion) among the option buttons
chooses right without reading what the shopper needs; a bound has to be compared with every value.
The goal still asks for the page's value (the reward is unchanged); only the sentence words it as a bound.
"""

from __future__ import annotations

import re
from typing import Any

CONSTRAINT_RATE = 0.15
"""Share of goals whose measured option (size, capacity) is asked as a bound when the product's list allows."""

_UNITS: dict[str, tuple[str, float]] = {
    "fl oz": ("volume", 1.0), "ml": ("volume", 1 / 29.5735), "liter": ("volume", 33.814), "quart": ("volume", 32.0),
    "ounce": ("mass", 1.0), "pound": ("mass", 16.0),
    "inch": ("length", 1.0), "feet": ("length", 12.0), "mm": ("length", 1 / 25.4),
    "count": ("count", 1.0), "piece": ("count", 1.0), "bags": ("count", 1.0), "colors": ("colors", 1.0),
    "tier": ("tier", 1.0), "gb": ("storage", 1.0), "mah": ("charge", 1.0),
}
_VALUE = re.compile(r"^(\d+(?:\.\d+)?) ?(fl oz|ml|liter|quart|ounce|pound|inch|feet|mm|count|piece|bags|colors|tier|gb|mah)$")
_PACK = re.compile(r"^pack of (\d+)$|^(\d+) pack$")
_SAY: dict[str, str] = {"volume": "fl oz", "mass": "ounce", "length": "inch", "count": "count", "colors": "colors",
                        "tier": "tier", "storage": "gb", "charge": "mah"}
"""The unit a clause states a bound in (the dimension's base unit)."""
_METRIC: dict[str, tuple[float, str]] = {"volume": (29.5735, "ml"), "mass": (28.3495, "grams"), "length": (2.54, "cm")}


def measure(value: str) -> tuple[str, float] | None:
    """``(dimension, amount)`` of a vocabulary option value ("16 fl oz" -> ``("volume", 16.0)``, "pack of 6"
    -> ``("count", 6.0)``, "1 liter" -> ``("volume", 33.814)``), or None for a value that is not one measure."""
    m = _PACK.match(value)
    if m:
        return "count", float(m.group(1) or m.group(2))
    m = _VALUE.match(value)
    if m is None:
        return None
    dim, k = _UNITS[m.group(2)]
    return dim, float(m.group(1)) * k


def constrainable(values: list[str]) -> bool:
    """Whether every value of one product's option list is a measure of one dimension, all different."""
    ms = [measure(v) for v in values]
    if len(ms) < 2 or any(m is None for m in ms) or len({m[0] for m in ms}) != 1:  # type: ignore[index]
        return False
    return len({round(m[1], 6) for m in ms}) == len(ms)  # type: ignore[index]


def _fmt(x: float) -> str:
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 or x >= 20 else f"{x:.1f}"


def constraint_clause(rng: Any, name: str, values: list[str], goal: str) -> str | None:
    """A clause asking for ``goal`` among ``values`` (a :func:`constrainable` list) by a bound, or None when no
    bound names it alone. Direction drawn (over X: the smallest value > X; under X: the largest < X); X strictly
    between the goal's amount and its neighbour's (a fraction of the gap)."""
    dim, amount = measure(goal)  # type: ignore[misc]
    amounts = sorted(m[1] for m in (measure(v) for v in values) if m is not None)
    below = [a for a in amounts if a < amount - 1e-9]
    above = [a for a in amounts if a > amount + 1e-9]
    at_least = rng.u() < 0.5
    lo, hi = (below[-1] if below else 0.5 * amount, amount) if at_least else (amount, above[0] if above else 1.6 * amount)
    frac = 0.25 + 0.5 * rng.u()
    metric = dim in _METRIC and rng.u() < 0.5
    factor, unit = _METRIC[dim] if metric else (1.0, _SAY[dim])
    x = lo + frac * (hi - lo)
    shown = float(_fmt(x * factor))
    if dim in ("count", "colors", "tier", "storage", "charge") and shown != int(shown):
        shown = float(int(shown) + (0 if at_least else 1))
    x = shown / factor
    # the stated bound must name the goal alone: strictly between the goal and its neighbour
    if not lo < x < hi:
        return None
    n = _fmt(shown)
    if at_least:
        forms = (f"smallest {name} over {n} {unit}", f"smallest {name} above {n} {unit}", f"smallest {name} past {n} {unit}")
    else:
        forms = (f"largest {name} under {n} {unit}", f"largest {name} below {n} {unit}", f"biggest {name} under {n} {unit}")
    return forms[rng.integers(len(forms))]


__all__ = ["CONSTRAINT_RATE", "constrainable", "constraint_clause", "measure"]
