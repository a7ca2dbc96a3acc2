"""Gymnasium wrappers for the dueling environments (installed as ``dueling_gym.wrappers``).

Reductions from duels to ordinary multi-armed bandits, observation wrappers that expose
duel statistics to learned policies, and flat action spaces for DQN-style learners:

* :class:`PairReductionWrapper` -- ``Discrete(K(K+1)/2)``: each unordered pair is one arm
  with reward ``Sup_i * Sup_j`` (Sup-KLUCB's reduction; KL-UCB on it is Sup-KLUCB).
* :class:`BordaReductionWrapper` -- ``Discrete(K)``: arm ``i`` duels a uniformly random
  opponent, reward 1 if it wins (mean = Borda score).
* :class:`DuelStatistics` -- observation = normalised win-rate and count matrices.
* :class:`FlatPairActions` -- ``Discrete(K*K)`` actions for DQN.

For Stable-Baselines3 training over many bandit runs at once, :class:`SB3DuelVecEnv` puts the
native NumPy-batched vector env behind SB3's ``VecEnv`` protocol (faster than SB3's
``DummyVecEnv`` over single environments; needs the ``rl`` extra, imported on first use).

Every wrapper makes exactly one duel of the wrapped environment per step and passes its
``info`` through, so ``info["regret"]`` and ``info["cumulative_regret"]`` stay exact.  All
inherit :class:`gymnasium.utils.RecordConstructorArgs` and pass Gymnasium's and
Stable-Baselines3's environment checkers.

```python
import gymnasium as gym
import dueling_gym
from dueling_gym.agents import UCB1
from dueling_gym.wrappers import BordaReductionWrapper

env = BordaReductionWrapper(gym.make("CopelandDuel-v0", preferences="cyclic4"))
agent = UCB1(env.action_space.n, seed=0)
env.reset(seed=0)
for _ in range(1000):
    arm = agent.act()
    _, reward, _, _, info = env.step(arm)
    agent.observe(arm, reward)
```
"""

from typing import Any

from dueling_gym.wrappers.borda_reduction import BordaReductionWrapper
from dueling_gym.wrappers.duel_statistics import DuelStatistics, duel_statistics_observation, duel_statistics_space
from dueling_gym.wrappers.flat_pair_actions import FlatPairActions
from dueling_gym.wrappers.pair_reduction import PairReductionWrapper

__all__ = [
    "PairReductionWrapper",
    "BordaReductionWrapper",
    "DuelStatistics",
    "FlatPairActions",
    "SB3DuelVecEnv",
    "duel_statistics_observation",
    "duel_statistics_space",
]


def __getattr__(name: str) -> Any:
    # SB3DuelVecEnv derives from Stable-Baselines3's VecEnv: resolving it lazily keeps
    # ``import dueling_gym.wrappers`` free of SB3 and torch (and working without the rl extra).
    if name == "SB3DuelVecEnv":
        from dueling_gym.wrappers import sb3_vec_env

        return sb3_vec_env.SB3DuelVecEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
