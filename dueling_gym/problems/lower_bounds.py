"""Regret lower-bound constants of Copeland dueling bandits (Komiyama et al., ICML 2016).

Komiyama, Honda and Nakagawa, *Copeland Dueling Bandit Problem: Regret Lower Bound, Optimal
Algorithm, and Computationally Efficient Algorithm*, ICML 2016 (spec tag S1) show that every
strongly consistent algorithm suffers ``E[R(T)] >= LB * ln T - o(ln T)`` (Theorem 2) with

* ``LB = min_{i1 in winners} C*_{i1}``: ``C*_{i1}`` is the cheapest allocation of duels
  ``q`` ("draws per ln T") in the *full region* ``R_{i1}`` of Lemma 1 / equation (2) -- a linear
  programme with exponentially many constraints, solved here exactly by constraint generation
  (spec §3.3) around a sort-based separation oracle (spec §3.2);

and that ECW-RMED attains ``ECWB = min_{i1} C^{E*}_{i1}`` (Theorem 4), the optimum over the
smaller *relaxed region* ``R^E_{i1}`` of equations (4)-(5), computed by sorting (Theorem 5,
spec §3.4).  ``C^{E*}_{i1} >= C*_{i1}`` always, with equality when there are at least two
Copeland winners (Theorem 6).

Everything is computed from a matrix ``nu`` that may be the true preference matrix (for the
``LB``/``ECWB`` curves of the paper's plots) or an *empirical* matrix ``mu_hat(t)`` (inside
CW-RMED / ECW-RMED, spec §2.9).  Conventions (spec §3.1):

* arms are ``0..K-1``; pairs ``p = {i, j}`` are indexed ``0..K(K-1)/2 - 1`` in the lexicographic
  order of ``(i, j)``, ``i < j`` (``structure.pairs``);
* superiors ``O_i = {j : nu[i, j] < 1/2}``, inferiors ``H_i = {j : nu[i, j] > 1/2}``,
  losses ``L_i = |O_i|``, ``L^(1) <= L^(2)`` the two smallest losses, and the winners are the
  arms with ``L_i = L^(1)`` (the paper's ``C_cop``; with ties this may differ from argmax of
  strict wins, and the region formulas need ``L_{i1} = L^(1)``);
* ``d_p = d(nu_ij, 1/2)`` (:func:`dueling_gym.stats.kl_bernoulli`); a tied pair
  (``nu_ij = 1/2``) is neither superior nor inferior, has ``d_p = 0`` and never enters a
  constraint;
* ``r_p = (L_i + L_j - 2 L^(1)) / (2(K-1))`` (Komiyama's Copeland regret) unless another
  per-pair regret is supplied.

Optimisation is carried out on the scaled variables ``y_p = q_p d_p``, in which the box is
``0 <= y_p <= 1`` and every constraint is "a sum of some ``y_p`` is at least 1", so each LP row
is a 0/1 vector and the problem is well scaled.
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import linprog, nnls

from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.stats import kl_bernoulli

__all__ = [
    "CopelandLowerBoundStructure",
    "ConstraintPool",
    "FullRegionSolution",
    "RelaxedRegionSolution",
    "SeparationResult",
    "lower_bound_constant",
    "ecw_lower_bound_constant",
    "full_region_rows",
    "full_region_constant_bruteforce",
    "relaxed_region_constant_bruteforce",
    "separation_table_kernel",
    "relaxed_region_kernel",
    "kernel_workspace",
    "covering_lp_is_optimal",
    "CoveringOptimumCertificate",
]

#: A constraint is generated when its left-hand side is below ``1 - _VIOLATION_TOLERANCE``
#: (spec §3.3); HiGHS' own feasibility tolerance is 1e-7, so smaller gaps are solver noise.
_VIOLATION_TOLERANCE = 1e-9
#: Each round adds at least one new row out of finitely many, so this only guards against bugs.
_MAX_ROUNDS = 10_000
#: Default cap on the rows the brute-force cross-checks may enumerate.
_BRUTE_FORCE_MAX_ROWS = 500_000


class SeparationResult(NamedTuple):
    """The smallest left-hand side of a family of constraints and the pairs that attain it.

    Attributes
    ----------
    value : float
        ``min sum_{p in S} q_p d_p`` over the admissible pair sets ``S``; ``+inf`` when the
        family is empty (no admissible ``(H, O)``, hence no constraint).
    pair_indices : ndarray of int64
        The minimising set ``S`` as sorted pair indices (``structure.pairs[pair_indices]``
        gives the arms); empty when ``value`` is ``+inf``.
    """

    value: float
    pair_indices: NDArray[np.int64]


class FullRegionSolution(NamedTuple):
    """Result of :meth:`CopelandLowerBoundStructure.full_region_constant`.

    Attributes
    ----------
    value : float
        ``C*_{i1} = sum_p r_p q_p`` at the optimum.
    allocation : ndarray, shape (K, K)
        An optimal ``q`` as a symmetric matrix with zero diagonal (``q[i, j]`` draws of the
        pair ``{i, j}`` per ``ln T``).
    n_rows : int
        Number of constraint rows in the final LP (generated in this call plus those reused
        from the pool).
    """

    value: float
    allocation: NDArray[np.float64]
    n_rows: int


class RelaxedRegionSolution(NamedTuple):
    """Result of :meth:`CopelandLowerBoundStructure.relaxed_region_constant`.

    Attributes
    ----------
    value : float
        ``C^{E*}_{i1} = sum_p r_p q_p`` at the optimum.
    allocation : ndarray, shape (K, K)
        The optimal ``q`` of Theorem 5 as a symmetric matrix with zero diagonal.
    """

    value: float
    allocation: NDArray[np.float64]


class ConstraintPool:
    """Constraint rows of the full-region LPs, kept between calls (for CW-RMED).

    A row is an index set of pairs and depends only on the *sign structure* of the matrix
    (which pairs are superiors, inferiors or tied) and on the winner ``i1``.  While that
    structure stays the same, rows generated for one empirical matrix remain valid
    constraints for the next one and warm-start the constraint generation (spec §3.3).  The
    pool clears itself when it is used with a structure whose signs differ.
    """

    def __init__(self) -> None:
        self._signature: bytes | None = None
        self._rows: dict[int, list[tuple[int, ...]]] = {}
        self._keys: dict[int, set[tuple[int, ...]]] = {}

    def __len__(self) -> int:
        return sum(len(rows) for rows in self._rows.values())

    def __repr__(self) -> str:
        counts = {winner: len(rows) for winner, rows in sorted(self._rows.items())}
        return f"ConstraintPool(rows_per_winner={counts})"

    def n_rows(self, i1: int) -> int:
        """Number of rows stored for winner ``i1``."""
        return len(self._rows.get(int(i1), ()))

    def rows(self, i1: int) -> list[tuple[int, ...]]:
        """The rows stored for winner ``i1`` (a copy; each row is a sorted tuple of pair indices)."""
        return list(self._rows.get(int(i1), ()))

    def clear(self) -> None:
        """Forget every row."""
        self._signature = None
        self._rows.clear()
        self._keys.clear()

    def _rows_for(
        self, structure: CopelandLowerBoundStructure, i1: int
    ) -> tuple[list[tuple[int, ...]], set[tuple[int, ...]]]:
        if self._signature != structure.sign_signature:
            self.clear()
            self._signature = structure.sign_signature
        return self._rows.setdefault(i1, []), self._keys.setdefault(i1, set())


class _SeparationTable(NamedTuple):
    """Minimum left-hand sides for every ``(i2, l)`` of one winner, with the sort data needed
    to rebuild the minimising pair sets."""

    values: NDArray[np.float64]  # (n_opponents, n_levels); +inf = no constraint
    uses_i2_in_h: NDArray[np.bool_]  # the minimum puts i2 into H (case B of spec §3.2)
    opponents: NDArray[np.int64]  # the arms i2 != i1, ascending
    inferiors_by_value: NDArray[np.int64]  # H_{i1}, cheapest first
    superiors_by_value: NDArray[np.int64]  # row r: O_{i2} \ {i1} of opponents[r], cheapest first


class CopelandLowerBoundStructure:
    """Everything the lower-bound constants need, derived from one preference matrix.

    Parameters
    ----------
    preferences : PreferenceMatrix or array_like, shape (K, K)
        A true or empirical preference matrix with ``P + P.T == 1`` and diagonal ``1/2``;
        ties (``P[i, j] == 1/2``) are allowed.  Arrays are validated by
        :class:`~dueling_gym.problems.PreferenceMatrix`.
    regret : array_like or str, optional
        Per-pair regrets ``r_p`` of the objective: a symmetric K×K matrix (diagonal ignored),
        a vector of length ``K(K-1)/2`` in pair order, or the name of a regret notion of
        :meth:`PreferenceMatrix.regret_matrix`.  Defaults to Komiyama's Copeland regret
        ``(L_i + L_j - 2 L^(1)) / (2(K-1))``.  S1 only needs a finite non-negative regret
        that vanishes on winner pairs (spec §1.4); non-negativity is checked.

    Attributes
    ----------
    n_arms : int
        ``K``.
    matrix : ndarray, shape (K, K)
        The validated matrix (read-only).
    pairs : ndarray of int64, shape (K(K-1)/2, 2)
        The pairs ``(i, j)``, ``i < j``, in index order.
    pair_index : ndarray of int64, shape (K, K)
        ``pair_index[i, j]`` = index of ``{i, j}`` (``-1`` on the diagonal).
    superior_mask, inferior_mask : ndarray of bool, shape (K, K)
        ``superior_mask[i, j]`` iff ``j`` is in ``O_i`` (``P[i, j] < 1/2``);
        ``inferior_mask[i, j]`` iff ``j`` is in ``H_i`` (``P[i, j] > 1/2``).
    losses : ndarray of int64
        ``L_i = |O_i|`` (strict losses).
    min_losses, second_min_losses : int
        ``L^(1)`` and ``L^(2)``.
    winners : ndarray of int64
        ``{i : L_i = L^(1)}``, ascending.
    levels : ndarray of int64
        The loss levels ``l = max(0, L^(1) - 1), ..., L^(2)`` of the full region.
    divergences : ndarray
        ``d_p = d(P_ij, 1/2)`` per pair (0 for tied pairs).
    regrets : ndarray
        ``r_p`` per pair.
    sign_signature : bytes
        Identifies the sign structure (see :class:`ConstraintPool`).

    Notes
    -----
    Komiyama, Honda, Nakagawa (ICML 2016): full region ``R_{i1}`` = equation (2) (Lemma 1,
    Theorem 2), relaxed region ``R^E_{i1}`` = equations (4)-(5) (Theorem 4), its solution by
    sorting = Theorem 5.  Spec §3.
    """

    def __init__(self, preferences: PreferenceMatrix | ArrayLike, regret: ArrayLike | str | None = None):
        problem = preferences if isinstance(preferences, PreferenceMatrix) else PreferenceMatrix(preferences)
        matrix = problem.matrix
        n_arms = problem.n_arms
        rows, cols = np.triu_indices(n_arms, 1)
        self.n_arms: int = n_arms
        self.matrix: NDArray[np.float64] = matrix
        self.pairs: NDArray[np.int64] = _read_only(np.stack([rows, cols], axis=1).astype(np.int64))
        self.n_pairs: int = int(rows.size)
        pair_index = np.full((n_arms, n_arms), -1, dtype=np.int64)
        pair_index[rows, cols] = np.arange(self.n_pairs)
        pair_index[cols, rows] = np.arange(self.n_pairs)
        self.pair_index: NDArray[np.int64] = _read_only(pair_index)

        # Same strict comparisons as PreferenceMatrix.losses, so L agrees with the problem's.
        off_diagonal = ~np.eye(n_arms, dtype=bool)
        self.superior_mask: NDArray[np.bool_] = _read_only((matrix < 0.5) & off_diagonal)
        self.inferior_mask: NDArray[np.bool_] = _read_only((matrix > 0.5) & off_diagonal)
        self.losses: NDArray[np.int64] = _read_only(np.asarray(problem.losses, dtype=np.int64).copy())
        self.min_losses: int = problem.min_losses
        self.second_min_losses: int = problem.second_min_losses
        self.winners: NDArray[np.int64] = _read_only(np.flatnonzero(self.losses == self.min_losses).astype(np.int64))
        self.levels: NDArray[np.int64] = _read_only(
            np.arange(max(0, self.min_losses - 1), self.second_min_losses + 1, dtype=np.int64)
        )

        upper = matrix[rows, cols]
        divergences = np.asarray(kl_bernoulli(upper, 0.5), dtype=np.float64).reshape(-1)
        divergences[upper == 0.5] = 0.0  # tied pairs carry no information (spec §2.9 gap 7)
        self.divergences: NDArray[np.float64] = _read_only(divergences)
        self.regrets: NDArray[np.float64] = _read_only(self._pair_regrets(problem, regret))
        self.sign_signature: bytes = np.sign(upper - 0.5).astype(np.int8).tobytes()

        # Scaled LP: y_p = q_p d_p in [0, 1], cost r_p / d_p; tied pairs are pinned to 0.
        self._informative = divergences > 0.0
        safe_divergences = np.where(self._informative, divergences, 1.0)
        self._scaled_costs = np.where(self._informative, self.regrets / safe_divergences, 0.0)
        self._inverse_divergences = np.where(self._informative, 1.0 / safe_divergences, 0.0)
        self._box_upper = self._informative.astype(np.float64)
        # Writable copies for the compiled kernels: the agents call the same kernels on
        # writable arrays, and matching argument types share one compiled specialisation.
        self._kernel_arrays = (
            self.pair_index.copy(), self.superior_mask.copy(), self.inferior_mask.copy(), self.losses.copy()
        )
        self._kernel_regrets = self.regrets.copy()

    # ------------------------------------------------------------------ construction helpers
    def _pair_regrets(self, problem: PreferenceMatrix, regret: ArrayLike | str | None) -> NDArray[np.float64]:
        rows, cols = self.pairs[:, 0], self.pairs[:, 1]
        if regret is None:
            return np.array(problem.regret_matrix("copeland_komiyama")[rows, cols], dtype=np.float64)
        if isinstance(regret, str):
            return np.array(problem.regret_matrix(regret)[rows, cols], dtype=np.float64)
        values = _float_array("regret", regret)
        if values.shape == (self.n_arms, self.n_arms):
            if not np.allclose(values, values.T, rtol=0.0, atol=1e-12):
                raise ValueError("a K×K regret matrix must be symmetric (the regret of a duel is per unordered pair)")
            values = values[rows, cols]
        elif values.shape != (self.n_pairs,):
            raise ValueError(
                f"regret must be a {self.n_arms}×{self.n_arms} matrix or a vector of length "
                f"K(K-1)/2 = {self.n_pairs}, got shape {values.shape}"
            )
        if np.any(values < 0.0):
            raise ValueError(f"regrets must be non-negative, got minimum {values.min()}")
        return values.copy()

    def __repr__(self) -> str:
        return (
            f"CopelandLowerBoundStructure(K={self.n_arms}, winners={self.winners.tolist()}, "
            f"L1={self.min_losses}, L2={self.second_min_losses})"
        )

    # ------------------------------------------------------------------ allocation views
    def pair_vector(self, values: ArrayLike) -> NDArray[np.float64]:
        """Per-pair vector of a symmetric K×K array (or a copy of a per-pair vector).

        Raises
        ------
        ValueError
            If the shape is neither ``(K, K)`` nor ``(K(K-1)/2,)``, an entry is not finite, or
            a K×K array is not symmetric.
        """
        array = _float_array("allocation", values)
        if array.shape == (self.n_arms, self.n_arms):
            if not np.allclose(array, array.T, rtol=1e-12, atol=1e-12):
                raise ValueError("a K×K allocation must be symmetric: duels of (i, j) and (j, i) are the same pair")
            return array[self.pairs[:, 0], self.pairs[:, 1]].copy()
        if array.shape == (self.n_pairs,):
            return array.copy()
        raise ValueError(
            f"allocation must be a {self.n_arms}×{self.n_arms} symmetric array or a vector of length "
            f"K(K-1)/2 = {self.n_pairs}, got shape {array.shape}"
        )

    def pair_matrix(self, vector: ArrayLike) -> NDArray[np.float64]:
        """Symmetric K×K array (zero diagonal) of a per-pair vector."""
        values = np.asarray(vector, dtype=np.float64)
        if values.shape != (self.n_pairs,):
            raise ValueError(f"expected a vector of length {self.n_pairs}, got shape {values.shape}")
        matrix = np.zeros((self.n_arms, self.n_arms))
        matrix[self.pairs[:, 0], self.pairs[:, 1]] = values
        matrix[self.pairs[:, 1], self.pairs[:, 0]] = values
        return matrix

    def objective(self, allocation: ArrayLike) -> float:
        """``sum_p r_p q_p``, the exploration regret per ``ln T`` of an allocation."""
        return float(self.regrets @ self.pair_vector(allocation))

    # ------------------------------------------------------------------ argument checks
    def _check_arm(self, label: str, arm: int) -> int:
        if isinstance(arm, (bool, np.bool_)) or not isinstance(arm, (int, np.integer)):
            raise ValueError(f"{label} must be an integer arm, got {arm!r}")
        if not 0 <= arm < self.n_arms:
            raise ValueError(f"{label} must lie in [0, {self.n_arms - 1}], got {arm}")
        return int(arm)

    def _check_winner(self, i1: int) -> int:
        i1 = self._check_arm("i1", i1)
        if self.losses[i1] != self.min_losses:
            raise ValueError(
                f"arm {i1} is not a Copeland winner (L_{i1} = {self.losses[i1]} > L^(1) = {self.min_losses}); "
                f"the regions are defined for the winners {self.winners.tolist()}"
            )
        return i1

    def _scaled(self, allocation: ArrayLike) -> NDArray[np.float64]:
        return self.pair_vector(allocation) * self.divergences

    # ------------------------------------------------------------------ separation oracle (§3.2)
    def _separation_table(self, i1: int, scaled: NDArray[np.float64]) -> _SeparationTable:
        """Minimum left-hand side of every ``(i2, l)`` constraint family at ``y = scaled``.

        For fixed ``(i1, i2, l)`` the cheapest ``(H, O)`` takes the ``|H|`` smallest ``y`` among
        the pairs ``{i1, j}``, ``j in H_{i1}`` and the ``|O|`` smallest among ``{i2, j}``,
        ``j in O_{i2} \\ {i1}`` (the two parts never share a pair), with or without ``i2`` in
        ``H`` (spec §3.2).  One sort per arm plus prefix sums give all ``(i2, l)`` at once:
        O(K^2 log K) per winner.  The arithmetic is :func:`separation_table_kernel`, the same
        compiled routine CW-RMED / ECW-RMED run on their empirical matrices.
        """
        n_arms = self.n_arms
        n_levels = int(self.levels.size)
        values = np.empty((n_arms - 1, n_levels))
        uses_i2_in_h = np.empty((n_arms - 1, n_levels), dtype=np.bool_)
        inferiors_by_value = np.empty(n_arms, dtype=np.int64)
        superiors_by_value = np.empty((n_arms - 1, n_arms), dtype=np.int64)
        real_work, integer_work = kernel_workspace(n_arms)
        pair_index, superior_mask, inferior_mask, losses = self._kernel_arrays
        n_inferiors = separation_table_kernel(
            i1, np.array(scaled, dtype=np.float64), pair_index, superior_mask, inferior_mask, losses,
            self.min_losses, int(self.levels[0]), n_levels, values, uses_i2_in_h, inferiors_by_value,
            superiors_by_value, real_work, integer_work,
        )
        return _SeparationTable(
            values=values,
            uses_i2_in_h=uses_i2_in_h,
            opponents=np.delete(np.arange(n_arms, dtype=np.int64), i1),
            inferiors_by_value=inferiors_by_value[:n_inferiors],
            superiors_by_value=superiors_by_value,
        )

    def _minimising_pairs(self, i1: int, table: _SeparationTable, row: int, column: int) -> NDArray[np.int64]:
        """The pair set attaining ``table.values[row, column]``, as sorted pair indices."""
        i2 = int(table.opponents[row])
        level = int(self.levels[column])
        in_h = bool(table.uses_i2_in_h[row, column])
        h_size = level + 1 - self.min_losses - in_h
        o_size = max(0, int(self.losses[i2]) - level - in_h)
        h_arms = table.inferiors_by_value[table.inferiors_by_value != i2][:h_size]
        o_arms = table.superiors_by_value[row, :o_size]
        parts = [self.pair_index[i1, h_arms], self.pair_index[i2, o_arms]]
        if in_h:
            parts.append(np.array([self.pair_index[i1, i2]]))
        return np.sort(np.concatenate(parts)).astype(np.int64)

    def min_lhs(self, i1: int, i2: int, level: int, allocation: ArrayLike) -> SeparationResult:
        """Smallest left-hand side of the full-region constraints of one ``(i1, i2, l)``.

        Parameters
        ----------
        i1 : int
            A winner (``L_{i1} = L^(1)``).
        i2 : int
            The challenger, ``i2 != i1``.
        level : int
            The loss level ``l``, one of :attr:`levels`.
        allocation : array_like
            ``q`` as a symmetric K×K array or a per-pair vector.

        Returns
        -------
        SeparationResult
            ``min_{H, O} sum_{p in S_HO} q_p d_p`` and the minimising ``S_HO`` (spec §3.2);
            ``(inf, [])`` when no admissible ``(H, O)`` exists.
        """
        i1 = self._check_winner(i1)
        i2 = self._check_arm("i2", i2)
        if i2 == i1:
            raise ValueError("i2 must differ from i1")
        if isinstance(level, (bool, np.bool_)) or not isinstance(level, (int, np.integer)):
            raise ValueError(f"level must be an integer, got {level!r}")
        matches = np.flatnonzero(self.levels == level)
        if matches.size == 0:
            raise ValueError(f"level must be one of {self.levels.tolist()} (max(0, L^(1)-1) .. L^(2)), got {level}")
        table = self._separation_table(i1, self._scaled(allocation))
        row = i2 - (i2 > i1)
        column = int(matches[0])
        value = float(table.values[row, column])
        if not np.isfinite(value):
            return SeparationResult(math.inf, np.empty(0, dtype=np.int64))
        return SeparationResult(value, self._minimising_pairs(i1, table, row, column))

    def separation_minimum(self, i1: int, allocation: ArrayLike) -> SeparationResult:
        """The most violated full-region constraint of ``i1`` (the minimum over all ``(i2, l)``).

        Returns
        -------
        SeparationResult
            ``(inf, [])`` when ``R_{i1}`` has no constraint besides the box.
        """
        i1 = self._check_winner(i1)
        table = self._separation_table(i1, self._scaled(allocation))
        if table.values.size == 0 or not np.isfinite(table.values.min()):
            return SeparationResult(math.inf, np.empty(0, dtype=np.int64))
        row, column = np.unravel_index(int(np.argmin(table.values)), table.values.shape)
        return SeparationResult(float(table.values[row, column]), self._minimising_pairs(i1, table, row, column))

    def in_full_region(self, i1: int, allocation: ArrayLike, atol: float = 1e-12) -> bool:
        """Whether ``q`` lies in the full region ``R_{i1}`` (equation (2) of S1).

        This is the confidence test of CW-RMED / ECW-RMED (spec §2.9 step 4) with
        ``q = N / max(1, ln t)``.

        Parameters
        ----------
        i1 : int
            A winner.
        allocation : array_like
            ``q`` as a symmetric K×K array or a per-pair vector.
        atol : float, default 1e-12
            Slack allowed on the box (``0 <= q_p <= (1 + atol) / d_p``) and on every
            constraint (``sum q_p d_p >= 1 - atol``).  The default only absorbs rounding
            (``(1/d) * d`` may differ from 1 in the last bit); use e.g. ``1e-7`` for a point
            returned by an LP solver.

        Returns
        -------
        bool
        """
        i1 = self._check_winner(i1)
        allocation_vector = self.pair_vector(allocation)
        # The box is q_p <= 1/d_p, compared on q so that q = 1/d passes exactly; tied pairs
        # (d = 0) are unbounded.
        above_box = self._informative & (allocation_vector > (1.0 + atol) * self._inverse_divergences)
        if np.any(allocation_vector < -atol) or np.any(above_box):
            return False
        scaled = allocation_vector * self.divergences
        values = self._separation_table(i1, scaled).values
        return bool(values.size == 0 or values.min() >= 1.0 - atol)

    # ------------------------------------------------------------------ C* by constraint generation (§3.3)
    def full_region_constant(self, i1: int, pool: ConstraintPool | None = None) -> FullRegionSolution:
        """``C*_{i1}``: the cheapest allocation in the full region ``R_{i1}`` (Theorem 2 of S1).

        Solved exactly by constraint generation (spec §3.3): start from the rows in ``pool``
        (or none), solve the LP restricted to them with HiGHS, add for every ``(i2, l)`` the
        most violated row found by the sort-based oracle, and repeat until no row is violated.

        Parameters
        ----------
        i1 : int
            A winner (``L_{i1} = L^(1)``).
        pool : ConstraintPool, optional
            Rows kept between calls (CW-RMED keeps one pool across time steps).  New rows
            are added to it; it is cleared first if its rows belong to another sign structure.

        Returns
        -------
        FullRegionSolution
            ``(value, allocation, n_rows)``.

        Raises
        ------
        ValueError
            If ``i1`` is not a winner.
        RuntimeError
            If HiGHS fails (it should not: ``q_p = 1/d_p`` is always feasible).
        """
        i1 = self._check_winner(i1)
        rows, keys = (pool if pool is not None else ConstraintPool())._rows_for(self, i1)
        scaled = self._solve_rows(rows) if rows else np.zeros(self.n_pairs)
        for _ in range(_MAX_ROUNDS):
            table = self._separation_table(i1, scaled)
            added = 0
            for row, column in np.argwhere(table.values < 1.0 - _VIOLATION_TOLERANCE):
                key = tuple(self._minimising_pairs(i1, table, int(row), int(column)).tolist())
                if key not in keys:
                    keys.add(key)
                    rows.append(key)
                    added += 1
            if added == 0:
                break
            scaled = self._solve_rows(rows)
        else:  # pragma: no cover - each round adds a new row out of finitely many
            raise RuntimeError(f"constraint generation did not converge in {_MAX_ROUNDS} rounds")
        allocation = scaled * self._inverse_divergences
        return FullRegionSolution(float(self.regrets @ allocation), self.pair_matrix(allocation), len(rows))

    def _solve_rows(self, rows: list[tuple[int, ...]]) -> NDArray[np.float64]:
        return _solve_covering_lp(self._scaled_costs, rows, np.zeros(self.n_pairs), self._box_upper)

    # ------------------------------------------------------------------ C^E* by sort and scan (§3.4)
    def relaxed_region_constant(self, i1: int) -> RelaxedRegionSolution:
        """``C^{E*}_{i1}``: the cheapest allocation in the relaxed region ``R^E_{i1}`` (Theorem 4 of S1).

        ``i1`` is verified against all its inferiors (``q_{i1 j} = 1/d_{i1 j}``, equation (4));
        the constraints (5) split into one covering problem per challenger ``i2``, each solved
        by Theorem 5: with the costs ``c_j = r_{j i2} / d_{j i2}`` of the pairs ``{j, i2}``,
        ``j in O = O_{i2} \\ {i1}``, sorted ascending, and ``k = |O| - (L_{i2} - L_{i1} + 1)``,
        put equal scaled weight ``1/(h - k)`` on the ``h`` cheapest pairs, ``h`` minimising
        ``(c_(1) + ... + c_(h)) / (h - k)`` over ``h = k+1 .. |O|`` (smallest ``h`` on ties).
        ``k < 0`` means no subset of the required size exists, hence no constraint
        (spec §3.4).  Cost O(K^2 log K); the arithmetic is :func:`relaxed_region_kernel`, the
        same compiled routine ECW-RMED runs on its empirical matrix.

        Parameters
        ----------
        i1 : int
            A winner (``L_{i1} = L^(1)``).

        Returns
        -------
        RelaxedRegionSolution
            ``(value, allocation)``.

        Raises
        ------
        ValueError
            If ``i1`` is not a winner.
        """
        i1 = self._check_winner(i1)
        allocation = np.zeros(self.n_pairs)
        real_work, integer_work = kernel_workspace(self.n_arms)
        pair_index, superior_mask, inferior_mask, losses = self._kernel_arrays
        value = relaxed_region_kernel(
            i1, pair_index, superior_mask, inferior_mask, losses, self._scaled_costs, self._inverse_divergences,
            self._kernel_regrets, allocation, real_work, integer_work,
        )
        return RelaxedRegionSolution(float(value), self.pair_matrix(allocation))


# ---------------------------------------------------------------------- compiled kernels (shared with the agents)
# The numeric cores of the separation oracle (spec §3.2) and of the sort-and-scan (spec §3.4)
# live here once, as Numba kernels over plain arrays: the methods of
# CopelandLowerBoundStructure call them on a true matrix, CW-RMED / ECW-RMED
# (agents/_rmed_kernels.py) call them on their empirical matrix inside the compiled simulator.
# Argument conventions: ``pair_index`` (K×K, int64, -1 on the diagonal) maps arms to the
# lexicographic pair order; ``superior_mask[i, j]`` iff ``nu[i, j] < 1/2`` and
# ``inferior_mask[i, j]`` iff ``nu[i, j] > 1/2`` (False on the diagonal and for tied pairs);
# per-pair vectors are indexed by pair.  Sorting is stable (equal values keep index order), so
# every tie is broken towards the lowest arm.

def kernel_workspace(n_arms: int) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Scratch arrays for :func:`separation_table_kernel` and :func:`relaxed_region_kernel`."""
    return np.zeros((5, n_arms + 1)), np.zeros((3, n_arms + 1), dtype=np.int64)


@numba.njit(cache=True, nogil=True)
def _stable_argsort(values: NDArray[np.float64], count: int, order: NDArray[np.int64]) -> None:
    """``order[:count]`` = the indices ``0..count-1`` sorted by ``values`` (stable insertion sort).

    The lists sorted here have at most K entries; insertion sort is fast for them and keeps
    compilation light (NumPy's sorts compile slowly in Numba).
    """
    for k in range(count):
        value = values[k]
        position = k - 1
        while position >= 0 and values[order[position]] > value:
            order[position + 1] = order[position]
            position -= 1
        order[position + 1] = k


@numba.njit(cache=True, nogil=True)
def _h_part(
    size: int, n_inferiors: int, i2_rank: int, h_prefix: NDArray[np.float64], h_sorted: NDArray[np.float64]
) -> float:
    """Sum of the ``size`` smallest ``y`` over ``H_{i1} \\ {i2}`` (``i2_rank`` = rank of ``i2`` in
    ``H_{i1}`` by value, ``-1`` if ``i2`` is not an inferior of ``i1``)."""
    size = min(max(size, 0), n_inferiors)
    skips = i2_rank >= 0 and size > i2_rank
    end = min(size + 1, n_inferiors) if skips else size
    return h_prefix[end] - (h_sorted[i2_rank] if skips else 0.0)


@numba.njit(cache=True, nogil=True)
def separation_table_kernel(
    i1, scaled, pair_index, superior_mask, inferior_mask, losses, min_losses, level_low, n_levels,
    values_out, uses_i2_in_h_out, inferiors_by_value_out, superiors_by_value_out, real_work, integer_work,
):
    """Sort-based separation oracle of the full region ``R_{i1}`` (spec §3.2), all ``(i2, l)`` at once.

    Parameters
    ----------
    i1 : int
        A winner (``losses[i1] == min_losses``).
    scaled : ndarray, shape (K(K-1)/2,)
        The point ``y_p = q_p d_p`` (any positive multiple works: the minima scale with it).
    pair_index, superior_mask, inferior_mask, losses : ndarray
        The sign structure (see the section comment).
    min_losses, level_low, n_levels : int
        ``L^(1)`` and the loss levels ``l = level_low .. level_low + n_levels - 1``
        (``max(0, L^(1) - 1) .. L^(2)``).
    values_out : ndarray, shape (>= K-1, >= n_levels)
        Row ``r`` = challenger ``i2 = r + (r >= i1)``, column ``c`` = level ``level_low + c``:
        the smallest left-hand side ``sum_{p in S_HO} y_p`` of that family, ``+inf`` when no
        admissible ``(H, O)`` exists.
    uses_i2_in_h_out : ndarray of bool, same shape
        Whether that minimum puts ``i2`` into ``H`` (case B of spec §3.2).
    inferiors_by_value_out : ndarray of int64, shape (>= K,)
        ``H_{i1}`` sorted by ``y`` (its first ``n_inferiors`` entries).
    superiors_by_value_out : ndarray of int64, shape (>= K-1, K)
        Row ``r``: all arms sorted by ``y_{i2 j}``, the members of ``O_{i2} \\ {i1}`` first.
    real_work, integer_work : ndarray
        Scratch from :func:`kernel_workspace`.

    Returns
    -------
    int
        ``n_inferiors = |H_{i1}|``.
    """
    n_arms = pair_index.shape[0]
    h_values = real_work[0]
    h_sorted = real_work[1]
    h_prefix = real_work[2]
    o_values = real_work[3]
    o_prefix = real_work[4]
    order = integer_work[0]
    rank = integer_work[1]
    h_arms = integer_work[2]

    # H-part: the inferiors of i1 by increasing y.
    n_inferiors = 0
    for j in range(n_arms):
        rank[j] = -1
        if inferior_mask[i1, j]:
            h_arms[n_inferiors] = j
            h_values[n_inferiors] = scaled[pair_index[i1, j]]
            n_inferiors += 1
    _stable_argsort(h_values, n_inferiors, order)
    h_prefix[0] = 0.0
    for k in range(n_inferiors):
        arm = h_arms[order[k]]
        inferiors_by_value_out[k] = arm
        rank[arm] = k
        h_sorted[k] = h_values[order[k]]
        h_prefix[k + 1] = h_prefix[k] + h_sorted[k]
    h_sorted[n_inferiors] = 0.0

    for row in range(n_arms - 1):
        i2 = row + 1 if row >= i1 else row
        # O-part: the superiors of i2 other than i1 by increasing y, then the other arms in
        # index order (what a stable sort with +inf for non-members gives).
        o_arms = h_arms  # the H-part no longer needs its arm list
        o_available = 0
        for j in range(n_arms):
            if superior_mask[i2, j] and j != i1:
                o_arms[o_available] = j
                o_values[o_available] = scaled[pair_index[i2, j]]
                o_available += 1
        _stable_argsort(o_values, o_available, order)
        o_prefix[0] = 0.0
        for k in range(o_available):
            superiors_by_value_out[row, k] = o_arms[order[k]]
            o_prefix[k + 1] = o_prefix[k] + o_values[order[k]]
        position = o_available
        for j in range(n_arms):
            if not (superior_mask[i2, j] and j != i1):
                superiors_by_value_out[row, position] = j
                position += 1
        for k in range(o_available, n_arms):
            o_prefix[k + 1] = o_prefix[k]

        i2_rank = rank[i2]
        h_available = n_inferiors - 1 if i2_rank >= 0 else n_inferiors  # |H_{i1} \\ {i2}|
        opponent_losses = losses[i2]
        own_pair = scaled[pair_index[i1, i2]]
        for column in range(n_levels):
            level = level_low + column
            h_size = level + 1 - min_losses  # |H| that lifts i1 to l + 1 losses
            # Case A: i2 not in H; i1 stays a superior of i2, so i2 must lose L_{i2} - l others.
            o_size = max(0, opponent_losses - level)
            if h_size <= h_available and o_size <= o_available:
                value_a = _h_part(h_size, n_inferiors, i2_rank, h_prefix, h_sorted) + o_prefix[min(o_size, n_arms)]
            else:
                value_a = np.inf
            # Case B: i2 in H; reversing {i1, i2} already removes one superior of i2.
            o_size = max(0, opponent_losses - level - 1)
            if i2_rank >= 0 and h_size >= 1 and h_size - 1 <= h_available and o_size <= o_available:
                value_b = (own_pair + _h_part(h_size - 1, n_inferiors, i2_rank, h_prefix, h_sorted)) + o_prefix[
                    min(o_size, n_arms)
                ]
            else:
                value_b = np.inf
            uses_i2_in_h_out[row, column] = value_b < value_a
            values_out[row, column] = min(value_a, value_b)
    return n_inferiors


@numba.njit(cache=True, nogil=True)
def relaxed_region_kernel(
    i1, pair_index, superior_mask, inferior_mask, losses, scaled_costs, inverse_divergences, regrets,
    allocation_out, real_work, integer_work,
):
    """``C^{E*}_{i1}`` and its allocation by Theorem 5 of S1 (sort and scan, spec §3.4).

    ``allocation_out`` (per pair) receives ``q``: ``1/d`` on the pairs ``{i1, j}``, ``j in H_{i1}``
    (equation (4)); for each challenger ``i2``, the covering problem of equation (5) over
    ``Omega = O_{i2} \\ {i1}`` with costs ``c_j = r_{j i2} / d_{j i2}`` (``scaled_costs``) and
    ``k = |Omega| - (L_{i2} - L_{i1} + 1)``: no constraint when ``k < 0``, otherwise weight
    ``1/((h-k) d)`` on the ``h`` cheapest pairs, ``h`` minimising the mean cost
    ``(c_(1) + ... + c_(h)) / (h - k)`` over ``h = k+1 .. |Omega|`` (smallest ``h`` on ties,
    stable sort by cost).  ``inverse_divergences`` is ``1/d`` (0 on tied pairs).

    Returns
    -------
    float
        ``sum_p regrets[p] * q_p`` (summed in pair order).
    """
    n_arms = pair_index.shape[0]
    costs = real_work[0]
    order = integer_work[0]
    allocation_out[:] = 0.0
    for j in range(n_arms):
        if inferior_mask[i1, j]:
            pair = pair_index[i1, j]
            allocation_out[pair] = inverse_divergences[pair]
    for i2 in range(n_arms):
        if i2 == i1:
            continue
        omega_size = 0
        for j in range(n_arms):
            if superior_mask[i2, j] and j != i1:
                costs[j] = scaled_costs[pair_index[i2, j]]
                omega_size += 1
            else:
                costs[j] = np.inf
        slack = omega_size - (losses[i2] - losses[i1] + 1)  # Theorem 5's k
        if slack < 0:
            continue  # no subset of the required size: no constraint
        _stable_argsort(costs, n_arms, order)
        running = 0.0
        best_support = 0
        best_ratio = np.inf
        for support in range(1, omega_size + 1):
            running += costs[order[support - 1]]
            if support > slack:
                ratio = running / (support - slack)
                if ratio < best_ratio:  # first minimum = smallest h on ties
                    best_ratio = ratio
                    best_support = support
        weight = 1.0 / (best_support - slack)
        for k in range(best_support):
            pair = pair_index[i2, order[k]]
            allocation_out[pair] = weight * inverse_divergences[pair]
    value = 0.0
    for pair in range(allocation_out.shape[0]):
        value += regrets[pair] * allocation_out[pair]
    return value


# ---------------------------------------------------------------------- LP helper
def _solve_covering_lp(
    costs: NDArray[np.float64],
    rows: list[tuple[int, ...]],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
) -> NDArray[np.float64]:
    """``argmin costs @ y`` s.t. ``sum_{p in row} y_p >= 1`` for every row, ``lower <= y <= upper``."""
    bounds = np.stack([lower, upper], axis=1)
    if rows:
        lengths = np.fromiter((len(row) for row in rows), dtype=np.int64, count=len(rows))
        if np.any(lengths == 0):  # pragma: no cover - every admissible (H, O) is non-empty
            raise RuntimeError("an empty constraint row makes the region infeasible")
        constraint_matrix = np.zeros((len(rows), costs.size))
        constraint_matrix[np.repeat(np.arange(len(rows)), lengths), np.concatenate(rows)] = -1.0
        result = linprog(costs, A_ub=constraint_matrix, b_ub=-np.ones(len(rows)), bounds=bounds, method="highs")
    else:
        result = linprog(costs, bounds=bounds, method="highs")
    if result.status != 0:
        raise RuntimeError(f"HiGHS failed on the lower-bound LP: {result.message}")
    return np.clip(result.x, lower, upper)


class CoveringOptimumCertificate:
    """Optimality certificates of one point of a covering LP, re-checked as the costs change.

    The covering LPs of this module, ``min costs @ y`` s.t. ``A y >= 1`` (0/1 rows) and
    ``0 <= y <= upper``, keep their feasible set while the sign structure is unchanged; only
    their costs move with the empirical matrix.  CW-RMED therefore keeps its last optimum
    and asks this object whether it is still optimal for the new costs before calling HiGHS
    again.

    The certificate is a dual feasible point with (almost) no duality gap.  Candidate
    multipliers ``u >= 0`` on the tight rows come from the Karush-Kuhn-Tucker system
    ``costs = A_tight^T u - w + v`` (``w >= 0`` on the variables at their upper bound, ``v >= 0``
    on those at zero), solved by non-negative least squares -- or, while it stays valid, by a
    least-squares re-fit on the support of the last multipliers (the Cholesky factor of its
    Gram matrix is kept).  Whatever their origin, ``u`` is then completed to the dual feasible
    point ``(u, w = max(0, A^T u - costs))`` of ``max sum(u) - upper @ w`` s.t.
    ``A^T u - w <= costs``, and the point is accepted iff
    ``costs @ point - (sum(u) - upper @ w) <= 1e-9 (1 + |costs @ point|)``: by weak duality it is
    then optimal up to that relative gap.

    Parameters
    ----------
    constraint_matrix : ndarray, shape (m, n)
        0/1 rows (e.g. the row pool of :meth:`ConstraintPool.rows`).
    point : ndarray, shape (n,)
        The candidate (an optimum for earlier costs).
    upper : ndarray, shape (n,)
        Upper bounds (0 pins a variable, e.g. a tied pair).
    tol : float, default 1e-7
        Tolerance on feasibility and on the bound/tightness classification (HiGHS' own
        feasibility tolerance).
    """

    #: Accepted relative duality gap.
    gap_tolerance = 1e-9

    def __init__(
        self,
        constraint_matrix: NDArray[np.float64],
        point: NDArray[np.float64],
        upper: NDArray[np.float64],
        tol: float = 1e-7,
    ) -> None:
        self.point = np.asarray(point, dtype=np.float64)
        self._upper = np.asarray(upper, dtype=np.float64)
        matrix = np.asarray(constraint_matrix, dtype=np.float64)
        row_sums = matrix @ self.point
        self.feasible = bool(
            np.all(self.point >= -tol) and np.all(self.point <= self._upper + tol) and np.all(row_sums >= 1.0 - tol)
        )
        self._tight_rows = np.ascontiguousarray(matrix[row_sums <= 1.0 + tol])
        at_lower = self.point <= tol
        at_upper = (self.point >= self._upper - tol) & ~at_lower
        self._involved = ~at_lower | (self._tight_rows.sum(axis=0) > 0.0)
        self._n_tight = self._tight_rows.shape[0]
        upper_rows = np.flatnonzero(at_upper[self._involved])
        lower_rows = np.flatnonzero(at_lower[self._involved])
        system = np.zeros((int(self._involved.sum()), self._n_tight + upper_rows.size + lower_rows.size))
        system[:, : self._n_tight] = self._tight_rows[:, self._involved].T
        system[upper_rows, self._n_tight + np.arange(upper_rows.size)] = -1.0
        system[lower_rows, self._n_tight + upper_rows.size + np.arange(lower_rows.size)] = 1.0
        self._system = system
        self._support: NDArray[np.int64] | None = None  # columns of the last multipliers
        self._factor: NDArray[np.float64] | None = None  # Cholesky factor of their Gram matrix

    def _gap_is_closed(self, costs: NDArray[np.float64], row_multipliers: NDArray[np.float64]) -> bool:
        row_multipliers = np.maximum(row_multipliers, 0.0)
        excess = np.maximum(self._tight_rows.T @ row_multipliers - costs, 0.0)
        dual = float(row_multipliers.sum() - self._upper @ excess)
        primal = float(costs @ self.point)
        return primal - dual <= self.gap_tolerance * (1.0 + abs(primal))

    def holds(self, costs: NDArray[np.float64]) -> bool:
        """Whether the point is (feasible and) optimal for ``costs`` (non-negative).

        False means "not certified": re-solve the LP.
        """
        if not self.feasible:
            return False
        costs = np.asarray(costs, dtype=np.float64)
        target = costs[self._involved]
        if self._support is not None:  # re-fit on the support of the last multipliers
            multipliers = np.zeros(self._system.shape[1])
            multipliers[self._support] = _refit_support(self._system[:, self._support], self._factor, target)
            if self._gap_is_closed(costs, multipliers[: self._n_tight]):
                return True
        multipliers, _ = nnls(self._system, target, maxiter=20 * self._system.shape[1] + 50)
        if not self._gap_is_closed(costs, multipliers[: self._n_tight]):
            self._support = self._factor = None
            return False
        # Non-negative least squares keeps its positive columns linearly independent, so the
        # Gram matrix of the support is positive definite.
        support = np.flatnonzero(multipliers > 0.0)
        factor = _gram_cholesky(np.ascontiguousarray(self._system[:, support]))
        if factor.shape[0] == support.size:
            self._support, self._factor = support, factor
        else:  # pragma: no cover - numerically singular: no fast path
            self._support = self._factor = None
        return True


@numba.njit(cache=True, nogil=True)
def _gram_cholesky(columns):
    """Lower Cholesky factor of ``columns^T columns``; an empty array if it is not positive definite.

    Plain loops instead of BLAS: the matrices are small, and threaded BLAS calls are
    needlessly slow when many simulations share the cores.
    """
    n_rows, n_columns = columns.shape
    factor = np.zeros((n_columns, n_columns))
    for i in range(n_columns):
        for j in range(i + 1):
            total = 0.0
            for k in range(n_rows):
                total += columns[k, i] * columns[k, j]
            for k in range(j):
                total -= factor[i, k] * factor[j, k]
            if i == j:
                if total <= 1e-12:
                    return np.zeros((0, 0))
                factor[i, i] = math.sqrt(total)
            else:
                factor[i, j] = total / factor[j, j]
    return factor


@numba.njit(cache=True, nogil=True)
def _refit_support(columns, factor, target):
    """Least-squares coefficients of ``target`` on ``columns`` (normal equations, Cholesky ``factor``)."""
    n_rows, n_columns = columns.shape
    solution = np.empty(n_columns)
    for i in range(n_columns):  # forward substitution on columns^T target
        total = 0.0
        for k in range(n_rows):
            total += columns[k, i] * target[k]
        for k in range(i):
            total -= factor[i, k] * solution[k]
        solution[i] = total / factor[i, i]
    for i in range(n_columns - 1, -1, -1):  # back substitution
        total = solution[i]
        for k in range(i + 1, n_columns):
            total -= factor[k, i] * solution[k]
        solution[i] = total / factor[i, i]
    return solution


def covering_lp_is_optimal(
    costs: NDArray[np.float64],
    constraint_matrix: NDArray[np.float64],
    point: NDArray[np.float64],
    upper: NDArray[np.float64],
    tol: float = 1e-7,
) -> bool:
    """Certify that ``point`` solves ``min costs @ y`` s.t. ``constraint_matrix @ y >= 1``, ``0 <= y <= upper``.

    One-off form of :class:`CoveringOptimumCertificate` (see there).  True only if ``point``
    is feasible and optimal up to ``tol``.
    """
    return CoveringOptimumCertificate(constraint_matrix, point, upper, tol).holds(np.asarray(costs, dtype=np.float64))


def _read_only(array: NDArray) -> NDArray:
    array.setflags(write=False)
    return array


def _float_array(label: str, values: ArrayLike) -> NDArray[np.float64]:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{label} must be numeric: {error}") from None
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{label} must be finite")
    return array


def _as_structure(
    preferences: CopelandLowerBoundStructure | PreferenceMatrix | ArrayLike, regret: ArrayLike | str | None
) -> CopelandLowerBoundStructure:
    if isinstance(preferences, CopelandLowerBoundStructure):
        if regret is not None:
            raise ValueError("pass the regret when building the CopelandLowerBoundStructure, not here")
        return preferences
    return CopelandLowerBoundStructure(preferences, regret)


# ---------------------------------------------------------------------- public constants
def lower_bound_constant(
    preferences: PreferenceMatrix | ArrayLike | CopelandLowerBoundStructure, regret: ArrayLike | str | None = None
) -> float:
    """The "LB" constant ``min_{i1 in winners} C*_{i1}`` of Komiyama et al. (2016), Theorem 2.

    Every strongly consistent algorithm has ``E[R(T)] >= LB * ln T - o(ln T)``; the value is
    in units of the chosen regret (Komiyama's Copeland regret by default; double it for
    Zoghi's scale).  Computed by constraint generation with HiGHS (spec §3.3).

    Parameters
    ----------
    preferences : PreferenceMatrix, array_like of shape (K, K) or CopelandLowerBoundStructure
        The preference matrix (``P + P.T == 1``, diagonal ``1/2``; ties allowed).
    regret : array_like or str, optional
        Per-pair regrets, see :class:`CopelandLowerBoundStructure`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the matrix or the regret is invalid.

    Examples
    --------
    >>> from dueling_gym.problems import load_problem
    >>> round(lower_bound_constant(load_problem("gap")), 4)
    11.0249
    """
    structure = _as_structure(preferences, regret)
    return min(structure.full_region_constant(int(i1)).value for i1 in structure.winners)


def ecw_lower_bound_constant(
    preferences: PreferenceMatrix | ArrayLike | CopelandLowerBoundStructure, regret: ArrayLike | str | None = None
) -> float:
    """The "ECWB" constant ``min_{i1 in winners} C^{E*}_{i1}`` of Komiyama et al. (2016), Theorem 4.

    ECW-RMED's regret is ``ECWB * ln T + o(ln T)``.  ``ECWB >= LB``, with equality when there
    are at least two Copeland winners (Theorem 6).  Computed by sorting (Theorem 5, spec §3.4).

    Parameters
    ----------
    preferences : PreferenceMatrix, array_like of shape (K, K) or CopelandLowerBoundStructure
        The preference matrix (``P + P.T == 1``, diagonal ``1/2``; ties allowed).
    regret : array_like or str, optional
        Per-pair regrets, see :class:`CopelandLowerBoundStructure`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the matrix or the regret is invalid.

    Examples
    --------
    >>> from dueling_gym.problems import load_problem
    >>> round(ecw_lower_bound_constant(load_problem("gap")), 2)
    1252.51
    """
    structure = _as_structure(preferences, regret)
    return min(structure.relaxed_region_constant(int(i1)).value for i1 in structure.winners)


# ---------------------------------------------------------------------- brute-force cross-checks
def _count_full_region_rows(structure: CopelandLowerBoundStructure, i1: int) -> int:
    n_inferiors = int(structure.inferior_mask[i1].sum())
    total = 0
    for i2 in range(structure.n_arms):
        if i2 == i1:
            continue
        n_superiors = int(structure.superior_mask[i2].sum() - structure.superior_mask[i2, i1])
        for level in structure.levels.tolist():
            h_size = level + 1 - structure.min_losses
            o_size = max(0, int(structure.losses[i2]) - level)
            # an upper bound: with or without i2 in H, |O| is o_size or o_size - 1
            total += math.comb(n_inferiors, h_size) * max(
                math.comb(n_superiors, o_size), math.comb(n_superiors, max(0, o_size - 1))
            )
    return total


def full_region_rows(
    preferences: CopelandLowerBoundStructure | PreferenceMatrix | ArrayLike,
    i1: int,
    max_rows: int = _BRUTE_FORCE_MAX_ROWS,
) -> list[tuple[int, ...]]:
    """Every constraint row of ``R_{i1}`` (equation (2) of S1), enumerated explicitly.

    A row is the sorted tuple of pair indices of one ``S_HO(i1, i2, l, H, O)``; duplicates are
    merged.  Exponential in ``K``: meant for cross-checks on small matrices.

    Raises
    ------
    ValueError
        If ``i1`` is not a winner or the enumeration would exceed ``max_rows`` candidates.
    """
    structure = _as_structure(preferences, None)
    i1 = structure._check_winner(i1)
    if _count_full_region_rows(structure, i1) > max_rows:
        raise ValueError(f"more than {max_rows} candidate rows: brute force is for small K only")
    inferiors = np.flatnonzero(structure.inferior_mask[i1]).tolist()
    rows: set[tuple[int, ...]] = set()
    for i2 in range(structure.n_arms):
        if i2 == i1:
            continue
        superiors = [j for j in np.flatnonzero(structure.superior_mask[i2]).tolist() if j != i1]
        for level in structure.levels.tolist():
            for h_set in itertools.combinations(inferiors, level + 1 - structure.min_losses):
                o_size = max(0, int(structure.losses[i2]) - level - (i2 in h_set))
                for o_set in itertools.combinations(superiors, o_size):
                    pairs = [structure.pair_index[i1, j] for j in h_set] + [structure.pair_index[i2, j] for j in o_set]
                    rows.add(tuple(sorted(int(p) for p in pairs)))
    return sorted(rows)


def full_region_constant_bruteforce(
    preferences: CopelandLowerBoundStructure | PreferenceMatrix | ArrayLike,
    i1: int,
    max_rows: int = _BRUTE_FORCE_MAX_ROWS,
) -> float:
    """``C*_{i1}`` from one LP holding every row of :func:`full_region_rows` (small ``K`` only).

    Cross-check of :meth:`CopelandLowerBoundStructure.full_region_constant` (spec §3.3).
    """
    structure = _as_structure(preferences, None)
    rows = full_region_rows(structure, i1, max_rows)
    scaled = _solve_covering_lp(structure._scaled_costs, rows, np.zeros(structure.n_pairs), structure._box_upper)
    return float(structure._scaled_costs @ scaled)


def relaxed_region_constant_bruteforce(
    preferences: CopelandLowerBoundStructure | PreferenceMatrix | ArrayLike,
    i1: int,
    max_rows: int = _BRUTE_FORCE_MAX_ROWS,
) -> float:
    """``C^{E*}_{i1}`` as one explicit LP over equations (4)-(5) of S1 (small ``K`` only).

    Cross-check of the sort-and-scan :meth:`CopelandLowerBoundStructure.relaxed_region_constant`.
    """
    structure = _as_structure(preferences, None)
    i1 = structure._check_winner(i1)
    lower = np.zeros(structure.n_pairs)
    verified = structure.pair_index[i1, structure.inferior_mask[i1]]
    lower[verified] = 1.0  # equation (4): y = q d = 1 on i1's pairs with its inferiors
    rows: set[tuple[int, ...]] = set()
    for i2 in range(structure.n_arms):
        if i2 == i1:
            continue
        superiors = [j for j in np.flatnonzero(structure.superior_mask[i2]).tolist() if j != i1]
        subset_size = int(structure.losses[i2] - structure.losses[i1] + 1)
        if math.comb(len(superiors), subset_size) + len(rows) > max_rows:
            raise ValueError(f"more than {max_rows} candidate rows: brute force is for small K only")
        for o_set in itertools.combinations(superiors, subset_size):
            rows.add(tuple(sorted(int(structure.pair_index[i2, j]) for j in o_set)))
    scaled = _solve_covering_lp(structure._scaled_costs, sorted(rows), lower, structure._box_upper)
    return float(structure._scaled_costs @ scaled)
