"""The compiled kernels of the learning-to-rank file reader and writer (:mod:`dueling_gym.problems.ltr_files`).

They are plain functions compiled with Numba by :func:`jit_in_place` on first use (see
:func:`compiled`), so that importing the problems does not import Numba.  The parser's status
codes are turned into messages by the reader; :data:`CHANGED` is the status of a row past the
arrays the first pass sized (the file grew while it was read).  The parser's ``flags`` select the
layout: :data:`NO_QID` for files whose query sizes are in a side file (a ``qid:`` field is then
refused), :data:`ACCEPT_NULL` to read a ``NULL`` feature value as NaN (the reader replaces it).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

__all__ = ["jit_in_place", "compiled", "max_row_bytes", "CHANGED", "NULL_VALUE", "QID_WITH_SIDE_FILE", "NO_QID",
           "ACCEPT_NULL"]

CHANGED = 10  # the status of a row beyond the arrays sized by the first pass
NULL_VALUE = 11  # the status of a NULL feature value when ACCEPT_NULL is not set
QID_WITH_SIDE_FILE = 12  # the status of a qid: field in a file whose query sizes come from a side file
NO_QID = 1  # flag: lines are "<label> <features>", the queries' sizes are given apart
ACCEPT_NULL = 2  # flag: a NULL feature value is read as NaN (a placeholder the reader replaces)
_DIGIT_LIMIT = 18  # digits of an int64 parsed exactly
_POWERS_OF_TEN = np.array([10.0**power for power in range(23)])  # exact in float64


def jit_in_place(namespace: dict[str, Any], names: tuple[str, ...]) -> None:
    """Compile the functions ``names`` of a module namespace with Numba, replacing them there.

    Importing Numba costs about half a second, so the kernels of these modules are written as
    plain functions and compiled on first use: helpers first (a kernel finds the compiled
    helper under the same global name when it is compiled), with ``cache=True`` so that later
    processes load the machine code from Numba's on-disk cache.
    """
    import numba

    for name in names:
        function = namespace[name]
        if not isinstance(function, numba.core.registry.CPUDispatcher):
            namespace[name] = numba.njit(cache=True, nogil=True)(function)


_KERNEL_NAMES = ("_skip_blanks", "_ends_token", "_parse_unsigned", "_parse_value", "_is_null", "_parse_line",
                 "_parse_chunk", "_write_unsigned", "_write_value", "max_row_bytes", "_format_rows")


# ---------------------------------------------------------------------------------- kernels
# Plain functions compiled by jit_in_place on first use.  Bytes: 9 tab, 10 newline, 13 carriage
# return, 32 space, 35 '#', 43 '+', 45 '-', 46 '.', 48-57 digits, 58 ':', 69/101 'E'/'e',
# 76 'L', 78 'N', 85 'U'.
def _skip_blanks(buffer, position, end):
    while position < end and (buffer[position] == 32 or buffer[position] == 9):
        position += 1
    return position


def _ends_token(buffer, position, end):
    return position >= end or buffer[position] == 32 or buffer[position] == 9 or buffer[position] == 35


def _parse_unsigned(buffer, position, end):
    """(value, position after, digits) of a run of decimal digits; digits > 18 means overflow."""
    value = 0
    digits = 0
    while position < end and 48 <= buffer[position] <= 57:
        if digits < _DIGIT_LIMIT:
            value = value * 10 + (buffer[position] - 48)
        digits += 1
        position += 1
    return value, position, digits


def _parse_value(buffer, position, end):
    """(value, position after, status) of a decimal number ``[+-]digits[.digits][(e|E)[+-]digits]``."""
    negative = False
    if position < end and (buffer[position] == 45 or buffer[position] == 43):
        negative = buffer[position] == 45
        position += 1
    mantissa = 0
    significant = 0
    exponent = 0
    seen = 0
    while position < end and 48 <= buffer[position] <= 57:
        digit = buffer[position] - 48
        seen += 1
        if mantissa == 0 and digit == 0:
            pass  # a leading zero
        elif significant < _DIGIT_LIMIT:
            mantissa = mantissa * 10 + digit
            significant += 1
        else:
            exponent += 1  # digits beyond int64 precision only scale the value
        position += 1
    if position < end and buffer[position] == 46:
        position += 1
        while position < end and 48 <= buffer[position] <= 57:
            digit = buffer[position] - 48
            seen += 1
            if mantissa == 0 and digit == 0:
                exponent -= 1
            elif significant < _DIGIT_LIMIT:
                mantissa = mantissa * 10 + digit
                significant += 1
                exponent -= 1
            position += 1
    if seen == 0:
        return 0.0, position, 5
    if position < end and (buffer[position] == 101 or buffer[position] == 69):
        position += 1
        sign = 1
        if position < end and (buffer[position] == 45 or buffer[position] == 43):
            sign = -1 if buffer[position] == 45 else 1
            position += 1
        power, position, digits = _parse_unsigned(buffer, position, end)
        if digits == 0:
            return 0.0, position, 5
        if digits > 4:
            return 0.0, position, 9
        exponent += sign * power
    value = 0.0
    if mantissa != 0:
        if exponent > 38:
            return 0.0, position, 8
        if 0 <= exponent <= 22:
            value = mantissa * _POWERS_OF_TEN[exponent]
        elif -22 <= exponent < 0:
            value = mantissa / _POWERS_OF_TEN[-exponent]  # one correctly rounded division
        elif exponent >= 0:
            value = mantissa * 10.0 ** exponent
        elif exponent >= -300:
            value = mantissa / 10.0 ** (-exponent)  # exact powers of ten: one correctly rounded division
        else:
            value = (mantissa / 1e300) / 10.0 ** (-exponent - 300)
    if value > 3.4028234663852886e38:
        return 0.0, position, 8
    return (-value if negative else value), position, 0


def _is_null(buffer, position, end):
    """Whether the token at ``position`` is exactly ``NULL`` (bytes 78 85 76 76)."""
    return (position + 4 <= end and buffer[position] == 78 and buffer[position + 1] == 85
            and buffer[position + 2] == 76 and buffer[position + 3] == 76 and _ends_token(buffer, position + 4, end))


def _parse_line(buffer, position, end, features, row, width, limit, flags):
    """Parse one data line; returns (status, relevance, qid, largest column)."""
    relevance, position, digits = _parse_unsigned(buffer, position, end)
    if digits == 0 or digits > 9 or not _ends_token(buffer, position, end):
        return 1, 0, 0, -1
    position = _skip_blanks(buffer, position, end)
    has_qid = (position + 4 <= end and buffer[position] == 113 and buffer[position + 1] == 105
               and buffer[position + 2] == 100 and buffer[position + 3] == 58)  # "qid:"
    qid = 0
    if flags & 1:
        # Query sizes come from a side file: a qid: field here would contradict them, and
        # reading it as a feature would report a misleading "index" error.
        if has_qid:
            return 12, 0, 0, -1
    else:
        if not has_qid:
            return 2, 0, 0, -1
        qid, position, digits = _parse_unsigned(buffer, position + 4, end)
        if digits == 0 or not _ends_token(buffer, position, end):
            return 2, 0, 0, -1
        if digits > _DIGIT_LIMIT:
            return 9, 0, 0, -1
    largest = -1
    previous = 0
    while True:
        position = _skip_blanks(buffer, position, end)
        if position >= end or buffer[position] == 35:
            break
        index, position, digits = _parse_unsigned(buffer, position, end)
        if digits == 0:
            return 3, 0, 0, -1
        if digits > 9:
            return 9, 0, 0, -1
        if position >= end or buffer[position] != 58:
            return 3, 0, 0, -1
        if _is_null(buffer, position + 1, end):
            if not flags & 2:
                return 11, 0, 0, -1
            value = np.nan
            position += 5
        else:
            value, position, status = _parse_value(buffer, position + 1, end)
            if status != 0:
                return status, 0, 0, -1
        if not _ends_token(buffer, position, end):
            return 5, 0, 0, -1
        if index == 0:
            return 4, 0, 0, -1
        if index <= previous:
            return 6, 0, 0, -1
        if limit > 0 and index > limit:
            return 7, 0, 0, -1
        previous = index
        column = index - 1
        if column > largest:
            largest = column
        if column < width:
            features[row, column] = value
    return 0, relevance, qid, largest


def _parse_chunk(buffer, features, first_row, relevance, qids, lines, first_line, limit, flags=0):
    """Parse whole lines ``buffer`` into rows ``first_row...`` of ``features`` (columns beyond its
    width are skipped but measured).  Returns (status, documents, error offset, largest column).
    ``flags``: :data:`NO_QID` and / or :data:`ACCEPT_NULL` (with :data:`NO_QID` every ``qids``
    entry written is 0).

    Every write is bounded: a data line whose row falls outside ``features`` / ``relevance`` or
    whose index falls outside ``qids`` / ``lines`` stops the parse with status 10 before anything
    is written (``_parse_line`` writes only to the row it is given, in columns below the width).
    """
    size = buffer.shape[0]
    width = features.shape[1]
    position = 0
    line = first_line
    documents = 0
    largest = -1
    while position < size:
        start = position
        end = position
        while end < size and buffer[end] != 10:
            end += 1
        following = end + 1
        if end > start and buffer[end - 1] == 13:
            end -= 1
        position = _skip_blanks(buffer, start, end)
        if position < end and buffer[position] != 35:  # not a blank or comment-only line
            row = first_row + documents
            # The arrays were sized by counting lines first: a row past them means the bytes
            # changed since, and writing it would corrupt memory (Numba does not check bounds).
            if (row < 0 or row >= features.shape[0] or row >= relevance.shape[0] or documents >= qids.shape[0]
                    or documents >= lines.shape[0]):
                return CHANGED, documents, start, largest
            status, label, qid, columns = _parse_line(buffer, position, end, features, row, width, limit, flags)
            if status != 0:
                return status, documents, start, largest
            if columns > largest:
                largest = columns
            relevance[row] = label
            qids[documents] = qid
            lines[documents] = line
            documents += 1
        line += 1
        position = following
    return 0, documents, 0, largest


def _write_unsigned(buffer, position, value):
    digits = 1
    probe = value
    while probe >= 10:
        probe //= 10
        digits += 1
    for offset in range(digits - 1, -1, -1):
        buffer[position + offset] = 48 + value % 10
        value //= 10
    return position + digits


def _write_value(buffer, position, value, decimals, scale):
    magnitude = abs(value) * scale
    scaled = np.int64(np.floor(magnitude + 0.5))
    if scaled == 0:
        buffer[position] = 48
        return position + 1
    if value < 0:
        buffer[position] = 45
        position += 1
    unit = np.int64(1)
    for _ in range(decimals):
        unit *= 10
    position = _write_unsigned(buffer, position, scaled // unit)
    fraction = scaled % unit
    if fraction:
        kept = decimals
        while fraction % 10 == 0:
            fraction //= 10
            kept -= 1
        buffer[position] = 46
        position += 1
        for offset in range(kept - 1, -1, -1):
            buffer[position + offset] = 48 + fraction % 10
            fraction //= 10
        position += kept
    return position


def max_row_bytes(width, decimals):
    """The most bytes one written line can take: the label and ``qid:`` with up to 19 digits each,
    a newline, and per feature a space, an index and a value of up to 19 digits each, a colon, a
    sign, a point and ``decimals`` digits."""
    return 44 + width * (42 + decimals)


def _format_rows(features, relevance, qids, decimals, buffer):
    """Write rows as LETOR lines into ``buffer``; returns the bytes used, or -1 (nothing past the
    buffer written) if it cannot hold :func:`max_row_bytes` per row (Numba does not check bounds)."""
    scale = 10.0 ** decimals
    needed = max_row_bytes(features.shape[1], decimals)
    position = 0
    for row in range(features.shape[0]):
        if position + needed > buffer.shape[0]:
            return -1
        position = _write_unsigned(buffer, position, relevance[row])
        buffer[position] = 32
        buffer[position + 1] = 113
        buffer[position + 2] = 105
        buffer[position + 3] = 100
        buffer[position + 4] = 58
        position = _write_unsigned(buffer, position + 5, qids[row])
        for column in range(features.shape[1]):
            buffer[position] = 32
            position = _write_unsigned(buffer, position + 1, column + 1)
            buffer[position] = 58
            position = _write_value(buffer, position + 1, np.float64(features[row, column]), decimals, scale)
        buffer[position] = 10
        position += 1
    return position


def compiled() -> SimpleNamespace:
    """The compiled parser (``parse_chunk``) and row formatter (``format_rows``)."""
    jit_in_place(globals(), _KERNEL_NAMES)
    return SimpleNamespace(parse_chunk=_parse_chunk, format_rows=_format_rows)
