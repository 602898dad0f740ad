"""Snapshots of a running TextWorld game: Jericho's own save/restore plus textworld's state tracker.

What lives here:

- :func:`wrappers` — the layers of an env that ``textworld.start`` returned for a ``.z8`` game
  (``TWInform7`` > ``StateTracking`` > ``Inform7Data`` > ``GameData`` > ``JerichoEnv``), by role;
- :func:`memo_names` — make the tracker remember each fact's and action's text (pure functions of the game);
- :func:`record_actions` — make the state tracker's game progression log the logic actions it applies
  (the tracker's only history: facts, admissible commands and the winning policy all follow from them);
- :func:`save` — the game as plain JSON data: the Z-machine state from ``FrotzEnv.get_state`` (its RAM
  stored as the XOR with the story file's first bytes, zlib-compressed: a few hundred bytes instead of
  ~40 kB), and the logged logic actions — nothing derived;
- :func:`restore` — the inverse, in this or another process: every field checked against the story file
  and the interpreter's limits (:mod:`~agentgym_credit.envs.alfworld.zmachine`; sizes capped before
  decompressing or parsing), ``FrotzEnv.set_state``, the step's text, score and move count read from the
  restored interpreter's narrative, a game progression with the logged actions re-applied (logic only: no
  Z-machine step, no text parsed), then textworld's own ``_gather_infos`` rebuild the step's facts,
  admissible commands and policy;
- :data:`MEMO_SIZE` — how many game progressions a process keeps, keyed by the action log's text: its own
  snapshots' and every log it has re-applied once (a restore whose log is there copies the progression
  instead of re-applying the actions: re-applying costs what the steps cost, a few ms an action on
  tw-simple, mostly textworld shortening its policy; so only the first restore of a foreign snapshot pays).

Why both halves. The Z-machine holds what the game will *say*; textworld's ``StateTracking`` holds
what the env *knows* (true facts, admissible commands, the winning policy), rebuilt from the Inform 7
events of each step with no way to set it. Jericho alone would restore a game whose facts were those of
the last step played; replaying the logged actions on a fresh progression gives the snapshot's.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import zlib
from collections import OrderedDict
from typing import Any

import numpy as np

from agentgym_credit.envs import snapshot as S
from agentgym_credit.envs.alfworld import textworld_quests, zguard, zmachine
from agentgym_credit.errors import SnapshotError

MEMO_SIZE = 1024
"""Game progressions a process keeps for restoring its own snapshots (least recently used evicted first)."""

_MEMO: OrderedDict[tuple[str, bytes], Any] = OrderedDict()

_ROLES = {"StateTracking": "tracker", "Inform7Data": "i7", "GameData": "data", "JerichoEnv": "jericho"}


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


_INITIAL: dict[tuple[int, bool], tuple[Any, Any]] = {}
"""Each started game's progression as reset (keyed by the game object, which it keeps alive: one per open game)."""


def remember_initial(env: Any) -> None:
    """Remember the started game ``env``'s progression right after a reset: a replay starts from a copy of it
    instead of building it again (half a first restore's cost on tw-coin_collector)."""
    tracker = wrappers(env)["tracker"]
    progression = tracker._game_progression
    if len(_INITIAL) > 64:
        _INITIAL.clear()
    _INITIAL[(id(tracker._game), progression.tracking_quests)] = (tracker._game, _copy_progression(progression))


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


def memo_names(tracker: Any) -> None:
    """Make the tracker's Inform 7 naming remember what it computed: the human-readable form of each fact
    and the command of each action (both pure functions of the game; textworld recomputes them for every
    fact and admissible action at every step and restore, most of a restore's cost once its progression
    is remembered). Call once per started game."""
    inform7 = tracker._inform7
    if inform7 is None or getattr(inform7, "agc_memo", False):
        return
    facts: dict[Any, Any] = {}
    commands: dict[Any, str] = {}
    fact_name, command_names = inform7.get_human_readable_fact, inform7.gen_commands_from_actions

    def get_human_readable_fact(fact: Any) -> Any:
        found = facts.get(fact)
        if found is None:
            found = facts[fact] = fact_name(fact)
        return found

    def gen_commands_from_actions(actions: Any) -> list[str]:
        out = []
        for action in actions:
            found = commands.get(action)
            if found is None:
                found = commands[action] = command_names([action])[0]
            out.append(found)
        return out

    inform7.get_human_readable_fact = get_human_readable_fact
    inform7.gen_commands_from_actions = gen_commands_from_actions
    inform7.agc_memo = True


def _copy_progression(progression: Any, game: Any = None, quests: bool = True) -> Any:
    """``progression.copy()`` without its wasted start: textworld's copy runs ``__init__``, which lists the
    actions applicable in the game's *initial* state (70 % of a restore on tw-simple) and then replaces
    them. Same fields as that copy (textworld 1.7); any other version uses its own ``copy``. ``game``: the
    copy's game (another env's ``Game`` loaded from the same verified file; default the progression's); ``quests``:
    ``False`` leaves the copy's quest progressions empty (it tracks no quest)."""
    fields = ("game", "state", "_valid_actions", "quest_progressions")
    if not all(hasattr(progression, f) for f in fields) or set(vars(progression)) - {*fields, "update", "agc_actions"}:
        new = progression.copy()
        new.game = game or new.game
        if not quests:
            new.quest_progressions = []
        return new
    new = object.__new__(type(progression))
    new.game, new.state, new._valid_actions = game or progression.game, progression.state.copy(), progression._valid_actions
    new.quest_progressions = [_copy_quest(qp) for qp in progression.quest_progressions] if quests else []
    return new


_QUEST_FIELDS = {"quest", "kb", "nb_completions", "win_events", "fail_events"}
_EVENT_FIELDS = {"_kb", "event", "_triggered", "_untriggerable", "_policy", "_tree"}


def _copy_quest(qp: Any) -> Any:
    """``QuestProgression.copy()`` without rebuilding every event's tree from scratch only to replace it (the
    same fields; textworld 1.7; another version uses its own ``copy``)."""
    events = [*qp.win_events, *qp.fail_events]
    if set(vars(qp)) != _QUEST_FIELDS or any(set(vars(e)) != _EVENT_FIELDS for e in events):
        return qp.copy()
    new = object.__new__(type(qp))
    new.quest, new.kb, new.nb_completions = qp.quest, qp.kb, qp.nb_completions
    new.win_events = [_copy_event(e) for e in qp.win_events]
    new.fail_events = [_copy_event(e) for e in qp.fail_events]
    return new


def _copy_event(ep: Any) -> Any:
    new = object.__new__(type(ep))
    new._kb, new.event, new._triggered, new._untriggerable = ep._kb, ep.event, ep._triggered, ep._untriggerable
    new._policy, new._tree = ep._policy, ep._tree.copy()
    return new


def _story(path: str, size: int) -> tuple[int, np.ndarray, bytes]:
    """The story file's length, its first ``size`` bytes (what the RAM is stored as a XOR with) and all its
    bytes (where the pc must be a resume point); cached per file version (a game compiled again at the same
    path has another modification time)."""
    st = os.stat(path)
    return (st.st_size, *_story_bytes(path, size, st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=64)
def _story_bytes(path: str, size: int, mtime_ns: int, length: int) -> tuple[np.ndarray, bytes]:
    with open(path, "rb") as fh:
        whole = fh.read(length)
    return np.frombuffer(whole[:size] + b"\0" * (size - len(whole[:size])), dtype=np.uint8), whole


def _b64(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data, 6)).decode("ascii")


def _actions_key(gamefile: str, text: str, quests: bytes | None) -> tuple[str, bytes]:
    """Memo key of a game progression: the story file (verified before it is loaded:
    :mod:`~agentgym_credit.envs.alfworld.gamecache`) and a digest of the action log's exact text and of the
    stored quest progressions (``None``: none stored)."""
    h = hashlib.blake2b(text.encode(), digest_size=16)
    h.update(b"\0" if quests is None else b"\1" + quests)
    return gamefile, h.digest()


def _remember(key: tuple[str, bytes], progression: Any, actions: tuple, policy: Any) -> None:
    _MEMO[key] = (progression, actions, policy)
    _MEMO.move_to_end(key)
    while len(_MEMO) > MEMO_SIZE:
        _MEMO.popitem(last=False)


AFTER_SIZE = 256
"""States whose last command this process's interpreter played (saved here, or restored once) and whose result is
remembered (~40 kB each): restoring them again sets it instead of replaying the command (the same answer)."""

_AFTER: OrderedDict[bytes, tuple] = OrderedDict()


def _after(digest: bytes, frotz: Any) -> None:
    _AFTER[digest] = tuple(frotz.get_state())
    _AFTER.move_to_end(digest)
    while len(_AFTER) > AFTER_SIZE:
        _AFTER.popitem(last=False)


def before_step(env: Any) -> tuple:
    """The Z-machine state of the started game ``env`` now (call it just before a command is sent: a snapshot
    stores the state before the last command and the command, and a restore replays that one command)."""
    return tuple(wrappers(env)["jericho"]._jericho.get_state())


def _digest(ram: Any, stack: Any, regs: Any, rng: Any, command: str) -> bytes:
    h = hashlib.blake2b(digest_size=16, person=b"agc-zstate")
    h.update(np.ascontiguousarray(ram, dtype=np.uint8).tobytes())
    h.update(np.ascontiguousarray(stack, dtype=np.uint8).tobytes())
    h.update(json.dumps([[int(r) for r in regs], [int(x) for x in rng], command]).encode())
    return h.digest()


def save(env: Any, before: tuple | None = None, command: str = "") -> dict[str, Any]:
    """The running game ``env`` (what ``textworld.start`` returned) as plain JSON data: the Z-machine state
    ``before`` the last command sent to it (:func:`before_step`) and that ``command``; at move 0 (no command
    sent since the reset) ``before`` is ``None`` and the state saved is the game as reset."""
    layers = wrappers(env)
    jericho = layers["jericho"]
    if before is None:
        before, command = tuple(jericho._jericho.get_state()), ""
    ram, stack, pc, sp, fp, frame_count, opcode, rng, _ = before
    _, base, _ = _story(jericho.gamefile, len(ram))
    tracker = layers["tracker"]
    actions = getattr(tracker._game_progression, "agc_actions", None)
    if actions is None:
        raise SnapshotError("TextWorld snapshot: the game's actions were not recorded since its reset")
    log = json.dumps([a.serialize() for a in actions], separators=(",", ":"))  # one text field
    quests = textworld_quests.dump(tracker._game_progression, actions)
    quests = None if quests is None else quests.encode()
    _remember(_actions_key(jericho.gamefile, log, quests), _copy_progression(tracker._game_progression), tuple(actions),
              tracker._current_winning_policy)
    regs = [int(pc), int(sp), int(fp), int(frame_count), int(opcode)]
    digest = _digest(ram, stack, regs, rng, command)
    zguard.vouch(digest)  # this process's own interpreter made it
    if command:  # what the command led to, as this interpreter answered it: an own restore sets it, no replay
        _after(digest, jericho._jericho)
    return {
        "ram": _b64(np.bitwise_xor(ram, base).tobytes()),
        "ram_size": len(ram),
        "stack": _b64(stack.tobytes()),
        "regs": regs,
        "rng": [int(x) for x in rng],
        "command": command,
        "actions": log,
        "quests": None if quests is None else _b64(quests),
    }


PAYLOAD_FIELDS = frozenset({"ram", "ram_size", "stack", "regs", "rng", "command", "actions", "quests"})
"""The ``game`` part of a TextWorld snapshot: the Z-machine state *before the last command sent to the game*
(RAM as a compressed XOR with the story file, stack, registers ``pc sp fp frame_count opcode``, RNG), that
``command`` (``""`` at move 0: the state is then the game as reset) and the logic actions applied since reset
(textworld's own serialization, as one JSON text) and, when the game tracks quests (expert infos on), the quest
progressions those actions led to (:mod:`~agentgym_credit.envs.alfworld.textworld_quests`: path dependent, so
carried; compressed JSON, or ``None``: then the replay tracks the quests itself). No other derived state is stored, no text either: a restore sets
the state and plays the command, so the step's text, score and move count are what the interpreter answers
(issue 43 D4: a sealed narrative set the text the agent saw); facts and admissible commands come from the
replayed actions."""

MAX_COMMAND = 190
"""Longest command a snapshot may carry (jericho's input buffer holds 198 bytes)."""

_MAX_B64 = 1 << 20
_TRACKED = ["moves", "score"]
"""The extra infos textworld's ``Inform7Data`` tracks for our requests (in its order)."""


def _blob(value: Any, what: str, size: int) -> bytes:
    """Base64 zlib data that inflates to exactly ``size`` bytes (the cap checked while inflating)."""
    value = S.text(value, what, _MAX_B64)
    try:
        packed = base64.b64decode(value.encode("ascii"), validate=True)
    except ValueError as exc:
        raise SnapshotError(f"TextWorld snapshot payload: {what} is not base64 data ({exc})") from None
    out = S.inflate(packed, size, f"TextWorld snapshot payload: {what}")
    if len(out) != size:
        raise SnapshotError(f"TextWorld snapshot payload: {what} is {len(out)} bytes, the interpreter's is {size}")
    return out


def _parse(data: Any, frotz: Any, story: tuple[int, np.ndarray, bytes], header: np.ndarray) -> dict[str, Any]:
    """Every field of a snapshot's ``game`` part checked before any of it reaches the interpreter: sizes
    capped before decompressing and parsing, the Z-machine state against the story file
    (:mod:`~agentgym_credit.envs.alfworld.zmachine`; ``header``: the RAM header of the game as this process
    reset it, not the live interpreter's, which a halted run may have written over)."""
    if isinstance(data, dict) and data.keys() == PAYLOAD_FIELDS - {"quests"}:  # made before quests were stored
        data = {**data, "quests": None}  # restored as then: the replay tracks the quests itself
    p = S.fields(data, "TextWorld", PAYLOAD_FIELDS)
    ram_size, stack_size = frotz.frotz_lib.getRAMSize(), frotz.frotz_lib.getStackSize()
    if S.nat(p["ram_size"], "RAM size") != ram_size:
        raise SnapshotError("TextWorld snapshot was taken from another story file (memory sizes differ)")
    story_size, base, _ = story
    changed = np.frombuffer(_blob(p["ram"], "RAM", ram_size), dtype=np.uint8)
    zmachine.check_ram_changes(changed)
    ram = np.bitwise_xor(changed, base)
    zmachine.check_ram_header(ram, header)
    stack = np.frombuffer(_blob(p["stack"], "stack", stack_size), dtype=np.uint8).copy()
    regs = p["regs"]
    if regs.__class__ is not list or len(regs) != 5:
        raise SnapshotError("TextWorld snapshot payload: regs must list 5 ints")
    regs = tuple(S.nat(r, name, 1 << 31) for r, name in zip(regs, ("pc", "sp", "fp", "frame count", "opcode")))
    zmachine.check_registers(regs, stack.view(np.uint16), base[: zmachine.HEADER_BYTES], story_size, story[2])
    rng = zmachine.check_rng(p["rng"])
    command = S.text(p["command"], "command", MAX_COMMAND)
    if command != " ".join(command.lower().split()) or not command.isprintable() or not command.isascii():
        raise SnapshotError("TextWorld snapshot payload: command must be a normalized printable ASCII command")
    log = S.text(p["actions"], "actions", S.MAX_JSON_BYTES)  # parsed only when it is re-applied (_replay)
    quests = p["quests"]
    if quests is not None:  # inflated here (capped), parsed only when it is used (restore)
        quests = S.text(quests, "quests", _MAX_B64)
        try:
            packed = base64.b64decode(quests.encode("ascii"), validate=True)
        except ValueError as exc:
            raise SnapshotError(f"TextWorld snapshot payload: quests is not base64 data ({exc})") from None
        quests = S.inflate(packed, S.MAX_JSON_BYTES, "TextWorld snapshot payload: quests")
    return {"ram": ram, "stack": stack, "regs": regs, "rng": rng, "command": command, "log": log, "quests": quests}


def _replay(tracker: Any, log: str, max_actions: int, quests: bytes | None = None) -> tuple[Any, list[Any]]:
    """A fresh game progression with the logged logic actions re-applied, each checked valid where it is (an
    instantiation of one of the game's rules whose preconditions hold; what ``GameProgression.update`` does,
    listing the applicable actions once at the end instead of after every action). With ``quests`` (a snapshot's
    stored quest progressions, :mod:`~agentgym_credit.envs.alfworld.textworld_quests`) the actions change the
    facts only and the stored progressions are set at the end: no quest is tracked action by action."""
    from textworld.generator.game import GameProgression
    from textworld.logic import Action

    data = S.load_json(log, "TextWorld snapshot payload: actions")
    if data.__class__ is not list or len(data) > max_actions:
        raise SnapshotError(f"TextWorld snapshot payload: actions must be a list of at most {max_actions}")
    try:
        actions = [Action.deserialize(a) for a in data]
    except Exception as exc:  # textworld raises whatever its dict access meets
        raise SnapshotError(f"TextWorld snapshot payload: an action does not parse ({type(exc).__name__})") from None
    game = tracker._game
    tracking = tracker._game_progression.tracking_quests
    if quests is not None and not tracking:
        raise SnapshotError("TextWorld snapshot payload: quests given for a game that tracks none (expert infos off)")
    if quests is not None and not textworld_quests.readable(tracker._game_progression):
        quests = None  # this textworld's progressions are not 1.7's: the replay tracks the quests itself
    initial = _INITIAL.get((id(game), tracking))
    if initial is not None and initial[0] is game:  # the game as reset, remembered (remember_initial): a copy
        progression = _copy_progression(initial[1], game, quests=quests is None)
    else:  # GameProgression's own start lists every action applicable in the initial state
        progression = GameProgression(game, track_quests=tracking and quests is None)
    state, rules, tracked = progression.state, game.kb.rules, progression.quest_progressions
    for action in actions:  # GameProgression.update without listing every applicable action after each one
        rule = rules.get(action.name)
        if rule is None or not state.is_applicable(action) or rule.match(action) is None:
            raise SnapshotError(f"TextWorld snapshot replay: {action.name} is not valid in the game at that point")
        state.apply(action)
        for quest in tracked:  # none when the snapshot carries them
            quest.update(action, state)
    progression._valid_actions = list(state.all_applicable_actions(rules.values(), game.kb.types.constants_mapping))
    if quests is not None:
        progression.quest_progressions = textworld_quests.load(quests, game, actions, state)
    return progression, actions


def _step_fields(text: str, reset_raw: Any, at_reset: bool) -> dict[str, Any]:
    """The step's text fields as textworld's wrappers make them, from the interpreter's answer: the tracked
    ``<score>``/``<moves>`` tags read and stripped, then the Inform 7 event lines. At move 0 (the game as
    reset: the text is the answer to textworld's own set-up commands) the step's text is the game's opening
    text, ``reset_raw()``."""
    from textworld.envs.wrappers.tw_inform7 import _detect_extra_infos, _detect_i7_events_debug_tags

    extra, feedback = _detect_extra_infos(text, _TRACKED)
    try:
        score, moves = (int(str(extra[k]).strip().split("\n")[0]) for k in ("score", "moves"))
    except ValueError:
        raise SnapshotError("TextWorld snapshot: the interpreter's answer has no score and move count") from None
    if score < 0 or moves < 0:
        raise SnapshotError("TextWorld snapshot: the interpreter's score or move count is negative")
    if "*** The End ***" in feedback or "*** You lost! ***" in feedback:
        raise SnapshotError("TextWorld snapshot: the game ended on its last command (a snapshot is of a running game)")
    if at_reset:
        raw = feedback = reset_raw()
    else:
        raw = text
        _, feedback = _detect_i7_events_debug_tags(feedback)
    return {"raw": raw, "feedback": feedback, "score": score, "moves": moves, "last_command": None}


def restore(env: Any, data: Any, max_actions: int = 10_000, reset_raw: Any = None, *,
            reset_state: Any) -> tuple[Any, tuple | None, str]:
    """Put the started game ``env`` (the same story file as the saved one, reset at least once) into the
    state ``data`` describes (every field checked first, :data:`PAYLOAD_FIELDS`); return textworld's game
    state of that step (as a step returns it), the Z-machine state before its last command (``None`` at
    move 0) and that command. ``reset_raw()`` gives the game's opening text and ``reset_state()`` its
    Z-machine state as this process reset it (the RAM header to check against; a snapshot at move 0 must be
    that state).

    A state this process did not make is first played in a forked child (:func:`zguard.probe`): a hang, crash
    or halt there is a ``SnapshotError`` and never reaches this process's interpreter."""
    from textworld.core import GameState

    layers = wrappers(env)
    jericho, tracker, i7, gdata = layers["jericho"], layers["tracker"], layers["i7"], layers["data"]
    frotz = jericho._jericho
    at_reset_z = reset_state()
    d = _parse(data, frotz, _story(jericho.gamefile, frotz.frotz_lib.getRAMSize()),
               np.asarray(at_reset_z[0][: zmachine.HEADER_BYTES]))
    command = d["command"]
    if not command and not (np.array_equal(d["ram"], at_reset_z[0]) and np.array_equal(d["stack"], at_reset_z[1])
                            and d["regs"] == tuple(int(r) for r in at_reset_z[2:7])):
        raise SnapshotError("TextWorld snapshot: a state at move 0 (no command) must be the game as reset")

    key = _actions_key(jericho.gamefile, d["log"], d["quests"])
    saved = _MEMO.get(key)
    tracking = tracker._game_progression.tracking_quests
    if saved is not None and saved[0].tracking_quests == tracking:  # this log seen in this process
        _MEMO.move_to_end(key)
        progression, actions, policy = _copy_progression(saved[0], tracker._game), list(saved[1]), saved[2]
    else:  # re-apply the logic actions on a fresh progression (then remembered: a second restore is a copy)
        progression, actions = _replay(tracker, d["log"], max_actions, d["quests"])
        policy = progression.winning_policy
        _remember(key, _copy_progression(progression), tuple(actions), policy)
    z = (d["ram"], d["stack"], *d["regs"], d["rng"], b"" if command else bytes(at_reset_z[8]))
    digest = _digest(d["ram"], d["stack"], d["regs"], d["rng"], command)
    if not zguard.vouched(digest):
        commands = tracker._inform7.gen_commands_from_actions(progression.valid_actions) if tracker._inform7 else []
        zguard.probe(frotz, z, command, [*commands, "look", "inventory"])
        zguard.vouch(digest)
    after = _AFTER.get(digest) if command else None
    if after is not None:  # an own snapshot: the state its command led to, as this interpreter answered it
        frotz.set_state(after)
        text = bytes(after[8]).decode("cp1252")
    else:
        with zguard.watch(what="a TextWorld restore"):  # a disposable worker's guard (zguard); else nothing
            frotz.set_state(z)
            text = frotz.step(command)[0] if command else bytes(at_reset_z[8]).decode("cp1252")
    if frotz._emulator_halted():
        raise SnapshotError("TextWorld snapshot: the game halted on its last command")
    if command and after is None:
        _after(digest, frotz)
    fields = _step_fields(text, reset_raw or (lambda: ""), not command)
    if progression.tracking_quests and (fields["score"] != progression.score or progression.done):
        raise SnapshotError("TextWorld snapshot: the interpreter's answer (score, game over) disagrees with the "
                            "game its logged actions replay to")
    tracker._game_progression = progression
    record_actions(tracker).extend(actions)
    tracker._last_action = actions[-1] if actions else None
    tracker._moves = len(actions)
    tracker._current_winning_policy = tracker._previous_winning_policy = policy

    state = GameState()
    state.update(fields)
    jericho.state = gdata.state = i7.state = tracker.state = state
    i7._prev_state = None  # only fills a tracked info the next step's text lacks; the state above has them all
    gdata._gather_infos()
    tracker._gather_infos()
    state["done"] = bool(state["won"] or state["lost"])
    return state, (z if command else None), command


__all__ = ["AFTER_SIZE", "remember_initial", "before_step", "MAX_COMMAND", "memo_names", "wrappers", "record_actions", "save", "restore", "MEMO_SIZE", "PAYLOAD_FIELDS"]
