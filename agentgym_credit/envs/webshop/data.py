"""Products and goals in WebShop's data schema, from the generator or from the original files.

What lives here:

* :func:`process_items` — raw items (the schema of WebShop's ``items_shuffle*.json``: ``asin``,
  ``name``, ``full_description``, ``small_description``, ``pricing``, ``customization_options``,
  ``category``, ``product_category``, ``query``, ``images``) plus the attribute file
  (``items_ins_v2*.json``: ``{asin: {"attributes", "instruction", "instruction_attributes"}}``), the
  optional reviews file and the optional human instructions (``items_human_ins.json``) →
  processed products with the fields the pages and the reward read (``Title``, ``Description``,
  ``BulletPoints``, ``pricing``, ``Price``, ``options``, ``Attributes``, ``Reviews``, ``Rating``).
  The processing follows the original loader (lower-cased option names and values, ``/`` → ``" | "``,
  ``"$a - $b"`` price ranges, first-seen asin kept, malformed asins skipped).
* :func:`product_prices` — one price per product (a range's price drawn uniformly, seeded).
* :func:`synthetic_goals` / :func:`human_goals` — goals in the original's form (:func:`synthetic_goal_table`:
  the synthetic ones as :class:`SyntheticGoals` columns, what the loader keeps)
  (``asin, category, query, name, product_category, instruction_text, attributes, price_upper,
  goal_options, weight``) with its budget rule: ``price_upper`` is the larger of two of the first
  four multiples of 10 above the price, and ``", and price lower than N.00 dollars"`` is appended.
* :func:`load_original` — the loader for the original files, when a user has them: streamed with
  :func:`iter_json_array` / :func:`iter_json_object` (the standard library's decoder, one member at a
  time), at most ``goals_per_product`` synthetic goals per product.
* :class:`WebShopCatalog` — products, prices, goals and the train/test split.

Splits (as in the GiGPO/verl-agent WebShop runs): after the seeded shuffle of goals, goals
``0..499`` are the **test** split and the rest are **train**.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.envs.webshop.reward import NO_BUDGET, PRICE_RANGE
from agentgym_credit.envs.webshop.search import product_document

TEST_GOALS = 500
"""Goals ``0..TEST_GOALS-1`` form the test split; the rest form the train split."""

GOAL_SHUFFLE_SEED = 233
"""Seed of the goal shuffle (the original shuffles with ``random.seed(233)``)."""

SPLITS = ("train", "test", "all")


def _parse_pricing(pricing: Any) -> tuple[list[float], str]:
    """``"$12.99"`` → ``([12.99], "$12.99")``; ``"$10.5 - $20"`` → ``([10.5, 20.0], "$10.5 to $20.0")``."""
    if not pricing:
        return [100.0], "$100.0"
    if isinstance(pricing, (int, float)):
        return [float(pricing)], f"${float(pricing)}"
    values = []
    for part in str(pricing).split("$")[1:]:
        digits = re.sub(r"[^\d.]", "", part)
        try:
            values.append(float(Decimal(digits)))
        except InvalidOperation:
            continue
    if not values:
        return [100.0], "$100.0"
    if len(values) == 1:
        return values, f"${values[0]}"
    return values[:2], f"${values[0]} to ${values[1]}"


def process_item(
    p: Mapping[str, Any],
    att: Mapping[str, Any] | None,
    reviews: Sequence[Mapping[str, Any]] = (),
    rating: Any = "N.A.",
    human: Any = None,
) -> dict[str, Any]:
    """One raw item (with its attribute entry, reviews, rating and human instructions) → one processed
    product (see module docstring). Repeated strings (option values, categories, queries) are interned:
    a million products share them."""
    intern = sys.intern
    pricing, price_tag = _parse_pricing(p.get("pricing"))
    options: dict[str, list[str]] = {}
    for name, contents in (p.get("customization_options") or {}).items():
        if contents is None:
            continue
        options[intern(name.lower())] = [intern(c["value"].strip().replace("/", " | ").lower()) for c in contents]
    small = p.get("small_description") or [""]
    bullets = list(small) if isinstance(small, list) else [small]
    revs = [
        {
            "title": r.get("title", ""),
            "score": r.get("score", r.get("stars", 0)),
            "body": r.get("body", r.get("review", "")),
        }
        for r in reviews
    ]
    att = att or {}
    prod: dict[str, Any] = {
        "asin": str(p["asin"]),
        "name": p["name"],
        "Title": p["name"],
        "Description": p.get("full_description") or "",
        "BulletPoints": bullets or [""],
        "pricing": pricing,
        "Price": price_tag,
        "options": options,
        "Attributes": [intern(a) for a in att.get("attributes") or ["DUMMY_ATTR"]],
        "category": intern(p.get("category", "")),
        "query": intern(str(p.get("query", "")).lower().strip()),
        "product_category": intern(p.get("product_category", "")),
        "Reviews": revs,
        "Rating": rating,
        "instruction_text": att.get("instruction"),
        "instruction_attributes": att.get("instruction_attributes"),
        "instruction_options": att.get("instruction_options"),
    }
    if human is not None:
        prod["instructions"] = human
    return prod


def _valid_asin(asin: str) -> bool:
    return bool(asin) and asin != "nan" and len(asin) <= 10


def process_items(
    items: Iterable[Mapping[str, Any]],
    attributes: Mapping[str, Mapping[str, Any]],
    reviews: Iterable[Mapping[str, Any]] | None = None,
    human_instructions: Mapping[str, Any] | None = None,
    num_products: int | None = None,
) -> list[dict[str, Any]]:
    """Raw WebShop items → processed products (see module docstring); ``items`` may be a stream."""
    all_reviews: dict[str, list[dict[str, Any]]] = {}
    all_ratings: dict[str, Any] = {}
    for r in reviews or ():
        all_reviews[r["asin"]] = list(r.get("reviews") or [])
        all_ratings[r["asin"]] = r.get("average_rating", "N.A.")
    if num_products is not None:
        items = itertools.islice(items, num_products)
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    human = human_instructions or {}
    for p in items:
        asin = str(p.get("asin", ""))
        if not _valid_asin(asin) or asin in seen:
            continue
        seen.add(asin)
        out.append(
            process_item(
                p, attributes.get(asin), all_reviews.get(asin, ()), all_ratings.get(asin, "N.A."), human.get(asin)
            )
        )
    return out


def product_prices(products: Sequence[Mapping[str, Any]], seed: int = 0) -> dict[str, float]:
    """One price per product: the single price, or a seeded uniform draw inside a price range."""
    rng = np.random.default_rng(seed)
    draws = rng.random(len(products))
    prices = {}
    for u, p in zip(draws, products):
        pr = p["pricing"]
        prices[p["asin"]] = float(pr[0]) if len(pr) == 1 else float(pr[0] + u * (pr[1] - pr[0]))
    return prices


def _budget(price: float, rng: np.random.Generator) -> tuple[float, str]:
    above = [p for p in PRICE_RANGE if p > price][:4]
    if len(above) < 2:
        return NO_BUDGET, ""
    upper = float(max(rng.choice(above, size=2, replace=False)))
    return upper, f", and price lower than {upper:.2f} dollars"


def _combo_numbers(rng: np.random.Generator, lists: Sequence[Sequence[str]], cap: int | None) -> range | list[int]:
    """The option combinations :func:`_combos` picks, as mixed-radix numbers (the last list's digit lowest)."""
    total = math.prod(len(x) for x in lists)
    if cap is None or total <= cap:
        return range(total)
    picked: set[int] = set()
    while len(picked) < cap:  # cap < total: distinct mixed-radix numbers by rejection
        picked.add(int(sum(int(rng.integers(len(x))) * math.prod(len(y) for y in lists[i + 1 :])
                           for i, x in enumerate(lists))))
    return sorted(picked)


def _combo(k: int, lists: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """Combination number ``k`` (:func:`_combo_numbers`) as the values it picks."""
    combo = []
    for x in reversed(lists):
        k, j = divmod(k, len(x))
        combo.append(x[j])
    return tuple(reversed(combo))


def _combos(rng: np.random.Generator, lists: Sequence[Sequence[str]], cap: int | None) -> list[tuple[str, ...]]:
    """Every option combination (``cap`` None), or ``cap`` distinct ones drawn uniformly, seeded, without
    listing them all (a product with many options has millions of combinations)."""
    return [_combo(k, lists) for k in _combo_numbers(rng, lists, cap)]


class SyntheticGoals(Sequence):
    """Synthetic goals as columns — product, option combination number, budget — with the products they are
    made from: a goal is the dict :func:`synthetic_goals` lists, built when read (``goals[i]``, slices,
    iteration). ~20 bytes a goal instead of ~750 as dicts: the original's 1.18M products make ~10M goals.

    Read-only, like a catalog (``goals[i]`` is a new dict each time: editing it changes nothing)."""

    def __init__(self, products: Sequence[Mapping[str, Any]], product: np.ndarray, combo: np.ndarray,
                 upper: np.ndarray, weight: np.ndarray):
        self.products, self.product, self.combo, self.upper, self.weight = products, product, combo, upper, weight

    def __len__(self) -> int:
        return int(self.product.shape[0])

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._goal(j) for j in range(*i.indices(len(self)))]
        n = len(self)
        j = int(i)
        if not -n <= j < n:
            raise IndexError(f"goal index {i} out of range ({n} goals)")
        return self._goal(j % n)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self._goal(j) for j in range(len(self)))

    def _goal(self, j: int) -> dict[str, Any]:
        pi = int(self.product[j])
        p = self.products[pi]
        preset = p.get("instruction_options")
        if isinstance(preset, Mapping):  # generated: the sentence already asks for these options
            names = sorted(preset)
            combo = tuple(preset[n] for n in names)
        else:
            names = sorted(p["options"])
            combo = _combo(int(self.combo[j]), [p["options"][n] for n in names])
        gopts = dict(zip(names, combo))
        opt_text = ", and ".join(f"{k}: {v}" for k, v in gopts.items())
        opt_text = f" with {opt_text}" if opt_text and not isinstance(preset, Mapping) else ""
        upper = float(self.upper[j])
        price_text = "" if upper == NO_BUDGET else f", and price lower than {upper:.2f} dollars"
        return {
            "asin": p["asin"],
            "category": p["category"],
            "query": p["query"],
            "name": p["Title"],
            "product_category": p["product_category"],
            "instruction_text": f"{p['instruction_text']}{opt_text}{price_text}",
            "attributes": list(p["instruction_attributes"] or []),
            "price_upper": upper,
            "goal_options": gopts,
            "weight": float(self.weight[pi]),
        }


def synthetic_goal_table(
    products: Sequence[Mapping[str, Any]],
    prices: Mapping[str, float],
    seed: int = GOAL_SHUFFLE_SEED,
    combos_per_product: int | None = 1,
) -> SyntheticGoals:
    """:func:`synthetic_goals` as :class:`SyntheticGoals` columns (the same goals, in the same order)."""
    rng = np.random.default_rng(seed)
    product, combo, upper = array("i"), [], array("d")
    goals_of = np.zeros(len(products), dtype=np.int64)
    for pi, p in enumerate(products):
        if not p.get("instruction_text"):
            continue
        preset = p.get("instruction_options")
        if isinstance(preset, Mapping):  # generated: one goal, the options its sentence asks for
            numbers: range | list[int] = range(1)
        else:
            names = sorted(p["options"])
            numbers = _combo_numbers(rng, [p["options"][n] for n in names], combos_per_product)
        price = prices[p["asin"]]
        for k in numbers:
            product.append(pi)
            combo.append(k)
            upper.append(_budget(price, rng)[0])
        goals_of[pi] = len(numbers)
    counts: dict[str, int] = {}  # _weights' counts: a product's attributes once for each of its goals
    for pi in np.flatnonzero(goals_of).tolist():
        for a in products[pi]["instruction_attributes"] or []:
            counts[a] = counts.get(a, 0) + int(goals_of[pi])
    weight = np.ones(len(products), dtype=np.float64)
    for pi in np.flatnonzero(goals_of).tolist():
        attrs = list(products[pi]["instruction_attributes"] or [])
        if attrs:
            weight[pi] = sum(1.0 / counts[a] for a in attrs) / len(attrs)
    order = rng.permutation(len(product))
    big = any(k >= 2**63 for k in combo)  # mixed-radix numbers past int64: kept as Python ints
    combos = np.asarray(combo, dtype=object if big else np.int64)
    return SyntheticGoals(products, np.frombuffer(product, dtype=np.int32)[order], combos[order] if combo else combos,
                          np.frombuffer(upper, dtype=np.float64)[order], weight)


def synthetic_goals(
    products: Sequence[Mapping[str, Any]],
    prices: Mapping[str, float],
    seed: int = GOAL_SHUFFLE_SEED,
    combos_per_product: int | None = 1,
) -> list[dict[str, Any]]:
    """Goals from each product's synthetic instruction and option combinations, shuffled (seeded).

    The original makes one goal per option combination of every product; ``combos_per_product``
    caps that with a seeded sample (``None`` = all combinations, as the original). A list of dicts; the
    same goals as columns: :func:`synthetic_goal_table`.
    """
    return list(synthetic_goal_table(products, prices, seed, combos_per_product))


def human_goals(
    products: Sequence[Mapping[str, Any]], prices: Mapping[str, float], seed: int = GOAL_SHUFFLE_SEED
) -> list[dict[str, Any]]:
    """Goals from the human-written instructions (``items_human_ins.json``), shuffled (seeded)."""
    rng = np.random.default_rng(seed)
    goals: list[dict[str, Any]] = []
    for p in products:
        for ins in p.get("instructions") or ():
            attrs = ins.get("instruction_attributes") or []
            if not attrs:
                continue
            upper, price_text = _budget(prices[p["asin"]], rng)
            goals.append(
                {
                    "asin": p["asin"],
                    "category": p["category"],
                    "query": p["query"],
                    "name": p["name"],
                    "product_category": p["product_category"],
                    "instruction_text": ins["instruction"].strip(".") + price_text,
                    "attributes": list(attrs),
                    "price_upper": upper,
                    "goal_options": list(ins.get("instruction_options") or []),
                    "weight": 1.0,
                }
            )
    order = rng.permutation(len(goals))
    return [goals[i] for i in order]


@dataclass
class WebShopCatalog:
    """Processed products, their prices and the goals, with the train/test split of goals."""

    products: list[dict[str, Any]]
    prices: dict[str, float]
    goals: Sequence[dict[str, Any]]
    """A list of goal dicts, or :class:`SyntheticGoals` (the loader's: each goal built when read)."""
    source: str
    by_asin: dict[str, dict[str, Any]] = field(init=False, repr=False)
    _fingerprint: str | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        self.by_asin = {p["asin"]: p for p in self.products}
        if not self.goals:
            raise ValueError(f"catalog {self.source!r} has no goals")

    def split_indices(self, split: str) -> range:
        """Goal indices of a split: ``test`` = 0..499, ``train`` = the rest, ``all`` = every goal."""
        n = len(self.goals)
        if split == "test":
            return range(min(TEST_GOALS, n))
        if split == "train":
            return range(min(TEST_GOALS, n), n)
        if split == "all":
            return range(n)
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")

    def fingerprint(self) -> str:
        """Stable digest of exactly the text the search index covers (:func:`~.search.product_document`
        of every product, in order: title, description, first bullet point, options), with the
        asins; keys the on-disk search index. Computed once: a catalog is not to be edited after
        it is built (make a new ``WebShopCatalog`` from edited products instead)."""
        if self._fingerprint is None:
            h = hashlib.blake2b(digest_size=16)
            h.update(f"webshop-index-text/1:{len(self.products)}".encode())
            for p in self.products:
                for part in (p["asin"], product_document(p)):
                    b = part.encode("utf-8", "surrogatepass")
                    h.update(len(b).to_bytes(8, "little"))  # length-prefixed: no two splits hash alike
                    h.update(b)
            self._fingerprint = h.hexdigest()
        return self._fingerprint


class WebShopDataError(ValueError):
    """A WebShop data file that is not the JSON it should be (names the file and the offset)."""


_WS = re.compile(r"\s*")
JSON_CHUNK = 1 << 20
"""Characters read at a time by the streaming JSON readers."""
MAX_MEMBER_CHARS = 1 << 26
"""A member that does not parse within this many characters is invalid (a damaged file is not read whole)."""


def _iter_json(path: Path, container: str, chunk: int) -> Iterator[Any]:
    """Members of the top-level JSON array (``container="["``: values) or object (``"{"``: ``(key, value)``
    pairs) in ``path``, parsed one at a time with the standard library's decoder: memory holds one member
    (and one read chunk), not the file."""
    dec = json.JSONDecoder()
    close = "]" if container == "[" else "}"
    with open(path, encoding="utf-8") as f:
        buf, pos, eof, base = "", 0, False, 0

        def more() -> bool:
            nonlocal buf, pos, eof, base
            if eof:
                return False
            got = f.read(chunk)
            eof = not got
            base += pos
            buf, pos = buf[pos:] + got, 0
            return bool(got)

        def skip() -> str:
            nonlocal pos
            while True:
                pos = _WS.match(buf, pos).end()
                if pos < len(buf) or not more():
                    return buf[pos : pos + 1]

        def value() -> Any:
            nonlocal pos
            while True:
                try:
                    v, end = dec.raw_decode(buf, pos)
                except json.JSONDecodeError as exc:
                    if len(buf) - pos <= MAX_MEMBER_CHARS and more():  # maybe cut off at the chunk's end
                        continue
                    raise WebShopDataError(f"{path}: invalid JSON at character {base + exc.pos}: {exc.msg}") from None
                if end >= len(buf) and more():  # a number may go on in the next chunk
                    continue
                pos = end
                return v

        def expect(ch: str) -> None:
            nonlocal pos
            got = skip()
            if got != ch:
                raise WebShopDataError(f"{path}: expected {ch!r} at character {base + pos}, found {got or 'end of file'!r}")
            pos += 1

        expect(container)
        if skip() == close:
            return
        while True:
            if container == "{":
                skip()
                key = value()
                if not isinstance(key, str):
                    raise WebShopDataError(f"{path}: object key at character {base + pos} is not a string")
                expect(":")
                skip()
                yield key, value()
            else:
                skip()
                yield value()
            nxt = skip()
            if nxt == close:
                return
            expect(",")


def iter_json_array(path: str | Path, chunk: int = JSON_CHUNK) -> Iterator[Any]:
    """Elements of a file holding one JSON array, streamed (see :func:`_iter_json`)."""
    return _iter_json(Path(path), "[", chunk)


def iter_json_object(path: str | Path, chunk: int = JSON_CHUNK) -> Iterator[tuple[str, Any]]:
    """``(key, value)`` pairs of a file holding one JSON object, streamed (see :func:`_iter_json`)."""
    return _iter_json(Path(path), "{", chunk)


def load_original(
    items_path: str | Path,
    attributes_path: str | Path,
    reviews_path: str | Path | None = None,
    human_instructions_path: str | Path | None = None,
    *,
    num_products: int | None = None,
    use_human_goals: bool = False,
    price_seed: int = 0,
    goals_per_product: int | None = 10,
) -> WebShopCatalog:
    """Load WebShop's original files (``items_shuffle*.json``, ``items_ins_v2*.json``, optional
    ``reviews.json`` and ``items_human_ins.json``) into a :class:`WebShopCatalog`.

    The files are streamed (the full 1.18M-product catalog never sits in memory as JSON text or as raw
    items; ``num_products`` stops reading the items file early). Synthetic goals: at most
    ``goals_per_product`` option combinations per product, drawn seeded (``None`` = every combination,
    as the original, ~2.9M goals per 100k products), kept as :class:`SyntheticGoals` columns (~8.6 goals a
    product under the default cap: ~10M goals for the full catalog, ~7.5 GB as dicts, ~0.3 GB as columns).
    """
    paths = [Path(items_path), Path(attributes_path)]
    for p in paths + [Path(x) for x in (reviews_path, human_instructions_path) if x is not None]:
        if not p.is_file():
            raise FileNotFoundError(f"WebShop data file not found: {p}")
    if use_human_goals and human_instructions_path is None:
        raise ValueError("use_human_goals=True needs human_instructions_path (items_human_ins.json)")
    if goals_per_product is not None and int(goals_per_product) < 1:
        raise ValueError(f"goals_per_product must be >= 1 or None, got {goals_per_product}")
    attrs = dict(iter_json_object(paths[1]))
    reviews = iter_json_array(reviews_path) if reviews_path is not None else None
    human = dict(iter_json_object(human_instructions_path)) if human_instructions_path is not None else None
    products = process_items(iter_json_array(paths[0]), attrs, reviews, human, num_products=num_products)
    del attrs
    prices = product_prices(products, seed=price_seed)
    goals = (
        human_goals(products, prices)
        if use_human_goals
        else synthetic_goal_table(products, prices, combos_per_product=goals_per_product)
    )
    kind = "human" if use_human_goals else "synthetic"
    return WebShopCatalog(products, prices, goals, source=f"original:{paths[0].name}:{len(products)}:{kind}")


__all__ = [
    "GOAL_SHUFFLE_SEED",
    "SPLITS",
    "SyntheticGoals",
    "TEST_GOALS",
    "WebShopCatalog",
    "WebShopDataError",
    "human_goals",
    "iter_json_array",
    "iter_json_object",
    "load_original",
    "process_item",
    "process_items",
    "product_prices",
    "synthetic_goal_table",
    "synthetic_goals",
]
