"""Shared statistical routines: Bernoulli KL divergence and KL confidence bounds.

Every algorithm, the lower-bound machinery and the reduction wrappers use these functions;
nothing in the project re-implements them.  Each routine exists as a Numba-compiled scalar
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


@numba.vectorize(["float64(float64, float64)"], cache=True)
def _kl_bernoulli_ufunc(p, q):  # pragma: no cover - compiled
    return kl_bernoulli_scalar(p, q)


@numba.vectorize(["float64(float64, float64, float64)"], cache=True)
def _kl_upper_ufunc(mean, count, level):  # pragma: no cover - compiled
    return kl_upper_bound_scalar(mean, count, level)


@numba.vectorize(["float64(float64, float64, float64)"], cache=True)
def _kl_lower_ufunc(mean, count, level):  # pragma: no cover - compiled
    return kl_lower_bound_scalar(mean, count, level)


def _check_probabilities(name: str, values: NDArray[np.float64]) -> None:
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite, got {values!r}")
    if np.any((values < 0.0) | (values > 1.0)):
        raise ValueError(f"{name} must lie in [0, 1], got {values!r}")


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
    p_array = np.asarray(p, dtype=np.float64)
    q_array = np.asarray(q, dtype=np.float64)
    _check_probabilities("p", p_array)
    _check_probabilities("q", q_array)
    result = _kl_bernoulli_ufunc(p_array, q_array)
    return float(result) if np.ndim(result) == 0 else result


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
    mean_array = np.asarray(mean, dtype=np.float64)
    _check_probabilities("mean", mean_array)
    count_array = np.asarray(count, dtype=np.float64)
    if np.any(count_array < 0) or not np.all(np.isfinite(count_array)):
        raise ValueError(f"count must be finite and non-negative, got {count!r}")
    result = _kl_upper_ufunc(mean_array, count_array, np.asarray(level, dtype=np.float64))
    return float(result) if np.ndim(result) == 0 else result


def kl_lower_bound(mean: ArrayLike, count: ArrayLike, level: ArrayLike) -> NDArray[np.float64] | float:
    """KL lower confidence bound ``min{q <= mean : count * d(mean, q) <= level}``.

    Parameters are as for :func:`kl_upper_bound`; ``count = 0`` gives the bound ``0``.
    """
    mean_array = np.asarray(mean, dtype=np.float64)
    _check_probabilities("mean", mean_array)
    count_array = np.asarray(count, dtype=np.float64)
    if np.any(count_array < 0) or not np.all(np.isfinite(count_array)):
        raise ValueError(f"count must be finite and non-negative, got {count!r}")
    result = _kl_lower_ufunc(mean_array, count_array, np.asarray(level, dtype=np.float64))
    return float(result) if np.ndim(result) == 0 else result


# ---------------------------------------------------------------------------------------------
# Pairwise statistics used by the dueling agents (Numba kernels)
# ---------------------------------------------------------------------------------------------
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


@numba.njit(cache=True, nogil=True)
def uniform_choice(mask: np.ndarray, count: int, rng: np.random.Generator) -> int:
    """A uniformly random index ``i`` with ``mask[i]`` true, given ``count = mask.sum() > 0``."""
    target = rng.integers(0, count)
    for i in range(mask.shape[0]):
        if mask[i]:
            if target == 0:
                return i
            target -= 1
    return -1


@numba.njit(cache=True, nogil=True)
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
