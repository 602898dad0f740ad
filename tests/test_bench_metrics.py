"""Credit-accuracy metrics on hand-computed cases (the specification of ``bench.metrics``)."""

import math

import numpy as np
import pytest

from agentgym_credit.bench import metrics as M


def test_pearson_hand_case():
    # x = [1,2,3], y = [1,3,2]: centred (-1,0,1) and (-1,1,0): r = 1 / (sqrt2*sqrt2) = 0.5
    assert M.pearson([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)
    assert M.pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert M.pearson([1, 2, 3], [-5, -6, -7]) == pytest.approx(-1.0)


def test_constant_input_has_zero_correlation_not_nan():
    assert M.pearson([0, 0, 0], [1, 2, 3]) == 0.0
    assert M.spearman([0, 0, 0], [1, 2, 3]) == 0.0
    assert M.pearson([1.0], [2.0]) == 0.0


def test_rankdata_averages_ties():
    np.testing.assert_allclose(M.rankdata([10, 20, 20, 5]), [2, 3.5, 3.5, 1])
    assert M.rankdata([]).size == 0


def test_spearman_is_invariant_to_monotone_maps_and_handles_ties():
    x = np.array([0.1, 0.5, 0.2, 3.0])
    assert M.spearman(np.exp(x), x) == pytest.approx(1.0)
    # ranks (1, 2.5, 2.5, 4) vs (1, 2, 3, 4): hand value 0.9486833
    assert M.spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(3 / math.sqrt(10))


def test_sign_accuracy_on_decisive_steps_with_zero_as_coin_flip():
    true = [0.5, -0.5, 0.01, 1.0, -1.0]      # third step is not decisive at 0.05
    est = [1.0, 1.0, -9.0, 0.0, -0.2]        # right, wrong, (ignored), zero -> 0.5, right
    assert M.sign_accuracy(est, true, threshold=0.05) == pytest.approx((1 + 0 + 0.5 + 1) / 4)
    assert math.isnan(M.sign_accuracy([1.0], [0.0]))
    with pytest.raises(ValueError):
        M.sign_accuracy([1.0], [1.0], threshold=-1)


def test_scaled_rmse_best_positive_scale():
    true = np.array([1.0, -1.0, 2.0])
    assert M.scaled_rmse(3 * true, true) == pytest.approx(0.0)
    # anti-correlated estimate: best c >= 0 is 0, so the score is exactly 1
    assert M.scaled_rmse(-true, true) == pytest.approx(1.0)
    # est = (1, 0, 0): c = 1, residual (0, -1, -2): sqrt(5/6)
    assert M.scaled_rmse([1, 0, 0], true) == pytest.approx(math.sqrt(5 / 6))
    assert math.isnan(M.scaled_rmse([1, 2], [0, 0]))


def test_nonzero_fraction_and_validation():
    assert M.nonzero_fraction([0, 1e-12, 0.3, -2]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="same length"):
        M.pearson([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="finite"):
        M.pearson([1, np.nan], [1, 2])


def test_cell_bias_removes_noise_and_keeps_systematic_error():
    rng = np.random.default_rng(0)
    cells = np.repeat([0, 1], 2000)
    true = np.zeros(4000)
    noise = rng.choice([-1.0, 1.0], size=4000)
    est = noise + np.where(cells == 0, 0.3, -0.3)   # bias +-0.3 in each cell
    assert M.cell_bias(est, true, cells) == pytest.approx(0.3, abs=0.05)
    assert M.cell_bias(noise, true, cells) < 0.05
    # hand case: errors (1, 3) in one cell: mean 2, s^2 = 2, s^2/n = 1 -> sqrt(4 - 1)
    assert M.cell_bias([1.0, 3.0], [0.0, 0.0], [7, 7], min_count=2) == pytest.approx(math.sqrt(3))
    assert math.isnan(M.cell_bias([1.0], [0.0], [0], min_count=2))
    with pytest.raises(ValueError, match="min_count"):
        M.cell_bias([1.0], [0.0], [0], min_count=1)


def test_mean_ci_uses_student_t():
    m, h, n = M.mean_ci([1.0, 2.0, 3.0])
    assert (m, n) == (2.0, 3)
    assert h == pytest.approx(4.303 * 1.0 / math.sqrt(3))
    m, h, n = M.mean_ci([np.nan, 4.0])
    assert m == 4.0 and math.isnan(h) and n == 1
    assert M.t_quantile_975(200) == pytest.approx(1.972, abs=2e-3)


def test_random_advantages_score_near_chance():
    rng = np.random.default_rng(1)
    true = rng.normal(size=5000)
    fake = rng.normal(size=5000)  # a seeded random "estimator" with no information
    out = M.accuracy_metrics(fake, true)
    assert abs(out["pearson"]) < 0.05 and abs(out["spearman"]) < 0.05
    assert out["sign_acc"] == pytest.approx(0.5, abs=0.03)
    assert out["rmse"] > 0.99 and out["nonzero"] == 1.0
    informed = M.accuracy_metrics(true + 0.5 * fake, true)
    assert informed["pearson"] > 0.85 and informed["sign_acc"] > 0.75 and informed["rmse"] < 0.5
