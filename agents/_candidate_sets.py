"""Candidate sets of the dueling agents: choosing within them and thinning them, compiled.

A candidate set is a boolean mask over the arms.  These are the set operations that more than
one algorithm's pseudocode uses; the random ones draw as :mod:`dueling_gym.agents._random_draws`
says.

* :func:`rucb_challenger` -- RUCB's opponent of a champion (Zoghi et al., ICML 2014,
  Algorithm 1 line 9), reused by the agents built on RUCB;
* :func:`keep_random_subset` -- keep a uniformly random subset of a candidate set (CCB's
  random thinning of its candidate set, Zoghi et al., NeurIPS 2015, Algorithm 1);
* :func:`preferred_argmax` -- a maximiser that prefers the members of a second set on ties.
"""

from __future__ import annotations

import numba
import numpy as np

from dueling_gym.agents._confidence_bounds import rucb_upper_bound
from dueling_gym.agents._random_draws import below, random_argmax

__all__ = ["rucb_challenger", "keep_random_subset", "preferred_argmax"]


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
