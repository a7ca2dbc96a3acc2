"""Sequential Elimination: an anchor arm challenged by every other arm in turn.

Falahatgar, Hao, Orlitsky, Pichapati, Ravindrakumar. *Maxing and Ranking with Few
Assumptions.* NeurIPS 2017, §3.1.1 (maximum selection under strong stochastic transitivity):
COMPARE with a lower and an upper bias (Lemma 1; adaptive stopping rule in Appendix A.1) and
SEQ-ELIMINATE (Algorithm 1, Theorem 2).  The same paper builds OPT-MAXIMIZE (Algorithm 3,
:mod:`dueling_gym.agents.opt_max`) on these two subroutines.

* **COMPARE(c, r, ε_l, ε_u, δ')**: duel the challenger ``c`` against the anchor ``r``; with
  ``p̃ = p̂(c beats r) - 1/2`` after ``t`` duels and the radius ``ĉ = sqrt(ln(4t²/δ') / (2t))``,
  go on while ``|p̃ - ε_m| <= ĉ`` (``ε_m = (ε_l + ε_u)/2``) and ``t < m``, with the budget
  ``m = 2 ln(2/δ') / (ε_u - ε_l)²``.  Answer "``c`` is better" iff ``p̃ > ε_m``.  With probability
  ``1 - δ'`` the answer is "better" when ``P[c, r] > 1/2 + ε_u`` and "not better" when
  ``P[c, r] < 1/2 + ε_l``.
* **SEQ-ELIMINATE(S, ε_l, ε_u, δ)**: a uniformly random anchor; the other arms, in uniformly
  random order, each challenge the current anchor once, and a challenger found better becomes
  the anchor.  Under strong stochastic transitivity the final anchor is an ``ε_u``-maximum
  (``P[i*, out] <= 1/2 + ε_u``) with probability at least ``1 - δ``.

Choices and differences with duelpy (``SequentialElimination``):

* each of the ``K - 1`` comparisons runs at confidence ``δ' = δ / (K - 1)``, so that they all
  hold together with probability ``1 - δ`` (the union bound behind the guarantee); duelpy passes
  ``δ`` itself to every comparison, which guarantees ``1 - δ`` for one comparison only;
* duelpy's default ``ε_u = 0.05`` and ``δ = 0.1`` (the values of the papers' experiments) are the
  defaults here too, with ``ε_l = 0``.
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

__all__ = ["SequentialElimination", "biased_compare_finished"]


class SequentialEliminationState(AgentState, fields=[
    "rng", "order", "position", "anchor", "challenger", "duels", "challenger_wins", "middle", "delta", "budget",
    "finished", "t",
]):
    """Numba-side state of :class:`SequentialElimination`."""


@numba.njit(cache=True, nogil=True)
def biased_compare_finished(wins, duels, middle, delta, budget):
    """True once the biased COMPARE stops: its budget is spent or ``|p̃ - ε_m|`` exceeds the radius."""
    if duels >= budget:
        return True
    calibrated = wins / duels - 0.5
    radius = math.sqrt(math.log(4.0 * duels * duels / delta) / (2.0 * duels))
    return abs(calibrated - middle) > radius


@numba.njit(cache=True, nogil=True)
def _initialise(state):
    shuffle_prefix(state.order, state.order.shape[0], state.rng)
    state.anchor = state.order[0]
    _next_challenger(state)


@numba.njit(cache=True, nogil=True)
def _next_challenger(state):
    state.position += 1
    if state.position >= state.order.shape[0]:
        state.finished = True
        state.challenger = state.anchor
        return
    state.challenger = state.order[state.position]
    state.duels = 0
    state.challenger_wins = 0


@numba.njit(cache=True, nogil=True)
def sequential_elimination_act(state):
    return state.challenger, state.anchor


@numba.njit(cache=True, nogil=True)
def sequential_elimination_observe(state, first, second, first_won):
    state.t += 1
    if state.finished or first != state.challenger or second != state.anchor:
        return
    state.duels += 1
    state.challenger_wins += first_won
    if biased_compare_finished(state.challenger_wins, state.duels, state.middle, state.delta, state.budget):
        if state.challenger_wins / state.duels - 0.5 > state.middle:
            state.anchor = state.challenger
        _next_challenger(state)


@numba.njit(cache=True, nogil=True)
def sequential_elimination_recommend(state):
    return state.anchor


@numba.njit(cache=True, nogil=True)
def sequential_elimination_ranking(state):
    # The anchor first, then the other arms by index: SEQ-ELIMINATE orders nothing else.
    n_arms = state.order.shape[0]
    ranking = np.empty(n_arms, dtype=np.int64)
    ranking[0] = state.anchor
    count = 1
    for arm in range(n_arms):
        if arm != state.anchor:
            ranking[count] = arm
            count += 1
    return ranking


@register_agent("sequential_elimination")
class SequentialElimination(KernelIdentificationAgent):
    """SEQ-ELIMINATE (Falahatgar et al., NeurIPS 2017, §3.1.1): an ε-maximum under strong stochastic transitivity.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    epsilon : float, default 0.05
        Upper bias ``ε_u``: the answer is an ``ε_u``-maximum with probability ``>= 1 - δ``.
    epsilon_lower : float, default 0.0
        Lower bias ``ε_l < ε_u``: a challenger less than ``ε_l`` better never replaces the anchor.
    delta : float, default 0.1
        Confidence ``δ`` of the whole run (``δ / (K - 1)`` per comparison).
    seed : int, optional
        Seed of the agent's generator (the anchor and the order of the challengers).

    Notes
    -----
    Answer: the final anchor (``answer_type = "winner"``, ``target = "condorcet"``).  At most
    ``(K - 1) ceil(2 ln(2 (K - 1)/δ) / (ε_u - ε_l)²)`` duels.  Per duel ``O(1)``.
    """

    paper = (
        PaperLink("NeurIPS 2017 proceedings",
                  "https://proceedings.neurips.cc/paper/2017/hash/db98dc0dbafde48e8f74c0de001d35e4-Abstract.html"),
    )
    guarantee = (
        "Under strong stochastic transitivity the final anchor is an ``ε_u``-maximum (``P[i*, out] <= 1/2 + "
        "ε_u``) with probability at least ``1 - δ``, after ``O(K/ε² · ln(K/δ))`` duels with ``ε = ε_u - ε_l`` "
        "(Falahatgar, Hao, Orlitsky, Pichapati & Ravindrakumar, NeurIPS 2017, Theorem 2)."
    )

    answer_type = "winner"
    target = "condorcet"
    act_kernel = sequential_elimination_act
    observe_kernel = sequential_elimination_observe
    recommend_kernel = sequential_elimination_recommend
    ranking_kernel = sequential_elimination_ranking

    def __init__(self, n_arms: int, *, epsilon: float = 0.05, epsilon_lower: float = 0.0, delta: float = 0.1,
                 seed=None):
        self.epsilon = check_number("epsilon", epsilon, minimum=0.0, maximum=0.5)
        self.epsilon_lower = check_number("epsilon_lower", epsilon_lower, strict=False, minimum=0.0, maximum=0.5)
        if self.epsilon_lower >= self.epsilon:
            raise ValueError(f"epsilon_lower must be below epsilon, got {self.epsilon_lower} >= {self.epsilon}")
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        super().__init__(n_arms, seed=seed)

    @property
    def comparison_budget(self) -> int:
        """The most duels ``ceil(m)`` that one COMPARE can take."""
        delta = self.delta / (self.n_arms - 1)
        return math.ceil(2.0 * math.log(2.0 / delta) / (self.epsilon - self.epsilon_lower) ** 2)

    def _reset_state(self) -> None:
        order = np.arange(self.n_arms, dtype=np.int64)
        self.state = SequentialEliminationState(
            rng=self.rng, order=order, position=0, anchor=0, challenger=0, duels=0, challenger_wins=0,
            middle=0.5 * (self.epsilon + self.epsilon_lower), delta=self.delta / (self.n_arms - 1),
            budget=self.comparison_budget, finished=False, t=0,
        )
        _initialise(self.state)
