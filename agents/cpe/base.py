"""What every CPE-DB agent shares: the graph it may see, its per-round solver, its base classes.

Chen, Du, Huang and Zhao, *Combinatorial Pure Exploration for Dueling Bandits* (ICML 2020).

Combinatorial agents act in *edge* terms on a bipartite graph: ``act()`` returns a duel
``(e, e2)`` of two edges at the same position (``e == e2`` is a self-duel, a fair coin, used by
CLUCB-Borda), ``observe((e, e2), first_won)`` feeds back the outcome, ``recommend()`` returns a
matching (tuple of edge indices in position order) and ``done`` tells when the agent stopped.
They are driven by :func:`dueling_gym.experiments.run_pure_exploration` or a
plain loop over ``CombinatorialDuelEnv.step_edges``::

    agent = CLUCBBordaPAC(problem, delta=0.1, epsilon=0.02, seed=0)
    env.reset(seed=1)
    while not agent.done:
        e, e2 = agent.act()
        observation, *_ = env.step_edges(e, e2)
        agent.observe((e, e2), bool(observation))
    env.score_matching(agent.recommend())

:class:`~dueling_gym.agents.CombinatorialAgent` is deliberately **not** a :class:`~dueling_gym.agents.DuelingAgent`
(it has no ``n_arms``), so ``list_agents("dueling")`` and the K-armed sweeps never pick these
agents up; they are still registered, so ``make_agent("car_cond", problem, delta=0.05)`` works.

Agents only ever see the *graph*: the constructor copies the problem's candidates, positions
and edges into a problem with all-tied preferences (:func:`~dueling_gym.agents.cpe.graph_only`), and solves its
max-weight matchings with a :class:`MatchingSolver` prepared once.

Writing an algorithm as a generator
-----------------------------------
The CPE-DB algorithms have nested loops that consume an unknown number of duels (epochs,
rounds, sub-procedures, parallel instances).  :class:`GeneratorAgent` lets them be written as
a Python generator ``_run()`` that ``yield``\\ s each duel ``(e, e2)``, receives ``first_won``
through ``send`` and finally ``return``\\ s the answer (a matching, or ``None`` when the
algorithm failed/stalled), so the algorithms read like the paper's pseudo-code.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Generator, Iterable
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from dueling_gym.agents.base import ReplayPickling, SeededAgent
from dueling_gym.problems.bipartite import BipartiteDuelProblem, Matching, solve_covering_assignment
from dueling_gym.validation import check_action, check_outcome

__all__ = ["CombinatorialAgent", "GeneratorAgent", "CompiledAgent", "Duel", "graph_only", "MatchingSolver"]

SeedLike = int | np.random.SeedSequence | None
#: A duel of two comparable edges ``(e, e2)``; ``e == e2`` is a self-duel.
Duel = tuple[int, int]


def graph_only(source: Any) -> BipartiteDuelProblem:
    """The graph of ``source`` as a :class:`~dueling_gym.problems.BipartiteDuelProblem` with all-tied preferences.

    ``source`` is a :class:`~dueling_gym.problems.BipartiteDuelProblem` (only ``n_candidates``, ``n_positions`` and
    ``edges`` are read), a ``CombinatorialDuelEnv`` (or a Gymnasium wrapper of one; its
    current problem's graph is used) or a tuple ``(n_candidates, n_positions, edges)``.  The
    copy holds ``1/2`` on every comparable pair, so code that receives it cannot learn the true
    preferences.  Graph facts (comparable pairs, max-weight matchings, counting and sampling
    of maximum matchings) are identical to the original's.
    """
    if isinstance(source, tuple) and len(source) == 3:
        n_candidates, n_positions, edges = source
    else:
        problem = source
        if not isinstance(problem, BipartiteDuelProblem):
            unwrapped = getattr(source, "unwrapped", source)
            problem = getattr(unwrapped, "problem", None)
            if problem is None:   # an environment whose problem sampler has not drawn yet
                problem = getattr(unwrapped, "graph", None)
        if not isinstance(problem, BipartiteDuelProblem):
            raise TypeError(
                "combinatorial agents need a bipartite graph: a BipartiteDuelProblem, a CombinatorialDuelEnv or "
                f"(n_candidates, n_positions, edges); got {type(source).__name__}"
            )
        n_candidates, n_positions, edges = problem.n_candidates, problem.n_positions, problem.edges
    edges = np.array(edges, dtype=np.int64).reshape(-1, 2)
    return BipartiteDuelProblem.tied(int(n_candidates), int(n_positions), edges, name="graph")


class MatchingSolver:
    """Per-round MWMC calls on one graph without re-validating the graph each time.

    Calls :func:`~dueling_gym.problems.bipartite.solve_covering_assignment` (the library's one
    max-weight covering-matching routine) with the graph's index arrays prepared once; weights
    are only checked for finiteness.  Without constraints the position × candidate matrix is
    filled in place (the same ``-inf``-padded matrix and the same
    :func:`scipy.optimize.linear_sum_assignment` call), which saves the constraint
    bookkeeping in the hot loop of CLUCB-Borda.  Results are identical to
    ``graph.max_weight_matching`` (ties included: same matrix, same deterministic solver).
    """

    def __init__(self, graph: BipartiteDuelProblem):
        self.graph = graph
        self._candidates = np.asarray(graph.edge_candidates)
        self._positions = np.asarray(graph.edge_positions)
        self._edge_at = np.asarray(graph.edge_at)
        self._matrix = np.full((graph.n_positions, graph.n_candidates), -np.inf)
        self._feasible_shape = graph.n_positions <= graph.n_candidates

    def __call__(self, weights: NDArray[np.float64], *, required: Iterable[int] = (), forbidden: Iterable[int] = (),
                 maximize: bool = True) -> Matching | None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (self.graph.n_edges,) or not np.isfinite(weights).all():
            raise ValueError(f"weights must be {self.graph.n_edges} finite numbers")
        required, forbidden = list(required), list(forbidden)
        if required or forbidden or not maximize or not self._feasible_shape:
            return solve_covering_assignment(weights, self._candidates, self._positions, self._edge_at,
                                             self.graph.n_positions, self.graph.n_candidates,
                                             required, forbidden, maximize)
        from scipy.optimize import linear_sum_assignment  # first use only: SciPy's optimisers load slowly

        matrix = self._matrix
        matrix[self._positions, self._candidates] = weights
        rows, columns = linear_sum_assignment(matrix, maximize=True)
        return tuple(self._edge_at[rows, columns].tolist())


class CombinatorialAgent(SeededAgent):
    """A CPE-DB pure-exploration agent acting on the edges of a bipartite graph.

    Parameters
    ----------
    problem : dueling_gym.problems.BipartiteDuelProblem, dueling_gym.envs.CombinatorialDuelEnv or (n_candidates, n_positions, edges)
        The graph.  **Only** its candidates, positions and edges are read; the preferences are
        never looked at.
    seed : int, SeedSequence or None
        Seed of the agent's own ``numpy.random.Generator`` (``self.rng``).
    """

    #: Always True (CPE-DB is pure exploration with a stopping rule).
    pure_exploration: ClassVar[bool] = True
    #: The winner notion the agent identifies, ``"borda"`` or ``"condorcet"``.
    target: ClassVar[str] = ""

    def __init__(self, problem: Any, *, seed: SeedLike = None):
        self.graph: BipartiteDuelProblem = graph_only(problem)
        self.n_edges = self.graph.n_edges
        self.n_positions = self.graph.n_positions
        self.n_candidates = self.graph.n_candidates
        self.n_comparable_pairs = self.graph.n_comparable_pairs
        super().__init__(seed=seed)
        self._configure()
        self._reset_state()

    # ------------------------------------------------------------------ API
    def _configure(self) -> None:
        """Build graph-dependent helpers and validate hyperparameters against the graph (hook).

        Called once by ``__init__`` after :attr:`graph` is set and before ``_reset_state``.
        """

    @abstractmethod
    def act(self) -> Duel:
        """The next duel ``(e, e2)`` (same position; ``e == e2`` is a self-duel)."""

    @abstractmethod
    def observe(self, action: Duel, first_won: bool) -> None:
        """Learn from the outcome of ``action`` (``first_won`` True iff ``action[0]`` won)."""

    @abstractmethod
    def recommend(self) -> Matching:
        """The answer once :attr:`done`; before that, the agent's current guess."""

    @property
    @abstractmethod
    def done(self) -> bool:
        """True once the stopping rule has fired."""

    @property
    def failed(self) -> bool:
        """True when the algorithm ended without an answer of its own (an "error" or a stall)."""
        return False

    def current_guess(self) -> Matching:
        """The recommendation before stopping (default: scipy's max-weight matching under zero weights)."""
        matching = self.graph.max_weight_matching(np.zeros(self.n_edges))
        assert matching is not None
        return matching

    def _size_description(self) -> str:
        return f"graph: n_candidates={self.n_candidates}, n_positions={self.n_positions}, n_edges={self.n_edges}"

    # ------------------------------------------------------------------ helpers
    def _check_duel(self, action: Any) -> Duel:
        # The same rules as a K-armed duel (ordered pair of integers, no bools, sets or dicts),
        # with edges in place of arms.
        try:
            return check_action(action, self.n_edges)
        except TypeError:
            raise TypeError(f"action must be a pair of integer edges (e, e2), got {action!r}") from None
        except ValueError:
            raise ValueError(f"action {action!r} is out of range: edges are 0..{self.n_edges - 1}") from None


class _ReplayedAgent(ReplayPickling, CombinatorialAgent):
    """A combinatorial agent copied by replaying its outcomes (both kinds below): built on its
    graph, advanced by ``_advance(first_won)``."""

    def _replay_arguments(self) -> tuple[Any, ...]:
        return (self.graph,)

    def _replay_outcome(self, first_won: bool) -> None:
        self._advance(first_won)

    @abstractmethod
    def _advance(self, first_won: bool) -> None:
        """Advance the algorithm by one observed outcome (and log it for the replay)."""


class GeneratorAgent(_ReplayedAgent):
    """A :class:`~dueling_gym.agents.CombinatorialAgent` whose algorithm is the generator ``_run()``.

    ``_run()`` yields duels ``(e, e2)``; the value sent back is ``first_won`` (bool); its
    ``return`` value is the answer (a matching) or ``None`` for failure.  Subclasses implement
    ``_run`` and ``_reset_algorithm_state`` (plain attributes read by
    :meth:`~dueling_gym.agents.CombinatorialAgent.current_guess`),
    and may override :meth:`~dueling_gym.agents.CombinatorialAgent.current_guess` (the recommendation before stopping).

    Pickling and ``copy.deepcopy`` replay the outcomes observed since the last reset on a fresh
    copy (see :class:`~dueling_gym.agents.base.ReplayPickling`): a running generator cannot be
    copied.
    """

    def _reset_state(self) -> None:
        self._start_replay_log()
        self._answer: Matching | None = None
        self._done = False
        self._failed = False
        self.samples = 0
        self._reset_algorithm_state()
        self._generator = self._run()
        self._pending: Duel | None = None
        self._resume(None, start=True)

    def _reset_algorithm_state(self) -> None:
        """Initialise the attributes the generator updates (hook; default: nothing)."""

    @abstractmethod
    def _run(self) -> Generator[Duel, bool, Matching | None]:
        """The algorithm: ``first_won = yield (e, e2)`` per duel, ``return`` the answer."""

    def _resume(self, value: bool | None, *, start: bool = False) -> None:
        try:
            duel = next(self._generator) if start else self._generator.send(value)
        except StopIteration as stop:
            self._pending = None
            self._done = True
            answer = stop.value
            if answer is None:
                self._failed = True
                self._answer = self.current_guess()
            else:
                self._answer = tuple(sorted(int(e) for e in answer))
            return
        self._pending = (int(duel[0]), int(duel[1]))

    # ------------------------------------------------------------------ API
    def act(self) -> Duel:
        if self._done:
            raise RuntimeError(f"{type(self).__name__} has stopped (done=True); read recommend() or reset()")
        return self._pending  # type: ignore[return-value]

    def observe(self, action: Duel, first_won: bool) -> None:
        if self._done:
            raise RuntimeError(f"{type(self).__name__} has stopped (done=True); read recommend() or reset()")
        action = self._check_duel(action)
        first_won = check_outcome(first_won)
        if action != self._pending:
            raise ValueError(f"observe() got the outcome of {action}, but the agent asked for {self._pending}")
        self._advance(first_won)

    def _advance(self, first_won: bool) -> None:
        self.samples += 1
        self._log_outcome(first_won)
        self._resume(first_won)

    def recommend(self) -> Matching:
        if self._done:
            return self._answer  # type: ignore[return-value]
        return self.current_guess()

    @property
    def done(self) -> bool:
        return self._done

    @property
    def failed(self) -> bool:
        return self._failed



class CompiledAgent(_ReplayedAgent):
    """A :class:`~dueling_gym.agents.CombinatorialAgent` whose algorithm runs in compiled kernels.

    The algorithm is a state machine in NumPy arrays advanced by Numba kernels: an outcome goes
    in, the kernel updates the statistics and computes the next duel (or the answer).  Steps the
    kernels cannot take (a user-supplied sampler, an LP) stop the kernel in a *service* state
    that ``_serve()`` completes in Python.  Two ways to drive it:

    * ``act()`` / ``observe()`` (one kernel call per duel), as any agent;
    * :meth:`play_duels` against a :class:`~dueling_gym.agents.cpe.DuelSource`:
      a compiled loop plays many duels per call (what the pure-exploration runner does).

    Both give the same duels, outcomes and answer.  Pickling and ``copy.deepcopy`` replay the
    logged outcomes, as for :class:`GeneratorAgent`.

    Subclasses implement ``_reset_algorithm_state()`` (build the arrays and advance to the
    first duel), ``_step_kernel()``, ``_play_kernel()``, ``_status``,
    ``_pending_duel()`` and ``_final_answer()``, and may override ``_serve()`` and
    :meth:`~dueling_gym.agents.CombinatorialAgent.current_guess`.
    """

    #: Values of ``_status``.
    RUNNING, DONE, FAILED, SERVICE = 0, 1, 2, 3

    def _reset_state(self) -> None:
        self._start_replay_log()
        self.samples = 0
        self._reset_algorithm_state()
        self._serve()

    @abstractmethod
    def _reset_algorithm_state(self) -> None:
        """Build the state arrays and advance to the first duel (or the answer)."""

    @abstractmethod
    def _step_kernel(self, first_won: bool) -> None:
        """Feed the outcome of the pending duel to the kernels and advance to the next duel."""

    @abstractmethod
    def _play_kernel(self, source: tuple, budget: int) -> None:
        """Play up to ``budget`` duels from ``source`` (``DuelSource.arrays``) in compiled code."""

    @property
    @abstractmethod
    def _status(self) -> int:
        """``RUNNING``, ``DONE``, ``FAILED`` or ``SERVICE``."""

    @abstractmethod
    def _pending_duel(self) -> Duel:
        """The duel the kernels wait for."""

    @abstractmethod
    def _final_answer(self) -> Matching:
        """The answer once ``DONE``."""

    def _serve(self) -> None:
        """Complete the steps the kernels left to Python until a duel is pending or the run ends (hook)."""
        if self._status == self.SERVICE:  # pragma: no cover - only agents with a service state override this
            raise RuntimeError(f"{type(self).__name__} left a step to Python but has no _serve")

    # ------------------------------------------------------------------ API
    def act(self) -> Duel:
        if self.done:
            raise RuntimeError(f"{type(self).__name__} has stopped (done=True); read recommend() or reset()")
        return self._pending_duel()

    def observe(self, action: Duel, first_won: bool) -> None:
        if self.done:
            raise RuntimeError(f"{type(self).__name__} has stopped (done=True); read recommend() or reset()")
        action = self._check_duel(action)
        first_won = check_outcome(first_won)
        pending = self._pending_duel()
        if action != pending:
            raise ValueError(f"observe() got the outcome of {action}, but the agent asked for {pending}")
        self._advance(first_won)

    def _advance(self, first_won: bool) -> None:
        self.samples += 1
        self._log_outcome(first_won)
        self._step_kernel(bool(first_won))
        self._serve()

    def play_duels(self, source: Any, max_samples: int) -> int:
        """Play duels from ``source`` (a ``DuelSource``) until done or ``max_samples``; returns the count.

        The same run as ``act``/``observe`` against the same outcomes: the kernels are the same,
        only the loop is compiled.
        """
        played = 0
        while not self.done and played < max_samples:
            budget = source.begin_block(max_samples - played)
            self._play_kernel(source.arrays, budget)
            block = source.end_block()
            n = block.shape[0]
            self._replay_outcomes += block[:, 2].astype(np.uint8).tobytes()
            self.samples += n
            played += n
            self._serve()
        return played

    def recommend(self) -> Matching:
        status = self._status
        if status == self.DONE:
            return self._final_answer()
        return self.current_guess()

    @property
    def done(self) -> bool:
        return self._status in (self.DONE, self.FAILED)

    @property
    def failed(self) -> bool:
        return self._status == self.FAILED
