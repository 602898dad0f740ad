"""Checks of a Z-machine state against its own story file, before Jericho's C interpreter gets it.

Jericho's ``FrotzEnv.set_state`` copies what it is given straight into the interpreter: ``setPC`` /
``setSP`` / ``setFP`` are pointer arithmetic with no bound, the pending narrative is ``strcpy``'d into a
fixed 8 kB buffer (a longer one overwrites the interpreter's globals: a crash on the next step or inside
``set_state`` itself), and a return from a routine pops a frame pointer and a program counter off the
stack without checking them. So every register and the stack are checked here against the limits the C
code assumes (frotz 2.x inside jericho 3.x):

- ``pc``: a byte address in the story file's high memory (from the header's high-memory base to the
  story's length);
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
- the narrative (the text of the last step): at most :data:`NARRATIVE_BYTES` bytes, no NUL, text that
  decodes as jericho decodes it (cp1252).

What lives here: :func:`check_registers`, :func:`check_ram_header`, :func:`check_ram_changes`,
:func:`check_narrative`, :func:`check_rng`, :data:`NARRATIVE_BYTES`, :data:`HEADER_BYTES`,
:data:`MAX_CHANGED_FRACTION`.
"""

from __future__ import annotations

import numpy as np

from agentgym_credit.errors import SnapshotError

NARRATIVE_BYTES = 8191
"""Longest narrative jericho's ``world[8192]`` buffer holds (with its terminating NUL)."""

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


def check_registers(regs: tuple[int, ...], stack_words: np.ndarray, story_header: bytes | np.ndarray,
                    story_size: int) -> None:
    """Refuse (``SnapshotError``) registers ``(pc, sp, fp, frame_count, opcode)`` and a stack (16-bit words,
    native order, as frotz keeps it) the interpreter could not have: see the module docstring."""
    pc, sp, fp, frame_count, opcode = regs
    low, high = story_limits(story_header, story_size)
    if not low <= pc < high:
        raise SnapshotError(f"TextWorld snapshot: pc {pc} is outside the story's code ({low}..{high - 1})")
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


def check_narrative(raw: bytes) -> str:
    """The narrative as jericho's text (cp1252), or ``SnapshotError`` if the interpreter's buffer cannot hold it."""
    if len(raw) > NARRATIVE_BYTES or b"\0" in raw:
        raise SnapshotError(f"TextWorld snapshot: the narrative must be at most {NARRATIVE_BYTES} bytes without "
                            f"NUL (jericho's buffer), got {len(raw)} bytes")
    try:
        return raw.decode("cp1252")
    except UnicodeDecodeError:
        raise SnapshotError("TextWorld snapshot: the narrative is not text jericho writes (cp1252)") from None


def check_rng(rng: list) -> tuple[int, int, int]:
    """frotz's RNG ``(A, interval, counter)``: an int64 and two 16-bit counters."""
    if rng.__class__ is not list or len(rng) != 3 or any(r.__class__ is not int for r in rng):
        raise SnapshotError("TextWorld snapshot payload: rng must list 3 ints")
    a, interval, counter = rng
    if not -(1 << 63) <= a < 1 << 63 or not 0 <= interval < 1 << 16 or not 0 <= counter < 1 << 16:
        raise SnapshotError("TextWorld snapshot payload: rng must be an int64 and two 16-bit counters")
    return a, interval, counter


__all__ = ["MAX_CHANGED_FRACTION", "check_ram_changes", "HEADER_BYTES", "NARRATIVE_BYTES", "check_narrative", "check_ram_header", "check_registers", "check_rng",
           "story_limits"]
