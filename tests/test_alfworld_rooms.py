"""ALFWorld room sizes fitted with floor plans held out (issue 35 item 3): the fit, the generator's rooms,
the leave-one-floor-plan-out verdicts."""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import pytest

from agentgym_credit.envs.alfworld.rooms import ROOMS, SHAPES, fit_room_kind, sample_room

DEV = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "alfworld" / "dev"


def _medians(room, n=401):
    rng = np.random.default_rng(1)
    draws = [sample_room(room, rng) for _ in range(n)]
    return statistics.median(sum(c.values()) for c, _ in draws), statistics.median(o for _, o in draws)


@pytest.mark.parametrize("rule", ["median", "range"])
def test_a_fitted_room_has_the_floor_plans_median_size(rule):
    """Known effect: living rooms of 6-35 receptacles (median 16.5) fitted from a shape whose median is about
    twice that: the generated median follows the floor plans (the shape alone would not)."""
    shape = SHAPES["livingroom"]
    recs, objs = [6, 18, 15, 35], [15, 20, 17, 29]
    fitted = fit_room_kind(shape, recs, objs, rule)
    r, o = _medians(fitted)
    assert abs(r / statistics.median(recs) - 1) < 0.15, r
    assert set(fitted.receptacles) == set(shape.receptacles) and fitted.objects == shape.objects
    assert all(lo == shape.receptacles[k][0] for k, (lo, _) in fitted.receptacles.items())
    if rule == "median":
        assert abs(o / statistics.median(objs) - 1) < 0.15, o
    else:
        assert fitted.n_objects == (13, 32)
    r0, _ = _medians(shape)
    assert r0 > 1.5 * statistics.median(recs)


def test_fit_of_a_shape_to_its_own_size_is_nearly_a_no_op():
    """Null case: floor plans exactly as big as the shape's simulated median give back about the shape."""
    shape = SHAPES["bedroom"]
    r, o = _medians(shape)
    fitted = fit_room_kind(shape, [r], [o], "median")
    assert abs(_medians(fitted)[0] - r) <= 1 and abs(_medians(fitted)[1] - o) <= 1


def test_fit_refuses_bad_input():
    with pytest.raises(ValueError, match="rule"):
        fit_room_kind(SHAPES["kitchen"], [30], [40], "mean")
    with pytest.raises(ValueError, match="floor plan"):
        fit_room_kind(SHAPES["kitchen"], [], [], "median")


def test_generate_problem_in_a_given_room_kind_with_given_rooms():
    pytest.importorskip("alfworld")
    from agentgym_credit.envs.alfworld.generator import generate_problem

    p = generate_problem("pick_and_place_simple", 3, kind="bathroom")
    assert p.room == "bathroom"
    tiny = {**ROOMS, "bedroom": fit_room_kind(SHAPES["bedroom"], [6], [8], "median")}
    q = generate_problem("pick_and_place_simple", 3, rooms=tiny, kind="bedroom")
    assert q.room == "bedroom" and q.problem.count(" - receptacle") < 12
    with pytest.raises(ValueError, match="room kind"):
        generate_problem("pick_and_place_simple", 3, kind="garage")
    with pytest.raises(ValueError, match="can pose"):
        generate_problem("pick_heat_then_place_in_recep", 3, kind="bathroom")  # no microwave there
    with pytest.raises(ValueError, match="can pose"):  # issue 45: was a problem the engine could not load
        generate_problem("pick_clean_then_place_in_recep", 0, kind="bedroom")


def test_verdicts_null_case_generated_equal_to_real():
    from agentgym_credit.bench.envs.alfworld_rooms import verdicts

    real = [{"room": k, "plan": i, "objects": 10 + i, "receptacles": 5 + i, "admissible": 8 + i, "expert_steps": 4}
            for k in ("kitchen", "bedroom") for i in range(3)]
    vs = verdicts(real, [dict(g) for g in real])
    assert len(vs) == 8 and all(v["within"] and v["ratio"] == 1.0 for v in vs)
    vs = verdicts(real, [{**g, "objects": 2 * g["objects"]} for g in real])
    assert [v["measure"] for v in vs if not v["within"]] == ["objects", "objects"]
    # one value a floor plan: three games of one plan weigh as much as the one game of another
    plans = [{**real[0], "plan": 0}] * 3 + [{**real[1], "receptacles": 20}, {**real[2], "receptacles": 30}]
    vs = verdicts(plans, plans)
    assert next(v for v in vs if v["room"] == "kitchen" and v["measure"] == "receptacles")["real"] == 20
