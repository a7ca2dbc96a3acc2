"""The Condorcet oracle of CAR-Cond as one linear programme, and how far its values can move.

Chen, Du, Huang and Zhao, *Combinatorial Pure Exploration for Dueling Bandits* (ICML 2020),
§4.1: CAR-Cond decides an edge by comparing oracle values
``O(A1, R1, A2, R2, Q) = max_{x ∈ 𝒫(A1, R1)} min_{y ∈ 𝒫(A2, R2)} (1/l) xᵀQy`` with the edge
forced in and out, on the upper and lower bound matrices.  :class:`CondorcetOracle` computes it
exactly with :func:`scipy.optimize.linprog`; :func:`oracle_drift` bounds how much any oracle
value can change when the bounds change, which lets CAR-Cond skip LPs whose outcome cannot
change a decision.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.problems.bipartite import BipartiteDuelProblem

__all__ = ["OracleSolution", "CondorcetOracle", "condorcet_oracle", "position_starts", "oracle_drift"]


@dataclass(frozen=True)
class OracleSolution:
    """Value of ``max_x min_y (1/l) xᵀQy`` and a maximiser ``x`` (``None`` when infeasible)."""

    value: float
    x: NDArray[np.float64] | None


class CondorcetOracle:
    """The Condorcet oracle ``O(A1, R1, A2, R2, Q)`` of Chen et al. (2020), solved exactly as one LP.

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

    Cost: ``m + l + n`` variables, ``|E'_y| + n`` inequality and ``l`` equality rows; the
    solver's fixed overhead (about 1-3 ms per call) dominates on the paper's instance sizes.

    The paper computes the oracle approximately, by projected sub-gradient ascent whose
    projections are Frank-Wolfe runs (Appendix C.2, Algorithms 6-7); with the printed
    parameters one call needs about ``16384 l⁶ K⁶ / ε⁶`` assignment problems (about 2.7·10¹¹ on
    the 5-edge example at ``ε = 1/2``).  The LP gives the exact value (error ``ε = 0``) in
    milliseconds, which is why it is the oracle of the CAR agents.

    Parameters
    ----------
    graph : BipartiteDuelProblem
        Only its graph is used.
    """

    def __init__(self, graph: BipartiteDuelProblem):
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
        from scipy.optimize import linprog  # first use only: SciPy's optimisers load slowly

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
