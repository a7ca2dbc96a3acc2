"""The results folder of a sweep: manifest, unit files, verification and the tidy table.

Layout of a folder ``P``::

    P/manifest.json        sweep-wide parameters (horizon, shuffling, checkpoints, version),
                           every agent and problem ever requested, and the requests themselves
    P/units/*.json         one file per finished unit, written atomically
    P/units-rejected/      unit files that failed verification (moved here, never deleted)
    P/results.csv          one row per (unit, checkpoint), every regret notion
    P/.lock                held while a sweep runs in P

The same layout (without ``results.csv``) holds every study run by the one runner
(:mod:`dueling_gym.experiments.runs.runner`); ``manifest.json`` then names the study's ``kind``.
A unit file holds the unit's identity (see :class:`~dueling_gym.experiments.runs.work_units.WorkUnit`);
a file is only used when it parses, is complete and its identity equals the unit it is
supposed to be.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import time
import warnings
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from dueling_gym.atomic_files import atomic_write_text
from dueling_gym.experiments.runs.work_units import WorkUnit, canonical_json

__all__ = ["atomic_write_text", "check_out_dir", "locked_folder", "read_manifest", "record_problem", "load_unit",
           "load_units", "write_table", "table_text",
           "FolderLock", "remove_stale_temporaries", "stray_files", "content_digest",
           "UNITS_FOLDER", "REJECTED_FOLDER", "MANIFEST", "TABLE", "FORMAT", "CONTENT_DIGEST"]

UNITS_FOLDER = "units"
REJECTED_FOLDER = "units-rejected"
MANIFEST = "manifest.json"
TABLE = "results.csv"
#: Version of the unit-file and manifest layout (since 3, unit files carry a digest of their content).
FORMAT = 3
#: The field of a unit file holding the SHA-256 of the rest of its content.
CONTENT_DIGEST = "content_sha256"


def content_digest(record: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``record`` without its :data:`CONTENT_DIGEST` field."""
    return hashlib.sha256(canonical_json({k: v for k, v in record.items() if k != CONTENT_DIGEST}).encode()).hexdigest()


def check_out_dir(out_dir: Path) -> None:
    """Refuse an output folder that is a file, has no parent folder or cannot be written."""
    if out_dir.exists():
        if not out_dir.is_dir():
            raise ValueError(f"output folder {out_dir} is a file, not a folder")
        target = out_dir
    else:
        parent = out_dir.parent
        if parent.exists() and not parent.is_dir():
            raise ValueError(f"cannot create output folder {out_dir}: its parent {parent} is a file")
        if not parent.is_dir():
            raise ValueError(f"cannot create output folder {out_dir}: its parent {parent} does not exist")
        target = parent
    if not os.access(target, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write to {target}: permission denied")
    for sub in (UNITS_FOLDER, MANIFEST):
        if (out_dir / sub).exists() and not os.access(out_dir / sub, os.W_OK):
            raise ValueError(f"cannot write to {out_dir / sub}: permission denied")


class FolderLock:
    """An exclusive lock on a results folder, so two sweeps never write one folder at once.

    Where :mod:`fcntl` exists (Linux, macOS) the lock is ``flock`` on ``.lock``, taken without
    waiting.  Elsewhere (Windows) the maintained ``filelock`` library takes the same
    non-waiting exclusive lock on the same file.  Both refuse a busy folder with the same
    message, and on POSIX both lock with ``flock``, so they exclude each other.
    """

    def __init__(self, out_dir: Path):
        self.path = out_dir / ".lock"
        self._handle: Any = None
        self._portable: Any = None

    def __enter__(self) -> FolderLock:
        try:
            import fcntl
        except ImportError:
            return self._enter_portable()
        self._handle = open(self.path, "a+")
        try:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._handle.close()
            raise self._busy() from None
        return self

    def _enter_portable(self) -> FolderLock:
        import filelock

        lock = filelock.FileLock(str(self.path), timeout=0)
        try:
            lock.acquire()
        except filelock.Timeout:
            raise self._busy() from None
        self._portable = lock
        return self

    def _busy(self) -> ValueError:
        return ValueError(f"{self.path.parent} is in use by another running sweep")

    def __exit__(self, *exc: Any) -> None:
        if self._portable is not None:
            self._portable.release()
            self._portable = None
        else:
            self._handle.close()  # closing releases the lock


@contextlib.contextmanager
def locked_folder(out_dir: Path) -> Iterator[None]:
    """Create ``out_dir`` if needed and hold its lock; what a folder holds is read only inside.

    Reading the manifest before the lock would let a sweep started meanwhile write its request
    and be overwritten.  A folder this call created is removed again when the block fails
    before writing anything into it (a refused sweep leaves nothing behind).
    """
    check_out_dir(out_dir)
    created = not out_dir.exists()
    out_dir.mkdir(exist_ok=True)
    try:
        with FolderLock(out_dir):
            remove_stale_temporaries(out_dir)
            yield
    except BaseException:
        if created and [path.name for path in out_dir.iterdir()] in ([], [".lock"]):
            (out_dir / ".lock").unlink(missing_ok=True)
            out_dir.rmdir()
        raise


def remove_stale_temporaries(out_dir: Path) -> None:
    """Delete half-written temporaries of killed writers (only called while holding the lock)."""
    folder = out_dir / UNITS_FOLDER
    if folder.is_dir():
        for path in folder.glob(".*.tmp"):
            path.unlink(missing_ok=True)


def read_manifest(out_dir: Path) -> dict[str, Any] | None:
    """The manifest of ``out_dir`` (None for a new folder); ValueError when it cannot be used.

    Refused: unit files without a manifest, a manifest that does not parse, and one written in
    another folder format.
    """
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


def record_problem(record: dict[str, Any], unit: WorkUnit) -> str | None:
    """Why ``record`` is not a complete result of ``unit`` (None when it is)."""
    if not isinstance(record, dict):
        return "not a unit record"
    if record.get("format") != FORMAT:
        return f"unit-file format {record.get('format')!r}, expected {FORMAT}"
    identity = record.get("identity")
    if not isinstance(identity, dict):
        return "no identity"
    if canonical_json(identity) != canonical_json(unit.identity):
        differing = sorted(k for k in set(identity) | set(unit.identity) if identity.get(k) != unit.identity.get(k))
        return "belongs to another unit (differs in " + ", ".join(differing) + ")"
    if record.get(CONTENT_DIGEST) != content_digest(record):
        return f"its content does not match its {CONTENT_DIGEST} (the file was edited)"
    if record.get("key") != unit.key:
        return f"key is {record.get('key')!r:.80}, not the file's own"
    return unit.check_result(record)


def _reject(path: Path, out_dir: Path, reason: str) -> None:
    rejected = out_dir / REJECTED_FOLDER
    rejected.mkdir(exist_ok=True)
    target = rejected / f"{path.name}.{time.strftime('%Y%m%dT%H%M%S')}.{os.getpid()}"
    os.replace(path, target)
    warnings.warn(f"unit file {path.name} {reason}: moved to {target} and will be run again", UserWarning,
                  stacklevel=4)


def load_unit(unit: WorkUnit, out_dir: Path, *, reject: bool = True) -> dict[str, Any] | None:
    """The verified record of ``unit`` in ``out_dir``, or None when it has to be run.

    A file that is empty, truncated, not JSON, incomplete or of another unit is moved to
    ``units-rejected/`` with a warning naming it (``reject=False`` only warns).
    """
    path = out_dir / UNITS_FOLDER / f"{unit.key}.json"
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        reason = "is empty, truncated or not JSON" if path.stat().st_size else "is empty"
    except OSError as error:
        reason = f"cannot be read ({error.strerror})"
    else:
        try:
            reason = record_problem(record, unit)
        except Exception as error:  # noqa: BLE001 - a hand-made file must never stop the folder from loading
            reason = f"cannot be checked ({type(error).__name__}: {error})"
        if reason is not None:
            reason = f"is not a result of this unit: {reason}"
    if reason is None:
        return unit.labelled(record)
    if reject:
        _reject(path, out_dir, reason)
    else:
        warnings.warn(f"unit file {path.name} {reason}: ignored", UserWarning, stacklevel=3)
    return None


def load_units(units: Sequence[WorkUnit], out_dir: Path, *, reject: bool = True) -> list[dict[str, Any] | None]:
    """:func:`load_unit` for every unit (None where a unit has no valid file)."""
    return [load_unit(unit, out_dir, reject=reject) for unit in units]


def stray_files(out_dir: Path, units: Iterable[WorkUnit]) -> list[Path]:
    """Files in ``units/`` that are no unit of the folder's sweep (left alone, never read)."""
    folder = out_dir / UNITS_FOLDER
    if not folder.is_dir():
        return []
    expected = {f"{unit.key}.json" for unit in units}
    return sorted(p for p in folder.iterdir() if p.name not in expected and not p.name.startswith("."))


def write_table(records: list[dict[str, Any]], path: str | os.PathLike) -> None:
    """Write the tidy CSV: one row per (unit, checkpoint), one column per regret notion."""
    atomic_write_text(Path(path), table_text(records))


def table_text(records: list[dict[str, Any]]) -> str:
    """The text of the tidy CSV of ``records`` (what :func:`write_table` writes; ``verify`` compares it)."""
    notions: list[str] = []
    for record in records:
        notions += [n for n in record["cumulative_regret"] if n not in notions]
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(["agent", "problem", "seed", "t", *(f"regret_{n}" for n in notions), "recommendation",
                     "recommendation_is_copeland_winner"])
    for record in records:
        for index, t in enumerate(record["checkpoints"]):
            regrets = [repr(float(record["cumulative_regret"][n][index])) if n in record["cumulative_regret"] else ""
                       for n in notions]
            writer.writerow([record["agent"], record["problem"], record["seed"], t, *regrets,
                             record["recommendations"][index], int(record["recommendation_is_copeland_winner"][index])])
    return stream.getvalue()
