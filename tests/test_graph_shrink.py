"""``graph``'s ``shrink="auto"`` (credit/graph_shrink.py): the plain transcription, the bound on the pull, and
that it vanishes where nodes are well visited (issue 29: a fixed shrink swamped a small A^pi on step-cost tasks)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from agentgym_credit.credit import ESTIMATORS, StepArrays
from agentgym_credit.credit.graph import graph as _graph
from agentgym_credit.credit.graph import graph_nodes, graph_values
from agentgym_credit.credit.graph_shrink import auto_weights

sys.path.insert(0, str(Path(__file__).parent))
from reference_estimators import random_batch  # noqa: E402
from reference_graph_estimators import GRAPH_REFERENCES, ref_graph  # noqa: E402

AUTO_OPTIONS = [{}, {"key": "obs_key"}, {"lam": 0.7, "time_aware": True}, {"scope": "batch", "truncation": "bootstrap"},
                {"key": "obs_key", "loops": "events", "backoff": 2.0}, {"key": "history", "level": 2},
                {"key": "obs_key", "loops": "mc", "gamma": 0.99}]


def graph(steps, **kw):
    """``graph`` at the issue-29 TD defaults (shrink 0.5, plain terminal rows, no tail reshaping, events on obs_key)
    unless a test names an option: these tests check the TD machinery; issue 41's defaults are checked in
    tests/test_graph_tail.py and tests/test_heldout_bench.py."""
    base = {"shrink": 0.5, "terminal": 1.0, "tail": "none"} | ({"loops": "events"} if kw.get("key") == "obs_key" else {})
    return _graph(steps, **(base | kw))


@pytest.mark.parametrize("opts", AUTO_OPTIONS)
def test_auto_equals_the_plain_transcription(opts):
    for seed in range(4):
        s = random_batch(seed)
        np.testing.assert_allclose(_graph(s, shrink="auto", **opts), ref_graph(s, shrink="auto", **opts), atol=1e-6,
                                   err_msg=f"{opts} seed {seed}")


@pytest.mark.parametrize("opts", [{}, {"key": "obs_key", "lam": 0.5}])
def test_graph_q_auto_equals_the_plain_transcription(opts):
    for seed in range(3):
        s = random_batch(seed)
        np.testing.assert_allclose(ESTIMATORS["graph_q"](s, shrink="auto", **opts),
                                   GRAPH_REFERENCES["graph_q"](s, shrink="auto", **opts), atol=1e-6)


def _chain_batch(seed, n_traj, length, n_states=5, cost=-1.0, noise=0.3):
    """Random walks on a line of ``n_states`` cells, one group; a step costs ``cost`` (plus noise), the last cell
    pays +10 and ends the episode: values spread by many units between nodes, as on Taxi."""
    rng = np.random.default_rng(seed)
    cols = {k: [] for k in ("group_id", "traj_id", "t", "reward", "done", "state_key", "obs_key")}
    for j in range(n_traj):
        x = 0
        for t in range(length):
            nx = int(np.clip(x + rng.choice((-1, 1)), 0, n_states - 1))
            end = nx == n_states - 1 or t + 1 == length
            r = cost + noise * rng.standard_normal() + (10.0 if nx == n_states - 1 else 0.0)
            for k, val in (("group_id", 0), ("traj_id", j), ("t", t), ("reward", r), ("done", end),
                           ("state_key", x + 1), ("obs_key", x + 1)):
                cols[k].append(val)
            x = nx
            if end:
                break
    return StepArrays.from_lists(**cols)


def _bound_per_row(s, gamma=0.95):
    """The pull bound c_u of each row's node and of its next node (0 past the end), in input order."""
    w, node, nxt, v0, _ = graph_values(s, s.reward, gamma=gamma, key="state_key", level=0, scope="group",
                                       time_aware=False, truncation="zero", loops="none", backoff=0.0, shrink=0.0)
    node_scope = graph_nodes(s)[3]
    _, bound, _ = auto_weights(v0, node, nxt, node_scope, s.reward[w.order], w, gamma)
    row = np.empty(s.n)
    row[w.order] = bound[node] + gamma * np.where(nxt >= 0, bound[np.maximum(nxt, 0)], 0.0)
    return row


@pytest.mark.parametrize("seed", range(3))
def test_auto_never_moves_an_advantage_by_more_than_its_bound(seed):
    for s in (_chain_batch(seed, 8, 30), random_batch(seed, n_groups=1, p_invalid=0.0)):
        moved = np.abs(graph(s, shrink="auto") - graph(s, shrink=0.0))
        assert np.all(moved <= _bound_per_row(s) + 1e-9)
        assert moved.max() > 0  # not a no-op here


def test_auto_vanishes_where_every_node_is_well_visited():
    thin = _chain_batch(0, 4, 12)
    rich = _chain_batch(0, 256, 400)
    moved = {}
    for name, s in (("thin", thin), ("rich", rich)):
        a0 = graph(s, shrink=0.0)
        moved[name] = np.abs(graph(s, shrink="auto") - a0).max() / np.std(a0)
    assert moved["rich"] < 0.01 < moved["thin"]


def test_auto_leaves_values_alone_when_every_node_agrees_with_itself():
    # two identical deterministic paths: every node's targets agree (s = 0), nothing is pulled; shrink 0.5 pulls
    cols = {k: [] for k in ("group_id", "traj_id", "t", "reward", "done", "state_key", "obs_key")}
    for j in range(2):
        for t, (k, r) in enumerate(((1, -1.0), (2, -1.0), (3, 5.0))):
            for c, val in (("group_id", 0), ("traj_id", j), ("t", t), ("reward", r), ("done", t == 2),
                           ("state_key", k), ("obs_key", k)):
                cols[c].append(val)
    s = StepArrays.from_lists(**cols)
    np.testing.assert_array_equal(graph(s, shrink="auto"), graph(s, shrink=0.0))
    assert np.abs(graph(s, shrink=0.5) - graph(s, shrink=0.0)).max() > 0.1


@pytest.mark.parametrize("bad", ["big", -1.0, float("nan")])
def test_bad_shrink_is_a_named_error(bad):
    with pytest.raises(ValueError, match="shrink"):
        graph(random_batch(0), shrink=bad)
