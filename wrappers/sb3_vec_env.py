"""A native NumPy-batched dueling vector env as a Stable-Baselines3 ``VecEnv``: :class:`SB3DuelVecEnv`.

Stable-Baselines3 refuses Gymnasium ``VectorEnv`` objects and steps single environments one by
one in a ``DummyVecEnv``; :class:`SB3DuelVecEnv` lets PPO and A2C collect rollouts from the
native vector env instead, a handful of NumPy operations per step for all sub-environments.

The ``rl`` extra (``pip install "dueling-gym[rl]"``) provides Stable-Baselines3; the class
derives from SB3's ``VecEnv``, so it is built (and SB3 imported) on first access.
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
    """A Stable-Baselines3 ``VecEnv`` over a native NumPy-batched dueling vector env.

    Stable-Baselines3 refuses Gymnasium ``VectorEnv`` objects and wraps single environments in
    a ``DummyVecEnv`` instead, one Python ``step`` per sub-environment and step.
    ``SB3DuelVecEnv`` drives one :class:`~dueling_gym.envs.vector.DuelingBanditVectorEnv` (or
    :class:`~dueling_gym.envs.vector.CopelandDuelVectorEnv`) and speaks SB3's ``VecEnv``
    protocol, so SB3's algorithms (PPO, A2C, ...) collect rollouts from many bandit runs with a
    handful of NumPy operations per step.

    Use it to train a policy with Stable-Baselines3 over many parallel bandit runs of one
    horizon: PPO trains faster through it than through ``DummyVecEnv`` over the single
    environments, and the gap grows with the number of sub-environments (about 1.5 times as
    many steps per second with 64 of them, SB3's ``MlpPolicy`` on one CPU thread).  Use
    ``DummyVecEnv`` over ``gym.make`` environments instead when the policy needs Gymnasium
    wrappers around each environment, e.g. the :class:`~dueling_gym.wrappers.DuelStatistics`
    observation that :class:`~dueling_gym.agents.PolicyAgent` rebuilds to run a
    trained policy as a dueling agent.

    Parameters
    ----------
    vector_env : dueling_gym.envs.vector.DuelingBanditVectorEnv or dueling_gym.envs.vector.CopelandDuelVectorEnv
        The native vector env, e.g. ``gym.make_vec("CopelandDuel-v0", num_envs=1024,
        vectorization_mode="vector_entry_point", max_episode_steps=1000, problem_sampler=...)``.
        It needs ``max_episode_steps`` (one episode is one bandit run) and its own
        ``NEXT_STEP`` autoreset; the adapter owns it from then on (``close`` closes it).
    actions : {"flat", "pair"}, default "flat"
        The action space: ``"flat"`` is ``Discrete(K^2)``, action ``first * K + second``;
        ``"pair"`` is ``MultiDiscrete([K, K])``.  Duels of an arm with itself are allowed.

    Attributes
    ----------
    vector_env : dueling_gym.envs.vector.DuelingBanditVectorEnv
        The wrapped native env.
    n_arms, horizon : int
        ``K`` and the number of duels per episode (the native env's ``max_episode_steps``).
    wins : ndarray of int64, shape (num_envs, K, K)
        ``wins[k, i, j]``: how often arm ``i`` beat arm ``j`` in sub-environment ``k``'s
        current run (self-duels on the diagonal); the observations encode it.
    episodes_completed, episode_step : int
        Episodes finished since construction, and duels played in the current one.
    episode_rng_state : dict or None
        The native env's bit-generator state just before it drew the current episode's
        problems at an automatic reset (``None`` before the first one): restoring it and
        calling :meth:`reset` without a seed replays the episode, which is how training resumes.

    Raises
    ------
    ImportError
        If Stable-Baselines3 is not installed.
    TypeError
        If ``vector_env`` is not a native dueling vector env.
    ValueError
        If ``actions`` is unknown, or ``vector_env`` has no horizon or another autoreset mode.

    See Also
    --------
    dueling_gym.experiments.learning.training.train : PPO or A2C through this adapter, with evaluation,
        checkpoints and export for the ``learned`` agent.

    Notes
    -----
    *Observations* are the pair-feature encoding of each run's win counts
    (:func:`dueling_gym.observations.encode_wins`, the observation the ``learned`` agent
    rebuilds from its own duels), float32 of shape ``(num_envs, observation_size(K))``.

    *Episodes and autoreset.*  The native env resets a finished sub-environment on its *next*
    step (Gymnasium's ``NEXT_STEP`` autoreset), ignoring that step's action; SB3 expects the
    reset observation in the *same* step and the final one in
    ``infos[k]["terminal_observation"]``.  Every bandit run has the same horizon and all start
    together at :meth:`reset`, so all sub-environments finish on the same step; the adapter then
    reads the final observations, resets the native env (which draws fresh problems from its
    own generator, continuing its stream) and returns the first observations of the new runs.
    No duel is wasted and every sub-environment sees exactly ``max_episode_steps`` duels per
    episode.  Runs end by truncation (the horizon is a time limit, not a terminal state), so
    ``infos[k]["TimeLimit.truncated"]`` is True and SB3 bootstraps the value of the final
    observation.  Each final info also carries ``"episode"`` (``r``: return, ``l``: length,
    ``t``: seconds since the adapter was built -- the keys of SB3's ``Monitor``, which its
    loggers read) and ``"cumulative_regret"`` (every regret notion at the end of the run).

    *Seeding.*  ``seed(s)`` (what SB3's ``set_random_seed`` and ``PPO(seed=s)`` call) makes the
    next :meth:`reset` reset the native env with ``seed=s``; everything random -- problems and
    duel outcomes -- then comes from the native env's generator, so a seeded training run is
    reproducible.

    ``get_attr``, ``set_attr`` and ``env_method`` act on the native env, which all
    sub-environments share: values are repeated once per requested index.

    Examples
    --------
    ```python
    import gymnasium as gym
    from stable_baselines3 import PPO
    import dueling_gym  # noqa: F401
    from dueling_gym.problems import ProblemSampler
    from dueling_gym.wrappers import SB3DuelVecEnv

    native = gym.make_vec("CopelandDuel-v0", num_envs=1024, vectorization_mode="vector_entry_point",
                          problem_sampler=ProblemSampler("no_condorcet_winner", n_arms=5),
                          max_episode_steps=1000)
    model = PPO("MlpPolicy", SB3DuelVecEnv(native), seed=0).learn(1_000_000)
    ```
    """

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
        """Start new runs in every sub-environment (fresh problems; seeded by a preceding ``seed``).

        Returns
        -------
        ndarray of float32, shape (num_envs, observation_size(K))
            The observations of the empty win counts.
        """
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
        """Check and record one duel per sub-environment (integers, in the adapter's encoding)."""
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
        """Play the recorded duels; return SB3's ``(observations, rewards, dones, infos)``.

        At the end of the runs (all sub-environments together) the infos carry the final
        observations and episode statistics, and the observations returned start the next runs.
        """
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
        """Close the native vector env."""
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
        # The public class derives from SB3's VecEnv alone, with _Adapter's methods and docstring
        # (no private base in its documentation or MRO); _Adapter uses no zero-argument super(),
        # whose class cell would still point at _Adapter.
        namespace = {name: value for name, value in vars(_Adapter).items() if name not in ("__dict__", "__weakref__")}
        namespace.update({"__module__": __name__, "__qualname__": "SB3DuelVecEnv", "_vec_env_class": base})
        _CLASS_CACHE["SB3DuelVecEnv"] = type("SB3DuelVecEnv", (base,), namespace)
    return _CLASS_CACHE["SB3DuelVecEnv"]


def __getattr__(name: str) -> Any:
    # SB3DuelVecEnv derives from SB3's VecEnv, so it is built on first access (lazy import).
    if name == "SB3DuelVecEnv":
        return _adapter_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
