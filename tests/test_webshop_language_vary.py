"""Issue 45 (A): instruction wording as varied as people's, measured at 5,000 on equal counts, without
changing what a goal asks for."""

from __future__ import annotations

import json

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
    """Was (issue 45): vocabulary 3,055 and distinct-3 0.405 on seed 0 (human 5,062-5,580 and 0.62-0.64);
    tuned on seeds 0-1: 3,785 and 0.524 (not yet the 0.85x goal for vocabulary: see the report)."""
    _, attrs, _ = generate_raw(5000, seed=0)
    st = language_stats([a["instruction"] for a in attrs.values()])
    assert st["vocabulary"] >= 3600 and st["distinct3"] >= 0.50, st
    assert st["mean_words"] <= 20.5 and 0.08 <= st["two_sentence"] <= 0.2, st


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
