"""Seeded instruction sentences in the style of WebShop's human-written instructions.

What lives here: :func:`instruction_sentence` (one instruction for a goal), :func:`add_typo`,
:func:`paraphrase_value` / :func:`paraphrase_attribute` and their tables, :func:`language_stats`
(mean length, vocabulary, distinct 3-grams of a set of instructions), :data:`RATES` (how often
each habit below is drawn).

The original's 12,087 human instructions read like "i'm looking for a sugar-free chocolate syrup
in a 2-pack" (Yao et al. 2022): ~14 words, option values inside the sentence, sometimes
paraphrased, often only some of the product's options, a brand or the person it is for now and
then, typos. A sentence here is drawn from

* a lead (37, :data:`~.lexicon.LEADS`) or a sentence that starts with the person it is for;
* one of several shapes: attributes before the noun, after it ("that is ..."), as a second clause
  ("it should be ..."), or a terse search-like phrase ("sulfate free shampoo lavender 16 oz");
* attribute paraphrases (``"sulfate free"`` → ``"sulfate-free"`` / ``"without sulfate"``) and
  option-value paraphrases (``"x-large"`` → ``"xl"``, ``"pack of 6"`` → ``"6 pack"``, ``"grey"`` →
  ``"gray"``) inside option phrases chosen by option name ("in navy blue", "with a lavender
  scent", "in size 9", "in an eco pouch" — the article follows the words it stands before);
* now and then a brand ("from zygrav"), a recipient, occasion or purpose ("for my mom's
  birthday", "for a camping trip"), a qualifier ("affordable", "good quality"), a closer ("thanks");
* the options asked again in a second sentence ("also choose navy blue color and x-large size."), a
  background sentence ("my old one wore out."), an informal spelling ("im", "pls", two spaces; all in
  :mod:`.phrasing`);
* a typo in one word (a swapped, dropped, doubled or neighbouring-key letter) at rate ``typo``.

:func:`language_stats` is the one measure of a set of instructions, human or generated (mean words,
vocabulary, distinct 3-grams, two-sentence and informal shares; :func:`sample_typos`).

Which options a goal asks for (omissions) is decided by :mod:`.catalog`; the goal's structured
fields (attributes, option values) are kept apart for the reward, the sentence only has to mean
the same thing.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from agentgym_credit.envs.webshop.asides import vary
from agentgym_credit.envs.webshop.lexicon import CLOSERS, LEADS, OCCASIONS, PURPOSES, QUALIFIERS, RECIPIENTS
from agentgym_credit.envs.webshop.needs import need_phrase
from agentgym_credit.envs.webshop.phrasing import informal, option_sentence, story_sentence
from agentgym_credit.envs.webshop.vocabulary import PRODUCT_TYPES

_CATEGORY_OF = {pt.noun: pt.category for pt in PRODUCT_TYPES}

ATTRIBUTE_PARAPHRASES: dict[str, tuple[str, ...]] = {
    "long lasting": ("long-lasting", "that lasts all day"),
    "machine wash": ("machine washable", "that i can put in the washer"),
    "high protein": ("protein-rich", "packed with protein"),
    "low sugar": ("with little sugar", "low in sugar"),
    "non gmo": ("non-gmo", "made without gmos"),
    "fast charging": ("quick charging", "that charges fast"),
    "noise cancelling": ("noise-canceling", "with noise cancellation"),
    "long battery life": ("with a long-lasting battery", "with great battery life"),
    "easy assembly": ("easy to assemble", "simple to put together"),
    "quick dry": ("quick-drying", "fast drying"),
    "high speed": ("high-speed", "fast"),
    "short sleeve": ("short-sleeved",),
    "long sleeve": ("long-sleeved",),
    "water resistant": ("water-resistant", "that resists water"),
    "usda organic": ("organic", "certified organic"),
    "sensitive skin": ("for sensitive skin", "gentle on sensitive skin"),
    "dry hair": ("for dry hair",),
    "gluten free": ("gluten-free", "without gluten"),
    "anti aging": ("anti-aging",),
    "oil free": ("oil-free",),
    "cruelty free": ("cruelty-free", "not tested on animals"),
    "rubber sole": ("with a rubber sole", "rubber-soled"),
    "lace up": ("lace-up", "with laces"),
    "high waist": ("high-waisted",),
    "extra hot": ("extra spicy", "really hot"),
}
"""Other ways to say an attribute (besides the generic ``"x free"`` → ``"x-free"`` / ``"without x"``)."""

_MEASURE = re.compile(
    r"^(\d+(?:\.\d+)?)\s+(fl oz|ounce|pound|count|bags|feet|inch|colors|quart|ml|liter|piece|cartridges)$"
)
_UNIT_PARAPHRASES: dict[str, tuple[str, ...]] = {
    "fl oz": ("fluid ounce", "oz", "fl. oz", "floz", "fl.oz", "fluid oz", "-fl-oz"),
    "ounce": ("oz", "ounces", "-ounce", "-oz", "oz", "ozs"),
    "pound": ("lb", "lbs", "pounds", "-pound", "-lb", "pound"),
    "count": ("ct", "pieces", "pcs", "-count", "-ct", "units"),
    "bags": ("tea bags", "bag box", "-bag", "sachets"),
    "feet": ("ft", "foot", "-foot", "-ft", "'"),
    "inch": ("in", "inches", "-inch", '"', "-in", "inch"),
    "colors": ("shades", "colours", "-color", "hues"),
    "quart": ("qt", "quarts", "-quart", "-qt"),
    "ml": ("milliliter", "mls", "-ml", "millilitres"),
    "liter": ("litre", "l", "-liter", "-litre", "ltr"),
    "piece": ("pc", "pieces", "pcs", "-piece", "-pc"),
    "cartridges": ("refills", "blades", "-cartridge", "refill cartridges"),
}
VALUE_PARAPHRASES: dict[str, tuple[str, ...]] = {
    "x-small": ("xs", "extra small", "x small", "extra-small", "xsmall"),
    "small": ("s", "sm", "small size", "sz small"),
    "medium": ("m", "med", "medium size", "mid size"),
    "large": ("l", "lg", "large size", "lrg"),
    "x-large": ("xl", "extra large", "x large", "extra-large", "xlarge"),
    "xx-large": ("xxl", "2x large", "2xl", "xx large", "double xl"),
    "navy blue": ("navy", "navy-blue"),
    "grey": ("gray", "grey-colored"),
    "transparent": ("clear", "see-through", "see through"),
    "rose gold": ("rose-gold", "rosegold"),
    "beige": ("tan", "cream", "beige-colored"),
    "twin": ("twin bed", "twin-size", "twin sized", "twin-sized"),
    "queen": ("queen bed", "queen-size", "queen sized", "queen-sized"),
    "king": ("king bed", "king-size", "king sized", "king-sized"),
    "full": ("full bed", "double", "full-size", "full sized"),
    "unscented": ("fragrance free", "no scent", "fragrance-free", "scent-free", "without fragrance"),
    "original": ("plain", "classic taste", "original recipe", "the classic"),
    "gift box": ("gift-ready box", "gift packaging", "giftable box", "gift boxed", "present box", "gift wrap box"),
    "plain box": ("simple box", "basic box", "regular box", "standard box", "no-frills box", "unbranded box"),
    "eco pouch": ("recyclable pouch", "eco-friendly pouch", "green pouch", "compostable pouch", "eco bag",
                  "sustainable pouch"),
}
"""Other ways to say an option value (besides unit paraphrases and ``pack of n`` → ``n pack``)."""




RATES: dict[str, float] = {
    "attr_paraphrase": 0.35,
    "value_paraphrase": 0.55,
    "brand": 0.3,
    "need": 0.55,
    "bare": 0.7,
    "need_sentence": 0.25,
    "context": 0.05,
    "qualifier": 0.12,
    "closer": 0.02,
    "typo": 0.10,
    "terse": 0.3,
    "second": 0.07,
    "story": 0.02,
    "informal": 0.2,
}
"""Probability of each habit per sentence (per attribute / option value for the paraphrases)."""


def _pick(rng: Any, xs: Sequence[str]) -> str:
    return xs[rng.integers(len(xs))]


def _article(words: str) -> str:
    return "an" if words[:1] in "aeiou" or re.match(r"(8|11|18)\b|x(-|l|s|x|small|large)", words) else "a"


def paraphrase_value(rng: Any, value: str) -> str:
    """Another way to write an option value, or the value itself when none is known."""
    if value in VALUE_PARAPHRASES:
        return _pick(rng, VALUE_PARAPHRASES[value])
    m = _MEASURE.match(value)
    if m:
        unit = _pick(rng, _UNIT_PARAPHRASES[m.group(2)])  # "-inch" and '"' attach: "8-inch", '8"'
        return f"{m.group(1)}{unit}" if unit[:1] in "-'\"" else f"{m.group(1)} {unit}"
    m = re.match(r"^pack of (\d+)$", value)
    if m:
        n = m.group(1)
        return _pick(rng, (f"{n} pack", f"{n}-pack", f"{n} count pack", f"{n}pk", f"{n}-pk", f"set of {n}",
                           f"{n} per pack", f"{n}-count", f"{n}x", f"bundle of {n}"))
    m = re.match(r"^(\d+)gb$", value)
    if m:
        return _pick(rng, (f"{m.group(1)} gb", f"{m.group(1)} gigabytes", f"{m.group(1)}-gb", f"{m.group(1)} gigs"))
    return value


def paraphrase_attribute(rng: Any, attr: str) -> str:
    """Another way to write an attribute, or the attribute itself."""
    if attr in ATTRIBUTE_PARAPHRASES:
        return _pick(rng, ATTRIBUTE_PARAPHRASES[attr])
    if attr.endswith(" free") and " " not in attr[:-5]:
        stem = attr[:-5]
        return _pick(rng, (f"{stem}-free", f"without {stem}", f"no {stem}"))
    return attr


_MUST = ("it should be", "it must be", "and it has to be", "preferably", "it needs to be", "make sure it's",
         "ideally", "and i'd like it", "i need it to be", "must be", "hopefully", "and definitely",
         "it's gotta be", "should be")
"""How a sentence asks for its attributes after the product (form 2)."""

_SIZE_WORDS = frozenset(("x-small", "small", "medium", "large", "x-large", "xx-large", "xs", "s", "sm", "m",
                         "med", "l", "lg", "xl", "xxl", "extra small", "extra large", "2x large"))


_SHORT: dict[str, tuple[str, ...]] = {
    "color": ("{v}", "in {v}", "{v} color", "{v} colored"),
    "scent": ("{v} scent", "{v} scented", "{v}"),
    "flavor": ("{v} flavor", "{v}", "{v} flavored"),
    "size": ("size {v}", "{v}", "in {v}", "{v} size"),
    "packaging": ("{v}", "in {a} {v}", "{v} packaging", "{v} packed"),
    "capacity": ("{v}", "with {v}", "{v} capacity"),
}
"""The short ways to ask for a value, by option name (others: the value, or "in" it)."""


def _option_phrase(rng: Any, name: str, value: str) -> str:
    """The words that ask for one option value, value inside the phrase (never "size size"); half the time
    mostly one of the few words people write (:data:`_SHORT`)."""
    art = _article(value)
    if rng.u() < 0.75:
        short = _SHORT.get(name, ("{v}", "in {v}"))
        if name == "size" and value.endswith("size"):
            short = ("{v}", "in {v}")
        return _pick(rng, short).format(v=value, a=art)
    if name == "color":
        return _pick(rng, (f"in {value}", f"in the color {value}", f"{value} colored", f"in {value} color", value,
                           f"in {art} {value} shade", f"that comes in {value}", f"in {value} please", f"colored {value}",
                           f"the {value} one", f"in {value} colorway", f"with {art} {value} finish", f"in {value} tone",
                           f"{value} colorway", f"preferably {value}", f"color {value}", f"{value}-colored",
                           f"{value} one", f"{value} pls", f"{value} color option"))
    if name == "scent":
        return _pick(rng, (f"with {art} {value} scent", f"in {value} scent", f"that smells like {value}",
                           f"{value} scented", f"with {value} fragrance", f"scented with {value}", f"in the {value} smell",
                           f"with a hint of {value}", f"{value} aroma", f"{value} fragrance"))
    if name == "flavor":
        return _pick(rng, (f"in {value} flavor", f"{value} flavored", f"with {value} flavor", f"in the {value} flavor",
                           f"{value}-flavored", f"{value} taste", f"in {value}", f"with {value} taste",
                           f"flavor {value}", f"the {value} kind", f"in {value} variety"))
    if name == "capacity":
        return _pick(rng, (f"with {value} of storage", f"in {value}", f"{value} capacity", f"with {value}",
                           f"holds {value}", f"the {value} model", f"at least {value}", f"{value} version"))
    if name == "packaging":
        return _pick(rng, (f"packed in {art} {value}", f"in {art} {value}", f"{value} packaging", f"in {value}",
                           f"{value} wrapped", f"wrapped in {art} {value}", f"boxed as {art} {value}",
                           f"{value} boxed", f"sent in {art} {value}", f"with {value} packing",
                           f"{value} wrapping", f"in {value} packaging", f"packaged in {art} {value}"))
    if name == "size":
        if value in _SIZE_WORDS or re.fullmatch(r"\d+(\.\d+)?", value):
            return _pick(rng, (f"in size {value}", f"size {value}", f"in {value}", f"in a size {value}",
                               f"fits {value}", f"size {value} please", f"in {art} {value}", f"sized {value}",
                               f"{value} sized", f"in {value} size", f"a size {value} one"))
        if value.endswith("size"):
            return _pick(rng, (f"in {value}", value, f"the {value} one", f"in the {value}"))
        return _pick(rng, (f"in {value}", f"{value}", f"the {value} one", f"in the {value} size", f"{value} size",
                           f"that is {value}", f"measuring {value}", f"in {art} {value} size", f"about {value}",
                           f"the {value} option"))
    return _pick(rng, (f"in the {value} style", f"in {value}", f"the {value} version", f"{value} style",
                       f"the {value} type", f"in {value} design", f"{value} model", f"the {value} kind",
                       f"styled as {value}", f"in {art} {value} cut"))


def _join(parts: Sequence[str], rng: Any) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    sep = _pick(rng, (" and ", ", ", " ", " and ", ", ", " & ", ", plus "))
    return sep.join(parts[:-1]) + _pick(rng, (" and ", ", and ", " ", " & ", ", ", " and ", ", also ")) + parts[-1]


_KEYBOARD = "qwertyuiop asdfghjkl zxcvbnm"


def add_typo(rng: Any, text: str) -> str:
    """``text`` with one typo in one word of 4+ letters: two letters swapped, one dropped, one doubled
    or one replaced by a keyboard neighbour (the text unchanged when it has no such word)."""
    words = text.split(" ")
    cand = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
    if not cand:
        return text
    i = cand[rng.integers(len(cand))]
    w = words[i]
    j = rng.integers(1, len(w) - 1)
    kind = rng.integers(4)
    if kind == 0 and w[j] != w[j + 1]:
        w = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    elif kind == 1:
        w = w[:j] + w[j + 1 :]
    elif kind in (0, 2):  # (a swap of two equal letters would change nothing: double one instead)
        w = w[:j] + w[j] + w[j:]
    else:
        k = _KEYBOARD.find(w[j])
        near = [c for c in (_KEYBOARD[k - 1 : k] + _KEYBOARD[k + 1 : k + 2]) if c.isalpha()] if k >= 0 else []
        w = w[:j] + (near[rng.integers(len(near))] if near else w[j]) + w[j + 1 :]
    words[i] = w
    return " ".join(words)


def _context(rng: Any) -> str:
    kind = rng.integers(4)
    if kind == 0:
        return f"for {_pick(rng, RECIPIENTS)}"
    if kind == 1:
        occ = _pick(rng, OCCASIONS)
        return _pick(rng, (f"as {_article(occ)} {occ} gift", f"for {_pick(rng, RECIPIENTS)}'s {occ}", f"for the {occ}"))
    return _pick(rng, PURPOSES)


def instruction_sentence(
    rng: Any,
    noun: str,
    attributes: Sequence[str],
    goal_options: Mapping[str, str],
    *,
    brand: str | None = None,
    rates: Mapping[str, float] | None = None,
    uses: str = "",
    vary_rates: Mapping[str, float] | None = None,
) -> str:
    """One seeded sentence asking for a ``noun`` with ``attributes`` and ``goal_options`` (values in
    the text, possibly paraphrased; see module docstring). ``rng`` has ``integers(n)``, ``u()`` and
    ``sample(n, k)``; ``rates`` overrides entries of :data:`RATES`; ``uses`` (what the product type is for)
    feeds the background sentences. The sentence takes one draw from ``rng`` and words itself from a generator
    seeded by it (:class:`_Wording`); ``vary_rates`` overrides :data:`~.asides.VARY_RATES` (all 0: the wording
    before issue 45) of :func:`~.asides.vary`, which rewords the sentence from its own seed, never drawing
    from ``rng``."""
    r = RATES if rates is None else {**RATES, **rates}
    rng = _Wording(rng.u())  # one draw from the caller's stream, whatever the wording draws after it
    attrs = [paraphrase_attribute(rng, a) if rng.u() < r["attr_paraphrase"] else a for a in attributes]
    if len(attrs) > 1:
        attrs = [attrs[i] for i in rng.sample(len(attrs), len(attrs))]
        if rng.u() < 0.5:
            attrs.reverse()
    names = list(goal_options)
    keys = [rng.u() for _ in names]
    values = []
    for i in sorted(range(len(names)), key=keys.__getitem__):
        v = goal_options[names[i]]
        values.append((names[i], paraphrase_value(rng, v) if rng.u() < r["value_paraphrase"] else v))
    ctx = need_phrase(rng, noun, _CATEGORY_OF.get(noun, "")) if rng.u() < r["need"] else ""
    if not ctx and rng.u() < r["context"]:
        ctx = _context(rng)
    qual = _pick(rng, QUALIFIERS) if rng.u() < r["qualifier"] else ""
    made_by = ""
    if brand and rng.u() < r["brand"]:
        b = brand.lower()
        made_by = _pick(rng, (f"from {b}", f"by {b}", f"{b} brand", f"made by {b}", f"from the brand {b}",
                              f"from {b}", f"by {b}", f"{b} brand", f"{b}", f"by {b}", f"from {b} only", f"{b}"))
    if rng.u() < r["terse"]:  # a search-box habit: words without the grammar
        parts = [*attrs, noun, *(v for _, v in values), made_by, ctx if rng.u() < 0.5 else ""]
        body = " ".join(p for p in parts if p)
    else:
        second = bool(values) and rng.u() < r["second"]  # the options in a sentence of their own
        bare = [] if second else [v for n, v in values if n in _BARE and rng.u() < r["bare"]]  # "a lavender shampoo"
        opts = "" if second else _join([_option_phrase(rng, n, v) for n, v in values if v not in bare], rng)
        post = [a for a in attrs if a.startswith(_PHRASE_STARTS)]
        pre = [a for a in attrs if not a.startswith(_PHRASE_STARTS)]
        lead = _pick(rng, LEADS)
        form = (rng.integers(4) if rng.u() < 0.45 else 0) if pre else 0  # most put them before the noun
        joined = _join(pre, rng)
        mods = " ".join(x for x in (qual, *bare, joined if form == 0 else "") if x)
        head = f"{mods} {noun}".strip()
        plural = noun.endswith("s") and not noun.endswith("ss")
        head = f"{_article(head)} {head}" if not plural and rng.u() < 0.75 else head
        tail = " ".join(x for x in (made_by, _join(post, rng), opts) if x)
        if form == 1:
            tail = f"{_pick(rng, ('that is', 'that is', 'which is', 'that are', 'being'))} {joined}" + (f" {tail}" if tail else "")
        elif form == 2:
            tail = (f"{tail}, " if tail else "") + _pick(rng, _MUST) + f" {joined}"
        elif form == 3:
            tail = (f"{tail} " if tail else "") + _pick(rng, ("which is", "that's", "with", "that has",
                "featuring", "which has", "having", "that offers", "that comes", "that's also", "with some",
                "including", "that is")) + f" {joined}"
        own = ""
        if ctx.startswith(("for ", "since ")) and rng.u() < r["need_sentence"]:  # "... it's for my dorm."
            own = ctx[6:] + "." if ctx.startswith("since ") else _pick(rng, _NEED_SENTENCES).format(ctx)
            ctx = ""
        if ctx and rng.u() < 0.3:
            body = f"{lead} {head} {ctx} {tail}"
        else:
            body = f"{lead} {head} {tail} {ctx}"
        if rng.u() < r["closer"]:
            body = f"{body}, {_pick(rng, CLOSERS)}"
        if second:
            body = f"{body.strip()}. {option_sentence(rng, values)}"
        if own:
            body = f"{body.strip().rstrip('.')}. {own}"
    if rng.u() < r["story"]:
        body = f"{body.strip()}. {story_sentence(rng, noun, uses or 'everyday use')}"
    text = re.sub(r"\s+", " ", body).strip().replace(" ,", ",").replace("..", ".")
    text = re.sub(r"\b([\w'-]+) \1\b", r"\1", text)  # "high protein protein bar" -> "high protein bar"
    if vary_rates is None or any(vary_rates.values()):
        own = " ".join([noun, *attributes, *goal_options, *goal_options.values()]).split()
        text = vary(text, frozenset(own), vary_rates, attributes)
    if rng.u() < r["informal"]:
        text = informal(rng, text)
    return add_typo(rng, text) if rng.u() < r["typo"] else text


class _Wording:
    """The draws of one sentence (``u``, ``integers``, ``sample`` as the catalogue's stream has them), from a
    generator seeded by one draw of the caller's stream: a sentence costs the catalogue one draw however it
    is worded, so changing the wording never moves the products and goals drawn after it."""

    def __init__(self, u: float):
        self._r = random.Random(int(u * (1 << 53)))

    def u(self) -> float:
        return self._r.random()

    def integers(self, lo: int, hi: int | None = None) -> int:
        if hi is None:
            lo, hi = 0, lo
        return lo + min(int(self._r.random() * (hi - lo)), hi - lo - 1)

    def sample(self, n: int, k: int) -> list[int]:
        keys = [self._r.random() for _ in range(n)]
        return sorted(sorted(range(n), key=keys.__getitem__)[:k])


_NEED_SENTENCES = ("it's {}.", "this is {}.", "it's {}.", "it is {}.", "mostly {}.", "that's {}.")
"""A need phrase as a sentence of its own, after the request."""

_BARE = frozenset(("color", "scent", "flavor", "size"))
"""Options whose value people often write before the noun, bare ("an xl black hoodie")."""

_PHRASE_STARTS = ("with ", "for ", "that ", "without ", "no ", "packed ", "made ", "gentle ", "not ", "simple ",
                  "low in", "easy to")
"""Attribute wordings that follow the noun ("shoes with laces") instead of preceding it."""

_WORDS = re.compile(r"[a-z0-9]+(?:['.-][a-z0-9]+)*")
_SENTENCE_BREAK = re.compile(r"[.!?;]\s+(?=[a-z])")
_INFORMAL_TOKENS = frozenset(
    "im iam dont thats cant wont doesnt isnt ive youre theyre whats lookin wanna gonna gotta pls plz thx ty "
    "u ur bc abt approx asap".split()
)
_SPACING_SLIP = re.compile(r"\S {2,}\S|\w [,;?!]|\w \.(?!\d)|[a-z],[a-z]")


def _deletions(w: str) -> set[str]:
    return {w[:i] + w[i + 1:] for i in range(len(w))}


def sample_typos(toks: Sequence[Sequence[str]], min_len: int = 4, frequent: int = 3) -> list[bool]:
    """Per instruction: does it hold a *sample typo*, a word of ``min_len``+ letters that occurs once in the
    sample and is one edit (a letter dropped, added, replaced or two swapped: a shared single-letter
    deletion) from a word that occurs ``frequent``+ times, plural ``s`` pairs excepted. Relative to the
    sample itself, so human and generated text are judged alike, whatever their vocabulary."""
    counts: dict[str, int] = {}
    for t in toks:
        for w in t:
            counts[w] = counts.get(w, 0) + 1
    freq = {w for w, c in counts.items() if c >= frequent and len(w) >= min_len - 1 and w.isalpha()}
    near: set[str] = set(freq)
    for w in freq:
        near |= _deletions(w)

    def typo(w: str) -> bool:
        if counts[w] != 1 or len(w) < min_len or not w.isalpha():
            return False
        if w.endswith("s") and w[:-1] in freq or w + "s" in freq:
            return False
        return w in near or any(d in near for d in _deletions(w))

    return [any(typo(w) for w in t) for t in toks]


_FUNCTION_WORDS = frozenset(
    "the and for with that this are was its from one you your but not can any very too also all has have "
    "size color pack".split()
)
"""Words whose repetition in one instruction is no padding (``repeat_content`` skips them and any word of
fewer than 3 letters): function words and the option names people write after each value."""


def language_stats(texts: Sequence[str]) -> dict[str, float]:
    """Language statistics of a set of instructions, the one function both human and generated text are
    measured with: ``mean_words``, ``vocabulary`` (distinct words), ``distinct3`` (distinct word 3-grams over
    all 3-grams), ``two_sentence`` (share with a sentence break: ``.``, ``!``, ``?`` or ``;`` followed by
    space and a word), ``informal`` (share with an informal token: a contraction without its apostrophe,
    ``iam``, ``pls``, ``u``...; a spacing slip: two spaces, a space before punctuation, no space after a
    comma; or a :func:`sample_typos` typo). Words = lower-cased runs of letters and digits (with inner
    ``'.-``). Vocabulary and distinct-3 grow with the sample: compare equal sizes.
    Padding checks (issue 45: variety must not come from longer or repetitive text): ``median_words``,
    ``repeat3`` (share of instructions with one word 3+ times), ``repeat_content`` (share with a content word
    twice: 3+ letters, not in :data:`_FUNCTION_WORDS`), ``top3gram`` (share of all 3-grams taken by the 20
    most frequent: a template's signature)."""
    lows = [t.lower().replace("\u2019", "'") for t in texts]
    toks = [_WORDS.findall(t) for t in lows]
    n = sum(len(t) for t in toks)
    tri = [tuple(t[i : i + 3]) for t in toks for i in range(len(t) - 2)]
    typos = sample_typos(toks)
    informal = [
        typo or bool(_SPACING_SLIP.search(raw)) or any(w in _INFORMAL_TOKENS for w in t)
        for raw, t, typo in zip(lows, toks, typos)
    ]
    m = max(len(texts), 1)
    counts = [Counter(t) for t in toks]
    tri_counts = Counter(tri)
    lens = sorted(len(t) for t in toks)
    return {
        "n": float(len(texts)),
        "mean_words": n / m,
        "vocabulary": float(len({w for t in toks for w in t})),
        "distinct3": len(set(tri)) / max(len(tri), 1),
        "two_sentence": sum(bool(_SENTENCE_BREAK.search(t.strip())) for t in lows) / m,
        "informal": sum(informal) / m,
        "typo": sum(typos) / m,
        "median_words": float(lens[len(lens) // 2]) if lens else 0.0,
        "repeat3": sum(max(c.values(), default=0) >= 3 for c in counts) / m,
        "repeat_content": sum(any(v >= 2 and len(w) >= 3 and w not in _FUNCTION_WORDS for w, v in c.items())
                              for c in counts) / m,
        "top3gram": sum(v for _, v in tri_counts.most_common(20)) / max(len(tri), 1),
    }


__all__ = [
    "ATTRIBUTE_PARAPHRASES",
    "LEADS",
    "RATES",
    "VALUE_PARAPHRASES",
    "add_typo",
    "instruction_sentence",
    "language_stats",
    "paraphrase_attribute",
    "paraphrase_value",
    "sample_typos",
]
