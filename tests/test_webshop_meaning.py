"""bench/envs/webshop_meaning: generic scripts that read meaning (units, shades, size charts, typos)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("rapidfuzz")

from agentgym_credit.bench.envs import webshop_meaning as M  # noqa: E402
from agentgym_credit.envs.webshop import pages as P  # noqa: E402


@pytest.mark.parametrize(
    ("instruction", "values", "want"),
    [
        ("olive oil in the 473 ml size", ["8 fl oz", "16 fl oz", "32 fl oz"], "16 fl oz"),  # units
        ("a rug in navy blue", ["onyx", "midnight", "crimson"], "midnight"),  # shade
        ("a tee in x-small", ["size 0-2", "size 8-10", "size 16-18"], "size 0-2"),  # size chart
        ("speaker, size lg", ["s (4-6)", "l (12-14)"], "l (12-14)"),  # chart letters
        ("a lavendar scent", ["lavender", "vanilla"], "lavender"),  # typo
        ("the 16 fl oz one", ["8 fl oz (pack of 2)", "16 fl oz (pack of 2)"], "16 fl oz (pack of 2)"),  # shared words
    ],
)
def test_option_choice_reads_meaning(instruction, values, want):
    assert M.option_choice(instruction, values)[0] == want


def test_option_choice_without_evidence_is_none_and_a_wrong_measure_scores_low():
    assert M.option_choice("a plain mug", ["red", "blue"]) == (None, 0.0)
    assert M.option_choice("the 500 ml bottle", ["250 ml"])[0] is None


def test_quantities_and_budget():
    assert M.quantities("16 fl oz") and M.quantities("pack of 3") == {("n", 3.0)}
    assert M.budget("and price lower than 50.00 dollars") == 50.0
    assert M.budget("under $40, please") == 40.0
    assert M.budget("a red mug") is None


def _env(kind, page, instruction, chosen=None):
    return SimpleNamespace(_page_kind=kind, _page=page, _options=dict(chosen or {}), max_steps=15,
                           goal={"instruction_text": instruction})


def test_meaning_policy_opens_the_in_budget_title_match_then_chooses_by_meaning():
    ins = "a lavender shampoo, 473 ml, price lower than 20.00 dollars"
    prods = [{"asin": "B001", "Title": "Acme Lavender Shampoo", "Price": "$35.00"},
             {"asin": "B002", "Title": "Lumo Lavender Shampoo", "Price": "$12.00"},
             {"asin": "B003", "Title": "Acme Desk Lamp", "Price": "$5.00"}]
    pol = M.MeaningPolicy()
    env = _env("search", P.search_page(ins), ins)
    assert pol(env, {}, None).startswith("search[")
    env = _env("results", P.results_page(ins, prods, 1, 3, set()), ins)
    assert pol(env, {}, None) == "click[b002]"
    item = {"options": {"size": ["8 fl oz", "16 fl oz"]}, "Title": "Lumo Lavender Shampoo", "Price": "$12.00",
            "Rating": "N.A."}
    env = _env("item", P.item_page(ins, item, {}, show_attrs=False), ins)
    assert pol(env, {}, None) == "click[16 fl oz]"
    env = _env("item", P.item_page(ins, item, {"size": "16 fl oz"}, show_attrs=False), ins, {"size": "16 fl oz"})
    assert pol(env, {}, None) == "click[buy now]"


def test_compare_goes_back_from_an_item_that_does_not_fit():
    ins = "a lavender shampoo in 16 fl oz"
    pol = M.MeaningPolicy(compare=4)
    prods = [{"asin": "B001", "Title": "Acme Lavender Shampoo", "Price": "$5"},
             {"asin": "B002", "Title": "Lumo Lavender Shampoo", "Price": "$5"}]
    pol(_env("search", P.search_page(ins), ins), {}, None)
    env = _env("results", P.results_page(ins, prods, 1, 2, set()), ins)
    assert pol(env, {}, None) == "click[b001]"
    item = {"options": {"size": ["8 fl oz", "32 fl oz"]}, "Title": "Acme Lavender Shampoo", "Price": "$5", "Rating": "N.A."}
    env.__dict__.update(_page_kind="item", _page=P.item_page(ins, item, {}, show_attrs=False))
    assert pol(env, {}, None) == "click[< prev]"
    env.__dict__.update(_page_kind="results", _page=P.results_page(ins, prods, 1, 2, {"b001"}))
    assert pol(env, {}, None) == "click[b002]"


@pytest.mark.parametrize(("order", "first"), [("page", "click[b001]"), ("dearest", "click[b003]"), ("cheapest", "click[b002]")])
def test_reading_policy_opens_look_alikes_in_page_or_price_order(order, first):
    ins = "a lavender shampoo, price lower than 20.00 dollars"
    prods = [{"asin": "B001", "Title": "Acme Lavender Shampoo", "Price": "$12.00"},
             {"asin": "B002", "Title": "Acme Lavender Shampoo", "Price": "$11.00"},
             {"asin": "B003", "Title": "Acme Lavender Shampoo", "Price": "$13.50"},
             {"asin": "B004", "Title": "Acme Lavender Shampoo", "Price": "$25.00"}]  # over budget: never first
    pol = M.ReadingPolicy(order=order)
    pol(_env("search", P.search_page(ins), ins), {}, None)
    assert pol(_env("results", P.results_page(ins, prods, 1, 4, set()), ins), {}, None) == first


def test_reading_policy_refuses_an_unknown_order():
    with pytest.raises(ValueError, match="order must be one of"):
        M.ReadingPolicy(order="random")


def test_hard_report_runs_end_to_end_and_writes_the_verdict(tmp_path):
    from agentgym_credit.bench.envs import webshop_hard as H

    rows = H.run([60], (1,), 3)
    assert {r["policy"] for r in rows} == set(H.POLICIES)
    expert = next(r for r in rows if r["policy"] == "expert")
    assert expert["success"] == 100.0
    text = H.write_markdown(rows, tmp_path / "r.md", "cmd", H.TUNING_SEEDS)
    assert (tmp_path / "r.md").read_text() == text
    assert "(tuning)" in text and "goal m" in text and "best script" in text
    assert not set(H.TUNING_SEEDS) & set(H.JUDGED_SEEDS)


def test_hard_catalogue_has_fewer_types_all_vendor_spelled_and_the_expert_still_wins():
    from agentgym_credit.bench.envs.webshop_difficulty import _episodes
    from agentgym_credit.envs.webshop.catalog import HARD_TYPE_STEP, PRODUCT_TYPES, generate_catalog
    from agentgym_credit.envs.webshop.env import WebShopEnv

    hard, easy = generate_catalog(300, 1, hard=True), generate_catalog(300, 1)
    allowed = {pt.noun for pt in PRODUCT_TYPES[::HARD_TYPE_STEP]}
    assert {p["query"] for p in hard.products} <= allowed
    assert len({p["query"] for p in easy.products}) > len(allowed)
    assert hard.source.startswith("generated:v") and ":hard:" in hard.source and ":hard:" not in easy.source
    env = WebShopEnv(catalog=hard, split="test", cache_dir=False)
    assert _episodes(env, None, 20, seed=0)["success"] == 100.0
