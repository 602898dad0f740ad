"""Stable keys and the HistoryFingerprint wrapper, on a tiny env defined here."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from agentgym_credit.envs.base import CreditEnv
from agentgym_credit.errors import ResetNeeded
from agentgym_credit.keys import (
    MISSING,
    WINDOW_SEED,
    mix64,
    normalize_text,
    stable_hash,
    window_fingerprint,
)
from agentgym_credit.wrappers.history import HistoryFingerprint


class Chain(CreditEnv):
    """States 0..4 on a line; 'right'/'left' move, reaching 4 wins."""

    def _reset_impl(self, options):
        self.pos = 0
        return self._obs()

    def _obs(self, valid=True):
        info = {"state_key": f"pos={self.pos}", "admissible_actions": ["left", "right"],
                "task_id": "chain", "won": self.pos == 4, "action_valid": valid}
        return f"You are at {self.pos}.", info

    def _step_impl(self, action):
        if action not in ("left", "right"):
            obs, info = self._obs(valid=False)
            return obs, 0.0, False, False, info
        self.pos = max(0, self.pos + (1 if action == "right" else -1))
        obs, info = self._obs()
        return obs, float(self.pos == 4), self.pos == 4, False, info


def test_stable_hash_is_stable_across_processes():
    code = "from agentgym_credit.keys import stable_hash; print(stable_hash('pos=3'), stable_hash(b'x'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert [int(x) for x in out] == [stable_hash("pos=3"), stable_hash(b"x")]
    assert stable_hash("a") != stable_hash("b")
    assert stable_hash("") != MISSING
    with pytest.raises(TypeError):
        stable_hash(3)  # type: ignore[arg-type]


def test_mix64_is_a_stable_fold_that_never_returns_missing():
    code = "from agentgym_credit.keys import window_fingerprint as w; print(w([1, 2**64 - 1, 12345]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert int(out) == window_fingerprint([1, 2**64 - 1, 12345])
    assert window_fingerprint([]) == WINDOW_SEED
    assert window_fingerprint([7, 8]) == mix64(mix64(WINDOW_SEED, 7), 8)
    assert window_fingerprint(np.array([7, 8], dtype=np.uint64)) == window_fingerprint([7, 8])
    assert window_fingerprint([7, 8]) != window_fingerprint([8, 7])  # order matters
    for h in (0, 1, WINDOW_SEED, 2**64 - 1):
        for x in (0, 1, 2**63, 2**64 - 1):
            assert 0 < mix64(h, x) < 2**64


def test_window_fingerprints_do_not_collide():
    """1e5 random windows of lengths 1..5 (and all 1- and 2-windows over 300 values): no collision."""
    rng = np.random.default_rng(0)
    n = 100_000
    lengths = rng.integers(1, 6, n)
    elems = rng.integers(0, 2**63, (n, 5), dtype=np.int64).astype(np.uint64) * np.uint64(2) + np.uint64(1)
    windows = {tuple(row[:m].tolist()) for row, m in zip(elems, lengths)}
    small = [stable_hash(str(i)) for i in range(300)]
    windows |= {(a,) for a in small} | {(a, b) for a in small for b in small}
    fps = {window_fingerprint(w) for w in windows}
    assert len(fps) == len(windows)
    assert MISSING not in fps


def test_normalize_text_ignores_case_and_spacing():
    assert normalize_text("  You  SEE\n a mug 1. ") == "you see a mug 1."


def test_history_levels_are_missing_before_they_exist():
    env = HistoryFingerprint(Chain(), depth=3)
    _, info = env.reset(seed=0)
    hk = info["history_keys"]
    assert hk.dtype == np.uint64 and hk.shape == (4,)
    assert hk[0] != MISSING and list(hk[1:]) == [MISSING] * 3
    _, _, _, _, info = env.step("right")
    assert info["history_keys"][1] != MISSING and info["history_keys"][2] == MISSING
    s0, s1 = stable_hash("pos=0"), stable_hash("pos=1")
    assert info["history_keys"][0] == window_fingerprint([s1])
    assert info["history_keys"][1] == window_fingerprint([s0, s1])
    assert info["history_key_full"] == window_fingerprint([s0, s1])


def test_same_state_different_history_differs_only_above_level0():
    env = HistoryFingerprint(Chain(), depth=2)
    env.reset(seed=0)
    a = env.step("right")[4]  # 0 -> 1
    env.reset(seed=0)
    env.step("right")
    env.step("right")
    b = env.step("left")[4]  # 0 -> 1 -> 2 -> 1
    assert a["history_keys"][0] == b["history_keys"][0]
    assert a["history_keys"][1] != b["history_keys"][1]
    assert a["history_key_full"] != b["history_key_full"]


def test_include_actions_separates_contexts_with_same_states():
    env = HistoryFingerprint(Chain(), depth=1, include_actions=True)
    env.reset(seed=0)
    a = env.step("left")[4]  # stays at 0 (valid move, clipped)
    env.reset(seed=0)
    b = env.step("jump")[4]  # invalid: stays at 0
    assert a["history_keys"][0] == b["history_keys"][0]
    assert a["history_keys"][1] != b["history_keys"][1]
    plain = HistoryFingerprint(Chain(), depth=1)
    plain.reset(seed=0)
    c = plain.step("left")[4]
    plain.reset(seed=0)
    d = plain.step("jump")[4]
    assert c["history_keys"][1] == d["history_keys"][1]


def test_base_env_rejects_bad_actions_and_step_after_done():
    env = Chain()
    env.reset(seed=0)
    for bad in ["x" * 100_000, b"\x00\xff", None, 3, "go\x00"]:
        obs, r, term, trunc, info = env.step(bad)  # type: ignore[arg-type]
        assert info["action_valid"] is False and not term and r == 0.0
        assert info["state_key"] == "pos=0"
    for _ in range(4):
        *_, term, _, _ = env.step("right")
    assert term
    with pytest.raises(ResetNeeded, match="reset"):
        env.step("right")
    with pytest.raises(ValueError):
        HistoryFingerprint(Chain(), depth=-1)


def test_noop_info_shares_no_mutable_object_with_the_previous_info():
    env = Chain()
    _, first = env.reset(seed=0)
    _, _, _, _, second = env.step("x" * 100_000)
    assert second["admissible_actions"] == first["admissible_actions"]
    assert second["admissible_actions"] is not first["admissible_actions"]
    second["admissible_actions"].append("mutated")
    _, _, _, _, third = env.step(None)  # type: ignore[arg-type]
    assert "mutated" not in third["admissible_actions"]


def test_rejected_actions_count_towards_the_step_limit():
    import gymnasium as gym

    import agentgym_credit  # noqa: F401

    env = gym.make("credit/GridWorld-v0", max_steps=3)
    _, first = env.reset(seed=0)
    for _ in range(3):
        _, r, term, trunc, info = env.step("go\x00north")
        assert info["action_valid"] is False and "control" in info["invalid_reason"]
        assert info["state_key"] == first["state_key"] and not term
    assert trunc, "three rejected actions must use up a 3-step limit"
    with pytest.raises(ResetNeeded):
        env.step("go north")


def test_an_env_that_accepts_the_empty_action_breaks_the_contract():
    from agentgym_credit.errors import ContractViolation

    class Lenient(Chain):
        def _step_impl(self, action):
            obs, info = self._obs()
            return obs, 0.0, False, False, info

    env = Lenient()
    env.reset(seed=0)
    with pytest.raises(ContractViolation, match="empty action"):
        env.step(None)  # type: ignore[arg-type]
