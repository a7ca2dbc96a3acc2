"""Learn a dueling-bandit policy with PPO and benchmark it against CCB, ECW-RMED, RUCB and Random.

Training: Stable-Baselines3's PPO on ``CopelandDuel-v0`` wrapped in ``DuelStatistics`` (the
observation is the episode's normalised win-rate and count matrices, so an MLP policy can
learn), with a fresh random 5-armed problem without a Condorcet winner at every episode
(``ProblemSampler("no_condorcet_winner", n_arms=5)``).  One episode is one bandit run of
``--horizon`` duels; the reward is minus the Copeland regret of each duel.

Benchmark: held-out problems drawn from the same generator with a different seed; the learned
policy runs through :class:`~dueling_gym.agents.policy.PolicyAgent` -- sampled from its action
distribution (``ppo_sampled``, reproducible from the agent's seed) and greedy (``ppo_greedy``) --
and every algorithm through
:func:`~dueling_gym.experiments.simulate`, and the table is the experiment tooling's
(:func:`~dueling_gym.experiments.sweeps.report.summary_markdown`): cumulative Copeland regret
(Komiyama scale) at ``T = --horizon``, mean and 95% CI over the held-out problems.

    python docs/tutorials/train_ppo.py              # defaults (a few minutes on 2 CPU cores)
    python docs/tutorials/train_ppo.py --quick      # a smoke run (seconds)
"""

from __future__ import annotations

import argparse
import importlib
import time

import gymnasium as gym
import numpy as np

try:
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
except ImportError as missing:  # one line saying what to install, not a traceback
    raise SystemExit(f"train_ppo.py needs PyTorch and Stable-Baselines3 ({missing.name or missing} is missing): "
                     "pip install 'dueling-gym[rl]'") from None

import dueling_gym  # noqa: F401  (registers the environments)
from dueling_gym import ProblemSampler
from dueling_gym.agents import list_agents, make_agent
from dueling_gym.agents.policy import PolicyAgent
from dueling_gym.experiments import simulate
from dueling_gym.experiments.sweeps.report import aggregate, summary_markdown
from dueling_gym.wrappers import DuelStatistics

N_ARMS = 5
BASELINES = ("ccb", "ecw_rmed", "rucb", "random")


def parse_arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timesteps", type=int, default=None, help="PPO training steps (default 100000; --quick: 2048)")
    parser.add_argument("--horizon", type=int, default=None, help="duels per episode and benchmark horizon (default 500; --quick: 100)")
    parser.add_argument("--problems", type=int, default=None, help="held-out benchmark problems (default 30; --quick: 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of training (PPO, torch, environments) and of the held-out problems")
    parser.add_argument("--gamma", type=float, default=0.9, help="PPO discount factor")
    parser.add_argument("--n-envs", type=int, default=8, help="parallel training environments (DummyVecEnv)")
    parser.add_argument("--baselines", default=",".join(BASELINES),
                        help=f"comma-separated registered agent names to compare with (default {','.join(BASELINES)})")
    parser.add_argument("--save", default=None, help="save the trained model to this path (.zip)")
    parser.add_argument("--quick", action="store_true", help="tiny settings for a smoke run")
    arguments = parser.parse_args(argv)
    defaults = dict(timesteps=2048, horizon=100, problems=3) if arguments.quick else dict(timesteps=100_000, horizon=500, problems=30)
    for name, value in defaults.items():
        if getattr(arguments, name) is None:
            setattr(arguments, name, value)
    for name in ("timesteps", "horizon", "problems", "n_envs"):
        if getattr(arguments, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be positive")
    return arguments


def train(sampler: ProblemSampler, arguments: argparse.Namespace) -> PPO:
    """PPO on DuelStatistics(CopelandDuel-v0) with a new problem from ``sampler`` at every episode."""

    def make_env() -> gym.Env:
        env = gym.make("CopelandDuel-v0", problem_sampler=sampler, max_episode_steps=arguments.horizon)
        return DuelStatistics(env)

    # make_vec_env seeds sub-environment k with seed + k, so the training problems are reproducible.
    venv = make_vec_env(make_env, n_envs=arguments.n_envs, seed=arguments.seed)
    n_steps = max(16, 2048 // arguments.n_envs)
    model = PPO(
        "MlpPolicy", venv, seed=arguments.seed, device="cpu", verbose=0,
        n_steps=n_steps, batch_size=min(256, n_steps * arguments.n_envs), gamma=arguments.gamma, ent_coef=0.01,
    )
    model.learn(total_timesteps=arguments.timesteps)
    return model


def baseline_agents(names: list[str]) -> dict[str, object]:
    """The baselines that are available, built by name; a note for each one that is not."""
    agents = {}
    for name in names:
        if name not in list_agents():
            try:  # agents register on import: import the module of the same name if it exists
                importlib.import_module(f"dueling_gym.agents.{name}")
            except Exception as error:  # noqa: BLE001 - a missing or unfinished agent is only skipped
                print(f"note: agent {name!r} is not available ({type(error).__name__}: {error}); skipping it")
                continue
        if name not in list_agents():
            print(f"note: agent {name!r} is not registered; skipping it")
            continue
        agents[name] = make_agent(name, N_ARMS, seed=0)
    return agents


def benchmark(agents: dict[str, object], problems: list, horizon: int, seed: int) -> list[dict]:
    """One ``simulate`` run per (agent, problem), as records of the experiment tooling."""
    records = []
    for label, agent in agents.items():
        for index, problem in enumerate(problems):
            result = simulate(agent, problem, horizon, seed=seed * 100_003 + index,
                              fused=False if isinstance(agent, PolicyAgent) else None)
            records.append({
                "agent": label,
                "problem": f"{problems[0].name} held-out",
                "seed": index,
                "checkpoints": result.checkpoints.tolist(),
                "cumulative_regret": {notion: values.tolist() for notion, values in result.cumulative_regret.items()},
                "recommendation_is_copeland_winner": np.isin(result.recommendations, problem.copeland_winners).tolist(),
                "wall_time": result.wall_time,
            })
    return records


def main(argv=None) -> None:
    arguments = parse_arguments(argv)
    torch.set_num_threads(1)  # 2-core machines: more threads only slow small networks down
    torch.manual_seed(arguments.seed)
    start = time.perf_counter()

    sampler = ProblemSampler("no_condorcet_winner", n_arms=N_ARMS)
    print(f"training PPO for {arguments.timesteps} steps on CopelandDuel-v0 + DuelStatistics, {sampler}, "
          f"horizon {arguments.horizon}, {arguments.n_envs} envs, seed {arguments.seed}")
    model = train(sampler, arguments)
    trained = time.perf_counter()
    print(f"trained in {trained - start:.1f} s")
    if arguments.save:
        model.save(arguments.save)
        print(f"saved the model to {arguments.save}")

    # Held-out problems: same generator, an independent stream (training draws from env seeds).
    rng = np.random.default_rng(np.random.SeedSequence([arguments.seed, 0x4E1D]))
    problems = [sampler(rng) for _ in range(arguments.problems)]
    # PPO learns a stochastic policy; its greedy mode can lock onto a self-duel, which brings
    # no information, so the sampled policy (reproducible from the agent's seed) is the main entry.
    agents = {
        "ppo_sampled": PolicyAgent(model, N_ARMS, deterministic=False, seed=arguments.seed),
        "ppo_greedy": PolicyAgent(model, N_ARMS, deterministic=True, seed=arguments.seed),
    }
    agents.update(baseline_agents([name.strip() for name in arguments.baselines.split(",") if name.strip()]))
    records = benchmark(agents, problems, arguments.horizon, arguments.seed)

    curves = aggregate(records, notion="copeland_komiyama")
    print(f"\nCopeland regret (Komiyama scale) at T = {arguments.horizon} on {arguments.problems} held-out problems:\n")
    print(summary_markdown(curves))
    times = {label: sum(r["wall_time"] for r in records if r["agent"] == label) for label in agents}
    print("benchmark wall time per agent: " + ", ".join(f"{label} {seconds:.2f} s" for label, seconds in times.items()))
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
