"""Vendor spellings of option values: how a seller names on the item page what a shopper asks for.

What lives here: :func:`vendor_values` (one family's seeded map from the vocabulary's option values to
the item page's spellings), :data:`VENDOR_RATE` and the tables it draws from.

Why: people ask for "navy blue", "x-large", "16 fl oz", "a queen"; Amazon pages list "Midnight",
"XL (16-18)", "473 ml", "Queen 60 x 80 in". Before generator v5 every page listed the words of the
vocabulary, so a script that looked for the instruction's words among the option buttons (after a
few unit rewrites) chose right without understanding anything. Here, per family and option name, the
values are spelled the vendor's way at rate :data:`VENDOR_RATE`: colour names that do not contain the
colour asked for, sizes with their numeric ranges, measures in metric units (the value must be
inferred) or with a pack suffix, counts as "case of n", bed sizes with their dimensions, scents and
flavours with a vendor adjective, packaging in shop words. The goal asks for the vendor value (what
the reward compares); the instruction keeps the shopper's words.

Rules the tests check: within an option list of a type, no two spellings are equal or colour-normalize
to the same colour (:func:`~.reward.normalize_color`), all are lower case and never contain ``/``.
"""

from __future__ import annotations

import re
from typing import Any

VENDOR_RATE = 0.5
"""Probability that a family spells an option list (per option name) the vendor's way."""

COLOR_NAMES: dict[str, tuple[str, ...]] = {
    "black": ("onyx", "jet", "raven"),
    "white": ("snow", "arctic", "chalk"),
    "navy blue": ("midnight", "deep sea", "admiral"),
    "red": ("crimson", "scarlet", "cardinal"),
    "grey": ("charcoal", "slate", "heather smoke"),
    "beige": ("oatmeal", "sand dune", "linen"),
    "pink": ("flamingo", "bubblegum", "rose quartz"),
    "green": ("forest", "fern", "olive leaf"),
    "brown": ("chestnut", "cocoa", "umber"),
    "purple": ("amethyst", "orchid", "grape"),
    "yellow": ("sunflower", "canary", "buttercup"),
    "teal": ("lagoon", "peacock", "aqua marine"),
    "transparent": ("crystal clear", "see-through"),
    "silver": ("brushed nickel", "chrome finish"),
    "gold": ("champagne", "brass tone"),
}
"""Shop names of colours (none contains the colour word it stands for)."""

APPAREL: dict[str, tuple[str, ...]] = {
    "x-small": ("xs (0-2)", "size 0-2"),
    "small": ("s (4-6)", "size 4-6"),
    "medium": ("m (8-10)", "size 8-10"),
    "large": ("l (12-14)", "size 12-14"),
    "x-large": ("xl (16-18)", "size 16-18"),
    "xx-large": ("2xl (20-22)", "size 20-22"),
}
BEDS: dict[str, str] = {"twin": "twin 38 x 75 in", "full": "full 54 x 75 in", "queen": "queen 60 x 80 in",
                        "king": "king 76 x 80 in"}
PACKAGING: dict[str, tuple[str, ...]] = {
    "gift box": ("holiday gift set", "gift-ready carton"),
    "plain box": ("basic carton", "simple mailer box"),
    "eco pouch": ("refill pouch", "compostable bag"),
}
ADJECTIVES: dict[str, tuple[str, ...]] = {
    "scent": ("fresh", "wild", "calming", "pure"),
    "flavor": ("pure", "bold", "rich", "zesty"),
    "style": ("edition", "model", "version"),
}
_METRIC: dict[str, tuple[float, str]] = {
    "fl oz": (29.5735, "ml"),
    "ounce": (28.3495, "g"),
    "pound": (0.453592, "kg"),
    "inch": (2.54, "cm"),
    "feet": (0.3048, "m"),
    "quart": (0.946353, "l"),
    "liter": (33.814, "fl oz"),
    "ml": (0.033814, "fl oz"),
}
_MEASURE = re.compile(r"^(\d+(?:\.\d+)?) (fl oz|ounce|pound|inch|feet|quart|liter|ml|count|piece|bags|colors)$")
_SUFFIXES = ("(pack of 1)", "- single", "value size")


def _metric(amount: float, unit: str) -> str:
    f, to = _METRIC[unit]
    x = amount * f
    return f"{x:.0f} {to}" if x >= 10 else f"{x:.1f} {to}"


def vendor_spelling(name: str, value: str, pick: int) -> str:
    """The vendor's spelling of ``value`` of option ``name``; ``pick`` (any int) chooses among the
    variants. Values with no vendor form come back unchanged."""
    if name == "color":
        names = COLOR_NAMES.get(value)
        return names[pick % len(names)] if names else value
    if name == "packaging":
        return PACKAGING[value][pick % 2] if value in PACKAGING else value
    if name == "size":
        if value in APPAREL:
            return APPAREL[value][pick % 2]
        if value in BEDS:
            return BEDS[value]
        if re.fullmatch(r"\d+(\.\d+)?", value):
            return (f"us {value}", f"{value} m us", f"{value} us wide")[pick % 3]
        m = re.fullmatch(r"pack of (\d+)|(\d+) pack", value)
        if m:
            n = m.group(1) or m.group(2)
            return (f"case of {n}", f"{n} ct value pack")[pick % 2]
        m = _MEASURE.match(value)
        if m:
            amount, unit = float(m.group(1)), m.group(2)
            if unit in _METRIC and pick % 2 == 0:
                return _metric(amount, unit)
            return f"{value} {_SUFFIXES[pick % 3]}"
        return value
    if name == "capacity":
        return (f"{value} model", f"{value} storage")[pick % 2]
    adj = ADJECTIVES.get(name)
    if adj is None:
        return value
    if name == "style":
        return f"{value} {adj[pick % len(adj)]}"
    return f"{adj[pick % len(adj)]} {value}"


def vendor_values(rng: Any, options: dict[str, tuple[str, ...]], rate: float = VENDOR_RATE) -> dict[tuple[str, str], str]:
    """One family's spellings: ``(option name, vocabulary value) -> page value`` for every value of
    ``options`` (a type's option lists), vendor-spelled per option name with probability ``rate``."""
    out: dict[tuple[str, str], str] = {}
    for name, values in options.items():
        vendor = rng.u() < rate
        pick = rng.integers(6)
        for v in values:
            out[(name, v)] = vendor_spelling(name, v, pick) if vendor else v
    return out


__all__ = ["ADJECTIVES", "APPAREL", "BEDS", "COLOR_NAMES", "PACKAGING", "VENDOR_RATE", "vendor_spelling",
           "vendor_values"]
