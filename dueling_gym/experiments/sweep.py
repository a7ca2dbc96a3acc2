"""Sweeps: agents × problems × seeds, one result file per finished unit, resumable.

A *unit* is one run of one agent on one problem with one seed.  Each finished unit is written
to its own JSON file atomically (written to a temporary file, then renamed), so a sweep that is
killed at any moment resumes where it stopped: finished units are never lost or repeated, and
a half-written file never exists under a final name.

Backends: a local process pool (default) and Ray (``backend="ray"``).  Every unit is fully
determined by its (agent, problem, seed), so both backends and any number of jobs give
identical results.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import platform
import re
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from dueling_gym.problems.generators import GENERATORS
from dueling_gym.problems.preference import PreferenceMatrix

__all__ = [
    "AgentSpec",
    "ProblemSpec",
    "SweepSpec",
    "Unit",
    "run_sweep",
    "run_unit",
    "load_results",
    "write_table",
    "atomic_write_text",
]

UNITS_FOLDER = "units"
MANIFEST = "manifest.json"
TABLE = "results.csv"
_LABEL_PATTERN = re.compile(r"[^A-Za-z0-9_.=+-]+")


def _safe(text: str) -> str:
    return _LABEL_PATTERN.sub("-", text).strip("-")


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically: a reader sees the old file or the whole new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


@dataclass(frozen=True)
class AgentSpec:
    """A registered agent with hyperparameters, e.g. ``AgentSpec("ccb", {"alpha": 0.6})``.

    ``AgentSpec.parse("ccb:alpha=0.6")`` reads the command-line form.
    """

    name: str
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    label: str = ""

    def __post_init__(self) -> None:
        from dueling_gym.agents import AGENT_REGISTRY, list_agents

        name = self.name.lower()
        if name not in AGENT_REGISTRY:
            raise ValueError(f"unknown agent {self.name!r}; choose one of {list_agents('dueling')}")
        object.__setattr__(self, "name", name)
        if not self.label:
            suffix = ",".join(f"{key}={value}" for key, value in sorted(self.hyperparameters.items()))
            object.__setattr__(self, "label", f"{name}:{suffix}" if suffix else name)

    @classmethod
    def parse(cls, text: str) -> AgentSpec:
        """Parse ``name`` or ``name:key=value,key=value`` (values read as JSON when possible)."""
        name, _, rest = text.partition(":")
        parameters: dict[str, Any] = {}
        for item in filter(None, rest.split(",")):
            key, separator, value = item.partition("=")
            if not separator:
                raise ValueError(f"agent hyperparameter {item!r} must look like key=value")
            try:
                parameters[key.strip()] = json.loads(value)
            except json.JSONDecodeError:
                parameters[key.strip()] = value
        return cls(name.strip(), parameters)

    def build(self, n_arms: int, horizon: int) -> Any:
        """Instantiate the agent; horizon-aware agents (a ``horizon`` keyword) receive the sweep's."""
        from dueling_gym.agents import AGENT_REGISTRY, make_agent

        parameters = dict(self.hyperparameters)
        accepted = inspect.signature(AGENT_REGISTRY[self.name].__init__).parameters
        if "horizon" in accepted and "horizon" not in parameters:
            parameters["horizon"] = horizon
        return make_agent(self.name, n_arms, **parameters)


@dataclass(frozen=True)
class ProblemSpec:
    """A shipped problem (``ProblemSpec("sushi")``) or a generated one.

    Generated problems: ``ProblemSpec("unique_copeland_winner", n_arms=8, problem_seed=3)``
    draws the matrix from ``np.random.default_rng(problem_seed)``.  ``ProblemSpec.parse`` reads
    ``sushi`` or ``unique_copeland_winner:n_arms=8,problem_seed=3,min_gap=0.1``.
    """

    name: str
    n_arms: int | None = None
    problem_seed: int | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from dueling_gym.problems import list_problems

        if self.name in GENERATORS:
            if self.n_arms is None or self.problem_seed is None:
                raise ValueError(f"generated problem {self.name!r} needs n_arms and problem_seed")
        elif self.name.lower() not in list_problems():
            # load_problem resolves aliases and gives the one-line error with valid names
            from dueling_gym.problems import load_problem

            try:
                object.__setattr__(self, "name", load_problem(self.name).name)
            except ValueError:
                raise ValueError(f"unknown problem {self.name!r}; choose a shipped problem {list_problems()} "
                                 f"or a generator {sorted(GENERATORS)} (GENERATOR:n_arms=K,problem_seed=S)") from None

    @property
    def label(self) -> str:
        if self.name not in GENERATORS:
            return self.name
        options = "".join(f"-{key}={value}" for key, value in sorted(self.options.items()))
        return f"{self.name}-K{self.n_arms}-s{self.problem_seed}{options}"

    @classmethod
    def parse(cls, text: str) -> ProblemSpec:
        name, _, rest = text.partition(":")
        values: dict[str, Any] = {}
        for item in filter(None, rest.split(",")):
            key, separator, value = item.partition("=")
            if not separator:
                raise ValueError(f"problem option {item!r} must look like key=value")
            values[key.strip()] = json.loads(value)
        n_arms = values.pop("n_arms", None)
        problem_seed = values.pop("problem_seed", None)
        return cls(name.strip(), n_arms, problem_seed, values)

    def build(self) -> PreferenceMatrix:
        if self.name in GENERATORS:
            problem = GENERATORS[self.name](self.n_arms, np.random.default_rng(self.problem_seed), **self.options)
            return PreferenceMatrix(problem.matrix, name=self.label, source=problem.source)
        from dueling_gym.problems import load_problem

        return load_problem(self.name)


@dataclass(frozen=True)
class Unit:
    """One run: agent × problem × seed."""

    agent: AgentSpec
    problem: ProblemSpec
    seed: int

    @property
    def key(self) -> str:
        digest = hashlib.sha1(
            json.dumps([self.agent.name, self.agent.hyperparameters, asdict(self.problem)], sort_keys=True,
                       default=str).encode()
        ).hexdigest()[:8]
        return f"{_safe(self.agent.label)}__{_safe(self.problem.label)}__seed{self.seed}__{digest}"


@dataclass(frozen=True)
class SweepSpec:
    """What a sweep runs.

    Parameters
    ----------
    agents, problems : sequences of AgentSpec / ProblemSpec (or their string forms)
    seeds : sequence of int
        Run seeds (see :func:`dueling_gym.experiments.derive_seeds`).
    horizon : int
        Duels per run.
    checkpoints : sequence of int, optional
        Default: log-spaced (:func:`dueling_gym.experiments.log_checkpoints`).
    shuffle_arms : bool, default True
        Relabel the arms of the problem by a random permutation drawn from the run seed, as the
        DTS authors' simulator does (spec §7), so lowest-index tie-breaking cannot favour the
        winner.  Recommendations are reported in the problem's original labels.
    """

    agents: tuple[AgentSpec, ...]
    problems: tuple[ProblemSpec, ...]
    seeds: tuple[int, ...]
    horizon: int
    checkpoints: tuple[int, ...] | None = None
    shuffle_arms: bool = True

    def __post_init__(self) -> None:
        agents = tuple(AgentSpec.parse(a) if isinstance(a, str) else a for a in self.agents)
        problems = tuple(ProblemSpec.parse(p) if isinstance(p, str) else p for p in self.problems)
        object.__setattr__(self, "agents", agents)
        object.__setattr__(self, "problems", problems)
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        if not agents or not problems or not self.seeds:
            raise ValueError("a sweep needs at least one agent, one problem and one seed")
        if isinstance(self.horizon, bool) or not isinstance(self.horizon, (int, np.integer)) or self.horizon < 1:
            raise ValueError(f"horizon must be a positive integer, got {self.horizon!r}")
        if len({a.label for a in agents}) != len(agents):
            raise ValueError("agent labels must be distinct")
        if self.checkpoints is not None:
            object.__setattr__(self, "checkpoints", tuple(int(c) for c in self.checkpoints))

    def units(self) -> list[Unit]:
        return [Unit(a, p, s) for p in self.problems for a in self.agents for s in self.seeds]

    def to_json(self) -> dict[str, Any]:
        return {
            "agents": [{"name": a.name, "hyperparameters": a.hyperparameters, "label": a.label} for a in self.agents],
            "problems": [asdict(p) | {"label": p.label} for p in self.problems],
            "seeds": list(self.seeds),
            "horizon": int(self.horizon),
            "checkpoints": None if self.checkpoints is None else list(self.checkpoints),
            "shuffle_arms": self.shuffle_arms,
        }


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    versions = {"python": platform.python_version()}
    for package in ("dueling-gym", "numpy", "scipy", "numba", "gymnasium"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:  # pragma: no cover
            versions[package] = "not installed"
    return versions


def run_unit(unit: Unit, horizon: int, checkpoints: Sequence[int] | None, shuffle_arms: bool,
             out_dir: str | None = None) -> dict[str, Any]:
    """Run one unit and return its result record; with ``out_dir``, also write it atomically."""
    from dueling_gym.experiments.simulate import simulate

    problem = unit.problem.build()
    permutation = np.arange(problem.n_arms)
    if shuffle_arms:
        shuffle_seed = np.random.SeedSequence([unit.seed, 0x5EED]).generate_state(1)[0]
        permutation = np.random.default_rng(shuffle_seed).permutation(problem.n_arms)
    # Arm k of the run is arm permutation[k] of the problem.
    run_problem = PreferenceMatrix(problem.matrix[np.ix_(permutation, permutation)], name=problem.name)
    agent = unit.agent.build(problem.n_arms, horizon)
    result = simulate(agent, run_problem, horizon, seed=unit.seed, checkpoints=checkpoints)
    recommendations = permutation[result.recommendations]
    record = {
        "key": unit.key,
        "agent": unit.agent.label,
        "agent_name": unit.agent.name,
        "hyperparameters": unit.agent.hyperparameters,
        "agent_repr": result.agent,
        "problem": unit.problem.label,
        "problem_spec": asdict(unit.problem),
        "seed": unit.seed,
        "horizon": horizon,
        "n_arms": problem.n_arms,
        "permutation": permutation.tolist(),
        "checkpoints": result.checkpoints.tolist(),
        "cumulative_regret": {notion: values.tolist() for notion, values in result.cumulative_regret.items()},
        "recommendations": recommendations.tolist(),
        "recommendation_is_copeland_winner": np.isin(recommendations, problem.copeland_winners).tolist(),
        "wall_time": result.wall_time,
        "fused": result.fused,
    }
    if out_dir is not None:
        path = Path(out_dir) / UNITS_FOLDER / f"{unit.key}.json"
        atomic_write_text(path, json.dumps(record))
    return record


def _run_unit_task(arguments: tuple) -> str:
    unit, horizon, checkpoints, shuffle_arms, out_dir = arguments
    run_unit(unit, horizon, checkpoints, shuffle_arms, out_dir)
    return unit.key


def _finished_keys(out_dir: Path) -> set[str]:
    folder = out_dir / UNITS_FOLDER
    if not folder.exists():
        return set()
    return {path.stem for path in folder.glob("*.json")}


def run_sweep(
    spec: SweepSpec,
    out_dir: str | os.PathLike,
    *,
    jobs: int = 1,
    backend: str = "local",
    address: str | None = None,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Run every unfinished unit of ``spec`` into ``out_dir`` and return all unit records.

    Parameters
    ----------
    spec : SweepSpec
    out_dir : path
        ``out_dir/units/*.json`` (one file per finished unit), ``out_dir/manifest.json`` (versions,
        parameters, seeds) and ``out_dir/results.csv`` (tidy table) are written.  Running the
        same sweep again skips the finished units; a manifest of a *different* sweep in the same
        folder is an error.
    jobs : int, default 1
        Worker processes of the local backend (``1`` runs in this process).
    backend : {"local", "ray"}
    address : str, optional
        Ray cluster address (``"auto"`` for a running cluster); default starts a local Ray.
    progress : bool
        tqdm progress bar with ETA.
    """
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / MANIFEST
    description = spec.to_json()
    if manifest_path.exists():
        previous = json.loads(manifest_path.read_text())
        if previous.get("spec") != description:
            raise ValueError(f"{out_dir} holds a different sweep (its manifest differs); use another folder")
    else:
        atomic_write_text(manifest_path, json.dumps({"spec": description, "versions": _versions(),
                                                     "created": time.strftime("%Y-%m-%dT%H:%M:%S")}, indent=2))

    units = spec.units()
    done = _finished_keys(out_dir)
    todo = [unit for unit in units if unit.key not in done]
    checkpoints = list(spec.checkpoints) if spec.checkpoints is not None else None
    tasks = [(unit, spec.horizon, checkpoints, spec.shuffle_arms, str(out_dir)) for unit in todo]

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(units), initial=len(units) - len(todo), desc="sweep", unit="run")
    try:
        if backend == "ray":
            _run_with_ray(tasks, address, jobs, bar)
        elif jobs == 1:
            for task in tasks:
                _run_unit_task(task)
                if bar is not None:
                    bar.update(1)
        else:
            _run_with_pool(tasks, jobs, bar)
    finally:
        if bar is not None:
            bar.close()
    records = load_results(out_dir, keys=[unit.key for unit in units])
    write_table(records, out_dir / TABLE)
    return records


def _run_with_pool(tasks: list[tuple], jobs: int, bar: Any) -> None:
    import multiprocessing

    # spawn: workers start clean (no inherited Numba/threads state), identical on every OS
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        pending = {pool.submit(_run_unit_task, task) for task in tasks}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                future.result()  # re-raise a worker's error (finished units stay on disk)
                if bar is not None:
                    bar.update(1)


def _run_with_ray(tasks: list[tuple], address: str | None, jobs: int, bar: Any) -> None:
    try:
        import ray
    except ImportError as error:  # pragma: no cover - depends on the optional extra
        raise ImportError("the Ray backend needs the 'ray' extra: pip install 'dueling-gym[ray]'") from error
    started_here = False
    if not ray.is_initialized():
        if address is None:
            ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        started_here = True
    try:
        remote = ray.remote(_run_unit_task)
        pending = [remote.remote(task) for task in tasks]
        while pending:
            finished, pending = ray.wait(pending, num_returns=1)
            ray.get(finished)
            if bar is not None:
                bar.update(len(finished))
    finally:
        if started_here:
            ray.shutdown()


def load_results(out_dir: str | os.PathLike, keys: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Unit records of a sweep folder (all of them, or those with the given keys, in that order)."""
    folder = Path(out_dir) / UNITS_FOLDER
    if keys is None:
        paths = sorted(folder.glob("*.json"))
    else:
        paths = [folder / f"{key}.json" for key in keys if (folder / f"{key}.json").exists()]
    return [json.loads(path.read_text()) for path in paths]


def write_table(records: list[dict[str, Any]], path: str | os.PathLike) -> None:
    """Write the tidy CSV: one row per (unit, checkpoint), one column per regret notion."""
    notions: list[str] = []
    for record in records:
        notions += [n for n in record["cumulative_regret"] if n not in notions]
    header = ["agent", "problem", "seed", "t", *(f"regret_{n}" for n in notions), "recommendation",
              "recommendation_is_copeland_winner"]
    lines = [",".join(header)]
    for record in records:
        for index, t in enumerate(record["checkpoints"]):
            regrets = [record["cumulative_regret"].get(n, [""] * (index + 1))[index] for n in notions]
            cells = [record["agent"], record["problem"], record["seed"], t,
                     *(repr(float(r)) if r != "" else "" for r in regrets),
                     record["recommendations"][index], int(record["recommendation_is_copeland_winner"][index])]
            lines.append(",".join(f'"{c}"' if isinstance(c, str) and "," in c else str(c) for c in cells))
    atomic_write_text(Path(path), "\n".join(lines) + "\n")
