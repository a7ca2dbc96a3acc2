"""UCB1.

Auer, Cesa-Bianchi, Fischer. *Finite-time Analysis of the Multiarmed Bandit Problem.* Machine
Learning 47, 2002 (Figure 1, UCB1).

Play every arm once (lowest index first), then the arm maximising
``mean_j + sqrt(2 ln n / n_j)``, where ``n`` is the number of pulls so far and ``n_j`` those of
arm ``j``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._bandit_kernels import mean_plus_bonus_argmax, most_played, record_pull, register_bandit_kernels
from dueling_gym.agents.base import KernelBanditAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import SeedLike

__all__ = ["UCB1", "new_ucb1_state"]


class UCB1State(AgentState, fields=["rng", "counts", "sums", "t"]):
    """Numba-side state of :class:`UCB1`."""


@numba.njit(cache=True, nogil=True)
def ucb1_act(state):
    counts = state.counts
    scale = 2.0 * math.log(max(state.t, 1))
    # unplayed arms first (each once, lowest index first), then the largest index
    return mean_plus_bonus_argmax(counts, state.sums, scale)


@numba.njit(cache=True, nogil=True)
def ucb1_observe(state, arm, reward):
    record_pull(state, arm, reward)


@numba.njit(cache=True, nogil=True)
def ucb1_recommend(state):
    return most_played(state)


register_bandit_kernels(UCB1State.numba_type, ucb1_act, ucb1_observe, ucb1_recommend)


def new_ucb1_state(n_arms: int, rng: np.random.Generator) -> UCB1State:
    """A fresh UCB1 state (also used by Sparring's ``learner="ucb1"`` variant)."""
    return UCB1State(rng=rng, counts=np.zeros(n_arms, dtype=np.int64), sums=np.zeros(n_arms), t=0)


@register_agent("ucb1", target="best mean")
class UCB1(KernelBanditAgent):
    """UCB1 (Auer, Cesa-Bianchi & Fischer, 2002).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    seed : int, optional
        Seed of the agent's generator (the algorithm itself is deterministic).

    Notes
    -----
    Index ``mean_j + sqrt(2 ln n / n_j)`` with ``n`` the number of pulls so far; unplayed arms
    first, ties to the lowest index.  :meth:`~dueling_gym.agents.BanditAgent.recommend` returns the most
    played arm (lowest
    index on ties).  ``O(K)`` per step.
    """

    paper = (PaperLink("Machine Learning 47, doi:10.1023/A:1013689704352", "https://doi.org/10.1023/A:1013689704352"),)
    guarantee = (
        "Finite-time: for rewards in [0, 1] the expected regret after any ``n`` pulls is at most ``8 Σ_{i: Δ_i "
        "> 0} ln n / Δ_i + (1 + π²/3) Σ_i Δ_i`` (Auer, Cesa-Bianchi & Fischer, Machine Learning 47, 2002, "
        "Theorem 1)."
    )

    act_kernel = ucb1_act
    observe_kernel = ucb1_observe
    recommend_kernel = ucb1_recommend

    def __init__(self, n_arms: int, *, seed: SeedLike = None):
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        self.counts, self.sums = np.zeros(self.n_arms, dtype=np.int64), np.zeros(self.n_arms)
        self.state = UCB1State(rng=self.rng, counts=self.counts, sums=self.sums, t=0)
