"""Train learned dueling policies with Stable-Baselines3 on thousands of batched bandit runs.

:func:`train` runs PPO (or A2C) on the native NumPy vector env through
:class:`~dueling_gym.wrappers.sb3_vec_env.SB3DuelVecEnv`, with a fresh problem from a mixture
of generator families at every episode; it shows a progress bar, evaluates the policy on
held-out problems of each family at regular intervals (``evaluations.csv``), writes resumable
checkpoints at episode boundaries and finally exports the actor's weights to ``policy.npz``,
which the ``learned`` agent evaluates with NumPy alone.  :func:`evaluate` (in
:mod:`dueling_gym.experiments.learned_evaluation`) compares agents on held-out problems.

Reproducibility: the same arguments and seed give the same weights (torch runs on one thread;
the seed drives torch, SB3 and the native env's generator).  Checkpoints store the weights,
the optimiser, the reward normaliser and the generators' states, and a resumed run continues
from the latest one; it is not yet bit-identical to an uninterrupted run.  Every file is
written atomically (a crash leaves the previous file whole), and a checkpoint that is damaged or
holds non-finite values is refused on resume rather than trained on.

    python -m dueling_gym.experiments.training --out results/learned-k5 --n-arms 5 --timesteps 20000000

Needs the ``rl`` extra (stable-baselines3, torch) and ``tqdm``.
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import numpy as np

from dueling_gym.atomic_files import atomic_write
from dueling_gym.experiments.npz_files import check_finite, load_npz, save_npz_atomically, save_policy_atomically
from dueling_gym.problems.generators import GENERATORS, ProblemSampler
from dueling_gym.validation import check_integer, check_number

__all__ = ["FAMILIES", "MixtureSampler", "make_training_env", "held_out_regret", "train", "build_parser", "main"]

#: The generator families a policy is trained and evaluated on by default.
FAMILIES = ("no_condorcet_winner", "unique_copeland_winner", "utility_based")
ALGORITHMS = ("ppo", "a2c")
POLICIES = ("pair", "mlp")
_EVAL_SALT = 0xE7A1


class MixtureSampler:
    """A picklable ``rng -> PreferenceMatrix`` sampler drawing each problem from a family chosen
    uniformly at random (one ``rng.integers`` draw, then the family's generator)."""

    def __init__(self, families: Sequence[str], n_arms: int):
        families = tuple(families)
        if not families:
            raise ValueError("families must name at least one generator")
        unknown = [name for name in families if name not in GENERATORS]
        if unknown:
            raise ValueError(f"unknown problem families {unknown}; choose from {sorted(GENERATORS)}")
        self.families = families
        self.n_arms = check_integer("n_arms", n_arms, minimum=2)
        self._samplers = [ProblemSampler(name, n_arms=self.n_arms) for name in families]

    @property
    def always_has_condorcet_winner(self) -> bool:
        """True when every family always has a Condorcet winner."""
        return all(sampler.always_has_condorcet_winner for sampler in self._samplers)

    def __call__(self, rng: np.random.Generator) -> Any:
        return self._samplers[int(rng.integers(len(self._samplers)))](rng)

    def __repr__(self) -> str:
        return f"MixtureSampler({list(self.families)!r}, n_arms={self.n_arms})"


def make_training_env(families: Sequence[str], n_arms: int, horizon: int, n_envs: int, *, actions: str = "flat") -> Any:
    """An :class:`SB3DuelVecEnv` over ``n_envs`` Copeland duels whose problems come from ``families``."""
    from dueling_gym.envs.vector import CopelandDuelVectorEnv
    from dueling_gym.wrappers.sb3_vec_env import SB3DuelVecEnv

    native = CopelandDuelVectorEnv(num_envs=n_envs, max_episode_steps=horizon,
                                   problem_sampler=MixtureSampler(families, n_arms))
    return SB3DuelVecEnv(native, actions=actions)


def held_out_regret(model: Any, family: str, n_arms: int, horizon: int, n_problems: int, seed: int) -> float:
    """Mean cumulative Copeland regret (Komiyama scale) of ``model``'s sampled actions over one
    bandit run on each of ``n_problems`` held-out problems of ``family`` (batched; torch's global
    generator is restored afterwards, so evaluating does not perturb training)."""
    import torch

    env = make_training_env((family,), n_arms, horizon, n_problems)
    env.seed(seed)
    observation = env.reset()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for _ in range(horizon):
            action, _ = model.predict(observation, deterministic=False)
            observation, _, dones, infos = env.step(action)
    assert dones.all()
    return float(np.mean([info["cumulative_regret"]["copeland_komiyama"] for info in infos]))


def _eval_seed(seed: int, family_index: int) -> int:
    return int(np.random.SeedSequence([seed, _EVAL_SALT, family_index]).generate_state(1)[0])


def _build_model(env: Any, config: dict[str, Any]) -> Any:
    from stable_baselines3 import A2C, PPO

    from dueling_gym.experiments.pair_policy import PairPolicy

    if config["policy"] == "pair":
        policy, policy_kwargs = PairPolicy, {"n_arms": config["n_arms"], "hidden": config["hidden"]}
    else:
        policy, policy_kwargs = "MlpPolicy", {"net_arch": [config["hidden"] * 4, config["hidden"] * 4]}
    common = dict(policy_kwargs=policy_kwargs, seed=config["seed"], device="cpu", verbose=0,
                  gamma=config["gamma"], learning_rate=config["learning_rate"], ent_coef=config["ent_coef"],
                  n_steps=config["n_steps"], gae_lambda=config["gae_lambda"])
    if config["algorithm"] == "ppo":
        return PPO(policy, env, batch_size=config["batch_size"], n_epochs=config["n_epochs"], **common)
    return A2C(policy, env, **common)


def _checkpoints(directory: Path) -> list[tuple[int, Path]]:
    found = []
    for path in directory.glob("checkpoint_*.zip"):
        steps = path.stem.split("_")[-1]
        if steps.isdigit() and path.with_suffix(".state.npz").exists():
            found.append((int(steps), path))
    return sorted(found)


class _SavedState(NamedTuple):
    """What a checkpoint restores besides the model's parameters and its optimiser."""

    generator: np.random.Generator  # the native env's episode generator
    episodes_completed: int
    ret_rms: np.ndarray  # the reward normaliser's mean, variance and count
    torch_rng: np.ndarray


def _parameters(model: Any) -> dict[str, np.ndarray]:
    return {name: tensor.detach().cpu().numpy() for name, tensor in model.policy.state_dict().items()}


def _read_checkpoint(model: Any, path: Path) -> _SavedState:
    """Load the parameters and the optimiser of checkpoint ``path`` (``checkpoint_<steps>.zip``)
    into ``model``, and read the rest of its state, checking every file: a damaged checkpoint or
    one with non-finite values raises one ValueError naming the file, instead of a crash deep in
    a library or a run that trains on NaN."""
    import torch

    hint = (f"the run cannot resume from it: delete {path.with_suffix('.*').name} to resume from the checkpoint "
            "before it, or start afresh by re-running the command with --no-resume (resume=False from Python)")

    def refuse(file: Path, problem: str) -> ValueError:
        return ValueError(f"{file} {problem}; {hint}")

    state_path, optimiser_path = path.with_suffix(".state.npz"), path.with_suffix(".optim.pt")
    state = load_npz(state_path, ("json", "ret_rms", "torch_rng"), hint=hint)
    try:
        if state["json"].dtype.kind != "U" or state["json"].shape != ():
            raise TypeError(f"dtype {state['json'].dtype} and shape {state['json'].shape}, expected one JSON string")
        json_state = json.loads(str(state["json"]))
        generator = np.random.Generator(np.random.PCG64())
        generator.bit_generator.state = json_state["env_rng"]
        episodes = json_state["episodes_completed"]
    except Exception as error:  # not JSON, not a dict, no such key, not a generator state ...
        raise refuse(state_path, f"holds no valid array json ({type(error).__name__}: {error})") from error
    if not isinstance(episodes, int) or isinstance(episodes, bool) or episodes < 0:
        raise refuse(state_path, f"counts {episodes!r} completed episodes, expected an integer >= 0")
    ret_rms, torch_rng = state["ret_rms"], state["torch_rng"]
    if ret_rms.dtype.kind != "f" or ret_rms.shape != (3,):
        raise refuse(state_path, f"holds an array ret_rms of dtype {ret_rms.dtype} and shape {ret_rms.shape}, "
                                 "expected 3 numbers")
    check_finite({"ret_rms": ret_rms}, str(state_path), hint)
    if ret_rms[1] < 0 or ret_rms[2] <= 0:
        raise refuse(state_path, f"holds a reward normaliser with variance {ret_rms[1]} and count {ret_rms[2]}")
    expected_rng = torch.get_rng_state().numpy()
    if torch_rng.dtype != expected_rng.dtype or torch_rng.shape != expected_rng.shape:
        raise refuse(state_path, f"holds an array torch_rng of dtype {torch_rng.dtype} and shape {torch_rng.shape}, "
                                 f"expected {expected_rng.dtype} of shape {expected_rng.shape}")
    try:
        optimiser = torch.load(optimiser_path, weights_only=True)
        tensors = {f"state[{index}].{key}": value.detach().cpu().numpy()
                   for index, entry in optimiser["state"].items() for key, value in entry.items()
                   if isinstance(value, torch.Tensor)}
    except Exception as error:  # a missing, truncated or foreign file
        raise refuse(optimiser_path, f"is not a readable optimiser state ({type(error).__name__}: {error})") from error
    check_finite(tensors, str(optimiser_path), hint)
    try:
        model.set_parameters(str(path), exact_match=True, device="cpu")
    except Exception as error:
        raise refuse(path, f"is not a readable checkpoint of this model ({type(error).__name__}: {error})") from error
    check_finite(_parameters(model), str(path), hint)
    try:
        model.policy.optimizer.load_state_dict(optimiser)
    except Exception as error:
        raise refuse(optimiser_path, f"does not fit this model's optimiser ({type(error).__name__}: {error})") from error
    return _SavedState(generator, episodes, ret_rms, torch_rng)


def train(
    output_dir: str | Path,
    *,
    families: Sequence[str] = FAMILIES,
    n_arms: int = 5,
    horizon: int = 1000,
    timesteps: int = 10_000_000,
    algorithm: str = "ppo",
    policy: str = "pair",
    seed: int = 0,
    n_envs: int = 1024,
    n_steps: int = 50,
    batch_size: int = 12_800,
    n_epochs: int = 4,
    hidden: int = 32,
    gamma: float = 0.99,
    gae_lambda: float = 0.95,
    learning_rate: float = 1e-3,
    ent_coef: float = 0.0,
    eval_every: int = 5_000_000,
    eval_problems: int = 100,
    checkpoint_episodes: int = 1,
    resume: bool = True,
    progress: bool = True,
    command: str | None = None,
) -> Path:
    """Train a policy; return the path of the exported weights (``policy.npz``, ``policy="pair"``)
    or of the final SB3 model (``model.zip``, ``policy="mlp"``).

    Parameters
    ----------
    output_dir : path
        Receives ``config.json``, ``evaluations.csv``, ``checkpoint_<steps>.zip`` (+ ``.state.npz``),
        ``model.zip`` and ``policy.npz``.  With ``resume`` and a checkpoint of the same
        configuration there, training continues from the latest checkpoint (a damaged one, or
        one with non-finite values, raises ValueError: delete it or pass ``resume=False``).
    families, n_arms, horizon
        Problems (each episode draws one from a uniformly chosen family) and duels per episode.
    timesteps : int
        Total duels over all environments (rounded up to whole rollouts).
    algorithm : {"ppo", "a2c"}
    policy : {"pair", "mlp"}
        The permutation-equivariant pair network (exportable) or SB3's MLP (for comparison).
    seed : int
        Seeds torch, SB3 and the training problems; held-out problems use independent streams.
    n_envs, n_steps, batch_size, n_epochs, hidden, gamma, gae_lambda, learning_rate, ent_coef
        Algorithm settings (``n_steps`` must divide ``horizon``).
    eval_every, eval_problems
        Held-out evaluation interval (duels) and problems per family.
    checkpoint_episodes : int
        Checkpoint every this many episodes (of all environments together).
    progress : bool
        Show a tqdm progress bar.
    command : str, optional
        The command line recorded with the exported weights (default: ``sys.argv``).
    """
    import torch
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecNormalize
    from tqdm.auto import tqdm

    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    config = {
        "families": list(MixtureSampler(families, n_arms).families), "n_arms": check_integer("n_arms", n_arms, minimum=2),
        "horizon": check_integer("horizon", horizon, minimum=1), "timesteps": check_integer("timesteps", timesteps, minimum=1),
        "algorithm": algorithm, "policy": policy, "seed": check_integer("seed", seed, minimum=0),
        "n_envs": check_integer("n_envs", n_envs, minimum=1), "n_steps": check_integer("n_steps", n_steps, minimum=1),
        "batch_size": check_integer("batch_size", batch_size, minimum=2), "n_epochs": check_integer("n_epochs", n_epochs, minimum=1),
        "hidden": check_integer("hidden", hidden, minimum=1), "gamma": check_number("gamma", gamma, minimum=0.0, maximum=1.0),
        "gae_lambda": check_number("gae_lambda", gae_lambda, minimum=0.0, maximum=1.0),
        "learning_rate": check_number("learning_rate", learning_rate, minimum=0.0),
        "ent_coef": check_number("ent_coef", ent_coef, strict=False, minimum=0.0),
    }
    if horizon % n_steps:
        raise ValueError(f"n_steps ({n_steps}) must divide horizon ({horizon}) so checkpoints fall on episode boundaries")
    eval_every = check_integer("eval_every", eval_every, minimum=1)
    eval_problems = check_integer("eval_problems", eval_problems, minimum=1)
    checkpoint_episodes = check_integer("checkpoint_episodes", checkpoint_episodes, minimum=1)
    output = Path(output_dir)
    output.mkdir(parents=True, exist_ok=True)
    config_path = output / "config.json"
    if config_path.exists() and resume:
        previous = json.loads(config_path.read_text())
        if {k: v for k, v in previous.items() if k != "timesteps"} != {k: v for k, v in config.items() if k != "timesteps"}:
            raise ValueError(f"{output} holds a run with another configuration; use another output folder or start afresh "
                             "with --no-resume (resume=False from Python)")
    finished_path = output / "finished.json"
    if resume and finished_path.exists():
        finished = json.loads(finished_path.read_text())
        if finished.get("timesteps_trained", -1) >= config["timesteps"] and (output / finished["result"]).exists():
            # A finished run is left as it is: training again would go past its budget and
            # replace its policy.
            print(f"{output} finished its training ({finished['timesteps_trained']} duels for a budget of "
                  f"{config['timesteps']}); nothing to do (--no-resume trains again from scratch)")
            return output / finished["result"]
    finished_path.unlink(missing_ok=True)  # this run is not finished until it says so
    config_path.write_text(json.dumps(config, indent=1) + "\n")
    command = command if command is not None else shlex.join([Path(sys.executable).name, *sys.argv])

    torch.set_num_threads(1)  # small networks on shared cores: more threads are slower and nondeterministic
    torch.manual_seed(seed)
    adapter = make_training_env(config["families"], n_arms, horizon, n_envs)
    env = VecNormalize(adapter, norm_obs=False, norm_reward=True, gamma=gamma)
    model = _build_model(env, config)
    checkpoints = _checkpoints(output) if resume else []
    if checkpoints:
        steps, path = checkpoints[-1]
        saved = _read_checkpoint(model, path)
        model.num_timesteps = steps
        adapter.vector_env.reset(seed=0)  # build the native env's state; its generator is replaced next
        adapter.vector_env.np_random = saved.generator
        adapter.episodes_completed = saved.episodes_completed
        env.ret_rms.mean, env.ret_rms.var, env.ret_rms.count = (float(x) for x in saved.ret_rms)
        torch.set_rng_state(torch.from_numpy(saved.torch_rng))
        adapter._reset_seeds()  # drop the seed the model's constructor set: it would re-seed the restored generator
        model._last_obs = env.reset()  # the restored generator replays the checkpoint's episode
        model._last_episode_starts = np.ones(n_envs, dtype=bool)
        print(f"resuming {output} from {steps} duels")
    start_steps = model.num_timesteps
    evaluations_path = output / "evaluations.csv"

    def evaluate_now() -> None:
        row = {"timesteps": model.num_timesteps, "wall_time": round(time.perf_counter() - started, 1)}
        for index, family in enumerate(config["families"]):
            row[family] = round(held_out_regret(model, family, n_arms, horizon, eval_problems, _eval_seed(seed, index)), 2)
        new = not evaluations_path.exists()
        with evaluations_path.open("a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)
        tqdm.write("held-out regret at T=%d after %d duels: %s" % (
            horizon, model.num_timesteps, ", ".join(f"{f} {row[f]:.1f}" for f in config["families"])))

    class Progress(BaseCallback):
        def _on_training_start(self) -> None:
            # Training stops at the end of the rollout that reaches the budget: the bar's total
            # is that rollout's end, so it neither stops short nor overshoots.
            rollout = n_envs * n_steps
            total = start_steps + -(-(timesteps - start_steps) // rollout) * rollout
            self.bar = tqdm(total=total, initial=start_steps, unit="duel", unit_scale=True,
                            disable=not progress, smoothing=0.1)
            self.next_eval = (model.num_timesteps // eval_every + 1) * eval_every

        def _on_step(self) -> bool:
            self.bar.update(n_envs)
            return True

        def _on_rollout_end(self) -> None:
            if adapter.episode_step == 0 and adapter.episodes_completed and adapter.episodes_completed % checkpoint_episodes == 0:
                save_checkpoint(self.num_timesteps)
            if self.num_timesteps >= self.next_eval:
                evaluate_now()
                self.next_eval += eval_every

        def _on_training_end(self) -> None:
            self.bar.close()

    def save_checkpoint(steps: int) -> None:
        path = output / f"checkpoint_{steps}.zip"
        # A diverged run stops here, keeping its last good checkpoint, rather than saving a state
        # that every resume would refuse.
        check_finite(_parameters(model), f"refusing to write {path}",
                     f"training diverged by {steps} duels (the previous checkpoints are kept)")
        # Each file is replaced whole, and the state file comes last: a crash leaves no
        # half-written file, and a checkpoint counts only once its state file exists.
        with atomic_write(path) as handle:
            model.save(handle, exclude=["env", "_last_obs", "_last_episode_starts", "_last_original_obs", "ep_info_buffer",
                                        "ep_success_buffer"])
        with atomic_write(path.with_suffix(".optim.pt")) as handle:
            torch.save(model.policy.optimizer.state_dict(), handle)
        json_state = {"env_rng": adapter.episode_rng_state, "episodes_completed": adapter.episodes_completed}
        save_npz_atomically(
            path.with_suffix(".state.npz"), json=json.dumps(json_state),
            ret_rms=np.array([np.asarray(env.ret_rms.mean).item(), np.asarray(env.ret_rms.var).item(), env.ret_rms.count]),
            torch_rng=torch.get_rng_state().numpy())
        for old_steps, old in _checkpoints(output)[:-2]:  # keep the two newest
            for suffix in (".zip", ".state.npz", ".optim.pt"):
                old.with_suffix(suffix).unlink(missing_ok=True)

    started = time.perf_counter()
    remaining = timesteps - model.num_timesteps
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=Progress(), reset_num_timesteps=not checkpoints)
    evaluate_now()
    with atomic_write(output / "model.zip") as handle:
        model.save(handle, exclude=["env"])

    def mark_finished(result: Path) -> Path:
        text = json.dumps({"timesteps_trained": int(model.num_timesteps), "result": result.name})
        with atomic_write(finished_path) as handle:
            handle.write(text.encode())
        return result

    if policy != "pair":
        return mark_finished(output / "model.zip")
    from dueling_gym.experiments.pair_policy import export_policy_weights

    weights = export_policy_weights(model.policy)
    metadata = {"config": config, "command": command, "timesteps_trained": int(model.num_timesteps),
                "observation": "dueling_gym.observations (pair features v1)"}
    target = output / "policy.npz"
    save_policy_atomically(target, weights, metadata=np.array(json.dumps(metadata)))
    return mark_finished(target)


def build_parser(parser: argparse.ArgumentParser | None = None, *, algorithm: str | None = None) -> argparse.ArgumentParser:
    """The options of :func:`train` (shared with ``dueling-gym train ppo|a2c``; with ``algorithm``
    given, the parser has no ``--algorithm`` option and uses that one)."""
    parser = parser or argparse.ArgumentParser(description="Train a learned dueling policy (PPO on batched bandit runs).")
    parser.add_argument("--out", required=True, help="output directory (resumes from its checkpoints)")
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated generator families")
    parser.add_argument("--n-arms", type=int, default=5, help='number of arms K of the training problems')
    parser.add_argument("--horizon", type=int, default=1000, help='duels per episode (one run on one problem)')
    parser.add_argument("--timesteps", type=int, default=10_000_000, help='total duels of training (the budget)')
    if algorithm is None:
        parser.add_argument("--algorithm", choices=ALGORITHMS, default="ppo", help='reinforcement-learning algorithm')
    else:
        parser.set_defaults(algorithm=algorithm)
    parser.add_argument("--policy", choices=POLICIES, default="pair", help='policy network (the pair network exports to the learned agent)')
    parser.add_argument("--seed", type=int, default=0, help='seed of every random draw of the training')
    parser.add_argument("--n-envs", type=int, default=1024, help='environments stepped together (one fresh problem per episode)')
    parser.add_argument("--n-steps", type=int, default=50, help='steps per environment between updates')
    parser.add_argument("--batch-size", type=int, default=12_800, help='minibatch size of an update')
    parser.add_argument("--n-epochs", type=int, default=4, help='passes over the collected steps per update')
    parser.add_argument("--hidden", type=int, default=32, help='width of the policy network')
    parser.add_argument("--gamma", type=float, default=0.99, help='discount factor')
    parser.add_argument("--gae-lambda", type=float, default=0.95, help='GAE lambda')
    parser.add_argument("--learning-rate", type=float, default=1e-3, help='optimiser step size')
    parser.add_argument("--ent-coef", type=float, default=0.0, help='entropy bonus coefficient')
    parser.add_argument("--eval-every", type=int, default=5_000_000, help='duels of training between held-out validations')
    parser.add_argument("--eval-problems", type=int, default=100, help='held-out validation problems per family')
    parser.add_argument("--no-resume", action="store_true", help="start afresh instead of resuming from the folder's checkpoints")
    parser.add_argument("--no-progress", action="store_true", help='no progress bar')
    return parser


def run_from_arguments(arguments: argparse.Namespace, command: str) -> Path:
    """Call :func:`train` with parsed :func:`build_parser` options."""
    return train(
        arguments.out, families=[name for name in arguments.families.split(",") if name], n_arms=arguments.n_arms,
        horizon=arguments.horizon, timesteps=arguments.timesteps, algorithm=arguments.algorithm, policy=arguments.policy,
        seed=arguments.seed, n_envs=arguments.n_envs, n_steps=arguments.n_steps, batch_size=arguments.batch_size,
        n_epochs=arguments.n_epochs, hidden=arguments.hidden, gamma=arguments.gamma, gae_lambda=arguments.gae_lambda,
        learning_rate=arguments.learning_rate, ent_coef=arguments.ent_coef, eval_every=arguments.eval_every,
        eval_problems=arguments.eval_problems, resume=not arguments.no_resume, progress=not arguments.no_progress,
        command=command,
    )


def main(argv: Sequence[str] | None = None) -> Path:
    """Command-line entry point (``python -m dueling_gym.experiments.training --help``)."""
    arguments = build_parser().parse_args(argv)
    command = shlex.join(["python", "-m", "dueling_gym.experiments.training", *(sys.argv[1:] if argv is None else argv)])
    path = run_from_arguments(arguments, command)
    print(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()
