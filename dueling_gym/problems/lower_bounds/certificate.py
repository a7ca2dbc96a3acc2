"""Optimality certificates of covering LPs whose costs move while their feasible set stays.

CW-RMED (Komiyama et al., ICML 2016, Algorithm 1 with the optimisation of Theorem 3) solves
the linear programme of ``C*_{i1}`` on its empirical matrix at every step.  While the sign
structure of that matrix is unchanged the feasible set is the same and only the costs move, so
the last optimum can be kept as long as a dual certificate shows that it is still optimal.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numpy.typing import NDArray

__all__ = ["CoveringOptimumCertificate", "covering_lp_is_optimal"]


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
        0/1 rows (e.g. the row pool of
        :meth:`~dueling_gym.problems.lower_bounds.ConstraintPool.rows`).
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
        from scipy.optimize import nnls  # imported on first use: heavy, and rarely needed

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
