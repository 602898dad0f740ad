"""Issue 25 part 4: generated WebShop instructions vs the original's human ones (language statistics,
template slips, typos, omissions) and the rule baseline's success."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rapidfuzz")

from agentgym_credit.envs.webshop.catalog import OMISSION, _Stream, generate_raw  # noqa: E402
from agentgym_credit.envs.webshop.instructions import (  # noqa: E402
    RATES,
    add_typo,
    instruction_sentence,
    language_stats,
    sample_typos,
)

HUMAN_SAMPLE = Path(__file__).parent / "fixtures" / "webshop" / "human_instructions_sample.json"
"""191 of the original's human instructions (the file says where from and how they were sampled)."""


@pytest.fixture(scope="module")
def raw5k():
    items, attrs, _ = generate_raw(5000, seed=0)
    return items, attrs


def _human() -> list[str]:
    return [r[0] for r in json.loads(HUMAN_SAMPLE.read_text())["records"]]


def test_language_statistics_move_toward_the_human_instructions(raw5k):
    """Issue 35 (one function for both sides): generated v6 at 5,000 instructions has two-sentence 15.7%
    and informal 19.9% (goals >= 8%; v5: 1.4% and the typos alone); vocabulary 3,055 and distinct-3 0.41
    miss the goals of 4,000 and 0.50 (78 product types and ~1,400 brand families per 5,000 products)."""
    _, attrs = raw5k
    st = language_stats([a["instruction"] for a in attrs.values()])
    assert st["n"] == 5000
    assert st["two_sentence"] >= 0.08 and st["informal"] >= 0.08, st
    assert st["vocabulary"] >= 2900 and st["distinct3"] >= 0.39, st  # v5: 2,180 and 0.36
    assert st["mean_words"] <= 20, st


def test_human_and_generated_samples_of_one_size_by_one_function(raw5k):
    """The human sample (191) against as many generated instructions: measured, not assumed (human: 14.4
    words, vocabulary 841, distinct-3 0.82, two-sentence 13.6%, informal 27.2%)."""
    human = language_stats(_human())
    assert human["n"] == 191
    assert human["two_sentence"] == pytest.approx(26 / 191) and 0.2 < human["informal"] < 0.35
    _, attrs = raw5k
    gen = language_stats([a["instruction"] for a in attrs.values()][:191])
    assert gen["two_sentence"] > 0.5 * human["two_sentence"] and gen["informal"] > 0.5 * human["informal"]
    # at 191 both sides saturate (issue 45: this size hid a 0.55x gap at 5,000, now measured there instead)
    assert 0.8 * human["vocabulary"] < gen["vocabulary"] < 1.25 * human["vocabulary"]


def test_informal_and_two_sentence_by_hand():
    st = language_stats(["i need a red mug. also choose the large size.", "i need a red mug"])
    assert st["two_sentence"] == 0.5 and st["informal"] == 0.0  # null case: clean text has no informal mark
    for t in ("im looking for a mug", "iam looking for a mug", "a mug  for tea", "a mug ,for tea", "mugs,cups",
              "pls find a mug"):
        assert language_stats([t])["informal"] == 1.0, t
    assert language_stats(["size 2.5 ounce please"])["two_sentence"] == 0.0  # a decimal is no sentence break
    words = ["looking for a mug"] * 3 + ["lookig for a cup"]
    assert sample_typos([w.split() for w in words]) == [False, False, False, True]
    # plural pairs are not typos: "mugs" once next to a frequent "mug"
    assert sample_typos([w.split() for w in ["a mug"] * 3 + ["two mugs"]]) == [False] * 4


def test_language_stats_by_hand():
    st = language_stats(["i need a red t-shirt", "i need a blue one"])
    assert st["mean_words"] == 5 and st["vocabulary"] == 7  # i need a red t-shirt blue one
    assert st["distinct3"] == pytest.approx(5 / 6)  # (i need a) twice, then 4 others


def test_no_template_slips(raw5k):
    """Was: "in a eco pouch" in 18% of instructions, "in size size l"."""
    _, attrs = raw5k
    texts = [a["instruction"] for a in attrs.values()]
    bad_article = [t for t in texts if re.search(r"\ba (eco|extra|x-|xl|xs|18\b|8\b|11\b|[aeiou])", t)]
    assert not bad_article, bad_article[:5]
    doubled = [t for t in texts if re.search(r"\b(\w+) \1\b", t)]
    assert len(doubled) <= 5, doubled[:5]  # a typo may double a word's letters, never the words
    assert not any("size size" in t for t in texts)


def test_typos_and_omissions_at_their_rates(raw5k):
    items, attrs = raw5k
    rng = _Stream(np.random.default_rng(3))
    clean = instruction_sentence(
        _Stream(np.random.default_rng(5)), "shampoo", ["sulfate free"], {"scent": "lavender"}, rates={"typo": 0}
    )
    typo = instruction_sentence(
        _Stream(np.random.default_rng(5)), "shampoo", ["sulfate free"], {"scent": "lavender"}, rates={"typo": 1}
    )
    assert clean != typo and len(clean.split()) == len(typo.split())
    for _ in range(200):
        t = add_typo(rng, "please find lavender shampoo")
        diff = [(a, b) for a, b in zip(t.split(), "please find lavender shampoo".split()) if a != b]
        assert len(diff) == 1 and abs(len(diff[0][0]) - len(diff[0][1])) <= 1
    # omissions: a goal asks for some of its product's options; about 10% ask for none
    by = {it["asin"]: it for it in items}
    asked = [len(a["instruction_options"]) for a in attrs.values()]
    listed = [len(by[k]["customization_options"]) for k in attrs]
    none = np.mean([n == 0 for n in asked])
    assert 0.05 < none < 0.16, none
    # generator v5 asks for more of the listed options (2.38 of 2.73 here; v4: 2.06 of 2.69), as the
    # original's goals, which mostly ask for every option their product lists
    assert 0.8 * np.mean(listed) < np.mean(asked) < 0.95 * np.mean(listed)
    # issue 45: 0.10 gives the human goals' share of sample typos at 5,000 (0.087-0.091 vs 0.087; 0.18 gave 0.14)
    assert RATES["typo"] == 0.10 and OMISSION["none"] == 0.06


def test_rule_baseline_near_the_paper(tmp_path):
    """Search the instruction, first result, Buy Now: paper 45.6 score, 9.6% success; was 0% success
    (every goal asked for options), now some goals are met by any choice on the item page. Generator v8 (issue 45)
    gives most families 4-8 description twins that tie with the goal's product in search, so the first result is
    more often a twin: 33.6 / 2.4% here (v7: 43.2 / 6.2%), harder than the paper's, never easier."""
    from agentgym_credit.bench.envs import webshop_difficulty as W
    from agentgym_credit.envs.webshop.catalog import generate_catalog
    from agentgym_credit.envs.webshop.env import WebShopEnv

    env = WebShopEnv(catalog=generate_catalog(1000), split="test", cache_dir=False)
    r = W._episodes(env, W.rule_policy, 500, seed=0)
    assert 28.0 <= r["score"] <= 45.6 + 10 and 1.0 <= r["success"] <= 9.6 + 5, r
