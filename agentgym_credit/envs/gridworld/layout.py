"""Grid layouts for the gridworld families: procedural generation, moves with slip, words.

What lives here:

- :data:`DIRECTIONS` — ``north/south/east/west`` and their ``(drow, dcol)``;
- :class:`Layout` — a generated grid: walls, start, goal, traps and extra special cells;
- :func:`generate_layout` — seeded layout whose goal (and every special cell) is reachable from the
  start without crossing a trap; it retries and raises a clear error when the parameters make that
  impossible;
- :func:`exits`, :func:`slip_moves` — where a move goes, with the slip probability split between the
  two perpendicular directions (a blocked slip leaves the agent in place);
- :func:`direction_word` — ``"south-east"`` etc. for observation text.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

Cell = tuple[int, int]

DIRECTIONS: dict[str, Cell] = {"north": (-1, 0), "south": (1, 0), "east": (0, 1), "west": (0, -1)}
"""Move names in the fixed order actions are listed, with their (drow, dcol)."""

_PERPENDICULAR: dict[str, tuple[str, str]] = {
    "north": ("east", "west"),
    "south": ("east", "west"),
    "east": ("north", "south"),
    "west": ("north", "south"),
}


@dataclass(frozen=True)
class Layout:
    """A square grid: ``walls`` are blocked cells; ``special`` are extra cells (key, door, ...)."""

    size: int
    walls: frozenset[Cell]
    start: Cell
    goal: Cell
    traps: frozenset[Cell]
    special: tuple[Cell, ...] = ()

    def free(self, cell: Cell) -> bool:
        r, c = cell
        return 0 <= r < self.size and 0 <= c < self.size and cell not in self.walls

    def free_cells(self) -> list[Cell]:
        return [(r, c) for r in range(self.size) for c in range(self.size) if (r, c) not in self.walls]


def exits(layout: Layout, cell: Cell) -> list[str]:
    """Directions from ``cell`` that lead to a free cell (in :data:`DIRECTIONS` order)."""
    r, c = cell
    return [d for d, (dr, dc) in DIRECTIONS.items() if layout.free((r + dr, c + dc))]


def _step(layout: Layout, cell: Cell, d: str) -> Cell:
    dr, dc = DIRECTIONS[d]
    nxt = (cell[0] + dr, cell[1] + dc)
    return nxt if layout.free(nxt) else cell


def slip_moves(layout: Layout, cell: Cell, d: str, slip: float) -> list[tuple[float, Cell]]:
    """Outcomes of trying to move ``d``: ``1 - slip`` as intended, ``slip / 2`` each perpendicular."""
    out = [(1.0 - slip, _step(layout, cell, d))]
    if slip > 0:
        out += [(slip / 2, _step(layout, cell, p)) for p in _PERPENDICULAR[d]]
    return [(p, c) for p, c in out if p > 0]


def direction_word(src: Cell, dst: Cell) -> str:
    """Compass word from ``src`` to ``dst`` (``"north"``, ``"south-east"``, ``"here"``)."""
    ns = "north" if dst[0] < src[0] else "south" if dst[0] > src[0] else ""
    ew = "west" if dst[1] < src[1] else "east" if dst[1] > src[1] else ""
    return "-".join(w for w in (ns, ew) if w) or "here"


def _reachable(layout: Layout, src: Cell, blocked: frozenset[Cell]) -> set[Cell]:
    seen = {src}
    queue = deque([src])
    while queue:
        r, c = queue.popleft()
        for dr, dc in DIRECTIONS.values():
            n = (r + dr, c + dc)
            if n not in seen and n not in blocked and layout.free(n):
                seen.add(n)
                queue.append(n)
    return seen


def generate_layout(
    rng: np.random.Generator,
    size: int,
    wall_density: float,
    n_traps: int = 0,
    n_special: int = 0,
    max_tries: int = 1000,
) -> Layout:
    """A random solvable layout: start, goal and specials mutually reachable avoiding traps and walls.

    Walls are ``round(wall_density * size**2)`` blocked cells; the goal is at least
    ``size // 2`` moves from the start when possible, so episodes are not trivial.
    """
    if size < 2:
        raise ValueError(f"size must be >= 2, got {size}")
    if not 0.0 <= wall_density < 1.0:
        raise ValueError(f"wall_density must be in [0, 1), got {wall_density}")
    if n_traps < 0 or n_special < 0:
        raise ValueError("n_traps and n_special must be >= 0")
    n_cells = size * size
    n_walls = int(round(wall_density * n_cells))
    if n_walls + n_traps + n_special + 2 > n_cells:
        raise ValueError(f"size={size} has {n_cells} cells: too few for {n_walls} walls, {n_traps} traps, "
                         f"{n_special} special cells, a start and a goal")
    for _ in range(max_tries):
        perm = rng.permutation(n_cells)
        cells = [(int(k) // size, int(k) % size) for k in perm]
        walls = frozenset(cells[:n_walls])
        rest = cells[n_walls:]
        start, goal = rest[0], rest[1]
        if abs(start[0] - goal[0]) + abs(start[1] - goal[1]) < max(1, size // 2):
            continue
        special = tuple(rest[2:2 + n_special])
        traps = frozenset(rest[2 + n_special:2 + n_special + n_traps])
        layout = Layout(size, walls, start, goal, traps, special)
        reach = _reachable(layout, start, traps)
        if goal in reach and all(s in reach for s in special):
            return layout
    raise ValueError(f"no solvable layout in {max_tries} tries for size={size}, wall_density={wall_density}, "
                     f"n_traps={n_traps}: lower the wall density or the number of traps")


__all__ = ["Cell", "DIRECTIONS", "Layout", "exits", "slip_moves", "direction_word", "generate_layout"]
