"""Training throughput through SB3DuelVecEnv, and the learned agent's inference speed.

* env steps/s of PPO with SB3's MLP policy (and with the pair policy) on the native vector env
  through the SB3 adapter: 1024 environments, K = 5, rollouts of 16 steps, 4 epochs;
* raw adapter steps/s (random actions, no learning);
* duels/s of the ``learned`` agent: its act/observe loop and the fused loop of ``simulate``
  (NumPy/Numba inference, no torch) on MSLR-5 non-Condorcet (K = 5) and Sushi (K = 16), as
  shipped and with the safeguard from duel 1000, checked against the targets of 500 000 duels/s
  at K = 5 and 100 000 at K = 16 for the shipped policy (the command exits with status 1 when
  one is missed);
* duels/s of the compiled episode loop that evolution-strategies training evaluates
  (``policy_episode_regret``, one thread, runs of 1000 duels), K = 5, 8 and 16.

Run: ``python benchmarks/training.py [--steps 200000]`` (torch on one thread).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200_000, help="PPO env steps per measurement")
    parser.add_argument("--n-envs", type=int, default=1024)
    arguments = parser.parse_args()

    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.logger import Logger

    from dueling_gym.agents import make_agent
    from dueling_gym.experiments.learning.pair_policy import PairPolicy
    from dueling_gym.experiments.learning import FAMILIES
    from dueling_gym.experiments.learning.training import make_training_env

    torch.set_num_threads(1)
    n_envs = arguments.n_envs
    env = make_training_env(FAMILIES, 5, 1000, n_envs)
    env.seed(0)
    env.reset()
    actions = np.random.default_rng(0).integers(0, 25, size=(200, n_envs))
    start = time.perf_counter()
    for row in actions:
        env.step(row)
    print(f"adapter, random actions: {200 * n_envs / (time.perf_counter() - start):,.0f} steps/s")

    for label, policy, kwargs in (("MlpPolicy", "MlpPolicy", {}), ("PairPolicy (hidden 16)", PairPolicy, {"n_arms": 5, "hidden": 16})):
        env = make_training_env(FAMILIES, 5, 1000, n_envs)
        model = PPO(policy, env, n_steps=16, batch_size=4096, n_epochs=4, seed=0, device="cpu", policy_kwargs=kwargs)
        model.set_logger(Logger(folder=None, output_formats=[]))  # no SB3-<date> folder per learn() in /tmp
        model.learn(16 * n_envs)  # warm-up
        start = time.perf_counter()
        model.learn(arguments.steps, reset_num_timesteps=False)
        print(f"PPO {label}: {arguments.steps / (time.perf_counter() - start):,.0f} env steps/s")

    agent = make_agent("learned", n_arms=5, seed=0)
    agent.observe(agent.act(), True)
    outcomes = np.random.default_rng(1).random(50_000) < 0.5
    start = time.perf_counter()
    for won in outcomes:
        agent.observe(agent.act(), bool(won))
    print(f"learned agent act/observe: {outcomes.size / (time.perf_counter() - start):,.0f} duels/s")

    from dueling_gym.agents.learned import DATA_DIRECTORY
    from dueling_gym.pair_network import load_policy_weights, policy_episode_regret
    from dueling_gym.experiments import simulate
    from dueling_gym.problems.generators import ProblemSampler

    # The learned agent's throughput targets: 500 000 duels/s at K = 5 and 100 000 at K = 16.
    missed = []
    for problem, n_arms, target in (("mslr5-noncondorcet", 5, 500_000), ("sushi", 16, 100_000)):
        # As shipped (the target), with the safeguard and with the Thompson check (options, no target).
        for setting in ({}, {"safeguard_from": 1000}, {"thompson_check_from": 1000}):
            agent = make_agent("learned", n_arms=n_arms, seed=0, **setting)
            simulate(agent, problem, 2000)  # compile (past duel 1000: the options' kernels too)
            duels = 500_000 if not setting else 200_000
            start = time.perf_counter()
            simulate(agent, problem, duels)
            rate = duels / (time.perf_counter() - start)
            if not setting:
                verdict = "meets" if rate >= target else "MISSES"
                if rate < target:
                    missed.append(n_arms)
                label = f"{verdict} the target of {target:,}"
            else:
                label = "no target"
            name = ", ".join(f"{key}={value}" for key, value in setting.items()) or "as shipped"
            print(f"learned agent, fused simulate, {problem} (K = {n_arms}), {name}: {rate:,.0f} duels/s ({label})")
    weights, _ = load_policy_weights(DATA_DIRECTORY / "learned_k5.npz", 5)
    for n_arms in (5, 8, 16):
        sampler = ProblemSampler("no_condorcet_winner", n_arms=n_arms)
        problems = [sampler(np.random.default_rng(index)) for index in range(200)]
        matrices = np.stack([problem.matrix for problem in problems])
        regrets = np.stack([problem.regret_matrix("copeland_komiyama") for problem in problems])
        policy_episode_regret(weights, matrices[:1], regrets[:1], 10, np.random.default_rng(0))  # compile
        start = time.perf_counter()
        policy_episode_regret(weights, matrices, regrets, 1000, np.random.default_rng(0))
        print(f"evolution-strategies episode loop, K = {n_arms}: "
              f"{200 * 1000 / (time.perf_counter() - start):,.0f} duels/s")
    if missed:
        raise SystemExit(f"the learned agent misses its throughput target at K = {missed}")


if __name__ == "__main__":
    main()
