"""Shared pieces of the Mallows rank-elicitation agents (Busa-Fekete, Hüllermeier & Szörényi, ICML 2014).

* :func:`mallows_preferences`: the pairwise marginals of a Mallows model, the problems these
  agents are built for;
* :func:`confident_compare`: the repeated comparison both MallowsMPI and MallowsMPR use, which
  duels a pair until a Hoeffding interval excludes 1/2.
"""

from __future__ import annotations

import math
from typing import Any, Generator

import numpy as np

from dueling_gym.validation import check_number

__all__ = ["mallows_preferences", "confident_compare"]


def mallows_preferences(order: Any, phi: float) -> np.ndarray:
    """Pairwise marginals ``P[i, j] = Pr(i ranked before j)`` of the Mallows model ``(order, phi)``.

    ``order`` is the mode (best first) and ``phi`` in ``(0, 1)`` the dispersion.  With ``d`` the
    distance between the positions of ``i`` (ahead) and ``j`` in the mode,
    ``P[i, j] = h(d + 1) - h(d)`` with ``h(k) = k / (1 - phi^k)`` (Mallows 1957; the marginals
    used by Busa-Fekete et al., ICML 2014).  Adjacent items get ``1 / (1 + phi)``; the
    margin grows with ``d``, so the mode's order is the Condorcet (and Copeland) order.
    """
    phi = check_number("phi", phi, minimum=0.0, maximum=1.0, strict_maximum=True)
    order = np.asarray(order)
    n_arms = order.size
    if order.ndim != 1 or not np.issubdtype(order.dtype, np.integer) or sorted(order.tolist()) != list(range(n_arms)):
        raise ValueError(f"order must be a permutation of 0..K-1, got {order!r}")

    def h(k: np.ndarray) -> np.ndarray:
        return k / (1.0 - phi ** k)

    position = np.empty(n_arms, dtype=np.int64)
    position[order] = np.arange(n_arms)
    distance = position[None, :] - position[:, None]  # > 0 when the row arm is ahead
    ahead = np.abs(distance).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        lead = h(ahead + 1.0) - h(ahead)
    matrix = np.where(distance > 0, lead, 1.0 - lead)
    np.fill_diagonal(matrix, 0.5)
    return matrix


def confident_compare(first: int, second: int, log_level: float, wins: np.ndarray, counts: np.ndarray
                      ) -> Generator[tuple[int, int], bool, bool]:
    """Duel ``first`` against ``second`` until ``|p̂ - 1/2| > sqrt((log_level + 2 ln n) / (2n))``.

    ``log_level = ln(4 N / δ)`` for a union bound over ``N`` comparisons and all sample counts
    ``n``.  Samples already taken on the pair (kept in ``wins[i, j]`` / ``counts[i, j]``) count.
    Returns True iff ``first`` is the better arm.  Under a Mallows model every pair has
    ``|P - 1/2| >= (1 - phi) / (2 (1 + phi))``, so the loop ends.
    """
    # Plain Python counters inside the loop (NumPy scalar updates cost more than the duel).
    n = int(counts[first, second])
    won_total = int(wins[first, second])
    start_n, start_wins = n, won_total
    try:
        while True:
            if n > 0:
                mean = won_total / n
                if abs(mean - 0.5) > math.sqrt((log_level + 2.0 * math.log(n)) / (2.0 * n)):
                    return mean > 0.5
            won = yield first, second
            won_total += bool(won)
            n += 1
    finally:
        # Also on early close (e.g. a reset mid-comparison) so the counts stay consistent.
        added_n, added_wins = n - start_n, won_total - start_wins
        wins[first, second] += added_wins
        wins[second, first] += added_n - added_wins
        counts[first, second] += added_n
        counts[second, first] += added_n
