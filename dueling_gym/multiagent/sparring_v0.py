"""Sparring as a two-player PettingZoo game: each seat picks one arm of the duel.

Ailon, Karnin & Joachims (ICML 2014) reduce a dueling bandit to two cardinal bandits that
"spar": the left learner picks the first arm, the right learner the second, and each is rewarded
when its arm wins.  This module turns that reduction into a zero-sum game so that *any*
multi-agent learner -- two MAB algorithms, or one shared reinforcement-learning policy trained by
self-play -- can play it.  PettingZoo module convention::

    from dueling_gym.multiagent import sparring_v0

    env = sparring_v0.parallel_env(preferences="sushi", max_cycles=1000)   # ParallelEnv
    aec = sparring_v0.env(preferences="sushi")                             # AEC, wrapped
    raw = sparring_v0.raw_env(preferences="sushi")                         # AEC, unwrapped

The duels are played by an internal :class:`~dueling_gym.envs.DuelingBanditEnv`:
the same problem handling, the same random stream (its ``np_random``) and the same regret
bookkeeping (:meth:`PreferenceMatrix.duel_table <dueling_gym.problems.PreferenceMatrix.duel_table>`), so a
seeded game gives exactly the outcomes
the single-agent environment gives for the same duels.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import index
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import parallel_to_aec_wrapper

from dueling_gym.envs.dueling_bandit import DuelingBanditEnv, PreferencesLike
from dueling_gym.problems.preference import PreferenceMatrix

__all__ = ["SparringParallelEnv", "SparringAECEnv", "env", "raw_env", "parallel_env", "DEFAULT_PROBLEM"]

#: The fixed problem used when neither ``preferences`` nor ``problem_sampler`` is given.
DEFAULT_PROBLEM = "sushi"
_SEATS = ("player_0", "player_1")


class SparringParallelEnv(ParallelEnv[str, np.ndarray, int]):
    """Sparring self-play: two players each pick one arm of a duel; the winner's seat scores.

    ## Description

    A two-player, simultaneous-move, zero-sum repeated game over a K-armed dueling bandit with
    preference matrix ``P``.  At every cycle ``player_0`` picks the first arm ``i`` and
    ``player_1`` the second arm ``j``; the duel is played and ``i`` wins with probability
    ``P[i, j]`` (drawn from the environment's ``np_random``).  A self-duel ``i == j`` is a fair
    coin.  This is the Sparring reduction (Ailon, Karnin & Joachims, ICML 2014) as a game: two
    multi-armed-bandit learners in the two seats *are* Sparring, and a single policy playing both
    seats learns by self-play.  When a Condorcet winner exists it is the game's unique
    symmetric equilibrium (it beats every arm); in general the equilibria are the von Neumann
    winners of ``P``.

    The problem is fixed (``preferences=``: a :class:`~dueling_gym.problems.PreferenceMatrix`, a
    K×K array or a shipped name; default ``"sushi"``) or drawn anew at every reset by
    ``problem_sampler=`` (a callable ``rng -> PreferenceMatrix``, e.g.
    :class:`~dueling_gym.problems.ProblemSampler`).

    ## Action Space

    ``Discrete(K)`` for each player: the arm it sends to the duel (``player_0``'s is the first
    arm, ``player_1``'s the second).  Actions may be Python or NumPy integers (or 0-d integer
    arrays); anything else raises ``TypeError``, an arm outside ``[0, K-1]`` ``ValueError``.

    ## Observation Space

    ``Discrete(2)`` for each player: the outcome of the last duel from the player's own
    perspective, ``1`` if its arm won and ``0`` if it lost.  Observations are NumPy arrays of
    the space's dtype and shape: a fresh 0-d ``int64`` array each time (``int(obs)`` reads it,
    and the space's ``contains`` accepts it).  Players never see the matrix, the opponent's arm
    or the regret.

    ## Rewards

    Zero-sum, ``+1`` / ``-1``: the player whose arm won the duel gets ``+1.0``, the other
    ``-1.0`` (a self-duel's fair coin decides too).  A multi-armed-bandit learner in a seat gets
    a reward in ``[0, 1]`` as ``(reward + 1) / 2``, which equals its observation.

    The ground-truth regret of the *joint* duel ``(i, j)`` is in ``infos`` (the same dict
    contents for both players, fresh dicts every call):

    * ``infos[agent]["regret"][notion]``: the regret of this cycle's duel,
    * ``infos[agent]["cumulative_regret"][notion]``: its running total over the episode,
    * ``infos[agent]["t"]``: the number of duels so far, ``infos[agent]["duel"]``: ``(i, j)``
      (``None`` after reset), ``infos[agent]["first_won"]``: whether ``i`` won (``None`` after
      reset).

    Notions: Copeland in both named scales always (``"copeland_komiyama"`` in [0, 1],
    ``"copeland_zoghi"`` in [0, 2]), ``"borda"`` always, and the Condorcet notions when the
    problem (or every problem of the sampler) has a Condorcet winner; values come from
    :meth:`PreferenceMatrix.duel_table <dueling_gym.problems.PreferenceMatrix.duel_table>`, i.e. equal
    :meth:`PreferenceMatrix.regret <dueling_gym.problems.PreferenceMatrix.regret>`.

    ## Starting State

    No duel yet: both players observe ``0`` (as in ``DuelingBandit-v0``), the infos hold zero
    regrets; with ``problem_sampler`` a new problem is drawn from ``np_random`` at every reset.

    ## Episode End

    The game never terminates; every player is truncated after ``max_cycles`` duels (then
    ``agents`` becomes empty and :meth:`reset` starts a new episode).

    ## Arguments

    ```python
    from dueling_gym.multiagent import sparring_v0

    env = sparring_v0.parallel_env(preferences="sushi", max_cycles=1000, render_mode=None)
    ```

    * ``preferences``: a fixed problem (``PreferenceMatrix``, K×K array or shipped name such as
      ``"sushi"``, ``"arxiv"``, ``"mslr5-condorcet"``); default ``"sushi"``.
    * ``problem_sampler``: a callable ``rng -> PreferenceMatrix`` drawn from ``np_random`` at
      each reset; exclusive with ``preferences``.
    * ``n_arms``: the number of arms of a custom sampler without an ``n_arms`` attribute.
    * ``max_cycles``: duels per episode (default 1000).
    * ``render_mode``: ``"human"`` prints a text summary of the last duel, ``"ansi"`` returns it
      as a string.

    ## Version History

    * v0: initial version.  Observations were first ``np.int64`` scalars and are now 0-d
      ``int64`` arrays of the same values (what PettingZoo's API test expects); the game is
      unchanged.
    """

    metadata = {
        "name": "sparring_v0",
        "render_modes": ["human", "ansi"],
        "render_fps": 4,
        "is_parallelizable": True,
    }

    def __init__(
        self,
        preferences: PreferencesLike | None = None,
        *,
        problem_sampler: Callable[[np.random.Generator], PreferencesLike] | None = None,
        n_arms: int | None = None,
        max_cycles: int = 1000,
        render_mode: str | None = None,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.max_cycles = _check_max_cycles(max_cycles)
        if preferences is None and problem_sampler is None:
            preferences = DEFAULT_PROBLEM
        # The duel engine: problem handling, np_random and regret bookkeeping (its reward is unused;
        # a Copeland reward notion is defined on every problem).
        self._duels = DuelingBanditEnv(
            preferences, problem_sampler=problem_sampler, n_arms=n_arms, reward_regret="copeland_zoghi"
        )
        self.render_mode = render_mode
        self.n_arms: int = self._duels.n_arms
        self.regret_notions: tuple[str, ...] = tuple(self._duels.regret_notions)
        self.possible_agents: list[str] = list(_SEATS)
        self.agents: list[str] = []
        self.observation_spaces = {agent: spaces.Discrete(2) for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(self.n_arms) for agent in self.possible_agents}
        self._t = 0
        self._last: tuple[int, int, bool] | None = None
        self._plays: list[list[int]] = [[0] * self.n_arms, [0] * self.n_arms]
        self._wins = [0, 0]
        self._cumulative: dict[str, float] = dict.fromkeys(self.regret_notions, 0.0)
        self._has_reset = False

    # ------------------------------------------------------------------ spaces and properties
    def observation_space(self, agent: str) -> spaces.Discrete:
        """``Discrete(2)``: 1 if the agent's arm won the last duel (the same object every call)."""
        return self.observation_spaces[self._check_agent(agent)]

    def action_space(self, agent: str) -> spaces.Discrete:
        """``Discrete(K)``: the arm the agent sends to the duel (the same object every call)."""
        return self.action_spaces[self._check_agent(agent)]

    def _check_agent(self, agent: Any) -> str:
        if agent not in self.observation_spaces:
            raise ValueError(f"unknown agent {agent!r}; the players are {self.possible_agents}")
        return agent

    @property
    def problem(self) -> PreferenceMatrix | None:
        """The problem of the current episode (``None`` before the first reset with a sampler)."""
        return self._duels.problem

    @property
    def np_random(self) -> np.random.Generator:
        """The generator the duel outcomes (and sampled problems) are drawn from."""
        return self._duels.np_random

    @property
    def t(self) -> int:
        """Duels played so far in this episode."""
        return self._t

    @property
    def plays(self) -> np.ndarray:
        """How often seat ``s`` (0 = ``player_0``) sent arm ``a`` this episode, ``plays[s, a]``."""
        return np.array(self._plays, dtype=np.int64)

    @property
    def wins(self) -> np.ndarray:
        """Duels won by each seat this episode (``wins.sum() == t``)."""
        return np.array(self._wins, dtype=np.int64)

    @property
    def win_counts(self) -> np.ndarray:
        """How often arm ``i`` beat arm ``j`` this episode, ``W[i, j]`` (self-duels on the diagonal)."""
        return self._duels.win_counts

    @property
    def cumulative_regret(self) -> dict[str, float]:
        """Regret of the joint duels accumulated this episode, per notion."""
        return dict(self._cumulative)

    # ------------------------------------------------------------------ PettingZoo API
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        self._duels.reset(seed=seed)
        self.agents = list(self.possible_agents)
        self._t = 0
        self._last = None
        self._plays = [[0] * self.n_arms, [0] * self.n_arms]
        self._wins = [0, 0]
        self._cumulative = dict.fromkeys(self.regret_notions, 0.0)
        self._has_reset = True
        observations = {agent: _observation(False) for agent in self.agents}
        zeros = dict.fromkeys(self.regret_notions, 0.0)
        infos = {
            agent: {"regret": dict(zeros), "cumulative_regret": dict(zeros), "t": 0, "duel": None, "first_won": None}
            for agent in self.agents
        }
        return observations, infos

    def check_action(self, agent: str, action: Any) -> int:
        """Validate one player's action and return its arm as a Python ``int``.

        Raises
        ------
        TypeError
            If the action is not an integer (Python, NumPy or a 0-d integer array; booleans are
            rejected).
        ValueError
            If the arm lies outside ``[0, K-1]``.
        """
        if isinstance(action, (bool, np.bool_)):
            raise TypeError(f"{agent}'s action must be an integer arm, not a boolean ({action!r})")
        if isinstance(action, np.ndarray) and action.shape != ():
            raise TypeError(f"{agent}'s action must be a single integer arm, got an array of shape {action.shape}")
        try:
            arm = index(action)
        except TypeError:
            raise TypeError(f"{agent}'s action must be an integer arm in [0, {self.n_arms - 1}], got {action!r}") from None
        if not 0 <= arm < self.n_arms:
            raise ValueError(f"{agent}'s action {arm} is out of range: arms lie in [0, {self.n_arms - 1}]")
        return arm

    def step(self, actions: Mapping[str, Any]) -> tuple[
        dict[str, np.ndarray], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]
    ]:
        if not self._has_reset:
            raise gym.error.ResetNeeded("call reset() before step()")
        if not self.agents:
            raise gym.error.ResetNeeded(
                f"the episode is over (truncated after max_cycles={self.max_cycles} duels); call reset()"
            )
        if not isinstance(actions, Mapping):
            raise TypeError(f"actions must be a dict {{agent: arm}} for {self.agents}, got {type(actions).__name__}")
        if set(actions) != set(self.agents):
            missing = [agent for agent in self.agents if agent not in actions]
            extra = [agent for agent in actions if agent not in self.agents]
            raise ValueError(f"actions must give one arm per player {self.agents}; missing {missing}, unexpected {extra}")
        first = self.check_action("player_0", actions["player_0"])
        second = self.check_action("player_1", actions["player_1"])

        observation, _, _, _, duel_info = self._duels.step((first, second))
        first_won = bool(observation)
        self._t += 1
        self._last = (first, second, first_won)
        self._plays[0][first] += 1
        self._plays[1][second] += 1
        self._wins[0 if first_won else 1] += 1
        regret, cumulative = duel_info["regret"], duel_info["cumulative_regret"]
        self._cumulative = dict(cumulative)

        truncated = self._t >= self.max_cycles
        observations = {"player_0": _observation(first_won), "player_1": _observation(not first_won)}
        rewards = {"player_0": 1.0 if first_won else -1.0, "player_1": -1.0 if first_won else 1.0}
        terminations = {"player_0": False, "player_1": False}
        truncations = {"player_0": truncated, "player_1": truncated}
        infos = {
            agent: {
                "regret": dict(regret),
                "cumulative_regret": dict(cumulative),
                "t": self._t,
                "duel": (first, second),
                "first_won": first_won,
            }
            for agent in _SEATS
        }
        if truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos

    # ------------------------------------------------------------------ rendering
    def _text(self) -> str:
        problem = self.problem
        name = (problem.name or "custom") if problem is not None else "?"
        lines = [f"sparring_v0  problem={name} (K={self.n_arms})  t={self._t}/{self.max_cycles}"]
        if self._last is None:
            lines.append("no duel yet")
        else:
            first, second, first_won = self._last
            winner = "player_0" if first_won else "player_1"
            lines.append(f"last duel: player_0 arm {first} vs player_1 arm {second} -> {winner} won")
        lines.append(f"wins: player_0 {self._wins[0]}, player_1 {self._wins[1]}")
        if self._t:
            favourites = []
            for seat, plays in zip(_SEATS, self._plays):
                arm = int(np.argmax(plays))
                favourites.append(f"{seat} arm {arm} ({plays[arm]}/{self._t})")
            lines.append("most played: " + ", ".join(favourites))
        lines.append(
            "cumulative Copeland regret: "
            + ", ".join(f"{notion[len('copeland_'):]}={self._cumulative[notion]:.3f}"
                        for notion in ("copeland_komiyama", "copeland_zoghi"))
        )
        return "\n".join(lines) + "\n"

    def render(self) -> str | None:
        """``"human"``: print a text summary (returns ``None``); ``"ansi"``: return it as a string."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='human' or 'ansi'")
            return None
        text = self._text() if self._has_reset else "sparring_v0 (not reset)\n"
        if self.render_mode == "ansi":
            return text
        print(text, end="")
        return None

    def close(self) -> None:
        self._duels.close()

    def __str__(self) -> str:
        return "sparring_v0"


class SparringAECEnv(parallel_to_aec_wrapper):
    """The AEC (turn-based) form of :class:`SparringParallelEnv`: ``player_0`` acts, then ``player_1``.

    The duel is played when ``player_1`` acts; rewards, observations and infos then update for
    both players.  Unlike PettingZoo's generic converter, each action is validated as soon as it
    is given (``TypeError`` / ``ValueError`` with the player's name).  Takes the keyword
    arguments of :class:`SparringParallelEnv`.
    """

    def __init__(self, **kwargs: Any):
        super().__init__(SparringParallelEnv(**kwargs))

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not (self.terminations[agent] or self.truncations[agent]):
            self.env.check_action(agent, action)
        super().step(action)

    def __str__(self) -> str:
        return "sparring_v0"


def _observation(won: bool) -> np.ndarray:
    """A seat's observation: a fresh 0-d ``int64`` array, 1 iff its arm won."""
    return np.array(1 if won else 0, dtype=np.int64)


def _check_max_cycles(max_cycles: Any) -> int:
    if isinstance(max_cycles, bool) or not isinstance(max_cycles, (int, np.integer)):
        raise TypeError(f"max_cycles must be a positive integer, got {max_cycles!r}")
    if max_cycles < 1:
        raise ValueError(f"max_cycles must be a positive integer, got {max_cycles}")
    return int(max_cycles)


def parallel_env(**kwargs: Any) -> SparringParallelEnv:
    """The native parallel form (both players act at once); see :class:`SparringParallelEnv`."""
    return SparringParallelEnv(**kwargs)


def raw_env(**kwargs: Any) -> SparringAECEnv:
    """The AEC form without PettingZoo's wrappers (:class:`~dueling_gym.multiagent.sparring_v0.SparringAECEnv`)."""
    return SparringAECEnv(**kwargs)


def env(**kwargs: Any) -> wrappers.OrderEnforcingWrapper:
    """The AEC form wrapped in PettingZoo's ``OrderEnforcingWrapper``.

    ``AssertOutOfBoundsWrapper`` is not applied: the raw environment already rejects a bad
    action immediately with a ``ValueError``/``TypeError`` that names the player.
    ``pettingzoo.utils.aec_to_parallel(env())`` returns the underlying parallel environment.
    """
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))
