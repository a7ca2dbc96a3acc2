"""Duels played inside compiled loops: a duel table, a block of uniforms and the bookkeeping.

A runner that owns the environment (:func:`~dueling_gym.experiments.run_pure_exploration`)
lets a compiled agent play many duels per call instead of one ``act``/``observe`` round trip
per duel.  :class:`DuelSource` holds what the compiled loop needs to draw outcomes *exactly*
as the environment would:

* ``probabilities[row]``: the win probability of the row's first edge, ``row_of[e, e2]`` the
  row of the duel ``(e, e2)`` (``-1`` when the edges are incomparable);
* a block of uniforms from the environment's generator, consumed one per duel (the first edge
  wins iff ``u < probabilities[row]``), refilled by a callback when used up;
* per-row duel and win counts, the running regret total (added duel by duel in float64, as the
  environment adds it) and a trace of the block's duels ``(e, e2, first_won)``.

The runner builds the source from its environment, lets the agent play
(:meth:`CompiledAgent.play_duels <dueling_gym.agents.cpe.CompiledAgent.play_duels>`) and
writes the counts, the regret and the unused uniforms back, so the environment ends in the
state the one-duel-at-a-time loop would have left.
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np
from numpy.typing import NDArray

__all__ = ["DuelSource", "draw_outcome"]

# Slots of DuelSource.position.
CURSOR, FILLED = 0, 1


class DuelSource:
    """Outcomes for compiled duel loops, drawn as the environment draws them.

    Parameters
    ----------
    probabilities : array, shape (n_rows,)
        Win probability of the first contestant of each row of the duel table.
    row_of : int array, shape (m, m)
        Row of the duel ``(e, e2)``; ``-1`` for incomparable edges.
    regrets : array, shape (n_rows,)
        Regret of each row (accumulated into ``totals``).
    uniforms : array
        Uniforms not yet used (the environment's current block, possibly empty).
    refill : callable
        ``refill() -> array``: the next block of uniforms of the environment's generator.
    record : bool, default False
        Keep every played duel (:attr:`duels`), not only the current block's trace.
    total : float, default 0.0
        The regret total so far; each duel's regret is added to it in order.
    """

    def __init__(self, probabilities: NDArray[np.float64], row_of: NDArray[np.int64], regrets: NDArray[np.float64],
                 uniforms: NDArray[np.float64], refill: Callable[[], NDArray[np.float64]], *, record: bool = False,
                 total: float = 0.0):
        self.probabilities = np.ascontiguousarray(probabilities, dtype=np.float64)
        self.row_of = np.ascontiguousarray(row_of, dtype=np.int64)
        if self.row_of.ndim != 2 or self.row_of.shape[0] != self.row_of.shape[1]:
            raise ValueError(f"row_of must be a square matrix, got shape {self.row_of.shape}")
        self.regrets = np.ascontiguousarray(regrets, dtype=np.float64)
        if self.regrets.shape != self.probabilities.shape:
            raise ValueError("regrets and probabilities need one entry per row of the duel table")
        self.counts = np.zeros(self.probabilities.shape[0], dtype=np.int64)
        self.first_wins = np.zeros(self.probabilities.shape[0], dtype=np.int64)
        self.totals = np.array([float(total)])
        self.uniforms = np.ascontiguousarray(uniforms, dtype=np.float64)
        self.position = np.array([0, 0], dtype=np.int64)   # cursor in uniforms, duels in the trace
        self._refill = refill
        self.record = bool(record)
        self._recorded: list[NDArray[np.int64]] = []
        self.trace = np.zeros((0, 3), dtype=np.int64)
        self.played = 0

    @property
    def n_edges(self) -> int:
        return self.row_of.shape[0]

    def begin_block(self, wanted: int) -> int:
        """Prepare a block of at most ``wanted`` duels; returns how many the loop may play."""
        if self.position[CURSOR] >= self.uniforms.shape[0]:
            self.uniforms = np.ascontiguousarray(self._refill(), dtype=np.float64)
            self.position[CURSOR] = 0
        budget = min(int(wanted), self.uniforms.shape[0] - int(self.position[CURSOR]))
        if self.trace.shape[0] < budget:
            self.trace = np.zeros((max(budget, 64), 3), dtype=np.int64)
        self.position[FILLED] = 0
        return budget

    def end_block(self) -> NDArray[np.int64]:
        """The block's duels ``(e, e2, first_won)`` (a view, valid until the next block)."""
        played = self.trace[:self.position[FILLED]]
        self.played += played.shape[0]
        if self.record and played.shape[0]:
            self._recorded.append(played.copy())
        return played

    @property
    def arrays(self) -> tuple:
        """The tuple the compiled loops take (see ``draw_outcome`` in this module)."""
        return (self.probabilities, self.row_of, self.regrets, self.counts, self.first_wins, self.totals,
                self.uniforms, self.position, self.trace)

    @property
    def duels(self) -> NDArray[np.int64]:
        """Every duel played so far with ``record=True``: rows ``(e, e2, first_won)``."""
        if not self._recorded:
            return np.zeros((0, 3), dtype=np.int64)
        return np.concatenate(self._recorded)

    @property
    def remaining_uniforms(self) -> NDArray[np.float64]:
        """The uniforms of the current block not used yet."""
        return self.uniforms[self.position[CURSOR]:]


@numba.njit(cache=True, nogil=True)
def draw_outcome(source, first, second):
    """Play the duel ``(first, second)`` from ``DuelSource.arrays``: True iff ``first`` won.

    The caller guarantees a uniform is left in the block (``begin_block``'s budget).
    """
    probabilities, row_of, regrets, counts, first_wins, totals, uniforms, position, trace = source
    row = row_of[first, second]
    if row < 0:
        raise ValueError("a compiled agent asked for a duel of incomparable edges")
    cursor = position[0]
    won = uniforms[cursor] < probabilities[row]
    position[0] = cursor + 1
    counts[row] += 1
    if won:
        first_wins[row] += 1
    totals[0] += regrets[row]
    filled = position[1]
    trace[filled, 0] = first
    trace[filled, 1] = second
    trace[filled, 2] = won
    position[1] = filled + 1
    return won
