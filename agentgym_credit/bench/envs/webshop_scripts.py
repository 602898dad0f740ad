"""Generic scripted shoppers for WebShop: policies that know nothing of the generator, only the page.

What lives here: :func:`normalize` (about fifteen generic unit / size / number rewrites any shop-bot
author would write, no table of this generator's paraphrases), the option choosers
:func:`normalized_options` and :func:`fuzzy_options`, the openers (first result, most title
overlap), and the three policies of the family :data:`SCRIPTS`:

* **normalizing**: ``search[<instruction>]``, open the first result, click every option value whose
  normalized words occur as whole words in the normalized instruction, ``Buy Now``;
* **title-overlap**: as *normalizing*, but open the result of the first page whose title shares the
  most normalized words with the instruction;
* **fuzzy-option**: the title-overlap opener, then per option group the value that best fuzzy-matches
  a window of the instruction (``rapidfuzz`` partial ratio of the normalized strings, at least
  :data:`FUZZY_MIN`), ``Buy Now``.

They read what an agent sees (the instruction and the page's elements) and nothing else: no goal
fields, no catalog. The first version of this module was written and committed before generator v5
and measured on v4 (``benchmarks/envs/webshop_difficulty.md`` says which rows are which); it is not tuned
on the generator it measures.
"""

from __future__ import annotations

import re
from typing import Any

from agentgym_credit.envs.webshop import pages as P

_NUMBER_WORDS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "dozen": "12",
}
_REWRITES: tuple[tuple[str, str], ...] = (
    (r"\b(?:xx-large|xxl|2x-?large|extra extra large)\b", "xxl"),  # 1 sizes
    (r"\b(?:x-large|xl|extra large|extra-large)\b", "xl"),  # 2
    (r"\b(?:x-small|xs|extra small|extra-small)\b", "xs"),  # 3
    (r"\b(?:med)\b", "medium"),  # 4
    (r"\b(?:lg)\b", "large"),  # 5
    (r"\b(?:sm)\b", "small"),  # 6
    (r"\b(?:fl\.? ?oz|fluid ounces?)\b", "floz"),  # 7 units
    (r"\b(?:oz|ounces)\b", "ounce"),  # 8
    (r"\b(?:lbs?|pounds)\b", "pound"),  # 9
    (r"\b(?:ct|counts)\b", "count"),  # 10
    (r"\b(?:pcs|pc|pieces)\b", "piece"),  # 11
    (r"(?<=\d) ?(?:ft|foot)\b", " feet"),  # 12
    (r"(?<=\d) ?(?:in|inches|\")(?=\W|$)", " inch"),  # 13
    (r"(?<=\d) ?(?:qt|quarts)\b", " quart"),  # 14
    (r"(?<=\d) ?(?:mls?|milliliters?|millilitres?)\b", " ml"),  # 15
    (r"(?<=\d) ?(?:l|liters|litres?)\b", " liter"),  # 16
    (r"(?<=\d) ?(?:gb|gigabytes?)\b", "gb"),  # 17
    (r"\bgrey\b", "gray"),  # 18
    (r"\b(\d+)[ -]?(?:pack|pk)s?\b", r"pack of \1"),  # 19 "6 pack", "6-pack" -> "pack of 6"
)
_REWRITES_RE = [(re.compile(p), r) for p, r in _REWRITES]
_NUMBER_RE = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b")
_PUNCT = re.compile(r"[^\w\s.\"]+|(?<!\d)\.|\.(?!\d)")

FUZZY_MIN = 80
"""Least ``partial_ratio`` (0-100) for :func:`fuzzy_options` to click a value."""


def normalize(text: str) -> str:
    """Lower-case ``text``, number words as digits, then the generic unit / size rewrites (sizes
    ``xl``/``xs``/``xxl``, ounces, fluid ounces, pounds, counts, pieces, feet, inches, quarts, ml,
    liters, gb, grey, ``n pack``), punctuation as spaces."""
    t = text.lower().replace("&", " and ")
    t = _NUMBER_RE.sub(lambda m: _NUMBER_WORDS[m.group(1)], t)
    for pat, rep in _REWRITES_RE:
        t = pat.sub(rep, t)
    t = _PUNCT.sub(" ", t).replace('"', " ")
    return " ".join(t.split())


def _words(text: str) -> set[str]:
    return set(normalize(text).split())


def _item_options(env: Any) -> list[P.Element]:
    return [e for e in env._page.elements if e.kind == P.OPTION]


def normalized_options(env: Any) -> str | None:
    """The next option value to click (whole-word match after :func:`normalize`), or None."""
    text = " " + normalize(env.goal["instruction_text"]) + " "
    for e in _item_options(env):
        if env._options.get(e.option_name) is not None:
            continue
        v = normalize(e.text)
        if v and f" {v} " in text:
            return f"click[{e.text}]"
    return None


def fuzzy_options(env: Any) -> str | None:
    """Per option group not yet chosen, the value whose normalized text best ``partial_ratio``-matches the
    normalized instruction (at least :data:`FUZZY_MIN`; the longer value wins a tie), or None."""
    from rapidfuzz import fuzz

    text = normalize(env.goal["instruction_text"])
    groups: dict[str, list[P.Element]] = {}
    for e in _item_options(env):
        groups.setdefault(e.option_name or "", []).append(e)
    for name, els in groups.items():
        if env._options.get(name) is not None:
            continue
        best, best_key = None, (FUZZY_MIN - 1e-9, 0)
        for e in els:
            v = normalize(e.text)
            if not v:
                continue
            key = (fuzz.partial_ratio(v, text), len(v))
            if key > best_key:
                best, best_key = e, key
        if best is not None:
            return f"click[{best.text}]"
    return None


def first_result(env: Any) -> str | None:
    """The title of the first product on the page (lower case), None when it lists none."""
    for e in env._page.elements:
        if e.kind == P.PRODUCT:
            return e.text.lower()
    return None


def _best_title(env: Any) -> str | None:
    """The product of this results page whose title shares most normalized words with the instruction
    (the first such on a tie)."""
    want = _words(env.goal["instruction_text"])
    best, best_n = None, -1
    els = env._page.elements
    for i, e in enumerate(els):
        if e.kind != P.PRODUCT or i + 1 >= len(els):
            continue
        n = len(want & _words(els[i + 1].text))
        if n > best_n:
            best, best_n = e.text.lower(), n
    return best


def _shop(env: Any, opener: Any, chooser: Any) -> str:
    kind = env._page_kind
    if kind == "search":
        return f"search[{env.goal['instruction_text']}]"
    if kind == "results":
        asin = opener(env)
        return f"click[{asin}]" if asin else "click[back to search]"
    if kind == "item":
        return chooser(env) or "click[buy now]"
    return "click[< prev]"  # a sub-page: back to the item


def normalizing_policy(env: Any, info: dict[str, Any], rng: Any) -> str:
    """First result, options by whole-word match after :func:`normalize`, buy."""
    return _shop(env, first_result, normalized_options)


def title_overlap_policy(env: Any, info: dict[str, Any], rng: Any) -> str:
    """Result with the most title words in common with the instruction, normalized options, buy."""
    return _shop(env, _best_title, normalized_options)


def fuzzy_option_policy(env: Any, info: dict[str, Any], rng: Any) -> str:
    """Title-overlap opener, per option group the best fuzzy match of the instruction, buy."""
    return _shop(env, _best_title, fuzzy_options)


SCRIPTS: dict[str, Any] = {
    "normalizing": normalizing_policy,
    "title-overlap": title_overlap_policy,
    "fuzzy-option": fuzzy_option_policy,
}
"""The family of generic scripts, by the name the report uses."""

__all__ = [
    "FUZZY_MIN",
    "SCRIPTS",
    "first_result",
    "fuzzy_option_policy",
    "fuzzy_options",
    "normalize",
    "normalized_options",
    "normalizing_policy",
    "title_overlap_policy",
]
