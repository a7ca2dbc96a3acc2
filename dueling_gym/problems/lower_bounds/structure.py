"""Everything the Copeland lower bounds derive from one preference matrix.

Komiyama, Honda and Nakagawa, *Copeland Dueling Bandit Problem: Regret Lower Bound, Optimal
Algorithm, and Computationally Efficient Algorithm*, ICML 2016: the full region ``R_{i1}``
(equation (2), Lemma 1) whose cheapest point gives ``C*_{i1}`` (Theorem 2), and the relaxed
region ``R^E_{i1}`` (equations (4)-(5)) whose cheapest point ``C^{E*}_{i1}`` (Theorem 4) is
found by sorting (Theorem 5).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.problems.lower_bounds.kernels import kernel_workspace, relaxed_region_kernel, separation_table_kernel
from dueling_gym.problems.lower_bounds.lp import CompactFullRegionLP, solve_covering_lp
from dueling_gym.problems.lower_bounds.solutions import (
    ConstraintPool,
    FullRegionSolution,
    RelaxedRegionSolution,
    SeparationResult,
)
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.stats import kl_bernoulli
from dueling_gym.validation import check_real_array, read_only

__all__ = ["CopelandLowerBoundStructure"]

#: A row is generated when its left-hand side is below ``1 - _VIOLATION_TOLERANCE``; HiGHS' own
#: feasibility tolerance is 1e-7, so smaller gaps are solver noise.
_VIOLATION_TOLERANCE = 1e-9
#: The compact LP's point is accepted when no row of equation (2) is below ``1 - this``
#: (HiGHS' primal feasibility tolerance, with room for the rounding of the rebuilt point).
_COMPACT_FEASIBILITY_TOLERANCE = 1e-7
#: Loss levels whose families start in the compact LP (the others join when violated); the
#: lowest levels are the ones that bind in the problems we measured.
_INITIAL_LEVELS = 3
#: Each round adds at least one new row out of finitely many, so this only guards against bugs.
_MAX_ROUNDS = 10_000


class _SeparationTable(NamedTuple):
    """Minimum left-hand sides for every ``(i2, l)`` of one winner, with the sort data needed
    to rebuild the minimising pair sets."""

    values: NDArray[np.float64]  # (n_opponents, n_levels); +inf = no constraint
    uses_i2_in_h: NDArray[np.bool_]  # the minimum puts i2 into H (case B)
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
        :meth:`PreferenceMatrix.regret_matrix <dueling_gym.problems.PreferenceMatrix.regret_matrix>`.
        Defaults to Komiyama's Copeland regret
        ``(L_i + L_j - 2 L^(1)) / (2(K-1))``.  The bounds only need a finite non-negative
        regret that vanishes on pairs of winners; non-negativity is checked.

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
    sorting = Theorem 5.
    """

    def __init__(self, preferences: PreferenceMatrix | ArrayLike, regret: ArrayLike | str | None = None):
        problem = preferences if isinstance(preferences, PreferenceMatrix) else PreferenceMatrix(preferences)
        matrix = problem.matrix
        n_arms = problem.n_arms
        rows, cols = np.triu_indices(n_arms, 1)
        self.n_arms: int = n_arms
        self.matrix: NDArray[np.float64] = matrix
        self.pairs: NDArray[np.int64] = read_only(np.stack([rows, cols], axis=1).astype(np.int64))
        self.n_pairs: int = int(rows.size)
        pair_index = np.full((n_arms, n_arms), -1, dtype=np.int64)
        pair_index[rows, cols] = np.arange(self.n_pairs)
        pair_index[cols, rows] = np.arange(self.n_pairs)
        self.pair_index: NDArray[np.int64] = read_only(pair_index)

        # Same strict comparisons as PreferenceMatrix.losses, so L agrees with the problem's.
        off_diagonal = ~np.eye(n_arms, dtype=bool)
        self.superior_mask: NDArray[np.bool_] = read_only((matrix < 0.5) & off_diagonal)
        self.inferior_mask: NDArray[np.bool_] = read_only((matrix > 0.5) & off_diagonal)
        self.losses: NDArray[np.int64] = read_only(np.asarray(problem.losses, dtype=np.int64).copy())
        self.min_losses: int = problem.min_losses
        self.second_min_losses: int = problem.second_min_losses
        self.winners: NDArray[np.int64] = read_only(np.flatnonzero(self.losses == self.min_losses).astype(np.int64))
        self.levels: NDArray[np.int64] = read_only(
            np.arange(max(0, self.min_losses - 1), self.second_min_losses + 1, dtype=np.int64)
        )

        upper = matrix[rows, cols]
        divergences = np.asarray(kl_bernoulli(upper, 0.5), dtype=np.float64).reshape(-1)
        divergences[upper == 0.5] = 0.0  # a tied pair carries no information
        self.divergences: NDArray[np.float64] = read_only(divergences)
        self.regrets: NDArray[np.float64] = read_only(self._pair_regrets(problem, regret))
        self.sign_signature: bytes = np.sign(upper - 0.5).astype(np.int8).tobytes()

        # Scaled LP: y_p = q_p d_p in [0, 1], cost r_p / d_p; tied pairs are pinned to 0.
        self._informative = divergences > 0.0
        safe_divergences = np.where(self._informative, divergences, 1.0)
        self.scaled_costs: NDArray[np.float64] = read_only(
            np.where(self._informative, self.regrets / safe_divergences, 0.0)
        )
        self._inverse_divergences = np.where(self._informative, 1.0 / safe_divergences, 0.0)
        self.box_upper: NDArray[np.float64] = read_only(self._informative.astype(np.float64))
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
        values = check_real_array("regret", regret)
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
        array = check_real_array("allocation", values)
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

    # ------------------------------------------------------------------ separation oracle (equation (2))
    def _separation_table(self, i1: int, scaled: NDArray[np.float64]) -> _SeparationTable:
        """Minimum left-hand side of every ``(i2, l)`` constraint family at ``y = scaled``.

        For fixed ``(i1, i2, l)`` the cheapest ``(H, O)`` takes the ``|H|`` smallest ``y`` among
        the pairs ``{i1, j}``, ``j in H_{i1}`` and the ``|O|`` smallest among ``{i2, j}``,
        ``j in O_{i2} \\ {i1}`` (the two parts never share a pair), with or without ``i2`` in
        ``H``.  One sort per arm plus prefix sums give all ``(i2, l)`` at once:
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
            The loss level ``l``, one of ``levels``.
        allocation : array_like
            ``q`` as a symmetric K×K array or a per-pair vector.

        Returns
        -------
        SeparationResult
            ``min_{H, O} sum_{p in S_HO} q_p d_p`` and the minimising ``S_HO``;
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
        """Whether ``q`` lies in the full region ``R_{i1}`` (equation (2) of Komiyama et al.).

        This is the confidence test (3) of CW-RMED / ECW-RMED (Algorithm 1, line 8) with
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

    # ------------------------------------------------------------------ C* (Theorem 2)
    def full_region_constant(self, i1: int, pool: ConstraintPool | None = None) -> FullRegionSolution:
        """``C*_{i1}``: the cheapest allocation in the full region ``R_{i1}`` (Theorem 2).

        Without a pool the optimum comes from a compact LP of polynomial size with the same
        optimum as equation (2), restricted to the constraint families that matter
        (:class:`~dueling_gym.problems.lower_bounds.lp.CompactFullRegionLP`; seconds at
        K = 500).  With a pool it is found by constraint generation over the rows of equation
        (2) themselves, the method Section 4.1.1 of Komiyama et al. sketches: start from the
        rows in ``pool``, solve the LP restricted to them with HiGHS, add for every ``(i2, l)``
        the most violated row found by the sort-based separation oracle, and repeat until no
        row is violated.  The pool then holds rows whose LP alone has the returned optimum,
        which is what CW-RMED's optimality certificate re-checks (this path is slow beyond
        K of about 30).  Either way the result is exact, and the returned point is checked
        against every row with the separation oracle.

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
            ``(value, allocation, n_rows, method)``.

        Raises
        ------
        ValueError
            If ``i1`` is not a winner.
        RuntimeError
            If HiGHS fails (it should not: ``q_p = 1/d_p`` is always feasible).
        """
        i1 = self._check_winner(i1)
        if pool is None:
            scaled, n_rows, table = self._generate_families(i1)
            method = "compact"
            if table.values.size and table.values.min() < 1.0 - _COMPACT_FEASIBILITY_TOLERANCE:
                # HiGHS met its tolerances but the point misses a row by more than they allow:
                # finish exactly with constraint generation, seeded with the violated rows.
                scaled, n_rows = self._generate_rows(i1, [], set(), (scaled, table))
                method = "rows"
        else:
            rows, keys = pool.rows_for(self, i1)
            scaled, n_rows = self._generate_rows(i1, rows, keys)
            method = "rows"
        allocation = scaled * self._inverse_divergences
        return FullRegionSolution(float(self.regrets @ allocation), self.pair_matrix(allocation), n_rows, method)

    def _generate_families(self, i1: int) -> tuple[NDArray[np.float64], int, _SeparationTable]:
        """The compact LP with family generation; returns the point, its LP's rows and its separation table."""
        compact = CompactFullRegionLP(self, i1)
        active = compact.admissible.copy()
        reach = _INITIAL_LEVELS  # levels (table columns) that may join in this round
        active[:, reach:] = False
        columns = np.arange(active.shape[1])
        for _ in range(_MAX_ROUNDS):
            scaled, n_rows = compact.solve(active)
            table = self._separation_table(i1, scaled)
            violated = (table.values < 1.0 - _VIOLATION_TOLERANCE) & ~active
            if not violated.any():
                return scaled, n_rows, table
            # Grow level by level, doubling the reach: the binding levels are the lowest ones,
            # and the LP's size grows with every family it holds.
            reach = max(reach, int(columns[violated.any(axis=0)].min()) + 1)
            active |= violated & (columns < reach)
            reach *= 2
        raise RuntimeError(  # pragma: no cover - each round activates a new family out of finitely many
            f"family generation did not converge in {_MAX_ROUNDS} rounds"
        )

    def _generate_rows(
        self,
        i1: int,
        rows: list[tuple[int, ...]],
        keys: set[tuple[int, ...]],
        start: tuple[NDArray[np.float64], _SeparationTable] | None = None,
    ) -> tuple[NDArray[np.float64], int]:
        """Constraint generation from ``rows`` (extended in place), or from a point and its separation table."""
        table = None
        if start is not None:
            scaled, table = start
        else:
            scaled = self._solve_rows(rows) if rows else np.zeros(self.n_pairs)
        for _ in range(_MAX_ROUNDS):
            if table is None:
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
            table = None
        else:  # pragma: no cover - each round adds a new row out of finitely many
            raise RuntimeError(f"constraint generation did not converge in {_MAX_ROUNDS} rounds")
        return scaled, len(rows)

    def _solve_rows(self, rows: list[tuple[int, ...]]) -> NDArray[np.float64]:
        return solve_covering_lp(self.scaled_costs, rows, np.zeros(self.n_pairs), self.box_upper)

    # ------------------------------------------------------------------ C^E* by sort and scan (Theorem 5)
    def relaxed_region_constant(self, i1: int) -> RelaxedRegionSolution:
        """``C^{E*}_{i1}``: the cheapest allocation in the relaxed region ``R^E_{i1}`` (Theorem 4).

        ``i1`` is verified against all its inferiors (``q_{i1 j} = 1/d_{i1 j}``, equation (4));
        the constraints (5) split into one covering problem per challenger ``i2``, each solved
        by Theorem 5: with the costs ``c_j = r_{j i2} / d_{j i2}`` of the pairs ``{j, i2}``,
        ``j in O = O_{i2} \\ {i1}``, sorted ascending, and ``k = |O| - (L_{i2} - L_{i1} + 1)``,
        put equal scaled weight ``1/(h - k)`` on the ``h`` cheapest pairs, ``h`` minimising
        ``(c_(1) + ... + c_(h)) / (h - k)`` over ``h = k+1 .. |O|`` (smallest ``h`` on ties).
        ``k < 0`` means no subset of the required size exists, hence no constraint
        Cost O(K^2 log K); the arithmetic is
        :func:`~dueling_gym.problems.lower_bounds.kernels.relaxed_region_kernel`, the
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
            i1, pair_index, superior_mask, inferior_mask, losses, self.scaled_costs, self._inverse_divergences,
            self._kernel_regrets, allocation, real_work, integer_work,
        )
        return RelaxedRegionSolution(float(value), self.pair_matrix(allocation))
