"""Gymnasium environments of dueling-gym (one module per environment).

``import dueling_gym`` makes them available to ``gymnasium.make``:

* ``DuelingBandit-v0`` -- :class:`~dueling_gym.envs.DuelingBanditEnv`, the K-armed dueling bandit
* ``CopelandDuel-v0`` -- :class:`~dueling_gym.envs.CopelandDuelEnv`, scored against the Copeland winners
* ``CombinatorialDuel-v0`` -- :class:`~dueling_gym.envs.CombinatorialDuelEnv`, combinatorial pure
  exploration on a bipartite graph
* ``ReplayDuel-v0`` -- :class:`~dueling_gym.envs.comparison_replay.ComparisonReplayEnv`, a log of pairwise
  comparisons played back
* ``RankerDuel-v0`` -- :class:`~dueling_gym.envs.ranker_duel.RankerDuelEnv`, rankers compared by interleaving
  with simulated clicks

Every class is importable from here (``from dueling_gym.envs import RankerDuelEnv``); the last two
are imported on first use.  ``gym.spec(env_id).kwargs`` names each environment's default problem.
Every ``info`` key of every environment keeps one type from step to step (a sentinel stands for
"nothing to report"), so ``gym.make_vec`` batches them in every vectorization mode.

The two K-armed environments also have a native NumPy-batched vector environment,
:class:`~dueling_gym.envs.vector.DuelingBanditVectorEnv`, used by
``gym.make_vec(..., vectorization_mode="vector_entry_point")``.

Every duel of these environments (and of :func:`~dueling_gym.experiments.simulate`'s Python
loop) is played by one engine: :class:`DuelEngine` one duel at a time, :class:`BatchDuelEngine`
one duel in each of many runs at once.
"""

from __future__ import annotations

from typing import Any

from dueling_gym.envs._duels import UNIFORM_BLOCK, BatchDuelEngine, DuelEngine
from dueling_gym.envs.combinatorial_duel import CombinatorialDuelEnv
from dueling_gym.envs.copeland_duel import CopelandDuelEnv
from dueling_gym.envs.dueling_bandit import DuelingBanditEnv

__all__ = ["DuelingBanditEnv", "CopelandDuelEnv", "CombinatorialDuelEnv", "ComparisonReplayEnv", "RankerDuelEnv",
           "DuelEngine", "BatchDuelEngine", "UNIFORM_BLOCK"]

#: The environment classes imported on first use: class name -> ``"module:Class"`` (the form of
#: the Gymnasium entry points of ``dueling_gym._ENVIRONMENTS`` and of the agents' table).
_LAZY = {
    "ComparisonReplayEnv": "dueling_gym.envs.comparison_replay:ComparisonReplayEnv",
    "RankerDuelEnv": "dueling_gym.envs.ranker_duel:RankerDuelEnv",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        module, _, attribute = _LAZY[name].partition(":")
        value = getattr(import_module(module), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
