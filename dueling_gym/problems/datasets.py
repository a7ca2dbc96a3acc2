"""The published preference matrices, shipped as package data with their provenance, and the
bipartite example of the CPE-DB paper.

Names (case-insensitive; aliases in parentheses): ``sushi`` (``sushi16``), ``arxiv``,
``mslr5-condorcet``, ``mslr5-noncondorcet``, ``gap``, ``multisol``, ``cyclic4``
(``cyclic``, ``table2``).  All come from Komiyama et al. (ICML 2016), Appendix A / Table 2.

This module reads the numbers and their provenance; :func:`dueling_gym.problems.load_problem`
(in :mod:`dueling_gym.problems.preference`) turns them into validated
:class:`~dueling_gym.problems.PreferenceMatrix` objects.  The data module does not import the
matrix class, so the two modules do not depend on each other in a cycle.

The named bipartite problems (:data:`~dueling_gym.problems.datasets.BIPARTITE_PROBLEMS`,
:func:`~dueling_gym.problems.load_bipartite_problem`) are
built here: so far the 5-edge example of Chen, Du, Huang and Zhao (ICML 2020).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Callable

from dueling_gym.problems.bipartite import BipartiteDuelProblem
from dueling_gym.validation import echo

__all__ = [
    "DatasetInfo",
    "PUBLISHED_PROBLEMS",
    "list_problems",
    "canonical_name",
    "dataset_info",
    "published_matrix",
    "BIPARTITE_PROBLEMS",
    "five_edge_example",
    "load_bipartite_problem",
]


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
        raise ValueError(f"unknown problem {echo(name)}; choose one of {list_problems()}")
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


# ---------------------------------------------------------------------------------------------
# Bipartite problems
# ---------------------------------------------------------------------------------------------
def five_edge_example() -> BipartiteDuelProblem:
    """The 5-edge example of Chen, Du, Huang, Zhao (ICML 2020), Figures 1-4.

    Edges (0-based code index / paper label): 0 = e1 = (c1, s1), 1 = e2 = (c2, s1),
    2 = e3 = (c3, s1), 3 = e4 = (c3, s2), 4 = e5 = (c4, s2).  The preference matrix is the
    paper's Figure 2.  The graph is reconstructed: it is the only graph consistent with the
    paper's edge order and with both Borda scores the paper quotes.
    Borda winner ``{e1, e5}`` (score 0.64), Condorcet winner ``{e2, e5}`` (Borda score 0.615).
    """
    edges = [(0, 0), (1, 0), (2, 0), (2, 1), (3, 1)]
    preferences = [
        [0.5, 0.45, 1.0, 0.0, 0.0],
        [0.55, 0.5, 0.55, 0.0, 0.0],
        [0.0, 0.45, 0.5, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.5, 0.0],
        [0.0, 0.0, 0.0, 1.0, 0.5],
    ]
    return BipartiteDuelProblem(
        4, 2, edges, preferences, name="five_edge",
        source=("Chen, Du, Huang, Zhao, Combinatorial Pure Exploration for Dueling Bandits, ICML 2020, "
                "Figures 1-4 (preference matrix of Figure 2; graph reconstructed from the edge order and "
                "the quoted Borda scores)"),
    )


#: Named bipartite problems (for environments and the CLI).
BIPARTITE_PROBLEMS: dict[str, Callable[[], BipartiteDuelProblem]] = {"five_edge": five_edge_example}


def load_bipartite_problem(name: str) -> BipartiteDuelProblem:
    """A named bipartite problem (see :data:`~dueling_gym.problems.datasets.BIPARTITE_PROBLEMS`)."""
    if not isinstance(name, str):
        raise TypeError(f"problem name must be a string, got {type(name).__name__}")
    if name not in BIPARTITE_PROBLEMS:
        raise ValueError(f"unknown bipartite problem {echo(name)}; choose one of {sorted(BIPARTITE_PROBLEMS)}")
    return BIPARTITE_PROBLEMS[name]()
