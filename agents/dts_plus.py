"""D-TS+: Double Thompson Sampling with regret-aware tie-breaking.

Wu, Liu. *Double Thompson Sampling for Dueling Bandits.* NIPS 2016 (D-TS+, the enhancement of
Algorithm 1 that breaks the ties of the first candidate).

D-TS+ is D-TS (:mod:`dueling_gym.agents.dts`) except in step 3.  D-TS takes as first arm the
candidate with the most sampled wins, ``a1 = argmax_{i in C} zeta_i`` with
``zeta_i = #{j != i : theta_ij > 1/2}``, and breaks ties at random.  Ties are frequent (Copeland
scores are small integers), and the tied arms are not equally costly to explore: confirming arm
``i`` means comparing it with the other arms ``j``, each comparison costing regret
``Delta_i + Delta_j`` and bringing information ``d(p_ij, 1/2)`` per duel.  D-TS+ therefore picks, among
the tied candidates, the one with the least estimated exploration regret

    R_i = sum_{j != i} (2 zeta* - zeta_i - zeta_j) / d(theta_ij, 1/2),

where ``zeta* = max_{i in C} zeta_i`` and every quantity comes from the same first sample
``theta`` (so the estimate is itself a Thompson sample).  Steps 1, 2 and 4 are those of D-TS.

Choices and the public implementation:

* The formula (Copeland-score gaps of the sample, the sum over all ``j != i``, pairs with
  ``theta_ij = 1/2`` left out) is that of the authors' C++ code (DuelingBandits,
  ``selectFirstCandidate``); ties of ``R_i``, which have probability zero, are broken at random
  instead of by the lowest index.
* The first sample is drawn lazily, as in D-TS: only the pairs needed to find the candidates
  with the top score are drawn, and the rest of the sample only when several candidates share
  it (the estimate needs every ``zeta_j`` and the tied rows of ``theta``).  Pairs are independent
  and the outcome is a function of the full sample, so the law of ``a1`` is that of drawing every
  ``theta_ij`` up front.  With ``|C| = 1`` no sample is drawn, as in D-TS.
* :meth:`~dueling_gym.agents.DuelingAgent.recommend` returns the empirical Copeland winner (lowest index on
  ties), as for D-TS.
"""

from __future__ import annotations

import numba
import numpy as np

from dueling_gym.agents._random_draws import random_argmax, random_argmin
from dueling_gym.agents.base import PaperLink
from dueling_gym.agents.dts import DTS, complete_first_sample, dts_candidates, dts_duel, first_sample_votes
from dueling_gym.agents.registry import register_agent
from dueling_gym.stats import kl_bernoulli_scalar

__all__ = ["DTSPlus"]


@numba.njit(cache=True, nogil=True)
def tie_broken_first_arm(state):
    """Step 3 of D-TS+: ``argmax_{i in C} zeta_i``, ties broken by the least ``R_i``.

    The candidates' scores are first found with D-TS's lazy sample; only when several
    candidates share the top score is the rest of the sample drawn (the estimate needs every
    ``zeta_j`` and the tied rows of ``theta``).  Scratch: ``state.eligible`` (the tied arms),
    ``state.votes`` (``zeta``) and ``state.theta2`` (``R``); step 4 overwrites them.
    """
    n_arms = state.wins.shape[0]
    top = first_sample_votes(state)
    n_tied = 0
    for i in range(n_arms):
        tied = state.candidates[i] and state.votes[i] == top
        state.eligible[i] = tied
        n_tied += tied
    if n_tied == 1:
        return random_argmax(state.votes, state.eligible, state.rng)  # no tie: no draw
    complete_first_sample(state)  # every zeta_j, and the tied rows of theta
    for i in range(n_arms):
        if not state.eligible[i]:
            continue
        regret = 0.0
        for j in range(n_arms):
            if j == i:
                continue
            value = state.theta[i, j] if i < j else 1.0 - state.theta[j, i]
            if value != 0.5:
                regret += (2 * top - state.votes[i] - state.votes[j]) / kl_bernoulli_scalar(value, 0.5)
        state.theta2[i] = regret
    return random_argmin(state.theta2, state.eligible, state.rng)


@numba.njit(cache=True, nogil=True)
def dts_plus_act(state):
    # Steps 1-2 (as D-TS): optimistic Copeland counts and their maximisers C; a sole candidate is a1.
    if dts_candidates(state) == 1:
        return dts_duel(state, random_argmax(state.optimistic, state.candidates, state.rng))
    # Step 3 (D-TS+): first Thompson sample, ties broken by the estimated exploration regret;
    # step 4 as D-TS.
    return dts_duel(state, tie_broken_first_arm(state))


@register_agent("dts_plus", target="copeland")
class DTSPlus(DTS):
    """D-TS+ (Wu and Liu, NIPS 2016): D-TS whose first candidate's ties are broken by least estimated regret.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    alpha : float, default 0.51
        Exploration parameter ``alpha > 1/2`` of the bounds, as for :class:`~dueling_gym.agents.DTS`.
    seed : int, optional
        Seed of the agent's generator (Beta samples and ties).

    Notes
    -----
    Works with Copeland winners, like D-TS.  Per step ``O(K^2)`` at most: the full first sample
    (``K(K-1)/2`` Beta draws) only when several candidates tie for the top sampled score.
    """

    paper = (
        PaperLink("NeurIPS 2016 proceedings",
                  "https://proceedings.neurips.cc/paper/2016/hash/9de6d14fff9806d4bcd1ef555be766cd-Abstract.html"),
    )
    guarantee = (
        "No bound of its own: the paper presents D-TS+ as D-TS with a tie-breaking rule that lowers the regret "
        "in experiments, and the bounds it states, ``O(K² log T)`` on Copeland and ``O(K log T + K² log log "
        "T)`` on Condorcet problems, are D-TS's (Wu & Liu, NIPS 2016, as stated in the abstract)."
    )

    act_kernel = dts_plus_act
    _keep_theta = True  # R_i needs the values theta_ij

    def __init__(self, n_arms: int, *, alpha: float = 0.51, seed: int | np.random.SeedSequence | None = None):
        super().__init__(n_arms, alpha=alpha, seed=seed)
