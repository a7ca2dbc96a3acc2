import gymnasium as gym

import dueling_gym  # noqa: F401
from dueling_gym.agents import KLUCB
from dueling_gym.wrappers import PairReductionWrapper

env = PairReductionWrapper(gym.make("CopelandDuel-v0", preferences="sushi"))
agent = KLUCB(env.action_space.n, seed=0)  # one arm per unordered pair
env.reset(seed=0)
for t in range(1, 10_001):
    arm = agent.act()
    _, reward, _, _, info = env.step(arm)
    agent.observe(arm, reward)
    if t in (100, 1_000, 10_000):
        regret = info["cumulative_regret"]["copeland_komiyama"]
        print(f"t = {t:>6,}: cumulative Copeland regret {regret:8.2f}, duel played {info['duel']}")
