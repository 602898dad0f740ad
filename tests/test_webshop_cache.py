"""WebShop's on-disk search index: damaged or planted cache files are misses (issue 15 items 2-3)."""

from __future__ import annotations

import copy
import json
import os
import warnings
import zipfile

import numpy as np
import pytest

from agentgym_credit.envs.webshop import search as S
from agentgym_credit.envs.webshop.catalog import generate_catalog
from agentgym_credit.envs.webshop.data import WebShopCatalog

DOCS = ["red running shoes", "blue shoes", "red dress with pockets", "green tea", "running socks"]


@pytest.fixture(scope="module")
def catalog():
    return generate_catalog(200, seed=4)


class _Planted:
    """Pickling this runs a shell command on load: what a planted cache entry would do."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _good(tmp_path):
    path = tmp_path / "good.npz"
    S.BM25Index.build(DOCS, fingerprint="fp").save(path)
    return path


def _rewrite(src, dst, **changes):
    z = dict(np.load(src))
    z.update(changes)
    for k in [k for k, v in changes.items() if v is None]:
        del z[k]
    np.savez(dst, **z)


def _damaged_files(tmp_path):
    """Ten kinds of bad cache file, each as (name, path)."""
    good = _good(tmp_path)
    raw = good.read_bytes()
    marker = tmp_path / "pwned"
    out = {}

    def put(name, data):
        p = tmp_path / f"{name}.npz"
        p.write_bytes(data)
        out[name] = p

    put("empty", b"")
    put("truncated", raw[: len(raw) // 2])
    put("random bytes", np.random.default_rng(0).bytes(4096))
    put("text", b"this is not an index\n")
    p = tmp_path / "pickle.npz"  # a planted object array whose unpickling runs a command
    np.savez(p, vocab=np.array([_Planted(marker)], dtype=object), meta=np.asarray("{}"))
    out["planted pickle"] = p
    p = tmp_path / "bare.npz"
    with zipfile.ZipFile(p, "w") as zf:  # a zip holding a raw pickle stream instead of .npy data
        import pickle

        zf.writestr("meta.npy", pickle.dumps(_Planted(marker)))
    out["zip with a pickle stream"] = p
    w = np.load(good)["postings_weight"].copy()
    w[0] += 1.0
    _rewrite(good, tmp_path / "edited.npz", postings_weight=w)
    out["edited weights (checksum)"] = tmp_path / "edited.npz"
    _rewrite(good, tmp_path / "missing.npz", postings_doc=None)
    out["missing array"] = tmp_path / "missing.npz"
    _rewrite(good, tmp_path / "meta.npz", meta=np.asarray("{not json"))
    out["bad metadata"] = tmp_path / "meta.npz"
    meta = json.loads(str(np.load(good)["meta"]))
    meta["version"] = 1
    _rewrite(good, tmp_path / "old.npz", meta=np.asarray(json.dumps(meta)))
    out["old format"] = tmp_path / "old.npz"
    return out, marker


def test_every_damaged_or_planted_file_is_a_clear_error_never_code(tmp_path):
    files, marker = _damaged_files(tmp_path)
    assert len(files) == 10
    for name, path in files.items():
        with pytest.raises(S.IndexCacheError):
            S.BM25Index.load(path)
        assert not marker.exists(), f"{name}: loading ran code"


def test_inconsistent_arrays_with_a_matching_checksum_are_refused(tmp_path):
    idx = S.BM25Index.build(DOCS)
    idx.postings_doc = idx.postings_doc.copy()
    idx.postings_doc[0] = 99  # a document that does not exist: a deep IndexError at search time
    idx.save(tmp_path / "i.npz")
    with pytest.raises(S.IndexCacheError, match="inconsistent"):
        S.BM25Index.load(tmp_path / "i.npz")


def test_shared_index_rebuilds_a_damaged_cache_with_a_warning(tmp_path, catalog):
    files, marker = _damaged_files(tmp_path / "bad")
    cache = tmp_path / "cache"
    S.clear_shared()
    want = S.shared_index(catalog, cache=cache)
    (path,) = cache.glob("bm25-*.npz")
    queries = [g["instruction_text"] for g in catalog.goals[:5]]
    for name, bad in files.items():
        path.write_bytes(bad.read_bytes())
        S.clear_shared()
        with pytest.warns(UserWarning, match="rebuilding"):
            idx = S.shared_index(catalog, cache=cache)
        assert [idx.search(q) for q in queries] == [want.search(q) for q in queries], name
        assert S.BM25Index.load(path).checksum() == want.checksum(), f"{name}: cache not repaired"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            S.clear_shared()
            S.shared_index(catalog, cache=cache)  # the repaired file loads without a warning
    assert not marker.exists()
    assert sorted(p.name for p in cache.iterdir()) == [path.name]  # no temporary files left behind
    S.clear_shared()


def test_index_of_another_catalog_is_a_miss(tmp_path, catalog):
    other = generate_catalog(200, seed=5)
    cache = tmp_path / "cache"
    S.clear_shared()
    S.shared_index(other, cache=cache)
    (path,) = cache.glob("bm25-*.npz")
    S.clear_shared()
    target = cache / f"bm25-{catalog.fingerprint()}-k{S.K1_DEFAULT}-b{S.B_DEFAULT}.npz"
    os.replace(path, target)  # the other catalog's index planted under this catalog's name
    with pytest.warns(UserWarning, match="another catalog"):
        idx = S.shared_index(catalog, cache=cache)
    assert idx.fingerprint == catalog.fingerprint()
    S.clear_shared()


def _edited(catalog, fn):
    products = copy.deepcopy(catalog.products)
    fn(products[0])
    return WebShopCatalog(products, catalog.prices, catalog.goals, source=catalog.source)


def test_fingerprint_covers_exactly_the_indexed_text(catalog):
    fp = catalog.fingerprint()
    first_bullet = _edited(catalog, lambda p: p["BulletPoints"].__setitem__(0, "zzyzx grip"))
    assert first_bullet.fingerprint() != fp
    long_desc = _edited(catalog, lambda p: p.__setitem__("Description", p["Description"] + " zzyzx"))
    assert long_desc.fingerprint() != fp  # the old key hashed only 64 characters of it
    option = _edited(catalog, lambda p: next(iter(p["options"].values())).append("zzyzx"))
    assert option.fingerprint() != fp
    # text the index does not cover leaves the key alone (no needless rebuilds)
    second_bullet = _edited(catalog, lambda p: p["BulletPoints"].append("zzyzx"))
    assert second_bullet.fingerprint() == fp
    reviews = _edited(catalog, lambda p: p.__setitem__("Rating", 1.0))
    assert reviews.fingerprint() == fp


def test_an_edited_bullet_point_is_searchable_through_the_disk_cache(tmp_path, catalog):
    cache = tmp_path / "cache"
    S.clear_shared()
    S.shared_index(catalog, cache=cache)
    S.clear_shared()
    edited = _edited(catalog, lambda p: p["BulletPoints"].__setitem__(0, "zzyzx grip"))
    idx = S.shared_index(edited, cache=cache)
    assert idx.search("zzyzx") == [0]
    S.clear_shared()


def test_save_is_atomic_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    path = _good(tmp_path)
    before = path.read_bytes()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", boom)
    with pytest.raises(OSError, match="disk full"):
        S.BM25Index.build(["other docs"]).save(path)
    assert path.read_bytes() == before  # the good file survives a failed overwrite
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.npz"]


def test_forged_index_with_a_recomputed_checksum_is_a_warned_miss(tmp_path, catalog, monkeypatch):
    """Issue 24: whoever can write the cache folder could drop a product's postings and recompute the old
    unkeyed checksum: results silently went missing. The checksum is now keyed with the user's cache
    secret (kept outside the folder), so such a file is a warned miss and the index is rebuilt whole."""
    from agentgym_credit.envs import cachekey

    cache = tmp_path / "cache"
    S.clear_shared()
    want = S.shared_index(catalog, cache=cache)
    (path,) = cache.glob("bm25-*.npz")
    query = catalog.goals[0]["instruction_text"]
    dropped = want.search(query)[0]
    forged = copy.copy(want)
    keep = forged.postings_doc != dropped
    counts = np.add.reduceat(keep.astype(np.int64), want.indptr[:-1]) if keep.size else keep
    counts = np.where(np.diff(want.indptr) == 0, 0, counts)
    forged.indptr = np.concatenate([[0], np.cumsum(counts)]).astype(want.indptr.dtype)
    forged.postings_doc, forged.postings_weight = want.postings_doc[keep], want.postings_weight[keep]
    forged._dense = {}
    assert dropped not in forged.search(query)
    with monkeypatch.context() as m:  # the forger's own key (they cannot read ours)
        m.setattr(cachekey, "cache_key", lambda: b"the forger's key, not the user's")
        forged.save(path)
    with pytest.raises(S.IndexCacheError, match="cache key"):
        S.BM25Index.load(path)
    S.clear_shared()
    with pytest.warns(UserWarning, match="rebuilding"):
        idx = S.shared_index(catalog, cache=cache)
    assert idx.search(query) == want.search(query) and dropped in idx.search(query)
    S.clear_shared()
