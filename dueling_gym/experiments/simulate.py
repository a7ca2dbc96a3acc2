"""The fast simulator: run one agent on one problem and record its regret.

Two code paths give the same trajectory for the same seeds:

* the **generic loop** for any :class:`~dueling_gym.agents.DuelingAgent` (e.g. a learned
  policy), calling ``act()``/``observe()`` from Python; its duels are played by
  :class:`~dueling_gym.envs.DuelEngine`, the engine of ``DuelingBandit-v0`` and
  ``CopelandDuel-v0``;
* the **fused loop** for agents with Numba kernels (:class:`~dueling_gym.agents.KernelDuelingAgent`):
  the agent's ``act``/``observe`` kernels and the duels run in one compiled loop,
  ``_fused_segment``, the engine's compiled twin.

Both play a duel the same way: one uniform from a ``numpy.random.Generator`` seeded with
``env_seed``, the first arm wins iff it is below ``P[first, second]``, and the regret of every
notion (row ``first * K + second`` of :meth:`~dueling_gym.problems.PreferenceMatrix.duel_table`)
is added in float64, duel by duel.  The environments do exactly this after
``reset(seed=env_seed)``, so a plain Gymnasium loop reproduces a simulated run too; the tests
check the two loops equal duel for duel.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from dueling_gym.agents.base import DuelingAgent, KernelDuelingAgent
from dueling_gym.envs import DuelEngine
from dueling_gym.experiments.kernel_loops import loop_for
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.problems.loading import as_preference_matrix
from dueling_gym.validation import check_integer

__all__ = ["SimulationResult", "simulate", "simulate_validated", "fused_loop", "log_checkpoints", "derive_seeds", "MAX_HORIZON"]

#: The longest run accepted (10^12 duels, hours even for the fastest agents); larger values are
#: typos, and beyond 2^63 they no longer fit the counters.
MAX_HORIZON = 10**12


def derive_seeds(seed: int) -> tuple[int, int]:
    """Split one run seed into ``(env_seed, agent_seed)``, two independent 32-bit seeds.

    To replay a simulated run in a Gymnasium loop, reset the env with ``env_seed`` and the
    agent with ``agent_seed``.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    env_seed, agent_seed = np.random.SeedSequence(int(seed)).generate_state(2, dtype=np.uint32)
    return int(env_seed), int(agent_seed)


def log_checkpoints(horizon: int, per_decade: int = 10) -> np.ndarray:
    """Log-spaced checkpoints ``1 <= t <= horizon`` (always including ``horizon``), unique and sorted."""
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
        raise ValueError(f"horizon must be a positive integer, got {horizon!r}")
    if per_decade < 1:
        raise ValueError(f"per_decade must be positive, got {per_decade}")
    count = max(2, int(np.ceil(np.log10(horizon) * per_decade)) + 1)
    points = np.unique(np.round(np.logspace(0, np.log10(horizon), count)).astype(np.int64))
    return np.unique(np.append(points, horizon))


@dataclass
class SimulationResult:
    """What one run produced.

    Attributes
    ----------
    checkpoints : ndarray of int
        Times ``t`` (number of duels so far) at which the run was recorded.
    cumulative_regret : dict of str to ndarray
        Cumulative regret at each checkpoint, for every notion defined on the problem.
    recommendations : ndarray of int
        The agent's recommended arm at each checkpoint.
    wall_time : float
        Seconds spent in the run (compilation of the fused loop included on first use).
    fused : bool
        Whether the compiled fused loop was used.
    duels, outcomes : ndarray or None
        Every duel ``(first, second)`` and whether ``first`` won, when ``record_duels=True``.
    """

    agent: str
    problem: str
    horizon: int
    seed: int
    checkpoints: np.ndarray
    cumulative_regret: dict[str, np.ndarray]
    recommendations: np.ndarray
    wall_time: float
    fused: bool
    duels: np.ndarray | None = None
    outcomes: np.ndarray | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def final_regret(self, notion: str = "copeland_komiyama") -> float:
        """Cumulative regret at the horizon."""
        return float(self.cumulative_regret[notion][-1])


def _fused_run(state, env_rng, duel_table, n_arms, checkpoints, first_point, last_point, totals, cumulative,
               recommendations, duels, outcomes):  # pragma: no cover - compiled per agent class
    """Play up to checkpoints ``first_point .. last_point - 1`` of a fused simulation.

    The compiled twin of :meth:`DuelEngine.duel <dueling_gym.envs.DuelEngine.duel>`: the same
    uniform per duel (drawn one at a time, the same stream as the engine's blocks), the same
    comparison and the same float64 additions, in the same order.  At each checkpoint the
    running totals and the agent's recommendation are recorded, as the generic loop does.
    ``act``, ``observe`` and ``recommend`` are the agent's kernels, bound as globals by
    :func:`fused_loop` (this template is never compiled itself).
    """
    n_notions = duel_table.shape[1] - 1
    record = duels.shape[0] > 0
    start = 0 if first_point == 0 else checkpoints[first_point - 1]
    for index in range(first_point, last_point):
        stop = checkpoints[index]
        for t in range(start, stop):
            first, second = act(state)  # noqa: F821 - bound per agent class by fused_loop
            if first < 0 or first >= n_arms or second < 0 or second >= n_arms:
                raise ValueError("agent kernel returned an arm out of range")
            row = first * n_arms + second
            first_won = env_rng.random() < duel_table[row, 0]
            observe(state, first, second, first_won)  # noqa: F821
            for k in range(n_notions):
                totals[k] += duel_table[row, 1 + k]
            if record:
                duels[t, 0] = first
                duels[t, 1] = second
                outcomes[t] = first_won
        for k in range(n_notions):
            cumulative[index, k] = totals[k]
        recommendations[index] = recommend(state)  # noqa: F821
        start = stop


def fused_loop(agent_class: type[KernelDuelingAgent]) -> Any:
    """The compiled fused loop of ``agent_class``: its kernels and the duels in one function.

    One function per agent class, cached on disk (:func:`~dueling_gym.experiments.kernel_loops.loop_for`),
    so a fresh process loads it instead of compiling it.
    """
    return loop_for(_fused_run, agent_class, {"act": "act_kernel", "observe": "observe_kernel",
                                              "recommend": "recommend_kernel"})


def simulate(
    agent: DuelingAgent,
    problem: PreferenceMatrix | np.ndarray | str,
    horizon: int,
    *,
    seed: int = 0,
    checkpoints: np.ndarray | list[int] | None = None,
    fused: bool | None = None,
    record_duels: bool = False,
    progress: bool = False,
) -> SimulationResult:
    """Run ``agent`` for ``horizon`` duels on ``problem`` and record its regret.

    Parameters
    ----------
    agent : DuelingAgent
        Reset with the derived agent seed before the run (its previous state is discarded).
    problem : PreferenceMatrix, array or shipped name
        The ground truth; ``agent.n_arms`` must match its number of arms.
    horizon : int
        Number of duels.
    seed : int, default 0
        Run seed; :func:`~dueling_gym.experiments.derive_seeds` splits it into the environment's and the agent's.
    checkpoints : sequence of int, optional
        Times at which regret and the recommendation are recorded (default:
        :func:`~dueling_gym.experiments.log_checkpoints`; ``horizon`` is always included).
    fused : bool, optional
        Force (True) or forbid (False) the compiled loop; default: fused when the agent has
        kernels.
    record_duels : bool, default False
        Keep every duel and outcome (memory ``O(horizon)``).
    progress : bool, default False
        Show a tqdm progress bar.

    Returns
    -------
    SimulationResult
    """
    problem = as_preference_matrix(problem)
    horizon = _checked_horizon(agent, problem, horizon)
    points = _recorded_points(horizon, checkpoints)
    return simulate_validated(agent, problem, horizon, seed=seed, checkpoints=points,
                              fused=_use_fused_loop(agent, fused), record_duels=record_duels, progress=progress)


def simulate_validated(
    agent: DuelingAgent,
    problem: PreferenceMatrix,
    horizon: int,
    *,
    seed: int,
    checkpoints: np.ndarray,
    fused: bool | None = None,
    record_duels: bool = False,
    progress: bool = False,
) -> SimulationResult:
    """:func:`simulate` for arguments a caller has already validated: nothing is checked again.

    A regret sweep's units take this path: :class:`~dueling_gym.experiments.sweeps.spec.SweepSpec`
    checked the horizon, seed and checkpoints when it was built, and its units build agents that
    fit their problems.  Anything else calls :func:`simulate`, which checks its arguments first.

    Parameters
    ----------
    agent : DuelingAgent
        An agent with ``problem.n_arms`` arms.
    problem : PreferenceMatrix
    horizon : int
        A Python int in ``[1, MAX_HORIZON]``.
    seed : int
        A non-negative run seed.
    checkpoints : array of int
        Sorted, unique, within ``[1, horizon]`` and ending at ``horizon``.
    fused : bool, optional
        Whether to play the compiled loop (only for an agent with kernels); default: fused when
        the agent has kernels.
    record_duels, progress : bool
        As for :func:`simulate`.

    Returns
    -------
    SimulationResult
    """
    points = np.asarray(checkpoints, dtype=np.int64)
    if fused is None:
        fused = isinstance(agent, KernelDuelingAgent)
    env_seed, agent_seed = derive_seeds(seed)
    agent.reset(seed=agent_seed)
    env_rng = np.random.default_rng(env_seed)
    notions = problem.defined_regret_notions
    duel_table = problem.duel_table(notions)
    record = _Recording.empty(points.size, len(notions), horizon if record_duels else 0)
    bar = _progress_bar(agent, problem, horizon) if progress else None
    start_time = time.perf_counter()
    if fused:
        _play_fused(agent, env_rng, duel_table, problem.n_arms, points, record, bar)
    else:
        _play_generic(agent, env_rng, notions, duel_table, problem.n_arms, points, record, record_duels, bar)
    wall_time = time.perf_counter() - start_time
    if bar is not None:
        bar.close()
    return SimulationResult(
        agent=repr(agent),
        problem=problem.name or "custom",
        horizon=horizon,
        seed=int(seed),
        checkpoints=points,
        cumulative_regret={notion: record.cumulative[:, k].copy() for k, notion in enumerate(notions)},
        recommendations=record.recommendations,
        wall_time=wall_time,
        fused=bool(fused),
        duels=record.duels if record_duels else None,
        outcomes=record.outcomes if record_duels else None,
        metadata={"env_seed": env_seed, "agent_seed": agent_seed},
    )


def _checked_horizon(agent: DuelingAgent, problem: PreferenceMatrix, horizon: int) -> int:
    """``horizon`` as an ``int``, once ``agent`` is known to be a dueling agent for ``problem``'s arms."""
    if not isinstance(agent, DuelingAgent):
        raise TypeError(f"agent must be a DuelingAgent, got {type(agent).__name__}")
    if agent.n_arms != problem.n_arms:
        raise ValueError(f"agent has {agent.n_arms} arms but the problem has {problem.n_arms}")
    return check_integer("horizon", horizon, minimum=1, maximum=MAX_HORIZON)


def _recorded_points(horizon: int, checkpoints: np.ndarray | list[int] | None) -> np.ndarray:
    """The checkpoints of a run: sorted, unique, within ``[1, horizon]`` and ending at ``horizon``."""
    points = log_checkpoints(horizon) if checkpoints is None else np.unique(np.asarray(checkpoints, dtype=np.int64))
    if points.size == 0 or points[0] < 1 or points[-1] > horizon:
        raise ValueError(f"checkpoints must lie in [1, {horizon}]")
    if points[-1] != horizon:
        points = np.append(points, horizon)
    return points


def _use_fused_loop(agent: DuelingAgent, fused: bool | None) -> bool:
    """``fused`` as asked (fused by default when the agent has kernels); refuses a fused run without kernels."""
    has_kernels = isinstance(agent, KernelDuelingAgent)
    if fused is None:
        return has_kernels
    if fused and not has_kernels:
        raise ValueError(f"{type(agent).__name__} has no Numba kernels; use fused=False")
    return fused


class _Recording(NamedTuple):
    """The arrays a run fills: running totals per notion, regret and recommendation per checkpoint, the duels."""

    totals: np.ndarray
    cumulative: np.ndarray
    recommendations: np.ndarray
    duels: np.ndarray
    outcomes: np.ndarray

    @classmethod
    def empty(cls, n_points: int, n_notions: int, n_duels: int) -> _Recording:
        # Unrecorded duels get empty arrays rather than None: the fused loop is compiled for one
        # argument type, recorded or not.
        return cls(totals=np.zeros(n_notions), cumulative=np.zeros((n_points, n_notions)),
                   recommendations=np.zeros(n_points, dtype=np.int64), duels=np.zeros((n_duels, 2), dtype=np.int64),
                   outcomes=np.zeros(n_duels, dtype=np.bool_))


def _progress_bar(agent: DuelingAgent, problem: PreferenceMatrix, horizon: int) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=horizon, desc=f"{type(agent).__name__} on {problem.name or 'problem'}", unit="duel",
                unit_scale=True, leave=False)


def _play_fused(agent: KernelDuelingAgent, env_rng: np.random.Generator, duel_table: np.ndarray, n_arms: int,
                points: np.ndarray, record: _Recording, bar: Any) -> None:
    """The whole run in the agent class's compiled loop (:func:`fused_loop`)."""
    run = fused_loop(type(agent))
    # One compiled call for the whole run (each call types its arguments, which cost more
    # than a short run's duels); one per checkpoint when a progress bar is shown.
    segments = [(index, index + 1) for index in range(points.size)] if bar is not None else [(0, points.size)]
    done = 0
    for first_point, last_point in segments:
        run(agent.state, env_rng, duel_table, n_arms, points, first_point, last_point, record.totals,
            record.cumulative, record.recommendations, record.duels, record.outcomes)
        if bar is not None:
            stop = int(points[last_point - 1])
            bar.update(stop - done)
            done = stop


def _play_generic(agent: DuelingAgent, env_rng: np.random.Generator, notions: Any, duel_table: np.ndarray,
                  n_arms: int, points: np.ndarray, record: _Recording, record_duels: bool, bar: Any) -> None:
    """The whole run from Python: the agent's ``act``/``observe``, the duels played by a :class:`DuelEngine`."""
    engine = DuelEngine(notions)
    engine.load(duel_table)
    engine.reset(env_rng)
    duel = engine.duel
    done = 0
    for index, stop in enumerate(points.tolist()):
        for t in range(done, stop):
            first, second = agent.act()
            if not (0 <= first < n_arms and 0 <= second < n_arms):
                raise ValueError(f"{type(agent).__name__}.act() returned an invalid duel {(first, second)}")
            first_won, _ = duel(first * n_arms + second)
            agent.observe((first, second), first_won)
            if record_duels:
                record.duels[t] = first, second
                record.outcomes[t] = first_won
        record.cumulative[index] = engine.cumulative
        record.recommendations[index] = agent.recommend()
        if bar is not None:
            bar.update(stop - done)
        done = stop
