"""The Borda reduction: arm ``i`` duels a uniformly random opponent and is rewarded if it wins."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dueling_gym.validation import check_discrete_action
from dueling_gym.wrappers._checks import pair_action_arms

__all__ = ["BordaReductionWrapper"]

# Opponents are drawn in blocks (one Generator call per block); reset discards the block, so
# after ``reset(seed=s)`` the draws depend only on ``s``.
_BLOCK = 1024


class BordaReductionWrapper(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Turn a K-armed dueling environment into a K-armed Bernoulli bandit with the Borda scores as means.

    Pulling arm ``i`` duels it against an opponent ``j != i`` drawn uniformly from the other
    ``K - 1`` arms; the reward is ``1`` if ``i`` won.  Arm ``i``'s mean reward is therefore its
    Borda score ``b_i = mean_{j != i} P[i, j]``, and any multi-armed bandit agent (UCB1,
    KL-UCB, Thompson sampling) run on this wrapper looks for the Borda winner (the reduction
    of Urvoy et al. 2013 and Jamieson et al. 2015).

    ## Action Space

    ``Discrete(K)``: the arm ``i`` (the first arm of the duel).

    ## Observation Space

    The wrapped environment's, unchanged: ``Discrete(2)``, ``1`` iff ``i`` won.

    ## Rewards

    ``1.0`` if ``i`` won the duel, ``0.0`` otherwise (Python floats).  The wrapped
    environment's reward (minus the regret) is dropped; the regret stays in ``info``.

    ## Info

    The wrapped environment's ``info`` (exact regret accounting: one underlying duel per
    step).  ``info["duel"]`` is the duel the environment played as it reports it, which is
    ``(i, j)`` unless a wrapper between them remaps actions; an environment that reports no
    duel gets ``info["duel"] = (i, j)``.

    ## Randomness

    Opponents are drawn from the environment's ``np_random`` (the generator that
    ``reset(seed=...)`` seeds), so an episode is reproducible from the reset seed alone.
    """

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        self.n_arms = pair_action_arms(env, type(self).__name__)
        self.action_space = spaces.Discrete(self.n_arms)
        self._opponents: list[int] = []
        self._cursor = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the wrapped environment and forget the opponents drawn so far; its observation
        and ``info`` are returned unchanged."""
        observation, info = self.env.reset(seed=seed, options=options)
        self._opponents = []
        self._cursor = 0
        return observation, info

    def _opponent(self, arm: int) -> int:
        if self._cursor == len(self._opponents):
            self._opponents = self.np_random.integers(0, self.n_arms - 1, size=_BLOCK).tolist()
            self._cursor = 0
        draw = self._opponents[self._cursor]
        self._cursor += 1
        return draw + (draw >= arm)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Duel arm ``action`` against a uniformly random other arm; the reward is 1 if it won.

        ``info`` is the wrapped environment's, with ``info["duel"]`` added when it has none.
        """
        arm = check_discrete_action(action, self.n_arms)
        opponent = self._opponent(arm)
        observation, _, terminated, truncated, info = self.env.step(np.array((arm, opponent), dtype=np.int64))
        if "duel" not in info:  # the environment's own report wins: a wrapper below may remap the duel
            info = {**info, "duel": (arm, opponent)}
        return observation, 1.0 if observation else 0.0, terminated, truncated, info
