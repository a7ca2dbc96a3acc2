"""The linear programmes behind ``C*_{i1}`` (Komiyama et al., ICML 2016, Theorem 2).

In the scaled variables ``y_p = q_p d_p`` the full region ``R_{i1}`` of equation (2) is the box
``0 <= y <= 1`` cut by exponentially many covering rows ``sum_{p in S_HO} y_p >= 1``, one per
challenger ``i2``, loss level ``l`` and admissible ``(H, O)``.  Two exact solvers live here.

*Rows* (:func:`solve_covering_lp`): the LP restricted to an explicit list of rows, the
building block of constraint generation (CW-RMED warm-starts it from its row pool).

*Compact* (:class:`CompactFullRegionLP`): an LP of polynomial size with the same optimum, built
from two facts about equation (2).

1. The pairs ``{i2, j}``, ``j in Omega_{i2} = O_{i2} \\ {i1}``, form a *block* that appears in
   no other challenger's rows (a pair ``{a, b}`` where ``a`` beats ``b`` can only be in the
   ``O``-part of ``b``, and the ``H``-part only holds pairs of ``i1``).  Inside its rows a
   block enters only through "the sum of the ``o`` smallest ``y``", a symmetric function;
   permuting the block's values so that they decrease with the cost ``c_p = r_p / d_p``
   therefore keeps every row and does not raise the objective (rearrangement inequality).
   So the LP may assume ``y`` non-increasing in cost order inside every block, and then the
   ``o`` smallest values are the ``o`` most expensive pairs: a fixed linear expression.  With
   increments ``z_k >= 0`` (``y_(k) = z_k + ... + z_n``) monotonicity is free, the box is the
   single row ``sum z <= 1``, the cost of ``z_k`` is ``c_(1) + ... + c_(k)`` and the tail of
   ``o`` pairs is ``sum_k max(0, k - n + o) z_k``.  Increments before the longest tail used by
   any row only add cost and are dropped.
2. The ``H``-part "the sum of the ``h`` smallest ``x_j = y_{i1 j}`` over ``H_{i1} \\ {i2}``" is
   ``max_t h t - sum_{j != i2} (t - x_j)^+`` (LP duality of the ``h``-smallest sum).  One
   multiplier ``t_h`` with slacks ``s_{h j} >= t_h - x_j``, ``s >= 0``, ``u_h >= sum_j s_{h j}``
   serves every challenger at once: ``h t_h - u_h + s_{h i2}`` never exceeds the true
   ``H``-part, and ``t_h`` = the ``(h+1)``-th smallest ``x`` (the largest one if there are only
   ``h``) attains it for every excluded ``i2`` simultaneously.

Every ``(i2, l)`` thus needs at most two rows (cases A and B), the ``H``-parts ``K + 1`` rows per
size ``h`` and the blocks one row each: ``O(K^2)`` variables and ``O(K (l_max - l_min + 2 + h_max))``
rows in all.  With many loss levels (e.g. a Condorcet winner and ``L^(2)`` large) most families
are slack at the optimum, so
:meth:`CopelandLowerBoundStructure.full_region_constant <dueling_gym.problems.lower_bounds.CopelandLowerBoundStructure.full_region_constant>` generates
whole families instead of rows: it starts with the lowest levels, adds every ``(i2, l)`` the
separation oracle finds violated and re-solves; a family brings all its rows at once, so few
rounds suffice (Section 4.1.1 of the paper expects such a practical method to exist; this one is
ours).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    from scipy import sparse

    from dueling_gym.problems.lower_bounds.structure import CopelandLowerBoundStructure

__all__ = ["solve_covering_lp", "CompactFullRegionLP"]


def solve_covering_lp(
    costs: NDArray[np.float64],
    rows: list[tuple[int, ...]],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
) -> NDArray[np.float64]:
    """``argmin costs @ y`` s.t. ``sum_{p in row} y_p >= 1`` for every row, ``lower <= y <= upper``.

    Raises
    ------
    RuntimeError
        If a row is empty (the region would be infeasible) or HiGHS fails.
    """
    # SciPy's sparse and optimisation modules load on first use: importing them costs more than
    # importing Gymnasium and NumPy together, and only the lower-bound computations need them.
    # Both LPs of this module go through SciPy's public linprog (method="highs"), not through
    # the public highspy package: measured on the 50 LPs of the seven shipped problems and 12
    # random matrices (K = 5 to 20), highspy 1.16 (HiGHS 1.16; SciPy 1.17 bundles HiGHS 1.12)
    # with linprog's options returned another optimal point for 1 LP (5.6e-17 apart) and another
    # objective in its last bits for 23, so the constants would change; it was 1.6 times faster
    # (0.89 s against 1.44 s), and it would be one more binary dependency.
    from scipy import sparse
    from scipy.optimize import linprog

    bounds = np.stack([lower, upper], axis=1)
    if rows:
        lengths = np.fromiter((len(row) for row in rows), dtype=np.int64, count=len(rows))
        if np.any(lengths == 0):  # pragma: no cover - every admissible (H, O) is non-empty
            raise RuntimeError("an empty constraint row makes the region infeasible")
        constraint_matrix = sparse.csr_array(
            (np.full(int(lengths.sum()), -1.0), np.concatenate(rows), np.concatenate([[0], np.cumsum(lengths)])),
            shape=(len(rows), costs.size),
        )
        result = linprog(costs, A_ub=constraint_matrix, b_ub=-np.ones(len(rows)), bounds=bounds, method="highs")
    else:
        result = linprog(costs, bounds=bounds, method="highs")
    if result.status != 0:
        raise RuntimeError(f"HiGHS failed on the lower-bound LP: {result.message}")
    return np.clip(result.x, lower, upper)


class _SparseRows:
    """Rows ``sum_k a_k v_k <= b`` collected as coordinates of a sparse matrix."""

    def __init__(self) -> None:
        self.row_ids: list[NDArray[np.int64]] = []
        self.columns: list[NDArray[np.int64]] = []
        self.values: list[NDArray[np.float64]] = []
        self.bounds: list[NDArray[np.float64]] = []
        self.n_rows = 0

    def add_block(self, row_ids: ArrayLike, columns: ArrayLike, values: ArrayLike, bounds: ArrayLike) -> None:
        """Add ``len(bounds)`` rows; ``row_ids`` counts from 0 within the block."""
        bounds = np.atleast_1d(np.asarray(bounds, dtype=np.float64))
        self.row_ids.append(self.n_rows + np.asarray(row_ids, dtype=np.int64))
        self.columns.append(np.asarray(columns, dtype=np.int64))
        self.values.append(np.asarray(values, dtype=np.float64))
        self.bounds.append(bounds)
        self.n_rows += bounds.size

    def add(self, columns: ArrayLike, values: ArrayLike, bound: float) -> None:
        columns = np.asarray(columns, dtype=np.int64)
        self.add_block(np.zeros(columns.size, dtype=np.int64), columns, values, [bound])

    def matrix(self, n_columns: int) -> sparse.csr_array:
        from scipy import sparse

        return sparse.csr_array(
            (np.concatenate(self.values), (np.concatenate(self.row_ids), np.concatenate(self.columns))),
            shape=(self.n_rows, n_columns),
        )


class _Columns:
    """LP columns collected block by block: their costs and upper bounds (every lower bound is 0)."""

    def __init__(self) -> None:
        self.costs: list[NDArray[np.float64]] = []
        self.upper: list[NDArray[np.float64]] = []
        self.count = 0

    def add(self, costs: NDArray[np.float64], upper: NDArray[np.float64]) -> int:
        """Append ``upper.size`` columns; returns the index of the first."""
        first = self.count
        self.costs.append(costs)
        self.upper.append(upper)
        self.count += upper.size
        return first


class CompactFullRegionLP:
    """The compact LP of ``C*_{i1}`` (see the module docstring), over a chosen set of families.

    A *family* is one ``(i2, l)`` of equation (2) -- row ``r`` / column ``c`` of the separation
    table of :func:`~dueling_gym.problems.lower_bounds.kernels.separation_table_kernel` -- with its
    admissible cases: A (``i2`` not in ``H``) and B (``i2`` in ``H``).  Each case becomes one
    row ``[x_{i2}] + (h smallest x over H_{i1} \\ {i2}) + (o smallest y of the block of i2) >= 1``
    (the bracket in case B) that stands for all its exponentially many ``(H, O)`` at once.

    Parameters
    ----------
    structure : dueling_gym.problems.lower_bounds.CopelandLowerBoundStructure
        The problem.
    i1 : int
        A winner (checked by the caller).
    """

    def __init__(self, structure: CopelandLowerBoundStructure, i1: int) -> None:
        self.structure = structure
        self.i1 = i1
        n_arms = structure.n_arms
        self.inferiors = np.flatnonzero(structure.inferior_mask[i1])
        n_inferiors = self.inferiors.size
        self.h_column = np.full(n_arms, -1, dtype=np.int64)  # column of x_j, -1 if j is not in H_{i1}
        self.h_column[self.inferiors] = np.arange(n_inferiors)
        self.opponents = np.delete(np.arange(n_arms, dtype=np.int64), i1)  # table row r -> i2

        levels = structure.levels[None, :]
        in_h = (self.h_column[self.opponents] >= 0)[:, None]
        h_available = n_inferiors - in_h
        block_sizes = (structure.superior_mask.sum(axis=1) - structure.superior_mask[:, i1])[self.opponents][:, None]
        losses = structure.losses[self.opponents][:, None]
        h_size = np.broadcast_to(levels + 1 - structure.min_losses, (self.opponents.size, levels.size))
        o_size_a = np.maximum(0, losses - levels)
        o_size_b = np.maximum(0, losses - levels - 1)
        case_a = (h_size <= h_available) & (o_size_a <= block_sizes)
        case_b = in_h & (h_size >= 1) & (h_size - 1 <= h_available) & (o_size_b <= block_sizes)
        #: Per case, the table cells that have it and the (H size, tail size) of its row.
        self._cases = [
            (case_a, h_size, o_size_a, False),
            (case_b, h_size - 1, o_size_b, True),
        ]
        #: Table cells with at least one row (the others have no constraint at all).
        self.admissible = case_a | case_b
        self._blocks: dict[int, tuple[NDArray[np.int64], NDArray[np.float64]]] = {}

    def _block(self, i2: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The pairs ``{i2, j}``, ``j in O_{i2} \\ {i1}``, by increasing cost, and their prefix costs."""
        if i2 not in self._blocks:
            structure = self.structure
            omega = np.flatnonzero(structure.superior_mask[i2])
            omega = omega[omega != self.i1]
            pairs = structure.pair_index[i2, omega]
            pairs = pairs[np.argsort(structure.scaled_costs[pairs], kind="stable")]
            self._blocks[i2] = (pairs, np.cumsum(structure.scaled_costs[pairs]))
        return self._blocks[i2]

    def solve(self, active: NDArray[np.bool_]) -> tuple[NDArray[np.float64], int]:
        """The optimal scaled point ``y = q d`` under the families marked in ``active``.

        Parameters
        ----------
        active : ndarray of bool, shape (K-1, number of levels)
            Table cells whose families enter the LP.

        Returns
        -------
        y : ndarray, shape (K(K-1)/2,)
            An optimal point (0 on pairs that enter no active row).
        n_rows : int
            Number of rows of the LP.

        Raises
        ------
        RuntimeError
            If HiGHS fails (it should not: ``y = 1`` is always feasible).
        """
        families = self._active_families(active)
        if not families:
            return np.zeros(self.structure.n_pairs), 0
        # Columns: x (the pairs of i1 with its inferiors), (t_h, u_h, s_h) per H size h >= 1,
        # then the increments z of every block that some row reaches.
        x_pairs = self.structure.pair_index[self.i1, self.inferiors]
        columns = _Columns()
        columns.add(self.structure.scaled_costs[x_pairs], np.ones(self.inferiors.size))
        rows, equalities = _SparseRows(), _SparseRows()
        multiplier_column = self._add_h_multipliers(families, columns, rows)
        blocks, tail_column = self._add_blocks(families, columns, rows, equalities)
        self._add_family_rows(families, multiplier_column, tail_column, rows)
        solution = _solve_with_highs(columns, rows, equalities)
        return self._scaled_point(solution, x_pairs, blocks), rows.n_rows + equalities.n_rows

    def _active_families(self, active: NDArray[np.bool_]) -> list[tuple[int, int, bool, int]]:
        """The rows of the active table cells as ``(i2, H size, own pair, tail size)``, case A first."""
        families: list[tuple[int, int, bool, int]] = []
        for present, h_sizes, o_sizes, own_pair in self._cases:
            rows, columns = np.nonzero(present & active)
            families += zip(
                self.opponents[rows].tolist(), h_sizes[rows, columns].tolist(), [own_pair] * rows.size,
                o_sizes[rows, columns].tolist(),
            )
        return families

    def _add_h_multipliers(
        self, families: list[tuple[int, int, bool, int]], columns: _Columns, rows: _SparseRows
    ) -> dict[int, int]:
        """Columns ``(t_h, u_h, s_h)`` and the rows bounding ``u_h`` for every H size the families use.

        Returns the column of ``t_h`` per size ``h`` (``u_h`` and ``s_h`` follow it).
        """
        n_inferiors = self.inferiors.size
        multiplier_column: dict[int, int] = {}
        for h_size in sorted({family[1] for family in families if family[1] >= 1}):
            t_column = multiplier_column[h_size] = columns.add(
                np.zeros(2 + n_inferiors), np.concatenate([[1.0, np.inf], np.ones(n_inferiors)])
            )
            s_columns = t_column + 2 + np.arange(n_inferiors)
            # t_h - x_j - s_hj <= 0 for every j, then sum_j s_hj - u_h <= 0.
            rows.add_block(
                np.repeat(np.arange(n_inferiors), 3),
                np.stack([np.full(n_inferiors, t_column), np.arange(n_inferiors), s_columns], axis=1).ravel(),
                np.tile([1.0, -1.0, -1.0], n_inferiors),
                np.zeros(n_inferiors),
            )
            rows.add(np.append(s_columns, t_column + 1), np.append(np.ones(n_inferiors), -1.0), 0.0)
        return multiplier_column

    def _add_blocks(
        self, families: list[tuple[int, int, bool, int]], columns: _Columns, rows: _SparseRows,
        equalities: _SparseRows,
    ) -> tuple[dict[int, tuple[int, int]], dict[tuple[int, int], int]]:
        """The increments and tail columns of every block that some family reaches.

        Returns ``i2 -> (first z column, number of z columns)`` and ``(i2, o) -> column of T_o``.
        """
        tails: dict[int, set[int]] = {}
        for i2, _, _, o_size in families:
            if o_size >= 1:
                tails.setdefault(i2, set()).add(o_size)
        blocks: dict[int, tuple[int, int]] = {}
        tail_column: dict[tuple[int, int], int] = {}
        for i2, sizes in sorted(tails.items()):
            pairs, prefix_costs = self._block(i2)
            shortest, longest = min(sizes), max(sizes)
            first = columns.add(prefix_costs[pairs.size - longest:], np.ones(longest))
            blocks[i2] = (first, longest)
            if longest > 1:
                rows.add(np.arange(first, first + longest), np.ones(longest), 1.0)  # y_(1) = sum z <= 1
            t_columns = _add_tail_chain(first, longest, shortest, columns, equalities)
            for o_size in sizes:
                tail_column[i2, o_size] = int(t_columns[o_size - shortest])
        return blocks, tail_column

    def _add_family_rows(
        self, families: list[tuple[int, int, bool, int]], multiplier_column: dict[int, int],
        tail_column: dict[tuple[int, int], int], rows: _SparseRows,
    ) -> None:
        """One row ``[x_{i2}] + h t_h - u_h + s_{h i2} + T_o >= 1`` per family (negated into ``<=``)."""
        for i2, h_size, own_pair, o_size in families:
            columns: list[int] = []
            values: list[float] = []
            if h_size >= 1:
                t_column = multiplier_column[h_size]
                columns += [t_column, t_column + 1]
                values += [float(h_size), -1.0]
                if self.h_column[i2] >= 0:
                    columns.append(t_column + 2 + int(self.h_column[i2]))
                    values.append(1.0)
            if own_pair:
                columns.append(int(self.h_column[i2]))
                values.append(1.0)
            if o_size >= 1:
                columns.append(tail_column[i2, o_size])
                values.append(1.0)
            rows.add(columns, -np.asarray(values, dtype=np.float64), -1.0)

    def _scaled_point(
        self, solution: NDArray[np.float64], x_pairs: NDArray[np.int64], blocks: dict[int, tuple[int, int]]
    ) -> NDArray[np.float64]:
        """``y`` per pair from the LP's columns: ``x`` as is, each block's ``y`` rebuilt from its increments."""
        structure = self.structure
        scaled = np.zeros(structure.n_pairs)
        scaled[x_pairs] = solution[:self.inferiors.size]
        for i2, (first, tail) in blocks.items():
            pairs, _ = self._block(i2)
            suffix = np.cumsum(solution[first:first + tail][::-1])[::-1]  # y at the `tail` dearest pairs
            values = np.full(pairs.size, suffix[0])  # the cheaper pairs all sit at the top value
            values[pairs.size - tail:] = suffix
            scaled[pairs] = values
        return np.clip(scaled, 0.0, structure.box_upper)


def _add_tail_chain(
    first: int, longest: int, shortest: int, columns: _Columns, equalities: _SparseRows
) -> NDArray[np.int64]:
    """Columns ``T_o`` (sum of the ``o`` dearest ``y``) and ``Y_o`` (the ``o``-th dearest ``y``) of a block.

    The block's increments ``z`` occupy ``first .. first + longest - 1``.  ``T_shortest`` and
    ``Y_shortest`` are spelled out in full, then ``Y_o = Y_{o-1} + z`` and ``T_o = T_{o-1} + Y_o``
    for ``o = shortest+1 .. longest``, so that every row reaches its tail through one column.
    Returns the columns of ``T_o``, ``o = shortest .. longest``.
    """
    span = longest - shortest + 1
    chain_start = columns.add(np.zeros(2 * span), np.full(2 * span, np.inf))
    t_columns = chain_start + np.arange(span)
    y_columns = chain_start + span + np.arange(span)
    dearest = first + longest - shortest + np.arange(shortest)
    equalities.add(np.append(dearest, t_columns[0]), np.append(-np.arange(1.0, shortest + 1), 1.0), 0.0)
    equalities.add(np.append(dearest, y_columns[0]), np.append(-np.ones(shortest), 1.0), 0.0)
    if span > 1:
        steps = np.arange(1, span)
        z_columns = first + longest - shortest - steps  # the increment entering Y_{shortest + step}
        equalities.add_block(
            np.repeat(steps - 1, 3),
            np.stack([y_columns[steps], y_columns[steps - 1], z_columns], axis=1).ravel(),
            np.tile([1.0, -1.0, -1.0], span - 1),
            np.zeros(span - 1),
        )
        equalities.add_block(
            np.repeat(steps - 1, 3),
            np.stack([t_columns[steps], t_columns[steps - 1], y_columns[steps]], axis=1).ravel(),
            np.tile([1.0, -1.0, -1.0], span - 1),
            np.zeros(span - 1),
        )
    return t_columns


def _solve_with_highs(columns: _Columns, rows: _SparseRows, equalities: _SparseRows) -> NDArray[np.float64]:
    """``argmin`` of the compact LP with HiGHS (every column bounded below by 0).

    Raises
    ------
    RuntimeError
        If HiGHS fails.
    """
    upper = np.concatenate(columns.upper)
    from scipy.optimize import linprog  # public linprog, not highspy: see solve_covering_lp

    result = linprog(
        np.concatenate(columns.costs),
        A_ub=rows.matrix(columns.count),
        b_ub=np.concatenate(rows.bounds),
        A_eq=equalities.matrix(columns.count) if equalities.n_rows else None,
        b_eq=np.concatenate(equalities.bounds) if equalities.n_rows else None,
        bounds=np.stack([np.zeros(upper.size), upper], axis=1),
        method="highs",
    )
    if result.status != 0:
        raise RuntimeError(f"HiGHS failed on the compact lower-bound LP: {result.message}")
    return result.x
