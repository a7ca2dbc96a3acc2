"""Shared primitives of combinatorial pure exploration for dueling bandits (CPE-DB).

Chen, Du, Huang, Zhao, *Combinatorial Pure Exploration for Dueling Bandits*, ICML 2020
("S3"); spec §4.2 and §4.5.  Everything here is written once and used by the agents of
:mod:`dueling_gym.agents.clucb_borda` (CLUCB-Borda-PAC/Exact) and :mod:`dueling_gym.agents.car`
(CAR-Cond, CAR-Verify, CAR-Parallel):

* :func:`graph_only` -- a copy of a problem's *graph* with all-tied preferences; agents are
  built on it, so they cannot read the true preferences even by accident.
* :func:`log_constant`, :func:`confidence_radius` -- ``c_t = sqrt(ln(4 K' t^3 / δ) / (2 T))``
  with ``x/0 := 1`` (S3 eq. (7), Algorithm 1 line 6), ``K' = max(K, m)`` for the Borda
  algorithms (spec gap B2'), ``K`` for the Condorcet ones.
* :class:`PairStatistics`, :func:`preference_bounds`, :func:`bound_matrices` -- empirical
  bounds ``P̄``, ``P̲`` on comparable pairs (S3 eq. (8)).
* :class:`CondorcetOracle` -- the exact oracle ``O(A1, R1, A2, R2, Q)`` as one LP solved by
  HiGHS (spec §4.5 [resolved]); :func:`frank_wolfe_condorcet_oracle` -- the paper's projected
  sub-gradient / Frank-Wolfe oracle (Algorithms 6-7), for reference only (cost below);
  :func:`oracle_drift` -- a Lipschitz bound on how far oracle values can move when the bounds
  move (used to skip LP calls whose outcome cannot change a decision).
* :class:`MatchingSampler` and its two exact implementations (spec §4.2, register B1').
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import linear_sum_assignment, linprog
from scipy.sparse import csc_array

from dueling_gym.problems.bipartite import (
    BipartiteDuelProblem,
    Matching,
    TooManyMatchingsError,
    solve_covering_assignment,
)

__all__ = [
    "graph_only",
    "log_constant",
    "confidence_radius",
    "preference_bounds",
    "bound_matrices",
    "PairStatistics",
    "OracleSolution",
    "CondorcetOracle",
    "condorcet_oracle",
    "frank_wolfe_condorcet_oracle",
    "frank_wolfe_paper_cost",
    "oracle_drift",
    "position_starts",
    "MatchingSampler",
    "ExactMatchingSampler",
    "RejectionMatchingSampler",
    "make_sampler",
    "MatchingSolver",
]


# ---------------------------------------------------------------------------------------------
# The graph an agent may see
# ---------------------------------------------------------------------------------------------
def graph_only(source: Any) -> BipartiteDuelProblem:
    """The graph of ``source`` as a :class:`BipartiteDuelProblem` with all-tied preferences.

    ``source`` is a :class:`BipartiteDuelProblem` (only ``n_candidates``, ``n_positions`` and
    ``edges`` are read), a ``CombinatorialDuelEnv`` (or a Gymnasium wrapper of one; its
    current problem's graph is used) or a tuple ``(n_candidates, n_positions, edges)``.  The
    copy holds ``1/2`` on every comparable pair, so code that receives it cannot learn the true
    preferences.  Graph facts (comparable pairs, max-weight matchings, counting and sampling
    of maximum matchings) are identical to the original's.
    """
    if isinstance(source, tuple) and len(source) == 3:
        n_candidates, n_positions, edges = source
    else:
        problem = source
        if not isinstance(problem, BipartiteDuelProblem):
            unwrapped = getattr(source, "unwrapped", source)
            problem = getattr(unwrapped, "problem", None)
            if problem is None:
                problem = getattr(unwrapped, "graph", None)
        if not isinstance(problem, BipartiteDuelProblem):
            raise TypeError(
                "combinatorial agents need a bipartite graph: a BipartiteDuelProblem, a CombinatorialDuelEnv or "
                f"(n_candidates, n_positions, edges); got {type(source).__name__}"
            )
        n_candidates, n_positions, edges = problem.n_candidates, problem.n_positions, problem.edges
    edges = np.array(edges, dtype=np.int64).reshape(-1, 2)
    positions = edges[:, 1]
    ties = np.where(positions[:, None] == positions[None, :], 0.5, 0.0)
    return BipartiteDuelProblem(int(n_candidates), int(n_positions), edges, ties, name="graph")


class MatchingSolver:
    """Per-round MWMC calls on one graph without re-validating the graph each time.

    Calls the core of :func:`dueling_gym.problems.bipartite.max_weight_matching` (the library's
    single MWMC routine, spec §4.2) with the graph's index arrays prepared once; weights are
    only checked for finiteness.  Without constraints the position × candidate matrix is
    filled in place (the same ``-inf``-padded matrix and the same
    :func:`scipy.optimize.linear_sum_assignment` call), which saves the constraint
    bookkeeping in the hot loop of CLUCB-Borda.  Results are identical to
    ``graph.max_weight_matching`` (ties included: same matrix, same deterministic solver).
    """

    def __init__(self, graph: BipartiteDuelProblem):
        self.graph = graph
        self._candidates = np.asarray(graph.edge_candidates)
        self._positions = np.asarray(graph.edge_positions)
        self._edge_at = graph.edge_at
        self._matrix = np.full((graph.n_positions, graph.n_candidates), -np.inf)
        self._feasible_shape = graph.n_positions <= graph.n_candidates

    def __call__(self, weights: NDArray[np.float64], *, required: Iterable[int] = (), forbidden: Iterable[int] = (),
                 maximize: bool = True) -> Matching | None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (self.graph.n_edges,) or not np.isfinite(weights).all():
            raise ValueError(f"weights must be {self.graph.n_edges} finite numbers")
        required, forbidden = list(required), list(forbidden)
        if required or forbidden or not maximize or not self._feasible_shape:
            return solve_covering_assignment(weights, self._candidates, self._positions, self._edge_at,
                                              self.graph.n_positions, self.graph.n_candidates,
                                              required, forbidden, maximize)
        matrix = self._matrix
        matrix[self._positions, self._candidates] = weights
        rows, columns = linear_sum_assignment(matrix, maximize=True)
        return tuple(self._edge_at[rows, columns].tolist())


# ---------------------------------------------------------------------------------------------
# Confidence radius and empirical bounds (spec §4.2)
# ---------------------------------------------------------------------------------------------
def log_constant(n_comparable_pairs: int, n_edges: int | None = None, *, paper_log_constant: bool = False) -> int:
    """The constant ``K'`` inside ``ln(4 K' t^3 / δ)``.

    * Borda algorithms (pass ``n_edges``): ``max(K, m)``.  S3's proof of Theorem 1 sums the
      per-edge failure ``δ / (2 K t^2)`` over the ``m`` *edges*, which stays below ``δ`` only
      if ``m <= 12 K / π²`` (the 5-edge example has ``m = 5 > 4.86``); ``max(K, m)`` repairs the
      union bound (spec register B2').  ``paper_log_constant=True`` keeps the printed ``K``.
    * Condorcet algorithms (``n_edges=None``): ``K``; their union bound runs over the ``K``
      pairs, so the printed constant is right.

    The result is at least 1 (``K = 0`` only happens when every position has a single edge;
    nothing is ever sampled then, but the logarithm stays defined).
    """
    if paper_log_constant or n_edges is None:
        return max(1, int(n_comparable_pairs))
    return max(1, int(n_comparable_pairs), int(n_edges))


def confidence_radius(counts: ArrayLike, t: int, delta: float, constant: int) -> NDArray[np.float64]:
    """``c_t = sqrt(ln(4 K' t³ / δ) / (2 T))`` per entry of ``counts``; ``c_t = 1`` where ``T = 0``.

    S3 eq. (7) and Algorithm 1 line 6 ("``x/0 := 1``").  ``t >= 1`` is the round, ``constant``
    is ``K'`` from :func:`log_constant`.  Vectorised over ``counts``.
    """
    if t < 1:
        raise ValueError(f"t must be at least 1, got {t}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    counts = np.asarray(counts, dtype=np.float64)
    half_level = 0.5 * math.log(4.0 * constant * float(t) ** 3 / delta)
    # sqrt(level / (2 T)) where T > 0 and sqrt(1) = 1 where T = 0.
    return np.sqrt(np.divide(half_level, counts, out=np.ones(counts.shape), where=counts > 0))


def preference_bounds(counts: ArrayLike, wins: ArrayLike, t: int, delta: float,
                      constant: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lower and upper confidence bounds per comparable pair (S3 eq. (8)).

    ``counts[k]``, ``wins[k]``: duels of pair ``k = (e, e')`` of ``comparable_pairs`` and wins
    of its first edge ``e``.  Returns ``(lower, upper)`` with ``p̲ = max(0, p̂ - c)`` and
    ``p̄ = min(1, p̂ + c)`` for ``p_{e,e'}``; unsampled pairs get ``(0, 1)``.  The bounds for
    the reverse direction follow: ``p̄_{e',e} = 1 - p̲_{e,e'}`` and ``p̲_{e',e} = 1 - p̄_{e,e'}``.
    """
    counts = np.asarray(counts, dtype=np.float64)
    wins = np.asarray(wins, dtype=np.float64)
    radius = confidence_radius(counts, t, delta, constant)
    sampled = counts > 0
    mean = np.divide(wins, counts, out=np.full(counts.shape, 0.5), where=sampled)
    lower = np.where(sampled, np.maximum(0.0, mean - radius), 0.0)
    upper = np.where(sampled, np.minimum(1.0, mean + radius), 1.0)
    return lower, upper


def bound_matrices(graph: BipartiteDuelProblem, lower: ArrayLike,
                   upper: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The m×m matrices ``(P̄, P̲)`` from per-pair bounds (1/2 on the diagonal, 0 if incomparable)."""
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    pairs = graph.comparable_pairs
    first, second = pairs[:, 1], pairs[:, 2]
    m = graph.n_edges
    p_upper = np.zeros((m, m))
    p_lower = np.zeros((m, m))
    np.fill_diagonal(p_upper, 0.5)
    np.fill_diagonal(p_lower, 0.5)
    p_upper[first, second] = upper
    p_upper[second, first] = 1.0 - lower
    p_lower[first, second] = lower
    p_lower[second, first] = 1.0 - upper
    return p_upper, p_lower


class PairStatistics:
    """Duel counts and wins per comparable pair of a graph (the state behind ``P̄``, ``P̲``).

    ``counts[k]`` and ``wins[k]`` refer to row ``k = (position, e, e')`` of
    ``graph.comparable_pairs``; ``wins`` counts wins of the smaller edge ``e``.  Self-duels are
    not recorded (they carry no information about ``P``).
    """

    def __init__(self, graph: BipartiteDuelProblem):
        self.graph = graph
        self.counts = np.zeros(graph.n_comparable_pairs, dtype=np.int64)
        self.wins = np.zeros(graph.n_comparable_pairs, dtype=np.int64)

    def record(self, edge: int, other: int, first_won: bool) -> None:
        """Record one duel ``(edge, other)``; ``first_won`` is True iff ``edge`` won."""
        if edge == other:
            return
        k = self.graph.pair_index(edge, other)
        self.counts[k] += 1
        self.wins[k] += bool(first_won) == (edge < other)

    def bounds(self, t: int, delta: float, constant: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """:func:`preference_bounds` of the current statistics."""
        return preference_bounds(self.counts, self.wins, t, delta, constant)

    def empirical_means(self) -> NDArray[np.float64]:
        """``p̂`` per pair (1/2 when unsampled)."""
        return np.divide(self.wins, self.counts, out=np.full(self.counts.shape, 0.5), where=self.counts > 0)


# ---------------------------------------------------------------------------------------------
# The Condorcet oracle (spec §4.5)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OracleSolution:
    """Value of ``max_x min_y (1/l) xᵀQy`` and a maximiser ``x`` (``None`` when infeasible)."""

    value: float
    x: NDArray[np.float64] | None


class CondorcetOracle:
    """The exact Condorcet oracle ``O(A1, R1, A2, R2, Q)`` of S3 as one LP (spec §4.5 [resolved]).

    Computes ``max_{x ∈ 𝒫(ℳ, A1, R1)} min_{y ∈ 𝒫(ℳ, A2, R2)} (1/l) xᵀQy`` exactly (error
    ``ε = 0``), where ``𝒫(ℳ, A, R)`` is the convex hull of the covering matchings that contain
    ``A`` and avoid ``R``.  On the reduced edge set ``E'`` (remove ``R`` and every edge sharing a
    candidate or position with an edge of ``A``) that hull is
    ``{x >= 0 : sum_{e ∈ E'_j} x_e = 1 ∀ positions j, sum_{e ∈ E' ∩ δ(c)} x_e <= 1 ∀ candidates c}``
    (a bipartite degree-constrained polytope: totally unimodular, hence integral).  Dualising
    the inner minimum gives the single LP

    ``maximise sum_j u_j + sum_c v_c`` over ``x``, ``u`` (free), ``v <= 0`` subject to
    ``u_{s(e)} + v_{c(e)} - (1/l) sum_{e'} Q[e', e] x_{e'} <= 0`` for ``e ∈ E'_y`` and ``x`` in the
    polytope of ``E'_x``,

    solved by :func:`scipy.optimize.linprog` with ``method="highs"``.  Only same-position
    entries of ``Q`` are read (incomparable entries are 0 by convention).  Conventions: an
    empty ``𝒫(ℳ, A1, R1)`` gives ``-inf``; otherwise an empty ``𝒫(ℳ, A2, R2)`` gives ``+inf``;
    both emptiness checks are one assignment problem each (the library's MWMC).

    Cost: ``m + l + n`` variables, ``|E'_y| + n`` inequality and ``l`` equality rows.  The
    solver's fixed overhead dominates on paper-size instances: about 1-3 ms per call through
    :func:`~scipy.optimize.linprog`, 0.3-1 ms through SciPy's bundled HiGHS bindings directly.

    Parameters
    ----------
    graph : BipartiteDuelProblem
        Only its graph is used.
    backend : {"auto", "highs_core", "linprog"}, default "auto"
        ``"linprog"``: the public ``linprog(method="highs")``.  ``"highs_core"``: the same HiGHS
        solver through SciPy's private bindings ``scipy.optimize._highspy._core`` (one reused
        ``Highs`` object, default options, no per-call option validation), about 3× faster.
        ``"auto"`` uses ``highs_core`` when those bindings import and behave as expected and
        falls back to ``linprog`` otherwise (and for any call whose status is not optimal).
    """

    def __init__(self, graph: BipartiteDuelProblem, backend: str = "auto"):
        if backend not in ("auto", "highs_core", "linprog"):
            raise ValueError(f"backend must be 'auto', 'highs_core' or 'linprog', got {backend!r}")
        self._core = _HighsCore.create() if backend != "linprog" else None
        if backend == "highs_core" and self._core is None:
            raise RuntimeError("SciPy's private HiGHS bindings are unavailable; use backend='linprog'")
        self.backend = "highs_core" if self._core is not None else "linprog"
        self.graph = graph
        self.n_edges = graph.n_edges
        self.n_positions = graph.n_positions
        self.n_candidates = graph.n_candidates
        self._positions = np.asarray(graph.edge_positions)
        self._candidates = np.asarray(graph.edge_candidates)
        same = self._positions[:, None] == self._positions[None, :]
        # (e', e) index pairs of same-position entries: the only ones Q contributes through.
        self._same_from, self._same_to = np.nonzero(same)
        self._zeros = np.zeros(self.n_edges)
        self._feasible_cache: dict[tuple[frozenset[int], frozenset[int]], bool] = {}
        self.n_calls = 0
        self.n_lp_solves = 0

    # -------------------------------------------------------------- polytopes
    def feasible(self, required: Iterable[int] = (), forbidden: Iterable[int] = ()) -> bool:
        """Whether some covering matching contains ``required`` and avoids ``forbidden`` (memoised)."""
        key = (frozenset(int(e) for e in required), frozenset(int(e) for e in forbidden))
        cached = self._feasible_cache.get(key)
        if cached is None:
            cached = self.graph.max_weight_matching(self._zeros, required=sorted(key[0]),
                                                    forbidden=sorted(key[1])) is not None
            if len(self._feasible_cache) > 100_000:
                self._feasible_cache.clear()
            self._feasible_cache[key] = cached
        return cached

    def allowed_edges(self, required: Iterable[int] = (), forbidden: Iterable[int] = ()) -> NDArray[np.bool_]:
        """Mask of the reduced edge set ``E'``: not forbidden and not in conflict with a required edge."""
        allowed = np.ones(self.n_edges, dtype=bool)
        forbidden = list(forbidden)
        if forbidden:
            allowed[forbidden] = False
        for edge in required:
            conflicting = (self._candidates == self._candidates[edge]) | (self._positions == self._positions[edge])
            conflicting[edge] = False
            allowed &= ~conflicting
        return allowed

    # -------------------------------------------------------------- solving
    def solve(self, Q: ArrayLike, A1: Iterable[int] = (), R1: Iterable[int] = (),
              A2: Iterable[int] = (), R2: Iterable[int] = ()) -> OracleSolution:
        """Value and maximiser ``x`` of ``max_{x ∈ 𝒫(A1,R1)} min_{y ∈ 𝒫(A2,R2)} (1/l) xᵀQy``."""
        self.n_calls += 1
        A1, R1, A2, R2 = (list(map(int, s)) for s in (A1, R1, A2, R2))
        if not self.feasible(A1, R1):
            return OracleSolution(-math.inf, None)
        if not self.feasible(A2, R2):
            return OracleSolution(math.inf, None)
        Q = np.asarray(Q, dtype=np.float64)
        m, l, n = self.n_edges, self.n_positions, self.n_candidates
        allowed_x = self.allowed_edges(A1, R1)
        allowed_y = self.allowed_edges(A2, R2)
        y_edges = np.flatnonzero(allowed_y)
        row_of = np.full(m, -1, dtype=np.int64)
        row_of[y_edges] = np.arange(y_edges.size)
        n_rows = y_edges.size + n
        n_vars = m + l + n
        a_ub = np.zeros((n_rows, n_vars))
        # Dual feasibility: u_{s(e)} + v_{c(e)} - (1/l) sum_{e'} Q[e', e] x_{e'} <= 0, e in E'_y.
        keep = allowed_y[self._same_to] & allowed_x[self._same_from]
        source, target = self._same_from[keep], self._same_to[keep]
        a_ub[row_of[target], source] = -Q[source, target] / l
        rows = np.arange(y_edges.size)
        a_ub[rows, m + self._positions[y_edges]] = 1.0
        a_ub[rows, m + l + self._candidates[y_edges]] = 1.0
        # x: every candidate used at most once.
        a_ub[y_edges.size + self._candidates, np.arange(m)] = 1.0
        b_ub = np.zeros(n_rows)
        b_ub[y_edges.size:] = 1.0
        # x: every position filled exactly once.
        a_eq = np.zeros((l, n_vars))
        a_eq[self._positions, np.arange(m)] = 1.0
        b_eq = np.ones(l)
        objective = np.zeros(n_vars)
        objective[m:] = -1.0
        lower = np.concatenate([np.zeros(m), np.full(l, -np.inf), np.full(n, -np.inf)])
        upper = np.concatenate([allowed_x.astype(np.float64), np.full(l, np.inf), np.zeros(n)])
        self.n_lp_solves += 1
        if self._core is not None:
            solved = self._core.solve(objective, a_ub, b_ub, a_eq, b_eq, lower, upper)
            if solved is not None:
                value, x = solved
                return OracleSolution(float(-value), x[:m])
        result = linprog(objective, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq,
                         bounds=np.column_stack([lower, upper]), method="highs")
        if result.status != 0:  # pragma: no cover - both polytopes were checked non-empty
            raise RuntimeError(f"Condorcet oracle LP failed: {result.message}")
        return OracleSolution(float(-result.fun), np.asarray(result.x[:m]))

    def value(self, Q: ArrayLike, A1: Iterable[int] = (), R1: Iterable[int] = (),
              A2: Iterable[int] = (), R2: Iterable[int] = ()) -> float:
        """Only the value of :meth:`solve` (all the CAR algorithms use)."""
        return self.solve(Q, A1, R1, A2, R2).value

    def __call__(self, Q: ArrayLike, A1: Iterable[int] = (), R1: Iterable[int] = (),
                 A2: Iterable[int] = (), R2: Iterable[int] = ()) -> float:
        return self.value(Q, A1, R1, A2, R2)


class _HighsCore:
    """HiGHS through SciPy's private bindings (what ``linprog(method="highs")`` calls internally)."""

    def __init__(self, module: Any):
        self._h = module
        self._highs = module._Highs()
        options = module.HighsOptions()
        options.output_flag = False
        options.log_to_console = False
        self._highs.passOptions(options)

    @classmethod
    def create(cls) -> _HighsCore | None:
        try:
            import scipy.optimize._highspy._core as module  # type: ignore[import-not-found]

            core = cls(module)
            # Self-check on a tiny LP: min -x - y, x + y <= 1.5, 0 <= x, y <= 1  ->  -1.5.
            solved = core.solve(np.array([-1.0, -1.0]), np.array([[1.0, 1.0]]), np.array([1.5]),
                                np.zeros((0, 2)), np.zeros(0), np.zeros(2), np.ones(2))
            if solved is None or abs(solved[0] + 1.5) > 1e-9:
                return None
            return core
        except Exception:  # pragma: no cover - depends on the SciPy version
            return None

    def solve(self, objective: NDArray[np.float64], a_ub: NDArray[np.float64], b_ub: NDArray[np.float64],
              a_eq: NDArray[np.float64], b_eq: NDArray[np.float64], lower: NDArray[np.float64],
              upper: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]] | None:
        """``min objective·x`` s.t. ``a_ub x <= b_ub``, ``a_eq x = b_eq``, bounds; ``None`` unless optimal."""
        h = self._h
        matrix = csc_array(np.vstack([a_ub, a_eq]))
        n_rows, n_columns = matrix.shape
        lp = h.HighsLp()
        lp.num_col_ = n_columns
        lp.num_row_ = n_rows
        lp.a_matrix_.num_col_ = n_columns
        lp.a_matrix_.num_row_ = n_rows
        lp.a_matrix_.format_ = h.MatrixFormat.kColwise
        lp.col_cost_ = objective
        lp.col_lower_ = np.maximum(lower, -h.kHighsInf)
        lp.col_upper_ = np.minimum(upper, h.kHighsInf)
        lp.row_lower_ = np.concatenate([np.full(b_ub.size, -h.kHighsInf), b_eq])
        lp.row_upper_ = np.concatenate([b_ub, b_eq])
        lp.a_matrix_.start_ = matrix.indptr
        lp.a_matrix_.index_ = matrix.indices
        lp.a_matrix_.value_ = matrix.data
        if self._highs.passModel(lp) == h.HighsStatus.kError:
            return None
        if self._highs.run() == h.HighsStatus.kError:
            return None
        if self._highs.getModelStatus() != h.HighsModelStatus.kOptimal:
            return None
        value = float(self._highs.getInfo().objective_function_value)
        return value, np.array(self._highs.getSolution().col_value)


def condorcet_oracle(graph: BipartiteDuelProblem, Q: ArrayLike, A1: Iterable[int] = (), R1: Iterable[int] = (),
                     A2: Iterable[int] = (), R2: Iterable[int] = ()) -> float:
    """One-shot :class:`CondorcetOracle` value (build the class once when calling repeatedly).

    Examples
    --------
    >>> from dueling_gym.problems import five_edge_example
    >>> problem = five_edge_example()
    >>> round(condorcet_oracle(problem, problem.preferences), 9)
    0.5
    """
    return CondorcetOracle(graph).value(Q, A1, R1, A2, R2)


def position_starts(graph: BipartiteDuelProblem) -> NDArray[np.int64]:
    """Start index of each position's block of rows in ``graph.comparable_pairs`` (positions with pairs)."""
    pairs = graph.comparable_pairs
    if pairs.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([[0], np.flatnonzero(pairs[1:, 0] != pairs[:-1, 0]) + 1]).astype(np.int64)


def oracle_drift(graph: BipartiteDuelProblem, lower_ref: ArrayLike, upper_ref: ArrayLike,
                 lower: ArrayLike, upper: ArrayLike, *, starts: NDArray[np.int64] | None = None
                 ) -> NDArray[np.float64] | float:
    """Bound on how much any oracle value can move between two sets of pair bounds.

    For ``Q, Q'`` built by :func:`bound_matrices` (either ``P̄`` or ``P̲``) and any fixed
    ``(A1, R1, A2, R2)``: ``|O(Q) - O(Q')| <= (1/l) sum_j max_{k at position j} |ΔQ_k|``,
    because for ``x``, ``y`` in the matching polytopes ``|xᵀ D y| <= sum_j max_{e,e' ∈ E_j}
    |D_{e e'}|`` (each position's ``x`` and ``y`` mass is 1) and max-min is 1-Lipschitz in the
    payoff.  Entry ``(e, e')`` of ``P̄`` is ``upper_k`` and ``(e', e)`` is ``1 - lower_k`` (and
    symmetrically for ``P̲``), so ``|ΔQ_k| = max(|Δlower_k|, |Δupper_k|)`` for both matrices.

    ``lower_ref``/``upper_ref`` may carry a leading batch axis (one reference per row); the
    result then has that shape.  ``starts`` (:func:`position_starts`) may be passed to save
    recomputing it.
    """
    if graph.n_comparable_pairs == 0:
        return np.zeros(np.shape(lower_ref)[:-1]) if np.ndim(lower_ref) > 1 else 0.0
    if starts is None:
        starts = position_starts(graph)
    change = np.maximum(np.abs(np.asarray(lower_ref) - np.asarray(lower)),
                        np.abs(np.asarray(upper_ref) - np.asarray(upper)))
    per_position = np.maximum.reduceat(change, starts, axis=-1)
    return per_position.sum(axis=-1) / graph.n_positions


# ---------------------------------------------------------------------------------------------
# The paper's Frank-Wolfe oracle (S3 Appendix C.2, Algorithms 6-7)
# ---------------------------------------------------------------------------------------------
def frank_wolfe_paper_cost(graph: BipartiteDuelProblem, epsilon: float) -> dict[str, int]:
    """Iteration counts of Algorithms 6-7 with the printed parameters (spec §4.5, register O1).

    ``T = ceil((4 l K / ε)²)`` outer steps, each needing one min-cost matching (sub-gradient) and
    ``ceil(16 l² / ε'²)`` Frank-Wolfe steps with ``ε' = ε / (2 K sqrt(T))``, each one min-cost
    matching: about ``16384 l⁶ K⁶ / ε⁶`` matchings per oracle call (≈ 2.7·10¹¹ for the 5-edge
    example at ``ε = 1/2``).
    """
    l, K = graph.n_positions, max(1, graph.n_comparable_pairs)
    outer = math.ceil((4 * l * K / epsilon) ** 2)
    projection_accuracy = epsilon / (2 * K * math.sqrt(outer))
    inner = math.ceil(16 * l**2 / projection_accuracy**2)
    return {"outer": outer, "inner": inner, "matchings": outer * (inner + 1)}


def frank_wolfe_condorcet_oracle(graph: BipartiteDuelProblem, Q: ArrayLike, A1: Iterable[int] = (),
                                 R1: Iterable[int] = (), A2: Iterable[int] = (), R2: Iterable[int] = (), *,
                                 epsilon: float = 0.5, max_outer: int | None = 200,
                                 max_inner: int | None = 200) -> float:
    """The paper's approximate oracle: projected sub-gradient ascent with Frank-Wolfe projections.

    S3 Algorithm 6 maximises the concave ``g(x) = min_{y ∈ 𝒫(A2,R2)} (1/l) xᵀQy`` over
    ``𝒫(A1, R1)``: the sub-gradient at ``x`` is ``(1/l) Q y0`` with ``y0`` a min-cost covering
    matching for the costs ``Qᵀx`` (restricted by ``A2, R2``); step ``η = 2 l / (K sqrt(T))``; the
    projection onto ``𝒫(A1, R1)`` is Algorithm 7, Frank-Wolfe on ``||z - p||²`` whose linear step
    is a min-cost matching for the costs ``z - p``, step ``2/(s+1)``, last iterate returned
    (register O1).  Every iterate is feasible, so the *best* ``g(x^(s))`` is returned: always a
    lower bound on the exact value (Lemma 9 bounds the best iterate; register O1).

    **Cost.**  With the printed parameters (``max_outer=None``, ``max_inner=None``) one call
    needs about ``16384 l⁶ K⁶ / ε⁶`` assignment problems (:func:`frank_wolfe_paper_cost`):
    unusable.  The defaults cap both loops at 200, i.e. ≈ 4·10⁴ assignment problems (≈ 1 s),
    and use the step size of the capped horizon; the ``ε`` guarantee of Lemma 9 is then lost
    (the value is still a lower bound).  Use
    :class:`CondorcetOracle` (exact, ~2 ms) in practice.

    Conventions as :class:`CondorcetOracle`: ``-inf`` / ``+inf`` for an empty x / y polytope.
    """
    A1, R1, A2, R2 = (sorted(set(map(int, s))) for s in (A1, R1, A2, R2))
    Q = np.asarray(Q, dtype=np.float64)
    l = graph.n_positions
    K = max(1, graph.n_comparable_pairs)
    start = graph.max_weight_matching(np.zeros(graph.n_edges), required=A1, forbidden=R1)
    if start is None:
        return -math.inf
    if graph.max_weight_matching(np.zeros(graph.n_edges), required=A2, forbidden=R2) is None:
        return math.inf
    paper = frank_wolfe_paper_cost(graph, epsilon)
    outer = paper["outer"] if max_outer is None else min(paper["outer"], int(max_outer))
    inner = paper["inner"] if max_inner is None else min(paper["inner"], int(max_inner))
    # The step size follows the horizon actually run (the printed η = 2l/(K sqrt(T)) with T capped).
    step = 2.0 * l / (K * math.sqrt(outer))

    def indicator(matching: Matching) -> NDArray[np.float64]:
        chi = np.zeros(graph.n_edges)
        chi[list(matching)] = 1.0
        return chi

    def g_and_gradient(x: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        costs = Q.T @ x
        y0 = graph.max_weight_matching(costs, required=A2, forbidden=R2, maximize=False)
        chi_y = indicator(y0)
        return float(x @ Q @ chi_y) / l, (Q @ chi_y) / l

    def project(point: NDArray[np.float64]) -> NDArray[np.float64]:
        z = indicator(start)
        for s in range(1, inner + 1):
            vertex = graph.max_weight_matching(z - point, required=A1, forbidden=R1, maximize=False)
            gamma = 2.0 / (s + 1)
            z = (1.0 - gamma) * z + gamma * indicator(vertex)
        return z

    x = indicator(start)
    best = -math.inf
    for _ in range(outer):
        value, gradient = g_and_gradient(x)
        best = max(best, value)
        x = project(x + step * gradient)
    best = max(best, g_and_gradient(x)[0])
    return best


# ---------------------------------------------------------------------------------------------
# Matching samplers (spec §4.2, register B1')
# ---------------------------------------------------------------------------------------------
class MatchingSampler(ABC):
    """Interface of the sampler ``S(η)`` of S3 (Definition 1): matchings from a law within TV ``η`` of uniform.

    CLUCB-Borda only needs the opponent ``e(M', s(z))`` of a sampled matching ``M'``;
    :meth:`sample_opponent` returns it (implementations may draw it from the same marginal law
    without building ``M'``).  ``eta`` states the sampler's total-variation bias; the agents
    keep the paper's ``ε/4`` margins whatever it is, and S3's analysis needs ``eta <= ε/8``.

    Implementations shipped: :class:`ExactMatchingSampler` (``η = 0``, exact counting) and
    :class:`RejectionMatchingSampler` (``η = 0``, no counting).  No MCMC sampler is shipped: the
    Jerrum-Sinclair-Vigoda chain used by S3 only has a polynomial mixing bound of very high
    degree, so a chain run for a practical number of steps would have no stated ``η``; an
    exact sampler removes the bias term altogether (spec register B1').  A user-supplied
    subclass with a proven ``η`` plugs in through the agents' ``sampler=`` argument.
    """

    #: Total-variation distance between the sampler's law and the uniform law on ``ℳ``.
    eta: float = 0.0

    def __init__(self, graph: BipartiteDuelProblem):
        self.graph = graph

    @abstractmethod
    def sample(self, rng: np.random.Generator) -> Matching:
        """One maximum matching."""

    def sample_opponent(self, position: int, rng: np.random.Generator) -> int:
        """The edge at ``position`` of a sampled matching (S3 Algorithm 1 lines 20-21)."""
        return int(self.sample(rng)[position])


class ExactMatchingSampler(MatchingSampler):
    """Exact uniform sampling (``η = 0``) from exact completion counts (spec §4.2 [resolved]).

    ``method="matching"`` draws a whole matching with
    :meth:`BipartiteDuelProblem.sample_max_matching` (one uniform rank, decoded position by
    position with completion counts).  ``method="marginal"`` (default) draws the opponent at a
    position directly from its exact marginal ``Pr[e(M', j) = e'] = N(e') / |ℳ|`` (``N(e')`` =
    matchings containing ``e'``): the same law for the only quantity the algorithm uses, since
    each round plays one duel with a fresh independent ``M'``; it costs one uniform draw instead
    of an ``l``-step decoding.  Counting is exponential in the worst case (counting perfect
    matchings is #P-hard) and raises :class:`TooManyMatchingsError` on huge instances; use
    :class:`RejectionMatchingSampler` there.
    """

    eta = 0.0

    def __init__(self, graph: BipartiteDuelProblem, method: str = "marginal"):
        super().__init__(graph)
        if method not in ("marginal", "matching"):
            raise ValueError(f"method must be 'marginal' or 'matching', got {method!r}")
        self.method = method
        total = graph.count_max_matchings()
        counts = graph.edge_matching_counts()
        self._groups = [np.array(group, dtype=np.int64) for group in graph.edges_by_position]
        # Exact integer cumulative counts, as floats in [0, 1] for a searchsorted draw.
        self._cumulative = []
        for group in graph.edges_by_position:
            running, cumulative = 0, []
            for edge in group:
                running += counts[edge]
                cumulative.append(running / total)
            cumulative[-1] = 1.0
            self._cumulative.append(np.array(cumulative))

    def sample(self, rng: np.random.Generator) -> Matching:
        return self.graph.sample_max_matching(rng)

    def sample_opponent(self, position: int, rng: np.random.Generator) -> int:
        if self.method == "matching":
            return int(self.graph.sample_max_matching(rng)[position])
        index = int(np.searchsorted(self._cumulative[position], rng.random(), side="right"))
        return int(self._groups[position][min(index, len(self._groups[position]) - 1)])


class RejectionMatchingSampler(MatchingSampler):
    """Exact uniform sampling (``η = 0``) by rejection, without any counting.

    Propose one edge per position independently and uniformly from ``E_j``; accept iff the
    candidates are distinct.  Every maximum matching has the same proposal probability
    ``prod_j 1/|E_j|``, so an accepted proposal is exactly uniform on ``ℳ``.  The expected
    number of proposals is ``prod_j |E_j| / |ℳ|`` -- cheap on dense graphs and when
    positions rarely compete for candidates, exponential in the worst case; ``max_trials``
    bounds a single draw (``RuntimeError`` beyond it).  Chosen over an MCMC chain because it
    is exact with an explicit cost, while a chain needs a mixing-time bound to state ``η``.
    """

    eta = 0.0

    def __init__(self, graph: BipartiteDuelProblem, max_trials: int = 1_000_000):
        super().__init__(graph)
        self.max_trials = int(max_trials)
        self._groups = [np.array(group, dtype=np.int64) for group in graph.edges_by_position]
        self._sizes = np.array([len(group) for group in graph.edges_by_position], dtype=np.int64)
        self._candidates = np.asarray(graph.edge_candidates)
        self._block = 64

    def sample(self, rng: np.random.Generator) -> Matching:
        l = len(self._groups)
        trials = 0
        while trials < self.max_trials:
            picks = (rng.random((self._block, l)) * self._sizes).astype(np.int64)
            for row in picks:
                trials += 1
                edges = [int(self._groups[j][row[j]]) for j in range(l)]
                candidates = self._candidates[edges]
                if np.unique(candidates).size == l:
                    return tuple(edges)
        raise RuntimeError(f"rejection sampler: no matching accepted in {self.max_trials} proposals")


def make_sampler(graph: BipartiteDuelProblem, sampler: str | MatchingSampler = "exact") -> MatchingSampler:
    """``"exact"`` (:class:`ExactMatchingSampler`), ``"exact_matching"`` (whole matchings),
    ``"rejection"`` (:class:`RejectionMatchingSampler`) or ``"auto"`` (exact when the counting
    dynamic programme fits, rejection otherwise); a :class:`MatchingSampler` instance is returned
    as is."""
    if isinstance(sampler, MatchingSampler):
        return sampler
    if sampler == "exact":
        return ExactMatchingSampler(graph)
    if sampler == "exact_matching":
        return ExactMatchingSampler(graph, method="matching")
    if sampler == "rejection":
        return RejectionMatchingSampler(graph)
    if sampler == "auto":
        try:
            return ExactMatchingSampler(graph)
        except TooManyMatchingsError:
            return RejectionMatchingSampler(graph)
    raise ValueError(f"sampler must be 'exact', 'exact_matching', 'rejection', 'auto' or a MatchingSampler, "
                     f"got {sampler!r}")
