"""Gymnasium environments of dueling-gym (one module per environment).

``import dueling_gym`` registers them:

* ``DuelingBandit-v0`` -- :class:`~dueling_gym.envs.dueling_bandit.DuelingBanditEnv`
* ``CopelandDuel-v0`` -- :class:`~dueling_gym.envs.copeland_duel.CopelandDuelEnv`
* ``CombinatorialDuel-v0`` -- :class:`~dueling_gym.envs.combinatorial_duel.CombinatorialDuelEnv`

The two K-armed environments also have a native NumPy-batched vector environment,
:class:`~dueling_gym.envs.vector.DuelingBanditVectorEnv`, used by
``gym.make_vec(..., vectorization_mode="vector_entry_point")``.
"""

from dueling_gym.envs.copeland_duel import CopelandDuelEnv
from dueling_gym.envs.dueling_bandit import DuelingBanditEnv

__all__ = ["DuelingBanditEnv", "CopelandDuelEnv"]
