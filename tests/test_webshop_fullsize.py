"""Issue 25 part 5: the full-size path — a streaming generator and loader, a cap on goals per product,
a chunked index build (results identical to one chunk)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rapidfuzz")

from agentgym_credit.envs.webshop.catalog import MAX_PRODUCTS, generate_catalog, generate_raw, iter_raw  # noqa: E402
from agentgym_credit.envs.webshop.data import (  # noqa: E402
    WebShopDataError,
    _combos,
    iter_json_array,
    iter_json_object,
    load_original,
    process_items,
)
from agentgym_credit.envs.webshop.search import BM25Index, product_document  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "webshop"
FULL_SIZE = 1_181_436
"""Products in the original's full catalog (items_shuffle.json)."""


def test_generator_streams_the_full_size():
    """Was: more than 200,000 products refused. The stream is lazy: the first products of the full-size
    catalog are those of a small one (the size only says where to stop)."""
    assert MAX_PRODUCTS >= FULL_SIZE
    head = list(itertools.islice(iter_raw(FULL_SIZE, seed=4), 30))
    items, attrs, reviews = generate_raw(30, seed=4)
    assert [h[0] for h in head] == items
    assert [h[1] for h in head] == [attrs[it["asin"]] for it in items]
    assert [h[2] for h in head if h[2] is not None] == reviews


def test_streamed_catalog_equals_the_processed_raw_files():
    cat = generate_catalog(300, seed=2)
    items, attrs, reviews = generate_raw(300, seed=2)
    assert cat.products == process_items(items, attrs, reviews)


@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 1 << 20])
def test_streaming_json_readers_equal_json_load(chunk):
    for name in ("items_shuffle_tiny.json", "reviews_tiny.json"):
        path = FIXTURES / name
        assert list(iter_json_array(path, chunk=chunk)) == json.loads(path.read_text(encoding="utf-8"))
    for name in ("items_ins_v2_tiny.json", "items_human_ins_tiny.json"):
        path = FIXTURES / name
        assert dict(iter_json_object(path, chunk=chunk)) == json.loads(path.read_text(encoding="utf-8"))


def test_streaming_json_numbers_across_chunks_and_errors(tmp_path):
    p = tmp_path / "a.json"
    p.write_text(' [ 1, 23 ,456,\n{"k": [7, 8.5e3]}, "x\\"y", 1234567 ] ', encoding="utf-8")
    for chunk in (1, 2, 3, 5):
        assert list(iter_json_array(p, chunk=chunk)) == [1, 23, 456, {"k": [7, 8500.0]}, 'x"y', 1234567]
    (tmp_path / "e.json").write_text("[]", encoding="utf-8")
    assert list(iter_json_array(tmp_path / "e.json")) == []
    for bad, match in (("[1, 2", "expected"), ("[1 2]", "expected ','"), ('{"a": 1', "expected"),
                       ("[1, }", "invalid JSON"), ("{1: 2}", "invalid JSON|not a string"), ('{"a"}', "':'")):
        (tmp_path / "b.json").write_text(bad, encoding="utf-8")
        it = iter_json_object if bad.startswith("{") else iter_json_array
        with pytest.raises(WebShopDataError, match=match):
            list(it(tmp_path / "b.json", chunk=2))
    (tmp_path / "o.json").write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(WebShopDataError, match="expected '\\['"):
        list(iter_json_array(tmp_path / "o.json"))


def test_loader_reads_only_what_it_needs(tmp_path):
    """``num_products`` stops reading the items file: a broken tail after the first products is never read
    (json.load of the whole file would fail)."""
    good = (FIXTURES / "items_shuffle_tiny.json").read_text(encoding="utf-8").rstrip()
    assert good.endswith("]")
    (tmp_path / "items.json").write_text(good[:-1] + ", {broken", encoding="utf-8")
    cat = load_original(tmp_path / "items.json", FIXTURES / "items_ins_v2_tiny.json", num_products=2)
    assert [p["asin"] for p in cat.products] == ["B07ABCDE01", "B07ABCDE02"]
    with pytest.raises(WebShopDataError, match="items.json"):
        load_original(tmp_path / "items.json", FIXTURES / "items_ins_v2_tiny.json")


def test_loader_caps_goals_per_product():
    files = (FIXTURES / "items_shuffle_tiny.json", FIXTURES / "items_ins_v2_tiny.json")
    assert len(load_original(*files, goals_per_product=None).goals) == 8  # 2x2 + 2x2, as the original
    capped = load_original(*files, goals_per_product=1)
    assert sorted(g["asin"] for g in capped.goals) == ["B07ABCDE01", "B07ABCDE02"]
    assert len(load_original(*files).goals) == 8  # default cap 10 > 4 combinations
    with pytest.raises(ValueError, match="goals_per_product"):
        load_original(*files, goals_per_product=0)


def test_combos_sampled_without_listing_them():
    lists = [[f"v{i}{j}" for j in range(10)] for i in range(12)]  # 10**12 combinations
    rng = np.random.default_rng(0)
    got = _combos(rng, lists, 10)
    assert len(got) == len(set(got)) == 10 and all(len(c) == 12 for c in got)
    assert got == _combos(np.random.default_rng(0), lists, 10)
    small = [["a", "b"], ["x", "y", "z"]]
    assert _combos(rng, small, None) == _combos(rng, small, 6) == list(itertools.product(*small))
    assert set(_combos(rng, small, 4)) < set(itertools.product(*small))


def test_chunked_index_build_equals_one_chunk():
    """Was: every token id of the corpus in one Python list (~60 bytes a token). Chunks give identical arrays."""
    cat = generate_catalog(400, seed=1)
    docs = [product_document(p) for p in cat.products]
    one = BM25Index.build(docs, chunk=1 << 20)
    for chunk in (1, 3, 128):
        other = BM25Index.build((d for d in docs), chunk=chunk)
        assert other.vocab == one.vocab
        for name in ("indptr", "postings_doc", "postings_weight", "doc_len"):
            np.testing.assert_array_equal(getattr(other, name), getattr(one, name))
    assert one.postings_doc.dtype == np.int32 and one.postings_weight.dtype == np.float32
    assert BM25Index.build([]).n_docs == 0
    with pytest.raises(ValueError, match="chunk"):
        BM25Index.build(docs, chunk=0)


def test_speed_bench_reports_memory_build_and_step_times(tmp_path):
    from agentgym_credit.bench.speed import webshop_speed as B

    rows = B.run([300], n_queries=20, n_episodes=3, bm25s_compare=False)
    r = rows[0]
    assert 0 < r["gen_peak_gb"] <= r["peak_gb"] <= r["end_peak_gb"] < 64
    assert r["postings"] > 0 and r["terms"] > 0 and r["build_s"] > 0
    assert 0 < r["random"]["step_ms_p50"] <= r["random"]["step_ms_p99"]
    out = tmp_path / "speed.md"
    B.write_markdown(rows, out, "python -m agentgym_credit.bench.speed.webshop_speed --sizes 300", "1.0 / 1.0")
    text = out.read_text()
    assert "peak after index (GB)" in text and "| 300 |" in text and "step p50 / p99" in text


def test_search_reuses_one_buffer_and_the_index_pickles():
    import pickle
    import threading

    cat = generate_catalog(200, seed=3)
    idx = BM25Index.build([product_document(p) for p in cat.products])
    q = cat.goals[0]["instruction_text"]
    first, s1 = idx.search(q, 10), idx.scores(q)
    idx.search("nothing matches this zzz", 10)
    assert idx.search(q, 10) == first  # the reused buffer starts from zero every time
    np.testing.assert_array_equal(idx.scores(q), s1)
    back = pickle.loads(pickle.dumps(idx))
    assert back.search(q, 10) == first
    out = []
    t = threading.Thread(target=lambda: out.append(idx.search(q, 10)))
    t.start()
    t.join()
    assert out == [first]


def test_loader_bench_in_a_fresh_process(tmp_path):
    from agentgym_credit.bench.speed import webshop_speed as B

    out = tmp_path / "loader.md"
    B.main(["--sizes", "--loader", "200", "--out", str(out)])
    text = out.read_text()
    head = next(line for line in text.splitlines() if line.startswith("| products | files"))
    row = next(line for line in text.splitlines() if line.startswith("| 200 |"))
    cells = dict(zip([c.strip() for c in head.split("|")[1:-1]], [c.strip() for c in row.split("|")[1:-1]]))
    assert 200 <= int(cells["goals"].replace(",", "")) <= 2000  # goals: 1 to 10 option combinations a product
    assert float(cells["peak (GB)"]) > 0 and float(cells["writing them (s)"]) >= 0


def test_streamed_raw_files_hold_what_generate_raw_holds(tmp_path):
    import json

    from agentgym_credit.bench.speed.webshop_speed import write_raw_files

    paths = write_raw_files(120, tmp_path)
    items, attrs, reviews = generate_raw(120)
    for a in attrs.values():
        a.pop("instruction_options", None)
    got = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    assert got == [items, attrs, reviews]
    assert [list(iter_json_array(paths[0])), dict(iter_json_object(paths[1]))] == [items, attrs]


def test_loader_keeps_goals_as_columns_that_read_as_the_dicts(tmp_path):
    """Issue 25.5: ~10M goals at full size would take ~7.5 GB as dicts; the loader keeps them as columns,
    each read as the dict ``synthetic_goals`` makes (same goals, same order), for any cap."""
    from agentgym_credit.bench.speed.webshop_speed import write_raw_files
    from agentgym_credit.envs.webshop.data import SyntheticGoals, product_prices, synthetic_goals

    paths = write_raw_files(400, tmp_path)
    for cap in (None, 1, 10):
        cat = load_original(*paths, goals_per_product=cap)
        assert isinstance(cat.goals, SyntheticGoals)
        want = synthetic_goals(cat.products, product_prices(cat.products), combos_per_product=cap)
        assert list(cat.goals) == want and len(cat.goals) == len(want) > 0
        assert cat.goals[-1] == want[-1] and cat.goals[3:7] == want[3:7] and cat.goals[::50] == want[::50]
        with pytest.raises(IndexError):
            cat.goals[len(want)]
    cat.goals[0]["instruction_text"] = "edited"  # a new dict each time: the catalog is unchanged
    assert cat.goals[0] == want[0]
    env_goal = cat.goals[cat.split_indices("test")[0]]
    assert env_goal["asin"] in cat.by_asin and env_goal["instruction_text"].startswith(
        cat.by_asin[env_goal["asin"]]["instruction_text"])


def test_a_damaged_member_is_not_read_to_the_end(tmp_path, monkeypatch):
    from agentgym_credit.envs.webshop import data as D

    monkeypatch.setattr(D, "MAX_MEMBER_CHARS", 64)
    p = tmp_path / "d.json"
    p.write_text('[1, {"a": tru, "pad": "' + "x" * 10_000 + '"}, 2]', encoding="utf-8")
    reads = []
    real_open = open

    def counting_open(*a, **k):
        f = real_open(*a, **k)
        read = f.read
        f_read = lambda n=-1: reads.append(n) or read(n)  # noqa: E731
        return type("F", (), {"read": staticmethod(f_read), "__enter__": lambda s: s, "__exit__": lambda s, *x: f.close()})()

    monkeypatch.setattr("builtins.open", counting_open)
    with pytest.raises(WebShopDataError, match="invalid JSON"):
        list(D.iter_json_array(p, chunk=16))
    assert len(reads) < 20  # stopped near the damage, not after ~10,000 / 16 reads
