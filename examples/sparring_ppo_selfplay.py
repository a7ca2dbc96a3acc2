"""Sparring self-play with ONE shared PPO policy playing both seats (PettingZoo → SuperSuit → SB3).

``sparring_v0`` is a two-player zero-sum game: ``player_0`` picks the first arm of a duel,
``player_1`` the second, the winner's seat gets +1 and the loser's -1.  SuperSuit turns the
parallel env into a vector env with one slot per seat (``pettingzoo_env_to_vec_env_v1``) and
stacks copies of it (``concat_vec_envs_v1``), so a single Stable-Baselines3 PPO policy acts for
both seats and learns by self-play.  A Condorcet winner beats every arm, so it is the game's
only symmetric equilibrium: the shared policy drifts towards it.

The game is a repeated one-shot game (an action has no effect on later rewards), so PPO runs
with ``gamma = 0``.  ``PPO(seed=...)`` fails on SuperSuit's ``ConcatVecEnv`` ("no attribute
seed"): the script seeds Python/NumPy/torch with ``set_random_seed`` and the environments with
``reset(seed=...)`` itself, so a run is reproducible.

Run::

    python examples/sparring_ppo_selfplay.py                      # smoke run: 2048 steps
    python examples/sparring_ppo_selfplay.py --timesteps 100000   # ~20 s: ~90% on arm 0 of Sushi

``--timesteps`` counts seat-steps (two per duel).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

torch.set_num_threads(1)  # torch's default threads are much slower on small machines

import supersuit as ss  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.utils import set_random_seed  # noqa: E402

from dueling_gym.multiagent import sparring_v0  # noqa: E402


def make_vec_env(problem: str, *, max_cycles: int, num_vec_envs: int, seed: int):
    """``num_vec_envs`` copies of the game, two seats each, as one SB3 vector env (seeded)."""
    env = sparring_v0.parallel_env(preferences=problem, max_cycles=max_cycles)
    vec_env = ss.pettingzoo_env_to_vec_env_v1(env)
    vec_env = ss.concat_vec_envs_v1(vec_env, num_vec_envs, num_cpus=0, base_class="stable_baselines3")
    # Copy i is reset with seed + i; later resets (PPO's, the automatic ones) continue the streams.
    vec_env.venv.reset(seed=seed)
    return vec_env


def policy_probabilities(model: PPO) -> np.ndarray:
    """``probs[o, a]``: probability that the shared policy sends arm ``a`` after observing ``o``."""
    observations, _ = model.policy.obs_to_tensor(np.array([0, 1]))
    with torch.no_grad():
        return model.policy.get_distribution(observations).distribution.probs.cpu().numpy()


def evaluate(model: PPO, problem: str, *, cycles: int, seed: int) -> dict:
    """Both seats played by the trained policy (sampling its actions) for ``cycles`` duels."""
    env = sparring_v0.parallel_env(preferences=problem, max_cycles=cycles)
    observations, infos = env.reset(seed=seed)
    while env.agents:
        batch = np.array([observations[agent] for agent in env.possible_agents])
        arms, _ = model.predict(batch, deterministic=False)
        observations, rewards, terminations, truncations, infos = env.step(
            {agent: int(arm) for agent, arm in zip(env.possible_agents, arms)}
        )
    result = {"problem": env.problem, "plays": env.plays, "wins": env.wins,
              "regret": dict(infos["player_0"]["cumulative_regret"])}
    env.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timesteps", type=int, default=2048, help="PPO seat-steps (default 2048: a smoke run)")
    parser.add_argument("--problem", default="sushi", help="shipped problem name (default: sushi)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-vec-envs", type=int, default=4, help="copies of the game (2 seats each)")
    parser.add_argument("--max-cycles", type=int, default=128, help="duels per training episode")
    parser.add_argument("--eval-cycles", type=int, default=1000, help="duels of the evaluation game")
    args = parser.parse_args(argv)
    if min(args.timesteps, args.num_vec_envs, args.max_cycles, args.eval_cycles) < 1 or args.seed < 0:
        parser.error("sizes must be positive and the seed non-negative")

    set_random_seed(args.seed)  # Python, NumPy and torch (PPO's own seed= fails on ConcatVecEnv)
    vec_env = make_vec_env(args.problem, max_cycles=args.max_cycles, num_vec_envs=args.num_vec_envs, seed=args.seed)
    n_steps = 128  # per vector slot; one rollout = n_steps * 2 * num_vec_envs seat-steps
    model = PPO("MlpPolicy", vec_env, n_steps=n_steps, batch_size=n_steps * 2 * args.num_vec_envs // 4,
                gamma=0.0, learning_rate=3e-4, ent_coef=0.0, device="cpu", verbose=0)
    start = time.perf_counter()
    model.learn(total_timesteps=args.timesteps)
    train_time = time.perf_counter() - start
    vec_env.close()

    probs = policy_probabilities(model)
    result = evaluate(model, args.problem, cycles=args.eval_cycles, seed=args.seed + 10_000)
    problem = result["problem"]
    winner = problem.condorcet_winner
    label = f"Condorcet winner {winner}" if winner is not None else \
        f"Copeland winners {[int(a) for a in problem.copeland_winners]}"
    print(f"PPO self-play on {problem.name or args.problem} (K={problem.n_arms}, {label}): "
          f"{model.num_timesteps} seat-steps ({model.num_timesteps // 2} duels), {train_time:.1f}s, seed {args.seed}")
    for observation, row in enumerate(probs):
        top = np.argsort(-row, kind="stable")[:3]
        shown = ", ".join(f"arm {a}: {row[a]:.3f}" for a in top)
        print(f"  policy after {'a win ' if observation else 'a loss'}: {shown}")
    if winner is not None:
        print(f"  probability of the Condorcet winner: {probs[0, winner]:.3f} / {probs[1, winner]:.3f} "
              f"(uniform: {1 / problem.n_arms:.3f})")
    regret = result["regret"]
    per_duel = regret["copeland_komiyama"] / args.eval_cycles
    random = problem.expected_random_regret("copeland_komiyama")
    most = [int(np.argmax(row)) for row in result["plays"]]
    print(f"evaluation game, {args.eval_cycles} duels, both seats sampled from the shared policy:")
    print(f"  most played arm: player_0 {most[0]}, player_1 {most[1]}; wins {result['wins'][0]} / {result['wins'][1]}")
    print(f"  joint-duel Copeland regret: {regret['copeland_komiyama']:.1f} (Komiyama), "
          f"{regret['copeland_zoghi']:.1f} (Zoghi); per duel {per_duel:.4f} vs {random:.4f} for uniform random duels")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
