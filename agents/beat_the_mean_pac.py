"""Beat-the-Mean, PAC version: explore with BTM's working set, stop with an ε-best arm.

Yue, Joachims. *Beat the Mean Bandit.* ICML 2011 (Algorithm 2, the PAC version, and its
guarantee of §4).  The exploration is the online version's (Algorithm 1,
:mod:`dueling_gym.agents.beat_the_mean`), with whose kernels it shares every step; what differs:

* **[budget]** the confidence is set by the target ``(ε, δ)`` instead of the horizon: every arm
  of ``W`` is compared at most ``N`` times, ``N = ceil(36 γ^6 / ε² · ln(K³ N / δ))``, and the
  radius is ``c(n) = 3 γ² sqrt(ln(K³ N / δ) / n)``, so that ``c(N) = ε / (2γ)``;
* **[stop]** the loop runs while ``|W| > 1`` and ``n* = min_{b in W} n_b < N``;
* **[answer]** the arm of ``W`` with the largest ``P_hat_b`` (the survivor if ``|W| = 1``).

Under the assumptions of Theorem 2 (a total order with γ-relaxed stochastic transitivity and the
stochastic triangle inequality) the answer ``b_hat`` is ε-optimal, ``P[b*, b_hat] <= 1/2 + ε``,
with probability at least ``1 - δ``, after ``O(K γ^6 / ε² · ln(K N / δ))`` duels.

Implementation choices:

* ``N`` is defined implicitly; it is computed as the fixed point of ``n -> ceil(36 γ^6 / ε² ·
  ln(K³ n / δ))`` iterated from ``n = 1`` (the map is increasing and concave in ``n``, so the
  iterates rise to its least fixed point).
* The paper leaves ε and δ to the user; the defaults ``ε = 0.1``, ``δ = 0.1`` keep ``N`` near
  ``10^5`` for ``K <= 20``.
* After stopping, the agent plays the self-duel of its answer (as every identification agent
  here); duels other than the one it asked for are ignored, as in the online version.
* :meth:`BeatTheMeanPAC.ranking` lists ``W`` by decreasing ``P_hat`` (lowest index on ties),
  then the eliminated arms, last eliminated first.

The public C++ implementation of Wu and Liu (online version only) compares a maximum estimate
taken at a position of the working set with one taken at an arm, and can eliminate an arm never
set as the minimum when all estimates are 1; neither slip is reproduced here.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents.base import PaperLink
from dueling_gym.agents.beat_the_mean import (
    beat_the_mean_act,
    beat_the_mean_recommend,
    only_survivor,
    record_and_eliminate,
    working_set_arrays,
)
from dueling_gym.agents.identification import KernelIdentificationAgent
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import check_number, check_probability

__all__ = ["BeatTheMeanPAC", "comparison_budget"]


class BeatTheMeanPACState(AgentState, fields=[
    "rng",
    "pair_counts",       # n_{b,b'}: duels (b, b') with b the selected arm (K x K)
    "pair_wins",         # w_{b,b'}
    "counts",            # n_b over W
    "wins",              # w_b over W
    "estimates",         # scratch: P_hat_b
    "active",            # W as a mask
    "n_active",
    "log_level",         # ln(K^3 N / delta)
    "gamma",
    "budget",            # N
    "finished",          # [stop] has fired
    "elimination_order", # elimination_order[b]: how many arms left W before b (-1 while in W)
    "t",
]):
    """Numba-side state of :class:`BeatTheMeanPAC`."""


def comparison_budget(n_arms: int, epsilon: float, delta: float, gamma: float) -> int:
    """``N``: the least integer with ``N = ceil(36 γ^6 / ε² · ln(K³ N / δ))`` (Algorithm 2)."""
    scale = 36.0 * gamma ** 6 / epsilon ** 2
    budget = 1
    while True:
        following = math.ceil(scale * math.log(n_arms ** 3 * budget / delta))
        if following <= budget:
            return budget
        budget = following


@numba.njit(cache=True, nogil=True)
def _fewest_comparisons(state):
    active = state.active
    counts = state.counts
    fewest = -1
    for arm in range(active.shape[0]):
        if active[arm] and (fewest < 0 or counts[arm] < fewest):
            fewest = counts[arm]
    return fewest


@numba.njit(cache=True, nogil=True)
def btm_pac_act(state):
    if state.finished:
        answer = beat_the_mean_recommend(state)
        return answer, answer
    return beat_the_mean_act(state)


@numba.njit(cache=True, nogil=True)
def btm_pac_observe(state, first, second, first_won):
    state.t += 1
    if state.finished or not (state.active[first] and state.active[second]):
        return
    before = state.n_active
    fewest = record_and_eliminate(state, first, second, first_won)
    if state.n_active < before:
        active = state.active
        elimination_order = state.elimination_order
        for arm in range(active.shape[0]):
            if not active[arm] and elimination_order[arm] < 0:
                elimination_order[arm] = active.shape[0] - before
        fewest = _fewest_comparisons(state)
    # [stop] one arm left, or every arm of W compared N times.
    if state.n_active == 1 or fewest >= state.budget:
        state.finished = True


@numba.njit(cache=True, nogil=True)
def btm_pac_ranking(state):
    n_arms = state.active.shape[0]
    ranking = np.empty(n_arms, dtype=np.int64)
    taken = np.zeros(n_arms, dtype=np.bool_)
    position = 0
    if state.n_active == 1:
        ranking[0] = only_survivor(state)
        taken[ranking[0]] = True
        position = 1
    # W by decreasing P_hat (lowest index on ties) ...
    while True:
        best = -1
        value = -1.0
        for arm in range(n_arms):
            if state.active[arm] and not taken[arm]:
                count = state.counts[arm]
                estimate = 0.5 if count == 0 else state.wins[arm] / count
                if estimate > value:
                    value = estimate
                    best = arm
        if best < 0:
            break
        ranking[position] = best
        taken[best] = True
        position += 1
    # ... then the eliminated arms, last eliminated first.
    for order in range(n_arms - 1, -1, -1):
        for arm in range(n_arms):
            if state.elimination_order[arm] == order:
                ranking[position] = arm
                position += 1
    return ranking


@register_agent("btm_pac")
class BeatTheMeanPAC(KernelIdentificationAgent):
    """Beat-the-Mean, PAC version (Yue & Joachims, ICML 2011, Algorithm 2): an ε-best arm w.p. ``1 - δ``.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    epsilon : float, default 0.1
        Accuracy ``ε`` in ``(0, 1/2)``: the answer ``b_hat`` has ``P[b*, b_hat] <= 1/2 + ε``.
    delta : float, default 0.1
        Confidence ``δ`` in ``(0, 1)``.
    gamma : float, default 1.0
        Relaxed stochastic transitivity ``γ >= 1`` assumed of the problem (1: strong stochastic
        transitivity); ``N`` grows like ``γ^6``.
    seed : int, optional
        Seed of the agent's generator (selection ties and the opponents ``b'``).

    Notes
    -----
    Answer: the arm of ``W`` with the largest ``P_hat`` (``answer_type = "winner"``, ``target =
    "condorcet"``).  At most ``K N`` exploration duels: each of them raises the count of an arm
    of ``W`` that has the fewest, and the run stops once that count reaches ``N``.  Per duel
    ``O(|W|)``; ``O(K²)`` memory.  :attr:`budget` is ``N``; :attr:`working_set` is ``W``.
    """

    paper = (PaperLink("ICML 2011"),)
    guarantee = (
        "(ε, δ)-PAC: under a total order with γ-relaxed stochastic transitivity and the stochastic triangle "
        "inequality the answer ``b̂`` is ε-optimal (``P[b*, b̂] <= 1/2 + ε``) with probability at least ``1 - "
        "δ`` after ``O(K γ^6 / ε² · ln(K N / δ))`` duels (Yue & Joachims, ICML 2011, §4)."
    )

    answer_type = "winner"
    target = "condorcet"
    act_kernel = btm_pac_act
    observe_kernel = btm_pac_observe
    recommend_kernel = beat_the_mean_recommend
    ranking_kernel = btm_pac_ranking

    def __init__(self, n_arms: int, *, epsilon: float = 0.1, delta: float = 0.1, gamma: float = 1.0,
                 seed=None):
        self.epsilon = check_number("epsilon", epsilon, minimum=0.0, maximum=0.5)
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        self.gamma = check_number("gamma", gamma, strict=False, minimum=1.0)
        super().__init__(n_arms, seed=seed)

    @property
    def budget(self) -> int:
        """The most comparisons ``N`` that an arm of ``W`` takes before the run stops."""
        return comparison_budget(self.n_arms, self.epsilon, self.delta, self.gamma)

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        budget = self.budget
        arrays = working_set_arrays(n_arms)
        vars(self).update(arrays)  # the kernels update them in place; they stay readable here
        self.state = BeatTheMeanPACState(
            rng=self.rng, **arrays, estimates=np.full(n_arms, 0.5), n_active=n_arms,
            log_level=math.log(n_arms ** 3 * budget / self.delta), gamma=self.gamma, budget=budget, finished=False,
            elimination_order=np.full(n_arms, -1, dtype=np.int64), t=0,
        )

    @property
    def working_set(self) -> np.ndarray:
        """The arms still in the working set ``W``."""
        return np.flatnonzero(self.active)
