"""A seeded generator of WebShop products and goals, in WebShop's own raw data schema.

What lives here: :func:`generate_raw` (raw items, attribute file, reviews — the three files the
original reads), :func:`generate_catalog` (the processed :class:`~.data.WebShopCatalog`),
:data:`PRODUCT_TYPES` (the vocabulary), :data:`GENERATOR_VERSION`.

How it is built, and why:

* Five top categories as in WebShop (beauty, fashion, grocery, electronics, garden/home), each
  with product types (``query`` = the type, as the original's scrape query).
* Every product of a type draws 2-4 attributes from the type's pool and a subset of each option
  list (colour, size, scent, flavor, capacity...). Many products share a type, a brand and most
  attributes — near-duplicates and distractors — so the right product needs the right query
  *and* a look at the attributes, and the full score needs the right options.
* The text of a product mentions its own attributes only, and never its option values, so a
  wrong product or a wrong option costs reward exactly as the reward rules say.
* Each product carries a synthetic instruction in the original's style ("i need a sulfate free
  shampoo") over 1-3 of its attributes; goals append ``with color: x, and size: y`` and the
  budget clause (see :mod:`.data`).
* Sizes from 1,000 to 100,000 products; the same ``(num_products, seed)`` gives the same catalog.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentgym_credit.envs.webshop.data import (
    WebShopCatalog,
    process_items,
    product_prices,
    synthetic_goals,
)

GENERATOR_VERSION = 2
"""Bumped whenever the generator's output changes (keys the on-disk cache)."""

MIN_PRODUCTS, MAX_PRODUCTS = 10, 200_000
PROGRESS_FROM = 50_000
"""Catalogs from this size show a progress bar (when ``tqdm`` is installed)."""

_COLORS = (
    "black",
    "white",
    "navy blue",
    "red",
    "grey",
    "beige",
    "pink",
    "green",
    "brown",
    "purple",
    "yellow",
    "teal",
)
_APPAREL_SIZES = ("x-small", "small", "medium", "large", "x-large", "xx-large")
_SHOE_SIZES = ("6", "6.5", "7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "12")


@dataclass(frozen=True)
class ProductType:
    """One kind of product: where it sits, what it can have, what it costs."""

    category: str
    path: tuple[str, ...]
    noun: str
    attributes: tuple[str, ...]
    options: dict[str, tuple[str, ...]]
    price: tuple[float, float]
    uses: str


def _t(category, path, noun, attributes, options, price, uses) -> ProductType:
    return ProductType(category, tuple(path.split(" > ")), noun, tuple(attributes), options, price, uses)


PRODUCT_TYPES: tuple[ProductType, ...] = (
    # beauty
    _t(
        "beauty",
        "Beauty & Personal Care > Hair Care > Shampoos",
        "shampoo",
        ["sulfate free", "paraben free", "dry hair", "hair growth", "tea tree", "color safe", "cruelty free"],
        {
            "scent": ("lavender", "coconut", "citrus", "unscented", "mint"),
            "size": ("8 fl oz", "16 fl oz", "33.8 fl oz"),
        },
        (6, 40),
        "daily washing",
    ),
    _t(
        "beauty",
        "Beauty & Personal Care > Skin Care > Face > Moisturizers",
        "face moisturizer",
        ["hyaluronic acid", "sensitive skin", "fragrance free", "anti aging", "oil free", "vitamin c"],
        {"size": ("1.7 ounce", "2.5 ounce", "4 ounce")},
        (9, 60),
        "morning and night routines",
    ),
    _t(
        "beauty",
        "Beauty & Personal Care > Makeup > Lips > Lipstick",
        "lipstick",
        ["long lasting", "matte finish", "cruelty free", "vegan formula", "high pigment"],
        {"color": ("red", "pink", "nude", "berry", "coral", "plum", "brown")},
        (5, 30),
        "everyday wear",
    ),
    _t(
        "beauty",
        "Beauty & Personal Care > Makeup > Eyes > Eyeshadow",
        "eyeshadow palette",
        ["long lasting", "high pigment", "easy blend", "shimmer shades", "travel size"],
        {"style": ("neutral", "smoky", "warm tones", "cool tones")},
        (8, 55),
        "day and evening looks",
    ),
    _t(
        "beauty",
        "Beauty & Personal Care > Hair Care > Styling Tools > Hair Dryers",
        "hair dryer",
        ["ionic technology", "fast drying", "low noise", "diffuser attachment", "foldable handle"],
        {"color": ("black", "white", "pink", "rose gold"), "style": ("full size", "compact")},
        (25, 160),
        "home styling",
    ),
    _t(
        "beauty",
        "Beauty & Personal Care > Foot, Hand & Nail Care > Nail Polish",
        "nail polish",
        ["quick dry", "chip resistant", "non toxic", "gel effect", "glossy shine"],
        {"color": ("red", "pink", "nude", "black", "white", "teal", "purple")},
        (4, 22),
        "manicures at home",
    ),
    # fashion
    _t(
        "fashion",
        "Clothing, Shoes & Jewelry > Men > Clothing > Shirts > T-Shirts",
        "men's t-shirt",
        ["machine wash", "cotton blend", "short sleeve", "crew neck", "relaxed fit", "moisture wicking"],
        {"color": _COLORS[:8], "size": _APPAREL_SIZES},
        (8, 35),
        "casual days",
    ),
    _t(
        "fashion",
        "Clothing, Shoes & Jewelry > Women > Clothing > Dresses",
        "women's dress",
        ["machine wash", "long sleeve", "v neck", "floral print", "elastic waist", "midi length"],
        {"color": _COLORS[:10], "size": _APPAREL_SIZES},
        (18, 70),
        "work and parties",
    ),
    _t(
        "fashion",
        "Clothing, Shoes & Jewelry > Men > Shoes > Athletic > Running",
        "running shoes",
        ["rubber sole", "breathable mesh", "arch support", "slip resistant", "lace up"],
        {"color": ("black", "white", "grey", "navy blue", "red"), "size": _SHOE_SIZES},
        (30, 130),
        "road runs",
    ),
    _t(
        "fashion",
        "Clothing, Shoes & Jewelry > Women > Clothing > Active > Yoga Pants",
        "yoga pants",
        ["high waist", "tummy control", "four way stretch", "side pockets", "squat proof"],
        {"color": _COLORS[:9], "size": _APPAREL_SIZES[:5]},
        (15, 45),
        "gym sessions",
    ),
    _t(
        "fashion",
        "Clothing, Shoes & Jewelry > Men > Clothing > Jackets & Coats",
        "men's jacket",
        ["water resistant", "zip closure", "fleece lined", "hooded collar", "windproof shell"],
        {"color": ("black", "navy blue", "green", "grey", "brown"), "size": _APPAREL_SIZES[1:]},
        (35, 150),
        "cold weather",
    ),
    _t(
        "fashion",
        "Clothing, Shoes & Jewelry > Women > Handbags & Wallets > Wallets",
        "women's wallet",
        ["genuine leather", "rfid blocking", "card slots", "zipper pocket", "slim profile"],
        {"color": ("black", "brown", "pink", "red", "beige", "purple")},
        (12, 60),
        "everyday carry",
    ),
    # grocery
    _t(
        "grocery",
        "Grocery & Gourmet Food > Beverages > Coffee > Whole Coffee Beans",
        "whole bean coffee",
        ["dark roast", "single origin", "fair trade", "usda organic", "low acid"],
        {
            "flavor": ("original", "hazelnut", "vanilla", "caramel", "mocha"),
            "size": ("12 ounce", "2 pound", "5 pound"),
        },
        (9, 55),
        "espresso and drip",
    ),
    _t(
        "grocery",
        "Grocery & Gourmet Food > Snacks > Bars > Protein Bars",
        "protein bar",
        ["gluten free", "high protein", "low sugar", "plant based", "keto friendly"],
        {
            "flavor": ("chocolate chip", "peanut butter", "cookie dough", "birthday cake", "lemon"),
            "size": ("12 count", "pack of 6", "pack of 24"),
        },
        (12, 48),
        "post workout snacks",
    ),
    _t(
        "grocery",
        "Grocery & Gourmet Food > Beverages > Tea > Green Tea",
        "green tea",
        ["caffeine free", "usda organic", "loose leaf", "individually wrapped", "antioxidant rich"],
        {
            "flavor": ("jasmine", "matcha", "ginger", "peach", "honey"),
            "size": ("20 bags", "50 bags", "100 bags"),
        },
        (5, 30),
        "a calm afternoon",
    ),
    _t(
        "grocery",
        "Grocery & Gourmet Food > Condiments & Salad Dressings > Hot Sauce",
        "hot sauce",
        ["extra hot", "small batch", "no preservatives", "gluten free", "vegan friendly"],
        {
            "flavor": ("habanero", "chipotle", "garlic", "mango", "ghost pepper"),
            "size": ("5 fl oz", "12 fl oz", "pack of 3"),
        },
        (5, 28),
        "tacos and wings",
    ),
    _t(
        "grocery",
        "Grocery & Gourmet Food > Pantry Staples > Nut Butters > Almond Butter",
        "almond butter",
        ["no added sugar", "non gmo", "creamy texture", "roasted almonds", "salt free"],
        {"size": ("12 ounce", "16 ounce", "pack of 2")},
        (7, 35),
        "toast and smoothies",
    ),
    _t(
        "grocery",
        "Grocery & Gourmet Food > Snacks > Jerky & Dried Meats > Beef Jerky",
        "beef jerky",
        ["high protein", "grass fed", "zero sugar", "individually wrapped", "smoked flavor"],
        {
            "flavor": ("original", "teriyaki", "black pepper", "sweet chili"),
            "size": ("3.25 ounce", "10 ounce", "pack of 8"),
        },
        (8, 45),
        "road trips",
    ),
    # electronics
    _t(
        "electronics",
        "Electronics > Headphones > Earbud Headphones",
        "wireless earbuds",
        ["noise cancelling", "long battery life", "charging case", "touch control", "sweat proof"],
        {"color": ("black", "white", "navy blue", "green")},
        (20, 180),
        "commutes and workouts",
    ),
    _t(
        "electronics",
        "Electronics > Portable Audio & Video > Portable Speakers",
        "bluetooth speaker",
        ["waterproof design", "loud bass", "long battery life", "built in microphone", "stereo pairing"],
        {"color": ("black", "orange", "red", "grey", "teal")},
        (18, 140),
        "pool parties",
    ),
    _t(
        "electronics",
        "Electronics > Computers & Accessories > Cables > USB Cables",
        "usb c cable",
        ["fast charging", "braided nylon", "data transfer", "tangle free", "aluminum connector"],
        {"size": ("3 feet", "6 feet", "10 feet"), "color": ("black", "white", "red", "grey")},
        (6, 25),
        "phones and laptops",
    ),
    _t(
        "electronics",
        "Electronics > Cell Phones & Accessories > Cases > Phone Cases",
        "phone case",
        ["shock absorbing", "raised edges", "wireless charging compatible", "clear back", "screen protector"],
        {
            "color": ("black", "transparent", "pink", "navy blue", "purple", "green"),
            "style": ("iphone", "samsung galaxy", "google pixel", "motorola"),
        },
        (8, 40),
        "drops and scratches",
    ),
    _t(
        "electronics",
        "Electronics > Computers & Accessories > Memory Cards > Micro SD Cards",
        "micro sd card",
        ["high speed", "4k video", "adapter included", "lifetime warranty", "shock resistant"],
        {"capacity": ("32gb", "64gb", "128gb", "256gb", "512gb")},
        (7, 70),
        "cameras and drones",
    ),
    _t(
        "electronics",
        "Electronics > Computers & Accessories > Keyboards",
        "mechanical keyboard",
        ["rgb backlit", "hot swappable", "wired usb", "compact layout", "anti ghosting"],
        {
            "color": ("black", "white", "pink", "grey"),
            "style": ("linear switches", "clicky switches", "tactile switches"),
        },
        (30, 150),
        "typing and gaming",
    ),
    # garden / home
    _t(
        "garden",
        "Home & Kitchen > Furniture > Home Office Furniture > Office Chairs",
        "office chair",
        ["lumbar support", "adjustable height", "mesh back", "swivel base", "padded armrests"],
        {"color": ("black", "grey", "white", "blue")},
        (60, 300),
        "long work days",
    ),
    _t(
        "garden",
        "Home & Kitchen > Bedding > Sheets & Pillowcases > Sheet Sets",
        "bed sheet set",
        ["deep pocket", "microfiber fabric", "wrinkle free", "cooling fabric", "hypoallergenic material"],
        {
            "color": ("white", "grey", "beige", "navy blue", "green", "pink"),
            "size": ("twin", "full", "queen", "king"),
        },
        (20, 90),
        "restful sleep",
    ),
    _t(
        "garden",
        "Home & Kitchen > Home Decor > Decorative Pillows > Throw Pillow Covers",
        "throw pillow cover",
        ["hidden zipper", "velvet fabric", "double sided", "boho design", "set of 2"],
        {
            "color": ("beige", "grey", "green", "pink", "yellow", "teal", "brown"),
            "size": ("18x18 inch", "20x20 inch", "12x20 inch"),
        },
        (8, 35),
        "sofas and beds",
    ),
    _t(
        "garden",
        "Home & Kitchen > Furniture > Living Room Furniture > Bookcases",
        "bookshelf",
        ["easy assembly", "engineered wood", "open shelves", "wall anchor", "space saving"],
        {"color": ("white", "black", "brown", "oak")},
        (40, 220),
        "living rooms and studies",
    ),
    _t(
        "garden",
        "Patio, Lawn & Garden > Gardening & Lawn Care > Plant Containers > Planters",
        "ceramic planter",
        ["drainage hole", "saucer included", "indoor outdoor", "glazed finish", "set of 3"],
        {"color": ("white", "grey", "teal", "black", "beige"), "size": ("4 inch", "6 inch", "8 inch")},
        (12, 60),
        "houseplants",
    ),
    _t(
        "garden",
        "Home & Kitchen > Kitchen & Dining > Cookware > Skillets",
        "cast iron skillet",
        ["pre seasoned", "oven safe", "induction compatible", "helper handle", "pour spouts"],
        {"size": ("8 inch", "10 inch", "12 inch")},
        (15, 80),
        "searing and baking",
    ),
)
"""The generator's vocabulary: 30 product types in 5 categories."""

_BRANDS = (
    "Lumera",
    "Norvik",
    "Alpenbloom",
    "Castella",
    "Veridian",
    "Ostrava",
    "Quillon",
    "Bramblecott",
    "Sorelle",
    "Halvard",
    "Tivona",
    "Kestrelle",
    "Marlowe",
    "Fenwick",
    "Zephyra",
    "Ardent",
    "Calloway",
    "Brisa",
    "Orwyn",
    "Pemberly",
    "Saffra",
    "Thornwell",
    "Ulmara",
    "Wrenfield",
    "Yarrow",
    "Corvina",
    "Dunmore",
    "Elsworth",
    "Glenhaven",
    "Ivorra",
)
_LINES = (
    "Essentials",
    "Classic",
    "Pro",
    "Select",
    "Everyday",
    "Signature",
    "Studio",
    "Prime",
    "Origin",
    "Nova",
)
_LEADS = ("i need", "i am looking for", "i want", "i'm looking for", "find me", "i would like")
_BENEFITS = (
    "made to a careful standard and checked before it ships",
    "a thoughtful choice that earns its place",
    "designed with care by a team that uses it every week",
    "backed by friendly customer support",
    "a dependable pick that holds up over time",
    "a favorite for {uses}",
    "built for {uses}",
)
_REVIEW_TITLES = (
    "Works as described",
    "Would buy again",
    "Not what I expected",
    "Great value",
    "Okay overall",
)
_REVIEW_BODIES = (
    "Arrived quickly and matches the listing.",
    "It does the job, nothing more.",
    "Quality is better than the price suggests.",
    "Had a small issue but support sorted it out.",
    "My second one, still happy with it.",
)
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


def _article(words: str) -> str:
    return "an" if words[:1] in "aeiou" else "a"


def _instruction(rng: _Stream, ptype: ProductType, attrs: list[str]) -> str:
    lead = _LEADS[rng.integers(len(_LEADS))]
    joined = " and ".join(attrs)
    form = rng.integers(3)
    if form == 0:
        return f"{lead} {_article(joined)} {joined} {ptype.noun}"
    if form == 1:
        return f"{lead} {_article(ptype.noun)} {ptype.noun} that is {joined}"
    return f"{lead} {ptype.noun} which is {joined}"


def _title_case(s: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in s.split())


def generate_raw(num_products: int, seed: int = 0) -> tuple[list[dict], dict[str, dict], list[dict]]:
    """``(items, attributes, reviews)`` in the schema of the original files (see module docstring)."""
    if not MIN_PRODUCTS <= int(num_products) <= MAX_PRODUCTS:
        raise ValueError(f"num_products must be in [{MIN_PRODUCTS}, {MAX_PRODUCTS}], got {num_products}")
    rng = _Stream(np.random.default_rng([int(seed), GENERATOR_VERSION]))
    n = int(num_products)
    # families of near-duplicates: consecutive products often copy their predecessor of the same type
    items: list[dict] = []
    attrs_file: dict[str, dict] = {}
    reviews: list[dict] = []
    last_of_type: dict[int, dict[str, Any]] = {}
    steps: Any = range(n)
    if n >= PROGRESS_FROM:
        try:
            from tqdm.auto import tqdm

            steps = tqdm(steps, desc="webshop: generating products", unit="product")
        except ImportError:
            pass
    for i in steps:
        ti = rng.integers(len(PRODUCT_TYPES))
        pt = PRODUCT_TYPES[ti]
        prev = last_of_type.get(ti)
        if prev is not None and rng.u() < 0.45:
            # near-duplicate: same brand and line, one attribute swapped, options redrawn
            brand, line = prev["brand"], prev["line"]
            attrs = list(prev["attrs"])
            spare = [a for a in pt.attributes if a not in attrs]
            if spare:
                attrs[rng.integers(len(attrs))] = spare[rng.integers(len(spare))]
        else:
            brand = _BRANDS[rng.integers(len(_BRANDS))]
            line = _LINES[rng.integers(len(_LINES))]
            k = rng.integers(2, min(4, len(pt.attributes)) + 1)
            attrs = [pt.attributes[j] for j in rng.sample(len(pt.attributes), k)]
        last_of_type[ti] = {"brand": brand, "line": line, "attrs": attrs}
        options = {}
        for oname, values in pt.options.items():
            m = rng.integers(2, len(values) + 1)
            pick = rng.sample(len(values), m)
            options[_title_case(oname)] = [{"value": values[j], "image": None} for j in pick]
        asin = _asin(i, seed)
        shown = attrs[: rng.integers(1, 3)]
        title = f"{brand} {line} {_title_case(' '.join(shown))} {_title_case(pt.noun)}"
        benefit = _BENEFITS[rng.integers(len(_BENEFITS))].format(uses=pt.uses)
        bullets = [f"{_title_case(a)}: {benefit}." for a in attrs]
        bullets.append(f"Great for {pt.uses}.")
        desc = (
            f"{brand} {line} {pt.noun} for {pt.uses}. "
            + f"Key features: {', '.join(attrs)}."
            + f" {benefit[:1].upper()}{benefit[1:]}."
        )
        lo, hi = pt.price
        p0 = round(float(lo + rng.u() * (hi - lo)), 2)
        pricing = f"${p0:.2f}"
        if rng.u() < 0.2:
            pricing = f"${p0:.2f} - ${p0 * (1.1 + 0.4 * rng.u()):.2f}"
        items.append(
            {
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
        )
        n_ins = rng.integers(1, min(3, len(attrs)) + 1)
        ins_attrs = [attrs[j] for j in rng.sample(len(attrs), n_ins)]
        attrs_file[asin] = {
            "attributes": list(attrs),
            "instruction": _instruction(rng, pt, ins_attrs),
            "instruction_attributes": ins_attrs,
        }
        n_rev = rng.integers(0, 4)
        if n_rev:
            revs = []
            for _ in range(n_rev):
                revs.append(
                    {
                        "title": _REVIEW_TITLES[rng.integers(len(_REVIEW_TITLES))],
                        "stars": rng.integers(1, 6),
                        "review": _REVIEW_BODIES[rng.integers(len(_REVIEW_BODIES))],
                    }
                )
            avg = round(sum(r["stars"] for r in revs) / n_rev, 1)
            reviews.append({"asin": asin, "reviews": revs, "average_rating": avg})
    return items, attrs_file, reviews


def generate_catalog(num_products: int = 1000, seed: int = 0) -> WebShopCatalog:
    """The processed catalog of :func:`generate_raw`: products, prices and shuffled goals."""
    gc_was_on = gc.isenabled()
    gc.disable()  # millions of small containers, no cycles: the collector would only cost time
    try:
        items, attrs, reviews = generate_raw(num_products, seed)
        products = process_items(items, attrs, reviews)
        prices = product_prices(products, seed=seed)
        goals = synthetic_goals(products, prices, seed=seed * 7919 + 233)
    finally:
        if gc_was_on:
            gc.enable()
    return WebShopCatalog(
        products, prices, goals, source=f"generated:v{GENERATOR_VERSION}:{num_products}:{seed}"
    )


__all__ = ["GENERATOR_VERSION", "PRODUCT_TYPES", "ProductType", "generate_catalog", "generate_raw"]
