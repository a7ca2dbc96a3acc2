"""Native NumPy-batched vector environments for the two K-armed dueling environments.

``gym.make_vec("CopelandDuel-v0", num_envs=1024, vectorization_mode="vector_entry_point")``
builds a :class:`CopelandDuelVectorEnv`: one ``step`` duels ``num_envs`` pairs with a handful
of NumPy operations (one gather from a flat duel table, one block of uniforms), instead of
``num_envs`` Python calls.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from dueling_gym.envs.copeland_duel import CopelandDuelEnv
from dueling_gym.envs.dueling_bandit import DuelingBanditEnv
from dueling_gym.validation import check_action_batch, check_integer, check_seed

__all__ = ["DuelingBanditVectorEnv", "CopelandDuelVectorEnv"]


class DuelingBanditVectorEnv(VectorEnv):
    """``num_envs`` independent copies of :class:`DuelingBanditEnv`, batched in NumPy.

    Each sub-environment behaves like the single environment (same spaces, rewards and
    regret bookkeeping); ``info`` holds arrays: ``info["regret"][notion]`` and
    ``info["cumulative_regret"][notion]`` of shape ``(num_envs,)``, ``info["t"]`` and, after
    a step, ``info["duel"]``: the duels played, ``int64`` of shape ``(num_envs, 2)``, with
    ``(-1, -1)`` for a sub-environment that started a new episode instead of playing.

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
        As for the single environment.  With a sampler every sub-environment draws its own
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
        if max_episode_steps is not None:
            max_episode_steps = check_integer("max_episode_steps", max_episode_steps, minimum=1)
        # The single environment validates the arguments and resolves the defaults; it is
        # also the reference this class must stay equivalent to.
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

        n_duels = self.n_arms * self.n_arms
        fixed = self._template.problem
        self.problems: list = [fixed] * self.num_envs if fixed is not None else [None] * self.num_envs
        # Two contiguous lookup tables (win probability; regrets per notion), indexed by the flat
        # duel first * K + second (plus an offset per sub-env when each has its own problem):
        # np.take on contiguous rows is several times faster than fancy-indexing one wide table.
        if fixed is not None:
            self._set_tables(slice(None), fixed.duel_table(self.regret_notions), allocate=True)
            self._table_offsets = None
        else:
            self._probabilities = np.zeros(self.num_envs * n_duels)
            self._regret_table = np.zeros((self.num_envs * n_duels, len(self.regret_notions)))
            self._table_offsets = np.arange(self.num_envs, dtype=np.int64) * n_duels
        self._cumulative = np.zeros((self.num_envs, len(self.regret_notions)))
        self._steps = np.zeros(self.num_envs, dtype=np.int64)
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)
        self._win_counts = np.zeros((self.num_envs, n_duels), dtype=np.int64) if render_mode else None
        self._was_reset = False

    # ------------------------------------------------------------------ helpers
    def _set_tables(self, rows: slice, duel_table: np.ndarray, allocate: bool = False) -> None:
        if allocate:
            self._probabilities = np.ascontiguousarray(duel_table[:, 0])
            self._regret_table = np.ascontiguousarray(duel_table[:, 1:])
        else:
            self._probabilities[rows] = duel_table[:, 0]
            self._regret_table[rows] = duel_table[:, 1:]

    def _draw_problems(self, env_indices: np.ndarray) -> None:
        if self.problem_sampler is None:
            return
        n_duels = self.n_arms * self.n_arms
        for env_index in env_indices.tolist():
            problem = self._template._validated(self.problem_sampler(self.np_random))
            self.problems[env_index] = problem
            start = env_index * n_duels
            self._set_tables(slice(start, start + n_duels), problem.duel_table(self.regret_notions))

    def _reset_info(self) -> dict[str, Any]:
        zeros = np.zeros(self.num_envs)
        return {
            "regret": {notion: zeros.copy() for notion in self.regret_notions},
            "cumulative_regret": {notion: zeros.copy() for notion in self.regret_notions},
            "t": np.zeros(self.num_envs, dtype=np.int64),
        }

    # ------------------------------------------------------------------ VectorEnv API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=check_seed("seed", seed, allow_sequence=False))
        self._draw_problems(np.arange(self.num_envs))
        self._cumulative[:] = 0.0
        self._steps[:] = 0
        self._needs_reset[:] = False
        if self._win_counts is not None:
            self._win_counts[:] = 0
        self._was_reset = True
        return np.zeros(self.num_envs, dtype=np.int64), self._reset_info()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._was_reset:
            raise gym.error.ResetNeeded("call reset() before step()")
        # int64 whatever the caller's integer dtype: first * K + second (plus a table offset)
        # must not wrap around in int8 / uint8, nor mix uint64 with int64 offsets.
        actions = check_action_batch(actions, self.num_envs, self.n_arms)
        n_arms = self.n_arms
        first = actions[:, 0]
        second = actions[:, 1]
        duels = first * n_arms + second
        if self._table_offsets is not None:
            duels += self._table_offsets
        first_won = self.np_random.random(self.num_envs) < np.take(self._probabilities, duels)
        regrets = np.take(self._regret_table, duels, axis=0)
        rewards = -regrets[:, self._reward_column]
        resetting = self._needs_reset
        any_resetting = bool(resetting.any())
        if any_resetting:
            # NEXT_STEP autoreset: these sub-envs ignore their action and start a new episode.
            self._draw_problems(np.flatnonzero(resetting))
            regrets[resetting] = 0.0
            rewards[resetting] = 0.0
            first_won[resetting] = False
            actions[resetting] = -1
            self._cumulative[resetting] = 0.0
            self._steps[resetting] = -1
            if self._win_counts is not None:
                self._win_counts[resetting] = 0
        self._cumulative = cumulative = self._cumulative + regrets
        self._steps += 1
        if self._win_counts is not None:
            winner = np.where(first_won, first, second)
            loser = np.where(first_won, second, first)
            played = ~resetting
            self._win_counts[np.flatnonzero(played), (winner * n_arms + loser)[played]] += 1
        if self.max_episode_steps is None:
            truncated = np.zeros(self.num_envs, dtype=bool)
        else:
            truncated = self._steps >= self.max_episode_steps
        self._needs_reset = truncated
        terminated = np.zeros(self.num_envs, dtype=bool)
        notions = self.regret_notions
        info = {
            "regret": {notion: regrets[:, k] for k, notion in enumerate(notions)},
            "cumulative_regret": {notion: cumulative[:, k] for k, notion in enumerate(notions)},
            "t": self._steps.copy(),
            "duel": actions,
        }
        return first_won.astype(np.int64), rewards, terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
            return None
        assert self._win_counts is not None
        wins = self._win_counts[0].reshape(self.n_arms, self.n_arms)
        lines = [f"sub-env 0 of {self.num_envs}: t={int(self._steps[0])}"]
        lines += [" ".join(f"{int(w):6d}" for w in row) for row in wins]
        return "\n".join(lines) + "\n"


class CopelandDuelVectorEnv(DuelingBanditVectorEnv):
    """``num_envs`` batched copies of :class:`CopelandDuelEnv` (Copeland regret reward)."""

    single_env_class = CopelandDuelEnv
