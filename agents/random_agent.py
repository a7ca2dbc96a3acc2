"""Uniform Random: the uniform-sampling sanity baseline.

Komiyama, Honda, Nakagawa. *Copeland Dueling Bandit Problem: Regret Lower Bound, Optimal
Algorithm, and Computationally Efficient Algorithm.* ICML 2016 (the "Random" baseline of its
experiments).

Every duel is an unordered pair ``{i, j}``, ``i != j``, drawn uniformly among the ``K(K-1)/2``
pairs, oriented by a fair coin; equivalently a uniform ordered pair of distinct arms, which is
how it is drawn here (``i`` uniform on ``K`` arms, ``j`` uniform on the other ``K - 1``).  With
``include_self=True`` the duel is uniform over all ``K^2`` ordered pairs.  Its expected
per-round Komiyama regret is ``sum_i (L_i - L^(1)) / (K (K - 1))``
(:meth:`~dueling_gym.problems.PreferenceMatrix.expected_random_regret`).
"""

from __future__ import annotations

import numba
import numpy as np

from dueling_gym.agents._pair_statistics import empirical_copeland_winner, record_duel
from dueling_gym.agents._random_draws import below
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import SeedLike, check_bool

__all__ = ["UniformRandom"]


class UniformRandomState(AgentState, fields=["rng", "wins", "include_self", "t"]):
    """Numba-side state of :class:`UniformRandom`."""


@numba.njit(cache=True, nogil=True)
def random_act(state):
    n_arms = state.wins.shape[0]
    first = below(state.rng.bit_generator, n_arms)
    if state.include_self:
        return first, below(state.rng.bit_generator, n_arms)
    second = below(state.rng.bit_generator, n_arms - 1)
    if second >= first:
        second += 1
    return first, second


@numba.njit(cache=True, nogil=True)
def random_observe(state, first, second, first_won):
    state.t += 1
    record_duel(state.wins, first, second, first_won)


@numba.njit(cache=True, nogil=True)
def random_recommend(state):
    return empirical_copeland_winner(state.wins)


@register_agent("random", target="-")
class UniformRandom(KernelDuelingAgent):
    """Uniformly random duels (the baseline of Komiyama et al., ICML 2016).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    include_self : bool, default False
        ``False``: a uniformly random pair of *distinct* arms in random order (the paper's baseline);
        ``True``: uniform over all ``K^2`` ordered pairs, self-duels included.
    seed : int, optional
        Seed of the agent's generator.

    Notes
    -----
    The agent keeps the win matrix ``W`` (attribute ``wins``; self-duels are not recorded) only
    to recommend the empirical Copeland winner (lowest index on ties).  ``O(1)`` per duel plus
    ``O(K^2)`` per recommendation.
    """

    paper = (PaperLink("ICML 2016, PMLR 48", "https://proceedings.mlr.press/v48/komiyama16.html"),)
    guarantee = (
        "None: uniform play, the scale the other agents are read against; its expected per-round Copeland "
        "regret is ``Σ_i (L_i - L^(1)) / (K (K - 1))`` (the regret of Komiyama et al., ICML 2016), so its "
        "regret is linear in ``T``."
    )

    act_kernel = random_act
    observe_kernel = random_observe
    recommend_kernel = random_recommend

    def __init__(self, n_arms: int, *, include_self: bool = False, seed: SeedLike = None):
        self.include_self = check_bool("include_self", include_self)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        self.wins = np.zeros((self.n_arms, self.n_arms), dtype=np.int64)
        self.state = UniformRandomState(rng=self.rng, wins=self.wins, include_self=self.include_self, t=0)
