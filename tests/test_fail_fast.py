"""Fail fast with the reason: what a new user's first mistakes used to produce.

Each case was measured before the fix: a typo'd env id or a policy returning non-strings warned and returned
an empty batch; ``train --estimator gipgo`` printed a traceback after ~20 s; ``RolloutBatch.load`` on a
missing file said "not a readable Parquet file".
"""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import agentgym_credit  # noqa: F401
from agentgym_credit import cli
from agentgym_credit.credit import StepArrays, advantages
from agentgym_credit.credit.registry import UnknownEstimatorError
from agentgym_credit.wrappers import CollectionFailed, GroupedRolloutCollector, RolloutBatch


def test_a_typod_env_id_fails_at_construction_with_a_suggestion():
    with pytest.raises(gym.error.NameNotFound, match="Did you mean: `GridWorld`"):
        GroupedRolloutCollector("credit/GridWorl-v0", group_size=2, progress=False)


def test_a_policy_returning_non_strings_raises_with_the_reason():
    col = GroupedRolloutCollector("credit/GridWorld-v0", group_size=2, max_steps=3, progress=False)
    with pytest.raises(CollectionFailed, match="actions must be str") as err:
        col.collect(lambda obs, infos: [3] * len(obs), tasks=2)
    assert err.value.batch.traj.failed.all() and len(err.value.batch) == 0


def test_a_partial_failure_still_warns_and_returns_the_rest():
    col = GroupedRolloutCollector("credit/GridWorld-v0", group_size=2, max_steps=3, progress=False)

    def half(obs, infos):
        return [i["admissible_actions"][0] if i["rollout"]["copy"] == 0 else None for i in infos]

    with pytest.warns(UserWarning, match="2 of 4 trajectories failed"):
        batch = col.collect(half, tasks=2)
    assert batch.traj.failed.sum() == 2 and len(batch) > 0


def test_failing_for_different_reasons_warns_and_is_not_summarized_as_one():
    col = GroupedRolloutCollector("credit/GridWorld-v0", group_size=2, max_steps=3, progress=False)

    def mixed(obs, infos):
        return [{"error": "no model" if i["rollout"]["copy"] else "no tokenizer"} for i in infos]

    with pytest.warns(UserWarning, match="4 of 4 trajectories failed"):
        batch = col.collect(mixed, tasks=2)
    assert sorted(set(batch.traj.error)) == ["policy failed: no model", "policy failed: no tokenizer"]
    off = GroupedRolloutCollector("credit/GridWorld-v0", group_size=2, max_steps=3, progress=False, fail_fast=False)
    with pytest.warns(UserWarning, match="failed"):
        assert off.collect(lambda obs, infos: [3] * len(obs), tasks=1).traj.failed.all()


def test_estimator_typos_get_did_you_mean_everywhere():
    s = StepArrays.from_lists(group_id=[0, 0], traj_id=[0, 1], t=[0, 0], reward=[1.0, 0.0], done=[True, True],
                              state_key=[1, 1], obs_key=[1, 1])
    with pytest.raises(UnknownEstimatorError, match=r"did you mean 'gigpo'\?") as err:
        advantages("gipgo", s)
    assert isinstance(err.value, KeyError) and isinstance(err.value, ValueError)
    with pytest.raises(KeyError, match="unknown estimator 'zzzz'; registered: "):
        advantages("zzzz", s)
    assert np.isfinite(advantages("gigpo", s)).all()


def test_train_cli_typo_is_a_usage_error_without_a_traceback():
    proc = subprocess.run([sys.executable, "-m", "agentgym_credit.cli", "train", "--estimator", "gipgo"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "did you mean 'gigpo'?" in proc.stderr and "Traceback" not in proc.stderr


def test_bench_cli_typo_suggests(capsys):
    assert cli.main(["bench", "credti"]) == 2
    assert "did you mean 'credit'?" in capsys.readouterr().err


def test_loading_a_missing_batch_says_it_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        RolloutBatch.load(tmp_path / "nope.parquet")


def test_an_empty_policy_error_still_fails_with_a_reason_and_the_warning_names_it():
    """A failed trajectory never carries an empty error: ``{"error": ""}`` says the policy gave no reason, and the
    collector's warning shows the failed trajectories' error (not just "see batch.traj.error")."""
    col = GroupedRolloutCollector("credit/GridWorld-v0", group_size=2, max_steps=3, progress=False)

    given = iter(["", None] * 8)

    def blank(obs, infos):
        return [i["admissible_actions"][0] if i["rollout"]["copy"] == 0 else {"error": next(given)} for i in infos]

    with pytest.warns(UserWarning, match=r"2 of 4 trajectories failed \(groups \[0, 1\]\): policy failed: the "
                                         r"policy gave an empty 'error' \(no reason\) \(x2\)"):
        batch = col.collect(blank, tasks=2)
    errors = [e for e, f in zip(batch.traj.error, batch.traj.failed) if f]
    assert errors == ["policy failed: the policy gave an empty 'error' (no reason)"] * 2
