"""The one runner of every study: units of work, one verified file each, resumable, on any backend.

Every study of the library -- regret sweeps (:mod:`dueling_gym.experiments.sweep`), the CPE-DB
sample-complexity study and the learned-vs-classic evaluation -- is a list of
:class:`~dueling_gym.experiments.work_units.WorkUnit` run here, so they share one behaviour:

* each finished unit is written atomically to ``units/<key>.json`` with its identity; a study
  stopped at any moment resumes where it stopped, and a file is reused only when it verifies
  (anything else is moved to ``units-rejected/`` with a warning and run again);
* the backends: this process (``jobs=1``), a local pool of warm workers that are handed
  batches of units, or Ray (``backend="ray"``); every unit is fully determined by its
  identity, so backends and job counts give identical results;
* Ctrl-C stops within seconds and keeps the finished units (:class:`~dueling_gym.experiments.sweep.SweepInterrupted`);
  workers die with their parent; a unit that raises stops the study
  (:class:`~dueling_gym.experiments.sweep.UnitFailed`).

A results folder belongs to one kind of study (``manifest.json`` says which); a folder of
another kind is refused before anything is written.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path
from typing import Any, Sequence

from dueling_gym.experiments.sweep_backends import (
    SweepInterrupted,
    UnitFailed,
    connect_ray,
    progress_bar,
    run_pool,
    run_ray,
    run_serial,
)
from dueling_gym.experiments.sweep_store import (
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
from dueling_gym.experiments.work_units import WorkUnit, canonical_json, package_version
from dueling_gym.validation import echo

__all__ = ["run_units", "run_one", "execute_units", "unit_batches", "check_backend", "usable_cores"]


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
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    cores = usable_cores()
    # Once per process and job count: a study checks its arguments, then hands them to run_units.
    if backend == "local" and jobs > cores and jobs not in _WARNED_JOBS:
        _WARNED_JOBS.add(jobs)
        warnings.warn(f"jobs={jobs} is more than the {cores} cores this machine lets the process use; the workers "
                      "will share them (and never outnumber the units)", UserWarning, stacklevel=3)
    return jobs


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
        if backend == "ray":
            run_ray(tasks, _run_batch, on_done, describe)
        elif workers == 1:
            run_serial(tasks, _run_batch, on_done, describe)
        else:
            run_pool(tasks, _run_batch, on_done, min(jobs, len(tasks)), describe)
    except KeyboardInterrupt:
        # Workers write each unit's file as it finishes, but report a batch only when all of it is
        # done (and a unit may finish between its file and its report): count the files.
        done = finished[0] if out_dir is None else max(finished[0], total - len(todo) + _finished_on_disk(todo, out_dir))
        raise SweepInterrupted(done, total, folder or "") from None
    finally:
        if bar is not None:
            bar.close()
    return records


def _study_manifest(out_dir: Path, kind: str, request: dict[str, Any]) -> dict[str, Any]:
    """The folder's manifest with ``request`` added; ValueError when the folder holds another study."""
    previous = read_manifest(out_dir)
    if previous is None:
        return {"format": FORMAT, "kind": kind, "dueling_gym": package_version(), "requests": [request],
                "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
    held = previous.get("kind", "regret sweep")
    if held != kind:
        raise ValueError(f"{out_dir} holds a {held}, not a {kind}; use another folder")
    requests = list(previous.get("requests", []))
    if canonical_json(request) not in {canonical_json(known) for known in requests}:
        requests.append(request)
    return previous | {"requests": requests, "dueling_gym": package_version(),
                       "updated": time.strftime("%Y-%m-%dT%H:%M:%S")}


def run_units(units: Sequence[WorkUnit], out_dir: str | os.PathLike | None, *, kind: str,
              request: dict[str, Any] | None = None, jobs: int = 1, backend: str = "local",
              address: str | None = None, progress: bool = True, desc: str = "runs") -> list[dict[str, Any]]:
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
        another kind of study is refused.
    jobs, backend, address, progress, desc
        As for :func:`dueling_gym.experiments.sweep.run_sweep` (``desc`` names the progress bar).

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
    unique = list({unit.key: unit for unit in units}.values())
    by_key: dict[str, dict[str, Any]] = {}
    started_ray = False
    try:
        if out_dir is None:
            started_ray = connect_ray(address, jobs) if backend == "ray" else False
            records = execute_units(unique, total=len(unique), out_dir=None, jobs=jobs, backend=backend,
                                    progress=progress, desc=desc)
        else:
            folder = Path(out_dir)
            with locked_folder(folder):
                manifest = _study_manifest(folder, kind, request or {})
                started_ray = connect_ray(address, jobs) if backend == "ray" else False
                atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=2))
                for unit, record in zip(unique, load_units(unique, folder)):
                    if record is not None:
                        by_key[unit.key] = record
                todo = [unit for unit in unique if unit.key not in by_key]
                records = execute_units(todo, total=len(unique), out_dir=folder, jobs=jobs, backend=backend,
                                        progress=progress, desc=desc)
    finally:
        if started_ray:
            import ray

            ray.shutdown()
    unit_of = {unit.key: unit for unit in unique}
    for record in records:
        by_key[record["key"]] = unit_of[record["key"]].labelled(record)
    return [by_key[unit.key] for unit in units]
