"""The K-armed dueling-bandit problem: a validated, immutable preference matrix.

Conventions: arms are ``0..K-1``; ``P[i, j]`` is the probability that arm ``i``
beats arm ``j``; ``P + P.T == 1`` and the diagonal is ``1/2``.  Copeland wins and losses are
*strict* (a tied pair ``P[i, j] == 1/2`` counts for neither side), so with ties
``wins[i] + losses[i] < K - 1``.
"""

from __future__ import annotations

from functools import cached_property
from types import MappingProxyType
from typing import Any, Literal, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.validation import (
    MAX_ATOL,
    antisymmetric_rebuild,
    check_atol,
    check_preference_entries,
    echo,
    read_only,
    real_matrix,
)

__all__ = [
    "PreferenceMatrix",
    "REGRET_NOTIONS",
    "RegretNotion",
    "MAX_ATOL",
    "check_atol",
    "defined_notions",
]

RegretNotion = Literal["copeland_komiyama", "copeland_zoghi", "condorcet_strong", "condorcet_weak", "borda"]

#: Every per-duel regret the library knows, with its definition and the papers that use it.
REGRET_NOTIONS: dict[str, str] = {
    "copeland_komiyama": "(L_i + L_j - 2 L^(1)) / (2(K-1)), in [0, 1]; Komiyama et al. 2016 (CW-RMED/ECW-RMED)",
    "copeland_zoghi": "2 cpld* - cpld_i - cpld_j, in [0, 2]; Zoghi et al. 2015 (CCB/SCB)",
    "condorcet_strong": "(Delta_i + Delta_j) / 2 with Delta_i = P[i*, i] - 1/2; RUCB, RMED, DTS",
    "condorcet_weak": "min(Delta_i, Delta_j); Yue et al. 2012",
    "borda": "(2 b* - b_i - b_j) / 2 with b_i = mean_{j != i} P[i, j]",
}

_CONDORCET_NOTIONS = ("condorcet_strong", "condorcet_weak")


def defined_notions(has_condorcet_winner: bool) -> tuple[str, ...]:
    """The regret notions defined on a problem, in the order of its duel-table columns: all of
    :data:`~dueling_gym.problems.preference.REGRET_NOTIONS` with a Condorcet winner, the Copeland and Borda
    ones without."""
    if has_condorcet_winner:
        return ("copeland_komiyama", "copeland_zoghi", *_CONDORCET_NOTIONS, "borda")
    return ("copeland_komiyama", "copeland_zoghi", "borda")

class PreferenceMatrix:
    """An immutable, validated preference matrix with its winner facts and regrets.

    Parameters
    ----------
    matrix : array_like, shape (K, K)
        ``matrix[i, j]`` is the probability that arm ``i`` beats arm ``j``.
    name : str, optional
        A short label (used in tables, plots and ``repr``).
    source : str, optional
        Where the numbers come from, in one line.
    provenance : mapping, optional
        Structured facts about how the matrix was made (for a matrix estimated from data: the
        per-pair counts, their confidence intervals, the tie rule, the model that filled
        unobserved pairs).  Kept as a read-only mapping; NumPy arrays in it are made read-only.
    atol : float, default 1e-9
        Tolerance of the checks ``P + P.T == 1`` and ``diag(P) == 1/2``: a finite number in
        ``[0, MAX_ATOL]``.  Within it the lower triangle is rebuilt from the upper one; a
        larger tolerance would let that rebuild silently replace real data.

    Raises
    ------
    TypeError
        If ``matrix`` is not numeric, or ``atol`` is not a number.
    ValueError
        If ``atol`` is negative, NaN, infinite or above :data:`~dueling_gym.validation.MAX_ATOL`, or if the
        matrix is not square and two-dimensional, has fewer than two arms, contains
        a non-finite entry or one outside ``[0, 1]``, violates ``P[i, j] + P[j, i] == 1`` or
        has a diagonal entry other than ``1/2``.  The message names the first offending entry.

    Examples
    --------
    >>> P = PreferenceMatrix([[0.5, 0.7], [0.3, 0.5]])
    >>> P.condorcet_winner
    0
    >>> float(P.regret("copeland_komiyama", 1, 1))
    1.0
    """

    __slots__ = ("_matrix", "name", "source", "__dict__")

    def __init__(self, matrix: ArrayLike, *, name: str | None = None, source: str | None = None, atol: float = 1e-9,
                 provenance: Mapping[str, Any] | None = None):
        if isinstance(matrix, PreferenceMatrix):
            name = name if name is not None else matrix.name
            source = source if source is not None else matrix.source
            provenance = provenance if provenance is not None else matrix.provenance
            matrix = matrix.matrix
        array = real_matrix("preference matrix", matrix)
        self._validate(array, check_atol(atol))
        # Store an exactly antisymmetric matrix so every derived fact is consistent.
        self._matrix = read_only(antisymmetric_rebuild(array))
        self.name = name
        self.source = source
        self.provenance: Mapping[str, Any] = _frozen_provenance(provenance)

    # ------------------------------------------------------------------ construction
    @staticmethod
    def _validate(array: NDArray[np.float64], atol: float) -> None:
        if array.ndim != 2 or array.shape[0] != array.shape[1]:
            raise ValueError(f"preference matrix must be square and two-dimensional, got shape {array.shape}")
        n_arms = array.shape[0]
        if n_arms < 2:
            raise ValueError(f"a dueling bandit needs at least 2 arms, got K={n_arms}")
        check_preference_entries("preference matrix", array, atol,
                                 hint="; use PreferenceMatrix.from_upper_triangle to rebuild the lower triangle")

    @classmethod
    def from_upper_triangle(cls, matrix: ArrayLike, **kwargs: Any) -> PreferenceMatrix:
        """Build a matrix from its strict upper triangle: ``P[j, i] := 1 - P[i, j]`` for ``i < j``.

        This is how a printed matrix whose two triangles disagree by rounding is repaired
        (e.g. the MSLR-5 Condorcet matrix of Komiyama et al. 2016, Appendix A).
        """
        array = real_matrix("preference matrix", matrix)
        if array.ndim != 2 or array.shape[0] != array.shape[1]:
            raise ValueError(f"preference matrix must be square and two-dimensional, got shape {array.shape}")
        return cls(antisymmetric_rebuild(array), **kwargs)

    # ------------------------------------------------------------------ basic views
    @property
    def matrix(self) -> NDArray[np.float64]:
        """The K×K matrix (read-only)."""
        return self._matrix

    @property
    def n_arms(self) -> int:
        """Number of arms K."""
        return self._matrix.shape[0]

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        if copy is False and dtype not in (None, np.float64):
            raise ValueError("cannot return the preference matrix as another dtype without a copy")
        array = self._matrix if dtype is None else self._matrix.astype(dtype)
        return array.copy() if copy else array

    def __getitem__(self, index: Any) -> Any:
        return self._matrix[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PreferenceMatrix):
            return NotImplemented
        return bool(np.array_equal(self._matrix, other._matrix))

    def __hash__(self) -> int:
        return hash(self._matrix.tobytes())

    def __repr__(self) -> str:
        label = f"{echo(self.name)}, " if self.name else ""
        winner = self.condorcet_winner
        return (
            f"PreferenceMatrix({label}K={self.n_arms}, copeland_winners={[int(a) for a in self.copeland_winners]}, "
            f"condorcet_winner={winner})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self._matrix.copy(), self.name, self.source, dict(self.provenance)))

    # ------------------------------------------------------------------ Copeland facts
    @cached_property
    def tied_pairs(self) -> NDArray[np.int64]:
        """Pairs ``(i, j)``, ``i < j``, with ``P[i, j] == 1/2`` exactly, shape (n_ties, 2)."""
        i, j = np.nonzero(np.triu(self._matrix == 0.5, 1))
        return read_only(np.stack([i, j], axis=1).astype(np.int64))

    @cached_property
    def wins(self) -> NDArray[np.int64]:
        """Copeland wins ``Cpld_i = #{j != i : P[i, j] > 1/2}``."""
        return read_only((self._matrix > 0.5).sum(axis=1).astype(np.int64))

    @cached_property
    def losses(self) -> NDArray[np.int64]:
        """Strict losses ``L_i = #{j != i : P[i, j] < 1/2}`` (the number of superiors of ``i``)."""
        return read_only((self._matrix < 0.5).sum(axis=1).astype(np.int64))

    @cached_property
    def copeland_scores(self) -> NDArray[np.float64]:
        """Normalised Copeland scores ``cpld_i = Cpld_i / (K - 1)``."""
        return read_only(self.wins / (self.n_arms - 1.0))

    @cached_property
    def copeland_winners(self) -> NDArray[np.int64]:
        """Arms with the maximal Copeland score (never empty), ascending."""
        return read_only(np.flatnonzero(self.wins == self.wins.max()).astype(np.int64))

    @property
    def n_copeland_winners(self) -> int:
        """``C``, the number of Copeland winners."""
        return int(self.copeland_winners.size)

    @cached_property
    def min_losses(self) -> int:
        """``L^(1)``, the smallest number of strict losses."""
        return int(self.losses.min())

    @cached_property
    def second_min_losses(self) -> int:
        """``L^(2)``, the second smallest entry of the multiset of losses."""
        return int(np.sort(self.losses)[1])

    @cached_property
    def copeland_winner_losses(self) -> int:
        """``L_C``, the losses of a Copeland winner (the largest over winners, Zoghi et al. 2015)."""
        return int(self.losses[self.copeland_winners].max())

    @cached_property
    def condorcet_winner(self) -> int | None:
        """The arm that beats every other arm, or ``None``."""
        candidates = np.flatnonzero(self.wins == self.n_arms - 1)
        return int(candidates[0]) if candidates.size else None

    @cached_property
    def condorcet_gaps(self) -> NDArray[np.float64]:
        """``Delta_i = P[i*, i] - 1/2`` (zero for the Condorcet winner).

        Raises
        ------
        ValueError
            If the problem has no Condorcet winner.
        """
        winner = self.condorcet_winner
        if winner is None:
            raise ValueError(f"{self._label()} has no Condorcet winner; Condorcet gaps are undefined")
        return read_only(self._matrix[winner] - 0.5)

    # ------------------------------------------------------------------ Borda facts
    @cached_property
    def borda_scores(self) -> NDArray[np.float64]:
        """Borda scores ``b_i = (1/(K-1)) sum_{j != i} P[i, j]``."""
        return read_only((self._matrix.sum(axis=1) - 0.5) / (self.n_arms - 1.0))

    @cached_property
    def borda_scores_with_self(self) -> NDArray[np.float64]:
        """Borda scores ``b'_i = (1/K) sum_j P[i, j]`` (self-duel included; Sup-KLUCB's scale)."""
        return read_only(self._matrix.mean(axis=1))

    @cached_property
    def borda_winners(self) -> NDArray[np.int64]:
        """Arms with the maximal Borda score (ties within 1e-12 count as equal)."""
        scores = self.borda_scores
        return read_only(np.flatnonzero(scores >= scores.max() - 1e-12).astype(np.int64))

    # ------------------------------------------------------------------ von Neumann winner
    @cached_property
    def von_neumann_winner(self) -> NDArray[np.float64]:
        """The von Neumann winner, a mixed strategy ``w`` with ``w @ P[:, j] >= 1/2`` for all ``j``.

        It is an optimal strategy of the symmetric zero-sum game with payoff ``P - 1/2``
        (always exists), found by linear programming (scipy HiGHS).  Among optimal strategies
        the solver's choice is returned.
        """
        from scipy.optimize import linprog

        n_arms = self.n_arms
        payoff = self._matrix - 0.5
        # variables: w_0..w_{K-1}, v ; maximise v  s.t.  v - sum_i w_i payoff[i, j] <= 0
        cost = np.zeros(n_arms + 1)
        cost[-1] = -1.0
        inequality = np.hstack([-payoff.T, np.ones((n_arms, 1))])
        equality = np.hstack([np.ones((1, n_arms)), np.zeros((1, 1))])
        bounds = [(0.0, 1.0)] * n_arms + [(None, None)]
        result = linprog(cost, A_ub=inequality, b_ub=np.zeros(n_arms), A_eq=equality, b_eq=[1.0],
                         bounds=bounds, method="highs")
        if result.status != 0:  # pragma: no cover - the game always has a value
            raise RuntimeError(f"von Neumann LP failed: {result.message}")
        weights = np.clip(result.x[:n_arms], 0.0, None)
        return read_only(weights / weights.sum())

    # ------------------------------------------------------------------ regret
    @cached_property
    def defined_regret_notions(self) -> tuple[str, ...]:
        """The regret notions that are defined on this problem (Condorcet ones need a winner)."""
        return defined_notions(self.condorcet_winner is not None)

    def _label(self) -> str:
        return f"problem {echo(self.name)}" if self.name else "this problem"

    def _check_notion(self, notion: str) -> None:
        if notion not in REGRET_NOTIONS:
            raise ValueError(f"unknown regret notion {notion!r}; choose one of {sorted(REGRET_NOTIONS)}")
        if notion in _CONDORCET_NOTIONS and self.condorcet_winner is None:
            raise ValueError(f"regret notion {notion!r} needs a Condorcet winner and {self._label()} has none")

    @cached_property
    def _arm_gaps(self) -> dict[str, NDArray[np.float64]]:
        # Every notion except the weak one is (g_i + g_j) / 2 for a per-arm gap vector g.
        n_arms = self.n_arms
        gaps = {
            "copeland_komiyama": (self.losses - self.min_losses) / (n_arms - 1.0),
            "copeland_zoghi": 2.0 * (self.copeland_scores.max() - self.copeland_scores),
            "borda": self.borda_scores.max() - self.borda_scores,
        }
        if self.condorcet_winner is not None:
            gaps["condorcet_strong"] = np.asarray(self.condorcet_gaps)
        return gaps

    def arm_gaps(self, notion: str) -> NDArray[np.float64]:
        """Per-arm gaps ``g`` with ``regret(i, j) = (g_i + g_j) / 2``.

        Defined for every notion except ``"condorcet_weak"`` (whose regret is
        ``min(Delta_i, Delta_j)``, not a sum).
        """
        self._check_notion(notion)
        if notion == "condorcet_weak":
            raise ValueError("condorcet_weak regret is min(Delta_i, Delta_j), not a sum of per-arm gaps")
        return self._arm_gaps[notion].copy()

    def regret_matrix(self, notion: str) -> NDArray[np.float64]:
        """The K×K matrix of per-duel regrets ``r(i, j)`` under ``notion`` (read-only)."""
        self._check_notion(notion)
        return self._regret_matrices[notion]

    @cached_property
    def _regret_matrices(self) -> dict[str, NDArray[np.float64]]:
        matrices = {}
        for notion, gaps in self._arm_gaps.items():
            matrices[notion] = read_only(0.5 * (gaps[:, None] + gaps[None, :]))
        if self.condorcet_winner is not None:
            delta = np.asarray(self.condorcet_gaps)
            matrices["condorcet_weak"] = read_only(np.minimum(delta[:, None], delta[None, :]))
        return matrices

    def regret(self, notion: str, first: ArrayLike, second: ArrayLike) -> NDArray[np.float64] | float:
        """Per-duel regret of duels ``(first, second)`` under ``notion``, vectorised.

        Parameters
        ----------
        notion : str
            One of :data:`~dueling_gym.problems.preference.REGRET_NOTIONS`. Copeland regret comes in two named scales:
            ``"copeland_komiyama"`` (in [0, 1]) and ``"copeland_zoghi"`` (in [0, 2]); without
            ties the Zoghi value is exactly twice the Komiyama one.
        first, second : int or array_like of int
            Arms of the duels (broadcast against each other).

        Returns
        -------
        float or ndarray
            The regrets, with the broadcast shape of ``first`` and ``second``.
        """
        matrix = self.regret_matrix(notion)
        first_arms = self._check_arms("first", first)
        second_arms = self._check_arms("second", second)
        values = matrix[first_arms, second_arms]
        return float(values) if np.ndim(values) == 0 else values

    def _check_arms(self, label: str, arms: ArrayLike) -> NDArray[np.int64]:
        array = np.asarray(arms)
        if not np.issubdtype(array.dtype, np.integer):
            raise TypeError(f"{label} arms must be integers, got dtype {array.dtype}")
        if array.size and (array.min() < 0 or array.max() >= self.n_arms):
            raise ValueError(f"{label} arms must lie in [0, {self.n_arms - 1}], got {arms!r}")
        return array.astype(np.int64, copy=False)

    def expected_random_regret(self, notion: str) -> float:
        """Expected per-round regret of uniform Random over distinct pairs (the Random baseline of Komiyama et al. 2016)."""
        matrix = self.regret_matrix(notion)
        n_arms = self.n_arms
        return float((matrix.sum() - np.trace(matrix)) / (n_arms * (n_arms - 1)))

    def duel_table(self, notions: tuple[str, ...]) -> NDArray[np.float64]:
        """Flat lookup table for simulators: row ``i*K + j`` = ``[P[i, j], r_1(i, j), ...]``.

        Environments gather from this one table instead of indexing several matrices per duel.
        """
        columns = [self._matrix] + [self.regret_matrix(notion) for notion in notions]
        table = np.empty((self.n_arms * self.n_arms, len(columns)))
        for index, column in enumerate(columns):  # column by column: a strided stack is several times slower
            table[:, index] = column.reshape(-1)
        return table

    # ------------------------------------------------------------------ summaries
    def summary(self) -> dict[str, Any]:
        """The headline facts as plain Python values (used by the CLI and tables)."""
        return {
            "name": self.name,
            "K": self.n_arms,
            "condorcet_winner": self.condorcet_winner,
            "copeland_winners": [int(a) for a in self.copeland_winners],
            "C": self.n_copeland_winners,
            "L_C": self.copeland_winner_losses,
            "borda_winners": [int(a) for a in self.borda_winners],
            "ties": [tuple(int(x) for x in pair) for pair in self.tied_pairs],
        }


def _rebuild(matrix: NDArray[np.float64], name: str | None, source: str | None,
             provenance: Mapping[str, Any] | None = None) -> PreferenceMatrix:
    return PreferenceMatrix(matrix, name=name, source=source, provenance=provenance)


def _frozen_provenance(provenance: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if provenance is None:
        return MappingProxyType({})
    if not isinstance(provenance, Mapping):
        raise TypeError(f"provenance must be a mapping, got {type(provenance).__name__}")
    frozen = {}
    for key, value in provenance.items():
        if not isinstance(key, str):
            raise TypeError(f"provenance keys must be strings, got {key!r}")
        if isinstance(value, np.ndarray):
            value = value.copy()
            value.flags.writeable = False
        frozen[key] = value
    return MappingProxyType(frozen)
