"""KL-UCB for Bernoulli rewards.

Garivier, Cappé. *The KL-UCB Algorithm for Bounded Stochastic Bandits and Beyond.* COLT 2011
(Algorithm 1).

Play every arm once (lowest index first), then the arm with the largest KL upper confidence
bound ``max{q >= mean_a : N_a d(mean_a, q) <= ln t + c ln ln t}``, where ``t`` is the number
of pulls so far and ``d`` the Bernoulli KL divergence.  The bound is
:func:`dueling_gym.stats.kl_upper_bound_scalar`.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._bandit_kernels import most_played, record_pull, register_bandit_kernels
from dueling_gym.agents.base import KernelBanditAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.stats import kl_bernoulli_scalar, kl_upper_bound_scalar
from dueling_gym.validation import SeedLike, check_number

__all__ = ["KLUCB", "new_kl_ucb_state"]


class KLUCBState(AgentState, fields=["rng", "counts", "sums", "c", "t"]):
    """Numba-side state of :class:`KLUCB`."""


@numba.njit(cache=True, nogil=True)
def kl_ucb_act(state):
    counts = state.counts
    sums = state.sums
    n_arms = counts.shape[0]
    most_played = 0
    for arm in range(n_arms):
        if counts[arm] == 0:
            return arm  # initialisation: each arm once, lowest index first
        if counts[arm] > counts[most_played]:
            most_played = arm
    log_t = math.log(max(state.t, 1))
    level = log_t
    if state.c != 0.0 and log_t > 1.0:
        level += state.c * math.log(log_t)  # ln ln t is only added once it is positive (t > e)
    # argmax of the KL-UCB indices, lowest index on ties.  The most played arm (usually the
    # leader) is bounded first; another arm's index can only reach that value ``best`` if
    # ``mean >= best`` or ``count * d(mean, best) <= level``, so most arms need one divergence
    # evaluation instead of a bisection.  The chosen arm is the one the plain argmax gives.
    best_arm = most_played
    best = kl_upper_bound_scalar(sums[most_played] / counts[most_played], float(counts[most_played]), level)
    for arm in range(n_arms):
        if arm == most_played:
            continue
        count = float(counts[arm])
        mean = sums[arm] / count
        if mean < best and kl_bernoulli_scalar(mean, best) > level / count:
            continue  # its index lies strictly below best
        index = kl_upper_bound_scalar(mean, count, level)
        if index > best or (index == best and arm < best_arm):
            best = index
            best_arm = arm
    return best_arm


@numba.njit(cache=True, nogil=True)
def kl_ucb_observe(state, arm, reward):
    record_pull(state, arm, reward)


@numba.njit(cache=True, nogil=True)
def kl_ucb_recommend(state):
    return most_played(state)


register_bandit_kernels(KLUCBState.numba_type, kl_ucb_act, kl_ucb_observe, kl_ucb_recommend)


def new_kl_ucb_state(n_arms: int, rng: np.random.Generator, c: float) -> KLUCBState:
    """A fresh KL-UCB state (also used by Sparring's ``learner="kl_ucb"`` variant)."""
    return KLUCBState(rng=rng, counts=np.zeros(n_arms, dtype=np.int64), sums=np.zeros(n_arms), c=float(c), t=0)


@register_agent("kl_ucb", target="best mean")
class KLUCB(KernelBanditAgent):
    """KL-UCB with the Bernoulli divergence (Garivier & Cappé, COLT 2011).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    c : float, default 0.0
        Weight ``c >= 0`` of the ``ln ln t`` term of the exploration level
        ``ln t + c ln ln t``.  The paper's analysis uses ``c = 3``, but its experiments (and
        common practice) use ``c = 0``, which performs better; ``0`` is the default here.
    seed : int, optional
        Seed of the agent's generator (the algorithm itself is deterministic).

    Notes
    -----
    ``t`` is the number of pulls so far (the paper's Algorithm 1 chooses ``a_{t+1}`` with
    ``ln t``).  The ``c ln ln t`` term is added only once ``ln ln t > 0``.  Rewards in
    ``[0, 1]`` are used as they are (the Bernoulli divergence is valid for bounded rewards).
    Unplayed arms come first, ties go to the lowest index.
    :meth:`~dueling_gym.agents.BanditAgent.recommend` returns the most
    played arm.  ``O(K)`` bisections per step.
    """

    paper = (PaperLink("COLT 2011, PMLR 19", "https://proceedings.mlr.press/v19/garivier11a.html"),)
    guarantee = (
        "For Bernoulli rewards and ``c = 3``, each suboptimal arm ``a`` is pulled in expectation at most ``(1 "
        "+ ε) ln n / d(μ_a, μ*) + O(ln ln n)`` times for every ``ε > 0``, so the regret is asymptotically "
        "optimal (it meets the Lai-Robbins lower bound) (Garivier & Cappé, COLT 2011, Theorem 1); the default "
        "``c = 0``, the paper's choice in its experiments, lies outside that theorem."
    )

    act_kernel = kl_ucb_act
    observe_kernel = kl_ucb_observe
    recommend_kernel = kl_ucb_recommend

    def __init__(self, n_arms: int, *, c: float = 0.0, seed: SeedLike = None):
        self.c = check_number("c", c, strict=False, minimum=0.0)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        self.counts, self.sums = np.zeros(self.n_arms, dtype=np.int64), np.zeros(self.n_arms)
        self.state = KLUCBState(rng=self.rng, counts=self.counts, sums=self.sums, c=self.c, t=0)
