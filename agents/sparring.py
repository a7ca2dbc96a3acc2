"""Sparring: dueling bandits reduced to two cardinal bandits.

Ailon, Karnin, Joachims. *Reducing Dueling Bandits to Cardinal Bandits.* ICML 2014 (Sparring,
Algorithm 3).

Two independent bandit learners, "left" and "right", each pick an arm; the duel ``(i, j)`` is
played and the left learner receives reward ``x`` (1 iff ``i`` won), the right one ``1 - x``.
A self-duel ``i == j`` is fed to both learners with its fair-coin outcome, as the reduction
prescribes.  The recommendation is the most played arm of the left learner.

The default learner is the UCB "singleton bandit machine" (:mod:`dueling_gym.agents.ucb_sbm`,
index ``mean + sqrt((a + 2) ln t / (2 n))``, ``a = 3``), as in the DTS authors' simulator;
Bernoulli Thompson sampling, UCB1 and KL-UCB learners are available too.
"""

from __future__ import annotations

from typing import Any, Callable

import numba
import numpy as np

from dueling_gym.agents._bandit_kernels import bandit_act, bandit_observe, bandit_recommend
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.kl_ucb import new_kl_ucb_state
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.agents.thompson import new_thompson_state
from dueling_gym.agents.ucb1 import new_ucb1_state
from dueling_gym.agents.ucb_sbm import new_ucb_sbm_state
from dueling_gym.validation import SeedLike, check_number

__all__ = ["Sparring", "SparringThompson", "SparringUCB1", "SPARRING_LEARNERS"]


class SparringState(AgentState, fields=["rng", "left", "right", "t"]):
    """Numba-side state of :class:`Sparring`: the generator and the two learners' states."""


@numba.njit(cache=True, nogil=True)
def sparring_act(state):
    return bandit_act(state.left), bandit_act(state.right)


@numba.njit(cache=True, nogil=True)
def sparring_observe(state, first, second, first_won):
    reward = 1.0 if first_won else 0.0
    # A self-duel is fed to both learners too (its outcome is a fair coin).
    bandit_observe(state.left, first, reward)
    bandit_observe(state.right, second, 1.0 - reward)
    state.t += 1


@numba.njit(cache=True, nogil=True)
def sparring_recommend(state):
    return bandit_recommend(state.left)


#: learner name -> factory ``(n_arms, rng, a) -> learner state``.
SPARRING_LEARNERS: dict[str, Callable[[int, np.random.Generator, float], Any]] = {
    "ucb_sbm": lambda n_arms, rng, a: new_ucb_sbm_state(n_arms, rng, a),
    "thompson": lambda n_arms, rng, a: new_thompson_state(n_arms, rng),
    "ucb1": lambda n_arms, rng, a: new_ucb1_state(n_arms, rng),
    "kl_ucb": lambda n_arms, rng, a: new_kl_ucb_state(n_arms, rng, 0.0),
}


@register_agent("sparring", target="utility")
class Sparring(KernelDuelingAgent):
    """Sparring (Ailon, Karnin & Joachims, ICML 2014) with two independent bandit learners.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    learner : {"ucb_sbm", "thompson", "ucb1", "kl_ucb"}, default "ucb_sbm"
        Base learner of both sides: UCB-SBM (:class:`~dueling_gym.agents.UCBSBM`),
        Bernoulli Thompson sampling with Beta(1, 1) priors
        (:class:`~dueling_gym.agents.BernoulliThompson`),
        :class:`~dueling_gym.agents.UCB1` or :class:`~dueling_gym.agents.KLUCB`
        (``c = 0``).
    a : float, default 3.0
        UCB-SBM exploration parameter ``a >= 0`` (index ``mean + sqrt((a + 2) ln t / (2 n))``);
        only meaningful with ``learner="ucb_sbm"``.
    seed : int, optional
        Seed of the agent's generator, shared by both learners (Thompson sampling draws from it).

    Notes
    -----
    Designed for utility-based (totally ordered) instances; it has no guarantee for Copeland
    winners in general.  With deterministic UCB learners and lowest-index tie-breaking, the
    first ``K`` duels are the self-duels ``(0, 0), ..., (K-1, K-1)``.  ``O(K)`` per step.
    """

    paper = (PaperLink("ICML 2014, PMLR 32", "https://proceedings.mlr.press/v32/ailon14.html"),)
    guarantee = (
        "None proven: the paper proves bounds for Doubler and MultiSBM and only conjectures about Sparring, "
        "which does best in its experiments (Ailon, Karnin & Joachims, ICML 2014, as stated in the abstract); "
        "the reduction is meant for the utility-based (linear link) model."
    )

    act_kernel = sparring_act
    observe_kernel = sparring_observe
    recommend_kernel = sparring_recommend

    def __init__(self, n_arms: int, *, learner: str = "ucb_sbm", a: float = 3.0, seed: SeedLike = None):
        if not isinstance(learner, str):
            raise TypeError(f"learner must be a string, got {type(learner).__name__}")
        if learner.lower() not in SPARRING_LEARNERS:
            raise ValueError(f"unknown learner {learner!r}; choose one of {sorted(SPARRING_LEARNERS)}")
        self.learner = learner.lower()
        self.a = check_number("a", a, strict=False, minimum=0.0)
        if self.learner != "ucb_sbm" and self.a != 3.0:
            raise ValueError(f"a is the UCB-SBM exploration parameter; it has no effect with learner={learner!r}")
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        factory = SPARRING_LEARNERS[self.learner]
        left = factory(self.n_arms, self.rng, self.a)
        right = factory(self.n_arms, self.rng, self.a)
        self.state = SparringState(rng=self.rng, left=left, right=right, t=0)


@register_agent("sparring_thompson", target="utility")
class SparringThompson(Sparring):
    """Sparring (Ailon, Karnin & Joachims, ICML 2014) with Bernoulli Thompson-sampling learners (``Sparring(learner="thompson")``).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    seed : int, optional
        Seed of the agent's generator.
    """

    guarantee = (
        "None proven: Sparring, with Thompson-sampling learners here, is only conjectured about in its paper, "
        "where it does best in the experiments (Ailon, Karnin & Joachims, ICML 2014, as stated in the "
        "abstract)."
    )

    def __init__(self, n_arms: int, *, seed: SeedLike = None):
        super().__init__(n_arms, learner="thompson", seed=seed)


@register_agent("sparring_ucb1", target="utility")
class SparringUCB1(Sparring):
    """Sparring (Ailon, Karnin & Joachims, ICML 2014) with UCB1 learners (``Sparring(learner="ucb1")``).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    seed : int, optional
        Seed of the agent's generator.
    """

    guarantee = (
        "None proven: Sparring, with UCB1 learners here, is only conjectured about in its paper, where it does "
        "best in the experiments (Ailon, Karnin & Joachims, ICML 2014, as stated in the abstract)."
    )

    def __init__(self, n_arms: int, *, seed: SeedLike = None):
        super().__init__(n_arms, learner="ucb1", seed=seed)
