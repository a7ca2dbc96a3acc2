"""Small Numba kernels shared by several dueling agents (argmax/argmin with random ties).

The statistics themselves live in :mod:`dueling_gym.stats` (KL divergences and bounds) and
:mod:`dueling_gym.agents._pair_statistics` (RUCB-type bounds, empirical preferences and
Copeland counts); this module only holds selection helpers
that several agents need inside their compiled kernels.

"Random ties" means a uniform choice among the indices whose value equals the
extreme value *exactly*.  The generator is consumed only when there is an actual tie, so an
agent that never meets a tie draws nothing here.
"""

from __future__ import annotations

import numba
import numpy as np

from dueling_gym.agents._generator_stream import below
from dueling_gym.agents._pair_statistics import rucb_upper_bound

__all__ = ["random_argmax", "random_argmin", "rucb_challenger", "draw_index"]


@numba.njit(cache=True, nogil=True)
def _pick_tied(values: np.ndarray, mask: np.ndarray, best, count: int, rng: np.random.Generator) -> int:
    """The ``target``-th (uniformly drawn) index with ``mask[i]`` and ``values[i] == best``."""
    target = below(rng.bit_generator, count)
    for i in range(values.shape[0]):
        if mask[i] and values[i] == best:
            if target == 0:
                return i
            target -= 1
    return -1


@numba.njit(cache=True, nogil=True)
def _random_extreme(values: np.ndarray, mask: np.ndarray, rng: np.random.Generator, sign: float) -> int:
    """Index of the largest ``sign * values[i]`` over ``mask``, uniformly random among exact ties."""
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
    if count > 1:
        return _pick_tied(values, mask, best, count, rng)
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


@numba.njit(cache=True, nogil=True)
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
    return _random_extreme(values, mask, rng, 1.0)


@numba.njit(cache=True, nogil=True)
def random_argmin(values: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """``argmin_{i : mask[i]} values[i]`` with uniformly random ties; ``-1`` if the mask is empty.

    Parameters are as for :func:`random_argmax`.
    """
    return _random_extreme(values, mask, rng, -1.0)


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
