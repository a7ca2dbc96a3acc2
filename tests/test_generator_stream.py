"""Compiled draws through a Generator's bit generator follow the Generator's own stream exactly."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from dueling_gym.agents._random_draws import below, uniform


@numba.njit
def _mixed_draws(rng, bounds, through_bit_generator):
    """For each bound ``n``: a uniform then an integer below ``n``, by either route."""
    bitgen = rng.bit_generator
    out = np.empty(2 * bounds.shape[0])
    for k in range(bounds.shape[0]):
        if through_bit_generator[k]:
            out[2 * k] = uniform(bitgen)
            out[2 * k + 1] = below(bitgen, bounds[k])
        else:
            out[2 * k] = rng.random()
            out[2 * k + 1] = rng.integers(0, bounds[k])
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_uniform_and_below_consume_the_stream_as_random_and_integers(seed):
    picker = np.random.default_rng(100 + seed)
    # Small bounds (the agents' case), bounds whose rejection zone is large, and the extremes.
    bounds = np.concatenate([picker.integers(1, 40, 3000), np.array([1, 2, 3, 2**31 + 1, 3 * 2**30, 2**32 - 1, 2**32]),
                             picker.integers(2**31, 2**32, 500)]).astype(np.int64)
    reference = _mixed_draws(np.random.default_rng(seed), bounds, np.zeros(bounds.size, dtype=np.bool_))
    fast = _mixed_draws(np.random.default_rng(seed), bounds, np.ones(bounds.size, dtype=np.bool_))
    mixed = _mixed_draws(np.random.default_rng(seed), bounds, picker.random(bounds.size) < 0.5)
    np.testing.assert_array_equal(fast, reference)
    np.testing.assert_array_equal(mixed, reference)
    # The compiled Generator methods are NumPy's: the same stream from Python.
    rng = np.random.default_rng(seed)
    python_draws = []
    for n in bounds[:200]:
        python_draws += [rng.random(), rng.integers(0, n)]
    np.testing.assert_array_equal(reference[:400], python_draws)


def test_below_one_draws_nothing():
    rng = np.random.default_rng(5)
    expected = np.random.default_rng(5).random()

    @numba.njit
    def draw(rng):
        bitgen = rng.bit_generator
        return below(bitgen, 1), uniform(bitgen)

    assert draw(rng) == (0, expected)
