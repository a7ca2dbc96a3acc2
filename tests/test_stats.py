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
    from dueling_gym.agents._pair_statistics import rucb_lower_bound, rucb_upper_bound

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
