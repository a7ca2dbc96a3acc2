"""Any multi-armed bandit algorithm on a dueling problem, through the pair reduction.

    python examples/reduction_kl_ucb.py                      # KL-UCB on MultiSol, 20 000 duels
    python examples/reduction_kl_ucb.py --agent thompson --problem cyclic4

``PairReductionWrapper`` makes every unordered pair of arms (self-pairs included) one arm of an
ordinary bandit whose reward is the estimated ``Sup_i * Sup_j`` (plug-in Copeland scores of the
empirical preference matrix) -- the reduction behind Sup-KLUCB (Agrawal & Chaporkar 2019).  The
bandit agent (here KL-UCB) is the library's ordinary one, unchanged; the dueling environment
below still accounts the Copeland regret of every duel in ``info``.
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import dueling_gym  # noqa: F401  (registers the environments)
from dueling_gym.agents import list_agents, make_agent
from dueling_gym.wrappers import PairReductionWrapper


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="A multi-armed bandit agent on the pair reduction of a dueling bandit.")
    parser.add_argument("--agent", default="kl_ucb", choices=list_agents("bandit"), help="registered bandit agent")
    parser.add_argument("--problem", default="multisol", help="shipped problem name")
    parser.add_argument("--score", default="copeland", choices=("copeland", "borda"))
    parser.add_argument("--horizon", type=int, default=None, help="default 20000; --quick: 2000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a short run")
    arguments = parser.parse_args(argv)
    if arguments.horizon is None:
        arguments.horizon = 2000 if arguments.quick else 20_000

    env = PairReductionWrapper(
        gym.make("CopelandDuel-v0", preferences=arguments.problem, max_episode_steps=arguments.horizon),
        score=arguments.score,
    )
    agent = make_agent(arguments.agent, env.action_space.n, seed=arguments.seed)
    env.reset(seed=arguments.seed)
    problem = env.unwrapped.problem
    random_rate = problem.expected_random_regret("copeland_komiyama")
    print(f"{agent!r} on the {env.action_space.n} super-arms of {arguments.problem} "
          f"(Copeland winners {problem.copeland_winners.tolist()}, Random pays {random_rate:.3f} per duel)")

    report_at = set(np.unique(np.geomspace(100, arguments.horizon, 5).astype(int)).tolist()) | {arguments.horizon}
    truncated = False
    info: dict = {}
    while not truncated:
        super_arm = agent.act()
        _, reward, _, truncated, info = env.step(super_arm)
        agent.observe(super_arm, reward)
        if info["t"] in report_at:
            played = env.reduction.pair(agent.recommend())
            print(f"t={info['t']:>7}  Copeland regret={info['cumulative_regret']['copeland_komiyama']:8.2f} "
                  f"(Random: {random_rate * info['t']:8.1f})  most played pair={played}  "
                  f"best arm by Sup={env.reduction.best_arm()}")
    print(f"final plug-in scores Sup = {np.round(env.reduction.scores(), 3).tolist()}")
    env.close()


if __name__ == "__main__":
    main()
