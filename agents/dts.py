"""DTS: Double Thompson Sampling.

Wu, Liu. *Double Thompson Sampling for Dueling Bandits.* NIPS 2016 (Algorithm 1, D-TS).

DTS targets Copeland winners (the Condorcet winner when there is one).  The first arm is a
Thompson sample of the Copeland winner, restricted to the arms that are Copeland winners
under optimistic (RUCB-type) bounds; the second arm is a Thompson sample of the arm most
likely to beat the first, among the arms that may still beat it.  When no arm plausibly
beats the first one, the duel is a self-duel (pure exploitation).

Implementation note: the first Thompson sample is drawn lazily (see ``_first_arm``): a
candidate's row of ``theta`` is abandoned once its vote count can no longer reach the best
complete row.  This draws far fewer Beta variates and leaves the law of the first arm exactly
as in the paper, where every ``theta_ij`` is drawn up front.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._dueling_kernels import random_argmax
from dueling_gym.agents._pair_statistics import (
    empirical_copeland_winner,
    record_duel,
    rucb_lower_bound,
    rucb_upper_bound,
)
from dueling_gym.agents.base import AgentState, KernelDuelingAgent, check_number, register_agent

__all__ = ["DTS"]


class DTSState(AgentState, fields=[
    "rng",         # the agent's numpy Generator
    "wins",        # W[i, j] = duels of {i, j} won by i (K x K, int64)
    "optimistic",  # scratch: optimistic Copeland counts zeta_bar_i
    "candidates",  # scratch mask: C = argmax zeta_bar
    "theta",       # scratch: first Thompson sample theta_ij, i < j (drawn lazily)
    "drawn_in",    # round in which theta_ij was last drawn (i < j)
    "round",       # number of first samples taken (one per act with |C| > 1)
    "last_first",  # a1 of the previous step (-1 before the first)
    "votes",       # scratch: #{j != i : theta_ij > 1/2}
    "eligible",    # scratch mask: {i : l_{i,a1} <= 1/2}
    "theta2",      # scratch: second Thompson sample theta'_i
    "alpha",
    "t",           # duels observed so far
]):
    """Numba-side state of :class:`DTS`."""


@numba.njit(cache=True, nogil=True)
def first_sample_above(state, i, j):
    """Whether ``theta_ij > 1/2`` in the current first sample; the pair is drawn on first use.

    ``theta_ij ~ Beta(W_ij + 1, W_ji + 1)`` is drawn for ``i < j`` and ``theta_ji = 1 - theta_ij``.
    """
    low = min(i, j)
    high = max(i, j)
    if state.drawn_in[low, high] != state.round:
        state.theta[low, high] = state.rng.beta(state.wins[low, high] + 1.0, state.wins[high, low] + 1.0)
        state.drawn_in[low, high] = state.round
    value = state.theta[low, high]
    return value > 0.5 if i == low else value < 0.5


@numba.njit(cache=True, nogil=True)
def first_sample_votes(state):
    """Take a new first sample and set ``state.votes[i] = #{j != i : theta_ij > 1/2}`` for ``i in C``.

    Rows that cannot reach the maximum are cut short and get ``-1`` (see :func:`_first_arm`);
    the rows of all maximisers are complete.  Returns the maximum.  Shared with D-TS+.
    """
    n_arms = state.wins.shape[0]
    state.round += 1
    start = state.last_first
    if start >= 0 and not state.candidates[start]:
        start = -1
    best = -1
    for position in range(-1, n_arms):
        arm = start if position < 0 else position
        if arm < 0 or not state.candidates[arm] or (position >= 0 and arm == start):
            continue
        votes = 0
        left = n_arms - 1
        for sweep in range(2):  # sweep 0: pairs already drawn; sweep 1: the others
            for other in range(n_arms):
                if other == arm:
                    continue
                drawn = state.drawn_in[min(arm, other), max(arm, other)] == state.round
                if drawn != (sweep == 0):
                    continue
                votes += first_sample_above(state, arm, other)
                left -= 1
                if votes + left < best:
                    break
            if votes + left < best:
                break
        if votes + left < best:
            state.votes[arm] = -1  # cannot reach the maximum
        else:
            state.votes[arm] = votes  # left == 0: the exact count
            if votes > best:
                best = votes
    return best


@numba.njit(cache=True, nogil=True)
def _first_arm(state):
    """``a1 = argmax_{i in C} #{j != i : theta_ij > 1/2}`` with random ties (step 3).

    The pairs are drawn lazily and a candidate's row is abandoned as soon as it can no longer
    reach the best count found so far (``votes + pairs left < best``): abandoned rows are not
    maximisers, complete rows have exact counts, so the maximiser set, and hence the law of
    ``a1``, is exactly that of drawing every ``theta_ij`` up front; only fewer Beta draws are
    made.  The previous ``a1`` is scanned first (it usually sets a high bar), and within a row
    the pairs drawn already in this step are looked at before new ones are drawn.
    """
    first_sample_votes(state)
    return random_argmax(state.votes, state.candidates, state.rng)


@numba.njit(cache=True, nogil=True)
def dts_candidates(state):
    """Steps 1-2: the mask ``state.candidates`` of ``C = argmax_i zeta_bar_i``; returns ``|C|``.

    ``zeta_bar_i = #{j != i : u_ij >= 1/2}`` are the optimistic Copeland counts (``state.optimistic``).
    Shared with D-TS+.
    """
    n_arms = state.wins.shape[0]
    wins = state.wins
    alpha = state.alpha
    log_t = math.log(state.t + 1.0)  # the current duel is number t + 1
    # For each pair at most the arm that trails empirically can have u < 1/2, so one bound
    # per pair (and none for level pairs, whose u is >= 1/2 on both sides).
    for i in range(n_arms):
        state.optimistic[i] = n_arms - 1
    for i in range(n_arms):
        for j in range(i + 1, n_arms):
            if wins[i, j] < wins[j, i]:
                if rucb_upper_bound(wins, i, j, alpha, log_t) < 0.5:
                    state.optimistic[i] -= 1
            elif wins[j, i] < wins[i, j]:
                if rucb_upper_bound(wins, j, i, alpha, log_t) < 0.5:
                    state.optimistic[j] -= 1
    top = state.optimistic.max()
    n_candidates = 0
    for i in range(n_arms):
        state.candidates[i] = state.optimistic[i] == top
        n_candidates += state.candidates[i]
    return n_candidates


@numba.njit(cache=True, nogil=True)
def dts_second_arm(state, first):
    """Step 4: ``a2 = argmax theta'_i`` over ``{i : l_{i,a1} <= 1/2}`` (random ties), which holds ``a1``.

    ``theta'_i ~ Beta(W_{i,a1} + 1, W_{a1,i} + 1)`` and ``theta'_{a1} = 1/2``.  Shared with D-TS+.
    """
    n_arms = state.wins.shape[0]
    wins = state.wins
    log_t = math.log(state.t + 1.0)
    for i in range(n_arms):
        if i == first:
            state.eligible[i] = True
            state.theta2[i] = 0.5
        elif rucb_lower_bound(wins, i, first, state.alpha, log_t) <= 0.5:
            state.eligible[i] = True
            state.theta2[i] = state.rng.beta(wins[i, first] + 1.0, wins[first, i] + 1.0)
        else:
            state.eligible[i] = False
    return random_argmax(state.theta2, state.eligible, state.rng)


@numba.njit(cache=True, nogil=True)
def dts_act(state):
    # Steps 1-2: optimistic Copeland counts and their maximisers C.
    n_candidates = dts_candidates(state)
    # Step 3: first Thompson sample, a1 = argmax_{i in C} #{j != i : theta_ij > 1/2}.
    if n_candidates == 1:
        first = random_argmax(state.optimistic, state.candidates, state.rng)
    else:
        first = _first_arm(state)
    state.last_first = first
    # Step 4: second Thompson sample.
    return first, dts_second_arm(state, first)


@numba.njit(cache=True, nogil=True)
def dts_observe(state, first, second, first_won):
    state.t += 1
    record_duel(state.wins, first, second, first_won)


@numba.njit(cache=True, nogil=True)
def dts_recommend(state):
    # The empirical Copeland winner (lowest index on ties).
    return empirical_copeland_winner(state.wins)


@register_agent("dts")
class DTS(KernelDuelingAgent):
    """Double Thompson Sampling, D-TS (Wu and Liu, NIPS 2016).

    The first arm is drawn by Thompson sampling of the Copeland winner among the arms with the
    largest optimistic Copeland count ``#{j : u_ij >= 1/2}``; the second arm by Thompson
    sampling of the arm most likely to beat the first, among the arms ``i`` with
    ``l_{i,a1} <= 1/2`` (the first arm itself included, which gives a self-duel when no other
    arm plausibly beats it).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    alpha : float, default 0.51
        Exploration parameter ``alpha > 1/2`` of the bounds ``mu_hat +- sqrt(alpha ln t / N)``
        (0.51 as in the authors' experiments).
    seed : int, optional
        Seed of the agent's generator (Beta samples and ties).

    Notes
    -----
    Works with Copeland winners; no Condorcet winner is needed.  Per step: ``O(K^2)`` bound
    comparisons (one square root per pair at most) and Beta draws.  The first sample is drawn
    lazily: only the pairs needed to identify ``argmax_{i in C}`` of the vote counts are drawn,
    which leaves the law of ``a1`` exactly that of the full sample of Algorithm 1 (lines 7-9) but needs about
    ``K - 1`` draws instead of ``K(K-1)/2`` once one arm dominates (none when ``|C| = 1``); the
    second sample draws ``theta'_i`` for the eligible arms only.  :meth:`recommend` returns the
    empirical Copeland winner (lowest index on ties).

    References
    ----------
    H. Wu, X. Liu. Double Thompson Sampling for Dueling Bandits. NIPS 2016.
    """

    act_kernel = dts_act
    observe_kernel = dts_observe
    recommend_kernel = dts_recommend

    def __init__(self, n_arms: int, *, alpha: float = 0.51, seed: int | np.random.SeedSequence | None = None):
        self.alpha = check_number("alpha", alpha, minimum=0.5)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        self.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        self.state = DTSState(
            rng=self.rng, wins=self.wins, optimistic=np.zeros(n_arms, dtype=np.int64),
            candidates=np.zeros(n_arms, dtype=np.bool_), theta=np.zeros((n_arms, n_arms)),
            drawn_in=np.zeros((n_arms, n_arms), dtype=np.int64), round=0, last_first=-1,
            votes=np.zeros(n_arms, dtype=np.int64), eligible=np.zeros(n_arms, dtype=np.bool_),
            theta2=np.zeros(n_arms), alpha=self.alpha, t=0,
        )
