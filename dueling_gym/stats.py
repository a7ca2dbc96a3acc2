"""Shared statistical routines: Bernoulli KL divergence, KL confidence bounds, and the confidence
intervals of means that every report of the library prints.

The KL-based algorithms and the lower-bound machinery use these functions; nothing in the
project re-implements them.  (The pair statistics of the dueling agents -- win counts,
RUCB-type bounds, empirical Copeland scores -- live with the agents, in
a private module of :mod:`dueling_gym.agents`.)  Each routine exists as a Numba-compiled scalar
kernel (``*_scalar``, callable from other compiled kernels) and as a NumPy-friendly public
function that accepts scalars or arrays.

Conventions: natural logarithms (as in every paper implemented here); ``0 ln 0 = 0``; the second argument of the
divergence is clipped into ``[1e-15, 1 - 1e-15]``; bounds are found by bisection on the
monotone branch until the bracket is narrower than ``1e-12`` (at most 64 halvings).

Intervals of means (:func:`mean_half_width`) use Student's t with ``n - 1`` degrees of freedom:
with the few runs of a typical table (10 seeds: ``t = 2.262``) the normal quantile 1.96 would
make them about 13% too narrow.  :func:`bootstrap_mean_interval` gives percentile-bootstrap
intervals for skewed or bimodal samples.  The t quantile is SciPy's (``scipy.stats.t.ppf``; next to
the centre ``scipy.special.betaincinv``, see :func:`student_t_quantile`),
imported on first use so that ``import dueling_gym`` stays light.

A single run gives no interval at all: tables print :data:`NO_SPREAD` ("n/a") in its place and
:data:`NO_SPREAD_NOTE` below them, never "± 0.0".
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.validation import check_real_array

__all__ = [
    "student_t_quantile",
    "mean_half_width",
    "bootstrap_mean_interval",
    "INTERVAL_METHOD",
    "NO_SPREAD",
    "NO_SPREAD_NOTE",
    "kl_bernoulli",
    "kl_upper_bound",
    "kl_lower_bound",
    "kl_bernoulli_scalar",
    "kl_upper_bound_scalar",
    "kl_lower_bound_scalar",
]

_CLIP = 1e-15
_BISECTION_STEPS = 64
_BISECTION_WIDTH = 1e-12


@numba.njit(cache=True, nogil=True)
def kl_bernoulli_scalar(p: float, q: float) -> float:
    """``d(p, q)``, the KL divergence between Bernoulli(p) and Bernoulli(q)."""
    if q < _CLIP:
        q = _CLIP
    elif q > 1.0 - _CLIP:
        q = 1.0 - _CLIP
    result = 0.0
    if p > 0.0:
        result += p * math.log(p / q)
    if p < 1.0:
        result += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return result


@numba.njit(cache=True, nogil=True)
def _kl_region_edge(mean: float, threshold: float, inside: float, outside: float) -> float:
    """The edge of ``{q : d(mean, q) <= threshold}`` between ``inside`` (in it) and ``outside``, by bisection.

    ``d(mean, .)`` is monotone on either side of ``mean``, so the region is an interval around it;
    the point returned is always inside, within ``_BISECTION_WIDTH`` of the edge.
    """
    for _ in range(_BISECTION_STEPS):
        if abs(outside - inside) < _BISECTION_WIDTH:
            break
        middle = 0.5 * (inside + outside)
        if kl_bernoulli_scalar(mean, middle) > threshold:
            outside = middle
        else:
            inside = middle
    return inside


@numba.njit(cache=True, nogil=True)
def kl_upper_bound_scalar(mean: float, count: float, level: float) -> float:
    """``max{q in [mean, 1] : count * d(mean, q) <= level}`` (the KL-UCB index)."""
    if count <= 0.0:
        return 1.0
    if level <= 0.0 or mean >= 1.0:
        return mean if mean < 1.0 else 1.0
    threshold = level / count
    if mean <= 0.0:
        # closed form of d(0, q) = -ln(1 - q) <= threshold
        return 1.0 - math.exp(-threshold)
    return _kl_region_edge(mean, threshold, mean, 1.0)


@numba.njit(cache=True, nogil=True)
def kl_lower_bound_scalar(mean: float, count: float, level: float) -> float:
    """``min{q in [0, mean] : count * d(mean, q) <= level}`` (the KL lower confidence bound)."""
    if count <= 0.0:
        return 0.0
    if level <= 0.0 or mean <= 0.0:
        return mean if mean > 0.0 else 0.0
    threshold = level / count
    if mean >= 1.0:
        return math.exp(-threshold)
    return _kl_region_edge(mean, threshold, mean, 0.0)


# Elementwise loops over broadcast, flattened inputs.  Plain dispatchers rather than
# ``numba.vectorize`` ufuncs: a ufunc with signatures compiles (or loads) when its module is
# imported, which cost a third of a second at every ``import``; a dispatcher loads on first call.
@numba.njit(cache=True, nogil=True)
def _kl_bernoulli_elementwise(p, q, out):  # pragma: no cover - compiled
    for index in range(out.size):
        out[index] = kl_bernoulli_scalar(p[index], q[index])


@numba.njit(cache=True, nogil=True)
def _kl_upper_elementwise(mean, count, level, out):  # pragma: no cover - compiled
    for index in range(out.size):
        out[index] = kl_upper_bound_scalar(mean[index], count[index], level[index])


@numba.njit(cache=True, nogil=True)
def _kl_lower_elementwise(mean, count, level, out):  # pragma: no cover - compiled
    for index in range(out.size):
        out[index] = kl_lower_bound_scalar(mean[index], count[index], level[index])


def _elementwise(kernel, *arrays: NDArray[np.float64]) -> NDArray[np.float64] | float:
    """Apply ``kernel`` to the broadcast ``arrays``; a float when every input is a scalar."""
    broadcast = np.broadcast_arrays(*(np.asarray(array, dtype=np.float64) for array in arrays))
    shape = broadcast[0].shape
    flat = [np.ascontiguousarray(array).reshape(-1) for array in broadcast]
    out = np.empty(flat[0].size)
    kernel(*flat, out)
    return float(out[0]) if not shape else out.reshape(shape)


def kl_bernoulli(p: ArrayLike, q: ArrayLike) -> NDArray[np.float64] | float:
    """Bernoulli KL divergence ``d(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))``.

    Parameters
    ----------
    p, q : float or array_like
        Means in ``[0, 1]`` (broadcast against each other). ``q`` is clipped into
        ``[1e-15, 1 - 1e-15]`` so that the divergence stays finite.

    Returns
    -------
    float or ndarray
        The divergence, elementwise.
    """
    p_array = check_real_array("p", p, minimum=0.0, maximum=1.0)
    q_array = check_real_array("q", q, minimum=0.0, maximum=1.0)
    return _elementwise(_kl_bernoulli_elementwise, p_array, q_array)


def kl_upper_bound(mean: ArrayLike, count: ArrayLike, level: ArrayLike) -> NDArray[np.float64] | float:
    """KL upper confidence bound ``max{q >= mean : count * d(mean, q) <= level}``.

    Parameters
    ----------
    mean : float or array_like
        Empirical means in ``[0, 1]``.
    count : float or array_like
        Sample counts (``0`` gives the bound ``1``).
    level : float or array_like
        Exploration level, e.g. ``ln t`` for KL-UCB. ``level <= 0`` gives ``mean``.

    Returns
    -------
    float or ndarray
        The bound, elementwise, accurate to ``1e-12``.
    """
    mean_array = check_real_array("mean", mean, minimum=0.0, maximum=1.0)
    count_array = check_real_array("count", count, minimum=0.0)
    return _elementwise(_kl_upper_elementwise, mean_array, count_array, level)


def kl_lower_bound(mean: ArrayLike, count: ArrayLike, level: ArrayLike) -> NDArray[np.float64] | float:
    """KL lower confidence bound ``min{q <= mean : count * d(mean, q) <= level}``.

    Parameters are as for :func:`kl_upper_bound`; ``count = 0`` gives the bound ``0``.
    """
    mean_array = check_real_array("mean", mean, minimum=0.0, maximum=1.0)
    count_array = check_real_array("count", count, minimum=0.0)
    return _elementwise(_kl_lower_elementwise, mean_array, count_array, level)


# ------------------------------------------------------------------------------------------
# Confidence intervals of means
# ------------------------------------------------------------------------------------------

#: How every table of the library computes its "± half-width" (printed with the tables).
INTERVAL_METHOD = "95% confidence intervals of the mean, Student's t with n - 1 degrees of freedom"


#: What a table prints in place of an interval that one run cannot give.
NO_SPREAD = "n/a"
#: The line under a table that prints :data:`NO_SPREAD`.
NO_SPREAD_NOTE = "n/a: one run, no spread can be estimated"


@functools.lru_cache(maxsize=1024)  # a report asks for the same few quantiles hundreds of times
def student_t_quantile(probability: float, df: float) -> float:
    """The ``probability`` quantile of Student's t distribution with ``df`` degrees of freedom.

    SciPy's: ``scipy.stats.t.ppf`` above ``0.75`` (about 1e-16 relative against a 40-digit
    reference); up to ``0.75`` the inverse of ``P(0 < T < t) = I_{t²/(df+t²)}(1/2, df/2) / 2``
    by ``scipy.special.betaincinv``, because ``t.ppf`` loses digits next to the centre (SciPy
    1.17: 4e-4 relative at ``p = 0.5 + 1e-7``, ``df = 4``; 4e-10 at ``df = 1``), where this form
    stays within 1e-13.  The continued fraction this library used before agreed with ``t.ppf``
    at ``p = 0.975`` to 2e-13 relative for ``df <= 1000`` (5e-15 for ``df <= 10``, 2e-12 up to
    ``1e4``) and drifted to 4.5e-10 near ``df = 7e5``, where it, not SciPy, was off the
    40-digit reference.

    Examples
    --------
    >>> round(student_t_quantile(0.975, 9), 6)
    2.262157
    """
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must lie in (0, 1), got {probability!r}")
    if not df > 0:
        raise ValueError(f"df must be positive, got {df!r}")
    if probability < 0.5:
        return -student_t_quantile(1.0 - probability, df)
    if probability == 0.5:
        return 0.0
    # Imported here, not with the module: scipy.stats costs more than the rest of the import.
    if probability <= 0.75:
        from scipy.special import betaincinv

        x = float(betaincinv(0.5, 0.5 * df, 2.0 * (probability - 0.5)))
        return math.sqrt(df * x / (1.0 - x))
    from scipy.stats import t

    return float(t.ppf(probability, df))


def mean_half_width(values: ArrayLike, *, level: float = 0.95, axis: int = 0) -> NDArray[np.float64] | float:
    """Half-width of the Student's t confidence interval of the mean of ``values`` along ``axis``.

    ``t_{n-1, (1 + level) / 2} · s / sqrt(n)`` with the sample standard deviation ``s``; 0 for a
    single value (no spread can be estimated from it: tables print :data:`NO_SPREAD` there).

    Examples
    --------
    >>> round(mean_half_width([1.0, 2.0, 3.0]), 4)
    2.4841
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    array = np.asarray(values, dtype=np.float64)
    n = array.shape[axis] if array.ndim else 1
    if n < 2:
        zeros = np.zeros(np.delete(array.shape, axis)) if array.ndim > 1 else 0.0
        return zeros
    half = student_t_quantile(0.5 * (1.0 + level), n - 1) * array.std(axis=axis, ddof=1) / math.sqrt(n)
    return float(half) if np.ndim(half) == 0 else half


def bootstrap_mean_interval(values: ArrayLike, *, level: float = 0.95, resamples: int = 10_000,
                            seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval ``(low, high)`` of the mean of ``values``.

    For skewed or bimodal samples (regret on a matrix where some runs lock onto a wrong arm),
    where a symmetric t interval misplaces the mass.  Resampling draws from
    ``numpy.random.default_rng(seed)``, so the interval is reproducible.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    array = np.asarray(values, dtype=np.float64).ravel()
    if array.size < 2:
        return float(array.mean()), float(array.mean())
    # Kept rather than scipy.stats.bootstrap(method="percentile"), measured with SciPy 1.17 on
    # skewed samples of 2 to 100 runs, 10 000 resamples, the same default_rng(seed): it draws the
    # same indices but takes the percentiles its own way, so 11 of 60 intervals differed in the
    # last bit (2.2e-16 relative) -- enough to change the digits of summary.csv that
    # ``dueling-gym verify`` compares with folders already written -- and it took 1.9 times as
    # long at 10 runs (4.5 ms against 2.4 ms), 1.3 times at 100; its ``rng`` argument also needs
    # SciPy 1.15, above this library's minimum.
    rng = np.random.default_rng(seed)
    means = array[rng.integers(0, array.size, size=(resamples, array.size))].mean(axis=1)
    low, high = np.quantile(means, [0.5 * (1.0 - level), 0.5 * (1.0 + level)])
    return float(low), float(high)
