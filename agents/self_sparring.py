"""Self-Sparring with independent Beta-Bernoulli arms.

Sui, Zhuang, Burdick, Yue. *Multi-dueling Bandits with Dependent Arms.* UAI 2017 (Algorithm 1,
Self-Sparring, with independent Beta priors); this is the dueling case ``m = 2``.

Every round, each of the two slots independently draws ``theta_i ~ Beta(S_i + 1, F_i + 1)`` for
all arms and takes the argmax (random ties); the slots may coincide.  After the duel, with
``x = 1`` iff the first slot's arm won::

    S[a1] += eta x,  F[a1] += eta (1 - x),  S[a2] += eta (1 - x),  F[a2] += eta x.

When both slots pick the same arm, its fair-coin outcome therefore adds ``eta`` to both ``S``
and ``F`` of that arm (the slot-wise reading of the paper; ``skip_self_updates=True`` skips
such updates instead).
"""

from __future__ import annotations

import numba
import numpy as np

from dueling_gym.agents._bandit_kernels import beta_argmax
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import SeedLike, check_bool, check_number

__all__ = ["SelfSparring"]


class SelfSparringState(AgentState, fields=["rng", "successes", "failures", "plays", "eta", "skip_self_updates", "t"]):
    """Numba-side state of :class:`SelfSparring`."""


@numba.njit(cache=True, nogil=True)
def self_sparring_act(state):
    first = beta_argmax(state.successes, state.failures, state.rng)
    second = beta_argmax(state.successes, state.failures, state.rng)
    return first, second


@numba.njit(cache=True, nogil=True)
def self_sparring_observe(state, first, second, first_won):
    state.t += 1
    state.plays[first] += 1
    state.plays[second] += 1
    if first == second and state.skip_self_updates:
        return
    eta = state.eta
    if first_won:
        state.successes[first] += eta
        state.failures[second] += eta
    else:
        state.failures[first] += eta
        state.successes[second] += eta


@numba.njit(cache=True, nogil=True)
def self_sparring_recommend(state):
    return np.argmax(state.plays)


@register_agent("self_sparring", target="utility")
class SelfSparring(KernelDuelingAgent):
    """Self-Sparring (Sui, Zhuang, Burdick & Yue, UAI 2017), dueling case ``m = 2``.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    eta : float, default 1.0
        Learning rate ``eta > 0``: the weight of one duel in the Beta posteriors.
    skip_self_updates : bool, default False
        If True, a duel in which both slots picked the same arm leaves ``S`` and ``F``
        unchanged (by default its fair-coin outcome adds ``eta`` to both: the paper updates slot by slot and
        does not single this case out).
    seed : int, optional
        Seed of the agent's generator.

    Notes
    -----
    Prior ``Beta(1, 1)`` per arm.  :meth:`~dueling_gym.agents.DuelingAgent.recommend` returns the most
    played arm (slot plays,
    self-duels count twice; lowest index on ties), which is more robust than
    ``argmax S / (S + F)`` for rarely played arms.  ``O(K)`` per step (``2K`` Beta draws).
    """

    paper = (PaperLink("UAI 2017"),)
    guarantee = (
        "No-regret in the multi-dueling setting, of which the duel is the case ``m = 2`` (Sui, Zhuang, Burdick "
        "& Yue, UAI 2017: \"a no-regret analysis\", as stated in the abstract)."
    )

    act_kernel = self_sparring_act
    observe_kernel = self_sparring_observe
    recommend_kernel = self_sparring_recommend

    def __init__(self, n_arms: int, *, eta: float = 1.0, skip_self_updates: bool = False, seed: SeedLike = None):
        self.eta = check_number("eta", eta, minimum=0.0)
        self.skip_self_updates = check_bool("skip_self_updates", skip_self_updates)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        self.successes, self.failures = np.zeros(n_arms), np.zeros(n_arms)
        self.plays = np.zeros(n_arms, dtype=np.int64)
        self.state = SelfSparringState(
            rng=self.rng, successes=self.successes, failures=self.failures, plays=self.plays, eta=self.eta,
            skip_self_updates=self.skip_self_updates, t=0,
        )
