"""A native NumPy-batched dueling vector env as a Stable-Baselines3 ``VecEnv``.

Stable-Baselines3 refuses Gymnasium ``VectorEnv`` objects and wraps single environments in
``DummyVecEnv`` instead, one Python ``step`` per sub-environment: with thousands of
sub-environments that costs far more than the duels.  :class:`SB3DuelVecEnv` drives one
:class:`~dueling_gym.envs.vector.DuelingBanditVectorEnv` (or ``CopelandDuelVectorEnv``) and
speaks SB3's protocol, so PPO and A2C collect rollouts from thousands of bandit runs with a
handful of NumPy operations per step::

    import gymnasium as gym
    from stable_baselines3 import PPO
    from dueling_gym import ProblemSampler
    from dueling_gym.wrappers.sb3_vec_env import SB3DuelVecEnv

    native = gym.make_vec("CopelandDuel-v0", num_envs=1024, vectorization_mode="vector_entry_point",
                          problem_sampler=ProblemSampler("no_condorcet_winner", n_arms=5),
                          max_episode_steps=1000)
    model = PPO("MlpPolicy", SB3DuelVecEnv(native), seed=0).learn(1_000_000)

Observation: the pair-feature encoding of the run's win counts
(:func:`dueling_gym.observations.encode_wins`), which the ``learned`` agent rebuilds from its
own duels.  Actions: ``Discrete(K^2)`` (``first * K + second``, the default) or
``MultiDiscrete([K, K])``.

Episodes and autoreset
----------------------
The native env resets a finished sub-environment on its *next* step (Gymnasium's
``NEXT_STEP`` autoreset), ignoring that step's action; SB3 expects the reset observation in
the *same* step and the final one in ``infos[k]["terminal_observation"]``.  Every bandit run
has the same horizon and all start together at :meth:`reset`, so all sub-environments finish
on the same step; the adapter then reads the final observations, resets the native env
(which draws fresh problems from its own generator, continuing its stream) and returns the
first observations of the new runs.  No duel is wasted and every sub-environment sees exactly
``max_episode_steps`` duels per episode.  Runs end by truncation (the horizon is a time limit,
not a terminal state), so ``infos[k]["TimeLimit.truncated"]`` is True and SB3 bootstraps the
value of the final observation.  Each final info also carries ``"episode"`` (``r``: return,
``l``: length, ``t``: seconds since the adapter was built -- SB3's ``Monitor`` keys, which its
loggers read) and ``"cumulative_regret"`` (every regret notion at the end of the run).

Seeding: ``seed(s)`` (what SB3's ``set_random_seed`` and ``PPO(seed=s)`` call) makes the next
:meth:`reset` reset the native env with ``seed=s``; everything random -- problems and duel
outcomes -- then comes from the native env's generator, so a seeded training run is
reproducible.

The ``rl`` extra (``pip install "dueling-gym[rl]"``) provides Stable-Baselines3; it is imported
only when the adapter is first used.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from dueling_gym.observations import encode_wins, pair_feature_space
from dueling_gym.validation import check_integer

__all__ = ["SB3DuelVecEnv", "ACTION_ENCODINGS"]

#: How the adapter's actions name a duel.
ACTION_ENCODINGS = ("flat", "pair")


def _vec_env_base() -> type:
    try:
        from stable_baselines3.common.vec_env import VecEnv
    except ImportError as error:  # the rl extra is optional
        raise ImportError(
            "SB3DuelVecEnv needs stable-baselines3, which is not installed; install the 'rl' extra: "
            "pip install torch==2.13.0 && pip install 'dueling-gym[rl]'"
        ) from error
    return VecEnv


def _check_native(vector_env: Any) -> tuple[int, int, int]:
    """Validate the wrapped env; return ``(num_envs, n_arms, horizon)``."""
    n_arms = getattr(vector_env, "n_arms", None)
    num_envs = getattr(vector_env, "num_envs", None)
    action_space = getattr(vector_env, "single_action_space", None)
    if n_arms is None or num_envs is None or not isinstance(action_space, spaces.MultiDiscrete):
        raise TypeError(
            "vector_env must be a native dueling vector env (DuelingBanditVectorEnv or CopelandDuelVectorEnv, "
            f"e.g. gym.make_vec(..., vectorization_mode='vector_entry_point')), got {type(vector_env).__name__}"
        )
    if action_space.shape != (2,) or not np.all(action_space.nvec == n_arms):
        raise TypeError(f"vector_env's actions must be duels MultiDiscrete([{n_arms}, {n_arms}]), got {action_space}")
    if vector_env.metadata.get("autoreset_mode") != AutoresetMode.NEXT_STEP:
        raise ValueError("vector_env must use NEXT_STEP autoreset (the native dueling vector envs do)")
    horizon = getattr(vector_env, "max_episode_steps", None)
    if horizon is None:
        raise ValueError("vector_env needs a horizon: build it with max_episode_steps=T (one episode = one bandit run)")
    return int(num_envs), int(n_arms), check_integer("max_episode_steps", horizon, minimum=1)


class _Adapter:
    """The implementation of :class:`SB3DuelVecEnv`; the class itself also derives from SB3's
    ``VecEnv``, which is only imported when the adapter is first used."""

    def __init__(self, vector_env: Any, *, actions: str = "flat"):
        num_envs, n_arms, horizon = _check_native(vector_env)
        if actions not in ACTION_ENCODINGS:
            raise ValueError(f"actions must be one of {ACTION_ENCODINGS}, got {actions!r}")
        self.vector_env = vector_env
        self.n_arms = n_arms
        self.horizon = horizon
        self.actions = actions
        action_space = spaces.Discrete(n_arms * n_arms) if actions == "flat" else spaces.MultiDiscrete([n_arms, n_arms])
        self._vec_env_class.__init__(self, num_envs, pair_feature_space(n_arms), action_space)
        self.wins = np.zeros((num_envs, n_arms, n_arms), dtype=np.int64)
        self._flat_wins = self.wins.reshape(-1)
        self._env_offsets = np.arange(num_envs, dtype=np.int64) * (n_arms * n_arms)
        self._returns = np.zeros(num_envs)
        #: Episodes finished since the adapter was built, and duels played in the current one.
        self.episodes_completed = 0
        self.episode_step = 0
        #: State of the native env's bit generator just before it drew the current episode's
        #: problems at an automatic reset (None before the first one): restoring it and calling
        #: :meth:`reset` without a seed replays the episode, which is how training resumes.
        self.episode_rng_state: dict[str, Any] | None = None
        self._duels: np.ndarray | None = None
        self._was_reset = False
        self._start_time = time.perf_counter()

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        seed = self._seeds[0]
        self.vector_env.reset(seed=None if seed is None else int(seed))
        self._reset_seeds()
        self._reset_options()
        self.wins[:] = 0
        self._returns[:] = 0.0
        self.episode_step = 0
        self._was_reset = True
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return encode_wins(self.wins)

    def step_async(self, actions: np.ndarray) -> None:
        if not self._was_reset:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions)
        if not np.issubdtype(actions.dtype, np.integer):
            raise TypeError(f"actions must be integers, got dtype {actions.dtype}")
        n_arms = self.n_arms
        if self.actions == "flat":
            actions = actions.reshape(-1)
            if actions.shape != (self.num_envs,):
                raise ValueError(f"flat actions must have shape ({self.num_envs},), got {np.shape(actions)}")
            if actions.min() < 0 or actions.max() >= n_arms * n_arms:
                raise ValueError(f"flat actions must lie in [0, {n_arms * n_arms - 1}]")
            self._duels = np.stack(np.divmod(actions.astype(np.int64), n_arms), axis=1)
        else:
            if actions.shape != (self.num_envs, 2):
                raise ValueError(f"pair actions must have shape ({self.num_envs}, 2), got {actions.shape}")
            self._duels = actions.astype(np.int64)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._duels is None:
            raise RuntimeError("step_wait() called without step_async()")
        duels, self._duels = self._duels, None
        outcomes, rewards, terminated, truncated, info = self.vector_env.step(duels)
        first, second = duels[:, 0], duels[:, 1]
        won = outcomes.astype(bool)
        winner = np.where(won, first, second)
        loser = np.where(won, second, first)
        # One duel per sub-environment: the flat indices are distinct, so += counts each once.
        self._flat_wins[self._env_offsets + winner * self.n_arms + loser] += 1
        rewards = np.asarray(rewards, dtype=np.float32)
        self._returns += rewards
        dones = np.logical_or(terminated, truncated)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            if not dones.all():
                raise RuntimeError(
                    "sub-environments finished on different steps; SB3DuelVecEnv needs every bandit run to "
                    "start at reset() and last max_episode_steps duels"
                )
            final = encode_wins(self.wins)
            elapsed = round(time.perf_counter() - self._start_time, 6)
            cumulative = info["cumulative_regret"]
            for k, entry in enumerate(infos):
                entry["terminal_observation"] = final[k]
                entry["TimeLimit.truncated"] = bool(truncated[k] and not terminated[k])
                entry["episode"] = {"r": float(self._returns[k]), "l": self.horizon, "t": elapsed}
                # The native info batches each notion with a "_notion" mask (Gymnasium's vector
                # info layout); the per-environment dict keeps the regret values only.
                entry["cumulative_regret"] = {
                    notion: float(cumulative[notion][k]) for notion in self.vector_env.regret_notions
                }
            # The native env would reset on its next step and ignore that step's duels; reset now
            # (no seed: its generator continues) so the next step already duels on the new problems.
            self.episode_rng_state = self.vector_env.np_random.bit_generator.state
            self.vector_env.reset()
            self.wins[:] = 0
            self._returns[:] = 0.0
            self.episodes_completed += 1
            self.episode_step = 0
        else:
            self.episode_step += 1
        return encode_wins(self.wins), rewards, dones, infos

    def close(self) -> None:
        self.vector_env.close()

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(index) for index in indices]

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The native env's attribute, once per requested sub-environment (they share it)."""
        value = getattr(self.vector_env, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set an attribute of the native env (shared by every sub-environment)."""
        self._indices(indices)
        setattr(self.vector_env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """Call a method of the native env once; its result is repeated for each requested index."""
        result = getattr(self.vector_env, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """Sub-environments of a native vector env are never wrapped by Gymnasium wrappers."""
        return [False for _ in self._indices(indices)]

    def get_images(self) -> list[None]:
        return [None for _ in range(self.num_envs)]


_CLASS_CACHE: dict[str, type] = {}


def _adapter_class() -> type:
    if "SB3DuelVecEnv" not in _CLASS_CACHE:
        base = _vec_env_base()
        namespace = {"__doc__": __doc__, "__module__": __name__, "_vec_env_class": base}
        _CLASS_CACHE["SB3DuelVecEnv"] = type("SB3DuelVecEnv", (_Adapter, base), namespace)
    return _CLASS_CACHE["SB3DuelVecEnv"]


def __getattr__(name: str) -> Any:
    # SB3DuelVecEnv derives from SB3's VecEnv, so it is built on first access (lazy import).
    if name == "SB3DuelVecEnv":
        return _adapter_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
