"""Helpers shared by the agent tests: replaying a run in a plain Gymnasium loop."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import dueling_gym  # noqa: F401  (registers the environments)
from dueling_gym.experiments import derive_seeds


def gym_loop(agent, problem_name: str, horizon: int, seed: int, env_id: str = "CopelandDuel-v0"):
    """Run ``agent`` through ``gym.make(env_id)`` exactly as :func:`simulate` seeds it.

    Returns the duels, the outcomes and the final cumulative regret per notion.
    """
    env_seed, agent_seed = derive_seeds(seed)
    env = gym.make(env_id, preferences=problem_name, max_episode_steps=horizon)
    env.reset(seed=env_seed)
    agent.reset(seed=agent_seed)
    duels = np.zeros((horizon, 2), dtype=np.int64)
    outcomes = np.zeros(horizon, dtype=bool)
    info = {}
    for t in range(horizon):
        first, second = agent.act()
        observation, reward, terminated, truncated, info = env.step(np.array([first, second]))
        agent.observe((first, second), bool(observation))
        duels[t] = first, second
        outcomes[t] = bool(observation)
    assert truncated
    return duels, outcomes, info["cumulative_regret"]
