"""RUCB: Relative Upper Confidence Bound.

Zoghi, Whiteson, Munos, de Rijke. *Relative Upper Confidence Bound for the K-Armed Dueling
Bandit Problem.* ICML 2014 (Algorithm 1).

RUCB assumes a Condorcet winner.  On problems without one (e.g. MultiSol) it keeps paying
linear Copeland regret, which is why the Copeland algorithms exist.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._confidence_bounds import rucb_upper_bound, trailing_evidence
from dueling_gym.agents._pair_statistics import empirical_copeland_winner, record_duel
from dueling_gym.agents._random_draws import below, uniform, uniform_choice_bits
from dueling_gym.agents.base import PaperLink, RUCBBoundsAgent
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import check_bool

__all__ = ["RUCB"]


class RUCBState(AgentState, fields=[
    "rng", "wins", "evidence", "max_evidence", "candidates", "scratch", "alpha", "use_hypothesis", "hypothesis", "t",
]):
    """Numba-side state of :class:`RUCB`."""


# Speed: Numba reference-counts every array passed to a compiled function and every array
# field kept in a local across branches and loops (atomic updates that cost more than an O(K)
# step); a field read and used within one statement costs nothing (the pair is pruned).  So
# the helpers are inlined, the score loops use locals, the short candidate loop reads the state
# directly (measured: fewer counts than locals there), and draws come from the bit generator
# (the same stream as the Generator's ``random`` and ``integers``).


@numba.njit(cache=True, nogil=True, inline="always")
def _refresh_evidence(wins, evidence, max_evidence, alpha, first, second):
    # u[i, j] < 1/2  <=>  evidence[i, j] > ln t, so the candidate test needs no square roots.
    evidence[first, second] = trailing_evidence(wins, first, second, alpha)
    evidence[second, first] = trailing_evidence(wins, second, first, alpha)
    n_arms = wins.shape[0]
    for row in (first, second):
        largest = evidence[row, 0]
        for column in range(1, n_arms):
            largest = max(largest, evidence[row, column])
        max_evidence[row] = largest


@numba.njit(cache=True, nogil=True)
def rucb_act(state):
    n_arms = state.wins.shape[0]
    log_t = math.log(state.t + 1.0)
    bitgen = state.rng.bit_generator
    # Lines 3-4: candidates C = {c : u_cj >= 1/2 for all j}.
    n_candidates = 0
    for arm in range(n_arms):
        state.candidates[arm] = state.max_evidence[arm] <= log_t
        n_candidates += state.candidates[arm]
    # Line 5: B <- B ∩ C.
    if state.hypothesis >= 0 and not state.candidates[state.hypothesis]:
        state.hypothesis = -1
    # Lines 6-8: choose c.
    if n_candidates == 0:
        challenger = below(bitgen, n_arms)
    elif n_candidates == 1:
        challenger = uniform_choice_bits(state.candidates, 1, bitgen)
        if state.use_hypothesis:
            state.hypothesis = challenger
    elif state.use_hypothesis and state.hypothesis >= 0:
        # Probability 1/2 for the hypothesis, the rest spread uniformly over C \ B.
        if uniform(bitgen) < 0.5:
            challenger = state.hypothesis
        else:
            state.candidates[state.hypothesis] = False
            challenger = uniform_choice_bits(state.candidates, n_candidates - 1, bitgen)
    else:
        challenger = uniform_choice_bits(state.candidates, n_candidates, bitgen)
    # Line 9: d = argmax_j u_jc, random ties, but never c on a tie.
    bounds = state.scratch
    wins = state.wins
    alpha = state.alpha
    best = -1.0
    for arm in range(n_arms):
        bounds[arm] = rucb_upper_bound(wins, arm, challenger, alpha, log_t)
        if bounds[arm] > best:
            best = bounds[arm]
    n_others = 0  # maximisers other than c
    for arm in range(n_arms):
        if arm != challenger and bounds[arm] == best:
            n_others += 1
    if n_others == 0:
        return challenger, challenger
    pick = below(bitgen, n_others) if n_others > 1 else 0
    for arm in range(n_arms):
        if arm != challenger and bounds[arm] == best:
            if pick == 0:
                opponent = arm
                break
            pick -= 1
    return challenger, opponent


@numba.njit(cache=True, nogil=True)
def rucb_observe(state, first, second, first_won):
    state.t += 1
    wins = state.wins
    if record_duel(wins, first, second, first_won):
        _refresh_evidence(wins, state.evidence, state.max_evidence, state.alpha, first, second)


@numba.njit(cache=True, nogil=True)
def rucb_recommend(state):
    return empirical_copeland_winner(state.wins)


@register_agent("rucb", target="condorcet")
class RUCB(RUCBBoundsAgent):
    """Relative Upper Confidence Bound (Zoghi et al., ICML 2014).

    At each step RUCB optimistically picks a challenger ``c`` that no arm provably beats
    (``u_cj >= 1/2`` for all ``j``), keeping a hypothesis ``B`` of the best arm, then duels
    ``c`` against the arm with the highest upper bound of beating it.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    alpha : float, default 0.51
        Exploration parameter ``alpha > 1/2`` of the bounds ``mu_hat + sqrt(alpha ln t / N)``
        (0.51 as in Komiyama et al. 2016 and the DTS authors' experiments).
    use_hypothesis : bool, default True
        The ICML-2014 version with the hypothesis set ``B``; ``False`` gives the earlier arXiv
        version (``c`` uniform on the candidates).
    seed : int, optional
        Seed of the agent's generator.

    Notes
    -----
    Regret guarantees assume a Condorcet winner.  Per step: ``O(K)`` (the candidate test uses
    incrementally maintained evidence ``N (1/2 - mu_hat)^2 / alpha``).
    """

    paper = (PaperLink("ICML 2014, PMLR 32", "https://proceedings.mlr.press/v32/zoghi14.html"),)
    guarantee = (
        "Finite-time regret of order ``O(K log T)`` under a Condorcet winner, with probability ``1 - δ`` for "
        "``α > 1/2`` and in expectation for ``α > 1`` (Zoghi, Whiteson, Munos & de Rijke, ICML 2014, §4; the "
        "order as stated in the abstract)."
    )

    act_kernel = rucb_act
    observe_kernel = rucb_observe
    recommend_kernel = rucb_recommend

    def __init__(self, n_arms: int, *, alpha: float = 0.51, use_hypothesis: bool = True, seed=None):
        self.use_hypothesis = check_bool("use_hypothesis", use_hypothesis)
        super().__init__(n_arms, alpha=alpha, seed=seed)

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        self.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        self.state = RUCBState(
            rng=self.rng, wins=self.wins, evidence=np.full((n_arms, n_arms), -1.0),
            max_evidence=np.full(n_arms, -1.0), candidates=np.zeros(n_arms, dtype=np.bool_), scratch=np.zeros(n_arms),
            alpha=self.alpha, use_hypothesis=self.use_hypothesis, hypothesis=-1, t=0,
        )
