"""Sparring self-play with ONE shared PPO policy playing both seats (PettingZoo → SuperSuit → SB3).

``sparring_v0`` is a two-player zero-sum game: ``player_0`` picks the first arm of a duel,
``player_1`` the second, the winner's seat gets +1 and the loser's -1.  SuperSuit turns the
parallel env into a vector env with one slot per seat (``pettingzoo_env_to_vec_env_v1``) and
stacks copies of it (``concat_vec_envs_v1``), so a single Stable-Baselines3 PPO policy acts for
both seats and learns by self-play.  A Condorcet winner beats every arm, so it is the game's
only symmetric equilibrium: the shared policy drifts towards it.

The game is a repeated one-shot game (an action has no effect on later rewards), so PPO runs
with ``gamma = 0``.

How it compares with Sparring's bandit learners: self-play training *is* online play of the
game, so the fair comparison counts every duel the shared policy played while learning (over
all copies of the game) as one learner's run, and compares its cumulative Copeland regret with
Sparring (Ailon et al., ICML 2014) run for the same number of duels with UCB and with Thompson
sampling learners (``make_agent("sparring")``, ``make_agent("sparring_thompson")``), over the
same seeds.  With ``--out`` the script writes the usual report of the experiment tooling there:
``summary.md`` (regret at the end with 95% intervals), ``regret.csv`` and ``regret.png``
(cumulative regret against duels played).  It also prints the regret per duel of an evaluation
game played by the trained policy, next to Sparring's over the last tenth of its run.  ``PPO(seed=...)`` fails on SuperSuit's ``ConcatVecEnv`` ("no attribute
seed"): the script seeds Python/NumPy/torch with ``set_random_seed`` and the environments with
``reset(seed=...)`` itself, so a run is reproducible.

Run::

    python docs/tutorials/sparring_ppo_selfplay.py                      # smoke run: 2048 steps
    python docs/tutorials/sparring_ppo_selfplay.py --timesteps 100000   # ~20 s: ~90% on arm 0 of Sushi
    python docs/tutorials/sparring_ppo_selfplay.py --timesteps 100000 --seeds 5 --out results/sparring-ppo

``--timesteps`` counts seat-steps (two per duel).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

try:
    import torch

    torch.set_num_threads(1)  # torch's default threads are much slower on small machines

    import pettingzoo  # noqa: F401
    import supersuit as ss
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.utils import set_random_seed
except ImportError as missing:  # one line saying what to install, not a traceback
    raise SystemExit(f"sparring_ppo_selfplay.py needs PyTorch, Stable-Baselines3, PettingZoo and SuperSuit "
                     f"({missing.name or missing} is missing): pip install 'dueling-gym[rl,multiagent]'") from None

from dueling_gym.agents import make_agent  # noqa: E402
from dueling_gym.experiments import log_checkpoints, simulate  # noqa: E402
from dueling_gym.experiments.sweeps.report import RegretCurve, plot_regret, summary_csv, summary_markdown  # noqa: E402
from dueling_gym.multiagent import sparring_v0  # noqa: E402
from dueling_gym.problems import load_problem  # noqa: E402
from dueling_gym.stats import NO_SPREAD, mean_half_width  # noqa: E402

NOTION = "copeland_komiyama"
#: Sparring with the two bandit learners it is compared with: label -> registry name.
SPARRING_BASELINES = {"sparring (UCB)": "sparring", "sparring (Thompson)": "sparring_thompson"}


class TrainingRegret(BaseCallback):
    """Cumulative regret of every duel played during training, all copies of the game together.

    Each copy has two slots (one per seat) whose infos describe the same duel, so a step's regret
    is the sum over slots halved.  ``totals[s]`` is the regret after ``(s + 1) * copies`` duels.
    """

    def __init__(self, copies: int):
        super().__init__()
        self.copies = copies
        self.totals: list[float] = []
        self._running = 0.0

    def _on_step(self) -> bool:
        infos = self.locals["infos"]
        if len(infos) != 2 * self.copies or any("regret" not in info for info in infos):
            raise RuntimeError("expected one info with the duel's regret per seat and copy")
        self._running += sum(info["regret"][NOTION] for info in infos) / 2.0
        self.totals.append(self._running)
        return True


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


def train(args: argparse.Namespace, seed: int) -> dict:
    """Train one shared policy by self-play; return it with its training regret and evaluation game."""
    set_random_seed(seed)  # Python, NumPy and torch (PPO's own seed= fails on ConcatVecEnv)
    vec_env = make_vec_env(args.problem, max_cycles=args.max_cycles, num_vec_envs=args.num_vec_envs, seed=seed)
    n_steps = 128  # per vector slot; one rollout = n_steps * 2 * num_vec_envs seat-steps
    model = PPO("MlpPolicy", vec_env, n_steps=n_steps, batch_size=n_steps * 2 * args.num_vec_envs // 4,
                gamma=0.0, learning_rate=3e-4, ent_coef=0.0, device="cpu", verbose=0)
    training_regret = TrainingRegret(args.num_vec_envs)
    start = time.perf_counter()
    model.learn(total_timesteps=args.timesteps, callback=training_regret)
    train_time = time.perf_counter() - start
    vec_env.close()
    return {"model": model, "train_time": train_time, "training_regret": np.array(training_regret.totals),
            "probs": policy_probabilities(model),
            "evaluation": evaluate(model, args.problem, cycles=args.eval_cycles, seed=seed + 10_000)}


def report_run(args: argparse.Namespace, seed: int, run: dict) -> None:
    """Print what one self-play run learned and how its evaluation game went."""
    model, probs, result = run["model"], run["probs"], run["evaluation"]
    problem = result["problem"]
    winner = problem.condorcet_winner
    label = f"Condorcet winner {winner}" if winner is not None else \
        f"Copeland winners {[int(a) for a in problem.copeland_winners]}"
    print(f"PPO self-play on {problem.name or args.problem} (K={problem.n_arms}, {label}): "
          f"{model.num_timesteps} seat-steps ({model.num_timesteps // 2} duels), {run['train_time']:.1f}s, seed {seed}")
    for observation, row in enumerate(probs):
        top = np.argsort(-row, kind="stable")[:3]
        shown = ", ".join(f"arm {a}: {row[a]:.3f}" for a in top)
        print(f"  policy after {'a win ' if observation else 'a loss'}: {shown}")
    if winner is not None:
        print(f"  probability of the Condorcet winner: {probs[0, winner]:.3f} / {probs[1, winner]:.3f} "
              f"(uniform: {1 / problem.n_arms:.3f})")
    regret = result["regret"]
    per_duel = regret[NOTION] / args.eval_cycles
    random = problem.expected_random_regret(NOTION)
    most = [int(np.argmax(row)) for row in result["plays"]]
    print(f"evaluation game, {args.eval_cycles} duels, both seats sampled from the shared policy:")
    print(f"  most played arm: player_0 {most[0]}, player_1 {most[1]}; wins {result['wins'][0]} / {result['wins'][1]}")
    print(f"  joint-duel Copeland regret: {regret[NOTION]:.1f} (Komiyama), "
          f"{regret['copeland_zoghi']:.1f} (Zoghi); per duel {per_duel:.4f} vs {random:.4f} for uniform random duels")


def compare(args: argparse.Namespace, runs: dict[int, dict]) -> list[RegretCurve]:
    """Self-play's training regret against Sparring's learners over the same number of duels and seeds."""
    problem = load_problem(args.problem)
    copies = args.num_vec_envs
    duels = len(next(iter(runs.values()))["training_regret"]) * copies
    # Self-play's regret is known after every step, i.e. every `copies` duels: checkpoints on that grid.
    grid = np.append(log_checkpoints(duels), round(0.9 * duels))
    checkpoints = np.unique(np.maximum(copies, grid // copies * copies))
    winners = set(int(arm) for arm in problem.copeland_winners)
    seeds = sorted(runs)
    self_play = [run["training_regret"][checkpoints // copies - 1] for run in runs.values()]
    curves = [RegretCurve("PPO self-play (shared policy)", problem.name or args.problem, NOTION, checkpoints,
                          np.array(self_play), np.array([int(np.argmax(run["evaluation"]["plays"][0])) in winners
                                                         for run in runs.values()]), problem.name or "", problem.n_arms)]
    for label, name in SPARRING_BASELINES.items():
        results = [simulate(make_agent(name, n_arms=problem.n_arms, seed=seed), problem, duels, seed=seed,
                            checkpoints=checkpoints) for seed in seeds]
        curves.append(RegretCurve(label, problem.name or args.problem, NOTION, checkpoints,
                                  np.array([result.cumulative_regret[NOTION] for result in results]),
                                  np.array([int(result.recommendations[-1]) in winners for result in results]),
                                  problem.name or "", problem.n_arms))
    print(f"\nOnline regret over the {duels} duels played while learning ({len(seeds)} seeds; self-play "
          f"counts all {copies} copies of the game as one learner):")
    print(summary_markdown(curves))
    tenth = int(np.searchsorted(checkpoints, round(0.9 * duels) // copies * copies))
    late = {curve.agent: (curve.runs[:, -1] - curve.runs[:, tenth]) / (checkpoints[-1] - checkpoints[tenth])
            for curve in curves[1:]}
    evaluation = [run["evaluation"]["regret"][NOTION] / args.eval_cycles for run in runs.values()]
    print(f"regret per duel after learning, mean over seeds ± {INTERVAL_NAME}: self-play's evaluation game "
          f"{per_duel_interval(evaluation)}; "
          + ", ".join(f"{label} over its last tenth {per_duel_interval(values)}" for label, values in late.items()))
    return curves


#: The interval per_duel_interval prints.
INTERVAL_NAME = "the half-width of the 95% Student's t interval of the mean (n/a with one seed)"


def per_duel_interval(values) -> str:
    """``mean ± half-width`` of a regret per duel over seeds; one seed has no interval (n/a)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return f"{values.mean():.4f} ± {NO_SPREAD} (one run)"
    return f"{values.mean():.4f} ± {mean_half_width(values):.4f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timesteps", type=int, default=2048, help="PPO seat-steps (default 2048: a smoke run)")
    parser.add_argument("--problem", default="sushi", help="shipped problem name (default: sushi)")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--seeds", type=int, default=1, help="number of seeds (seed, seed + 1, ...)")
    parser.add_argument("--num-vec-envs", type=int, default=4, help="copies of the game (2 seats each)")
    parser.add_argument("--max-cycles", type=int, default=128, help="duels per training episode")
    parser.add_argument("--eval-cycles", type=int, default=1000, help="duels of the evaluation game")
    parser.add_argument("--out", default=None, help="folder for summary.md, regret.csv and regret.png")
    args = parser.parse_args(argv)
    if min(args.timesteps, args.num_vec_envs, args.max_cycles, args.eval_cycles, args.seeds) < 1 or args.seed < 0:
        parser.error("sizes must be positive and the seed non-negative")

    runs = {}
    for seed in range(args.seed, args.seed + args.seeds):
        runs[seed] = train(args, seed)
        report_run(args, seed, runs[seed])
    curves = compare(args, runs)
    if args.out is not None:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.md").write_text(summary_markdown(curves))
        (out / "regret.csv").write_text(summary_csv(curves))
        written = plot_regret(curves, out / "regret", formats=("png",),
                              title=f"Sparring on {args.problem}: shared-policy self-play vs bandit learners")
        print(f"report written to {out} ({', '.join(path.name for path in written)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
