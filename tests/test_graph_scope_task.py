"""``graph(scope="task")``: the empirical graph of every group of one task (the issue's "all groups of one task"
option; before, step arrays carried no task and only ``"group"`` / ``"batch"`` existed)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import agentgym_credit  # noqa: F401
from agentgym_credit.credit import advantages
from agentgym_credit.errors import StepArraysError
from agentgym_credit.wrappers import GroupedRolloutCollector


@pytest.fixture(scope="module")
def steps():
    rng = np.random.default_rng(0)
    col = GroupedRolloutCollector("credit/GridWorld-v0", group_size=4, max_steps=20, progress=False)
    batch = col.collect(lambda obs, infos: [str(rng.choice(i["admissible_actions"])) for i in infos],
                        tasks=[0, 0, 1, 2, 1])
    return batch.to_steps()


def test_to_steps_keys_rows_by_their_task(steps):
    assert steps.task_key is not None and len(np.unique(steps.task_key)) == 3
    for g in np.unique(steps.group_id):
        assert len(np.unique(steps.task_key[steps.group_id == g])) == 1


def test_task_scope_pools_the_groups_of_one_task(steps):
    code = np.unique(steps.task_key, return_inverse=True)[1].reshape(-1)
    pooled = dataclasses.replace(steps, group_id=code)  # one group per task
    a = advantages("graph", steps, scope="task")
    np.testing.assert_allclose(a, advantages("graph", pooled, scope="group"), atol=1e-6)
    assert not np.allclose(a, advantages("graph", steps, scope="group"))  # tasks 0 and 1 have two groups each
    one_task = dataclasses.replace(steps, task_key=np.full(steps.n, 7, np.uint64))
    np.testing.assert_allclose(advantages("graph", one_task, scope="task"),
                               advantages("graph", steps, scope="batch"), atol=1e-6)


def test_task_scope_without_task_keys_is_a_clear_error(steps):
    bare = dataclasses.replace(steps, task_key=None)
    with pytest.raises(StepArraysError, match="scope='task' needs steps.task_key"):
        advantages("graph", bare, scope="task")
