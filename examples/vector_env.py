"""Thousands of dueling bandits at once with the native NumPy vector environment.

    python examples/vector_env.py                       # 256 random problems, horizon 2000
    python examples/vector_env.py --num-envs 4096 --horizon 500

``gym.make_vec(..., vectorization_mode="vector_entry_point")`` builds the batched environment:
one ``step`` duels ``num_envs`` pairs with a few NumPy operations.  Two policies, vectorised
by hand over the batch, are compared: uniform random duels and explore-then-commit (duel every
pair ``m`` times, then duel the empirical Copeland winner against itself).
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import dueling_gym  # noqa: F401  (registers the environments)
from dueling_gym import ProblemSampler
from dueling_gym.stats import INTERVAL_METHOD, NO_SPREAD, mean_half_width


def run(policy: str, arguments: argparse.Namespace) -> tuple[np.ndarray, float]:
    """Run one policy on every sub-environment for one episode; final Copeland regrets and duels/s."""
    envs = gym.make_vec(
        "CopelandDuel-v0", num_envs=arguments.num_envs, vectorization_mode="vector_entry_point",
        problem_sampler=ProblemSampler("no_condorcet_winner", n_arms=arguments.arms),
        max_episode_steps=arguments.horizon,
    )
    n_envs, n_arms = arguments.num_envs, arguments.arms
    rng = np.random.default_rng(arguments.seed)
    pairs = np.array([(i, j) for i in range(n_arms) for j in range(i + 1, n_arms)])
    explore_steps = arguments.explore * len(pairs)
    wins = np.zeros((n_envs, n_arms, n_arms), dtype=np.int64)
    rows = np.arange(n_envs)
    envs.reset(seed=arguments.seed)  # the same seed draws the same problems for both policies
    start = time.perf_counter()
    info = {}
    for t in range(arguments.horizon):
        if policy == "random":
            actions = rng.integers(0, n_arms, size=(n_envs, 2))
        elif t < explore_steps:  # explore: round-robin over the pairs
            actions = np.broadcast_to(pairs[t % len(pairs)], (n_envs, 2)).copy()
        else:  # commit: the empirical Copeland winner against itself
            beats = (wins > wins.transpose(0, 2, 1)).sum(axis=2)
            leader = beats.argmax(axis=1)
            actions = np.stack([leader, leader], axis=1)
        first_won, _, _, truncated, info = envs.step(actions)
        winner = np.where(first_won == 1, actions[:, 0], actions[:, 1])
        loser = np.where(first_won == 1, actions[:, 1], actions[:, 0])
        wins[rows, winner, loser] += 1
    elapsed = time.perf_counter() - start
    assert truncated.all()
    envs.close()
    return np.asarray(info["cumulative_regret"]["copeland_komiyama"]), n_envs * arguments.horizon / elapsed


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Batched dueling bandits with the native vector environment.")
    parser.add_argument("--num-envs", type=int, default=None, help="default 256; --quick: 16")
    parser.add_argument("--arms", type=int, default=5)
    parser.add_argument("--horizon", type=int, default=None, help="default 2000; --quick: 200")
    parser.add_argument("--explore", type=int, default=None,
                        help="duels per pair before committing (default: a tenth of the horizon in total)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a small run")
    arguments = parser.parse_args(argv)
    if arguments.num_envs is None:
        arguments.num_envs = 16 if arguments.quick else 256
    if arguments.horizon is None:
        arguments.horizon = 200 if arguments.quick else 2000
    if arguments.explore is None:
        n_pairs = arguments.arms * (arguments.arms - 1) // 2
        arguments.explore = max(1, arguments.horizon // (10 * n_pairs))

    print(f"{arguments.num_envs} random {arguments.arms}-armed problems without a Condorcet winner, "
          f"horizon {arguments.horizon}")
    for policy in ("random", "explore-then-commit"):
        regret, speed = run(policy, arguments)
        # One sub-environment is one run: no spread can be estimated from it.
        spread = f"{mean_half_width(regret):.1f} (95% t)" if regret.size > 1 else f"{NO_SPREAD} (one run)"
        print(f"{policy:>20}: mean Copeland regret at T {regret.mean():8.1f} ± {spread}   ({speed:,.0f} duels/s)")
    if arguments.num_envs > 1:
        print(f"(± {INTERVAL_METHOD}, over the {arguments.num_envs} sub-environments)")


if __name__ == "__main__":
    main()
