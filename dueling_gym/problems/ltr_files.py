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
  and lists their ids in ``LTRData.dropped_queries``;
* only a regular file is read (a FIFO or a device cannot be read in the two passes below), and a
  file that changes while it is read (a download or ``zcat > file`` still appending) is refused:
  the reader counts the lines of the bytes present when the file was opened, parses exactly
  those bytes, and compares the file's size and modification time at the end with those at
  the start;
* the dense result must fit the memory available (checked before it is allocated, the message
  gives the size).

The compiled parser never writes past its arrays: every row it would write beyond what the
first pass counted is refused as a file that changed while it was read.

:func:`write_ltr_file` writes the same format (every feature, dense), fast enough for files of
MSLR-WEB10K's size; the tests, the benchmark and the tutorial use it for synthetic data.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.problems import ltr_kernels
from dueling_gym.validation import available_memory, check_integer, check_regular_file, read_only

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
    10: "the file changed while it was being read (it has more lines than when it was opened); read it again "
        "once it is complete",
}
_CHANGED = ltr_kernels.CHANGED


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
        single-document query (with ``"error"``) or a file without documents (the message
        names the file and the line); a path that is not a regular file, a file that changed
        while it was read, or dense features larger than the memory available.
    """
    path = Path(os.fspath(path))
    if n_features is not None:
        n_features = check_integer("n_features", n_features, minimum=1)
    if single_document_queries not in ("error", "drop"):
        raise ValueError(f"single_document_queries must be 'error' or 'drop', got {single_document_queries!r}")
    chunk_bytes = check_integer("chunk_bytes", chunk_bytes, minimum=1)
    return _read(path, n_features, single_document_queries, chunk_bytes, digest=False)[0]


def _read(path: Path, n_features: int | None, single_document_queries: str, chunk_bytes: int, *,
          digest: bool) -> tuple[LTRData, str | None]:
    """The data of ``path`` and, with ``digest``, the SHA-256 of exactly the bytes parsed.

    Hashing in the reader's own pass (rather than in a separate read of the file) ties the
    digest to the data returned even when the file is replaced in between.
    """
    reader = _ChunkedReader(path, n_features, chunk_bytes, digest)
    reader.run()
    return reader.result(single_document_queries), reader.digest


def _check_memory(what: str, needed: int) -> None:
    """Refuse an allocation of ``needed`` bytes, before it is made, when it exceeds the memory available.

    NumPy raises a bare ``MemoryError`` (or the machine starts swapping) only once the
    allocation is attempted; refusing first names the size and what it was for.  The arrays
    that grow with the square of the number of rankers are checked with
    :func:`dueling_gym.validation.check_pairwise_memory` instead; this covers the others (dense
    features, per-pair uniforms, top lists).
    """
    available = available_memory()
    if available is not None and needed > available:
        raise ValueError(f"{what} needs about {_size_text(needed)}, more than the {_size_text(available)} this "
                         "machine has available")


def _size_text(size: int) -> str:
    return f"{size / 2**40:.1f} TiB" if size >= 2**40 else f"{size / 2**30:.1f} GiB"


class _ChunkedReader:
    """State of one streaming read: the growing dense arrays and the queries seen so far."""

    def __init__(self, path: Path, n_features: int | None, chunk_bytes: int, digest: bool = False):
        self.path, self.limit, self.chunk_bytes = path, n_features, chunk_bytes
        self.width = n_features or 0
        self.hasher = hashlib.sha256() if digest else None
        self.digest: str | None = None
        self.features = np.zeros((0, self.width), dtype=np.float32)
        self.relevance = np.zeros(0, dtype=np.int32)
        self.rows = 0
        self.line = 1
        self.query_starts: list[int] = []
        self.query_ids: list[int] = []
        self.query_lines: list[int] = []
        self.first_line_of: dict[int, int] = {}

    def _allocate(self, rows: int, width: int) -> NDArray[np.float32]:
        _check_memory(f"{self.path}: the dense features ({rows} lines x {width} features, float32)", rows * width * 4)
        return np.zeros((rows, width), dtype=np.float32)

    def run(self) -> None:
        # A FIFO would hang or be consumed by the counting pass, a device never ends: only a
        # regular file can be read twice.  Checked on the path before open(), which blocks on a
        # FIFO, and again on what was opened (the path may have been replaced in between).
        check_regular_file(self.path, "learning-to-rank file")
        with open(self.path, "rb") as stream:
            opened = os.fstat(stream.fileno())
            if not stat.S_ISREG(opened.st_mode):
                raise ValueError(f"learning-to-rank file {self.path} was replaced by something that is not a "
                                 "regular file while it was opened")
            # Both passes read the same open file and stop at the size it had when opened, so
            # bytes appended meanwhile are never parsed; the check at the end refuses the file
            # if it changed at all, since what was read may then be a mix of two versions.
            size = opened.st_size
            capacity = self._count_lines(stream, size)
            self.features = self._allocate(capacity, self.width)
            self.relevance = np.zeros(capacity, dtype=np.int32)
            stream.seek(0)
            self._parse_stream(stream, size)
            now = os.fstat(stream.fileno())
        if (now.st_size, now.st_mtime_ns) != (opened.st_size, opened.st_mtime_ns):
            raise ValueError(f"{self.path}: the file changed while it was being read ({opened.st_size} bytes when "
                             f"opened, {now.st_size} now); read it again once it is complete")
        if self.hasher is not None:
            self.digest = self.hasher.hexdigest()

    def _count_lines(self, stream: Any, size: int) -> int:
        """Lines in the first ``size`` bytes (a last line without a newline included): an upper
        bound on the documents, hashed on the way when a digest is asked for."""
        count, last, remaining = 0, b"\n", size
        block_size = max(self.chunk_bytes, 1 << 20)
        while remaining > 0:
            block = stream.read(min(block_size, remaining))
            if not block:
                break
            remaining -= len(block)
            count += block.count(b"\n")
            last = block[-1:]
            if self.hasher is not None:
                self.hasher.update(block)
        return count + (last != b"\n")

    def _parse_stream(self, stream: Any, size: int) -> None:
        # One reusable buffer: the unfinished last line of a chunk moves to its front and the
        # next read fills the rest, so reading allocates nothing per chunk.
        buffer = bytearray(self.chunk_bytes)
        filled = 0
        remaining = size
        while True:
            if filled == len(buffer):  # a line longer than the buffer: make room for it
                buffer.extend(bytes(len(buffer)))
            with memoryview(buffer) as view:
                received = stream.readinto(view[filled:filled + remaining]) if remaining > 0 else 0
            if not received:
                if filled:
                    self._parse(buffer, filled)
                return
            remaining -= received
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
        if status == _CHANGED:  # not a fault of the line reached: the file itself moved under the reader
            raise ValueError(f"{self.path}: {_ERRORS[status]}")
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


def _parse_kernel() -> Any:
    """The compiled parser (Numba is imported on first use so that importing the problems stays light)."""
    return ltr_kernels.compiled().parse_chunk


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
    format_rows = ltr_kernels.compiled().format_rows
    target = Path(os.fspath(path))
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    doc_qids = np.repeat(data.query_ids, np.diff(data.query_offsets))
    per_row = ltr_kernels.max_row_bytes(data.n_features, decimals)
    try:
        with open(temporary, "wb") as stream:
            for start in range(0, data.n_documents, rows_per_block):
                stop = min(start + rows_per_block, data.n_documents)
                buffer = np.empty((stop - start) * per_row, dtype=np.uint8)
                used = format_rows(data.features[start:stop], data.relevance[start:stop], doc_qids[start:stop],
                                   decimals, buffer)
                if used < 0:  # sized above by the same bound, so never: refused rather than written past
                    raise RuntimeError("the LETOR row buffer is smaller than max_row_bytes")
                stream.write(buffer[:used].tobytes())
        os.replace(temporary, target)
    except BaseException:
        if temporary.exists():
            temporary.unlink()
        raise
