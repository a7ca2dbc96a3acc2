"""The CPE-DB problem: a bipartite graph, its edge preferences and their Borda/Condorcet facts.

The setting of Chen, Du, Huang and Zhao, *Combinatorial Pure Exploration for Dueling Bandits*
(ICML 2020).  Candidates ``c_0..c_{n-1}`` can fill positions ``s_0..s_{l-1}``; an edge
``e = (c, s)`` says that candidate ``c`` can fill position ``s``.  Two edges are *comparable*
when they share a position; a duel of comparable edges ``e, e'`` is won by ``e`` with
probability ``p_{e,e'} = 1 - p_{e',e}``.  The decision class is the set of matchings that cover
every position (the maximum matchings, assumed to exist), and the targets are

* the **Borda matching**, maximising ``B(M) = mean_{M'} f(M, M')``, equivalently the
  max-weight matching under the edge rewards ``w(e)`` (the paper's eq. (4)), and
* the **Condorcet matching**, beating every other matching: ``f(M^C, M) > 1/2``,

where ``f(M1, M2) = (1/l) sum_j p_{e(M1, j), e(M2, j)}`` (eq. (1)).

Conventions: indices are 0-based (the paper's ``e1`` is edge ``0``); edges are indexed in the
canonical order sorted by (position, candidate), and the constructor *requires* that order so
that row ``k`` of the preference matrix unambiguously belongs to edge ``k``; a matching is a
tuple of edge indices in position order (which is ascending edge order).  The m×m preference
matrix holds ``1/2`` on the diagonal and ``0`` for incomparable pairs, so that
``f(M1, M2) = (1/l) chi_{M1}^T P chi_{M2}``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import cached_property
from operator import index
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.problems.bipartite.enumeration import (
    DEFAULT_ENUMERATION_LIMIT,
    MatchingCounter,
    TooManyMatchingsError,
    uniform_below,
)
from dueling_gym.problems.bipartite.matching import (
    Matching,
    check_weights,
    edge_indices,
    integer_index,
    solve_covering_assignment,
)
from dueling_gym.problems.bipartite.validation import assemble_position_blocks, check_edge_preferences, check_edges
from dueling_gym.validation import check_atol, check_integer, check_rng, read_only

__all__ = ["BipartiteDuelProblem", "CONDORCET_TOLERANCE", "BORDA_TOLERANCE"]

#: ``f(M^C, M) > 1/2`` is tested as ``> 1/2 + tol`` so that float noise in sums of ``l``
#: probabilities cannot turn a tie into a strict win.
CONDORCET_TOLERANCE = 1e-12
#: Matchings whose Borda score is within this of the best one count as Borda winners.
BORDA_TOLERANCE = 1e-12


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
    read-only.  Max-weight matchings and the Condorcet test of a given matching are polynomial;
    the Borda facts average over all covering matchings, counted exactly by the dynamic
    programme of :mod:`~dueling_gym.problems.bipartite.enumeration` (exponential in the worst case).
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
        self._edges = read_only(check_edges(self._label(), edges, self._n_candidates, self._n_positions))
        self._preferences = read_only(check_edge_preferences(self._label(), preferences, self._edges[:, 1],
                                                             check_atol(atol)))
        if self.max_weight_matching(np.zeros(self.n_edges)) is None:
            raise ValueError(
                f"{self._label()}: no matching covers all {self._n_positions} positions "
                "(the decision class of maximum matchings is empty)"
            )

    def _label(self) -> str:
        return f"BipartiteDuelProblem {self.name!r}" if self.name else "BipartiteDuelProblem"

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
        n_positions, edges, preferences = assemble_position_blocks(position_preferences)
        return cls(n_candidates, n_positions, edges, preferences, **kwargs)

    @classmethod
    def tied(cls, n_candidates: int, n_positions: int, edges: ArrayLike, *, name: str | None = None
             ) -> BipartiteDuelProblem:
        """The graph with all-tied preferences (``1/2`` on every comparable pair).

        Graph facts (comparable pairs, max-weight matchings, counting and sampling of the
        covering matchings) are those of any problem on the same graph, and nothing about real
        preferences can be read from it: the combinatorial agents are built on such a copy, and
        generators validate a graph with it before drawing preferences.
        """
        array = np.asarray(edges)
        positions = array[:, 1] if array.ndim == 2 and array.shape[1:] == (2,) else np.zeros(0, dtype=np.int64)
        ties = np.where(positions[:, None] == positions[None, :], 0.5, 0.0)
        return cls(n_candidates, n_positions, edges, ties, name=name)

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
        """The edges ``E_j`` at each position ``j``, ascending."""
        return tuple(tuple(int(e) for e in np.flatnonzero(self.edge_positions == j)) for j in range(self.n_positions))

    @cached_property
    def edge_at(self) -> NDArray[np.int64]:
        """The index of the edge ``edge_at[position, candidate]``, ``-1`` where the graph has none (read-only)."""
        table = np.full((self.n_positions, self.n_candidates), -1, dtype=np.int64)
        table[self.edge_positions, self.edge_candidates] = np.arange(self.n_edges)
        return read_only(table)

    def edge_index(self, candidate: int, position: int) -> int:
        """Index of the edge ``(candidate, position)``; ``ValueError`` if the graph lacks it."""
        candidate, position = integer_index("candidate", candidate), integer_index("position", position)
        if not (0 <= candidate < self.n_candidates and 0 <= position < self.n_positions):
            raise ValueError(f"(candidate, position) = {(candidate, position)} is out of range")
        edge = int(self.edge_at[position, candidate])
        if edge < 0:
            raise ValueError(f"{self._label()} has no edge (candidate {candidate}, position {position})")
        return edge

    @cached_property
    def comparable_pairs(self) -> NDArray[np.int64]:
        """The public duel table, rows ``(position, e, e')`` with ``e < e'`` comparable.

        Shape (K, 3), sorted by position then ``e`` then ``e'`` (read-only).  ``K`` is the number
        of comparable pairs, the paper's ``K = sum_j |E_j| (|E_j| - 1) / 2``.
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
        edges = sorted(edge_indices("matching", matching, self.n_edges))
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
        """:func:`~dueling_gym.problems.max_weight_matching` on this graph (``None`` when infeasible)."""
        return solve_covering_assignment(
            check_weights(weights, self.n_edges), self.edge_candidates, self.edge_positions, self.edge_at,
            self.n_positions, self.n_candidates,
            edge_indices("required", required, self.n_edges),
            edge_indices("forbidden", forbidden, self.n_edges),
            bool(maximize),
        )

    def strongest_challenger(self, weights: ArrayLike, matching: Iterable[int], *,
                             maximize: bool = True) -> tuple[float, Matching | None]:
        """The best covering matching other than ``matching`` under edge ``weights``, and its value.

        The value of a matching ``M'`` is ``(1/l) sum_{e in M'} weights[e]``; the best is the
        largest (``maximize=True``) or the smallest.  Every ``M' ≠ M`` avoids at least one edge of
        ``M``, so ``l`` constrained max-weight matchings, each forbidding one edge of ``M``, cover
        all of them (the device of CAR-Verify, Chen et al. 2020, Algorithm 4 lines 6 and 9); the
        first best one in the order of ``M``'s edges is returned.  ``(∓inf, None)`` when ``M`` is
        the only covering matching.

        With ``weights[e] = Q[e, e(M, s(e))]`` the value is ``f(M', M)`` under the matrix ``Q``;
        with ``weights[e] = Q[e(M, s(e)), e]`` it is ``f(M, M')``.
        """
        matching = self.canonical_matching(matching)
        weights = check_weights(weights, self.n_edges)
        best_value, best = (-math.inf if maximize else math.inf), None
        for edge in matching:
            rival = solve_covering_assignment(weights, self.edge_candidates, self.edge_positions, self.edge_at,
                                              self.n_positions, self.n_candidates, [], [edge], bool(maximize))
            if rival is not None:
                value = float(weights[list(rival)].sum() / self.n_positions)
                if value > best_value if maximize else value < best_value:
                    best_value, best = value, rival
        return best_value, best

    # ------------------------------------------------------------------ exact counting
    @cached_property
    def _counter(self) -> MatchingCounter:
        return MatchingCounter(self.edges_by_position, self.edge_candidates, self._label())

    def count_max_matchings(self) -> int:
        """``|ℳ|``, the number of matchings covering every position (exact Python int).

        Dynamic programme over positions with memo on the set of used candidates
        (:mod:`~dueling_gym.problems.bipartite.enumeration`).
        """
        return self._counter.total

    def edge_matching_counts(self) -> tuple[int, ...]:
        """``N(e)``: how many maximum matchings contain each edge (exact Python ints)."""
        return self._counter.edge_counts

    def max_matching_at(self, rank: int) -> Matching:
        """The ``rank``-th maximum matching in the order of :meth:`max_matchings` (unranking).

        Needs no enumeration: at each position the admissible edges are scanned in ascending
        order and ``rank`` is reduced by the completion counts of the branches it skips.
        """
        rank = index(rank)
        total = self.count_max_matchings()
        if not 0 <= rank < total:
            raise ValueError(f"rank must lie in [0, {total - 1}], got {rank}")
        return self._counter.matching_at(rank)

    def sample_max_matching(self, rng: np.random.Generator, size: int | None = None) -> Matching | list[Matching]:
        """Exact uniform sample(s) from the maximum matchings (``η = 0``).

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
            return self.max_matching_at(uniform_below(rng, total))
        size = check_integer("size", size, minimum=0)
        if total <= np.iinfo(np.int64).max:
            ranks = rng.integers(total, size=size).tolist()
        else:
            ranks = [uniform_below(rng, total) for _ in range(size)]
        return [self.max_matching_at(rank) for rank in ranks]

    def max_matchings(self, limit: int | None = DEFAULT_ENUMERATION_LIMIT) -> tuple[Matching, ...]:
        """All matchings that cover every position, by depth-first search over positions.

        The order is lexicographic in edge indices (position by position, ascending), the
        order in which the paper lists the matchings of its 5-edge example.

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
        return self._counter.all_matchings

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
            # Definition 3 of Chen et al. (2020): best matching without e (e in M^B) or with e (e not in M^B);
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

        ``f(M, ·)`` is linear in ``χ_{M'}`` with weight ``p_{e(M, s(e')), e'}`` on edge ``e'``, so
        :meth:`strongest_challenger` (``l`` min-weight covering matchings) finds the minimum.
        Returns ``(inf, None)`` when ``M`` is the only maximum matching.
        """
        matching = self.canonical_matching(matching)
        opponent_weights = self._preferences[np.array(matching)[self.edge_positions], np.arange(self.n_edges)]
        return self.strongest_challenger(opponent_weights, matching, maximize=False)

    def is_condorcet_winner(self, matching: Iterable[int]) -> bool:
        """Whether ``f(M, M') > 1/2`` for every other maximum matching ``M'`` (polynomial).

        Strict comparison with a tolerance of :data:`~dueling_gym.problems.bipartite.problem.CONDORCET_TOLERANCE`.
        """
        value, _ = self.condorcet_challenge(matching)
        return value > 0.5 + CONDORCET_TOLERANCE

    @cached_property
    def _condorcet_winner(self) -> Matching | None:
        matchings = self._counter.all_matchings
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
        """Strict losses of each edge within its position, ``#{e' ∈ E_s(e) : p_{e,e'} < 1/2}``."""
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
        (the Copeland regret of Komiyama et al. 2016 applied to the dueling bandit of one position).  Zero exactly when both edges
        are Copeland winners of their position; ``0`` at a position with a single edge.
        """
        edge, other = integer_index("edge", edge), integer_index("other", other)
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
            within :data:`~dueling_gym.problems.bipartite.problem.BORDA_TOLERANCE` of the best),
            ``is_condorcet_winner``,
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
