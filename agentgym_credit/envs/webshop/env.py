"""``credit/WebShop-v0``: the WebShop text shopping environment with its reward function.

What lives here: :class:`WebShopEnv`, :func:`parse_action`, :func:`shared_catalog`.

Pages: search → results (top 50, 10 a page) → item (options, sub-pages) → done; see :mod:`.pages`.
Actions: ``search[<query>]`` (only where the page has the search box) and ``click[<text>]`` with
the text of a clickable of the page — a button, a product asin or an option value —
case-insensitive. Anything else is a no-op: the page stays, the step counts, reward 0 and
``info["action_valid"] = False``. ``Buy Now`` ends the episode with WebShop's reward
(:mod:`.reward`); after ``max_steps`` steps without a purchase the episode is truncated.
"""

from __future__ import annotations

import json
import math
import operator
import re
import struct
import threading
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.envs.base import CreditEnv, resolve_task
from agentgym_credit.envs.webshop import pages as P
from agentgym_credit.envs.webshop.catalog import PROGRESS_FROM, generate_catalog
from agentgym_credit.envs.webshop.data import SPLITS, WebShopCatalog
from agentgym_credit.envs.webshop.reward import REWARD_RULES, _require_fuzz, get_reward
from agentgym_credit.envs.webshop.search import BM25Index, shared_index
from agentgym_credit.errors import SnapshotError
from agentgym_credit.keys import normalize_text

SEARCH_RETURN_N = 50
SEARCH_MARKER = "search[<query>]"
"""Admissible-action marker of the search box: replace ``<query>`` by the query."""

OBSERVATION_MODES = ("text", "text_rich")
_RENDER_CACHE_SIZE = 512
"""Renderings (and searches) of pages restored from other processes' snapshots kept per env."""
_RENDERED_INFO = ("state_key", "obs_key", "admissible_actions", "task_id", "won", "score", "page")
_INFO_VALUES = operator.itemgetter(*_RENDERED_INFO)
_PAGES = ("search", "results", "item", "sub")
_PAGE_INDEX = {k: i for i, k in enumerate(_PAGES)}
_SUB_INDEX = {"": 0, **{name: i + 1 for i, name in enumerate(P.SUB_PAGES)}}
_STATE_KEYS = ("goal_index", "_page_kind", "_query", "_results", "_page_no", "_asin", "_options", "_sub",
               "_visited", "_t")
_STATE = operator.itemgetter(*_STATE_KEYS)
"""The attributes that make a WebShop state (read and restored in one call each)."""
_HEAD = struct.Struct("<IBIIIBB")
"""A WebShop payload's fixed part: goal, page, page number, product index + 1 (0: none), step, valid, sub-page."""


def _nat(text: str, what: str) -> int:
    """A natural number written in at most 12 plain digits (``int()`` also takes ``+1``, `` 1``, ``1_0``)."""
    if not (0 < len(text) <= 12 and text.isascii() and text.isdigit()):
        raise SnapshotError(f"WebShopEnv snapshot payload: bad {what} {text[:20]!r}")
    return int(text)
_ACTION = re.compile(r"^\s*(search|click)\s*\[(.*)\]", re.IGNORECASE | re.DOTALL)
r"""Name, ``[``, argument up to the LAST ``]``; text after it is ignored, as the original's
``(.+)\[(.+)\]`` match (``click[buy now] because it fits`` clicks Buy Now)."""

_CATALOGS: dict[tuple[int, int], WebShopCatalog] = {}
_CAT_LOCK = threading.Lock()


def shared_catalog(num_products: int = 1000, seed: int = 0) -> WebShopCatalog:
    """The generated catalog ``(num_products, seed)``, generated once per process."""
    key = (int(num_products), int(seed))
    with _CAT_LOCK:
        cat = _CATALOGS.get(key)
        if cat is None:
            cat = _CATALOGS[key] = generate_catalog(*key)
        return cat


def parse_action(action: str) -> tuple[str | None, str | None]:
    """``"click[Buy Now]"`` → ``("click", "buy now")`` (text after the closing ``]`` is ignored);
    unparseable text → ``(None, None)``."""
    m = _ACTION.match(action)
    if m is None:
        return None, None
    return m.group(1).lower(), m.group(2).strip().lower()


class WebShopEnv(CreditEnv):
    """WebShop as a ``credit/*`` env.

    Args:
        num_products: size of the generated catalog (ignored when ``catalog`` is given).
        catalog_seed: seed of the generated catalog.
        catalog: a :class:`~.data.WebShopCatalog` (e.g. from :func:`~.data.load_original`).
        split: goals to draw from: ``"train"`` (goals 500+), ``"test"`` (goals 0-499) or ``"all"``.
        observation_mode: ``"text"`` or ``"text_rich"``.
        max_steps: steps before truncation (15 as the GiGPO runs).
        show_attrs: show the ``Attributes`` sub-page button (off by default, as the original).
        cache_dir: folder of the on-disk search index (``False``: no disk cache).
        reward_rules: ``"v2"`` (default: the original repository's ``v2`` branch, exact sizes) or
            ``"master"`` (its ``master`` branch, behind the published numbers); see :mod:`.reward`.

    ``reset(options={"task": i})`` starts goal ``i`` of the split; without a task a goal is drawn
    uniformly with the episode RNG. ``info`` has the contract keys and ``score`` (the raw WebShop
    score of the purchase, 0 before), ``page``, and on purchase ``reward_info``.
    ``won`` is ``score == 1.0``.

    ``state_key`` = ``(page type, query terms, results page, product, selected options, sub-page)``
    — the query as the sorted multiset of its indexed terms, since that alone decides the results;
    fields a page does not use are blank. The set of visited products (marked in ``text_rich``)
    changes no action and is not in the key.

    >>> import gymnasium as gym, agentgym_credit
    >>> env = gym.make("credit/WebShop-v0", num_products=200, split="test", cache_dir=False)
    >>> obs, info = env.reset(seed=0, options={"task": 0})
    >>> obs.startswith("WebShop [SEP] Instruction:")
    True
    >>> info["admissible_actions"]
    ['search[<query>]']
    """

    def __init__(
        self,
        num_products: int = 1000,
        catalog_seed: int = 0,
        *,
        catalog: WebShopCatalog | None = None,
        split: str = "train",
        observation_mode: str = "text",
        max_steps: int = 15,
        show_attrs: bool = False,
        cache_dir: str | Path | None | bool = None,
        reward_rules: str = "v2",
        render_mode: str | None = None,
    ):
        super().__init__(render_mode=render_mode)
        _require_fuzz()  # fail at construction, not at the first purchase, without the "webshop" extra
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        if observation_mode not in OBSERVATION_MODES:
            raise ValueError(f"observation_mode must be one of {OBSERVATION_MODES}, got {observation_mode!r}")
        if int(max_steps) < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        if reward_rules not in REWARD_RULES:
            raise ValueError(f"reward_rules must be one of {REWARD_RULES}, got {reward_rules!r}")
        self.reward_rules = reward_rules
        self.catalog = catalog if catalog is not None else shared_catalog(num_products, catalog_seed)
        self.split = split
        self.task_indices = self.catalog.split_indices(split)
        if len(self.task_indices) == 0:
            raise ValueError(f"split {split!r} of catalog {self.catalog.source!r} has no goals")
        self.observation_mode = observation_mode
        self.max_steps = int(max_steps)
        self.show_attrs = bool(show_attrs)
        big = len(self.catalog.products) >= PROGRESS_FROM
        self.index: BM25Index = shared_index(self.catalog, cache=cache_dir, progress=big)
        self.goal: dict[str, Any] = {}
        self.goal_index = -1
        self._asin_ids: dict[str, int] | None = None
        self._config_key: tuple | None = None
        self._config_text = ""
        self._render_cache: dict[tuple, tuple[P.Page, str, tuple]] = {}
        self._restored_results: dict[str, tuple[str, ...]] = {}
        self._opt_codes: dict[str, dict[tuple[str, str], str]] = {}
        self._snap_codes: list[Any] = [None, b"", None, b"", None, b""]
        """(visited, its code, options, their code, query, its bytes) of the last snapshot: kept while the same
        objects (they are replaced, never changed in place)."""

    @property
    def num_tasks(self) -> int:
        """Number of goals in this env's split."""
        return len(self.task_indices)

    # -- search ----------------------------------------------------------------------------------
    def normalize_query(self, query: str) -> str:
        """The query as the state sees it: its indexed terms, sorted (all that decides the results)."""
        return " ".join(sorted(t for t in self.index.query_terms(query) if t in self.index.term_id))

    def _search(self, query: str) -> tuple[str, tuple[str, ...]]:
        """``(normalized query, top asins)`` of a query."""
        hits = self.index.search(query, k=SEARCH_RETURN_N)
        return self.normalize_query(query), tuple([self.catalog.products[i]["asin"] for i in hits])

    def equivalent_state_keys(self, rng: np.random.Generator, n: int) -> list[str]:
        """``state_key`` of the current state reached with ``n`` surface variants of its query
        (word order shuffled, case changed, stop words and unknown words added)."""
        keys = []
        saved = self._query
        for _ in range(n):
            words = saved.split()
            rng.shuffle(words)
            noise = ["the", "For", "with", "zzqxv"][: int(rng.integers(0, 5))]
            text = " ".join(w.upper() if rng.random() < 0.5 else w for w in words + noise)
            self._query = self.normalize_query(text) if saved else ""
            keys.append(self._state_key())
        self._query = saved
        return keys

    def _goal_local_index(self, task_id: str) -> int | None:
        """This split's index of a ``"webshop:goal:<global index>"`` task id, or ``None``."""
        head, _, number = task_id.rpartition(":")
        if head != "webshop:goal" or not (number.isascii() and number.isdigit()):
            return None
        hits = np.flatnonzero(np.asarray(self.task_indices) == int(number))
        return int(hits[0]) if hits.size else None

    # -- episode ---------------------------------------------------------------------------------
    def _reset_impl(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        task = options.get("task")
        if task is None:
            local = int(self.np_random.integers(self.num_tasks))
        else:
            local = resolve_task(task, self.num_tasks, self._goal_local_index, example="webshop:goal:N")
        self.goal_index = self.task_indices[local]
        self.goal = self.catalog.goals[self.goal_index]
        self._page_kind = "search"
        self._query = ""
        self._results: tuple[str, ...] = ()
        self._page_no = 0
        self._asin = ""
        self._options: dict[str, str] = {}
        self._sub = ""
        self._visited: set[str] = set()
        self._t = 0
        self._score = 0.0
        return self._observe(reward_info=None)

    def _render_page(self) -> P.Page:
        instr = self.goal["instruction_text"]
        kind = self._page_kind
        if kind == "search":
            return P.search_page(instr)
        if kind == "results":
            lo = (self._page_no - 1) * P.RESULTS_PER_PAGE
            prods = [self.catalog.by_asin[a] for a in self._results[lo : lo + P.RESULTS_PER_PAGE]]
            return P.results_page(instr, prods, self._page_no, len(self._results), self._visited)
        product = self.catalog.by_asin[self._asin]
        if kind == "item":
            return P.item_page(instr, product, self._options, self.show_attrs)
        if kind == "sub":
            return P.sub_page(instr, product, self._sub)
        return P.done_page(self._asin, self._options, self._score)

    def _state_key(self) -> str:
        k = self._page_kind
        query = self._query if k in ("results", "item", "sub") else ""
        page_no = str(self._page_no) if k in ("results", "item", "sub") else ""
        asin = self._asin if k in ("item", "sub", "done") else ""
        opts = (
            ",".join(f"{n}={v}" for n, v in sorted(self._options.items()))
            if k in ("item", "sub", "done")
            else ""
        )
        sub = self._sub if k == "sub" else ""
        return f"webshop|{k}|q={query}|p={page_no}|a={asin}|o={opts}|s={sub}"

    def _observe(self, reward_info: dict[str, Any] | None, valid: bool = True) -> tuple[str, dict[str, Any]]:
        page = self._render_page()
        self._page = page
        obs = page.text() if self.observation_mode == "text" else page.text_rich()
        admissible = [SEARCH_MARKER] if page.has_search_bar else []
        admissible += [f"click[{c}]" for c in page.clickables]
        info: dict[str, Any] = {
            "state_key": self._state_key(),
            "admissible_actions": admissible,
            "task_id": f"webshop:goal:{self.goal_index}",
            "won": bool(self._page_kind == "done" and math.isclose(self._score, 1.0)),
            "action_valid": valid,
            "score": float(self._score),
            "page": self._page_kind,
        }
        if reward_info is not None:
            info["reward_info"] = reward_info
        return obs, info

    def _step_impl(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self._t += 1
        name, arg = parse_action(action)
        valid = True
        reward_info = None
        if name == "search" and arg and self._page.has_search_bar:
            self._query, self._results = self._search(arg)
            self._page_kind, self._page_no, self._asin, self._options = "results", 1, "", {}
        elif name == "click" and arg in self._page.clickables:
            reward_info = self._click(self._page.clickables[arg])
        else:
            valid = False
        terminated = self._page_kind == "done"
        obs, info = self._observe(reward_info, valid)
        if not valid:
            info["invalid_reason"] = "not an admissible search[...] or click[...] on this page"
        truncated = not terminated and self._t >= self.max_steps
        reward = self._score if terminated else 0.0
        return obs, reward, terminated, truncated, info

    # -- snapshots -------------------------------------------------------------------------------
    def _snapshot_config(self) -> str:
        """The configuration as one JSON string, rebuilt only when a setting changed (the base compares
        it on every get_state/set_state; a string costs a fraction of a nested dict)."""
        key = (self.catalog, self.split, self.observation_mode, self.max_steps, self.show_attrs, self.reward_rules)
        if key != self._config_key:
            c = self.catalog
            values = (c.source, c.fingerprint(), len(c.goals), *key[1:])
            fields = ("catalog", "catalog_fingerprint", "n_goals", "split", "observation_mode", "max_steps")
            fields += ("show_attrs", "reward_rules")
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
        sets are replaced, never changed in place, so it can share them) with its rendering and info."""
        d = self.__dict__
        info = d["_last_info"]
        valid = info["action_valid"]
        reason = info.get("invalid_reason")
        c = d["_snap_codes"]  # [visited, code, options, code, query, bytes]: kept while the same objects
        vis = d["_visited"]
        if c[0] is not vis:
            c[0], c[1] = vis, ",".join(map(str, sorted(map(self._product_ids().__getitem__, vis)))).encode()
        opts = d["_options"]
        if c[2] is not opts:
            c[2], c[3] = opts, self._options_code(opts)
        query = d["_query"]
        if c[4] is not query:
            c[4], c[5] = query, query.encode()
        state = _STATE(d)
        asin = state[5]
        raw = _HEAD.pack(state[0], _PAGE_INDEX[state[1]], state[4], self._asin_ids[asin] + 1 if asin else 0,
                         state[9], 1 if valid else 0, _SUB_INDEX[state[7]]) + b"\x1f".join((c[1], c[3], c[5]))
        if reason is not None:
            raw += b"\x1f" + reason.encode()
        return raw, (state, valid, reason, d["_page"], d["_last_obs"], _INFO_VALUES(info))

    def _options_code(self, opts: dict[str, str]) -> bytes:
        if not opts:
            return b""
        text = "\x1e".join([f"{n}\x1d{v}" for n, v in opts.items()])
        if text.count("\x1d") == len(opts) and text.count("\x1e") == len(opts) - 1 and "\x1f" not in text:
            return text.encode()
        return ("#" + ",".join(map(self._option_codes(self._asin).__getitem__, opts.items()))).encode()

    def _restore_snapshot(self, payload: Any) -> tuple[str, dict[str, Any]]:
        if payload.__class__ is tuple:  # a snapshot this process took: its state, rendering and info as they were
            state, valid, reason, self._page, obs, values = payload
            if state[0] != self.goal_index:
                self.goal = self.catalog.goals[state[0]]
            (self.goal_index, self._page_kind, self._query, self._results, self._page_no, self._asin, self._options,
             self._sub, self._visited, self._t) = state
            self._score = 0.0
            info = dict(zip(_RENDERED_INFO, values))
            info["admissible_actions"] = list(info["admissible_actions"])
        else:
            obs, info, valid, reason = self._restore_bytes(payload)
        info["action_valid"] = valid
        if reason is not None:
            info["invalid_reason"] = reason
        return obs, info

    def _restore_bytes(self, raw: bytes) -> tuple[str, dict[str, Any], bool, str | None]:
        """Parse and check a snapshot from elsewhere; the state, rendering and info are rebuilt from the
        catalog and the search index (nothing derived is read from the snapshot)."""
        if len(raw) < _HEAD.size:
            raise SnapshotError("WebShopEnv snapshot payload is too short")
        goal_index, page, page_no, asin_i, t, valid, sub = _HEAD.unpack_from(raw)
        parts = raw[_HEAD.size:].decode().split("\x1f")
        if len(parts) not in (3, 4) or valid > 1 or page >= len(_PAGES) or sub > len(P.SUB_PAGES):
            raise SnapshotError("WebShopEnv snapshot payload has malformed fields")
        vis, opts, query = parts[:3]
        reason = parts[3] if len(parts) == 4 else None
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

    def _search_memo(self, query: str) -> tuple[str, ...]:
        """The results of a normalized query (searched again, remembered for the next restores)."""
        hit = self._restored_results.get(query)
        if hit is None:
            hit = self._restored_results[query] = self._search(query)[1]
            if len(self._restored_results) > _RENDER_CACHE_SIZE:
                self._restored_results.pop(next(iter(self._restored_results)))
        return hit

    def _render_key(self) -> tuple:
        """What the rendered page depends on (the done page is never snapshotted)."""
        visited = tuple(sorted(self._visited)) if self.observation_mode == "text_rich" else ()
        opts = tuple(sorted(self._options.items()))
        return (self.goal_index, self._state_key(), opts, visited)

    def _click(self, el: P.Element) -> dict[str, Any] | None:
        kind, text = self._page_kind, el.text
        if el.kind == P.PRODUCT:
            self._asin, self._options, self._page_kind = text, {}, "item"
            self._visited = self._visited | {text}  # replaced, never changed in place: snapshots share them
        elif el.kind == P.OPTION:
            self._options = {**self._options, el.option_name: text}
        elif text == P.BACK_TO_SEARCH:  # a new session page, as the original: visited marks go too
            self._page_kind, self._query, self._results, self._page_no = "search", "", (), 0
            self._asin, self._options, self._sub = "", {}, ""
            self._visited = set()
        elif text == P.NEXT_PAGE:
            self._page_no += 1
        elif text == P.PREV_PAGE:
            if kind == "results":
                self._page_no -= 1
            elif kind == "item":
                self._page_kind, self._asin, self._options = "results", "", {}
            else:  # sub-page → its item page, options kept
                self._page_kind, self._sub = "item", ""
        elif text in P.SUB_PAGES:
            self._page_kind, self._sub = "sub", text
        elif text == P.BUY_NOW:
            product = self.catalog.by_asin[self._asin]
            info = get_reward(
                product, self.goal, self.catalog.prices[self._asin], self._options, rules=self.reward_rules
            )
            self._score = info.reward
            self._page_kind = "done"
            return info.as_dict()
        return None


__all__ = [
    "OBSERVATION_MODES",
    "SEARCH_MARKER",
    "SEARCH_RETURN_N",
    "WebShopEnv",
    "parse_action",
    "shared_catalog",
]
