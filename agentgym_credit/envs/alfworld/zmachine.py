"""Checks of a Z-machine state against its own story file, before Jericho's C interpreter gets it.

Jericho's ``FrotzEnv.set_state`` copies what it is given straight into the interpreter: ``setPC`` /
``setSP`` / ``setFP`` are pointer arithmetic with no bound, the pending narrative is ``strcpy``'d into a
fixed 8 kB buffer (a longer one overwrites the interpreter's globals: a crash on the next step or inside
``set_state`` itself), and a return from a routine pops a frame pointer and a program counter off the
stack without checking them. So every register and the stack are checked here against the limits the C
code assumes (frotz 2.x inside jericho 3.x):

- ``pc``: a byte address in the story file's high memory (from the header's high-memory base to the
  story's length) that is a *resume point*: a snapshot is taken while the game waits for input, so the
  interpreter stopped right after the opcode byte of an input instruction (``aread`` 0xE4 or ``read_char``
  0xF6), the ``opcode`` register holds that opcode, and the byte at ``pc`` is a valid operand-types byte
  for it (:func:`check_resume_point`). A pc moved by a few bytes inside the code passed the range check
  and hung jericho for minutes or halted it (issue 43 D1);
- the stack: ``STACK_SIZE`` 16-bit words; ``sp <= fp <= STACK_SIZE`` (counted in words, as frotz
  does); walking ``frame_count`` frames from ``fp`` (each 4 words: argument count, call type and local
  count, the caller's frame, the return address) must climb strictly inside the stack, leave room for
  each frame's locals, return only to addresses inside the story, and end exactly at the top;
- ``opcode``: a byte; the RNG: an ``int64`` and two 16-bit counters (frotz keeps a ``long`` and two
  ``int`` and only ever stores ``zword`` intervals);
- the RAM (dynamic memory): exactly the interpreter's size, and its 64-byte header equal to the live
  interpreter's header (which the same story file gave it) except the two bytes of Flags 2 the game may
  write: another game's or random RAM is refused there;
- how much of the RAM differs from the story file's initial image: at most :data:`MAX_CHANGED_FRACTION`
  (a plausibility bound: games change a few percent; random memory under a valid header crashed the
  interpreter);
- no narrative: a snapshot carries no text for the interpreter's buffer (the restore replays the last
  command, so the text is the interpreter's answer; issue 43 D4).

What lives here: :func:`check_registers`, :func:`check_ram_header`, :func:`check_ram_changes`,
:func:`check_resume_point`, :func:`check_rng`, :data:`INPUT_OPCODES`, :data:`HEADER_BYTES`,
:data:`MAX_CHANGED_FRACTION`.
"""

from __future__ import annotations

import numpy as np

from agentgym_credit.errors import SnapshotError

HEADER_BYTES = 64
"""Size of the Z-machine header at the start of the RAM."""

_GAME_WRITABLE = (0x10, 0x11)
"""Header bytes a game may change while it runs (Flags 2); every other header byte is the story's or the
interpreter's and never changes."""

_FRAME_WORDS = 4


def _word(data: bytes | np.ndarray, at: int) -> int:
    return (int(data[at]) << 8) | int(data[at + 1])


def story_limits(story_header: bytes | np.ndarray, story_size: int) -> tuple[int, int]:
    """``(lowest pc, pc bound)`` of a story file: its high-memory base and its length (the header's length
    field, scaled as for versions 4-8, capped by the file's size)."""
    version = int(story_header[0])
    scale = 2 if version <= 3 else 4 if version <= 5 else 8
    length = _word(story_header, 0x1A) * scale or story_size
    return _word(story_header, 0x04), min(length, story_size)


INPUT_OPCODES = (0xE4, 0xF6)
"""The opcodes a Z-machine waits for input in (V5+ ``aread`` and ``read_char``): the only places jericho's
interpreter stops, so the only ``opcode`` register and byte before ``pc`` a snapshot can have."""


def check_resume_point(pc: int, opcode: int, story: bytes | np.ndarray) -> None:
    """Refuse (``SnapshotError``) a ``pc`` that is not where the interpreter stops for input: the byte before it
    must be the input opcode the ``opcode`` register holds, and the byte at it a types byte that instruction
    can have (its first operand present; no operand after an omitted one)."""
    if opcode not in INPUT_OPCODES or not 1 <= pc < len(story) or int(story[pc - 1]) != opcode:
        raise SnapshotError(f"TextWorld snapshot: pc {pc} (opcode {opcode}) is not a point where the game waits "
                            "for input (the byte before it must be the input opcode the opcode register holds)")
    types = [(int(story[pc]) >> shift) & 3 for shift in (6, 4, 2, 0)]
    present = [t != 3 for t in types]
    if not present[0] or any(present[i + 1] and not present[i] for i in range(3)):
        raise SnapshotError(f"TextWorld snapshot: pc {pc} is not followed by the operands of an input instruction")


def check_registers(regs: tuple[int, ...], stack_words: np.ndarray, story_header: bytes | np.ndarray,
                    story_size: int, story: bytes | np.ndarray | None = None) -> None:
    """Refuse (``SnapshotError``) registers ``(pc, sp, fp, frame_count, opcode)`` and a stack (16-bit words,
    native order, as frotz keeps it) the interpreter could not have: see the module docstring. ``story``: the
    story file's bytes (the pc must then be a resume point, :func:`check_resume_point`)."""
    pc, sp, fp, frame_count, opcode = regs
    low, high = story_limits(story_header, story_size)
    if not low <= pc < high:
        raise SnapshotError(f"TextWorld snapshot: pc {pc} is outside the story's code ({low}..{high - 1})")
    if story is not None:
        check_resume_point(pc, opcode, story)
    n = len(stack_words)
    if not 0 <= sp <= fp <= n:
        raise SnapshotError(f"TextWorld snapshot: sp {sp} and fp {fp} are not 0 <= sp <= fp <= {n} (stack words)")
    if opcode >= 256:
        raise SnapshotError(f"TextWorld snapshot: opcode {opcode} is not a byte")
    if frame_count > n // _FRAME_WORDS:
        raise SnapshotError(f"TextWorld snapshot: {frame_count} frames cannot fit a {n}-word stack")
    stack_words = stack_words.tolist()  # plain ints: a frame is 4 reads
    floor, p = sp, fp
    for _ in range(frame_count):
        if p + _FRAME_WORDS > n:
            raise SnapshotError("TextWorld snapshot: a stack frame lies outside the stack")
        head, link = stack_words[p], stack_words[p + 1]
        locals_, argc, call_type = (head >> 8) & 0xF, head & 0xFF, head >> 12
        ret = (stack_words[p + 3] << 9) | stack_words[p + 2]
        if argc > 8 or call_type > 2 or p - locals_ < floor or not ret < high:
            raise SnapshotError("TextWorld snapshot: a stack frame is not one the interpreter makes")
        nxt = link + 1
        if not p + _FRAME_WORDS <= nxt <= n:
            raise SnapshotError("TextWorld snapshot: the stack's frame chain does not climb inside the stack")
        floor, p = p + _FRAME_WORDS, nxt
    if p != n:
        raise SnapshotError(f"TextWorld snapshot: {frame_count} frames from fp {fp} do not end at the stack's top")


def check_ram_header(ram: np.ndarray, live_header: np.ndarray) -> None:
    """Refuse RAM whose header differs from the running interpreter's (another story, or not a RAM image)."""
    got = np.asarray(ram[:HEADER_BYTES], dtype=np.uint8).copy()
    want = np.asarray(live_header[:HEADER_BYTES], dtype=np.uint8).copy()
    for i in _GAME_WRITABLE:
        got[i] = want[i]
    if len(ram) < HEADER_BYTES or not np.array_equal(got, want):
        raise SnapshotError("TextWorld snapshot: its RAM's Z-machine header is not this story file's")


MAX_CHANGED_FRACTION = 0.25
"""Most of the dynamic memory a state may have changed from the story file's initial image. A plausibility
bound, not a proof: the most measured over 450 random steps of tw-simple, tw-cooking and tw-coin_collector
was 4.6% (1,727 of 37,289 bytes); random memory under a valid header (99.6% changed) crashed or hung the
interpreter in 7 of 12 tries. A few targeted bytes still pass (``benchmarks/faults/reliability.md``)."""


def check_ram_changes(changed: np.ndarray) -> None:
    """Refuse RAM that differs from the story file's initial image in more than :data:`MAX_CHANGED_FRACTION`
    of its bytes (``changed``: the RAM XOR the story's first bytes, as a snapshot stores it)."""
    n = int(np.count_nonzero(changed))
    if n > MAX_CHANGED_FRACTION * len(changed):
        raise SnapshotError(f"TextWorld snapshot: {n} of {len(changed)} RAM bytes differ from the story file's "
                            f"(a game changes a few %; at most {MAX_CHANGED_FRACTION:.0%} accepted)")


def check_rng(rng: list) -> tuple[int, int, int]:
    """frotz's RNG ``(A, interval, counter)``: an int64 and two 16-bit counters."""
    if rng.__class__ is not list or len(rng) != 3 or any(r.__class__ is not int for r in rng):
        raise SnapshotError("TextWorld snapshot payload: rng must list 3 ints")
    a, interval, counter = rng
    if not -(1 << 63) <= a < 1 << 63 or not 0 <= interval < 1 << 16 or not 0 <= counter < 1 << 16:
        raise SnapshotError("TextWorld snapshot payload: rng must be an int64 and two 16-bit counters")
    return a, interval, counter


__all__ = ["INPUT_OPCODES", "check_resume_point", "MAX_CHANGED_FRACTION", "check_ram_changes", "HEADER_BYTES", "check_ram_header", "check_registers", "check_rng",
           "story_limits"]
