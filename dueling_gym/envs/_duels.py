"""The duel engine shared by every environment and by the simulator's Python loop.

A *duel table* has one row per duel the environment can play: column 0 is the probability that
the row's first contestant wins, columns ``1..m`` the regret of the duel under ``m`` regret
notions (:meth:`~dueling_gym.problems.PreferenceMatrix.duel_table` builds it for a K-armed
problem, row ``i * K + j`` for the duel ``(i, j)``).  Playing row ``r``:

1. draw one uniform ``u`` in ``[0, 1)`` from the episode's ``numpy.random.Generator``;
2. the first contestant wins iff ``u < table[r, 0]``;
3. add ``table[r, 1:]`` to the running totals of every notion and count the duel.

:class:`DuelEngine` plays one duel per call (the single environments, the PettingZoo game
through them, and :func:`~dueling_gym.experiments.simulate`'s Python loop);
:class:`BatchDuelEngine` plays one duel in each of ``num_envs`` independent runs per call (the
native vector environment).  Uniforms are drawn in blocks (one Generator call per
:data:`~dueling_gym.envs.UNIFORM_BLOCK` duels); a ``Generator`` gives the same numbers whatever the block size, so
a run is identical to one that draws its uniforms one at a time -- which is what the compiled
loop of :func:`~dueling_gym.experiments.simulate` does, duel for duel.
"""

from __future__ import annotations

from collections import defaultdict
from operator import add
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["DuelEngine", "BatchDuelEngine", "UNIFORM_BLOCK"]

#: Uniforms drawn per Generator call by :class:`DuelEngine`.
UNIFORM_BLOCK = 4096
#: Largest table :class:`DuelEngine` converts to Python lists when loaded (K = 256 arms); larger
#: tables are converted row by row as rows are played, so loading a 2000-armed problem (4M rows)
#: costs no more than its NumPy table.
LIST_ROWS = 1 << 16


def _check_table(table: NDArray[np.float64], n_notions: int) -> NDArray[np.float64]:
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2 or table.shape[1] != 1 + n_notions or table.shape[0] == 0:
        raise ValueError(
            f"a duel table needs shape (n_rows, {1 + n_notions}) (win probability, then one regret per "
            f"notion), got {table.shape}"
        )
    return table


class DuelEngine:
    """Plays duels one at a time from a duel table and keeps the episode's bookkeeping.

    Parameters
    ----------
    notions : sequence of str
        Names of the regret columns of the tables this engine plays (in column order).

    Attributes
    ----------
    cumulative : list of float
        Regret accumulated this episode per notion.  A new list after every duel (never
        changed in place), so a caller may keep a reference.
    t : int
        Duels played this episode.

    Notes
    -----
    Regrets are Python floats added in duel order, so totals are bit-identical to adding the
    table entries one by one in float64 (as the compiled simulator does).
    """

    def __init__(self, notions: Sequence[str]):
        self.notions: tuple[str, ...] = tuple(notions)
        if not self.notions:
            raise ValueError("a duel engine needs at least one regret notion")
        if len(self.notions) == 1:  # the same duel with a scalar addition (about 60 ns less per duel)
            self.duel = self._duel_one_notion
        self.n_rows = 0
        self._probabilities: list[float] = []
        self._regrets: list[tuple[float, ...]] = []
        self._rng: np.random.Generator | None = None
        self._uniforms: list[float] = []
        self._cursor = 0
        self._counts: list[int] = []
        self._first_wins: list[int] = []
        self.cumulative: list[float] = [0.0] * len(self.notions)
        self.t = 0

    def load(self, table: NDArray[np.float64]) -> None:
        """Play ``table`` from now on (a new problem); the episode's bookkeeping is kept."""
        table = _check_table(table, len(self.notions))
        if table.shape[0] <= LIST_ROWS:
            self._probabilities = table[:, 0].tolist()
            self._regrets = [tuple(row) for row in table[:, 1:].tolist()]
        else:
            self._probabilities = _ProbabilityRows(table)
            self._regrets = _RegretRows(table)
        if table.shape[0] != self.n_rows:
            self.n_rows = table.shape[0]
            self._counts = self._new_counter()
            self._first_wins = self._new_counter()

    def _new_counter(self) -> list[int] | defaultdict[int, int]:
        # A large table keeps its counts sparse: an episode plays a tiny share of its rows.
        return [0] * self.n_rows if self.n_rows <= LIST_ROWS else defaultdict(int)

    def reset(self, rng: np.random.Generator) -> None:
        """Start an episode whose uniforms come from ``rng`` (counts and totals back to zero)."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        self._rng = rng
        self._uniforms = []
        self._cursor = 0
        self._counts = self._new_counter()
        self._first_wins = self._new_counter()
        self.cumulative = [0.0] * len(self.notions)
        self.t = 0

    def duel(self, row: int) -> tuple[bool, tuple[float, ...]]:
        """Play row ``row``: returns whether its first contestant won and the duel's regrets.

        ``row`` is not range-checked (callers validate their actions); the engine must have
        been :meth:`reset` first.
        """
        cursor = self._cursor
        if cursor == len(self._uniforms):
            self._uniforms = self._rng.random(UNIFORM_BLOCK).tolist()
            cursor = 0
        first_won = self._uniforms[cursor] < self._probabilities[row]
        self._cursor = cursor + 1
        self._counts[row] += 1
        if first_won:
            self._first_wins[row] += 1
        regrets = self._regrets[row]
        self.cumulative = list(map(add, self.cumulative, regrets))
        self.t += 1
        return first_won, regrets

    def _duel_one_notion(self, row: int) -> tuple[bool, tuple[float, ...]]:
        cursor = self._cursor
        if cursor == len(self._uniforms):
            self._uniforms = self._rng.random(UNIFORM_BLOCK).tolist()
            cursor = 0
        first_won = self._uniforms[cursor] < self._probabilities[row]
        self._cursor = cursor + 1
        self._counts[row] += 1
        if first_won:
            self._first_wins[row] += 1
        regrets = self._regrets[row]
        self.cumulative = [self.cumulative[0] + regrets[0]]
        self.t += 1
        return first_won, regrets

    def regrets(self, row: int) -> tuple[float, ...]:
        """The regrets of row ``row`` (one per notion), without playing it."""
        return self._regrets[row]

    # ------------------------------------------------------------ duels played elsewhere
    # A compiled loop may play a block of this engine's duels itself (the pure-exploration
    # runner does, for compiled agents): it takes the table and the unused uniforms, draws
    # further blocks from the same generator, and hands back what it played, so the episode
    # continues exactly as if every duel had gone through :meth:`duel`.
    def table(self) -> NDArray[np.float64]:
        """The loaded duel table as an array (win probability, then one regret per notion)."""
        return np.column_stack([np.asarray([self._probabilities[row] for row in range(self.n_rows)]),
                                np.asarray([self._regrets[row] for row in range(self.n_rows)])])

    def unused_uniforms(self) -> NDArray[np.float64]:
        """The uniforms drawn but not yet used, in the order :meth:`duel` would use them."""
        return np.asarray(self._uniforms[self._cursor:], dtype=np.float64)

    def draw_uniforms(self) -> NDArray[np.float64]:
        """The next block of :data:`~dueling_gym.envs.UNIFORM_BLOCK` uniforms of the episode's generator."""
        if self._rng is None:
            raise RuntimeError("the engine must be reset before it draws uniforms")
        return self._rng.random(UNIFORM_BLOCK)

    def record_played(self, counts: NDArray[np.int64], first_wins: NDArray[np.int64], cumulative: Sequence[float],
                      unused_uniforms: NDArray[np.float64]) -> None:
        """Take the bookkeeping of duels played elsewhere: per-row counts and first-contestant
        wins of those duels, the running totals after them, and the uniforms left unused."""
        counts = np.asarray(counts, dtype=np.int64)
        first_wins = np.asarray(first_wins, dtype=np.int64)
        if counts.shape != (self.n_rows,) or first_wins.shape != (self.n_rows,):
            raise ValueError(f"counts and first_wins need one entry per row ({self.n_rows})")
        if len(cumulative) != len(self.notions):
            raise ValueError(f"cumulative needs one total per notion ({len(self.notions)})")
        for row in np.flatnonzero(counts).tolist():
            self._counts[row] += int(counts[row])
            self._first_wins[row] += int(first_wins[row])
        self.cumulative = [float(total) for total in cumulative]
        self.t += int(counts.sum())
        self._uniforms = np.asarray(unused_uniforms, dtype=np.float64).tolist()
        self._cursor = 0

    @property
    def counts(self) -> NDArray[np.int64]:
        """How often each row was played this episode."""
        return _dense(self._counts, self.n_rows)

    @property
    def first_wins(self) -> NDArray[np.int64]:
        """How often the first contestant of each row won this episode."""
        return _dense(self._first_wins, self.n_rows)


def _dense(counter: list[int] | defaultdict[int, int], n_rows: int) -> NDArray[np.int64]:
    if isinstance(counter, list):
        return np.array(counter, dtype=np.int64)
    dense = np.zeros(n_rows, dtype=np.int64)
    if counter:
        dense[np.fromiter(counter.keys(), dtype=np.int64, count=len(counter))] = list(counter.values())
    return dense


class _ProbabilityRows(dict):
    """Win probabilities of a large duel table, converted to Python floats on first use."""

    def __init__(self, table: NDArray[np.float64]):
        super().__init__()
        self._column = table[:, 0]

    def __missing__(self, row: int) -> float:
        value = self[row] = float(self._column[row])
        return value


class _RegretRows(dict):
    """Regret rows of a large duel table, converted to tuples of Python floats on first use."""

    def __init__(self, table: NDArray[np.float64]):
        super().__init__()
        self._regrets = table[:, 1:]

    def __missing__(self, row: int) -> tuple[float, ...]:
        value = self[row] = tuple(self._regrets[row].tolist())
        return value


class BatchDuelEngine:
    """Plays one duel in each of ``num_envs`` independent runs per call, with NumPy.

    Parameters
    ----------
    num_envs : int
        Number of runs.
    n_rows : int
        Rows of one run's duel table.
    notions : sequence of str
        Names of the regret columns.
    per_env_tables : bool
        ``False``: every run plays the one table given to :meth:`load`; ``True``: each run has
        its own table (``load(table, env_index)``).
    track_counts : bool, default False
        Keep per-run ``counts`` and ``first_wins`` (an ``(num_envs, n_rows)`` array each).

    Notes
    -----
    One call of :meth:`draw` takes ``num_envs`` uniforms from the generator, one per run in run
    order, so with ``num_envs == 1`` the outcomes equal :class:`DuelEngine`'s on the same
    generator.  The tables are stored as two contiguous arrays (win probabilities; regrets)
    gathered with ``ndarray.take``, several times faster than fancy-indexing one wide table.
    """

    def __init__(self, num_envs: int, n_rows: int, notions: Sequence[str], *, per_env_tables: bool,
                 track_counts: bool = False):
        self.num_envs = int(num_envs)
        self.n_rows = int(n_rows)
        self.notions: tuple[str, ...] = tuple(notions)
        n_notions = len(self.notions)
        tables = self.num_envs if per_env_tables else 1
        self._probabilities = np.zeros(tables * self.n_rows)
        self._regret_table = np.zeros((tables * self.n_rows, n_notions))
        self._offsets = np.arange(self.num_envs, dtype=np.int64) * self.n_rows if per_env_tables else None
        self.cumulative = np.zeros((self.num_envs, n_notions))
        self.t = np.zeros(self.num_envs, dtype=np.int64)
        self.counts = np.zeros((self.num_envs, self.n_rows), dtype=np.int64) if track_counts else None
        self.first_wins = np.zeros((self.num_envs, self.n_rows), dtype=np.int64) if track_counts else None
        self._rng: np.random.Generator | None = None

    def load(self, table: NDArray[np.float64], env_index: int | None = None) -> None:
        """Install a duel table: the shared one (``env_index=None``) or run ``env_index``'s."""
        table = _check_table(table, len(self.notions))
        if table.shape[0] != self.n_rows:
            raise ValueError(f"the duel table has {table.shape[0]} rows, the engine {self.n_rows}")
        if env_index is None:
            if self._offsets is not None:
                raise ValueError("this engine has one table per run: give env_index")
            rows = slice(None)
        else:
            if self._offsets is None:
                raise ValueError("this engine has one shared table: give no env_index")
            rows = slice(env_index * self.n_rows, (env_index + 1) * self.n_rows)
        self._probabilities[rows] = table[:, 0]
        self._regret_table[rows] = table[:, 1:]

    def reset(self, rng: np.random.Generator) -> None:
        """Start new episodes in every run, drawing from ``rng``."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        self._rng = rng
        self.cumulative[:] = 0.0
        self.t[:] = 0
        if self.counts is not None:
            self.counts[:] = 0
            self.first_wins[:] = 0

    def draw(self, rows: NDArray[np.int64]) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
        """Play row ``rows[e]`` in every run ``e``: returns who won and the regrets, ``(num_envs, m)``.

        ``rows`` are int64 and not range-checked.  Nothing is accumulated
        yet: a run that starts a new episode instead of playing is passed to :meth:`restart`
        before :meth:`accumulate`.
        """
        if self._offsets is not None:
            rows = rows + self._offsets
        first_won = self._rng.random(self.num_envs) < self._probabilities.take(rows)
        return first_won, self._regret_table.take(rows, axis=0)

    def restart(self, runs: NDArray[np.bool_], first_won: NDArray[np.bool_], regrets: NDArray[np.float64]) -> None:
        """Runs ``runs`` start a new episode instead of playing: zero their outcome, regret and totals."""
        regrets[runs] = 0.0
        first_won[runs] = False
        self.cumulative[runs] = 0.0
        self.t[runs] = -1
        if self.counts is not None:
            self.counts[runs] = 0
            self.first_wins[runs] = 0

    def accumulate(self, rows: NDArray[np.int64], first_won: NDArray[np.bool_], regrets: NDArray[np.float64],
                   played: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
        """Add a step's regrets to the totals and count the duels played; returns the new totals.

        The totals array is replaced, not changed in place, so earlier returns stay valid.
        """
        self.cumulative = self.cumulative + regrets
        self.t += 1
        if self.counts is not None:
            runs = np.arange(self.num_envs) if played is None else np.flatnonzero(played)
            played_rows = rows if played is None else rows[played]
            self.counts[runs, played_rows] += 1
            self.first_wins[runs, played_rows] += first_won[runs]
        return self.cumulative
