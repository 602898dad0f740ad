"""The four ALFWorld room kinds the generator builds, calibrated per kind on the real games.

What lives here:

- :class:`RoomKind` — a room kind: receptacle kinds with (min, max) counts, the small objects found
  there, how many objects it holds (min, max), and how its size is drawn (``size_skew``);
- :data:`SHAPES` — kitchen, bathroom, bedroom, living room: the receptacle kinds and spreads the fit scales;
- :data:`ROOMS` — the shapes fitted on the dev floor plans plus ALFWorld's fit-scene layouts (the generator's rooms);
- :func:`fit_room_kind` — a shape fitted to floor plans (receptacles and objects, one value a plan);
- :func:`sample_room` — receptacle counts and the object count of one room from a seeded generator.

How a room is drawn. One *size* ``s`` in [0, 1] per room, ``s = u ** size_skew`` (``u`` uniform), and
every receptacle kind's count is ``lo + round((hi - lo) * v)`` with ``v`` = 70 % ``s`` + 30 % its own
uniform draw: a big room has many cabinets *and* many drawers, as real ones do, so the total spans the
real range (a sum of independent counts would bunch around its middle and never reach the large
rooms). ``size_skew`` > 1 makes small rooms common (most kitchens and bedrooms), < 1 large ones (most
living rooms). The object count is drawn the same way from ``n_objects`` (half the room size, half its
own draw).

Calibration (issue 35). :data:`SHAPES` says which receptacle kinds a room holds and how their counts
spread; :func:`fit_room_kind` scales a shape to floor plans (the variable part of every receptacle range by
one factor so that the simulated median total matches, then the object range). The rule was chosen by
leave-one-floor-plan-out on the dev games (``benchmarks/envs/alfworld_rooms.md``: 15/16 room-kind x measure
medians within 25 % out of fold). Issue 45 widened the sample: ALFWorld ships a layout of each of its 120 ALFRED
scenes; split into fit and held-out scenes by a rule fixed first (ALFRED's valid_unseen scenes and those ending
in 1 or 5 held out), the fit scenes' room sizes (estimated from their layouts, calibrated on the dev floor
plans) and the 21 dev floor plans are the data of :data:`ROOMS`, fitted with rule ``spread`` (ranges to the
90th percentile, skew to the median, so large rooms are drawn as often as they occur)
(``benchmarks/envs/alfworld_rooms_layouts.md`` checks it per room kind on the held-out scenes): kitchens of
30-53 objects, living rooms 11-29, bedrooms 11-32, bathrooms 7-18. Every generated room draws its own size, so
the rooms of a kind vary as floor plans do.
"""

from __future__ import annotations

from collections.abc import Sequence
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


SHAPES: dict[str, RoomKind] = {
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


def _fitted(shape: RoomKind, n_objects: tuple[int, int], size_skew: float, **highs: int) -> RoomKind:
    recs = {k: (lo, highs.get(k, hi)) for k, (lo, hi) in shape.receptacles.items()}
    return RoomKind(shape.name, recs, shape.objects, shape.lamps, n_objects, size_skew)


ROOMS: dict[str, RoomKind] = {
    "kitchen": _fitted(SHAPES["kitchen"], (30, 53), 1.397, Cabinet=26, Drawer=14),
    "bathroom": _fitted(SHAPES["bathroom"], (7, 18), 0.662, Cabinet=3, Drawer=4, Shelf=2),
    "bedroom": _fitted(SHAPES["bedroom"], (11, 32), 1.255, Drawer=8, Shelf=5),
    "livingroom": _fitted(SHAPES["livingroom"], (11, 29), 1.243, ArmChair=2, SideTable=2, TVStand=1, Shelf=6,
                          Drawer=5, Cabinet=4, DiningTable=1),
}
"""The generator's room kinds: :data:`SHAPES` fitted by :func:`fit_room_kind` (rule ``spread``) on the fit scenes
of ALFWorld's scene layouts plus every dev floor plan (issue 45; ``python -m
agentgym_credit.bench.envs.alfworld_rooms_layouts`` checks them on held-out scenes, ``tests/test_alfworld_layouts.py``
refits and compares). Before issue 45 they were rule ``median`` on the 21 dev floor plans alone."""


def _scaled(lo: int, hi: int, size: float, own: float, weight: float) -> int:
    return lo + int(round((hi - lo) * (weight * size + (1.0 - weight) * own)))


def sample_room(room: RoomKind, rng: Any) -> tuple[dict[str, int], int]:
    """``(receptacle counts by kind, object count)`` of one room drawn with ``rng`` (a numpy Generator)."""
    size = float(rng.random()) ** room.size_skew
    counts = {kind: _scaled(lo, hi, size, float(rng.random()), 0.7) for kind, (lo, hi) in room.receptacles.items()}
    n_objects = _scaled(*room.n_objects, size, float(rng.random()), 0.5)
    return counts, n_objects


FIT_RULES = ("median", "range", "spread")
"""How :func:`fit_room_kind` fits: ``median`` scales the kind's object range so that the simulated median
equals the floor plans' median; ``range`` spans the floor plans' objects (10 % wider); both scale the receptacle
ranges to the median alone. ``spread`` (for many floor plans) scales the receptacle ranges so that the
simulated 90th percentile is the floor plans' and the size skew so that the median is theirs (the objects as
``median``): the large rooms are drawn as often as they occur."""


def _median_of(room: RoomKind, which: str, n: int = 401, q: float = 0.5) -> float:
    import numpy as np

    rng = np.random.default_rng(0)
    draws = [sample_room(room, rng) for _ in range(n)]
    vals = [sum(c.values()) for c, _ in draws] if which == "receptacles" else [o for _, o in draws]
    return float(np.quantile(vals, q))


def _fit_spread(base: RoomKind, with_recs: Any, t_med: float, t_q90: float) -> RoomKind:
    """Receptacle ranges at the floor plans' 90th percentile and the size skew at their median, alternately."""
    import dataclasses

    skew = base.size_skew
    room = base
    for _ in range(4):
        lo, hi = 0.0, 6.0
        for _ in range(22):
            mid = (lo + hi) / 2
            if _median_of(dataclasses.replace(with_recs(mid), size_skew=skew), "receptacles", q=0.9) < t_q90:
                lo = mid
            else:
                hi = mid
        room = dataclasses.replace(with_recs(hi), size_skew=skew)
        lo_s, hi_s = 0.05, 12.0
        for _ in range(22):
            mid = (lo_s + hi_s) / 2
            if _median_of(dataclasses.replace(room, size_skew=mid), "receptacles") > t_med:
                lo_s = mid
            else:
                hi_s = mid
        skew = round(hi_s, 3)
        room = dataclasses.replace(room, size_skew=skew)
    return room


def _bisect(make: Any, which: str, target: float, hi: float = 6.0) -> RoomKind:
    lo = 0.0
    for _ in range(22):
        mid = (lo + hi) / 2
        if _median_of(make(mid), which) < target:
            lo = mid
        else:
            hi = mid
    return make(hi)


def fit_room_kind(base: RoomKind, receptacles: Sequence[float], objects: Sequence[float],
                  rule: str = "median") -> RoomKind:
    """``base`` fitted to floor plans of its kind (one value a floor plan: its receptacles declared and its
    objects placed): the variable part of every receptacle range (``hi - lo``) scaled by one factor so that
    the simulated median total is just above the floor plans' median, then ``size_skew`` raised until it is
    on it (the rounded ranges move in steps, the skew continuously); the kinds a room holds and their
    minimums stay; then the object range by :data:`FIT_RULES` ``rule``. The object kinds stay. Rule ``spread``
    scales the ranges to the floor plans' 90th percentile and the skew (either way) to their median."""
    import dataclasses
    import statistics

    if rule not in FIT_RULES:
        raise ValueError(f"rule must be one of {FIT_RULES}, got {rule!r}")
    if not receptacles or not objects:
        raise ValueError(f"room {base.name!r}: fitting needs at least one floor plan")
    t_rec, t_obj = statistics.median(receptacles), statistics.median(objects)

    def with_recs(c: float) -> RoomKind:
        recs = {k: (lo, lo + int(round((hi - lo) * c))) for k, (lo, hi) in base.receptacles.items()}
        return dataclasses.replace(base, receptacles=recs)

    if rule == "spread":
        import numpy as np

        q90 = float(np.quantile(list(receptacles), 0.9))
        room = _fit_spread(base, with_recs, t_rec, q90)
        return _fit_objects(room, base, objects, t_obj)
    room = _bisect(with_recs, "receptacles", t_rec)  # ranges whose median is just above the target...
    # ...then the size skew (continuous, where the rounded ranges move in steps) brings the median onto it
    lo_s, hi_s = room.size_skew, 12.0
    for _ in range(22):
        mid = (lo_s + hi_s) / 2
        if _median_of(dataclasses.replace(room, size_skew=mid), "receptacles") > t_rec:
            lo_s = mid
        else:
            hi_s = mid
    room = dataclasses.replace(room, size_skew=round(hi_s, 3))
    if rule == "range":
        lo, hi = max(1, int(0.9 * min(objects))), max(2, int(round(1.1 * max(objects))))
        return dataclasses.replace(room, n_objects=(lo, max(lo, hi)))
    return _fit_objects(room, base, objects, t_obj)


def _fit_objects(room: RoomKind, base: RoomKind, objects: Sequence[float], t_obj: float) -> RoomKind:
    import dataclasses

    b_lo, b_hi = base.n_objects

    def with_objs(a: float) -> RoomKind:
        lo = max(1, int(round(b_lo * a)))
        return dataclasses.replace(room, n_objects=(lo, max(lo, int(round(b_hi * a)))))

    return _bisect(with_objs, "objects", t_obj)


__all__ = ["FIT_RULES", "RoomKind", "ROOMS", "SHAPES", "fit_room_kind", "sample_room"]
