"""WebShop's reward function, rule for rule, in this package's own code.

What lives here: :func:`get_reward` (the total score of a purchase) and its parts
:func:`type_reward`, :func:`attribute_reward`, :func:`option_reward`; :func:`normalize_color`
and :data:`COLOR_SET`; :func:`title_nouns` (the noun extractor the type factor uses);
:func:`fuzzy_score`; :class:`RewardInfo` (the breakdown).

Two rule sets, ``rules="v2"`` (default) and ``rules="master"``. Sources: Yao et al. 2022,
"WebShop", section 3.2; reference code ``web_agent_site/engine/goal.py`` and ``normalize.py`` of
princeton-nlp/WebShop, branch ``master`` (the code of the published numbers) and the later branch
``v2``. The two differ only in the option rule:

* **Total.** ``r = (n_attr_matches + n_option_matches + r_price) / (n_goal_attrs + n_goal_options + 1)``
  multiplied by the type factor ``r_type``. ``r_price`` is 1 when the purchased price is
  ``<= price_upper`` (the goal's budget), else 0. Both counts are at most their denominators,
  so the score is in [0, 1].
* **Attributes** (both). A goal attribute matches when ``token_set_ratio(product_attr, goal_attr) > 85``
  for one of the product's attributes, or else when the goal attribute is a substring of the
  lower-cased title, the joined bullet points or the description. (``v2`` also asks an online
  thesaurus for synonyms; not done here.)
* **Options, v2.** Both sides colour-normalized and lower-cased. Each *selected* option satisfies
  at most one goal option not yet satisfied: an option named ``size`` only exactly (its value equals
  the goal value), any other option when ``token_set_ratio(goal_value, value) > 85``. Two
  tightenings here (issue 25): a goal value that the purchased product itself lists among its option
  values is met only by selecting exactly that value (``"plain box"`` packaging is not a ``"plain"``
  flavour, ``"large"`` not ``"x-large"``), and a dict goal's option is met only by a selection of the
  same option name. Then every goal
  option still unsatisfied counts when the *goal* value is a substring of the lower-cased title,
  bullet points or description. ``n_option_matches`` = satisfied goal options. (``v2`` itself
  counts per selected option and can pass the number of goal options, i.e. a score above 1; here
  a goal option counts once, as in master.)
* **Options, master.** A goal option counts when some selected value has ``token_set_ratio > 85``
  with it: every option fuzzy, sizes included, no text fallback. Master hands a dict goal's
  ``(name, value)`` pairs to the matcher, so the comparison is with ``"<name> <value>"`` (colour
  normalization only when the value is a colour): a selected ``"large"`` satisfies a goal size
  ``"x-large"`` ("large" is a token subset of "size x large"), a selected ``"x-large"`` does not
  satisfy ``"large"``. List goals (human instructions) compare the values themselves.
* **Type factor.** ``query_match`` = same scrape query; ``category_match`` = at least two levels of
  ``product_category`` (split on ``›``) shared; ``title_score`` = share of the goal product's title
  nouns found among the purchased title's nouns (0.2 when the goal title has none).
  ``r_type = 1``; ``0.5`` when none of ``query_match``, ``category_match``, ``title_score > 0.2``
  holds; ``0.1`` when ``title_score < 0.1``; ``0`` when ``title_score == 0``.
* **Fuzzy score.** ``token_set_ratio`` as ``thefuzz`` computes it: both strings lower-cased with
  non-alphanumerics turned into spaces, then rounded to an integer (``rapidfuzz`` does the work).
* **Colour normalization.** A value is replaced by the first entry of an alphabetical colour list
  that occurs in it as a substring; values with no colour are left as they are. ``color_rules``
  picks the list: ``"original"`` (default) is the original's :data:`ORIGINAL_COLOR_SET`, shade and
  pattern words included (``"natural maple"`` and ``"natural honey"`` both become ``"natural"``,
  ``"navy blue"`` becomes ``"blue"``); ``"package"`` is :data:`COLOR_SET`, colour names only.

Known difference: the original finds title nouns with a spaCy part-of-speech tagger (master
``en_core_web_sm``, v2 ``en_core_web_lg``); :func:`title_nouns` keeps every alphabetic word
that is not a stop word, a number, a colour or a listed modifier (see ``DIFFERENCES.md``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentgym_credit.errors import DependencyNotInstalled

try:  # optional dependency (extra "webshop")
    from rapidfuzz import fuzz as _fuzz
    from rapidfuzz.utils import default_process as _default_process
except ImportError:  # pragma: no cover - exercised only without the extra
    _fuzz = None
    _default_process = None

FUZZY_THRESHOLD = 85
"""A fuzzy match needs ``token_set_ratio`` strictly above this."""

EXACT_MATCH_OPTIONS: tuple[str, ...] = ("size",)
"""Option names that must match exactly (rules ``"v2"``; master matches every option fuzzily)."""

REWARD_RULES: tuple[str, ...] = ("v2", "master")
"""Reward rule sets: the original repository's ``v2`` branch (default) and its ``master`` branch."""

PRICE_RANGE: tuple[float, ...] = tuple(10.0 * i for i in range(1, 100))
"""Budget grid used to draw ``price_upper`` of a goal."""

NO_BUDGET = 1_000_000.0
"""``price_upper`` of a goal without a price clause."""

COLOR_SET: tuple[str, ...] = tuple(
    sorted(
        {
            "alice blue",
            "almond",
            "amber",
            "amethyst",
            "apricot",
            "aqua",
            "aquamarine",
            "azure",
            "beige",
            "black",
            "blue",
            "blush",
            "bronze",
            "brown",
            "burgundy",
            "camel",
            "charcoal",
            "cherry",
            "chocolate",
            "coffee",
            "copper",
            "coral",
            "cream",
            "crimson",
            "cyan",
            "emerald",
            "fuchsia",
            "gold",
            "gray",
            "green",
            "grey",
            "indigo",
            "ivory",
            "khaki",
            "lavender",
            "lemon",
            "lilac",
            "lime",
            "magenta",
            "maroon",
            "mint",
            "mocha",
            "mustard",
            "navy",
            "nude",
            "olive",
            "orange",
            "peach",
            "pink",
            "plum",
            "purple",
            "red",
            "rose gold",
            "ruby",
            "rust",
            "sage",
            "salmon",
            "sand",
            "silver",
            "tan",
            "taupe",
            "teal",
            "turquoise",
            "violet",
            "white",
            "wine",
            "yellow",
        }
    )
)
"""The package's alphabetical colour list (``color_rules="package"``): colour names only."""

ORIGINAL_COLOR_SET: tuple[str, ...] = tuple(
    """
    alabaster apricot aqua ash asphalt azure banana beige black blue blush bordeaux bronze brown
    burgundy camel camo caramel champagne charcoal cheetah chestnut chocolate christmas coffee cognac
    copper coral cranberry cream crystal dark denim eggplant elephant espresso fuchsia gold granite
    grape graphite grass gray green grey heather indigo ivory ivy khaki lavender lemon leopard light
    lilac lime magenta maroon mauve merlot midnight mint mocha multicolor mushroom mustard natural navy
    nude olive orange peach pewter pink plum purple rainbow red rose royal rust sand sapphire seashell
    silver skull slate steel stone stonewash sunflower tan taupe teal tiger turquoise violet walnut
    wheat white wine yellow
    """.split()
)
"""The original WebShop's colour words (``web_agent_site/engine/normalize.py``, default
``color_rules="original"``), in its order: one-word entries, alphabetical, including shade and
pattern words ("natural", "dark", "light", "royal", "midnight", "heather"), so "natural maple" and
"natural honey" both normalize to "natural"."""

COLOR_RULES: dict[str, tuple[str, ...]] = {"original": ORIGINAL_COLOR_SET, "package": COLOR_SET}
"""Colour lists by rule name: ``"original"`` (default, as the original reward) or ``"package"``."""

_STOP = frozenset(
    "a an and are as at be but by for from if in into is it its no not of on or such that the "
    "their then there these they this to was will with without x w l".split()
)
_MODIFIERS = frozenset(
    """
    free long lasting natural organic wireless portable large small medium big mini extra
    soft hard heavy light lightweight dark bright new premium professional original best
    high low quick easy fast slow dry wet hot cold warm cool fresh sweet spicy gluten dairy
    sugar non toxic waterproof water resistant adjustable compatible durable comfortable
    classic modern vintage casual slim fit loose stretch machine washable daily sensitive
    oily normal curly straight thin thick fine deep super ultra pure raw vegan kosher keto
    low fat zero calorie caffeine decaf noise cancelling rechargeable fast charging
    anti slip non slip heavy duty easy clean easy assemble stainless steel solid wood memory
    foam full queen king twin men women womens mens kids unisex pack count set ounce oz fl
    inch ft lb piece pieces pcs
    """.split()
)
_WORD = re.compile(r"[a-z]+")
_COLOR_WORDS = frozenset(w for c in COLOR_SET for w in c.split())


def _require_fuzz() -> None:
    if _fuzz is None:
        raise DependencyNotInstalled("rapidfuzz", "webshop")


def fuzzy_score(a: str, b: str) -> int:
    """``token_set_ratio`` of two strings, processed and rounded as ``thefuzz`` does."""
    _require_fuzz()
    return int(round(_fuzz.token_set_ratio(a, b, processor=_default_process)))


def _color_list(color_rules: str) -> tuple[str, ...]:
    try:
        return COLOR_RULES[color_rules]
    except (KeyError, TypeError):
        raise ValueError(f"color_rules must be one of {tuple(COLOR_RULES)}, got {color_rules!r}") from None


def normalize_color(value: str, color_rules: str = "original") -> str:
    """The first colour of the ``color_rules`` list (:data:`COLOR_RULES`) contained in ``value`` as a
    substring, else ``value`` unchanged."""
    for color in _color_list(color_rules):
        if color in value:
            return color
    return value


def title_nouns(title: str) -> list[str]:
    """Words of a product title that stand for what the product *is* (stand-in for spaCy nouns)."""
    out = []
    for w in _WORD.findall(title.lower()):
        if len(w) < 2 or w in _STOP or w in _MODIFIERS or w in _COLOR_WORDS:
            continue
        out.append(w)
    return out


def _split_category(path: str) -> set[str]:
    return {x.strip() for x in path.split("›")}


def type_reward(purchased: Mapping[str, Any], goal: Mapping[str, Any]) -> dict[str, Any]:
    """Type factor ``r_type`` in {1, 0.5, 0.1, 0} and the three signals it is made of."""
    query_match = purchased["query"] == goal["query"]
    category_match = (
        len(_split_category(purchased["product_category"]) & _split_category(goal["product_category"])) >= 2
    )
    desired = title_nouns(goal["name"])
    bought = title_nouns(purchased["name"])
    title_score = 0.2 if not desired else len(set(bought) & set(desired)) / len(desired)
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return {
        "r_type": r_type,
        "query_match": query_match,
        "category_match": category_match,
        "title_score": title_score,
    }


def _in_text(value: str, product: Mapping[str, Any]) -> bool:
    return (
        value in product["Title"].lower()
        or value in " ".join(product["BulletPoints"]).lower()
        or value in product["Description"].lower()
    )


def attribute_reward(purchased: Mapping[str, Any], goal_attributes: Sequence[str]) -> tuple[float, int]:
    """``(share, count)`` of goal attributes the purchased product has."""
    n = 0
    for g in goal_attributes:
        if any(fuzzy_score(p, g) > FUZZY_THRESHOLD for p in purchased["Attributes"]) or _in_text(
            g, purchased
        ):
            n += 1
    return (n / len(goal_attributes) if goal_attributes else 0.0), n


def _goal_option_values(goal_options: Mapping[str, str] | Iterable[str]) -> list[str]:
    return list(goal_options.values()) if isinstance(goal_options, Mapping) else list(goal_options)


def option_reward(
    purchased: Mapping[str, Any],
    goal_options: Mapping[str, str] | Iterable[str],
    selected: Mapping[str, str],
    rules: str = "v2",
    color_rules: str = "original",
) -> tuple[float | None, int]:
    """``(share, count)`` of goal options the purchase satisfies (``share`` is None without goal
    options); ``count`` never exceeds the number of goal options. ``rules``: ``"v2"`` or ``"master"``
    (module docstring); ``color_rules``: the colour list (:data:`COLOR_RULES`)."""
    _color_list(color_rules)
    if rules == "master":
        return _option_reward_master(goal_options, selected, color_rules)
    if rules != "v2":
        raise ValueError(f"reward rules must be one of {REWARD_RULES}, got {rules!r}")
    goals = [normalize_color(o.lower(), color_rules) for o in _goal_option_values(goal_options)]
    goal_names = [n.lower() for n in goal_options] if isinstance(goal_options, Mapping) else None
    listed = {normalize_color(v.lower(), color_rules) for vals in (purchased.get("options") or {}).values() for v in vals}
    found: set[int] = set()
    for name, value in selected.items():
        value = normalize_color(value.lower(), color_rules)
        open_goals = [
            i for i in range(len(goals)) if i not in found and (goal_names is None or goal_names[i] == name.lower())
        ]
        if name.lower() in EXACT_MATCH_OPTIONS:
            hit = next((i for i in open_goals if goals[i] == value), None)
        else:  # a goal value the product lists is met by that value only, never by a fuzzy neighbour
            hit = next(
                (
                    i
                    for i in open_goals
                    if goals[i] == value or (goals[i] not in listed and fuzzy_score(goals[i], value) > FUZZY_THRESHOLD)
                ),
                None,
            )
        if hit is not None:
            found.add(hit)
    for i, g in enumerate(goals):  # fallback: an unmatched GOAL option written in the product text
        if i not in found and _in_text(g, purchased):
            found.add(i)
    n = len(found)
    return (n / len(goals) if goals else None), n


def _option_reward_master(
    goal_options: Mapping[str, str] | Iterable[str], selected: Mapping[str, str], color_rules: str = "original"
) -> tuple[float | None, int]:
    """Master's option rule: a goal option counts when some selected value fuzzy-matches it.

    Master passes a dict goal's ``items()`` — ``(name, value)`` pairs — to the matcher: colour
    normalization then only fires when the value *is* a colour (tuple membership), and the fuzzy
    matcher compares the selected value with the text of the pair, i.e. ``"<name> <value>"``.
    """
    if isinstance(goal_options, Mapping):
        goals = []
        for name, value in goal_options.items():
            goals.append(value if value in _color_list(color_rules) else f"{name} {value}")
    else:
        goals = [normalize_color(o, color_rules) for o in goal_options]
    values = [normalize_color(v, color_rules) for v in selected.values()]
    n = sum(1 for g in goals if any(fuzzy_score(v, g) > FUZZY_THRESHOLD for v in values))
    return (n / len(goals) if goals else None), n


@dataclass(frozen=True)
class RewardInfo:
    """Breakdown of one purchase's score (the components the original reports with ``verbose``)."""

    reward: float
    r_type: float
    r_att: float
    n_attr_matches: int
    r_option: float | None
    n_option_matches: int
    r_price: bool
    query_match: bool
    category_match: bool
    title_score: float
    n_goal_attributes: int
    n_goal_options: int
    rules: str = "v2"
    color_rules: str = "original"

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def get_reward(
    purchased: Mapping[str, Any],
    goal: Mapping[str, Any],
    price: float,
    selected: Mapping[str, str],
    rules: str = "v2",
    color_rules: str = "original",
) -> RewardInfo:
    """Score of buying ``purchased`` at ``price`` with options ``selected`` for ``goal``.

    ``purchased`` has WebShop's processed fields (``name``/``Title``, ``query``, ``product_category``,
    ``Attributes``, ``BulletPoints``, ``Description``); ``goal`` has ``name``, ``query``,
    ``product_category``, ``attributes``, ``goal_options`` (dict or list of values), ``price_upper``.
    ``rules``: ``"v2"`` (default) or ``"master"`` (see the module docstring); ``color_rules``:
    ``"original"`` (default, the original's colour words) or ``"package"`` (:data:`COLOR_RULES`).
    The score is in [0, 1].
    """
    if rules not in REWARD_RULES:
        raise ValueError(f"reward rules must be one of {REWARD_RULES}, got {rules!r}")
    t = type_reward(purchased, goal)
    upper = float(goal["price_upper"])
    r_price = bool(price <= upper) if upper > 0 else False
    attrs = list(goal["attributes"])
    gopts = goal["goal_options"]
    gopts = gopts if isinstance(gopts, Mapping) else list(gopts)
    r_att, n_att = attribute_reward(purchased, attrs)
    r_opt, n_opt = option_reward(purchased, gopts, selected, rules, color_rules)
    total = (n_att + n_opt + int(r_price)) / (len(attrs) + len(gopts) + 1) * t["r_type"]
    return RewardInfo(
        reward=float(total),
        r_type=t["r_type"],
        r_att=r_att,
        n_attr_matches=n_att,
        r_option=r_opt,
        n_option_matches=n_opt,
        r_price=r_price,
        query_match=t["query_match"],
        category_match=t["category_match"],
        title_score=t["title_score"],
        n_goal_attributes=len(attrs),
        n_goal_options=len(gopts),
        rules=rules,
        color_rules=color_rules,
    )


__all__ = [
    "COLOR_RULES",
    "COLOR_SET",
    "EXACT_MATCH_OPTIONS",
    "FUZZY_THRESHOLD",
    "NO_BUDGET",
    "ORIGINAL_COLOR_SET",
    "PRICE_RANGE",
    "REWARD_RULES",
    "RewardInfo",
    "attribute_reward",
    "fuzzy_score",
    "get_reward",
    "normalize_color",
    "option_reward",
    "title_nouns",
    "type_reward",
]
