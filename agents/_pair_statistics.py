"""Pair statistics of the dueling agents: win counts, RUCB-type bounds, empirical Copeland scores.

Numba kernels over the win-count matrix ``W`` of an agent (``W[i, j]`` = duels between ``i``
and ``j`` won by ``i``, whichever arm was first; self-duels are not counted), shared by the
agents that keep such a matrix (RUCB, RCS, MergeRUCB, CCB, DTS, the random baseline, ...).
The KL divergence and KL confidence bounds, which the problems and lower bounds use too, stay
in the core module :mod:`dueling_gym.stats`.

Unplayed pairs: ``mu_hat = 1/2``, ``u = 1`` and ``l = 0`` (see :func:`rucb_upper_bound`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._generator_stream import below

__all__ = [
    "empirical_preference",
    "rucb_upper_bound",
    "rucb_lower_bound",
    "empirical_copeland_counts",
    "empirical_copeland_winner",
    "uniform_choice",
    "uniform_choice_bits",
    "record_duel",
    "trailing_evidence",
]


@numba.njit(cache=True, nogil=True)
def empirical_preference(wins: np.ndarray, first: int, second: int) -> float:
    """``mu_hat[first, second] = W[first, second] / N`` with ``1/2`` for an unplayed pair."""
    first_wins = wins[first, second]
    total = first_wins + wins[second, first]
    if total == 0:
        return 0.5
    return first_wins / total


@numba.njit(cache=True, nogil=True)
def rucb_upper_bound(wins: np.ndarray, first: int, second: int, alpha: float, log_t: float) -> float:
    """RUCB-type upper bound ``u = mu_hat + sqrt(alpha ln t / N)``; ``1`` for an unplayed pair and ``1/2`` on the diagonal.

    For an unplayed pair the bounds are ``u = 1`` and ``l = 0``.  RUCB and DTS write "x/0 := 1",
    whose literal reading gives ``u = 2``; both readings make the same decision in every
    comparison with 1/2, and ``u = 1`` keeps bounds inside ``[0, 1]``.
    """
    if first == second:
        return 0.5
    first_wins = wins[first, second]
    total = first_wins + wins[second, first]
    if total == 0:
        return 1.0
    return first_wins / total + math.sqrt(alpha * log_t / total)


@numba.njit(cache=True, nogil=True)
def rucb_lower_bound(wins: np.ndarray, first: int, second: int, alpha: float, log_t: float) -> float:
    """RUCB-type lower bound ``l = mu_hat - sqrt(alpha ln t / N) = 1 - u[second, first]``; ``0`` if unplayed."""
    if first == second:
        return 0.5
    first_wins = wins[first, second]
    total = first_wins + wins[second, first]
    if total == 0:
        return 0.0
    return first_wins / total - math.sqrt(alpha * log_t / total)


@numba.njit(cache=True, nogil=True)
def empirical_copeland_counts(wins: np.ndarray) -> np.ndarray:
    """``#{j != i : mu_hat[i, j] > 1/2}`` for every arm (ties count for neither side)."""
    n_arms = wins.shape[0]
    counts = np.zeros(n_arms, dtype=np.int64)
    for i in range(n_arms):
        for j in range(i + 1, n_arms):
            if wins[i, j] > wins[j, i]:
                counts[i] += 1
            elif wins[j, i] > wins[i, j]:
                counts[j] += 1
    return counts


@numba.njit(cache=True, nogil=True)
def empirical_copeland_winner(wins: np.ndarray) -> int:
    """The arm beating the most others empirically (lowest index on ties)."""
    return int(np.argmax(empirical_copeland_counts(wins)))


@numba.njit(cache=True, nogil=True, inline="always")
def uniform_choice(mask: np.ndarray, count: int, rng: np.random.Generator) -> int:
    """A uniformly random index ``i`` with ``mask[i]`` true, given ``count = mask.sum() > 0``."""
    return uniform_choice_bits(mask, count, rng.bit_generator)


@numba.njit(cache=True, nogil=True, inline="always")
def uniform_choice_bits(mask: np.ndarray, count: int, bitgen) -> int:
    """:func:`uniform_choice` drawing from the bit generator ``bitgen = rng.bit_generator`` (the same draw).

    Inlined, like :func:`record_duel`: Numba reference-counts the arrays passed to a compiled
    function, which costs more than these few operations.
    """
    target = below(bitgen, count)
    for i in range(mask.shape[0]):
        if mask[i]:
            if target == 0:
                return i
            target -= 1
    return -1


@numba.njit(cache=True, nogil=True, inline="always")
def record_duel(wins: np.ndarray, first: int, second: int, first_won: bool) -> bool:
    """Add a duel to the pair statistics ``W``; a self-duel carries no information and is skipped.

    Returns True when the statistics changed.  A self-duel ``(i, i)`` is a fair coin that says
    nothing about ``P``, so it is not counted; the algorithms that feed raw outcomes to
    cardinal learners (Sparring, Self-Sparring) do so in their own kernels.
    """
    if first == second:
        return False
    if first_won:
        wins[first, second] += 1
    else:
        wins[second, first] += 1
    return True


@numba.njit(cache=True, nogil=True)
def trailing_evidence(wins: np.ndarray, first: int, second: int, alpha: float) -> float:
    """Evidence that ``first`` trails ``second``: ``N (1/2 - mu_hat)^2 / alpha`` if ``mu_hat < 1/2``, else ``-1``.

    ``mu_hat = mu_hat[first, second]`` and ``N`` is the number of duels of the pair.
    For the RUCB-type bounds (``u = mu_hat + sqrt(alpha ln t / N)``, ``u = 1``
    and ``l = 0`` for ``N = 0``) and ``ln t > 0`` whenever ``N > 0``:

    * ``u[first, second] < 1/2``  iff  ``evidence > ln t``;
    * ``l[second, first] >= 1/2``  iff  ``evidence >= ln t``  (``l[second, first] = 1 - u[first, second]``).

    An unplayed pair or one that ``first`` does not trail gets ``-1``, which is never above
    ``ln t >= 0``.  Comparing evidence with ``ln t`` needs no square root and changes only when
    the pair is played, so callers can keep the comparison results between duels.
    """
    first_wins = wins[first, second]
    total = first_wins + wins[second, first]
    if total == 0:
        return -1.0
    mean = first_wins / total
    if mean < 0.5:
        return total * (0.5 - mean) ** 2 / alpha
    return -1.0
