"""The shared skeleton of CW-RMED and ECW-RMED: state, Numba kernels and the Python base class.

Komiyama, Honda, Nakagawa. *Copeland Dueling Bandit Problem: Regret Lower Bound, Optimal
Algorithm, and Computationally Efficient Algorithm.* ICML 2016, Algorithm 1, Section 5 and Theorems 3-5.

Both algorithms run the same loop over *pairs* (self-pairs ``(i, i)`` included); they differ
only in the optimisation problem solved in the "not yet confident" branch (Algorithm 1, line
11).  Both solvers live here, next to the skeleton that takes one of them as a compiled
function argument (so each agent gets its own specialisation of one skeleton):

* :func:`relaxed_step5` (ECW-RMED, :mod:`dueling_gym.agents.ecw_rmed`): the relaxed problem
  ``R^E*`` by sorting (Theorem 5), the compiled
  :func:`~dueling_gym.problems.lower_bounds.relaxed_region_kernel` that also computes the
  ECWB constants;
* :func:`full_region_step5` (CW-RMED, :mod:`dueling_gym.agents.cw_rmed`): the full linear
  programme ``R*`` by constraint generation with HiGHS
  (:meth:`~dueling_gym.problems.lower_bounds.CopelandLowerBoundStructure.full_region_constant`),
  called through ``numba.objmode``; each agent keeps its row pool and its last optimum per
  winner, which is reused as long as a duality certificate proves it still optimal.

Line numbers below refer to Algorithm 1 of the paper:

* line 2 -- initial loop ``L_C = L_R`` = all pairs ``i < j`` (lexicographic), ``L_N = []``;
* line 4 -- forced exploration: a pair with ``N_ij < alpha sqrt(ln t)`` or
  ``|mu_hat_ij - 1/2| < beta / max(1, ln ln t)`` is drawn at once (first such pair in
  lexicographic order).  The printed pseudocode checks this once per pass over ``L_C``; the
  regret analysis bounds the events ``X_ij(t)`` at every round, and the DTS authors' C++
  checks before every duel, so by default it is checked before every duel;
  ``forced_check="per_loop"`` gives the literal reading (at the start
  of each pass over ``L_C``, every deficient pair once, re-evaluated at each draw);
* lines 5-6 -- otherwise the pair at the cursor of ``L_C`` is drawn;
* lines 8-9 -- confidence test: the first empirical Copeland winner ``i1`` (ascending) with
  ``N / lambda_t`` in the *full* region ``R_{i1}(mu_hat)`` for both algorithms (the relaxed
  region ``R^E`` fixes some coordinates by equalities that an empirical point never meets),
  with the sort-based membership test of the lower-bound package and
  ``lambda_t = max(1, ln t)`` (``ln t`` vanishes at ``t = 1``, so the paper's ``ln t`` is guarded);
* lines 11-12 -- otherwise ``i_hat* = argmin_{i1} C_{i1}`` (lowest index on ties) and the pairs
  with ``q*_ij > N_ij / lambda_t`` join ``L_NC``, followed by ``(i_hat*, i_hat*)``;
* lines 14-15 -- ``L_R <- L_R \\ {p}``; the pairs of ``L_NC`` that are neither in ``L_R`` nor in
  ``L_N`` are appended to ``L_N`` (exploration pairs lexicographically, then the self-pair);
* line 18 -- at the end of ``L_C``: ``L_C, L_R <- L_N``, ``L_N <- []``.

Speed: every quantity of lines 8-12 except ``lambda_t`` is a function of the
statistics ``(N, mu_hat)`` only.  The confidence test is evaluated in the homogeneous form
``max_p N_p d_p <= lambda_t <= min_lhs(N d)`` (the paper's ``y = N d / lambda_t`` multiplied by
``lambda_t``): the statistic-dependent sides are recomputed only after a duel that changed the
statistics (only the pairs played since are refreshed unless a sign flipped; the separation
minimum of a winner only when the test reaches it) and compared with ``lambda_t`` at every
step.  The step-5 solution depends on ``mu_hat`` alone and is recomputed only when it is
needed and ``mu_hat`` has changed.  ECW-RMED's decisions are therefore exactly those of
recomputing everything at every step (the tests compare it with a literal transcription);
CW-RMED's are too, up to the choice among several optimal LP solutions, which the paper
leaves free.  The forced-exploration test keeps the smallest count and the smallest
``|mu_hat - 1/2|`` over the pairs up to date, so it costs O(1) per step unless a pair is
actually deficient.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, ClassVar, NamedTuple

import numba
import numpy as np
from numba.experimental import structref
from numpy.typing import ArrayLike, NDArray

from dueling_gym.agents._pair_statistics import empirical_preference, record_duel
from dueling_gym.agents.base import AgentStateType, KernelDuelingAgent, check_number
from dueling_gym.problems.lower_bounds import (
    ConstraintPool,
    CopelandLowerBoundStructure,
    CoveringOptimumCertificate,
    kernel_workspace,
    relaxed_region_kernel,
    separation_table_kernel,
)
from dueling_gym.problems.preference import as_preference_matrix
from dueling_gym.stats import kl_bernoulli_scalar

__all__ = [
    "CopelandRMEDAgent",
    "ExplorationSolution",
    "rmed_act",
    "rmed_observe",
    "rmed_recommend",
    "relaxed_step5",
    "full_region_step5",
    "new_solver_id",
    "release_solver_id",
    "solver_for",
    "evaluate_step5",
    "FORCED_CHECKS",
]

#: Accepted values of the ``forced_check`` hyperparameter.
FORCED_CHECKS = ("every_step", "per_loop")

# What the pending duel proposed by act() is (observe() compares the actual duel with it).
_NONE = 0
_FORCED = 1
_LOOP = 2


@structref.register
class CopelandRMEDStateType(AgentStateType):
    """Numba type of the agents' structref state."""


class CopelandRMEDState(structref.StructRefProxy):
    """Numba-side state of CW-RMED / ECW-RMED."""


_FIELDS = [
    "rng",                # the agent's numpy Generator (the algorithm is deterministic: unused)
    # ---- hyperparameters
    "alpha", "beta", "forced_per_loop", "resolve_every", "solver_id",
    "t",                  # duels observed so far (the next duel happens at round t + 1)
    # ---- pairs: code p < n_pairs = {i, j}, i < j (lexicographic); code n_pairs + i = (i, i)
    "pair_first", "pair_second", "pair_index",
    # ---- pair statistics (Section 2 of the paper)
    "wins",               # W[i, j] (K x K)
    "counts",             # N_p
    "pair_mean",          # mu_hat of pair p = {i < j}: W[i, j] / N_p (1/2 when unplayed)
    "gaps",               # |mu_hat_p - 1/2|
    "divergences",        # d_p = d(mu_hat_p, 1/2) (0 when mu_hat_p = 1/2)
    "min_count", "n_at_min_count", "min_gap", "min_gap_pair",
    "stats_version",      # incremented by every duel that changes the statistics
    "changed_pairs", "n_changed", "is_changed",  # pairs whose statistics changed since the last refresh
    "sign_version",       # incremented whenever a pair changes sign (superior / tie / inferior)
    # ---- forced exploration, literal per-loop reading
    "forced_phase", "forced_next",
    # ---- the duel proposed by act()
    "pending_code", "pending_kind",
    # ---- loops (lines 2, 14, 15, 18)
    "loop", "loop_size", "cursor", "remaining", "next_loop", "next_size", "in_next",
    # ---- empirical structure (Section 4's definitions evaluated on mu_hat), refreshed lazily
    "structure_version", "structure_sign_version",
    "superior", "inferior", "losses", "min_losses", "level_low", "n_levels", "winners", "n_winners",
    "regrets", "scaled_costs", "inverse_divergences", "evidence", "max_evidence", "margins", "margin_versions",
    # ---- step-5 solution cache
    "solution_version", "solution_sign_version", "steps_since_solve",
    "constants",          # C_{i1} per arm (only the current empirical winners' entries are meaningful)
    "allocations",        # q of the k-th empirical winner of the last solve in row k (rows grow on demand)
    "solution_best", "support", "support_size",
    "best",               # the latest i_hat* (the recommendation)
    # ---- scratch of the lower-bound kernels
    "real_work", "integer_work", "separation_values", "separation_uses", "inferiors_by_value",
    "superiors_by_value",
    "solution_allocation",  # q of i_hat* (a copy of its row of ``allocations``)
]

structref.define_proxy(CopelandRMEDState, CopelandRMEDStateType, _FIELDS)


def new_state(rng: np.random.Generator, n_arms: int, alpha: float, beta: float, forced_per_loop: bool,
              resolve_every: int, solver_id: int) -> tuple[CopelandRMEDState, dict[str, NDArray]]:
    """A fresh state at ``t = 0`` (line 2 of Algorithm 1) and its statistics arrays by name
    (the same memory, for read-only views from Python)."""
    n_pairs = n_arms * (n_arms - 1) // 2
    n_codes = n_pairs + n_arms
    first, second = np.triu_indices(n_arms, 1)
    pair_first = np.concatenate([first, np.arange(n_arms)]).astype(np.int64)
    pair_second = np.concatenate([second, np.arange(n_arms)]).astype(np.int64)
    pair_index = np.full((n_arms, n_arms), -1, dtype=np.int64)
    pair_index[first, second] = np.arange(n_pairs)
    pair_index[second, first] = np.arange(n_pairs)
    loop = np.zeros(n_codes, dtype=np.int64)
    loop[:n_pairs] = np.arange(n_pairs)
    remaining = np.zeros(n_codes, dtype=np.bool_)
    remaining[:n_pairs] = True
    real_work, integer_work = kernel_workspace(n_arms)
    arrays = {
        "wins": np.zeros((n_arms, n_arms), dtype=np.int64),
        "counts": np.zeros(n_pairs, dtype=np.int64),
        "pair_mean": np.full(n_pairs, 0.5),
        "loop": loop,
    }
    state = CopelandRMEDState(
        rng, float(alpha), float(beta), bool(forced_per_loop), int(resolve_every), int(solver_id), 0,
        pair_first, pair_second, pair_index,
        arrays["wins"], arrays["counts"], arrays["pair_mean"], np.zeros(n_pairs), np.zeros(n_pairs),
        0, n_pairs, 0.0, 0, 0, np.zeros(n_pairs, dtype=np.int64), 0, np.zeros(n_pairs, dtype=np.bool_), 0,
        True, 0,
        -1, _NONE,
        loop, n_pairs, 0, remaining, np.zeros(n_codes, dtype=np.int64), 0, np.zeros(n_codes, dtype=np.bool_),
        -1, -1,
        np.zeros((n_arms, n_arms), dtype=np.bool_), np.zeros((n_arms, n_arms), dtype=np.bool_),
        np.zeros(n_arms, dtype=np.int64), 0, 0, 0, np.zeros(n_arms, dtype=np.int64), 0,
        np.zeros(n_pairs), np.zeros(n_pairs), np.zeros(n_pairs), np.zeros(n_pairs), 0.0, np.zeros(n_arms),
        np.full(n_arms, -1, dtype=np.int64),
        -1, -1, 0,
        np.full(n_arms, np.inf), np.zeros((1, n_pairs)), 0, np.zeros(n_pairs, dtype=np.int64), 0,
        0,
        real_work, integer_work, np.zeros((n_arms - 1, n_arms + 1)),
        np.zeros((n_arms - 1, n_arms + 1), dtype=np.bool_), np.zeros(n_arms, dtype=np.int64),
        np.zeros((n_arms - 1, n_arms), dtype=np.int64),
        np.zeros(n_pairs),
    )
    return state, arrays


# ------------------------------------------------------------------------------------------
# statistics and forced exploration (line 4)
# ------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _forced_thresholds(t, alpha, beta):
    """``(alpha sqrt(ln t), beta / max(1, ln ln t))`` at round ``t >= 1``: ``ln t`` and ``ln ln t`` of line 4 are
    non-positive for ``t <= e``, so both are guarded by ``max(1, .)`` as in the DTS authors' C++."""
    log_t = math.log(t)
    log_log_t = math.log(log_t) if log_t > 1.0 else 0.0
    return alpha * math.sqrt(log_t), beta / max(1.0, log_log_t)


@numba.njit(cache=True, nogil=True)
def _first_deficient(state, start, count_threshold, gap_threshold):
    """The first pair ``p >= start`` (lexicographic) that line 4 forces, or ``-1``."""
    for pair in range(start, state.counts.shape[0]):
        if state.counts[pair] < count_threshold or state.gaps[pair] < gap_threshold:
            return pair
    return -1


@numba.njit(cache=True, nogil=True)
def _record(state, first, second, first_won):
    """Add a duel ``first != second`` to the statistics and keep the running minima exact."""
    low, high = (first, second) if first < second else (second, first)
    pair = state.pair_index[low, high]
    old_sign = np.sign(state.wins[low, high] - state.wins[high, low])
    record_duel(state.wins, first, second, first_won)
    count = state.counts[pair] + 1
    state.counts[pair] = count
    mean = empirical_preference(state.wins, low, high)
    state.pair_mean[pair] = mean
    state.divergences[pair] = kl_bernoulli_scalar(mean, 0.5) if mean != 0.5 else 0.0
    gap = abs(mean - 0.5)
    state.gaps[pair] = gap
    state.stats_version += 1
    if not state.is_changed[pair]:
        state.is_changed[pair] = True
        state.changed_pairs[state.n_changed] = pair
        state.n_changed += 1
    if np.sign(state.wins[low, high] - state.wins[high, low]) != old_sign:
        state.sign_version += 1
    # Smallest count: the pair left the minimum; recount when it was the last one there.
    if count - 1 == state.min_count:
        state.n_at_min_count -= 1
        if state.n_at_min_count == 0:
            state.min_count = state.counts.min()
            state.n_at_min_count = np.sum(state.counts == state.min_count)
    # Smallest gap: exact minimum (first minimiser), rescanned only when the minimiser grew.
    if gap < state.min_gap:
        state.min_gap = gap
        state.min_gap_pair = pair
    elif pair == state.min_gap_pair and gap > state.min_gap:
        best = 0
        for other in range(state.gaps.shape[0]):
            if state.gaps[other] < state.gaps[best]:
                best = other
        state.min_gap = state.gaps[best]
        state.min_gap_pair = best


# ------------------------------------------------------------------------------------------
# empirical structure and the confidence test (lines 8-9)
# ------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _refresh_signs(state):
    """Superiors, inferiors, losses, ``L^(1)``, ``L^(2)``, winners and ``r_p`` from the signs of ``mu_hat``."""
    n_arms = state.losses.shape[0]
    n_pairs = state.counts.shape[0]
    state.superior[:, :] = False
    state.inferior[:, :] = False
    state.losses[:] = 0
    for pair in range(n_pairs):
        i = state.pair_first[pair]
        j = state.pair_second[pair]
        mean = state.pair_mean[pair]
        if mean < 0.5:  # j beats i
            state.superior[i, j] = True
            state.inferior[j, i] = True
            state.losses[i] += 1
        elif mean > 0.5:
            state.superior[j, i] = True
            state.inferior[i, j] = True
            state.losses[j] += 1
    smallest = n_arms
    second = n_arms
    for arm in range(n_arms):
        value = state.losses[arm]
        if value < smallest:
            second = smallest
            smallest = value
        elif value < second:
            second = value
    state.min_losses = smallest
    state.level_low = max(0, smallest - 1)
    state.n_levels = second - state.level_low + 1
    state.n_winners = 0
    for arm in range(n_arms):
        if state.losses[arm] == smallest:
            state.winners[state.n_winners] = arm
            state.n_winners += 1
    # Komiyama's Copeland regret r_p = (g_i + g_j) / 2 with g_i = (L_i - L^(1)) / (K - 1),
    # evaluated exactly as PreferenceMatrix.regret_matrix does.
    for pair in range(n_pairs):
        gap_first = (state.losses[state.pair_first[pair]] - smallest) / (n_arms - 1.0)
        gap_second = (state.losses[state.pair_second[pair]] - smallest) / (n_arms - 1.0)
        state.regrets[pair] = 0.5 * (gap_first + gap_second)
    state.structure_sign_version = state.sign_version


@numba.njit(cache=True, nogil=True)
def _refresh_pair(state, pair):
    """Per-pair quantities of the optimisation: ``r/d``, ``1/d`` and the evidence ``N d``."""
    divergence = state.divergences[pair]
    if divergence > 0.0:
        state.scaled_costs[pair] = state.regrets[pair] / divergence
        state.inverse_divergences[pair] = 1.0 / divergence
    else:  # tied pair (mu_hat exactly 1/2): neither superior nor inferior, never constrained
        state.scaled_costs[pair] = 0.0
        state.inverse_divergences[pair] = 0.0
    state.evidence[pair] = state.counts[pair] * divergence  # N_p d_p = lambda_t * y_p


@numba.njit(cache=True, nogil=True)
def _refresh_structure(state):
    """Everything lines 8-12 need from the current statistics.

    After a sign change everything is rebuilt; otherwise only the pairs played since the
    last refresh are updated.  The membership minima are computed on demand (:func:`_margin`).
    """
    n_pairs = state.counts.shape[0]
    if state.structure_sign_version != state.sign_version:
        _refresh_signs(state)
        for pair in range(n_pairs):
            _refresh_pair(state, pair)
    else:
        for k in range(state.n_changed):
            _refresh_pair(state, state.changed_pairs[k])
    for k in range(state.n_changed):
        state.is_changed[state.changed_pairs[k]] = False
    state.n_changed = 0
    largest = 0.0
    for pair in range(n_pairs):
        if state.evidence[pair] > largest:
            largest = state.evidence[pair]
    state.max_evidence = largest
    state.structure_version = state.stats_version


@numba.njit(cache=True, nogil=True)
def _margin(state, winner):
    """``min_{i2, l} min_lhs(N d)`` of ``winner`` (the separation minimum of the membership test), cached per statistics version."""
    if state.margin_versions[winner] != state.stats_version:
        separation_table_kernel(
            winner, state.evidence, state.pair_index, state.superior, state.inferior, state.losses,
            state.min_losses, state.level_low, state.n_levels, state.separation_values, state.separation_uses,
            state.inferiors_by_value, state.superiors_by_value, state.real_work, state.integer_work,
        )
        margin = np.inf
        for row in range(state.losses.shape[0] - 1):
            for column in range(state.n_levels):
                margin = min(margin, state.separation_values[row, column])
        state.margins[winner] = margin
        state.margin_versions[winner] = state.stats_version
    return state.margins[winner]


@numba.njit(cache=True, nogil=True)
def _confident_winner(state, log_level):
    """Lines 8-9: the first winner ``i1`` with ``N / lambda_t`` in ``R_{i1}(mu_hat)``, or ``-1``.

    Membership in ``R_{i1}`` in homogeneous form: the box ``N_p d_p <= lambda_t`` for every pair
    and every separation minimum ``min_lhs(N d) >= lambda_t``.
    """
    if state.max_evidence > log_level:
        return -1
    for k in range(state.n_winners):
        winner = state.winners[k]
        if _margin(state, winner) >= log_level:
            return winner
    return -1


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
def _solve(state, solver):
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
def _ensure_solution(state, solver):
    """A step-5 solution for the current ``mu_hat``; with ``resolve_every = r > 1`` a stale one is
    reused for up to ``r - 1`` evaluations unless a sign changed (then the winners may differ)."""
    if (
        state.solution_version < 0
        or state.solution_sign_version != state.sign_version
        or (state.solution_version != state.stats_version and state.steps_since_solve >= state.resolve_every)
    ):
        _solve(state, solver)
    state.steps_since_solve += 1


@numba.njit(cache=True, nogil=True)
def evaluate_step5(state, solver):
    """Structure and step-5 solution of the state's current ``mu_hat`` (for introspection).

    Returns ``(winners, constants of the winners, i_hat*, allocation of i_hat* per pair)``.
    """
    _refresh_structure(state)
    _solve(state, solver)
    winners = state.winners[: state.n_winners].copy()
    constants = np.empty(winners.shape[0])
    for k in range(winners.shape[0]):
        constants[k] = state.constants[winners[k]]
    best = state.solution_best
    return winners, constants, best, state.solution_allocation.copy()


# ------------------------------------------------------------------------------------------
# the loop (lines 5-18)
# ------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _append_next(state, code):
    """Line 15 for one pair of ``L_NC``: append it to ``L_N`` unless it is in ``L_R`` or ``L_N``."""
    if not state.remaining[code] and not state.in_next[code]:
        state.in_next[code] = True
        state.next_loop[state.next_size] = code
        state.next_size += 1


@numba.njit(cache=True, nogil=True)
def _loop_step(state, played, solver):
    """Lines 7-18 after the loop duel ``played`` (a pair code) at round ``t = state.t``."""
    n_pairs = state.counts.shape[0]
    log_level = max(1.0, math.log(state.t))  # lambda_t
    if state.structure_version != state.stats_version:
        _refresh_structure(state)
    confident = _confident_winner(state, log_level)
    state.remaining[played] = False  # line 14
    if confident >= 0:  # lines 8-9: exploit (i_hat*, i_hat*)
        state.best = confident
    else:  # lines 11-12
        _ensure_solution(state, solver)
        best = state.solution_best
        state.best = best
        for k in range(state.support_size):  # ascending pair index = lexicographic
            pair = state.support[k]
            if state.counts[pair] / log_level < state.solution_allocation[pair]:
                _append_next(state, pair)
    _append_next(state, n_pairs + state.best)
    state.cursor += 1
    if state.cursor >= state.loop_size:  # line 18: L_C, L_R <- L_N, L_N <- []
        for k in range(state.next_size):
            code = state.next_loop[k]
            state.loop[k] = code
            state.remaining[code] = True
            state.in_next[code] = False
        state.loop_size = state.next_size
        state.next_size = 0
        state.cursor = 0
        if state.forced_per_loop:
            state.forced_phase = True
            state.forced_next = 0


@numba.njit(cache=True, nogil=True)
def rmed_act(state):
    """Lines 4-6: a forced pair if line 4 applies, else the pair at the cursor of ``L_C``."""
    count_threshold, gap_threshold = _forced_thresholds(state.t + 1.0, state.alpha, state.beta)
    forced = -1
    if state.forced_per_loop:
        if state.forced_phase:
            forced = _first_deficient(state, state.forced_next, count_threshold, gap_threshold)
            if forced < 0:
                state.forced_phase = False
    elif state.min_count < count_threshold or state.min_gap < gap_threshold:
        forced = _first_deficient(state, 0, count_threshold, gap_threshold)
    if forced >= 0:
        state.pending_code = forced
        state.pending_kind = _FORCED
        return state.pair_first[forced], state.pair_second[forced]
    code = state.loop[state.cursor]
    state.pending_code = code
    state.pending_kind = _LOOP
    return state.pair_first[code], state.pair_second[code]


@numba.njit(cache=True, nogil=True)
def rmed_observe(state, first, second, first_won, solver):
    """Record a duel; if it is the loop pair proposed by :func:`rmed_act`, run lines 7-18.

    A duel other than the proposed one (or observed without ``act``) only updates the
    statistics, like a forced-exploration duel.
    """
    state.t += 1
    n_pairs = state.counts.shape[0]
    if first == second:
        code = n_pairs + first
    else:
        code = state.pair_index[first, second]
        _record(state, first, second, first_won)  # a self-duel carries no information
    kind = state.pending_kind if code == state.pending_code else _NONE
    state.pending_kind = _NONE
    state.pending_code = -1
    if kind == _FORCED:
        state.forced_next = code + 1
    elif kind == _LOOP:
        _loop_step(state, code, solver)


@numba.njit(cache=True, nogil=True)
def rmed_recommend(state):
    """The latest ``i_hat*`` (initially arm 0, the lowest-index empirical Copeland winner)."""
    return state.best


# ------------------------------------------------------------------------------------------
# Python side
# ------------------------------------------------------------------------------------------
class ExplorationSolution(NamedTuple):
    """Step 5 of Algorithm 1 on one matrix (see :meth:`CopelandRMEDAgent.exploration_solution`).

    Attributes
    ----------
    best : int
        ``i_hat* = argmin_{i1} C_{i1}`` (lowest index on ties).
    winners : ndarray of int
        The Copeland winners ``{i : L_i = L^(1)}`` of the matrix, ascending.
    constants : ndarray
        ``C_{i1}`` for each winner, aligned with ``winners`` (``C*`` for CW-RMED, ``C^{E*}`` for
        ECW-RMED), in Komiyama regret per ``ln T``.
    allocation : ndarray, shape (K, K)
        The exploration target ``q*`` of ``best`` (symmetric, zero diagonal): line 12 schedules
        the pairs with ``q*_ij > N_ij / lambda_t``.
    """

    best: int
    winners: NDArray[np.int64]
    constants: NDArray[np.float64]
    allocation: NDArray[np.float64]


class CopelandRMEDAgent(KernelDuelingAgent):
    """Common Python side of :class:`~dueling_gym.agents.ECWRMED` and :class:`~dueling_gym.agents.CWRMED`.

    Subclasses set ``observe_kernel`` (the skeleton specialised with their step-5 solver) and
    ``step5_solver``, and call :meth:`_set_common` before ``super().__init__``.
    """

    act_kernel = rmed_act
    recommend_kernel = rmed_recommend
    #: The compiled step-5 solver ``solver(state)`` passed to the skeleton.
    step5_solver: ClassVar[Any]

    def _set_common(self, alpha: float, beta: float, forced_check: str) -> None:
        self.alpha = check_number("alpha", alpha, minimum=0.0)
        self.beta = check_number("beta", beta, strict=False, minimum=0.0)
        if not isinstance(forced_check, str):
            raise TypeError(f"forced_check must be a string, got {type(forced_check).__name__}")
        if forced_check not in FORCED_CHECKS:
            raise ValueError(f"forced_check must be one of {FORCED_CHECKS}, got {forced_check!r}")
        self.forced_check = forced_check

    # hooks for CW-RMED's LP solver
    def _solver_id(self) -> int:
        return -1

    def _resolve_every(self) -> int:
        return 1

    def _make_state(self, rng: np.random.Generator, solver_id: int) -> tuple[CopelandRMEDState, dict[str, NDArray]]:
        return new_state(rng, self.n_arms, self.alpha, self.beta, self.forced_check == "per_loop",
                         self._resolve_every(), solver_id)

    def _reset_state(self) -> None:
        self.state, arrays = self._make_state(self.rng, self._solver_id())
        #: ``W[i, j]`` (shared with the compiled state, read-only from Python).
        self.wins = arrays["wins"]
        self._pair_mean = arrays["pair_mean"]

    # ------------------------------------------------------------------ introspection
    @property
    def empirical_preferences(self) -> NDArray[np.float64]:
        """``mu_hat`` as a K×K matrix (``1/2`` for unplayed pairs and on the diagonal)."""
        return _pair_means_to_matrix(self._pair_mean, self.n_arms)

    @property
    def pair_counts(self) -> NDArray[np.int64]:
        """``N[i, j]``, the duels of each pair (symmetric, zero diagonal)."""
        return (self.wins + self.wins.T).astype(np.int64)

    def _scratch_solver_id(self) -> tuple[int, Any]:
        """A solver id for a throw-away evaluation and a callable that releases it."""
        return -1, lambda: None

    def exploration_solution(self, preferences: ArrayLike | None = None) -> ExplorationSolution:
        """Step 5 of Algorithm 1 (line 11) evaluated with this agent's own compiled solver.

        Parameters
        ----------
        preferences : PreferenceMatrix, array_like or shipped name, optional
            The matrix ``nu`` to solve on, e.g. the true matrix (then the allocation is the
            paper's asymptotic exploration target).  Default: the agent's current empirical
            matrix ``mu_hat``.  The agent's own state is never modified.

        Returns
        -------
        ExplorationSolution
        """
        if preferences is None:
            pair_mean = self._pair_mean.copy()
        else:
            problem = as_preference_matrix(preferences)
            if problem.n_arms != self.n_arms:
                raise ValueError(f"the matrix has {problem.n_arms} arms but the agent has {self.n_arms}")
            rows, cols = np.triu_indices(self.n_arms, 1)
            pair_mean = np.ascontiguousarray(problem.matrix[rows, cols])
        solver_id, release = self._scratch_solver_id()
        try:
            scratch, _ = self._make_state(np.random.default_rng(0), solver_id)
            _load_means(scratch, pair_mean)
            winners, constants, best, allocation = evaluate_step5(scratch, type(self).step5_solver)
        finally:
            release()
        matrix = _pair_means_to_matrix(allocation, self.n_arms, diagonal=0.0, antisymmetric=False)
        return ExplorationSolution(int(best), winners, constants, matrix)


@numba.njit(cache=True, nogil=True)
def _load_means(state, pair_mean):
    """Put a matrix (by its upper triangle) in place of ``mu_hat``."""
    for pair in range(pair_mean.shape[0]):
        mean = pair_mean[pair]
        state.pair_mean[pair] = mean
        state.divergences[pair] = kl_bernoulli_scalar(mean, 0.5) if mean != 0.5 else 0.0
        state.gaps[pair] = abs(mean - 0.5)
    state.stats_version += 1
    state.sign_version += 1


def _pair_means_to_matrix(values: NDArray[np.float64], n_arms: int, diagonal: float = 0.5,
                          antisymmetric: bool = True) -> NDArray[np.float64]:
    rows, cols = np.triu_indices(n_arms, 1)
    matrix = np.full((n_arms, n_arms), diagonal)
    matrix[rows, cols] = values
    matrix[cols, rows] = 1.0 - np.asarray(values) if antisymmetric else values
    return matrix
