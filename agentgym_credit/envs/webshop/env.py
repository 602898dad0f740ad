"""``credit/WebShop-v0``: the WebShop text shopping environment with its reward function.

What lives here: :class:`WebShopEnv`, :func:`parse_action`, :func:`shared_catalog`; its snapshots are
:mod:`.snapshots`.

Pages: search → results (top 50, 10 a page) → item (options, sub-pages) → done; see :mod:`.pages`.
Actions: ``search[<query>]`` (only where the page has the search box) and ``click[<text>]`` with
the text of a clickable of the page — a button, a product asin or an option value —
case-insensitive. Anything else is a no-op: the page stays, the step counts, reward 0 and
``info["action_valid"] = False``. On the search page ``info["admissible_actions"]`` holds the search box as
the *template* :data:`SEARCH_MARKER` (the package's convention for an entry with ``<placeholder>`` parts:
:func:`~agentgym_credit.wrappers.action_projection.is_template`): it says how to search, it is not an action.
Sent as it is (or any query with an unfilled ``<placeholder>``) it is an invalid action, with
``info["invalid_reason"]`` saying to put the words to search for in place of ``<query>``. ``Buy Now`` ends the episode with WebShop's reward
(:mod:`.reward`); after ``max_steps`` steps without a purchase the episode is truncated.
"""

from __future__ import annotations

import math
import re
import threading
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_credit.envs.base import CreditEnv, resolve_task
from agentgym_credit.envs.webshop import pages as P
from agentgym_credit.envs.webshop.catalog import PROGRESS_FROM, generate_catalog
from agentgym_credit.envs.webshop.data import SPLITS, WebShopCatalog
from agentgym_credit.envs.webshop.reward import REWARD_RULES, _color_list, _require_fuzz, get_reward
from agentgym_credit.envs.webshop.search import BM25Index, shared_index
from agentgym_credit.envs.webshop.snapshots import _RENDER_CACHE_SIZE, WebShopSnapshots, _Setting

SEARCH_RETURN_N = 50
SEARCH_MARKER = "search[<query>]"
"""Admissible-action template of the search box: replace ``<query>`` by the words to search for
(``search[red mug]``); the literal template is an invalid action."""

_PLACEHOLDER = re.compile(r"<[a-z_][\w ]*>")
"""An unfilled template part in a (lower-cased) search query."""

TEMPLATE_SEARCH_REASON = ("search[<query>] is the search box's template, not an action: put the words to search "
                          "for in place of <query>, e.g. search[red mug]")

OBSERVATION_MODES = ("text", "text_rich")

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


MAX_QUERY_CHARS = 1_000
"""Longest search query searched (people's WebShop queries are a few words); a longer one is an invalid
no-op, refused before any search work (an 8 MB query took over 20 s of search)."""


def parse_action(action: str) -> tuple[str | None, str | None]:
    """``"click[Buy Now]"`` → ``("click", "buy now")`` (text after the closing ``]`` is ignored);
    unparseable text → ``(None, None)``."""
    m = _ACTION.match(action)
    if m is None:
        return None, None
    return m.group(1).lower(), m.group(2).strip().lower()


class WebShopEnv(WebShopSnapshots, CreditEnv):
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
        color_rules: colour normalization of option values: ``"original"`` (default: the original's
            ``normalize_color`` word list) or ``"package"`` (colour names only); see :mod:`.reward`.

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

    catalog = _Setting()
    split = _Setting()
    observation_mode = _Setting()
    max_steps = _Setting()
    show_attrs = _Setting()
    reward_rules = _Setting()
    color_rules = _Setting()

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
        color_rules: str = "original",
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
        _color_list(color_rules)  # a named error at construction for an unknown list
        self.color_rules = color_rules
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
        self._snap_codes: list[Any] = [set(), b"", {}, b"", "", b"", b"\x1f\x1f", "", "", 0]
        """(visited, its code, options, their code, query, its bytes, the three joined, the options' product, the
        product, its index + 1) of the last snapshot."""
        self._opt_pieces: dict[str, dict[tuple[str, str], bytes]] = {}
        self._snap_head: tuple | None = None
        """What every snapshot starts with until the RNG, a setting or the key changes (:meth:`_new_snap_head`)."""
        cls = type(self)
        self._fast_get = (cls._snapshot_payload is WebShopEnv._snapshot_payload
                          and cls._snapshot_config is WebShopEnv._snapshot_config)
        """get_state in one pass (a subclass that overrides these hooks gets CreditEnv's path)."""
        self._fast_set = cls._restore_snapshot is WebShopEnv._restore_snapshot
        """set_state of a remembered snapshot in one pass (else through the subclass's ``_restore_snapshot``)."""

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_snap_head"] = None  # holds a MAC state (not picklable): made again by the next get_state
        return state

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
        too_long = name == "search" and arg is not None and len(arg) > MAX_QUERY_CHARS  # refused before any search
        unfilled = name == "search" and not too_long and arg is not None and _PLACEHOLDER.search(arg) is not None
        if name == "search" and arg and self._page.has_search_bar and not unfilled and not too_long:
            self._query, self._results = self._search(arg)
            self._page_kind, self._page_no, self._asin, self._options = "results", 1, "", {}
        elif name == "click" and arg in self._page.clickables:
            reward_info = self._click(self._page.clickables[arg])
        else:
            valid = False
        terminated = self._page_kind == "done"
        obs, info = self._observe(reward_info, valid)
        if not valid:
            info["invalid_reason"] = (TEMPLATE_SEARCH_REASON if unfilled and self._page.has_search_bar
                                      else f"search query longer than MAX_QUERY_CHARS={MAX_QUERY_CHARS} characters"
                                      if too_long else "not an admissible search[...] or click[...] on this page")
        truncated = not terminated and self._t >= self.max_steps
        reward = self._score if terminated else 0.0
        return obs, reward, terminated, truncated, info

    # -- snapshots -------------------------------------------------------------------------------

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
                product, self.goal, self.catalog.prices[self._asin], self._options, rules=self.reward_rules,
                color_rules=self.color_rules
            )
            self._score = info.reward
            self._page_kind = "done"
            return info.as_dict()
        return None


__all__ = [
    "MAX_QUERY_CHARS",
    "OBSERVATION_MODES",
    "SEARCH_MARKER",
    "TEMPLATE_SEARCH_REASON",
    "SEARCH_RETURN_N",
    "WebShopEnv",
    "parse_action",
    "shared_catalog",
]
