"""The published preference matrices, shipped as package data with their provenance.

Names (case-insensitive; aliases in parentheses): ``sushi`` (``sushi16``), ``arxiv``,
``mslr5-condorcet``, ``mslr5-noncondorcet``, ``gap``, ``multisol``, ``cyclic4``
(``cyclic``, ``table2``).  All come from Komiyama et al. (ICML 2016), Appendix A / Table 2.

This module reads the numbers and their provenance; :func:`dueling_gym.problems.load_problem`
(in :mod:`dueling_gym.problems.preference`) turns them into validated
:class:`~dueling_gym.problems.PreferenceMatrix` objects.  The data module does not import the
matrix class, so the two modules do not depend on each other in a cycle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = ["DatasetInfo", "PUBLISHED_PROBLEMS", "list_problems", "canonical_name", "dataset_info", "published_matrix"]


@dataclass(frozen=True)
class DatasetInfo:
    """Metadata of a shipped matrix."""

    name: str
    title: str
    source: str
    aliases: tuple[str, ...]
    rebuilt_from_upper_triangle: bool


@lru_cache(maxsize=1)
def _raw() -> dict:
    text = resources.files("dueling_gym.problems").joinpath("data/published.json").read_text()
    return json.loads(text)["problems"]


@lru_cache(maxsize=1)
def _alias_table() -> dict[str, str]:
    table = {}
    for name, entry in _raw().items():
        table[name] = name
        for alias in entry["aliases"]:
            table[alias] = name
    return table


#: Canonical names of the shipped problems, in the order of the CW-RMED paper's Table 3.
PUBLISHED_PROBLEMS: tuple[str, ...] = (
    "sushi", "gap", "multisol", "arxiv", "mslr5-condorcet", "mslr5-noncondorcet", "cyclic4",
)


def list_problems() -> list[str]:
    """Canonical names of the shipped problems."""
    return list(PUBLISHED_PROBLEMS)


def canonical_name(name: str) -> str:
    """The canonical name of a shipped problem, from a name or alias (case-insensitive, spaces ignored).

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    ValueError
        If the name is unknown; the message lists the valid names.
    """
    if not isinstance(name, str):
        raise TypeError(f"problem name must be a string, got {type(name).__name__}")
    key = name.strip().lower().replace(" ", "")
    table = _alias_table()
    if key not in table:
        raise ValueError(f"unknown problem {name!r}; choose one of {list_problems()}")
    return table[key]


def dataset_info(name: str) -> DatasetInfo:
    """Provenance of a shipped problem."""
    canonical = canonical_name(name)
    entry = _raw()[canonical]
    return DatasetInfo(canonical, entry["title"], entry["source"], tuple(entry["aliases"]), bool(entry["symmetrize"]))


def published_matrix(name: str) -> tuple[DatasetInfo, list[list[float]]]:
    """The numbers of a shipped problem as printed, with their provenance (not yet validated).

    When ``info.rebuilt_from_upper_triangle`` is true only the strict upper triangle is
    meaningful (the printed triangles disagree by rounding).  Use
    :func:`dueling_gym.problems.load_problem` for the validated
    :class:`~dueling_gym.problems.PreferenceMatrix`.  The rows are a fresh copy.
    """
    info = dataset_info(name)
    return info, [list(row) for row in _raw()[info.name]["matrix"]]
