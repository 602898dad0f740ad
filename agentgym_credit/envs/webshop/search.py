"""BM25 product search, Lucene-style, in numpy; one index per catalog per process, cached on disk.

What lives here: :func:`analyze` (the text analyzer), :class:`BM25Index` (build, search, save,
load), :func:`product_document` (the text indexed for a product, as the original's index),
:func:`shared_index` (the one index every env instance of a process uses), :func:`cache_dir`,
:class:`IndexCacheError`.

The disk cache is data: an ``.npz`` of plain arrays read with ``allow_pickle=False`` and JSON
metadata holding a keyed tag of the arrays (:mod:`~agentgym_credit.envs.cachekey`: an index edited and
re-checksummed elsewhere is refused); it is written atomically (temporary file + ``os.replace``).
A damaged, truncated, empty, planted or foreign cache file is a miss: a warning, a rebuild, and the
file is overwritten with a good one.

Scoring is Lucene's BM25 (the original index is Pyserini/Lucene with ``k1=0.9, b=0.4``)::

    score(q, d) = sum over query terms t (with repetition) of
                  idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * len(d) / avglen))
    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

Ties are broken by document order (Lucene breaks them by doc id). The analyzer lower-cases, drops
possessive ``'s``, splits on anything but letters, digits and decimal points inside numbers,
removes Lucene's English stop words and applies the English minimal ("S") stemmer. Differences
from Pyserini's default analyzer (Porter stemming, lossy one-byte length norms) are listed in
``DIFFERENCES.md``.

A search adds the postings of each query term (precomputed per-posting BM25 weights) into a
score vector — one vectorized ``np.add.at`` per query term, no Python loop over documents — and ranks
only the documents scoring at least the k-th best score within one term's postings (a lower
bound of the overall k-th best), with ``np.partition`` and ``np.lexsort``. Terms on more than 1/8 of
the documents (dense: a full-length vector add each) are left out when their largest weights together
stay below that bound (MaxScore's argument; from :data:`PRUNE_MIN_DOCS` documents on): a document then
needs the other terms to come within those weights of it, which only documents of the rarest terms can;
those few are scored exactly, every term in the same order and float32 arithmetic (:meth:`BM25Index.search`). The ranking is the one of
scoring every document (``tests/test_webshop_search.py`` checks it against the earlier search).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import json
import os
import re
import tempfile
import threading
import warnings
import zipfile
from array import array
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.envs.cachekey import cache_tag

INDEX_FORMAT_VERSION = 2
DENSE_FRACTION, DENSE_MIN_DOCS, DENSE_MAX_TERMS = 8, 20_000, 64
"""Terms in more than 1/8 of at least 20k documents are added as dense vectors (at most 64 kept)."""
PRUNE_MIN_DOCS = 500_000
"""Dense terms are left out of a search's accumulation only from this many documents on: below it the full
vector adds are cheap (the score vector stays in the caches) and the pruning's own steps cost more (CPU
p50 at 100k generated products 0.30 ms pruned vs 0.17 ms; at 300k 0.51-0.54 vs 0.49; at 1.18M 0.98 vs
1.43 ms, benchmarks/speed/webshop_speed_full.md)."""
SCAN_FRACTION = 32
"""A search finds its candidates in the postings of its rarest terms unless they hold more than 1/32 of the
documents (then in one pass over the score vector)."""
K1_DEFAULT, B_DEFAULT = 0.9, 0.4
BUILD_CHUNK = 65_536
"""Documents analyzed per chunk of an index build (see :meth:`BM25Index.build`)."""
CACHE_ENV_VAR = "AGENTGYM_CREDIT_WEBSHOP_CACHE"
"""Environment variable that overrides the on-disk cache folder."""

LUCENE_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then "
    "there these they this to was will with".split()
)
_TOKEN = re.compile(r"[a-z0-9]+(?:\.[0-9]+)*")
_POSSESSIVE = re.compile(r"'s\b")


def _stem(w: str) -> str:
    """Lucene's EnglishMinimalStemmer (Harman's S-stemmer)."""
    n = len(w)
    if n < 3 or w[-1] != "s":
        return w
    if w[-2] in "us":
        return w
    if w[-2] == "e":
        if n > 3 and w[-3] == "i" and w[-4] not in "ae":
            return w[:-3] + "y"
        if w[-3] in "iaoe":
            return w
    return w[:-1]


def analyze(text: str) -> list[str]:
    """Terms of a text: lower-case, tokens, no stop words, S-stemmed."""
    text = _POSSESSIVE.sub("", text.lower().replace("\u2019", "'"))
    return [_stem(t) for t in _TOKEN.findall(text) if t not in LUCENE_STOP_WORDS]


def product_document(p: Mapping[str, Any]) -> str:
    """Indexed text of a product: title, description, first bullet point and options, lower-cased."""
    option_text = ", and ".join(f"{name}: {', '.join(vals)}" for name, vals in p["options"].items())
    bullets = p["BulletPoints"] or [""]
    return " ".join([p["Title"], p["Description"], bullets[0], option_text]).lower()


class BM25Index:
    """An inverted index with precomputed BM25 weights (see module docstring)."""

    def __init__(
        self,
        vocab: Sequence[str],
        indptr: np.ndarray,
        postings_doc: np.ndarray,
        postings_weight: np.ndarray,
        doc_len: np.ndarray,
        *,
        k1: float = K1_DEFAULT,
        b: float = B_DEFAULT,
        fingerprint: str = "",
    ):
        self.vocab = list(vocab)
        self.term_id = {t: i for i, t in enumerate(self.vocab)}
        self.indptr = np.asarray(indptr, dtype=np.int64)
        self.postings_doc = np.asarray(postings_doc, dtype=np.int32)
        self.postings_weight = np.asarray(postings_weight, dtype=np.float32)
        self.doc_len = np.asarray(doc_len, dtype=np.int32)
        self.n_docs = int(self.doc_len.shape[0])
        self.k1, self.b = float(k1), float(b)
        self.fingerprint = fingerprint
        self._dense: dict[int, np.ndarray] = {}  # built on first use: see _dense_weights
        self._max_weight: np.ndarray | None = None  # built on first use: see _term_max
        self._tls = threading.local()  # per-thread score buffer: see _accumulate

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_tls", None)  # thread-local buffers are rebuilt on first use
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._tls = threading.local()

    def _dense_weights(self, t: int) -> np.ndarray | None:
        """Term ``t``'s weights as a dense vector (0 where absent) when it is in more than
        1/:data:`DENSE_FRACTION` of the documents, else ``None``. Adding a dense vector gives the same
        sums as the scatter (``+ 0.0`` elsewhere) at a fraction of its cost; words on every product
        page ("box", "size") would otherwise cost a 100k-element scatter per query term."""
        if not self._is_dense(t):
            return None
        a, b = int(self.indptr[t]), int(self.indptr[t + 1])
        dense = self._dense.get(t)
        if dense is None:
            dense = np.zeros(self.n_docs, dtype=np.float32)
            dense[self.postings_doc[a:b]] = self.postings_weight[a:b]
            if len(self._dense) < DENSE_MAX_TERMS:
                self._dense[t] = dense
        return dense

    def _is_dense(self, t: int) -> bool:
        """Whether term ``t`` is added as a dense vector (:meth:`_dense_weights`)."""
        return (int(self.indptr[t + 1]) - int(self.indptr[t])) * DENSE_FRACTION > self.n_docs >= DENSE_MIN_DOCS

    # -- build -----------------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        docs: Iterable[str],
        *,
        k1: float = K1_DEFAULT,
        b: float = B_DEFAULT,
        fingerprint: str = "",
        progress: bool = False,
        chunk: int = BUILD_CHUNK,
    ) -> BM25Index:
        """Index ``docs`` (document ``i`` is result ``i``; any iterable, read once).

        Built in chunks of ``chunk`` documents: each chunk's term ids go into a 4-byte ``array`` (not
        a Python list of ints, ~60 bytes a token) and become numpy postings (term, doc, tf) at once;
        the chunks' postings are concatenated and stably sorted by term at the end, so memory is
        ~10 bytes per posting plus one chunk's tokens, whatever the number of documents.
        """
        if chunk < 1:
            raise ValueError(f"chunk must be >= 1, got {chunk}")
        vocab: dict[str, int] = {}
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        lens: list[np.ndarray] = []
        it: Any = docs
        if progress:
            try:
                from tqdm.auto import tqdm

                it = tqdm(docs, desc="webshop: indexing", unit="doc")
            except ImportError:
                pass
        setdefault = vocab.setdefault
        it = iter(it)
        n_docs = 0
        while True:
            block = list(itertools.islice(it, chunk))
            if not block:
                break
            ids = array("i")
            dl = np.zeros(len(block), dtype=np.int64)
            for i, d in enumerate(block):
                terms = analyze(d)
                dl[i] = len(terms)
                ids.extend([setdefault(t, len(vocab)) for t in terms])
            m = len(block)
            keys, tf = np.unique(
                np.frombuffer(ids, dtype=np.int32).astype(np.int64) * m + np.repeat(np.arange(m), dl),
                return_counts=True,
            )
            parts.append(((keys // m).astype(np.int32), (keys % m + n_docs).astype(np.int32), tf.astype(np.int32)))
            lens.append(dl.astype(np.int32))
            n_docs += m
            del block, ids, keys, tf
        n_terms = len(vocab)
        doc_len = np.concatenate(lens) if lens else np.zeros(0, dtype=np.int32)
        p_term = np.concatenate([x[0] for x in parts]) if parts else np.zeros(0, dtype=np.int32)
        order = np.argsort(p_term, kind="stable")  # chunks are in doc order: docs stay ascending per term
        p_term = p_term[order]
        p_doc = np.concatenate([x[1] for x in parts])[order] if parts else np.zeros(0, dtype=np.int32)
        tf = np.concatenate([x[2] for x in parts])[order] if parts else np.zeros(0, dtype=np.int32)
        del parts, order
        df = np.bincount(p_term, minlength=n_terms)
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        avg = float(doc_len.mean()) if n_docs and doc_len.mean() > 0 else 1.0
        weight = np.empty(p_term.shape[0], dtype=np.float32)
        step = 1 << 22  # weights in slices: float64 temporaries of one slice only
        for s0 in range(0, p_term.shape[0], step):
            sl = slice(s0, s0 + step)
            t, d, f = p_term[sl], p_doc[sl], tf[sl].astype(np.float64)
            weight[sl] = idf[t] * f / (f + k1 * (1.0 - b + b * doc_len[d] / avg))
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        return cls(list(vocab), indptr, p_doc, weight, doc_len, k1=k1, b=b, fingerprint=fingerprint)

    # -- query -----------------------------------------------------------------------------------
    def query_terms(self, query: str) -> list[str]:
        """Analyzed terms of a query (what decides its results)."""
        return analyze(query)

    def _terms(self, query: str) -> tuple[list[int], list[int]]:
        """The query's known term ids, ascending (the order scores are summed in), and their counts."""
        ids = [self.term_id[t] for t in analyze(query) if t in self.term_id]
        if not ids:
            return [], []
        uniq, counts = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
        return uniq.tolist(), counts.tolist()

    def _buffer(self) -> np.ndarray:
        """This thread's score vector, zeroed (reused: a fresh 1.18M-entry vector costs page faults on every
        search)."""
        s = getattr(self._tls, "buf", None)
        if s is None or s.shape[0] != self.n_docs:
            s = self._tls.buf = np.zeros(self.n_docs, dtype=np.float32)
        else:
            s.fill(0.0)
        return s

    def _add_sparse(self, s: np.ndarray, t: int, c: int) -> None:
        """``s += c * weights of t`` at its documents (each once: ``np.add.at`` is exact and, in numpy 2,
        twice as fast as a fancy-indexed ``+=``, which is the same float32 sum)."""
        a, b = int(self.indptr[t]), int(self.indptr[t + 1])
        w = self.postings_weight[a:b]
        np.add.at(s, self.postings_doc[a:b], w if c == 1 else w * c)

    def _accumulate(self, query: str, k: int) -> tuple[np.ndarray, tuple[int, int] | None]:
        """Scores of every document (float32, in a per-thread buffer that the next call reuses), and the
        shortest posting range with at least ``k`` documents."""
        return self._accumulate_terms(*self._terms(query), k)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query`` (float64, length ``n_docs``; summed in float32,
        as the stored per-posting weights)."""
        return self._accumulate(query, 1)[0].astype(np.float64)

    def _term_max(self) -> np.ndarray:
        """Largest weight of each term (0 for a term without postings): a bound on what it adds to a score."""
        if self._max_weight is None:
            m = np.zeros(len(self.vocab), dtype=np.float64)
            has = np.flatnonzero(np.diff(self.indptr) > 0)
            if has.size:
                m[has] = np.maximum.reduceat(self.postings_weight, self.indptr[:-1][has])
            self._max_weight = m
        return self._max_weight

    def _weights_at(self, t: int, docs: np.ndarray) -> np.ndarray:
        """Term ``t``'s weights at sorted ``docs`` (float32, 0 where absent)."""
        dense = self._dense.get(t)
        if dense is not None:
            return dense[docs]
        a, b = int(self.indptr[t]), int(self.indptr[t + 1])
        if a == b:
            return np.zeros(docs.size, dtype=np.float32)
        post = self.postings_doc[a:b]
        at = np.minimum(np.searchsorted(post, docs), b - a - 1)
        return np.where(post[at] == docs, self.postings_weight[a:b][at], np.float32(0.0))

    def search(self, query: str, k: int = 50, prune: bool = True) -> list[int]:
        """Indices of the top ``k`` documents with a positive score, best first (ties: lower index first).

        The k-th best score of the documents of one query term is a lower bound of the overall
        k-th best, so only documents at or above it are ranked (exact, and far fewer than ``n_docs``).
        Terms on most documents (dense ones, each a full-length vector add) are not added at all when
        their largest weights together stay below that bound: a document can then only reach the top
        ``k`` through the other terms, so the candidates are the documents whose other terms alone come
        within those weights of the bound, and only they are scored exactly (every term, in the same
        order and float32 arithmetic as :meth:`scores`): the same ranking as scoring every document, which
        ``prune=False`` does (the earlier search; benchmarks time both).
        """
        if k <= 0:
            return []
        uniq, counts = self._terms(query)
        dense = [i for i, t in enumerate(uniq) if self._is_dense(t)]
        if dense and prune and self.n_docs >= PRUNE_MIN_DOCS:
            top = self._search_without_dense(uniq, counts, dense, k)
            if top is not None:
                return top
        return self._rank(*self._accumulate_terms(uniq, counts, k), k)

    def _search_without_dense(self, uniq: list[int], counts: list[int], dense: list[int], k: int) -> list[int] | None:
        """:meth:`search` with the dense terms (positions ``dense`` of ``uniq``) left out of the accumulation,
        or ``None`` where their weights could matter outside the few documents it then scores."""
        s, best = self._accumulate_terms(uniq, counts, k, skip=dense)
        if best is None:
            return None
        top = self._term_max()
        bound = sum(float(top[uniq[i]]) * counts[i] for i in dense)
        # a float32 sum of n weights is within n * 2**-24 of the exact sum (relative): bounds taken loosely
        eps = 4 * (sum(counts) + 4) * 2.0**-20
        sub = s[self.postings_doc[best[0] : best[1]]]  # the other terms' sums: lower bounds of these scores
        at_least = float(np.partition(sub, sub.size - k)[sub.size - k]) * (1 - eps) - bound * (1 + eps)
        if at_least <= 0:  # the dense terms could lift a document that no other term has
            return None
        # a document whose other terms sum to at_least has one of the terms whose bounds, left out, sum to more
        sparse = sorted((float(top[uniq[i]]) * counts[i], i) for i in range(len(uniq)) if i not in dense)
        low = 0.0
        while sparse and (low + sparse[0][0]) * (1 + eps) < at_least:
            low += sparse.pop(0)[0]
        spans = [(int(self.indptr[uniq[i]]), int(self.indptr[uniq[i] + 1])) for _, i in sparse]
        if sum(b - a for a, b in spans) * SCAN_FRACTION > self.n_docs:
            cand = np.flatnonzero(s >= at_least)
        else:  # their documents, the ones among them that reach at_least, ascending, once each
            docs = np.concatenate([self.postings_doc[a:b] for a, b in spans])
            cand = np.sort(docs[s[docs] >= at_least])
            cand = cand[np.concatenate(([True], cand[1:] != cand[:-1]))] if cand.size else cand
        if cand.size * DENSE_FRACTION > self.n_docs:  # as many as the dense terms' own documents
            return None
        eps2 = 2 * eps
        if cand.size > k:  # near-exact scores (any order) narrow them to the top k and the near ties
            near = s[cand].astype(np.float64)
            for i in dense:
                near += self._dense_weights(uniq[i])[cand] * counts[i]
            cand = cand[near >= np.partition(near, near.size - k)[near.size - k] * (1 - eps2)]
        exact = np.zeros(cand.size, dtype=np.float32)  # every term, in order, in float32: as scores()
        for t, c in zip(uniq, counts):
            w = self._weights_at(t, cand)
            exact += w if c == 1 else w * c
        keep = exact > 0
        cand, exact = cand[keep], exact[keep]
        return cand[np.lexsort((cand, -exact))][:k].tolist()

    def _accumulate_terms(self, uniq: list[int], counts: list[int], k: int,
                          skip: Sequence[int] = ()) -> tuple[np.ndarray, tuple[int, int] | None]:
        """:meth:`_accumulate` of given terms, leaving out the terms at positions ``skip``."""
        s = self._buffer()
        best: tuple[int, int] | None = None
        left_out = set(skip)
        for i, (t, c) in enumerate(zip(uniq, counts)):
            a, b = int(self.indptr[t]), int(self.indptr[t + 1])
            if i not in left_out:
                dense = self._dense_weights(t)
                if dense is not None:
                    s += dense if c == 1 else dense * c
                else:
                    self._add_sparse(s, t, c)
            if b - a >= k and (best is None or b - a < best[1] - best[0]):
                best = (a, b)
        return s, best

    def _rank(self, s: np.ndarray, best: tuple[int, int] | None, k: int) -> list[int]:
        """Top ``k`` of exact scores ``s`` (``best``: a posting range with >= k documents, for the floor)."""
        if best is not None:
            sub = s[self.postings_doc[best[0] : best[1]]]
            floor = np.partition(sub, sub.size - k)[sub.size - k]
            cand = np.flatnonzero(s >= max(floor, np.finfo(np.float32).tiny))
        else:
            cand = np.flatnonzero(s > 0)
        if cand.size > 4 * k:
            kth = np.partition(s[cand], cand.size - k)[cand.size - k]
            cand = cand[s[cand] >= kth]  # keep every tie of the k-th score
        order = np.lexsort((cand, -s[cand]))
        return cand[order][:k].tolist()

    # -- disk ------------------------------------------------------------------------------------
    def checksum(self) -> str:
        """Tag of the index's arrays and parameters (stored with it, verified on load): keyed BLAKE2b with
        the per-user cache secret (:mod:`~agentgym_credit.envs.cachekey`), so an index edited and
        re-checksummed by another hand (results silently dropped) does not verify."""
        h = hashlib.blake2b(digest_size=32)
        h.update(json.dumps([INDEX_FORMAT_VERSION, self.k1, self.b, self.fingerprint]).encode())
        h.update("\x00".join(self.vocab).encode("utf-8", "surrogatepass"))
        for arr in (self.indptr, self.postings_doc, self.postings_weight, self.doc_len):
            h.update(str(arr.shape).encode())
            h.update(np.ascontiguousarray(arr).tobytes())
        return cache_tag("agc-bm25-index", [h.digest()])

    def save(self, path: str | Path) -> None:
        """Write the index to ``path`` (``.npz`` of plain arrays plus JSON metadata with a checksum),
        atomically: a temporary file in the same folder, then ``os.replace``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = json.dumps(
            {
                "version": INDEX_FORMAT_VERSION,
                "k1": self.k1,
                "b": self.b,
                "fingerprint": self.fingerprint,
                "checksum": self.checksum(),
            }
        )
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(
                    f,
                    vocab=np.asarray(self.vocab, dtype=np.str_),
                    indptr=self.indptr,
                    postings_doc=self.postings_doc,
                    postings_weight=self.postings_weight,
                    doc_len=self.doc_len,
                    meta=np.asarray(meta),
                )
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path: str | Path) -> BM25Index:
        """Read an index written by :meth:`save`, as data (``allow_pickle=False``).

        Raises ``IndexCacheError`` (a ``ValueError``) naming the problem for a file that is not such
        an index: empty, truncated, not a zip, object arrays, missing arrays, arrays of the wrong
        type or number of dimensions, members that inflate past the file's size (``save`` stores them
        uncompressed; checked before anything is inflated), another format version, a checksum that
        does not match, inconsistent array shapes.
        """
        try:
            with zipfile.ZipFile(path) as zf:
                inflated = sum(i.file_size for i in zf.infolist())
            if inflated > os.path.getsize(path):
                raise IndexCacheError(f"{path}: members inflate to {inflated} bytes, more than the file holds "
                                      "(not an index written by save)")
            with np.load(path, allow_pickle=False) as z:
                missing = {"vocab", "indptr", "postings_doc", "postings_weight", "doc_len", "meta"} - set(
                    z.files
                )
                if missing:
                    raise IndexCacheError(f"{path}: not a search index (missing {sorted(missing)})")
                meta = json.loads(str(z["meta"]))
                if not isinstance(meta, dict) or meta.get("version") != INDEX_FORMAT_VERSION:
                    version = meta.get("version") if isinstance(meta, dict) else None
                    raise IndexCacheError(f"{path}: index format {version}, expected {INDEX_FORMAT_VERSION}")
                arrays = {k: z[k] for k in ("vocab", "indptr", "postings_doc", "postings_weight", "doc_len")}
                kinds = {"vocab": "U", "indptr": "iu", "postings_doc": "iu", "postings_weight": "f", "doc_len": "iu"}
                wrong = [k for k, a in arrays.items() if a.ndim != 1 or a.dtype.kind not in kinds[k]]
                if wrong:
                    raise IndexCacheError(f"{path}: arrays of the wrong type or shape: {wrong}")
                idx = cls(
                    arrays["vocab"].tolist(),
                    arrays["indptr"],
                    arrays["postings_doc"],
                    arrays["postings_weight"],
                    arrays["doc_len"],
                    k1=float(meta["k1"]),
                    b=float(meta["b"]),
                    fingerprint=str(meta["fingerprint"]),
                )
        except IndexCacheError:
            raise
        except (OSError, EOFError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as exc:
            raise IndexCacheError(f"{path}: unreadable search index ({type(exc).__name__}: {exc})") from exc
        if not hmac.compare_digest(str(meta.get("checksum")).encode(), idx.checksum().encode()):
            raise IndexCacheError(f"{path}: checksum does not match the contents (a damaged or edited file, or one "
                                  "not written with this user's cache key)")
        n_terms, n_post = len(idx.vocab), idx.postings_doc.shape[0]
        if (
            idx.indptr.shape != (n_terms + 1,)
            or idx.postings_weight.shape != (n_post,)
            or int(idx.indptr[0]) != 0
            or int(idx.indptr[-1]) != n_post
            or np.any(np.diff(idx.indptr) < 0)
            or (n_post and (int(idx.postings_doc.min()) < 0 or int(idx.postings_doc.max()) >= idx.n_docs))
        ):
            raise IndexCacheError(f"{path}: inconsistent index arrays")
        return idx


class IndexCacheError(ValueError):
    """An on-disk search index that cannot be used (see :meth:`BM25Index.load`)."""


def cache_dir(override: str | Path | None = None) -> Path:
    """Cache folder: ``override``, else ``$AGENTGYM_CREDIT_WEBSHOP_CACHE``, else ``~/.cache/agentgym_credit/webshop``."""
    if override is not None:
        return Path(override)
    env = os.environ.get(CACHE_ENV_VAR)
    if env:
        return Path(env)
    return Path.home() / ".cache" / "agentgym_credit" / "webshop"


_SHARED: dict[tuple[str, float, float], BM25Index] = {}
_LOCK = threading.Lock()


def shared_index(
    catalog: Any,
    *,
    cache: str | Path | None | bool = None,
    k1: float = K1_DEFAULT,
    b: float = B_DEFAULT,
    progress: bool = False,
) -> BM25Index:
    """The process-wide index of a catalog: from memory, else from the disk cache, else built and cached.

    ``cache=False`` skips the disk; ``None`` uses :func:`cache_dir`; a path uses that folder.
    """
    fp = catalog.fingerprint()
    key = (fp, float(k1), float(b))
    with _LOCK:
        idx = _SHARED.get(key)
        if idx is not None:
            return idx
        path = (
            None
            if cache is False
            else cache_dir(None if cache in (None, True) else cache) / f"bm25-{fp}-k{k1}-b{b}.npz"
        )
        if path is not None and path.is_file():
            try:
                idx = BM25Index.load(path)
                if idx.fingerprint != fp or idx.n_docs != len(catalog.products):
                    raise IndexCacheError(f"{path}: index of another catalog")
            except IndexCacheError as exc:
                warnings.warn(
                    f"webshop: ignoring the search index cache ({exc}); rebuilding it", stacklevel=2
                )
                idx = None
        if idx is None:
            idx = BM25Index.build(
                (product_document(p) for p in catalog.products), k1=k1, b=b, fingerprint=fp, progress=progress
            )
            if path is not None:
                try:
                    idx.save(path)
                except OSError:
                    pass  # a read-only cache folder only costs a rebuild next time
        _SHARED[key] = idx
        return idx


def clear_shared() -> None:
    """Forget the in-process indexes (tests and benchmarks use this to time a cold start)."""
    with _LOCK:
        _SHARED.clear()


__all__ = [
    "B_DEFAULT",
    "BM25Index",
    "CACHE_ENV_VAR",
    "IndexCacheError",
    "K1_DEFAULT",
    "LUCENE_STOP_WORDS",
    "PRUNE_MIN_DOCS",
    "analyze",
    "cache_dir",
    "clear_shared",
    "product_document",
    "shared_index",
]
