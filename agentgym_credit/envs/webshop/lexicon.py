"""Word stock for the generated WebShop catalog beyond :mod:`.vocabulary`'s first 30 types: more
product types (compact rows), invented brand names, and the phrase pools instructions draw from.

What lives here: :data:`EXTRA_TYPE_ROWS` (product types as ``(category, path, noun, attributes,
options, price, uses)`` rows; :mod:`.vocabulary` turns them into ``ProductType``),
:func:`brand_names` (seeded, pronounceable invented brands, none containing an option value or a
colour), and the instruction pools (:data:`LEADS`, :data:`RECIPIENTS`, :data:`OCCASIONS`,
:data:`PURPOSES`, :data:`QUALIFIERS`, :data:`CLOSERS`).

Why: WebShop's 12,087 human instructions use ~6,500 distinct words per 5,000 instructions; a
template over 30 product types used ~600. Human shoppers name the brand now and then, say who a
thing is for and why, and add a word about quality or price; the pools give the generator the same
habits (rates in :mod:`.instructions`).
"""

from __future__ import annotations

import numpy as np

EXTRA_TYPE_ROWS: tuple[tuple, ...] = (
    # beauty
    ("beauty", "Beauty & Personal Care > Skin Care > Body > Body Lotions", "body lotion",
     "shea butter|aloe vera|non greasy|dermatologist tested|paraben free",
     {"scent": ("vanilla", "cucumber", "unscented", "cherry blossom"), "size": ("8 fl oz", "16 fl oz", "pack of 2")},
     (5, 30), "dry winter skin"),
    ("beauty", "Beauty & Personal Care > Fragrance > Women's > Eau de Parfum", "eau de parfum",
     "floral notes|travel spray|alcohol free|gift set|musk base",
     {"scent": ("jasmine", "amber", "sandalwood", "citrus"), "size": ("1 fl oz", "1.7 fl oz", "3.4 fl oz")},
     (20, 120), "evenings out"),
    ("beauty", "Beauty & Personal Care > Oral Care > Toothbrushes > Electric", "electric toothbrush",
     "pressure sensor|two minute timer|travel case|rechargeable battery|soft bristles",
     {"color": ("white", "black", "pink", "blue"), "size": ("1 count", "pack of 2")},
     (20, 110), "brushing twice a day"),
    ("beauty", "Beauty & Personal Care > Skin Care > Sun > Sunscreens", "sunscreen",
     "broad spectrum|reef safe|zinc oxide|sweat resistant|spf 50",
     {"size": ("3 fl oz", "6 fl oz", "pack of 2"), "style": ("lotion", "spray", "stick")},
     (6, 28), "beach days"),
    ("beauty", "Beauty & Personal Care > Hair Care > Hair Extensions", "hair extensions",
     "human hair|clip in|heat friendly|natural looking|thick ends",
     {"color": ("black", "brown", "blonde", "burgundy"), "size": ("14 inch", "18 inch", "22 inch")},
     (25, 150), "special occasions"),
    ("beauty", "Beauty & Personal Care > Shaving & Hair Removal > Men's > Razors", "men's razor",
     "five blades|pivoting head|precision trimmer|lubricating strip|ergonomic grip",
     {"size": ("1 handle", "4 cartridges", "8 cartridges")},
     (8, 40), "a close shave"),
    ("beauty", "Beauty & Personal Care > Makeup > Face > Foundation", "liquid foundation",
     "full coverage|oil control|hydrating formula|buildable coverage|dewy finish",
     {"color": ("ivory", "beige", "honey", "espresso", "porcelain"), "size": ("1 fl oz", "pack of 2")},
     (7, 45), "an even skin tone"),
    ("beauty", "Beauty & Personal Care > Skin Care > Face > Serums", "face serum",
     "retinol|niacinamide|vitamin e|fine lines|brightening",
     {"size": ("1 fl oz", "2 fl oz")},
     (10, 65), "a nightly routine"),
    # fashion
    ("fashion", "Clothing, Shoes & Jewelry > Women > Shoes > Sandals", "women's sandals",
     "open toe|ankle strap|memory foam|block heel|non slip sole",
     {"color": ("black", "white", "brown", "gold", "silver"), "size": ("6", "7", "8", "9", "10")},
     (15, 70), "summer walks"),
    ("fashion", "Clothing, Shoes & Jewelry > Men > Clothing > Jeans", "men's jeans",
     "straight leg|stretch denim|five pocket|button fly|classic fit",
     {"color": ("dark rinse", "light rinse", "black"), "size": ("30w x 30l", "32w x 32l", "34w x 32l", "36w x 34l")},
     (20, 80), "weekends"),
    ("fashion", "Clothing, Shoes & Jewelry > Women > Clothing > Sweaters", "women's cardigan",
     "button down|cable knit|oversized fit|ribbed cuffs|open front",
     {"color": ("cream", "grey", "camel", "black", "green"), "size": ("small", "medium", "large", "x-large")},
     (18, 65), "chilly offices"),
    ("fashion", "Clothing, Shoes & Jewelry > Baby > Baby Girls > Clothing > Bodysuits", "baby bodysuit",
     "organic cotton|snap closure|tagless label|envelope neckline|soft knit",
     {"color": ("white", "pink", "yellow", "grey"), "size": ("newborn", "0-3 months", "3-6 months", "6-12 months")},
     (8, 30), "little ones"),
    ("fashion", "Clothing, Shoes & Jewelry > Men > Accessories > Belts", "men's belt",
     "genuine leather|reversible|automatic buckle|cut to fit|formal dress",
     {"color": ("black", "brown", "cognac"), "size": ("32", "34", "36", "38", "40")},
     (12, 45), "suits and jeans"),
    ("fashion", "Clothing, Shoes & Jewelry > Women > Jewelry > Necklaces", "pendant necklace",
     "sterling chain|hypoallergenic|adjustable length|lobster clasp|dainty design",
     {"color": ("silver", "rose gold", "two tone")},
     (15, 90), "anniversaries"),
    ("fashion", "Clothing, Shoes & Jewelry > Men > Clothing > Socks", "men's socks",
     "cushioned sole|moisture control|arch compression|no show|crew length",
     {"color": ("black", "white", "grey", "assorted"), "size": ("pack of 6", "pack of 12")},
     (9, 30), "long shifts"),
    ("fashion", "Clothing, Shoes & Jewelry > Women > Clothing > Swimsuits", "one piece swimsuit",
     "tummy control|removable padding|high cut leg|quick drying|chlorine resistant",
     {"color": ("black", "navy blue", "red", "teal"), "size": ("small", "medium", "large", "x-large")},
     (20, 60), "pool days"),
    ("fashion", "Clothing, Shoes & Jewelry > Women > Watches", "women's watch",
     "quartz movement|stainless steel band|water resistance|analog display|mother of pearl",
     {"color": ("silver", "rose gold", "black", "white")},
     (25, 180), "everyday style"),
    ("fashion", "Clothing, Shoes & Jewelry > Boys > Shoes > Sneakers", "kids sneakers",
     "hook and loop|light up soles|breathable upper|easy on|rubber toe cap",
     {"color": ("black", "blue", "grey", "red"), "size": ("11 little kid", "13 little kid", "2 big kid", "4 big kid")},
     (20, 60), "the playground"),
    # grocery
    ("grocery", "Grocery & Gourmet Food > Breakfast Foods > Cereals > Granola", "granola",
     "whole grain|no artificial flavors|high fiber|dairy free|clusters",
     {"flavor": ("honey almond", "dark chocolate", "cranberry", "maple pecan"), "size": ("11 ounce", "pack of 3")},
     (4, 25), "breakfast bowls"),
    ("grocery", "Grocery & Gourmet Food > Beverages > Sparkling Water", "sparkling water",
     "zero calories|no sweeteners|naturally flavored|bpa free cans|sodium free",
     {"flavor": ("lime", "grapefruit", "black cherry", "watermelon"), "size": ("12 count", "24 count")},
     (5, 30), "hot afternoons"),
    ("grocery", "Grocery & Gourmet Food > Cooking & Baking > Olive Oil", "olive oil",
     "extra virgin|cold pressed|first harvest|dark glass bottle|product of italy",
     {"size": ("500 ml", "1 liter", "3 liter")},
     (8, 45), "salads and sauteing"),
    ("grocery", "Grocery & Gourmet Food > Snacks > Chips & Crisps", "kettle chips",
     "kettle cooked|gluten free|no msg|thick cut|non gmo",
     {"flavor": ("sea salt", "salt and vinegar", "jalapeno", "barbecue"), "size": ("pack of 6", "pack of 24")},
     (6, 30), "lunch boxes"),
    ("grocery", "Grocery & Gourmet Food > Candy & Chocolate > Chocolate Bars", "dark chocolate bar",
     "fair trade|single origin|low sugar|vegan|70 percent cacao",
     {"flavor": ("sea salt", "orange", "mint", "raspberry"), "size": ("pack of 4", "pack of 12")},
     (6, 40), "an afternoon treat"),
    ("grocery", "Grocery & Gourmet Food > Pantry Staples > Pasta", "pasta",
     "whole wheat|bronze cut|gluten free|imported from italy|high protein",
     {"style": ("spaghetti", "penne", "fusilli", "linguine"), "size": ("1 pound", "pack of 6")},
     (3, 25), "weeknight dinners"),
    ("grocery", "Grocery & Gourmet Food > Beverages > Coffee > Single-Serve Capsules", "coffee pods",
     "medium roast|compostable pods|keurig compatible|arabica beans|rainforest alliance",
     {"flavor": ("french vanilla", "breakfast blend", "colombian", "decaf"), "size": ("24 count", "72 count")},
     (12, 50), "busy mornings"),
    ("grocery", "Grocery & Gourmet Food > Herbs, Spices & Seasonings > Seasoning Blends", "seasoning blend",
     "salt free|no fillers|small batch|kosher certified|resealable jar",
     {"flavor": ("garlic herb", "cajun", "lemon pepper", "taco"), "size": ("2.5 ounce", "pack of 3")},
     (4, 22), "grilling"),
    ("grocery", "Grocery & Gourmet Food > Baby Foods > Pouches", "baby food pouches",
     "usda organic|no added sugar|bpa free|stage 2|veggie blend",
     {"flavor": ("apple banana", "pear spinach", "mango carrot"), "size": ("pack of 12", "pack of 18")},
     (10, 35), "toddler snacks"),
    # electronics
    ("electronics", "Electronics > Computers & Accessories > Mice", "wireless mouse",
     "silent click|ergonomic shape|usb receiver|adjustable dpi|long battery",
     {"color": ("black", "white", "grey", "blue")},
     (9, 60), "office work"),
    ("electronics", "Electronics > Computers & Accessories > Monitors", "computer monitor",
     "ips panel|eye care|vesa mount|hdmi input|thin bezel",
     {"size": ("24 inch", "27 inch", "32 inch"), "style": ("1080p", "1440p", "4k uhd")},
     (110, 450), "home offices"),
    ("electronics", "Electronics > Cell Phones & Accessories > Chargers > Power Banks", "portable charger",
     "usb c port|led indicator|slim design|airline safe|dual output",
     {"size": ("10000mah", "20000mah", "26800mah"), "color": ("black", "white", "blue")},
     (15, 70), "long flights"),
    ("electronics", "Electronics > Camera & Photo > Tripods", "camera tripod",
     "aluminum legs|quick release plate|bubble level|carry bag|ball head",
     {"size": ("50 inch", "60 inch", "72 inch")},
     (18, 120), "photo shoots"),
    ("electronics", "Electronics > Television & Video > Streaming Media Players", "streaming stick",
     "voice remote|dolby vision|wifi 6|hdr support|live tv",
     {"style": ("full hd", "4k uhd", "max")},
     (25, 70), "movie nights"),
    ("electronics", "Electronics > Wearable Technology > Smartwatches", "smartwatch",
     "heart rate monitor|sleep tracking|gps built in|always on display|step counter",
     {"color": ("black", "silver", "pink", "green"), "size": ("41mm", "45mm")},
     (40, 300), "fitness goals"),
    ("electronics", "Electronics > Home Audio > Sound Bars", "soundbar",
     "wireless subwoofer|dialogue enhancement|optical input|wall mountable|surround sound",
     {"style": ("compact", "premium", "dolby atmos")},
     (60, 400), "living room tv"),
    ("electronics", "Electronics > Computers & Accessories > Laptop Accessories > Bags", "laptop backpack",
     "usb charging port|anti theft|water repellent|padded sleeve|luggage strap",
     {"color": ("black", "grey", "navy blue"), "size": ("15.6 inch", "17 inch")},
     (20, 80), "commuting"),
    ("electronics", "Electronics > Video Game Consoles & Accessories > Controllers", "game controller",
     "wireless connection|vibration feedback|programmable buttons|cable mode|turbo function",
     {"color": ("black", "white", "red", "camo"), "style": ("pc", "switch", "playstation")},
     (20, 75), "gaming sessions"),
    # garden / home
    ("garden", "Home & Kitchen > Kitchen & Dining > Small Appliances > Air Fryers", "air fryer",
     "nonstick basket|digital touchscreen|dishwasher safe parts|preset programs|shake reminder",
     {"size": ("2 quart", "5.8 quart", "8 quart"), "color": ("black", "white", "grey")},
     (45, 180), "crispy dinners"),
    ("garden", "Home & Kitchen > Bath > Towels > Bath Towel Sets", "bath towel set",
     "100 percent cotton|highly absorbent|quick drying|oeko tex certified|plush loops",
     {"color": ("white", "grey", "navy blue", "sage", "beige"), "size": ("4 piece", "6 piece", "8 piece")},
     (20, 80), "guest bathrooms"),
    ("garden", "Home & Kitchen > Home Decor > Candles", "scented candle",
     "soy wax|cotton wick|long burn time|glass jar|hand poured",
     {"scent": ("lavender", "vanilla", "eucalyptus", "pumpkin spice"), "size": ("8 ounce", "14 ounce", "pack of 3")},
     (8, 40), "cozy evenings"),
    ("garden", "Home & Kitchen > Kitchen & Dining > Storage > Food Containers", "food storage containers",
     "bpa free|leak proof|microwave safe|freezer safe|stackable",
     {"size": ("10 piece", "24 piece", "40 piece"), "style": ("glass", "plastic")},
     (15, 60), "meal prep"),
    ("garden", "Home & Kitchen > Bedding > Comforters & Sets", "comforter set",
     "down alternative|all season|corner tabs|machine washable|reversible",
     {"color": ("white", "grey", "navy blue", "blush"), "size": ("twin", "full", "queen", "king")},
     (30, 140), "guest rooms"),
    ("garden", "Patio, Lawn & Garden > Outdoor Decor > String Lights", "outdoor string lights",
     "shatterproof bulbs|weatherproof|dimmable|commercial grade|connectable",
     {"size": ("25 feet", "48 feet", "100 feet"), "style": ("warm white", "multicolor")},
     (18, 90), "backyard parties"),
    ("garden", "Home & Kitchen > Vacuums & Floor Care > Robotic Vacuums", "robot vacuum",
     "app control|self charging|pet hair|quiet operation|edge cleaning",
     {"color": ("black", "white")},
     (120, 450), "pet owners"),
    ("garden", "Patio, Lawn & Garden > Gardening & Lawn Care > Hand Tools > Pruners", "pruning shears",
     "bypass blade|sap groove|safety lock|cushioned handles|rust proof",
     {"size": ("6 inch", "8 inch")},
     (10, 40), "rose bushes"),
    ("garden", "Home & Kitchen > Kitchen & Dining > Coffee, Tea & Espresso > French Presses", "french press",
     "borosilicate glass|double filter|stainless frame|heat resistant handle|dishwasher safe",
     {"size": ("12 ounce", "34 ounce", "50 ounce"), "color": ("black", "silver", "copper")},
     (15, 50), "slow mornings"),
    ("garden", "Home & Kitchen > Furniture > Bedroom Furniture > Nightstands", "nightstand",
     "two drawers|charging station|solid wood legs|easy assembly|open shelf",
     {"color": ("white", "black", "walnut", "grey")},
     (40, 180), "small bedrooms"),
    ("garden", "Pet Supplies > Dogs > Beds & Furniture > Beds", "dog bed",
     "orthopedic foam|washable cover|non skid bottom|bolster edges|chew resistant",
     {"color": ("grey", "brown", "navy blue"), "size": ("medium", "large", "x-large")},
     (20, 110), "older dogs"),
    ("garden", "Home & Kitchen > Kitchen & Dining > Kitchen Utensils & Gadgets > Knives", "chef knife",
     "high carbon steel|full tang|razor sharp|ergonomic handle|knife guard",
     {"size": ("6 inch", "8 inch", "10 inch")},
     (15, 120), "home cooks"),
)
"""Extra product types, one compact row each (attributes ``|``-separated); :mod:`.vocabulary` adds the packaging option."""

_ONSETS = ("b", "br", "c", "cl", "d", "dr", "f", "fl", "g", "gr", "h", "j", "k", "kl", "l", "m", "n", "p", "pr",
           "qu", "s", "sk", "st", "t", "tr", "v", "w", "z", "sh", "th")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y")
_CODAS = ("n", "r", "l", "x", "s", "v", "m", "nd", "rt", "ll", "ss", "th", "ck", "ndra", "lia", "ro", "ven",
          "ora", "ella", "ix", "on", "ara", "ette", "wyn", "ley", "sa", "na", "mo", "ta", "lo")


def brand_names(n: int, banned: frozenset[str] | set[str] = frozenset(), seed: int = 17) -> tuple[str, ...]:
    """``n`` distinct invented brand names (capitalized, one word, 5-10 letters), seeded; none contains a
    string of ``banned`` (option values and colours must never appear in product text)."""
    rng = np.random.default_rng(seed)
    out: dict[str, None] = {}
    while len(out) < n:
        k = 2 if rng.random() < 0.7 else 3
        word = "".join(
            _ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))] for _ in range(k - 1)
        ) + _ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))] + _CODAS[rng.integers(len(_CODAS))]
        if not 5 <= len(word) <= 10 or any(b in word for b in banned):
            continue
        out[word.capitalize()] = None
    return tuple(out)


LEADS: tuple[str, ...] = (
    "i need", "i am looking for", "i'm looking for", "i want to buy", "i would like", "find me",
    "can you find me", "please get me", "i'm searching for", "looking for", "i want", "help me find",
    "i need to get", "i'd like to order", "i am shopping for", "get me", "show me", "i'm in the market for",
    "could you find", "i would love", "search for", "i'm trying to find", "buy me", "i need you to find",
    "i want to purchase", "i'd love to find", "please find", "i am after", "i'm hunting for", "i require",
    "can i get", "i'd like", "i wish to buy", "i want to get", "need", "want", "i'm after",
)
"""How a sentence starts (WebShop's human instructions mostly start with one of the first few)."""

RECIPIENTS = (
    "my mom", "my dad", "my wife", "my husband", "my son", "my daughter", "my sister", "my brother",
    "my grandma", "my grandpa", "my girlfriend", "my boyfriend", "my niece", "my nephew", "my aunt",
    "my uncle", "my roommate", "my coworker", "my boss", "my teacher", "my best friend", "my neighbor",
    "my toddler", "my teenager", "my twins", "my fiance", "my in-laws", "my cousin", "my kids", "myself",
    "my partner", "my students", "my team", "my stepdad", "my godmother", "my classmate",
)
OCCASIONS = (
    "birthday", "christmas", "anniversary", "wedding", "graduation", "retirement", "housewarming",
    "baby shower", "valentine's day", "mother's day", "father's day", "halloween", "thanksgiving",
    "easter", "hanukkah", "new year's eve", "bridal shower", "promotion", "engagement party", "reunion",
    "secret santa", "farewell party", "birthday party", "family picnic",
)
PURPOSES = (
    "for a camping trip", "for our vacation", "for the office", "for my dorm room", "for my new apartment",
    "for travel", "for the gym", "for everyday use", "for a road trip", "for the summer", "for the winter",
    "for back to school", "for work", "for my studio", "for our guest room", "for the weekend", "for hiking",
    "for the holidays", "for a long flight", "for our cabin", "for my commute", "for the kitchen",
    "for daily use", "for our beach house", "for spring cleaning", "for game night", "for the nursery",
    "for my home office", "for our rv", "for a sleepover", "for festival season", "for the lake house",
)
QUALIFIERS = (
    "good quality", "affordable", "cheap", "durable", "nice", "cute", "reliable", "well reviewed",
    "top rated", "decent", "sturdy", "stylish", "simple", "budget friendly", "high quality", "popular",
    "great", "lovely", "practical", "inexpensive", "fancy", "basic", "reasonably priced", "solid",
    "comfy", "sleek", "elegant", "minimalist", "heavy-duty", "no-frills", "trendy", "classy", "quirky",
    "rustic", "retro", "bougie", "dependable", "long-wearing", "kid-friendly", "pet-friendly", "eye-catching",
    "understated", "luxurious", "bargain", "name-brand", "giftable", "versatile", "roomy",
    "well-made", "top-notch", "no-nonsense", "fuss-free", "highly rated", "bestselling", "crowd-pleasing",
    "mid-range", "top-shelf", "legit", "quality", "decent-looking", "good-looking", "pretty", "gorgeous",
    "handsome", "snazzy", "spiffy", "swanky", "posh", "upscale", "high-end", "entry-level", "beginner-friendly",
    "fool-proof", "hassle-free", "low-maintenance", "budget", "wallet-friendly", "cheapish", "pricey-looking",
    "sensible", "trusty", "tried-and-true", "old-school", "vintage-style", "modern", "contemporary",
    "timeless", "classic-looking", "chic", "polished", "refined", "tasteful", "subtle", "bold", "fun",
    "playful", "whimsical", "charming", "cozy", "homey", "inviting", "functional", "useful", "handy",
    "clever", "smart-looking", "sharp", "crisp", "clean-looking", "neat", "tidy", "streamlined", "slick",
    "flashy", "showy", "statement", "conversation-starting", "unique", "unusual", "distinctive",
    "one-of-a-kind", "artisanal", "small-batch", "boutique", "designer-looking", "fashionable", "hip",
    "edgy", "preppy", "sporty", "outdoorsy", "urban", "earthy", "natural-looking", "wholesome", "hearty",
    "satisfying", "solidly built", "well-designed", "thoughtfully made", "sturdily built", "good-value",
    "worthwhile", "splurge-worthy", "impressive", "lovely-looking", "adorable", "sweet", "sophisticated",
)
CLOSERS = (
    "please", "thanks", "thank you", "asap", "if possible", "if you can", "as soon as possible",
    "it's a gift", "nothing too fancy", "the cheaper the better", "in stock please", "for a good price",
)

__all__ = ["CLOSERS", "EXTRA_TYPE_ROWS", "LEADS", "OCCASIONS", "PURPOSES", "QUALIFIERS", "RECIPIENTS", "brand_names"]
