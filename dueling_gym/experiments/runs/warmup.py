"""Compile ahead: build every compiled function of the library once, so that no later process does.

Every Numba function of dueling-gym is cached on disk after its first use (kernels, state
constructors, the fused loops of :func:`~dueling_gym.experiments.simulate` and of the
pure-exploration runner).  The first use after installation therefore compiles, which takes
from a second to a few tens of seconds per agent.  :func:`warmup` (``dueling-gym warmup``)
pays that once, for everything: each registered agent plays a few duels through every path a
run takes (the fused loop, ``act``/``observe``/``recommend``, the stopping loop of
pure-exploration agents), each environment steps, and the lower bounds and KL routines run.

Tasks are independent, so ``jobs > 1`` compiles them in parallel worker processes (Numba writes
each cache file atomically), through the runner's own entry to the backends and its job-count
check (:func:`~dueling_gym.experiments.runs.runner.run_tasks`,
:func:`~dueling_gym.experiments.runs.runner.check_jobs`).  A warm-up is not a list of work units:
a task has no identity, writes no file and returns only its seconds, which no re-run can
verify; and tasks differ in cost by a hundredfold, so each is handed to a worker alone rather
than in the runner's batches of units.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["WarmupReport", "warmup", "warmup_tasks", "warm"]

#: Duels each agent plays: enough to pass every branch a kernel is compiled for (compilation is
#: per signature, not per branch), few enough to cost nothing once compiled.
_DUELS = 40


@dataclass
class WarmupReport:
    """Seconds spent per task by :func:`warmup` (compilation or loading from the cache)."""

    seconds: dict[str, float]

    @property
    def total(self) -> float:
        return sum(self.seconds.values())


def warmup_tasks() -> list[str]:
    """The tasks of :func:`warmup`: ``"agent:NAME"`` for every registered agent, then the rest."""
    from dueling_gym.agents import list_agents

    return [f"agent:{name}" for name in list_agents()] + ["environments", "lower_bounds", "statistics"]


def warm(task: str) -> float:
    """Run one task of :func:`warmup`; returns its seconds."""
    start = time.perf_counter()
    kind, _, name = task.partition(":")
    if kind == "agent":
        _warm_agent(name)
    elif task == "environments":
        _warm_environments()
    elif task == "lower_bounds":
        from dueling_gym.problems import ecw_lower_bound_constant, load_problem, lower_bound_constant

        for problem in ("cyclic4", "multisol"):
            lower_bound_constant(load_problem(problem))
            ecw_lower_bound_constant(load_problem(problem))
    elif task == "statistics":
        from dueling_gym.stats import kl_bernoulli, kl_lower_bound, kl_upper_bound

        kl_bernoulli(0.3, 0.5)
        kl_upper_bound(0.3, 4.0, 1.0)
        kl_lower_bound(0.3, 4.0, 1.0)
    else:
        raise ValueError(f"unknown warm-up task {task!r}; choose one of {warmup_tasks()}")
    return time.perf_counter() - start


def _warm_agent(name: str) -> None:
    from dueling_gym.agents import AGENT_REGISTRY, make_agent
    from dueling_gym.agents.registry import agent_kind

    cls = AGENT_REGISTRY[name]
    kind = agent_kind(cls)
    if kind == "combinatorial":
        from dueling_gym.experiments.pure_exploration import run_pure_exploration
        from dueling_gym.problems import five_edge_example

        problem = five_edge_example()
        run_pure_exploration(make_agent(name, problem, seed=0), problem, seed=0, max_samples=_DUELS)
        agent = make_agent(name, problem, seed=0)
        action = agent.act()
        agent.observe(action, True)
        return
    options: dict[str, Any] = {}
    if "horizon" in inspect.signature(cls.__init__).parameters:
        options["horizon"] = 1000
    if kind == "bandit":
        agent = make_agent(name, 3, seed=0, **options)
        for step in range(_DUELS):
            arm = agent.act()
            agent.observe(arm, float(step % 2))
        agent.recommend()
        return
    from dueling_gym.experiments.simulate import simulate
    from dueling_gym.problems import load_problem

    problem = load_problem("mslr5-condorcet")  # five arms: the shipped learned policies need K = 5 or 8
    agent = make_agent(name, problem.n_arms, seed=0, **options)
    simulate(agent, problem, _DUELS, seed=0)
    action = agent.act()
    agent.observe(action, True)
    agent.recommend()
    if getattr(cls, "pure_exploration", False) and hasattr(cls, "done_kernel"):
        from dueling_gym.experiments.pure_exploration import run_pure_exploration

        run_pure_exploration(make_agent(name, problem.n_arms, seed=0, **options), problem, seed=0,
                             max_samples=_DUELS)


def _warm_environments() -> None:
    import gymnasium as gym

    import dueling_gym

    for env_id in dueling_gym.ENV_IDS:
        env = gym.make(env_id)
        env.reset(seed=0)
        for _ in range(3):
            env.step(env.action_space.sample())
        env.close()
    for env_id in ("DuelingBandit-v0", "CopelandDuel-v0"):
        envs = gym.make_vec(env_id, num_envs=4, vectorization_mode="vector_entry_point")
        envs.reset(seed=0)
        envs.step(envs.action_space.sample())
        envs.close()


def warmup(*, jobs: int = 1, progress: bool = True, tasks: list[str] | None = None) -> WarmupReport:
    """Compile (or load) every compiled function of the library once; see the module notes.

    Parameters
    ----------
    jobs : int, default 1
        Worker processes (``1`` runs the tasks in this process).
    progress : bool, default True
        A tqdm progress bar, one step per task.
    tasks : list of str, optional
        A subset of :func:`warmup_tasks` (default: all).

    Returns
    -------
    WarmupReport
    """
    from dueling_gym.experiments.runs.backends import progress_bar
    from dueling_gym.experiments.runs.runner import check_jobs, run_tasks

    jobs = check_jobs(jobs)
    names = warmup_tasks() if tasks is None else list(tasks)
    unknown = sorted(set(names) - set(warmup_tasks()))
    if unknown:
        raise ValueError(f"unknown warm-up tasks {unknown}; choose from {warmup_tasks()}")
    bar = progress_bar(total=len(names), desc="compiling", unit="task") if progress else None
    seconds: dict[str, float] = {}

    def on_done(task: str, elapsed: float) -> None:
        seconds[task] = elapsed
        if bar is not None:
            bar.set_postfix_str(task, refresh=False)
            bar.update(1)

    try:
        run_tasks(names, warm, on_done, jobs=jobs, describe=str)
    finally:
        if bar is not None:
            bar.close()
    return WarmupReport({task: seconds[task] for task in names if task in seconds})
