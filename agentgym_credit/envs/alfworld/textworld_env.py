"""``credit/TextWorld-v0``: TextWorld's own generated games (tw-simple, tw-cooking, tw-coin_collector).

What lives here:

- :data:`CHALLENGE_SETTINGS` — the default ``tw-make`` settings of each supported challenge;
- :func:`textworld_cache_dir` — where compiled games are cached
  (``$AGENTGYM_CREDIT_TEXTWORLD_CACHE`` or ``~/.cache/agentgym_credit/textworld``);
- :func:`ensure_game` — generate and compile one game offline with TextWorld's Python API (what
  ``tw-make <challenge> --seed S`` does) unless it is already cached; returns the ``.z8`` path;
- :func:`clean_observation` — the game's text without the ASCII banner, the trailing ``>`` prompt padded
  with spaces and the status line (``-= Bedroom =-0/2``: room, score, moves);
- :class:`TextWorldEnv` — the env.

Everything runs offline from PyPI wheels: ``textworld`` ships the Inform 7 compiler (``ni``/``inform6``
under ``textworld/thirdparty``) that builds the ``.z8`` story file, and ``jericho`` (a ``textworld``
dependency) runs it; TextWorld's ``.json`` game file supplies the true facts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentgym_credit.envs import snapshot as S
from agentgym_credit.envs.alfworld import gamecache, textworld_policy, textworld_snapshots, zguard
from agentgym_credit.envs.alfworld.logic import require_textworld
from agentgym_credit.envs.alfworld.statekeys import digest, fact_str, shuffled_keys
from agentgym_credit.envs.base import CreditEnv, resolve_task
from agentgym_credit.errors import EngineHalted, SnapshotError
from agentgym_credit.keys import stable_hash

CHALLENGE_SETTINGS: dict[str, dict[str, Any]] = {
    "tw-simple": {"rewards": "dense", "goal": "detailed", "test": False},
    "tw-cooking": {"recipe": 1, "take": 1, "go": 1, "open": True, "cook": False, "cut": False, "drop": False,
                   "recipe_seed": 0, "split": "train"},
    "tw-coin_collector": {"level": 5},
}
"""Default challenge settings (the ``tw-make`` flags); pass ``settings=`` to override some of them."""

SPLIT_OFFSETS = {"train": 0, "eval_in": 1, "eval_out": 2}

_PROMPT_STATUS = re.compile(r"\n*>[ \t]*(?:-= [^\n]*? =-[ \t]*\d+(?:/\d+)?)?\s*$")
"""The trailing prompt: ``>``, padding, and the status line ``-= Room =-score/moves`` (when shown)."""
_BANNER_CHARS = frozenset(" _|\\$/<>")
_BLANK_RUNS = re.compile(r"\n{3,}")
_PAYLOAD_FIELDS = frozenset({"index", "task_id", "t", "valid", "state_key", "game"})
"""A TextWorld snapshot's payload: game (index and id), step count, whether the last step was valid, the
state key it had (checked against the restored one) and the game itself (:mod:`textworld_snapshots`)."""
OPEN_GAMES = 4
"""Default number of started games an env keeps open (``open_games=``): switching between open games
costs no new ``textworld.start``; an env cycling through more games than that restarts the engine on
nearly every reset."""


def clean_observation(raw: str) -> str:
    """The game's text without banner, prompt padding and status line; blank-line runs collapsed.

    The status line's facts (room, score) are in ``state_key`` and ``info["score"]``; the move counter
    changed every step, so no two observations were ever equal (``inventory`` twice differed).
    """
    text = _PROMPT_STATUS.sub("", raw)
    lines = text.split("\n")
    i = 0
    while i < len(lines) and (not lines[i].strip() or set(lines[i]) <= _BANNER_CHARS):
        i += 1
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines[i:])).strip()


def textworld_cache_dir() -> Path:
    """Folder of the compiled-game cache."""
    env = os.environ.get("AGENTGYM_CREDIT_TEXTWORLD_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "agentgym_credit" / "textworld"


@contextlib.contextmanager
def _quiet_jericho():
    """Silence jericho's "not fully supported" warning: it cannot detect score/moves in TextWorld's story
    files, but TextWorld tracks them itself from the game's ``.json``, so the warning does not apply."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is not fully supported.*")
        yield


def _settings_tag(settings: Mapping[str, Any]) -> str:
    return hashlib.blake2b(json.dumps(dict(settings), sort_keys=True).encode(), digest_size=6).hexdigest()


def ensure_game(challenge: str, settings: Mapping[str, Any], seed: int, cache_dir: str | os.PathLike | None = None) -> Path:
    """Path of the compiled ``.z8`` game for ``(challenge, settings, seed)``, generating it if needed.

    Written to a temporary folder and moved into place, so concurrent workers never see half a game. A
    cached game is checked before it is returned (:mod:`~agentgym_credit.envs.alfworld.gamecache`: its
    Z-machine header and a tag keyed with the user's cache secret); one that fails is compiled again, with
    a ``GameCacheWarning``.
    """
    require_textworld()
    import textworld
    from textworld.challenges import CHALLENGES

    if challenge not in CHALLENGES:
        raise ValueError(f"unknown TextWorld challenge {challenge!r}; available: {sorted(CHALLENGES)}")
    folder = Path(cache_dir or textworld_cache_dir()) / challenge / _settings_tag(settings)
    path = folder / f"game_{seed}.z8"
    ident = json.dumps([challenge, dict(settings), int(seed)], sort_keys=True).encode()
    if path.is_file() and path.with_suffix(".json").is_file():
        why = gamecache.game_problem(path, ident)  # checked before jericho, which exits the process on a bad file
        if why is None:
            return path
        warnings.warn(f"TextWorld game cache {str(path)!r} ignored and compiled again: {why}",
                      gamecache.GameCacheWarning, stacklevel=2)
    folder.mkdir(parents=True, exist_ok=True)
    _, make, _ = CHALLENGES[challenge]
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        options = textworld.GameOptions()
        options.seeds = int(seed)
        options.path = str(Path(tmp) / path.name)
        options.file_ext = ".z8"
        options.force_recompile = True
        with _quiet_jericho():  # the challenges replay their walkthrough on a compiled copy while making
            game = make(settings=dict(settings), options=options)
            built = Path(textworld.generator.compile_game(game, options))
        why = gamecache.z_machine_problem(built.read_bytes())
        if why is not None:
            raise RuntimeError(f"TextWorld compiled a story file jericho cannot read ({why}): {built}")
        tag = gamecache.write_tag(built, ident)
        gamecache.put(built.with_suffix(".json"), path.with_suffix(".json"))
        gamecache.put(tag, path.with_suffix(".tag"))
        gamecache.put(built, path)  # the .z8 last: its presence means the game is complete
    return path


class TextWorldEnv(CreditEnv, engine="textworld"):  # not thread-safe: base.ENGINE_LOCKS
    """TextWorld's generated games (``tw-make`` challenges), compiled offline and cached.

    Game ``i`` of a split is the challenge's game with seed ``stable_hash("tw:<challenge>:<split>:<i>")
    mod 65521``: train, eval_in and eval_out draw different seeds from the same settings, except that for
    ``tw-cooking`` eval_out uses the challenge's own ``test`` split (foods and recipes unseen in train).
    ``reset(seed=s)`` draws a game index with the env's RNG; ``options={"task": i}`` picks one.

    Reward: the game's score increase times ``score_scale``, plus ``reward_success`` on winning;
    ``reward_invalid`` for a command outside the admissible list (a no-op: not sent to the game, the
    observation is repeated, ``action_valid=False``). ``terminated`` when the game is won or lost,
    ``truncated`` after ``max_steps``.

    Observations are cleaned (:func:`clean_observation`: no banner, prompt padding or status line);
    ``info["raw_obs"]`` keeps the game's own text of the step.

    ``open_games`` started games stay open (least recently used closed first; default
    :data:`OPEN_GAMES`): set it to the number of games an env cycles through to never restart one.

    Snapshots (``get_state``/``set_state``, in this or another process): the Z-machine through Jericho's
    own ``get_state``/``set_state`` and textworld's fact tracker rebuilt from the logic actions applied
    since reset (:mod:`~agentgym_credit.envs.alfworld.textworld_snapshots`); a restore checks that the
    rebuilt state has the saved ``state_key``.

    ``info``: ``state_key`` (``"textworld:" + digest`` of the game's sorted true facts, all of them —
    static ones such as room links never change within a game, so they only tie the key to the game —
    and of the score: the game pays each subgoal once, so "trunk opened and closed again" has the
    initial facts but not the initial future rewards; which subgoals have paid is known to the key only
    through their total, which tells them apart in games whose subgoals come in a chain, as tw-make's),
    ``obs_key``, ``admissible_actions``, ``task_id`` (``"<challenge>/<seed>"``), ``won``, ``lost``,
    ``score``, ``max_score``, ``goal`` (the objective), ``action_valid``, and ``expert_action`` (the next
    command of TextWorld's own winning policy) when ``expert=True``.
    """

    def __init__(
        self,
        challenge: str = "tw-simple",
        settings: Mapping[str, Any] | None = None,
        split: str = "train",
        num_games: int = 100,
        cache_dir: str | os.PathLike | None = None,
        score_scale: float = 1.0,
        reward_success: float = 0.0,
        reward_invalid: float = -0.1,
        expert: bool = False,
        max_steps: int = 50,
        open_games: int = OPEN_GAMES,
        render_mode: str | None = None,
    ):
        require_textworld()
        super().__init__(render_mode=render_mode, invalid_action_reward=reward_invalid)
        if challenge not in CHALLENGE_SETTINGS:
            raise ValueError(f"challenge must be one of {sorted(CHALLENGE_SETTINGS)}, got {challenge!r}")
        if split not in SPLIT_OFFSETS:
            raise ValueError(f"split must be one of {sorted(SPLIT_OFFSETS)}, got {split!r}")
        if num_games < 1 or max_steps < 1:
            raise ValueError("num_games and max_steps must be >= 1")
        if isinstance(open_games, bool) or not isinstance(open_games, int) or open_games < 1:
            raise ValueError(f"open_games must be an int >= 1 (started games kept open), got {open_games!r}")
        unknown = set(settings or {}) - set(CHALLENGE_SETTINGS[challenge])
        if unknown:
            raise ValueError(f"unknown {challenge} settings {sorted(unknown)}; known: {sorted(CHALLENGE_SETTINGS[challenge])}")
        self.challenge, self.split, self.num_games = challenge, split, int(num_games)
        self.settings = {**CHALLENGE_SETTINGS[challenge], **dict(settings or {})}
        if challenge == "tw-cooking" and "split" not in (settings or {}):
            # the cooking challenge's own split: its "test" foods and recipes never appear in "train"
            self.settings["split"] = "test" if split == "eval_out" else "train"
        self.cache_dir = Path(cache_dir) if cache_dir is not None else textworld_cache_dir()
        self.score_scale, self.reward_success = float(score_scale), float(reward_success)
        self.reward_invalid, self.expert, self.max_steps = float(reward_invalid), bool(expert), int(max_steps)
        self.open_games = int(open_games)
        self._index = 0
        self._env: Any = None
        self._open: dict[Path, Any] = {}  # started games, most recently used last
        self._raw = ""
        self._loaded: Path | None = None
        self._state: Any = None
        self._opening: dict[Path, tuple[str, tuple]] = {}  # each game's text and Z-machine state right after a reset
        self._before: tuple | None = None  # the Z-machine state before the last command sent (None: none since reset)
        self._command = ""
        self._paths: dict[tuple, Path] = {}  # game (index, settings) -> its checked story file (checked again to start it)
        self._task_id = ""
        self._t = 0

    def game_seed(self, index: int) -> int:
        """Generation seed of game ``index`` of this env's split."""
        return stable_hash(f"tw:{self.challenge}:{self.split}:{int(index)}") % 65521

    def _game_index(self, task_id: str) -> int | None:
        """Index of a ``"<challenge>/<seed>"`` task id among this env's games, or ``None``."""
        for i in range(self.num_games):
            if f"{self.challenge}/{self.game_seed(i)}" == task_id:
                return i
        return None

    def _load(self, index: int) -> None:
        import textworld

        seed = self.game_seed(index)
        key = (index, self.challenge, str(self.cache_dir), repr(sorted(self.settings.items())))
        path = self._paths.get(key)
        if path is None or (path != self._loaded and path not in self._open):  # a started game runs from memory
            path = self._paths[key] = ensure_game(self.challenge, self.settings, seed, self.cache_dir)
        if self._loaded != path:
            env = self._open.pop(path, None)
            if env is None:
                textworld_policy.install()  # the quests' policy tracked for less work, the same answers
                infos = textworld.EnvInfos(won=True, lost=True, admissible_commands=True, facts=True, score=True,
                                           max_score=True, objective=True, policy_commands=self.expert)
                with _quiet_jericho():
                    env = textworld.start(str(path), request_infos=infos)
                textworld_snapshots.memo_names(textworld_snapshots.wrappers(env)["tracker"])
                while len(self._open) >= self.open_games:
                    self._open.pop(next(iter(self._open))).close()
            self._open[path] = self._env = env
            self._loaded = path
        self._task_id = f"{self.challenge}/{seed}"

    def _state_key(self, facts: Any) -> str:
        lines = sorted(fact_str(f) for f in facts)
        score = int(self._state["score"])  # subgoals already paid: not in the facts (see the class docstring)
        return "textworld:" + digest(f"{self._task_id}\nscore={score}\n" + "\n".join(lines))

    def equivalent_state_keys(self, rng: Any, n: int) -> list[str]:
        """``state_key`` of ``n`` shuffled orderings of the current facts (all must be equal)."""
        return shuffled_keys(self._state_key, self._state["facts"], rng, n)

    def _info(self, valid: bool = True) -> dict[str, Any]:
        st = self._state
        info = {
            "state_key": self._state_key(st["facts"]),
            "admissible_actions": sorted(set(st["admissible_commands"])),
            "task_id": self._task_id,
            "won": bool(st["won"]),
            "lost": bool(st["lost"]),
            "score": int(st["score"]),
            "max_score": int(st["max_score"]),
            "goal": st["objective"],
            "action_valid": valid,
            "step": self._t,
            "raw_obs": self._raw,
        }
        if self.expert:
            policy = st["policy_commands"] or []
            info["expert_action"] = policy[0] if policy and not st["won"] else None
        return info

    def _reset_impl(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        task = options.get("task")
        if task is None:
            index = int(self.np_random.integers(self.num_games))
        else:
            index = resolve_task(task, self.num_games, self._game_index, example=f"{self.challenge}/<seed>")
        self._load(index)
        self._index = index
        self._state = self._env.reset()
        self._opening[self._loaded] = (self._state["raw"], textworld_snapshots.before_step(self._env))
        textworld_snapshots.remember_initial(self._env)
        self._before, self._command = None, ""
        textworld_snapshots.record_actions(textworld_snapshots.wrappers(self._env)["tracker"])
        self._t = 0
        self._raw = self._state["feedback"]
        return clean_observation(self._raw), self._info()

    def _step_impl(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        command = " ".join(action.lower().split())
        self._t += 1
        truncated = self._t >= self.max_steps
        if command not in self._state["admissible_commands"]:
            return self._last_obs, self.reward_invalid, False, truncated, self._info(valid=False)
        before = int(self._state["score"])
        z = textworld_snapshots.before_step(self._env)
        with zguard.watch(zguard.STEP_SECONDS, "a TextWorld step"):  # a disposable worker's guard; else nothing
            self._state, _, done = self._env.step(command)
        if self._halted():
            self._drop_game()
            self._needs_reset = True
            raise EngineHalted(f"TextWorld game {self._task_id} halted on {command!r} (jericho: \"Emulator halted due "
                               "to runtime error.\"); the engine was dropped and is rebuilt by the next reset or "
                               "set_state")
        self._before, self._command = z, command
        self._raw = self._state["feedback"]
        won = bool(self._state["won"])
        reward = (int(self._state["score"]) - before) * self.score_scale + (self.reward_success if won else 0.0)
        terminated = won or bool(self._state["lost"]) or bool(done)
        return clean_observation(self._raw), reward, terminated, truncated and not terminated, self._info()

    def _snapshot_config(self) -> Any:
        return {
            "challenge": self.challenge, "settings": self.settings, "split": self.split, "num_games": self.num_games,
            "score_scale": self.score_scale, "reward_success": self.reward_success,
            "reward_invalid": self.reward_invalid, "expert": self.expert, "max_steps": self.max_steps,
        }

    def _snapshot_payload(self) -> Any:
        return {"index": self._index, "task_id": self._task_id, "t": self._t,
                "valid": bool(self._last_info["action_valid"]), "state_key": self._last_info["state_key"],
                "game": textworld_snapshots.save(self._env, self._before, self._command)}

    def _restore_snapshot(self, payload: Any) -> tuple[str, dict[str, Any]]:
        """Every field checked; observation, facts, score, admissible commands and expert action come from
        the restored game (the saved ``state_key`` only confirms it: a changed game file is refused)."""
        p = S.fields(payload, "TextWorldEnv", _PAYLOAD_FIELDS)
        index = S.nat(p["index"], "game index", self.num_games)
        task_id = S.text(p["task_id"], "task id", 200)
        if f"{self.challenge}/{self.game_seed(index)}" != task_id:
            raise SnapshotError(f"TextWorld snapshot is of game {task_id!r:.80}, not game {index} of this env")
        t, valid = S.nat(p["t"], "step", self.max_steps), S.flag(p["valid"], "valid")
        key = S.text(p["state_key"], "state key", 200)
        if self._env is not None and self._halted():
            self._drop_game()  # a halted engine is never reused (issue 43 D3): started again below
        self._load(index)
        self._index = index
        layers = textworld_snapshots.wrappers(self._env)
        if not layers["jericho"]._reset or layers["tracker"]._game_progression is None:
            self._reset_game()  # started, never reset: wrappers not set up yet
        try:
            self._state, self._before, self._command = textworld_snapshots.restore(
                self._env, p["game"], max_actions=8 * self.max_steps, reset_raw=lambda: self._opening_of()[0],
                reset_state=lambda: self._opening_of()[1])
        except SnapshotError:
            if self._halted():
                self._drop_game()
            raise
        if int(self._state["moves"]) > t:
            raise SnapshotError(f"TextWorld snapshot: the interpreter counts {self._state['moves']} moves in {t} steps")
        self._t, self._raw = t, self._state["feedback"]
        info = self._info(valid=valid)
        if info["state_key"] != key:
            raise SnapshotError("TextWorld snapshot restored to another state than the one saved (the game file "
                                "changed since?)")
        return clean_observation(self._raw), info

    def _reset_game(self) -> None:
        self._opening[self._loaded] = (self._env.reset()["raw"], textworld_snapshots.before_step(self._env))
        textworld_snapshots.remember_initial(self._env)

    def _opening_of(self) -> tuple[str, tuple]:
        """The loaded game's text and Z-machine state right after a reset (a reset of it learns them; the game
        file is verified, so they are the same every time)."""
        if self._loaded not in self._opening:
            self._reset_game()
        return self._opening[self._loaded]

    def _halted(self) -> bool:
        return bool(textworld_snapshots.wrappers(self._env)["jericho"]._jericho._emulator_halted())

    def _drop_game(self) -> None:
        """Close the loaded game's engine for good (halted: never reused); the next load starts it afresh."""
        env = self._open.pop(self._loaded, None) if self._loaded is not None else None
        with contextlib.suppress(Exception):
            (env or self._env).close()
        self._env, self._loaded, self._before, self._command = None, None, None, ""

    def close(self) -> None:
        for env in self._open.values():
            env.close()
        self._open.clear()
        self._env = None
        self._loaded = None
        super().close()


__all__ = ["TextWorldEnv", "CHALLENGE_SETTINGS", "ensure_game", "textworld_cache_dir", "clean_observation", "OPEN_GAMES"]
