"""Draws from a NumPy ``Generator`` in compiled loops, without reference counting.

Numba reference-counts a ``numpy.random.Generator`` inside compiled code: each method call
``rng.random()`` or ``rng.integers(...)`` increments and decrements its count (two calls into the
runtime), and ``rng.integers`` also allocates a one-element array.  In a kernel that draws many
numbers per duel, that bookkeeping costs more than the draws.  The bit generator that the
Generator wraps (``rng.bit_generator`` in compiled code) is a plain structure of function
pointers, so a kernel takes it once and draws from it with the functions below, which consume
the stream exactly as the Generator methods they stand for:

* :func:`uniform` is ``rng.random()``: one double of the bit generator;
* :func:`below` is ``rng.integers(0, n)`` (``1 <= n <= 2**32``): NumPy's bounded draw for that
  range, Lemire's multiply-and-reject method on 32-bit outputs, and no draw at all for ``n = 1``.

Draws through the bit generator and through the Generator may be interleaved freely: both
advance the same stream.  ``tests/test_generator_stream.py`` checks both functions against the
Generator's own methods.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.np.random.generator_core import next_double, next_uint32

__all__ = ["uniform", "below"]

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
