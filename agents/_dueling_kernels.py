"""Small Numba kernels shared by several dueling agents (argmax/argmin with random ties).

The statistics themselves live in :mod:`dueling_gym.stats` (KL divergences and bounds) and
:mod:`dueling_gym.agents._pair_statistics` (RUCB-type bounds, empirical preferences and
Copeland counts); this module only holds selection helpers
that several agents need inside their compiled kernels.

"Random ties" means a uniform choice among the indices whose value equals the
extreme value *exactly*.  The generator is consumed only when there is an actual tie, so an
agent that never meets a tie draws nothing here.

Speed: the selection helpers are inlined into their callers (``inline="always"``).  Numba
reference-counts every array passed to a compiled function (an atomic increment and decrement
per argument and call, which costs more than scanning a few arms); once inlined, those counts
cancel and Numba's reference-count pruning removes them.  The ``_bits`` variants take the bit
generator (``rng.bit_generator``, read once per kernel) instead of the Generator, whose every
use is reference-counted too.
"""

from __future__ import annotations

import numba
import numpy as np

from dueling_gym.agents._generator_stream import below
from dueling_gym.agents._pair_statistics import rucb_upper_bound

__all__ = ["random_argmax", "random_argmin", "random_argmax_bits", "random_argmin_bits", "rucb_challenger", "draw_index"]


@numba.njit(cache=True, nogil=True)
def _pick_tied(values: np.ndarray, mask: np.ndarray, best, count: int, bitgen) -> int:
    """The ``target``-th (uniformly drawn) index with ``mask[i]`` and ``values[i] == best``."""
    target = below(bitgen, count)
    for i in range(values.shape[0]):
        if mask[i] and values[i] == best:
            if target == 0:
                return i
            target -= 1
    return -1


@numba.njit(cache=True, nogil=True, inline="always")
def _extreme(values: np.ndarray, mask: np.ndarray, sign: float):
    """``(index, value, count)``: the first index of the largest ``sign * values[i]`` over ``mask``,
    that value and how many eligible indices share it (``index = -1`` for an empty mask)."""
    index = -1
    count = 0
    best = values[0]
    for i in range(values.shape[0]):
        if not mask[i]:
            continue
        value = values[i]
        if index < 0 or sign * value > sign * best:
            best = value
            index = i
            count = 1
        elif value == best:
            count += 1
    return index, best, count


@numba.njit(cache=True, nogil=True, inline="always")
def _random_extreme(values: np.ndarray, mask: np.ndarray, bitgen, sign: float) -> int:
    """Index of the largest ``sign * values[i]`` over ``mask``, uniformly random among exact ties."""
    index, best, count = _extreme(values, mask, sign)
    if count > 1:
        return _pick_tied(values, mask, best, count, bitgen)
    return index


@numba.njit(cache=True, nogil=True)
def draw_index(probabilities: np.ndarray, rng: np.random.Generator) -> int:
    """An index drawn from the distribution ``probabilities`` by inverse CDF of one uniform (the
    last index takes whatever rounding leaves above the running sum)."""
    uniform = rng.random()
    cumulative = 0.0
    last = probabilities.shape[0] - 1
    for index in range(last):
        cumulative += probabilities[index]
        if uniform < cumulative:
            return index
    return last


@numba.njit(cache=True, nogil=True, inline="always")
def random_argmax(values: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """``argmax_{i : mask[i]} values[i]`` with uniformly random ties; ``-1`` if the mask is empty.

    Parameters
    ----------
    values : ndarray, shape (K,)
        Integer or float scores.
    mask : ndarray of bool, shape (K,)
        The eligible indices.
    rng : numpy.random.Generator
        Used only when several eligible indices share the maximum.
    """
    index, best, count = _extreme(values, mask, 1.0)
    if count > 1:
        return _pick_tied(values, mask, best, count, rng.bit_generator)
    return index


@numba.njit(cache=True, nogil=True, inline="always")
def random_argmin(values: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """``argmin_{i : mask[i]} values[i]`` with uniformly random ties; ``-1`` if the mask is empty.

    Parameters are as for :func:`random_argmax`.
    """
    index, best, count = _extreme(values, mask, -1.0)
    if count > 1:
        return _pick_tied(values, mask, best, count, rng.bit_generator)
    return index


@numba.njit(cache=True, nogil=True, inline="always")
def random_argmax_bits(values: np.ndarray, mask: np.ndarray, bitgen) -> int:
    """:func:`random_argmax` drawing its tie-break from the bit generator ``bitgen = rng.bit_generator``.

    The same result and the same draw as ``random_argmax(values, mask, rng)``; a kernel that has
    taken ``bitgen`` once avoids the reference counting of passing the Generator around.
    """
    return _random_extreme(values, mask, bitgen, 1.0)


@numba.njit(cache=True, nogil=True, inline="always")
def random_argmin_bits(values: np.ndarray, mask: np.ndarray, bitgen) -> int:
    """:func:`random_argmin` drawing its tie-break from the bit generator (see :func:`random_argmax_bits`)."""
    return _random_extreme(values, mask, bitgen, -1.0)


@numba.njit(cache=True, nogil=True)
def rucb_challenger(wins: np.ndarray, champion: int, mask: np.ndarray, bounds: np.ndarray, alpha: float,
                    log_t: float, rng: np.random.Generator) -> int:
    """RUCB's opponent rule: ``argmax_{j in mask} u[j, champion]`` with random ties, ``champion`` on a loss.

    ``u[champion, champion] = 1/2`` takes part in the maximum but never wins a tie: the champion
    is returned only when every other eligible arm has ``u[j, champion] < 1/2`` (a self-duel).
    ``mask`` lists the eligible arms (``mask[champion]`` is ignored and left as it was);
    ``bounds`` is scratch of length ``K``.
    """
    saved = mask[champion]
    mask[champion] = False
    for arm in range(wins.shape[0]):
        if mask[arm]:
            bounds[arm] = rucb_upper_bound(wins, arm, champion, alpha, log_t)
    best = random_argmax(bounds, mask, rng)
    mask[champion] = saved
    if best < 0 or bounds[best] < 0.5:
        return champion
    return best
