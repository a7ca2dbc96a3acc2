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
from typing import Any, NoReturn

import numpy as np

from dueling_gym.atomic_files import atomic_write_text
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.validation import check_regular_file, echo, reject_duplicate_keys

__all__ = ["save_problem", "read_problem_file", "matrix_digest", "PROBLEM_FILE_FORMAT"]

PROBLEM_FILE_FORMAT = "dueling-gym problem"
_VERSION = 1
_ARRAY_KINDS = "biuf"  # booleans, integers and floats: what provenance arrays hold
#: Deepest nesting of provenance values read back (save_problem writes a few levels).
_MAX_DEPTH = 64


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
                raise TypeError(f"{where}: keys must be strings, got {echo(key)}")
            converted[key] = _to_json(item, f"{where}.{key}")
        return converted
    raise TypeError(f"{where}: a {type(value).__name__} cannot be saved in a problem file")


def _from_json(value: Any, where: str, depth: int = 0) -> Any:
    """The provenance value that :func:`_to_json` wrote as ``value``; ``where`` names it in messages."""
    if depth > _MAX_DEPTH:
        # save_problem never writes this deep; a file that does would only exhaust the recursion
        # limit here or in whatever walks the provenance later.
        raise ValueError(f"{where}: nested more than {_MAX_DEPTH} levels deep")
    if isinstance(value, dict):
        if set(value) == {"array", "dtype"}:
            return _array_from_json(value["array"], value["dtype"], where)
        return {key: _from_json(item, f"{where}.{echo(key, quote=False)}", depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_from_json(item, f"{where}[{index}]", depth + 1) for index, item in enumerate(value)]
    return value


def _array_from_json(listed: Any, dtype_name: Any, where: str) -> np.ndarray:
    """A read-only array from its stored ``{"array": ..., "dtype": ...}``, refusing what does not fit the dtype.

    NumPy would wrap, round or parse such values (``True`` as 1, ``"1.5"`` as 1.5, ``1e10`` as
    ``inf`` in float16) or raise an OverflowError; each is refused with a message naming the entry.
    """
    if not isinstance(dtype_name, str):
        raise ValueError(f"{where}: the dtype must be a string, got {echo(dtype_name)}")
    try:
        dtype = np.dtype(dtype_name)
    except TypeError:
        raise ValueError(f"{where}: unknown dtype {echo(dtype_name)}") from None
    if dtype.kind not in _ARRAY_KINDS or dtype.name != dtype_name:  # save_problem writes the canonical name
        raise ValueError(f"{where}: an array of dtype {echo(dtype_name)} cannot be read from a problem file "
                         "(boolean, integer and float dtypes only, by their NumPy names such as 'int64')")
    try:
        # Inferred first, so that the usual array of plain numbers is checked in C, not value by value.
        inferred = np.asarray(listed)
    except ValueError as error:  # ragged, or nested past NumPy's 64 dimensions
        raise ValueError(f"{where}: not a rectangular array ({error})") from None
    if inferred.size == 0:
        array = np.zeros(inferred.shape, dtype=dtype)
    elif dtype.kind == "f":
        array = _float_array(listed, inferred, dtype, where)
    elif inferred.dtype.kind not in ("b" if dtype.kind == "b" else "iu"):
        _refuse_entry(listed, dtype, where)
    else:
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            if inferred.min() < info.min or inferred.max() > info.max:
                _refuse_entry(listed, dtype, where)
        array = inferred.astype(dtype, copy=False)  # int64 and bool arrays need no copy
    array.flags.writeable = False
    return array


def _float_array(listed: Any, inferred: np.ndarray, dtype: np.dtype, where: str) -> np.ndarray:
    """A float array from stored numbers and nulls (NaN); infinities and out-of-range values are refused."""
    if inferred.dtype.kind == "O":  # nulls for NaN, integers too large for 64 bits, or junk
        cells = inferred.ravel().tolist()
        if any(cell is not None and (isinstance(cell, bool) or not isinstance(cell, (int, float))) for cell in cells):
            _refuse_entry(listed, dtype, where)
        missing = np.fromiter((cell is None for cell in cells), dtype=bool, count=len(cells)).reshape(inferred.shape)
        try:
            with np.errstate(over="ignore"):  # overflow to infinity is refused below
                array = np.where(missing, np.nan, inferred).astype(dtype)
        except OverflowError:  # an integer beyond every float
            raise ValueError(f"{where}: an integer is too large for dtype {dtype}") from None
    elif inferred.dtype.kind in "iuf":
        missing = np.zeros(inferred.shape, dtype=bool)
        with np.errstate(over="ignore"):  # overflow to infinity is refused just below
            array = inferred.astype(dtype, copy=False)  # float64 arrays need no copy
    else:
        _refuse_entry(listed, dtype, where)
    infinite = ~np.isfinite(array) & ~missing
    if infinite.any():
        position = tuple(int(i) for i in np.argwhere(infinite)[0])
        raise ValueError(f"{where}: entry {list(position)} is infinite or does not fit in dtype {dtype}, which a "
                         "problem file cannot store")
    return array


def _refuse_entry(listed: Any, dtype: np.dtype, where: str) -> NoReturn:
    """Raise a ValueError naming the first stored value that an array of ``dtype`` cannot hold."""
    cells = np.asarray(listed, dtype=object)  # rectangular: np.asarray(listed) succeeded before
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = int(info.min), int(info.max)
        wanted = f"an integer in [{low}, {high}]"
    else:
        wanted = "true or false" if dtype.kind == "b" else "a number or null"

    def fits(cell: Any) -> bool:
        if dtype.kind == "b":
            return isinstance(cell, bool)
        if cell is None and dtype.kind == "f":
            return True
        number = isinstance(cell, (int, float) if dtype.kind == "f" else int) and not isinstance(cell, bool)
        return number and (dtype.kind == "f" or low <= cell <= high)

    for position in np.ndindex(cells.shape):
        if not fits(cells[position]):
            raise ValueError(f"{where}: entry {list(position)} = {echo(cells[position])} does not fit in an array of "
                             f"dtype {dtype} (it must be {wanted})")
    raise ValueError(f"{where}: the values do not fit in an array of dtype {dtype}")


def save_problem(problem: PreferenceMatrix, path: str | os.PathLike[str]) -> Path:
    """Write ``problem`` (matrix, name, source, provenance) to a JSON problem file, atomically.

    Parameters
    ----------
    problem : PreferenceMatrix
        The problem to save.
    path : str or os.PathLike
        The file to write: a new path, or a regular file, which is replaced (a crash leaves the
        old file or the new one).

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    TypeError
        If ``problem`` is not a :class:`~dueling_gym.problems.PreferenceMatrix`, or its provenance
        holds a value JSON cannot represent (the message names the entry).
    ValueError
        If ``path`` exists and is not a regular file: a FIFO, a device node (``/dev/null``), a
        folder or a symbolic link would be replaced by the new file, so it is refused before
        anything is written.
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
    # atomic_write_text refuses a target that is not a regular file (or a new path).
    atomic_write_text(path, json.dumps(document, indent=1, allow_nan=False) + "\n", what="problem file")
    return path


def read_problem_file(path: str | os.PathLike[str]) -> PreferenceMatrix:
    """Read a problem file written by :func:`save_problem`.

    Parameters
    ----------
    path : str or os.PathLike
        The problem file (a symbolic link to one is followed).

    Returns
    -------
    PreferenceMatrix
        The problem, with its provenance (arrays read-only).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If it is not a regular file (a FIFO, a device such as ``/dev/zero``, a folder: refused
        before reading, which would block or never end), is not a problem file of a known
        version (invalid or too deeply nested JSON, a key given twice in one object, ``NaN`` or
        ``Infinity``), its provenance holds an array whose values do not fit its dtype, its
        matrix does not match the recorded digest (edited by hand, or damaged), or the matrix is
        no preference matrix.
    """
    path = check_regular_file(path, "problem file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a problem file (not UTF-8 text)") from None
    try:
        document = json.loads(text, object_pairs_hook=reject_duplicate_keys, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not a problem file (invalid JSON at line {error.lineno})") from None
    except RecursionError:
        raise ValueError(f"{path}: not a problem file (JSON nested too deeply to read)") from None
    except ValueError as error:  # a duplicate key, NaN or Infinity, an integer past Python's digit limit
        raise ValueError(f"{path}: not a problem file ({error})") from None
    if not isinstance(document, dict) or document.get("format") != PROBLEM_FILE_FORMAT:
        raise ValueError(f"{path}: not a problem file (no \"format\": \"{PROBLEM_FILE_FORMAT}\")")
    if document.get("version") != _VERSION:
        raise ValueError(f"{path}: problem file version {echo(document.get('version'))} is not supported "
                         f"(this version of dueling-gym reads version {_VERSION})")
    missing = sorted({"name", "source", "matrix", "matrix_sha256", "provenance"} - set(document))
    if missing:
        raise ValueError(f"{path}: the problem file lacks {missing}")
    for key in ("name", "source"):
        if document[key] is not None and not isinstance(document[key], str):
            raise ValueError(f"{path}: {key} must be a string or null, got {echo(document[key])}")
    if not isinstance(document["provenance"], dict):
        raise ValueError(f"{path}: provenance must be an object")
    try:
        provenance = _from_json(document["provenance"], "provenance")
        problem = PreferenceMatrix(document["matrix"], name=document["name"], source=document["source"],
                                   provenance=provenance)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path}: {error}") from None
    if matrix_digest(problem) != document["matrix_sha256"]:
        raise ValueError(f"{path}: the matrix does not match its recorded SHA-256 (edited or damaged); "
                         "save the problem again with save_problem")
    return problem


def _refuse_constant(constant: str) -> float:
    """``parse_constant`` hook: save_problem writes no NaN or Infinity (NaN in an array is null)."""
    raise ValueError(f"{constant} is not valid JSON (a problem file stores a missing number as null)")
