"""Snapshots of ``credit/WebShop-v0``: :class:`WebShopSnapshots`, the part of :class:`~.env.WebShopEnv` that
writes and restores them, and the payload layout it shares with the env.

A snapshot is a keyed-MAC'd binary line (:mod:`agentgym_credit.envs.snapshot`): a fixed head (:data:`_HEAD`: goal,
page, page number, product, step, valid flag, sub-page), then the query, the product's options and the visited
products, coded against this env's catalogue. A snapshot from another catalogue, split or setting is refused; one
from another process is checked field by field and its query searched again: results, score, ``won`` and the state
key are recomputed, never read from it. Snapshots this process sealed are remembered by their exact bytes
(:data:`_OWN`) and restored without parsing.
"""

from __future__ import annotations

import json
import operator
import struct
from typing import Any

from agentgym_credit.envs import snapshot as _snapshot
from agentgym_credit.envs.webshop import pages as P
from agentgym_credit.errors import SnapshotError
from agentgym_credit.keys import normalize_text

_RENDER_CACHE_SIZE = 512
"""Renderings (and searches) of pages restored from other processes' snapshots kept per env."""
_RENDERED_INFO = ("state_key", "obs_key", "admissible_actions", "task_id", "won", "score", "page")
_INFO_VALUES = operator.itemgetter(*_RENDERED_INFO)
_PAGES = ("search", "results", "item", "sub")
_PAGE_INDEX = {k: i for i, k in enumerate(_PAGES)}
_SUB_INDEX = {"": 0, **{name: i + 1 for i, name in enumerate(P.SUB_PAGES)}}
MAX_QUERY_CHARS = 1_000
"""Longest query a snapshot may hold: the env's own ``MAX_QUERY_CHARS`` for a step's search (the env imports this
module, so the value is repeated here; ``tests/test_hostile_inputs.py`` checks they agree)."""

_MAX_PART = 1 << 16
"""Longest visited-pages or options part of a payload (characters; a 15-step episode's are well under 1 kB)."""

_STATE_KEYS = ("goal_index", "_page_kind", "_query", "_results", "_page_no", "_asin", "_options", "_sub",
               "_visited", "_t")
_STATE = operator.itemgetter(*_STATE_KEYS)
"""The attributes that make a WebShop state (read and restored in one call each)."""
_HEAD = struct.Struct("<IBIIIBB")
"""A WebShop payload's fixed part: goal, page, page number, product index + 1 (0: none), step, valid, sub-page."""
_MAGIC = _snapshot.magic()
_OWN: list[dict[bytes, tuple]] = [{}, {}]
"""Snapshots the envs of this process sealed, by their exact bytes (newer and older generation): their binding,
state, rendering and info as they were (checked when they were made: restored without parsing or MAC)."""
_OWN_SIZE = _snapshot.MEMO_SIZE // 2
_EPOCH = [0]
"""Bumped on a new snapshot key: MAC states (and memo entries) made under the old one are not used again."""


class _Setting:
    """A setting snapshots are bound to (:meth:`WebShopEnv._snapshot_config`): kept in the instance and read
    as a plain attribute; a new value also forgets the env's snapshot head (the next snapshot is bound to the
    new configuration, and a remembered one is checked against it)."""

    __slots__ = ("name",)

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __set__(self, env: Any, value: Any) -> None:
        d = env.__dict__
        d[self.name] = value
        d["_snap_head"] = None


def _forget_own(key_changed: bool) -> None:
    _OWN[0], _OWN[1] = {}, {}  # clear_memo: a restore checks everything, as if the snapshot came from elsewhere
    if key_changed:
        _EPOCH[0] += 1


_snapshot.on_clear_memo(_forget_own)


def _nat(text: str, what: str) -> int:
    """A natural number written in at most 12 plain digits (``int()`` also takes ``+1``, `` 1``, ``1_0``)."""
    if not (0 < len(text) <= 12 and text.isascii() and text.isdigit()):
        raise SnapshotError(f"WebShopEnv snapshot payload: bad {what} {text[:20]!r}")
    return int(text)


class WebShopSnapshots:
    """``get_state`` / ``set_state`` of :class:`~.env.WebShopEnv` (a mixin: it reads the env's pages, catalogue and
    search through the env's own attributes and methods)."""

    def get_state(self) -> bytes:
        """:meth:`CreditEnv.get_state` in one pass: the same bytes (binding, RNG, :meth:`_snapshot_payload`
        under the keyed MAC); the body's start and its MAC state are computed once per RNG state, configuration
        and key (:meth:`_new_snap_head`), and the snapshot is remembered by its bytes for :meth:`set_state`."""
        d = self.__dict__
        hc = d["_snap_head"]
        if hc is None or hc[6] is not d["_rng_cache"] or hc[2] != _EPOCH[0] or d["_needs_reset"]:
            if d["_needs_reset"] or not d["_fast_get"]:
                return super().get_state()
            hc = self._new_snap_head()
        raw, entry = self._payload_entry(hc)
        mac = hc[4].copy()
        mac.update(raw)
        snap = b"".join((_MAGIC, mac.digest(), hc[3], raw))
        table = _OWN[0]
        table[snap] = entry
        if len(table) >= _OWN_SIZE:  # two generations, as the snapshot module's memo
            _OWN[1], _OWN[0] = table, {}
        return snap

    def _new_snap_head(self) -> tuple:
        """``(binding, RNG bytes, key epoch, body start, MAC state after it, RNG state, RNG cache, class)``: valid
        while the env's RNG cache is that very tuple (the RNG unused since), no setting changed (a setting
        forgets it) and the key is the same."""
        rng = self._rng_bytes()
        config, cached = self._snapshot_config(), self._binding_memo
        prefix = cached[1] if cached is not None and cached[0] is config else self._binding(config)
        old = self._snap_head
        if old is not None and old[1] == rng and old[0] == prefix and old[2] == _EPOCH[0]:
            head, mac, state = old[3], old[4], old[5]
        else:
            head = prefix + rng + b"\nb"
            mac = _snapshot.keyed_mac()
            mac.update(head)
            state = _snapshot.rng_state(rng)
        cache = self._rng_cache = (None, rng)  # what set_state leaves too: the RNG is this state until used
        self._snap_head = (prefix, rng, _EPOCH[0], head, mac, state, cache, type(self))
        return self._snap_head

    def set_state(self, snapshot: bytes) -> tuple[str, dict[str, Any]]:
        """:meth:`CreditEnv.set_state`; a snapshot an env of this process sealed (these exact bytes, under this
        key, with this class and configuration: the same binding) is restored from its memo, anything else goes
        the whole way (MAC, binding, every field checked, the query searched and the page rendered again)."""
        d = self.__dict__
        hit = (_OWN[0].get(snapshot) or _OWN[1].get(snapshot)) if snapshot.__class__ is bytes else None
        if hit is not None:
            hc = hit[0]
            if hc is d["_snap_head"] or self._same_binding(hc):
                if d["_fast_set"]:
                    obs, info = self._restore_memo(hit)
                else:
                    self._needs_reset = True
                    obs, info = self._restore_snapshot(hit)
                    info = self._complete_info(obs, info)
                if hc[5] is not None:  # applied when the RNG is next used, as CreditEnv.set_state
                    self._rng_pending, self._rng_cache = hc[5], hc[6]
                self._snap_head, self._needs_reset = hc, False
                self._last_obs, self._last_info = obs, info
                return obs, info
        return super().set_state(snapshot)

    def _same_binding(self, head: tuple) -> bool:
        """Whether a snapshot head (another env's, or an older one of this env) binds to this env now."""
        if head[7] is not type(self) or head[2] != _EPOCH[0]:
            return False
        config, cached = self._snapshot_config(), self._binding_memo
        return head[0] == (cached[1] if cached is not None and cached[0] is config else self._binding(config))

    def _snapshot_config(self) -> str:
        """The configuration as one JSON string, rebuilt only when a setting changed (the base compares
        it on every get_state/set_state; a string costs a fraction of a nested dict)."""
        key = (self.catalog, self.split, self.observation_mode, self.max_steps, self.show_attrs, self.reward_rules,
               self.color_rules)
        if key != self._config_key:
            c = self.catalog
            values = (c.source, c.fingerprint(), len(c.goals), *key[1:])
            fields = ("catalog", "catalog_fingerprint", "n_goals", "split", "observation_mode", "max_steps")
            fields += ("show_attrs", "reward_rules", "color_rules")
            self._config_key, self._config_text = key, json.dumps(dict(zip(fields, values)), sort_keys=True)
        return self._config_text

    def _product_ids(self) -> dict[str, int]:
        if self._asin_ids is None:
            self._asin_ids = {p["asin"]: i for i, p in enumerate(self.catalog.products)}
        return self._asin_ids

    def _option_codes(self, asin: str) -> dict[tuple[str, str], str]:
        """``(option name, value) -> "i.j"`` of one product (name and value by position)."""
        codes = self._opt_codes.get(asin)
        if codes is None:
            opts = self.catalog.by_asin[asin]["options"]
            codes = self._opt_codes[asin] = {
                (name, v): f"{i}.{j}" for i, (name, values) in enumerate(opts.items()) for j, v in enumerate(values)
            }
        return codes

    def _snapshot_payload(self) -> tuple[bytes, tuple]:
        """``struct`` header (goal, page, page number, product index + 1, step, valid flag, sub-page) and
        ``\\x1f``-separated: visited product indices, the selected options (``name\\x1dvalue`` pairs joined by
        ``\\x1e``, or ``#`` and ``name.value`` positions where the catalog's text holds those characters), the
        query, and after an invalid step with a reason, the reason. The search results are not in it: a
        restore from elsewhere searches the query again. The memo is the state itself (options and visited
        sets are replaced, never changed in place, so it can share them) with its rendering and info
        (:meth:`_payload_entry`; :meth:`get_state` seals the same bytes without this hook)."""
        return self._payload_entry(None)

    def _payload_entry(self, head: Any) -> tuple[bytes, tuple]:
        """The payload and ``(head, state, valid flag, invalid reason, page, observation, info values)``."""
        d = self.__dict__
        info = d["_last_info"]
        valid = info["action_valid"]
        reason = info.get("invalid_reason")
        c = d["_snap_codes"]  # [visited, code, options, code, query, bytes, the three joined, options' product,
        state = _STATE(d)     # product, its index + 1]
        if c[0] is not state[8] or c[2] is not state[6] or c[4] is not state[2]:
            self._recode(state[8], state[6], state[2])
        asin = state[5]
        if asin != c[8]:
            c[8], c[9] = asin, (d["_asin_ids"] or self._product_ids())[asin] + 1 if asin else 0
        raw = _HEAD.pack(state[0], _PAGE_INDEX[state[1]], state[4], c[9], state[9], valid, _SUB_INDEX[state[7]]) + c[6]
        if reason is not None:
            raw += b"\x1f" + reason.encode()
        return raw, (head, state, valid, reason, d["_page"], d["_last_obs"], _INFO_VALUES(info))

    def _recode(self, vis: set[str], opts: dict[str, str], query: str) -> None:
        """The payload's visited, options and query parts of a state where one of them is another object than
        at the last snapshot (encoded again only where it also has another value: visited and options are
        replaced, never changed in place, and often by an equal one)."""
        c, changed = self._snap_codes, False
        if c[0] is not vis:
            if c[0] != vis:
                ids, changed = self._product_ids(), True
                if len(vis) == 1:
                    (only,) = vis
                    c[1] = b"%d" % ids[only]
                else:
                    c[1] = b",".join([b"%d" % i for i in sorted(map(ids.__getitem__, vis))])
            c[0] = vis
        if c[2] is not opts:
            if c[2] != opts or opts and c[7] != self._asin:
                c[3], c[7], changed = self._options_code(opts), self._asin, True
            c[2] = opts
        if c[4] is not query:
            if c[4] != query:
                c[5], changed = query.encode(), True
            c[4] = query
        if changed:
            c[6] = b"\x1f".join((c[1], c[3], c[5]))

    def _options_code(self, opts: dict[str, str]) -> bytes:
        if not opts:
            return b""
        pieces = self._opt_pieces.get(self._asin)
        if pieces is None:
            pieces = self._opt_pieces[self._asin] = {
                nv: f"{nv[0]}\x1d{nv[1]}".encode() for nv in self._option_codes(self._asin)}
            if any(p.count(b"\x1d") != 1 or b"\x1e" in p or b"\x1f" in p for p in pieces.values()):
                pieces.clear()  # a name or value holds a separator: options by position instead
        if pieces:
            return b"\x1e".join(map(pieces.__getitem__, opts.items()))
        return ("#" + ",".join(map(self._option_codes(self._asin).__getitem__, opts.items()))).encode()

    def _restore_snapshot(self, payload: Any) -> tuple[str, dict[str, Any]]:
        if payload.__class__ is tuple:  # a snapshot this process took: its state, rendering and info as they were
            return self._restore_memo(payload)
        obs, info, valid, reason = self._restore_bytes(payload)
        info["action_valid"] = valid
        if reason is not None:
            info["invalid_reason"] = reason
        return obs, info

    def _restore_memo(self, memo: tuple) -> tuple[str, dict[str, Any]]:
        """The state of a snapshot this process took, with its rendering and info as they were then (``memo``:
        a :meth:`_payload_entry`)."""
        _, state, valid, reason, page, obs, values = memo
        if state[0] != self.goal_index:
            self.goal = self.catalog.goals[state[0]]
        (self.goal_index, self._page_kind, self._query, self._results, self._page_no, self._asin, self._options,
         self._sub, self._visited, self._t) = state
        self._score, self._page = 0.0, page
        state_key, obs_key, admissible, task_id, won, score, kind = values
        info = {"state_key": state_key, "obs_key": obs_key, "admissible_actions": list(admissible),
                "task_id": task_id, "won": won, "action_valid": valid, "score": score, "page": kind}
        if reason is not None:
            info["invalid_reason"] = reason
        return obs, info

    def _restore_bytes(self, raw: bytes) -> tuple[str, dict[str, Any], bool, str | None]:
        """Parse and check a snapshot from elsewhere; the state, rendering and info are rebuilt from the
        catalog and the search index (nothing derived is read from the snapshot)."""
        if len(raw) < _HEAD.size:
            raise SnapshotError("WebShopEnv snapshot payload is too short")
        goal_index, page, page_no, asin_i, t, valid, sub = _HEAD.unpack_from(raw)
        if len(raw) > _HEAD.size + 4 * (3 * _MAX_PART):  # utf-8: at most 4 bytes a character; nothing decoded yet
            raise SnapshotError(f"WebShopEnv snapshot payload is {len(raw)} bytes, more than its fields can hold")
        parts = raw[_HEAD.size:].decode().split("\x1f")
        if len(parts) not in (3, 4) or valid > 1 or page >= len(_PAGES) or sub > len(P.SUB_PAGES):
            raise SnapshotError("WebShopEnv snapshot payload has malformed fields")
        vis, opts, query = parts[:3]
        reason = parts[3] if len(parts) == 4 else None
        if len(query) > MAX_QUERY_CHARS or len(vis) > _MAX_PART or len(opts) > _MAX_PART:  # before any search (D5)
            raise SnapshotError(f"WebShopEnv snapshot payload: query over MAX_QUERY_CHARS={MAX_QUERY_CHARS} characters "
                                f"or visited/options over {_MAX_PART} (refused before searching)")
        kind = _PAGES[page]
        if goal_index not in self.task_indices:
            raise SnapshotError(f"WebShopEnv snapshot payload: goal {goal_index} is not in this env's split")
        deep = {"search": 0, "results": 0, "item": 1, "sub": 2}[kind]
        if kind == "search" and page_no != 0 or kind != "search" and not 1 <= page_no <= t - deep:
            raise SnapshotError(f"WebShopEnv snapshot payload: page number {page_no} impossible on a {kind} page "
                                f"at step {t}")
        if t >= self.max_steps:
            raise SnapshotError(f"WebShopEnv snapshot payload: step {t} is past max_steps={self.max_steps}")
        if reason is not None and (valid or len(reason) > 500 or not reason.isprintable()):
            raise SnapshotError("WebShopEnv snapshot payload: bad invalid-action reason")
        if kind == "search" and query or kind != "search" and query != self.normalize_query(query):
            raise SnapshotError(f"WebShopEnv snapshot payload: query {query[:80]!r} is not a normalized query")
        results = self._search_memo(query) if kind != "search" else ()
        products = self.catalog.products
        lo = (page_no - 1) * P.RESULTS_PER_PAGE
        a = products[asin_i - 1]["asin"] if 0 < asin_i <= len(products) else ""
        if kind in ("item", "sub") and a not in results[lo: lo + P.RESULTS_PER_PAGE] or (
                kind in ("search", "results") and asin_i != 0):
            raise SnapshotError(f"WebShopEnv snapshot payload: product {asin_i - 1} cannot be on this {kind} page")
        options = self._parse_options(a, opts)
        subs = P.SUB_PAGES if self.show_attrs else P.SUB_PAGES[:3]
        if (kind == "sub") != (sub > 0) or (sub and P.SUB_PAGES[sub - 1] not in subs):
            raise SnapshotError(f"WebShopEnv snapshot payload: sub-page {sub} on a {kind} page")
        ids = [_nat(i, "visited product") for i in vis.split(",")] if vis else []
        if any(i >= len(products) for i in ids) or ids != sorted(set(ids)):
            raise SnapshotError("WebShopEnv snapshot payload: bad visited products")
        visited = {products[i]["asin"] for i in ids}
        if not visited <= set(results) or (a and a not in visited):
            raise SnapshotError("WebShopEnv snapshot payload: visited products not among its results")
        self.goal_index, self.goal = goal_index, self.catalog.goals[goal_index]
        self._page_kind, self._query, self._results, self._page_no = kind, query, results, page_no
        self._asin, self._options, self._visited = a, options, visited
        self._sub = P.SUB_PAGES[sub - 1] if sub else ""
        self._t, self._score = t, 0.0
        hit = self._render_cache.get(self._render_key())
        if hit is None:
            obs, info = self._observe(reward_info=None, valid=bool(valid))
            info.pop("action_valid")
            info["obs_key"] = normalize_text(obs)
            self._render_cache[self._render_key()] = (self._page, obs, _INFO_VALUES(info))
            if len(self._render_cache) > _RENDER_CACHE_SIZE:
                self._render_cache.pop(next(iter(self._render_cache)))
        else:
            self._page, obs, values = hit
            info = dict(zip(_RENDERED_INFO, values))
            info["admissible_actions"] = list(info["admissible_actions"])
        return obs, info, bool(valid), reason

    def _parse_options(self, asin: str, code: str) -> dict[str, str]:
        if not code:
            return {}
        if not asin:
            raise SnapshotError("WebShopEnv snapshot payload: options without a product")
        known = self._option_codes(asin)
        if code.startswith("#"):
            by_code = {c: nv for nv, c in known.items()}
            pairs = [by_code.get(c) for c in code[1:].split(",")]
        else:
            pairs = [tuple(p.split("\x1d")) if p.count("\x1d") == 1 else None for p in code.split("\x1e")]
            pairs = [p if p in known else None for p in pairs]
        if None in pairs or len({n for n, _ in pairs}) != len(pairs):
            raise SnapshotError(f"WebShopEnv snapshot payload: options {code[:80]!r} are not the product's")
        return dict(pairs)


__all__ = ["WebShopSnapshots"]
