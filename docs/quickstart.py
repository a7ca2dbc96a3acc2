import gymnasium as gym

import dueling_gym  # noqa: F401  (registers the environments)
from dueling_gym.agents import make_agent

for name in ("rmed1", "random"):
    env = gym.make("CopelandDuel-v0", preferences="sushi", max_episode_steps=20_000)
    agent = make_agent(name, n_arms=env.unwrapped.n_arms, seed=0)
    observation, info = env.reset(seed=0)
    truncated = False
    while not truncated:
        duel = agent.act()
        observation, reward, terminated, truncated, info = env.step(duel)
        agent.observe(duel, bool(observation))
    regret = info["cumulative_regret"]["copeland_komiyama"]
    print(f"{name:>6}: Copeland regret after {info['t']:,} duels = {regret:7.1f}, recommends arm {agent.recommend()}")
