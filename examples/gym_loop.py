"""A dueling-bandit agent in a plain Gymnasium loop, and the same run through the fast simulator.

    python examples/gym_loop.py                         # RUCB on the MSLR-5 Condorcet problem
    python examples/gym_loop.py --agent ccb --problem multisol --horizon 20000

The environment draws duel outcomes exactly as :func:`dueling_gym.experiments.simulate` does
once both are seeded from the same run seed (``derive_seeds``), so the two regrets agree.
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import dueling_gym  # noqa: F401  (registers the environments; or gym.register_envs(dueling_gym))
from dueling_gym.agents import list_agents, make_agent
from dueling_gym.experiments import derive_seeds, simulate


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Run a dueling-bandit agent in a Gymnasium loop.")
    parser.add_argument("--agent", default="rucb", choices=list_agents("dueling"), help="registered agent name")
    parser.add_argument("--problem", default="mslr5-condorcet", help="shipped problem name (dueling_gym.list_problems())")
    parser.add_argument("--horizon", type=int, default=None, help="number of duels (default 5000; --quick: 500)")
    parser.add_argument("--seed", type=int, default=0, help="run seed")
    parser.add_argument("--quick", action="store_true", help="a short run")
    arguments = parser.parse_args(argv)
    if arguments.horizon is None:
        arguments.horizon = 500 if arguments.quick else 5000

    env = gym.make("CopelandDuel-v0", preferences=arguments.problem, max_episode_steps=arguments.horizon)
    agent = make_agent(arguments.agent, env.unwrapped.n_arms)
    env_seed, agent_seed = derive_seeds(arguments.seed)
    observation, info = env.reset(seed=env_seed)
    agent.reset(seed=agent_seed)

    report_at = {int(t) for t in np.unique(np.geomspace(10, arguments.horizon, 6).astype(int))} | {arguments.horizon}
    truncated = False
    while not truncated:
        first, second = agent.act()
        observation, reward, terminated, truncated, info = env.step(np.array([first, second]))
        agent.observe((first, second), bool(observation))  # observation == 1 iff `first` won
        if info["t"] in report_at:
            print(f"t={info['t']:>7}  duel=({first}, {second})  Copeland regret="
                  f"{info['cumulative_regret']['copeland_komiyama']:8.2f}  recommends arm {agent.recommend()}")

    problem = env.unwrapped.problem
    print(f"{agent!r} on {arguments.problem}: Copeland winners {problem.copeland_winners.tolist()}, "
          f"recommended {agent.recommend()}")
    result = simulate(agent, arguments.problem, arguments.horizon, seed=arguments.seed)
    loop_regret = info["cumulative_regret"]["copeland_komiyama"]
    print(f"Gymnasium loop regret {loop_regret:.3f}; simulate() regret {result.final_regret():.3f} "
          f"({'identical' if np.isclose(loop_regret, result.final_regret()) else 'different'})")
    env.close()


if __name__ == "__main__":
    main()
