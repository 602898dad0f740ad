"""The four ALFWorld room kinds the generator builds, calibrated per kind on the real games.

What lives here:

- :class:`RoomKind` — a room kind: receptacle kinds with (min, max) counts, the small objects found
  there, how many objects it holds (min, max), and how its size is drawn (``size_skew``);
- :data:`ROOMS` — kitchen, bathroom, bedroom, living room;
- :func:`sample_room` — receptacle counts and the object count of one room from a seeded generator.

How a room is drawn. One *size* ``s`` in [0, 1] per room, ``s = u ** size_skew`` (``u`` uniform), and
every receptacle kind's count is ``lo + round((hi - lo) * v)`` with ``v`` = 70 % ``s`` + 30 % its own
uniform draw: a big room has many cabinets *and* many drawers, as real ones do, so the total spans the
real range (a sum of independent counts would bunch around its middle and never reach the large
rooms). ``size_skew`` > 1 makes small rooms common (most kitchens and bedrooms), < 1 large ones (most
living rooms). The object count is drawn the same way from ``n_objects`` (half the room size, half its
own draw).

Calibration (``benchmarks/alfworld_games.md``: per room kind against the real dev games, medians
within 25 % and ranges covering theirs, and reaching the real maxima issue 25 reports from outside the
dev set): 180 generated games hold kitchens of 36-60 objects (median 45.5) in 18-57 receptacles, living
rooms of 16-41 receptacles (median 29), bedrooms of 5-23 (median 11), bathrooms of 6-19 (median 12).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RoomKind:
    """A room: receptacle kinds with (min, max) counts, the small objects that may appear in it, how many
    objects it holds at the start (min, max; several instances per kind) and ``size_skew`` (see the
    module docstring)."""

    name: str
    receptacles: dict[str, tuple[int, int]]
    objects: tuple[str, ...]
    lamps: bool = False
    n_objects: tuple[int, int] = (14, 30)
    size_skew: float = 1.0

    def __post_init__(self) -> None:
        bad = {k: v for k, v in self.receptacles.items() if not 0 <= v[0] <= v[1]}
        if bad or not 0 < self.n_objects[0] <= self.n_objects[1] or self.size_skew <= 0:
            raise ValueError(f"room {self.name!r}: counts must be 0 <= min <= max and size_skew > 0 ({bad or self.n_objects})")


ROOMS: dict[str, RoomKind] = {
    "kitchen": RoomKind(
        "kitchen",
        {
            "CounterTop": (1, 3), "Cabinet": (4, 27), "Drawer": (1, 15), "Fridge": (1, 1), "Microwave": (1, 1),
            "SinkBasin": (1, 1), "StoveBurner": (4, 4), "DiningTable": (0, 2), "CoffeeMachine": (1, 1),
            "Toaster": (0, 1), "GarbageCan": (1, 1), "Shelf": (0, 3), "SideTable": (0, 1),
        },
        ("Apple", "Bowl", "Bread", "ButterKnife", "Cup", "DishSponge", "Egg", "Fork", "Kettle", "Knife",
         "Ladle", "Lettuce", "Mug", "Pan", "PepperShaker", "Plate", "Pot", "Potato", "SaltShaker",
         "SoapBottle", "Spatula", "Spoon", "Tomato", "WineBottle"),
        n_objects=(34, 61),
        size_skew=1.6,
    ),
    "bathroom": RoomKind(
        "bathroom",
        {
            "Toilet": (1, 1), "SinkBasin": (1, 2), "BathtubBasin": (0, 1), "Cabinet": (0, 4),
            "CounterTop": (1, 1), "Drawer": (0, 5), "GarbageCan": (1, 1), "TowelHolder": (0, 1),
            "HandTowelHolder": (0, 2), "ToiletPaperHanger": (1, 1), "Shelf": (0, 3), "Dresser": (0, 1),
        },
        ("Candle", "Cloth", "DishSponge", "HandTowel", "Plunger", "ScrubBrush", "SoapBar", "SoapBottle",
         "SprayBottle", "ToiletPaper", "Towel"),
        n_objects=(10, 26),
        size_skew=1.5,
    ),
    "bedroom": RoomKind(
        "bedroom",
        {
            "Bed": (1, 2), "Desk": (0, 2), "Drawer": (2, 9), "Dresser": (0, 1), "GarbageCan": (1, 1),
            "SideTable": (0, 2), "Shelf": (0, 6), "Safe": (0, 1), "ArmChair": (0, 1), "Cabinet": (0, 2),
        },
        ("AlarmClock", "BaseballBat", "BasketBall", "Book", "Bowl", "CD", "CellPhone", "CreditCard",
         "KeyChain", "Laptop", "Mug", "Pen", "Pencil", "Pillow", "TennisRacket"),
        lamps=True,
        n_objects=(13, 37),
        size_skew=1.5,
    ),
    "livingroom": RoomKind(
        "livingroom",
        {
            "Sofa": (1, 2), "ArmChair": (0, 3), "CoffeeTable": (1, 2), "SideTable": (0, 4),
            "TVStand": (0, 2), "Shelf": (0, 12), "Drawer": (0, 9), "GarbageCan": (1, 1), "Cabinet": (0, 8),
            "DiningTable": (0, 2), "Dresser": (0, 1), "Safe": (0, 1), "Ottoman": (0, 1),
        },
        ("Box", "CreditCard", "KeyChain", "Laptop", "Newspaper", "Pillow", "RemoteControl", "Statue",
         "Vase", "Watch", "WateringCan"),
        lamps=True,
        n_objects=(16, 40),
        size_skew=0.5,
    ),
}


def _scaled(lo: int, hi: int, size: float, own: float, weight: float) -> int:
    return lo + int(round((hi - lo) * (weight * size + (1.0 - weight) * own)))


def sample_room(room: RoomKind, rng: Any) -> tuple[dict[str, int], int]:
    """``(receptacle counts by kind, object count)`` of one room drawn with ``rng`` (a numpy Generator)."""
    size = float(rng.random()) ** room.size_skew
    counts = {kind: _scaled(lo, hi, size, float(rng.random()), 0.7) for kind, (lo, hi) in room.receptacles.items()}
    n_objects = _scaled(*room.n_objects, size, float(rng.random()), 0.5)
    return counts, n_objects


__all__ = ["RoomKind", "ROOMS", "sample_room"]
