"""Thousands of dueling bandits at once with the native NumPy vector environment.

    python docs/tutorials/vector_env.py                                 # 4096 random 6-armed problems, 1000 duels
    python docs/tutorials/vector_env.py --num-envs 256 --arms 5 --horizon 2000

Two policies, vectorised by hand over the batch, play the same problems: uniformly random duels,
and explore-then-commit (duel every pair ``m`` times, then the empirical Copeland winner against
itself).
"""

import argparse
import time

import gymnasium as gym
import numpy as np

import dueling_gym  # noqa: F401  (registers the environments)
from dueling_gym.experiments import derive_seeds
from dueling_gym.problems import ProblemSampler
from dueling_gym.stats import INTERVAL_METHOD, NO_SPREAD, mean_half_width


def run(policy, arguments):
    """One episode of ``policy`` on every sub-environment: the final Copeland regrets and duels per second."""
    envs = gym.make_vec(
        "CopelandDuel-v0", num_envs=arguments.num_envs, vectorization_mode="vector_entry_point",
        problem_sampler=ProblemSampler("no_condorcet_winner", n_arms=arguments.arms),
        max_episode_steps=arguments.horizon,
    )
    n_envs, n_arms = arguments.num_envs, arguments.arms
    env_seed, policy_seed = derive_seeds(arguments.seed)  # independent streams for the duels and their outcomes
    rng = np.random.default_rng(policy_seed)
    pairs = np.array([(i, j) for i in range(n_arms) for j in range(i + 1, n_arms)])
    explore_steps = arguments.explore * len(pairs)
    wins = np.zeros((n_envs, n_arms, n_arms), dtype=np.int64)
    rows = np.arange(n_envs)
    envs.reset(seed=env_seed)  # the same seed draws the same problems for both policies
    start = time.perf_counter()
    for t in range(arguments.horizon):
        if policy == "random":
            actions = rng.integers(0, n_arms, size=(n_envs, 2))
        elif t < explore_steps:  # explore: round-robin over the pairs
            actions = np.broadcast_to(pairs[t % len(pairs)], (n_envs, 2)).copy()
        else:  # commit: the empirical Copeland winner against itself
            leader = (wins > wins.transpose(0, 2, 1)).sum(axis=2).argmax(axis=1)
            actions = np.stack([leader, leader], axis=1)
        first_won, rewards, terminated, truncated, info = envs.step(actions)
        winner = np.where(first_won == 1, actions[:, 0], actions[:, 1])
        loser = np.where(first_won == 1, actions[:, 1], actions[:, 0])
        wins[rows, winner, loser] += 1
    elapsed = time.perf_counter() - start
    envs.close()
    return np.asarray(info["cumulative_regret"]["copeland_komiyama"]), n_envs * arguments.horizon / elapsed


def main(argv=None):
    parser = argparse.ArgumentParser(description="Batched dueling bandits with the native vector environment.")
    parser.add_argument("--num-envs", type=int, default=4096)
    parser.add_argument("--arms", type=int, default=6)
    parser.add_argument("--horizon", type=int, default=1000)
    parser.add_argument("--explore", type=int, default=None,
                        help="duels per pair before committing (default: a tenth of the horizon in total)")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args(argv)
    if min(arguments.num_envs, arguments.horizon) < 1 or arguments.arms < 2:
        parser.error("--num-envs and --horizon must be positive and --arms at least 2")
    if arguments.explore is None:
        arguments.explore = max(1, arguments.horizon // (10 * (arguments.arms * (arguments.arms - 1) // 2)))

    print(f"{arguments.num_envs} random {arguments.arms}-armed problems without a Condorcet winner, "
          f"{arguments.horizon} duels each")
    for policy in ("random", "explore-then-commit"):
        regret, speed = run(policy, arguments)
        # One sub-environment is one run: no spread can be estimated from it.
        spread = f"{mean_half_width(regret):.1f} (95% t)" if regret.size > 1 else f"{NO_SPREAD} (one run)"
        print(f"{policy:>20}: mean Copeland regret at T {regret.mean():7.1f} ± {spread}, "
              f"runs range from {regret.min():.1f} to {regret.max():.1f}   ({speed:,.0f} duels/s)")
    if arguments.num_envs > 1:
        print(f"(± {INTERVAL_METHOD}, over the {arguments.num_envs} sub-environments)")


if __name__ == "__main__":
    main()
