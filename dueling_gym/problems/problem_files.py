"""Problem files: a preference matrix with its name, source and provenance, saved as JSON.

A problem estimated from data (a comparison log, an interleaving experiment) is costly or
impossible to rebuild exactly, so it is saved once and named by its file afterwards
(``dueling-gym run --problems file:PATH``).  The file holds the matrix, the arms' names, the
one-line source and the structured provenance, and the SHA-256 of the matrix: a file whose
matrix was edited by hand no longer matches its digest and is refused.

Format (version 1)::

    {"format": "dueling-gym problem", "version": 1, "name": ..., "source": ...,
     "matrix": [[...], ...], "matrix_sha256": ..., "provenance": {...}}

NumPy arrays in the provenance are stored as ``{"array": nested lists, "dtype": name}`` (NaN in
a float array, e.g. an interval that is not defined on the diagonal, as ``null``) and read back
as read-only arrays of that dtype.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from dueling_gym.atomic_files import atomic_write_text
from dueling_gym.problems.preference import PreferenceMatrix

__all__ = ["save_problem", "read_problem_file", "matrix_digest", "PROBLEM_FILE_FORMAT"]

PROBLEM_FILE_FORMAT = "dueling-gym problem"
_VERSION = 1
_ARRAY_KINDS = "biuf"  # booleans, integers and floats: what provenance arrays hold


def matrix_digest(problem: PreferenceMatrix) -> str:
    """SHA-256 of the matrix as little-endian float64 (the digest sweeps record as ``matrix_sha256``)."""
    return hashlib.sha256(np.ascontiguousarray(problem.matrix, dtype="<f8").tobytes()).hexdigest()


def _to_json(value: Any, where: str) -> Any:
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _ARRAY_KINDS:
            raise TypeError(f"{where}: only boolean, integer and float arrays can be saved, got dtype {value.dtype}")
        if value.dtype.kind == "f":
            if np.isinf(value).any():
                raise ValueError(f"{where}: an array holds infinity, which a problem file cannot store")
            listed = np.where(np.isnan(value), None, value.astype(object)).tolist()
            return {"array": listed, "dtype": value.dtype.name}
        return {"array": value.tolist(), "dtype": value.dtype.name}
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where}: {value!r} cannot be stored in JSON")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_to_json(item, f"{where}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, dict):
        converted = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: keys must be strings, got {key!r}")
            converted[key] = _to_json(item, f"{where}.{key}")
        return converted
    raise TypeError(f"{where}: a {type(value).__name__} cannot be saved in a problem file")


def _from_json(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"array", "dtype"}:
            dtype = np.dtype(value["dtype"])
            if dtype.kind not in _ARRAY_KINDS:
                raise ValueError(f"an array of dtype {dtype} cannot be read from a problem file")
            listed = value["array"]
            if dtype.kind == "f":  # null stands for NaN
                listed = np.asarray(listed, dtype=object)
                listed = np.where(listed == None, np.nan, listed)  # noqa: E711 - elementwise
            array = np.asarray(listed, dtype=dtype)
            array.flags.writeable = False
            return array
        return {key: _from_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_from_json(item) for item in value]
    return value


def save_problem(problem: PreferenceMatrix, path: str | os.PathLike[str]) -> Path:
    """Write ``problem`` (matrix, name, source, provenance) to a JSON problem file, atomically.

    Parameters
    ----------
    problem : PreferenceMatrix
        The problem to save.
    path : str or os.PathLike
        The file to write (replaced if it exists; a crash leaves the old file or the new one).

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    TypeError
        If ``problem`` is not a :class:`~dueling_gym.problems.PreferenceMatrix`, or its provenance
        holds a value JSON cannot represent (the message names the entry).
    """
    if not isinstance(problem, PreferenceMatrix):
        raise TypeError(f"save_problem needs a PreferenceMatrix, got {type(problem).__name__}")
    document = {
        "format": PROBLEM_FILE_FORMAT,
        "version": _VERSION,
        "name": problem.name,
        "source": problem.source,
        "matrix": problem.matrix.tolist(),
        "matrix_sha256": matrix_digest(problem),
        "provenance": _to_json(dict(problem.provenance), "provenance"),
    }
    path = Path(path)
    atomic_write_text(path, json.dumps(document, indent=1, allow_nan=False) + "\n")
    return path


def read_problem_file(path: str | os.PathLike[str]) -> PreferenceMatrix:
    """Read a problem file written by :func:`save_problem`.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If it is not a problem file of a known version, or its matrix does not match the
        recorded digest (edited by hand, or damaged), or the matrix is no preference matrix.
    """
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not a problem file (invalid JSON at line {error.lineno})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a problem file (not UTF-8 text)") from None
    if not isinstance(document, dict) or document.get("format") != PROBLEM_FILE_FORMAT:
        raise ValueError(f"{path}: not a problem file (no \"format\": \"{PROBLEM_FILE_FORMAT}\")")
    if document.get("version") != _VERSION:
        raise ValueError(f"{path}: problem file version {document.get('version')!r} is not supported "
                         f"(this version of dueling-gym reads version {_VERSION})")
    missing = sorted({"name", "source", "matrix", "matrix_sha256", "provenance"} - set(document))
    if missing:
        raise ValueError(f"{path}: the problem file lacks {missing}")
    for key in ("name", "source"):
        if document[key] is not None and not isinstance(document[key], str):
            raise ValueError(f"{path}: {key} must be a string or null, got {document[key]!r}")
    if not isinstance(document["provenance"], dict):
        raise ValueError(f"{path}: provenance must be an object")
    try:
        problem = PreferenceMatrix(document["matrix"], name=document["name"], source=document["source"],
                                   provenance=_from_json(document["provenance"]))
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path}: {error}") from None
    if matrix_digest(problem) != document["matrix_sha256"]:
        raise ValueError(f"{path}: the matrix does not match its recorded SHA-256 (edited or damaged); "
                         "save the problem again with save_problem")
    return problem
