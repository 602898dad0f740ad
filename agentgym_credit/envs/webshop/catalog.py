"""A seeded generator of WebShop products and goals, in WebShop's own raw data schema.

What lives here: :func:`iter_raw` (products one at a time, streamed), :func:`generate_raw` (raw
items, attribute file, reviews — the three files the original reads), :func:`generate_catalog` (the processed :class:`~.data.WebShopCatalog`),
:data:`PRODUCT_TYPES` (the vocabulary, from :mod:`.vocabulary`), :data:`GENERATOR_VERSION`.

How it is built, and why:

* Five top categories as in WebShop (beauty, fashion, grocery, electronics, garden/home), each
  with product types (``query`` = the type, as the original's scrape query).
* Every product of a type draws 2-4 attributes from the type's pool and a subset of each option
  list (colour, size, scent, flavor, capacity, ..., and packaging on every type); a share of
  families has no options at all (:data:`OMISSION`). Brands are drawn from 3,000 invented names.
* Products come in **families**: a base and 2-4 hard negatives that differ in one thing only
  (:data:`HARD_NEGATIVE_KINDS`: one of the base goal's attributes swapped, the goal's value of one
  option missing, a price above any budget of the base's goal), in random catalog order. Each
  member's goal asks for what sets it apart, so the right product needs a look at the item page,
  and the full score needs the right options. Generator v7 (issue 45) adds 4-6 *description twins* per
  family (:data:`DESCRIPTION_TWINS`: copies priced around the base whose asked attributes only the Description page
  states, with the same search words), puts price negatives just above the highest budget, and asks some
  measured options as a bound (:mod:`.constraints`: "smallest size over 600 ml"). Generator v8 prices twins like
  their base (:data:`TWIN_PRICE_SPREAD`: v7's were all cheaper, a cue) and, with each category's shared attributes
  (:data:`~.vocabulary.CATEGORY_ATTRIBUTES`) and 2-3 attribute bases, gives most families 4-8 twins.
* The text of a product mentions its own attributes only, and never its option values, so a
  wrong product or a wrong option costs reward exactly as the reward rules say. All members of a
  family share one title (half the families name one attribute in it, :data:`TITLE_ATTRIBUTE`), and
  one attribute of each product is left out of its bullet points: siblings differ on the item page.
* Option lists are spelled the vendor's way in half the families (:mod:`.vendor`: "midnight" for navy
  blue, "xl (16-18)", "473 ml"); the goal asks for the page's value, the sentence keeps the shopper's.
* Each product carries an instruction sentence (:mod:`.instructions`: human-like, seeded, option
  values inside, sometimes paraphrased, a typo now and then) over 1-3 of its attributes and the goal
  options, which leave some of the product's options out (:data:`OMISSION`; ``instruction_options``
  in the attribute file); :mod:`.data` appends the budget clause.
* Sizes from 10 to 2,000,000 products (the original has 1,181,436), streamed: memory holds the
  processed products, never a raw copy; the same ``(num_products, seed)`` gives the same catalog,
  and a catalog's first products do not depend on its size.
"""

from __future__ import annotations

import gc
import math
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from agentgym_credit.envs.webshop.constraints import CONSTRAINT_RATE, constrainable, constraint_clause
from agentgym_credit.envs.webshop.data import (
    WebShopCatalog,
    process_item,
    product_prices,
    synthetic_goals,
)
from agentgym_credit.envs.webshop.instructions import instruction_sentence
from agentgym_credit.envs.webshop.vendor import vendor_values
from agentgym_credit.envs.webshop.vocabulary import (
    BENEFITS,
    BRANDS,
    LINES,
    PRODUCT_TYPES,
    REVIEW_BODIES,
    REVIEW_TITLES,
    ProductType,
)

GENERATOR_VERSION = 9
"""Bumped whenever the generator's output changes (keys the on-disk cache)."""

MIN_PRODUCTS, MAX_PRODUCTS = 10, 2_000_000
"""Catalog sizes the generator makes (the original has 1,181,436 products)."""
PROGRESS_FROM = 50_000
"""Catalogs from this size show a progress bar (when ``tqdm`` is installed)."""

_B36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _asin(i: int, seed: int) -> str:
    """Unique 10-character asin for product ``i`` (an affine bijection mod 36**8)."""
    v = ((i + 1) * 2654435761 + seed * 97 + 12345) % (36**8)
    chars = []
    for _ in range(8):
        v, r = divmod(v, 36)
        chars.append(_B36[r])
    return "B0" + "".join(reversed(chars))


class _Stream:
    """Uniform draws from a seeded generator, pre-drawn in blocks (per-call ``Generator`` methods
    cost microseconds each; the generator makes ~20 draws per product)."""

    def __init__(self, rng: np.random.Generator, block: int = 1 << 16):
        self.rng, self.block = rng, block
        self.buf: list[float] = []
        self.i = 0

    def u(self) -> float:
        if self.i >= len(self.buf):
            self.buf, self.i = self.rng.random(self.block).tolist(), 0
        v = self.buf[self.i]
        self.i += 1
        return v

    def integers(self, lo: int, hi: int | None = None) -> int:
        """Uniform int in ``[lo, hi)`` (``[0, lo)`` with one argument)."""
        if hi is None:
            lo, hi = 0, lo
        return lo + min(int(self.u() * (hi - lo)), hi - lo - 1)

    def sample(self, n: int, k: int) -> list[int]:
        """``k`` distinct indices of ``range(n)``, sorted."""
        keys = [self.u() for _ in range(n)]
        return sorted(sorted(range(n), key=keys.__getitem__)[:k])


def _title_case(s: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in s.split())


TITLE_ATTRIBUTE = 0.5
"""Share of families whose titles name one attribute (the family's, the same in every member's title);
the others name none. Every attribute is in the description, all but one in the bullet points."""

HARD_NEGATIVE_KINDS = ("attribute", "option", "price")
"""How a hard negative differs from its family's base product (drawn at :data:`NEGATIVE_SHARES`): one
instruction attribute swapped for another, the goal's value of one option missing, or a price above
any budget of the base's goal (and, from generator v7, one asked attribute of its own)."""
NEGATIVE_SHARES = (0.3, 0.6)
"""Cumulative shares of the attribute and option kinds among hard negatives (the rest: price)."""


OMISSION: dict[str, float] = {"none": 0.06, "option": 0.97, "packaging": 0.85, "family_without_options": 0.06}
"""How often a goal leaves options out, as human shoppers do: ``none`` = the goal asks for no option at
all (any choice on the item page, or none, satisfies it), else each option is asked with probability
``option`` (``packaging`` for the packaging option); ``family_without_options`` = share of product
families with no options at all (as many Amazon products)."""


def _ask(rng: _Stream, options: dict[str, list[str]]) -> dict[str, str]:
    """The option values a goal asks for: a seeded subset of ``options`` (see :data:`OMISSION`)."""
    if not options or rng.u() < OMISSION["none"]:
        return {}
    out = {}
    for n, vals in options.items():
        if rng.u() < OMISSION["packaging" if n == "packaging" else "option"]:
            out[n] = vals[rng.integers(len(vals))]
    return out


ATTRIBUTE_COUNTS = (0.7, 0.95)
"""Cumulative shares of goals asking for 1 and up to 2 attributes (the rest ask 3). Issue 45 tried 0.2 / 0.6 (a
wrong description twin then costs more of the score: about 1 point less for the best script on tuning seeds) and
kept 0.7 / 0.95 (v8 tried 0.35 / 0.85 with options asked at 0.6: 73.8 / 22.9% for the best script at 1k on
tuning seeds, but sentence vocabulary 0.84x human on the language tuning seeds): the longer instructions (22.8 words a goal at 5,000, against the human sample's 14.4) moved
the language away from the human goals."""


def _n_instruction_attrs(rng: _Stream, attrs: list[str]) -> list[str]:
    """1 (:data:`ATTRIBUTE_COUNTS`: 70% of the time), 2 (25%) or 3 of ``attrs`` for an instruction."""
    u = rng.u()
    k = min(1 if u < ATTRIBUTE_COUNTS[0] else 2 if u < ATTRIBUTE_COUNTS[1] else 3, len(attrs))
    return [attrs[j] for j in rng.sample(len(attrs), k)]


HARD_TYPE_STEP = 6
"""``hard=True`` catalogues draw from every 6th product type of the vocabulary (13 types across the five
categories), so a catalogue holds about 6x as many same-type families, and spell every option list the
vendor's way (rate 1.0 instead of :data:`~.vendor.VENDOR_RATE`). Tuned on catalogue seeds 1-3 against the
meaning scripts of ``bench/envs/webshop_meaning.py`` (issue 45)."""


def _family(rng: _Stream, pt: ProductType, hard: bool = False) -> list[dict[str, Any]]:
    """A base product spec and 2-4 hard negatives of it (see module docstring), in random order."""
    brand = BRANDS[rng.integers(len(BRANDS))]
    line = LINES[rng.integers(len(LINES))]
    k = rng.integers(2, min(FAMILY_ATTRIBUTES, len(pt.attributes)) + 1)
    attrs = [pt.attributes[j] for j in rng.sample(len(pt.attributes), k)]
    options: dict[str, list[str]] = {}
    if rng.u() >= OMISSION["family_without_options"]:
        for oname, values in pt.options.items():
            m = rng.integers(2, len(values) + 1)
            options[oname] = [values[j] for j in rng.sample(len(values), m)]
    lo, hi = pt.price
    p0 = round(float(lo * (1.5 * hi / lo) ** rng.u()), 2)  # log-uniform: Amazon-like spread within a type
    top = p0 * (1.1 + 0.4 * rng.u())
    ranged = rng.u() < 0.2
    ins = _n_instruction_attrs(rng, attrs)
    goal_opts = _ask(rng, options)
    base = {
        "brand": brand,
        "line": line,
        "attrs": attrs,
        "options": options,
        "price": (p0, top if ranged else None),
    }
    base.update(ins=ins, goal=goal_opts, kind="base")
    base["vendor"] = vendor_values(rng, pt.options, 1.0) if hard else vendor_values(rng, pt.options)
    # the title names at most one attribute, the same for the whole family: what tells siblings apart is
    # on the item page (bullets, description, attributes), not in the results list
    base["title_attrs"] = [attrs[rng.integers(len(attrs))]] if rng.u() < TITLE_ATTRIBUTE else []
    members = [base]
    for _ in range(rng.integers(2, 5)):
        u = rng.u()
        kind = "attribute" if u < NEGATIVE_SHARES[0] else "option" if u < NEGATIVE_SHARES[1] else "price"
        if kind == "option" and not goal_opts:
            kind = "attribute"
        neg = {
            **base,
            "kind": kind,
            "options": {n: list(v) for n, v in options.items()},
            "attrs": list(attrs),
        }
        if kind == "attribute":
            # multi-word ones where the pool allows: the description can then say which one it lacks
            spare = [a for a in pt.attributes if a not in attrs]
            spare = [a for a in spare if " " in a] or spare
            pool = [a for a in ins if " " in a] or ins
            gone = pool[rng.integers(len(pool))]
            if spare:
                neg["attrs"][attrs.index(gone)] = neg["own_attr"] = spare[rng.integers(len(spare))]
            else:
                neg["attrs"] = [a for a in attrs if a != gone] or [attrs[0]]
        elif kind == "option":
            n = list(goal_opts)[rng.integers(len(goal_opts))]
            vals = neg["options"][n]
            others = [v for v in pt.options[n] if v not in vals]
            i = vals.index(goal_opts[n])
            if others:
                vals[i] = others[rng.integers(len(others))]
                neg["own_option"] = (n, vals[i])
            elif len(vals) > 1:
                del vals[i]
        else:  # a price trap: just above the highest budget the base's goal can get (reward.PRICE_RANGE steps),
            # and one asked multi-word attribute of its own (else the cheaper base would satisfy its goal)
            neg["price"] = (round(10 * (math.floor(max(p0, top) / 10) + 4) + 0.5 + 4 * rng.u(), 2), None)
            used = {m.get("own_attr") for m in members}
            spare = [a for a in pt.attributes if a not in attrs and " " in a and a not in used]
            gone = [a for a in ins if " " in a and a not in base["title_attrs"]]
            if spare and gone:
                neg["attrs"][attrs.index(gone[rng.integers(len(gone))])] = neg["own_attr"] = spare[rng.integers(len(spare))]
        members.append(neg)
    members += _description_twins(rng, pt, members)
    _family_text(rng, pt, members)
    order = rng.sample(len(members), len(members))
    return [members[j] for j in sorted(range(len(members)), key=lambda j: order.index(j))]


FAMILY_ATTRIBUTES = 3
"""Most attributes a family's base has (at least 2): the rest of the type's pool is left for twins to swap in
(4 until v7; 3 from v8, chosen on tuning seeds 1-9, leaves room for more twins)."""
DESCRIPTION_TWINS = (6, 8)
"""Fewest and most *description twins* a family gets (issue 45; 4-6 until v7, when the pool left one or two),
as many as the type's spare multi-word attributes allow: copies of the base, priced around it
(:data:`TWIN_PRICE_SPREAD`), with every asked multi-word attribute swapped for another (its own one first, unique in
the family), and the same title, bullet
points, options and description words: only the description's wording says which attribute a twin has
(``Key features: ...`` vs ``Not: ...``, the missing ones hyphenated so that the reward's text match and the
search engine's words are those of the base), so telling them apart costs a Description click each."""


TWIN_PRICE_SPREAD = (0.1, 2.4)
"""Description twins' prices (generator v8, issue 45): the base's price is one uniform draw within
``min(0.1 * price, $2.40)`` of a family centre and each twin's another, so the base is no likelier than a twin to
be the dearest or cheapest look-alike (v7's twins were always cheaper: a cue). Twins of a ranged base get a
range of the same proportions. Every twin is within $9.60 of the base: inside any budget the base's goal draws
(:func:`~.data._budget` leaves at least $10 above the price), and the base inside every twin's."""


def _description_twins(rng: _Stream, pt: ProductType, members: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The base's description twins (see :data:`DESCRIPTION_TWINS`); none when the base asks for no multi-word
    attribute outside its title or the type has no multi-word attribute to spare."""
    base = members[0]
    gone_pool = [a for a in base["ins"] if " " in a and a not in base["title_attrs"]]
    used = {m.get("own_attr") for m in members}
    spares = [a for a in pt.attributes if a not in base["attrs"] and " " in a and a not in used]
    if not gone_pool or not spares:
        return []
    k = min(rng.integers(DESCRIPTION_TWINS[0], DESCRIPTION_TWINS[1] + 1), len(spares))
    # prices drawn like the base's: the base is one draw around a centre, each twin another (same ranged form)
    p0, top = base["price"]
    spread = min(TWIN_PRICE_SPREAD[0] * p0, TWIN_PRICE_SPREAD[1])
    centre = p0 - spread * (2 * rng.u() - 1)
    twins = []
    for j in rng.sample(len(spares), k):
        # every asked multi-word attribute swapped: this twin's own one, then other spares while they last
        attrs = list(base["attrs"])
        others = [a for a in spares if a != spares[j]]
        fill = [spares[j]] + [others[i] for i in rng.sample(len(others), min(len(others), len(gone_pool) - 1))]
        for gone, new in zip(gone_pool, fill):
            attrs[attrs.index(gone)] = new
        price = round(max(0.01, centre + spread * (2 * rng.u() - 1)), 2)
        twins.append({**base, "kind": "description", "attrs": attrs, "own_attr": spares[j],
                      "price": (price, round(price * top / p0, 2) if top is not None else None),
                      "options": {n: list(v) for n, v in base["options"].items()}})
    return twins


def _family_text(rng: _Stream, pt: ProductType, members: list[dict[str, Any]]) -> None:
    """One benefit line and one bullet-point list for the whole family (the attributes every member has, one
    left out), and per member the family's multi-word attributes it lacks (its description's ``Not:`` list)."""
    union: list[str] = []
    for m in members:
        union += [a for a in m["attrs"] if a not in union]
    core = [a for a in members[0]["attrs"] if all(a in m["attrs"] for m in members)]
    bullet_attrs = [core[j] for j in rng.sample(len(core), max(1, len(core) - 1))] if core else []
    benefit = BENEFITS[rng.integers(len(BENEFITS))].format(uses=pt.uses)
    for m in members:
        m.update(benefit=benefit, bullet_attrs=bullet_attrs,
                 not_attrs=[a.replace(" ", "-") for a in union if a not in m["attrs"] and " " in a])


def _member_goal(rng: _Stream, spec: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """Instruction attributes and goal options of a family member: the base's own; for a negative a
    fresh draw that includes the attribute or option value only it has in the family."""
    if spec["kind"] == "base":
        return list(spec["ins"]), dict(spec["goal"])
    ins = _n_instruction_attrs(rng, spec["attrs"])
    goal = _ask(rng, spec["options"])
    # ask for what sets this product apart, so that its siblings are hard negatives of its goal too
    own = spec.get("own_attr")
    if own is not None and own not in ins:
        ins[rng.integers(len(ins))] = own
    if spec.get("own_option") is not None:
        name, value = spec["own_option"]
        goal[name] = value
    return ins, goal


def _sentence(rng: _Stream, pt: ProductType, spec: dict[str, Any], ins: list[str], goal: dict[str, str]) -> str:
    """The member's instruction sentence; at :data:`~.constraints.CONSTRAINT_RATE` one measured option it asks
    for (size, capacity) is left out of the sentence and asked as a bound in a clause after it."""
    for name, value in goal.items():
        if name != "packaging" and constrainable(spec["options"][name]):
            if rng.u() >= CONSTRAINT_RATE:
                break
            clause = constraint_clause(rng, name, spec["options"][name], value)
            if clause is None:
                break
            rest = {n: v for n, v in goal.items() if n != name}
            text = instruction_sentence(rng, pt.noun, ins, rest, brand=spec["brand"], uses=pt.uses)
            return f"{text.rstrip(' .,')}, {clause}"
    return instruction_sentence(rng, pt.noun, ins, goal, brand=spec["brand"], uses=pt.uses)


def iter_raw(num_products: int, seed: int = 0, hard: bool = False) -> Iterator[tuple[dict, dict, dict | None]]:
    """Products one at a time, as ``(item, attribute entry, review entry or None)`` in the schema of
    the original files (see module docstring): nothing is held beyond the current family, so any size
    up to :data:`MAX_PRODUCTS` streams in constant memory. The attribute entry also holds the goal
    options (``instruction_options``, a dict) that its instruction sentence asks for. ``hard``: fewer
    product types, every option list in vendor spelling (:data:`HARD_TYPE_STEP`)."""
    if not MIN_PRODUCTS <= int(num_products) <= MAX_PRODUCTS:
        raise ValueError(f"num_products must be in [{MIN_PRODUCTS}, {MAX_PRODUCTS}], got {num_products}")
    rng = _Stream(np.random.default_rng([int(seed), GENERATOR_VERSION]))
    n, i = int(num_products), 0
    intern = sys.intern
    types = PRODUCT_TYPES[::HARD_TYPE_STEP] if hard else PRODUCT_TYPES
    while i < n:
        pt = types[rng.integers(len(types))]
        for spec in _family(rng, pt, hard):
            if i >= n:
                return
            attrs = spec["attrs"]
            asin = _asin(i, seed)
            i += 1
            shown = [a for a in spec["title_attrs"] if a in attrs]
            title = f"{spec['brand']} {spec['line']} {_title_case(' '.join(shown))} {_title_case(pt.noun)}"
            title = " ".join(title.split())
            benefit = spec["benefit"]
            bullets = [intern(f"{_title_case(a)}: {benefit}.") for a in spec["bullet_attrs"]]
            bullets.append(intern(f"Great for {pt.uses}."))
            missing = f" Not: {', '.join(spec['not_attrs'])}." if spec["not_attrs"] else ""
            desc = (
                f"{spec['brand']} {spec['line']} {pt.noun} for {pt.uses}. "
                + f"Key features: {', '.join(attrs)}.{missing}"
                + f" {benefit[:1].upper()}{benefit[1:]}."
            )
            p0, top = spec["price"]
            pricing = f"${p0:.2f}" if top is None else f"${p0:.2f} - ${top:.2f}"
            vendor = spec["vendor"]
            options = {
                _title_case(o): [{"value": vendor[(o, v)], "image": None} for v in vals]
                for o, vals in spec["options"].items()
            }
            item = {
                "asin": asin,
                "name": title,
                "full_description": desc,
                "small_description": bullets,
                "pricing": pricing,
                "customization_options": options,
                "category": pt.category,
                "product_category": " › ".join(pt.path),
                "query": pt.noun,
                "images": [f"https://example.invalid/images/{asin}.jpg"],
            }
            ins_attrs, goal_opts = _member_goal(rng, spec)
            att = {
                "attributes": list(attrs),
                "instruction": _sentence(rng, pt, spec, ins_attrs, goal_opts),
                "instruction_attributes": ins_attrs,
                "instruction_options": {o: vendor[(o, v)] for o, v in goal_opts.items()},
            }
            review = None
            n_rev = rng.integers(0, 4)
            if n_rev:
                revs = []
                for _ in range(n_rev):
                    revs.append(
                        {
                            "title": REVIEW_TITLES[rng.integers(len(REVIEW_TITLES))],
                            "stars": rng.integers(1, 6),
                            "review": REVIEW_BODIES[rng.integers(len(REVIEW_BODIES))],
                        }
                    )
                avg = round(sum(r["stars"] for r in revs) / n_rev, 1)
                review = {"asin": asin, "reviews": revs, "average_rating": avg}
            yield item, att, review


def generate_raw(num_products: int, seed: int = 0) -> tuple[list[dict], dict[str, dict], list[dict]]:
    """``(items, attributes, reviews)``: :func:`iter_raw` collected into the three files' shapes."""
    items: list[dict] = []
    attrs_file: dict[str, dict] = {}
    reviews: list[dict] = []
    for item, att, review in iter_raw(num_products, seed):
        items.append(item)
        attrs_file[item["asin"]] = att
        if review is not None:
            reviews.append(review)
    return items, attrs_file, reviews


def _progress(it: Iterable, n: int) -> Iterable:
    if n < PROGRESS_FROM:
        return it
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return it
    return tqdm(it, total=n, desc="webshop: generating products", unit="product")


def generate_catalog(num_products: int = 1000, seed: int = 0, hard: bool = False) -> WebShopCatalog:
    """The processed catalog of :func:`iter_raw`: products, prices and shuffled goals, processed one
    product at a time (no raw copy of the catalog is held). ``hard``: :data:`HARD_TYPE_STEP` (issue 45;
    off by default, so default catalogs are unchanged)."""
    gc_was_on = gc.isenabled()
    gc.disable()  # millions of small containers, no cycles: the collector would only cost time
    try:
        products = []
        for item, att, review in _progress(iter_raw(num_products, seed, hard), int(num_products)):
            revs = review["reviews"] if review is not None else []
            rating = review["average_rating"] if review is not None else "N.A."
            products.append(process_item(item, att, revs, rating))
        prices = product_prices(products, seed=seed)
        goals = synthetic_goals(products, prices, seed=seed * 7919 + 233)
    finally:
        if gc_was_on:
            gc.enable()
    return WebShopCatalog(
        products, prices, goals, source=f"generated:v{GENERATOR_VERSION}{':hard' if hard else ''}:{num_products}:{seed}"
    )


__all__ = [
    "ATTRIBUTE_COUNTS",
    "DESCRIPTION_TWINS",
    "FAMILY_ATTRIBUTES",
    "GENERATOR_VERSION",
    "HARD_NEGATIVE_KINDS",
    "HARD_TYPE_STEP",
    "MAX_PRODUCTS",
    "NEGATIVE_SHARES",
    "OMISSION",
    "PRODUCT_TYPES",
    "TITLE_ATTRIBUTE",
    "TWIN_PRICE_SPREAD",
    "ProductType",
    "generate_catalog",
    "generate_raw",
    "iter_raw",
]
