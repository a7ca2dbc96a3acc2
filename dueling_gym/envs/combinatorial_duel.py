"""Combinatorial pure exploration for dueling bandits as a Gymnasium environment (``CombinatorialDuel-v0``).

The environment is documented on :class:`~dueling_gym.envs.CombinatorialDuelEnv` (Gymnasium's sections).
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import index
from typing import Any, Callable, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec

from dueling_gym.envs._duels import DuelEngine
from dueling_gym.envs._render import blank_frame, frame_labels, preference_frame
from dueling_gym.envs.dueling_bandit import _record_sampler_as_json, _sampler_from_json
from dueling_gym.problems.bipartite import BipartiteDuelProblem
from dueling_gym.problems.datasets import load_bipartite_problem
from dueling_gym.problems.generators import BipartiteProblemSampler
from dueling_gym.validation import check_discrete_action, check_reset_options, check_seed

__all__ = ["CombinatorialDuelEnv"]

_OBSERVATIONS = (np.int64(0), np.int64(1))
#: The default problem's name, which ``gym.spec("CombinatorialDuel-v0").kwargs`` shows.
DEFAULT_PROBLEM = "five_edge"


class CombinatorialDuelEnv(gym.Env[np.int64, np.int64]):
    """Combinatorial pure exploration for dueling bandits (Chen, Du, Huang, Zhao, ICML 2020).

    ## Description

    Candidates fill positions of a bipartite graph; an edge ``e = (c, s)`` says candidate ``c``
    can fill position ``s``.  Two edges at the same position can duel: ``e`` beats ``e'`` with
    an unknown probability ``p_{e,e'}``.  The learner duels edges, one duel per step, and
    eventually recommends a matching covering every position: the *Borda matching* (best
    average preference against a uniformly random matching) or the *Condorcet matching* (beats
    every other matching).  The environment holds a
    :class:`~dueling_gym.problems.BipartiteDuelProblem`; the default is the 5-edge example of
    the paper (its Figures 1-4; Borda winner ``{e1, e5}``, Condorcet winner ``{e2, e5}``).
    Pure-exploration runs are scored with :meth:`score_matching` (correct winner? Borda gap?
    samples used?), which plays the role of the episode's outcome.

    A duel draws one uniform ``u`` from ``np_random`` and the first edge wins iff
    ``u < p_{first, second}`` (``1/2`` for a self-duel).

    ## Action Space

    ``Discrete(K)``, one action per comparable pair (``K`` = the number of pairs of distinct
    edges sharing a position).  Action ``k`` duels ``duels[k] = (position, e, e')`` with
    ``e < e'``; the table is the public attribute ``duels`` (equal to the problem's
    ``comparable_pairs``).  Every action in the space is valid; ``step`` takes a Python or
    NumPy integer (or an integer array of shape ``()`` or ``(1,)``) and refuses bools, floats
    and containers with a ``TypeError``.  Agents that act in edge terms
    call :meth:`step_edges` (which also allows the self-duel ``e == e'``, a fair coin, needed by
    CLUCB-Borda when the sampled matching contains the edge being estimated).

    ## Observation Space

    ``Discrete(2)``: ``1`` if the first edge of the duel won, ``0`` otherwise (``0`` after
    reset).  Returned as ``np.int64``.

    ## Rewards

    Minus the *position's Copeland regret* of the duel, a Python float in ``[-1, 0]``.  The
    edges of one position form an ordinary dueling bandit; with ``L_e`` the number of edges of
    that position that beat ``e`` with probability above 1/2 (strict losses) and ``L^(1)`` their
    minimum, the regret of duelling ``e`` and ``e'`` is the Komiyama et al. (2016) scale
    ``(L_e + L_e' - 2 L^(1)) / (2 (|E_s| - 1))``, zero iff both edges are Copeland winners of
    their position.  CPE-DB itself is pure exploration (cost = number of duels); the
    reward exists so that reinforcement-learning methods can train on the environment.

    ## Info

    ``reset`` returns ``{"t": 0, "cumulative_regret": 0.0}``; every step returns a fresh dict:

    * ``info["duel"]``: the index ``k`` of the comparable pair played, an ``int`` on every
      ``step``; only :meth:`step_edges`, which vector environments never call, reports a
      self-duel, with ``None``;
    * ``info["position"]``: the position ``s`` both edges belong to;
    * ``info["edges"]``: the edges actually duelled, ``(first, second)``, first edge first;
    * ``info["regret"]``: this duel's position Copeland regret (a float);
    * ``info["cumulative_regret"]``: its running total over the episode;
    * ``info["t"]``: duels so far this episode (self-duels included).

    ## Starting State

    No duels played; observation ``0``.  With ``problem_sampler`` a fresh problem (same graph,
    new preferences) is drawn from ``np_random`` at every reset.

    ## Episode End

    The environment never terminates on its own; ``gymnasium.make("CombinatorialDuel-v0")``
    truncates after ``max_episode_steps`` duels (a ``TimeLimit``, default 10 000).

    ## Arguments

    ```python
    import gymnasium as gym
    import dueling_gym
    from dueling_gym.problems import BipartiteProblemSampler

    env = gym.make("CombinatorialDuel-v0")                      # the paper's 5-edge example
    env = gym.make("CombinatorialDuel-v0", problem="five_edge", render_mode="ansi")
    env = gym.make("CombinatorialDuel-v0",
                   problem_sampler=BipartiteProblemSampler(3, 5, planted_condorcet=True))
    ```

    * ``problem``: a :class:`~dueling_gym.problems.BipartiteDuelProblem` or a name from
      :data:`~dueling_gym.problems.datasets.BIPARTITE_PROBLEMS` (``"five_edge"``); default the 5-edge
      example, registered as ``kwargs={"problem": "five_edge"}`` (so ``gym.spec`` shows it), which
      gives way to a ``problem_sampler`` passed to ``gym.make``.
    * ``problem_sampler``: a callable ``rng -> BipartiteDuelProblem`` called at every reset,
      exclusive with ``problem``.  All its problems must share one graph (the action space is
      fixed), e.g. :class:`~dueling_gym.problems.BipartiteProblemSampler`, which may also be
      given in its JSON form (its ``to_json()`` dict).  ``gymnasium.make`` records a
      ``BipartiteProblemSampler`` in ``env.spec`` in that form, so ``env.spec.to_json()`` works
      and rebuilds the same environment; for other callables ``to_json`` raises a
      ``ValueError`` naming ``problem_sampler``.
    * ``render_mode``: ``"ansi"`` returns the per-pair duel counts and wins as text;
      ``"rgb_array"`` an ``(H, W, 3)`` ``uint8`` frame with heat maps over the edges: the
      empirical preferences ``W[e, e'] / (W[e, e'] + W[e', e])`` and the duel counts
      (:attr:`edge_win_counts`), pairs of edges at different positions drawn dark, labelled
      with the edges' indices and the step ``t``.  ``"human"`` is refused (a ``ValueError`` at
      ``gym.make``): the environment draws no window.

    ## Version History

    * v0: initial version.  The ``rgb_array`` render mode was added later without a version
      bump: it changes no transition, reward or info.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    _spec: EnvSpec | None = None

    @property
    def spec(self) -> EnvSpec | None:
        """How ``gymnasium.make`` built the environment (``None`` when built directly).

        A :class:`~dueling_gym.problems.BipartiteProblemSampler` among its ``kwargs`` is recorded
        in its JSON form, so ``spec.to_json()`` works and ``gym.make(spec)`` rebuilds the environment.
        """
        return self._spec

    @spec.setter
    def spec(self, spec: EnvSpec | None) -> None:
        self._spec = _record_sampler_as_json(spec, BipartiteProblemSampler, give_way=self.registered_default_gives_way)

    @staticmethod
    def registered_default_gives_way(kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` without the registered default ``problem="five_edge"`` when a ``problem_sampler``
        is also given (``gym.make("CombinatorialDuel-v0", problem_sampler=...)`` passes both)."""
        if kwargs.get("problem_sampler") is not None and kwargs.get("problem") == DEFAULT_PROBLEM:
            return {key: value for key, value in kwargs.items() if key != "problem"}
        return kwargs

    def __init__(
        self,
        problem: BipartiteDuelProblem | str | None = None,
        *,
        problem_sampler: Callable[[np.random.Generator], BipartiteDuelProblem] | Mapping[str, Any] | None = None,
        render_mode: str | None = None,
    ):
        if problem is not None and problem_sampler is not None:
            raise ValueError("give either problem= (a fixed problem) or problem_sampler=, not both")
        if isinstance(problem_sampler, Mapping):
            problem_sampler = _sampler_from_json(BipartiteProblemSampler, problem_sampler)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.render_mode = render_mode
        self.problem_sampler = problem_sampler
        self.problem: BipartiteDuelProblem | None = None
        if problem_sampler is None:
            fixed = self._as_problem(DEFAULT_PROBLEM if problem is None else problem)
            graph = fixed
        else:
            if not callable(problem_sampler):
                raise TypeError(f"problem_sampler must be callable (rng -> BipartiteDuelProblem), got {problem_sampler!r}")
            fixed = None
            # One throwaway draw reveals the graph, hence the action space, before any reset.
            graph = self._checked_draw(problem_sampler(np.random.default_rng(0)), None)
        if graph.n_comparable_pairs == 0:
            raise ValueError(f"{graph!r} has no comparable pairs (every position has a single edge): nothing to duel")
        self._graph = graph
        self.duels: tuple[tuple[int, int, int], ...] = tuple(
            (int(j), int(a), int(b)) for j, a, b in graph.comparable_pairs.tolist()
        )
        self.n_duels = len(self.duels)
        self.n_edges = graph.n_edges
        self.action_space = spaces.Discrete(self.n_duels)
        self.observation_space = spaces.Discrete(2)

        # The duel engine's table: row k is duels[k] as listed (first edge e < e'), row
        # n_duels + k the same pair the other way round, row 2 n_duels + e the self-duel of e.
        self._engine = DuelEngine(("position_copeland",))
        self._duel = self._engine.duel
        self._needs_reset = True
        if fixed is not None:
            self._install(fixed)

    @property
    def engine(self) -> DuelEngine:
        """The duel engine of the episode.

        Row ``k`` of its table is ``duels[k]``, row ``n_duels + k`` the same pair the other way
        round, row ``2 n_duels + e`` the self-duel of ``e``."""
        return self._engine

    # ------------------------------------------------------------------ problem handling
    @property
    def graph(self) -> BipartiteDuelProblem:
        """The graph every problem of this environment is drawn on (candidates, positions, edges).

        The fixed problem itself, or with ``problem_sampler`` the first draw that fixed the action
        space (not one of the problems duelled on): read only its graph, e.g. to build an agent
        before the first reset.
        """
        return self._graph

    @staticmethod
    def _as_problem(problem: Any) -> BipartiteDuelProblem:
        if isinstance(problem, BipartiteDuelProblem):
            return problem
        if isinstance(problem, str):
            return load_bipartite_problem(problem)
        raise TypeError(f"problem must be a BipartiteDuelProblem or a problem name, got {type(problem).__name__}")

    def _checked_draw(self, drawn: Any, graph: BipartiteDuelProblem | None) -> BipartiteDuelProblem:
        if not isinstance(drawn, BipartiteDuelProblem):
            raise TypeError(f"problem_sampler must return a BipartiteDuelProblem, got {type(drawn).__name__}")
        if graph is not None and not graph.same_graph(drawn):
            raise ValueError(
                "problem_sampler returned a problem on a different graph; the action space is one action per "
                "comparable pair, so every sampled problem must share the graph (redraw only the preferences, "
                "e.g. BipartiteProblemSampler(..., edges=...))"
            )
        return drawn

    def _install(self, problem: BipartiteDuelProblem) -> None:
        self.problem = problem
        pairs = problem.comparable_pairs
        p_first = np.asarray(problem.preferences[pairs[:, 1], pairs[:, 2]], dtype=np.float64)
        regrets = np.asarray(problem.duel_copeland_regrets, dtype=np.float64)
        self_regrets = np.array([problem.copeland_regret(edge, edge) for edge in range(self.n_edges)])
        self._engine.load(np.column_stack([
            np.concatenate([p_first, 1.0 - p_first, np.full(self.n_edges, 0.5)]),
            np.concatenate([regrets, regrets, self_regrets]),
        ]))

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.int64, dict[str, Any]]:
        check_reset_options(options)
        super().reset(seed=check_seed("seed", seed, allow_sequence=False))
        if self.problem_sampler is not None:
            self._install(self._checked_draw(self.problem_sampler(self.np_random), self._graph))
        self._engine.reset(self.np_random)
        self._needs_reset = False
        return _OBSERVATIONS[0], {"t": 0, "cumulative_regret": 0.0}

    def _check_ready(self) -> None:
        if self._needs_reset:
            raise gym.error.ResetNeeded("call reset() before step()")

    def step(self, action: Any) -> tuple[np.int64, SupportsFloat, bool, bool, dict[str, Any]]:
        """Duel ``duels[action]``; observation 1 iff its first edge won."""
        if self._needs_reset:
            raise gym.error.ResetNeeded("call reset() before step()")
        duel = check_discrete_action(action, self.n_duels)
        position, first, second = self.duels[duel]
        first_won, (regret,) = self._duel(duel)
        engine = self._engine
        info = {
            "duel": duel,
            "position": position,
            "edges": (first, second),
            "regret": regret,
            "cumulative_regret": engine.cumulative[0],
            "t": engine.t,
        }
        # 0.0 - r rather than -r: no negative zero in the reward
        return _OBSERVATIONS[first_won], 0.0 - regret, False, False, info

    def step_edges(self, edge: int, other: int) -> tuple[np.int64, SupportsFloat, bool, bool, dict[str, Any]]:
        """Duel two comparable edges directly (agents act in edge terms).

        ``edge`` may equal ``other``: a self-duel is a fair coin (``p_{e,e} = 1/2``) and is
        counted as a sample.  The observation is 1 iff ``edge`` won.

        Raises
        ------
        TypeError
            If an edge is not an integer.
        ValueError
            If an edge is out of range or the two edges are at different positions.
        """
        self._check_ready()
        edges = []
        for label, value in (("edge", edge), ("other", other)):
            if isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{label} must be an integer edge index, got the boolean {value!r}")
            try:
                value = index(value)
            except TypeError:
                raise TypeError(f"{label} must be an integer edge index, got {value!r}") from None
            if not 0 <= value < self.n_edges:
                raise ValueError(f"{label} {value} is out of range: edges are 0..{self.n_edges - 1}")
            edges.append(value)
        edge, other = edges
        problem = self.problem
        if not problem.are_comparable(edge, other):
            raise ValueError(
                f"edges {edge} and {other} are incomparable (positions {int(problem.edge_positions[edge])} and "
                f"{int(problem.edge_positions[other])}); only edges at the same position can duel"
            )
        position = int(problem.edge_positions[edge])
        if edge == other:
            first_won, (regret,) = self._duel(2 * self.n_duels + edge)
            return self._finish(first_won, None, position, edge, other, regret)
        duel = problem.pair_index(edge, other)
        row = duel if edge == self.duels[duel][1] else self.n_duels + duel
        first_won, (regret,) = self._duel(row)
        return self._finish(first_won, duel, position, edge, other, regret)

    def _finish(self, first_won: bool, duel: int | None, position: int, first: int, second: int,
                regret: float) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        info = {
            "duel": duel,
            "position": position,
            "edges": (first, second),
            "regret": regret,
            "cumulative_regret": self._engine.cumulative[0],
            "t": self._engine.t,
        }
        # 0.0 - r rather than -r: no negative zero in the reward
        return _OBSERVATIONS[first_won], 0.0 - regret, False, False, info

    # ------------------------------------------------------------------ scoring and inspection
    def score_matching(self, matching: Any) -> dict[str, Any]:
        """Score a recommended matching against the current problem.

        Returns
        -------
        dict
            ``valid`` (a matching covering every position?), ``is_borda_winner``,
            ``is_condorcet_winner``, ``borda_score``, ``borda_gap`` ``B(M^B) - B(M)`` (``None``
            when invalid; see
            :meth:`BipartiteDuelProblem.score <dueling_gym.problems.BipartiteDuelProblem.score>`) and
            ``samples``, the number
            of duels played this episode.
        """
        if self.problem is None:
            raise gym.error.ResetNeeded("call reset() before score_matching() (no problem drawn yet)")
        result = self.problem.score(matching)
        result["samples"] = self._engine.t
        return result

    def _engine_counts(self) -> tuple[np.ndarray, np.ndarray]:
        if self._engine.n_rows == 0:  # a sampler's env before its first reset
            size = 2 * self.n_duels + self.n_edges
            return np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
        return self._engine.counts, self._engine.first_wins

    @property
    def duel_counts(self) -> np.ndarray:
        """How often each action (comparable pair) was duelled this episode."""
        counts, _ = self._engine_counts()
        return counts[:self.n_duels] + counts[self.n_duels:2 * self.n_duels]

    @property
    def duel_wins(self) -> np.ndarray:
        """How often the first edge of each ``duels[k]`` won this episode."""
        counts, first_wins = self._engine_counts()
        n = self.n_duels
        return first_wins[:n] + (counts[n:2 * n] - first_wins[n:2 * n])

    @property
    def self_duel_counts(self) -> np.ndarray:
        """Self-duels (via :meth:`step_edges`) per edge this episode."""
        counts, _ = self._engine_counts()
        return counts[2 * self.n_duels:]

    @property
    def edge_win_counts(self) -> np.ndarray:
        """How often edge ``e`` beat edge ``e'`` this episode, ``W[e, e']`` (self-duels on the diagonal)."""
        counts, first_wins = self._engine_counts()
        n = self.n_duels
        wins = np.zeros((self.n_edges, self.n_edges), dtype=np.int64)
        pairs = np.array(self.duels, dtype=np.int64).reshape(-1, 3)
        first, second = pairs[:, 1], pairs[:, 2]
        wins[first, second] = first_wins[:n] + (counts[n:2 * n] - first_wins[n:2 * n])
        wins[second, first] = (counts[:n] - first_wins[:n]) + first_wins[n:2 * n]
        wins[np.diag_indices(self.n_edges)] = counts[2 * n:]
        return wins

    @property
    def samples(self) -> int:
        """Duels played this episode (self-duels included)."""
        return self._engine.t

    @property
    def cumulative_regret(self) -> float:
        """Position Copeland regret accumulated this episode."""
        return self._engine.cumulative[0]

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: per-pair duel counts and wins as text; ``"rgb_array"``: heat maps of the
        empirical preferences and of the duel counts between edges (incomparable pairs dark),
        labelled with the edges, axis labels and colour bars, under a title naming the
        environment, its problem and the step ``t``, an ``(H, W, 3)`` ``uint8`` array."""
        if self.render_mode is None:
            gym.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi' or 'rgb_array' to the constructor"
            )
            return None
        if self.render_mode == "rgb_array":
            if self.problem is None or self._needs_reset:
                return blank_frame(**frame_labels(self), contestant="edge")
            positions = np.asarray(self.problem.edge_positions)
            return preference_frame(self.edge_win_counts, positions[:, None] == positions[None, :], t=self._engine.t,
                                    **frame_labels(self), contestant="edge")
        if self.problem is None or self._needs_reset:
            return "(not reset)\n"
        name = self.problem.name or "custom"
        counts, wins_of_first, self_duel_counts = self.duel_counts.tolist(), self.duel_wins.tolist(), \
            self.self_duel_counts.tolist()
        lines = [f"t={self._engine.t}  problem={name}  cumulative_regret={self.cumulative_regret:.3f}",
                 f"{'k':>4} {'pos':>4} {'e':>4} {'e2':>4} {'duels':>7} {'wins(e)':>8} {'rate':>6}"]
        for k, (position, first, second) in enumerate(self.duels):
            count, wins = counts[k], wins_of_first[k]
            rate = f"{wins / count:.3f}" if count else "-"
            lines.append(f"{k:>4} {position:>4} {first:>4} {second:>4} {count:>7} {wins:>8} {rate:>6}")
        self_duels = sum(self_duel_counts)
        if self_duels:
            lines.append(f"self-duels: {self_duels} ("
                         + ", ".join(f"edge {e}: {n}" for e, n in enumerate(self_duel_counts) if n) + ")")
        return "\n".join(lines) + "\n"
