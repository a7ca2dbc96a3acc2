"""Where the bytes of a learning-to-rank file come from: compressed streams and side files.

The reader of :mod:`dueling_gym.problems.ltr_files` parses text; this module supplies it:

* **compression** recognised by a file's first bytes (gzip, bzip2, xz; :func:`detect_compression`,
  which refuses zip, zstandard, lz4 and 7-zip by name, and a name whose suffix promises another
  format), decompressors that read only the bytes present when the file was opened
  (:class:`RawPrefix`, :func:`decompressor`), a limit on the decompressed bytes against
  decompression bombs (:class:`LimitedStream`), an xz decoder under a memory limit
  (:class:`XzReader`), and the decompressors' errors turned into messages naming the file
  (:func:`guard_decompression`);
* the **side files of query sizes** of LightGBM (``FILE.query``) and XGBoost (``FILE.group``):
  which one a read uses (:func:`group_file_for`), reading and checking it
  (:func:`read_group_sizes`), and the digest of a data file read with one
  (:func:`with_side_digest`).

The limits themselves (their defaults) are options of :func:`~dueling_gym.problems.read_ltr_file`
and live with it in :mod:`dueling_gym.problems.ltr_files`; here they are parameters.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
import re
import stat
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
from numpy.typing import NDArray

from dueling_gym.validation import check_regular_file

__all__ = ["GROUP_FILE_SUFFIXES", "LimitedStream", "RawPrefix", "RefusedStream", "XzReader", "decompressor",
           "detect_compression", "group_file_for", "guard_decompression", "read_group_sizes", "with_side_digest"]

#: Names of the side file of query sizes, looked for next to the data file (LightGBM writes
#: ``.query``, XGBoost ``.group``).
GROUP_FILE_SUFFIXES = (".query", ".group")
# First bytes of the compressed formats read transparently, and of those refused by name
# (their bytes would otherwise be reported as a bad relevance label on line 1).
_COMPRESSIONS = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz"}
_UNSUPPORTED = {b"PK\x03\x04": "a zip archive", b"\x28\xb5\x2f\xfd": "zstandard data",
                b"\x04\x22\x4d\x18": "lz4 data", b"7z\xbc\xaf\x27\x1c": "a 7-zip archive"}
_SUFFIXES = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}
_Result = TypeVar("_Result")


# ---------------------------------------------------------------------------------- compression
def detect_compression(stream: Any, path: Path) -> str | None:
    """The compression of an open file from its first bytes; the stream is left at its start.

    Parameters
    ----------
    stream : object
        The open binary file, at its start (seekable).
    path : Path
        Its name, whose suffix (``.gz``, ``.bz2``, ``.xz``) must agree with the bytes.

    Returns
    -------
    {"gzip", "bzip2", "xz"} or None
        None for plain text.

    Raises
    ------
    ValueError
        A format this reader does not decompress (zip, zstandard, lz4, 7-zip), refused by name,
        or a name that promises a compression the bytes do not have.
    """
    head = stream.read(8)
    stream.seek(0)
    found = next((name for magic, name in _COMPRESSIONS.items() if head.startswith(magic)), None)
    if found is None:
        other = next((name for magic, name in _UNSUPPORTED.items() if head.startswith(magic)), None)
        if other is not None:
            raise ValueError(f"{path} is {other}, which is not read; decompress it first (gzip, bzip2 and "
                             "xz files are read directly)")
    named = _SUFFIXES.get(path.suffix.lower())
    if named is not None and found != named and head:
        raise ValueError(f"{path}: the name says {named} but the file does not start like {named} data "
                         f"({'plain text' if found is None else found}); rename it or compress it again")
    return found


class RawPrefix(io.RawIOBase):
    """The first ``size`` bytes of an open binary file, hashed as they are read.

    The decompressors read through it, so that, as for a plain file, only the bytes present
    when the file was opened are read, and the digest is of exactly those bytes.

    Parameters
    ----------
    stream : object
        The open binary file.
    size : int
        How many bytes to read at most.
    hasher : object or None
        A ``hashlib`` hash, updated with every byte read (None: no digest).
    """

    def __init__(self, stream: Any, size: int, hasher: Any):
        super().__init__()
        self.stream, self.remaining, self.hasher = stream, size, hasher

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.remaining <= 0:
            return 0
        with memoryview(buffer) as view, view.cast("B") as target:
            received = self.stream.readinto(target[:min(len(target), self.remaining)]) or 0
            if self.hasher is not None and received:
                self.hasher.update(target[:received])
        self.remaining -= received
        return received

    def drain(self) -> None:
        """Read (and hash) whatever the decompressor left unread."""
        while self.read(1 << 20):
            pass


class LimitedStream:
    """A decompressed stream that refuses to yield more than ``limit`` bytes (a decompression bomb).

    Parameters
    ----------
    stream : object
        The decompressed text (a binary file object).
    limit : int
        The most bytes it may yield; ``total`` counts those read so far.
    path : Path
        The file, for the message.
    compression : str
        Its format, for the message.
    how : str
        Where the limit comes from (``"the limit given"`` or the default's rule), for the message.
    """

    def __init__(self, stream: Any, limit: int, path: Path, compression: str, how: str):
        self.stream, self.limit, self.path = stream, limit, path
        self.compression, self.how = compression, how
        self.total = 0

    def read(self, size: int) -> bytes:
        """At most ``size`` bytes of the text; a ValueError naming the limit once it is passed."""
        block = self.stream.read(size)
        self.total += len(block)
        if self.total > self.limit:
            raise ValueError(f"{self.path}: the {self.compression} data decompresses to more than "
                             f"max_decompressed_bytes={self.limit} bytes ({self.how}); refused as a possible "
                             "decompression bomb -- if the file is genuine, pass a larger max_decompressed_bytes "
                             "(command line: --max-decompressed-bytes)")
        return block


def decompressor(compression: str, source: Any, *, xz_memory_limit: int) -> Any:
    """A reading decompressor of ``compression`` over ``source`` (which it does not close).

    Parameters
    ----------
    compression : {"gzip", "bzip2", "xz"}
        As :func:`detect_compression` names it.
    source : object
        The compressed bytes, a raw binary stream (a :class:`RawPrefix` of the open file).
    xz_memory_limit : int
        The most memory the xz decoder may take (see :class:`XzReader`).

    Returns
    -------
    object
        The decompressed text, a binary file object (and a context manager).
    """
    if compression == "gzip":
        return gzip.GzipFile(fileobj=source, mode="rb")
    if compression == "bzip2":
        return bz2.BZ2File(source, mode="rb")
    return XzReader(source, xz_memory_limit)


class RefusedStream(Exception):
    """A compressed stream refused for what it asks (not for being corrupt); the reader names the file."""


class XzReader(io.RawIOBase):
    """The text of an xz file (concatenated streams included), its decoder under a memory limit.

    ``lzma.LZMAFile`` decodes the same way but cannot be given a memory limit.

    Parameters
    ----------
    source : object
        The compressed bytes, a binary file object (not closed by this reader).
    memory_limit : int
        The most bytes of memory the decoder may take; a header asking for more raises
        :class:`RefusedStream` when it is read.
    """

    def __init__(self, source: Any, memory_limit: int):
        super().__init__()
        self.source, self.memory_limit = source, memory_limit
        self.decoder = self._new_decoder()
        self.pending = b""
        self.done = False

    def _new_decoder(self) -> lzma.LZMADecompressor:
        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=self.memory_limit)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        with memoryview(buffer) as view, view.cast("B") as target:
            data = self._decode(len(target))
            target[:len(data)] = data
        return len(data)

    def _decode(self, size: int) -> bytes:
        while not self.done and size > 0:
            if self.decoder.eof:
                # Another stream may follow (xz files concatenate), after null bytes of padding.
                rest = self.decoder.unused_data
                while not rest.lstrip(b"\0"):
                    rest = self.source.read(1 << 16)
                    if not rest:
                        self.done = True
                        return b""
                self.decoder, self.pending = self._new_decoder(), rest.lstrip(b"\0")
            if self.decoder.needs_input:
                if not self.pending:
                    self.pending = self.source.read(1 << 16)
                    if not self.pending:
                        raise EOFError("the file ends before the end of its xz stream")
                raw, self.pending = self.pending, b""
            else:
                raw = b""
            try:
                data = self.decoder.decompress(raw, size)
            except lzma.LZMAError as error:
                if "memory" in str(error).lower():
                    raise RefusedStream(f"its xz header asks for more than {self.memory_limit >> 20} MiB of decoder "
                                         "memory (xz -9 needs 65 MiB); refused") from None
                raise
            if data:
                return data
        return b""


def guard_decompression(path: Path, compression: str, action: Callable[[], _Result]) -> _Result:
    """Run ``action``, turning the decompressors' own errors into a ValueError naming the file.

    Parameters
    ----------
    path : Path
        The file, for the message.
    compression : str
        Its format, for the message.
    action : callable
        Reads through a decompressor of the file.

    Returns
    -------
    object
        What ``action`` returns.

    Raises
    ------
    ValueError
        For a :class:`RefusedStream`, or corrupt or truncated data (the decompressors'
        ``OSError``, ``EOFError``, ``zlib.error`` and ``lzma.LZMAError``).
    """
    try:
        return action()
    except RefusedStream as error:
        raise ValueError(f"{path}: {error}") from None
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as error:
        raise ValueError(f"{path}: the {compression} data is corrupt or truncated ({error})") from None


# ---------------------------------------------------------------------------------- side files
def group_file_for(path: Path, group_file: Path | Literal[False] | None) -> Path | None:
    """The side file of query sizes that a read of ``path`` uses, or None.

    Parameters
    ----------
    path : Path
        The data file.
    group_file : Path, None or False
        As :func:`~dueling_gym.problems.read_ltr_file`'s ``group_file``: a path is checked and
        used; ``False`` uses none; ``None`` looks next to the data file, in this order, for

        1. ``NAME.query``, then ``NAME.group`` (:data:`GROUP_FILE_SUFFIXES`), each plain, then
           ``.gz``, ``.bz2`` and ``.xz`` (``train.txt.query``, ``train.txt.query.gz``, ...),
           where ``NAME`` is the data file's full name;
        2. for a compressed data file, the same names built on its name without the
           compression suffix (for ``train.txt.gz``: ``train.txt.query``,
           ``train.txt.query.gz``, ..., ``train.txt.group.xz``).

        LightGBM and XGBoost name the side file by appending to the data file's full name, so
        ``train.query`` (the name with its own extension replaced) is not looked for: beside
        ``train.txt`` and ``train.svm`` it would belong to both.  A compressed side file is read
        like a compressed data file (:func:`read_group_sizes`).

    Returns
    -------
    Path or None

    Raises
    ------
    ValueError
        If more than one of those names exists (the message names them all: the read would
        otherwise depend on the search order; ``group_file=`` chooses), or the one to use is
        not a regular file.
    """
    if group_file is False:
        return None
    if group_file is not None:
        return check_regular_file(group_file, "query-size side file")
    found = [candidate for candidate in _side_file_candidates(path) if os.path.lexists(candidate)]
    if len(found) > 1:
        raise ValueError(f"{path}: more than one side file of query sizes lies next to it "
                         f"({', '.join(map(str, found))}); name the one to use with group_file= (command line: "
                         "--group-file)")
    if not found:
        return None
    return check_regular_file(found[0], "query-size side file")


def _side_file_candidates(path: Path) -> list[Path]:
    """The names :func:`group_file_for` looks for next to the data file ``path``, in its order.

    Parameters
    ----------
    path : Path
        The data file.

    Returns
    -------
    list of Path
        ``NAME`` + ``.query`` / ``.group`` + nothing / ``.gz`` / ``.bz2`` / ``.xz``, for the
        data file's name and then, for a compressed data file, its name without the compression
        suffix.
    """
    names = [path.name]
    if path.suffix.lower() in _SUFFIXES:  # a compressed file beside the side file of its text
        names.append(path.name[: -len(path.suffix)])
    return [path.with_name(name + suffix + compressed) for name in names for suffix in GROUP_FILE_SUFFIXES
            for compressed in ("", *_SUFFIXES)]


def with_side_digest(data_digest: str, side_digest: str) -> str:
    """The digest of a data file read with a side file: both files' digests, hashed together.

    A read without a side file keeps the data file's own digest (and so its old cache keys).

    Parameters
    ----------
    data_digest, side_digest : str
        The SHA-256 digests (hexadecimal) of the data file and of its side file.

    Returns
    -------
    str
        The combined digest (hexadecimal).
    """
    return hashlib.sha256(f"ltr data {data_digest} query sizes {side_digest}".encode()).hexdigest()


def read_group_sizes(side: Path, data_path: Path, rows: int, *, max_decompressed_bytes: int | None = None,
                     xz_memory_limit: int) -> tuple[NDArray[np.int64], str]:
    """Read a side file of query sizes, plain or compressed, checked against the rows of its data file.

    Parameters
    ----------
    side : Path
        The side file: one positive integer per line, the number of consecutive rows of each
        query (blank lines at its end are ignored).  Compressed with gzip, bzip2 or xz (known by
        its first bytes, as a data file is: :func:`detect_compression`), it is decompressed as
        it is read.
    data_path : Path
        The data file, for messages.
    rows : int
        The data lines parsed, which the sizes must sum to.
    max_decompressed_bytes : int or None, default None
        As for the data file (:func:`~dueling_gym.problems.read_ltr_file`): the most bytes a
        compressed side file may decompress to (:class:`LimitedStream`).  None leaves only the
        side file's own bound below, which is far tighter than the data file's default limit.
    xz_memory_limit : int
        The most memory the xz decoder may take (:class:`XzReader`).

    Returns
    -------
    sizes : ndarray of int64
        The size of every query, in file order.
    digest : str
        The SHA-256 (hexadecimal) of the side file's bytes as they lie on disk (compressed, for
        a compressed side file: decompression is deterministic, so they fix the sizes).

    Raises
    ------
    ValueError
        A side file that is not a regular file; larger on disk, or decompressed, than one size
        per data row can take (32 bytes per row and 1024 more); refused by the decompression
        checks of a data file (a format that is not read, a name that promises another
        compression, corrupt or truncated data, ``max_decompressed_bytes`` passed, an xz header
        asking for too much memory); changed while it was read; with a line that is not a
        positive whole number; or whose sizes do not sum to ``rows``.
    """
    with open(side, "rb") as stream:
        opened = os.fstat(stream.fileno())
        if not stat.S_ISREG(opened.st_mode):
            raise ValueError(f"query-size side file {side} was replaced by something that is not a regular file "
                             "while it was opened")
        # One query per line and every query at least one row: a side file longer than 32
        # bytes per data row (18 digits, a sign, a \r\n and room for spaces) cannot be right,
        # and is refused before it is read into memory.  Compression only shrinks such text (its
        # headers fit in the 1024 spare bytes), so the bound holds on disk as well.
        bound = 32 * max(rows, 1) + 1024
        if opened.st_size > bound:
            raise ValueError(f"query-size side file {side} has {opened.st_size} bytes, more than one size per data "
                             f"row can take ({rows} rows in {data_path})")
        compression = detect_compression(stream, side)
        if compression is None:
            content = stream.read(opened.st_size)
            digest, read = hashlib.sha256(content).hexdigest(), len(content)
        else:
            content, digest, read = _decompressed_side_file(stream, opened.st_size, side, compression, bound,
                                                            max_decompressed_bytes, xz_memory_limit)
            if len(content) > bound:
                raise ValueError(f"query-size side file {side}: its {compression} data decompresses to more than "
                                 f"{bound} bytes, more than one size per data row can take ({rows} rows in "
                                 f"{data_path})")
        now = os.fstat(stream.fileno())
    if (now.st_size, now.st_mtime_ns, read) != (opened.st_size, opened.st_mtime_ns, opened.st_size):
        raise ValueError(f"query-size side file {side} changed while it was being read; read it again once it is "
                         "complete")
    return _parse_group_sizes(content, side, data_path, rows), digest


def _decompressed_side_file(stream: Any, size: int, side: Path, compression: str, bound: int,
                            max_decompressed_bytes: int | None, xz_memory_limit: int) -> tuple[bytes, str, int]:
    """(text, SHA-256 of the compressed bytes, compressed bytes read) of a compressed side file.

    At most ``bound + 1`` bytes of text are taken: one more than that already refuses the file.
    """
    hasher = hashlib.sha256()
    source = RawPrefix(stream, size, hasher)

    def decompress() -> bytes:
        blocks, total = [], 0
        with decompressor(compression, source, xz_memory_limit=xz_memory_limit) as decompressed:
            text = decompressed if max_decompressed_bytes is None else LimitedStream(
                decompressed, max_decompressed_bytes, side, compression, "the limit given")
            while total <= bound:
                block = text.read(min(1 << 16, bound + 1 - total))
                if not block:
                    break
                blocks.append(block)
                total += len(block)
        return b"".join(blocks)

    content = guard_decompression(side, compression, decompress)
    source.drain()  # bytes after the last stream count in the digest, as they do for a data file
    return content, hasher.hexdigest(), size - source.remaining


def _parse_group_sizes(content: bytes, side: Path, data_path: Path, rows: int) -> NDArray[np.int64]:
    """The query sizes of a side file: one positive integer per line, summing to ``rows``."""
    lines = content.split(b"\n")
    while lines and not lines[-1].strip():  # the final newline, and blank lines an editor leaves at the end
        lines.pop()
    sizes = np.empty(len(lines), dtype=np.int64)
    for number, line in enumerate(lines, start=1):
        text = line.strip(b" \t\r")
        if _WHOLE_NUMBER.fullmatch(text):
            size = int(text)
            if size == 0:
                raise ValueError(f"{side}, line {number}: a query of 0 documents; every line gives the positive "
                                 "number of consecutive rows of one query")
            sizes[number - 1] = size
            continue
        shown = text[:40].decode("utf-8", "replace")
        if not text:
            problem = "is blank"
        elif re.fullmatch(rb"-[0-9]+", text):
            problem = f"holds a negative size ({shown})"
        else:
            problem = f"holds {shown!r}, not a whole number"
        raise ValueError(f"{side}, line {number} {problem}; every line of a side file of query sizes gives the "
                         "positive number of consecutive rows of one query")
    if sizes.size == 0:
        raise ValueError(f"query-size side file {side} lists no query")
    total = int(sizes.sum())
    if total != rows:
        raise ValueError(f"query-size side file {side} lists {total} documents in {sizes.size} queries, but "
                         f"{data_path} has {rows} data lines; the sizes must add up to the number of data lines")
    return sizes


# Up to 18 digits: the sizes sum in int64, and no data file has a query of 10**18 rows.
_WHOLE_NUMBER = re.compile(rb"\+?[0-9]{1,18}")
