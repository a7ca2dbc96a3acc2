"""Learning-to-rank data in the LETOR / SVMlight text format: a streaming reader and a writer.

One line per (query, document) pair::

    <relevance> qid:<query id> <feature>:<value> <feature>:<value> ... [# comment]

as in MSLR-WEB10K / WEB30K (Qin & Liu, 2013; 136 features, grades 0-4), the Yahoo! Learning to
Rank Challenge sets (Chapelle & Chang, JMLR W&CP 14, 2011), Istella and LETOR 4.0 (MQ2007 /
MQ2008, whose lines end with a ``# docid = ...`` comment).

:func:`~dueling_gym.problems.read_ltr_file` reads such a file in chunks of ``chunk_bytes`` with a Numba kernel over
the raw bytes, so its memory is the dense result plus one chunk, whatever the file's size.  The
rules it enforces (each one refused with a ``ValueError`` naming the file and the line):

* relevance is a non-negative integer; ``qid:<non-negative integer>`` is the second field;
* features are ``<index>:<value>`` with 1-based, strictly increasing indices (the SVMlight
  convention) and finite decimal values that fit a float32; features a line leaves out are 0
  (the Yahoo! sets are sparse);
* ``#`` starts a comment that runs to the end of the line; blank and comment-only lines are
  skipped (they still count in the line numbers of the messages);
* the documents of a query are contiguous, as in every one of these data sets;
* a query with a single document is refused (an interleaved comparison needs two documents to
  tell two rankers apart) unless ``single_document_queries="drop"``, which removes such queries
  and lists their ids in ``LTRData.dropped_queries``.

:func:`write_ltr_file` writes the same format (every feature, dense), fast enough for files of
MSLR-WEB10K's size; the tests, the benchmark and the tutorial use it for synthetic data.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.validation import available_memory, check_integer, read_only

__all__ = ["LTRData", "read_ltr_file", "write_ltr_file"]

#: Bytes read per chunk by default (the reader's memory is the result plus about this much).
DEFAULT_CHUNK_BYTES = 1 << 25

# Status codes of the parsing kernel (0 = success); _ERRORS turns them into messages.
_ERRORS = {
    1: "the relevance label must be a non-negative integer",
    2: "the second field must be 'qid:<non-negative integer>' (missing qid)",
    3: "a feature must be written <index>:<value>",
    4: "a feature index must be a positive integer (indices start at 1)",
    5: "a feature value must be a finite decimal number",
    6: "feature indices must be strictly increasing along a line",
    7: "a feature index exceeds n_features",
    8: "a feature value does not fit a float32",
    9: "a number has too many digits",
}
_DIGIT_LIMIT = 18  # digits of an int64 parsed exactly
_POWERS_OF_TEN = np.array([10.0**power for power in range(23)])  # exact in float64


@dataclasses.dataclass(frozen=True, eq=False)
class LTRData:
    """A learning-to-rank data set in memory: dense features, relevance grades, query boundaries.

    Use :meth:`from_arrays` to build one from arrays with validation; the arrays are stored
    read-only.

    Parameters
    ----------
    features : ndarray of float32, shape (n_documents, n_features)
        Row ``d`` holds the features of document ``d`` (feature index ``f`` of the file is column
        ``f - 1``).
    relevance : ndarray of int32, shape (n_documents,)
        The graded relevance labels (``0..4`` in MSLR).
    query_offsets : ndarray of int64, shape (n_queries + 1,)
        Query ``q`` owns documents ``query_offsets[q]:query_offsets[q + 1]``.
    query_ids : ndarray of int64, shape (n_queries,)
        The ``qid`` of every query, in file order.
    source : str, optional
        Where the data came from (a file path), for messages and provenance.
    dropped_queries : tuple of int, default ()
        The ids of the single-document queries removed by ``single_document_queries="drop"``.
    """

    features: NDArray[np.float32]
    relevance: NDArray[np.int32]
    query_offsets: NDArray[np.int64]
    query_ids: NDArray[np.int64]
    source: str | None = None
    dropped_queries: tuple[int, ...] = ()

    @classmethod
    def from_arrays(cls, features: ArrayLike, relevance: ArrayLike, query_offsets: ArrayLike,
                    query_ids: ArrayLike | None = None, *, source: str | None = None) -> LTRData:
        """Validate and wrap arrays: finite float features, non-negative integer grades, offsets
        from 0 to ``n_documents`` with at least two documents per query."""
        features = np.asarray(features)
        if features.dtype.kind not in "fiu" or features.ndim != 2:
            raise TypeError(f"features must be a 2-D numeric array, got dtype {features.dtype} and shape "
                            f"{features.shape}")
        features = np.ascontiguousarray(features, dtype=np.float32)
        if features.shape[1] < 1:
            raise ValueError("features must have at least one column")
        if not np.all(np.isfinite(features)):
            raise ValueError("features must be finite (after conversion to float32)")
        relevance = _integer_array("relevance", relevance, features.shape[0], np.int32)
        if relevance.size and relevance.min() < 0:
            raise ValueError(f"relevance labels must be non-negative, got {int(relevance.min())}")
        offsets = _integer_array("query_offsets", query_offsets, None, np.int64)
        if offsets.size < 2 or offsets[0] != 0 or offsets[-1] != features.shape[0]:
            raise ValueError(f"query_offsets must run from 0 to n_documents={features.shape[0]} with at least one "
                             f"query, got {offsets[:3].tolist()}...{offsets[-2:].tolist()}")
        sizes = np.diff(offsets)
        if np.any(sizes < 2):
            query = int(np.flatnonzero(sizes < 2)[0])
            raise ValueError(f"query {query} has {int(sizes[query])} document(s); every query needs at least two "
                             "(query_offsets must be strictly increasing by at least 2)")
        if query_ids is None:
            query_ids = np.arange(sizes.size, dtype=np.int64)
        query_ids = _integer_array("query_ids", query_ids, sizes.size, np.int64)
        return cls(read_only(features), read_only(relevance), read_only(offsets), read_only(query_ids), source)

    @property
    def n_documents(self) -> int:
        """Number of documents (lines with data)."""
        return int(self.features.shape[0])

    @property
    def n_features(self) -> int:
        """Number of feature columns."""
        return int(self.features.shape[1])

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return int(self.query_offsets.size - 1)


def _integer_array(name: str, values: ArrayLike, length: int | None, dtype: type) -> NDArray[Any]:
    array = np.asarray(values)
    if array.dtype.kind not in "iu" or array.ndim != 1:
        raise TypeError(f"{name} must be a 1-D integer array, got dtype {array.dtype} and shape {array.shape}")
    if length is not None and array.size != length:
        raise ValueError(f"{name} must have {length} entries, got {array.size}")
    return np.ascontiguousarray(array, dtype=dtype)


# ---------------------------------------------------------------------------------- reading
def read_ltr_file(path: str | os.PathLike, *, n_features: int | None = None,
                  single_document_queries: Literal["error", "drop"] = "error",
                  chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> LTRData:
    """Read a LETOR / SVMlight learning-to-rank file into dense arrays.

    Parameters
    ----------
    path : str or path-like
        The text file (ASCII / UTF-8; ``\\r\\n`` line ends are accepted).
    n_features : int, optional
        Number of feature columns.  Default: the largest feature index in the file.  Give it to
        get the same width for several files of one data set; a larger index is then refused.
    single_document_queries : {"error", "drop"}, default "error"
        What to do with a query that has one document: refuse the file, or drop the query and
        record its id in ``LTRData.dropped_queries``.
    chunk_bytes : int, default 32 MiB
        Bytes read per chunk (a line longer than this is read whole all the same).

    Returns
    -------
    LTRData

    Raises
    ------
    ValueError
        A malformed line, a missing ``qid``, a query whose documents are not contiguous, a
        single-document query (with ``"error"``) or a file without documents; the message
        names the file and the line.
    """
    path = Path(os.fspath(path))
    if n_features is not None:
        n_features = check_integer("n_features", n_features, minimum=1)
    if single_document_queries not in ("error", "drop"):
        raise ValueError(f"single_document_queries must be 'error' or 'drop', got {single_document_queries!r}")
    chunk_bytes = check_integer("chunk_bytes", chunk_bytes, minimum=1)
    reader = _ChunkedReader(path, n_features, chunk_bytes)
    reader.run()
    return reader.result(single_document_queries)


class _ChunkedReader:
    """State of one streaming read: the growing dense arrays and the queries seen so far."""

    def __init__(self, path: Path, n_features: int | None, chunk_bytes: int):
        self.path, self.limit, self.chunk_bytes = path, n_features, chunk_bytes
        capacity = _count_lines(path, chunk_bytes)
        self.width = n_features or 0
        self.features = self._allocate(capacity, self.width)
        self.relevance = np.zeros(capacity, dtype=np.int32)
        self.rows = 0
        self.line = 1
        self.query_starts: list[int] = []
        self.query_ids: list[int] = []
        self.query_lines: list[int] = []
        self.first_line_of: dict[int, int] = {}

    def _allocate(self, rows: int, width: int) -> NDArray[np.float32]:
        needed = rows * width * 4
        available = available_memory()
        if available is not None and needed > available:
            raise ValueError(f"{self.path}: the dense features ({rows} lines x {width} features, float32) need "
                             f"{needed / 2**30:.1f} GiB, more than the {available / 2**30:.1f} GiB available")
        return np.zeros((rows, width), dtype=np.float32)

    def run(self) -> None:
        # One reusable buffer: the unfinished last line of a chunk moves to its front and the
        # next read fills the rest, so reading allocates nothing per chunk.
        buffer = bytearray(self.chunk_bytes)
        filled = 0
        with open(self.path, "rb") as stream:
            while True:
                if filled == len(buffer):  # a line longer than the buffer: make room for it
                    buffer.extend(bytes(len(buffer)))
                with memoryview(buffer) as view:
                    received = stream.readinto(view[filled:])
                if not received:
                    if filled:
                        self._parse(buffer, filled)
                    return
                filled += received
                cut = buffer.rfind(b"\n", 0, filled)
                if cut < 0:
                    continue
                self._parse(buffer, cut + 1)
                rest = filled - cut - 1
                buffer[:rest] = buffer[cut + 1:filled]
                filled = rest

    def _parse(self, data: bytearray, length: int) -> None:
        kernel = _parse_kernel()
        buffer = np.frombuffer(data, dtype=np.uint8, count=length)
        # A data line has at least 8 bytes ("0 qid:0\n"), which bounds the chunk's documents.
        capacity = min(self.features.shape[0] - self.rows, length // 8 + 1)
        qids = np.empty(capacity, dtype=np.int64)
        lines = np.empty(capacity, dtype=np.int64)
        while True:
            status, docs, error_at, max_column = kernel(
                buffer, self.features, self.rows, self.relevance, qids, lines, self.line, self.limit or 0)
            if status:
                self._fail(status, data, length, error_at)
            if max_column < self.width:
                break
            self._widen(max_column + 1)  # then parse the chunk again: the kernel skipped wider columns
        self._record_queries(qids[:docs], lines[:docs])
        self.rows += docs
        self.line += data.count(b"\n", 0, length)

    def _fail(self, status: int, data: bytearray, length: int, error_at: int) -> None:
        line_number = self.line + data.count(b"\n", 0, error_at)
        end = data.find(b"\n", error_at, length)
        text = bytes(data[error_at: end if end >= 0 else length]).decode("utf-8", "replace").rstrip("\r")
        shown = text if len(text) <= 120 else text[:117] + "..."
        detail = f" ({self.limit})" if status == 7 else ""
        raise ValueError(f"{self.path}, line {line_number}: {_ERRORS[status]}{detail}: {shown!r}")

    def _widen(self, width: int) -> None:
        wider = self._allocate(self.features.shape[0], width)
        wider[: self.rows, : self.width] = self.features[: self.rows]
        self.features, self.width = wider, width

    def _record_queries(self, qids: NDArray[np.int64], lines: NDArray[np.int64]) -> None:
        if qids.size == 0:
            return
        previous = self.query_ids[-1] if self.query_ids else None
        starts = np.flatnonzero(qids[1:] != qids[:-1]) + 1
        if previous is None or qids[0] != previous:
            starts = np.concatenate(([0], starts))
        for start in starts.tolist():
            qid, line = int(qids[start]), int(lines[start])
            if qid in self.first_line_of:
                raise ValueError(
                    f"{self.path}, line {line}: query qid:{qid} continues here after other queries (its documents "
                    f"began at line {self.first_line_of[qid]}); the documents of a query must be contiguous")
            self.first_line_of[qid] = line
            self.query_starts.append(self.rows + start)
            self.query_ids.append(qid)
            self.query_lines.append(line)

    def result(self, single_document_queries: str) -> LTRData:
        if self.rows == 0:
            raise ValueError(f"{self.path}: the file holds no documents")
        if self.width == 0:
            raise ValueError(f"{self.path}: no line has a feature")
        offsets = np.array(self.query_starts + [self.rows], dtype=np.int64)
        query_ids = np.array(self.query_ids, dtype=np.int64)
        single = np.flatnonzero(np.diff(offsets) < 2)
        dropped: tuple[int, ...] = ()
        features, relevance = self.features, self.relevance
        if single.size and single_document_queries == "error":
            first = int(single[0])
            raise ValueError(
                f"{self.path}, line {self.query_lines[first]}: query qid:{self.query_ids[first]} has a single "
                f"document ({single.size} such queries in the file); an interleaved comparison needs at least two "
                "documents per query -- pass single_document_queries='drop' to drop such queries explicitly")
        if single.size:
            dropped = tuple(int(query_ids[q]) for q in single)
            keep = np.ones(query_ids.size, dtype=bool)
            keep[single] = False
            offsets, rows = _compact(features, relevance, offsets, keep)
            query_ids = query_ids[keep]
        else:
            rows = self.rows
        if rows == 0:
            raise ValueError(f"{self.path}: every query has a single document; nothing is left after dropping them")
        # Shrink in place where possible so that the spare rows of the line-count estimate are freed.
        features = _shrink(features, rows)
        relevance = _shrink(relevance, rows)
        return LTRData(read_only(features), read_only(relevance), read_only(offsets), read_only(query_ids),
                       str(self.path), dropped)


def _shrink(array: NDArray[Any], rows: int) -> NDArray[Any]:
    if array.shape[0] == rows:
        return array
    try:
        array.resize((rows,) + array.shape[1:], refcheck=False)
        return array
    except ValueError:  # the array does not own its memory: copy the rows in use
        return array[:rows].copy()


def _compact(features: NDArray[np.float32], relevance: NDArray[np.int32], offsets: NDArray[np.int64],
             keep: NDArray[np.bool_]) -> tuple[NDArray[np.int64], int]:
    """Move the kept queries' rows to the front (in place); returns their offsets and row count."""
    new_offsets = [0]
    destination = 0
    for query in np.flatnonzero(keep).tolist():
        start, stop = int(offsets[query]), int(offsets[query + 1])
        size = stop - start
        if start != destination:
            features[destination:destination + size] = features[start:stop]
            relevance[destination:destination + size] = relevance[start:stop]
        destination += size
        new_offsets.append(destination)
    return np.array(new_offsets, dtype=np.int64), destination


def _count_lines(path: Path, chunk_bytes: int) -> int:
    """Lines of the file (a last line without a newline included): an upper bound on its documents."""
    count, last = 0, b"\n"
    with open(path, "rb") as stream:
        while True:
            block = stream.read(max(chunk_bytes, 1 << 20))
            if not block:
                break
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


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


_KERNEL_NAMES = ("_skip_blanks", "_ends_token", "_parse_unsigned", "_parse_value", "_parse_line", "_parse_chunk",
                 "_write_unsigned", "_write_value", "_format_rows")


def _parse_kernel() -> Any:
    """The compiled parser (Numba is imported on first use so that importing the problems stays light)."""
    jit_in_place(globals(), _KERNEL_NAMES)
    return _parse_chunk


# ---------------------------------------------------------------------------------- writing
def write_ltr_file(path: str | os.PathLike, data: LTRData, *, decimals: int = 6,
                   rows_per_block: int = 20_000) -> None:
    """Write ``data`` in the LETOR format, every feature of every document (dense).

    Values are written in fixed point rounded to ``decimals`` decimals, trailing zeros removed
    (``3``, ``0.25``, ``-1.5``), so reading the file back gives the values rounded to that
    precision (as float32).  The file is written to a temporary name beside ``path`` and
    renamed over it at the end, so a reader never sees half a file.
    """
    if not isinstance(data, LTRData):
        raise TypeError(f"data must be an LTRData, got {type(data).__name__}")
    decimals = check_integer("decimals", decimals, minimum=0, maximum=9)
    rows_per_block = check_integer("rows_per_block", rows_per_block, minimum=1)
    scale = 10.0 ** decimals
    if data.features.size and float(np.abs(data.features).max()) * scale >= 9.0e17:
        raise ValueError(f"feature values up to {float(np.abs(data.features).max()):g} cannot be written with "
                         f"{decimals} decimals in fixed point (at most about 9e17 / 10**decimals)")
    jit_in_place(globals(), _KERNEL_NAMES)
    target = Path(os.fspath(path))
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    doc_qids = np.repeat(data.query_ids, np.diff(data.query_offsets))
    per_row = 48 + data.n_features * (16 + decimals + 20)
    try:
        with open(temporary, "wb") as stream:
            for start in range(0, data.n_documents, rows_per_block):
                stop = min(start + rows_per_block, data.n_documents)
                buffer = np.empty((stop - start) * per_row, dtype=np.uint8)
                used = _format_rows(data.features[start:stop], data.relevance[start:stop], doc_qids[start:stop],
                                   decimals, buffer)
                stream.write(buffer[:used].tobytes())
        os.replace(temporary, target)
    except BaseException:
        if temporary.exists():
            temporary.unlink()
        raise


# ---------------------------------------------------------------------------------- kernels
# Plain functions compiled by jit_in_place on first use.  Bytes: 9 tab, 10 newline, 13 carriage
# return, 32 space, 35 '#', 43 '+', 45 '-', 46 '.', 48-57 digits, 58 ':', 69/101 'E'/'e'.
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


def _parse_line(buffer, position, end, features, row, width, limit):
    """Parse one data line; returns (status, relevance, qid, largest column)."""
    relevance, position, digits = _parse_unsigned(buffer, position, end)
    if digits == 0 or digits > 9 or not _ends_token(buffer, position, end):
        return 1, 0, 0, -1
    position = _skip_blanks(buffer, position, end)
    if not (position + 4 <= end and buffer[position] == 113 and buffer[position + 1] == 105
            and buffer[position + 2] == 100 and buffer[position + 3] == 58):  # "qid:"
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


def _parse_chunk(buffer, features, first_row, relevance, qids, lines, first_line, limit):
    """Parse whole lines ``buffer`` into rows ``first_row...`` of ``features`` (columns beyond its
    width are skipped but measured).  Returns (status, documents, error offset, largest column)."""
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
            status, label, qid, columns = _parse_line(buffer, position, end, features, first_row + documents,
                                                      width, limit)
            if status != 0:
                return status, documents, start, largest
            if columns > largest:
                largest = columns
            relevance[first_row + documents] = label
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


def _format_rows(features, relevance, qids, decimals, buffer):
    """Write rows as LETOR lines into ``buffer``; returns the bytes used."""
    scale = 10.0 ** decimals
    position = 0
    for row in range(features.shape[0]):
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
