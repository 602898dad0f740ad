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
import json
import os
import uuid
import zlib
from collections import OrderedDict
from typing import Any

import numpy as np

from agentgym_credit.envs import snapshot as S
from agentgym_credit.errors import SnapshotError

MEMO_SIZE = 1024
"""Game progressions a process keeps for restoring its own snapshots (least recently used evicted first)."""

_NONCE = uuid.uuid4().hex[:16]
_COUNTER = itertools.count()
_MEMO: OrderedDict[str, Any] = OrderedDict()

_ROLES = {"StateTracking": "tracker", "Inform7Data": "i7", "GameData": "data", "JerichoEnv": "jericho"}
_STATE_FIELDS = ("raw", "feedback", "score", "moves", "last_command")


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


def _copy_progression(progression: Any) -> Any:
    """``progression.copy()`` without its wasted start: textworld's copy runs ``__init__``, which lists the
    actions applicable in the game's *initial* state (70 % of a restore on tw-simple) and then replaces
    them. Same fields as that copy (textworld 1.7); any other version uses its own ``copy``."""
    fields = ("game", "state", "_valid_actions", "quest_progressions")
    if not all(hasattr(progression, f) for f in fields) or set(vars(progression)) - {*fields, "update", "agc_actions"}:
        return progression.copy()
    new = object.__new__(type(progression))
    new.game, new.state, new._valid_actions = progression.game, progression.state.copy(), progression._valid_actions
    new.quest_progressions = [qp.copy() for qp in progression.quest_progressions]
    return new


def _story(path: str, size: int) -> tuple[int, np.ndarray]:
    """The story file's length and first ``size`` bytes (what the RAM is stored as a XOR with); cached
    per file version (a game compiled again at the same path has another modification time)."""
    st = os.stat(path)
    return st.st_size, np.frombuffer(_story_prefix(path, size, st.st_mtime_ns, st.st_size), dtype=np.uint8)


@functools.lru_cache(maxsize=64)
def _story_prefix(path: str, size: int, mtime_ns: int, length: int) -> bytes:
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
    _, base = _story(jericho.gamefile, len(ram))
    tracker = layers["tracker"]
    actions = getattr(tracker._game_progression, "agc_actions", None)
    if actions is None:
        raise SnapshotError("TextWorld snapshot: the game's actions were not recorded since its reset")
    state = tracker.state
    token = f"{_NONCE}:{next(_COUNTER)}"
    _MEMO[token] = (_copy_progression(tracker._game_progression), tuple(actions))
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
        "actions": json.dumps([a.serialize() for a in actions], separators=(",", ":")),  # one text field
        "state": {k: state.get(k) for k in _STATE_FIELDS},  # moves: an int once the game is reset
    }


PAYLOAD_FIELDS = frozenset({"token", "ram", "ram_size", "stack", "regs", "rng", "narrative", "actions", "state"})
"""The ``game`` part of a TextWorld snapshot: this process's memo token, the Z-machine state (RAM as a
compressed XOR with the story file, stack, registers ``pc sp fp frame_count opcode``, RNG, pending
narrative), the logic actions applied since reset (textworld's own serialization, as one JSON text), and
the text fields of the step's game state."""

_MAX_B64 = 1 << 20


def _blob(value: Any, what: str) -> bytes:
    try:
        return _unb64(S.text(value, what, _MAX_B64))
    except (ValueError, zlib.error) as exc:
        raise SnapshotError(f"TextWorld snapshot payload: {what} is not compressed base64 data ({exc})") from None


def _parse(data: Any, frotz: Any, story_size: int, max_actions: int) -> dict[str, Any]:
    """Every field of a snapshot's ``game`` part checked (types, sizes, ranges); the Z-machine registers
    must point inside the story file and the stack (a bad ``pc`` would crash the interpreter)."""
    p = S.fields(data, "TextWorld", PAYLOAD_FIELDS)
    size = S.nat(p["ram_size"], "RAM size")
    ram = np.frombuffer(_blob(p["ram"], "RAM"), dtype=np.uint8)
    stack = np.frombuffer(_blob(p["stack"], "stack"), dtype=np.uint8).copy()
    if size != len(ram) or size != frotz.frotz_lib.getRAMSize() or len(stack) != frotz.frotz_lib.getStackSize():
        raise SnapshotError("TextWorld snapshot was taken from another story file (memory sizes differ)")
    regs, rng = p["regs"], p["rng"]
    if regs.__class__ is not list or len(regs) != 5 or rng.__class__ is not list or len(rng) != 3:
        raise SnapshotError("TextWorld snapshot payload: regs must list 5 ints and rng 3")
    pc = S.nat(regs[0], "pc", story_size)
    sp, fp = (S.nat(r, name, len(stack) + 1) for r, name in zip(regs[1:3], ("sp", "fp")))
    frame_count, opcode = S.nat(regs[3], "frame count", 1 << 16), S.nat(regs[4], "opcode", 1 << 16)
    if any(r.__class__ is not int or abs(r) >= 1 << 63 for r in rng):
        raise SnapshotError("TextWorld snapshot payload: rng must be three 64-bit ints")
    try:
        narrative = base64.b64decode(S.text(p["narrative"], "narrative", _MAX_B64).encode("ascii"), validate=True)
    except ValueError as exc:
        raise SnapshotError(f"TextWorld snapshot payload: narrative is not base64 ({exc})") from None
    try:
        actions = json.loads(S.text(p["actions"], "actions", _MAX_B64))
    except ValueError as exc:
        raise SnapshotError(f"TextWorld snapshot payload: actions are not JSON ({exc})") from None
    if actions.__class__ is not list or len(actions) > max_actions:
        raise SnapshotError(f"TextWorld snapshot payload: actions must be a list of at most {max_actions}")
    st = S.fields(p["state"], "TextWorld game state", set(_STATE_FIELDS))
    fields = {"raw": S.text(st["raw"], "raw text", 100_000), "feedback": S.text(st["feedback"], "feedback", 100_000),
              "score": S.nat(st["score"], "score"), "moves": S.nat(st["moves"], "moves"),
              "last_command": S.text(st["last_command"], "last command", 1_000, optional=True)}
    return {"token": S.text(p["token"], "token", 100), "ram": ram, "stack": stack, "regs": (pc, sp, fp, frame_count, opcode),
            "rng": tuple(rng), "narrative": narrative, "actions": actions, "fields": fields}


def restore(env: Any, data: Any, max_actions: int = 10_000) -> Any:
    """Put the started game ``env`` (the same story file as the saved one, reset at least once) into the
    state ``data`` describes (every field checked first, :data:`PAYLOAD_FIELDS`); return textworld's game
    state of that step (as a step returns it)."""
    from textworld.core import GameState
    from textworld.generator.game import GameProgression
    from textworld.logic import Action

    layers = wrappers(env)
    jericho, tracker, i7, gdata = layers["jericho"], layers["tracker"], layers["i7"], layers["data"]
    frotz = jericho._jericho
    story_size, base = _story(jericho.gamefile, frotz.frotz_lib.getRAMSize())
    d = _parse(data, frotz, story_size, max_actions)
    token, fields = d["token"], d["fields"]
    frotz.set_state((np.bitwise_xor(d["ram"], base), d["stack"], *d["regs"], d["rng"], d["narrative"]))

    saved = _MEMO.get(token)
    if saved is not None and saved[0].game is tracker._game and len(saved[1]) == len(d["actions"]):  # saved here
        _MEMO.move_to_end(token)
        progression, actions = _copy_progression(saved[0]), list(saved[1])
    else:  # another process (or evicted): re-apply the logic actions on a fresh progression
        try:
            actions = [Action.deserialize(a) for a in d["actions"]]
        except Exception as exc:  # textworld raises whatever its dict access meets
            raise SnapshotError(f"TextWorld snapshot payload: an action does not parse ({type(exc).__name__})") from None
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


__all__ = ["wrappers", "record_actions", "save", "restore", "MEMO_SIZE", "PAYLOAD_FIELDS"]
