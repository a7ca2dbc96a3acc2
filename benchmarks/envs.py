"""Environment throughput on the machine at hand.

Measures
--------
* single-env steps/second through ``gym.make`` (with Gymnasium's wrappers) and on the
  unwrapped environment (target: >= 200k steps/s unwrapped), for the K-armed environments and
  ``CombinatorialDuel-v0``;
* vector-env duels/second for ``num_envs`` in {1, 64, 1024, 8192}
  (target: >= 50M duels/s at 8192 on one core);
* large K (``--large-k``, default 2000; 500 with ``--quick``; 0 skips it): seconds to build
  ``DuelingBandit-v0`` and ``CopelandDuel-v0`` on a fixed K-armed problem (drawn beforehand,
  not timed; target < 0.5 s), and a sampler's ``reset`` against its parts (drawing the problem,
  its duel table, loading the engine), which shows whether reset rebuilds more than the new
  problem's tables; a fixed problem's reset rebuilds none.

Run: ``python benchmarks/envs.py [--quick] [--json results.json]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import gymnasium as gym
import numpy as np

import dueling_gym  # noqa: F401  (registers the environments)
from dueling_gym.problems import ProblemSampler


def _best_of(repeats: int, function) -> float:
    function()  # warm-up: first-touch page faults and caches are not part of the rate
    return min(function() for _ in range(repeats))


def single_env_rate(env_id: str, unwrapped: bool, steps: int, **kwargs) -> float:
    env = gym.make(env_id, max_episode_steps=10 * steps, **kwargs)
    target = env.unwrapped if unwrapped else env
    rng = np.random.default_rng(0)
    if isinstance(env.action_space, gym.spaces.Discrete):  # CombinatorialDuel-v0: one action per pair
        actions = rng.integers(0, env.action_space.n, size=steps).tolist()
    else:
        actions = [np.array(a) for a in rng.integers(0, env.unwrapped.n_arms, size=(steps, 2))]

    def run() -> float:
        target.reset(seed=0)
        start = time.perf_counter()
        for action in actions:
            target.step(action)
        return time.perf_counter() - start

    return steps / _best_of(3, run)


def vector_env_rate(env_id: str, num_envs: int, duels: int, **kwargs) -> float:
    env = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)
    n_arms = env.unwrapped.n_arms
    actions = np.random.default_rng(0).integers(0, n_arms, size=(num_envs, 2))
    steps = min(200_000, max(20, duels // num_envs))  # small batches: enough steps for a stable rate

    def run() -> float:
        env.reset(seed=0)
        start = time.perf_counter()
        for _ in range(steps):
            env.step(actions)
        return time.perf_counter() - start

    return steps * num_envs / _best_of(3, run)


def large_k_rows(n_arms: int) -> dict[str, float]:
    """Build and reset times (seconds) with ``n_arms`` arms, printed as they are measured."""
    from dueling_gym.envs import DuelEngine
    from dueling_gym.problems.generators import utility_based

    rows: dict[str, float] = {}

    def timed(label: str, function):
        start = time.perf_counter()
        value = function()
        rows[label] = time.perf_counter() - start
        print(f"{label:<64} {rows[label]:>9.3f} s", flush=True)
        return value

    problem = timed(f"utility_based problem, K={n_arms}", lambda: utility_based(n_arms, np.random.default_rng(0)))
    notions = problem.defined_regret_notions
    table = timed(f"  its duel table ({n_arms * n_arms:,} rows x {len(notions) + 1})", lambda: problem.duel_table(notions))
    timed("  DuelEngine.load of that table", lambda: DuelEngine(notions).load(table))
    for env_id in ("DuelingBandit-v0", "CopelandDuel-v0"):
        env = timed(f"gym.make({env_id}, fixed K={n_arms}) [target < 0.5 s]",
                    lambda env_id=env_id: gym.make(env_id, preferences=problem))
        timed(f"  reset(seed=0), fixed problem", lambda env=env: env.reset(seed=0))
        del env
    sampler = ProblemSampler("utility_based", n_arms=n_arms)
    env = timed(f"gym.make(DuelingBandit-v0, sampler K={n_arms})",
                lambda: gym.make("DuelingBandit-v0", problem_sampler=sampler))
    timed("  reset(seed=0): draws and installs a problem", lambda: env.reset(seed=0))
    timed("  reset(seed=1): draws and installs another", lambda: env.reset(seed=1))
    drawn = timed("  of which: the sampler's draw alone", lambda: sampler(np.random.default_rng(1)))
    timed("  of which: its duel table alone", lambda: drawn.duel_table(env.unwrapped.regret_notions))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps (smoke run)")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--large-k", type=int, help="number of arms of the build/reset rows (2000; 500 quick; 0 skips)")
    args = parser.parse_args()
    steps = 20_000 if args.quick else 200_000
    duels = 2_000_000 if args.quick else 20_000_000

    results: dict = {"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
                     "single": {}, "vector": {}}
    print(f"{'environment':<48} {'steps/s':>14}")
    for env_id, kwargs, label in [
        ("CopelandDuel-v0", {"preferences": "sushi"}, "CopelandDuel-v0 sushi (K=16)"),
        ("CopelandDuel-v0", {}, "CopelandDuel-v0 multisol (K=5)"),
        ("DuelingBandit-v0", {}, "DuelingBandit-v0 sampled utility-based (K=8)"),
        ("CombinatorialDuel-v0", {}, "CombinatorialDuel-v0 five_edge"),
    ]:
        for unwrapped in (True, False):
            rate = single_env_rate(env_id, unwrapped, steps, **kwargs)
            name = f"{label} {'unwrapped' if unwrapped else 'gym.make'}"
            results["single"][name] = rate
            print(f"{name:<48} {rate:>14,.0f}")

    print(f"\n{'vector environment':<48} {'num_envs':>8} {'duels/s':>16}")
    for env_id, kwargs, label in [
        ("CopelandDuel-v0", {"preferences": "sushi"}, "CopelandDuel-v0 sushi (fixed problem)"),
        ("CopelandDuel-v0", {"problem_sampler": ProblemSampler("no_condorcet_winner", n_arms=8)},
         "CopelandDuel-v0 sampled K=8 (per-env problems)"),
    ]:
        for num_envs in (1, 64, 1024, 8192):
            rate = vector_env_rate(env_id, num_envs, duels, **kwargs)
            results["vector"][f"{label} num_envs={num_envs}"] = rate
            print(f"{label:<48} {num_envs:>8} {rate:>16,.0f}")

    large_k = args.large_k if args.large_k is not None else (500 if args.quick else 2000)
    if large_k:
        print(f"\n{'large K: build and reset':<64} {'seconds':>11}")
        results["large_k"] = large_k_rows(large_k)

    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
