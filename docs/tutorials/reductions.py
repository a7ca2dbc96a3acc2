"""Any multi-armed bandit algorithm on a dueling problem, through the pair reduction.

    python docs/tutorials/reductions.py                                 # KL-UCB on Sushi, 10 000 duels
    python docs/tutorials/reductions.py --agent thompson --problem cyclic4 --score borda
"""

import argparse

import gymnasium as gym
import numpy as np

import dueling_gym  # noqa: F401  (registers the environments)
from dueling_gym.agents import list_agents, make_agent
from dueling_gym.experiments import derive_seeds
from dueling_gym.wrappers import PairReductionWrapper


def main(argv=None):
    parser = argparse.ArgumentParser(description="A bandit agent on the pair reduction of a dueling bandit.")
    parser.add_argument("--agent", default="kl_ucb", choices=list_agents("bandit"), help="registered bandit agent")
    parser.add_argument("--problem", default="sushi", help="shipped problem (dueling_gym.list_problems())")
    parser.add_argument("--score", default="copeland", choices=("copeland", "borda"), help="the super-arms' score")
    parser.add_argument("--horizon", type=int, default=10_000, help="number of duels")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args(argv)
    if arguments.horizon < 1:
        parser.error("--horizon must be positive")

    env = PairReductionWrapper(
        gym.make("CopelandDuel-v0", preferences=arguments.problem, max_episode_steps=arguments.horizon),
        score=arguments.score,
    )
    # Two independent seeds: one seed for both would draw the same uniforms for the choice and the outcome.
    env_seed, agent_seed = derive_seeds(arguments.seed)
    agent = make_agent(arguments.agent, env.action_space.n, seed=agent_seed)  # one arm per unordered pair
    env.reset(seed=env_seed)
    problem = env.unwrapped.problem
    random_rate = problem.expected_random_regret("copeland_komiyama")
    print(f"{agent!r} on the {env.action_space.n} super-arms of {arguments.problem} "
          f"(Copeland winners {problem.copeland_winners.tolist()}, uniformly random duels pay {random_rate:.3f} each)")

    report_at = set(np.unique(np.geomspace(100, arguments.horizon, 3).astype(int)).tolist()) | {arguments.horizon}
    truncated = False
    while not truncated:
        arm = agent.act()
        _, reward, _, truncated, info = env.step(arm)
        agent.observe(arm, reward)
        if info["t"] in report_at:
            regret = info["cumulative_regret"]["copeland_komiyama"]
            print(f"t = {info['t']:>6,}: cumulative Copeland regret {regret:8.2f} (random: {random_rate * info['t']:8.1f}), "
                  f"duel played {info['duel']}, most played pair {env.reduction.pair(agent.recommend())}, "
                  f"best arm by score {env.reduction.best_arm()}")
    print(f"final plug-in scores: {np.round(env.reduction.scores(), 3).tolist()}")
    env.close()


if __name__ == "__main__":
    main()
