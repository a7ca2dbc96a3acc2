"""RCS: Relative Confidence Sampling.

Zoghi, Whiteson, de Rijke, Munos. *Relative Confidence Sampling for Efficient On-line Ranker
Evaluation.* WSDM 2014 (Algorithm 1).

RCS keeps RUCB's optimistic choice of the second arm but replaces RUCB's conservative choice of
the first arm (the *champion*) by a Thompson sample: one preference matrix ``theta`` is drawn
from the Beta posteriors of all pairs (a simulated round-robin tournament), and its Condorcet
winner becomes the champion.  When the sampled matrix has no Condorcet winner, the champion is
the arm that has been champion least often so far.  The challenger is then the arm with the
largest RUCB upper bound of beating the champion.

The steps of Algorithm 1, as the kernels below implement them:

* upper bounds ``u_ij = mu_hat_ij + sqrt(alpha ln t / N_ij)`` (``u_ij = 1`` for an unplayed pair,
  ``u_ii = 1/2``), with ``t`` the number of the current duel;
* sample ``theta_ij ~ Beta(W_ij + 1, W_ji + 1)`` for ``i < j`` and ``theta_ji = 1 - theta_ij``;
* champion ``c``: an arm with ``theta_cj >= 1/2`` for every ``j``; if there is none, an arm with
  the fewest champion turns ``B_c`` (uniformly random among ties); then ``B_c <- B_c + 1``;
* challenger ``d = argmax_j u_jc`` with random ties that never favour ``c`` (as in RUCB); ``d = c``,
  a self-duel, when no other arm has ``u_jc >= 1/2``;
* duel ``(c, d)``, update ``W``.

Implementation choices and the public implementations:

* The sampled tournament is resolved lazily: a knock-out pass (starting from the previous
  champion) leaves the only arm that can be the sample's Condorcet winner, which is then checked
  against every other arm; only the pairs these two passes look at are drawn, at most ``2K - 3``
  of the ``K(K-1)/2``.  Pairs are independent and the champion is a function of the sample, so
  its law is exactly that of drawing every ``theta_ij``; once one arm dominates, ``K - 1`` draws
  per step suffice.
* Only the side of 1/2 on which ``theta_ij`` falls matters, and it is drawn exactly without a
  Beta variate when the posterior is concentrated: ``P(theta_ij < 1/2) = P(Bin(N_ij + 1, 1/2) >=
  W_ij + 1)``, so the less likely side has probability ``p = P(Bin(N + 1, 1/2) >= max(W_ij, W_ji)
  + 1)``, which the Chernoff bound ``b = exp(-(N + 1) d(k / (N + 1), 1/2))`` dominates.  With one
  uniform ``u``: ``u >= b`` gives the likely side; otherwise ``p`` is summed exactly and the
  unlikely side is taken iff ``u < p``.  This is a Bernoulli(``p``) draw, so the law is unchanged;
  ``b`` changes only when the pair is played and is kept per pair.  Pairs with ``b >= 0.05``
  draw ``theta_ij ~ Beta`` as written.
* Ties in "chosen least often": the paper leaves them open; both the C++ code of Wu and Liu
  (DuelingBandits) and duelpy take the lowest index.  Here they are broken uniformly at random,
  the convention of every agent in this package; with the lowest index the first rounds, where
  no sampled matrix has a Condorcet winner, would visit the arms in a fixed order.
* The C++ code of Wu and Liu counts a sampled pair exactly at 1/2 for the second arm; with
  continuous Beta samples such ties have probability zero, so the rule ``theta_cj >= 1/2`` is used
  as written.
* :meth:`RCS.recommend` returns the empirical Copeland winner (lowest index on ties), the arm
  that RUCB's Algorithm 1 returns at the end of a run.

RCS assumes a Condorcet winner; the paper gives no regret bound.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._dueling_kernels import random_argmin, rucb_challenger
from dueling_gym.agents._pair_statistics import empirical_copeland_winner, record_duel
from dueling_gym.agents.base import AgentState, KernelDuelingAgent, check_number, register_agent
from dueling_gym.stats import kl_bernoulli_scalar

__all__ = ["RCS"]


class RCSState(AgentState, fields=[
    "rng",             # the agent's numpy Generator
    "wins",            # W[i, j] = duels of {i, j} won by i (K x K, int64)
    "champion_turns",  # B_i = steps in which i was the champion
    "tail_bound",      # b_ij (i < j): Chernoff bound on the less likely side of theta_ij vs 1/2
    "low_beats",       # current sample, i < j: theta_ij >= 1/2 (drawn lazily)
    "drawn_in",        # round in which the pair (i < j) was last drawn
    "round",           # number of samples taken
    "last_champion",   # champion of the previous step (-1 before the first)
    "all_arms",        # all-True mask
    "scratch",         # scratch values (upper bounds)
    "alpha",
    "t",               # duels observed so far
]):
    """Numba-side state of :class:`RCS`."""

#: Pairs whose tail bound is at least this draw ``theta_ij`` from the Beta posterior itself.
_BETA_DRAW_BOUND = 0.05


@numba.njit(cache=True, nogil=True)
def _binomial_half_tail(trials, least):
    """``P(Bin(trials, 1/2) >= least)`` for ``least > trials / 2``, summed from the first term."""
    term = math.exp(math.lgamma(trials + 1.0) - math.lgamma(least + 1.0) - math.lgamma(trials - least + 1.0)
                    - trials * math.log(2.0))
    total = 0.0
    j = least
    while j <= trials and term > 1e-18 * total:
        total += term
        term *= (trials - j) / (j + 1.0)
        j += 1
    return total


@numba.njit(cache=True, nogil=True)
def _refresh_tail_bound(state, low, high):
    trials = state.wins[low, high] + state.wins[high, low] + 1.0
    least = max(state.wins[low, high], state.wins[high, low]) + 1.0
    ratio = least / trials
    state.tail_bound[low, high] = math.exp(-trials * kl_bernoulli_scalar(ratio, 0.5)) if ratio > 0.5 else 1.0


@numba.njit(cache=True, nogil=True)
def _sample_beats(state, i, j):
    """Whether ``theta_ij >= 1/2`` in the current sample; the pair is drawn on first use."""
    low = min(i, j)
    high = max(i, j)
    if state.drawn_in[low, high] != state.round:
        state.drawn_in[low, high] = state.round
        wins_low = state.wins[low, high]
        wins_high = state.wins[high, low]
        bound = state.tail_bound[low, high]
        if bound >= _BETA_DRAW_BOUND:
            state.low_beats[low, high] = state.rng.beta(wins_low + 1.0, wins_high + 1.0) >= 0.5
        else:
            uniform = state.rng.random()
            unlikely = False
            if uniform < bound:
                trials = wins_low + wins_high + 1
                unlikely = uniform < _binomial_half_tail(trials, max(wins_low, wins_high) + 1)
            state.low_beats[low, high] = (wins_low > wins_high) != unlikely
    beats = state.low_beats[low, high]
    return beats if i == low else not beats


@numba.njit(cache=True, nogil=True)
def sampled_condorcet_winner(state):
    """The Condorcet winner of a fresh posterior sample ``theta``, or ``-1`` if it has none.

    Knock-out pass: the survivor of a sequence of sampled duels is the only arm that has not
    lost one, hence the only possible Condorcet winner; it is then checked against all arms.
    """
    n_arms = state.wins.shape[0]
    state.round += 1
    start = state.last_champion if state.last_champion >= 0 else 0
    survivor = start
    for arm in range(n_arms):
        if arm != start and not _sample_beats(state, survivor, arm):
            survivor = arm
    for arm in range(n_arms):
        if arm != survivor and not _sample_beats(state, survivor, arm):
            return -1
    return survivor


@numba.njit(cache=True, nogil=True)
def rcs_act(state):
    log_t = math.log(state.t + 1.0)  # the current duel is number t + 1
    champion = sampled_condorcet_winner(state)
    if champion < 0:
        champion = random_argmin(state.champion_turns, state.all_arms, state.rng)
    state.champion_turns[champion] += 1
    state.last_champion = champion
    challenger = rucb_challenger(state.wins, champion, state.all_arms, state.scratch, state.alpha, log_t, state.rng)
    return champion, challenger


@numba.njit(cache=True, nogil=True)
def rcs_observe(state, first, second, first_won):
    state.t += 1
    if record_duel(state.wins, first, second, first_won):
        _refresh_tail_bound(state, min(first, second), max(first, second))


@numba.njit(cache=True, nogil=True)
def rcs_recommend(state):
    return empirical_copeland_winner(state.wins)


@register_agent("rcs")
class RCS(KernelDuelingAgent):
    """Relative Confidence Sampling (Zoghi, Whiteson, de Rijke and Munos, WSDM 2014, Algorithm 1).

    The champion is the Condorcet winner of a preference matrix sampled from the Beta
    posteriors (else the arm that was champion least often); the challenger is the arm with the
    highest RUCB upper bound of beating it.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    alpha : float, default 0.51
        Exploration parameter ``alpha > 1/2`` of the upper bounds ``mu_hat + sqrt(alpha ln t / N)``
        (0.51, the value used for RUCB in this package and in the DTS authors' experiments; duelpy
        uses 0.501).
    seed : int, optional
        Seed of the agent's generator (posterior samples and ties).

    Notes
    -----
    Assumes a Condorcet winner (no regret bound is proved in the paper).  Per step ``O(K)``:
    between ``K - 1`` and ``2K - 3`` pairs drawn, mostly with one uniform each (see the module notes) and ``K`` upper bounds.
    :attr:`champion_turns` is ``B``, the number of steps each arm was the champion.

    References
    ----------
    M. Zoghi, S. Whiteson, M. de Rijke, R. Munos. Relative Confidence Sampling for Efficient
    On-line Ranker Evaluation. WSDM 2014.
    """

    act_kernel = rcs_act
    observe_kernel = rcs_observe
    recommend_kernel = rcs_recommend

    def __init__(self, n_arms: int, *, alpha: float = 0.51, seed: int | np.random.SeedSequence | None = None):
        self.alpha = check_number("alpha", alpha, minimum=0.5)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        #: ``W[i, j]`` (shared with the compiled state, read-only from Python).
        self.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        #: ``B_i`` (shared with the compiled state, read-only from Python).
        self.champion_turns = np.zeros(n_arms, dtype=np.int64)
        self.state = RCSState(
            rng=self.rng, wins=self.wins, champion_turns=self.champion_turns, tail_bound=np.ones((n_arms, n_arms)),
            low_beats=np.zeros((n_arms, n_arms), dtype=np.bool_), drawn_in=np.zeros((n_arms, n_arms), dtype=np.int64),
            round=0, last_champion=-1, all_arms=np.ones(n_arms, dtype=np.bool_), scratch=np.zeros(n_arms),
            alpha=self.alpha, t=0,
        )
