"""Problems by name: the shipped matrices by their names, saved problems by ``file:PATH``.

Above both :mod:`dueling_gym.problems.preference` (the matrix class) and
:mod:`dueling_gym.problems.problem_files` (the saved files, which build matrices), so that
neither imports the other's reader.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from dueling_gym.problems.datasets import canonical_name, published_matrix
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.problems.problem_files import read_problem_file
from dueling_gym.validation import echo

__all__ = ["FILE_PREFIX", "load_problem", "as_preference_matrix"]

#: The prefix of a problem saved in a file (``file:PATH``), as :func:`load_problem` reads it.
FILE_PREFIX = "file"


def load_problem(name: str) -> PreferenceMatrix:
    """Load a shipped problem by name, or a saved problem by ``file:PATH``.

    Parameters
    ----------
    name : str
        A canonical name or alias (see :func:`~dueling_gym.problems.list_problems`),
        case-insensitive; or ``file:PATH``, a problem file written by
        :func:`~dueling_gym.problems.save_problem` (everything after the first colon is the
        path, commas and spaces included, as in ``dueling-gym run --problems file:PATH``).

    Returns
    -------
    PreferenceMatrix
        The (immutable) matrix, with ``name`` and ``source`` set.  Every name of a shipped
        problem returns the same object; a problem file is read afresh on every call, so a file
        saved again is never answered from a stale copy.

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    FileNotFoundError
        If ``file:PATH`` names no file.
    ValueError
        If the name is unknown (the message lists the valid names and the ``file:PATH`` form),
        ``file:`` has no path, or the file is refused by
        :func:`~dueling_gym.problems.read_problem_file` (not a regular file, not a problem file,
        a matrix that does not match its recorded digest, ...).
    """
    if not isinstance(name, str):
        raise TypeError(f"problem name must be a string, got {type(name).__name__}")
    prefix, colon, path = name.partition(":")
    if colon and prefix.strip().lower() == FILE_PREFIX:
        if not path:
            raise ValueError(f"{echo(name)} names no file: write file:PATH")
        return read_problem_file(path)
    try:
        canonical = canonical_name(name)
    except ValueError as error:
        raise ValueError(f"{error}, or a saved problem as file:PATH") from None
    return _load_published(canonical)


@lru_cache(maxsize=None)
def _load_published(canonical: str) -> PreferenceMatrix:
    info, rows = published_matrix(canonical)
    if info.rebuilt_from_upper_triangle:
        return PreferenceMatrix.from_upper_triangle(rows, name=info.name, source=info.source)
    return PreferenceMatrix(rows, name=info.name, source=info.source)


def as_preference_matrix(problem: Any) -> PreferenceMatrix:
    """Coerce a :class:`~dueling_gym.problems.PreferenceMatrix`, an array, a shipped problem's name or
    ``file:PATH`` (a saved problem; see :func:`load_problem`) into a PreferenceMatrix."""
    if isinstance(problem, PreferenceMatrix):
        return problem
    if isinstance(problem, str):
        return load_problem(problem)
    return PreferenceMatrix(problem)
