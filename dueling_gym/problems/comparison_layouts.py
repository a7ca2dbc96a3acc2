"""Comparison logs: their layouts, and the checking and encoding of their rows.

:func:`read_comparisons` reads a log (through :mod:`dueling_gym.problems.comparison_files`),
checks every row and encodes the rows into a :class:`ComparisonLog`, which
:func:`~dueling_gym.problems.load_comparisons` (see :mod:`dueling_gym.problems.comparisons`)
aggregates into a problem.

Layouts.  Three shapes of table are read:

* one row per comparison with an outcome column (the default): ``first``, ``second`` and
  ``winner``, described below;
* one row per decided game (sports results, arena battles kept as winner and loser):
  ``loser=`` names the column of the losing system and ``winner=`` that of the winning one.
  There are no ties in this layout, and no winner labels;
* one row per pair with counts, as the Bradley–Terry literature publishes its data:
  ``counts=(wins_of_first, wins_of_second)`` or ``counts=(wins_of_first, wins_of_second, ties)``
  name the count columns next to ``first`` and ``second``.  Counts are non-negative integers
  (integers in JSON and tables, plain digits in CSV/TSV; ``2.5``, ``3.0``, ``-1`` and NaN are
  refused with their row and column).  A pair may appear in several rows, in either order
  (one row per season, say): its counts add up.  Each count stands for that many comparisons,
  one entry each in the log arrays of the provenance (the row's line for each), so the replay
  environment plays them back like any log.  A system named only in rows whose counts are all
  zero is still an arm, with no comparisons.

Winner column.  Each value says which side won, as one of

* the name of the system in the ``first`` or the ``second`` column of the row;
* a label of ``first_wins`` (default ``"first"``, ``"model_a"``), ``second_wins`` (default
  ``"second"``, ``"model_b"``) or ``tie_values`` (default ``"tie"``, ``"draw"``,
  ``"tie (bothbad)"``), which covers arena logs (``"model_a"``, ``"model_b"``, ``"tie"``).

Anything else is refused with the file and line (or table row).  A system whose name is also a
winner label is refused too: the value ``"tie"`` would be ambiguous if a system were called
``"tie"`` (pass label sets without it).  System names and winner values are strings or
integers, compared exactly (``"1"`` is not ``1``); nothing is stripped or case-folded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from dueling_gym.problems.comparison_files import LogTable, check_format, read_table
from dueling_gym.validation import available_memory, echo, read_only

__all__ = [
    "ComparisonLog",
    "Label",
    "LAYOUTS",
    "OUTCOME_FIRST_WON",
    "OUTCOME_TIE",
    "OUTCOME_SECOND_WON",
    "DEFAULT_FIRST_WINS",
    "DEFAULT_SECOND_WINS",
    "DEFAULT_TIE_VALUES",
    "read_comparisons",
    "log_layout",
]

#: Shapes of a comparison log (``provenance["layout"]``): an outcome column, winner and loser
#: columns, or count columns.
LAYOUTS = ("outcomes", "winner_loser", "counts")
#: Codes of ``ComparisonLog.outcome`` (relative to the row's ``first`` system).
OUTCOME_FIRST_WON, OUTCOME_TIE, OUTCOME_SECOND_WON = 1, 0, -1

#: The default winner labels of the outcome layout (see "Winner column" above).
DEFAULT_FIRST_WINS = ("first", "model_a")
DEFAULT_SECOND_WINS = ("second", "model_b")
DEFAULT_TIE_VALUES = ("tie", "draw", "tie (bothbad)")
#: Most comparisons a count table may stand for: each becomes an entry of the log arrays.
_MAX_COUNTED = 2**31 - 1
#: Bytes per comparison of an expanded count table (the log arrays and their temporaries).
_BYTES_PER_COUNTED = 48
#: Below this many bytes an expansion is not checked against the machine's memory.
_SMALL_EXPANSION = 256 * 2**20

#: A system name or a winner label: a string or an integer.
Label = str | int


@dataclass(frozen=True)
class ComparisonLog:
    """The rows of a comparison log, validated and encoded (its arrays are read-only).

    One entry per comparison: a row of an outcome or winner/loser table, or one of the
    comparisons that a count in a count table stands for.

    Attributes
    ----------
    arms : tuple
        The distinct system names, sorted; arm ``i`` is ``arms[i]``.
    first, second : ndarray of int32
        The arms compared in each row (in a winner/loser table, the winner and the loser).
    outcome : ndarray of int8
        Per row: ``OUTCOME_FIRST_WON`` (1), ``OUTCOME_TIE`` (0) or ``OUTCOME_SECOND_WON`` (-1).
    lines : ndarray of int64 or None
        The line of each row in a text file (1-based, the header is line 1; for a count table,
        the line of the count); None for Parquet files and tables, whose rows are numbered from 0
        in the order read.
    origin : str
        The file's path, or ``"table"``.
    sha256 : str or None
        SHA-256 of the file's bytes as stored, compressed or not (None for a table).
    layout : {"outcomes", "winner_loser", "counts"}
        The shape of the table it was read from (see the module documentation).
    """

    arms: tuple[Label, ...]
    first: NDArray[np.int32]
    second: NDArray[np.int32]
    outcome: NDArray[np.int8]
    lines: NDArray[np.int64] | None
    origin: str
    sha256: str | None
    layout: str = "outcomes"

    @property
    def n_rows(self) -> int:
        """Number of comparisons in the log."""
        return int(self.first.size)


# ====================================================================================== public API
def read_comparisons(source: Any, *, first: str = "first", second: str = "second", winner: str = "winner",
                     loser: str | None = None, counts: Sequence[str] | None = None, format: str | None = None,
                     first_wins: Label | Iterable[Label] = DEFAULT_FIRST_WINS,
                     second_wins: Label | Iterable[Label] = DEFAULT_SECOND_WINS,
                     tie_values: Label | Iterable[Label] = DEFAULT_TIE_VALUES) -> ComparisonLog:
    """Read and validate a comparison log (arguments as :func:`~dueling_gym.problems.load_comparisons`), without aggregating it."""
    layout, columns = log_layout(first=first, second=second, winner=winner, loser=loser, counts=counts,
                                 first_wins=first_wins, second_wins=second_wins, tie_values=tie_values)
    check_format(format)
    labels = _winner_labels(first_wins, second_wins, tie_values)
    table = read_table(source, columns, format=format, arguments=_COLUMN_ARGUMENTS[layout])
    if layout == "outcomes":
        arms, first_index, second_index, outcome = _encode_rows(table, columns, labels)
        lines = table.lines
    elif layout == "winner_loser":
        arms, first_index, second_index, outcome = _encode_winner_loser(table, columns)
        lines = table.lines
    else:
        arms, first_index, second_index, outcome, rows = _encode_counts(table, columns)
        lines = None if table.lines is None else np.asarray(table.lines, dtype=np.int64)[rows]
    lines = None if lines is None else read_only(np.asarray(lines, dtype=np.int64))
    return ComparisonLog(arms, read_only(first_index), read_only(second_index), read_only(outcome), lines,
                         table.origin, table.sha256, layout)


def log_layout(*, first: str = "first", second: str = "second", winner: str = "winner", loser: str | None = None,
               counts: Sequence[str] | None = None, first_wins: Label | Iterable[Label] = DEFAULT_FIRST_WINS,
               second_wins: Label | Iterable[Label] = DEFAULT_SECOND_WINS,
               tie_values: Label | Iterable[Label] = DEFAULT_TIE_VALUES) -> tuple[str, tuple[str, ...]]:
    """The layout of a comparison log and the columns it reads, from the arguments that choose them.

    Parameters
    ----------
    first, second, winner, loser, counts, first_wins, second_wins, tie_values
        As for :func:`~dueling_gym.problems.load_comparisons`.

    Returns
    -------
    layout : {"outcomes", "winner_loser", "counts"}
        The shape of the table (see "Layouts" in the module documentation).
    columns : tuple of str
        The columns read, in order: ``(first, second, winner)``, ``(winner, loser)`` or
        ``(first, second, *counts)``.

    Raises
    ------
    ValueError
        On arguments of one layout given with another's (``loser`` with ``counts``, ``first`` or
        ``second`` with ``loser``, ``winner`` with ``counts``, winner labels with either), a
        ``counts`` of other than 2 or 3 columns, or a column named twice.
    TypeError
        On a column name that is not a string, or ``counts`` that is not a tuple or list.
    """
    first, second, winner = (_column_name(role, value) for role, value in (("first", first), ("second", second),
                                                                            ("winner", winner)))
    if loser is not None and counts is not None:
        raise ValueError("loser= (a table of winners and losers) and counts= (a table of counts per pair) describe "
                         "different layouts; pass one of them")
    # Arguments that the chosen layout would not read are refused, not ignored: a user who passed
    # them expected them to matter.
    if loser is not None:
        loser = _column_name("loser", loser)
        if (first, second) != ("first", "second"):
            raise ValueError("with loser=, the systems are in the winner= and loser= columns: first= and second= do not "
                             "apply; leave them out")
        layout, columns, roles = "winner_loser", (winner, loser), "winner and loser"
    elif counts is not None:
        if winner != "winner":
            raise ValueError("with counts=, the counts say who won: winner= does not apply; leave it out")
        layout, columns, roles = "counts", (first, second, *_count_columns(counts)), "first, second and counts"
    else:
        layout, columns, roles = "outcomes", (first, second, winner), "first, second and winner"
    labelled = not all(_is_default(given, default) for given, default in (
        (first_wins, DEFAULT_FIRST_WINS), (second_wins, DEFAULT_SECOND_WINS), (tie_values, DEFAULT_TIE_VALUES)))
    if layout != "outcomes" and labelled:
        table = "a table of winners and losers" if layout == "winner_loser" else "a count table"
        raise ValueError(f"first_wins=, second_wins= and tie_values= label the values of an outcome column, which {table} "
                         "does not have; leave them out")
    if len(set(columns)) < len(columns):
        raise ValueError(f"{roles} must name {_NUMBER_WORDS[len(columns)]} different columns, got {echo(columns)}")
    return layout, columns


# ====================================================================================== encoding
def _encode_rows(table: LogTable, columns: tuple[str, str, str], labels: dict[Label, int],
                 ) -> tuple[tuple[Label, ...], NDArray[np.int32], NDArray[np.int32], NDArray[np.int8]]:
    firsts, seconds, winners = (table.values[column] for column in columns)
    if not firsts:
        raise ValueError(f"the comparison log {table.origin} has no rows: nothing to estimate")
    locate = table.locate
    outcomes = np.empty(len(firsts), dtype=np.int8)
    for row, (first, second, winner) in enumerate(zip(firsts, seconds, winners)):
        _check_two_systems(first, second, columns, row, locate, "on both sides")
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


def _encode_winner_loser(table: LogTable, columns: tuple[str, ...],
                         ) -> tuple[tuple[Label, ...], NDArray[np.int32], NDArray[np.int32], NDArray[np.int8]]:
    winners, losers = (table.values[column] for column in columns)
    if not winners:
        raise ValueError(f"the comparison log {table.origin} has no rows: nothing to estimate")
    locate = table.locate
    for row, (winner, loser) in enumerate(zip(winners, losers)):
        _check_two_systems(winner, loser, columns, row, locate, "as winner and loser")
    arms = _sorted_arms(winners, losers, locate)
    return (arms, _indices(arms, winners), _indices(arms, losers),
            np.full(len(winners), OUTCOME_FIRST_WON, dtype=np.int8))


def _encode_counts(table: LogTable, columns: tuple[str, ...]) -> tuple[
        tuple[Label, ...], NDArray[np.int32], NDArray[np.int32], NDArray[np.int8], NDArray[np.intp]]:
    """The comparisons a count table stands for, and the table row of each."""
    firsts, seconds = table.values[columns[0]], table.values[columns[1]]
    if not firsts:
        raise ValueError(f"the comparison log {table.origin} has no rows: nothing to estimate")
    locate = table.locate
    count_columns = [(column, table.values[column]) for column in columns[2:]]
    # Columns: wins of the first system, wins of the second, ties (zero when no tie column is named).
    counts = np.zeros((len(firsts), 3), dtype=np.int64)
    for row, (first, second) in enumerate(zip(firsts, seconds)):
        _check_two_systems(first, second, columns, row, locate, "on both sides")
        for position, (column, values) in enumerate(count_columns):
            counts[row, position] = _count(values[row], column, row, locate, table.text)
    total = int(counts.sum())
    if total == 0:
        raise ValueError(f"every count of the comparison log {table.origin} is zero: nothing to estimate")
    if total > _MAX_COUNTED:
        raise ValueError(f"the counts of {table.origin} add up to {total:,} comparisons, more than the {_MAX_COUNTED:,} "
                         "a log holds (one entry each)")
    needed = total * _BYTES_PER_COUNTED
    available = available_memory() if needed >= _SMALL_EXPANSION else None
    if available is not None and needed > available:
        raise ValueError(f"the counts of {table.origin} add up to {total:,} comparisons, which need about "
                         f"{needed / 2**30:.1f} GiB (one entry each), more than the {available / 2**30:.1f} GiB this "
                         "machine has available")
    arms = _sorted_arms(firsts, seconds, locate)
    rows = np.repeat(np.arange(len(firsts)), counts.sum(axis=1))
    codes = np.tile(np.array([OUTCOME_FIRST_WON, OUTCOME_SECOND_WON, OUTCOME_TIE], dtype=np.int8), len(firsts))
    outcomes = np.repeat(codes, counts.ravel())
    return arms, _indices(arms, firsts)[rows], _indices(arms, seconds)[rows], outcomes, rows


def _count(value: Any, column: str, row: int, locate: Callable[[int], str], text: bool) -> int:
    """A count of comparisons: a non-negative integer, or the digits of one in a CSV or TSV file."""
    reason = None
    if isinstance(value, bool):
        reason = "a boolean"
    elif isinstance(value, float):
        reason = "NaN" if np.isnan(value) else "a float"
    elif value is None:
        reason = "missing"
    elif isinstance(value, str) and not text:
        reason = "text (a str)"
    elif isinstance(value, str):
        # Only plain digits: int() would also take "+3", " 3", "3_000" and non-ASCII digits.
        if not value:
            reason = "empty"
        elif not (value.isascii() and value.isdigit()):
            reason = "not written as plain digits"
        elif len(value) > len(str(_MAX_COUNTED)):
            reason = f"more than {_MAX_COUNTED:,}"
        else:
            value = int(value)
    elif not isinstance(value, int):
        reason = f"a {type(value).__name__}"
    if reason is None and value < 0:
        reason = "negative"
    if reason is None and value > _MAX_COUNTED:
        reason = f"more than {_MAX_COUNTED:,}"
    if reason is not None:
        raise ValueError(f"{locate(row)}: count {echo(value)} in column {echo(column)} is {reason}; a count must be a "
                         "non-negative integer (a number of comparisons)")
    return value


def _indices(arms: tuple[Label, ...], names: list[Label]) -> NDArray[np.int32]:
    index = {arm: position for position, arm in enumerate(arms)}
    return np.fromiter((index[name] for name in names), dtype=np.int32, count=len(names))


def _check_name(value: Any, column: str, row: int, locate: Callable[[int], str]) -> None:
    if isinstance(value, str):
        if value == "":
            raise ValueError(f"{locate(row)}: empty system name in column {echo(column)}")
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{locate(row)}: system name {echo(value)} in column {echo(column)} must be a string or an "
                         "integer")


def _check_two_systems(first: Any, second: Any, columns: tuple[str, ...], row: int, locate: Callable[[int], str],
                       sides: str) -> None:
    """The names in the first two ``columns`` of ``row`` are valid and differ (``sides`` words where they stand)."""
    _check_name(first, columns[0], row, locate)
    _check_name(second, columns[1], row, locate)
    if first == second:
        raise ValueError(f"{locate(row)}: the same system {echo(first)} {sides}; a comparison needs two different "
                         "systems")


def _sorted_arms(firsts: list[Label], seconds: list[Label], locate: Callable[[int], str]) -> tuple[Label, ...]:
    arms = set(firsts) | set(seconds)
    kinds = {type(arm) for arm in arms}
    if len(kinds) > 1:
        row = next(row for row, (a, b) in enumerate(zip(firsts, seconds)) if isinstance(a, int) or isinstance(b, int))
        raise ValueError(f"system names mix strings and integers (an integer at {locate(row)}); use one kind")
    # A non-empty log without self-comparisons (refused row by row) names at least 2 systems.
    return tuple(sorted(arms))


# ====================================================================================== argument checks
def _column_name(role: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{role} must be a column name (a string), got {echo(value)}")
    return value


#: The arguments that choose the columns of each layout, as a message names them.
_COLUMN_ARGUMENTS = {"outcomes": "first=, second= and winner=", "winner_loser": "winner= and loser=",
                     "counts": "first=, second= and counts="}
_NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}


def _is_default(given: Any, default: tuple[Label, ...]) -> bool:
    return given is default or (isinstance(given, (tuple, list)) and tuple(given) == default)


def _count_columns(counts: Any) -> tuple[str, ...]:
    if not isinstance(counts, (tuple, list)):
        raise TypeError("counts must be a tuple of 2 or 3 column names (wins of the first system, wins of the second, "
                        f"and optionally ties), got {echo(counts)}")
    if len(counts) not in (2, 3):
        raise ValueError("counts must name 2 or 3 columns (wins of the first system, wins of the second, and "
                         f"optionally ties), got {len(counts)}: {echo(counts)}")
    return tuple(_column_name(f"counts[{position}]", column) for position, column in enumerate(counts))


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
