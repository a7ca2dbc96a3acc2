"""Reading comparison logs: files and tables in memory, their formats and compression.

:func:`read_table` reads the columns of a log into a :class:`LogTable`, as they are stored;
:func:`~dueling_gym.problems.comparison_layouts.read_comparisons` then checks and encodes its
rows (see :mod:`dueling_gym.problems.comparison_layouts`).

Sources: ``.csv``, ``.tsv``, ``.jsonl`` / ``.ndjson`` (one JSON object per line) and
``.parquet`` files (the latter through pyarrow, an optional dependency), or a table in memory: a
mapping of column name to sequence, a pyarrow ``Table``, or a DataFrame-like object (anything
with ``.columns`` whose columns are read with ``table[name]``).  A text file may be compressed
(``.gz``, ``.bz2``, ``.xz``, read as a stream with the standard library): ``battles.csv.gz`` is
a gzip-compressed CSV file, its format named by the suffix under the compression suffix.
``format=`` (``"csv"``, ``"tsv"``, ``"jsonl"``, ``"ndjson"``, ``"parquet"``) names the format of
a file whose name does not (``results.txt``, ``export.gz``); the compression is always read from
the last suffix.  ``provenance["log_sha256"]`` is the digest of the file as stored (compressed).

Files are refused unless they are regular files (a FIFO or ``/dev/zero`` would block or never
end), and their text must be UTF-8 (a byte-order mark is skipped).  A JSON-lines row giving one
key twice is refused rather than read as its last value.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Sequence

import numpy as np

from dueling_gym.validation import check_regular_file, echo, reject_duplicate_keys

__all__ = ["FORMATS", "LogTable", "read_table", "check_format", "file_stem"]

#: File formats that ``format=`` names (``"ndjson"`` is JSON lines too).
FORMATS = ("csv", "tsv", "jsonl", "ndjson", "parquet")
_DELIMITERS = {"csv": ",", "tsv": "\t"}
_FORMAT_OF_SUFFIX = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}
_SUFFIXES = tuple(_FORMAT_OF_SUFFIX)
#: Compression suffixes and the name a message gives each.
_COMPRESSIONS = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}
_DATA_EXTRA = 'pip install "dueling-gym[data]"'
#: Decoder of one line of a JSON-lines log.  A line giving one key twice ({"winner": "a", "winner": "b"})
#: is refused rather than read as its last value; built once, as ``json.loads`` with a hook builds
#: a decoder per call.
_STRICT_JSON = json.JSONDecoder(object_pairs_hook=reject_duplicate_keys)


@dataclass
class LogTable:
    """The columns of a comparison log as read, before its rows are checked.

    Attributes
    ----------
    values : dict
        Column name to the list of its values in the order read: strings in a CSV or TSV file,
        the JSON values of a JSON-lines file, the Python values of a table or a Parquet file.
    locate : callable
        Where a row is (its 0-based position in ``values``), as messages name it:
        ``"battles.csv, line 7"``, ``"table row 3 (0-based)"``.
    lines : list of int or None
        The line of each row in a text file (1-based, the header is line 1); None for Parquet
        files and tables.
    origin : str
        The file's path, or ``"table"``.
    sha256 : str or None
        SHA-256 of the file's bytes as stored, compressed or not (None for a table).
    text : bool
        Whether every value is text as a CSV or TSV file holds it (counts then are digits).
    """

    values: dict[str, list[Any]]
    locate: Callable[[int], str]
    lines: list[int] | None
    origin: str
    sha256: str | None
    text: bool = False


# ====================================================================================== public API
def read_table(source: Any, columns: tuple[str, ...], *, format: str | None = None, arguments: str) -> LogTable:
    """The columns of a comparison log, read from a file or a table in memory.

    Parameters
    ----------
    source : path or table
        A file (``str`` or ``os.PathLike``) or a table, as for
        :func:`~dueling_gym.problems.load_comparisons`.
    columns : tuple of str
        The columns to read, each of which must be present; the others are left out.
    format : {None, "csv", "tsv", "jsonl", "ndjson", "parquet"}
        The file's format when its name does not say it (files only).
    arguments : str
        The arguments that chose the columns, as the message on a missing column names them
        (``"first=, second= and winner="``).

    Returns
    -------
    LogTable
        The values of ``columns`` and where each row is.

    Raises
    ------
    ValueError
        On a missing column (the message lists the columns found), an unreadable file or row
        (file and line), an empty file, a file whose name gives no known format (without
        ``format``), a corrupt compressed file, a compressed Parquet file, ``format`` given with a
        table, or table columns of different lengths.
    TypeError
        On a source that is neither a path nor a table, a column that is not a sequence, or
        ``format`` not a string.
    ImportError
        For a Parquet file without pyarrow (naming the extra that installs it).
    """
    check_format(format)
    if isinstance(source, (str, os.PathLike)):
        return _read_file(Path(os.fspath(source)), columns, format, arguments)
    if format is not None:
        raise ValueError(f"format={format!r} names the format of a file; a table in memory has none (leave it out)")
    if isinstance(source, Mapping):
        return _table_from_columns(list(source.keys()), lambda column: source[column], columns, arguments)
    if hasattr(source, "column_names") and hasattr(source, "column"):  # a pyarrow Table (not imported here)
        return _table_from_columns(list(source.column_names), lambda column: source.column(column), columns,
                                   arguments)
    if hasattr(source, "columns") and hasattr(source, "__getitem__"):  # a DataFrame
        return _table_from_columns(list(source.columns), lambda column: source[column], columns, arguments)
    raise TypeError(f"source must be a path to a {', '.join(_SUFFIXES)} file, a mapping of column name to sequence, "
                    f"a pyarrow Table or a DataFrame, got {type(source).__name__}")


def check_format(format: Any) -> None:
    """Refuse a ``format=`` that is neither None nor one of ``FORMATS``.

    Parameters
    ----------
    format : object
        The value given.

    Raises
    ------
    TypeError
        If it is not None nor a string.
    ValueError
        If it is a string not in ``FORMATS``.
    """
    allowed = [*FORMATS, None]
    if format is None:
        return
    if not isinstance(format, str):
        raise TypeError(f"format must be one of {allowed}, got {echo(format)}")
    if format not in FORMATS:
        raise ValueError(f"format must be one of {allowed}, got {echo(format)}")


def file_stem(path: str | os.PathLike[str]) -> str:
    """The name of a log file without its compression and format suffixes.

    Parameters
    ----------
    path : path-like
        The file's path (``battles.csv.gz``).

    Returns
    -------
    str
        Its name less those suffixes (``battles``): the default name of the problem estimated
        from it.
    """
    path = Path(path)
    name = Path(path.stem) if path.suffix.lower() in _COMPRESSIONS else path
    return name.stem


# ====================================================================================== reading
def _table_from_columns(found: list[Any], column_of: Callable[[str], Any], columns: tuple[str, ...],
                        arguments: str) -> LogTable:
    _check_columns(columns, found, "the table", arguments)
    values = {column: _as_list(column, column_of(column)) for column in columns}
    lengths = {column: len(values[column]) for column in columns}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"the table's columns have different lengths: {echo(lengths)}")
    return LogTable(values, lambda row: f"table row {row} (0-based)", None, "table", None)


def _as_list(column: str, values: Any) -> list[Any]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(f"column {echo(column)} must be a sequence of values, got {type(values).__name__}")
    for method in ("to_pylist", "tolist"):  # pyarrow arrays; NumPy arrays and pandas Series
        if callable(getattr(values, method, None)):
            return list(getattr(values, method)())
    # NumPy scalars in a plain sequence become the Python values they hold (np.str_ is a str already).
    return [value.item() if isinstance(value, np.generic) and not isinstance(value, np.str_) else value
            for value in values]


def _file_format(path: Path, format: str | None) -> tuple[str | None, str]:
    """The compression (None, "gzip", "bzip2", "xz") and the format ("csv", "tsv", "jsonl", "parquet") of a log file."""
    suffix = path.suffix.lower()
    compression = _COMPRESSIONS.get(suffix)
    if format is not None:
        return compression, "jsonl" if format == "ndjson" else format
    inner = Path(path.stem).suffix.lower() if compression else suffix
    if inner not in _FORMAT_OF_SUFFIX:
        found = f"unsupported file type {echo(inner)}" if inner else "no file type in its name"
        raise ValueError(f"{path}: {found}; use one of {', '.join(_SUFFIXES)}, optionally compressed "
                         f"({', '.join(_COMPRESSIONS)}), or name the format with format= (on the command line: "
                         f"--format), one of {', '.join(FORMATS)}")
    return compression, _FORMAT_OF_SUFFIX[inner]


def _open_text(path: Path, compression: str | None, newline: str | None) -> IO[str]:
    if compression is None:
        return path.open(newline=newline, encoding="utf-8-sig")
    # Imported here: only compressed logs need them, and lzma costs a few milliseconds to import.
    if compression == "gzip":
        import gzip as module
    elif compression == "bzip2":
        import bz2 as module
    else:
        import lzma as module
    return module.open(path, "rt", newline=newline, encoding="utf-8-sig")


def _decompression_errors() -> tuple[type[BaseException], ...]:
    """What a decompressing stream raises on a corrupt or truncated file (none is a ValueError, which
    the readers raise for what they read)."""
    import lzma
    import zlib

    return OSError, EOFError, zlib.error, lzma.LZMAError


def _read_file(path: Path, columns: tuple[str, ...], format: str | None, arguments: str) -> LogTable:
    compression, file_format = _file_format(path, format)
    # A FIFO would block the reader and /dev/zero never end: refuse them before opening.
    check_regular_file(path, "comparison log")
    if file_format == "parquet":
        if compression is not None:
            raise ValueError(f"{path}: a {compression}-compressed Parquet file cannot be read (Parquet compresses its "
                             "columns itself); decompress it first")
        values = _read_parquet(path, columns, arguments)
        table = LogTable(values, lambda row: f"{path}, row {row} (0-based)", None, str(path), None)
    else:
        reader = _read_json_lines if file_format == "jsonl" else _read_delimited
        try:
            values, lines = reader(path, compression, file_format, columns, arguments)
        except UnicodeDecodeError as error:
            raise ValueError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
        except _decompression_errors() as error:  # evaluated only when something was raised
            if compression is None:
                raise
            raise ValueError(f"{path}: not a readable {compression} file ({error})") from None
        line_of = lines  # bound here: the closure below must not see later rebindings
        table = LogTable(values, lambda row: f"{path}, line {line_of[row]}", lines, str(path), None,
                       text=file_format != "jsonl")
    table.sha256 = _sha256(path)
    return table


def _read_delimited(path: Path, compression: str | None, file_format: str, columns: tuple[str, ...],
                    arguments: str) -> tuple[dict[str, list[Any]], list[int]]:
    delimiter = _DELIMITERS[file_format]
    values: dict[str, list[Any]] = {column: [] for column in columns}
    lines: list[int] = []
    with _open_text(path, compression, "") as stream:
        reader = csv.reader(stream, delimiter=delimiter, strict=True)
        try:
            header = next(reader, None)
            if header is None:
                raise ValueError(f"{path}: the file is empty (no header line)")
            _check_columns(columns, header, str(path), arguments)
            duplicated = [column for column in columns if header.count(column) > 1]
            if duplicated:
                raise ValueError(f"{path}, line 1: column(s) {echo(duplicated)} appear more than once in the header")
            positions = [header.index(column) for column in columns]
            for record in reader:
                if not record:  # a blank line holds no comparison
                    continue
                if len(record) != len(header):
                    raise ValueError(f"{path}, line {reader.line_num}: {len(record)} fields, the header has "
                                     f"{len(header)}")
                for column, position in zip(columns, positions):
                    values[column].append(record[position])
                lines.append(reader.line_num)
        except csv.Error as error:
            raise ValueError(f"{path}, line {reader.line_num}: malformed {file_format.upper()} ({error})") from None
    return values, lines


def _read_json_lines(path: Path, compression: str | None, file_format: str, columns: tuple[str, ...],
                     arguments: str) -> tuple[dict[str, list[Any]], list[int]]:
    values: dict[str, list[Any]] = {column: [] for column in columns}
    lines: list[int] = []
    targets = [(column, values[column]) for column in columns]
    decode = _STRICT_JSON.decode
    with _open_text(path, compression, None) as stream:
        for number, text in enumerate(stream, start=1):
            if not text.strip():  # a blank line (e.g. a trailing one) holds no comparison
                continue
            try:
                record = decode(text)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}, line {number}: not valid JSON ({error.msg} at column "
                                 f"{error.colno})") from None
            except RecursionError:
                raise ValueError(f"{path}, line {number}: JSON nested too deeply to read") from None
            except ValueError as error:  # a duplicate key, or an integer past Python's digit limit
                raise ValueError(f"{path}, line {number}: {error}") from None
            if not isinstance(record, dict):
                raise ValueError(f"{path}, line {number}: expected a JSON object, got {type(record).__name__}")
            try:
                row = [record[column] for column in columns]
            except KeyError:
                _check_columns(columns, list(record), f"{path}, line {number}", arguments)
                raise  # unreachable: _check_columns names the missing column
            for (_, target), value in zip(targets, row):
                target.append(value)
            lines.append(number)
    return values, lines


def _read_parquet(path: Path, columns: tuple[str, ...], arguments: str) -> dict[str, list[Any]]:
    try:
        import pyarrow.parquet as parquet
    except ImportError:
        raise ImportError(f"reading {path.name} needs pyarrow, an optional dependency: {_DATA_EXTRA}") from None
    try:
        found = parquet.read_schema(path).names
    except Exception as error:  # pyarrow raises its own ArrowInvalid for a file that is not Parquet
        raise ValueError(f"{path}: not a readable Parquet file ({error})") from None
    _check_columns(columns, found, str(path), arguments)
    table = parquet.read_table(path, columns=list(columns))
    return {column: table.column(column).to_pylist() for column in columns}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_columns(columns: Sequence[str], found: Sequence[Any], where: str, arguments: str) -> None:
    missing = [column for column in columns if column not in found]
    if missing:
        raise ValueError(f"{where}: missing column(s) {echo(missing)}; columns found: {echo(list(found))} (choose "
                         f"the columns with {arguments})")
