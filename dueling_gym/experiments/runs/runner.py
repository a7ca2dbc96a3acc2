"""The one runner of every study: units of work, one verified file each, resumable, on any backend.

Every study of the library -- regret sweeps (:mod:`dueling_gym.experiments.sweeps.sweep`), the CPE-DB
sample-complexity study and the learned-vs-classic evaluation -- is a list of
:class:`~dueling_gym.experiments.runs.work_units.WorkUnit` run here, so they share one behaviour:

* each finished unit is written atomically to ``units/<key>.json`` with its identity; a study
  stopped at any moment resumes where it stopped, and a file is reused only when it verifies
  (anything else is moved to ``units-rejected/`` with a warning and run again);
* the backends: this process (``jobs=1``), a local pool of warm workers that are handed
  batches of units, or Ray (``backend="ray"``); every unit is fully determined by its
  identity, so backends and job counts give identical results;
* Ctrl-C stops within seconds and keeps the finished units (:class:`~dueling_gym.experiments.runs.backends.SweepInterrupted`);
  workers die with their parent; a unit that raises stops the study
  (:class:`~dueling_gym.experiments.runs.backends.UnitFailed`).

A results folder belongs to one kind of study (``manifest.json`` says which); a folder of
another kind is refused before anything is written.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

from dueling_gym.experiments.runs.backends import (
    SweepInterrupted,
    UnitFailed,
    connect_ray,
    progress_bar,
    run_pool,
    run_ray,
    run_serial,
)
from dueling_gym.experiments.runs.store import (
    CONTENT_DIGEST,
    FORMAT,
    MANIFEST,
    UNITS_FOLDER,
    atomic_write_text,
    content_digest,
    load_units,
    locked_folder,
    read_manifest,
)
from dueling_gym.experiments.runs.work_units import WorkUnit, canonical_json, package_version
from dueling_gym.interrupts import acknowledge_interrupt
from dueling_gym.validation import echo

__all__ = ["run_units", "StudyFolder", "run_one", "execute_units", "run_tasks", "unit_batches", "check_backend",
           "check_jobs", "usable_cores"]


#: Job counts already warned about in this process.
_WARNED_JOBS: set[int] = set()


def usable_cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # pragma: no cover - macOS, Windows


def check_backend(jobs: Any, backend: Any) -> int:
    """Refuse a bad job count or backend name (warn when local jobs outnumber the cores); returns ``jobs``.

    More local workers than cores only share the cores (and each costs memory); the pool never
    starts more workers than it has batches of units.
    """
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    jobs = check_jobs(jobs)
    cores = usable_cores()
    # Once per process and job count: a study checks its arguments, then hands them to run_units.
    if backend == "local" and jobs > cores and jobs not in _WARNED_JOBS:
        _WARNED_JOBS.add(jobs)
        warnings.warn(f"jobs={jobs} is more than the {cores} cores this machine lets the process use; the workers "
                      "will share them (and never outnumber the units)", UserWarning, stacklevel=3)
    return jobs


def check_jobs(jobs: Any) -> int:
    """Refuse a job count that is not a positive integer; returns ``jobs``."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    return jobs


def run_tasks(tasks: Sequence[Any], run: Callable[[Any], Any], on_done: Callable[[Any, Any], None], *, jobs: int,
              backend: str = "local", describe: Callable[[Any], str] = str) -> None:
    """Call ``run(task)`` for every task and ``on_done(task, result)`` in this process as each finishes.

    The one entry to the backends: Ray (``backend="ray"``, connected already), this process
    (``jobs=1``), or a local pool of ``jobs`` workers, never more than there are tasks.
    ``describe(task)`` names a task in an error.  Ctrl-C raises ``KeyboardInterrupt`` once
    every worker is stopped; a task that raises stops the others.
    """
    if backend == "ray":
        run_ray(tasks, run, on_done, describe)
    elif jobs == 1:
        run_serial(tasks, run, on_done, describe)
    else:
        run_pool(tasks, run, on_done, min(jobs, len(tasks)), describe)


def run_one(unit: WorkUnit, out_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    """Run ``unit`` and return its record; with ``out_dir``, also write it atomically to ``units/``."""
    record = {"format": FORMAT, "identity": unit.identity, "key": unit.key}
    record.update(unit.run())
    # The digest is taken of the record as it reads back (lists, not tuples), as it is checked.
    record = json.loads(json.dumps(record))
    record[CONTENT_DIGEST] = content_digest(record)
    text = json.dumps(record)
    if out_dir is not None:
        # Not flushed to the disk: a unit file a power cut left short fails verification and is run again.
        atomic_write_text(Path(out_dir) / UNITS_FOLDER / f"{unit.key}.json", text, durable=False)
    # Returned as it reads back from its file (lists, not tuples), so a record kept in memory and
    # one loaded later are the same.
    return json.loads(text)


def _run_batch(arguments: tuple[list[WorkUnit], str | None]) -> list[dict[str, Any]]:
    """Run a batch of units (in a worker); their records go back to the parent, which keeps them."""
    units, out_dir = arguments
    records = []
    for unit in units:
        try:
            records.append(run_one(unit, out_dir))
        except SystemExit as error:
            # An agent's code calling sys.exit() would end the whole study (or a worker) without a
            # word; it is a failed unit, named with the agent that exited.
            raise UnitFailed(f"unit {unit.key} failed: {_exit_culprit(unit)} called sys.exit({error.code!r}) "
                             "(raised SystemExit) while it ran; an agent must raise an exception, not exit") from None
        except Exception as error:
            raise UnitFailed(f"unit {unit.key} failed: {type(error).__name__}: {error}") from error
    return records


def _exit_culprit(unit: WorkUnit) -> str:
    """Who ran the code that exited: the unit's agent when it has one (a sweep's), else the unit."""
    name = getattr(getattr(unit, "agent", None), "name", None)
    if not isinstance(name, str):
        return "its code"
    return f"the agent {echo(name, quote=False)}"


def _finished_on_disk(todo: Sequence[WorkUnit], out_dir: Path) -> int:
    """How many of ``todo`` have their file in ``out_dir`` (written whole or not at all)."""
    units = out_dir / UNITS_FOLDER
    return sum((units / f"{unit.key}.json").is_file() for unit in todo)


#: Guided batches: each batch holds this share of the remaining units per worker, at most
#: ``_MAX_BATCH`` and at least one.  Early batches are large (a message and a result per batch
#: cost nothing next to its work), the last ones single units, so no worker is left with a long
#: batch while the others have finished.
_BATCHES_PER_WORKER = 4
_MAX_BATCH = 32


def unit_batches(units: Sequence[Any], jobs: int) -> list[list[Any]]:
    """Consecutive, shrinking batches of ``units`` for ``jobs`` workers (single units in one process)."""
    if jobs == 1:
        return [[unit] for unit in units]
    batches, start = [], 0
    while start < len(units):
        size = max(1, min(_MAX_BATCH, (len(units) - start) // (jobs * _BATCHES_PER_WORKER)))
        batches.append(list(units[start:start + size]))
        start += size
    return batches


def execute_units(todo: Sequence[WorkUnit], *, total: int, out_dir: Path | None, jobs: int, backend: str,
                  progress: bool, desc: str = "runs") -> list[dict[str, Any]]:
    """Run ``todo`` (Ray already connected for ``backend="ray"``); their records, in the order they finished.

    ``total`` counts the study's units (the progress bar starts at ``total - len(todo)``).
    """
    bar = progress_bar(total=total, initial=total - len(todo), desc=desc, unit="run") if progress else None
    finished = [total - len(todo)]
    records: list[dict[str, Any]] = []

    def on_done(_: Any, batch_records: list[dict[str, Any]]) -> None:
        records.extend(batch_records)
        finished[0] += len(batch_records)
        if bar is not None:
            bar.update(len(batch_records))

    workers = 1 if backend == "local" and (jobs == 1 or len(todo) <= 1) else jobs
    folder = None if out_dir is None else str(out_dir)
    tasks = [(batch, folder) for batch in unit_batches(list(todo), workers)]
    describe = lambda task: task[0][0].key if len(task[0]) == 1 else f"batch from {task[0][0].key}"  # noqa: E731
    try:
        run_tasks(tasks, _run_batch, on_done, jobs=workers, backend=backend, describe=describe)
    except KeyboardInterrupt:
        acknowledge_interrupt()  # caught: the sweep reports it, however long its workers take to stop
        # Workers write each unit's file as it finishes, but report a batch only when all of it is
        # done (and a unit may finish between its file and its report): count the files.
        done = finished[0] if out_dir is None else max(finished[0], total - len(todo) + _finished_on_disk(todo, out_dir))
        raise SweepInterrupted(done, total, folder or "") from None
    finally:
        if bar is not None:
            bar.close()
    return records


class StudyFolder:
    """What a study's results folder holds beside its unit files: the manifest, and what is written after a run.

    :func:`run_units` calls its three methods while it holds the folder's lock.  This one keeps
    a study of one ``kind``: its manifest names the kind and every ``request`` (the study's
    parameters) run into the folder, and a folder of another kind is refused.  A study whose
    folder holds more (a regret sweep's merged manifest and ``results.csv``,
    :class:`~dueling_gym.experiments.sweeps.sweep.SweepFolder`) subclasses it.

    Parameters
    ----------
    kind : str
        What the folder holds (e.g. ``"CPE-DB sample-complexity study"``).
    request : dict, optional
        The study's parameters (JSON), recorded once per distinct request.
    """

    def __init__(self, kind: str, request: dict[str, Any] | None = None):
        if not isinstance(kind, str) or not kind:
            raise TypeError(f"kind must be a non-empty string, got {kind!r}")
        self.kind, self.request = kind, request or {}

    def manifest(self, out_dir: Path) -> dict[str, Any]:
        """The manifest to write: the folder's with this study added (ValueError: the folder cannot take it).

        Called before anything is written.
        """
        previous = read_manifest(out_dir)
        if previous is None:
            return {"format": FORMAT, "kind": self.kind, "dueling_gym": package_version(), "requests": [self.request],
                    "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
        held = previous.get("kind", "regret sweep")
        if held != self.kind:
            raise ValueError(f"{out_dir} holds a {held}, not a {self.kind}; use another folder")
        requests = list(previous.get("requests", []))
        if canonical_json(self.request) not in {canonical_json(known) for known in requests}:
            requests.append(self.request)
        return previous | {"requests": requests, "dueling_gym": package_version(),
                           "updated": time.strftime("%Y-%m-%dT%H:%M:%S")}

    def folder_units(self, manifest: dict[str, Any], units: Sequence[WorkUnit]) -> Sequence[WorkUnit]:
        """The units whose files are read (the study's own ``units`` here); a record is labelled by its unit here."""
        return units

    def finish(self, out_dir: Path, records: dict[str, dict[str, Any]]) -> None:
        """Write what the folder holds beside its units, given the record of every finished unit read or run, by key."""


def run_units(units: Sequence[WorkUnit], out_dir: str | os.PathLike | None, *, kind: str | None = None,
              request: dict[str, Any] | None = None, jobs: int = 1, backend: str = "local",
              address: str | None = None, progress: bool = True, desc: str = "runs",
              folder: StudyFolder | None = None) -> list[dict[str, Any]]:
    """Run every unit of a study that has no verified file in ``out_dir``; all their records, in order.

    Parameters
    ----------
    units : sequence of WorkUnit
        Units with the same key are run once.
    out_dir : path or None
        The study's folder (created if missing; its parent must exist): ``units/*.json`` and
        ``manifest.json``, which names the study's ``kind`` and every ``request`` (the study's
        parameters, JSON) run into it.  ``None`` runs everything and writes nothing.
    kind : str
        What the folder holds (e.g. ``"CPE-DB sample-complexity study"``); a folder holding
        another kind of study is refused.  Not needed with ``folder``.
    request : dict, optional
        The study's parameters, kept in the manifest.
    jobs, backend, address, progress, desc
        As for :func:`dueling_gym.experiments.sweeps.sweep.run_sweep` (``desc`` names the progress bar).
    folder : StudyFolder, optional
        What the folder holds beside its units (default: ``StudyFolder(kind, request)``).

    Raises
    ------
    ValueError, TypeError
        On bad arguments or an unusable folder, before anything is written.
    SweepInterrupted
        On Ctrl-C: finished units are kept; running again resumes.
    UnitFailed
        When a unit raised an error.
    """
    jobs = check_backend(jobs, backend)
    if folder is None:
        folder = StudyFolder(kind, request)  # type: ignore[arg-type] - a missing kind is refused there
    unique = list({unit.key: unit for unit in units}.values())
    label_by = {unit.key: unit for unit in unique}
    by_key: dict[str, dict[str, Any]] = {}
    started_ray = False
    try:
        if out_dir is None:
            started_ray = connect_ray(address, jobs) if backend == "ray" else False
            records = execute_units(unique, total=len(unique), out_dir=None, jobs=jobs, backend=backend,
                                    progress=progress, desc=desc)
            by_key.update((record["key"], label_by[record["key"]].labelled(record)) for record in records)
        else:
            path = Path(out_dir)
            with locked_folder(path):
                manifest = folder.manifest(path)
                read = folder.folder_units(manifest, unique)
                started_ray = connect_ray(address, jobs) if backend == "ray" else False
                atomic_write_text(path / MANIFEST, json.dumps(manifest, indent=2))
                for unit, record in zip(read, load_units(read, path)):
                    if record is not None:
                        by_key[unit.key] = record
                todo = [unit for unit in unique if unit.key not in by_key]
                records = execute_units(todo, total=len(unique), out_dir=path, jobs=jobs, backend=backend,
                                        progress=progress, desc=desc)
                # Labelled as a record read back from its file is: by the folder's unit.
                label_by.update((unit.key, unit) for unit in read)
                by_key.update((record["key"], label_by[record["key"]].labelled(record)) for record in records)
                folder.finish(path, by_key)
    finally:
        if started_ray:
            import ray

            ray.shutdown()
    missing = [unit.key for unit in unique if unit.key not in by_key]
    if missing:  # pragma: no cover - a unit file vanished while the study ran
        raise RuntimeError(f"units missing after the run: {missing[:3]}")
    return [by_key[unit.key] for unit in units]
