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
intervals for skewed or bimodal samples.  The t quantile is computed here (regularised
incomplete beta function by its continued fraction, inverted by bisection) so that a report
does not import SciPy's statistics for one number.
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
    low = mean
    high = 1.0
    for _ in range(_BISECTION_STEPS):
        if high - low < _BISECTION_WIDTH:
            break
        middle = 0.5 * (low + high)
        if kl_bernoulli_scalar(mean, middle) > threshold:
            high = middle
        else:
            low = middle
    return low


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
    low = 0.0
    high = mean
    for _ in range(_BISECTION_STEPS):
        if high - low < _BISECTION_WIDTH:
            break
        middle = 0.5 * (low + high)
        if kl_bernoulli_scalar(mean, middle) > threshold:
            low = middle
        else:
            high = middle
    return high


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


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 1000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-16:
            break
    return fraction


def _regularised_incomplete_beta(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):  # the fraction converges fast on this side
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def _student_t_upper_tail(t: float, df: float) -> float:
    """``P(T > t)`` for ``t >= 0`` (accurate in the far tail)."""
    return 0.5 * _regularised_incomplete_beta(0.5 * df, 0.5, df / (df + t * t))


def _student_t_centre(t: float, df: float) -> float:
    """``P(0 < T < t)`` for ``t >= 0`` (accurate near the centre, where ``1 - tail`` would cancel)."""
    return 0.5 * _regularised_incomplete_beta(0.5, 0.5 * df, t * t / (df + t * t))


@functools.lru_cache(maxsize=1024)  # a report asks for the same few quantiles hundreds of times
def student_t_quantile(probability: float, df: float) -> float:
    """The ``probability`` quantile of Student's t distribution with ``df`` degrees of freedom.

    Accurate to about ``1e-8`` relative (bisection on the distribution function, measured
    from the centre for probabilities up to 0.75 and from the tail above).

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
    if probability <= 0.75:
        target, below = probability - 0.5, lambda t: _student_t_centre(t, df) < target
    else:
        target, below = 1.0 - probability, lambda t: _student_t_upper_tail(t, df) > target
    low, high = 0.0, 1.0
    while below(high):
        low, high = high, 2.0 * high
    while high - low > 1e-14 * high:
        middle = 0.5 * (low + high)
        if below(middle):
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)


def mean_half_width(values: ArrayLike, *, level: float = 0.95, axis: int = 0) -> NDArray[np.float64] | float:
    """Half-width of the Student's t confidence interval of the mean of ``values`` along ``axis``.

    ``t_{n-1, (1 + level) / 2} · s / sqrt(n)`` with the sample standard deviation ``s``; 0 for a
    single value (no spread can be estimated from it).

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
    rng = np.random.default_rng(seed)
    means = array[rng.integers(0, array.size, size=(resamples, array.size))].mean(axis=1)
    low, high = np.quantile(means, [0.5 * (1.0 - level), 0.5 * (1.0 + level)])
    return float(low), float(high)
