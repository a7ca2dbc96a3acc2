from collections import Counter

from dueling_gym.multiagent import sparring_v0

env = sparring_v0.parallel_env(preferences="sushi", max_cycles=1000)
observations, infos = env.reset(seed=0)
for agent in env.agents:
    env.action_space(agent).seed(0 if agent == "player_0" else 1)
net_reward = Counter()
while env.agents:
    actions = {agent: env.action_space(agent).sample() for agent in env.agents}
    observations, rewards, terminations, truncations, infos = env.step(actions)
    net_reward.update(rewards)  # +1 to the winner's seat, -1 to the loser's
print(f"1000 duels of uniformly random arms, net reward per seat: {dict(net_reward)}")
print(f"cumulative Copeland regret of the pair: {infos['player_0']['cumulative_regret']['copeland_komiyama']:.1f}")
