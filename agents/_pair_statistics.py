"""Pair statistics of the dueling agents: win counts and empirical Copeland scores, compiled.

Numba kernels over the win-count matrix ``W`` of an agent (``W[i, j]`` = duels between ``i``
and ``j`` won by ``i``, whichever arm was first; self-duels are not counted), shared by the
agents that keep such a matrix (RUCB, RCS, MergeRUCB, CCB, DTS, the random baseline, ...).
Their confidence bounds are in :mod:`dueling_gym.agents._confidence_bounds`.

Unplayed pairs: ``mu_hat = 1/2``.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["empirical_preference", "empirical_copeland_counts", "empirical_copeland_winner", "empirical_top_cycle",
           "fill_copeland_counts", "record_duel"]


@numba.njit(cache=True, nogil=True)
def empirical_preference(wins: np.ndarray, first: int, second: int) -> float:
    """``mu_hat[first, second] = W[first, second] / N`` with ``1/2`` for an unplayed pair."""
    first_wins = wins[first, second]
    total = first_wins + wins[second, first]
    if total == 0:
        return 0.5
    return first_wins / total


@numba.njit(cache=True, nogil=True)
def empirical_copeland_counts(wins: np.ndarray) -> np.ndarray:
    """``#{j != i : mu_hat[i, j] > 1/2}`` for every arm (ties count for neither side)."""
    counts = np.empty(wins.shape[0], dtype=np.int64)
    fill_copeland_counts(wins, counts)
    return counts


@numba.njit(cache=True, nogil=True)
def fill_copeland_counts(wins: np.ndarray, counts: np.ndarray) -> None:
    """:func:`empirical_copeland_counts` written into the first ``K`` entries of ``counts`` (a
    buffer the caller keeps, so that a per-duel test allocates nothing).

    Raises ``ValueError`` when ``counts`` has fewer than ``K`` entries (the loop below writes
    ``counts[i]`` for every arm, and compiled code checks no bounds)."""
    n_arms = wins.shape[0]
    if counts.shape[0] < n_arms:
        raise ValueError("counts has fewer entries than there are arms")
    for i in range(n_arms):
        counts[i] = 0
    for i in range(n_arms):
        for j in range(i + 1, n_arms):
            if wins[i, j] > wins[j, i]:
                counts[i] += 1
            elif wins[j, i] > wins[i, j]:
                counts[j] += 1


@numba.njit(cache=True, nogil=True)
def empirical_top_cycle(wins: np.ndarray, counts: np.ndarray) -> bool:
    """Whether at least three arms, but not all, tie on the most empirical Copeland wins and each of
    them beats every arm outside the tie in the counts, so that among themselves they beat each other
    in turn: the structure of three or more Copeland winners in a cycle above the other arms.  A tie
    of every arm is not one: it is also what a single pair read the wrong way can make of a problem
    with one Copeland winner.  ``counts`` is a scratch buffer of at least ``K`` entries
    (:func:`fill_copeland_counts`)."""
    fill_copeland_counts(wins, counts)
    n_arms = wins.shape[0]
    best = counts[:n_arms].max()
    n_leaders = 0
    for i in range(n_arms):
        if counts[i] == best:
            n_leaders += 1
            for j in range(n_arms):
                if counts[j] != best and wins[i, j] <= wins[j, i]:
                    return False
    return 3 <= n_leaders < n_arms


@numba.njit(cache=True, nogil=True)
def empirical_copeland_winner(wins: np.ndarray) -> int:
    """The arm beating the most others empirically (lowest index on ties)."""
    return int(np.argmax(empirical_copeland_counts(wins)))


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
