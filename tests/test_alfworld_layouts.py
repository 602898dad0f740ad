"""ALFWorld room sizes fitted to the scene layouts (issue 45): the fit/held-out split, what a layout says about a
room's size, the estimate calibrated on the dev floor plans, the ``spread`` fit rule, and the generator's ROOMS
being that fit."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np
import pytest
from alfworld_fixtures import private_sas_cache  # noqa: F401  (autouse: no write to ~/.cache)

from agentgym_credit.bench.envs.alfworld_layouts import (
    VALID_UNSEEN,
    base_counts,
    calibrate,
    estimate,
    read_layout,
    scene_kind,
    scenes,
    split,
)
from agentgym_credit.envs.alfworld.rooms import ROOMS, SHAPES, _median_of, fit_room_kind

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfworld" / "dev"


def test_split_holds_out_the_valid_unseen_scenes_and_the_digit_rule_but_never_a_dev_plan():
    all_scenes = [*range(1, 31), *range(201, 231), *range(301, 331), *range(401, 431)]
    sp = split(all_scenes, dev_plans=[11, 15, 305, 227])
    assert all(sp[s] == "held_out" for s in VALID_UNSEEN)
    assert sp[1] == sp[25] == sp[421] == sp[315] == "held_out"
    assert sp[11] == sp[15] == sp[305] == sp[227] == sp[2] == sp[228] == "fit"  # dev plans ending in 1/5 stay fit
    held = [s for s in all_scenes if sp[s] == "held_out"]
    assert {scene_kind(s) for s in held} == {"kitchen", "livingroom", "bedroom", "bathroom"}
    assert 20 <= len(held) <= 30
    with pytest.raises(ValueError, match="held-back"):
        split(all_scenes, dev_plans=[219])


def test_scene_kind_refuses_numbers_that_are_no_floor_plan():
    assert [scene_kind(s) for s in (1, 230, 301, 430)] == ["kitchen", "livingroom", "bedroom", "bathroom"]
    for bad in (0, 31, 99, 231, 500):
        with pytest.raises(ValueError, match="ALFRED floor plan"):
            scene_kind(bad)


def _write_layout(d: Path, scene: int, listed: list[str], types: list[str]) -> None:
    (d / f"FloorPlan{scene}-openable.json").write_text(json.dumps({f"{k}|+0{i}|0|0": [0, 0, 0, 30]
                                                                   for i, k in enumerate(listed)}))
    (d / f"FloorPlan{scene}-objects.json").write_text(json.dumps(types))


def test_base_counts_add_the_receptacle_kinds_the_layout_list_leaves_out(tmp_path):
    """Known effect: a kitchen list without burners, toaster and bin counts them from the scene's object types
    (four burners); a listed kind is not counted twice; a sink listed as ``Sink`` is the SinkBasin kind."""
    pytest.importorskip("alfworld")
    _write_layout(tmp_path, 7, ["Cabinet", "Cabinet", "Fridge", "Sink"],
                  ["Cabinet", "Fridge", "Sink", "SinkBasin", "StoveBurner", "Toaster", "GarbageCan", "Apple", "Mug",
                   "Window", "Apple"])
    lay = read_layout(7, tmp_path)
    assert lay["kind"] == "kitchen" and lay["receptacles"]["SinkBasin"] == 1
    assert base_counts(lay, ["Apple", "Mug", "Egg"]) == {"receptacles": 4 + 4 + 1 + 1, "objects": 2}
    assert scenes(tmp_path) == [7]
    with pytest.raises(FileNotFoundError, match="scene 8"):
        read_layout(8, tmp_path)


def test_calibration_is_the_median_ratio_and_estimate_refuses_an_uncalibrated_kind():
    cal = calibrate([("kitchen", {"receptacles": 30, "objects": 40}, {"receptacles": 20, "objects": 20}),
                     ("kitchen", {"receptacles": 20, "objects": 40}, {"receptacles": 20, "objects": 20}),
                     ("kitchen", {"receptacles": 44, "objects": 40}, {"receptacles": 40, "objects": 20})])
    assert cal["kitchen"] == {"receptacles": 1.1, "objects": 2.0}
    assert estimate("kitchen", {"receptacles": 10, "objects": 5}, cal) == {"receptacles": 11.0, "objects": 10.0}
    with pytest.raises(ValueError, match="no calibration"):
        estimate("bedroom", {"receptacles": 10, "objects": 5}, cal)


@pytest.mark.slow
def test_spread_rule_draws_the_large_rooms_the_median_rule_cannot():
    """Known effect: 23 living rooms of 6-35 receptacles (median 13, 90th percentile ~22). Rule ``median``
    matches the median only; ``spread`` also matches the 90th percentile (the large rooms)."""
    recs = [6, 8, 8, 9, 10, 11, 12, 12, 12, 13, 13, 13, 13, 14, 14, 15, 16, 17, 19, 21, 22, 27, 35]
    objs = [18] * len(recs)
    spread = fit_room_kind(SHAPES["livingroom"], recs, objs, "spread")
    q90 = float(np.quantile(recs, 0.9))
    assert abs(_median_of(spread, "receptacles") - 13) <= 1
    assert abs(_median_of(spread, "receptacles", q=0.9) / q90 - 1) <= 0.15
    assert set(spread.receptacles) == set(SHAPES["livingroom"].receptacles)
    median = fit_room_kind(SHAPES["livingroom"], recs, objs, "median")
    assert _median_of(median, "receptacles", q=0.9) < 0.85 * q90  # the flaw the rule fixes


@pytest.mark.slow
@pytest.mark.skipif(not DEV.is_dir(), reason="needs the dev games in ../shared/data/alfworld/dev")
def test_the_generators_rooms_are_the_spread_fit_on_the_fit_scenes_and_dev_plans():
    """ROOMS in rooms.py are written out by hand from ``bench alfworld_rooms_layouts``: refit (PDDL counts of the
    dev games, layouts of the fit scenes) and compare; the fit's medians are the fit scenes'."""
    pytest.importorskip("alfworld")
    from agentgym_credit.bench.envs.alfworld_games import problem_counts, room_of
    from agentgym_credit.bench.envs.alfworld_rooms import _PLAN
    from agentgym_credit.bench.envs.alfworld_rooms_layouts import (
        dev_plan_counts,
        fit_rooms_on_layouts,
        fit_values,
        layout_rows,
    )
    from agentgym_credit.envs.alfworld.games import find_real_games

    games = []
    for ref in find_real_games(DEV, include_unsolvable=True):
        top = ref.game_id.split("/")[0]
        games.append({"room": room_of(ref.game_id, {}), "plan": int(_PLAN.search(top).group(1)),
                      **problem_counts(ref.load()["pddl_problem"])})
    rows = layout_rows(dev_plan_counts(games))
    assert not any(r["split"] == "held_out" and r["real"] for r in rows)
    assert fit_rooms_on_layouts(rows) == ROOMS
    vals = fit_values(rows)
    for kind, room in ROOMS.items():
        assert abs(_median_of(room, "receptacles") / statistics.median(vals[kind]["receptacles"]) - 1) <= 0.1


def test_held_out_scenes_are_estimated_with_the_dev_calibration_and_the_admissible_offset():
    """Known effect: dev plans whose real counts are 1.5x their layout units; a held-out scene of 10 layout
    receptacles is estimated at 15 and its admissible commands at 15 + the kind's offset; a dev plan left out of
    its own calibration is scored by the others'."""
    from agentgym_credit.bench.envs.alfworld_rooms_layouts import (
        admissible_offsets,
        estimator_check,
        fit_values,
        held_out_rows,
    )

    rows = [{"scene": s, "kind": "bedroom", "split": "fit", "base": {"receptacles": b, "objects": b},
             "real": {"receptacles": 1.5 * b, "objects": 2 * b}} for s, b in ((301, 8), (302, 12), (303, 10))]
    rows += [{"scene": 311, "kind": "bedroom", "split": "held_out", "base": {"receptacles": 10, "objects": 9},
              "real": None},
             {"scene": 304, "kind": "bedroom", "split": "fit", "base": {"receptacles": 20, "objects": 9}, "real": None}]
    real = [{"room": k, "plan": p, "receptacles": 10, "admissible": a} for k, p, a in
            (("bedroom", 301, 13), ("bedroom", 302, 14), ("bedroom", 302, 12), ("kitchen", 7, 14),
             ("livingroom", 201, 13), ("bathroom", 401, None), ("bathroom", 402, 13))]
    off = admissible_offsets(real)
    assert off == {"kitchen": 4, "livingroom": 3, "bedroom": 3, "bathroom": 3}
    (held,) = held_out_rows(rows, off)
    assert held == {"room": "bedroom", "plan": 311, "receptacles": 15.0, "objects": 18.0, "admissible": 18.0,
                    "expert_steps": None}
    assert all(abs(c["receptacles"][2] - 1) < 1e-9 for c in estimator_check(rows))
    assert sorted(fit_values(rows)["bedroom"]["receptacles"]) == [12, 15, 18, 30]  # dev real + one estimate


@pytest.mark.slow
def test_the_oracle_wins_generated_games_of_every_room_kind_and_task_type_at_the_first_draw():
    """Issue 45's rooms (larger living rooms and bathrooms drawn more often): every (room kind, task type) the
    generator poses, one seed each, is won by the oracle expert on the engine without a redraw."""
    pytest.importorskip("alfworld")
    pytest.importorskip("fast_downward")
    from agentgym_credit.bench.envs.alfworld_rooms_layouts import _task_types
    from agentgym_credit.envs.alfworld.engine import make_engine
    from agentgym_credit.envs.alfworld.generator import check_solvable, generate_problem, problem_to_game

    engine = make_engine(fast=True, facts=True)
    lost = [(kind, t, seed) for kind in ROOMS for t in _task_types(kind) for seed in (0,)
            if check_solvable(problem_to_game(generate_problem(t, seed, kind=kind)), engine) is None]
    assert lost == []


def test_drawn_rooms_follow_the_rooms_given_and_add_the_played_offset():
    """Known effect: bedrooms refitted to 6 receptacles are drawn small, kitchens as ROOMS; admissible is each
    problem's receptacles plus its kind's median played offset."""
    pytest.importorskip("alfworld")
    from agentgym_credit.bench.envs.alfworld_rooms_layouts import drawn_rooms

    tiny = {**ROOMS, "bedroom": fit_room_kind(SHAPES["bedroom"], [6], [8], "median")}
    played = [{"room": k, "receptacles": 10, "admissible": 10 + extra}
              for k, extra in (("kitchen", 3), ("kitchen", 5), ("kitchen", 4), ("livingroom", 3), ("bedroom", 2),
                               ("bathroom", 3))]
    rows = drawn_rooms(tiny, 6, played, salt=1)
    assert len(rows) == 24
    bed = [r["receptacles"] for r in rows if r["room"] == "bedroom"]
    kit = [r["receptacles"] for r in rows if r["room"] == "kitchen"]
    assert statistics.median(bed) <= 8 < 20 <= statistics.median(kit)
    assert all(r["admissible"] - r["receptacles"] == {"kitchen": 4, "bedroom": 2}.get(r["room"], 3) for r in rows)
