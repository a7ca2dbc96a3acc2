import gymnasium as gym

import dueling_gym  # noqa: F401  (registers the environments)
from dueling_gym.agents import make_agent
from dueling_gym.experiments import derive_seeds, simulate

env = gym.make("CopelandDuel-v0", preferences="mslr5-noncondorcet", max_episode_steps=20_000)
agent = make_agent("ecw_rmed", n_arms=env.unwrapped.n_arms)
env_seed, agent_seed = derive_seeds(0)  # the seeds the compiled simulator uses for run 0
observation, info = env.reset(seed=env_seed)
agent.reset(seed=agent_seed)
truncated = False
while not truncated:
    action = agent.act()
    observation, reward, terminated, truncated, info = env.step(action)
    agent.observe(action, bool(observation))
loop_regret = info["cumulative_regret"]["copeland_komiyama"]
print(f"Gymnasium loop: regret {loop_regret:.3f} after {info['t']:,} duels, recommends arm {agent.recommend()}")

# The same run through the compiled simulator: the same duels, the same regret.
result = simulate(make_agent("ecw_rmed", n_arms=5), "mslr5-noncondorcet", horizon=20_000, seed=0)
fused_regret = result.cumulative_regret["copeland_komiyama"][-1]
print(f"simulate():     regret {fused_regret:.3f} after 20,000 duels (identical: {fused_regret == loop_regret})")
