"""Checks of a bipartite CPE-DB instance: its edges and its edge-preference matrix.

The preference checks shared with the K-armed problems (finite entries in ``[0, 1]``, ``1/2`` on
the diagonal, ``p + p' = 1`` on every pair that can duel, the exact antisymmetric rebuild) are
those of :mod:`dueling_gym.validation`; what is specific to a graph is that only edges at the
same position are comparable and that every other entry must be 0.
"""

from __future__ import annotations

from operator import index
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.problems.bipartite.matching import integer_index
from dueling_gym.validation import antisymmetric_rebuild, check_preference_entries, real_matrix

__all__ = ["check_edges", "check_edge_preferences", "numeric_block", "assemble_position_blocks"]


def check_edges(label: str, edges: ArrayLike, n_candidates: int, n_positions: int) -> NDArray[np.int64]:
    """``edges`` as an (m, 2) int64 array of ``(candidate, position)`` in canonical order.

    The canonical order is sorted by (position, candidate) (Chen et al. 2020, §2).  It is
    required rather than repaired because row ``k`` of the preference matrix refers to the
    ``k``-th listed edge.
    """
    array = np.asarray(edges)
    if array.size == 0:
        raise ValueError(f"{label}: needs at least one edge")
    if array.dtype == object or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{label}: edges must be integer (candidate, position) pairs, got dtype {array.dtype}")
    if array.ndim != 2 or array.shape[1] != 2:
        raise ValueError(f"{label}: edges must have shape (m, 2) of (candidate, position), got {array.shape}")
    array = array.astype(np.int64)
    for k, (candidate, position) in enumerate(array.tolist()):
        if not 0 <= candidate < n_candidates:
            raise ValueError(f"{label}: edge {k} = {(candidate, position)} has candidate outside "
                             f"0..{n_candidates - 1}")
        if not 0 <= position < n_positions:
            raise ValueError(f"{label}: edge {k} = {(candidate, position)} has position outside "
                             f"0..{n_positions - 1}")
    keys = [(position, candidate) for candidate, position in array.tolist()]
    for k in range(1, len(keys)):
        if keys[k] == keys[k - 1]:
            raise ValueError(f"{label}: edge {k} = {tuple(array[k].tolist())} duplicates edge {k - 1}")
        if keys[k] < keys[k - 1]:
            canonical = sorted(set((c, s) for s, c in keys), key=lambda edge: (edge[1], edge[0]))
            raise ValueError(
                f"{label}: edges must be listed sorted by (position, candidate) (Chen et al. 2020 §2); "
                f"edge {k} = {tuple(array[k].tolist())} comes after edge {k - 1} = {tuple(array[k - 1].tolist())}. "
                f"Canonical order: {canonical} (permute the preference matrix to match, or use "
                "BipartiteDuelProblem.from_position_preferences)"
            )
    return array


def check_edge_preferences(label: str, preferences: ArrayLike, positions: NDArray[np.int64],
                           atol: float) -> NDArray[np.float64]:
    """The m×m edge-preference matrix, checked and rebuilt exactly antisymmetric on comparable pairs.

    ``positions[e]`` is the position of edge ``e``; edges at different positions are
    incomparable and their entries must be 0 (so that ``f(M1, M2) = (1/l) χ_{M1}ᵀ P χ_{M2}``).
    """
    name = f"{label}: preferences"
    array = real_matrix(name, preferences)
    m = positions.shape[0]
    if array.shape != (m, m):
        raise ValueError(f"{name} must have shape ({m}, {m}) (one row and column per edge), got {array.shape}")
    same_position = positions[:, None] == positions[None, :]
    check_preference_entries(name, array, atol, comparable=same_position,
                             hint="; edges at one position need p_(e,e') + p_(e',e) = 1")
    bad = np.argwhere(~same_position & (np.abs(array) > atol))
    if bad.size:
        i, j = bad[0]
        raise ValueError(
            f"{name} entry [{i}, {j}] = {array[i, j]} must be 0: edges {i} and {j} are at different "
            f"positions ({positions[i]} and {positions[j]}) and therefore incomparable"
        )
    return antisymmetric_rebuild(array, comparable=same_position)


def numeric_block(position: Any, matrix: ArrayLike) -> NDArray[np.float64]:
    """One position's preference block as floats; strings and objects are refused, not parsed."""
    block = np.asarray(matrix)
    if block.dtype.kind not in "biuf":
        raise TypeError(f"position {position}: preferences must be real numbers, got dtype {block.dtype}")
    return block.astype(np.float64)


def assemble_position_blocks(
    position_preferences: list[tuple[list[int], ArrayLike]] | dict[int, tuple[list[int], ArrayLike]],
) -> tuple[int, list[tuple[int, int]], NDArray[np.float64]]:
    """``(n_positions, edges, preferences)`` from one small preference matrix per position.

    The input of
    :meth:`BipartiteDuelProblem.from_position_preferences <dueling_gym.problems.BipartiteDuelProblem.from_position_preferences>`; edges come out in the
    canonical order and the blocks are placed on the diagonal of the m×m matrix.
    """
    items = position_preferences.items() if isinstance(position_preferences, dict) else enumerate(position_preferences)
    blocks = sorted((integer_index("position", position), list(candidates), numeric_block(position, matrix))
                    for position, (candidates, matrix) in items)
    if not blocks:
        raise ValueError("position_preferences is empty")
    n_positions = max(position for position, _, _ in blocks) + 1
    edges, entries = [], []
    for position, candidates, matrix in blocks:
        if matrix.shape != (len(candidates), len(candidates)):
            raise ValueError(f"position {position}: matrix shape {matrix.shape} does not match "
                             f"{len(candidates)} candidates")
        order = sorted(range(len(candidates)), key=lambda a: candidates[a])
        offset = len(edges)
        edges.extend((index(candidates[a]), position) for a in order)
        entries.append((offset, matrix[np.ix_(order, order)]))
    preferences = np.zeros((len(edges), len(edges)))
    for offset, block in entries:
        size = block.shape[0]
        preferences[offset:offset + size, offset:offset + size] = block
    return n_positions, edges, preferences
