"""Dueling-bandit problems estimated from logs of pairwise comparisons.

A comparison log has one row per comparison: the two systems compared (columns ``first`` and
``second``) and the outcome (column ``winner``): A/B tests, human or model judges comparing two
outputs, arena-style battles between language models.  :func:`~dueling_gym.problems.load_comparisons` turns such a
log into a :class:`~dueling_gym.problems.PreferenceMatrix` whose entry ``P[i, j]`` is the
empirical probability that system ``i`` beats system ``j``, with the counts, confidence
intervals and the log itself recorded in its ``provenance``::

    problem = load_comparisons("battles.jsonl", first="model_a", second="model_b")
    env = gym.make("DuelingBandit-v0", preferences=problem)

Sources: ``.csv``, ``.tsv``, ``.jsonl`` / ``.ndjson`` (one JSON object per line) and
``.parquet`` files (the latter through pyarrow, an optional dependency), or a table in memory: a
mapping of column name to sequence, a pyarrow ``Table``, or a DataFrame-like object (anything
with ``.columns`` whose columns are read with ``table[name]``).

Winner column.  Each value says which side won, as one of

* the name of the system in the ``first`` or the ``second`` column of the row;
* a label of ``first_wins`` (default ``"first"``, ``"model_a"``), ``second_wins`` (default
  ``"second"``, ``"model_b"``) or ``tie_values`` (default ``"tie"``, ``"draw"``,
  ``"tie (bothbad)"``), which covers arena logs (``"model_a"``, ``"model_b"``, ``"tie"``).

Anything else is refused with the file and line (or table row).  A system whose name is also a
winner label is refused too: the value ``"tie"`` would be ambiguous if a system were called
``"tie"`` (pass label sets without it).  System names and winner values are strings or
integers, compared exactly (``"1"`` is not ``1``); nothing is stripped or case-folded.

Ties, by ``ties=``:

* ``"half"``: a tie is half a win for each side; ``P[i, j] = (wins_ij + ties_ij / 2) / n_ij``
  over all ``n_ij`` comparisons of the pair.
* ``"drop"``: ties are removed before anything is computed; their number is recorded.
* ``"separate"``: a tie is a third outcome: ``P[i, j] = wins_ij / (wins_ij + wins_ji)`` is the
  probability that ``i`` wins a comparison that has a winner, and the ties are kept, per pair,
  in ``provenance["ties"]``.  ``"drop"`` gives the same matrix; only the record differs.

Confidence intervals.  ``provenance["ci_lower"]`` / ``["ci_upper"]`` hold the Wilson score
interval (Wilson, J. Amer. Statist. Assoc. 1927) of each ``P[i, j]``.  It is the interval for a
binomial proportion recommended by Brown, Cai & DasGupta (Statist. Sci. 2001): unlike the Wald
or Student-t interval of a mean, it keeps near-nominal coverage for small counts and for
proportions near 0 or 1, where those collapse to zero width (a pair won 5 times out of 5), and
it never leaves ``[0, 1]``.  With ``ties="half"`` an outcome scores 1, 1/2 or 0, whose variance
is below the Bernoulli variance ``p (1 - p)`` of the same mean, so the interval is conservative
there.  Pairs without comparisons (and the diagonal) get NaN.

Pairs never compared.  They are refused with their names, unless
``fill_missing="bradley_terry"``: the missing entries are then the Bradley–Terry probabilities
fitted by maximum likelihood on every comparison of the log (ties per the tie rule: half a win
each with ``"half"``, left out otherwise), see :mod:`dueling_gym.problems.bradley_terry`.
Compared pairs keep their empirical mean.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.problems.bradley_terry import fit_bradley_terry
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.validation import (
    MAX_ECHO,
    check_probability,
    check_real_array,
    check_regular_file,
    echo,
    read_only,
    reject_duplicate_keys,
)

__all__ = [
    "ComparisonLog",
    "TIE_RULES",
    "FILL_METHODS",
    "OUTCOME_FIRST_WON",
    "OUTCOME_TIE",
    "OUTCOME_SECOND_WON",
    "load_comparisons",
    "read_comparisons",
    "preference_from_log",
    "wilson_interval",
]

#: The tie rules of :func:`~dueling_gym.problems.load_comparisons`.
TIE_RULES = ("half", "drop", "separate")
#: How pairs never compared may be filled.
FILL_METHODS = ("bradley_terry",)
#: Codes of ``ComparisonLog.outcome`` (relative to the row's ``first`` system).
OUTCOME_FIRST_WON, OUTCOME_TIE, OUTCOME_SECOND_WON = 1, 0, -1

DEFAULT_FIRST_WINS = ("first", "model_a")
DEFAULT_SECOND_WINS = ("second", "model_b")
DEFAULT_TIE_VALUES = ("tie", "draw", "tie (bothbad)")
_TEXT_FORMATS = {".csv": ",", ".tsv": "\t"}
_JSON_LINES = (".jsonl", ".ndjson")
_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".parquet")
_DATA_EXTRA = 'pip install "dueling-gym[data]"'
#: Decoder of one line of a JSON-lines log.  A line giving one key twice ({"winner": "a", "winner": "b"})
#: is refused rather than read as its last value; built once, as ``json.loads`` with a hook builds
#: a decoder per call.
_STRICT_JSON = json.JSONDecoder(object_pairs_hook=reject_duplicate_keys)

Label = str | int


@dataclass(frozen=True)
class ComparisonLog:
    """The rows of a comparison log, validated and encoded (its arrays are read-only).

    Attributes
    ----------
    arms : tuple
        The distinct system names, sorted; arm ``i`` is ``arms[i]``.
    first, second : ndarray of int32
        The arms compared in each row.
    outcome : ndarray of int8
        Per row: ``OUTCOME_FIRST_WON`` (1), ``OUTCOME_TIE`` (0) or ``OUTCOME_SECOND_WON`` (-1).
    lines : ndarray of int64 or None
        The line of each row in a text file (1-based, the header is line 1); None for Parquet
        files and tables, whose rows are numbered from 0 in the order read.
    origin : str
        The file's path, or ``"table"``.
    sha256 : str or None
        SHA-256 of the file's bytes (None for a table).
    """

    arms: tuple[Label, ...]
    first: NDArray[np.int32]
    second: NDArray[np.int32]
    outcome: NDArray[np.int8]
    lines: NDArray[np.int64] | None
    origin: str
    sha256: str | None

    @property
    def n_rows(self) -> int:
        """Number of comparisons in the log."""
        return int(self.first.size)


# ====================================================================================== public API
def load_comparisons(source: Any, *, first: str = "first", second: str = "second", winner: str = "winner",
                     ties: str = "half", fill_missing: str | None = None, confidence: float = 0.95,
                     name: str | None = None, first_wins: Label | Iterable[Label] = DEFAULT_FIRST_WINS,
                     second_wins: Label | Iterable[Label] = DEFAULT_SECOND_WINS,
                     tie_values: Label | Iterable[Label] = DEFAULT_TIE_VALUES) -> PreferenceMatrix:
    """A dueling-bandit problem estimated from a log of pairwise comparisons.

    Parameters
    ----------
    source : path or table
        A ``.csv``, ``.tsv``, ``.jsonl``/``.ndjson`` or ``.parquet`` file (``str`` or
        ``os.PathLike``), or a mapping of column name to sequence, a pyarrow ``Table`` or a
        DataFrame-like object.
    first, second, winner : str
        Names of the columns holding the two systems and the outcome.
    ties : {"half", "drop", "separate"}
        The tie rule (see the module documentation).
    fill_missing : {None, "bradley_terry"}
        None: pairs never compared are refused.  ``"bradley_terry"``: they are filled with a
        Bradley–Terry model fitted by maximum likelihood to the whole log.
    confidence : float, default 0.95
        Level of the Wilson score intervals in the provenance, in ``(0, 1)``.
    name : str, optional
        Name of the problem (default: the file's stem, or ``"comparison log"``).
    first_wins, second_wins, tie_values : label or iterable of labels
        Winner values meaning "the first system won", "the second system won" and "tie" (a
        string or an integer is one label).  The three sets must be disjoint.

    Returns
    -------
    PreferenceMatrix
        Arm ``i`` is the ``i``-th system in sorted order.  ``provenance`` holds: ``arms``;
        ``wins`` (``wins[i, j]``: how often ``i`` beat ``j``), ``ties`` (symmetric), ``counts``
        (all comparisons of each pair) and ``sample_sizes`` (those behind ``P[i, j]``), K×K
        int64; ``ci_lower`` / ``ci_upper`` (Wilson intervals, NaN where nothing was compared),
        ``confidence``, ``interval_method``; ``tie_rule``, ``ties_total``, ``ties_dropped``;
        ``columns``, ``log_origin``, ``log_sha256``, ``rows_read``; ``fill_missing``,
        ``filled_pairs`` (pairs of names), ``bradley_terry_log_strengths`` (None unless a pair
        was filled); and the log itself, ``log_first``, ``log_second``, ``log_outcome``,
        ``log_lines`` (see :class:`~dueling_gym.problems.comparisons.ComparisonLog`), which the replay
        environment plays back.

    Raises
    ------
    ValueError
        On a missing column (the message lists the columns found), an unreadable row (file and
        line), a winner that is neither side nor a label, the same system on both sides of a
        row (so a log names at least two systems), an empty log, pairs never compared (listed by name)
        without ``fill_missing``, or a Bradley–Terry fit whose maximum-likelihood estimate does
        not exist.
    TypeError
        On arguments of the wrong type.
    ImportError
        For a Parquet file without pyarrow (naming the extra that installs it).
    """
    log = read_comparisons(source, first=first, second=second, winner=winner, first_wins=first_wins,
                           second_wins=second_wins, tie_values=tie_values)
    if name is None:
        name = "comparison log" if log.sha256 is None else Path(log.origin).stem
    elif not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__}")
    return preference_from_log(log, ties=ties, fill_missing=fill_missing, confidence=confidence, name=name,
                               columns=(first, second, winner))


def read_comparisons(source: Any, *, first: str = "first", second: str = "second", winner: str = "winner",
                     first_wins: Label | Iterable[Label] = DEFAULT_FIRST_WINS,
                     second_wins: Label | Iterable[Label] = DEFAULT_SECOND_WINS,
                     tie_values: Label | Iterable[Label] = DEFAULT_TIE_VALUES) -> ComparisonLog:
    """Read and validate a comparison log (arguments as :func:`~dueling_gym.problems.load_comparisons`), without aggregating it."""
    columns = tuple(_column_name(role, value) for role, value in (("first", first), ("second", second),
                                                                    ("winner", winner)))
    if len(set(columns)) < 3:
        raise ValueError(f"first, second and winner must name three different columns, got {echo(columns)}")
    labels = _winner_labels(first_wins, second_wins, tie_values)
    table = _read_table(source, columns)
    arms, first_index, second_index, outcome = _encode_rows(table, columns, labels)
    lines = None if table.lines is None else read_only(np.asarray(table.lines, dtype=np.int64))
    return ComparisonLog(arms, read_only(first_index), read_only(second_index), read_only(outcome), lines,
                         table.origin, table.sha256)


def preference_from_log(log: ComparisonLog, *, ties: str = "half", fill_missing: str | None = None,
                        confidence: float = 0.95, name: str | None = None,
                        columns: tuple[str, str, str] | None = None) -> PreferenceMatrix:
    """Aggregate a :class:`~dueling_gym.problems.comparisons.ComparisonLog` into a :class:`~dueling_gym.problems.PreferenceMatrix` (see :func:`~dueling_gym.problems.load_comparisons`)."""
    if not isinstance(log, ComparisonLog):
        raise TypeError(f"log must be a ComparisonLog (see read_comparisons), got {type(log).__name__}")
    _check_choice("ties", ties, TIE_RULES)
    if fill_missing is not None:
        _check_choice("fill_missing", fill_missing, FILL_METHODS, none_allowed=True)
    confidence = check_probability("confidence", confidence, open_low=True, open_high=True)
    n_arms = len(log.arms)
    wins, tie_counts = _pair_counts(log, n_arms)
    if ties == "half":
        successes, sample_sizes = wins + 0.5 * tie_counts, wins + wins.T + tie_counts
    else:
        successes, sample_sizes = wins.astype(np.float64), wins + wins.T
    observed = sample_sizes > 0
    np.fill_diagonal(observed, False)
    matrix = np.full((n_arms, n_arms), 0.5)
    matrix[observed] = successes[observed] / sample_sizes[observed]
    missing = [(i, j) for i, j in zip(*np.nonzero(np.triu(~observed, 1)))]
    filled, log_strengths = (), None
    if missing:
        if fill_missing is None:
            _refuse_missing(missing, log.arms, wins + wins.T + tie_counts, ties)
        fit = fit_bradley_terry(successes, names=[str(arm) for arm in log.arms])
        fitted = fit.probabilities()
        rows, cols = np.array(missing).T
        matrix[rows, cols] = fitted[rows, cols]
        matrix[cols, rows] = fitted[cols, rows]
        filled = tuple((log.arms[i], log.arms[j]) for i, j in missing)
        log_strengths = np.asarray(fit.log_strengths)
    lower, upper = wilson_interval(np.where(observed, successes, 0.0), np.where(observed, sample_sizes, 0), confidence)
    ties_total = int(np.count_nonzero(log.outcome == OUTCOME_TIE))
    provenance = {
        "arms": log.arms,
        "wins": wins,
        "ties": tie_counts,
        "counts": wins + wins.T + tie_counts,
        "sample_sizes": sample_sizes,
        "ci_lower": lower,
        "ci_upper": upper,
        "confidence": confidence,
        "interval_method": "Wilson score interval (Wilson 1927) of each pair's mean"
                           + (", a tie scoring 1/2 (conservative)" if ties == "half" else ""),
        "tie_rule": ties,
        "ties_total": ties_total,
        "ties_dropped": ties_total if ties == "drop" else 0,
        "columns": columns,
        "log_origin": log.origin,
        "log_sha256": log.sha256,
        "rows_read": log.n_rows,
        "fill_missing": fill_missing,
        "filled_pairs": filled,
        "bradley_terry_log_strengths": log_strengths,
        "log_first": log.first,
        "log_second": log.second,
        "log_outcome": log.outcome,
        "log_lines": log.lines,
    }
    where = "a table" if log.sha256 is None else f"{Path(log.origin).name} (sha256 {log.sha256[:12]})"
    source = (f"{log.n_rows:,} pairwise comparisons from {where}, ties={ties!r}"
              + (f", {len(filled)} pairs filled by Bradley-Terry" if filled else ""))
    return PreferenceMatrix(matrix, name=name, source=source, provenance=provenance)


def wilson_interval(successes: ArrayLike, trials: ArrayLike,
                    confidence: float = 0.95) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The Wilson score interval of a proportion ``successes / trials`` (Wilson 1927).

    Its bounds are the two roots ``p`` of ``(p_hat - p)^2 = z^2 p (1 - p) / trials`` with ``z``
    the standard normal quantile of ``(1 + confidence) / 2``.

    Parameters
    ----------
    successes, trials : array_like
        Broadcastable; ``0 <= successes <= trials`` (successes may be fractional).  Where
        ``trials == 0`` both bounds are NaN.
    confidence : float, default 0.95
        In ``(0, 1)``.

    Returns
    -------
    lower, upper : ndarray
    """
    confidence = check_probability("confidence", confidence, open_low=True, open_high=True)
    successes = check_real_array("successes", successes, minimum=0.0)
    trials = check_real_array("trials", trials, minimum=0.0)
    successes, trials = np.broadcast_arrays(successes, trials)
    if np.any(successes > trials):
        raise ValueError("successes must not exceed trials")
    from statistics import NormalDist  # here: the module costs ~10 ms to import and is needed only now

    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        proportion = successes / trials
        denominator = 1.0 + z * z / trials
        centre = (proportion + z * z / (2.0 * trials)) / denominator
        spread = proportion * (1.0 - proportion) / trials + z * z / (4.0 * trials * trials)
        half_width = z * np.sqrt(spread) / denominator
    # The bounds lie in [0, 1] exactly; the clip only removes rounding (about 1e-17) at 0 and 1.
    lower = np.where(trials > 0, np.clip(centre - half_width, 0.0, 1.0), np.nan)
    upper = np.where(trials > 0, np.clip(centre + half_width, 0.0, 1.0), np.nan)
    return lower, upper


# ====================================================================================== reading
@dataclass
class _Table:
    values: dict[str, list[Any]]
    locate: Callable[[int], str]
    lines: list[int] | None
    origin: str
    sha256: str | None


def _read_table(source: Any, columns: tuple[str, str, str]) -> _Table:
    if isinstance(source, (str, os.PathLike)):
        return _read_file(Path(os.fspath(source)), columns)
    if isinstance(source, Mapping):
        return _table_from_columns(list(source.keys()), lambda column: source[column], columns)
    if hasattr(source, "column_names") and hasattr(source, "column"):  # a pyarrow Table (not imported here)
        return _table_from_columns(list(source.column_names), lambda column: source.column(column), columns)
    if hasattr(source, "columns") and hasattr(source, "__getitem__"):  # a DataFrame
        return _table_from_columns(list(source.columns), lambda column: source[column], columns)
    raise TypeError(f"source must be a path to a {', '.join(_SUFFIXES)} file, a mapping of column name to sequence, "
                    f"a pyarrow Table or a DataFrame, got {type(source).__name__}")


def _table_from_columns(found: list[Any], column_of: Callable[[str], Any], columns: tuple[str, ...]) -> _Table:
    _check_columns(columns, found, "the table")
    values = {column: _as_list(column, column_of(column)) for column in columns}
    lengths = {column: len(values[column]) for column in columns}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"the table's columns have different lengths: {echo(lengths)}")
    return _Table(values, lambda row: f"table row {row} (0-based)", None, "table", None)


def _as_list(column: str, values: Any) -> list[Any]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(f"column {echo(column)} must be a sequence of values, got {type(values).__name__}")
    for method in ("to_pylist", "tolist"):  # pyarrow arrays; NumPy arrays and pandas Series
        if callable(getattr(values, method, None)):
            return list(getattr(values, method)())
    # NumPy scalars in a plain sequence become the Python values they hold (np.str_ is a str already).
    return [value.item() if isinstance(value, np.generic) and not isinstance(value, np.str_) else value
            for value in values]


def _read_file(path: Path, columns: tuple[str, str, str]) -> _Table:
    suffix = path.suffix.lower()
    if suffix not in _SUFFIXES:
        raise ValueError(f"{path}: unsupported file type {echo(suffix)}; use one of {', '.join(_SUFFIXES)}")
    # A FIFO would block the reader and /dev/zero never end: refuse them before opening.
    check_regular_file(path, "comparison log")
    if suffix == ".parquet":
        values = _read_parquet(path, columns)
        table = _Table(values, lambda row: f"{path}, row {row} (0-based)", None, str(path), None)
    else:
        try:
            reader = _read_json_lines if suffix in _JSON_LINES else _read_delimited
            values, lines = reader(path, columns)
        except UnicodeDecodeError as error:
            raise ValueError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
        line_of = lines  # bound here: the closure below must not see later rebindings
        table = _Table(values, lambda row: f"{path}, line {line_of[row]}", lines, str(path), None)
    table.sha256 = _sha256(path)
    return table


def _read_delimited(path: Path, columns: tuple[str, str, str]) -> tuple[dict[str, list[Any]], list[int]]:
    delimiter = _TEXT_FORMATS[path.suffix.lower()]
    values: dict[str, list[Any]] = {column: [] for column in columns}
    lines: list[int] = []
    with path.open(newline="", encoding="utf-8-sig") as stream:
        reader = csv.reader(stream, delimiter=delimiter, strict=True)
        try:
            header = next(reader, None)
            if header is None:
                raise ValueError(f"{path}: the file is empty (no header line)")
            _check_columns(columns, header, str(path))
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
            raise ValueError(f"{path}, line {reader.line_num}: malformed {path.suffix[1:].upper()} ({error})") from None
    return values, lines


def _read_json_lines(path: Path, columns: tuple[str, str, str]) -> tuple[dict[str, list[Any]], list[int]]:
    values: dict[str, list[Any]] = {column: [] for column in columns}
    lines: list[int] = []
    first_column, second_column, winner_column = columns
    firsts, seconds, winners = (values[column] for column in columns)
    decode = _STRICT_JSON.decode
    with path.open(encoding="utf-8-sig") as stream:
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
                first, second, winner = record[first_column], record[second_column], record[winner_column]
            except KeyError:
                _check_columns(columns, list(record), f"{path}, line {number}")
                raise  # unreachable: _check_columns names the missing column
            firsts.append(first)
            seconds.append(second)
            winners.append(winner)
            lines.append(number)
    return values, lines


def _read_parquet(path: Path, columns: tuple[str, str, str]) -> dict[str, list[Any]]:
    try:
        import pyarrow.parquet as parquet
    except ImportError:
        raise ImportError(f"reading {path.name} needs pyarrow, an optional dependency: {_DATA_EXTRA}") from None
    try:
        found = parquet.read_schema(path).names
    except Exception as error:  # pyarrow raises its own ArrowInvalid for a file that is not Parquet
        raise ValueError(f"{path}: not a readable Parquet file ({error})") from None
    _check_columns(columns, found, str(path))
    table = parquet.read_table(path, columns=list(columns))
    return {column: table.column(column).to_pylist() for column in columns}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_columns(columns: Sequence[str], found: Sequence[Any], where: str) -> None:
    missing = [column for column in columns if column not in found]
    if missing:
        raise ValueError(f"{where}: missing column(s) {echo(missing)}; columns found: {echo(list(found))} (choose "
                         "the columns with first=, second= and winner=)")


# ====================================================================================== encoding
def _encode_rows(table: _Table, columns: tuple[str, str, str], labels: dict[Label, int],
                 ) -> tuple[tuple[Label, ...], NDArray[np.int32], NDArray[np.int32], NDArray[np.int8]]:
    firsts, seconds, winners = (table.values[column] for column in columns)
    if not firsts:
        raise ValueError(f"the comparison log {table.origin} has no rows: nothing to estimate")
    locate = table.locate
    outcomes = np.empty(len(firsts), dtype=np.int8)
    for row, (first, second, winner) in enumerate(zip(firsts, seconds, winners)):
        _check_name(first, columns[0], row, locate)
        _check_name(second, columns[1], row, locate)
        if first == second:
            raise ValueError(f"{locate(row)}: the same system {echo(first)} on both sides; a comparison needs two "
                             "different systems")
        if isinstance(winner, bool) or not isinstance(winner, (str, int)):
            raise ValueError(f"{locate(row)}: winner {echo(winner)} must be a string or an integer")
        # Names and winners are strings or integers, and "1" != 1: equality is exact.
        if winner == first:
            outcomes[row] = OUTCOME_FIRST_WON
        elif winner == second:
            outcomes[row] = OUTCOME_SECOND_WON
        elif winner in labels:
            outcomes[row] = labels[winner]
        else:
            raise ValueError(f"{locate(row)}: winner {echo(winner)} is neither side ({echo(first)} or {echo(second)}) "
                             f"nor a winner label ({_describe_labels(labels)})")
    arms = _sorted_arms(firsts, seconds, locate)
    clashes = [arm for arm in arms if arm in labels]
    if clashes:
        raise ValueError(f"system name(s) {echo(clashes)} are also winner labels ({_describe_labels(labels)}), so the "
                         "winner column would be ambiguous; pass first_wins=, second_wins= and tie_values= "
                         "without them")
    index = {arm: position for position, arm in enumerate(arms)}
    first_index = np.fromiter((index[name] for name in firsts), dtype=np.int32, count=len(firsts))
    second_index = np.fromiter((index[name] for name in seconds), dtype=np.int32, count=len(seconds))
    return arms, first_index, second_index, outcomes


def _check_name(value: Any, column: str, row: int, locate: Callable[[int], str]) -> None:
    if isinstance(value, str):
        if value == "":
            raise ValueError(f"{locate(row)}: empty system name in column {echo(column)}")
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{locate(row)}: system name {echo(value)} in column {echo(column)} must be a string or an "
                         "integer")


def _sorted_arms(firsts: list[Label], seconds: list[Label], locate: Callable[[int], str]) -> tuple[Label, ...]:
    arms = set(firsts) | set(seconds)
    kinds = {type(arm) for arm in arms}
    if len(kinds) > 1:
        row = next(row for row, (a, b) in enumerate(zip(firsts, seconds)) if isinstance(a, int) or isinstance(b, int))
        raise ValueError(f"system names mix strings and integers (an integer at {locate(row)}); use one kind")
    # A non-empty log without self-comparisons (refused row by row) names at least 2 systems.
    return tuple(sorted(arms))


def _pair_counts(log: ComparisonLog, n_arms: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``wins[i, j]`` (how often ``i`` beat ``j``) and the symmetric tie counts."""
    winner = np.where(log.outcome == OUTCOME_FIRST_WON, log.first, log.second).astype(np.int64)
    loser = np.where(log.outcome == OUTCOME_FIRST_WON, log.second, log.first).astype(np.int64)
    decisive = log.outcome != OUTCOME_TIE
    wins = np.bincount(winner[decisive] * n_arms + loser[decisive], minlength=n_arms * n_arms)
    tied = ~decisive
    ties = np.bincount(log.first[tied].astype(np.int64) * n_arms + log.second[tied], minlength=n_arms * n_arms)
    ties = ties.reshape(n_arms, n_arms)
    return wins.reshape(n_arms, n_arms).astype(np.int64), (ties + ties.T).astype(np.int64)


def _refuse_missing(missing: list[tuple[int, int]], arms: tuple[Label, ...], counts: NDArray[np.int64],
                    ties: str) -> None:
    never = [(arms[i], arms[j]) for i, j in missing if counts[i, j] == 0]
    only_ties = [(arms[i], arms[j]) for i, j in missing if counts[i, j] > 0]
    parts = []
    if never:
        parts.append(f"{len(never)} pair(s) never compared: {_pairs_text(never)}")
    if only_ties:
        parts.append(f"{len(only_ties)} pair(s) with ties only, which ties={ties!r} leaves without a decisive "
                     f"comparison: {_pairs_text(only_ties)}")
    raise ValueError("; ".join(parts) + ". Log more comparisons of these pairs, or pass "
                     "fill_missing='bradley_terry' (on the command line: --fill-missing bradley_terry) to fill them with a "
                     "Bradley-Terry model fitted to the log")


def _pairs_text(pairs: list[tuple[Label, Label]], shown: int = 20) -> str:
    """Up to ``shown`` pairs of names, fewer when the names are long (each is capped by :func:`echo`)."""
    parts: list[str] = []
    for a, b in pairs[:shown]:
        if sum(map(len, parts)) > 4 * MAX_ECHO:
            break
        parts.append(f"({echo(a)}, {echo(b)})")
    return ", ".join(parts) + (f", ... ({len(pairs) - len(parts)} more)" if len(pairs) > len(parts) else "")


# ====================================================================================== argument checks
def _column_name(role: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{role} must be a column name (a string), got {echo(value)}")
    return value


def _check_choice(argument: str, value: Any, choices: tuple[str, ...], none_allowed: bool = False) -> None:
    allowed = [*choices, *([None] if none_allowed else [])]
    if not isinstance(value, str):
        raise TypeError(f"{argument} must be one of {allowed}, got {echo(value)}")
    if value not in choices:
        raise ValueError(f"{argument} must be one of {allowed}, got {echo(value)}")


def _winner_labels(first_wins: Any, second_wins: Any, tie_values: Any) -> dict[Label, int]:
    labels: dict[Label, int] = {}
    for argument, given, code in (("first_wins", first_wins, OUTCOME_FIRST_WON),
                                  ("second_wins", second_wins, OUTCOME_SECOND_WON),
                                  ("tie_values", tie_values, OUTCOME_TIE)):
        values = [given] if isinstance(given, (str, int)) and not isinstance(given, bool) else given
        try:
            values = list(values)
        except TypeError:
            raise TypeError(f"{argument} must be a label (string or integer) or an iterable of labels, "
                            f"got {echo(given)}") from None
        for label in values:
            if isinstance(label, bool) or not isinstance(label, (str, int)):
                raise TypeError(f"{argument} labels must be strings or integers, got {echo(label)}")
            if label in labels and labels[label] != code:
                raise ValueError(f"winner label {echo(label)} is given for two outcomes (in {argument} and another)")
            labels[label] = code
    return labels


def _describe_labels(labels: dict[Label, int]) -> str:
    names = {OUTCOME_FIRST_WON: "first_wins", OUTCOME_SECOND_WON: "second_wins", OUTCOME_TIE: "tie_values"}
    groups = {code: [label for label, value in labels.items() if value == code] for code in names}
    return ", ".join(f"{names[code]}={echo(groups[code])}" for code in names)
