"""The state and statistics of CW-RMED and ECW-RMED: the Numba state, the pair statistics with
forced exploration (line 4), the empirical structure and the confidence test (lines 8-9).

Komiyama, Honda, Nakagawa. *Copeland Dueling Bandit Problem: Regret Lower Bound, Optimal
Algorithm, and Computationally Efficient Algorithm.* ICML 2016, Algorithm 1, Section 5 and Theorems 3-5.

The loop of Algorithm 1 and the agents' common Python side are in
:mod:`dueling_gym.agents.rmed._copeland_loop`, the step-5 solvers in :mod:`dueling_gym.agents.rmed._copeland_step5`;
the line numbers and the incremental evaluation are described there.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numpy.typing import NDArray

from dueling_gym.agents._pair_statistics import empirical_preference, record_duel
from dueling_gym.agents.state import AgentState
from dueling_gym.problems.lower_bounds import kernel_workspace, separation_table_kernel
from dueling_gym.stats import kl_bernoulli_scalar

__all__ = [
    "CopelandRMEDState",
    "new_state",
    "PENDING_NONE",
    "PENDING_FORCED",
    "PENDING_LOOP",
    "forced_thresholds",
    "first_deficient",
    "record_pair_duel",
    "refresh_structure",
    "confident_winner",
    "load_means",
]

#: What the pending duel proposed by ``rmed_act`` is (``rmed_observe`` compares the actual duel with it):
#: nothing, a forced pair (line 4) or the pair at the cursor of the loop (lines 5-6).
PENDING_NONE = 0
PENDING_FORCED = 1
PENDING_LOOP = 2


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


class CopelandRMEDState(AgentState, fields=_FIELDS):
    """Numba-side state of CW-RMED / ECW-RMED."""


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
        rng=rng, alpha=float(alpha), beta=float(beta), forced_per_loop=bool(forced_per_loop),
        resolve_every=int(resolve_every), solver_id=int(solver_id), t=0, pair_first=pair_first,
        pair_second=pair_second, pair_index=pair_index, wins=arrays["wins"], counts=arrays["counts"],
        pair_mean=arrays["pair_mean"], gaps=np.zeros(n_pairs), divergences=np.zeros(n_pairs), min_count=0,
        n_at_min_count=n_pairs, min_gap=0.0, min_gap_pair=0, stats_version=0,
        changed_pairs=np.zeros(n_pairs, dtype=np.int64), n_changed=0, is_changed=np.zeros(n_pairs, dtype=np.bool_),
        sign_version=0, forced_phase=True, forced_next=0, pending_code=-1, pending_kind=PENDING_NONE, loop=loop,
        loop_size=n_pairs, cursor=0, remaining=remaining, next_loop=np.zeros(n_codes, dtype=np.int64), next_size=0,
        in_next=np.zeros(n_codes, dtype=np.bool_), structure_version=-1, structure_sign_version=-1,
        superior=np.zeros((n_arms, n_arms), dtype=np.bool_), inferior=np.zeros((n_arms, n_arms), dtype=np.bool_),
        losses=np.zeros(n_arms, dtype=np.int64), min_losses=0, level_low=0, n_levels=0,
        winners=np.zeros(n_arms, dtype=np.int64), n_winners=0, regrets=np.zeros(n_pairs),
        scaled_costs=np.zeros(n_pairs), inverse_divergences=np.zeros(n_pairs), evidence=np.zeros(n_pairs),
        max_evidence=0.0, margins=np.zeros(n_arms), margin_versions=np.full(n_arms, -1, dtype=np.int64),
        solution_version=-1, solution_sign_version=-1, steps_since_solve=0, constants=np.full(n_arms, np.inf),
        allocations=np.zeros((1, n_pairs)), solution_best=0, support=np.zeros(n_pairs, dtype=np.int64),
        support_size=0, best=0, real_work=real_work, integer_work=integer_work,
        separation_values=np.zeros((n_arms - 1, n_arms + 1)),
        separation_uses=np.zeros((n_arms - 1, n_arms + 1), dtype=np.bool_),
        inferiors_by_value=np.zeros(n_arms, dtype=np.int64),
        superiors_by_value=np.zeros((n_arms - 1, n_arms), dtype=np.int64), solution_allocation=np.zeros(n_pairs),
    )
    return state, arrays


# ------------------------------------------------------------------------------------------
# statistics and forced exploration (line 4)
# ------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def forced_thresholds(t, alpha, beta):
    """``(alpha sqrt(ln t), beta / max(1, ln ln t))`` at round ``t >= 1``: ``ln t`` and ``ln ln t`` of line 4 are
    non-positive for ``t <= e``, so both are guarded by ``max(1, .)`` as in the DTS authors' C++."""
    log_t = math.log(t)
    log_log_t = math.log(log_t) if log_t > 1.0 else 0.0
    return alpha * math.sqrt(log_t), beta / max(1.0, log_log_t)


@numba.njit(cache=True, nogil=True)
def first_deficient(state, start, count_threshold, gap_threshold):
    """The first pair ``p >= start`` (lexicographic) that line 4 forces, or ``-1``."""
    for pair in range(start, state.counts.shape[0]):
        if state.counts[pair] < count_threshold or state.gaps[pair] < gap_threshold:
            return pair
    return -1


@numba.njit(cache=True, nogil=True)
def record_pair_duel(state, first, second, first_won):
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
def refresh_structure(state):
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
def confident_winner(state, log_level):
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


@numba.njit(cache=True, nogil=True)
def load_means(state, pair_mean):
    """Put a matrix (by its upper triangle) in place of ``mu_hat``."""
    for pair in range(pair_mean.shape[0]):
        mean = pair_mean[pair]
        state.pair_mean[pair] = mean
        state.divergences[pair] = kl_bernoulli_scalar(mean, 0.5) if mean != 0.5 else 0.0
        state.gaps[pair] = abs(mean - 0.5)
    state.stats_version += 1
    state.sign_version += 1
