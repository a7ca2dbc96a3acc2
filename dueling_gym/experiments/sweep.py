"""Sweeps: agents x problems x seeds, one verified result file per finished unit, resumable.

A *unit* is one run of one agent on one problem with one seed at the sweep's horizon.  Each
finished unit is written to its own JSON file atomically, with the unit's full identity (see
:class:`~dueling_gym.experiments.sweep_spec.Unit`), so a sweep that is stopped at any moment
resumes where it stopped: a file is reused only when it is complete and belongs to exactly the
unit being asked for; anything else is moved to ``units-rejected/`` with a warning and run again.

Everything is validated before anything is written: agents (each built once), problems, seeds,
the regret notion, the output folder, and the compatibility with a sweep already in that
folder.  A folder may be *extended* (more seeds, agents or problems at the same horizon,
shuffling, checkpoints and package version); a conflicting sweep is refused with the
parameter that differs.

Backends: this process (``jobs=1``), a local process pool, and Ray (``backend="ray"``).  Every
unit is fully determined by its identity, so backends and job counts give identical results.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from dueling_gym.experiments.sweep_backends import (
    SweepInterrupted,
    UnitFailed,
    connect_ray,
    progress_bar,
    run_pool,
    run_ray,
    run_serial,
)
from dueling_gym.experiments.sweep_spec import (
    AgentSpec,
    ProblemSpec,
    SweepSpec,
    Unit,
    canonical_json,
    package_version,
)
from dueling_gym.experiments.sweep_store import (
    FORMAT,
    MANIFEST,
    TABLE,
    UNITS_FOLDER,
    FolderLock,
    atomic_write_text,
    check_out_dir,
    load_units,
    remove_stale_temporaries,
    stray_files,
    write_table,
)
from dueling_gym.problems.preference import PreferenceMatrix

__all__ = [
    "AgentSpec",
    "ProblemSpec",
    "SweepSpec",
    "Unit",
    "SweepInterrupted",
    "UnitFailed",
    "run_sweep",
    "execute_sweep",
    "SweepResult",
    "run_unit",
    "unit_problem",
    "folder_units",
    "load_results",
    "stray_files",
    "write_table",
    "atomic_write_text",
]


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    versions = {"python": platform.python_version()}
    for package in ("dueling-gym", "numpy", "scipy", "numba", "gymnasium"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:  # pragma: no cover
            versions[package] = "not installed"
    return versions


def unit_problem(unit: Unit) -> tuple[PreferenceMatrix, PreferenceMatrix, np.ndarray]:
    """The problem of ``unit``, the problem its run plays and the permutation between them.

    With arm shuffling, arm ``k`` of the run is arm ``permutation[k]`` of the problem; the
    permutation is drawn from the unit's seed, so every backend plays the same run.
    """
    problem = unit.problem.build()
    permutation = np.arange(problem.n_arms)
    if unit.shuffle_arms:
        shuffle_seed = np.random.SeedSequence([unit.seed, 0x5EED]).generate_state(1)[0]
        permutation = np.random.default_rng(shuffle_seed).permutation(problem.n_arms)
    run_problem = PreferenceMatrix(problem.matrix[np.ix_(permutation, permutation)], name=problem.name)
    return problem, run_problem, permutation


def run_unit(unit: Unit, out_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    """Run one unit and return its record; with ``out_dir``, also write it atomically."""
    from dueling_gym.experiments.simulate import simulate
    from dueling_gym.experiments.sweep_store import FORMAT

    problem, run_problem, permutation = unit_problem(unit)
    agent = unit.agent.build(problem.n_arms, unit.horizon)
    result = simulate(agent, run_problem, unit.horizon, seed=unit.seed, checkpoints=list(unit.checkpoints))
    recommendations = permutation[result.recommendations]
    record = {
        "format": FORMAT,
        "identity": unit.identity,
        "key": unit.key,
        "agent": unit.agent.label,
        "agent_name": unit.agent.name,
        "hyperparameters": unit.agent.hyperparameters,
        "agent_repr": result.agent,
        "problem": unit.problem.label,
        "problem_spec": unit.problem.to_json(),
        "seed": unit.seed,
        "horizon": unit.horizon,
        "n_arms": problem.n_arms,
        "permutation": permutation.tolist(),
        "checkpoints": result.checkpoints.tolist(),
        "cumulative_regret": {notion: values.tolist() for notion, values in result.cumulative_regret.items()},
        "recommendations": recommendations.tolist(),
        "recommendation_is_copeland_winner": np.isin(recommendations, problem.copeland_winners).tolist(),
        "wall_time": result.wall_time,
        "fused": result.fused,
    }
    text = json.dumps(record)
    if out_dir is not None:
        atomic_write_text(Path(out_dir) / UNITS_FOLDER / f"{unit.key}.json", text, durable=False)
    # Returned as it reads back from its file (lists, not tuples), so a record kept in memory
    # and one loaded later are the same.
    return json.loads(text)


def _run_unit_batch(arguments: tuple[list[Unit], str]) -> list[dict[str, Any]]:
    """Run a batch of units (in a worker); their records go back to the parent, which keeps them."""
    units, out_dir = arguments
    records = []
    for unit in units:
        try:
            records.append(run_unit(unit, out_dir))
        except Exception as error:
            raise UnitFailed(f"unit {unit.key} failed: {type(error).__name__}: {error}") from error
    return records


#: Guided batches: each batch holds this share of the remaining units per worker, at most
#: ``_MAX_BATCH`` and at least one.  Early batches are large (a message and a result per batch
#: cost nothing next to its duels), the last ones single units, so no worker is left with a
#: long batch while the others have finished.
_BATCHES_PER_WORKER = 4
_MAX_BATCH = 32


def _batches(units: Sequence[Unit], jobs: int) -> list[list[Unit]]:
    """Consecutive, shrinking batches of ``units`` for ``jobs`` workers (single units in one process)."""
    if jobs == 1:
        return [[unit] for unit in units]
    batches, start = [], 0
    while start < len(units):
        size = max(1, min(_MAX_BATCH, (len(units) - start) // (jobs * _BATCHES_PER_WORKER)))
        batches.append(list(units[start:start + size]))
        start += size
    return batches


# --------------------------------------------------------------------------------------------
# The manifest: what a folder holds, and whether a new sweep may join it
# --------------------------------------------------------------------------------------------

def _read_manifest(out_dir: Path) -> dict[str, Any] | None:
    path = out_dir / MANIFEST
    if not path.exists():
        if (out_dir / UNITS_FOLDER).is_dir() and any((out_dir / UNITS_FOLDER).glob("*.json")):
            raise ValueError(f"{out_dir} holds unit files but no {MANIFEST}; use another folder")
        return None
    try:
        manifest = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} cannot be read ({error}); use another folder") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValueError(f"{out_dir} was written by an older dueling-gym (results-folder format "
                         f"{manifest.get('format', 1) if isinstance(manifest, dict) else '?'}, this one reads {FORMAT}); "
                         "use another folder")
    return manifest


def _sweep_wide(spec: SweepSpec) -> dict[str, Any]:
    return {"horizon": spec.horizon, "shuffle_arms": spec.shuffle_arms,
            "checkpoints": list(spec.resolved_checkpoints), "dueling_gym": package_version()}


def _merge_manifest(previous: dict[str, Any] | None, spec: SweepSpec, out_dir: Path,
                    notion: str | None) -> dict[str, Any]:
    """The folder's manifest with ``spec`` added; ValueError naming the parameter that conflicts."""
    wide = _sweep_wide(spec)
    request = {"agents": [a.label for a in spec.agents], "problems": [p.label for p in spec.problems],
               "seeds": list(spec.seeds)}
    if previous is None:
        return {"format": FORMAT, **wide, "notion": notion, "agents": spec.to_json()["agents"],
                "problems": spec.to_json()["problems"], "requests": [request], "versions": _versions(),
                "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
    names = {"horizon": "horizon", "shuffle_arms": "arm shuffling (--no-shuffle)", "checkpoints": "checkpoints",
             "dueling_gym": "dueling-gym version"}
    for key, value in wide.items():
        if previous.get(key) != value:
            shown_old, shown_new = previous.get(key), value
            if key == "checkpoints":
                shown_old, shown_new = f"{len(shown_old or [])} checkpoints", f"{len(value)} checkpoints"
            raise ValueError(f"{out_dir} holds a sweep with {names[key]} {shown_old}, this one has {shown_new}; "
                             "use another folder (a folder can only be extended by agents, problems or seeds)")
    manifest = dict(previous)
    agents = {a["label"]: a for a in previous["agents"]}
    for agent in spec.to_json()["agents"]:
        known = agents.get(agent["label"])
        if known is not None and canonical_json(known) != canonical_json(agent):
            raise ValueError(f"{out_dir} already has an agent labelled {agent['label']!r} with other settings")
        agents[agent["label"]] = agent
    problems = {p["label"]: p for p in previous["problems"]}
    problems.update({p["label"]: p for p in spec.to_json()["problems"]})
    requests = list(previous["requests"])
    if request not in requests:
        requests.append(request)
    manifest.update(agents=list(agents.values()), problems=list(problems.values()), requests=requests,
                    updated=time.strftime("%Y-%m-%dT%H:%M:%S"))
    if manifest.get("notion") is None:
        manifest["notion"] = notion
    return manifest


def _specs_of(manifest: dict[str, Any]) -> list[SweepSpec]:
    agents = {a["label"]: AgentSpec(a["name"], a["hyperparameters"], a["label"]) for a in manifest["agents"]}
    problems = {p["label"]: ProblemSpec(p["name"], p["n_arms"], p["problem_seed"], p["options"])
                for p in manifest["problems"]}
    return [SweepSpec(agents=tuple(agents[label] for label in request["agents"]),
                      problems=tuple(problems[label] for label in request["problems"]),
                      seeds=tuple(request["seeds"]), horizon=manifest["horizon"],
                      checkpoints=manifest["checkpoints"], shuffle_arms=manifest["shuffle_arms"])
            for request in manifest["requests"]]


def _union(specs: Sequence[SweepSpec]) -> list[Unit]:
    units: dict[str, Unit] = {}
    for spec in specs:
        for unit in spec.units():
            units.setdefault(unit.key, unit)
    return list(units.values())


def folder_units(out_dir: str | os.PathLike) -> tuple[list[Unit], dict[str, Any]]:
    """Every unit the sweeps run into ``out_dir`` asked for (finished or not), and the manifest."""
    out_dir = Path(out_dir)
    manifest = _read_manifest(out_dir)
    if manifest is None:
        raise ValueError(f"no results in {out_dir} (no {MANIFEST})")
    return _union(_specs_of(manifest)), manifest


def load_results(out_dir: str | os.PathLike, *, reject: bool = False) -> list[dict[str, Any]]:
    """Verified records of the finished units of a results folder, in sweep order.

    Unit files that do not verify are named in a warning and left out (``reject=True`` also
    moves them to ``units-rejected/``); files of no unit of the folder's sweep are ignored.
    """
    units, _ = folder_units(out_dir)
    return [record for record in load_units(units, Path(out_dir), reject=reject) if record is not None]


@dataclass
class SweepResult:
    """What :func:`execute_sweep` did: the records of the sweep's units and of the whole folder.

    Attributes
    ----------
    records : list of dict
        Verified records of the sweep's own units, in sweep order.
    folder_records : list of dict
        Records of every finished unit of the folder (earlier sweeps into it included), in the
        folder's order; what ``results.csv`` holds.
    folder_units : list of Unit
        Every unit the folder's sweeps asked for (finished or not).
    manifest : dict
        The folder's manifest as written.
    """

    records: list[dict[str, Any]]
    folder_records: list[dict[str, Any]]
    folder_units: list[Unit]
    manifest: dict[str, Any]


def run_sweep(
    spec: SweepSpec,
    out_dir: str | os.PathLike,
    *,
    jobs: int = 1,
    backend: str = "local",
    address: str | None = None,
    progress: bool = True,
    notion: str | None = None,
) -> list[dict[str, Any]]:
    """Run every unfinished unit of ``spec`` into ``out_dir`` and return the records of ``spec``'s units.

    Parameters
    ----------
    spec : SweepSpec
    out_dir : path
        A folder (created if missing; its parent must exist).  ``units/*.json`` (one verified file
        per finished unit), ``manifest.json`` and ``results.csv`` (every finished unit of the
        folder) are written.  Running the same sweep again runs nothing; a sweep with more
        agents, problems or seeds runs only the missing units; a sweep with another horizon,
        shuffling, checkpoints or package version is refused.
    jobs : int, default 1
        Worker processes of the local backend (``1`` runs in this process).  Workers start once
        and are handed batches of units.
    backend : {"local", "ray"}
    address : str, optional
        Ray cluster address (``"auto"`` for a running cluster); default starts a local Ray.
        Connecting takes at most ``RAY_CONNECT_TIMEOUT`` seconds.
    progress : bool
        tqdm progress bar with ETA.
    notion : str, optional
        A regret notion that must be defined on every problem (checked before running).

    Raises
    ------
    ValueError, TypeError
        On bad arguments, an unusable folder or a conflicting sweep in it -- before anything
        is written.
    SweepInterrupted
        On Ctrl-C (a ``KeyboardInterrupt``): finished units are kept; re-running resumes.
    UnitFailed
        When a unit raised an error.
    """
    return execute_sweep(spec, out_dir, jobs=jobs, backend=backend, address=address, progress=progress,
                         notion=notion).records


def execute_sweep(
    spec: SweepSpec,
    out_dir: str | os.PathLike,
    *,
    jobs: int = 1,
    backend: str = "local",
    address: str | None = None,
    progress: bool = True,
    notion: str | None = None,
) -> SweepResult:
    """:func:`run_sweep`, returning the folder's records as well (a :class:`SweepResult`).

    The folder's unit files are read once, before running; the records of the units run now
    come back from the workers, so nothing is read twice.
    """
    if not isinstance(spec, SweepSpec):
        raise TypeError(f"spec must be a SweepSpec, got {type(spec).__name__}")
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    if notion is not None:
        spec.check_notion(notion)
    out_dir = Path(out_dir)
    check_out_dir(out_dir)
    manifest = _merge_manifest(_read_manifest(out_dir), spec, out_dir, notion)
    all_units = _union(_specs_of(manifest))
    started_ray = connect_ray(address, jobs) if backend == "ray" else False

    try:
        out_dir.mkdir(exist_ok=True)
        with FolderLock(out_dir):
            remove_stale_temporaries(out_dir)
            atomic_write_text(out_dir / MANIFEST, json.dumps(manifest, indent=2))
            units = spec.units()
            by_key = {unit.key: record for unit, record in zip(all_units, load_units(all_units, out_dir))}
            todo = [unit for unit in units if by_key.get(unit.key) is None]
            folder_unit = {unit.key: unit for unit in all_units}
            for record in _execute(todo, len(units), out_dir, jobs, backend, progress):
                # Labelled as a record read back from its file would be: by the folder's unit.
                unit = folder_unit[record["key"]]
                by_key[unit.key] = record | {"agent": unit.agent.label, "problem": unit.problem.label}
            folder_records = [by_key[unit.key] for unit in all_units if by_key.get(unit.key) is not None]
            write_table(folder_records, out_dir / TABLE)
    finally:
        if started_ray:
            import ray

            ray.shutdown()
    missing = [unit.key for unit in units if by_key.get(unit.key) is None]
    if missing:  # pragma: no cover - a unit file vanished while the sweep ran
        raise RuntimeError(f"units missing after the sweep: {missing[:3]}")
    return SweepResult([by_key[unit.key] for unit in units], folder_records, all_units, manifest)


def _execute(todo: list[Unit], total: int, out_dir: Path, jobs: int, backend: str,
             progress: bool) -> list[dict[str, Any]]:
    """Run ``todo`` and return the records of its units (in the order they finished)."""
    bar = progress_bar(total=total, initial=total - len(todo), desc="sweep", unit="run") if progress else None
    finished = [total - len(todo)]
    records: list[dict[str, Any]] = []

    def on_done(_: Any, batch_records: list[dict[str, Any]]) -> None:
        records.extend(batch_records)
        finished[0] += len(batch_records)
        if bar is not None:
            bar.update(len(batch_records))

    workers = 1 if backend == "local" and (jobs == 1 or len(todo) <= 1) else jobs
    tasks = [(batch, str(out_dir)) for batch in _batches(todo, workers)]
    describe = lambda task: task[0][0].key if len(task[0]) == 1 else f"batch from {task[0][0].key}"  # noqa: E731
    try:
        if backend == "ray":
            run_ray(tasks, _run_unit_batch, on_done, describe)
        elif workers == 1:
            run_serial(tasks, _run_unit_batch, on_done, describe)
        else:
            run_pool(tasks, _run_unit_batch, on_done, min(jobs, len(tasks)), describe)
    except KeyboardInterrupt:
        raise SweepInterrupted(finished[0], total, str(out_dir)) from None
    finally:
        if bar is not None:
            bar.close()
    return records
