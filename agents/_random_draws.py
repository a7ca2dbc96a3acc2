"""Random draws of the dueling agents: the one randomness convention, stated here.

Every agent owns one ``numpy.random.Generator`` (``self.rng``, made from its ``seed`` by
``numpy.random.default_rng``; the environment has its own) and draws from nothing else.  The
Generator lives in the agent's state, so Python methods and compiled kernels draw from the same
stream.  Python-level code, and a compiled kernel that draws once per duel, call the Generator's
own methods (``rng.random()``, ``rng.beta(...)``).  A kernel that draws in a loop, or hands draws
to helpers, takes the bit generator once (``bitgen = rng.bit_generator``) and draws through the
functions of this module, which consume the stream exactly as the Generator methods they stand
for.  Both kinds of draw advance the same stream, so they may be interleaved freely, and every
code path of an agent (the compiled loop, ``act``/``observe``, a Gymnasium loop) draws the same
numbers in the same order.

Why the bit generator: Numba reference-counts a ``numpy.random.Generator`` inside compiled code
(each ``rng.random()`` or ``rng.integers(...)`` increments and decrements its count, two calls
into the runtime, and ``rng.integers`` also allocates a one-element array).  In a kernel that
draws many numbers per duel, that bookkeeping costs more than the draws.  The bit generator is
a plain structure of function pointers.

* :func:`uniform` is ``rng.random()``: one double of the bit generator;
* :func:`below` is ``rng.integers(0, n)`` (``1 <= n <= 2**32``): NumPy's bounded draw for that
  range, Lemire's multiply-and-reject method on 32-bit outputs, and no draw at all for ``n = 1``;
* :func:`uniform_choice` draws a uniform member of a mask (no draw when it has one member);
* :func:`random_argmax` / :func:`random_argmin` break exact ties uniformly, drawing only when
  there is a tie, so an agent that never meets a tie draws nothing for them;
* :func:`draw_index` draws from a discrete distribution by inverse CDF of one uniform.

Functions named ``..._bits`` take ``bitgen`` instead of the Generator and make the same draw.
The small helpers are inlined into their callers (``inline="always"``): Numba reference-counts
every array passed to a compiled function (an atomic increment and decrement per argument and
call, which costs more than scanning a few arms); once inlined, those counts cancel and Numba's
reference-count pruning removes them.  ``tests/test_generator_stream.py`` checks the draws
against the Generator's own methods.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.np.random.generator_core import next_double, next_uint32

__all__ = ["uniform", "below", "uniform_choice", "uniform_choice_bits", "random_argmax", "random_argmin", "random_argmax_bits", "random_argmin_bits", "draw_index"]

_UINT32_MAX = np.uint64(0xFFFFFFFF)


@numba.njit(cache=True, nogil=True)
def uniform(bitgen) -> float:
    """The next ``rng.random()`` of the Generator whose bit generator is ``bitgen``."""
    return next_double(bitgen)


@numba.njit(cache=True, nogil=True)
def below(bitgen, n) -> int:
    """The next ``rng.integers(0, n)`` (``1 <= n <= 2**32``) of the Generator whose bit generator is ``bitgen``.

    NumPy draws ``m = x * n`` from 32-bit outputs ``x`` and returns ``m >> 32``, rejecting ``x``
    while the low half of ``m`` is below ``2**32 mod n`` (checked only when it is below ``n``).
    """
    if n <= 1:
        return 0
    span = np.uint64(n)
    product = np.uint64(next_uint32(bitgen)) * span
    leftover = product & _UINT32_MAX
    if leftover < span:
        threshold = (_UINT32_MAX - (span - np.uint64(1))) % span
        while leftover < threshold:
            product = np.uint64(next_uint32(bitgen)) * span
            leftover = product & _UINT32_MAX
    return np.int64(product >> np.uint64(32))


@numba.njit(cache=True, nogil=True, inline="always")
def uniform_choice(mask: np.ndarray, count: int, rng: np.random.Generator) -> int:
    """A uniformly random index ``i`` with ``mask[i]`` true, given ``count = mask.sum() > 0``."""
    return uniform_choice_bits(mask, count, rng.bit_generator)


@numba.njit(cache=True, nogil=True, inline="always")
def uniform_choice_bits(mask: np.ndarray, count: int, bitgen) -> int:
    """:func:`uniform_choice` drawing from the bit generator ``bitgen = rng.bit_generator`` (the same draw).

    Inlined: Numba reference-counts the arrays passed to a compiled
    function, which costs more than these few operations.
    """
    target = below(bitgen, count)
    for i in range(mask.shape[0]):
        if mask[i]:
            if target == 0:
                return i
            target -= 1
    return -1


@numba.njit(cache=True, nogil=True)
def _pick_tied(values: np.ndarray, mask: np.ndarray, best, count: int, bitgen) -> int:
    """The ``target``-th (uniformly drawn) index with ``mask[i]`` and ``values[i] == best``."""
    target = below(bitgen, count)
    for i in range(values.shape[0]):
        if mask[i] and values[i] == best:
            if target == 0:
                return i
            target -= 1
    return -1


@numba.njit(cache=True, nogil=True, inline="always")
def _extreme(values: np.ndarray, mask: np.ndarray, sign: float):
    """``(index, value, count)``: the first index of the largest ``sign * values[i]`` over ``mask``,
    that value and how many eligible indices share it (``index = -1`` for an empty mask)."""
    index = -1
    count = 0
    best = values[0]
    for i in range(values.shape[0]):
        if not mask[i]:
            continue
        value = values[i]
        if index < 0 or sign * value > sign * best:
            best = value
            index = i
            count = 1
        elif value == best:
            count += 1
    return index, best, count


@numba.njit(cache=True, nogil=True, inline="always")
def _random_extreme(values: np.ndarray, mask: np.ndarray, bitgen, sign: float) -> int:
    """Index of the largest ``sign * values[i]`` over ``mask``, uniformly random among exact ties."""
    index, best, count = _extreme(values, mask, sign)
    if count > 1:
        return _pick_tied(values, mask, best, count, bitgen)
    return index


@numba.njit(cache=True, nogil=True, inline="always")
def random_argmax(values: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """``argmax_{i : mask[i]} values[i]`` with uniformly random ties; ``-1`` if the mask is empty.

    Parameters
    ----------
    values : ndarray, shape (K,)
        Integer or float scores.
    mask : ndarray of bool, shape (K,)
        The eligible indices.
    rng : numpy.random.Generator
        Used only when several eligible indices share the maximum.
    """
    index, best, count = _extreme(values, mask, 1.0)
    if count > 1:
        return _pick_tied(values, mask, best, count, rng.bit_generator)
    return index


@numba.njit(cache=True, nogil=True, inline="always")
def random_argmin(values: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """``argmin_{i : mask[i]} values[i]`` with uniformly random ties; ``-1`` if the mask is empty.

    Parameters are as for :func:`random_argmax`.
    """
    index, best, count = _extreme(values, mask, -1.0)
    if count > 1:
        return _pick_tied(values, mask, best, count, rng.bit_generator)
    return index


@numba.njit(cache=True, nogil=True, inline="always")
def random_argmax_bits(values: np.ndarray, mask: np.ndarray, bitgen) -> int:
    """:func:`random_argmax` drawing its tie-break from the bit generator ``bitgen = rng.bit_generator``.

    The same result and the same draw as ``random_argmax(values, mask, rng)``; a kernel that has
    taken ``bitgen`` once avoids the reference counting of passing the Generator around.
    """
    return _random_extreme(values, mask, bitgen, 1.0)


@numba.njit(cache=True, nogil=True, inline="always")
def random_argmin_bits(values: np.ndarray, mask: np.ndarray, bitgen) -> int:
    """:func:`random_argmin` drawing its tie-break from the bit generator (see :func:`random_argmax_bits`)."""
    return _random_extreme(values, mask, bitgen, -1.0)


@numba.njit(cache=True, nogil=True)
def draw_index(probabilities: np.ndarray, rng: np.random.Generator) -> int:
    """An index drawn from the distribution ``probabilities`` by inverse CDF of one uniform (the
    last index takes whatever rounding leaves above the running sum)."""
    uniform = rng.random()
    cumulative = 0.0
    last = probabilities.shape[0] - 1
    for index in range(last):
        cumulative += probabilities[index]
        if uniform < cumulative:
            return index
    return last
