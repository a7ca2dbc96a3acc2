"""Explore-then-commit as a kernel agent: the compiled twin of ``own_agent.py``.

The rule is the one of the own-agent tutorial: duel uniformly random pairs of distinct arms for
``rounds`` duels, then play the empirical Copeland winner against itself for ever.  Written as a
:class:`~dueling_gym.agents.KernelDuelingAgent`, its whole state lives in a Numba structref and
its three kernels run both behind ``act``/``observe``/``recommend`` and inside the compiled
loop of :func:`~dueling_gym.experiments.simulate`; for the same seed it plays exactly the duels
of the pure-Python version.  Import it (``dueling-gym run --agents
kernel_agent:KernelExploreThenCommit``) rather than running it as a script: Numba cannot hand a
state whose class lives in ``__main__`` back to Python, and its caches are found by module name.
"""

from __future__ import annotations

import numba
import numpy as np

from dueling_gym.agents import AgentState, KernelDuelingAgent
from dueling_gym.validation import SeedLike, check_integer

__all__ = ["KernelExploreThenCommit"]


class ExploreCommitState(AgentState, fields=[
    "rng",        # the agent's numpy Generator: Python and the kernels draw from one stream
    "wins",       # wins[i, j]: duels arm i won against arm j (int64, K x K)
    "rounds",     # exploration length
    "committed",  # the exploited arm; -1 while exploring
    "t",          # duels observed
]):
    """Numba-side state of :class:`KernelExploreThenCommit`."""


@numba.njit(cache=True, nogil=True)
def copeland_leader(wins):
    # Arms beaten by a majority of the duels played against them; lowest index on ties.
    n_arms = wins.shape[0]
    leader, most = 0, -1
    for i in range(n_arms):
        beaten = 0
        for j in range(n_arms):
            if 2 * wins[i, j] > wins[i, j] + wins[j, i]:
                beaten += 1
        if beaten > most:
            leader, most = i, beaten
    return leader


@numba.njit(cache=True, nogil=True)
def explore_commit_act(state):
    if state.t >= state.rounds and state.committed < 0:
        state.committed = copeland_leader(state.wins)
    if state.committed >= 0:
        return state.committed, state.committed
    n_arms = state.wins.shape[0]
    first = state.rng.integers(0, n_arms)
    second = (first + 1 + state.rng.integers(0, n_arms - 1)) % n_arms
    return first, second


@numba.njit(cache=True, nogil=True)
def explore_commit_observe(state, first, second, first_won):
    state.t += 1
    if first == second:
        return  # a self-duel is a fair coin: nothing to learn
    if first_won:
        state.wins[first, second] += 1
    else:
        state.wins[second, first] += 1


@numba.njit(cache=True, nogil=True)
def explore_commit_recommend(state):
    if state.committed >= 0:
        return state.committed
    return copeland_leader(state.wins)


class KernelExploreThenCommit(KernelDuelingAgent):
    """Explore-then-commit: ``rounds`` uniformly random duels, then the empirical Copeland winner.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    rounds : int, default 1000
        Number of exploration duels, ``rounds >= 0``.
    seed : int, SeedSequence or None
        Seed of the agent's generator.

    Notes
    -----
    An exploration duel is a uniform ordered pair of distinct arms.  After ``rounds`` duels the
    agent commits to the empirical Copeland winner (the arm that beats the most others in a
    majority of their duels, lowest index on ties) and duels it against itself, so its regret
    stops growing if and only if that arm is a Copeland winner.  ``O(1)`` per exploration duel,
    ``O(K^2)`` once at the commitment and per recommendation before it.
    """

    act_kernel = explore_commit_act
    observe_kernel = explore_commit_observe
    recommend_kernel = explore_commit_recommend

    def __init__(self, n_arms: int, *, rounds: int = 1000, seed: SeedLike = None):
        self.rounds = check_integer("rounds", rounds, minimum=0)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        self.wins = np.zeros((self.n_arms, self.n_arms), dtype=np.int64)
        self.state = ExploreCommitState(rng=self.rng, wins=self.wins, rounds=self.rounds, committed=-1, t=0)

