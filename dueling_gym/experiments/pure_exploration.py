"""Running pure-exploration agents to their stopping time and scoring their answers.

:func:`~dueling_gym.experiments.run_pure_exploration` drives two kinds of agents until they stop (or a sample cap):

* a combinatorial agent of :mod:`dueling_gym.agents.cpe` (CLUCB-Borda-PAC/Exact,
  CAR-Cond/Verify/Parallel) on a :class:`~dueling_gym.envs.CombinatorialDuelEnv`, scored with
  :meth:`CombinatorialDuelEnv.score_matching <dueling_gym.envs.CombinatorialDuelEnv.score_matching>`:
  compiled agents play blocks of duels in their
  own compiled loop, drawing the environment's outcomes exactly as
  :meth:`CombinatorialDuelEnv.step_edges <dueling_gym.envs.CombinatorialDuelEnv.step_edges>` would and
  leaving the environment in the same state;
  other agents go through ``step_edges`` one duel at a time;
* a ``K``-armed identification agent (:mod:`dueling_gym.agents.identification`: Knockout,
  Single-Elimination, Sequential Elimination, ...) on a preference matrix, in one compiled loop
  for kernel agents, scored by its answer type: the winner under the agent's target notion, a
  ranking (Kendall tau to the true order) or a top-``k`` set.

Pure exploration reports a sample complexity and an error rate, not regret.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dueling_gym.agents.base import DuelingAgent, KernelDuelingAgent
from dueling_gym.agents.cpe import DuelSource
from dueling_gym.envs.combinatorial_duel import CombinatorialDuelEnv
from dueling_gym.experiments.kernel_loops import loop_for
from dueling_gym.experiments.ranking_metrics import (
    epsilon_condorcet_correct,
    kendall_tau,
    ranking_correct,
    top_k_correct,
    true_ranking,
    winner_correct,
)
from dueling_gym.experiments.simulate import derive_seeds
from dueling_gym.problems.bipartite import BipartiteDuelProblem
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.problems.loading import as_preference_matrix
from dueling_gym.validation import check_integer

__all__ = ["PureExplorationResult", "run_pure_exploration", "DEFAULT_MAX_SAMPLES", "kendall_tau", "top_k_correct",
           "true_ranking", "winner_correct"]

#: Default cap on the number of duels of one run.
DEFAULT_MAX_SAMPLES = 10_000_000


@dataclass
class PureExplorationResult:
    """Outcome of one pure-exploration run.

    Attributes
    ----------
    agent : str
        The agent's registry name (class name if unregistered).
    target : str
        ``"borda"``, ``"condorcet"`` or (``K``-armed agents) ``"copeland"``: the winner notion
        the agent identifies.
    recommendation : tuple of int
        The returned matching (edge indices in position order); for a ``K``-armed agent its
        answer: ``(winner,)``, the ranking (best first) or the top-``k`` arms.
    samples : int
        Duels played (self-duels included).
    stopped : bool
        True if the agent's stopping rule fired; False if the run hit ``max_samples``.
    failed : bool
        True if the agent ended without an answer of its own (CAR-Verify "error", a stall).
    correct : bool
        Stopped, not failed, and the answer is right: the target winner (Borda matching for
        CLUCB-Borda, Condorcet matching for the CAR agents; the top arm of a ``K``-armed
        agent's answer); for ``"top_k"`` answers a set of ``k`` best arms; for ``"ranking"``
        answers no pair ranked against the true order.
    epsilon_correct : bool or None
        For agents with an ``epsilon``: stopped, not failed and the answer meets the PAC
        guarantee (Borda: ``B(best) - B(out) <= ε``; Condorcet: ``P[i*, out] <= 1/2 + ε``);
        ``None`` otherwise.
    valid, is_borda_winner, is_condorcet_winner, borda_score, borda_gap
        :meth:`CombinatorialDuelEnv.score_matching <dueling_gym.envs.CombinatorialDuelEnv.score_matching>`
        of the recommendation; for ``K``-armed
        agents the same facts about the answer's top arm.
    wall_time : float
        Seconds spent in the agent/environment loop.
    seed : int or None
        Run seed.
    problem : str or None
        Name of the problem.
    answer_type : str
        ``"matching"`` (combinatorial agents), ``"winner"``, ``"ranking"`` or ``"top_k"``.
    winner : int or None
        ``K``-armed agents: the answer's top arm.
    winner_correct : bool or None
        ``K``-armed agents: the top arm is a winner under ``target`` (whether or not stopped).
    kendall_tau : float or None
        ``"ranking"`` answers: Kendall tau between the answer and the true order under
        ``target`` (:func:`~dueling_gym.experiments.ranking_metrics.kendall_tau`).
    k, top_k_correct : int or None, bool or None
        ``"top_k"`` answers: ``k`` and whether the answer is exactly a set of ``k`` best arms.
    duels : ndarray or None
        Combinatorial agents run with ``record_duels=True``: every duel played, rows
        ``(e, e2, first_won)`` in order, shape ``(samples, 3)``; ``None`` otherwise.
    """

    agent: str
    target: str
    recommendation: tuple[int, ...]
    samples: int
    stopped: bool
    failed: bool
    correct: bool
    epsilon_correct: bool | None
    valid: bool
    is_borda_winner: bool
    is_condorcet_winner: bool
    borda_score: float | None
    borda_gap: float | None
    wall_time: float
    seed: int | None = None
    problem: str | None = None
    answer_type: str = "matching"
    winner: int | None = None
    winner_correct: bool | None = None
    kendall_tau: float | None = None
    k: int | None = None
    top_k_correct: bool | None = None
    duels: np.ndarray | None = None

    @property
    def time_per_sample(self) -> float:
        """Wall time per duel (seconds; ``nan`` without samples)."""
        return self.wall_time / self.samples if self.samples else float("nan")

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python dict (JSON-friendly)."""
        out = asdict(self)
        out["recommendation"] = list(self.recommendation)
        out["duels"] = None if self.duels is None else self.duels.tolist()
        out["time_per_sample"] = self.time_per_sample
        return out


def _as_env(env_or_problem: Any) -> CombinatorialDuelEnv:
    if isinstance(env_or_problem, (BipartiteDuelProblem, str)):
        return CombinatorialDuelEnv(env_or_problem)
    env = getattr(env_or_problem, "unwrapped", env_or_problem)
    if not isinstance(env, CombinatorialDuelEnv):
        raise TypeError("env_or_problem must be a CombinatorialDuelEnv (possibly wrapped), a BipartiteDuelProblem or "
                        f"a bipartite problem name; got {type(env_or_problem).__name__}")
    return env


def _combinatorial_duel_source(env: CombinatorialDuelEnv, *, record: bool) -> DuelSource:
    """The environment's duel table, unused uniforms and totals as a :class:`DuelSource`.

    The compiled loop replays :meth:`DuelEngine.duel <dueling_gym.envs.DuelEngine.duel>` on the
    environment's own table
    (:attr:`CombinatorialDuelEnv.engine <dueling_gym.envs.CombinatorialDuelEnv.engine>` says its layout); uniforms are
    drawn in the engine's blocks from the engine's generator.
    """
    engine = env.engine
    n_duels, n_edges = env.n_duels, env.n_edges
    row_of = np.full((n_edges, n_edges), -1, dtype=np.int64)
    for k, (_, first, second) in enumerate(env.duels):
        row_of[first, second] = k
        row_of[second, first] = n_duels + k
    row_of[np.arange(n_edges), np.arange(n_edges)] = 2 * n_duels + np.arange(n_edges)
    table = engine.table()
    return DuelSource(table[:, 0], row_of, table[:, 1], engine.unused_uniforms(), engine.draw_uniforms,
                      record=record, total=engine.cumulative[0])


def _write_back(env: CombinatorialDuelEnv, source: DuelSource) -> None:
    """Leave the environment's engine as the duel-by-duel loop would have: counts, totals, uniforms."""
    env.engine.record_played(source.counts, source.first_wins, [float(source.totals[0])], source.remaining_uniforms)


def run_pure_exploration(agent: Any, env_or_problem: Any, *, seed: int | None = 0,
                         max_samples: int = DEFAULT_MAX_SAMPLES, fused: bool | None = None,
                         record_duels: bool = False) -> PureExplorationResult:
    """Run a pure-exploration agent until it stops (or ``max_samples`` duels) and score its answer.

    Parameters
    ----------
    agent : dueling_gym.agents.CombinatorialAgent or dueling_gym.agents.DuelingAgent
        A combinatorial agent, e.g. ``CLUCBBordaPAC(problem, delta=0.1, epsilon=0.02)``, built
        on the same graph as the environment's problem; or a ``K``-armed agent with
        ``pure_exploration = True`` (e.g. ``Knockout(8, epsilon=0.05, delta=0.1)``).
    env_or_problem : dueling_gym.envs.CombinatorialDuelEnv, dueling_gym.problems.BipartiteDuelProblem, dueling_gym.problems.PreferenceMatrix, array or str
        Combinatorial agents: the environment (Gymnasium wrappers are unwrapped: the
        ``TimeLimit`` of ``gym.make`` would otherwise cut the run), or a problem / problem name
        to build one.  ``K``-armed agents: a preference matrix or a shipped problem name; the
        duels are drawn exactly as ``DuelingBandit-v0`` draws them after ``reset(seed=env_seed)``
        (one uniform per duel, the first arm wins iff it is below ``P[first, second]``).
    seed : int or None, default 0
        Run seed: :func:`~dueling_gym.experiments.derive_seeds` splits it into the
        environment's and the agent's seeds, and the agent is reset with its seed.  ``None``
        resets the environment unseeded and the agent without re-seeding.
    max_samples : int, default 10**7
        Cap on the number of duels.
    fused : bool, optional
        Force (True) or forbid (False) the compiled loop; default: compiled for kernel
        identification agents and for combinatorial agents with ``play_duels`` (the compiled
        CPE-DB agents).  Both loops give the same run, duel for duel.
    record_duels : bool, default False
        Combinatorial agents: keep every duel in ``PureExplorationResult.duels``.

    Returns
    -------
    PureExplorationResult
        Samples used, whether the answer is correct (Borda or Condorcet as appropriate for the
        agent; Kendall tau and top-``k`` correctness for ranking answers), the Borda gap of the
        answer and the wall time.

    Examples
    --------
    >>> from dueling_gym.agents.cpe import CARCond
    >>> from dueling_gym.problems import random_bipartite_problem
    >>> problem = random_bipartite_problem(2, 3, np.random.default_rng(0), planted_condorcet=True, min_gap=0.4)
    >>> result = run_pure_exploration(CARCond(problem, delta=0.1), problem, seed=0)
    >>> result.stopped, result.correct
    (True, True)
    """
    max_samples = check_integer("max_samples", max_samples, minimum=0)
    if isinstance(agent, DuelingAgent):
        return _run_k_armed(agent, env_or_problem, seed=seed, max_samples=int(max_samples), fused=fused)
    env = _as_env(env_or_problem)
    if seed is None:
        env.reset()
        agent.reset()
    else:
        env_seed, agent_seed = derive_seeds(seed)
        env.reset(seed=env_seed)
        agent.reset(seed=agent_seed)
    if not agent.graph.same_graph(env.problem):
        raise ValueError("the agent was built on a different graph than the environment's problem")
    duels, wall_time = _play_combinatorial(agent, env, int(max_samples), fused, record_duels)
    return _combinatorial_result(agent, env, seed=seed, wall_time=wall_time, duels=duels)


def _play_combinatorial(agent: Any, env: CombinatorialDuelEnv, max_samples: int, fused: bool | None,
                        record_duels: bool) -> tuple[np.ndarray | None, float]:
    """Duels until the agent stops or ``max_samples``, in its compiled loop when it has one.

    Returns the duels (when recorded) and the seconds spent playing them.
    """
    if fused and not hasattr(agent, "play_duels"):
        raise ValueError(f"{type(agent).__name__} cannot run in a compiled loop; use fused=False")
    if fused is False or not hasattr(agent, "play_duels"):
        start = time.perf_counter()
        duels = _duel_by_duel(agent, env, max_samples, record_duels)
        return duels, time.perf_counter() - start
    source = _combinatorial_duel_source(env, record=record_duels)
    start = time.perf_counter()
    try:
        agent.play_duels(source, max_samples)
    finally:   # the duels played so far stay played, even if the agent raised
        _write_back(env, source)
    return (source.duels if record_duels else None), time.perf_counter() - start


def _combinatorial_result(agent: Any, env: CombinatorialDuelEnv, *, seed: int | None, wall_time: float,
                          duels: np.ndarray | None) -> PureExplorationResult:
    """Score a combinatorial agent's recommended matching against the environment's problem."""
    recommendation = tuple(int(e) for e in agent.recommend())
    score = env.score_matching(recommendation)
    target = getattr(agent, "target", "") or "borda"
    stopped = bool(agent.done)
    failed = bool(getattr(agent, "failed", False))
    is_winner = score["is_borda_winner"] if target == "borda" else score["is_condorcet_winner"]
    correct = stopped and not failed and bool(is_winner)
    epsilon = getattr(agent, "epsilon", None)
    epsilon_correct = None
    if epsilon is not None and target == "borda":
        epsilon_correct = (stopped and not failed and score["borda_gap"] is not None
                           and score["borda_gap"] <= float(epsilon) + 1e-12)
    return PureExplorationResult(
        agent=getattr(agent, "name", "") or type(agent).__name__,
        target=target,
        recommendation=recommendation,
        samples=int(score["samples"]),
        stopped=stopped,
        failed=failed,
        correct=correct,
        epsilon_correct=epsilon_correct,
        valid=bool(score["valid"]),
        is_borda_winner=bool(score["is_borda_winner"]),
        is_condorcet_winner=bool(score["is_condorcet_winner"]),
        borda_score=score["borda_score"],
        borda_gap=score["borda_gap"],
        wall_time=wall_time,
        seed=seed,
        problem=env.problem.name,
        duels=duels,
    )


def _duel_by_duel(agent: Any, env: CombinatorialDuelEnv, max_samples: int, record: bool) -> np.ndarray | None:
    """``act`` / ``step_edges`` / ``observe`` until the agent stops or ``max_samples`` duels."""
    step_edges = env.step_edges
    samples = 0
    played: list[tuple[int, int, int]] = []
    while not agent.done and samples < max_samples:
        first, second = agent.act()
        first_won = bool(step_edges(first, second)[0])
        agent.observe((first, second), first_won)
        if record:
            played.append((first, second, int(first_won)))
        samples += 1
    return np.array(played, dtype=np.int64).reshape(-1, 3) if record else None


def _fused_until_done(state, env_rng, matrix, max_samples):  # pragma: no cover - compiled per agent class
    """Duels until ``done(state)`` or ``max_samples``; returns the number of duels played.

    ``act``, ``observe`` and ``done`` are the agent's kernels, bound as globals per agent class
    (:func:`~dueling_gym.experiments.kernel_loops.loop_for`), so the loop is cached on disk.
    """
    n_arms = matrix.shape[0]
    samples = 0
    while samples < max_samples and not done(state):  # noqa: F821 - bound per agent class
        first, second = act(state)  # noqa: F821
        if first < 0 or first >= n_arms or second < 0 or second >= n_arms:
            raise ValueError("agent kernel returned an arm out of range")
        observe(state, first, second, env_rng.random() < matrix[first, second])  # noqa: F821
        samples += 1
    return samples


def _generic_until_done(agent: DuelingAgent, env_rng: np.random.Generator, matrix: np.ndarray,
                        max_samples: int) -> int:
    n_arms = matrix.shape[0]
    rows = matrix.tolist()  # Python floats: comparisons give plain bools, indexing is cheaper
    samples = 0
    uniforms: list[float] = []
    cursor = 0
    while samples < max_samples and not agent.done:
        first, second = agent.act()
        if not (0 <= first < n_arms and 0 <= second < n_arms):
            raise ValueError(f"{type(agent).__name__}.act() returned an invalid duel {(first, second)}")
        if cursor == len(uniforms):
            # Batches of the same stream as one draw per duel (Generator.random is sequential).
            uniforms = env_rng.random(4096).tolist()
            cursor = 0
        agent.observe((first, second), uniforms[cursor] < rows[first][second])
        cursor += 1
        samples += 1
    return samples


def _answer_of(agent: DuelingAgent) -> tuple[str, tuple[int, ...], int | None]:
    answer_type = getattr(agent, "answer_type", "winner")
    if answer_type == "winner":
        return answer_type, (int(agent.recommend()),), None
    if answer_type == "top_k":
        arms = np.asarray(agent.top_k(), dtype=np.int64)
        return answer_type, tuple(int(a) for a in arms), int(arms.size)
    if answer_type == "ranking":
        return answer_type, tuple(int(a) for a in np.asarray(agent.ranking(), dtype=np.int64)), None
    raise ValueError(f"{type(agent).__name__}.answer_type must be 'winner', 'ranking' or 'top_k', got {answer_type!r}")


def _run_k_armed(agent: DuelingAgent, problem: Any, *, seed: int | None, max_samples: int,
                 fused: bool | None) -> PureExplorationResult:
    """:func:`run_pure_exploration` of a ``K``-armed identification agent on a preference matrix."""
    problem = _k_armed_problem(agent, problem)
    if seed is None:
        env_rng = np.random.default_rng()
        agent.reset()
    else:
        env_seed, agent_seed = derive_seeds(seed)
        env_rng = np.random.default_rng(env_seed)
        agent.reset(seed=agent_seed)
    matrix = np.ascontiguousarray(problem.matrix, dtype=np.float64)
    samples, wall_time = _play_k_armed(agent, env_rng, matrix, max_samples, fused)
    return _k_armed_result(agent, problem, seed=seed, samples=samples, wall_time=wall_time)


def _k_armed_problem(agent: DuelingAgent, problem: Any) -> PreferenceMatrix:
    """``problem`` as the preference matrix a pure-exploration ``agent`` can run on (refusing anything else)."""
    if not getattr(agent, "pure_exploration", False):
        raise TypeError(f"{type(agent).__name__} is not a pure-exploration agent (it has no stopping rule)")
    if isinstance(problem, (BipartiteDuelProblem, CombinatorialDuelEnv)):
        raise TypeError("a K-armed agent needs a preference matrix (PreferenceMatrix, array or problem name), "
                        f"got {type(problem).__name__}")
    problem = as_preference_matrix(problem)
    if problem.n_arms != agent.n_arms:
        raise ValueError(f"the agent has {agent.n_arms} arms but the problem has {problem.n_arms}")
    return problem


def _play_k_armed(agent: DuelingAgent, env_rng: np.random.Generator, matrix: np.ndarray, max_samples: int,
                  fused: bool | None) -> tuple[int, float]:
    """Duels until the agent stops or ``max_samples``: the number played and the seconds it took."""
    cls = type(agent)
    has_kernels = isinstance(agent, KernelDuelingAgent) and hasattr(cls, "done_kernel")
    if fused is None:
        fused = has_kernels
    elif fused and not has_kernels:
        raise ValueError(f"{cls.__name__} has no Numba kernels with a stopping rule; use fused=False")
    start = time.perf_counter()
    if fused:
        until_done = loop_for(_fused_until_done, cls, {"act": "act_kernel", "observe": "observe_kernel",
                                                       "done": "done_kernel"})
        samples = int(until_done(agent.state, env_rng, matrix, max_samples))
    else:
        samples = _generic_until_done(agent, env_rng, matrix, max_samples)
    return samples, time.perf_counter() - start


def _k_armed_correct(answer_type: str, answer: tuple[int, ...], problem: PreferenceMatrix, target: str,
                     good_winner: bool, good_top_k: bool | None) -> bool:
    """Whether the answer is right for its type (before the stopping rule and failures are considered)."""
    if answer_type == "top_k":
        return bool(good_top_k)
    if answer_type == "ranking":
        return ranking_correct(answer, problem, target)
    return good_winner


def _k_armed_epsilon_correct(agent: DuelingAgent, problem: PreferenceMatrix, answer_type: str, winner: int,
                             target: str, borda: np.ndarray, settled: bool) -> bool | None:
    """The PAC check of a winner answer of an agent with an ``epsilon`` (``None`` for other agents and answers)."""
    epsilon = getattr(agent, "epsilon", None)
    if epsilon is None or answer_type != "winner":
        return None
    if target == "borda":
        ok = borda.max() - borda[winner] <= float(epsilon) + 1e-12
    else:
        ok = epsilon_condorcet_correct(winner, problem, float(epsilon))
    return settled and bool(ok)


def _k_armed_result(agent: DuelingAgent, problem: PreferenceMatrix, *, seed: int | None, samples: int,
                    wall_time: float) -> PureExplorationResult:
    """Score a ``K``-armed agent's answer (winner, ranking or top-``k``) against ``problem``."""
    target = getattr(agent, "target", "") or "condorcet"
    answer_type, answer, k = _answer_of(agent)
    winner = answer[0]
    stopped = bool(agent.done)
    failed = bool(getattr(agent, "failed", False))
    good_winner = winner_correct(winner, problem, target)
    tau = kendall_tau(answer, problem, target) if answer_type == "ranking" else None
    good_top_k = top_k_correct(answer, problem, target) if answer_type == "top_k" else None
    correct = _k_armed_correct(answer_type, answer, problem, target, good_winner, good_top_k)
    correct = stopped and not failed and correct
    borda = np.asarray(problem.borda_scores)
    epsilon_correct = _k_armed_epsilon_correct(agent, problem, answer_type, winner, target, borda,
                                               stopped and not failed)
    return PureExplorationResult(
        agent=getattr(agent, "name", "") or type(agent).__name__,
        target=target,
        recommendation=answer,
        samples=samples,
        stopped=stopped,
        failed=failed,
        correct=bool(correct),
        epsilon_correct=epsilon_correct,
        valid=True,
        is_borda_winner=bool(winner in problem.borda_winners),
        is_condorcet_winner=problem.condorcet_winner == winner,
        borda_score=float(borda[winner]),
        borda_gap=float(borda.max() - borda[winner]),
        wall_time=wall_time,
        seed=seed,
        problem=problem.name,
        answer_type=answer_type,
        winner=winner,
        winner_correct=bool(good_winner),
        kendall_tau=tau,
        k=k,
        top_k_correct=good_top_k,
    )
