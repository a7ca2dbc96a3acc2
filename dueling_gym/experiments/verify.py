"""Re-play a results folder's units and compare them, number for number, with their files.

Every run of the library is deterministic given its identity, so a unit file can be checked
by running its unit again: :func:`verify_folder` (``dueling-gym verify DIR``) re-plays all or a
random share of a folder's unit files -- a regret sweep, the CPE-DB sample-complexity study or
the learned-vs-classic evaluation -- and reports every file whose numbers differ, field by
field.  It is the defence against a folder edited by hand with care (a file whose checks all
pass but whose numbers belong to another run) and a reproducibility check across machines.
Nothing in the folder is written or moved.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dueling_gym.experiments.runner import check_backend, execute_units
from dueling_gym.experiments.sweep_store import CONTENT_DIGEST, UNITS_FOLDER, read_manifest, record_problem
from dueling_gym.experiments.work_units import WorkUnit, canonical_json
from dueling_gym.validation import check_integer, check_number

__all__ = ["VerifyReport", "verify_folder", "REGRET_SWEEP"]

#: The kind of a folder whose manifest names none, a regret sweep (``dueling-gym run`` / ``reproduce``).
REGRET_SWEEP = "regret sweep"


def _unit_class(kind: str) -> type[WorkUnit]:
    if kind == REGRET_SWEEP:
        from dueling_gym.experiments.sweep_spec import Unit

        return Unit
    from dueling_gym.experiments import learned_evaluation, sample_complexity

    classes: dict[str, type[WorkUnit]] = {sample_complexity.KIND: sample_complexity.SampleComplexityUnit,
                                          learned_evaluation.KIND: learned_evaluation.EvaluationUnit}
    if kind not in classes:
        raise ValueError(f"cannot verify a folder of kind {kind!r}; known: {[REGRET_SWEEP, *classes]}")
    return classes[kind]


@dataclass
class VerifyReport:
    """What :func:`verify_folder` found.

    Attributes
    ----------
    kind : str
        What the folder holds.
    n_files : int
        Unit files in the folder.
    identical : list of str
        Files whose re-play gave exactly their numbers (time measurements aside).
    differing : dict
        File name -> the fields whose re-played values differ.
    failing : dict
        File name -> why the file was not re-played (it is not a readable, plausible unit file).
    """

    kind: str
    n_files: int
    identical: list[str] = field(default_factory=list)
    differing: dict[str, list[str]] = field(default_factory=dict)
    failing: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every re-played file was identical and every sampled file could be re-played."""
        return not self.differing and not self.failing

    def lines(self) -> list[str]:
        """The report as lines of text (what the command prints)."""
        checked = len(self.identical) + len(self.differing) + len(self.failing)
        lines = [f"{self.kind}: {checked} of {self.n_files} unit files checked, {len(self.identical)} identical when "
                 f"re-played, {len(self.differing)} differ, {len(self.failing)} cannot be re-played"]
        lines += [f"  differs: {name}: {', '.join(fields)}" for name, fields in sorted(self.differing.items())]
        lines += [f"  cannot be re-played: {name}: {reason}" for name, reason in sorted(self.failing.items())]
        return lines


def _differing_fields(written: dict[str, Any], replayed: dict[str, Any], volatile: tuple[str, ...]) -> list[str]:
    ignored = {CONTENT_DIGEST, *volatile}
    names = (set(written) | set(replayed)) - ignored
    return sorted(name for name in names if canonical_json(written.get(name)) != canonical_json(replayed.get(name)))


def verify_folder(out_dir: str | os.PathLike, *, fraction: float = 1.0, seed: int = 0, jobs: int = 1,
                  progress: bool = True) -> VerifyReport:
    """Re-play the unit files of ``out_dir`` (all, or a random ``fraction``) and compare them with their files.

    Parameters
    ----------
    out_dir : path
        A results folder (it is only read).
    fraction : float in (0, 1], default 1
        Share of the unit files re-played, drawn with ``numpy.random.default_rng(seed)``; at least one.
    seed : int, default 0
    jobs : int, default 1
        Worker processes re-playing units.
    progress : bool
        Progress bar.

    Raises
    ------
    ValueError
        When ``out_dir`` is no results folder or an argument is out of range.
    """
    fraction = check_number("fraction", fraction, strict=False)
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    seed = check_integer("seed", seed, minimum=0)
    jobs = check_backend(jobs, "local")
    folder = Path(out_dir)
    if not folder.is_dir():
        raise ValueError(f"no results in {folder} (not a folder)")
    manifest = read_manifest(folder)
    if manifest is None:
        raise ValueError(f"no results in {folder} (no manifest.json)")
    kind = manifest.get("kind", REGRET_SWEEP)
    unit_class = _unit_class(kind)
    files = sorted(path for path in (folder / UNITS_FOLDER).glob("*.json")) if (folder / UNITS_FOLDER).is_dir() else []
    report = VerifyReport(kind, len(files))
    if not files:
        return report
    count = max(1, math.ceil(fraction * len(files)))
    chosen = sorted(np.random.default_rng(seed).choice(len(files), size=count, replace=False))
    written: dict[str, tuple[str, dict[str, Any]]] = {}
    units = []
    for index in chosen:
        path = files[index]
        try:
            record = json.loads(path.read_text())
            unit = unit_class.from_record(record)
            reason = record_problem(record, unit)
            if reason is None and unit.key != path.stem:
                reason = f"its identity names another file ({unit.key}.json)"
        except Exception as error:  # noqa: BLE001 - any damage is reported, never fatal
            reason = f"not a unit file of this folder ({type(error).__name__}: {error})"
        if reason is not None:
            report.failing[path.name] = reason
            continue
        written[unit.key] = (path.name, record)
        units.append(unit)
    by_key = {unit.key: unit for unit in units}
    for replayed in execute_units(units, total=len(units), out_dir=None, jobs=jobs, backend="local", progress=progress,
                                  desc="verify"):
        name, record = written[replayed["key"]]
        fields = _differing_fields(record, replayed, by_key[replayed["key"]].volatile_fields)
        if fields:
            report.differing[name] = fields
        else:
            report.identical.append(name)
    report.identical.sort()
    return report
