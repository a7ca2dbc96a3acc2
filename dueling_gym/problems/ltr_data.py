"""A learning-to-rank data set in memory: :class:`LTRData` (dense features, grades, queries).

The reader and writer of the LETOR / SVMlight text format are in
:mod:`dueling_gym.problems.ltr_files`, which re-exports :class:`LTRData`.  Besides the class,
this module holds what works on a data set's arrays: :func:`column_list` checks a list of
columns, and the reader finishes the arrays it parsed with :func:`fill_missing_values`
(``NULL`` values), :func:`compact_queries` (dropped queries) and :func:`shrink_rows`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.validation import read_only

__all__ = ["LTRData", "column_list", "compact_queries", "fill_missing_values", "shrink_rows"]


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
    ascending_columns : tuple of int, default ()
        The columns (0-based) whose values rank documents in ascending order (rank-valued
        features, lower is better): the feature ranker of such a column puts its smallest value
        first.  Set by ``read_ltr_file(lower_is_better=...)``; linear rankers ignore it (their
        weights carry the direction).
    """

    features: NDArray[np.float32]
    relevance: NDArray[np.int32]
    query_offsets: NDArray[np.int64]
    query_ids: NDArray[np.int64]
    source: str | None = None
    dropped_queries: tuple[int, ...] = ()
    ascending_columns: tuple[int, ...] = ()

    @classmethod
    def from_arrays(cls, features: ArrayLike, relevance: ArrayLike, query_offsets: ArrayLike,
                    query_ids: ArrayLike | None = None, *, source: str | None = None,
                    ascending_columns: Sequence[int] = ()) -> LTRData:
        """Validate and wrap arrays: finite float features, non-negative integer grades, offsets
        from 0 to ``n_documents`` with at least two documents per query, and distinct 0-based
        ``ascending_columns`` (see the class)."""
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
        columns = column_list("ascending_columns", ascending_columns, 0, features.shape[1] - 1)
        return cls(read_only(features), read_only(relevance), read_only(offsets), read_only(query_ids), source,
                   (), columns)

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


def column_list(name: str, values: Any, lowest: int, highest: int | None) -> tuple[int, ...]:
    """Distinct integers in ``[lowest, highest]``, sorted; refuses strings, booleans and duplicates.

    Checks a list of columns given by the user: :meth:`~dueling_gym.problems.LTRData.from_arrays`'s
    ``ascending_columns`` (0-based) and :func:`~dueling_gym.problems.read_ltr_file`'s
    ``lower_is_better`` (1-based feature indices).

    Parameters
    ----------
    name : str
        The argument's name, for messages.
    values : sequence of int
        The columns.
    lowest : int
        The smallest column allowed.
    highest : int or None
        The largest column allowed (None: no bound).

    Returns
    -------
    tuple of int
        The columns, sorted.

    Raises
    ------
    TypeError
        If ``values`` is not a sequence (a string is not one) or holds a non-integer (a bool
        included).
    ValueError
        If a column lies outside ``[lowest, highest]`` or is named twice.
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a sequence of integers, got {type(values).__name__}")
    columns = []
    for value in values:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must hold integers, got {value!r} ({type(value).__name__})")
        if value < lowest or (highest is not None and value > highest):
            bound = f"{lowest}.." + ("" if highest is None else str(highest))
            raise ValueError(f"{name} holds {int(value)}, outside {bound}")
        columns.append(int(value))
    if len(set(columns)) != len(columns):
        raise ValueError(f"{name} names a column more than once: {columns}")
    return tuple(sorted(columns))


# ---------------------------------------------------------------------------------- finishing the arrays
def fill_missing_values(features: NDArray[np.float32], missing: str, ascending: tuple[int, ...]) -> None:
    """Replace the NaN placeholders of ``NULL`` values in place, by row blocks (no full-size temporary).

    Parameters
    ----------
    features : ndarray of float32, shape (n_documents, n_features)
        The dense features, a missing value written as NaN; changed in place.
    missing : {"zero", "worst"}
        As :func:`~dueling_gym.problems.read_ltr_file`'s ``missing``: 0, or a value just worse
        than every value of its column (just below the smallest, or just above the largest for
        an ``ascending`` column); a column without any value reads as 0.
    ascending : tuple of int
        The columns (0-based) whose smaller values rank first.

    Raises
    ------
    ValueError
        With ``"worst"``, if a column reaches the float32 range, so that no value is worse than
        all of its values.
    """
    block = 1 << 16
    rows = features.shape[0]
    if missing == "worst":
        lowest = np.full(features.shape[1], np.inf, dtype=np.float32)
        highest = np.full(features.shape[1], -np.inf, dtype=np.float32)
        for start in range(0, rows, block):
            part = features[start:start + block]
            np.fmin(lowest, np.fmin.reduce(part, axis=0), out=lowest)  # fmin / fmax skip the NaNs
            np.fmax(highest, np.fmax.reduce(part, axis=0), out=highest)
        fill = _just_below(lowest)
        if ascending:
            columns = list(ascending)
            fill[columns] = _just_below(-highest[columns]) * -1
        fill[~np.isfinite(lowest)] = 0.0  # a column without any value: every document ties
        if not np.all(np.isfinite(fill)):
            column = int(np.flatnonzero(~np.isfinite(fill))[0])
            raise ValueError(f"feature {column + 1} reaches the float32 range, so no value is worse than all of its "
                             "values; read the file with missing='zero'")
    else:
        fill = np.zeros(features.shape[1], dtype=np.float32)
    for start in range(0, rows, block):
        part = features[start:start + block]
        where = np.isnan(part)
        if where.any():
            part[where] = np.broadcast_to(fill, part.shape)[where]


def _just_below(values: NDArray[np.float32]) -> NDArray[np.float32]:
    """A float32 strictly below each value: 1 less, or the next float32 down where 1 is lost to rounding."""
    with np.errstate(over="ignore", invalid="ignore"):
        below = (values - np.float32(1)).astype(np.float32)
        return np.where(below < values, below, np.nextafter(values, np.float32(-np.inf))).astype(np.float32)


def shrink_rows(array: NDArray[Any], rows: int) -> NDArray[Any]:
    """The first ``rows`` rows of ``array``: shrunk in place where it owns its memory, else copied.

    Shrinking in place frees the spare rows that a reader allocated for an estimate of the
    number of documents.

    Parameters
    ----------
    array : ndarray
        The array (rows along the first axis).
    rows : int
        How many rows to keep.

    Returns
    -------
    ndarray
        ``array`` itself, resized, or a copy of its first rows.
    """
    if array.shape[0] == rows:
        return array
    try:
        array.resize((rows,) + array.shape[1:], refcheck=False)
        return array
    except ValueError:  # the array does not own its memory: copy the rows in use
        return array[:rows].copy()


def compact_queries(features: NDArray[np.float32], relevance: NDArray[np.int32], offsets: NDArray[np.int64],
                    keep: NDArray[np.bool_]) -> tuple[NDArray[np.int64], int]:
    """Move the kept queries' rows to the front (in place); returns their offsets and row count.

    Parameters
    ----------
    features : ndarray of float32, shape (n_documents, n_features)
        The dense features; changed in place.
    relevance : ndarray of int32, shape (n_documents,)
        The relevance grades; changed in place.
    offsets : ndarray of int64, shape (n_queries + 1,)
        The query boundaries.
    keep : ndarray of bool, shape (n_queries,)
        The queries to keep.

    Returns
    -------
    offsets : ndarray of int64
        The boundaries of the kept queries, in their new places.
    rows : int
        The rows they take (the rows past it are left as they were).
    """
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
