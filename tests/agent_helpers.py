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


def assert_paths_agree(make_agent, problem_name: str, horizon: int, seed: int, env_id: str = "CopelandDuel-v0"):
    """Check that the fused loop, the act/observe loop and a plain Gymnasium loop agree duel for duel.

    ``make_agent`` builds a fresh agent (called three times).  Returns the fused result.
    """
    from dueling_gym.experiments import simulate

    fused = simulate(make_agent(), problem_name, horizon, seed=seed, record_duels=True)
    generic = simulate(make_agent(), problem_name, horizon, seed=seed, record_duels=True, fused=False)
    duels, outcomes, regret = gym_loop(make_agent(), problem_name, horizon, seed, env_id=env_id)
    assert fused.fused and not generic.fused
    np.testing.assert_array_equal(fused.duels, generic.duels)
    np.testing.assert_array_equal(fused.duels, duels)
    np.testing.assert_array_equal(fused.outcomes, generic.outcomes)
    np.testing.assert_array_equal(fused.outcomes, outcomes)
    np.testing.assert_array_equal(fused.recommendations, generic.recommendations)
    for notion, value in regret.items():
        assert abs(fused.cumulative_regret[notion][-1] - value) <= 1e-12 * max(1.0, abs(value))
        np.testing.assert_array_equal(fused.cumulative_regret[notion], generic.cumulative_regret[notion])
    return fused
