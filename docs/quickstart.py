import gymnasium as gym

import dueling_gym  # noqa: F401  (registers the environments)
from dueling_gym.agents import make_agent
from dueling_gym.experiments import derive_seeds

for name in ("rmed1", "random"):
    env = gym.make("CopelandDuel-v0", preferences="sushi", max_episode_steps=20_000)
    env_seed, agent_seed = derive_seeds(0)  # never one seed for both: they would draw the same uniforms
    agent = make_agent(name, n_arms=env.unwrapped.n_arms, seed=agent_seed)
    observation, info = env.reset(seed=env_seed)
    truncated = False
    while not truncated:
        duel = agent.act()
        observation, reward, terminated, truncated, info = env.step(duel)
        agent.observe(duel, bool(observation))
    regret = info["cumulative_regret"]["copeland_komiyama"]
    print(f"{name:>6}: Copeland regret after {info['t']:,} duels = {regret:7.1f}, recommends arm {agent.recommend()}")
