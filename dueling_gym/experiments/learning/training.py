"""Train learned dueling policies with Stable-Baselines3 on thousands of batched bandit runs.

:func:`train` runs PPO (Schulman, Wolski, Dhariwal, Radford and Klimov, *Proximal Policy
Optimization Algorithms*, arXiv:1707.06347, 2017, Algorithm 1) or A2C (Mnih et al., *Asynchronous
Methods for Deep Reinforcement Learning*, ICML 2016, in its synchronous form) of Stable-Baselines3
on the native NumPy vector env through :class:`~dueling_gym.wrappers.sb3_vec_env.SB3DuelVecEnv`,
with a fresh problem from a mixture of generator families at every episode; it shows a progress
bar, evaluates the policy on held-out problems of each family at regular intervals
(``evaluations.csv``), writes resumable checkpoints at episode boundaries and finally exports the
actor's weights to ``policy.npz``, which the ``learned`` agent evaluates with NumPy alone.
:func:`~dueling_gym.experiments.studies.learned_evaluation.evaluate` compares agents on held-out problems.

Reproducibility: the same arguments and seed give the same weights (torch runs on one thread;
the seed drives torch, SB3 and the native env's generator).  Checkpoints store the weights,
the optimiser, the reward normaliser and the generators' states, and a resumed run continues
from the latest one; it is not yet bit-identical to an uninterrupted run.  Every file is
written atomically (a crash leaves the previous file whole), and a checkpoint that is damaged or
holds non-finite values is refused on resume rather than trained on.  A run that has trained its
budget is left as it is (``finished.json``): re-running its command does nothing.

    dueling-gym train ppo --out results/learned-k5 --n-arms 5 --timesteps 20000000

Needs the ``rl`` extra (stable-baselines3, torch) and ``tqdm``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import numpy as np

from dueling_gym.atomic_files import atomic_write
from dueling_gym.experiments.learning import FAMILIES, REGRET_NOTION
from dueling_gym.experiments.learning import trainer as base
from dueling_gym.experiments.learning.config import TrainerConfig, setting
from dueling_gym.experiments.learning.problems import MixtureSampler, check_families
from dueling_gym.experiments.learning.npz_files import check_finite, load_npz, save_npz_atomically
from dueling_gym.validation import check_integer, check_number

__all__ = ["FAMILIES", "MixtureSampler", "PPOConfig", "StableBaselinesTrainer", "make_training_env", "held_out_regret",
           "train"]

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
    from stable_baselines3.common.logger import Logger

    from dueling_gym.experiments.learning.pair_policy import PairPolicy

    if config["policy"] == "pair":
        policy, policy_kwargs = PairPolicy, {"n_arms": config["n_arms"], "hidden": config["hidden"]}
    else:
        policy, policy_kwargs = "MlpPolicy", {"net_arch": [config["hidden"] * 4, config["hidden"] * 4]}
    common = dict(policy_kwargs=policy_kwargs, seed=config["seed"], device="cpu", verbose=0,
                  gamma=config["gamma"], learning_rate=config["learning_rate"], ent_coef=config["ent_coef"],
                  n_steps=config["n_steps"], gae_lambda=config["gae_lambda"])
    if config["algorithm"] == "ppo":
        model = PPO(policy, env, batch_size=config["batch_size"], n_epochs=config["n_epochs"], **common)
    else:
        model = A2C(policy, env, **common)
    # The trainer writes its own log in its output folder; without a logger of its own, every
    # ``learn`` call would leave an empty SB3-<date> folder in the system's temporary directory.
    model.set_logger(Logger(folder=None, output_formats=[]))
    return model


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


@dataclass(frozen=True, kw_only=True)
class PPOConfig(TrainerConfig):
    """The settings of :func:`train` (each field's help is its ``--help`` line).

    Each episode draws a problem of ``n_arms`` arms from a uniformly chosen family and lasts
    ``horizon`` duels; ``n_steps`` must divide ``horizon`` so that checkpoints fall on episode
    boundaries.  ``policy="pair"`` is the permutation-equivariant pair network (exported to
    ``policy.npz`` for the ``learned`` agent), ``"mlp"`` SB3's MLP (for comparison; its result
    is ``model.zip``).  ``seed`` seeds torch, SB3 and the training problems; the held-out
    problems use independent streams.  ``eval_every``, ``eval_problems`` and
    ``checkpoint_episodes`` are not recorded in ``config.json`` (they change what is logged and
    kept, not the training), and ``timesteps``, the budget, is recorded but a resumed run may
    raise it.
    """

    families: tuple[str, ...] = setting(FAMILIES, help="comma-separated generator families")
    n_arms: int = setting(5, help="number of arms K of the training problems")
    horizon: int = setting(1000, help="duels per episode (one run on one problem)")
    timesteps: int = setting(10_000_000, help="total duels of training (the budget)")
    algorithm: str = setting("ppo", choices=ALGORITHMS, command_line=False, help="reinforcement-learning algorithm")
    policy: str = setting("pair", choices=POLICIES,
                          help="policy network (the pair network exports to the learned agent)")
    seed: int = setting(0, help="seed of every random draw of the training")
    n_envs: int = setting(1024, help="environments stepped together (one fresh problem per episode)")
    n_steps: int = setting(50, help="steps per environment between updates")
    batch_size: int = setting(12_800, help="minibatch size of an update")
    n_epochs: int = setting(4, help="passes over the collected steps per update")
    hidden: int = setting(32, help="width of the policy network")
    gamma: float = setting(0.99, help="discount factor")
    gae_lambda: float = setting(0.95, help="GAE lambda")
    learning_rate: float = setting(1e-3, help="optimiser step size")
    ent_coef: float = setting(0.0, help="entropy bonus coefficient")
    eval_every: int = setting(5_000_000, help="duels of training between held-out validations", recorded=False)
    eval_problems: int = setting(100, help="held-out validation problems per family", recorded=False)
    checkpoint_episodes: int = setting(1, help="episodes (of all environments together) between checkpoints",
                                       recorded=False)

    def __post_init__(self) -> None:
        self._check_choice("algorithm")
        self._check_choice("policy")
        self._set("families", check_families(self.families))
        self._set("n_arms", check_integer("n_arms", self.n_arms, minimum=2))
        self._set("batch_size", check_integer("batch_size", self.batch_size, minimum=2))
        self._set("seed", check_integer("seed", self.seed, minimum=0))
        for name in ("horizon", "timesteps", "n_envs", "n_steps", "n_epochs", "hidden", "eval_every", "eval_problems",
                     "checkpoint_episodes"):
            self._set(name, check_integer(name, getattr(self, name), minimum=1))
        for name in ("gamma", "gae_lambda"):
            self._set(name, check_number(name, getattr(self, name), minimum=0.0, maximum=1.0))
        self._set("learning_rate", check_number("learning_rate", self.learning_rate, minimum=0.0))
        self._set("ent_coef", check_number("ent_coef", self.ent_coef, strict=False, minimum=0.0))
        if self.horizon % self.n_steps:
            raise ValueError(f"n_steps ({self.n_steps}) must divide horizon ({self.horizon}) so checkpoints "
                             "fall on episode boundaries")


class StableBaselinesTrainer(base.Trainer):
    """PPO or A2C of Stable-Baselines3 on the pair network or an MLP (see :func:`train`).

    The budget is counted in duels; SB3 runs its own rollout loop, so :meth:`learn` is one call
    of ``model.learn`` whose callback checkpoints at episode boundaries and validates.
    """

    algorithm = "ppo"
    finished_key = "timesteps_trained"
    budget_unit = "duel"
    budget_key = "timesteps"

    config_class = PPOConfig

    def configure(self) -> dict[str, Any]:
        s: PPOConfig = self.settings
        self.eval_every, self.eval_problems = s.eval_every, s.eval_problems
        self.checkpoint_episodes = s.checkpoint_episodes
        return s.recorded()

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


def train(output_dir: str | Path, config: PPOConfig | None = None, *, resume: bool = True, progress: bool = True,
          command: str | None = None, **settings: Any) -> Path:
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
    config : PPOConfig, optional
        The settings; or give them as keyword arguments (``**settings``, the fields of
        :class:`PPOConfig`), not both.
    resume : bool
        Continue from the folder's latest checkpoint (False: start afresh).
    progress : bool
        Show a tqdm progress bar.
    command : str, optional
        The command line recorded with the exported weights (default: ``sys.argv``).
    **settings
        The fields of :class:`PPOConfig` (``timesteps=10_000_000``, ``algorithm="ppo"``, ...).

    Raises
    ------
    TypeError, ValueError
        A setting of the wrong type or out of range (the message names it).
    """
    config = base.make_config(PPOConfig, config, settings)
    return StableBaselinesTrainer(output_dir, config, resume=resume, progress=progress, command=command).run()


#: ``dueling-gym train ppo`` and ``dueling-gym train a2c``.
TRAIN_COMMANDS = tuple(
    base.TrainCommand(name, f"{name.upper()} (Stable-Baselines3; the rl extra)", StableBaselinesTrainer,
                      requires=("stable_baselines3",), fixed={"algorithm": name})
    for name in ALGORITHMS
)
