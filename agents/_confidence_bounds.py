"""Confidence bounds and confidence tests of the dueling agents, compiled.

Over the win-count matrix ``W`` of an agent (``W[i, j]`` = duels between ``i`` and ``j`` won
by ``i``; see :mod:`dueling_gym.agents._pair_statistics`):

* :func:`rucb_upper_bound` / :func:`rucb_lower_bound` -- RUCB's bounds
  ``mu_hat +- sqrt(alpha ln t / N)`` (Zoghi et al., ICML 2014, Algorithm 1 line 4), ``u = 1``
  and ``l = 0`` for an unplayed pair;
* :func:`trailing_evidence` -- the same comparison with 1/2 without a square root, for agents
  that keep its result between duels (MergeRUCB).

For elimination with Hoeffding boxes (SAVAGE, Urvoy et al., ICML 2013, §3.1):

* :func:`hoeffding_radius` -- the two-sided radius ``sqrt(ln(2/delta') / (2n))``, written in
  terms of ``ln(2/delta')`` so that callers precompute the logarithm;
* :func:`savage_log_level` -- ``ln(2/delta') = ln(eta / delta)`` for SAVAGE's finite-horizon
  union bound (``eta = 2 N T``) and the anytime one (``eta = pi^2 N n^2 / 3``);
* :func:`nested_interval_update` -- the forced inclusion of successive confidence sets,
  ``[a, b] <- [max(a, m - c), min(b, m + c)]``.

The base class of the agents whose bounds are RUCB's, which takes and checks their exploration
parameter ``alpha``, is :class:`dueling_gym.agents.base.RUCBBoundsAgent`.

The KL divergence and KL confidence bounds, which the problems and lower bounds use too, live
in the core module :mod:`dueling_gym.stats`.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["rucb_upper_bound", "rucb_lower_bound", "trailing_evidence", "hoeffding_radius", "savage_log_level", "nested_interval_update"]


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


@numba.njit(cache=True, nogil=True)
def hoeffding_radius(log_level: float, count: float) -> float:
    """``sqrt(log_level / (2 count))`` with ``log_level = ln(2/delta')``; ``inf`` when ``count <= 0``."""
    if count <= 0.0:
        return math.inf
    return math.sqrt(log_level / (2.0 * count))


@numba.njit(cache=True, nogil=True)
def savage_log_level(base: float, count: float, anytime: bool) -> float:
    """``ln(2/delta')`` of SAVAGE's radius for a parameter sampled ``count`` times.

    ``base`` is precomputed once per run: ``ln(2 N T / delta)`` for a known horizon ``T``
    (then the level does not depend on ``count``), ``ln(pi^2 N / (3 delta))`` for the anytime
    radius, whose level is ``ln(pi^2 N n^2 / (3 delta)) = base + 2 ln n``.
    """
    if anytime:
        return base + 2.0 * math.log(count)
    return base


@numba.njit(cache=True, nogil=True)
def nested_interval_update(lower: float, upper: float, mean: float, radius: float) -> tuple[float, float]:
    """``[max(lower, mean - radius), min(upper, mean + radius)]``: the new nested interval.

    The intervals only shrink; if the new box misses the old one (a low-probability event) the
    interval may become empty (``lower > upper``), which the callers tolerate.  Scalar in and out
    on purpose: passing arrays held by a structref into a kernel costs reference counting on
    every call.
    """
    low = mean - radius
    high = mean + radius
    return (low if low > lower else lower), (high if high < upper else upper)
