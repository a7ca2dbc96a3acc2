"""Dueling-bandit problems estimated from logs of pairwise comparisons.

A comparison log has one row per comparison: the two systems compared (columns ``first`` and
``second``) and the outcome (column ``winner``): A/B tests, human or model judges comparing two
outputs, arena-style battles between language models.  :func:`~dueling_gym.problems.load_comparisons` turns such a
log into a :class:`~dueling_gym.problems.PreferenceMatrix` whose entry ``P[i, j]`` is the
empirical probability that system ``i`` beats system ``j``, with the counts, confidence
intervals and the log itself recorded in its ``provenance``::

    problem = load_comparisons("battles.jsonl", first="model_a", second="model_b")
    env = gym.make("DuelingBandit-v0", preferences=problem)

The log is read by :func:`~dueling_gym.problems.comparison_layouts.read_comparisons`: its sources
(files, compressed or not, and tables in memory) are described in
:mod:`dueling_gym.problems.comparison_files`, its three layouts (an outcome column, winner and
loser columns, count columns) and the values of the winner column in
:mod:`dueling_gym.problems.comparison_layouts`.  This module aggregates it.

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

Sparse logs.  A fit relates two systems only through a chain of comparisons, so a log whose
systems fall into groups never compared with each other is refused (naming the groups), unless
systems are dropped first:

* ``min_comparisons=n`` drops every system with fewer than ``n`` comparisons (those behind the
  matrix: ties count with ``ties="half"`` only).  Dropping a system takes its comparisons from
  its opponents, so this repeats until every system left has ``n``;
* ``components="largest"`` (default ``"error"``) then keeps only the largest group of systems
  linked by comparisons (the one with more comparisons among groups of equal size, then the one
  whose first system sorts first).

The comparisons of a dropped system go with it.  ``provenance["dropped_systems"]`` names every
dropped system, ``["dropped_few_comparisons"]`` and ``["dropped_disconnected"]`` those dropped
by each rule, ``["rows_dropped"]`` counts the comparisons removed, and the problem's ``source``
says how many systems were dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.problems.bradley_terry import comparison_groups, describe_groups, fit_bradley_terry
from dueling_gym.problems.comparison_files import FORMATS, file_stem
from dueling_gym.problems.comparison_layouts import (
    DEFAULT_FIRST_WINS,
    DEFAULT_SECOND_WINS,
    DEFAULT_TIE_VALUES,
    LAYOUTS,
    OUTCOME_FIRST_WON,
    OUTCOME_SECOND_WON,
    OUTCOME_TIE,
    ComparisonLog,
    Label,
    log_layout,
    read_comparisons,
)
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.validation import (
    MAX_ECHO,
    MAX_LISTED,
    check_integer,
    check_probability,
    check_real_array,
    echo,
    echo_list,
    read_only,
)

__all__ = [
    "ComparisonLog",
    "TIE_RULES",
    "FILL_METHODS",
    "COMPONENT_RULES",
    "FORMATS",
    "LAYOUTS",
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
#: What ``components=`` does with systems in groups never compared with each other.
COMPONENT_RULES = ("error", "largest")


# ====================================================================================== public API
def load_comparisons(source: Any, *, first: str = "first", second: str = "second", winner: str = "winner",
                     loser: str | None = None, counts: Sequence[str] | None = None, format: str | None = None,
                     ties: str = "half", fill_missing: str | None = None, min_comparisons: int = 0,
                     components: str = "error", confidence: float = 0.95,
                     name: str | None = None, first_wins: Label | Iterable[Label] = DEFAULT_FIRST_WINS,
                     second_wins: Label | Iterable[Label] = DEFAULT_SECOND_WINS,
                     tie_values: Label | Iterable[Label] = DEFAULT_TIE_VALUES) -> PreferenceMatrix:
    """A dueling-bandit problem estimated from a log of pairwise comparisons.

    Parameters
    ----------
    source : path or table
        A ``.csv``, ``.tsv``, ``.jsonl``/``.ndjson`` or ``.parquet`` file (``str`` or
        ``os.PathLike``; the text formats possibly compressed, ``.gz``, ``.bz2`` or ``.xz``), or
        a mapping of column name to sequence, a pyarrow ``Table`` or a DataFrame-like object.
    first, second, winner : str
        Names of the columns holding the two systems and the outcome.
    loser : str, optional
        The column of the losing system, in a table of winners and losers: ``winner`` then
        names the column of the winning system, and ``first``/``second`` are not used.
    counts : tuple of 2 or 3 str, optional
        The count columns of a table with one row per pair (``first`` and ``second``): the
        wins of the first system, those of the second, and optionally the ties.  ``winner`` is
        then not used.
    format : {None, "csv", "tsv", "jsonl", "ndjson", "parquet"}
        The file's format when its name does not say it (default: from the suffix, under a
        compression suffix if any).  Files only.
    ties : {"half", "drop", "separate"}
        The tie rule (see the module documentation).
    fill_missing : {None, "bradley_terry"}
        None: pairs never compared are refused.  ``"bradley_terry"``: they are filled with a
        Bradley–Terry model fitted by maximum likelihood to the whole log.
    min_comparisons : int, default 0
        Systems with fewer comparisons are dropped, repeatedly, until every system left has
        this many (see "Sparse logs" in the module documentation).
    components : {"error", "largest"}
        ``"largest"``: keep only the largest group of systems linked by comparisons, dropping
        the others.  ``"error"``: a log whose groups a Bradley–Terry fill cannot relate is refused.
    confidence : float, default 0.95
        Level of the Wilson score intervals in the provenance, in ``(0, 1)``.
    name : str, optional
        Name of the problem (default: the file's name without its format and compression suffixes,
        or ``"comparison log"``).
    first_wins, second_wins, tie_values : label or iterable of labels
        Winner values meaning "the first system won", "the second system won" and "tie" (a
        string or an integer is one label).  The three sets must be disjoint.  Outcome
        layout only.

    Returns
    -------
    PreferenceMatrix
        Arm ``i`` is the ``i``-th system kept, in sorted order.  ``provenance`` holds: ``arms``;
        ``wins`` (``wins[i, j]``: how often ``i`` beat ``j``), ``ties`` (symmetric), ``counts``
        (all comparisons of each pair) and ``sample_sizes`` (those behind ``P[i, j]``), K×K
        int64; ``ci_lower`` / ``ci_upper`` (Wilson intervals, NaN where nothing was compared),
        ``confidence``, ``interval_method``; ``tie_rule``, ``ties_total``, ``ties_dropped``;
        ``layout``, ``columns``, ``log_origin``, ``log_sha256``, ``rows_read`` (comparisons read);
        ``min_comparisons``, ``components``, ``dropped_systems``, ``dropped_few_comparisons``,
        ``dropped_disconnected`` (names), ``rows_dropped``; ``fill_missing``,
        ``filled_pairs`` (pairs of names), ``bradley_terry_log_strengths`` (None unless a pair
        was filled); and the log itself, ``log_first``, ``log_second``, ``log_outcome``,
        ``log_lines`` (see :class:`~dueling_gym.problems.comparison_layouts.ComparisonLog`; the
        comparisons of the systems kept), which the replay environment plays back.

    Raises
    ------
    ValueError
        On a missing column (the message lists the columns found), an unreadable row (file and
        line), a winner that is neither side nor a label, a count that is not a non-negative
        integer, the same system on both sides of a row (so a log names at least two systems), an
        empty log, a file whose name gives no known format (without ``format``), a corrupt
        compressed file, arguments of one layout given with another's, fewer than two systems
        left after dropping, pairs never compared (listed by name) without ``fill_missing``, or
        a Bradley–Terry fit whose maximum-likelihood estimate does not exist.
    TypeError
        On arguments of the wrong type.
    ImportError
        For a Parquet file without pyarrow (naming the extra that installs it).
    """
    log = read_comparisons(source, first=first, second=second, winner=winner, loser=loser, counts=counts,
                           format=format, first_wins=first_wins, second_wins=second_wins, tie_values=tie_values)
    if name is None:
        name = "comparison log" if log.sha256 is None else file_stem(log.origin)
    elif not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__}")
    columns = log_layout(first=first, second=second, winner=winner, loser=loser, counts=counts,
                         first_wins=first_wins, second_wins=second_wins, tie_values=tie_values)[1]
    return preference_from_log(log, ties=ties, fill_missing=fill_missing, min_comparisons=min_comparisons,
                               components=components, confidence=confidence, name=name, columns=columns)


def preference_from_log(log: ComparisonLog, *, ties: str = "half", fill_missing: str | None = None,
                        min_comparisons: int = 0, components: str = "error", confidence: float = 0.95,
                        name: str | None = None, columns: tuple[str, ...] | None = None) -> PreferenceMatrix:
    """Aggregate a :class:`~dueling_gym.problems.comparison_layouts.ComparisonLog` into a :class:`~dueling_gym.problems.PreferenceMatrix` (see :func:`~dueling_gym.problems.load_comparisons`)."""
    if not isinstance(log, ComparisonLog):
        raise TypeError(f"log must be a ComparisonLog (see read_comparisons), got {type(log).__name__}")
    _check_choice("ties", ties, TIE_RULES)
    if fill_missing is not None:
        _check_choice("fill_missing", fill_missing, FILL_METHODS, none_allowed=True)
    min_comparisons = check_integer("min_comparisons", min_comparisons, minimum=0)
    _check_choice("components", components, COMPONENT_RULES)
    confidence = check_probability("confidence", confidence, open_low=True, open_high=True)
    rows_read = log.n_rows
    log, few, apart = _keep_systems(log, ties, min_comparisons, components)
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
        _refuse_disconnected(sample_sizes, log.arms)
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
        "layout": log.layout,
        "columns": columns,
        "log_origin": log.origin,
        "log_sha256": log.sha256,
        "rows_read": rows_read,
        "min_comparisons": min_comparisons,
        "components": components,
        "dropped_systems": tuple(sorted(few + apart)),
        "dropped_few_comparisons": few,
        "dropped_disconnected": apart,
        "rows_dropped": rows_read - log.n_rows,
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
              + _dropped_text(few, apart, min_comparisons)
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


# ====================================================================================== aggregation
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


def _pairs_text(pairs: list[tuple[Label, Label]], shown: int = MAX_LISTED) -> str:
    """Up to ``shown`` pairs of names, fewer when the names are long (each is capped by :func:`echo`),
    then how many more: a sparse log of K systems misses up to K(K-1)/2 pairs."""
    parts: list[str] = []
    for a, b in pairs[:shown]:
        if sum(map(len, parts)) > 4 * MAX_ECHO:
            break
        parts.append(f"({echo(a)}, {echo(b)})")
    return ", ".join(parts) + (f" and {len(pairs) - len(parts):,} more" if len(pairs) > len(parts) else "")


def _keep_systems(log: ComparisonLog, ties: str, min_comparisons: int, components: str,
                  ) -> tuple[ComparisonLog, tuple[Label, ...], tuple[Label, ...]]:
    """The log without the systems that ``min_comparisons`` and ``components`` drop, and the names dropped by each."""
    if min_comparisons == 0 and components == "error":
        return log, (), ()
    n_arms = len(log.arms)
    wins, tie_counts = _pair_counts(log, n_arms)
    sizes = wins + wins.T + (tie_counts if ties == "half" else 0)
    keep = np.ones(n_arms, dtype=bool)
    totals = sizes.sum(axis=1)
    below = totals < min_comparisons
    # Dropping a system takes its comparisons from its opponents, which may then fall below the
    # minimum in turn; each round only subtracts the columns just dropped, O(K^2) in all.
    while below.any():
        keep &= ~below
        totals = totals - sizes[:, below].sum(axis=1)
        below = keep & (totals < min_comparisons)
    few = ~keep
    apart = np.zeros(n_arms, dtype=bool)
    kept = np.flatnonzero(keep)
    if components == "largest" and kept.size:
        inner = sizes[np.ix_(kept, kept)]
        groups = comparison_groups(inner)
        # max keeps the first of equals: groups come largest first, then by their first system.
        largest = max(groups, key=lambda group: (len(group), int(inner[np.ix_(group, group)].sum())))
        apart[kept] = True
        apart[kept[largest]] = False
        keep &= ~apart
    few_names = tuple(arm for arm, dropped in zip(log.arms, few) if dropped)
    apart_names = tuple(arm for arm, dropped in zip(log.arms, apart) if dropped)
    if np.count_nonzero(keep) < 2:
        dropped = " and ".join(f"{part.replace(': ', ' (', 1)})"
                               for part in _dropped_parts(few_names, apart_names, min_comparisons))
        raise ValueError(f"fewer than 2 systems are left after dropping {dropped}: nothing to estimate"
                         + ("; lower min_comparisons" if few_names else ""))
    if keep.all():
        return log, (), ()
    rows = keep[log.first] & keep[log.second]
    position = (np.cumsum(keep) - 1).astype(np.int32)
    restricted = ComparisonLog(tuple(arm for arm, kept_arm in zip(log.arms, keep) if kept_arm),
                               read_only(position[log.first[rows]]), read_only(position[log.second[rows]]),
                               read_only(log.outcome[rows]), None if log.lines is None else read_only(log.lines[rows]),
                               log.origin, log.sha256, log.layout)
    return restricted, few_names, apart_names


def _dropped_parts(few: tuple[Label, ...], apart: tuple[Label, ...], min_comparisons: int) -> list[str]:
    """``"2 with fewer than 3 comparisons: c, d"`` per rule that dropped systems, naming a few of them."""
    parts = []
    if few:
        parts.append(f"{len(few):,} with fewer than {min_comparisons:,} comparisons: {echo_list(few)}")
    if apart:
        parts.append(f"{len(apart):,} outside the largest group of systems compared with each other: "
                     f"{echo_list(apart)}")
    return parts


def _dropped_text(few: tuple[Label, ...], apart: tuple[Label, ...], min_comparisons: int) -> str:
    """``, 3 systems dropped (...)`` for the problem's source; empty when none was."""
    if not few and not apart:
        return ""
    return f", {len(few) + len(apart):,} systems dropped ({'; '.join(_dropped_parts(few, apart, min_comparisons))})"


def _refuse_disconnected(sizes: NDArray[np.int64], arms: tuple[Label, ...]) -> None:
    groups = comparison_groups(sizes)
    if len(groups) > 1:
        raise ValueError(f"the comparisons fall into {len(groups):,} groups of systems never compared with each other, "
                         f"which a Bradley-Terry fit cannot relate: {describe_groups(groups, arms)}. Pass "
                         "components='largest' (on the command line: --components largest) to keep the largest group, "
                         "or min_comparisons=N (--min-comparisons N) to drop rarely compared systems; the systems "
                         "dropped are recorded in provenance['dropped_systems']")


# ====================================================================================== argument checks
def _check_choice(argument: str, value: Any, choices: tuple[str, ...], none_allowed: bool = False) -> None:
    allowed = [*choices, *([None] if none_allowed else [])]
    if not isinstance(value, str):
        raise TypeError(f"{argument} must be one of {allowed}, got {echo(value)}")
    if value not in choices:
        raise ValueError(f"{argument} must be one of {allowed}, got {echo(value)}")
