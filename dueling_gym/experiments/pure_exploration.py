"""Running combinatorial pure-exploration agents (CPE-DB) to their stopping time.

:func:`run_pure_exploration` drives an agent of :mod:`dueling_gym.agents.combinatorial`
(CLUCB-Borda-PAC/Exact, CAR-Cond/Verify/Parallel) through
:meth:`CombinatorialDuelEnv.step_edges` until it stops (or a sample cap), then scores its
recommendation with :meth:`CombinatorialDuelEnv.score_matching`.  Pure exploration reports a
sample complexity and an error rate, not regret (spec §7).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dueling_gym.envs.combinatorial_duel import CombinatorialDuelEnv
from dueling_gym.experiments.simulate import derive_seeds
from dueling_gym.problems.bipartite import BipartiteDuelProblem

__all__ = ["PureExplorationResult", "run_pure_exploration", "DEFAULT_MAX_SAMPLES"]

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
        ``"borda"`` or ``"condorcet"``: the winner notion the agent identifies.
    recommendation : tuple of int
        The returned matching (edge indices in position order).
    samples : int
        Duels played (self-duels included).
    stopped : bool
        True if the agent's stopping rule fired; False if the run hit ``max_samples``.
    failed : bool
        True if the agent ended without an answer of its own (CAR-Verify "error", a stall).
    correct : bool
        Stopped, not failed, and the recommendation is the target winner (Borda matching for
        CLUCB-Borda, Condorcet matching for CAR-*).
    epsilon_correct : bool or None
        For agents with an ``epsilon`` (CLUCB-Borda-PAC): stopped, not failed and
        ``B(M^B) - B(out) <= ε`` (the PAC guarantee); ``None`` otherwise.
    valid, is_borda_winner, is_condorcet_winner, borda_score, borda_gap
        :meth:`CombinatorialDuelEnv.score_matching` of the recommendation.
    wall_time : float
        Seconds spent in the agent/environment loop.
    seed : int or None
        Run seed.
    problem : str or None
        Name of the problem.
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

    @property
    def time_per_sample(self) -> float:
        """Wall time per duel (seconds; ``nan`` without samples)."""
        return self.wall_time / self.samples if self.samples else float("nan")

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python dict (JSON-friendly)."""
        out = asdict(self)
        out["recommendation"] = list(self.recommendation)
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


def run_pure_exploration(agent: Any, env_or_problem: Any, *, seed: int | None = 0,
                         max_samples: int = DEFAULT_MAX_SAMPLES) -> PureExplorationResult:
    """Run a combinatorial agent until it stops (or ``max_samples`` duels) and score its answer.

    Parameters
    ----------
    agent : CombinatorialAgent
        E.g. ``CLUCBBordaPAC(problem, delta=0.1, epsilon=0.02)``; it must be built on the same
        graph as the environment's problem.
    env_or_problem : CombinatorialDuelEnv, BipartiteDuelProblem or str
        The environment (Gymnasium wrappers are unwrapped: the ``TimeLimit`` of
        ``gym.make`` would otherwise cut the run), or a problem / problem name to build one.
    seed : int or None, default 0
        Run seed: :func:`~dueling_gym.experiments.simulate.derive_seeds` splits it into the
        environment's and the agent's seeds, and the agent is reset with its seed.  ``None``
        resets the environment unseeded and the agent without re-seeding.
    max_samples : int, default 10**7
        Cap on the number of duels.

    Returns
    -------
    PureExplorationResult
        Samples used, whether the answer is correct (Borda or Condorcet as appropriate for the
        agent), the Borda gap of the answer and the wall time.

    Examples
    --------
    >>> from dueling_gym.agents.car import CARCond
    >>> from dueling_gym.problems import random_bipartite_problem
    >>> problem = random_bipartite_problem(2, 3, np.random.default_rng(0), planted_condorcet=True, min_gap=0.4)
    >>> result = run_pure_exploration(CARCond(problem, delta=0.1), problem, seed=0)
    >>> result.stopped, result.correct
    (True, True)
    """
    if isinstance(max_samples, bool) or not isinstance(max_samples, (int, np.integer)) or max_samples < 0:
        raise ValueError(f"max_samples must be a non-negative integer, got {max_samples!r}")
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

    step_edges = env.step_edges
    samples = 0
    start = time.perf_counter()
    while not agent.done and samples < max_samples:
        first, second = agent.act()
        observation = step_edges(first, second)[0]
        agent.observe((first, second), bool(observation))
        samples += 1
    wall_time = time.perf_counter() - start

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
    )
