"""The credit speed benchmark runs end to end on a tiny batch and writes its report (no timing asserts)."""

from __future__ import annotations

import numpy as np

from agentgym_credit.bench.speed.credit_speed import main, synthetic_steps
from agentgym_credit.credit import ESTIMATORS, group_stats


def test_synthetic_steps_has_the_advertised_shape():
    s = synthetic_steps(3000, seed=3)
    st = group_stats(s)
    assert s.n == 3000 and s.num_levels == 5
    assert 20 <= s.n / st.n_trajectories <= 40  # ~30 steps per trajectory
    assert 0.3 <= st.levels["state_key"].frac_non_singleton <= 0.5  # ~40% revisited states
    assert np.all(s.history_keys[s.t < 4, 4] == 0)


def test_benchmark_writes_report(tmp_path):
    out = tmp_path / "credit_speed.md"
    assert main(["--sizes", "600", "--repeat", "1", "--out", str(out)]) == 0
    text = out.read_text()
    assert "Command: `python -m agentgym_credit.bench.speed.credit_speed --sizes 600" in text
    for name in ESTIMATORS:
        assert f"| {name} | 600 |" in text
    assert "×" in text  # the reference ran and ratios were computed
