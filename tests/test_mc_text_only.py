"""Issue 41.4: a Monte-Carlo behaviour policy that sees text only, and the robustness lenses of every MC report."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from agentgym_credit.bench.montecarlo import paired as P
from agentgym_credit.truth.policies import EpsilonExpert, RolloutPolicy, TraineeStandIn
from agentgym_credit.truth.text_only import TEXT_ONLY, VISIBLE, ObservationOnly, visible_info

HIDDEN = {"state_key": "s-17", "obs_key": 99, "expert_action": "take apple 1", "history_keys": np.array([3, 4, 5]),
          "history_key_full": 12, "state_index": 4, "task_id": "game-3", "candidate_actions": ["search[the title]"],
          "won": False, "rollout": {"group_id": 0, "copy": 0, "t": 2}}


class Spy(dict):
    """A dict that records every key read from it, by any route."""

    def __init__(self, *a: Any, **kw: Any):
        super().__init__(*a, **kw)
        self.read: set[str] = set()

    def __getitem__(self, k: str) -> Any:
        self.read.add(k)
        return super().__getitem__(k)

    def get(self, k: str, default: Any = None) -> Any:
        self.read.add(k)
        return super().get(k, default)

    def __contains__(self, k: object) -> bool:
        self.read.add(str(k))
        return super().__contains__(k)

    def __iter__(self) -> Iterator[str]:
        self.read.update(super().keys())
        return super().__iter__()

    def items(self):  # type: ignore[override]
        self.read.update(super().keys())
        return super().items()

    def keys(self):  # type: ignore[override]
        self.read.update(super().keys())
        return super().keys()

    def values(self):  # type: ignore[override]
        self.read.update(super().keys())
        return super().values()


def _info(**over: Any) -> dict[str, Any]:
    base = {"admissible_actions": ["go to desk 1", "take apple 1", "go to fridge 1", "look"],
            "goal": "put an apple in the fridge", "history_t": 3, **HIDDEN}
    base.update(over)
    return base


@pytest.mark.parametrize("name", sorted(TEXT_ONLY))
def test_text_only_policies_read_no_state_key_and_no_expert(name):
    """Every named text-only policy reads the visible keys only (a policy that reads state_key, expert_action,
    history_keys, ... fails here), and its distribution does not move when the hidden fields do."""
    pi = TEXT_ONLY[name]
    spy = Spy(_info())
    acts, p = pi.distribution("On the desk 1, you see a apple 1.", spy)
    assert spy.read <= set(VISIBLE), spy.read - set(VISIBLE)
    other = _info(state_key="s-other", obs_key=1, expert_action="look", history_keys=np.array([9, 9, 9]),
                  state_index=0, task_id="game-9", candidate_actions=["search[leaked]"])
    acts2, p2 = pi.distribution("On the desk 1, you see a apple 1.", other)
    assert acts == acts2 and np.array_equal(p, p2)


def test_observation_only_hides_the_expert_and_the_state_from_any_policy():
    """Wrapped, a policy that *would* read the expert (ε-expert) or the history keys gets nothing of them."""
    raw = EpsilonExpert(0.2)
    _, p_raw = raw.distribution("", _info())
    assert p_raw.max() > 0.8  # unwrapped, it follows the expert
    acts, p = ObservationOnly(raw).distribution("", _info())
    assert np.allclose(p, 1.0 / len(acts))  # wrapped, no expert: uniform
    _, p_raw = TraineeStandIn().distribution("", _info())
    acts, p = ObservationOnly(TraineeStandIn()).distribution("", _info())
    assert p_raw.max() > 0.5 and np.allclose(p, 1.0 / len(acts))


def test_webshop_search_bar_becomes_searches_from_the_task_text_only():
    info = visible_info({"admissible_actions": ["search[<query>]"], "goal": "i want blue socks for men",
                         "candidate_actions": ["search[Acme Blue Crew Socks 6-pack]"]})
    assert info["admissible_actions"] == ["search[i want blue socks for men]", "search[blue socks men]"]
    assert not any("Acme" in a for a in info["admissible_actions"])


def test_text_only_policy_on_webshop_is_followed_by_the_monte_carlo_truth():
    """On the real WebShop env (expert env: its info carries the expert and the product title's search) the
    policy's choices never use them, it is replayable from snapshots (the truth's replay check) and the
    truth has spread."""
    from agentgym_credit.bench.montecarlo.config import ENVS
    from agentgym_credit.truth.crn import CRNConfig, estimate_crn
    from agentgym_credit.wrappers.collector import GroupedRolloutCollector

    env = ENVS["webshop"]
    pol = TEXT_ONLY["text-scorer-webshop"]
    with GroupedRolloutCollector(env.factory, group_size=4, backend="sync", max_steps=env.max_steps, history_depth=3,
                                 progress=False, seed=0) as col:
        batch = col.collect(RolloutPolicy(pol, seed=0), tasks=[30, 31], seeds=[1, 2])
        first = env.factory()
        _, info = first.reset(options={"task": 30})
        title_search = [a for a in info["candidate_actions"] if a not in visible_info(info)["admissible_actions"]]
        assert title_search  # the expert env offers a search for the product's title ...
        assert not set(title_search) & {str(a) for a in batch.action}  # ... which the text-only policy never types
        assert any(str(a).startswith("search[") for a in batch.action)
        rows = np.arange(0, len(batch), max(1, len(batch) // 6))[:6]
        truth = estimate_crn(col.backend, batch, rows, pol, CRNConfig(k=4, gamma=0.95, max_steps=env.max_steps, seed=0))
    assert truth.adv.shape == (len(rows),) and np.isfinite(truth.adv).all()


def test_loo_pearson_is_exact():
    rng = np.random.default_rng(1)
    a = rng.normal(size=40)
    t = a + rng.normal(size=40)
    brute = [np.corrcoef(np.delete(a, i), np.delete(t, i))[0, 1] for i in range(40)]
    assert np.allclose(P.loo_pearson(a, t), brute, atol=1e-12)


def _groups(n_groups=30, rows=4, seed=0):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_groups), rows)
    truth = rng.normal(size=len(g))
    return g, truth, rng


def test_jackknife_se_agrees_with_the_bootstrap_on_a_clean_case():
    g, truth, rng = _groups(40)
    a = truth + rng.normal(scale=0.7, size=len(g))
    b = truth + rng.normal(scale=1.5, size=len(g))
    boot = P.paired_difference(a, b, truth, g, boot=400)
    se_jk, reps = P.jackknife(a, b, truth, g)
    assert len(reps) == 40
    assert 0.6 < se_jk / boot["se"] < 1.6


def test_a_win_carried_by_one_row_is_flagged_by_the_drop_one_row_lens():
    """One extreme row that both the truth and estimator a share makes a's Pearson r large; without it a and b
    tie. Dropping the row finds it and removes the effect; a comparison that Holm calls on the bootstrap (its p
    set small here, as a borderline real case would have it) is then marked not robust."""
    g, truth, rng = _groups(30, 4)
    a = rng.normal(size=len(g))
    b = rng.normal(size=len(g))
    truth, a = truth.copy(), a.copy()
    truth[5], a[5] = 60.0, 60.0
    pair = {"a": "a", "b": "b", **P.paired_difference(a, b, truth, g, boot=200), **P.robustness(a, b, truth, g, boot=200)}
    pair["p"] = 1e-6
    P.holm_robust(P.holm_family([pair]))
    assert pair["holm"] == "a"
    assert pair["diff"] > 0.5 and pair["drop_row"] == 5 and pair["drop_max_at"] == 5
    assert abs(pair["diff_drop"]) < 0.3
    assert pair["p_drop"] > 0.05 and pair["holm_drop"] == "tie" and pair["robust"] is False
    # Spearman is not fooled by the one extreme value either
    assert abs(pair["spearman_diff"]) < 0.3
    assert "no" in P.robust_md([pair]).split("\n")[2]


def test_spearman_lens_sees_a_monotone_estimator_as_exact():
    g, truth, rng = _groups(30, 4)
    a = np.sign(truth) * truth**4  # monotone in the truth, far from linear
    b = truth
    rob = P.robustness(a, b, truth, g, boot=100)
    assert P.paired_difference(a, b, truth, g, boot=100)["diff"] < -0.1
    assert abs(rob["spearman_diff"]) < 1e-9


def test_textonly_stage_runs_the_text_only_policies():
    from agentgym_credit.bench.montecarlo.credit_confirm import STAGES, behaviour

    st = STAGES["textonly"]
    assert set(st.tasks) == {"alfworld-dev", "webshop"} and not set(st.tasks["webshop"]) & set(range(24))
    for env in st.tasks:
        assert isinstance(behaviour(st, env), ObservationOnly)
    assert not isinstance(behaviour(STAGES["confirm"], "webshop"), ObservationOnly)
