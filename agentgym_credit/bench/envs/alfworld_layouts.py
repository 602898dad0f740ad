"""ALFWorld's scene layouts as a sample of real rooms: the split into fit and held-out scenes, and the room
sizes the layouts imply.

What lives here: :func:`layout_dir` (the installed alfworld package's ``gen/layouts``), :func:`scenes` (the
ALFRED floor plans it ships layouts for), :func:`split` (fit or held-out, by a rule fixed before any fit:
:data:`VALID_UNSEEN` plus every scene whose number ends in one of :data:`HELD_OUT_DIGITS`, the dev floor plans
always fit), :func:`read_layout` (one scene's receptacles and object types), :func:`base_counts` (what a layout
says about a room's size, in layout units) and :func:`calibrate` / :func:`estimate` (layout units to the PDDL
counts of a real game, calibrated on the dev floor plans, whose games give both).

Why an estimate. A scene's ``FloorPlan<N>-openable.json`` lists the receptacles ALFWorld's layout script could
reach, not every receptacle its games declare: it leaves out kinds it never "opens" (StoveBurner, Toaster,
CoffeeMachine, GarbageCan, the towel and toilet-paper holders) and some instances of cabinets and drawers;
``FloorPlan<N>-objects.json`` lists every object *type* in the scene, without counts. So a layout's size is
(:func:`base_counts`) its listed receptacles plus one of every static receptacle kind the scene holds that the
list leaves out (four StoveBurners), and the number of small-object types the generator knows that the scene
holds; :func:`calibrate` scales both to the dev games' PDDL counts per room kind (the median per-plan ratio),
and :func:`~agentgym_credit.bench.envs.alfworld_rooms_layouts.estimator_check` scores that with each dev floor plan
left out.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

VALID_UNSEEN = (10, 219, 308, 424)
"""ALFRED's ``valid_unseen`` scenes (ALFWorld's out-of-distribution evaluation floor plans): always held out."""
HELD_OUT_DIGITS = (1, 5)
"""Scenes whose number ends in one of these digits are held out too (dev floor plans excepted: they are fit
data). Chosen before any layout was measured (``benchmarks/envs/alfworld_rooms_layouts.predictions.md``)."""
_SCENE = re.compile(r"^FloorPlan(\d+)-openable\.json$")
_FIXED = {"StoveBurner": 4}
"""Receptacle kinds a scene holds several of whenever it holds one (every ALFRED kitchen has four burners)."""
_ALIASES = {"Sink": "SinkBasin", "Bathtub": "BathtubBasin"}


def layout_dir() -> Path:
    """``gen/layouts`` of the installed alfworld package (``FileNotFoundError`` when it has none)."""
    import alfworld

    d = Path(alfworld.__file__).resolve().parent / "gen" / "layouts"
    if not d.is_dir():
        raise FileNotFoundError(f"{d}: the installed alfworld package ships no scene layouts")
    return d


def scene_kind(scene: int) -> str:
    """Room kind of ALFRED scene ``scene`` (1-30 kitchen, 201-230 living room, 301-330 bedroom, 401-430
    bathroom); ``ValueError`` for any other number."""
    kind = {0: "kitchen", 2: "livingroom", 3: "bedroom", 4: "bathroom"}.get(scene // 100)
    if kind is None or not 1 <= scene % 100 <= 30:
        raise ValueError(f"scene {scene} is not an ALFRED floor plan (1-30, 201-230, 301-330, 401-430)")
    return kind


def scenes(directory: Path | None = None) -> list[int]:
    """The scenes ``directory`` (default :func:`layout_dir`) has an ``-openable.json`` layout for, sorted."""
    d = directory or layout_dir()
    return sorted(int(m.group(1)) for p in d.iterdir() if (m := _SCENE.match(p.name)))


def split(all_scenes: Iterable[int], dev_plans: Iterable[int]) -> dict[int, str]:
    """``"fit"`` or ``"held_out"`` for every scene: held out are :data:`VALID_UNSEEN` and the scenes whose
    number ends in a digit of :data:`HELD_OUT_DIGITS`, except the dev floor plans (always ``"fit"``: their
    games are the fit's data). A dev plan among :data:`VALID_UNSEEN` is refused (``ValueError``)."""
    dev = set(dev_plans)
    if dev & set(VALID_UNSEEN):
        raise ValueError(f"dev floor plans {sorted(dev & set(VALID_UNSEEN))} are ALFWorld's held-back scenes")
    return {s: "fit" if s in dev else "held_out" if s in VALID_UNSEEN or s % 10 in HELD_OUT_DIGITS else "fit"
            for s in all_scenes}


def _static_receptacles() -> frozenset[str]:
    import alfworld.gen.constants as c

    return frozenset(c.VAL_RECEPTACLE_OBJECTS) - frozenset(c.MOVABLE_RECEPTACLES_SET)


def read_layout(scene: int, directory: Path | None = None) -> dict[str, Any]:
    """``{"scene", "kind", "receptacles": Counter by kind (the listed ones), "types": set of object types}``."""
    d = directory or layout_dir()
    try:
        listed = json.loads((d / f"FloorPlan{scene}-openable.json").read_text())
        types = json.loads((d / f"FloorPlan{scene}-objects.json").read_text())
    except (OSError, ValueError) as e:
        raise FileNotFoundError(f"scene {scene}: no readable layout in {d} ({e})") from e
    recs = Counter(_ALIASES.get(k.split("|")[0], k.split("|")[0]) for k in listed)
    return {"scene": scene, "kind": scene_kind(scene), "receptacles": recs,
            "types": {_ALIASES.get(t, t) for t in types}}


def base_counts(layout: Mapping[str, Any], small_objects: Sequence[str]) -> dict[str, int]:
    """A layout's size in layout units: ``receptacles`` = the listed ones plus one of every static receptacle
    kind the scene holds but the list leaves out (four StoveBurners); ``objects`` = how many of the
    ``small_objects`` types the scene holds."""
    listed: Counter = layout["receptacles"]
    missing = (_static_receptacles() & layout["types"]) - set(listed)
    recs = sum(listed.values()) + sum(_FIXED.get(k, 1) for k in missing)
    return {"receptacles": recs, "objects": len(set(small_objects) & layout["types"])}


def calibrate(pairs: Sequence[tuple[str, Mapping[str, float], Mapping[str, float]]]) -> dict[str, dict[str, float]]:
    """Per room kind and measure (``receptacles``, ``objects``): the median of real / base over ``pairs`` of
    (kind, real PDDL counts, :func:`base_counts`), one pair a dev floor plan. A kind without pairs is absent."""
    out: dict[str, dict[str, float]] = {}
    for kind in {k for k, _, _ in pairs}:
        mine = [(r, b) for k, r, b in pairs if k == kind]
        out[kind] = {m: statistics.median(r[m] / b[m] for r, b in mine if b[m] > 0) for m in ("receptacles", "objects")}
    return out


def estimate(kind: str, base: Mapping[str, float], cal: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The PDDL counts a real game in this layout would have: :func:`base_counts` times the kind's ratios."""
    if kind not in cal:
        raise ValueError(f"no calibration for room kind {kind!r} (no dev floor plan of that kind)")
    return {m: round(base[m] * cal[kind][m], 1) for m in ("receptacles", "objects")}


__all__ = ["HELD_OUT_DIGITS", "VALID_UNSEEN", "base_counts", "calibrate", "estimate", "layout_dir",
           "read_layout", "scene_kind", "scenes", "split"]
