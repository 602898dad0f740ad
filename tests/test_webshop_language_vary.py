"""Issue 45 (A): instruction wording as varied as people's, measured at 5,000 on equal counts, without
changing what a goal asks for."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("rapidfuzz")

from agentgym_credit.bench.envs import webshop_language as WL  # noqa: E402
from agentgym_credit.envs.webshop import asides  # noqa: E402
from agentgym_credit.envs.webshop.catalog import generate_raw  # noqa: E402
from agentgym_credit.envs.webshop.instructions import language_stats  # noqa: E402

OFF = dict.fromkeys(asides.VARY_RATES, 0.0)


def test_vary_is_deterministic_and_off_means_unchanged():
    t = "i need a red mug with a lid for my kitchen"
    assert asides.vary(t, rates=OFF) == t
    assert asides.vary(t) == asides.vary(t)
    on = dict.fromkeys(asides.VARY_RATES, 1.0)
    out = asides.vary("i need a gray mug for my office", frozenset({"gray", "mug"}), on, ["gray mug"])
    assert "gray" in out.split() or "gray-mug" in out  # a protected word keeps its spelling
    assert "office" not in out.split()[:-4] or "workplace" in out  # an unprotected one may change
    assert "." not in out  # an aside keeps one sentence one sentence


def test_vary_never_rewords_option_or_attribute_words():
    on = dict.fromkeys(asides.VARY_RATES, 1.0)
    text = "i want a grey sweater in size large for my apartment, thanks"  # "apartment," too
    out = asides.vary(text, frozenset({"grey", "sweater", "size", "large"}), on)
    for w in ("grey", "sweater", "large"):
        assert w in out.split() or w + "," in out.split(), out
    assert "flat" in out  # the unprotected "apartment" took its regional synonym


def test_vary_draws_nothing_from_the_catalogue_stream():
    """Products, goals and everything after each sentence are the same with the rewording on or off."""
    base = dict(asides.VARY_RATES)
    try:
        asides.VARY_RATES.update(OFF)
        items0, attrs0, _ = generate_raw(300, seed=4)
    finally:
        asides.VARY_RATES.update(base)
    items1, attrs1, _ = generate_raw(300, seed=4)
    assert items0 == items1
    strip = [{k: v for k, v in a.items() if k != "instruction"} for a in attrs0.values()]
    assert strip == [{k: v for k, v in a.items() if k != "instruction"} for a in attrs1.values()]
    changed = sum(a["instruction"] != b["instruction"] for a, b in zip(attrs0.values(), attrs1.values()))
    assert changed > 60  # and the rewording does reword


def test_language_at_5000_moved_toward_the_human_goals():
    """Was (issue 45): vocabulary 3,055 and distinct-3 0.405 on seed 0, then 3,831 and 0.527 at 19.8 words; the
    original's first 5,000 human goals: 5,539 and 0.629 at 14.4 words. Tuned on seeds 0-1 with need phrases,
    shorter option wording and human-rate typos: 4,880 and 0.579 at 16.2 words (report: judged seeds)."""
    _, attrs, _ = generate_raw(5000, seed=0)
    st = language_stats([a["instruction"] for a in attrs.values()])
    assert st["vocabulary"] >= 4708 and st["distinct3"] >= 0.535, st  # 0.85x the human goals
    assert st["mean_words"] <= 16.6 and 0.1 <= st["two_sentence"] <= 0.2, st  # human 14.4 words, 15.5%
    assert st["repeat3"] <= 0.042 and st["typo"] <= 0.11, st  # human 2.8% and 8.7%: no padding, no typo salad


def test_need_phrases_ask_for_nothing_the_reward_checks():
    """Every need phrase, pool entry and qualifier is free of option values, colours, attributes and digits,
    so the words added for variety never read as a constraint; every catalogue noun has its own phrases."""
    import re

    from agentgym_credit.envs.webshop import needs as N
    from agentgym_credit.envs.webshop.lexicon import QUALIFIERS
    from agentgym_credit.envs.webshop.reward import COLOR_SET
    from agentgym_credit.envs.webshop.vocabulary import PRODUCT_TYPES

    checked = set(COLOR_SET)
    for pt in PRODUCT_TYPES:
        checked |= set(pt.attributes) | {v for vs in pt.options.values() for v in vs}
    assert {pt.noun for pt in PRODUCT_TYPES} == set(N.NEEDS)
    assert {pt.category for pt in PRODUCT_TYPES} == set(N.CATEGORY_NEEDS)
    phrases = [x for pool in (*N.NEEDS.values(), *N.CATEGORY_NEEDS.values()) for x in pool.split("|")]
    phrases += [*N.PLACE_NAMES, *N.OCCUPATIONS, *N.EVENTS, *N.HOBBIES, *N.PETS, *N._COMPOSED, *QUALIFIERS]
    bad = [(p, w) for p in phrases for w in checked if f" {w} " in f" {p} "]
    assert not bad, bad[:10]
    assert not [p for p in phrases if re.search(r"\d", p)]
    for pool in (N.PLACE_NAMES, N.OCCUPATIONS, N.EVENTS, N.HOBBIES, N.PETS):
        assert len(set(pool)) == len(pool)


def test_need_phrase_draws_and_articles():
    """A need phrase comes from its noun's, its category's or the composed pools, with "an" before a vowel."""
    import numpy as np

    from agentgym_credit.envs.webshop import needs as N
    from agentgym_credit.envs.webshop.catalog import _Stream

    rng = _Stream(np.random.default_rng(0))
    got = [N.need_phrase(rng, "dog bed", "garden") for _ in range(400)]
    own, cat = set(N.NEEDS["dog bed"].split("|")), set(N.CATEGORY_NEEDS["garden"].split("|"))
    n_own, n_cat = sum(g in own for g in got), sum(g in cat for g in got)
    assert n_own > 40 and n_cat > 20 and 400 - n_own - n_cat > 200  # composed: 70% of draws
    assert not [g for g in got if re.search(r"\ba [aeiou]", g)], "a/an"
    unknown = {N.need_phrase(rng, "no such noun") for _ in range(60)}  # composed, or "" (no pool of its own)
    assert "" in unknown and not unknown & {x for pool in N.NEEDS.values() for x in pool.split("|")}


def test_bench_report_with_and_without_a_human_file(tmp_path):
    out = tmp_path / "r.md"
    assert WL.main(["--n", "60", "--tune-seeds", "0", "--report-seeds", "1", "--out", str(out)]) == 0
    text = out.read_text()
    assert "quoted, not run here" in text and "| 1 | report | sentence | 60 |" in text and "NOT met" in text
    recs = {f"B{i:09d}": [{"instruction": f"i want a {c} {n} please"}] for i, (c, n) in
            enumerate((c, n) for c in ("red", "blue", "green", "teal") for n in ("mug", "lamp", "rug", "cup",
                                                                               "pen", "hat", "bag", "box")*2)}
    hum = tmp_path / "items_human_ins.json"
    hum.write_text(json.dumps(recs))
    assert WL.main(["--n", "60", "--tune-seeds", "--report-seeds", "1", "--human", str(hum), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| - | human | sentence | 60 |" in text and "quoted" not in text
    with pytest.raises(SystemExit):
        WL.main(["--n", "70", "--tune-seeds", "--report-seeds", "1", "--human", str(hum), "--out", str(out)])  # 64
    with pytest.raises(SystemExit):
        WL.main(["--n", "60", "--tune-seeds", "1", "--report-seeds", "1", "--out", str(out)])  # tuned = reported
    with pytest.raises(SystemExit):
        WL.main(["--report-seeds", "1", "--human", str(tmp_path / "missing.json"), "--out", str(out)])


def test_padding_stats_by_hand():
    """Issue 45: variety must not come from padding: rep3, repC, median and top20 on texts worked by hand."""
    st = language_stats(["a red mug and a red lid and a cup", "i need a blue lamp for my desk", "a lamp"])
    assert st["repeat3"] == pytest.approx(1 / 3)  # "a" three times in the first only
    assert st["repeat_content"] == pytest.approx(1 / 3)  # "red" twice; "and"/"a" are function words or short
    assert st["median_words"] == 8  # lengths 9, 8, 2
    clean = language_stats(["i want a mug", "i want a cup"])
    assert clean["repeat3"] == 0 and clean["repeat_content"] == 0 and clean["top3gram"] == 1.0


def test_human_goals_list_and_padding_checks(tmp_path):
    """``--human`` takes the original's human_goals.json (a JSON list) as well as items_human_ins.json; the
    report checks length and repeats against it, and a padded generator fails the check."""
    texts = [f"i want a {c} {n} for my {r}" for c in ("red", "blue", "teal") for n in ("mug", "lamp", "rug", "cup")
             for r in ("desk", "den", "car", "van", "loft", "dorm")]
    hum = tmp_path / "human_goals.json"
    hum.write_text(json.dumps(texts))
    assert WL.load_human(hum, 5) == texts[:5]
    human = language_stats(texts)
    ok_text, ok = WL.padding_checks(human, human)
    assert ok and ok_text == "ok ok"
    padded = language_stats([t + " and a nice mug and a mug and a mug" for t in texts])
    assert WL.padding_checks(padded, human) == ("length repeats", False)
    out = tmp_path / "r.md"
    assert WL.main(["--n", "60", "--tune-seeds", "--report-seeds", "1", "--human", str(hum), "--out", str(out)]) == 0
    text = out.read_text()
    assert "`human_goals.json`" in text and "| - | human | sentence | 60 |" in text and "Padding check" in text
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(["a text", 3]))
    with pytest.raises(SystemExit):
        WL.main(["--n", "3", "--tune-seeds", "--report-seeds", "1", "--human", str(bad), "--out", str(out)])
