"""Maximum-weight matchings that cover every position: the one assignment routine of CPE-DB.

Chen, Du, Huang and Zhao (ICML 2020) call it the MWMC oracle: among the matchings of a
bipartite graph that fill every position, find one of maximum (or minimum) total edge weight,
possibly forced to contain some edges and to avoid others.  Every such question in the library
(Borda winner and gaps, the strongest challenger of a matching, the rounds of CLUCB-Borda and
CAR-Verify, the feasibility tests of the Condorcet oracle) goes through
:func:`~dueling_gym.problems.bipartite.solve_covering_assignment`.

Edges are given as ``(candidate, position)`` pairs; a matching is a tuple of edge indices in
position order.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import index
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from dueling_gym.validation import check_integer

__all__ = [
    "Matching",
    "max_weight_matching",
    "solve_covering_assignment",
    "check_weights",
    "edge_indices",
    "integer_index",
]

#: A matching, as edge indices in position order (one edge per position).
Matching = tuple[int, ...]


def integer_index(label: str, value: Any) -> int:
    """``value`` as a Python int if it is an integer (NumPy integers and 0-d integer arrays too);
    bools, floats and strings are refused rather than read as indices."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{label} must be an integer index, got the boolean {value!r}")
    try:
        return index(value)
    except TypeError:
        raise TypeError(f"{label} must be an integer index, got {value!r} ({type(value).__name__})") from None


def edge_indices(label: str, edges: Iterable[Any], n_edges: int) -> list[int]:
    """Validate an iterable of edge indices (``required=`` / ``forbidden=``, a matching)."""
    if isinstance(edges, (str, bytes)):
        raise TypeError(f"{label} must be an iterable of edge indices, got {edges!r}")
    out = []
    for edge in edges:
        edge = integer_index(f"{label} entry", edge)
        if not 0 <= edge < n_edges:
            raise ValueError(f"{label} edge {edge} is out of range: edges are 0..{n_edges - 1}")
        out.append(edge)
    return out


def check_weights(weights: ArrayLike, n_edges: int) -> NDArray[np.float64]:
    """One finite weight per edge, as a float64 array."""
    array = np.asarray(weights, dtype=np.float64)
    if array.shape != (n_edges,):
        raise ValueError(f"weights must have shape ({n_edges},) (one per edge), got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"weights must be finite; edge {int(np.flatnonzero(~np.isfinite(array))[0])} is not")
    return array


def solve_covering_assignment(
    weights: NDArray[np.float64],
    candidates: NDArray[np.int64],
    positions: NDArray[np.int64],
    edge_at: NDArray[np.int64],
    n_positions: int,
    n_candidates: int,
    required: list[int],
    forbidden: list[int],
    maximize: bool,
) -> Matching | None:
    """The best covering matching on *validated* inputs; ``None`` when none is admissible.

    ``candidates[e]`` and ``positions[e]`` describe edge ``e``; ``edge_at[position, candidate]``
    is its index (``-1`` where the graph has no edge).  ``required`` edges must be in the
    matching and ``forbidden`` ones must not.  Callers that solve many problems on one graph
    (the agents) prepare these arrays once and call this directly; everyone else uses
    :func:`~dueling_gym.problems.max_weight_matching` or
    :meth:`BipartiteDuelProblem.max_weight_matching <dueling_gym.problems.BipartiteDuelProblem.max_weight_matching>`, which
    validate their arguments first.
    """
    if n_positions > n_candidates:
        return None
    allowed = np.ones(weights.shape[0], dtype=bool)
    if forbidden:
        allowed[forbidden] = False
    # "Must contain A": every other edge that shares a candidate or a position with a required
    # edge is deleted.  Two conflicting required edges delete each other.
    for edge in required:
        conflicting = (candidates == candidates[edge]) | (positions == positions[edge])
        conflicting[edge] = False
        allowed &= ~conflicting
    if required and not allowed[required].all():
        return None
    # Rows are positions, so linear_sum_assignment must assign every row: the solution covers
    # all positions.  Infinite entries are the forbidden cells.
    # SciPy's optimiser is imported here, not with the package: it costs more than importing
    # Gymnasium and NumPy together, and most users never solve an assignment.
    from scipy.optimize import linear_sum_assignment

    matrix = np.full((n_positions, n_candidates), -np.inf if maximize else np.inf)
    matrix[positions[allowed], candidates[allowed]] = weights[allowed]
    try:
        rows, columns = linear_sum_assignment(matrix, maximize=maximize)
    except ValueError:  # scipy: "cost matrix is infeasible"
        return None
    # rows come back sorted, so the edges are in position order.
    return tuple(int(edge) for edge in edge_at[rows, columns])


def max_weight_matching(
    weights: ArrayLike,
    edges: ArrayLike,
    n_positions: int,
    n_candidates: int,
    *,
    required: Iterable[int] = (),
    forbidden: Iterable[int] = (),
    maximize: bool = True,
) -> Matching | None:
    """Maximum-weight matching among those covering every position (the MWMC oracle).

    Solved exactly with :func:`scipy.optimize.linear_sum_assignment` on the ℓ×n matrix that
    holds ``weights[e]`` at (position, candidate) of each allowed edge and ``∓inf`` elsewhere
    (rows = positions, so every position is assigned).

    Parameters
    ----------
    weights : array_like, shape (m,)
        Finite weight of every edge.
    edges : array_like, shape (m, 2)
        ``(candidate, position)`` of every edge; no edge may be listed twice.
    n_positions, n_candidates : int
        Sizes of the two sides of the graph.
    required : iterable of int, optional
        Edges the matching must contain.
    forbidden : iterable of int, optional
        Edges the matching must avoid.
    maximize : bool, default True
        ``False`` gives the minimum-weight covering matching instead.

    Returns
    -------
    tuple of int or None
        The matching as edge indices in position order, or ``None`` when no matching covers
        every position under the constraints.  Among equal-weight optima SciPy's
        deterministic choice is returned (the paper assumes unique optima and leaves ties open).

    Examples
    --------
    >>> max_weight_matching([0.6, 0.5, 0.2, 0.7], [(0, 0), (1, 0), (1, 1), (2, 1)], 2, 3)
    (0, 3)
    >>> max_weight_matching([0.6, 0.5, 0.2, 0.7], [(0, 0), (1, 0), (1, 1), (2, 1)], 2, 3, required=[2])
    (0, 2)
    """
    edge_array = np.asarray(edges)
    if edge_array.ndim != 2 or edge_array.shape[1] != 2 or not np.issubdtype(edge_array.dtype, np.integer):
        raise ValueError(f"edges must be an integer array of (candidate, position) pairs, shape (m, 2); got {edges!r}")
    n_positions = check_integer("n_positions", n_positions, minimum=1)
    n_candidates = check_integer("n_candidates", n_candidates, minimum=1)
    candidates = edge_array[:, 0].astype(np.int64)
    positions = edge_array[:, 1].astype(np.int64)
    if candidates.size and (candidates.min() < 0 or candidates.max() >= n_candidates
                            or positions.min() < 0 or positions.max() >= n_positions):
        raise ValueError(f"edges must join candidates 0..{n_candidates - 1} to positions 0..{n_positions - 1}")
    edge_at = np.full((n_positions, n_candidates), -1, dtype=np.int64)
    edge_at[positions, candidates] = np.arange(candidates.size)
    if np.count_nonzero(edge_at >= 0) != candidates.size:
        raise ValueError("edges contain a duplicate (candidate, position) pair")
    weight_array = check_weights(weights, candidates.size)
    return solve_covering_assignment(
        weight_array, candidates, positions, edge_at, n_positions, n_candidates,
        edge_indices("required", required, candidates.size),
        edge_indices("forbidden", forbidden, candidates.size),
        bool(maximize),
    )
