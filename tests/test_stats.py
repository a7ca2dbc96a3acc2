"""KL divergence and KL confidence bounds (the one shared implementation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import load_oracles
from dueling_gym.stats import kl_bernoulli, kl_lower_bound, kl_upper_bound

SPOT = load_oracles()["formula_spot_checks"]


def test_spot_checks():
    assert kl_bernoulli(0.8, 0.5) == pytest.approx(SPOT["d(0.8,0.5)"], abs=1e-9)
    assert kl_bernoulli(0.51, 0.5) == pytest.approx(SPOT["d(0.51,0.5)"], abs=1e-12)
    assert kl_bernoulli(0.6, 0.5) == pytest.approx(SPOT["d(0.6,0.5)"], abs=1e-9)
    assert kl_upper_bound(0.3, 10, 2) == pytest.approx(SPOT["KL-UCB upper p=0.3,n=10,rhs=2"], abs=1e-9)
    assert kl_lower_bound(0.3, 10, 2) == pytest.approx(SPOT["KL-LCB lower p=0.3,n=10,rhs=2"], abs=1e-9)


def test_special_cases():
    assert kl_bernoulli(0.0, 0.5) == pytest.approx(math.log(2))
    assert kl_bernoulli(1.0, 1.0) == pytest.approx(0.0, abs=1e-12)
    assert math.isfinite(kl_bernoulli(1.0, 0.0))
    assert kl_upper_bound(0.4, 0, 1.0) == 1.0
    assert kl_lower_bound(0.4, 0, 1.0) == 0.0
    assert kl_upper_bound(0.4, 5, 0.0) == 0.4
    assert kl_upper_bound(1.0, 5, 3.0) == 1.0
    assert kl_upper_bound(0.0, 4, 2.0) == pytest.approx(1 - math.exp(-0.5))
    assert kl_lower_bound(1.0, 4, 2.0) == pytest.approx(math.exp(-0.5))


@settings(max_examples=200, deadline=None)
@given(
    mean=st.floats(0.0, 1.0),
    count=st.floats(0.5, 1e6),
    level=st.floats(1e-3, 50.0),
)
def test_bounds_are_the_boundary_of_the_kl_ball(mean, count, level):
    upper = kl_upper_bound(mean, count, level)
    lower = kl_lower_bound(mean, count, level)
    assert lower - 1e-12 <= mean <= upper + 1e-12
    # Within 1e-9 of 0 or 1 the divergence is too steep to evaluate at the bound itself.
    if 1e-9 < upper < 1 - 1e-9:
        assert count * kl_bernoulli(mean, upper) <= level * (1 + 1e-6) + 1e-9
    if 1e-9 < lower < 1 - 1e-9:
        assert count * kl_bernoulli(mean, lower) <= level * (1 + 1e-6) + 1e-9
    if upper < 1 - 1e-9:  # a little further out the divergence exceeds the level
        assert count * kl_bernoulli(mean, min(1.0, upper + 1e-6)) > level
    if lower > 1e-9:
        assert count * kl_bernoulli(mean, max(0.0, lower - 1e-6)) > level


def test_vectorised_matches_scalar():
    means = np.linspace(0, 1, 11)
    counts = np.arange(11, dtype=float)
    vector = kl_upper_bound(means, counts, 1.5)
    scalar = [kl_upper_bound(m, c, 1.5) for m, c in zip(means, counts)]
    np.testing.assert_allclose(vector, scalar)


def test_bad_input():
    with pytest.raises(ValueError, match="mean"):
        kl_upper_bound(1.5, 1, 1)
    with pytest.raises(ValueError, match="count"):
        kl_lower_bound(0.5, -1, 1)
    with pytest.raises(ValueError, match="finite"):
        kl_bernoulli(np.nan, 0.5)


def test_rucb_bound_spot_check():
    from dueling_gym.agents._confidence_bounds import rucb_lower_bound, rucb_upper_bound

    wins = np.zeros((3, 3), dtype=np.int64)
    wins[0, 1], wins[1, 0] = 6, 4  # N = 10, mu_hat = 0.6
    radius = SPOT["RUCB radius alpha=0.51,t=100,n=10"]
    assert rucb_upper_bound(wins, 0, 1, 0.51, math.log(100)) == pytest.approx(0.6 + radius, abs=1e-9)
    assert rucb_lower_bound(wins, 0, 1, 0.51, math.log(100)) == pytest.approx(0.6 - radius, abs=1e-9)
    assert rucb_lower_bound(wins, 0, 1, 0.51, 2.0) == pytest.approx(1 - rucb_upper_bound(wins, 1, 0, 0.51, 2.0))
    assert rucb_upper_bound(wins, 0, 2, 0.51, 2.0) == 1.0 and rucb_lower_bound(wins, 0, 2, 0.51, 2.0) == 0.0
    assert rucb_upper_bound(wins, 1, 1, 0.51, 2.0) == 0.5


def test_rmed_exploration_function_spot_check():
    from dueling_gym.agents import RMED1

    agent = RMED1(5)
    assert agent.f_scale * 5 ** agent.f_exponent == pytest.approx(SPOT["RMED f(K)=0.3K^1.01 for K=5"], abs=1e-9)


# ------------------------------------------------------------------------------------------
# Confidence intervals of means
# ------------------------------------------------------------------------------------------

def test_student_t_quantile_matches_scipy():
    from scipy.special import stdtrit

    from dueling_gym.stats import student_t_quantile

    for df in (1, 2, 3, 4, 9, 29, 99, 1000, 0.5, 2.5):
        for probability in (0.6, 0.75, 0.9, 0.95, 0.975, 0.995, 0.9999, 1 - 1e-9, 0.025, 1e-6):
            assert student_t_quantile(probability, df) == pytest.approx(stdtrit(df, probability), rel=1e-8)
        # Next to the centre the quantile is (p - 1/2) / density(0), where SciPy's loses digits.
        density = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
        assert student_t_quantile(0.5 + 1e-7, df) == pytest.approx((0.5 + 1e-7 - 0.5) / density, rel=1e-6)
    with pytest.raises(ValueError, match="probability"):
        student_t_quantile(1.0, 3)
    with pytest.raises(ValueError, match="df"):
        student_t_quantile(0.9, 0)


def test_mean_half_width_is_students_t():
    from dueling_gym.stats import mean_half_width

    values = np.array([3.0, 5.0, 4.0, 8.0, 1.0, 6.0, 2.0, 7.0, 5.0, 4.0])
    # 10 runs: t_9 = 2.262157, not the normal 1.96 (13% narrower).
    assert mean_half_width(values) == pytest.approx(2.262157163 * values.std(ddof=1) / np.sqrt(10))
    runs = np.vstack([values, 2 * values]).T  # (runs, checkpoints)
    np.testing.assert_allclose(mean_half_width(runs, axis=0), [mean_half_width(values), 2 * mean_half_width(values)])
    assert mean_half_width([7.0]) == 0.0


def test_student_t_intervals_cover_the_mean_of_small_normal_samples():
    """With 5 runs the t interval covers the true mean ~95% of the time; the z = 1.96 one only ~88%."""
    from dueling_gym.stats import mean_half_width

    rng = np.random.default_rng(0)
    samples = rng.normal(0.0, 1.0, size=(20_000, 5))
    means = samples.mean(axis=1)
    t_cover = np.mean(np.abs(means) <= mean_half_width(samples, axis=1))
    z_cover = np.mean(np.abs(means) <= 1.96 * samples.std(axis=1, ddof=1) / np.sqrt(5))
    assert 0.94 < t_cover < 0.96 and z_cover < 0.90


def test_bootstrap_interval_is_reproducible_and_asymmetric_for_skewed_samples():
    from dueling_gym.stats import bootstrap_mean_interval

    skewed = np.array([1.0] * 18 + [100.0, 120.0])
    low, high = bootstrap_mean_interval(skewed, seed=3)
    assert (low, high) == bootstrap_mean_interval(skewed, seed=3)
    mean = skewed.mean()
    assert low < mean < high and high - mean > mean - low
    assert bootstrap_mean_interval([4.0]) == (4.0, 4.0)
