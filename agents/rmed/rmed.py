"""RMED1: Relative Minimum Empirical Divergence.

Komiyama, Honda, Kashima, Nakagawa. *Regret Lower Bound and Optimal Algorithm in Dueling
Bandit Problem.* COLT 2015 (the RMED loop algorithm with the RMED1 opponent rule).
The comments in the kernels name its steps (initial phase, choice, opponent rule,
update, loop end).

RMED1 assumes a Condorcet winner; its regret bound refutes each arm against the Condorcet winner,
so it meets the lower bound of the paper where the Condorcet winner is every arm's cheapest
refuter (RMED2FH meets it in general).  Every arm ``i`` carries the empirical divergence

    I_i = sum_{j != i, mu_hat_ij < 1/2} N_ij d(mu_hat_ij, 1/2),

minus the log-likelihood that ``i`` is the Condorcet winner.  Arms are played in loops; an arm
joins the next loop while ``I_i - min_j I_j <= ln t + f(K)``, i.e. while it is still plausibly
the winner.  On problems without a Condorcet winner (e.g. MultiSol) the divergences of the
Copeland winners grow linearly too, so the losing arms keep re-entering the loops and RMED1
pays linear Copeland regret.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from dueling_gym.agents._pair_statistics import empirical_preference
from dueling_gym.agents._random_draws import random_argmin_bits
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.stats import kl_bernoulli_scalar
from dueling_gym.validation import check_integer, check_number

__all__ = ["RMED1"]


class RMEDState(AgentState, fields=[
    "rng",            # the agent's numpy Generator
    "wins",           # W[i, j] = duels of {i, j} won by i (K x K, int64)
    "divergence",     # D[i, j] = N_ij d(mu_hat_ij, 1/2) if mu_hat_ij < 1/2 else 0
    "info",           # I_i = sum_j D[i, j]
    "initial_first",  # initial phase: the K(K-1)/2 pairs (i < j) in lexicographic order
    "initial_second",
    "n_initial",      # L0 * K(K-1)/2 initial duels
    "loop",           # LC: arms of the current loop, ascending, loop[:loop_size]
    "loop_size",
    "cursor",         # position of the next arm l in LC
    "remaining",      # LR as a boolean mask (arms of LC not yet played in this loop)
    "next_loop",      # LN: arms appended for the next loop, next_loop[:next_size]
    "next_size",
    "in_next",        # membership mask of LN
    "all_arms",       # all-True mask (argmin over every arm)
    "opponents",      # scratch mask: O_hat_l
    "scratch",        # scratch values: mu_hat_lj
    "f_value",        # f(K)
    "t",              # duels observed so far
]):
    """Numba-side state of :class:`RMED1`."""


# Speed: Numba reference-counts every array taken from the state (``state.wins``) and every
# array passed to a compiled function: an atomic increment and decrement each, which cost more
# than this O(K) step itself.  So the kernels read each array field once into a local, the
# helpers are inlined (``inline="always"``: the counts of their arguments cancel and are pruned),
# ties are broken through the bit generator (the same stream as the Generator's draws), and the
# minimum of ``I`` is a plain loop (``ndarray.min`` is a call that counts references too).


@numba.njit(cache=True, nogil=True, inline="always")
def _divergence_term(wins, row, column, total):
    """``D[row, column] = N d(mu_hat, 1/2)`` if ``mu_hat = W[row, column] / N < 1/2``, else 0."""
    mean = wins[row, column] / total
    # Only strict empirical losses contribute (ties carry d(1/2, 1/2) = 0 anyway).
    return total * kl_bernoulli_scalar(mean, 0.5) if mean < 0.5 else 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def _row_sum(divergence, row):
    """``sum_j D[row, j]`` added in index order from 0.0 (as ``divergence[row].sum()`` does)."""
    total = 0.0
    for column in range(divergence.shape[1]):
        total += divergence[row, column]
    return total


@numba.njit(cache=True, nogil=True, inline="always")
def record_win(wins, divergence, info, winner, loser):
    """Update step, statistics: record the duel won by ``winner`` over ``loser`` and refresh ``D``
    for the pair and ``I`` for its two arms (O(K), exact sums).

    Shared by the RMED agents.
    """
    wins[winner, loser] += 1
    total = wins[winner, loser] + wins[loser, winner]
    divergence[winner, loser] = _divergence_term(wins, winner, loser, total)
    divergence[loser, winner] = _divergence_term(wins, loser, winner, total)
    # Summing the rows afresh (instead of adding the difference) keeps I_i independent of the
    # history, so structural ties (e.g. I_i = 0) stay exact ties.
    info[winner] = _row_sum(divergence, winner)
    info[loser] = _row_sum(divergence, loser)


@numba.njit(cache=True, nogil=True, inline="always")
def initial_duel(state, t):
    """Initial phase, duel ``t < n_initial``: every pair ``i < j``, ``L0`` rounds in lexicographic
    order (``K(K-1)/2`` steps each).  Shared by the RMED agents."""
    initial_first = state.initial_first
    step = t % initial_first.shape[0]
    return initial_first[step], state.initial_second[step]


@numba.njit(cache=True, nogil=True)
def rmed_act(state):
    t = state.t
    if t < state.n_initial:
        return initial_duel(state, t)
    wins = state.wins
    opponents = state.opponents
    scratch = state.scratch
    bitgen = state.rng.bit_generator
    n_arms = wins.shape[0]
    # Choice: l(t) = the next arm of the current loop L_C (ascending order within a loop).
    arm = state.loop[state.cursor]
    # i_hat* = argmin_i I_i (random ties).
    best = random_argmin_bits(state.info, state.all_arms, bitgen)
    # Opponent rule (RMED1): O_hat_l = {j != l : mu_hat_lj <= 1/2}  <=>  W_lj <= W_jl (exact).
    n_opponents = 0
    for j in range(n_arms):
        is_opponent = j != arm and wins[arm, j] <= wins[j, arm]
        opponents[j] = is_opponent
        if is_opponent:
            n_opponents += 1
            scratch[j] = empirical_preference(wins, arm, j)
    # m(t) = i_hat* if i_hat* in O_hat_l or O_hat_l is empty (then l = i_hat* gives the
    # self-duel (l, l): exploitation) ...
    if n_opponents == 0 or opponents[best]:
        return arm, best
    # ... otherwise the arm that beats l the most: argmin_{j in O_hat_l} mu_hat_lj (random ties).
    return arm, random_argmin_bits(scratch, opponents, bitgen)


@numba.njit(cache=True, nogil=True, inline="always")
def rmed_advance_loop(state):
    """Update step, loop: ``L_R <- L_R \\ {l(t)}``, arms within ``ln t + f(K)`` of ``min I`` join ``L_N``,
    and at the end of ``L_C``: ``L_C, L_R <- L_N``, ``L_N <- []``.

    Shared by the RMED agents; ``state.t`` must already count the duel just observed.
    """
    info = state.info
    loop = state.loop
    remaining = state.remaining
    in_next = state.in_next
    next_loop = state.next_loop
    n_arms = info.shape[0]
    # Update: L_R <- L_R \ {l(t)}.
    cursor = state.cursor
    remaining[loop[cursor]] = False
    cursor += 1
    # Update: every j not in L_R (and not yet in L_N) joins L_N if
    # I_j - I_{i_hat*} <= ln t + f(K).
    minimum = info[0]
    for j in range(1, n_arms):
        minimum = min(minimum, info[j])
    threshold = math.log(state.t) + state.f_value
    next_size = state.next_size
    for j in range(n_arms):
        if not remaining[j] and not in_next[j] and info[j] - minimum <= threshold:
            in_next[j] = True
            next_loop[next_size] = j
            next_size += 1
    # Loop end: when L_C is exhausted, L_C <- L_N (ascending), L_R <- L_N, L_N <- [].
    if cursor == state.loop_size:
        size = 0
        for j in range(n_arms):  # scanning the mask in index order sorts L_N
            remaining[j] = in_next[j]
            if in_next[j]:
                loop[size] = j
                size += 1
            in_next[j] = False
        state.loop_size = size
        cursor = 0
        next_size = 0
    state.cursor = cursor
    state.next_size = next_size


@numba.njit(cache=True, nogil=True)
def rmed_observe(state, first, second, first_won):
    # Update: record the duel (a self-duel carries no information about P) and refresh I.
    t = state.t + 1
    state.t = t
    if first != second:
        if first_won:
            record_win(state.wins, state.divergence, state.info, first, second)
        else:
            record_win(state.wins, state.divergence, state.info, second, first)
    if t <= state.n_initial:
        return  # still in the initial phase; LC = [0..K-1], LR = LC, LN = [] are preset
    rmed_advance_loop(state)


@numba.njit(cache=True, nogil=True)
def rmed_recommend(state):
    # i_hat* = argmin I; lowest index on ties so that recommending never consumes the rng.
    return int(np.argmin(state.info))


@register_agent("rmed1", target="condorcet")
class RMED1(KernelDuelingAgent):
    """Relative Minimum Empirical Divergence, RMED1 (Komiyama et al., COLT 2015).

    After one initial round over all pairs, RMED1 plays arms in loops.  The current arm ``l``
    duels the most plausible Condorcet winner ``i_hat* = argmin_i I_i`` if ``i_hat*`` does
    not lose to ``l`` empirically, otherwise the arm that beats ``l`` the most; arms whose
    empirical divergence ``I_i`` is within ``ln t + f(K)`` of the minimum join the next loop.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    f_scale : float, default 0.3
        Scale ``c`` of ``f(K) = c K^e``, the slack added to ``ln t`` in the loop test.
    f_exponent : float, default 1.01
        Exponent ``e`` of ``f(K)``.  The defaults ``f(K) = 0.3 K^1.01`` are those of the
        paper's experiments and of the authors' code.
    initial_draws : int, default 1
        ``L0``, the number of initial rounds over all ``K(K-1)/2`` pairs.
    seed : int, optional
        Seed of the agent's generator (used only to break ties).

    Notes
    -----
    Regret guarantees assume a Condorcet winner.  Per step ``O(K)``: only the played pair's
    divergence terms change, so ``I`` is refreshed for two arms per duel.
    :meth:`~dueling_gym.agents.DuelingAgent.recommend` returns ``argmin_i I_i`` (lowest index on ties).

    References
    ----------
    J. Komiyama, J. Honda, H. Kashima, H. Nakagawa. Regret Lower Bound and Optimal Algorithm
    in Dueling Bandit Problem. COLT 2015.
    """

    paper = (PaperLink("COLT 2015, PMLR 40", "https://proceedings.mlr.press/v40/Komiyama15.html"),)

    guarantee = (
        "Asymptotic regret ``O(K ln T)`` under a Condorcet winner, each arm being refuted against the "
        "Condorcet winner itself, which meets the paper's lower bound only where the Condorcet winner is every "
        "arm's cheapest refuter; the bound that matches the lower bound in general is RMED2FH's (Komiyama, "
        "Honda, Kashima & Nakagawa, COLT 2015, the RMED1 analysis)."
    )

    act_kernel = rmed_act
    observe_kernel = rmed_observe
    recommend_kernel = rmed_recommend

    def __init__(self, n_arms: int, *, f_scale: float = 0.3, f_exponent: float = 1.01, initial_draws: int = 1,
                 seed: int | np.random.SeedSequence | None = None):
        self.f_scale = check_number("f_scale", f_scale, strict=False, minimum=0.0)
        self.f_exponent = check_number("f_exponent", f_exponent)
        self.initial_draws = check_integer("initial_draws", initial_draws, minimum=1)
        super().__init__(n_arms, seed=seed)

    @property
    def f_value(self) -> float:
        """``f(K) = f_scale * K ** f_exponent``."""
        return self.f_scale * self.n_arms ** self.f_exponent

    def _reset_state(self) -> None:
        self.state = RMEDState(**rmed_loop_fields(self, self.initial_draws), t=0)


def rmed_loop_fields(agent: KernelDuelingAgent, initial_rounds: int) -> dict[str, Any]:
    """The state fields of the RMED loop for a fresh run of ``agent`` (shared with RMED2).

    ``L0 = initial_rounds`` rounds over every pair ``i < j``, then ``L_C = L_R = [0 .. K-1]`` and
    ``L_N = []``.  Binds ``agent.wins`` and ``agent.empirical_divergence`` to the state's arrays
    (shared with the compiled state, read-only from Python); needs ``agent.f_value``.
    """
    n_arms = agent.n_arms
    first, second = np.triu_indices(n_arms, k=1)  # row-major = lexicographic order
    agent.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
    agent.empirical_divergence = np.zeros(n_arms)
    return dict(
        rng=agent.rng, wins=agent.wins, divergence=np.zeros((n_arms, n_arms)), info=agent.empirical_divergence,
        initial_first=first.astype(np.int64), initial_second=second.astype(np.int64),
        n_initial=initial_rounds * first.size, loop=np.arange(n_arms, dtype=np.int64), loop_size=n_arms,
        cursor=0, remaining=np.ones(n_arms, dtype=np.bool_), next_loop=np.zeros(n_arms, dtype=np.int64),
        next_size=0, in_next=np.zeros(n_arms, dtype=np.bool_), all_arms=np.ones(n_arms, dtype=np.bool_),
        opponents=np.zeros(n_arms, dtype=np.bool_), scratch=np.zeros(n_arms), f_value=float(agent.f_value),
    )
