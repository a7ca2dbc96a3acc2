"""
Komiyama, Honda, Nakagawa. *Copeland Dueling Bandit Problem: Regret Lower Bound, Optimal
Algorithm, and Computationally Efficient Algorithm.* ICML 2016, Algorithm 1, Section 5 and Theorems 3-5.

Both algorithms run the same loop over *pairs* (self-pairs ``(i, i)`` included); they differ
only in the optimisation problem solved in the "not yet confident" branch (Algorithm 1, line
11).  Both solvers live in :mod:`dueling_gym.agents.rmed._copeland_step5`, the state and the statistics in
:mod:`dueling_gym.agents.rmed._copeland_kernels`; the skeleton here takes one solver as a compiled
function argument (so each agent gets its own specialisation of one skeleton):

* :func:`~dueling_gym.agents.rmed._copeland_step5.relaxed_step5` (ECW-RMED,
  :mod:`dueling_gym.agents.rmed.ecw_rmed`): the relaxed problem ``R^E*`` by sorting (Theorem 5), the compiled
  :func:`~dueling_gym.problems.lower_bounds.relaxed_region_kernel` that also computes the
  ECWB constants;
* :func:`~dueling_gym.agents.rmed._copeland_step5.full_region_step5` (CW-RMED,
  :mod:`dueling_gym.agents.rmed.cw_rmed`): the full linear programme ``R*`` by constraint generation with HiGHS
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

import math
from typing import Any, ClassVar, NamedTuple

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.agents.rmed._copeland_kernels import (
    PENDING_FORCED,
    PENDING_LOOP,
    PENDING_NONE,
    CopelandRMEDState,
    confident_winner,
    first_deficient,
    forced_thresholds,
    load_means,
    new_state,
    record_pair_duel,
    refresh_structure,
)
from dueling_gym.agents.rmed._copeland_step5 import ensure_solution, evaluate_step5
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.problems.loading import as_preference_matrix
from dueling_gym.validation import check_number

__all__ = [
    "CopelandRMEDAgent",
    "ExplorationSolution",
    "rmed_act",
    "rmed_observe",
    "rmed_recommend",
    "FORCED_CHECKS",
]

#: Accepted values of the ``forced_check`` hyperparameter.
FORCED_CHECKS = ("every_step", "per_loop")


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
        refresh_structure(state)
    confident = confident_winner(state, log_level)
    state.remaining[played] = False  # line 14
    if confident >= 0:  # lines 8-9: exploit (i_hat*, i_hat*)
        state.best = confident
    else:  # lines 11-12
        ensure_solution(state, solver)
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
    count_threshold, gap_threshold = forced_thresholds(state.t + 1.0, state.alpha, state.beta)
    forced = -1
    if state.forced_per_loop:
        if state.forced_phase:
            forced = first_deficient(state, state.forced_next, count_threshold, gap_threshold)
            if forced < 0:
                state.forced_phase = False
    elif state.min_count < count_threshold or state.min_gap < gap_threshold:
        forced = first_deficient(state, 0, count_threshold, gap_threshold)
    if forced >= 0:
        state.pending_code = forced
        state.pending_kind = PENDING_FORCED
        return state.pair_first[forced], state.pair_second[forced]
    code = state.loop[state.cursor]
    state.pending_code = code
    state.pending_kind = PENDING_LOOP
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
        record_pair_duel(state, first, second, first_won)  # a self-duel carries no information
    kind = state.pending_kind if code == state.pending_code else PENDING_NONE
    state.pending_kind = PENDING_NONE
    state.pending_code = -1
    if kind == PENDING_FORCED:
        state.forced_next = code + 1
    elif kind == PENDING_LOOP:
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

    paper = (PaperLink("ICML 2016, PMLR 48", "https://proceedings.mlr.press/v48/komiyama16.html"),)

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
        preferences : dueling_gym.problems.PreferenceMatrix, array_like or shipped name, optional
            The matrix ``nu`` to solve on, e.g. the true matrix (then the allocation is the
            paper's asymptotic exploration target).  Default: the agent's current empirical
            matrix ``mu_hat``.  The agent's own state is never modified.

        Returns
        -------
        tuple
            A named tuple with the fields ``best`` (``i_hat*``), ``winners``, ``constants`` (one per winner) and
            ``allocation`` (the exploration target ``q*`` of ``best``).
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
            load_means(scratch, pair_mean)
            winners, constants, best, allocation = evaluate_step5(scratch, type(self).step5_solver)
        finally:
            release()
        matrix = _pair_means_to_matrix(allocation, self.n_arms, diagonal=0.0, antisymmetric=False)
        return ExplorationSolution(int(best), winners, constants, matrix)


def _pair_means_to_matrix(values: NDArray[np.float64], n_arms: int, diagonal: float = 0.5,
                          antisymmetric: bool = True) -> NDArray[np.float64]:
    rows, cols = np.triu_indices(n_arms, 1)
    matrix = np.full((n_arms, n_arms), diagonal)
    matrix[rows, cols] = values
    matrix[cols, rows] = 1.0 - np.asarray(values) if antisymmetric else values
    return matrix
