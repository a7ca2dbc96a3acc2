"""Small Numba kernels for elimination-style exploration (SAVAGE, Urvoy et al., ICML 2013).

Owned by :mod:`dueling_gym.agents.savage`; kept apart from :mod:`dueling_gym.agents._pair_statistics` because they
are specific to Hoeffding-box exploration with nested confidence intervals, but written so that
any other round-robin / action-elimination agent can reuse them.

* :func:`hoeffding_radius` -- the two-sided Hoeffding radius ``sqrt(ln(2/delta') / (2n))``,
  written in terms of ``ln(2/delta')`` so that callers precompute the logarithm;
* :func:`savage_log_level` -- ``ln(2/delta') = ln(eta / delta)`` for SAVAGE's finite-horizon
  union bound (``eta = 2 N T``) and the anytime one (``eta = pi^2 N n^2 / 3``);
* :func:`nested_interval_update` -- SAVAGE's forced inclusion of successive confidence sets
  (§3.1 of the paper), ``[a, b] <- [max(a, m - c), min(b, m + c)]``.
"""

from __future__ import annotations

import math

import numba

__all__ = ["hoeffding_radius", "savage_log_level", "nested_interval_update"]


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
