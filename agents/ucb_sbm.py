"""UCB-SBM: the UCB "singleton bandit machine" used as Sparring's default base learner.

Ailon, Karnin, Joachims. *Reducing Dueling Bandits to Cardinal Bandits.* ICML 2014 (the SBM of
the Sparring reduction; the same learner drives Sparring in the simulator of Wu & Liu, NIPS
2016).

Index of arm ``i`` at round ``t`` (1-based, ``t - 1`` pulls so far)::

    mean_i + sqrt((a + 2) ln t / (2 n_i))

with ``a = 3``; unplayed arms are pulled first (lowest index first) and index ties go to the
lowest index.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._bandit_kernels import mean_plus_bonus_argmax, most_played, record_pull, register_bandit_kernels
from dueling_gym.agents.base import KernelBanditAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import SeedLike, check_number

__all__ = ["UCBSBM", "new_ucb_sbm_state"]


class UCBSBMState(AgentState, fields=["rng", "counts", "sums", "a", "t"]):
    """Numba-side state of :class:`UCBSBM`."""


@numba.njit(cache=True, nogil=True)
def ucb_sbm_act(state):
    counts = state.counts
    scale = 0.5 * (state.a + 2.0) * math.log(state.t + 1.0)
    # unplayed arms first (each once, lowest index first), then the largest index
    return mean_plus_bonus_argmax(counts, state.sums, scale)


@numba.njit(cache=True, nogil=True)
def ucb_sbm_observe(state, arm, reward):
    record_pull(state, arm, reward)


@numba.njit(cache=True, nogil=True)
def ucb_sbm_recommend(state):
    return most_played(state)


register_bandit_kernels(UCBSBMState.numba_type, ucb_sbm_act, ucb_sbm_observe, ucb_sbm_recommend)


def new_ucb_sbm_state(n_arms: int, rng: np.random.Generator, a: float) -> UCBSBMState:
    """A fresh UCB-SBM state (also used by Sparring for its two learners)."""
    return UCBSBMState(rng=rng, counts=np.zeros(n_arms, dtype=np.int64), sums=np.zeros(n_arms), a=float(a), t=0)


@register_agent("ucb_sbm", target="best mean")
class UCBSBM(KernelBanditAgent):
    """UCB singleton bandit machine (Ailon, Karnin & Joachims, ICML 2014).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    a : float, default 3.0
        Exploration parameter ``a >= 0`` of the index ``mean + sqrt((a + 2) ln t / (2 n))``
        (``a = 3`` as in the DTS authors' Sparring).
    seed : int, optional
        Seed of the agent's generator (the algorithm itself is deterministic).

    Notes
    -----
    ``t`` is the current round, 1-based.  Unplayed arms come first and ties go to the lowest
    index.  :meth:`~dueling_gym.agents.BanditAgent.recommend` returns the most played arm (lowest index on ties).
    ``O(K)`` per step.
    """

    paper = (PaperLink("ICML 2014, PMLR 32", "https://proceedings.mlr.press/v32/ailon14.html"),)
    guarantee = (
        "No bound of its own: Ailon, Karnin & Joachims (ICML 2014) use this UCB index as the singleton bandit "
        "machine of MultiSBM, whose ``O(K log T)`` regret holds under the utility-based model (Theorem 4.1), "
        "and of Sparring, which has no proven bound; as a cardinal bandit it is UCB with a larger exploration "
        "constant than UCB1's (``(a + 2)/2 = 2.5`` against 2)."
    )

    act_kernel = ucb_sbm_act
    observe_kernel = ucb_sbm_observe
    recommend_kernel = ucb_sbm_recommend

    def __init__(self, n_arms: int, *, a: float = 3.0, seed: SeedLike = None):
        self.a = check_number("a", a, strict=False, minimum=0.0)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        self.counts, self.sums = np.zeros(self.n_arms, dtype=np.int64), np.zeros(self.n_arms)
        self.state = UCBSBMState(rng=self.rng, counts=self.counts, sums=self.sums, a=self.a, t=0)
