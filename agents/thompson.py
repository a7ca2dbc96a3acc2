"""Bernoulli Thompson sampling.

Thompson. *On the Likelihood that One Unknown Probability Exceeds Another in View of the
Evidence of Two Samples.* Biometrika 25, 1933; analysed and extended to rewards in ``[0, 1]`` by
Agrawal, Goyal. *Analysis of Thompson Sampling for the Multi-armed Bandit Problem.* COLT 2012
(Algorithm 1 and the Bernoulli trick of its Algorithm 2).

Each arm keeps a ``Beta(S_i + 1, F_i + 1)`` posterior (uniform ``Beta(1, 1)`` prior).  Every
round one sample per arm is drawn and the argmax is pulled (random ties).  A reward ``r`` in
``[0, 1]`` is turned into a Bernoulli(``r``) success/failure with the agent's generator (no
draw is made when ``r`` is 0 or 1).
"""

from __future__ import annotations

import numba
import numpy as np

from dueling_gym.agents._bandit_kernels import bernoulli_reward, beta_argmax, most_played, register_bandit_kernels
from dueling_gym.agents.base import KernelBanditAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import SeedLike

__all__ = ["BernoulliThompson", "new_thompson_state"]


class ThompsonState(AgentState, fields=["rng", "successes", "failures", "counts", "t"]):
    """Numba-side state of :class:`BernoulliThompson`."""


@numba.njit(cache=True, nogil=True)
def thompson_act(state):
    return beta_argmax(state.successes, state.failures, state.rng)


@numba.njit(cache=True, nogil=True)
def thompson_observe(state, arm, reward):
    if bernoulli_reward(reward, state.rng):
        state.successes[arm] += 1.0
    else:
        state.failures[arm] += 1.0
    state.counts[arm] += 1
    state.t += 1


@numba.njit(cache=True, nogil=True)
def thompson_recommend(state):
    return most_played(state)


register_bandit_kernels(ThompsonState.numba_type, thompson_act, thompson_observe, thompson_recommend)


def new_thompson_state(n_arms: int, rng: np.random.Generator) -> ThompsonState:
    """A fresh Thompson-sampling state (also used by Sparring's ``learner="thompson"`` variant)."""
    return ThompsonState(
        rng=rng, successes=np.zeros(n_arms), failures=np.zeros(n_arms), counts=np.zeros(n_arms, dtype=np.int64), t=0,
    )


@register_agent("thompson", target="best mean")
class BernoulliThompson(KernelBanditAgent):
    """Thompson sampling with Beta(1, 1) priors (Thompson 1933; Agrawal & Goyal, COLT 2012).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    seed : int, optional
        Seed of the agent's generator (posterior samples and the Bernoulli trick).

    Notes
    -----
    Non-binary rewards ``r`` in ``[0, 1]`` are replaced by a Bernoulli(``r``) draw (Agrawal &
    Goyal's trick), so the posterior stays a Beta distribution.
    :meth:`~dueling_gym.agents.BanditAgent.recommend` returns the
    most played arm (lowest index on ties).  ``O(K)`` Beta draws per step.
    """

    paper = (
        PaperLink("Biometrika 25(3-4), doi:10.1093/biomet/25.3-4.285",
                  "https://doi.org/10.1093/biomet/25.3-4.285"),
        PaperLink("COLT 2012, PMLR 23",
                  "https://proceedings.mlr.press/v23/agrawal12.html"),
    )
    guarantee = (
        "Expected regret ``O((Σ_{i ≠ i*} 1/Δ_i²)² ln T)`` for ``K`` arms with rewards in [0, 1], and ``O(ln T "
        "/ Δ + 1/Δ³)`` for two arms (Agrawal & Goyal, COLT 2012, Theorems 2 and 1)."
    )

    act_kernel = thompson_act
    observe_kernel = thompson_observe
    recommend_kernel = thompson_recommend

    def __init__(self, n_arms: int, *, seed: SeedLike = None):
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        self.successes, self.failures = np.zeros(self.n_arms), np.zeros(self.n_arms)
        self.counts = np.zeros(self.n_arms, dtype=np.int64)
        self.state = ThompsonState(
            rng=self.rng, successes=self.successes, failures=self.failures, counts=self.counts, t=0,
        )
