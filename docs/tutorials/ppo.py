import time

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import PPO

import dueling_gym  # noqa: F401
from dueling_gym.problems import ProblemSampler
from dueling_gym.stats import mean_half_width
from dueling_gym.wrappers import SB3DuelVecEnv

torch.set_num_threads(1)
sampler = ProblemSampler("no_condorcet_winner", n_arms=5)


def vector_env(num_envs):
    return SB3DuelVecEnv(gym.make_vec("CopelandDuel-v0", num_envs=num_envs, vectorization_mode="vector_entry_point",
                                      problem_sampler=sampler, max_episode_steps=500))


def held_out_regret(model, seed=12345):
    """Mean Copeland regret of 100 runs of 500 duels on problems the policy never saw, with the
    half-width of its 95% Student's t interval."""
    evaluation = vector_env(100)
    evaluation.seed(seed)
    observation = evaluation.reset()
    for _ in range(500):
        action, _ = model.predict(observation, deterministic=False)
        observation, _, dones, infos = evaluation.step(action)
    regret = np.array([info["cumulative_regret"]["copeland_komiyama"] for info in infos])
    return f"{regret.mean():6.1f} ± {mean_half_width(regret):.1f} (95% Student's t interval, {regret.size} runs)"


model = PPO("MlpPolicy", vector_env(64), n_steps=100, batch_size=1600, seed=0)
print(f"before training: held-out regret {held_out_regret(model)}")
start = time.perf_counter()
model.learn(100_000)
print(f"after 100,000 duels of training ({time.perf_counter() - start:.0f} s): held-out regret {held_out_regret(model)}")
