"""FlatPairActions: the duel ``(first, second)`` as one integer, for DQN and other Discrete-only learners."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dueling_gym.validation import check_discrete_action
from dueling_gym.wrappers._checks import pair_action_arms

__all__ = ["FlatPairActions"]


class FlatPairActions(gym.ActionWrapper, gym.utils.RecordConstructorArgs):
    """Flatten the ``MultiDiscrete([K, K])`` duel into ``Discrete(K * K)``.

    Action ``a`` duels ``(a // K, a % K)`` (row-major, ``first * K + second``), so
    Stable-Baselines3's DQN, which only supports ``Discrete`` actions, can be trained on a
    dueling environment.  Self-duels ``a = i * (K + 1)`` stay available.  Observation,
    reward and ``info`` (exact regret accounting) are the wrapped environment's.

    ```python
    env = DuelStatistics(FlatPairActions(gym.make("CopelandDuel-v0")))
    model = DQN("MlpPolicy", env)
    ```
    """

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ActionWrapper.__init__(self, env)
        self.n_arms = pair_action_arms(env, type(self).__name__)
        self.action_space = spaces.Discrete(self.n_arms * self.n_arms)

    def action(self, action: Any) -> np.ndarray:
        """The duel ``(first, second)`` of flat action ``action``."""
        flat = check_discrete_action(action, self.n_arms * self.n_arms)
        return np.array(divmod(flat, self.n_arms), dtype=np.int64)
