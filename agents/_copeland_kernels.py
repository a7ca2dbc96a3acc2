"""Small Numba kernels shared by the Copeland agents (CCB; reusable by SCB, DTS and others).

The confidence bounds themselves live in :mod:`dueling_gym.agents._pair_statistics`; this module only holds the
bookkeeping helpers that several Copeland algorithms need inside their compiled kernels.
"""

from __future__ import annotations

import numba
import numpy as np

from dueling_gym.agents._generator_stream import below
from dueling_gym.agents._pair_statistics import uniform_choice

__all__ = [ "choose_uniform", "keep_random_subset", "preferred_argmax"]


@numba.njit(cache=True, nogil=True)
def choose_uniform(mask: np.ndarray, count: int, rng: np.random.Generator) -> int:
    """:func:`~dueling_gym.agents._pair_statistics.uniform_choice`, except that a single candidate costs no draw.

    Algorithms draw at every step from candidate sets that are usually singletons once they
    have converged; skipping those draws saves time and changes no probability.
    """
    if count == 1:
        for i in range(mask.shape[0]):
            if mask[i]:
                return i
    return uniform_choice(mask, count, rng)


@numba.njit(cache=True, nogil=True)
def keep_random_subset(mask: np.ndarray, size: int, keep: int, rng: np.random.Generator, scratch: np.ndarray) -> None:
    """Keep a uniformly random ``keep``-subset of the ``size`` true entries of ``mask`` (in place).

    Requires ``0 <= keep <= size = mask.sum()``; ``scratch`` is an integer array of length
    ``>= size``.  Partial Fisher-Yates over the members in ascending order: ``keep`` draws
    ``rng.integers(0, size - r)``, ``r = 0 .. keep-1``.
    """
    count = 0
    for i in range(mask.shape[0]):
        if mask[i]:
            scratch[count] = i
            count += 1
    for r in range(keep):
        pick = r + below(rng.bit_generator, size - r)
        scratch[r], scratch[pick] = scratch[pick], scratch[r]
    for r in range(keep, size):
        mask[scratch[r]] = False


@numba.njit(cache=True, nogil=True)
def preferred_argmax(values: np.ndarray, preferred: np.ndarray) -> int:
    """Index of the maximum of ``values``; among tied maximisers prefer ``preferred`` ones, then the lowest index."""
    best = values[0]
    for i in range(1, values.shape[0]):
        if values[i] > best:
            best = values[i]
    first = -1
    for i in range(values.shape[0]):
        if values[i] == best:
            if preferred[i]:
                return i
            if first < 0:
                first = i
    return first
