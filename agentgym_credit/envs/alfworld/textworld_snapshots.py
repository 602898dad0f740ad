"""Snapshots of a running TextWorld game: Jericho's own save/restore plus textworld's state tracker.

What lives here:

- :func:`wrappers` — the layers of an env that ``textworld.start`` returned for a ``.z8`` game
  (``TWInform7`` > ``StateTracking`` > ``Inform7Data`` > ``GameData`` > ``JerichoEnv``), by role;
- :func:`record_actions` — make the state tracker's game progression log the logic actions it applies
  (the tracker's only history: facts, admissible commands and the winning policy all follow from them);
- :func:`save` — the game as plain JSON data: the Z-machine state from ``FrotzEnv.get_state`` (its RAM
  stored as the XOR with the story file's first bytes, zlib-compressed: a few hundred bytes instead of
  ~40 kB), the logged logic actions, and the text fields of the current step;
- :func:`restore` — the inverse, in this or another process: ``FrotzEnv.set_state``, then a new game
  progression with the logged actions re-applied (logic only: no Z-machine step, no text parsed), then
  textworld's own ``_gather_infos`` rebuild the step's facts, admissible commands and policy;
- :data:`MEMO_SIZE` — how many game progressions a process keeps for its own snapshots (a restore in the
  process that saved copies the remembered progression instead of re-applying the actions: re-applying
  costs what the steps cost, ~15 ms an action on tw-simple, mostly textworld shortening its policy).

Why both halves. The Z-machine holds what the game will *say*; textworld's ``StateTracking`` holds
what the env *knows* (true facts, admissible commands, the winning policy), rebuilt from the Inform 7
events of each step with no way to set it. Jericho alone would restore a game whose facts were those of
the last step played; replaying the logged actions on a fresh progression gives the snapshot's.
"""

from __future__ import annotations

import base64
import functools
import itertools
import uuid
import zlib
from collections import OrderedDict
from typing import Any

import numpy as np

from agentgym_credit.errors import SnapshotError

MEMO_SIZE = 1024
"""Game progressions a process keeps for restoring its own snapshots (least recently used evicted first)."""

_NONCE = uuid.uuid4().hex[:16]
_COUNTER = itertools.count()
_MEMO: OrderedDict[str, Any] = OrderedDict()

_ROLES = {"StateTracking": "tracker", "Inform7Data": "i7", "GameData": "data", "JerichoEnv": "jericho"}
_STATE_FIELDS = ("raw", "feedback", "score", "moves", "done", "last_command")


def wrappers(env: Any) -> dict[str, Any]:
    """The layers of a started ``.z8`` game by role: ``tracker``, ``i7``, ``data``, ``jericho``."""
    found: dict[str, Any] = {}
    layer = env
    while layer is not None:
        role = _ROLES.get(type(layer).__name__)
        if role is not None:
            found[role] = layer
        layer = getattr(layer, "_wrapped_env", None)
    missing = sorted(set(_ROLES.values()) - set(found))
    if missing:
        raise SnapshotError(f"this TextWorld game is not a tracked Inform 7 game (no {', '.join(missing)} layer)")
    return found


def record_actions(tracker: Any) -> list[Any]:
    """Log every logic action the tracker's current game progression applies; return the (live) log.

    The progression is made anew by every ``reset``: call this after each one. The log is kept on the
    progression object itself, so it goes when the progression does.
    """
    progression = tracker._game_progression
    log: list[Any] = []
    apply = progression.update

    @functools.wraps(apply)
    def update(action: Any) -> None:
        log.append(action)
        apply(action)

    progression.update = update
    progression.agc_actions = log
    return log


@functools.lru_cache(maxsize=64)
def _story_prefix(path: str, size: int) -> bytes:
    with open(path, "rb") as fh:
        data = fh.read(size)
    return data + b"\0" * (size - len(data))


def _b64(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data, 6)).decode("ascii")


def _unb64(text: str) -> bytes:
    return zlib.decompress(base64.b64decode(text.encode("ascii"), validate=True))


def save(env: Any) -> dict[str, Any]:
    """The running game ``env`` (what ``textworld.start`` returned) as plain JSON data."""
    layers = wrappers(env)
    jericho = layers["jericho"]
    ram, stack, pc, sp, fp, frame_count, opcode, rng, narrative = jericho._jericho.get_state()
    base = np.frombuffer(_story_prefix(jericho.gamefile, len(ram)), dtype=np.uint8)
    tracker = layers["tracker"]
    actions = getattr(tracker._game_progression, "agc_actions", None)
    if actions is None:
        raise SnapshotError("TextWorld snapshot: the game's actions were not recorded since its reset")
    state = tracker.state
    token = f"{_NONCE}:{next(_COUNTER)}"
    _MEMO[token] = tracker._game_progression.copy()
    while len(_MEMO) > MEMO_SIZE:
        _MEMO.popitem(last=False)
    return {
        "token": token,
        "ram": _b64(np.bitwise_xor(ram, base).tobytes()),
        "ram_size": len(ram),
        "stack": _b64(stack.tobytes()),
        "regs": [int(pc), int(sp), int(fp), int(frame_count), int(opcode)],
        "rng": [int(x) for x in rng],
        "narrative": base64.b64encode(bytes(narrative)).decode("ascii"),
        "actions": [a.serialize() for a in actions],
        "state": {k: state.get(k) for k in _STATE_FIELDS},
    }


def restore(env: Any, data: Any) -> Any:
    """Put the started game ``env`` (the same story file as the saved one, reset at least once) into the
    state ``data`` describes; return textworld's game state of that step (as a step returns it)."""
    from textworld.core import GameState
    from textworld.generator.game import GameProgression
    from textworld.logic import Action

    layers = wrappers(env)
    jericho, tracker, i7, gdata = layers["jericho"], layers["tracker"], layers["i7"], layers["data"]
    try:
        size = int(data["ram_size"])
        ram = np.frombuffer(_unb64(data["ram"]), dtype=np.uint8)
        stack = np.frombuffer(_unb64(data["stack"]), dtype=np.uint8).copy()
        pc, sp, fp, frame_count, opcode = (int(x) for x in data["regs"])
        rng = tuple(int(x) for x in data["rng"])
        narrative = base64.b64decode(data["narrative"].encode("ascii"), validate=True)
        actions = [Action.deserialize(a) for a in data["actions"]]
        fields = {k: data["state"][k] for k in _STATE_FIELDS}
        token = str(data["token"])
    except (KeyError, TypeError, ValueError, AttributeError, zlib.error) as exc:
        raise SnapshotError(f"TextWorld snapshot payload is malformed: {type(exc).__name__}: {exc}") from exc
    frotz = jericho._jericho
    if size != len(ram) or size != frotz.frotz_lib.getRAMSize() or len(stack) != frotz.frotz_lib.getStackSize() or len(rng) != 3:
        raise SnapshotError("TextWorld snapshot was taken from another story file (memory sizes differ)")
    base = np.frombuffer(_story_prefix(jericho.gamefile, size), dtype=np.uint8)
    frotz.set_state((np.bitwise_xor(ram, base), stack, pc, sp, fp, frame_count, opcode, rng, narrative))

    saved = _MEMO.get(token)
    if saved is not None and saved.game is tracker._game:  # saved here, from this very game object
        _MEMO.move_to_end(token)
        progression = saved.copy()
    else:  # another process (or evicted): re-apply the logic actions on a fresh progression
        progression = GameProgression(tracker._game, track_quests=tracker._game_progression.tracking_quests)
        for action in actions:
            if action not in progression.valid_actions:
                raise SnapshotError(f"TextWorld snapshot replay: {action.name} is not valid in the game at that point")
            progression.update(action)
    tracker._game_progression = progression
    record_actions(tracker).extend(actions)
    tracker._last_action = actions[-1] if actions else None
    tracker._moves = len(actions)
    tracker._current_winning_policy = tracker._previous_winning_policy = progression.winning_policy

    state = GameState()
    state.update(fields)
    jericho.state = gdata.state = i7.state = tracker.state = state
    i7._prev_state = None  # only fills a tracked info the next step's text lacks; the state above has them all
    gdata._gather_infos()
    tracker._gather_infos()
    state["done"] = bool(state["won"] or state["lost"])
    return state


__all__ = ["wrappers", "record_actions", "save", "restore", "MEMO_SIZE"]
