"""The CPU text policy of ``truth.text_policy``: its prior's start, the REINFORCE step, its file."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from agentgym_credit.errors import PolicyFileError
from agentgym_credit.truth.policies import SnapshotPolicy
from agentgym_credit.truth.text_policy import TextActor, TextPolicy

INFO = {"admissible_actions": ["go to desk 1", "take apple 1 from desk 1", "look", "open fridge 1"],
        "expert_action": "go to desk 1", "goal": "put a clean apple in fridge", "obs_key": "k0"}
OBS = "You are in the middle of a room. On the desk 1, you see a apple 1."


def _success(factory, tasks, rollouts, max_steps, pol, seed=0):
    env = factory()
    rng = np.random.default_rng(seed)
    wins = n = 0
    for task in tasks:
        for r in range(rollouts):
            obs, info = env.reset(seed=r, options={"task": task})
            for _ in range(max_steps):
                acts, p = pol.distribution(obs, info)
                obs, _, term, trunc, info = env.step(acts[rng.choice(len(p), p=p)])
                if term or trunc:
                    break
            wins += bool(info["won"])
            n += 1
    return wins / n


def test_prior_starts_in_range_on_webshop():
    from agentgym_credit.truth.experts import WebShopExpertFactory

    s = _success(WebShopExpertFactory(1000), range(16), 4, 15, TextPolicy())
    assert 0.05 <= s <= 0.50, s  # neither near 0 nor solved (generator v9's harder goals: 0.094; v7: >= 0.10)
    # the bonus is what sets the start: without it the prior alone is near 0
    assert _success(WebShopExpertFactory(1000), range(16), 4, 15, TextPolicy(expert_bonus=0.0)) < s


def test_prior_starts_in_range_on_alfworld():
    pytest.importorskip("alfworld")
    from agentgym_credit.truth.experts import ALFWorldExpertFactory

    s = _success(ALFWorldExpertFactory(), range(6), 4, 50, TextPolicy())
    assert 0.10 <= s <= 0.50, s


def test_is_a_snapshot_policy_and_prior_prefers_expert():
    pi = TextPolicy()
    assert isinstance(pi, SnapshotPolicy)
    acts, p = pi.distribution(OBS, INFO)
    assert acts == INFO["admissible_actions"] and abs(p.sum() - 1) < 1e-12
    assert int(np.argmax(p)) == 0


@pytest.mark.parametrize("parts", [("linear",), ("residual",), ("linear", "residual")])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_reinforce_moves_chosen_action_with_advantage_sign(parts, sign):
    pi = TextPolicy(parts=parts)
    actor = TextActor(pi, np.random.default_rng(0))
    out = actor([OBS], [INFO])[0]
    d = out["decision"]
    before = pi.distribution(OBS, INFO)[1][d.idx]
    stats = pi.update([d], np.array([sign]), lr=0.5)
    after = pi.distribution(OBS, INFO)[1][d.idx]
    assert (after - before) * sign > 1e-3
    assert all(stats[f"grad_{p}"] > 0 for p in parts)
    # zero advantage: nothing moves
    w0, r0 = pi.w.copy(), dict(pi.residual)
    pi.update([d], np.array([0.0]), lr=0.5)
    assert np.array_equal(pi.w, w0) and pi.residual == r0


def test_linear_part_generalizes_to_another_game():
    """Learned on one game's text, the linear part moves the same choice in a game with other numbers."""
    pi = TextPolicy(parts=("linear",), expert_bonus=0.0)
    d = pi.act(OBS, INFO)[1]
    d.idx = 1
    pi.update([d], np.array([1.0]), lr=1.0)
    other = {**INFO, "admissible_actions": ["go to desk 3", "take apple 2 from desk 3", "look"], "obs_key": "k9"}
    p = pi.distribution("On the desk 3, you see a apple 2.", other)[1]
    assert p[1] > 0.5


def test_save_load_round_trips_exactly(tmp_path):
    pi = TextPolicy(expert_bonus=1.25, buckets=1 << 10)
    actor = TextActor(pi, np.random.default_rng(1))
    ds = [actor([OBS], [INFO])[0]["decision"] for _ in range(5)]
    pi.update(ds, np.random.default_rng(2).normal(size=5), lr=0.3)
    path = pi.save(tmp_path / "p" / "seed0-grpo.npz", meta={"env": "webshop", "arm": "grpo", "seed": 0})
    back, meta = TextPolicy.load(path)
    assert meta == {"env": "webshop", "arm": "grpo", "seed": 0}
    assert back.config() == pi.config()
    assert np.array_equal(back.w, pi.w) and back.residual == pi.residual
    assert np.array_equal(back.distribution(OBS, INFO)[1], pi.distribution(OBS, INFO)[1])
    assert not list((tmp_path / "p").glob(".*tmp"))  # no temporary file left behind


def _write_npz(path, **arrays):
    np.savez(path, **arrays)
    return path


def _good_arrays(tmp_path):
    p = TextPolicy(buckets=64)
    p.w[3] = 1.5
    p.residual["k\x1fa"] = -0.5
    path = p.save(tmp_path / "good.npz")
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("case", ["missing", "garbage", "truncated", "format", "version", "index", "nan",
                                  "config", "pickle", "extra"])
def test_bad_files_raise_policy_file_error(tmp_path, case):
    a = _good_arrays(tmp_path)
    path = tmp_path / "bad.npz"
    if case == "missing":
        path = tmp_path / "nope.npz"
    elif case == "garbage":
        path.write_bytes(b"not a zip at all")
    elif case == "truncated":
        path.write_bytes((tmp_path / "good.npz").read_bytes()[:100])
    elif case == "format":
        _write_npz(path, **{**a, "format": np.array("something-else")})
    elif case == "version":
        _write_npz(path, **{**a, "version": np.array(99)})
    elif case == "index":
        _write_npz(path, **{**a, "w_idx": np.array([64])})
    elif case == "nan":
        _write_npz(path, **{**a, "res_vals": np.array([np.nan])})
    elif case == "config":
        cfg = json.loads(str(a["config"]))
        _write_npz(path, **{**a, "config": np.array(json.dumps({**cfg, "buckets": "many"}))})
    elif case == "pickle":
        _write_npz(path, **{**a, "res_keys": np.array([object()], dtype=object)})
    elif case == "extra":
        _write_npz(path, **a)
        with zipfile.ZipFile(path, "a") as zf:
            zf.writestr("more.npy", b"x")
    with pytest.raises(PolicyFileError):
        TextPolicy.load(path)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        TextPolicy(parts=("table",))
    with pytest.raises(ValueError):
        TextPolicy(buckets=1)
    pi = TextPolicy()
    d = pi.act(OBS, INFO)[1]
    d.idx = 0
    with pytest.raises(ValueError):
        pi.update([d], np.array([1.0, 2.0]), lr=0.1)
    with pytest.raises(ValueError):
        pi.update([d], np.array([np.inf]), lr=0.1)


_ITEM = ("Instruction: [SEP] a plum lipstick that is long lasting, and price lower than 50.00 dollars [SEP] Back to "
         "Search [SEP] < Prev [SEP] color [SEP] plum [SEP] red [SEP] Festuara Long Lasting Lipstick [SEP] Price: "
         "$12.93 [SEP] Rating: 2.0 [SEP] Description [SEP] Buy Now")
_RESULTS = ("Instruction: [SEP] a plum lipstick that is long lasting, and price lower than 50.00 dollars [SEP] Back "
            "to Search [SEP] Page 1 (Total results: 50) [SEP] Next > [SEP] B0S6KE9EGP [SEP] Festuara Long Lasting "
            "Lipstick [SEP] $12.93 to $18.72 [SEP] B056KMJ5Z6 [SEP] Heataiwath Everyday Lipstick [SEP] $61.39")
_GOAL = "a plum lipstick that is long lasting, and price lower than 50.00 dollars"


def test_match_features_read_listings_and_product_pages_against_the_goal():
    from agentgym_credit.truth.text_match import match_names, page_facts

    f = page_facts(_RESULTS, _GOAL)
    assert set(f["listings"]) == {"b0s6ke9egp", "b056kmj5z6"} and f["product"] is None
    assert f["listings"]["b0s6ke9egp"][1] == "1" and f["listings"]["b056kmj5z6"][1] == "0"
    assert "mL|best1" in match_names(_RESULTS, _GOAL, "click[b0s6ke9egp]")
    assert "mL|best0" in match_names(_RESULTS, _GOAL, "click[b056kmj5z6]")
    assert any(n.startswith("mR|next >|") for n in match_names(_RESULTS, _GOAL, "click[next >]"))
    item = page_facts(_ITEM, _GOAL)
    assert item["product"] == (0.75, "1") and not item["listings"]  # festuara is not a goal word
    assert "mP|< prev|q3|p1" in match_names(_ITEM, _GOAL, "click[< prev]")
    assert "mC|opt-goal" in match_names(_ITEM, _GOAL, "click[plum]") and "mC|opt" in match_names(_ITEM, _GOAL, "click[red]")
    assert match_names("no pages here", "", "go to desk 1") == ["mC|opt"]


def test_the_match_part_is_opt_in_learns_and_round_trips(tmp_path):
    info = {"admissible_actions": ["click[< prev]", "click[buy now]", "click[plum]"], "goal": _GOAL, "obs_key": "k"}
    base, match = TextPolicy(1.0), TextPolicy(1.0, parts=("linear", "residual", "match"))
    assert base.parts == ("linear", "residual")
    for a in info["admissible_actions"]:
        fb, fm = base.features(_ITEM, _GOAL, a), match.features(_ITEM, _GOAL, a)
        assert set(fb) < set(fm)
    only = TextPolicy(1.0, parts=("match",))
    _, d = only.act(_ITEM, info)
    d.idx = 1
    only.update([d], np.array([1.0]), 1.0)
    _, p = only.distribution(_ITEM, info)
    assert p[1] > d.probs[1]
    path = only.save(tmp_path / "m.npz")
    back, _ = TextPolicy.load(path)
    assert back.parts == ("match",) and np.allclose(back.distribution(_ITEM, info)[1], p)
