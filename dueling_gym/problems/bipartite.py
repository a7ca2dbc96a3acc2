"""Combinatorial pure exploration for dueling bandits (CPE-DB): bipartite matching problems.

The setting of Chen, Du, Huang and Zhao, *Combinatorial Pure Exploration for Dueling Bandits*
(ICML 2020), spec §4.  Candidates ``c_0..c_{n-1}`` can fill positions ``s_0..s_{l-1}``; an
edge ``e = (c, s)`` says that candidate ``c`` can fill position ``s``.  Two edges are
*comparable* when they share a position; a duel of comparable edges ``e, e'`` is won by ``e``
with probability ``p_{e,e'} = 1 - p_{e',e}``.  The decision class is the set of matchings that
cover every position (the maximum matchings, assumed to exist), and the targets are

* the **Borda matching**, maximising ``B(M) = mean_{M'} f(M, M')``, equivalently the
  max-weight matching under the edge rewards ``w(e)`` (S3 eq. (4)), and
* the **Condorcet matching**, beating every other matching: ``f(M^C, M) > 1/2``,

where ``f(M1, M2) = (1/l) sum_j p_{e(M1, j), e(M2, j)}`` (S3 eq. (1)).

Conventions (spec §4.1): indices are 0-based (the paper's ``e1`` is edge ``0``); edges are
indexed in the canonical order sorted by (position, candidate), and the constructor
*requires* that order so that row ``k`` of the preference matrix unambiguously belongs to
edge ``k``; a matching is a tuple of edge indices in position order (which is ascending edge
order).  The m×m preference matrix holds ``1/2`` on the diagonal and ``0`` for incomparable
pairs, so that ``f(M1, M2) = (1/l) chi_{M1}^T P chi_{M2}``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import cached_property
from operator import index
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import linear_sum_assignment

from dueling_gym.problems.preference import check_atol
from dueling_gym.validation import check_integer, check_number, check_probability, check_rng, check_seed, read_only

__all__ = [
    "BipartiteDuelProblem",
    "TooManyMatchingsError",
    "Matching",
    "max_weight_matching",
    "five_edge_example",
    "random_bipartite_graph",
    "random_bipartite_problem",
    "BipartiteProblemSampler",
    "BIPARTITE_PROBLEMS",
    "load_bipartite_problem",
]

#: A matching: edge indices in position order (one edge per position).
Matching = tuple[int, ...]

#: ``max_matchings`` refuses to list more matchings than this unless told otherwise.
DEFAULT_ENUMERATION_LIMIT = 100_000
#: Exact counting is a dynamic programme over (position, set of used candidates); past this
#: many states it would exhaust memory, so it stops with a clear error instead.
MAX_COUNTING_STATES = 2_000_000
#: ``f(M^C, M) > 1/2`` is tested as ``> 1/2 + tol`` so that float noise in sums of ``l``
#: probabilities cannot turn a tie into a strict win.
CONDORCET_TOLERANCE = 1e-12
#: Matchings whose Borda score is within this of the best one count as Borda winners.
BORDA_TOLERANCE = 1e-12


class TooManyMatchingsError(ValueError):
    """Raised when an exact computation over all maximum matchings would be too large.

    Enumeration (:meth:`BipartiteDuelProblem.max_matchings`) stops at a limit; counting and
    exact sampling stop when the dynamic programme needs more than
    :data:`MAX_COUNTING_STATES` states.
    """


def _integer_index(label: str, value: Any) -> int:
    """``value`` as a Python int if it is an integer (NumPy integers and 0-d integer arrays too);
    bools, floats and strings are refused rather than read as indices."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{label} must be an integer index, got the boolean {value!r}")
    try:
        return index(value)
    except TypeError:
        raise TypeError(f"{label} must be an integer index, got {value!r} ({type(value).__name__})") from None


def _numeric_block(position: Any, matrix: ArrayLike) -> NDArray[np.float64]:
    """One position's preference block as floats; strings and objects are refused, not parsed."""
    block = np.asarray(matrix)
    if block.dtype.kind not in "biuf":
        raise TypeError(f"position {position}: preferences must be real numbers, got dtype {block.dtype}")
    return block.astype(np.float64)


def _edge_indices(label: str, edges: Iterable[Any], n_edges: int) -> list[int]:
    """Validate an iterable of edge indices (for ``required=`` / ``forbidden=``)."""
    if isinstance(edges, (str, bytes)):
        raise TypeError(f"{label} must be an iterable of edge indices, got {edges!r}")
    out = []
    for edge in edges:
        edge = _integer_index(f"{label} entry", edge)
        if not 0 <= edge < n_edges:
            raise ValueError(f"{label} edge {edge} is out of range: edges are 0..{n_edges - 1}")
        out.append(edge)
    return out


def _uniform_below(rng: np.random.Generator, bound: int) -> int:
    """A uniform integer in ``[0, bound)`` for any Python int ``bound`` (exact, no float)."""
    if bound <= np.iinfo(np.int64).max:
        return int(rng.integers(bound))
    n_bits = bound.bit_length()
    n_bytes = (n_bits + 7) // 8
    while True:  # rejection: accepts with probability > 1/2
        value = int.from_bytes(rng.bytes(n_bytes), "little") >> (8 * n_bytes - n_bits)
        if value < bound:
            return value


# ---------------------------------------------------------------------------------------------
# Maximum-weight matching covering all positions (spec §4.2, "MWMC")
# ---------------------------------------------------------------------------------------------
def _solve_covering_assignment(
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
    """The MWMC core on validated inputs; ``None`` when no admissible covering matching exists."""
    if n_positions > n_candidates:
        return None
    allowed = np.ones(weights.shape[0], dtype=bool)
    if forbidden:
        allowed[forbidden] = False
    # "Must contain A": every other edge that shares a candidate or a position with a
    # required edge is deleted (spec §4.2).  Two conflicting required edges delete each other.
    for edge in required:
        conflicting = (candidates == candidates[edge]) | (positions == positions[edge])
        conflicting[edge] = False
        allowed &= ~conflicting
    if required and not allowed[required].all():
        return None
    # Rows are positions, so linear_sum_assignment must assign every row: the solution covers
    # all positions.  Infinite entries are the forbidden cells.
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
    """Maximum-weight matching among those covering every position (spec §4.2, MWMC).

    Solved exactly with :func:`scipy.optimize.linear_sum_assignment` on the ℓ×n matrix that
    holds ``weights[e]`` at (position, candidate) of each allowed edge and ``∓inf`` elsewhere
    (rows = positions, so every position is assigned).  This is the single MWMC routine of the
    library: CLUCB-Borda (Chen et al. 2020, Algorithm 1) and CAR-Verify (Algorithm 3) call it
    every round, usually through :meth:`BipartiteDuelProblem.max_weight_matching`.

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
        every position under the constraints.  Among equal-weight optima scipy's
        deterministic choice is returned (spec §4.3 gap (ii)).

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
    weight_array = _check_weights(weights, candidates.size)
    return _solve_covering_assignment(
        weight_array, candidates, positions, edge_at, n_positions, n_candidates,
        _edge_indices("required", required, candidates.size),
        _edge_indices("forbidden", forbidden, candidates.size),
        bool(maximize),
    )


def _check_weights(weights: ArrayLike, n_edges: int) -> NDArray[np.float64]:
    array = np.asarray(weights, dtype=np.float64)
    if array.shape != (n_edges,):
        raise ValueError(f"weights must have shape ({n_edges},) (one per edge), got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"weights must be finite; edge {int(np.flatnonzero(~np.isfinite(array))[0])} is not")
    return array


# ---------------------------------------------------------------------------------------------
# The problem
# ---------------------------------------------------------------------------------------------
class BipartiteDuelProblem:
    """An immutable, validated CPE-DB instance: a bipartite graph and its edge preferences.

    Parameters
    ----------
    n_candidates : int
        Number of candidates ``n`` (``n >= l``).
    n_positions : int
        Number of positions ``l`` (``>= 1``).
    edges : array_like of (candidate, position) pairs, shape (m, 2)
        The edges, **listed in the canonical order sorted by (position, candidate)** (Chen et
        al. 2020, §2).  The order is required, not repaired, because row ``k`` of
        ``preferences`` refers to the ``k``-th listed edge; use
        :meth:`from_position_preferences` to build a problem without worrying about order.
    preferences : array_like, shape (m, m)
        ``preferences[e, e']`` = probability that edge ``e`` beats the comparable edge ``e'``;
        ``1/2`` on the diagonal and ``0`` for incomparable pairs (different positions).
    name : str, optional
        A short label (tables, ``repr``, error messages).
    source : str, optional
        Provenance of the numbers.
    atol : float, default 1e-9
        Tolerance of the checks ``p + p^T == 1`` and ``diag == 1/2``, a finite number in
        ``[0, MAX_ATOL]`` (as for :class:`~dueling_gym.problems.PreferenceMatrix`; NaN or a
        negative value is refused rather than switching the checks off).

    Raises
    ------
    TypeError
        Non-integer sizes or edges, non-numeric preferences.
    ValueError
        Bad shapes, out-of-range or duplicate or unsorted edges, a non-finite entry or one
        outside ``[0, 1]``, ``p_{e,e'} + p_{e',e} != 1`` on a comparable pair, a non-zero
        entry on an incomparable pair, a diagonal entry other than ``1/2``, or no matching
        that covers every position.  Messages name the problem and the first offending entry.

    Notes
    -----
    Everything derived from the problem is computed once and cached; arrays handed out are
    read-only.  Exact counting, enumeration and sampling of the maximum matchings (and hence
    the edge rewards ``w(e)`` and Borda facts, which average over all of them) use a dynamic
    programme over (position, set of used candidates): exponential in the worst case (counting
    perfect matchings is #P-hard), instant for the instances of the paper and of the tests.
    Max-weight matchings and the Condorcet test of a given matching are polynomial.
    """

    __slots__ = ("_n_candidates", "_n_positions", "_edges", "_preferences", "name", "source", "__dict__")

    def __init__(
        self,
        n_candidates: int,
        n_positions: int,
        edges: ArrayLike,
        preferences: ArrayLike,
        *,
        name: str | None = None,
        source: str | None = None,
        atol: float = 1e-9,
    ):
        self.name = name
        self.source = source
        self._n_candidates = check_integer("n_candidates", n_candidates, minimum=1)
        self._n_positions = check_integer("n_positions", n_positions, minimum=1)
        if self._n_candidates < self._n_positions:
            raise ValueError(
                f"{self._label()}: n_candidates={self._n_candidates} < n_positions={self._n_positions}, "
                "so no matching can cover every position"
            )
        self._edges = read_only(self._validated_edges(edges))
        self._preferences = read_only(self._validated_preferences(preferences, check_atol(atol)))
        if self.max_weight_matching(np.zeros(self.n_edges)) is None:
            raise ValueError(
                f"{self._label()}: no matching covers all {self._n_positions} positions "
                "(the decision class of maximum matchings is empty)"
            )

    # ------------------------------------------------------------------ validation
    def _label(self) -> str:
        return f"BipartiteDuelProblem {self.name!r}" if self.name else "BipartiteDuelProblem"

    def _validated_edges(self, edges: ArrayLike) -> NDArray[np.int64]:
        array = np.asarray(edges)
        if array.size == 0:
            raise ValueError(f"{self._label()}: needs at least one edge")
        if array.dtype == object or not np.issubdtype(array.dtype, np.integer):
            raise TypeError(f"{self._label()}: edges must be integer (candidate, position) pairs, got dtype {array.dtype}")
        if array.ndim != 2 or array.shape[1] != 2:
            raise ValueError(f"{self._label()}: edges must have shape (m, 2) of (candidate, position), got {array.shape}")
        array = array.astype(np.int64)
        for k, (candidate, position) in enumerate(array.tolist()):
            if not 0 <= candidate < self._n_candidates:
                raise ValueError(f"{self._label()}: edge {k} = {(candidate, position)} has candidate outside "
                                 f"0..{self._n_candidates - 1}")
            if not 0 <= position < self._n_positions:
                raise ValueError(f"{self._label()}: edge {k} = {(candidate, position)} has position outside "
                                 f"0..{self._n_positions - 1}")
        keys = [(position, candidate) for candidate, position in array.tolist()]
        for k in range(1, len(keys)):
            if keys[k] == keys[k - 1]:
                raise ValueError(f"{self._label()}: edge {k} = {tuple(array[k].tolist())} duplicates edge {k - 1}")
            if keys[k] < keys[k - 1]:
                canonical = sorted(set((c, s) for s, c in keys), key=lambda edge: (edge[1], edge[0]))
                raise ValueError(
                    f"{self._label()}: edges must be listed sorted by (position, candidate) (Chen et al. 2020 §2); "
                    f"edge {k} = {tuple(array[k].tolist())} comes after edge {k - 1} = {tuple(array[k - 1].tolist())}. "
                    f"Canonical order: {canonical} (permute the preference matrix to match, or use "
                    "BipartiteDuelProblem.from_position_preferences)"
                )
        return array

    def _validated_preferences(self, preferences: ArrayLike, atol: float) -> NDArray[np.float64]:
        label = self._label()
        array = np.asarray(preferences)
        if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
            raise TypeError(f"{label}: preferences must be numeric, got dtype {array.dtype}")
        if np.issubdtype(array.dtype, np.complexfloating):
            raise TypeError(f"{label}: preferences must be real, got a complex array")
        array = np.array(array, dtype=np.float64, copy=True)
        m = self._edges.shape[0]
        if array.shape != (m, m):
            raise ValueError(f"{label}: preferences must have shape ({m}, {m}) (one row and column per edge), "
                             f"got {array.shape}")
        bad = np.argwhere(~np.isfinite(array))
        if bad.size:
            i, j = bad[0]
            raise ValueError(f"{label}: preferences[{i}, {j}] is not finite ({array[i, j]})")
        bad = np.argwhere((array < 0.0) | (array > 1.0))
        if bad.size:
            i, j = bad[0]
            raise ValueError(f"{label}: preferences[{i}, {j}] = {array[i, j]} is outside [0, 1]")
        diagonal_error = np.abs(np.diag(array) - 0.5)
        if np.any(diagonal_error > atol):
            i = int(np.argmax(diagonal_error))
            raise ValueError(f"{label}: preferences[{i}, {i}] = {array[i, i]} must be 1/2 (p_(e,e) = 1/2)")
        positions = self._edges[:, 1]
        same_position = positions[:, None] == positions[None, :]
        bad = np.argwhere(~same_position & (np.abs(array) > atol))
        if bad.size:
            i, j = bad[0]
            raise ValueError(
                f"{label}: preferences[{i}, {j}] = {array[i, j]} must be 0: edges {i} and {j} are at different "
                f"positions ({positions[i]} and {positions[j]}) and therefore incomparable"
            )
        antisymmetry_error = np.where(same_position, np.abs(array + array.T - 1.0), 0.0)
        if np.any(antisymmetry_error > atol):
            i, j = np.unravel_index(int(np.argmax(antisymmetry_error)), array.shape)
            i, j = (i, j) if i < j else (j, i)
            raise ValueError(
                f"{label}: comparable edges {i} and {j} need preferences[{i}, {j}] + preferences[{j}, {i}] = 1, "
                f"got {array[i, j]} + {array[j, i]} = {array[i, j] + array[j, i]}"
            )
        # Store an exactly antisymmetric matrix (rebuilt from the upper triangle) so that every
        # derived fact, e.g. f(M1, M2) + f(M2, M1) = 1, holds without rounding drift.
        upper = np.triu(np.where(same_position, array, 0.0), 1)
        rebuilt = upper + np.triu(np.where(same_position, 1.0 - array, 0.0), 1).T
        np.fill_diagonal(rebuilt, 0.5)
        return rebuilt

    @classmethod
    def from_position_preferences(
        cls,
        n_candidates: int,
        position_preferences: list[tuple[list[int], ArrayLike]] | dict[int, tuple[list[int], ArrayLike]],
        **kwargs: Any,
    ) -> BipartiteDuelProblem:
        """Build a problem from one small preference matrix per position.

        Parameters
        ----------
        n_candidates : int
            Number of candidates.
        position_preferences : list or dict
            For position ``j`` (list index or dict key; a list covers positions ``0..l-1``):
            ``(candidates, matrix)`` where ``matrix[a, b]`` is the probability that
            ``candidates[a]`` beats ``candidates[b]`` at that position.  Candidates may be
            listed in any order; edges are sorted into the canonical order here.
        **kwargs
            ``name``, ``source``, ``atol`` of the constructor.

        Examples
        --------
        >>> problem = BipartiteDuelProblem.from_position_preferences(
        ...     2, [([1, 0], [[0.5, 0.7], [0.3, 0.5]]), ([0], [[0.5]])])
        >>> problem.edges.tolist(), float(problem.preferences[1, 0])
        ([[0, 0], [1, 0], [0, 1]], 0.7)
        """
        items = position_preferences.items() if isinstance(position_preferences, dict) else enumerate(position_preferences)
        blocks = sorted((_integer_index("position", position), list(candidates), _numeric_block(position, matrix))
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
        return cls(n_candidates, n_positions, edges, preferences, **kwargs)

    # ------------------------------------------------------------------ basic views
    @property
    def n_candidates(self) -> int:
        """Number of candidates ``n``."""
        return self._n_candidates

    @property
    def n_positions(self) -> int:
        """Number of positions ``l``."""
        return self._n_positions

    @property
    def n_edges(self) -> int:
        """Number of edges ``m``."""
        return self._edges.shape[0]

    @property
    def edges(self) -> NDArray[np.int64]:
        """``(candidate, position)`` of every edge, shape (m, 2), canonical order (read-only)."""
        return self._edges

    @property
    def preferences(self) -> NDArray[np.float64]:
        """The m×m matrix ``P`` (1/2 diagonal, 0 on incomparable pairs; read-only)."""
        return self._preferences

    @cached_property
    def edge_candidates(self) -> NDArray[np.int64]:
        """Candidate of every edge (read-only)."""
        return read_only(self._edges[:, 0].copy())

    @cached_property
    def edge_positions(self) -> NDArray[np.int64]:
        """Position ``s(e)`` of every edge (read-only)."""
        return read_only(self._edges[:, 1].copy())

    @cached_property
    def edges_by_position(self) -> tuple[tuple[int, ...], ...]:
        """``E_j``: the edges at each position, ascending."""
        return tuple(tuple(int(e) for e in np.flatnonzero(self.edge_positions == j)) for j in range(self.n_positions))

    @cached_property
    def _edge_at(self) -> NDArray[np.int64]:
        table = np.full((self.n_positions, self.n_candidates), -1, dtype=np.int64)
        table[self.edge_positions, self.edge_candidates] = np.arange(self.n_edges)
        return read_only(table)

    def edge_index(self, candidate: int, position: int) -> int:
        """Index of the edge ``(candidate, position)``; ``ValueError`` if the graph lacks it."""
        candidate, position = _integer_index("candidate", candidate), _integer_index("position", position)
        if not (0 <= candidate < self.n_candidates and 0 <= position < self.n_positions):
            raise ValueError(f"(candidate, position) = {(candidate, position)} is out of range")
        edge = int(self._edge_at[position, candidate])
        if edge < 0:
            raise ValueError(f"{self._label()} has no edge (candidate {candidate}, position {position})")
        return edge

    @cached_property
    def comparable_pairs(self) -> NDArray[np.int64]:
        """The public duel table: rows ``(position, e, e')`` with ``e < e'`` comparable.

        Shape (K, 3), sorted by position then ``e`` then ``e'`` (read-only).  ``K`` is the number
        of comparable pairs, S3's ``K = sum_j |E_j| (|E_j| - 1) / 2``.
        """
        rows = [(j, a, b) for j, group in enumerate(self.edges_by_position)
                for k, a in enumerate(group) for b in group[k + 1:]]
        return read_only(np.array(rows, dtype=np.int64).reshape(-1, 3))

    @property
    def n_comparable_pairs(self) -> int:
        """``K``, the number of comparable pairs (possible distinct duels)."""
        return int(self.comparable_pairs.shape[0])

    @cached_property
    def _pair_index(self) -> dict[tuple[int, int], int]:
        return {(int(a), int(b)): k for k, (_, a, b) in enumerate(self.comparable_pairs.tolist())}

    def pair_index(self, edge: int, other: int) -> int:
        """Row of :attr:`comparable_pairs` holding the unordered pair ``{edge, other}``."""
        key = (min(edge, other), max(edge, other))
        if key not in self._pair_index:
            raise ValueError(f"edges {edge} and {other} are not a comparable pair of distinct edges")
        return self._pair_index[key]

    def are_comparable(self, edge: int, other: int) -> bool:
        """Whether two edges share a position (an edge is comparable with itself)."""
        return bool(self.edge_positions[edge] == self.edge_positions[other])

    def edge_label(self, edge: int) -> str:
        """The paper's 1-based label, e.g. ``"e1=(c1,s1)"`` for edge 0."""
        candidate, position = self._edges[edge]
        return f"e{edge + 1}=(c{candidate + 1},s{position + 1})"

    def format_matching(self, matching: Iterable[int]) -> str:
        """The paper's 1-based notation, e.g. ``"{e1,e5}"`` for the matching ``(0, 4)``."""
        return "{" + ",".join(f"e{int(e) + 1}" for e in sorted(matching)) + "}"

    # ------------------------------------------------------------------ matchings
    def canonical_matching(self, matching: Iterable[int]) -> Matching:
        """Validate a matching and return it as edge indices in position order.

        Raises
        ------
        TypeError
            If an entry is not an integer.
        ValueError
            If an index is out of range, or the edges do not cover every position exactly once
            with distinct candidates.
        """
        if isinstance(matching, (str, bytes)) or not isinstance(matching, Iterable):
            raise TypeError(f"a matching must be an iterable of edge indices, got {matching!r}")
        edges = sorted(_edge_indices("matching", matching, self.n_edges))
        positions = [int(self.edge_positions[e]) for e in edges]
        if positions != list(range(self.n_positions)):
            raise ValueError(f"{self.format_matching(edges)} does not cover each of the {self.n_positions} positions "
                             f"exactly once (positions {positions})")
        candidates = [int(self.edge_candidates[e]) for e in edges]
        if len(set(candidates)) != len(candidates):
            raise ValueError(f"{self.format_matching(edges)} uses a candidate twice (candidates {candidates})")
        return tuple(edges)

    def is_matching(self, matching: Iterable[int]) -> bool:
        """Whether ``matching`` is a matching covering every position (an element of ``ℳ``)."""
        try:
            self.canonical_matching(matching)
        except ValueError:
            return False
        return True

    def max_weight_matching(
        self,
        weights: ArrayLike,
        *,
        required: Iterable[int] = (),
        forbidden: Iterable[int] = (),
        maximize: bool = True,
    ) -> Matching | None:
        """:func:`max_weight_matching` on this graph (``None`` when infeasible)."""
        return _solve_covering_assignment(
            _check_weights(weights, self.n_edges), self.edge_candidates, self.edge_positions, self._edge_at,
            self.n_positions, self.n_candidates,
            _edge_indices("required", required, self.n_edges),
            _edge_indices("forbidden", forbidden, self.n_edges),
            bool(maximize),
        )

    # ------------------------------------------------------------------ exact counting
    @cached_property
    def _counting_tables(self) -> tuple[list[dict[int, int]], list[dict[int, int]]]:
        """Forward counts ``F[j][used]`` and completion counts ``G[j][used]`` (spec §4.2).

        ``used`` is the bit set of candidates taken by positions ``< j``.  ``F[j][used]`` counts
        the ways to fill positions ``0..j-1`` with exactly those candidates and ``G[j][used]``
        the ways to complete positions ``j..l-1`` avoiding them.
        """
        by_position = [[(e, 1 << int(self.edge_candidates[e])) for e in group] for group in self.edges_by_position]
        forward: list[dict[int, int]] = [{0: 1}]
        n_states = 1
        for group in by_position:
            level: dict[int, int] = {}
            for used, ways in forward[-1].items():
                for _, bit in group:
                    if not used & bit:
                        level[used | bit] = level.get(used | bit, 0) + ways
            n_states += len(level)
            if n_states > MAX_COUNTING_STATES:
                raise TooManyMatchingsError(
                    f"{self._label()}: exact counting of the maximum matchings needs more than "
                    f"{MAX_COUNTING_STATES} dynamic-programming states; the instance is too large for exact "
                    "Borda facts or exact uniform sampling"
                )
            forward.append(level)
        completions: list[dict[int, int]] = [{} for _ in forward]
        completions[-1] = dict.fromkeys(forward[-1], 1)
        for j in range(self.n_positions - 1, -1, -1):
            following = completions[j + 1]
            completions[j] = {
                used: sum(following[used | bit] for _, bit in by_position[j] if not used & bit)
                for used in forward[j]
            }
        return forward, completions

    def count_max_matchings(self) -> int:
        """``|ℳ|``, the number of matchings covering every position (exact Python int).

        Dynamic programme over positions with memo on the set of used candidates (spec §4.2).
        """
        return self._counting_tables[1][0][0]

    @cached_property
    def _edge_matching_counts(self) -> tuple[int, ...]:
        forward, completions = self._counting_tables
        counts = [0] * self.n_edges
        for j, group in enumerate(self.edges_by_position):
            following = completions[j + 1]
            for used, ways in forward[j].items():
                for e in group:
                    bit = 1 << int(self.edge_candidates[e])
                    if not used & bit:
                        counts[e] += ways * following[used | bit]
        return tuple(counts)

    def edge_matching_counts(self) -> tuple[int, ...]:
        """``N(e)``: how many maximum matchings contain each edge (exact Python ints)."""
        return self._edge_matching_counts

    def max_matching_at(self, rank: int) -> Matching:
        """The ``rank``-th maximum matching in the order of :meth:`max_matchings` (unranking).

        Needs no enumeration: at each position the admissible edges are scanned in ascending
        order and ``rank`` is reduced by the completion counts of the branches it skips.
        """
        rank = index(rank)
        total = self.count_max_matchings()
        if not 0 <= rank < total:
            raise ValueError(f"rank must lie in [0, {total - 1}], got {rank}")
        completions = self._counting_tables[1]
        used = 0
        matching = []
        for j, group in enumerate(self.edges_by_position):
            following = completions[j + 1]
            for e in group:
                bit = 1 << int(self.edge_candidates[e])
                if used & bit:
                    continue
                ways = following.get(used | bit, 0)
                if rank < ways:
                    matching.append(e)
                    used |= bit
                    break
                rank -= ways
        return tuple(matching)

    def sample_max_matching(self, rng: np.random.Generator, size: int | None = None) -> Matching | list[Matching]:
        """Exact uniform sample(s) from the maximum matchings (spec §4.2 [resolved], ``η = 0``).

        Draws one uniform integer below ``|ℳ|`` and decodes it position by position with the
        completion counts (:meth:`max_matching_at`), i.e. each position's edge is chosen with
        probability proportional to the number of completions it leaves.  This replaces the
        Jerrum-Sinclair-Vigoda almost-uniform sampler of Chen et al. (2020, Definition 1).

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of randomness (one ``integers`` call per sample while ``|ℳ| < 2**63``).
        size : int, optional
            Number of independent samples; ``None`` returns a single matching.
        """
        rng = check_rng(rng)
        total = self.count_max_matchings()
        if size is None:
            return self.max_matching_at(_uniform_below(rng, total))
        size = check_integer("size", size, minimum=0)
        if total <= np.iinfo(np.int64).max:
            ranks = rng.integers(total, size=size).tolist()
        else:
            ranks = [_uniform_below(rng, total) for _ in range(size)]
        return [self.max_matching_at(rank) for rank in ranks]

    def max_matchings(self, limit: int | None = DEFAULT_ENUMERATION_LIMIT) -> tuple[Matching, ...]:
        """All matchings that cover every position, by depth-first search over positions.

        The order is lexicographic in edge indices (position by position, ascending), the
        order the paper lists them in (spec §5.9).

        Parameters
        ----------
        limit : int or None, default 100 000
            Refuse to enumerate more matchings than this (``None``: no limit).

        Raises
        ------
        TooManyMatchingsError
            If there are more than ``limit`` matchings; :meth:`count_max_matchings` and
            :meth:`sample_max_matching` work without enumeration.
        """
        total = self.count_max_matchings()
        if limit is not None and total > limit:
            raise TooManyMatchingsError(
                f"{self._label()} has {total} maximum matchings, more than limit={limit}; use "
                "count_max_matchings(), sample_max_matching(rng) or max_matching_at(rank), or pass a larger limit"
            )
        return self._all_matchings

    @cached_property
    def _all_matchings(self) -> tuple[Matching, ...]:
        completions = self._counting_tables[1]
        by_position = [[(e, 1 << int(self.edge_candidates[e])) for e in group] for group in self.edges_by_position]
        out: list[Matching] = []
        n_positions = self.n_positions

        def extend(j: int, used: int, prefix: list[int]) -> None:
            if j == n_positions:
                out.append(tuple(prefix))
                return
            following = completions[j + 1]
            for e, bit in by_position[j]:
                # Dead branches (no completion) are pruned using the completion counts.
                if not used & bit and following.get(used | bit, 0):
                    prefix.append(e)
                    extend(j + 1, used | bit, prefix)
                    prefix.pop()

        extend(0, 0, [])
        return tuple(out)

    # ------------------------------------------------------------------ matching preference
    def matching_preference(self, first: Iterable[int], second: Iterable[int]) -> float:
        """``f(M1, M2) = (1/l) sum_j p_{e(M1, j), e(M2, j)}`` (Chen et al. 2020, eq. (1))."""
        first = self.canonical_matching(first)
        second = self.canonical_matching(second)
        return float(self._preferences[list(first), list(second)].sum() / self.n_positions)

    def matching_preference_table(self, limit: int | None = 2_000) -> NDArray[np.float64]:
        """``F[a, b] = f(M_a, M_b)`` over :meth:`max_matchings` (rows beat columns).

        Memory is ``|ℳ|²`` floats; ``limit`` bounds ``|ℳ|`` (see :meth:`max_matchings`).
        """
        rows = np.array(self.max_matchings(limit), dtype=np.int64)
        table = np.zeros((rows.shape[0], rows.shape[0]))
        for j in range(self.n_positions):
            table += self._preferences[np.ix_(rows[:, j], rows[:, j])]
        return read_only(table / self.n_positions)

    # ------------------------------------------------------------------ Borda facts
    @cached_property
    def _edge_rewards(self) -> NDArray[np.float64]:
        total = self.count_max_matchings()
        # Probability that a uniform random maximum matching uses each edge.
        usage = np.array([count / total for count in self.edge_matching_counts()])
        # w(e) = sum_{e'} p_{e,e'} Pr[e(M', s(e)) = e']; incomparable entries of P are 0.
        return read_only(self._preferences @ usage)

    def edge_rewards(self) -> NDArray[np.float64]:
        """``w(e) = (1/|ℳ|) sum_{M} p_{e, e(M, s(e))}`` (Chen et al. 2020, eq. (4); read-only).

        The mean outcome of a duel of ``e`` against the same-position edge of a uniformly random
        maximum matching (a self-duel, worth 1/2, when that matching contains ``e``).
        """
        return self._edge_rewards

    def matching_reward(self, matching: Iterable[int]) -> float:
        """``w(M) = sum_{e in M} w(e) = l · B(M)``."""
        return float(self._edge_rewards[list(self.canonical_matching(matching))].sum())

    def borda_score(self, matching: Iterable[int]) -> float:
        """``B(M) = (1/|ℳ|) sum_{M'} f(M, M') = w(M) / l`` (Chen et al. 2020, eqs. (2), (4))."""
        return self.matching_reward(matching) / self.n_positions

    def borda_scores(self, limit: int | None = DEFAULT_ENUMERATION_LIMIT) -> NDArray[np.float64]:
        """``B(M)`` for every matching of :meth:`max_matchings` (same order; enumerable instances)."""
        rows = np.array(self.max_matchings(limit), dtype=np.int64)
        return read_only(self._edge_rewards[rows].sum(axis=1) / self.n_positions)

    @cached_property
    def _borda_winner(self) -> Matching:
        winner = self.max_weight_matching(self._edge_rewards)
        assert winner is not None  # the constructor checked that a covering matching exists
        return winner

    def borda_winner(self) -> Matching:
        """``M^B``: the max-weight covering matching under ``w`` (MWMC; no enumeration).

        The paper assumes it is unique; with ties scipy's deterministic choice is returned and
        :meth:`borda_gaps` reports zero gaps.
        """
        return self._borda_winner

    @cached_property
    def _borda_gaps(self) -> NDArray[np.float64]:
        weights = self._edge_rewards
        winner = self._borda_winner
        best = float(weights[list(winner)].sum())
        gaps = np.empty(self.n_edges)
        for edge in range(self.n_edges):
            # Definition 3 of S3: best matching without e (e in M^B) or with e (e not in M^B);
            # max over an empty set is -inf, so the gap is +inf.
            if edge in winner:
                rival = self.max_weight_matching(weights, forbidden=[edge])
            else:
                rival = self.max_weight_matching(weights, required=[edge])
            gaps[edge] = math.inf if rival is None else max(0.0, best - float(weights[list(rival)].sum()))
        return read_only(gaps)

    def borda_gaps(self) -> NDArray[np.float64]:
        """``Δ^B_e`` in reward units ``w(M)`` (Chen et al. 2020, Definition 3; read-only).

        ``w(M^B) - max_{M ∌ e} w(M)`` for ``e ∈ M^B`` and ``w(M^B) - max_{M ∋ e} w(M)``
        otherwise; ``+inf`` when that set of matchings is empty.  Computed with two constrained
        MWMC calls per edge.
        """
        return self._borda_gaps

    def borda_hardness(self) -> float:
        """``H^B = sum_e 1 / (Δ^B_e)²`` (Definition 4); infinite gaps contribute 0.

        ``inf`` when some gap is 0 (the Borda winner is not unique, so exact identification is
        impossible).
        """
        gaps = self._borda_gaps
        if np.any(gaps == 0.0):
            return math.inf
        finite = gaps[np.isfinite(gaps)]
        return float(np.sum(1.0 / finite**2))

    # ------------------------------------------------------------------ Condorcet facts
    def condorcet_challenge(self, matching: Iterable[int]) -> tuple[float, Matching | None]:
        """The strongest challenger of ``matching``: ``min_{M' ≠ M} f(M, M')`` and its argmin.

        ``f(M, ·)`` is linear in ``χ_{M'}`` with weight ``p_{e(M, s(e')), e'}`` on edge ``e'``;
        every ``M' ≠ M`` avoids some edge of ``M``, so ``l`` min-weight MWMC calls, each
        forbidding one edge of ``M``, find the minimum (the trick of CAR-Verify, spec §4.7).
        Returns ``(inf, None)`` when ``M`` is the only maximum matching.
        """
        matching = self.canonical_matching(matching)
        opponent_weights = self._preferences[np.array(matching)[self.edge_positions], np.arange(self.n_edges)]
        best_value, best = math.inf, None
        for edge in matching:
            rival = self.max_weight_matching(opponent_weights, forbidden=[edge], maximize=False)
            if rival is not None:
                value = float(opponent_weights[list(rival)].sum() / self.n_positions)
                if value < best_value:
                    best_value, best = value, rival
        return best_value, best

    def is_condorcet_winner(self, matching: Iterable[int]) -> bool:
        """Whether ``f(M, M') > 1/2`` for every other maximum matching ``M'`` (polynomial).

        Strict comparison with a tolerance of :data:`CONDORCET_TOLERANCE`.
        """
        value, _ = self.condorcet_challenge(matching)
        return value > 0.5 + CONDORCET_TOLERANCE

    @cached_property
    def _condorcet_winner(self) -> Matching | None:
        matchings = self._all_matchings
        preferences = self._preferences.tolist()
        # One pass keeps a champion that the Condorcet matching, if any, must displace and that
        # nothing can displace afterwards; then a polynomial check confirms it.
        champion = matchings[0]
        threshold = self.n_positions * (0.5 + CONDORCET_TOLERANCE)
        for challenger in matchings[1:]:
            if sum(preferences[a][b] for a, b in zip(champion, challenger)) <= threshold:
                champion = challenger
        return champion if self.is_condorcet_winner(champion) else None

    def condorcet_winner(self, limit: int | None = DEFAULT_ENUMERATION_LIMIT) -> Matching | None:
        """``M^C``, the matching that beats every other matching, or ``None`` (exact).

        Enumerates the maximum matchings once (at most ``limit``; see :meth:`max_matchings`).
        To test one given matching without enumeration use :meth:`is_condorcet_winner`.
        """
        self.max_matchings(limit)
        return self._condorcet_winner

    # ------------------------------------------------------------------ per-position Copeland regret
    @cached_property
    def edge_copeland_losses(self) -> NDArray[np.int64]:
        """Strict losses of each edge within its position: ``#{e' ∈ E_s(e) : p_{e,e'} < 1/2}``."""
        comparable = self.edge_positions[:, None] == self.edge_positions[None, :]
        return read_only((comparable & (self._preferences < 0.5)).sum(axis=1).astype(np.int64))

    @cached_property
    def _copeland_regret_terms(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        sizes = np.array([len(group) for group in self.edges_by_position], dtype=np.float64)
        min_losses = np.array([self.edge_copeland_losses[list(group)].min() for group in self.edges_by_position])
        position = self.edge_positions
        excess = (self.edge_copeland_losses - min_losses[position]).astype(np.float64)
        scale = np.where(sizes[position] > 1, 2.0 * (sizes[position] - 1.0), 1.0)
        return excess, scale

    def copeland_regret(self, edge: int, other: int) -> float:
        """Per-position Copeland regret of the duel ``(edge, other)`` on the Komiyama scale.

        ``(L_e + L_e' - 2 L^(1)_j) / (2 (|E_j| - 1))`` in ``[0, 1]``, where ``L`` counts strict
        losses among the edges of position ``j = s(e) = s(e')`` and ``L^(1)_j`` is their minimum
        (spec §1.4 applied to the dueling bandit of one position).  Zero exactly when both edges
        are Copeland winners of their position; ``0`` at a position with a single edge.
        """
        edge, other = _integer_index("edge", edge), _integer_index("other", other)
        for label, value in (("edge", edge), ("other", other)):
            if not 0 <= value < self.n_edges:
                raise ValueError(f"{label} {value} is out of range: edges are 0..{self.n_edges - 1}")
        if not self.are_comparable(edge, other):
            raise ValueError(f"edges {edge} and {other} are at different positions and cannot duel")
        excess, scale = self._copeland_regret_terms
        return float((excess[edge] + excess[other]) / scale[edge])

    @cached_property
    def duel_copeland_regrets(self) -> NDArray[np.float64]:
        """:meth:`copeland_regret` of every row of :attr:`comparable_pairs` (read-only)."""
        excess, scale = self._copeland_regret_terms
        pairs = self.comparable_pairs
        return read_only((excess[pairs[:, 1]] + excess[pairs[:, 2]]) / scale[pairs[:, 1]])

    # ------------------------------------------------------------------ scoring
    def score(self, matching: Iterable[int]) -> dict[str, Any]:
        """Score a recommended matching.

        Returns
        -------
        dict
            ``valid`` (a matching covering every position?), ``is_borda_winner`` (Borda score
            within :data:`BORDA_TOLERANCE` of the best), ``is_condorcet_winner``,
            ``borda_score`` ``B(M)`` and ``borda_gap`` ``B(M^B) - B(M)`` (``None`` for invalid
            input).

        Raises
        ------
        TypeError
            If an entry of ``matching`` is not an integer.
        TooManyMatchingsError
            If the Borda facts cannot be computed exactly (see :meth:`count_max_matchings`).
        """
        try:
            matching = self.canonical_matching(matching)
        except ValueError:
            return {"valid": False, "is_borda_winner": False, "is_condorcet_winner": False,
                    "borda_score": None, "borda_gap": None}
        score = self.borda_score(matching)
        gap = max(0.0, self.borda_score(self._borda_winner) - score)
        return {
            "valid": True,
            "is_borda_winner": gap <= BORDA_TOLERANCE,
            "is_condorcet_winner": self.is_condorcet_winner(matching),
            "borda_score": score,
            "borda_gap": gap,
        }

    # ------------------------------------------------------------------ dunder
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BipartiteDuelProblem):
            return NotImplemented
        return (self.n_candidates == other.n_candidates and self.n_positions == other.n_positions
                and np.array_equal(self._edges, other._edges)
                and np.array_equal(self._preferences, other._preferences))

    def __hash__(self) -> int:
        return hash((self.n_candidates, self.n_positions, self._edges.tobytes(), self._preferences.tobytes()))

    def same_graph(self, other: BipartiteDuelProblem) -> bool:
        """Whether ``other`` has the same candidates, positions and edges (preferences may differ)."""
        return (self.n_candidates == other.n_candidates and self.n_positions == other.n_positions
                and np.array_equal(self._edges, other._edges))

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name else ""
        return (f"BipartiteDuelProblem({label}n_candidates={self.n_candidates}, n_positions={self.n_positions}, "
                f"n_edges={self.n_edges}, n_comparable_pairs={self.n_comparable_pairs})")

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuild from the defining data; caches (possibly large) are not pickled.
        return (_rebuild, (self.n_candidates, self.n_positions, self._edges.copy(), self._preferences.copy(),
                           self.name, self.source))

    def summary(self) -> dict[str, Any]:
        """Headline facts as plain Python values (counts, winners; Condorcet only if enumerable)."""
        try:
            condorcet = self.condorcet_winner()
        except TooManyMatchingsError:
            condorcet = "unknown (too many matchings)"
        return {
            "name": self.name,
            "n_candidates": self.n_candidates,
            "n_positions": self.n_positions,
            "n_edges": self.n_edges,
            "n_comparable_pairs": self.n_comparable_pairs,
            "n_max_matchings": self.count_max_matchings(),
            "borda_winner": list(self.borda_winner()),
            "condorcet_winner": list(condorcet) if isinstance(condorcet, tuple) else condorcet,
            "borda_hardness": self.borda_hardness(),
        }


def _rebuild(n_candidates: int, n_positions: int, edges: NDArray[np.int64], preferences: NDArray[np.float64],
             name: str | None, source: str | None) -> BipartiteDuelProblem:
    return BipartiteDuelProblem(n_candidates, n_positions, edges, preferences, name=name, source=source)


# ---------------------------------------------------------------------------------------------
# The paper's example and generators
# ---------------------------------------------------------------------------------------------
def five_edge_example() -> BipartiteDuelProblem:
    """The 5-edge example of Chen, Du, Huang, Zhao (ICML 2020), Figures 1-4 (spec §4.8, §5.9).

    Edges (0-based code index / paper label): 0 = e1 = (c1, s1), 1 = e2 = (c2, s1),
    2 = e3 = (c3, s1), 3 = e4 = (c3, s2), 4 = e5 = (c4, s2).  The preference matrix is the
    paper's Figure 2; the graph drawing was lost in text extraction and is the unique graph
    consistent with the edge-ordering rule and both quoted scores (spec §4.8, register X1).
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
                "Figures 1-4 (preference matrix of Figure 2; graph reconstructed, dueling-gym spec §4.8)"),
    )


#: Named bipartite problems (for environments and the CLI).
BIPARTITE_PROBLEMS: dict[str, Callable[[], BipartiteDuelProblem]] = {"five_edge": five_edge_example}


def load_bipartite_problem(name: str) -> BipartiteDuelProblem:
    """A named bipartite problem (see :data:`BIPARTITE_PROBLEMS`)."""
    if not isinstance(name, str):
        raise TypeError(f"problem name must be a string, got {type(name).__name__}")
    if name not in BIPARTITE_PROBLEMS:
        raise ValueError(f"unknown bipartite problem {name!r}; choose one of {sorted(BIPARTITE_PROBLEMS)}")
    return BIPARTITE_PROBLEMS[name]()


def _check_min_gap(min_gap: Any) -> float:
    min_gap = check_number("min_gap", min_gap, strict=False, minimum=0.0)
    if min_gap >= 0.5:
        raise ValueError(f"min_gap must lie in [0, 0.5), got {min_gap}")
    return min_gap


def _random_graph(n_positions: int, n_candidates: int, rng: np.random.Generator,
                  edge_probability: float) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    # A random injective position -> candidate map is always kept, so a covering matching exists.
    planted = rng.choice(n_candidates, size=n_positions, replace=False)
    present = rng.random((n_positions, n_candidates)) < edge_probability
    present[np.arange(n_positions), planted] = True
    edges = [(int(c), j) for j in range(n_positions) for c in np.flatnonzero(present[j])]
    return edges, [(int(planted[j]), j) for j in range(n_positions)]


def random_bipartite_graph(
    n_positions: int,
    n_candidates: int,
    rng: np.random.Generator,
    *,
    edge_probability: float = 0.5,
) -> list[tuple[int, int]]:
    """A random graph with a matching covering every position, edges in canonical order.

    A uniformly random injective assignment of candidates to positions is planted, then every
    other (candidate, position) pair becomes an edge independently with ``edge_probability``.
    """
    n_positions = check_integer("n_positions", n_positions, minimum=1)
    n_candidates = check_integer("n_candidates", n_candidates, minimum=n_positions)
    edge_probability = check_probability("edge_probability", edge_probability)
    return _random_graph(n_positions, n_candidates, check_rng(rng), edge_probability)[0]


def random_bipartite_problem(
    n_positions: int,
    n_candidates: int,
    rng: np.random.Generator,
    *,
    edge_probability: float = 0.5,
    edges: ArrayLike | None = None,
    planted_condorcet: bool = False,
    min_gap: float = 0.05,
    name: str | None = None,
) -> BipartiteDuelProblem:
    """A random CPE-DB instance, guaranteed to have a matching covering every position.

    Parameters
    ----------
    n_positions, n_candidates : int
        Graph size (``n_candidates >= n_positions``).
    rng : numpy.random.Generator
        All randomness comes from here.
    edge_probability : float, default 0.5
        Density of the random graph (see :func:`random_bipartite_graph`); ignored with ``edges``.
    edges : array_like, optional
        A fixed graph (canonical order) on which only the preferences are drawn; it must have a
        covering matching.
    planted_condorcet : bool, default False
        Plant a Condorcet matching: a covering matching (the graph's planted one, or a random
        max-weight matching when ``edges`` is given) whose every edge beats every comparable edge
        with probability in ``(1/2 + min_gap, 1]``.  Then ``f(M*, M)`` is an average of terms
        ``>= 1/2``, strictly above 1/2 wherever ``M`` differs, so ``M*`` beats every other
        matching; this is verified before returning.
    min_gap : float, default 0.05
        Every comparable pair has ``|p - 1/2| >= min_gap`` (in ``[0, 0.5)``).
    name : str, optional
        Label of the problem.
    """
    n_positions = check_integer("n_positions", n_positions, minimum=1)
    n_candidates = check_integer("n_candidates", n_candidates, minimum=n_positions)
    rng = check_rng(rng)
    edge_probability = check_probability("edge_probability", edge_probability)
    min_gap = _check_min_gap(min_gap)
    if edges is None:
        edge_list, planted = _random_graph(n_positions, n_candidates, rng, edge_probability)
        planted_edges = [edge_list.index(edge) for edge in planted]
    else:
        edge_list = [tuple(edge) for edge in np.asarray(edges).tolist()]
        graph = BipartiteDuelProblem(n_candidates, n_positions, edge_list, _block_halves(edge_list))
        planted_edges = list(graph.max_weight_matching(rng.random(len(edge_list)))) if planted_condorcet else []

    positions = np.array([position for _, position in edge_list])
    rows, columns = np.nonzero(np.triu(positions[:, None] == positions[None, :], 1))
    magnitude = rng.uniform(min_gap, 0.5, size=rows.size)
    sign = np.where(rng.random(rows.size) < 0.5, -1.0, 1.0)
    upper = 0.5 + sign * magnitude
    if planted_condorcet:
        planted_mask = np.zeros(len(edge_list), dtype=bool)
        planted_mask[planted_edges] = True
        # 1 - U[0, 1/2 - min_gap) lies in (1/2 + min_gap, 1]: strictly above 1/2 even if min_gap = 0.
        winning = 1.0 - rng.uniform(0.0, 0.5 - min_gap, size=rows.size)
        upper = np.where(planted_mask[rows], winning, np.where(planted_mask[columns], 1.0 - winning, upper))
    preferences = np.zeros((len(edge_list), len(edge_list)))
    preferences[rows, columns] = upper
    preferences[columns, rows] = 1.0 - upper
    np.fill_diagonal(preferences, 0.5)

    default_name = f"random_bipartite_l{n_positions}_n{n_candidates}" + ("_condorcet" if planted_condorcet else "")
    problem = BipartiteDuelProblem(
        n_candidates, n_positions, edge_list, preferences, name=name or default_name,
        source="generated: random bipartite CPE-DB instance" + (" with a planted Condorcet matching"
                                                                if planted_condorcet else ""),
    )
    if planted_condorcet and not problem.is_condorcet_winner(planted_edges):  # pragma: no cover - by construction
        raise RuntimeError("planted matching is not a Condorcet winner")
    return problem


def _block_halves(edge_list: list[tuple[int, int]]) -> NDArray[np.float64]:
    """An all-tied preference matrix on a graph: lets the graph be validated before preferences exist."""
    positions = np.array([position for _, position in edge_list]) if edge_list else np.zeros(0, dtype=np.int64)
    return np.where(positions[:, None] == positions[None, :], 0.5, 0.0)


class BipartiteProblemSampler:
    """A picklable ``rng -> BipartiteDuelProblem`` callable on a fixed graph.

    Environments keep their action space (one action per comparable pair) fixed, so every
    problem drawn for them must share one graph; only the preferences are redrawn.

    Parameters
    ----------
    n_positions, n_candidates : int
        Graph size.
    edges : array_like, optional
        The fixed graph (canonical order).  If omitted, one random graph is drawn once, at
        construction, from ``np.random.default_rng(graph_seed)`` with ``edge_probability``.
    graph_seed : int, default 0
        Seed of that one-off graph draw.
    edge_probability : float, default 0.5
        Density of that graph.
    **options
        ``planted_condorcet``, ``min_gap`` of :func:`random_bipartite_problem`.

    Examples
    --------
    >>> sampler = BipartiteProblemSampler(3, 5, planted_condorcet=True)
    >>> problem = sampler(np.random.default_rng(1))
    >>> problem.condorcet_winner() is not None
    True
    """

    def __init__(self, n_positions: int, n_candidates: int, *, edges: ArrayLike | None = None,
                 graph_seed: int = 0, edge_probability: float = 0.5, **options: Any):
        self.n_positions = check_integer("n_positions", n_positions, minimum=1)
        self.n_candidates = check_integer("n_candidates", n_candidates, minimum=self.n_positions)
        if edges is None:
            graph_seed = check_seed("graph_seed", graph_seed)
            edges = random_bipartite_graph(self.n_positions, self.n_candidates, np.random.default_rng(graph_seed),
                                           edge_probability=edge_probability)
        self.edges = tuple((int(c), int(s)) for c, s in np.asarray(edges).tolist())
        unknown = set(options) - {"planted_condorcet", "min_gap"}
        if unknown:
            raise TypeError(f"unknown sampler options {sorted(unknown)}; allowed: planted_condorcet, min_gap")
        self.options = dict(options)
        # Validate graph and options once, eagerly.
        self(np.random.default_rng(0))

    def __call__(self, rng: np.random.Generator) -> BipartiteDuelProblem:
        return random_bipartite_problem(self.n_positions, self.n_candidates, rng, edges=self.edges, **self.options)

    def __repr__(self) -> str:
        options = "".join(f", {key}={value!r}" for key, value in self.options.items())
        return (f"BipartiteProblemSampler(n_positions={self.n_positions}, n_candidates={self.n_candidates}, "
                f"n_edges={len(self.edges)}{options})")
