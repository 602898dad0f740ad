"""Wording variety for the generated WebShop instructions: other leads, inline asides, regional spellings.

What lives here: :func:`vary` (one finished instruction sentence → the same request worded another way
now and then), its rates (:data:`VARY_RATES`) and pools (:data:`MORE_LEADS`, :data:`ASIDES` and the
words they draw from).

Why (issue 45): at 5,000 instructions the generated text had 0.55-0.58x the human goals' vocabulary and
0.63-0.64x their distinct 3-grams: people start a request in many more ways, mention where, when and why
in passing, and spell as they do at home. :func:`vary` adds only words that ask for nothing: a lead, an
aside about the purchase, a regional spelling of a word that is no option value. The goal's structured
fields (attributes, options, budget) are untouched, so the reward and the expert read the same constraints.

:func:`vary` draws from its own generator seeded by the sentence itself (``zlib.crc32``), never from the
catalogue's stream, so a catalogue's products, goals and the draws after each instruction are the same
with or without it (and :func:`~.instructions.instruction_sentence` takes one draw of that stream a sentence,
however the sentence is worded).
"""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Mapping, Sequence

from agentgym_credit.envs.webshop.lexicon import LEADS
from agentgym_credit.envs.webshop.phrasing import ACTIVITIES, PLACES, REASONS, TIMES, WHEN

VARY_RATES: dict[str, float] = {"lead": 0.45, "aside": 0.02, "spelling": 0.3, "hyphen": 0.5}
"""Per sentence: a lead from :data:`MORE_LEADS` in place of a :data:`~.lexicon.LEADS` one, an inline
aside (one sentence stays one sentence), regional spellings (every listed word of the sentence), a
two-word attribute written with a hyphen ("solid-wood legs", as people write "sugar-free")."""

MORE_LEADS: tuple[str, ...] = (
    "i'd appreciate it if you could find", "would you help me find", "i've been meaning to buy",
    "i'm shopping around for", "i've been hunting for", "i'm keen on getting", "i'm interested in",
    "i'm out of and need", "do you have", "is there", "any chance you have", "i'm on the lookout for",
    "i'd really like", "i'm planning to buy", "we need", "we're looking for", "we want", "my family needs",
    "i have to buy", "i've got to get", "i should get", "help me pick out", "hoping to find",
    "i'm after something like", "show me options for", "point me to", "pull up", "locate",
    "track down", "i want to order", "i want to pick up", "i'm thinking of buying", "i'd like to get hold of",
    "i'm browsing for", "need to grab", "gotta get", "i'd go for", "suggest", "recommend me",
    "what do you have for", "i'm seeking", "i seek", "kindly find", "kindly get me", "i'm ordering",
    "add to my cart", "put in my cart", "i'll take", "i'd buy", "i'm considering", "time to replace my old one with",
    "i'm restocking and need", "i've run out, so i need", "on my list is", "next on my list:",
    "shopping list item:", "trying to buy", "i'm trying to order", "i'm in need of", "i'm desperate for",
    "my wife asked me to get", "my husband wants", "my boss asked for", "the kids want", "our office needs",
    "i'm after a replacement:", "fetch me", "source me", "order me", "grab me", "scout out",
    "need", "want", "find", "seeking", "searching", "buying", "ordering", "wanted:", "hunting", "get", "grab",
    "needed:", "request:", "shopping for", "after", "buy", "order", "looking", "finding", "want to buy",
)
"""Leads people use beyond :data:`~.lexicon.LEADS` (all of them end where the product words begin)."""

MORE_PLACES = (
    "my new flat", "our cottage", "the dorm", "my loft", "our duplex", "the chalet", "our bungalow",
    "my condo", "the ranch", "our townhouse", "my office cubicle", "the warehouse", "our clinic",
    "my boutique", "the library", "our nursery school", "my home gym", "the laundromat", "our marina slip",
)
MORE_REASONS = (
    "the last one was flimsy", "the reviews on mine were fake", "it keeps selling out locally",
    "prices went up at my usual shop", "my puppy destroyed the previous one", "the movers lost ours",
    "we're decluttering and upgrading", "a coworker swears by it", "my physical therapist recommended one",
    "the hotel had one and i loved it", "it's been on my wishlist for ages", "my old one is embarrassing",
    "the toddler spilled juice on ours", "my sister borrowed mine and never returned it",
    "i'm replacing a knockoff", "the heat wave wrecked mine", "the basement flooded", "we finally have room",
)
ASIDES: tuple[str, ...] = (
    ", since {reason}", " because {reason}", " for {place}", " to use {when}", " to keep in {place}",
    ", as we're {activity} {time}", " before {activity}", ", it's for {place}", " - {reason}",
    ", mainly {when}", " (it's for {place})", ", we're {activity}", " as {reason}", ", since we're {activity} {time}",
)
"""Inline asides (appended to the sentence; ``{reason}`` etc. from :mod:`.phrasing`'s pools and above)."""

SPELLINGS: dict[str, tuple[str, ...]] = {
    "color": ("colour",), "colored": ("coloured",), "colors": ("colours",), "flavor": ("flavour",),
    "flavored": ("flavoured",), "gray": ("grey",), "favorite": ("favourite",), "looking": ("searching",),
    "please": ("plz", "pls"), "buy": ("purchase", "order"),
    "cheap": ("low-cost", "low-priced"), "nice": ("lovely", "neat"), "thanks": ("thx", "cheers", "ty"),
    "gift": ("present",), "kids": ("children", "little ones"), "mom": ("mum", "mother"), "dad": ("father", "pops"),
    "apartment": ("flat",), "vacation": ("holiday",), "trip": ("journey", "getaway"), "office": ("workplace",),
    "house": ("home",), "durable": ("long-lasting", "hard-wearing"), "stylish": ("fashionable", "chic"),
    "affordable": ("economical", "inexpensive"), "great": ("fantastic", "terrific", "superb"),
}
"""Regional spellings and synonyms of words that carry no constraint (never an option name or value:
:func:`vary` leaves any word of ``protected`` alone); a synonym starts with a vowel sound when its word
does, so the article before it stays right."""

_LEAD_RE = re.compile("^(" + "|".join(re.escape(x) for x in sorted(LEADS, key=len, reverse=True)) + r")\b")


def _aside(rnd: random.Random) -> str:
    return rnd.choice(ASIDES).format(reason=rnd.choice(REASONS + MORE_REASONS), place=rnd.choice(PLACES + MORE_PLACES),
                                     when=rnd.choice(WHEN), activity=rnd.choice(ACTIVITIES), time=rnd.choice(TIMES))


def vary(text: str, protected: frozenset[str] = frozenset(), rates: Mapping[str, float] | None = None,
         attributes: Sequence[str] = ()) -> str:
    """``text`` (one generated instruction) worded another way by the rates of :data:`VARY_RATES` (``rates``
    overrides entries): another lead, synonyms and regional spellings of :data:`SPELLINGS` words not in
    ``protected`` (the goal's option and attribute words), one two-word ``attributes`` entry hyphenated, an
    inline aside when the text is one sentence.
    Deterministic in ``text``; ``rates`` all 0 returns ``text`` unchanged."""
    r = VARY_RATES if rates is None else {**VARY_RATES, **rates}
    rnd = random.Random(zlib.crc32(text.encode()))
    out = text
    m = _LEAD_RE.match(out)
    if m and rnd.random() < r["lead"]:
        out = rnd.choice(MORE_LEADS) + out[m.end():]
    if rnd.random() < r["spelling"]:
        out = re.sub(r"[a-z]+", lambda m: rnd.choice(SPELLINGS[m[0]]) if m[0] in SPELLINGS and m[0] not in protected
                     else m[0], out)
    pairs = [a for a in attributes if len(a.split()) == 2 and a in out]
    if pairs and rnd.random() < r["hyphen"]:
        a = rnd.choice(pairs)
        out = out.replace(a, a.replace(" ", "-"), 1)
    if "." not in out.rstrip(".") and rnd.random() < r["aside"]:
        out = out.rstrip(". ") + _aside(rnd)
    return out


__all__ = ["ASIDES", "MORE_LEADS", "SPELLINGS", "VARY_RATES", "vary"]
