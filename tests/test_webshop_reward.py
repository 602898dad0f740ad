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
    # a wrong scent still counts when its value is written in the product text (the original's rule)
    p2 = product(Description="Smells of lavender.")
    assert option_reward(p2, ["mint"], {"scent": "lavender"}) == (1.0, 1)
    assert option_reward(product(), ["mint"], {"scent": "lavender"}) == (0.0, 0)
    # an option never selected never matches; no goal options gives share None
    assert option_reward(p, ["mint", "8 fl oz"], {}) == (0.0, 0)
    assert option_reward(p, [], {"scent": "mint"})[0] is None


def test_goal_options_as_list_human_goal_form():
    g = goal(goal_options=["lavender", "16 fl oz"])
    assert get_reward(product(), g, 10.0, {"scent": "lavender", "size": "16 fl oz"}).reward == 1.0


def test_normalize_color():
    assert normalize_color("navy blue") == "blue"
    assert normalize_color("dark red") == "red"
    assert normalize_color("rose gold") == "gold"  # "gold" comes before "rose gold" alphabetically
    assert normalize_color("unscented") == "unscented"
    assert normalize_color("16 fl oz") == "16 fl oz"


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
