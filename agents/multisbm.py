"""MultiSBM: one singleton bandit machine per left arm.

Ailon, Karnin, Joachims. *Reducing Dueling Bandits to Cardinal Bandits.* ICML 2014 (MultiSBM,
Algorithm 2 of §4).

The reduction keeps ``K`` independent singleton bandit machines ``S_1 .. S_K`` over the ``K``
arms.  The left arm of duel ``t`` is the right arm of duel ``t - 1`` (``x_t = y_{t-1}``, ``x_0``
arbitrary); machine ``S_{x_t}`` is advanced to choose the right arm ``y_t``, the duel
``(x_t, y_t)`` is played and ``S_{x_t}`` receives reward 1 iff ``y_t`` won.  Under a
utility-based (linear link) model, ``S_x``'s expected reward for ``y`` is increasing in ``y``'s
utility, so every machine converges to the best arm, and with it the left arm too.

Each machine is the UCB singleton bandit machine of this package (index
``mean + sqrt((a + 2) ln t_x / (2 n_{x,y}))`` with ``t_x`` the machine's own round, unplayed arms
first, ties to the lowest index), the same learner Sparring uses by default.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._bandit_kernels import mean_plus_bonus_argmax
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import SeedLike, check_number

__all__ = ["MultiSBM"]


class MultiSBMState(AgentState, fields=[
    "rng",
    "counts",   # counts[x, y]: pulls of y by machine S_x
    "sums",     # sums[x, y]: rewards of y in S_x (wins of y against x)
    "rounds",   # rounds[x]: how often S_x was advanced
    "played",   # played[y]: how often y was chosen (by any machine)
    "left",     # x_t: the left arm of the next duel
    "a",
    "t",
]):
    """Numba-side state of :class:`MultiSBM`."""


@numba.njit(cache=True, nogil=True)
def multisbm_act(state):
    left = state.left
    scale = 0.5 * (state.a + 2.0) * math.log(state.rounds[left] + 1.0)
    return left, mean_plus_bonus_argmax(state.counts[left], state.sums[left], scale)


@numba.njit(cache=True, nogil=True)
def multisbm_observe(state, first, second, first_won):
    # S_{x_t} gets reward 1 iff y_t won; a self-duel's fair coin is fed too, as the reduction does.
    state.counts[first, second] += 1
    if not first_won:
        state.sums[first, second] += 1.0
    state.rounds[first] += 1
    state.played[second] += 1
    state.left = second  # x_{t+1} = y_t
    state.t += 1


@numba.njit(cache=True, nogil=True)
def multisbm_recommend(state):
    return np.argmax(state.played)


@register_agent("multisbm", target="utility")
class MultiSBM(KernelDuelingAgent):
    """MultiSBM (Ailon, Karnin & Joachims, ICML 2014, Algorithm 2).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    a : float, default 3.0
        Exploration parameter ``a >= 0`` of the UCB machines (index
        ``mean + sqrt((a + 2) ln t / (2 n))``; ``a`` plays the role of the paper's robustness
        parameter ``alpha`` of its UCB singleton bandit machine, and 3 is the value Sparring uses).
    seed : int, optional
        Seed of the agent's generator (``x_0`` is drawn uniformly from it at reset).

    Notes
    -----
    Regret ``O(K log T)`` under the utility-based (linear link) model (Theorem 4.1); no
    guarantee without it.  The paper leaves ``x_0`` arbitrary: we draw it uniformly.  Each
    machine's logarithm uses its own round count, since a machine is advanced only when its arm
    is on the left.  :meth:`~dueling_gym.agents.DuelingAgent.recommend` returns the arm chosen most often as
    right arm (lowest
    index on ties).  ``O(K)`` per step, ``K^2`` memory.
    """

    paper = (PaperLink("ICML 2014, PMLR 32", "https://proceedings.mlr.press/v32/ailon14.html"),)
    guarantee = (
        "Regret ``O(K log T)`` under the utility-based (linear link) model, whose best arm is the Condorcet "
        "winner, and no guarantee without it (Ailon, Karnin & Joachims, ICML 2014, Theorem 4.1)."
    )

    act_kernel = multisbm_act
    observe_kernel = multisbm_observe
    recommend_kernel = multisbm_recommend

    def __init__(self, n_arms: int, *, a: float = 3.0, seed: SeedLike = None):
        self.a = check_number("a", a, strict=False, minimum=0.0)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        self.counts = np.zeros((n_arms, n_arms), dtype=np.int64)
        self.played = np.zeros(n_arms, dtype=np.int64)
        left = int(self.rng.integers(0, n_arms))
        self.state = MultiSBMState(
            rng=self.rng, counts=self.counts, sums=np.zeros((n_arms, n_arms)),
            rounds=np.zeros(n_arms, dtype=np.int64), played=self.played, left=left, a=self.a, t=0,
        )
