"""A dueling-bandit agent in a plain Gymnasium loop, and the same run through the compiled simulator.

    python docs/tutorials/gym_loop.py                                   # ECW-RMED on MSLR-5 (no Condorcet winner)
    python docs/tutorials/gym_loop.py --agent ccb --problem multisol --horizon 5000
"""

import argparse

import gymnasium as gym
import numpy as np

import dueling_gym  # noqa: F401  (registers the environments; or gym.register_envs(dueling_gym))
from dueling_gym.agents import list_agents, make_agent
from dueling_gym.experiments import derive_seeds, simulate


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run a dueling-bandit agent in a Gymnasium loop.")
    parser.add_argument("--agent", default="ecw_rmed", choices=list_agents("dueling"), help="registered agent name")
    parser.add_argument("--problem", default="mslr5-noncondorcet", help="shipped problem (dueling_gym.list_problems())")
    parser.add_argument("--horizon", type=int, default=20_000, help="number of duels")
    parser.add_argument("--seed", type=int, default=0, help="run seed")
    arguments = parser.parse_args(argv)
    if arguments.horizon < 1:
        parser.error("--horizon must be positive")

    env = gym.make("CopelandDuel-v0", preferences=arguments.problem, max_episode_steps=arguments.horizon)
    agent = make_agent(arguments.agent, n_arms=env.unwrapped.n_arms)
    env_seed, agent_seed = derive_seeds(arguments.seed)  # the seeds the compiled simulator uses for this run
    observation, info = env.reset(seed=env_seed)
    agent.reset(seed=agent_seed)

    report_at = set(np.unique(np.geomspace(10, arguments.horizon, 5).astype(int)).tolist()) | {arguments.horizon}
    truncated = False
    while not truncated:
        action = agent.act()
        observation, reward, terminated, truncated, info = env.step(action)
        agent.observe(action, bool(observation))  # observation == 1 iff the first arm won
        if info["t"] in report_at:
            print(f"t = {info['t']:>7,}  duel {action}  Copeland regret "
                  f"{info['cumulative_regret']['copeland_komiyama']:8.2f}  recommends arm {agent.recommend()}")
    loop_regret = info["cumulative_regret"]["copeland_komiyama"]
    winners = env.unwrapped.problem.copeland_winners.tolist()
    print(f"Gymnasium loop: regret {loop_regret:.3f} after {info['t']:,} duels, recommends arm {agent.recommend()} "
          f"(Copeland winners {winners})")
    env.close()

    # The same run through the compiled simulator: the same duels, the same regret.
    n_arms = env.unwrapped.n_arms
    result = simulate(make_agent(arguments.agent, n_arms=n_arms), arguments.problem, horizon=arguments.horizon,
                      seed=arguments.seed)
    fused_regret = result.cumulative_regret["copeland_komiyama"][-1]
    print(f"simulate():     regret {fused_regret:.3f} after {arguments.horizon:,} duels "
          f"(identical: {fused_regret == loop_regret})")


if __name__ == "__main__":
    main()
