"""Re-play a results folder's units and compare them, number for number, with their files.

Every run of the library is deterministic given its identity, so a unit file can be checked
by running its unit again: :func:`verify_folder` (``dueling-gym verify DIR``) re-plays all or a
random share of a folder's unit files -- a regret sweep, the CPE-DB sample-complexity study or
the learned-vs-classic evaluation -- and reports every file whose numbers differ, field by
field.  It is the defence against a folder edited by hand with care (a file whose checks all
pass but whose numbers belong to another run) and a reproducibility check across machines.

The tables of a regret sweep are checked too: ``results.csv``, ``summary.md`` and
``summary.csv`` are made again, in memory, from every unit file that verifies, and compared
with the files -- a table with runs no unit file backs (units deleted), an edited table or a
folder whose ``units/`` is empty fails, naming the table and what differs.
Nothing in the folder is written or moved.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dueling_gym.experiments.runs.runner import check_backend, execute_units
from dueling_gym.experiments.runs.store import (
    CONTENT_DIGEST,
    TABLE,
    UNITS_FOLDER,
    read_manifest,
    record_problem,
    table_text,
)
from dueling_gym.experiments.runs.work_units import WorkUnit, canonical_json
from dueling_gym.validation import check_integer, check_number

__all__ = ["VerifyReport", "verify_folder", "REGRET_SWEEP"]

#: The kind of a folder whose manifest names none, a regret sweep (``dueling-gym run`` / ``reproduce``).
REGRET_SWEEP = "regret sweep"


def _unit_class(kind: str) -> type[WorkUnit]:
    if kind == REGRET_SWEEP:
        from dueling_gym.experiments.sweeps.spec import Unit

        return Unit
    from dueling_gym.experiments.studies import learned_evaluation, sample_complexity

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
    tables : dict
        Table file name -> how it differs from the table the unit files give (regret sweeps:
        ``results.csv``, ``summary.md``, ``summary.csv``); ``units`` when there is no unit file.
    """

    kind: str
    n_files: int
    identical: list[str] = field(default_factory=list)
    differing: dict[str, list[str]] = field(default_factory=dict)
    failing: dict[str, str] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every re-played file was identical, every sampled file could be re-played,
        there was a unit file to re-play and every table is what the unit files give."""
        return self.n_files > 0 and not self.differing and not self.failing and not self.tables

    def lines(self) -> list[str]:
        """The report as lines of text (what the command prints)."""
        checked = len(self.identical) + len(self.differing) + len(self.failing)
        lines = [f"{self.kind}: {checked} of {self.n_files} unit files checked, {len(self.identical)} identical when "
                 f"re-played, {len(self.differing)} differ, {len(self.failing)} cannot be re-played"]
        lines += [f"  differs: {name}: {', '.join(fields)}" for name, fields in sorted(self.differing.items())]
        lines += [f"  cannot be re-played: {name}: {reason}" for name, reason in sorted(self.failing.items())]
        lines += [f"  table differs: {name}: {reason}" for name, reason in self.tables.items()]
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
    if kind == REGRET_SWEEP:
        report.tables.update(_table_differences(folder, manifest))
    if not files:
        report.tables.setdefault(UNITS_FOLDER, "holds no unit file: nothing to re-play")
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


# --------------------------------------------------------------------------------------------
# The tables of a regret sweep, made again from its unit files
# --------------------------------------------------------------------------------------------

#: The summaries a regret sweep's report writes beside ``results.csv`` (only a report writes them).
_SUMMARIES = ("summary.md", "summary.csv")


def _table_differences(folder: Path, manifest: dict[str, Any]) -> dict[str, str]:
    """Table file name -> how it differs from the table made from the folder's unit files (in memory).

    Every unit file that verifies (identity, digest, plausibility; not re-played) is read, as
    ``dueling-gym plot`` reads them; one that does not is reported by the re-play already.
    """
    from dueling_gym.experiments.sweeps.folder_report import summary_files, summary_sections
    from dueling_gym.experiments.sweeps.sweep import load_results

    try:
        with warnings.catch_warnings():  # damaged unit files: reported once, by the re-play
            warnings.simplefilter("ignore", UserWarning)
            records = load_results(folder)
    except ValueError as error:
        return {TABLE: f"cannot be made from the unit files ({error})"}
    differences = {}
    written = _read_text(folder / TABLE)
    if written is None:
        if records:
            differences[TABLE] = f"is missing, though {_runs_count(len(records))} have unit files"
    else:
        reason = _runs_differ(written, table_text(records))
        if reason:
            differences[TABLE] = reason
    summaries = {name: _read_text(folder / name) for name in _SUMMARIES}
    if all(text is None for text in summaries.values()):
        return differences  # a sweep run without a report (run_sweep) has none
    if not records:
        differences.update({name: "shows runs, but no unit file verifies" for name, text in summaries.items()
                            if text is not None})
        return differences
    sections = summary_sections(records)
    # The first section is the notion the folder was run with, or (none recorded) the one plotted.
    primaries = [manifest["notion"]] if manifest.get("notion") in sections else list(sections)
    made = [summary_files(sections, primary) for primary in primaries]
    for index, name in enumerate(_SUMMARIES):
        text = summaries[name]
        if text is None:
            differences[name] = f"is missing, though {_SUMMARIES[1 - index]} is there"
        elif all(text != files[index] for files in made):
            differences[name] = _first_difference(text, made[0][index])
    return differences


def _read_text(path: Path) -> str | None:
    """The text of ``path``; None when there is no such file."""
    if not path.exists():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:  # compared, and so reported as differing
        return f"<unreadable: {error}>"


def _runs_differ(written: str, expected: str) -> str | None:
    """How the table ``written`` differs from ``expected``, run by run (agent, problem, seed); None if equal."""
    if written == expected:
        return None
    try:
        old_header, old_runs = _runs(written)
        new_header, new_runs = _runs(expected)
    except (csv.Error, ValueError):
        return "is not a table of runs"
    if not new_runs:
        return f"shows {_runs_count(len(old_runs))}, and no unit file backs any"
    if old_header != new_header:
        return f"has the columns {old_header}, the unit files give {new_header}"
    unbacked = [run for run in old_runs if run not in new_runs]
    absent = [run for run in new_runs if run not in old_runs]
    changed = [run for run in old_runs if run in new_runs and old_runs[run] != new_runs[run]]
    parts = []
    for runs, what in ((unbacked, "that no unit file backs"), (absent, "of unit files missing from it"),
                       (changed, "whose rows differ from their unit files")):
        if runs:
            parts.append(f"{_runs_count(len(runs))} {what} (e.g. {_shown(runs[0])})")
    return "; ".join(parts) or "its rows are in another order, or its text is otherwise not what the unit files give"


def _runs(text: str) -> tuple[list[str], dict[tuple[str, ...], list[list[str]]]]:
    """The header and the rows of each run (agent, problem, seed) of a ``results.csv`` text."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise ValueError("an empty table")
    runs: dict[tuple[str, ...], list[list[str]]] = {}
    for row in rows[1:]:
        runs.setdefault(tuple(row[:3]), []).append(row)
    return rows[0], runs


def _runs_count(count: int) -> str:
    return f"{count} run" if count == 1 else f"{count} runs"


def _shown(run: tuple[str, ...]) -> str:
    return ", ".join(f"{name} {value[:60]!r}" for name, value in zip(("agent", "problem", "seed"), run))


def _first_difference(written: str, expected: str) -> str:
    """Where ``written`` first departs from ``expected``, line by line."""
    old, new = written.splitlines(), expected.splitlines()
    for number, (line, wanted) in enumerate(zip(old, new), start=1):
        if line != wanted:
            return f"line {number} is {line[:100]!r}, the unit files give {wanted[:100]!r}"
    if len(old) > len(new):
        return f"has {len(old) - len(new)} lines more than the unit files give (from line {len(new) + 1})"
    if len(old) < len(new):
        return f"lacks {len(new) - len(old)} lines the unit files give (from line {len(old) + 1})"
    return "differs from what the unit files give in its line endings or trailing characters"
