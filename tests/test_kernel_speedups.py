"""The bit-generator variants of the tie-breaking helpers agree with the Generator variants."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from dueling_gym.agents._random_draws import random_argmax, random_argmax_bits, random_argmin, random_argmin_bits


@numba.njit
def _choices(values, masks, rng, through_bit_generator):
    """argmax then argmin of every row of ``values`` over the row of ``masks``, by either route."""
    bitgen = rng.bit_generator
    out = np.empty((values.shape[0], 2), dtype=np.int64)
    for k in range(values.shape[0]):
        if through_bit_generator:
            out[k, 0] = random_argmax_bits(values[k], masks[k], bitgen)
            out[k, 1] = random_argmin_bits(values[k], masks[k], bitgen)
        else:
            out[k, 0] = random_argmax(values[k], masks[k], rng)
            out[k, 1] = random_argmin(values[k], masks[k], rng)
    return out, rng.random()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bit_generator_variants_pick_and_draw_as_the_generator_variants(seed):
    picker = np.random.default_rng(seed)
    # Few distinct values, so that most rows have ties; some rows have an empty mask.
    values = picker.integers(0, 3, size=(2000, 6)).astype(np.float64)
    masks = picker.random((2000, 6)) < 0.7
    masks[::97] = False
    reference, next_reference = _choices(values, masks, np.random.default_rng(seed), False)
    fast, next_fast = _choices(values, masks, np.random.default_rng(seed), True)
    np.testing.assert_array_equal(fast, reference)
    assert next_fast == next_reference  # the same number of draws were taken
    assert (reference[::97] == -1).all()
    assert ((reference >= 0) == masks.any(axis=1)[:, None]).all()
