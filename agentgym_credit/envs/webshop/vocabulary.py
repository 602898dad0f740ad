"""The generated WebShop catalog's vocabulary: product types, brands, product lines, text snippets.

What lives here: :class:`ProductType` (one kind of product: category path, noun, attribute pool,
option lists, price range, uses), :data:`PRODUCT_TYPES` (78 types in WebShop's 5 categories),
and the word lists :mod:`.catalog` draws brands, lines, benefits and reviews from
(:data:`FIRST_BRANDS` are the hand-written brands of generator versions <= 3).

Rules the tests check: no two attributes (or two non-size option values) of a type fuzzy-match,
and no option value occurs in any product text the generator writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentgym_credit.envs.webshop.lexicon import EXTRA_TYPE_ROWS, brand_names
from agentgym_credit.envs.webshop.reward import COLOR_SET, normalize_color

COLORS = (
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
APPAREL_SIZES = ("x-small", "small", "medium", "large", "x-large", "xx-large")
SHOE_SIZES = ("6", "6.5", "7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "12")


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


PACKAGING = ("gift box", "plain box", "eco pouch")
"""Every type's last option: how it is packed (a third choice on most item pages)."""


CATEGORY_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "beauty": tuple(
        "cruelty free|dermatologist tested|long lasting|vegan formula|salon quality|reef safe|"
        "refillable case|travel ready|clinically proven|lightweight feel|botanical extracts|"
        "recyclable packaging|soothing aloe|hypoallergenic blend|non comedogenic|award winning|"
        "spa grade|quick absorbing|dye free|talc free".split("|")
    ),
    "fashion": tuple(
        "all day comfort|durable stitching|easy care|wrinkle resistant|breathable weave|"
        "ethically made|reinforced seams|tagless label|relaxed fit|moisture wicking|stretch fabric|"
        "recycled materials|classic tailoring|hand finished|fleece lined|odor resistant|"
        "water repellent|anti pilling|heritage design|packable build".split("|")
    ),
    "grocery": tuple(
        "non gmo|kosher certified|small batch|fair trade|locally sourced|shelf stable|"
        "keto friendly|heart healthy|no preservatives|resealable pack|family recipe|"
        "sustainably harvested|whole grain|slow roasted|cold pressed|artisan crafted|single origin|"
        "no added sugar|plant based|pasture raised".split("|")
    ),
    "electronics": tuple(
        "lifetime warranty|energy saving|easy setup|travel friendly|compact design|auto shutoff|"
        "firmware updates|tangle free cable|overheat protection|scratch resistant|"
        "voice assistant support|premium build|dual band|spill resistant|low latency|"
        "surge protected|backlit display|magnetic mount|fcc certified|silent operation".split("|")
    ),
    "garden": tuple(
        "easy assembly|easy clean|space saving|heavy duty|rust proof|sealed joints|pet safe|"
        "eco conscious|tool free setup|stackable design|commercial grade|fade resistant|"
        "powder coated|uv protected|mildew resistant|foldable frame|rot resistant|solid hardwood|"
        "low maintenance|child safe".split("|")
    ),
}
"""Multi-word attributes the types of a category share (generator v8, issue 45: room for 4-6 description twins a
family; a type's own pool of about 5 left one or two). Generator v9 draws each type's own
:data:`SHARED_ATTRIBUTES` of its category's 20 (:func:`shared_attributes`, by the type's place in its category),
so the language's vocabulary is not spent on four phrases a whole category repeats."""

SHARED_ATTRIBUTES = 4
"""How many of its category's :data:`CATEGORY_ATTRIBUTES` a type adds to its own pool (generator v9)."""


def shared_attributes(category: str, index: int) -> tuple[str, ...]:
    """The :data:`SHARED_ATTRIBUTES` of ``category``'s pool that the category's ``index``-th type draws: the
    next window of the pool, so every phrase of the pool goes to every fifth type or so."""
    pool = CATEGORY_ATTRIBUTES[category]
    return tuple(pool[(index * SHARED_ATTRIBUTES + j) % len(pool)] for j in range(SHARED_ATTRIBUTES))


_TYPES_SO_FAR: dict[str, int] = {}


def _t(category, path, noun, attributes, options, price, uses) -> ProductType:
    options = {**options, "packaging": PACKAGING}
    index = _TYPES_SO_FAR[category] = _TYPES_SO_FAR.get(category, -1) + 1
    attributes = [*attributes, *(a for a in shared_attributes(category, index) if a not in attributes)]
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
        {"size": ("1.7 ounce", "2.5 ounce", "4 ounce"), "style": ("daytime", "overnight", "tinted")},
        (9, 60),
        "morning and night routines",
    ),
    _t(
        "beauty",
        "Beauty & Personal Care > Makeup > Lips > Lipstick",
        "lipstick",
        ["long lasting", "matte finish", "cruelty free", "vegan formula", "high pigment"],
        {
            "color": ("red", "pink", "nude", "berry", "coral", "plum", "brown"),
            "size": ("1 count", "pack of 2", "pack of 3"),
        },
        (5, 30),
        "everyday wear",
    ),
    _t(
        "beauty",
        "Beauty & Personal Care > Makeup > Eyes > Eyeshadow",
        "eyeshadow palette",
        ["long lasting", "high pigment", "easy blend", "shimmer shades", "travel size"],
        {
            "style": ("neutral", "smoky", "warm tones", "cool tones"),
            "size": ("9 colors", "12 colors", "18 colors"),
        },
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
        {
            "color": ("red", "pink", "nude", "black", "white", "teal", "purple"),
            "size": ("0.5 fl oz", "pack of 3", "pack of 6"),
        },
        (4, 22),
        "manicures at home",
    ),
    # fashion
    _t(
        "fashion",
        "Clothing, Shoes & Jewelry > Men > Clothing > Shirts > T-Shirts",
        "men's t-shirt",
        ["machine wash", "cotton blend", "short sleeve", "crew neck", "relaxed fit", "moisture wicking"],
        {"color": COLORS[:8], "size": APPAREL_SIZES, "style": ("single", "pack of 3")},
        (8, 35),
        "casual days",
    ),
    _t(
        "fashion",
        "Clothing, Shoes & Jewelry > Women > Clothing > Dresses",
        "women's dress",
        ["machine wash", "long sleeve", "v neck", "floral print", "elastic waist", "midi length"],
        {"color": COLORS[:10], "size": APPAREL_SIZES},
        (18, 70),
        "work and parties",
    ),
    _t(
        "fashion",
        "Clothing, Shoes & Jewelry > Men > Shoes > Athletic > Running",
        "running shoes",
        ["rubber sole", "breathable mesh", "arch support", "slip resistant", "lace up"],
        {
            "color": ("black", "white", "grey", "navy blue", "red"),
            "size": SHOE_SIZES,
            "style": ("regular", "wide"),
        },
        (30, 130),
        "road runs",
    ),
    _t(
        "fashion",
        "Clothing, Shoes & Jewelry > Women > Clothing > Active > Yoga Pants",
        "yoga pants",
        ["high waist", "tummy control", "four way stretch", "side pockets", "squat proof"],
        {"color": COLORS[:9], "size": APPAREL_SIZES[:5]},
        (15, 45),
        "gym sessions",
    ),
    _t(
        "fashion",
        "Clothing, Shoes & Jewelry > Men > Clothing > Jackets & Coats",
        "men's jacket",
        ["water resistant", "zip closure", "fleece lined", "hooded collar", "windproof shell"],
        {"color": ("black", "navy blue", "green", "grey", "brown"), "size": APPAREL_SIZES[1:]},
        (35, 150),
        "cold weather",
    ),
    _t(
        "fashion",
        "Clothing, Shoes & Jewelry > Women > Handbags & Wallets > Wallets",
        "women's wallet",
        ["genuine leather", "rfid blocking", "card slots", "zipper pocket", "slim profile"],
        {
            "color": ("black", "brown", "pink", "red", "beige", "purple"),
            "style": ("bifold", "trifold", "zip around"),
        },
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
        {"size": ("12 ounce", "16 ounce", "pack of 2"), "flavor": ("plain", "honey", "cinnamon", "maple")},
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
        {"color": ("black", "white", "navy blue", "green"), "style": ("regular", "sport", "mini")},
        (20, 180),
        "commutes and workouts",
    ),
    _t(
        "electronics",
        "Electronics > Portable Audio & Video > Portable Speakers",
        "bluetooth speaker",
        ["waterproof design", "loud bass", "long battery life", "built in microphone", "stereo pairing"],
        {"color": ("black", "orange", "red", "grey", "teal"), "size": ("mini", "midsize", "large")},
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
        {"capacity": ("32gb", "64gb", "128gb", "256gb", "512gb"), "size": ("1 pack", "2 pack", "5 pack")},
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
        {"color": ("black", "grey", "white", "blue"), "style": ("with armrests", "armless", "high back")},
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
        {"color": ("white", "black", "brown", "oak"), "size": ("3 tier", "4 tier", "5 tier")},
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
        {"size": ("8 inch", "10 inch", "12 inch"), "style": ("skillet only", "with lid", "set of 2")},
        (15, 80),
        "searing and baking",
    ),
)
PRODUCT_TYPES += tuple(
    _t(cat, path, noun, attrs.split("|"), opts, price, uses) for cat, path, noun, attrs, opts, price, uses in EXTRA_TYPE_ROWS
)
"""The generator's vocabulary: 78 product types in 5 categories (the first 30 here, the rest from
:data:`~.lexicon.EXTRA_TYPE_ROWS`)."""

_BANNED_IN_BRANDS = frozenset(
    {normalize_color(v) for pt in PRODUCT_TYPES for vals in pt.options.values() for v in vals}
    | set(COLOR_SET)
    | {a for pt in PRODUCT_TYPES for a in pt.attributes}
)
BRANDS = brand_names(3000, _BANNED_IN_BRANDS)
"""Invented brand names (one per product family, drawn with replacement); none contains an option
value, a colour or an attribute, so no brand leaks an option into a product's text."""

FIRST_BRANDS = (
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
LINES = (
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
BENEFITS = (
    "made to a careful standard and checked before it ships",
    "a thoughtful choice that earns its place",
    "designed with care by a team that uses it every week",
    "backed by friendly customer support",
    "a dependable pick that holds up over time",
    "a favorite for {uses}",
    "built for {uses}",
)
REVIEW_TITLES = (
    "Works as described",
    "Would buy again",
    "Not what I expected",
    "Great value",
    "Okay overall",
)
REVIEW_BODIES = (
    "Arrived quickly and matches the listing.",
    "It does the job, nothing more.",
    "Quality is better than the price suggests.",
    "Had a small issue but support sorted it out.",
    "My second one, still happy with it.",
)

__all__ = [
    "CATEGORY_ATTRIBUTES",
    "SHARED_ATTRIBUTES",
    "APPAREL_SIZES",
    "BENEFITS",
    "BRANDS",
    "FIRST_BRANDS",
    "COLORS",
    "LINES",
    "PACKAGING",
    "PRODUCT_TYPES",
    "REVIEW_BODIES",
    "REVIEW_TITLES",
    "SHOE_SIZES",
    "ProductType",
    "shared_attributes",
]
