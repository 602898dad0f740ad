"""StepArrays validation, the registry's errors, group_stats, token broadcast, lazy oracle import."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_estimators import random_batch, ref_group_stats

import agentgym_credit.credit as credit
from agentgym_credit.credit import (
    ESTIMATORS,
    StepArrays,
    advantages,
    broadcast_to_tokens,
    estimator_options,
    group_stats,
    register,
)
from agentgym_credit.credit.grouping import pair_groups
from agentgym_credit.errors import StepArraysError


def _cols(**over):
    base = dict(group_id=[0, 0, 0], traj_id=[0, 0, 1], t=[0, 1, 0], reward=[0.0, 1.0, 0.0],
                done=[False, True, True], state_key=[1, 2, 1], obs_key=[1, 2, 1])
    base.update(over)
    return base


@pytest.mark.parametrize("over, match", [
    (dict(reward=[0.0, 1.0]), "rows"),
    (dict(reward=[0.0, np.nan, 0.0]), "finite"),
    (dict(reward=[0.0, np.inf, 0.0]), "finite"),
    (dict(t=[0, 2, 0]), "missing or repeated"),
    (dict(t=[0, 0, 0]), "missing or repeated"),
    (dict(t=[1, 2, 0]), "missing or repeated"),
    (dict(group_id=[0, 1, 0]), "spread over groups"),
    (dict(history_keys=[1, 2, 3]), r"\[n, K\+1\]"),
    (dict(history_keys=[[1, 2], [1], [1, 2]]), "ragged"),
    (dict(reward=[[0.0], [1.0], [0.0]]), "1-D"),
    (dict(state_key=[1.5, 2.0, 1.0]), "integer"),
    # fractional ids and step indices would be truncated silently (0.2 and 0.7 -> one group)
    (dict(group_id=[0.2, 0.2, 0.7], traj_id=[0, 0, 1]), "whole numbers"),
    (dict(traj_id=[0.0, 0.0, 1.5]), "whole numbers"),
    (dict(t=[0.0, 0.5, 0.0]), "whole numbers"),
    (dict(t=[0.0, np.nan, 0.0]), "whole numbers"),
    # a flag of 0.5 or 2 is not a bool: refuse rather than read it as True
    (dict(valid=[1.0, 0.5, 1.0]), "0 or 1"),
    (dict(done=[0, 2, 1]), "0 or 1"),
    # zero history levels: every HGPO level would silently be absent
    (dict(history_keys=np.zeros((3, 0), dtype=np.uint64)), "at least one level"),
])
def test_step_arrays_reject_bad_input(over, match):
    with pytest.raises(StepArraysError, match=match):
        StepArrays.from_lists(**_cols(**over))


def test_step_arrays_from_python_lists_of_stable_hashes():
    # plain Python ints above and below 2**63 (as stable_hash gives): np.asarray alone makes float64
    # of them (rounding the keys), so they must be read exactly as uint64
    from agentgym_credit.keys import stable_hash

    keys = [stable_hash(k) for k in ("a", "b", "c", "d", "e", "f", "g", "h")]
    big = [k for k in keys if k >= 2**63][:1]
    small = [k for k in keys if k < 2**63][:2]
    assert big and len(small) == 2
    sk = [big[0], small[0], big[0]]
    s = StepArrays.from_lists(**_cols(state_key=sk, obs_key=sk, history_keys=[[k, 0] for k in sk]))
    assert s.state_key.dtype == np.uint64 and [int(x) for x in s.state_key] == sk
    assert [int(x) for x in s.history_keys[:, 0]] == sk
    with pytest.raises(StepArraysError, match="integer"):
        StepArrays.from_lists(**_cols(state_key=[big[0], 1.5, 2]))


def test_step_arrays_accept_whole_floats_and_0_1_flags():
    s = StepArrays.from_lists(**_cols(group_id=[3.0, 3.0, 3.0], t=[0.0, 1.0, 0.0], done=[0, 1, 1],
                                      valid=[1.0, 0.0, 1.0]))
    assert s.group_id.dtype == np.int64 and s.group_id.tolist() == [3, 3, 3]
    assert s.t.tolist() == [0, 1, 0]
    assert s.done.tolist() == [False, True, True] and s.valid.tolist() == [True, False, True]


@pytest.mark.parametrize("name, opts, match", [
    # options that the current settings do not use are still checked: a typo is never ignored
    ("gigpo", dict(omega=0.0, anchor="obs"), "anchor"),
    ("gigpo", dict(omega=0.0, step_norm="std"), "step_norm"),
    ("gigpo", dict(omega=0.0, gamma=1.5), "gamma"),
    ("hgpo", dict(episode_baseline="traj"), "episode_baseline"),
    ("hgpo", dict(episode_norm="std"), "episode_norm"),
    ("hgpo_precision", dict(omega=float("nan")), "omega"),
])
def test_unused_options_are_still_validated(name, opts, match):
    with pytest.raises(ValueError, match=match):
        advantages(name, StepArrays.from_lists(**_cols()), **opts)


def test_layout_sorts_unsorted_rows_and_skips_sorting_sorted_ones():
    s = StepArrays.from_lists(**_cols(traj_id=[5, 5, 2], t=[1, 0, 0], done=[True, False, True]))
    assert s.layout.order.tolist() == [2, 1, 0]
    assert s.layout.lengths.tolist() == [1, 2]
    sorted_s = StepArrays.from_lists(**_cols())
    assert sorted_s.layout.order.tolist() == [0, 1, 2]


def test_registry_errors_are_clear():
    s = StepArrays.from_lists(**_cols())
    with pytest.raises(KeyError, match="registered: .*gigpo"):
        advantages("gigp0", s)
    with pytest.raises(TypeError, match="no option gama.*gamma"):
        advantages("gigpo", s, gama=0.9)
    with pytest.raises(ValueError, match="norm must be one of"):
        advantages("grpo", s, norm="std")
    with pytest.raises(ValueError, match="gamma must lie in"):
        advantages("mc", s, gamma=1.5)
    with pytest.raises(ValueError, match="depth must lie in 0..0"):
        advantages("hgpo", s, depth=2)
    with pytest.raises(StepArraysError, match="value="):
        advantages("gae", s)
    with pytest.raises(TypeError, match="StepArrays"):
        advantages("grpo", {"reward": [1.0]})
    assert estimator_options("gigpo")["anchor"] == "state_key"


def test_register_a_custom_estimator():
    s = StepArrays.from_lists(**_cols())
    register("_test_ones", lambda steps, *, scale=1.0: np.full(steps.n, scale))
    try:
        assert advantages("_test_ones", s, scale=2.0).tolist() == [2.0, 2.0, 2.0]
        with pytest.raises(ValueError, match="already registered"):
            register("_test_ones", lambda steps: steps.reward)
    finally:
        ESTIMATORS.pop("_test_ones")


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_empty_batch(name):
    z = np.zeros(0)
    s = StepArrays(group_id=z, traj_id=z, t=z, reward=z, done=z, state_key=z, obs_key=z, value=z)
    assert advantages(name, s).shape == (0,)


def test_pair_groups_exact_even_with_many_shared_keys():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 50, 5000)
    key = rng.integers(0, 40, 5000).astype(np.uint64)
    g = pair_groups(a, key)
    pairs = {}
    for i, p in enumerate(zip(a.tolist(), key.tolist())):
        pairs.setdefault(p, []).append(i)
    multi = sorted(sorted(v) for v in pairs.values() if len(v) > 1)
    got = sorted(sorted(g.members[g.member_code == j].tolist()) for j in range(g.num_groups))
    assert np.array_equal(g.code[g.head], np.arange(g.num_groups))
    assert np.array_equal(np.bincount(g.member_code), g.size)
    assert got == multi
    assert np.all(g.code[[v[0] for v in pairs.values() if len(v) == 1]] == -1)


def test_pair_groups_exact_when_mixed_hashes_collide(monkeypatch):
    from agentgym_credit.credit import grouping

    a = np.array([0, 1, 0, 1, 2, 0])
    key = np.array([7, 7, 7, 8, 8, 9], dtype=np.uint64)
    monkeypatch.setattr(grouping, "mix64", lambda a_, k_: k_.copy())  # every (a, 7) pair collides
    g = grouping.pair_groups(a, key)
    assert g.num_groups == 1 and sorted(g.members.tolist()) == [0, 2]
    assert g.code.tolist() == [0, -1, 0, -1, -1, -1]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_states=st.integers(1, 10), depth=st.integers(0, 3))
def test_group_stats_match_reference(seed, n_states, depth):
    s = random_batch(seed, n_states=n_states, depth=depth, max_len=20)
    got = group_stats(s)
    levels, aliasing = ref_group_stats(s)
    assert got.aliasing_rate == pytest.approx(aliasing)
    assert set(got.levels) == set(levels)
    for name, (frac, mean_size) in levels.items():
        assert got.levels[name].frac_non_singleton == pytest.approx(frac)
        assert got.levels[name].mean_group_size == pytest.approx(mean_size)
    assert "aliasing rate" in got.table() and got.as_dict()["n_steps"] == s.n


def test_group_stats_by_hand():
    # obs 1 holds states 1 and 2 (aliased: 3 steps); obs 2 holds state 3 only
    s = StepArrays.from_lists(group_id=[0] * 4, traj_id=[0, 0, 1, 1], t=[0, 1, 0, 1], reward=[0.0] * 4,
                              done=[False, True, False, True], state_key=[1, 3, 2, 1], obs_key=[1, 2, 1, 1])
    st_ = group_stats(s)
    assert st_.aliasing_rate == pytest.approx(3 / 4)
    assert st_.levels["state_key"].frac_non_singleton == pytest.approx(2 / 4)
    assert st_.levels["state_key"].mean_group_size == pytest.approx(4 / 3)
    assert st_.n_trajectories == 2 and st_.n_groups == 1


def test_broadcast_to_tokens_numpy():
    adv = np.array([1.5, -2.0])
    mask = np.array([[0, 1, 1, 0], [1, 1, 0, 0]])
    out = broadcast_to_tokens(adv, mask)
    assert out.dtype == np.float32
    assert out.tolist() == [[0.0, 1.5, 1.5, 0.0], [-2.0, -2.0, 0.0, 0.0]]
    with pytest.raises(ValueError, match="response_mask"):
        broadcast_to_tokens(adv, mask[:1])


def test_broadcast_to_tokens_torch():
    torch = pytest.importorskip("torch")
    out = credit.broadcast_to_tokens_torch(torch.tensor([1.5, -2.0]), torch.tensor([[0, 1], [1, 0]]))
    assert out.dtype == torch.float32 and out.tolist() == [[0.0, 1.5], [-2.0, 0.0]]


def test_oracle_and_policies_load_lazily():
    with pytest.raises(AttributeError):
        credit.not_a_module  # noqa: B018
    for name in ("oracle", "policies"):
        if importlib.util.find_spec(f"agentgym_credit.credit.{name}") is None:
            continue
        assert getattr(credit, name).__name__ == f"agentgym_credit.credit.{name}"
