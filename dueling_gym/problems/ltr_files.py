"""Learning-to-rank data in the LETOR / SVMlight text format: a streaming reader and a writer.

One line per (query, document) pair::

    <relevance> qid:<query id> <feature>:<value> <feature>:<value> ... [# comment]

as in MSLR-WEB10K / WEB30K (Qin & Liu, 2013; 136 features, grades 0-4), the Yahoo! Learning to
Rank Challenge sets (Chapelle & Chang, JMLR W&CP 14, 2011), Istella and LETOR 4.0 (MQ2007 /
MQ2008, whose lines end with a ``# docid = ...`` comment).

:func:`~dueling_gym.problems.read_ltr_file` reads such a file in chunks of ``chunk_bytes`` with a Numba kernel over
the raw bytes, so its memory is the dense result plus one chunk, whatever the file's size.  The
rules it enforces (each one refused with a ``ValueError`` naming the file and the line):

* relevance is a non-negative integer; ``qid:<non-negative integer>`` is the second field
  (absent, and refused, when the query sizes come from a side file);
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

The layouts the ranking tools write are read too (see :func:`~dueling_gym.problems.read_ltr_file`):

* **query sizes in a side file** (LightGBM's ``FILE.query``, XGBoost's ``FILE.group``): lines
  ``<relevance> <feature>:<value> ...`` without ``qid:``, and one positive integer per line of
  the side file, the number of consecutive rows of each query;
* **compressed files** (gzip, bzip2, xz, recognised by their first bytes), decompressed while
  they are read, never whole in memory, with a limit on the decompressed bytes;
* **missing values** (``NULL``, as in LETOR 4.0's MQ2007-agg / MQ2008-agg), refused unless
  ``missing=`` says how to read them;
* **rank-valued features** (lower is better, as in the aggregated-rank files), named by
  ``lower_is_better=`` and recorded in ``LTRData.ascending_columns`` for the feature rankers.

:func:`write_ltr_file` writes the same format (every feature, dense), fast enough for files of
MSLR-WEB10K's size; the tests, the benchmark and the tutorial use it for synthetic data.

This module holds the format: the reading options, the chunked reader and the writer.  The data
set it returns is :class:`~dueling_gym.problems.LTRData` (:mod:`dueling_gym.problems.ltr_data`,
re-exported here); the bytes it parses come through :mod:`dueling_gym.problems.ltr_sources`
(decompression, side files of query sizes); its compiled kernels are in
``dueling_gym.problems.ltr_kernels``.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from dueling_gym.problems import ltr_kernels
from dueling_gym.problems.ltr_data import LTRData, column_list, compact_queries, fill_missing_values, shrink_rows
from dueling_gym.problems.ltr_sources import (
    GROUP_FILE_SUFFIXES,  # noqa: F401 -- re-exported: it was defined here before ltr_sources.py held it
    LimitedStream,
    RawPrefix,
    decompressor,
    detect_compression,
    group_file_for,
    guard_decompression,
    read_group_sizes,
    with_side_digest,
)
from dueling_gym.validation import available_memory, check_integer, check_regular_file, read_only

__all__ = ["LTRData", "read_ltr_file", "write_ltr_file"]

#: Bytes read per chunk by default (the reader's memory is the result plus about this much).
DEFAULT_CHUNK_BYTES = 1 << 25
#: By default a compressed file may decompress to this many times its size (or to
#: :data:`MIN_DECOMPRESSED_LIMIT`, whichever is larger).  Learning-to-rank text compresses about
#: 3 to 20 times (digits do not repeat much); a decompression bomb expands a thousand times
#: (gzip's ceiling) or far more (bzip2, xz), so this limit separates the two with a wide margin.
DECOMPRESSION_RATIO_LIMIT = 100
#: The smallest default limit on the decompressed bytes, so that a small but very regular file
#: (a test fixture, repeated lines) is not mistaken for a bomb.
MIN_DECOMPRESSED_LIMIT = 1 << 30
#: How ``missing=`` reads a ``NULL`` feature value (see :func:`read_ltr_file`).
MISSING_VALUES = ("error", "zero", "worst")

# Status codes of the parsing kernel (0 = success); _ERRORS turns them into messages.
_ERRORS = {
    1: "the relevance label must be a non-negative integer",
    2: "the second field must be 'qid:<non-negative integer>' (missing qid; a file without qid: fields needs "
       "its query sizes in a side file FILE.query or FILE.group, one integer per line: group_file=, "
       "--group-file)",
    3: "a feature must be written <index>:<value>",
    4: "a feature index must be a positive integer (indices start at 1)",
    5: "a feature value must be a finite decimal number",
    6: "feature indices must be strictly increasing along a line",
    7: "a feature index exceeds n_features",
    8: "a feature value does not fit a float32",
    9: "a number has too many digits",
    10: "the file changed while it was being read (it has more lines than when it was opened); read it again "
        "once it is complete",
    11: "a feature value is missing (NULL); pass missing='zero' or missing='worst' (command line: --missing) "
        "to read files with missing values",
    12: "this line has a qid: field, but the query sizes come from a side file",
}
_CHANGED = ltr_kernels.CHANGED
#: The most memory the xz decoder may take.  Its dictionary is as large as the file's header
#: says (``xz -9`` writes 64 MiB, the format allows 1.5 GiB), and a gzip or bzip2 decoder needs
#: a few MiB at most, so a header asking for more than this is refused rather than allocated.
XZ_MEMORY_LIMIT = 1 << 28


# ---------------------------------------------------------------------------------- reading
class _ReadOptions(NamedTuple):
    """The validated reading options of :func:`read_ltr_file` (see there)."""

    n_features: int | None
    single_document_queries: str
    group_file: Path | Literal[False] | None
    missing: str
    lower_is_better: bool | tuple[int, ...]
    max_decompressed_bytes: int | None
    chunk_bytes: int

    def cache_facts(self) -> dict[str, Any]:
        """The options that change what is read from the same bytes, for a cache key.

        Only those set away from their defaults are listed, so that the key of a plain read is
        the one it has always been.  The side file is not named here: its digest is combined
        with the data file's (see :func:`~dueling_gym.problems.ltr_sources.with_side_digest`),
        which covers what it holds.
        """
        facts: dict[str, Any] = {}
        if self.missing != "error":
            facts["missing"] = self.missing
        if self.lower_is_better:
            facts["lower_is_better"] = "all" if self.lower_is_better is True else list(self.lower_is_better)
        return facts


def _check_read_options(*, n_features: Any = None, single_document_queries: Any = "error", group_file: Any = None,
                        missing: Any = "error", lower_is_better: Any = False, max_decompressed_bytes: Any = None,
                        chunk_bytes: Any = DEFAULT_CHUNK_BYTES) -> _ReadOptions:
    """Validate the reading options once, for the reader and for the surfaces that pass them on."""
    if n_features is not None:
        n_features = check_integer("n_features", n_features, minimum=1)
    if single_document_queries not in ("error", "drop"):
        raise ValueError(f"single_document_queries must be 'error' or 'drop', got {single_document_queries!r}")
    if group_file is not None and group_file is not False:
        if isinstance(group_file, bool) or not isinstance(group_file, (str, os.PathLike)):
            raise TypeError(f"group_file must be a path, None (look for FILE.query / FILE.group next to the data) or "
                            f"False (no side file), got {group_file!r}")
        group_file = Path(os.fspath(group_file))
    if not isinstance(missing, str):
        raise TypeError(f"missing must be one of {list(MISSING_VALUES)}, got {type(missing).__name__}")
    if missing not in MISSING_VALUES:
        raise ValueError(f"missing must be one of {list(MISSING_VALUES)}, got {missing!r}")
    if isinstance(lower_is_better, (bool, np.bool_)):
        lower_is_better = bool(lower_is_better)
    else:
        # Feature indices as the file writes them (1-based), so that a list copied from a data
        # set's description needs no shifting; an empty list is the same as False.
        lower_is_better = column_list("lower_is_better", lower_is_better, 1, n_features) or False
    if max_decompressed_bytes is not None:
        max_decompressed_bytes = check_integer("max_decompressed_bytes", max_decompressed_bytes, minimum=1)
    chunk_bytes = check_integer("chunk_bytes", chunk_bytes, minimum=1)
    return _ReadOptions(n_features, single_document_queries, group_file, missing, lower_is_better,
                        max_decompressed_bytes, chunk_bytes)


def read_ltr_file(path: str | os.PathLike, *, n_features: int | None = None,
                  single_document_queries: Literal["error", "drop"] = "error",
                  group_file: str | os.PathLike | Literal[False] | None = None,
                  missing: Literal["error", "zero", "worst"] = "error",
                  lower_is_better: bool | Sequence[int] = False, max_decompressed_bytes: int | None = None,
                  chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> LTRData:
    """Read a LETOR / SVMlight learning-to-rank file into dense arrays.

    Parameters
    ----------
    path : str or path-like
        The text file (ASCII / UTF-8; ``\\r\\n`` line ends are accepted), possibly compressed
        with gzip, bzip2 or xz (recognised by its first bytes, whatever its name; read while it
        is decompressed, never whole in memory).
    n_features : int, optional
        Number of feature columns.  Default: the largest feature index in the file.  Give it to
        get the same width for several files of one data set; a larger index is then refused.
    single_document_queries : {"error", "drop"}, default "error"
        What to do with a query that has one document: refuse the file, or drop the query and
        record its id in ``LTRData.dropped_queries``.
    group_file : path, None or False, default None
        The side file of query sizes for lines without ``qid:`` (LightGBM / XGBoost layout:
        one positive integer per line, the number of consecutive rows of each query, in file
        order; they must sum to the number of data lines).  ``None`` uses ``FILE.query`` or
        ``FILE.group`` when one exists next to the data file (for ``train.txt.gz`` also
        ``train.txt.query`` / ``train.txt.group``); ``False`` never uses a side file.  With a
        side file the query ids are the queries' positions (0, 1, ...), and a line with a
        ``qid:`` field is refused, since the two would disagree on where queries end.
    missing : {"error", "zero", "worst"}, default "error"
        How to read a feature value written ``NULL`` (LETOR 4.0's aggregation sets): refuse the
        file; read it as 0 (the value the SVMlight format gives a feature a line leaves out);
        or read it as the worst value of its feature, just below the smallest value of the
        column in the file (just above the largest for a ``lower_is_better`` feature), so
        that the feature's ranker puts the documents it did not score last, ties among them
        broken like any other tie (a column with no value at all reads as 0).  ``"worst"`` is
        meant for feature rankers; a linear ranker sees the placeholder as an ordinary value.
    lower_is_better : bool or sequence of int, default False
        Which features rank documents in ascending order (rank positions, as in the
        aggregated-rank files): ``True`` for every feature, or the feature indices as the file
        writes them (1-based).  Recorded in ``LTRData.ascending_columns`` (0-based), which the
        feature rankers of :class:`~dueling_gym.problems.RankerEvaluationProblem` follow; the
        values themselves are not changed.
    max_decompressed_bytes : int, optional
        The most bytes a compressed file may decompress to; more is refused as a decompression
        bomb.  Default: :data:`~dueling_gym.problems.ltr_files.DECOMPRESSION_RATIO_LIMIT` times
        the compressed size, at least :data:`~dueling_gym.problems.ltr_files.MIN_DECOMPRESSED_LIMIT`
        (1 GiB).  Ignored for an uncompressed file.
    chunk_bytes : int, default 32 MiB
        Bytes read per chunk (a line longer than this is read whole all the same).

    Returns
    -------
    LTRData

    Raises
    ------
    ValueError
        A malformed line, a missing ``qid`` (without a side file), a ``NULL`` value (with
        ``missing="error"``), a query whose documents are not contiguous, a single-document
        query (with ``"error"``) or a file without documents (the message names the file and
        the line); a side file whose sizes are not positive integers or do not sum to the
        number of data lines; a corrupt compressed file or one that decompresses past
        ``max_decompressed_bytes``; a path that is not a regular file, a file that changed
        while it was read, or dense features larger than the memory available.
    TypeError
        An option of the wrong type.
    """
    path = Path(os.fspath(path))
    options = _check_read_options(n_features=n_features, single_document_queries=single_document_queries,
                                  group_file=group_file, missing=missing, lower_is_better=lower_is_better,
                                  max_decompressed_bytes=max_decompressed_bytes, chunk_bytes=chunk_bytes)
    return _read_with(path, options, digest=False)[0]


def _read(path: Path, n_features: int | None, single_document_queries: str, chunk_bytes: int, *,
          digest: bool, **reading: Any) -> tuple[LTRData, str | None]:
    """The data of ``path`` and, with ``digest``, the SHA-256 of exactly the bytes parsed.

    Hashing in the reader's own pass (rather than in a separate read of the file) ties the
    digest to the data returned even when the file is replaced in between.  ``reading`` holds
    the other options of :func:`read_ltr_file`.
    """
    options = _check_read_options(n_features=n_features, single_document_queries=single_document_queries,
                                  chunk_bytes=chunk_bytes, **reading)
    return _read_with(path, options, digest=digest)


def _read_with(path: Path, options: _ReadOptions, *, digest: bool) -> tuple[LTRData, str | None]:
    reader = _ChunkedReader(path, options.n_features, options.chunk_bytes, digest, options)
    reader.run()
    return reader.result(options.single_document_queries), reader.digest


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

    def __init__(self, path: Path, n_features: int | None, chunk_bytes: int, digest: bool = False,
                 options: _ReadOptions | None = None):
        self.path, self.limit, self.chunk_bytes = path, n_features, chunk_bytes
        self.options = options or _check_read_options(n_features=n_features, chunk_bytes=chunk_bytes)
        self.width = n_features or 0
        self.hasher = hashlib.sha256() if digest else None
        # The hasher _count_lines feeds: the text itself for a plain file; None for a compressed
        # one, whose compressed bytes are hashed as they are read (see _run_compressed).
        self.text_hasher = self.hasher
        self.digest: str | None = None
        self.side_file: Path | None = None
        self.group_sizes: NDArray[np.int64] | None = None
        self.flags = ltr_kernels.ACCEPT_NULL if self.options.missing != "error" else 0
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
        self.side_file = group_file_for(self.path, self.options.group_file)
        if self.side_file is not None:
            self.flags |= ltr_kernels.NO_QID
        with open(self.path, "rb") as stream:
            opened = os.fstat(stream.fileno())
            if not stat.S_ISREG(opened.st_mode):
                raise ValueError(f"learning-to-rank file {self.path} was replaced by something that is not a "
                                 "regular file while it was opened")
            # Both passes read the same open file and stop at the size it had when opened, so
            # bytes appended meanwhile are never parsed; the check at the end refuses the file
            # if it changed at all, since what was read may then be a mix of two versions.
            size = opened.st_size
            compression = detect_compression(stream, self.path)
            if compression is None:
                capacity = self._count_lines(stream, size)
                self._allocate_rows(capacity)
                stream.seek(0)
                self._parse_stream(stream, size)
            else:
                self._run_compressed(stream, size, compression)
            now = os.fstat(stream.fileno())
        if (now.st_size, now.st_mtime_ns) != (opened.st_size, opened.st_mtime_ns):
            raise ValueError(f"{self.path}: the file changed while it was being read ({opened.st_size} bytes when "
                             f"opened, {now.st_size} now); read it again once it is complete")
        side_digest = self._read_group_sizes() if self.side_file is not None else None
        if self.hasher is not None:
            self.digest = self.hasher.hexdigest()
            if side_digest is not None:
                self.digest = with_side_digest(self.digest, side_digest)

    def _allocate_rows(self, capacity: int) -> None:
        self.features = self._allocate(capacity, self.width)
        self.relevance = np.zeros(capacity, dtype=np.int32)

    def _run_compressed(self, raw: Any, size: int, compression: str) -> None:
        """Both passes over the decompressed text, each through a fresh decompressor of the one
        open file, so that no more than a chunk of text is ever in memory."""
        # The digest is of the compressed bytes, not of the text: a cache hit then costs one
        # pass over the file as it lies on disk (the same bytes ranker_evaluation hashes before
        # it decides to parse), with no decompression; decompression is deterministic, so the
        # compressed bytes fix the text.  The same text compressed again only misses the cache.
        limit = self.options.max_decompressed_bytes
        how = "the limit given"
        if limit is None:
            limit = max(DECOMPRESSION_RATIO_LIMIT * size, MIN_DECOMPRESSED_LIMIT)
            how = (f"the default limit, {DECOMPRESSION_RATIO_LIMIT} times the compressed size or "
                   f"{MIN_DECOMPRESSED_LIMIT} bytes, whichever is larger")
        self.text_hasher = None
        source = RawPrefix(raw, size, self.hasher)
        with decompressor(compression, source, xz_memory_limit=XZ_MEMORY_LIMIT) as decompressed:
            text = LimitedStream(decompressed, limit, self.path, compression, how)
            capacity = guard_decompression(self.path, compression, lambda: self._count_lines(text, limit + 1))
        source.drain()  # bytes after the last stream are hashed too, as the cache's digest of the file is
        self._allocate_rows(capacity)
        raw.seek(0)
        with decompressor(compression, RawPrefix(raw, size, None), xz_memory_limit=XZ_MEMORY_LIMIT) as decompressed:
            guard_decompression(self.path, compression, lambda: self._parse_stream(decompressed, text.total))

    def _read_group_sizes(self) -> str:
        """Read the side file into ``group_sizes`` (checked against the rows parsed); its digest."""
        assert self.side_file is not None
        self.group_sizes, digest = read_group_sizes(self.side_file, self.path, self.rows,
                                                    max_decompressed_bytes=self.options.max_decompressed_bytes,
                                                    xz_memory_limit=XZ_MEMORY_LIMIT)
        return digest

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
            if self.text_hasher is not None:
                self.text_hasher.update(block)
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
                buffer, self.features, self.rows, self.relevance, qids, lines, self.line, self.limit or 0, self.flags)
            if status:
                self._fail(status, data, length, error_at)
            if max_column < self.width:
                break
            self._widen(max_column + 1)  # then parse the chunk again: the kernel skipped wider columns
        if self.side_file is None:
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
        if status == ltr_kernels.QID_WITH_SIDE_FILE:
            detail = (f" ({self.side_file}); read a file with qid: fields without a side file (group_file=False, "
                      "command line: --no-group-file)")
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
        ascending = self._ascending_columns()
        if self.group_sizes is not None:
            offsets = np.concatenate(([0], np.cumsum(self.group_sizes))).astype(np.int64)
            query_ids = np.arange(self.group_sizes.size, dtype=np.int64)
        else:
            offsets = np.array(self.query_starts + [self.rows], dtype=np.int64)
            query_ids = np.array(self.query_ids, dtype=np.int64)
        single = np.flatnonzero(np.diff(offsets) < 2)
        dropped: tuple[int, ...] = ()
        features, relevance = self.features, self.relevance
        if single.size and single_document_queries == "error":
            first = int(single[0])
            if self.group_sizes is not None:  # no qid: the side file's line tells which query
                where = f"{self.side_file}, line {first + 1}: query {first}"
            else:
                where = f"{self.path}, line {self.query_lines[first]}: query qid:{self.query_ids[first]}"
            raise ValueError(
                f"{where} has a single document ({single.size} such queries in the file); an interleaved comparison "
                "needs at least two documents per query -- pass single_document_queries='drop' (command line: "
                "--single-document-queries drop) to drop such queries explicitly")
        if single.size:
            dropped = tuple(int(query_ids[q]) for q in single)
            keep = np.ones(query_ids.size, dtype=bool)
            keep[single] = False
            offsets, rows = compact_queries(features, relevance, offsets, keep)
            query_ids = query_ids[keep]
        else:
            rows = self.rows
        if rows == 0:
            raise ValueError(f"{self.path}: every query has a single document; nothing is left after dropping them")
        # Shrink in place where possible so that the spare rows of the line-count estimate are freed.
        features = shrink_rows(features, rows)
        relevance = shrink_rows(relevance, rows)
        if self.flags & ltr_kernels.ACCEPT_NULL:
            fill_missing_values(features, self.options.missing, ascending)
        return LTRData(read_only(features), read_only(relevance), read_only(offsets), read_only(query_ids),
                       str(self.path), dropped, ascending)

    def _ascending_columns(self) -> tuple[int, ...]:
        lower = self.options.lower_is_better
        if lower is True:
            return tuple(range(self.width))
        if not lower:
            return ()
        beyond = [index for index in lower if index > self.width]
        if beyond:
            raise ValueError(f"{self.path}: lower_is_better names feature {beyond[0]}, but the file has "
                             f"{self.width} features")
        return tuple(index - 1 for index in lower)


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