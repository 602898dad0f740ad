"""Grouping rows by (integer id, uint64 key) pairs and normalizing values inside the groups.

What lives here:

- :func:`mix64`: a 64-bit mix of an (int64, uint64) pair, used as a hash;
- :class:`PairGroups` and :func:`pair_groups`: the non-singleton groups of rows that share a pair;
- :func:`group_mean_std`: per-group mean, standard deviation and an exact "all values equal" flag;
- :func:`normalized_deviation`: ``(x - mean_G) / F_norm`` per row, 0 outside groups of size >= 2.

How pairs are grouped (no Python loop per step or per group). A key is only comparable inside one
group (``group_id``): equal ``state_key`` in two different groups are two different anchor groups.
Each pair ``(a, key)`` is mixed to one uint64 ``h`` (splitmix64 finalizer). Rows whose ``h`` falls
in a hash bucket (a window of bits of ``h``, about 2 buckets per row, counted with ``np.bincount``)
holding only them are singletons for sure (equal pairs have equal ``h``) and are dropped; the count
repeats on the survivors with other bit windows while it still removes rows. The remaining
candidates go through an open hash table built in vectorized rounds (:func:`_representatives`):
each row finds a representative row with the same pair, compared pair-by-pair, so the result is
exact for any input even if two pairs share ``h``. Group sizes come from ``np.bincount`` of the
representatives. No sort at all: the cost is linear in the number of rows.

Rows whose group has a single member, and rows excluded by ``mask`` (e.g. a history level that is
:data:`~agentgym_credit.keys.MISSING` at that step), get code ``-1``: every estimator gives them 0
at that level, so they never need a group of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
NORMS = ("mean_std", "mean")
STDS = ("sample", "population")


def mix64(a: np.ndarray, key: np.ndarray) -> np.ndarray:
    """splitmix64-style mix of ``key + a * golden`` (wrapping uint64 arithmetic)."""
    z = np.asarray(key, dtype=np.uint64) + np.asarray(a).astype(np.uint64) * _GOLDEN
    z ^= z >> np.uint64(30)
    z *= _M1
    z ^= z >> np.uint64(27)
    z *= _M2
    z ^= z >> np.uint64(31)
    return z


@dataclass(frozen=True)
class PairGroups:
    """Groups of size >= 2 among ``n`` rows.

    ``code[i]``: group index of row i (0..G-1), or -1 (singleton or excluded). ``members``: row
    indices of all grouped rows (ascending), ``member_code``: ``code[members]``; ``head[g]``: one
    row of group g (its representative); ``size[g]``: its number of rows. ``n_included``: rows not
    masked out (singletons included).
    """

    code: np.ndarray
    members: np.ndarray
    member_code: np.ndarray
    head: np.ndarray
    size: np.ndarray
    n_included: int

    @property
    def num_groups(self) -> int:
        """Number of groups of size >= 2."""
        return int(len(self.size))


def _shared_bucket_rows(h: np.ndarray, max_rounds: int = 6) -> np.ndarray:
    """Rows whose hash may be shared: repeated bucket counts over different bit windows of ``h``.

    A row alone in its bucket (about 2 buckets per remaining row) cannot share its pair with any
    other row and is dropped; rounds repeat on the survivors with another window of bits while
    they still remove more than a tenth of the rows. Rows of a real group always survive.
    """
    n = len(h)
    cand = None  # None: every row (no index array built until a round drops rows)
    hc = h
    for r in range(max_rounds):
        m = len(hc)
        if m < 2:
            break
        bits = int(m - 1).bit_length() + 1
        shift = np.uint64((r * 23) % (64 - bits + 1))
        bucket = hc >> shift if shift else hc.copy()
        bucket &= np.uint64((1 << bits) - 1)
        bucket = bucket.view(np.int64)  # < 2**bits: the same values as int64, no conversion pass
        sel = np.flatnonzero((np.bincount(bucket, minlength=1 << bits) >= 2)[bucket])  # bool table: cache-friendly
        cand = sel if cand is None else cand[sel]
        hc = hc[sel]
        if len(sel) > 0.9 * m:
            break
    return np.arange(n) if cand is None else cand


def pair_groups(a: np.ndarray, key: np.ndarray, mask: np.ndarray | None = None) -> PairGroups:
    """Group rows by equal ``(a[i], key[i])`` (rows where ``mask`` is False are left out)."""
    a = np.asarray(a, dtype=np.int64)
    key = np.asarray(key, dtype=np.uint64)
    n = len(a)
    if mask is not None and np.all(mask):
        mask = None
    idx = None if mask is None else np.flatnonzero(mask)
    n_included = n if idx is None else int(len(idx))
    code = np.full(n, -1, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    if n_included < 2:
        return PairGroups(code, empty, empty, empty, empty, n_included)
    ai, ki = (a, key) if idx is None else (a[idx], key[idx])
    h = mix64(ai, ki)
    cand = _shared_bucket_rows(h)
    m = len(cand)
    if m < 2:
        return PairGroups(code, empty, empty, empty, empty, n_included)
    rep = _representatives(h[cand], ai[cand], ki[cand])
    counts = np.bincount(rep, minlength=m)
    grouped = np.flatnonzero(counts[rep] >= 2)
    is_head = counts >= 2
    new_id = np.cumsum(is_head) - 1
    members = cand[grouped]
    head = cand[np.flatnonzero(is_head)]
    if idx is not None:
        members, head = idx[members], idx[head]
    member_code = new_id[rep[grouped]]
    code[members] = member_code
    return PairGroups(code, members, member_code, head, counts[is_head], n_included)


def _representatives(h: np.ndarray, a: np.ndarray, key: np.ndarray) -> np.ndarray:
    """For each row, the index of one row with the same (a, key): an open hash table in rounds.

    Each round every unresolved row writes its index into slot ``window(h)`` of a table of about
    2 slots per row and reads the slot back: rows whose pair equals the pair of the row that landed
    there are resolved to it. All rows of a pair share the slot, so the landing row's pair resolves
    completely; the others retry with another bit window of ``h``. Exact whatever ``h`` is (only
    the number of rounds depends on its quality).
    """
    m = len(h)
    tb = int(m - 1).bit_length() + 1
    table = np.empty(1 << tb, dtype=np.intp)
    rep = np.empty(m, dtype=np.intp)
    todo = np.arange(m)
    hc, ac, kc = h, a, key
    r = 0
    while len(todo):
        shift = np.uint64(64 - tb - (r * 11) % (64 - tb + 1))
        slot = (hc >> shift).view(np.int64) & ((1 << tb) - 1)
        table[slot] = todo
        w = table[slot]
        same = (a[w] == ac) & (key[w] == kc)
        rep[todo[same]] = w[same]
        left = np.flatnonzero(~same)
        todo, hc, ac, kc = todo[left], hc[left], ac[left], kc[left]
        r += 1
    return rep

def group_mean_std(x: np.ndarray, groups: PairGroups, ddof: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-group mean, standard deviation (two-pass, ``ddof`` 0 or 1) and an all-equal flag.

    The all-equal flag compares every member with the group's head row, so a group of identical
    values is recognized exactly even where the floating-point mean differs from them in the last bit.
    """
    g = groups.num_groups
    if g == 0:
        z = np.zeros(0)
        return z, z, np.zeros(0, dtype=bool)
    c, g_size = groups.member_code, groups.size
    xm = x[groups.members]
    mean = np.bincount(c, weights=xm, minlength=g) / g_size
    dev = xm - mean[c]
    var = np.bincount(c, weights=dev * dev, minlength=g) / (g_size - ddof)
    const = np.bincount(c, weights=xm != x[groups.head][c], minlength=g) == 0
    return mean, np.sqrt(var), const


def normalized_deviation(x: np.ndarray, groups: PairGroups, norm: str = "mean_std", std: str = "sample",
                         eps: float = 1e-6) -> np.ndarray:
    """``(x_i - mean_G) / F_norm`` for rows in groups of size >= 2, else 0.

    ``norm="mean_std"``: F_norm = std_G + eps (``std`` "sample": ddof=1, "population": ddof=0);
    ``norm="mean"``: F_norm = 1. Groups whose values are all equal give exactly 0.
    """
    out = np.zeros(len(x), dtype=np.float64)
    if groups.num_groups == 0:
        return out
    mean, sd, const = group_mean_std(x, groups, ddof=1 if std == "sample" else 0)
    m, c = groups.members, groups.member_code
    dev = x[m] - mean[c]
    if norm == "mean_std":
        dev /= (sd + eps)[c]
    dev[const[c]] = 0.0
    out[m] = dev
    return out


__all__ = ["NORMS", "STDS", "mix64", "PairGroups", "pair_groups", "group_mean_std", "normalized_deviation"]
