import gymnasium as gym
import numpy as np

import dueling_gym  # noqa: F401
from dueling_gym.problems import ProblemSampler
from dueling_gym.stats import mean_half_width

envs = gym.make_vec(
    "CopelandDuel-v0", num_envs=4096, vectorization_mode="vector_entry_point",
    problem_sampler=ProblemSampler("no_condorcet_winner", n_arms=6), max_episode_steps=1000,
)
observations, info = envs.reset(seed=0)
rng = np.random.default_rng(0)
for _ in range(1000):
    actions = rng.integers(0, 6, size=(4096, 2))
    observations, rewards, terminated, truncated, info = envs.step(actions)
regret = info["cumulative_regret"]["copeland_komiyama"]
print(f"{regret.size} runs of 1000 uniformly random duels: mean Copeland regret {regret.mean():.1f} "
      f"± {mean_half_width(regret):.1f} (95% Student's t interval of the mean; "
      f"runs range from {regret.min():.1f} to {regret.max():.1f})")
