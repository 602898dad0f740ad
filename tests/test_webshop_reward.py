"""WebShop's reward function: every component and the type factor, on hand-computed cases."""

from __future__ import annotations

import pytest

pytest.importorskip("rapidfuzz")

from agentgym_credit.envs.webshop.reward import (  # noqa: E402
    attribute_reward,
    fuzzy_score,
    get_reward,
    normalize_color,
    option_reward,
    title_nouns,
    type_reward,
)


def product(**kw):
    p = {
        "name": "Lumera Classic Sulfate Free Shampoo",
        "Title": "Lumera Classic Sulfate Free Shampoo",
        "query": "shampoo",
        "product_category": "Beauty & Personal Care › Hair Care › Shampoos",
        "Attributes": ["sulfate free", "dry hair"],
        "BulletPoints": ["Gentle on color treated hair."],
        "Description": "A shampoo for daily washing.",
    }
    p.update(kw)
    if "name" in kw and "Title" not in kw:
        p["Title"] = kw["name"]
    return p


def goal(**kw):
    g = {
        "name": "Lumera Classic Sulfate Free Shampoo",
        "query": "shampoo",
        "product_category": "Beauty & Personal Care › Hair Care › Shampoos",
        "attributes": ["sulfate free", "dry hair"],
        "goal_options": {"scent": "lavender", "size": "16 fl oz"},
        "price_upper": 30.0,
    }
    g.update(kw)
    return g


def test_perfect_purchase_scores_one():
    info = get_reward(product(), goal(), price=20.0, selected={"scent": "lavender", "size": "16 fl oz"})
    assert info.reward == 1.0
    assert (info.n_attr_matches, info.n_option_matches, info.r_price, info.r_type) == (2, 2, True, 1.0)


def test_total_is_matches_over_count_times_type():
    # 1 of 2 attributes, 1 of 2 options, price over budget: (1 + 1 + 0) / (2 + 2 + 1) = 0.4
    p = product(Attributes=["sulfate free"])
    info = get_reward(p, goal(), price=35.0, selected={"scent": "lavender", "size": "8 fl oz"})
    assert (info.n_attr_matches, info.n_option_matches, info.r_price) == (1, 1, False)
    assert info.reward == pytest.approx(2 / 5)


def test_price_rule_is_at_most_budget():
    g = goal(attributes=[], goal_options={})
    assert get_reward(product(), g, price=30.0, selected={}).reward == 1.0  # equal to the budget is fine
    assert get_reward(product(), g, price=30.01, selected={}).reward == 0.0


def test_attribute_fuzzy_match_needs_more_than_85():
    assert fuzzy_score("Long-Lasting", "long lasting") == 100  # thefuzz processing: case and punctuation
    assert fuzzy_score("long lasting", "long lasting wear") == 100  # token SET ratio: a subset scores 100
    assert fuzzy_score("sulfate free", "paraben free") <= 85
    p = product(Attributes=["Long-Lasting Wear"], Title="X", name="X", BulletPoints=[""], Description="")
    assert attribute_reward(p, ["long lasting"]) == (1.0, 1)
    assert attribute_reward(p, ["paraben free"]) == (0.0, 0)


def test_attribute_falls_back_to_title_bullets_description():
    p = product(Attributes=["unrelated thing"])
    # "sulfate free" is in the title, "color treated" in a bullet, "daily washing" in the description
    assert attribute_reward(p, ["sulfate free", "color treated", "daily washing", "tea tree"]) == (0.75, 3)


def test_size_option_matches_only_exactly():
    p = product()
    assert option_reward(p, ["x-large"], {"size": "large"}) == (0.0, 0)
    assert option_reward(p, ["large"], {"size": "large"}) == (1.0, 1)
    # any other option name is fuzzy: "large" is a token subset of "x-large", so it scores 100
    assert option_reward(p, ["x-large"], {"fit": "large"}) == (1.0, 1)
    assert option_reward(p, ["16 fl oz"], {"bottle": "16 fl. oz"}) == (1.0, 1)


def test_option_colour_normalization_and_text_fallback():
    p = product()
    # both sides normalize to "blue": a match although the strings differ
    assert option_reward(p, ["blue"], {"color": "navy blue"}) == (1.0, 1)
    # v2's fallback looks for the GOAL value in the product text, never the selected one
    p2 = product(Description="Smells of lavender.")
    assert option_reward(p2, ["mint"], {"scent": "lavender"}) == (0.0, 0)
    assert option_reward(p2, ["lavender"], {}) == (1.0, 1)
    assert option_reward(product(), ["mint"], {"scent": "lavender"}) == (0.0, 0)
    # an option never selected never matches; no goal options gives share None
    assert option_reward(p, ["mint", "8 fl oz"], {}) == (0.0, 0)
    assert option_reward(p, [], {"scent": "mint"})[0] is None


def test_goal_options_as_list_human_goal_form():
    g = goal(goal_options=["lavender", "16 fl oz"])
    assert get_reward(product(), g, 10.0, {"scent": "lavender", "size": "16 fl oz"}).reward == 1.0


def test_normalize_color_package_list():
    assert normalize_color("navy blue", "package") == "blue"
    assert normalize_color("dark red", "package") == "red"
    assert normalize_color("rose gold", "package") == "gold"  # "gold" comes before "rose gold" alphabetically
    assert normalize_color("unscented", "package") == "unscented"
    assert normalize_color("16 fl oz", "package") == "16 fl oz"
    assert normalize_color("natural maple", "package") == "natural maple"


def test_normalize_color_original_list_is_the_default():
    """The original's own cases (its tests/web-agent-site/engine/test_normalize.py) plus its shade words."""
    for value, want in [
        ("", ""),
        ("black forest", "black"),
        ("violet lavender", "lavender"),
        ("steelivy fuchsia", "fuchsia"),
        ("123alabaster", "alabaster"),
        ("webshop", "webshop"),
        ("navy blue", "blue"),
        ("dark red", "dark"),
        ("natural maple", "natural"),
        ("midnight", "midnight"),
    ]:
        assert normalize_color(value) == want == normalize_color(value, "original"), value
    with pytest.raises(ValueError, match="color_rules"):
        normalize_color("red", "rgb")


def test_natural_maple_credited_for_natural_honey_only_under_the_original_rule():
    """The known difference (issue 45): both normalize to "natural" under the original's list."""
    g = goal(goal_options={"color": "natural honey"})
    p = product(options={"color": ["natural honey", "natural maple"]})
    orig = get_reward(p, g, 10.0, {"color": "natural maple"})
    pkg = get_reward(p, g, 10.0, {"color": "natural maple"}, color_rules="package")
    assert (orig.n_option_matches, orig.color_rules) == (1, "original")
    assert (pkg.n_option_matches, pkg.color_rules) == (0, "package")
    assert orig.reward > pkg.reward
    assert get_reward(p, g, 10.0, {"color": "natural honey"}, color_rules="package").n_option_matches == 1


def test_title_nouns_drop_modifiers_colours_and_stop_words():
    assert title_nouns("Lumera Sulfate Free Shampoo for Dry Hair, Black, 16 oz") == [
        "lumera",
        "sulfate",
        "shampoo",
        "hair",
    ]


# -- the type factor: the four levels ------------------------------------------------------------
DESIRED = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"  # 10 nouns


def _type(purchased_name, query="q1", category="A › B › C"):
    p = {"name": purchased_name, "query": query, "product_category": category}
    g = {"name": DESIRED, "query": "q2", "product_category": "X › Y › Z"}
    return type_reward(p, g)


def test_type_factor_one_when_title_overlap_is_high():
    t = _type("alpha bravo charlie")
    assert t["title_score"] == pytest.approx(0.3) and t["r_type"] == 1.0


def test_type_factor_one_when_query_or_category_match():
    assert _type("alpha bravo", query="q2")["r_type"] == 1.0  # title 0.2 but same query
    assert _type("alpha bravo", category="X › Y › W")["r_type"] == 1.0  # two category levels shared
    assert _type("alpha bravo", category="X › W › V")["category_match"] is False  # one level is not enough


def test_type_factor_half_without_any_match():
    t = _type("alpha bravo")  # title_score 0.2 is not > 0.2
    assert (t["query_match"], t["category_match"], t["title_score"], t["r_type"]) == (False, False, 0.2, 0.5)


def test_type_factor_tenth_when_title_overlap_below_0_1():
    desired11 = DESIRED + " kilo"
    p = {"name": "alpha zulu", "query": "q", "product_category": "A"}
    g = {"name": desired11, "query": "q", "product_category": "A"}  # query matches, still 1/11 < 0.1
    assert type_reward(p, g)["r_type"] == 0.1


def test_type_factor_zero_without_common_noun():
    t = _type("zulu yankee", query="q2")
    assert t["title_score"] == 0.0 and t["r_type"] == 0.0
    info = get_reward(product(name="Zulu Yankee"), goal(), 10.0, {"scent": "lavender", "size": "16 fl oz"})
    assert info.reward == 0.0


def test_type_factor_default_title_score_when_goal_title_has_no_noun():
    p = {"name": "anything", "query": "a", "product_category": "A"}
    g = {"name": "free long lasting", "query": "b", "product_category": "B"}
    t = type_reward(p, g)
    assert t["title_score"] == 0.2 and t["r_type"] == 0.5


# -- the two bugs of the original-data path (issue 16), from their minimal cases ----------------------
WALLET = {
    "name": "Slim Leather Wallet",
    "Title": "Slim Leather Wallet",
    "query": "wallet",
    "product_category": "Clothing › Women › Wallets",
    "Attributes": ["genuine leather"],
    "BulletPoints": ["Black genuine leather, fits 8 cards"],
    "Description": "A large slim wallet in black leather.",
}


def test_wrong_colour_written_in_the_text_is_not_credited():
    # was: the selected "black" found in the text counted as the goal's "brown": 1.0 and won
    g = {**goal(), "name": WALLET["name"], "query": "wallet", "product_category": WALLET["product_category"]}
    g.update(attributes=["genuine leather"], goal_options={"color": "brown"})
    info = get_reward(WALLET, g, 20.0, {"color": "black"})
    assert info.n_option_matches == 0
    assert info.reward == pytest.approx(2 / 3)  # attribute + price of 1 + 1 + 1


def test_an_extra_selected_option_cannot_push_the_score_above_one():
    # was: (1 attr + 2 options + price) / (1 + 1 + 1) = 1.333 with "large" (in the text) selected too
    g = {**goal(), "name": WALLET["name"], "query": "wallet", "product_category": WALLET["product_category"]}
    g.update(attributes=["genuine leather"], goal_options=["black"])
    for rules in ("v2", "master"):
        info = get_reward(WALLET, g, 20.0, {"color": "black", "size": "large"}, rules=rules)
        assert info.n_option_matches == 1 and info.reward == 1.0
        info = get_reward(
            WALLET, g, 20.0, {"color": "black", "style": "black"}, rules=rules
        )  # two hit one goal
        assert info.n_option_matches == 1 and info.reward == 1.0


def _wallet_files(tmp_path, instruction_options):
    """A one-product catalog in the original files' schema (items, attributes, human instructions)."""
    import json

    items = [
        {
            "asin": "B0WALLET01",
            "name": WALLET["Title"],
            "full_description": WALLET["Description"],
            "small_description": WALLET["BulletPoints"],
            "pricing": "$20.00",
            "customization_options": {
                "Color": [{"value": "Black", "image": None}, {"value": "Brown", "image": None}],
                "Size": [{"value": "Small", "image": None}, {"value": "Large", "image": None}],
            },
            "category": "fashion",
            "product_category": WALLET["product_category"],
            "query": "wallet",
        }
    ]
    attrs = {
        "B0WALLET01": {
            "attributes": ["genuine leather"],
            "instruction": "i need a wallet",
            "instruction_attributes": ["genuine leather"],
        }
    }
    human = {
        "B0WALLET01": [
            {
                "instruction": "i need a genuine leather wallet",
                "instruction_attributes": ["genuine leather"],
                "instruction_options": instruction_options,
            }
        ]
    }
    paths = [tmp_path / n for n in ("items.json", "attrs.json", "human.json")]
    for path, data in zip(paths, (items, attrs, human)):
        path.write_text(json.dumps(data))
    return paths


@pytest.mark.parametrize(
    "goal_options, clicks, want",
    [
        (["brown"], ["black"], 2 / 3),  # was 1.0 and won=True
        (["black"], ["black", "large"], 1.0),  # was 4/3
    ],
)
def test_original_data_path_reward_bugs_in_the_env(tmp_path, goal_options, clicks, want):
    from agentgym_credit.envs.webshop.data import load_original
    from agentgym_credit.envs.webshop.env import WebShopEnv

    items, attrs, human = _wallet_files(tmp_path, goal_options)
    cat = load_original(items, attrs, None, human, use_human_goals=True)
    env = WebShopEnv(catalog=cat, split="all", cache_dir=False)
    env.reset(seed=0, options={"task": 0})
    env.step("search[leather wallet]")
    env.step("click[b0wallet01]")
    for c in clicks:
        env.step(f"click[{c}]")
    _, r, term, _, info = env.step("click[buy now]")
    assert term and r == pytest.approx(want) and info["won"] is (want == 1.0)


# -- master's rules, cases computed by hand ------------------------------------------------------------
# master goal.py: for each goal option, count it when some selected value has token_set_ratio > 85 with
# it; dict goals are compared as "<name> <value>" (the (name, value) pair thefuzz turns into text).
SHAMPOO_GOAL = goal(attributes=["sulfate free"], goal_options={"size": "x-large", "scent": "lavender"})


@pytest.mark.parametrize(
    "selected, v2_count, master_count",
    [
        # "large" tokens {large} are a subset of "size x large": ratio 100 > 85 under master; v2 exact: no
        ({"size": "large", "scent": "lavender"}, 1, 2),
        # "x-large" vs "size large": sorted intersection "large" vs "large x": 2*5/12 = 83 <= 85 under master
        ({"size": "x-large", "scent": "lavender"}, 2, 2),
        # a scent matches under either rule; the size is missed under both ("small" shares no token)
        ({"size": "small", "scent": "lavender"}, 1, 1),
        # nothing selected: v2's text fallback finds neither value in the text, master has no fallback
        ({}, 0, 0),
    ],
)
def test_master_rules_hand_computed(selected, v2_count, master_count):
    p = product(Attributes=["sulfate free"])
    for rules, n in (("v2", v2_count), ("master", master_count)):
        info = get_reward(p, SHAMPOO_GOAL, 20.0, selected, rules=rules)
        assert info.n_option_matches == n, rules
        assert info.reward == pytest.approx((1 + n + 1) / (1 + 2 + 1)), rules  # attr + options + price


def test_master_rules_sizes_fuzzy_and_no_text_fallback():
    # human (list) goals compare values directly: "10.5" has tokens {10, 5} ⊇ {10}: 100 under master
    assert option_reward(product(), ["10"], {"size": "10.5"}, rules="master") == (1.0, 1)
    assert option_reward(product(), ["10"], {"size": "10.5"}, rules="v2") == (0.0, 0)
    # "8 fl oz" vs "size 16 fl oz": intersection "fl oz" vs "fl oz 8": 2*5/12 = 83 -> no match
    assert option_reward(product(), {"size": "16 fl oz"}, {"size": "8 fl oz"}, rules="master") == (0.0, 0)
    # the goal value in the text: v2 counts it, master does not
    p = product(Description="Smells of lavender.")
    assert option_reward(p, {"scent": "lavender"}, {}, rules="v2") == (1.0, 1)
    assert option_reward(p, {"scent": "lavender"}, {}, rules="master") == (0.0, 0)
    # colour: a dict goal value that IS a colour is normalized; "navy blue" selected -> "blue" matches
    assert option_reward(product(), {"color": "blue"}, {"color": "navy blue"}, rules="master") == (1.0, 1)
    with pytest.raises(ValueError, match="reward rules"):
        get_reward(product(), goal(), 1.0, {}, rules="v3")


def test_env_reward_rules_option(tmp_path):
    from agentgym_credit.envs.webshop.data import load_original
    from agentgym_credit.envs.webshop.env import WebShopEnv

    items, attrs, human = _wallet_files(tmp_path, ["x-large"])
    cat = load_original(items, attrs, None, human, use_human_goals=True)
    scores = {}
    for rules in ("v2", "master"):
        env = WebShopEnv(catalog=cat, split="all", cache_dir=False, reward_rules=rules)
        env.reset(seed=0, options={"task": 0})
        for a in ("search[wallet]", "click[b0wallet01]", "click[large]", "click[buy now]"):
            _, r, _, _, info = env.step(a)
        scores[rules] = (r, info["reward_info"]["rules"])
    # a list goal "x-large": master's fuzzy size credits "large" ({large} is a token subset), v2 does not
    assert scores == {"v2": (pytest.approx(2 / 3), "v2"), "master": (1.0, "master")}
    with pytest.raises(ValueError, match="reward_rules"):
        WebShopEnv(catalog=cat, split="all", cache_dir=False, reward_rules="v1")


# -- issue 25: a selected value never earns the credit of a different value the product lists ------
SNACK = {
    **product(),
    "options": {"flavor": ["plain", "honey"], "packaging": ["gift box", "plain box"], "fit": ["large", "x-large"]},
}


@pytest.mark.parametrize("goal_options", [{"flavor": "plain"}, ["plain"]])
def test_plain_box_packaging_is_not_a_plain_flavour(goal_options):
    # was: token_set_ratio("plain", "plain box") = 100, so the packaging satisfied the flavour
    assert option_reward(SNACK, goal_options, {"packaging": "plain box"}) == (0.0, 0)
    assert option_reward(SNACK, goal_options, {"flavor": "plain"}) == (1.0, 1)
    assert option_reward(SNACK, goal_options, {"flavor": "honey", "packaging": "plain box"}) == (0.0, 0)


def test_a_listed_goal_value_needs_that_value_selected():
    # "large" is a token subset of "x-large": fuzzy would credit it, but the product lists "x-large" itself
    assert option_reward(SNACK, ["x-large"], {"fit": "large"}) == (0.0, 0)
    assert option_reward(SNACK, ["x-large"], {"fit": "x-large"}) == (1.0, 1)
    # a dict goal only takes a selection of its own option name
    assert option_reward(SNACK, {"packaging": "gift box"}, {"flavor": "gift box"}) == (0.0, 0)
    # goal wording the product does not list is still matched fuzzily (as v2)
    styled = {**product(), "options": {"style": ["pack of 3", "single"]}}
    assert option_reward(styled, ["3 pack"], {"style": "pack of 3"}) == (1.0, 1)
