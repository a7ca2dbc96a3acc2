"""The published preference matrices, shipped as package data with their provenance.

Names (case-insensitive; aliases in parentheses): ``sushi`` (``sushi16``), ``arxiv``,
``mslr5-condorcet``, ``mslr5-noncondorcet``, ``gap``, ``multisol``, ``cyclic4``
(``cyclic``, ``table2``).  All come from Komiyama et al. (ICML 2016), Appendix A / Table 2.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from dueling_gym.problems.preference import PreferenceMatrix

__all__ = ["DatasetInfo", "PUBLISHED_PROBLEMS", "list_problems", "load_problem", "dataset_info"]


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


def _canonical(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"problem name must be a string, got {type(name).__name__}")
    key = name.strip().lower().replace(" ", "")
    table = _alias_table()
    if key not in table:
        raise ValueError(f"unknown problem {name!r}; choose one of {list_problems()}")
    return table[key]


def dataset_info(name: str) -> DatasetInfo:
    """Provenance of a shipped problem."""
    canonical = _canonical(name)
    entry = _raw()[canonical]
    return DatasetInfo(canonical, entry["title"], entry["source"], tuple(entry["aliases"]), bool(entry["symmetrize"]))


def load_problem(name: str) -> PreferenceMatrix:
    """Load a shipped problem by name.

    Parameters
    ----------
    name : str
        A canonical name or alias (see :func:`list_problems`), case-insensitive.

    Returns
    -------
    PreferenceMatrix
        The (immutable) matrix, with ``name`` and ``source`` set.

    Raises
    ------
    ValueError
        If the name is unknown; the message lists the valid names.
    """
    return _load(_canonical(name))


@lru_cache(maxsize=None)
def _load(canonical: str) -> PreferenceMatrix:
    entry = _raw()[canonical]
    if entry["symmetrize"]:
        return PreferenceMatrix.from_upper_triangle(entry["matrix"], name=canonical, source=entry["source"])
    return PreferenceMatrix(entry["matrix"], name=canonical, source=entry["source"])
