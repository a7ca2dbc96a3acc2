"""Knockout tournaments for ε-maximum selection.

Falahatgar, Orlitsky, Pichapati, Suresh. *Maximum Selection and Ranking under Noisy
Comparisons.* ICML 2017: Algorithm 1 (COMPARE), Algorithm 2 (KNOCKOUT-ROUND) and
Algorithm 3 (KNOCKOUT).

* **COMPARE(i, j, ε, δ)** (Algorithm 1): duel ``i`` against ``j`` at most
  ``m = ln(2/δ) / (2ε²)`` times; after ``r`` duels with empirical win rate ``p̂`` of ``i``,
  the radius is ``ĉ = sqrt(ln(4r²/δ) / (2r))`` and the loop goes on while
  ``|p̂ - 1/2| <= ĉ - ε`` and ``r <= m`` (so it ends early once the pair is clearly ordered or
  clearly within ``ε`` of a tie).  The output is ``i`` if ``p̂ > 1/2``, else ``j``.
* **KNOCKOUT-ROUND(S, ε, δ)** (Algorithm 2): pair the elements of ``S`` at random, COMPARE each
  pair and keep the winners; with ``|S|`` odd, the unpaired element goes through unplayed.
* **KNOCKOUT(S, ε, δ)** (Algorithm 3): round ``i = 1, 2, ...`` is
  ``KNOCKOUT-ROUND(S, c ε / (γ 2^{i/3}), δ / 2^i)`` with ``c = 2^{1/3} - 1``, until one element
  is left.  The biases sum to at most ``ε / γ`` and the confidences to at most ``δ``.

Under strong stochastic transitivity and the stochastic triangle inequality the
output is an ε-maximum with probability at least ``1 - δ``: ``P[i*, out] <= 1/2 + ε`` for the
best arm ``i*``, after ``O(K/ε² (1 + ln 1/δ))`` duels.  ``γ`` is the paper's relaxation of
strong stochastic transitivity (``P̃[i, k] >= γ max(P̃[i, j], P̃[j, k])`` for ``i > j > k``,
``P̃ = P - 1/2``); ``γ = 1`` is strong stochastic transitivity itself.

Where duelpy (``KnockoutTournament``) differs, this module follows the paper:

* duelpy compares every pair of the surviving arms (``itertools.combinations``) in a round
  instead of a random perfect pairing, so a round costs ``O(|S|²)`` COMPAREs; Algorithm 2
  pairs the arms at random, ``|S| / 2`` COMPAREs per round;
* duelpy's COMPARE uses the overall ``δ`` in the radius ``ĉ`` and the round's ``δ_i`` only in
  ``m``; Algorithm 3 calls COMPARE with ``δ_i``, which both use here;
* duelpy's default ``γ = 0.6``; the default here is ``γ = 1`` (strong stochastic transitivity,
  the paper's main assumption).  ``ε = 0.05`` and ``δ = 0.1`` are duelpy's defaults, which it
  takes from the paper's experiments.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents.base import PaperLink
from dueling_gym.agents.identification import KernelIdentificationAgent, shuffle_prefix
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import check_number, check_probability

__all__ = ["Knockout"]

_C = 2.0 ** (1.0 / 3.0) - 1.0


class KnockoutState(AgentState, fields=[
    "rng", "epsilon", "delta", "gamma", "alive", "n_alive", "winners", "n_winners", "out_round", "position", "round",
    "round_epsilon", "round_delta", "budget", "first", "second", "duels", "first_wins", "finished", "t",
]):
    """Numba-side state of :class:`Knockout`."""


@numba.njit(cache=True, nogil=True)
def compare_finished(first_wins, duels, epsilon, delta, budget):
    """Algorithm 1's loop test negated: True once COMPARE stops after ``duels`` samples."""
    if duels > budget:
        return True
    mean = first_wins / duels
    radius = math.sqrt(math.log(4.0 * duels * duels / delta) / (2.0 * duels))
    return abs(mean - 0.5) > radius - epsilon


@numba.njit(cache=True, nogil=True)
def _start_round(state):
    state.round += 1
    state.round_epsilon = _C * state.epsilon / (state.gamma * 2.0 ** (state.round / 3.0))
    state.round_delta = state.delta / 2.0 ** state.round
    state.budget = math.log(2.0 / state.round_delta) / (2.0 * state.round_epsilon ** 2)
    shuffle_prefix(state.alive, state.n_alive, state.rng)  # Algorithm 2: random pairing
    state.n_winners = 0
    state.position = 0


@numba.njit(cache=True, nogil=True)
def _next_pair(state):
    # Pairs (alive[0], alive[1]), (alive[2], alive[3]), ...; an odd last arm goes through.
    while True:
        if state.position + 1 < state.n_alive:
            state.first = state.alive[state.position]
            state.second = state.alive[state.position + 1]
            state.duels = 0
            state.first_wins = 0
            return
        if state.position < state.n_alive:
            state.winners[state.n_winners] = state.alive[state.position]
            state.n_winners += 1
        # End of the round: the winners are the new S.
        for index in range(state.n_winners):
            state.alive[index] = state.winners[index]
        state.n_alive = state.n_winners
        if state.n_alive == 1:
            state.finished = True
            state.first = state.alive[0]
            state.second = state.alive[0]
            return
        _start_round(state)


@numba.njit(cache=True, nogil=True)
def knockout_act(state):
    return state.first, state.second


@numba.njit(cache=True, nogil=True)
def knockout_observe(state, first, second, first_won):
    state.t += 1
    if state.finished or first != state.first or second != state.second:
        return
    state.duels += 1
    state.first_wins += first_won
    if compare_finished(state.first_wins, state.duels, state.round_epsilon, state.round_delta, state.budget):
        if 2 * state.first_wins > state.duels:
            winner, loser = state.first, state.second
        else:
            winner, loser = state.second, state.first
        state.out_round[loser] = state.round
        state.winners[state.n_winners] = winner
        state.n_winners += 1
        state.position += 2
        _next_pair(state)


@numba.njit(cache=True, nogil=True)
def knockout_recommend(state):
    return state.alive[0] if state.finished else state.first


@numba.njit(cache=True, nogil=True)
def knockout_ranking(state):
    # Arms knocked out later rank higher; the survivors of the current round share the top.
    n_arms = state.out_round.shape[0]
    key = np.empty(n_arms)
    for arm in range(n_arms):
        key[arm] = -state.out_round[arm] if state.out_round[arm] > 0 else -np.inf
    if state.finished:
        key[state.alive[0]] = -np.inf
    return np.argsort(key, kind="mergesort").astype(np.int64)


@register_agent("knockout")
class Knockout(KernelIdentificationAgent):
    """Knockout tournament (Falahatgar et al., ICML 2017, Algorithm 3): an (ε, δ)-PAC maximum.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    epsilon : float, default 0.05
        Bias ``ε``: the answer ``out`` satisfies ``P[i*, out] <= 1/2 + ε`` w.p. ``>= 1 - δ``.
    delta : float, default 0.1
        Confidence ``δ``.
    gamma : float, default 1.0
        Stochastic transitivity parameter ``γ`` in ``(0, 1]``; ``1`` is strong stochastic
        transitivity.  Each round's bias is divided by ``γ``.
    seed : int, optional
        Seed of the agent's generator (the random pairings).

    Notes
    -----
    Answer: the winner (``answer_type = "winner"``, ``target = "condorcet"``); :meth:`ranking`
    orders the arms by the round in which they were knocked out.  Per duel ``O(1)``; ``O(K)``
    per round for the shuffle.
    """

    paper = (PaperLink("ICML 2017, PMLR 70", "https://proceedings.mlr.press/v70/falahatgar17a.html"),)
    guarantee = (
        "(ε, δ)-PAC: under strong stochastic transitivity and the stochastic triangle inequality the output is "
        "an ε-maximum (``P[i*, out] <= 1/2 + ε``) with probability at least ``1 - δ`` after ``O(K/ε² (1 + ln "
        "1/δ))`` duels (Falahatgar, Orlitsky, Pichapati & Suresh, ICML 2017, as stated in the abstract)."
    )

    answer_type = "winner"
    target = "condorcet"
    act_kernel = knockout_act
    observe_kernel = knockout_observe
    recommend_kernel = knockout_recommend
    ranking_kernel = knockout_ranking

    def __init__(self, n_arms: int, *, epsilon: float = 0.05, delta: float = 0.1, gamma: float = 1.0, seed=None):
        self.epsilon = check_number("epsilon", epsilon, minimum=0.0, maximum=0.5)
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        self.gamma = check_number("gamma", gamma, minimum=0.0, maximum=1.0)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        self.state = KnockoutState(
            rng=self.rng, epsilon=self.epsilon, delta=self.delta, gamma=self.gamma,
            alive=np.arange(n_arms, dtype=np.int64), n_alive=n_arms, winners=np.zeros(n_arms, dtype=np.int64),
            n_winners=0, out_round=np.zeros(n_arms, dtype=np.int64), position=0, round=0, round_epsilon=0.0,
            round_delta=0.0, budget=0.0, first=0, second=0, duels=0, first_wins=0, finished=False, t=0,
        )
        _start_round(self.state)
        _next_pair(self.state)
