"""Train learned dueling policies with Stable-Baselines3 on thousands of batched bandit runs.

:func:`train` runs PPO (Schulman, Wolski, Dhariwal, Radford and Klimov, *Proximal Policy
Optimization Algorithms*, arXiv:1707.06347, 2017, Algorithm 1) or A2C (Mnih et al., *Asynchronous
Methods for Deep Reinforcement Learning*, ICML 2016, in its synchronous form) of Stable-Baselines3
on the native NumPy vector env through :class:`~dueling_gym.wrappers.sb3_vec_env.SB3DuelVecEnv`,
with a fresh problem from a mixture of generator families at every episode; it shows a progress
bar, evaluates the policy on held-out problems of each family at regular intervals
(``evaluations.csv``), writes resumable checkpoints at episode boundaries and finally exports the
actor's weights to ``policy.npz``, which the ``learned`` agent evaluates with NumPy alone.
:func:`~dueling_gym.experiments.learned_evaluation.evaluate` compares agents on held-out problems.

Reproducibility: the same arguments and seed give the same weights (torch runs on one thread;
the seed drives torch, SB3 and the native env's generator).  Checkpoints store the weights,
the optimiser, the reward normaliser and the generators' states, and a resumed run continues
from the latest one; it is not yet bit-identical to an uninterrupted run.  Every file is
written atomically (a crash leaves the previous file whole), and a checkpoint that is damaged or
holds non-finite values is refused on resume rather than trained on.  A run that has trained its
budget is left as it is (``finished.json``): re-running its command does nothing.

    python -m dueling_gym.experiments.learning.training --out results/learned-k5 --n-arms 5 --timesteps 20000000

Needs the ``rl`` extra (stable-baselines3, torch) and ``tqdm``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import numpy as np

from dueling_gym.atomic_files import atomic_write
from dueling_gym.experiments.learning import FAMILIES, REGRET_NOTION
from dueling_gym.experiments.learning import trainer as base
from dueling_gym.experiments.learning.problems import MixtureSampler
from dueling_gym.experiments.npz_files import check_finite, load_npz, save_npz_atomically
from dueling_gym.validation import check_integer, check_number

__all__ = ["FAMILIES", "MixtureSampler", "StableBaselinesTrainer", "make_training_env", "held_out_regret", "train",
           "build_parser", "run_from_arguments", "main"]

ALGORITHMS = ("ppo", "a2c")
POLICIES = ("pair", "mlp")
_EVAL_SALT = 0xE7A1


def make_training_env(families: Sequence[str], n_arms: int, horizon: int, n_envs: int, *, actions: str = "flat") -> Any:
    """An :class:`~dueling_gym.wrappers.SB3DuelVecEnv` over ``n_envs`` Copeland duels whose problems come from ``families``."""
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
    return float(np.mean([info["cumulative_regret"][REGRET_NOTION] for info in infos]))


def _eval_seed(seed: int, family_index: int) -> int:
    return int(np.random.SeedSequence([seed, _EVAL_SALT, family_index]).generate_state(1)[0])


def _build_model(env: Any, config: dict[str, Any]) -> Any:
    from stable_baselines3 import A2C, PPO

    from dueling_gym.experiments.learning.pair_policy import PairPolicy

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


def _read_state_file(state_path: Path, hint: str) -> _SavedState:
    """The ``.state.npz`` part of a checkpoint, every array checked."""
    import torch

    def refuse(problem: str) -> ValueError:
        return ValueError(f"{state_path} {problem}; {hint}")

    state = load_npz(state_path, ("json", "ret_rms", "torch_rng"), hint=hint)
    try:
        if state["json"].dtype.kind != "U" or state["json"].shape != ():
            raise TypeError(f"dtype {state['json'].dtype} and shape {state['json'].shape}, expected one JSON string")
        json_state = json.loads(str(state["json"]))
        generator = np.random.Generator(np.random.PCG64())
        generator.bit_generator.state = json_state["env_rng"]
        episodes = json_state["episodes_completed"]
    except Exception as error:  # not JSON, not a dict, no such key, not a generator state ...
        raise refuse(f"holds no valid array json ({type(error).__name__}: {error})") from error
    if not isinstance(episodes, int) or isinstance(episodes, bool) or episodes < 0:
        raise refuse(f"counts {episodes!r} completed episodes, expected an integer >= 0")
    ret_rms, torch_rng = state["ret_rms"], state["torch_rng"]
    if ret_rms.dtype.kind != "f" or ret_rms.shape != (3,):
        raise refuse(f"holds an array ret_rms of dtype {ret_rms.dtype} and shape {ret_rms.shape}, expected 3 numbers")
    check_finite({"ret_rms": ret_rms}, str(state_path), hint)
    if ret_rms[1] < 0 or ret_rms[2] <= 0:
        raise refuse(f"holds a reward normaliser with variance {ret_rms[1]} and count {ret_rms[2]}")
    expected_rng = torch.get_rng_state().numpy()
    if torch_rng.dtype != expected_rng.dtype or torch_rng.shape != expected_rng.shape:
        raise refuse(f"holds an array torch_rng of dtype {torch_rng.dtype} and shape {torch_rng.shape}, "
                     f"expected {expected_rng.dtype} of shape {expected_rng.shape}")
    return _SavedState(generator, episodes, ret_rms, torch_rng)


def _read_checkpoint(model: Any, path: Path) -> _SavedState:
    """Load the parameters and the optimiser of checkpoint ``path`` (``checkpoint_<steps>.zip``)
    into ``model``, and read the rest of its state, checking every file: a damaged checkpoint or
    one with non-finite values raises one ValueError naming the file, instead of a crash deep in
    a library or a run that trains on NaN."""
    import torch

    hint = (f"the run cannot resume from it: delete {path.with_suffix('.*').name} to resume from the checkpoint "
            f"before it, or start afresh by re-running the command with {base.START_AFRESH}")

    def refuse(file: Path, problem: str) -> ValueError:
        return ValueError(f"{file} {problem}; {hint}")

    optimiser_path = path.with_suffix(".optim.pt")
    saved = _read_state_file(path.with_suffix(".state.npz"), hint)
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
    return saved


def _progress_callback(trainer: StableBaselinesTrainer) -> Any:
    """The SB3 callback that shows the progress bar and checkpoints and validates at rollout ends."""
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm.auto import tqdm

    c = trainer.config

    class Progress(BaseCallback):
        def _on_training_start(self) -> None:
            # Training stops at the end of the rollout that reaches the budget: the bar's total
            # is that rollout's end, so it neither stops short nor overshoots.
            start, rollout = trainer.start_steps, c["n_envs"] * c["n_steps"]
            total = start + -(-(c["timesteps"] - start) // rollout) * rollout
            self.bar = tqdm(total=total, initial=start, unit="duel", unit_scale=True, disable=not trainer.progress,
                            smoothing=0.1)
            self.next_eval = (trainer.model.num_timesteps // trainer.eval_every + 1) * trainer.eval_every

        def _on_step(self) -> bool:
            self.bar.update(c["n_envs"])
            return True

        def _on_rollout_end(self) -> None:
            # Validate before checkpointing: a checkpoint then always follows the evaluation of its
            # own step, so a run resumed from it neither skips that evaluation nor logs it twice.
            # (Evaluating touches no training state: it forks torch's generator and uses its own env.)
            if self.num_timesteps >= self.next_eval:
                trainer.validate()
                self.next_eval += trainer.eval_every
            adapter = trainer.adapter
            if (adapter.episode_step == 0 and adapter.episodes_completed
                    and adapter.episodes_completed % trainer.checkpoint_episodes == 0):
                trainer.completed = self.num_timesteps
                trainer.save_checkpoint()

        def _on_training_end(self) -> None:
            self.bar.close()

    return Progress()


class StableBaselinesTrainer(base.Trainer):
    """PPO or A2C of Stable-Baselines3 on the pair network or an MLP (see :func:`train`).

    The budget is counted in duels; SB3 runs its own rollout loop, so :meth:`learn` is one call
    of ``model.learn`` whose callback checkpoints at episode boundaries and validates.
    """

    algorithm = "ppo"
    finished_key = "timesteps_trained"
    budget_unit = "duel"
    budget_key = "timesteps"

    def configure(self) -> dict[str, Any]:
        s = self.settings
        if s["algorithm"] not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {s['algorithm']!r}")
        if s["policy"] not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {s['policy']!r}")
        config = {
            "families": list(MixtureSampler(s["families"], s["n_arms"]).families),
            "n_arms": check_integer("n_arms", s["n_arms"], minimum=2),
            "horizon": check_integer("horizon", s["horizon"], minimum=1),
            "timesteps": check_integer("timesteps", s["timesteps"], minimum=1),
            "algorithm": s["algorithm"], "policy": s["policy"], "seed": self.seed,
            "n_envs": check_integer("n_envs", s["n_envs"], minimum=1), "n_steps": check_integer("n_steps", s["n_steps"], minimum=1),
            "batch_size": check_integer("batch_size", s["batch_size"], minimum=2),
            "n_epochs": check_integer("n_epochs", s["n_epochs"], minimum=1),
            "hidden": check_integer("hidden", s["hidden"], minimum=1),
            "gamma": check_number("gamma", s["gamma"], minimum=0.0, maximum=1.0),
            "gae_lambda": check_number("gae_lambda", s["gae_lambda"], minimum=0.0, maximum=1.0),
            "learning_rate": check_number("learning_rate", s["learning_rate"], minimum=0.0),
            "ent_coef": check_number("ent_coef", s["ent_coef"], strict=False, minimum=0.0),
        }
        if config["horizon"] % config["n_steps"]:
            raise ValueError(f"n_steps ({config['n_steps']}) must divide horizon ({config['horizon']}) so checkpoints "
                             "fall on episode boundaries")
        self.eval_every = check_integer("eval_every", s["eval_every"], minimum=1)
        self.eval_problems = check_integer("eval_problems", s["eval_problems"], minimum=1)
        self.checkpoint_episodes = check_integer("checkpoint_episodes", s["checkpoint_episodes"], minimum=1)
        return config

    @property
    def budget(self) -> int:
        return self.config["timesteps"]

    def progress_text(self) -> str:
        return f"{self.completed} duels"

    def setup(self) -> None:
        from stable_baselines3.common.vec_env import VecNormalize

        c = self.config
        self.seed_torch()
        self.adapter = make_training_env(c["families"], c["n_arms"], c["horizon"], c["n_envs"])
        self.env = VecNormalize(self.adapter, norm_obs=False, norm_reward=True, gamma=c["gamma"])
        self.model = _build_model(self.env, c)
        self.resumed = False

    def load_checkpoint(self) -> bool:
        import torch

        checkpoints = _checkpoints(self.output)
        if not checkpoints:
            return False
        steps, path = checkpoints[-1]
        saved = _read_checkpoint(self.model, path)
        self.model.num_timesteps = self.completed = steps
        vector_env, env = self.adapter.vector_env, self.env
        vector_env.reset(seed=0)  # build the native env's state; its generator is replaced next
        vector_env.np_random = saved.generator
        self.adapter.episodes_completed = saved.episodes_completed
        env.ret_rms.mean, env.ret_rms.var, env.ret_rms.count = (float(x) for x in saved.ret_rms)
        torch.set_rng_state(torch.from_numpy(saved.torch_rng))
        self.adapter._reset_seeds()  # drop the seed the model's constructor set: it would re-seed the restored generator
        self.model._last_obs = env.reset()  # the restored generator replays the checkpoint's episode
        self.model._last_episode_starts = np.ones(self.config["n_envs"], dtype=bool)
        self.resumed = True
        return True

    def learn(self) -> None:
        import time

        self.start_steps = self.model.num_timesteps
        self.started = time.perf_counter()
        remaining = self.config["timesteps"] - self.model.num_timesteps
        if remaining > 0:
            self.model.learn(total_timesteps=remaining, callback=_progress_callback(self),
                             reset_num_timesteps=not self.resumed)
        self.completed = int(self.model.num_timesteps)
        last = self.last_logged()
        if last is None or last < self.completed:  # the last rollout's evaluation may be this one
            self.validate()

    def update(self) -> None:
        """One rollout and its update; Stable-Baselines3's ``learn`` runs them (see :meth:`learn`)."""
        raise NotImplementedError("Stable-Baselines3 runs the updates itself: call learn()")

    def validate(self) -> None:
        c, model = self.config, self.model
        row: dict[str, Any] = {"timesteps": model.num_timesteps, "wall_time": self.elapsed()}
        for index, family in enumerate(c["families"]):
            row[family] = round(held_out_regret(model, family, c["n_arms"], c["horizon"], self.eval_problems,
                                                _eval_seed(self.seed, index)), 2)
        self.log_validation(row, "held-out regret at T=%d after %d duels: %s" % (
            c["horizon"], model.num_timesteps, ", ".join(f"{f} {row[f]:.1f}" for f in c["families"])))

    def save_checkpoint(self) -> None:
        import torch

        model, env, adapter = self.model, self.env, self.adapter
        path = self.output / f"checkpoint_{self.completed}.zip"
        self.refuse_non_finite(path, _parameters(model), "the previous checkpoints are kept")
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
        for _, old in _checkpoints(self.output)[:-2]:  # keep the two newest
            for suffix in (".zip", ".state.npz", ".optim.pt"):
                old.with_suffix(suffix).unlink(missing_ok=True)

    def export_metadata(self) -> dict[str, Any]:
        return {"timesteps_trained": int(self.model.num_timesteps)}

    def export(self) -> Path:
        with atomic_write(self.output / "model.zip") as handle:
            self.model.save(handle, exclude=["env"])
        if self.config["policy"] != "pair":
            return self.output / "model.zip"
        from dueling_gym.experiments.learning.pair_policy import export_policy_weights

        return self.export_policy(export_policy_weights(self.model.policy))


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
        Receives ``config.json``, ``evaluations.csv``, ``checkpoint_<steps>.zip`` (+ ``.state.npz``,
        ``.optim.pt``), ``model.zip``, ``policy.npz`` and ``finished.json``.  With ``resume`` and a
        checkpoint of the same configuration there, training continues from the latest checkpoint
        (a damaged one, or one with non-finite values, raises ValueError: delete it or pass
        ``resume=False``); a run that finished its budget is left as it is.
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
    resume : bool
        Continue from the folder's latest checkpoint (False: start afresh).
    progress : bool
        Show a tqdm progress bar.
    command : str, optional
        The command line recorded with the exported weights (default: ``sys.argv``).
    """
    settings = dict(families=families, n_arms=n_arms, horizon=horizon, timesteps=timesteps, algorithm=algorithm,
                    policy=policy, n_envs=n_envs, n_steps=n_steps, batch_size=batch_size, n_epochs=n_epochs,
                    hidden=hidden, gamma=gamma, gae_lambda=gae_lambda, learning_rate=learning_rate, ent_coef=ent_coef,
                    eval_every=eval_every, eval_problems=eval_problems, checkpoint_episodes=checkpoint_episodes)
    return StableBaselinesTrainer(output_dir, settings, seed=seed, resume=resume, progress=progress,
                                  command=command).run()


_ALGORITHM = base.Option("--algorithm", "reinforcement-learning algorithm", "ppo", choices=ALGORITHMS)
#: The command-line options of :func:`train`, in ``--help`` order (``--algorithm`` after ``--timesteps``).
OPTIONS = (
    base.Option("--out", "output directory (resumes from its checkpoints)", required=True, keyword=""),
    base.families_option(FAMILIES),
    base.Option("--n-arms", "number of arms K of the training problems", 5, int),
    base.Option("--horizon", "duels per episode (one run on one problem)", 1000, int),
    base.Option("--timesteps", "total duels of training (the budget)", 10_000_000, int),
    _ALGORITHM,
    base.Option("--policy", "policy network (the pair network exports to the learned agent)", "pair", choices=POLICIES),
    base.SEED,
    base.Option("--n-envs", "environments stepped together (one fresh problem per episode)", 1024, int),
    base.Option("--n-steps", "steps per environment between updates", 50, int),
    base.Option("--batch-size", "minibatch size of an update", 12_800, int),
    base.Option("--n-epochs", "passes over the collected steps per update", 4, int),
    base.Option("--hidden", "width of the policy network", 32, int),
    base.Option("--gamma", "discount factor", 0.99, float),
    base.Option("--gae-lambda", "GAE lambda", 0.95, float),
    base.Option("--learning-rate", "optimiser step size", 1e-3, float),
    base.Option("--ent-coef", "entropy bonus coefficient", 0.0, float),
    base.Option("--eval-every", "duels of training between held-out validations", 5_000_000, int),
    base.Option("--eval-problems", "held-out validation problems per family", 100, int),
    base.Option("--no-resume", "start afresh instead of resuming from the folder's checkpoints", switch=True,
                keyword="resume", convert=base.NO_RESUME.convert),
    base.NO_PROGRESS,
)


#: ``dueling-gym train ppo`` and ``dueling-gym train a2c``.
TRAIN_COMMANDS = tuple(
    base.TrainCommand(name, f"{name.upper()} (Stable-Baselines3; the rl extra)", families=base.families_of_option,
                      requires=("stable_baselines3",))
    for name in ("ppo", "a2c")
)


def build_parser(parser: argparse.ArgumentParser | None = None, *, algorithm: str | None = None) -> argparse.ArgumentParser:
    """The options of :func:`train` (shared with ``dueling-gym train ppo|a2c``; with ``algorithm``
    given, the parser has no ``--algorithm`` option and uses that one)."""
    options = OPTIONS if algorithm is None else tuple(option for option in OPTIONS if option is not _ALGORITHM)
    parser = base.build_parser(options, parser,
                               description="Train a learned dueling policy (PPO on batched bandit runs).")
    if algorithm is not None:
        parser.set_defaults(algorithm=algorithm)
    return parser


def run_from_arguments(arguments: argparse.Namespace, command: str) -> Path:
    """Call :func:`train` with parsed :func:`build_parser` options."""
    return base.run_from_arguments(train, OPTIONS, arguments, command)


def main(argv: Sequence[str] | None = None) -> Path:
    """Command-line entry point (``python -m dueling_gym.experiments.learning.training --help``)."""
    return base.command_line_main(build_parser(), run_from_arguments, "dueling_gym.experiments.learning.training", argv)


if __name__ == "__main__":
    main()
