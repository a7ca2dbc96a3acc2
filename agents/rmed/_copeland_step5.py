"""Step 5 of CW-RMED and ECW-RMED (Algorithm 1, lines 11-12): the two solvers and their cache.

Komiyama, Honda, Nakagawa. *Copeland Dueling Bandit Problem: Regret Lower Bound, Optimal
Algorithm, and Computationally Efficient Algorithm.* ICML 2016, Algorithm 1, Section 5 and Theorems 3-5.

* :func:`relaxed_step5` (ECW-RMED): the relaxed problem ``R^E*`` by sorting (Theorem 5);
* :func:`full_region_step5` (CW-RMED): the full linear programme ``R*`` by constraint
  generation with HiGHS, called through ``numba.objmode``.

:func:`ensure_solution` decides when the solution of the current ``mu_hat`` is recomputed (see
:mod:`dueling_gym.agents.rmed._copeland_loop`).
"""

from __future__ import annotations

import itertools

import numba
import numpy as np

from dueling_gym.agents.rmed._copeland_kernels import refresh_structure
from dueling_gym.problems.lower_bounds import (
    ConstraintPool,
    CopelandLowerBoundStructure,
    CoveringOptimumCertificate,
    relaxed_region_kernel,
)

__all__ = [
    "relaxed_step5",
    "full_region_step5",
    "new_solver_id",
    "release_solver_id",
    "solver_for",
    "solve_step5",
    "ensure_solution",
    "evaluate_step5",
]


# ------------------------------------------------------------------------------------------
# step 5 (lines 11-12)
# ------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def relaxed_step5(state):
    """ECW-RMED's solver: ``C^{E*}_{i1}`` and ``q`` for every empirical winner (Theorem 5: sort and scan)."""
    for k in range(state.n_winners):
        winner = state.winners[k]
        state.constants[winner] = relaxed_region_kernel(
            winner, state.pair_index, state.superior, state.inferior, state.losses, state.scaled_costs,
            state.inverse_divergences, state.regrets, state.allocations[k], state.real_work,
            state.integer_work,
        )


# CW-RMED's solver runs the LP in Python (HiGHS through scipy) from the compiled loop via
# numba.objmode.  Each agent owns a _FullRegionSolver, registered under the state's solver_id.
class _FullRegionSolver:
    """The LP side of one CW-RMED agent: the row pool and the last optimum of every winner."""

    def __init__(self) -> None:
        self.pool = ConstraintPool()
        #: winner -> (sign version, certificate of its last optimum y = q d over the pool rows)
        self.optima: dict[int, tuple[int, CoveringOptimumCertificate]] = {}
        self.n_lp_solves = 0
        self.n_reused = 0

    def clear(self) -> None:
        self.pool.clear()
        self.optima.clear()
        self.n_lp_solves = 0
        self.n_reused = 0


#: solver id -> the LP side of one CW-RMED agent (or of one throw-away evaluation).
_SOLVERS: dict[int, _FullRegionSolver] = {}
_SOLVER_IDS = itertools.count()


def _solve_full_region(solver_id, n_arms, sign_version, pair_mean, winners, scaled_costs, inverse_divergences,
                       regrets, constants, allocations) -> None:
    """Line 11 (CW): ``C*_{i1}`` and an optimal ``q`` for every empirical winner (Python, HiGHS).

    Writes ``constants[i1]`` and, in row ``k`` of ``allocations``, the allocation (per pair) of
    the ``k``-th winner, in place.  While the sign
    structure is unchanged the feasible set (in the scaled variables ``y = q d``) is the same
    and only the costs ``r/d`` move, so the last optimum is reused whenever a KKT certificate
    shows that it is still optimal
    (:class:`~dueling_gym.problems.lower_bounds.CoveringOptimumCertificate`);
    otherwise the LP is solved by constraint generation with HiGHS, warm-started from the row
    pool (constraint generation over the exponentially many constraints of ``R_{i1}``).
    """
    solver = _SOLVERS[int(solver_id)]
    upper = (inverse_divergences > 0.0).astype(np.float64)
    structure = None
    for k, i1 in enumerate(winners.tolist()):
        known = solver.optima.get(i1)
        if known is not None and known[0] == sign_version and known[1].holds(scaled_costs):
            allocation = known[1].point * inverse_divergences
            solver.n_reused += 1
        else:
            if structure is None:
                rows, cols = np.triu_indices(n_arms, 1)
                matrix = np.full((n_arms, n_arms), 0.5)
                matrix[rows, cols] = pair_mean
                matrix[cols, rows] = 1.0 - pair_mean
                structure = CopelandLowerBoundStructure(matrix)
                if not np.array_equal(structure.winners, winners):  # pragma: no cover - same comparisons
                    raise RuntimeError(
                        f"empirical winners disagree: kernel {winners.tolist()}, LP {structure.winners.tolist()}"
                    )
            solution = structure.full_region_constant(i1, solver.pool)
            allocation = solution.allocation[rows, cols]
            pool_rows = solver.pool.rows(i1)
            constraint_matrix = np.zeros((len(pool_rows), allocation.size))
            for row_number, row in enumerate(pool_rows):
                constraint_matrix[row_number, list(row)] = 1.0
            certificate = CoveringOptimumCertificate(constraint_matrix, allocation * structure.divergences, upper)
            solver.optima[i1] = (int(sign_version), certificate)
            solver.n_lp_solves += 1
        constants[i1] = float(regrets @ allocation)
        allocations[k, :] = allocation


@numba.njit(cache=True)
def full_region_step5(state):
    """CW-RMED's solver: the linear programme ``C*_{i1}`` (Theorem 3) for every empirical winner, via ``objmode``."""
    solver_id = state.solver_id
    n_arms = state.losses.shape[0]
    sign_version = state.sign_version
    pair_mean = state.pair_mean
    winners = state.winners[: state.n_winners]
    scaled_costs = state.scaled_costs
    inverse_divergences = state.inverse_divergences
    regrets = state.regrets
    constants = state.constants
    allocations = state.allocations
    with numba.objmode():
        _solve_full_region(solver_id, n_arms, sign_version, pair_mean, winners, scaled_costs, inverse_divergences,
                           regrets, constants, allocations)


def new_solver_id(solver: _FullRegionSolver | None = None) -> int:
    """Register an LP solver (by default a fresh one: empty row pool and optimum cache) and return its
    id (``state.solver_id``); an unpickled agent registers the solver it carried."""
    solver_id = next(_SOLVER_IDS)
    _SOLVERS[solver_id] = _FullRegionSolver() if solver is None else solver
    return solver_id


def release_solver_id(solver_id: int) -> None:
    """Forget the solver of ``solver_id`` (idempotent)."""
    _SOLVERS.pop(solver_id, None)


def solver_for(solver_id: int) -> _FullRegionSolver:
    """The LP solver registered under ``solver_id``."""
    return _SOLVERS[solver_id]


@numba.njit(cache=True, nogil=True)
def solve_step5(state, solver):
    """Run the variant's solver and pick ``i_hat* = argmin C_{i1}`` (lowest index on ties).

    The allocations need one row per current empirical winner, not one per arm: a row per arm
    would cost ``K^3 / 2`` numbers (30 GB at ``K = 2000``).  Rows are added when a solve meets
    more winners than ever before.
    """
    if state.allocations.shape[0] < state.n_winners:
        state.allocations = np.zeros((state.n_winners, state.counts.shape[0]))
    solver(state)
    best = state.winners[0]
    best_row = 0
    for k in range(1, state.n_winners):
        winner = state.winners[k]
        if state.constants[winner] < state.constants[best]:
            best = winner
            best_row = k
    state.solution_best = best
    state.solution_allocation[:] = state.allocations[best_row]
    size = 0
    for pair in range(state.counts.shape[0]):
        if state.solution_allocation[pair] > 0.0:
            state.support[size] = pair
            size += 1
    state.support_size = size
    state.solution_version = state.stats_version
    state.solution_sign_version = state.sign_version
    state.steps_since_solve = 0


@numba.njit(cache=True, nogil=True)
def ensure_solution(state, solver):
    """A step-5 solution for the current ``mu_hat``; with ``resolve_every = r > 1`` a stale one is
    reused for up to ``r - 1`` evaluations unless a sign changed (then the winners may differ)."""
    if (
        state.solution_version < 0
        or state.solution_sign_version != state.sign_version
        or (state.solution_version != state.stats_version and state.steps_since_solve >= state.resolve_every)
    ):
        solve_step5(state, solver)
    state.steps_since_solve += 1


@numba.njit(cache=True, nogil=True)
def evaluate_step5(state, solver):
    """Structure and step-5 solution of the state's current ``mu_hat`` (for introspection).

    Returns ``(winners, constants of the winners, i_hat*, allocation of i_hat* per pair)``.
    """
    refresh_structure(state)
    solve_step5(state, solver)
    winners = state.winners[: state.n_winners].copy()
    constants = np.empty(winners.shape[0])
    for k in range(winners.shape[0]):
        constants[k] = state.constants[winners[k]]
    best = state.solution_best
    return winners, constants, best, state.solution_allocation.copy()
