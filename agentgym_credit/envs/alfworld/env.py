"""``credit/ALFWorld-v0``: the real ALFWorld text engine with real or generated games, offline.

What lives here:

- :class:`ALFWorldEnv` — the env (see its docstring for the contract);
- :data:`STATIC_PREDICATES`, :data:`BOOKKEEPING_PREDICATES`, :data:`NEGATED_PREFIX` — the fact kinds left
  out of the per-step part of ``state_key`` (static ones enter once, as a digest);
- :func:`canonical_facts` — the sorted fact strings ``state_key`` is built from.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentgym_credit.envs.alfworld import queries, snapshots, statememo
from agentgym_credit.envs.alfworld.engine import expert_plan, make_engine, require_engine, task_sentence
from agentgym_credit.envs.alfworld.expert import task_spec
from agentgym_credit.envs.alfworld.games import (
    SPLITS,
    GameRef,
    GeneratedGames,
    dev_data_dir,
    find_real_games,
    real_split_dir,
)
from agentgym_credit.envs.alfworld.generator import TASK_TYPES
from agentgym_credit.envs.alfworld.statekeys import FACT_MEMO, digest, fact_str, shuffled_keys
from agentgym_credit.envs.base import CreditEnv, resolve_task
from agentgym_credit.errors import SnapshotUnsupported

STATIC_PREDICATES = frozenset({
    "receptacletype", "objecttype", "cancontain", "receptacleatlocation", "openable", "pickupable",
    "cleanable", "heatable", "coolable", "sliceable", "toggleable", "isreceptacleobject", "moveable",
})
"""Facts no action changes: hashed once per game into ``state_key`` (as a digest), not listed per step."""

BOOKKEEPING_PREDICATES = frozenset({"checked", "examined"})
"""Facts the engine records (``look``/``examine`` mark things ``checked``) that no precondition, goal or
text depends on: left out of ``state_key`` so looking around does not split a state."""

NEGATED_PREFIX = "not_"
"""The engine also lists negated atoms (``not_atlocation(agent1, loc 16)``) for facts that an action
made false and that have not become true again: a record of the path (every place left so far), not of
the state — the absence of ``P`` already says ``P`` is false. Left out of ``state_key`` (with them the
same place reached by two routes had two keys). Checked over 3,000 random steps on generated and on
dev games: without them, one key never had two admissible sets nor two outcomes (next key, reward,
observation text) for one command."""


_INFO_KEYS = frozenset({"state_key", "obs_key", "admissible_actions", "task_id", "won", "action_valid", "task_type",
                        "goal", "step", "expert_action", "invalid_reason", "dead_end"})


def _kind(name: str) -> str:
    """``"skip"`` (bookkeeping, negated), ``"static"`` or ``"dynamic"``: which part of ``state_key`` a fact with
    this predicate name goes to (the one rule :func:`canonical_facts` and :func:`dynamic_facts` share)."""
    if name in BOOKKEEPING_PREDICATES or name.startswith(NEGATED_PREFIX):
        return "skip"
    return "static" if name in STATIC_PREDICATES else "dynamic"


def canonical_facts(facts: Sequence[Any], static: bool = True) -> tuple[list[str], list[str]]:
    """``(dynamic, static)`` fact strings, each sorted: ``inreceptacle(mug 1, cabinet 2)`` (``static=False``: the
    static list left empty, for a caller that has digested it already)."""
    dyn, stat = [], []
    for f in facts:
        kind = _kind(f.name)
        if kind == "dynamic":
            dyn.append(fact_str(f))
        elif kind == "static" and static:
            stat.append(fact_str(f))
    return sorted(dyn), sorted(stat)


_DYNAMIC: dict[Any, str] = {}
"""Fact -> its string in ``state_key``'s dynamic part, or ``""`` (static, bookkeeping, negated): what
:func:`dynamic_facts` reads (emptied at ``statekeys.FACT_MEMO`` entries; a bound on memory only)."""


def dynamic_facts(facts: Sequence[Any]) -> tuple[str, ...]:
    """``tuple(canonical_facts(facts, static=False)[0])``, each fact's kind and string looked up once per process."""
    out, get = [], _DYNAMIC.get
    for f in facts:
        s = get(f)
        if s is None:
            if len(_DYNAMIC) >= FACT_MEMO:
                _DYNAMIC.clear()
            s = _DYNAMIC[f] = fact_str(f) if _kind(f.name) == "dynamic" else ""
        if s:
            out.append(s)
    out.sort()
    return tuple(out)


def _env_data_dir(required: bool) -> str | None:
    """``$ALFWORLD_DATA`` if it holds games. (Importing ``alfworld`` sets it to an empty cache folder,
    so an unset or empty folder means "no data" unless ``source='data'`` asked for it.)"""
    path = os.environ.get("ALFWORLD_DATA")
    if not path:
        return None
    if required:
        return path
    for _, _, files in os.walk(Path(path).expanduser(), followlinks=True):
        if "game.tw-pddl" in files:
            return path
    return None


class ALFWorldEnv(CreditEnv, engine="textworld"):  # not thread-safe: base.ENGINE_LOCKS
    """ALFWorld on the real engine (TextWorld PDDL back end + Fast Downward), no download needed.

    Games (``source``):

    - ``"generated"`` (default when no data folder is given): built-in generator, all six task types,
      every game checked solvable by the engine's planner;
    - ``"data"``: a folder of real ALFWorld games (``data_dir`` or ``$ALFWORLD_DATA``), official layout;
      old ``json_2.1.1`` files are upgraded on load (installed domain + grammar, the game's own task);
    - ``"dev"``: ``../shared/data/alfworld/dev`` of a source checkout (tests and development).

    ``split`` is ``"train"``, ``"eval_in"`` or ``"eval_out"`` (for a data folder: ALFWorld's ``train``,
    ``valid_seen``, ``valid_unseen`` sub-folders; a folder without them needs ``split=None``, which uses
    it whole, and is an error otherwise).
    ``reset(seed=s)`` draws a game with the env's seeded RNG; ``options={"task": i or game_id}`` picks one.

    Reward (GiGPO's convention by default): ``reward_success`` when the goal is reached (then
    ``terminated``), ``reward_invalid`` for an inadmissible command (a no-op: the engine is not called,
    the observation is ``"Nothing happens."``, ``info["action_valid"] = False``), minus ``step_cost`` on
    every step. ``truncated`` after ``max_steps`` steps. Commands are matched after lower-casing and
    collapsing white space.

    ``info``: ``state_key`` (``"alfworld:" + digest`` of the sorted dynamic engine facts and of the game's
    static facts; see :data:`STATIC_PREDICATES`, :data:`BOOKKEEPING_PREDICATES`, :data:`NEGATED_PREFIX`), ``obs_key``,
    ``admissible_actions`` (the engine's admissible commands, sorted), ``task_id`` (game id), ``won``,
    ``action_valid``, ``task_type``, ``goal`` (the task sentence), ``step``, and ``expert_action`` when
    ``expert=True``: the next command of the fact oracle (:mod:`~agentgym_credit.envs.alfworld.expert`),
    or of the engine's own planner (Fast Downward, cached per state) if the oracle's is not admissible;
    ``None`` once won, or when the oracle sees no way to win (e.g. holding an object no receptacle of the
    game can hold: a dead end some real games allow).

    Dead ends: ``info["dead_end"]`` is ``True`` once no plan can reach the goal any more (the agent holds
    an object no receptacle of the game can hold, or no object of the target type is left to take:
    :func:`~agentgym_credit.envs.alfworld.expert.dead_end`, computed whether or not ``expert`` is set).
    With ``end_on_dead_end=True`` such an episode ends there as a loss: ``terminated=True``,
    ``won=False``, no success reward, ``info["dead_end"]=True`` — ALFWorld has no other way to lose, so
    ``terminated and not won`` marks these episodes in a rollout batch. By default (``False``) the
    episode runs on to ``max_steps`` as before.

    ``fast=True`` runs :class:`~agentgym_credit.envs.alfworld.fast.FastPddlEnv` (identical transcripts,
    many times faster); ``fast=False`` the stock ``textworld`` engine.

    >>> env = ALFWorldEnv(task_types=["pick_and_place_simple"], expert=True)
    >>> obs, info = env.reset(seed=0)
    >>> obs.startswith("-= Welcome to TextWorld, ALFRED! =-")
    True
    >>> while not info["won"]:
    ...     obs, reward, terminated, truncated, info = env.step(info["expert_action"])
    >>> reward, terminated
    (10.0, True)
    """

    def __init__(
        self,
        data_dir: str | os.PathLike | None = None,
        source: str | None = None,
        split: str | None = "train",
        task_types: Sequence[str] | None = None,
        reward_success: float = 10.0,
        reward_invalid: float = -0.1,
        step_cost: float = 0.0,
        expert: bool = False,
        max_steps: int = 50,
        fast: bool = True,
        num_games: int | None = None,
        include_unsolvable: bool = False,
        end_on_dead_end: bool = False,
        render_mode: str | None = None,
    ):
        require_engine()
        super().__init__(render_mode=render_mode, invalid_action_reward=reward_invalid)
        task_types = tuple(TASK_TYPES if task_types is None else task_types)
        bad = [t for t in task_types if t not in TASK_TYPES]
        if bad or not task_types:
            raise ValueError(f"task_types must be a non-empty subset of {TASK_TYPES}, got {list(task_types)}")
        if split is not None and split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS} (or None for a whole data folder), got {split!r}")
        if data_dir is None and source in (None, "data"):
            data_dir = _env_data_dir(required=source == "data")
        if source is None:
            source = "data" if data_dir is not None else "generated"
        if source == "dev":
            dev = dev_data_dir()
            if dev is None:
                raise FileNotFoundError("source='dev' needs ../shared/data/alfworld/dev next to a source checkout")
            data_dir, split = dev, None
        if source in ("data", "dev"):
            if data_dir is None:
                raise ValueError("source='data' needs data_dir=... or the ALFWORLD_DATA environment variable")
            folder = real_split_dir(data_dir, split)
            self.games: Sequence[GameRef] = find_real_games(folder, task_types, include_unsolvable)
            if num_games is not None:
                self.games = self.games[: int(num_games)]
            if not self.games:
                raise FileNotFoundError(f"no playable ALFWorld game of types {list(task_types)} under {str(folder)!r}")
        elif source == "generated":
            self.games = GeneratedGames(split or "train", task_types, num_games)
        else:
            raise ValueError(f"source must be 'generated', 'data' or 'dev', got {source!r}")
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        self.source, self.split, self.task_types = source, split, task_types
        self.reward_success, self.reward_invalid = float(reward_success), float(reward_invalid)
        self.step_cost, self.expert, self.max_steps, self.fast = float(step_cost), bool(expert), int(max_steps), bool(fast)
        self.end_on_dead_end = bool(end_on_dead_end)
        self._dead_end: str | None = None  # why the goal became unreachable (expert.dead_end), else None
        self._engine = make_engine(fast=self.fast, facts=True)
        self._loaded: str | None = None
        self._game: GameRef | None = None
        self._state: Any = None
        self._static_digest = ""
        self._dyn: tuple[Any, Any] = (None, None)  # (engine state, its sorted dynamic fact strings)
        self._goal = ""
        self._plan: list[str] = []
        self._games_digest: str | None = None
        self._index = 0
        self._commands = []
        self._copy_steps = []
        self._planner_cache: dict[tuple[str, str], tuple[str, ...]] = {}
        self.planner_calls = 0
        """How many times the expert fell back to the engine's planner (cached per state; see ``_replan``)."""
        self._t = 0

    # -- games ----------------------------------------------------------------------------------
    def _pick(self, options: dict[str, Any]) -> int:
        task = options.get("task")
        if task is None:
            return int(self.np_random.integers(len(self.games)))
        return resolve_task(task, len(self.games), self._game_index, example=self.games[0].game_id)

    def _game_index(self, game_id: str) -> int | None:
        """Index of a game id, or ``None``."""
        games = self.games if isinstance(self.games, GeneratedGames) else list(self.games)
        for i in range(len(games)):  # generated ids embed the split; cheap to scan
            if games[i].game_id == game_id:
                return i
        return None

    def _load(self, game: GameRef) -> None:
        if self._loaded == game.game_id:
            return
        data = game.load()
        try:
            self._engine.load(data)
        except (KeyError, ValueError) as exc:  # e.g. json_2.1.1 floor-lamp trials flagged unsolvable
            self._loaded = None
            raise RuntimeError(
                f"the ALFWorld engine cannot load game {game.game_id!r} ({type(exc).__name__}: {exc}); "
                "games flagged 'solvable: false' are skipped unless include_unsolvable=True"
            ) from exc
        self._loaded, self._game = game.game_id, game
        sentence = task_sentence(data["grammar"])
        self._goal = sentence.removeprefix("Your task is to: ").rstrip(".")
        self._spec = task_spec(game.task_type, data["pddl_problem"])
        self._static_digest = ""

    # -- keys -----------------------------------------------------------------------------------
    def state_facts(self) -> list[str]:
        """The sorted dynamic fact strings of the current state (what ``state_key`` digests)."""
        return canonical_facts(self._state["facts"])[0]

    def _state_key(self, facts: Sequence[Any], dynamic: Any = None) -> str:
        if dynamic is not None and self._static_digest:  # the current state's, already listed
            return "alfworld:" + digest(self._static_digest + "\n" + "\n".join(dynamic))
        dynamic, static = canonical_facts(facts, static=not (self._static_digest and queries.ENABLED))  # the static part: once a game
        if not self._static_digest:
            self._static_digest = digest("\n".join(static))
        return "alfworld:" + digest(self._static_digest + "\n" + "\n".join(dynamic))

    def _dynamic(self) -> tuple[str, ...] | None:
        """The current state's sorted dynamic fact strings, listed once per state (``None`` with the memos of
        :mod:`.statememo` off: each user lists them again, as before)."""
        if not statememo.enabled():
            return None
        if self._dyn[0] is not self._state:
            self._dyn = (self._state, dynamic_facts(self._state["facts"]))
        return self._dyn[1]

    def _assess(self, admissible: Any) -> tuple[str | None, str | None]:
        """The expert oracle's ``(command, dead end)`` here (:func:`.statememo.assessed`)."""
        memo = self._engine.unwrapped._game_memo if self.fast else None
        return statememo.assessed(memo, self._spec, self._dynamic(), self._state["facts"], admissible)

    def equivalent_state_keys(self, rng: Any, n: int) -> list[str]:
        """``state_key`` of ``n`` shuffled orderings of the current facts (all must be equal)."""
        return shuffled_keys(self._state_key, self._state["facts"], rng, n)

    def _info(self, valid: bool = True) -> dict[str, Any]:
        st = self._state
        won = bool(st["won"])
        info: dict[str, Any] = {
            "state_key": self._state_key(st["facts"], self._dynamic()),
            "admissible_actions": list(st["admissible_commands"]),
            "task_id": self._game.game_id,
            "won": won,
            "action_valid": valid,
            "task_type": self._game.task_type,
            "goal": self._goal,
            "step": self._t,
            "dead_end": self._dead_end is not None,
        }
        if self.expert:
            info["expert_action"] = None if won else (self._plan[0] if self._plan else None)
        return info

    def _replan(self) -> None:
        """Next expert command: the fact oracle's, or the engine planner's if the oracle's is not admissible
        (planner plans are cached per game and state key: the planner can take seconds on a kitchen)."""
        if self._state["won"]:
            self._plan, self._dead_end = [], None
            return
        admissible = self._state["admissible_commands"]
        cmd, self._dead_end = self._assess(admissible)
        if cmd is None or cmd in admissible:  # None: the oracle sees no way to win from here
            self._plan = [] if cmd is None else [cmd]
            return
        key = (self._game.game_id, self._state_key(self._state["facts"]))
        plan = self._planner_cache.get(key)
        if plan is None:
            plan = self._planner_cache[key] = tuple(expert_plan(self._engine))
            self.planner_calls += 1
        self._plan = list(plan)

    # -- the contract ---------------------------------------------------------------------------
    def _reset_impl(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        self._index = self._pick(options)
        self._load(self.games[self._index])
        self._state = self._engine.reset()
        self._t = 0
        self._commands: list[str] = []  # valid commands since reset (a snapshot's replay path)
        self._copy_steps: list[int] = []  # after how many of them a snapshot was taken (see snapshots.py)
        self._dead_end = None
        if self.expert:
            self._replan()
        else:
            self._dead_end = self._assess(None)[1]
        return self._state["feedback"], self._info()

    def _step_impl(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        command = " ".join(action.lower().split())
        self._t += 1
        truncated = self._t >= self.max_steps
        if command not in self._state["admissible_commands"]:
            info = self._info(valid=False)
            return "Nothing happens.", self.reward_invalid - self.step_cost, False, truncated, info
        self._state, _, _ = self._engine.step(command)
        self._commands.append(command)
        if self.expert and len(self._plan) > 1 and self._plan[0] == command:
            self._plan.pop(0)  # following a planner plan (it reaches the goal: no dead end on the way)
        elif self.expert:
            self._replan()
        else:
            self._dead_end = self._assess(None)[1]
        won = bool(self._state["won"])
        reward = (self.reward_success if won else 0.0) - self.step_cost
        ended = won or (self.end_on_dead_end and self._dead_end is not None)  # a dead end ends as a loss
        return self._state["feedback"], reward, ended, truncated and not ended, self._info()

    # -- snapshots (fast engine) ------------------------------------------------------------------
    def _snapshot_config(self) -> Any:
        if not self.fast:
            raise SnapshotUnsupported(
                "ALFWorldEnv(fast=False) cannot snapshot: the stock textworld engine reloads its planner task "
                "on every reset and keeps no way back to a saved state; use fast=True (the default: same "
                "transcripts, many times faster)"
            )
        if self._games_digest is None:
            if isinstance(self.games, GeneratedGames):
                ids: Any = ["generated", self.games.split, list(self.games.task_types), len(self.games)]
            else:
                ids = [g.game_id for g in self.games]
            self._games_digest = digest(json.dumps(ids))
        return {
            "source": self.source, "split": self.split, "task_types": list(self.task_types),
            "games": self._games_digest, "reward_success": self.reward_success,
            "reward_invalid": self.reward_invalid, "step_cost": self.step_cost, "expert": self.expert,
            "max_steps": self.max_steps, "end_on_dead_end": self.end_on_dead_end,
        }

    _own_info_keys = _INFO_KEYS

    def _snapshot_payload(self) -> Any:
        return snapshots.env_payload(self)

    def _restore_snapshot(self, payload: Any) -> tuple[str, dict[str, Any]]:
        return snapshots.restore_env(self, payload)

    @property
    def game(self) -> GameRef | None:
        """The game being played."""
        return self._game

    @property
    def data_path(self) -> Path | None:
        """Path of the loaded game file (real games), else ``None``."""
        return Path(self._game.path) if self._game and self._game.path else None


__all__ = ["ALFWorldEnv", "STATIC_PREDICATES", "BOOKKEEPING_PREDICATES", "NEGATED_PREFIX", "canonical_facts"]
