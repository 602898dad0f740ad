"""WebShop search: the analyzer, Lucene's BM25 (cross-checked with bm25s), top-k order, disk format."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentgym_credit.envs.webshop.search import BM25Index, analyze, cache_dir

DOCS = [
    "red running shoes for men",
    "blue shoes shoes",
    "red dress with pockets",
    "green tea loose leaf",
    "men's red t-shirt red",
    "the and of",  # stop words only: an empty document
]


def test_analyzer_lowercases_drops_stop_words_and_s_stems():
    assert analyze("The Men's SHOES, for a Party!") == ["men", "shoes", "party"]
    # Lucene's EnglishMinimalStemmer: -ies -> -y, -es kept after i/a/o/e, -s dropped, -ss/-us kept
    assert analyze("batteries toys glasses boxes shoes dress bus") == [
        "battery", "toy", "glasse", "boxe", "shoes", "dress", "bus",
    ]  # fmt: skip
    assert analyze("8.5 inch, $12.99") == ["8.5", "inch", "12.99"]


def test_bm25_matches_lucene_formula_by_hand():
    idx = BM25Index.build(DOCS)
    n, k1, b = len(DOCS), 0.9, 0.4
    lens = [len(analyze(d)) for d in DOCS]
    avg = sum(lens) / n
    idf_red = math.log(1 + (n - 3 + 0.5) / (3 + 0.5))  # "red" is in 3 documents
    tf = 2  # doc 4 has "red" twice
    expected = idf_red * tf / (tf + k1 * (1 - b + b * lens[4] / avg))
    assert idx.scores("red")[4] == pytest.approx(expected, rel=1e-6)
    # a repeated query term counts twice, as in a Lucene boolean query
    np.testing.assert_allclose(idx.scores("red red"), 2 * idx.scores("red"), rtol=1e-6)


def test_bm25_equals_bm25s_lucene_scores():
    bm25s = pytest.importorskip("bm25s")
    from agentgym_credit.envs.webshop.catalog import generate_catalog
    from agentgym_credit.envs.webshop.search import product_document

    cat = generate_catalog(300, seed=4)
    docs = [product_document(p) for p in cat.products]
    ours = BM25Index.build(docs)
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in analyze(d)] for d in docs]
    ref = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
    ref.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
    for g in cat.goals[:20]:
        q = [t for t in analyze(g["instruction_text"]) if t in vocab]
        np.testing.assert_allclose(
            ours.scores(g["instruction_text"]), ref.get_scores(q), rtol=1e-5, atol=1e-6
        )


def test_search_top_k_order_and_ties():
    idx = BM25Index.build(DOCS)
    assert idx.search("red shoes", k=50) == [0, 1, 4, 2]  # positive scores only, best first
    assert idx.search("red shoes", k=2) == [0, 1]
    assert idx.search("the of and") == [] and idx.search("") == [] and idx.search("zzqxv") == []
    twins = BM25Index.build(["alpha beta", "gamma", "alpha beta", "alpha beta"])
    assert twins.search("alpha", k=2) == [0, 2]  # equal scores: catalog order, as Lucene's doc ids


def test_save_load_roundtrip_and_version_check(tmp_path):
    idx = BM25Index.build(DOCS, fingerprint="abc")
    idx.save(tmp_path / "i.npz")
    back = BM25Index.load(tmp_path / "i.npz")
    assert back.fingerprint == "abc" and back.vocab == idx.vocab and (back.k1, back.b) == (0.9, 0.4)
    np.testing.assert_array_equal(back.scores("red shoes"), idx.scores("red shoes"))
    z = dict(np.load(tmp_path / "i.npz"))
    z["meta"] = np.asarray('{"version": 999, "k1": 0.9, "b": 0.4, "fingerprint": "abc"}')
    np.savez(tmp_path / "old.npz", **z)
    with pytest.raises(ValueError, match="index format"):
        BM25Index.load(tmp_path / "old.npz")


def test_cache_dir_override_order(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTGYM_CREDIT_WEBSHOP_CACHE", str(tmp_path / "env"))
    assert cache_dir() == tmp_path / "env"
    assert cache_dir(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("AGENTGYM_CREDIT_WEBSHOP_CACHE")
    assert cache_dir().parts[-3:] == (".cache", "agentgym_credit", "webshop")


def test_search_equals_brute_force_ranking():
    """The ranked candidate set (a lower bound from one term's postings) loses no top-k document."""
    from agentgym_credit.envs.webshop.catalog import generate_catalog
    from agentgym_credit.envs.webshop.search import product_document

    cat = generate_catalog(2000, seed=9)
    idx = BM25Index.build([product_document(p) for p in cat.products])
    queries = [g["instruction_text"] for g in cat.goals[:40]] + [
        "shoes",
        "black",
        "red red dress",
        "pack of 6",
    ]
    for q in queries:
        s = idx.scores(q)
        order = np.lexsort((np.arange(s.size), -s))
        order = order[s[order] > 0]
        for k in (1, 7, 50):
            assert idx.search(q, k) == order[:k].tolist(), (q, k)


def test_dense_vectors_for_frequent_terms_give_identical_scores(monkeypatch):
    """Terms on most product pages are added as dense vectors (fast); the sums are bit-identical."""
    from agentgym_credit.envs.webshop import search as S
    from agentgym_credit.envs.webshop.catalog import generate_catalog

    cat = generate_catalog(2000, seed=3)
    queries = [g["instruction_text"] for g in cat.goals[:60]]
    idx = S.BM25Index.build([S.product_document(p) for p in cat.products])
    want = [(idx.scores(q), idx.search(q, 50)) for q in queries]
    monkeypatch.setattr(S, "DENSE_MIN_DOCS", 0)
    dense = S.BM25Index.build([S.product_document(p) for p in cat.products])
    assert dense._dense_weights(dense.term_id["box"]) is not None  # "packaging: gift box, ..." everywhere
    for q, (scores, top) in zip(queries, want):
        np.testing.assert_array_equal(dense.scores(q), scores)
        assert dense.search(q, 50) == top


def _reference_search(idx, query, k):
    """The search before issue 25.5's pruning: every term added to the score of every document, ranked above
    the k-th best score within one term's postings (kept here to show the new path ranks the same)."""
    from agentgym_credit.envs.webshop.search import analyze

    s = np.zeros(idx.n_docs, dtype=np.float32)
    ids = [idx.term_id[t] for t in analyze(query) if t in idx.term_id]
    if not ids or k <= 0:
        return []
    uniq, counts = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
    best = None
    for t, c in zip(uniq.tolist(), counts.tolist()):
        a, b = int(idx.indptr[t]), int(idx.indptr[t + 1])
        w = idx.postings_weight[a:b]
        s[idx.postings_doc[a:b]] += w if c == 1 else w * c
        if b - a >= k and (best is None or b - a < best[1] - best[0]):
            best = (a, b)
    if best is not None:
        sub = s[idx.postings_doc[best[0]: best[1]]]
        floor = np.partition(sub, sub.size - k)[sub.size - k]
        cand = np.flatnonzero(s >= max(floor, np.finfo(np.float32).tiny))
    else:
        cand = np.flatnonzero(s > 0)
    return cand[np.lexsort((cand, -s[cand]))][:k].tolist()


def test_search_without_dense_terms_ranks_as_scoring_every_document(monkeypatch):
    """Issue 25.5: frequent (dense) terms are left out of the accumulation when their largest weights cannot
    matter, and only the remaining candidates are scored exactly; the ranking is the old one's on instruction
    texts, short and repeated-word queries, for several k, and the pruned path is the one taken."""
    from agentgym_credit.envs.webshop import search as S
    from agentgym_credit.envs.webshop.catalog import PRODUCT_TYPES, generate_catalog

    monkeypatch.setattr(S, "DENSE_MIN_DOCS", 0)  # a small catalog with dense terms: the path of large ones
    monkeypatch.setattr(S, "PRUNE_MIN_DOCS", 0)
    cat = generate_catalog(3000, seed=5)
    idx = S.BM25Index.build([S.product_document(p) for p in cat.products])
    queries = [g["instruction_text"] for g in cat.goals[:150]] + [pt.noun for pt in PRODUCT_TYPES[:40]]
    queries += ["box box gift box", "size size large", "black", "pack of 6 pack", "zzz nothing", ""]
    taken = []
    real = S.BM25Index._search_without_dense

    def spy(self, *a):
        out = real(self, *a)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(S.BM25Index, "_search_without_dense", spy)
    for q in queries:
        for k in (1, 10, 50):
            want = _reference_search(idx, q, k)
            assert idx.search(q, k) == want and idx.search(q, k, prune=False) == want, (q, k)
    assert sum(taken) > len(taken) // 2 and not all(taken)  # mostly pruned; the fallbacks ran too
