"""Gymnasium environments of dueling-gym (one module per environment).

``import dueling_gym`` makes them available to ``gymnasium.make``:

* ``DuelingBandit-v0`` -- :class:`~dueling_gym.envs.DuelingBanditEnv`
* ``CopelandDuel-v0`` -- :class:`~dueling_gym.envs.CopelandDuelEnv`
* ``CombinatorialDuel-v0`` -- :class:`~dueling_gym.envs.CombinatorialDuelEnv`

The two K-armed environments also have a native NumPy-batched vector environment,
:class:`~dueling_gym.envs.vector.DuelingBanditVectorEnv`, used by
``gym.make_vec(..., vectorization_mode="vector_entry_point")``.

Every duel of these environments (and of :func:`~dueling_gym.experiments.simulate`'s Python
loop) is played by one engine: :class:`DuelEngine` one duel at a time, :class:`BatchDuelEngine`
one duel in each of many runs at once.
"""

from dueling_gym.envs._duels import UNIFORM_BLOCK, BatchDuelEngine, DuelEngine
from dueling_gym.envs.combinatorial_duel import CombinatorialDuelEnv
from dueling_gym.envs.copeland_duel import CopelandDuelEnv
from dueling_gym.envs.dueling_bandit import DuelingBanditEnv

__all__ = ["DuelingBanditEnv", "CopelandDuelEnv", "CombinatorialDuelEnv", "DuelEngine", "BatchDuelEngine",
           "UNIFORM_BLOCK"]
