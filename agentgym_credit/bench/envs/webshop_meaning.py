"""Generic WebShop scripts that read meaning (issue 45): the strongest page-only shoppers of the lab.

What lives here: :func:`meaning_tokens` (normalized words plus the base colour of a shade and the
canonical form of every quantity), :func:`quantities`, :func:`option_choice` (per option group, the
value that best fits the instruction by meaning), :func:`budget`, and the policies of
:data:`MEANING_SCRIPTS`:

* **meaning**: ``search[<instruction>]``; on the results page open the product whose title shares the
  most meaning tokens with the instruction, among those within the instruction's budget; on the item
  page choose per option group the value of :func:`option_choice`, then ``Buy Now``;
* **meaning+compare**: as *meaning*, but open up to :data:`COMPARE` products of the best title score
  one after another (``< Prev`` back to the results) and buy the first whose price is in budget and
  whose every asked option group has a confident match; the last one opened otherwise;
* **meaning+description** (:class:`ReadingPolicy`, issue 45, generator v7): as *meaning+compare*, and it
  opens the Description page of each candidate whose options fit and reads it (:func:`description_fit`:
  which asked words a ``Not:``/``without`` part denies), within the 15-step budget.

A size asked as a bound ("smallest size over 600 ml", :func:`bound`) is chosen by comparing every value
(:func:`bound_choice`), in any unit the bound and the values share.

How a value is read (generic rules any shop-bot author could write, none read from the generator):
words every value of the group shares are ignored ("16 fl oz (pack of 2)" vs "8 fl oz (pack of 2)"
compare on the measure only); a word matches an instruction word when equal or, for words of 5+
letters, at ``ratio`` >= :data:`TYPO_MIN` (typos); quantities match across units (473 ml = 16 fl
oz, 1 kg = 35.3 oz, 30 cm = 11.8 in; 3 % tolerance); size-chart parentheses ("xl (16-18)") are
dropped; a shade counts as its base colour (:data:`SHADES`: midnight = navy, onyx = black, ...).

They read only what an agent sees (the instruction and the page); no goal fields, no catalog.
"""

from __future__ import annotations

import re
from typing import Any

from agentgym_credit.bench.envs.webshop_scripts import normalize
from agentgym_credit.envs.webshop import pages as P

TYPO_MIN = 85
"""Least ``rapidfuzz`` ratio (0-100) for two words of 5+ letters to count as the same word."""

COMPARE = 4
"""Most products *meaning+compare* opens."""
NEAR = 0.34
"""Title scores within this of the best are candidates for *meaning+compare*."""

SHADES: dict[str, str] = {
    # a general English shade -> base colour table (paint charts, clothing catalogues)
    **dict.fromkeys("midnight admiral marine sapphire cobalt indigo denim".split(), "navy"),
    **dict.fromkeys("onyx jet raven ebony obsidian ink coal".split(), "black"),
    **dict.fromkeys("snow arctic chalk ivory pearl alabaster porcelain".split(), "white"),
    **dict.fromkeys("crimson scarlet cardinal cherry ruby brick cranberry".split(), "red"),
    **dict.fromkeys("charcoal slate graphite ash pewter smoke heather steel silver".split(), "gray"),
    **dict.fromkeys("oatmeal sand linen khaki ecru taupe camel tan wheat".split(), "beige"),
    **dict.fromkeys("flamingo bubblegum blush rose fuchsia magenta".split(), "pink"),
    **dict.fromkeys("forest fern olive sage emerald jade moss mint lime".split(), "green"),
    **dict.fromkeys("chestnut cocoa umber chocolate coffee espresso mocha walnut".split(), "brown"),
    **dict.fromkeys("amethyst orchid grape plum lavender lilac violet mauve".split(), "purple"),
    **dict.fromkeys("sunflower canary buttercup lemon mustard gold".split(), "yellow"),
    **dict.fromkeys("lagoon peacock aqua turquoise cyan".split(), "teal"),
    **dict.fromkeys("tangerine apricot peach coral rust".split(), "orange"),
    "grey": "gray",
}
"""Shade word -> base colour (a value with a shade also counts as its base colour)."""

SYNONYMS: dict[str, str] = {
    # general English synonym groups of shop words -> one word of the group
    **dict.fromkeys("plain simple basic standard".split(), "plain"),
    **dict.fromkeys("gift present holiday".split(), "gift"),
    **dict.fromkeys("eco recyclable compostable biodegradable sustainable".split(), "eco"),
    **dict.fromkeys("single one solo".split(), "single"),
    **dict.fromkeys("box carton".split(), "box"),
    **dict.fromkeys("bag pouch sack".split(), "bag"),
}
"""Shop word -> the first word of its synonym group (a value's word also counts as it)."""

_TO_BASE: dict[str, tuple[str, float]] = {
    "ml": ("ml", 1.0), "liter": ("ml", 1000.0), "floz": ("ml", 29.5735), "quart": ("ml", 946.353),
    "gallon": ("ml", 3785.41), "ounce": ("g", 28.3495), "pound": ("g", 453.592), "g": ("g", 1.0),
    "gram": ("g", 1.0), "kg": ("g", 1000.0), "inch": ("mm", 25.4), "feet": ("mm", 304.8),
    "cm": ("mm", 10.0), "mm": ("mm", 1.0), "m": ("mm", 1000.0), "meter": ("mm", 1000.0),
    "count": ("n", 1.0), "piece": ("n", 1.0), "case of": ("n", 1.0), "pack of": ("n", 1.0),
}
_QTY = re.compile(r"(pack of|case of) (\d+(?:\.\d+)?)|(\d+(?:\.\d+)?) ?(floz|ml|liter|quart|gallon|ounce|pound|kg|grams?|g|inch|feet|cm|mm|meters?|m|count|piece)\b")
_PAREN = re.compile(r"\([^)]*\)")
_BUDGET = re.compile(r"(?:less than|lower than|under|below|cheaper than|up to|at most|within|max(?:imum)?|budget(?: of)?)"
                     r"\s*(?:\$\s*(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s*(?:dollars?|usd|bucks)\b)")
_BOUND = re.compile(r"\b(at least|no less than|from|big enough for|over|above|past|more than|"
                    r"at most|no more than|up to|within|no bigger than|under|below|short of|less than)\s+"
                    r"(\d+(?:\.\d+)?)\s?([a-z]+(?: of \d+)?)")
_LOWER = frozenset(("at least", "no less than", "from", "big enough for", "over", "above", "past", "more than"))
_RAW = re.compile(r"(\d+(?:\.\d+)?)\s?([a-z]+)")
_STOP = frozenset(
    "a an and are as at be but by for from i if in into is it its me my of on or so that the this to "
    "want need looking find get buy please with some one which would like should can".split()
)


def quantities(text: str) -> set[tuple[str, float]]:
    """``(base unit, amount)`` of every quantity in the normalized ``text`` (ml, g, mm, n)."""
    out = set()
    for m in _QTY.finditer(normalize(text)):
        if m.group(1):
            unit, num = m.group(1), float(m.group(2))
        else:
            unit, num = m.group(4).rstrip("s") if m.group(4) not in ("floz",) else "floz", float(m.group(3))
            unit = {"gram": "g", "meter": "m"}.get(unit, unit)
        base, k = _TO_BASE[unit]
        out.add((base, num * k))
    return out


SIZE_CHART: dict[str, str] = {
    "0-2": "xs", "2-4": "xs", "4-6": "small", "6-8": "small", "8-10": "medium", "10-12": "medium",
    "12-14": "large", "14-16": "large", "16-18": "xl", "18-20": "xl", "20-22": "xxl", "22-24": "xxl",
    "l": "large", "m": "medium", "s": "small",
}
"""A common US apparel size chart (numeric ranges and letters to size words)."""
_RANGE = re.compile(r"\b(\d+)\s*-\s*(\d+)\b")


def meaning_tokens(text: str) -> set[str]:
    """Normalized content words of ``text`` (size-chart parentheses dropped, chart ranges and size
    letters read as size words), plus each shade's base colour."""
    ranges = {f"{a}-{b}" for a, b in _RANGE.findall(text)}
    words = set(normalize(_PAREN.sub(" ", text)).split()) - _STOP
    words |= {SIZE_CHART[r] for r in ranges if r in SIZE_CHART}
    words |= {SIZE_CHART[w] for w in words if w in ("l", "m", "s")}
    words |= {SYNONYMS[w] for w in words if w in SYNONYMS}
    return words | {SHADES[w] for w in words if w in SHADES}


def _word_in(word: str, words: set[str]) -> bool:
    if word in words:
        return True
    if len(word) < 5:
        return False
    from rapidfuzz import fuzz

    return any(len(w) >= 5 and fuzz.ratio(word, w) >= TYPO_MIN for w in words)


def _qty_match(a: set[tuple[str, float]], b: set[tuple[str, float]]) -> bool:
    return any(u == v and abs(x - y) <= 0.03 * max(x, y) for u, x in a for v, y in b)


def option_choice(instruction: str, values: list[str]) -> tuple[str | None, float]:
    """The value of one option group that best fits ``instruction`` and its score (0 = no evidence).

    Score of a value: the share of its distinctive words (not shared by every value of the group) found
    in the instruction (typo-tolerant), plus 1 when one of its quantities equals one of the
    instruction's in another unit. Ties go to the first value; ``(None, 0.0)`` without evidence."""
    by_bound = bound_choice(instruction, values)
    if by_bound is not None:
        return by_bound, 1.5
    inst_words = meaning_tokens(instruction)
    inst_qty = quantities(instruction)
    toks = [meaning_tokens(v) for v in values]
    shared = set.intersection(*toks) if toks else set()
    best, best_s = None, 0.0
    for v, t in zip(values, toks):
        own = t - shared
        s = sum(_word_in(w, inst_words) for w in own) / len(own) if own else 0.0
        if _qty_match(quantities(v), inst_qty):
            s += 1.0
        elif quantities(v) and inst_qty and {u for u, _ in quantities(v)} & {u for u, _ in inst_qty}:
            s -= 0.5  # a quantity of the asked kind that differs: the wrong size
        if s > best_s:
            best, best_s = v, s
    return best, best_s


def budget(instruction: str) -> float | None:
    """The price ceiling the instruction states ("lower than 40.00 dollars", "under $40"), or None."""
    m = _BUDGET.search(instruction.lower().replace(",", ""))
    return float(m.group(1) or m.group(2)) if m else None


def measures(text: str) -> set[tuple[str, float]]:
    """:func:`quantities` of ``text`` plus every other "number word" pair as ``(word, number)`` ("32gb",
    "20 bags", "3 tier"): quantities of a unit no table knows compare by the word."""
    t = normalize(text)
    out = quantities(t)
    out |= {(w.rstrip("s"), float(x)) for x, w in _RAW.findall(t) if w not in ("of",)}
    return out


def bound(instruction: str) -> tuple[bool, set[tuple[str, float]]] | None:
    """A size bound the instruction states ("the smallest size that is at least 600 ml", "no more than 10
    inch"): ``(is_lower_bound, its measures)``, or None. Price clauses ("lower than 40 dollars") are not bounds."""
    t = normalize(instruction)
    for m in _BOUND.finditer(t):
        if re.match(r"\s*(?:dollars?|usd|bucks)\b", t[m.end(2):]):
            continue
        ms = measures(f"{m.group(2)} {m.group(3)}")
        if ms:
            return m.group(1) in _LOWER, ms
    return None


def bound_choice(instruction: str, values: list[str]) -> str | None:
    """The value of a group that the instruction's :func:`bound` names: the smallest value at least the bound
    (or the largest at most it), compared in the first unit the bound and every value share."""
    b = bound(instruction)
    if b is None:
        return None
    lower, bms = b
    vms = [measures(v) for v in values]
    for unit, x in sorted(bms):
        amounts = [next((a for u, a in ms if u == unit), None) for ms in vms]
        if any(a is None for a in amounts):
            continue
        ok = [(a, v) for a, v in zip(amounts, values) if (a >= x * 0.995 if lower else a <= x * 1.005)]
        if ok:
            return (min(ok) if lower else max(ok))[1]
    return None


def _price(text: str) -> float:
    nums = re.findall(r"\d+(?:\.\d+)?", text.replace(",", ""))
    return float(nums[0]) if nums else 0.0


def _ranked(env: Any) -> list[tuple[float, str]]:
    """Products of the results page as ``(score, asin)``, best first: title meaning overlap, minus 100
    over budget."""
    inst = env.goal["instruction_text"]
    want, cap = meaning_tokens(inst), budget(inst)
    els = env._page.elements
    out = []
    for i, e in enumerate(els):
        if e.kind != P.PRODUCT or i + 2 >= len(els):
            continue
        title = meaning_tokens(els[i + 1].text)
        s = sum(_word_in(w, title) for w in want) / max(1, len(want))
        if cap is not None and _price(els[i + 2].text) > cap:
            s -= 100.0
        out.append((s, e.text.lower()))
    return sorted(out, key=lambda x: -x[0])


def _result_prices(env: Any) -> dict[str, float]:
    """Price of every product on the results page, by lower-case asin."""
    els = env._page.elements
    return {e.text.lower(): _price(els[i + 2].text) for i, e in enumerate(els) if e.kind == P.PRODUCT and i + 2 < len(els)}


def _groups(env: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in env._page.elements:
        if e.kind == P.OPTION:
            out.setdefault(e.option_name or "", []).append(e.text)
    return out


_SIZE_WORDS = frozenset("xs small medium large xl xxl twin full queen king".split())
_COLOURS = frozenset(SHADES) | frozenset(SHADES.values())


def _asked(instruction: str, name: str) -> bool:
    """Whether the instruction asks for some value of option ``name`` (its name, a colour word for
    ``color``, a quantity or size word for ``size``)."""
    words = meaning_tokens(instruction)
    name = name.lower()
    if name in words or (name == "color" and words & _COLOURS):
        return True
    return name == "size" and bool(quantities(instruction) or words & _SIZE_WORDS)


def _item_fit(env: Any) -> bool:
    """Whether the open item is in budget and every option group the instruction asks for has a
    confident value."""
    inst = env.goal["instruction_text"]
    cap = budget(inst)
    price = next((_price(e.text) for e in env._page.elements if e.text.startswith("Price:")), 0.0)
    if cap is not None and price > cap:
        return False
    return all(option_choice(inst, vals)[1] >= 0.5 for name, vals in _groups(env).items() if _asked(inst, name))


def _next_option(env: Any) -> str | None:
    inst = env.goal["instruction_text"]
    for name, vals in _groups(env).items():
        if env._options.get(name) is not None:
            continue
        value, _ = option_choice(inst, vals)
        if value is not None:
            return f"click[{value}]"
    return None


def _fit(env: Any) -> float:
    """How well the open item fits: the summed best option scores, -100 over budget."""
    inst = env.goal["instruction_text"]
    cap = budget(inst)
    price = next((_price(e.text) for e in env._page.elements if e.text.startswith("Price:")), 0.0)
    over = -100.0 if cap is not None and price > cap else 0.0
    return over + sum(option_choice(inst, vals)[1] for vals in _groups(env).values())


class MeaningPolicy:
    """The *meaning* script (``compare=1``) or *meaning+compare* (opens up to ``compare`` of the best
    title matches within :data:`NEAR` of the best, buys the first that fits every option group, else goes
    back to the best fitting one seen)."""

    def __init__(self, compare: int = 1):
        self.compare = int(compare)
        self._memo: dict[int, dict[str, Any]] = {}

    def __call__(self, env: Any, info: dict[str, Any], rng: Any) -> str:
        kind = env._page_kind
        if kind == "search":
            self._memo[id(env)] = {"opened": [], "fit": {}, "steps": 0}
            return f"search[{env.goal['instruction_text']}]"
        memo = self._memo.setdefault(id(env), {"opened": [], "fit": {}, "steps": 0})
        memo["steps"] += 1
        if kind == "results":
            ranked = _ranked(env)
            if not ranked:
                return "click[back to search]"
            top = ranked[0][0]
            if not memo.get("settle"):
                for s, asin in ranked[: self.compare]:
                    if s >= top - NEAR and asin not in memo["opened"]:
                        memo["opened"].append(asin)
                        return f"click[{asin}]"
            memo["settle"] = True  # every candidate seen: the best fitting one
            best = max(memo["fit"], key=memo["fit"].get) if memo["fit"] else ranked[0][1]
            return f"click[{best}]"
        if kind == "item":
            asin = memo["opened"][-1] if memo["opened"] else ""
            if not env._options and asin and asin not in memo["fit"]:
                memo["fit"][asin] = _fit(env)
            steps_left = getattr(env, "max_steps", 15) - memo["steps"]
            if (
                self.compare > 1
                and not memo.get("settle")
                and not env._options
                and steps_left > 4 + len(_groups(env))
                and not _item_fit(env)
            ):
                return "click[< prev]"
            return _next_option(env) or "click[buy now]"
        return "click[< prev]"


_NEGATION = re.compile(r"^(?:not|no|without|lacks?|excludes?)\b")


def description_fit(instruction: str, text: str) -> tuple[set[str], set[str]]:
    """``(words of the instruction the text denies, words it affirms)``: the text's sentences and ``:``-lists
    are read one by one; a part that opens with a negation ("Not: loud-bass", "without ...") denies its
    words, any other part affirms them (typo-tolerant, hyphens as spaces)."""
    want = meaning_tokens(instruction)
    denied, affirmed = set(), set()
    for part in re.split(r"[.;]\s+|\.$", text.lower()):
        head, _, body = part.partition(":")
        neg = bool(_NEGATION.match(head.strip()))
        words = meaning_tokens(body if neg else part)
        hit = {w for w in want if len(w) > 2 and _word_in(w, words)}
        (denied if neg else affirmed).update(hit)
    return denied, affirmed - denied


ORDERS = ("page", "dearest", "cheapest")
"""Orders in which :class:`ReadingPolicy` opens its candidates: results-page order, or by price."""


class ReadingPolicy:
    """*meaning+description*: as *meaning+compare*, and on each candidate whose options fit it opens the
    Description (two clicks) and reads it with :func:`description_fit`; it buys the first candidate whose
    description denies nothing the instruction asks, and otherwise, when the step budget runs short, goes
    back to the best candidate read (fewest denied words, then most affirmed, then option fit). Candidates:
    the results within :data:`NEAR` of the best title score, in budget, in page order, at most ``compare``."""

    def __init__(self, compare: int = 3, accept_words: int = 1, order: str = "page"):
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        self.compare, self.accept_words, self.order = int(compare), int(accept_words), order
        self._memo: dict[int, dict[str, Any]] = {}

    def _left(self, env: Any, memo: dict[str, Any]) -> int:
        return int(getattr(env, "max_steps", 15)) - memo["steps"]

    def __call__(self, env: Any, info: dict[str, Any], rng: Any) -> str:
        kind = env._page_kind
        if kind == "search":
            self._memo[id(env)] = {"queue": None, "seen": {}, "steps": 1, "target": None, "words": {}, "hits": set()}
            return f"search[{env.goal['instruction_text']}]"
        memo = self._memo.setdefault(id(env), {"queue": None, "seen": {}, "steps": 1, "target": None, "words": {}, "hits": set()})
        memo["steps"] += 1
        inst = env.goal["instruction_text"]
        if kind == "results":
            if memo["queue"] is None:
                ranked = _ranked(env)
                if not ranked:
                    return "click[back to search]"
                top = ranked[0][0]
                near = [a for s, a in ranked if s >= top - NEAR]
                if self.order != "page":  # look-alikes by price: dearest (or cheapest) first
                    price = _result_prices(env)
                    near.sort(key=lambda a: price.get(a, 0.0), reverse=self.order == "dearest")
                memo["queue"] = near[: self.compare] or [ranked[0][1]]
            if memo["target"] is None:
                todo = [a for a in memo["queue"] if a not in memo["seen"]]
                # after this click: description, back, options (about 3) and buy
                if todo and (not memo["seen"] or self._left(env, memo) >= 2 + 3 + 1):
                    memo["current"] = todo[0]
                    return f"click[{todo[0]}]"
                memo["target"] = max(memo["seen"], key=memo["seen"].get) if memo["seen"] else memo["queue"][0]
            memo["current"] = memo["target"]
            return f"click[{memo['target']}]"
        if kind == "sub":
            text = " ".join(e.text for e in env._page.elements[4:] if e.kind == P.TEXT)
            d, a = description_fit(inst, text)
            cur = memo["current"]
            memo["words"][cur] = (d, a)
            memo["hits"] |= d | a  # instruction words some description speaks of: what a fit must affirm
            for asin, (dd, aa) in memo["words"].items():
                memo["seen"][asin] = (-len(dd), len(aa & memo["hits"]), memo["seen"].get(asin, (0, 0, 0.0))[2])
            memo["read"] = cur
            return "click[< prev]"
        if kind == "item":
            cur = memo.get("current")
            groups = _groups(env)
            if memo["target"] == cur or env._options:
                return _next_option(env) or "click[buy now]"
            if not _item_fit(env):  # options or price rule it out: next candidate
                memo["seen"].setdefault(cur, (-9, 0, _fit(env)))
                if len(memo["seen"]) < len(memo["queue"]) and self._left(env, memo) >= 1 + 2 + 3 + 1:
                    return "click[< prev]"
                memo["target"] = cur
                return _next_option(env) or "click[buy now]"
            if memo.get("read") != cur:
                memo["seen"][cur] = (-9, 0, _fit(env))
                if self._left(env, memo) >= 1 + len(groups) + 1:
                    return "click[description]"
            best = max(memo["seen"], key=memo["seen"].get)
            more = [a for a in memo["queue"] if a not in memo["seen"]]
            d, a = memo["words"].get(cur, ({""}, set()))
            title = next((x.text for x, y in zip(env._page.elements, env._page.elements[1:]) if y.text.startswith("Price:")), "")
            clean = not d and len(a - meaning_tokens(title)) >= self.accept_words and a >= memo["hits"]
            if clean or (best == cur and not more):
                memo["target"] = cur
                return _next_option(env) or "click[buy now]"
            if (more and self._left(env, memo) >= 3 + len(groups) + 1) or (
                best != cur and self._left(env, memo) >= 1 + len(groups) + 1
            ):
                return "click[< prev]"
            memo["target"] = cur
            return _next_option(env) or "click[buy now]"
        return "click[< prev]"


MEANING_SCRIPTS: dict[str, Any] = {
    "meaning": MeaningPolicy(compare=1),
    "meaning+compare": MeaningPolicy(compare=COMPARE),
    "meaning+description": ReadingPolicy(),
    "meaning+description+dearest": ReadingPolicy(order="dearest"),
    "meaning+description+cheapest": ReadingPolicy(order="cheapest"),
}
"""The meaning-reading scripts, by the name the report uses."""

__all__ = [
    "COMPARE",
    "MEANING_SCRIPTS",
    "MeaningPolicy",
    "ReadingPolicy",
    "bound",
    "bound_choice",
    "description_fit",
    "measures",
    "SHADES",
    "SYNONYMS",
    "TYPO_MIN",
    "budget",
    "meaning_tokens",
    "option_choice",
    "quantities",
]
