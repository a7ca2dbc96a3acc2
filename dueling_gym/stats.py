"""Shared statistical routines: Bernoulli KL divergence and KL confidence bounds.

The KL-based algorithms and the lower-bound machinery use these functions; nothing in the
project re-implements them.  (The pair statistics of the dueling agents -- win counts,
RUCB-type bounds, empirical Copeland scores -- live with the agents, in
:mod:`dueling_gym.agents._pair_statistics`.)  Each routine exists as a Numba-compiled scalar
kernel (``*_scalar``, callable from other compiled kernels) and as a NumPy-friendly public
function that accepts scalars or arrays.

Conventions: natural logarithms (as in every paper implemented here); ``0 ln 0 = 0``; the second argument of the
divergence is clipped into ``[1e-15, 1 - 1e-15]``; bounds are found by bisection on the
monotone branch until the bracket is narrower than ``1e-12`` (at most 64 halvings).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.validation import check_real_array

__all__ = [
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
