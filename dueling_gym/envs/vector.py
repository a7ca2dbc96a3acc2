"""Native NumPy-batched vector environments for the two K-armed dueling environments.

``gym.make_vec("CopelandDuel-v0", num_envs=1024, vectorization_mode="vector_entry_point")``
builds a :class:`~dueling_gym.envs.vector.CopelandDuelVectorEnv`: one ``step`` duels ``num_envs`` pairs with a handful
of NumPy operations (:class:`~dueling_gym.envs.BatchDuelEngine`: one gather from a flat duel
table, one block of uniforms), instead of ``num_envs`` Python calls.  Its ``info`` is batched
exactly as Gymnasium's ``SyncVectorEnv`` batches the single environment's.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import EnvSpec
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from dueling_gym.envs._duels import BatchDuelEngine
from dueling_gym.envs.copeland_duel import CopelandDuelEnv
from dueling_gym.envs.dueling_bandit import DuelingBanditEnv, _record_sampler_as_json
from dueling_gym.problems.generators import ProblemSampler
from dueling_gym.validation import check_action_batch, check_integer, check_reset_options, check_seed

__all__ = ["DuelingBanditVectorEnv", "CopelandDuelVectorEnv"]


class DuelingBanditVectorEnv(VectorEnv):
    """``num_envs`` independent copies of :class:`~dueling_gym.envs.DuelingBanditEnv`, batched in NumPy.

    Each sub-environment behaves like the single environment (same spaces, rewards and
    regret bookkeeping).  ``info`` follows Gymnasium's vector convention (``VectorEnv._add_info``,
    as ``gymnasium.vector.SyncVectorEnv`` over the single environment produces it): every key
    ``k`` comes with a boolean mask ``info["_k"]`` of shape ``(num_envs,)`` telling which
    sub-environments reported it, and nested dicts are batched the same way:

    * ``info["regret"][notion]``, ``info["cumulative_regret"][notion]``: ``float64`` arrays of
      shape ``(num_envs,)``, with ``info["regret"]["_" + notion]`` and ``info["_regret"]``
      (likewise for ``cumulative_regret``);
    * ``info["t"]``: ``int64`` duels so far in each episode, with ``info["_t"]``;
    * ``info["duel"]`` (after a step in which at least one sub-environment played): the duels
      played, ``int64`` of shape ``(num_envs, 2)``, with ``info["_duel"]`` False (and the row
      ``(-1, -1)``) for a sub-environment that started a new episode instead of playing.
      ``SyncVectorEnv`` would hold the same duels as tuples in an object array.

    Masks are read-only arrays shared between keys.  Iterate over ``regret_notions``
    rather than over ``info["regret"]``, whose keys include the masks.

    ``step`` takes one ``(first, second)`` pair per sub-environment, an array of shape
    ``(num_envs, 2)`` of any integer dtype (``int8`` .. ``uint64``); other dtypes raise a
    ``TypeError``, other shapes and arms outside ``[0, K)`` a ``ValueError``.

    Parameters
    ----------
    num_envs : int
        Number of sub-environments.
    max_episode_steps : int, optional
        Horizon of every episode (sub-environments are truncated after this many duels and
        reset on their next step, ``AutoresetMode.NEXT_STEP``).  ``None`` never truncates.
    preferences, problem_sampler, n_arms, reward_regret
        As for the single environment (``problem_sampler`` may be a ``ProblemSampler``'s JSON
        form; ``gym.make_vec`` records a ``ProblemSampler`` in ``env.spec`` in that form, so
        ``env.spec.to_json()`` works).  With a sampler every sub-environment draws its own
        problem at each of its resets.
    render_mode : {"ansi", None}
        ``"ansi"`` renders the win counts of sub-environment 0 (counts are kept only then).

    Notes
    -----
    All randomness comes from one ``numpy.random.Generator`` seeded by ``reset(seed=...)``:
    problems are drawn in sub-environment order, then each step draws one block of
    ``num_envs`` uniforms.  With ``num_envs == 1`` the first episode is therefore identical,
    duel for duel, to the single environment reset with the same seed.
    """

    single_env_class: type[DuelingBanditEnv] = DuelingBanditEnv
    metadata = {"render_modes": ["ansi"], "autoreset_mode": AutoresetMode.NEXT_STEP}
    _spec: EnvSpec | None = None

    @property
    def spec(self) -> EnvSpec | None:
        """How ``gymnasium.make_vec`` built the environment (``None`` when built directly); a
        ``ProblemSampler`` among its ``kwargs`` is recorded in its JSON form, as for the single env."""
        return self._spec

    @spec.setter
    def spec(self, spec: EnvSpec | None) -> None:
        self._spec = _record_sampler_as_json(spec, ProblemSampler, self.single_env_class.preferences_json_form,
                                             self.single_env_class.registered_default_gives_way)

    def __init__(
        self,
        num_envs: int = 1,
        max_episode_steps: int | None = None,
        preferences: Any = None,
        *,
        problem_sampler: Any = None,
        n_arms: int | None = None,
        reward_regret: str | None = None,
        render_mode: str | None = None,
    ):
        num_envs = check_integer("num_envs", num_envs, minimum=1)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if max_episode_steps is not None:
            max_episode_steps = check_integer("max_episode_steps", max_episode_steps, minimum=1)
        # The single environment validates the arguments and resolves the defaults; it is
        # also the reference this class must stay equivalent to.
        # make_vec merges the registered default problem with the caller's: it gives way.
        given = self.single_env_class.registered_default_gives_way(
            {"preferences": preferences, "problem_sampler": problem_sampler})
        preferences, problem_sampler = given.get("preferences"), given.get("problem_sampler")
        self._template = self.single_env_class(
            preferences, problem_sampler=problem_sampler, n_arms=n_arms,
            reward_regret=reward_regret, render_mode=render_mode,
        )
        self.num_envs = int(num_envs)
        self.max_episode_steps = None if max_episode_steps is None else int(max_episode_steps)
        self.render_mode = render_mode
        self.n_arms = self._template.n_arms
        self.regret_notions = self._template.regret_notions
        self.reward_regret = self._template.reward_regret
        self.problem_sampler = self._template.problem_sampler
        self._reward_column = self.regret_notions.index(self.reward_regret)

        self.single_action_space = self._template.action_space
        self.single_observation_space = self._template.observation_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

        fixed = self._template.problem
        self.problems: list = [fixed] * self.num_envs
        # The engine plays row first * K + second of each sub-environment's duel table (one
        # shared table for a fixed problem, one per sub-environment with a sampler).
        self._engine = BatchDuelEngine(
            self.num_envs, self.n_arms * self.n_arms, self.regret_notions,
            per_env_tables=fixed is None, track_counts=render_mode is not None,
        )
        if fixed is not None:
            self._engine.load(fixed.duel_table(self.regret_notions))
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)
        # Gymnasium's info masks (``info["_k"]``): one read-only all-True array serves every key
        # of every step at which each sub-environment reports it.
        self._all = np.ones(self.num_envs, dtype=bool)
        self._all.flags.writeable = False
        self._notion_masks = {f"_{notion}": self._all for notion in self.regret_notions}
        self._was_reset = False

    # ------------------------------------------------------------------ helpers
    def _draw_problems(self, env_indices: np.ndarray) -> None:
        if self.problem_sampler is None:
            return
        for env_index in env_indices.tolist():
            problem = self._template._validated(self.problem_sampler(self.np_random))
            self.problems[env_index] = problem
            self._engine.load(problem.duel_table(self.regret_notions), env_index)

    def _notion_arrays(self, columns: np.ndarray) -> dict[str, np.ndarray]:
        """``{notion: column, "_notion": mask}``, as Gymnasium batches a nested info dict."""
        arrays = dict(zip(self.regret_notions, columns.T))
        arrays.update(self._notion_masks)
        return arrays

    def _reset_info(self) -> dict[str, Any]:
        zeros = np.zeros((self.num_envs, len(self.regret_notions)))
        return {
            "regret": self._notion_arrays(zeros),
            "_regret": self._all,
            "cumulative_regret": self._notion_arrays(zeros.copy()),
            "_cumulative_regret": self._all,
            "t": np.zeros(self.num_envs, dtype=np.int64),
            "_t": self._all,
        }

    # ------------------------------------------------------------------ VectorEnv API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        check_reset_options(options)
        super().reset(seed=check_seed("seed", seed, allow_sequence=False))
        self._draw_problems(np.arange(self.num_envs))
        self._engine.reset(self.np_random)
        self._needs_reset[:] = False
        self._was_reset = True
        return np.zeros(self.num_envs, dtype=np.int64), self._reset_info()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._was_reset:
            raise gym.error.ResetNeeded("call reset() before step()")
        # int64 whatever the caller's integer dtype: first * K + second (plus a table offset)
        # must not wrap around in int8 / uint8, nor mix uint64 with int64 offsets.
        actions = check_action_batch(actions, self.num_envs, self.n_arms)
        engine = self._engine
        rows = actions[:, 0] * self.n_arms + actions[:, 1]
        first_won, regrets = engine.draw(rows)
        rewards = -regrets[:, self._reward_column]
        resetting = self._needs_reset
        played = None
        if resetting.any():
            # NEXT_STEP autoreset: these sub-envs ignore their action and start a new episode
            # (their info is the reset info: no "duel", as in Gymnasium's SyncVectorEnv).
            self._draw_problems(np.flatnonzero(resetting))
            engine.restart(resetting, first_won, regrets)
            rewards[resetting] = 0.0
            actions[resetting] = -1
            played = ~resetting
        cumulative = engine.accumulate(rows, first_won, regrets, played)
        if self.max_episode_steps is None:
            truncated = np.zeros(self.num_envs, dtype=bool)
        else:
            truncated = engine.t >= self.max_episode_steps
        self._needs_reset = truncated
        terminated = np.zeros(self.num_envs, dtype=bool)
        info = {
            "regret": self._notion_arrays(regrets),
            "_regret": self._all,
            "cumulative_regret": self._notion_arrays(cumulative),
            "_cumulative_regret": self._all,
            "t": engine.t.copy(),
            "_t": self._all,
        }
        if played is None:
            info["duel"], info["_duel"] = actions, self._all
        elif played.any():
            info["duel"], info["_duel"] = actions, played
        return first_won.astype(np.int64), rewards, terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
            return None
        wins = self.win_counts(0)
        lines = [f"sub-env 0 of {self.num_envs}: t={int(self._engine.t[0])}"]
        lines += [" ".join(f"{int(w):6d}" for w in row) for row in wins]
        return "\n".join(lines) + "\n"


    def win_counts(self, env_index: int = 0) -> np.ndarray:
        """``W[i, j]`` of sub-environment ``env_index`` this episode (kept only with a ``render_mode``)."""
        engine = self._engine
        if engine.counts is None:
            raise RuntimeError("win counts are kept only when the vector env has a render_mode")
        n_arms = self.n_arms
        first_wins = engine.first_wins[env_index].reshape(n_arms, n_arms)
        losses = engine.counts[env_index].reshape(n_arms, n_arms) - first_wins
        return first_wins + losses.T


class CopelandDuelVectorEnv(DuelingBanditVectorEnv):
    """``num_envs`` batched copies of :class:`~dueling_gym.envs.CopelandDuelEnv` (Copeland regret reward)."""

    single_env_class = CopelandDuelEnv
