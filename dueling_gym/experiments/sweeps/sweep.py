"""Sweeps: agents x problems x seeds, one verified result file per finished unit, resumable.

A *unit* is one run of one agent on one problem with one seed at the sweep's horizon.  Each
finished unit is written to its own JSON file atomically, with the unit's full identity (see
:class:`~dueling_gym.experiments.sweeps.sweep.Unit`), so a sweep that is stopped at any moment
resumes where it stopped: a file is reused only when it is complete and belongs to exactly the
unit being asked for; anything else is moved to ``units-rejected/`` with a warning and run again.

Everything is validated before anything is written: agents (each built once), problems, seeds,
the regret notion, the output folder, and the compatibility with a sweep already in that
folder.  A folder may be *extended* (more seeds, agents or problems at the same horizon,
shuffling, checkpoints and package version); a conflicting sweep is refused with the
parameter that differs.

A sweep is the units of its :class:`SweepSpec` run by the one runner of every study
(:func:`~dueling_gym.experiments.runs.runner.run_units`): in this process (``jobs=1``), a
local process pool, or Ray (``backend="ray"``).  Every unit is fully determined by its
identity, so backends and job counts give identical results.  What only a sweep has is its
folder (:class:`SweepFolder`): the manifest merged with the folder's sweeps, and
``results.csv`` of every finished unit of the folder.
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from dueling_gym.experiments.runs.backends import SweepInterrupted, UnitFailed
from dueling_gym.experiments.runs.runner import StudyFolder, run_one, run_units
from dueling_gym.experiments.sweeps.spec import (
    AgentSpec,
    ProblemSpec,
    SweepSpec,
    MAX_RUNS,
    Unit,
    canonical_json,
    package_version,
    unit_problem,
    with_distinct_labels,
)
from dueling_gym.experiments.runs.store import (
    FORMAT,
    MANIFEST,
    TABLE,
    atomic_write_text,
    load_units,
    read_manifest,
    stray_files,
    write_table,
)

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
    "SweepFolder",
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


def run_unit(unit: Unit, out_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    """Run one unit and return its record; with ``out_dir``, also write it atomically."""
    return run_one(unit, out_dir)


# --------------------------------------------------------------------------------------------
# The manifest: what a folder holds, and whether a new sweep may join it
# --------------------------------------------------------------------------------------------

def _read_manifest(out_dir: Path) -> tuple[dict[str, Any] | None, list[SweepSpec]]:
    """The folder's manifest (None when there is none) and its requests as specs, checked as it is read.

    A manifest is read from a file, so each request is rebuilt as a :class:`SweepSpec`, which
    checks it; the specs are kept, so no request is checked twice.
    """
    from dueling_gym.agents.external import AgentImportError

    manifest = read_manifest(out_dir)
    if manifest is None:
        return None, []
    if "kind" in manifest:
        raise ValueError(f"{out_dir} holds a {manifest['kind']}, not a regret sweep; use another folder")
    try:  # every field a sweep reads, with the type it needs
        for key, kind in (("horizon", int), ("shuffle_arms", bool), ("checkpoints", list), ("dueling_gym", str),
                          ("agents", list), ("problems", list), ("requests", list)):
            if not isinstance(manifest[key], kind):
                raise TypeError(f"{key!r} is not a {kind.__name__}")
        specs = _specs_of(manifest)
    except AgentImportError as error:
        # The folder is intact; the code of one of its agents is gone or broken.
        raise ValueError(f"{out_dir} holds runs of an agent whose module cannot be imported: {error}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        shown = f"no {error}" if isinstance(error, KeyError) else str(error)
        raise ValueError(f"{out_dir / MANIFEST} is damaged ({shown}); use another folder") from None
    return manifest, specs


def _sweep_wide(spec: SweepSpec) -> dict[str, Any]:
    return {"horizon": spec.horizon, "shuffle_arms": spec.shuffle_arms,
            "checkpoints": list(spec.resolved_checkpoints), "dueling_gym": package_version()}


def _merge_manifest(previous: dict[str, Any] | None, spec: SweepSpec, out_dir: Path,
                    notion: str | None) -> tuple[dict[str, Any], tuple[ProblemSpec, ...]]:
    """The folder's manifest with ``spec`` added, and ``spec``'s problems under the folder's labels.

    ValueError naming the parameter that conflicts.
    """
    wide = _sweep_wide(spec)
    # A problem keeps the label it has in the folder; one whose name another problem of the
    # folder holds is shown with its digest, so the runs of the two are never merged or lost.
    taken = {} if previous is None else {p["label"]: canonical_json(_problem_fields(p)) for p in previous["problems"]}
    labelled = with_distinct_labels(spec.problems, taken)
    new_problems = [p.to_json() | {"label": p.label} for p in labelled]
    request = {"agents": [a.label for a in spec.agents], "problems": [p.label for p in labelled],
               "seeds": list(spec.seeds)}
    if previous is None:
        return {"format": FORMAT, **wide, "notion": notion, "agents": spec.to_json()["agents"],
                "problems": new_problems, "requests": [request], "versions": _versions(),
                "created": time.strftime("%Y-%m-%dT%H:%M:%S")}, labelled
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
    problems.update({p["label"]: p for p in new_problems})
    requests = list(previous["requests"])
    if request not in requests:
        requests.append(request)
    manifest.update(agents=list(agents.values()), problems=list(problems.values()), requests=requests,
                    updated=time.strftime("%Y-%m-%dT%H:%M:%S"))
    if manifest.get("notion") is None:
        manifest["notion"] = notion
    return manifest, labelled


def _problem_fields(entry: dict[str, Any]) -> dict[str, Any]:
    """A manifest's problem entry without its label: what :meth:`ProblemSpec.to_json` gives."""
    return {key: entry[key] for key in ("name", "n_arms", "problem_seed", "options")}


def _specs_of(manifest: dict[str, Any]) -> list[SweepSpec]:
    agents = {a["label"]: AgentSpec(a["name"], a["hyperparameters"], a["label"]) for a in manifest["agents"]}
    problems = {p["label"]: ProblemSpec(p["name"], p["n_arms"], p["problem_seed"], p["options"], p["label"])
                for p in manifest["problems"]}
    if len(problems) != len(manifest["problems"]):
        raise ValueError("two problems have one label")
    return [SweepSpec(agents=tuple(agents[label] for label in request["agents"]),
                      problems=tuple(problems[label] for label in request["problems"]),
                      seeds=tuple(request["seeds"]), horizon=manifest["horizon"],
                      checkpoints=manifest["checkpoints"], shuffle_arms=manifest["shuffle_arms"])
            for request in manifest["requests"]]


def _union(unit_lists: Iterable[Sequence[Unit]]) -> list[Unit]:
    """The units of the folder's requests, in request order, each once."""
    units: dict[str, Unit] = {}
    for request_units in unit_lists:
        for unit in request_units:
            units.setdefault(unit.key, unit)
        if len(units) > MAX_RUNS:
            raise ValueError(f"the folder's sweeps hold more than the {MAX_RUNS} runs one results folder holds; "
                             "use another folder")
    return list(units.values())


def folder_units(out_dir: str | os.PathLike) -> tuple[list[Unit], dict[str, Any]]:
    """Every unit the sweeps run into ``out_dir`` asked for (finished or not), and the manifest."""
    out_dir = Path(out_dir)
    manifest, specs = _read_manifest(out_dir)
    if manifest is None:
        raise ValueError(f"no results in {out_dir} (no {MANIFEST})")
    return _union(spec.units() for spec in specs), manifest


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
    title: str | None = None,
) -> SweepResult:
    """:func:`run_sweep`, returning the folder's records as well (a :class:`SweepResult`).

    The folder's unit files are read once, before running; the records of the units run now
    come back from the workers, so nothing is read twice.  ``title`` (e.g. a preset's) is kept
    in the manifest for the figures drawn later from the folder (the first one given stays).
    """
    if not isinstance(spec, SweepSpec):
        raise TypeError(f"spec must be a SweepSpec, got {type(spec).__name__}")
    if notion is not None:
        spec.check_notion(notion)
    folder = SweepFolder(spec, notion, title)
    records = run_units(spec.units(), out_dir, folder=folder, jobs=jobs, backend=backend, address=address,
                        progress=progress, desc="sweep")
    return SweepResult(records, folder.records, folder.units, folder.written)


class SweepFolder(StudyFolder):
    """A regret sweep's results folder, for :func:`~dueling_gym.experiments.runs.runner.run_units`.

    Its manifest is the folder's merged with the sweep (a conflicting sweep is refused with the
    parameter that differs); every unit the folder's sweeps asked for is read, so a record is
    labelled as the folder labels its problem; ``results.csv`` holds every finished unit of the
    folder.  What only a sweep has lives here; everything else is the runner's.

    Parameters
    ----------
    spec : SweepSpec
        The sweep, validated when it was built (nothing of it is checked again here).
    notion : str, optional
        The regret notion recorded in a new manifest.
    title : str, optional
        Kept in the manifest for the figures (the first one given stays).

    Attributes
    ----------
    written : dict
        The manifest as written (after the run).
    units : list of Unit
        Every unit the folder's sweeps asked for, in the folder's order.
    records : list of dict
        The records of the folder's finished units, in that order (what ``results.csv`` holds).
    """

    def __init__(self, spec: SweepSpec, notion: str | None = None, title: str | None = None):
        super().__init__("regret sweep")
        self.spec, self.notion, self.title = spec, notion, title
        self.written: dict[str, Any] = {}
        self.units: list[Unit] = []
        self.records: list[dict[str, Any]] = []

    def manifest(self, out_dir: Path) -> dict[str, Any]:
        previous, specs = _read_manifest(out_dir)
        manifest, problems = _merge_manifest(previous, self.spec, out_dir, self.notion)
        if self.title and not manifest.get("title"):
            manifest["title"] = str(self.title)
        # The earlier requests were checked as the manifest was read, this one as its spec was
        # built: their units are made from those specs, not from the manifest checked again.
        spec = self.spec
        checkpoints = spec.resolved_checkpoints
        ours = [Unit(a, p, s, spec.horizon, spec.shuffle_arms, checkpoints)
                for p in problems for a in spec.agents for s in spec.seeds]
        self.units = _union([*(known.units() for known in specs), ours])
        self.written = manifest
        return manifest

    def folder_units(self, manifest: dict[str, Any], units: Sequence[Any]) -> list[Unit]:
        return self.units

    def finish(self, out_dir: Path, records: dict[str, dict[str, Any]]) -> None:
        self.records = [records[unit.key] for unit in self.units if unit.key in records]
        write_table(self.records, out_dir / TABLE)
