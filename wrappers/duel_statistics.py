"""DuelStatistics: the duel history as a fixed-size observation, so a feed-forward policy can learn."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dueling_gym.observations import DuelStatisticsTracker, duel_statistics_observation, duel_statistics_space
from dueling_gym.validation import check_action, check_outcome
from dueling_gym.wrappers._checks import dueling_arms

__all__ = ["DuelStatistics", "duel_statistics_observation", "duel_statistics_space"]


class DuelStatistics(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Replace the one-bit duel outcome by normalised win and count matrices of the episode.

    A dueling environment's observation (who won the last duel) is useless to a memoryless
    policy.  This wrapper keeps the win counts of the episode and observes them, so a
    feed-forward (MLP) policy trained with PPO, A2C or DQN has a Markov state.

    ## Observation Space

    ``Box(0, 1, (2 K^2,), float32)``: two ``K x K`` matrices flattened row-major, one after
    the other (built by :func:`~dueling_gym.observations.duel_statistics_observation`, which
    :class:`~dueling_gym.agents.PolicyAgent` uses too):

    * ``obs[:K*K].reshape(K, K)``: win rates ``W[i, j] / N[i, j]`` over the duels between
      ``i`` and ``j`` so far (either orientation), ``1/2`` if never played and on the diagonal;
    * ``obs[K*K:].reshape(K, K)``: counts normalised as ``1 / sqrt(1 + N[i, j])`` (``1`` when
      never played, towards ``0`` as the pair is sampled); the diagonal counts self-duels.

    The statistics restart at every ``reset`` (one episode is one bandit run), where the
    observation is ``1/2`` everywhere in the first half and ``1`` in the second.

    ## Action Space and Rewards

    Unchanged; any action space works (the duel itself, or a reduction or remapping below).
    The duel recorded at each step is the one the environment actually played, read from
    ``info["duel"]`` (``(first, second)``, which the K-armed environments report at every
    step and action-remapping wrappers pass through), never decoded from the action: a
    wrapper below may map actions to duels in any way.  A wrapped environment whose ``info``
    lacks a valid ``"duel"`` pair raises a ``TypeError`` at the first step.  The wrapped
    observation must be the ``Discrete(2)`` outcome (``1`` iff the first arm won).

    ## Info

    The wrapped environment's, unchanged.

    ```python
    env = DuelStatistics(gym.make("CopelandDuel-v0",
                                  problem_sampler=ProblemSampler("no_condorcet_winner", n_arms=5),
                                  max_episode_steps=500))
    model = PPO("MlpPolicy", env).learn(100_000)
    ```
    """

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        self.n_arms = dueling_arms(env, type(self).__name__)
        inner = env.observation_space
        if not (isinstance(inner, spaces.Discrete) and int(inner.n) == 2 and int(inner.start) == 0):
            raise TypeError(f"DuelStatistics needs the Discrete(2) duel outcome as observation, got {inner}")
        self.tracker = DuelStatisticsTracker(self.n_arms)
        self.observation_space = duel_statistics_space(self.n_arms)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset the wrapped environment and the statistics; the observation is the statistics
        of no duel, ``info`` the wrapped environment's."""
        _, info = self.env.reset(seed=seed, options=options)
        self.tracker.reset()
        return self.tracker.observation(), info

    def _played_duel(self, info: dict[str, Any]) -> tuple[int, int]:
        if "duel" not in info:
            raise TypeError(
                "DuelStatistics records the duel the environment played from info['duel'], but the wrapped "
                f"environment ({self.env}) reported no 'duel' entry; wrap a K-armed dueling environment "
                "(DuelingBandit-v0, CopelandDuel-v0) or a wrapper that passes its info through"
            )
        try:
            return check_action(info["duel"], self.n_arms)
        except (TypeError, ValueError) as error:
            raise type(error)(f"info['duel'] of the wrapped environment is not a duel of {self.n_arms} arms: {error}") from None

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        """Play ``action`` in the wrapped environment and record the duel it reports in
        ``info["duel"]``; the observation is the updated statistics, the rest is passed through."""
        outcome, reward, terminated, truncated, info = self.env.step(action)
        first, second = self._played_duel(info)
        self.tracker.update(first, second, check_outcome(outcome))
        return self.tracker.observation(), reward, terminated, truncated, info
