"""The Condorcet oracle of CAR-Cond as one linear programme, and how far its values can move.

Chen, Du, Huang and Zhao, *Combinatorial Pure Exploration for Dueling Bandits* (ICML 2020),
§4.1: CAR-Cond decides an edge by comparing oracle values
``O(A1, R1, A2, R2, Q) = max_{x ∈ 𝒫(A1, R1)} min_{y ∈ 𝒫(A2, R2)} (1/l) xᵀQy`` with the edge
forced in and out, on the upper and lower bound matrices.  :class:`CondorcetOracle` computes it
exactly as the LP :func:`scipy.optimize.linprog` (``method="highs"``) would solve, bit for bit,
but hands it to HiGHS directly (linprog's own Python overhead was most of CAR's run time);
:func:`oracle_drift` bounds how much any oracle value can change when the bounds change, which
lets CAR-Cond skip LPs whose outcome cannot change a decision.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.problems.bipartite import BipartiteDuelProblem

__all__ = ["OracleSolution", "CondorcetOracle", "condorcet_oracle", "position_starts", "oracle_drift"]


@dataclass(frozen=True)
class OracleSolution:
    """Value of ``max_x min_y (1/l) xᵀQy`` and a maximiser ``x`` (``None`` when infeasible)."""

    value: float
    x: NDArray[np.float64] | None


#: ``scipy.optimize._linprog_highs._linprog_highs``'s parameters and defaults as :class:`_HighsRoute`
#: reproduces them (SciPy 1.17); any other signature sends every LP through linprog instead.
_LINPROG_HIGHS_SIGNATURE = (
    ("lp", inspect.Parameter.empty), ("solver", inspect.Parameter.empty), ("time_limit", None),
    ("presolve", True), ("disp", False), ("maxiter", None), ("dual_feasibility_tolerance", None),
    ("primal_feasibility_tolerance", None), ("ipm_optimality_tolerance", None),
    ("simplex_dual_edge_weight_strategy", None), ("mip_rel_gap", None), ("mip_max_nodes", None),
    ("unknown_options", inspect.Parameter.empty),
)
#: ``scipy.optimize._highspy._highs_wrapper._highs_wrapper``'s parameters (SciPy 1.17).
_HIGHS_WRAPPER_PARAMETERS = ("c", "indptr", "indices", "data", "lhs", "rhs", "lb", "ub", "integrality", "options")
#: Feasibility tolerance of linprog's final check (``_check_result``: ``sqrt(1e-9) * 10``).
_CHECK_TOLERANCE = math.sqrt(1e-9) * 10
#: Memoised LP solutions, and LP structures, kept per oracle before that cache is emptied.
_MEMO_SIZE = 50_000
_PATTERN_CACHE_SIZE = 10_000


class _HighsRoute:
    """HiGHS called as ``linprog(c, A_ub, b_ub, A_eq, b_eq, bounds, method="highs")`` calls it.

    SciPy 1.17's ``linprog`` hands the problem unchanged to ``_linprog_highs``, which builds
    ``csc_array(vstack(A_ub, A_eq))`` (explicit zeros dropped, rows ascending within a column),
    row bounds ``(-inf, b_ub)`` and ``(b_eq, b_eq)``, and an options dict whose non-``None``
    entries ``_highs_wrapper`` copies onto a ``HighsOptions`` (those of :meth:`__init__`); it then
    solves on a fresh ``Highs`` object.  Those HiGHS calls take about a quarter of linprog's time
    on the oracle's small LPs; the rest is per-call Python (input checks, option validation, the
    sparse conversion), which this route skips by passing prebuilt options and arrays.  A fresh
    ``Highs`` object per solve keeps each solve independent of the previous ones, as in linprog.

    Raises ``ImportError``, ``AttributeError`` or ``TypeError`` when SciPy's private HiGHS
    binding is missing or differs from what this mirrors (the caller then uses linprog).
    """

    def __init__(self) -> None:
        from scipy.optimize import _linprog_highs
        from scipy.optimize._highspy import _core, _highs_wrapper

        parameters = inspect.signature(_linprog_highs._linprog_highs).parameters.values()
        if tuple((p.name, p.default) for p in parameters) != _LINPROG_HIGHS_SIGNATURE:
            raise TypeError("scipy.optimize._linprog_highs._linprog_highs has an unexpected signature")
        if tuple(inspect.signature(_highs_wrapper._highs_wrapper).parameters) != _HIGHS_WRAPPER_PARAMETERS:
            raise TypeError("scipy.optimize._highspy._highs_wrapper._highs_wrapper has an unexpected signature")
        self._core = _core
        options = _core.HighsOptions()
        # The non-None options of _linprog_highs with its defaults, in _highs_wrapper's order.
        options.presolve = "on"
        options.highs_debug_level = _core.HighsDebugLevel.kHighsDebugLevelNone
        options.log_to_console = False
        options.output_flag = False
        options.simplex_strategy = _core.simplex_constants.SimplexStrategy.kSimplexStrategyDual
        self._options = options
        self._error = _core.HighsStatus.kError
        self._optimal = _core.HighsModelStatus.kOptimal
        self.infinity = float(_core.kHighsInf)   # _linprog_highs's _replace_inf uses it for ±inf
        self.colwise = _core.MatrixFormat.kColwise
        self.new_lp = _core.HighsLp
        self.verified = False
        for name in ("passOptions", "passModel", "run", "getModelStatus", "getObjectiveValue", "getSolution"):
            getattr(_core._Highs, name)

    def bounds(self, values: NDArray[np.float64]) -> list[float]:
        """Bounds for HiGHS: infinite ones become ``±kHighsInf``, as ``_linprog_highs`` passes them."""
        values = np.array(values, dtype=np.float64)
        infinite = np.isinf(values)
        values[infinite] = np.sign(values[infinite]) * self.infinity
        return values.tolist()

    def solve(self, lp: Any) -> tuple[float, NDArray[np.float64], NDArray[np.float64]] | None:
        """``(objective, column values, row activities)`` of an optimal solve, else ``None``."""
        highs = self._core._Highs()
        if highs.passOptions(self._options) == self._error or highs.passModel(lp) == self._error \
                or highs.run() == self._error or highs.getModelStatus() != self._optimal:
            return None
        solution = highs.getSolution()
        # getObjectiveValue() is HighsInfo.objective_function_value, without copying the info.
        return highs.getObjectiveValue(), np.array(solution.col_value), np.array(solution.row_value)


#: The direct HiGHS route: ``None`` until first needed, ``False`` when unavailable.
_ROUTE: _HighsRoute | None | bool = None


def _highs_route() -> _HighsRoute | None:
    """The direct HiGHS route, or ``None`` when SciPy's private binding is not the expected one."""
    global _ROUTE
    if _ROUTE is None:
        try:
            _ROUTE = _HighsRoute()
        except (ImportError, AttributeError, TypeError):
            _ROUTE = False
    return _ROUTE or None


def _disable_highs_route() -> None:
    """Send every later LP through linprog (the direct route disagreed with it)."""
    global _ROUTE
    _ROUTE = False


class _LPPattern:
    """The oracle LP of one ``(A1, R1, A2, R2)`` with the payoff left open.

    Holds the constraint matrix in linprog's CSC order with the slots of the ``Q`` entries
    (``value[q_slots] = -Q[source, target] / l``), the bounds, and a ``HighsLp`` with everything
    but the matrix filled in.  ``infinite`` is ``∓inf`` when a polytope is empty (no LP then).
    """

    __slots__ = ("infinite", "allowed", "masks", "source", "target", "q_slots", "start", "index", "value",
                 "lp", "full_structure", "lower", "upper", "z_low", "z_high", "rhs", "n_ub")

    def __init__(self, infinite: float | None = None):
        self.infinite = infinite


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

    solved by HiGHS exactly as :func:`scipy.optimize.linprog` with ``method="highs"`` solves it
    (same matrix, bounds and options; bit-identical value and ``x``), through SciPy's HiGHS
    binding directly when its private API is as expected and through linprog otherwise.  Only
    same-position entries of ``Q`` are read (incomparable entries are 0 by convention).
    Conventions: an empty ``𝒫(ℳ, A1, R1)`` gives ``-inf``; otherwise an empty ``𝒫(ℳ, A2, R2)``
    gives ``+inf``; both emptiness checks are one assignment problem each (the library's MWMC).

    Cost: ``m + l + n`` variables, ``|E'_y| + n`` inequality and ``l`` equality rows; HiGHS's
    fixed cost per solve (about 0.4-0.6 ms, against 2-3 ms per call through linprog)
    dominates on the paper's instance sizes.  The LP structure of each ``(A1, R1, A2, R2)`` is
    built once, and solutions are memoised on the LP itself (the allowed edge sets and the
    ``Q`` entries it reads): an identical LP gets the identical answer without a solve.

    The paper computes the oracle approximately, by projected sub-gradient ascent whose
    projections are Frank-Wolfe runs (Appendix C.2, Algorithms 6-7); with the printed
    parameters one call needs about ``16384 l⁶ K⁶ / ε⁶`` assignment problems (about 2.7·10¹¹ on
    the 5-edge example at ``ε = 1/2``).  The LP gives the exact value (error ``ε = 0``) in
    milliseconds, which is why it is the oracle of the CAR agents.

    Parameters
    ----------
    graph : BipartiteDuelProblem
        Only its graph is used.

    Attributes
    ----------
    n_calls : int
        Calls of :meth:`solve` (and :meth:`value`).
    n_lp_solves : int
        LPs actually solved.
    n_reused : int
        Calls answered from the memo of solved LPs.
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
        self._patterns: dict[tuple[tuple[int, ...], ...], _LPPattern] = {}
        self._memo: dict[tuple[bytes, bytes], tuple[float, NDArray[np.float64]]] = {}
        self.n_calls = 0
        self.n_lp_solves = 0
        self.n_reused = 0

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

    # -------------------------------------------------------------- the LP
    def _dense_lp(self, Q: NDArray[np.float64], allowed_x: NDArray[np.bool_], allowed_y: NDArray[np.bool_]
                  ) -> tuple[NDArray[np.float64], ...]:
        """``(c, A_ub, b_ub, A_eq, b_eq, bounds)`` of the oracle LP (minimise ``c·z``), as linprog takes it."""
        m, l, n = self.n_edges, self.n_positions, self.n_candidates
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
        return objective, a_ub, b_ub, a_eq, b_eq, np.column_stack([lower, upper])

    def _pattern(self, key: tuple[tuple[int, ...], ...]) -> _LPPattern:
        """The :class:`_LPPattern` of ``key = (A1, R1, A2, R2)`` (built on first use)."""
        pattern = self._patterns.get(key)
        if pattern is not None:
            return pattern
        A1, R1, A2, R2 = key
        if not self.feasible(A1, R1):
            pattern = _LPPattern(-math.inf)
        elif not self.feasible(A2, R2):
            pattern = _LPPattern(math.inf)
        else:
            pattern = self._build_pattern(self.allowed_edges(A1, R1), self.allowed_edges(A2, R2))
        if len(self._patterns) >= _PATTERN_CACHE_SIZE:
            self._patterns.clear()
        self._patterns[key] = pattern
        return pattern

    def _build_pattern(self, allowed_x: NDArray[np.bool_], allowed_y: NDArray[np.bool_]) -> _LPPattern:
        """The :class:`_LPPattern` of the LP over ``x`` on ``E'_x`` and dual rows on ``E'_y``."""
        pattern = _LPPattern()
        pattern.allowed = (allowed_x, allowed_y)
        pattern.masks = allowed_x.tobytes() + allowed_y.tobytes()
        m = self.n_edges
        keep = allowed_y[self._same_to] & allowed_x[self._same_from]
        source, target = self._same_from[keep], self._same_to[keep]
        # The LP with every Q entry nonzero, and where each lands: linprog's CSC order is
        # column-major with ascending rows (csc_array of the stacked dense matrix).
        objective, a_ub, b_ub, a_eq, b_eq, bounds = self._dense_lp(np.ones((m, m)), allowed_x, allowed_y)
        slots = np.full((a_ub.shape[0] + a_eq.shape[0], a_ub.shape[1]), -1, dtype=np.int64)
        row_of = np.cumsum(allowed_y) - 1
        slots[row_of[target], source] = np.arange(source.size)
        matrix = np.vstack((a_ub, a_eq))
        columns, rows = np.nonzero(matrix.T)
        slot = slots.T[columns, rows]
        q_slots = np.flatnonzero(slot >= 0)
        pattern.q_slots = q_slots
        pattern.source, pattern.target = source[slot[q_slots]], target[slot[q_slots]]
        pattern.start = np.concatenate([[0], np.cumsum(np.bincount(columns, minlength=matrix.shape[1]))])
        pattern.index = rows
        pattern.value = matrix.T[columns, rows]
        pattern.n_ub = b_ub.size
        pattern.lower, pattern.upper = bounds[:, 0].copy(), bounds[:, 1].copy()
        pattern.z_low, pattern.z_high = pattern.lower - _CHECK_TOLERANCE, pattern.upper + _CHECK_TOLERANCE
        pattern.rhs = np.concatenate([b_ub, b_eq])
        pattern.lp = None
        route = _highs_route()
        if route is not None:
            lp = route.new_lp()
            lp.num_col_ = lp.a_matrix_.num_col_ = matrix.shape[1]
            lp.num_row_ = lp.a_matrix_.num_row_ = matrix.shape[0]
            lp.a_matrix_.format_ = route.colwise
            lp.col_cost_ = objective.tolist()
            lp.col_lower_ = route.bounds(pattern.lower)
            lp.col_upper_ = route.bounds(pattern.upper)
            lp.row_lower_ = route.bounds(np.concatenate([np.full(b_ub.size, -np.inf), b_eq]))
            lp.row_upper_ = route.bounds(pattern.rhs)
            pattern.lp = lp
            pattern.full_structure = False   # the matrix is set by each solve
        return pattern

    # -------------------------------------------------------------- solving
    def clear_memo(self) -> None:
        """Forget the memoised LP solutions (the LP structures and feasibility checks stay)."""
        self._memo.clear()

    def _solve_pattern(self, pattern: _LPPattern, Q: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        """Value and full solution vector of the pattern's LP for payoff ``Q`` (memoised)."""
        entries = -Q[pattern.source, pattern.target] / self.n_positions
        memo_key = (pattern.masks, entries.tobytes())
        solved = self._memo.get(memo_key)
        if solved is not None:
            self.n_reused += 1
            return solved
        self.n_lp_solves += 1
        route = _highs_route()
        use_route = route is not None and pattern.lp is not None
        solved = self._solve_with_highs(route, pattern, entries) if use_route else None
        if solved is None:
            solved = self._solve_with_linprog(pattern, Q)
        elif not route.verified:  # type: ignore[union-attr]
            # First LP of the process on the direct route: check it against linprog, bit for bit.
            reference = self._solve_with_linprog(pattern, Q)
            route.verified = True  # type: ignore[union-attr]
            if reference[0] != solved[0] or not np.array_equal(reference[1], solved[1]):
                _disable_highs_route()
                solved = reference
        if len(self._memo) >= _MEMO_SIZE:
            self._memo.clear()
        self._memo[memo_key] = solved
        return solved

    def _solve_with_highs(self, route: _HighsRoute, pattern: _LPPattern, entries: NDArray[np.float64]
                          ) -> tuple[float, NDArray[np.float64]] | None:
        """The direct route; ``None`` where linprog would not report success (linprog then decides)."""
        value = pattern.value.copy()
        value[pattern.q_slots] = entries
        matrix = pattern.lp.a_matrix_
        if entries.all():
            if not pattern.full_structure:
                matrix.start_, matrix.index_ = pattern.start.tolist(), pattern.index.tolist()
                pattern.full_structure = True
        else:   # csc_array drops explicit zeros: so must we
            nonzero = value != 0.0
            removed = np.concatenate([[0], np.cumsum(~nonzero)])
            matrix.start_ = (pattern.start - removed[pattern.start]).tolist()
            matrix.index_ = pattern.index[nonzero].tolist()
            value = value[nonzero]
            pattern.full_structure = False
        matrix.value_ = value.tolist()
        solved = route.solve(pattern.lp)
        if solved is None:
            return None
        fun, z, activity = solved
        # linprog's final check (_check_result): NaNs, or bounds, inequalities or equalities violated
        # beyond its tolerance, make the solve a failure.  (Every comparison with a NaN is False.)
        residual = pattern.rhs - activity
        n_ub, tol = pattern.n_ub, _CHECK_TOLERANCE
        if (math.isnan(fun) or not ((z >= pattern.z_low) & (z <= pattern.z_high)).all()
                or not (residual[:n_ub] >= -tol).all() or not (np.abs(residual[n_ub:]) <= tol).all()):
            return None
        return float(-fun), z

    def _solve_with_linprog(self, pattern: _LPPattern, Q: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        """The reference route: the dense LP through :func:`scipy.optimize.linprog`."""
        from scipy.optimize import linprog  # first use only: SciPy's optimisers load slowly

        objective, a_ub, b_ub, a_eq, b_eq, bounds = self._dense_lp(Q, *pattern.allowed)
        result = linprog(objective, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
        if result.status != 0:  # pragma: no cover - both polytopes were checked non-empty
            raise RuntimeError(f"Condorcet oracle LP failed: {result.message}")
        return float(-result.fun), np.asarray(result.x)

    def _solve_key(self, Q: ArrayLike, A1: Iterable[int], R1: Iterable[int], A2: Iterable[int], R2: Iterable[int]
                   ) -> tuple[float, NDArray[np.float64] | None]:
        self.n_calls += 1
        pattern = self._pattern(tuple(tuple(map(int, s)) for s in (A1, R1, A2, R2)))
        if pattern.infinite is not None:
            return pattern.infinite, None
        return self._solve_pattern(pattern, np.asarray(Q, dtype=np.float64))

    def solve(self, Q: ArrayLike, A1: Iterable[int] = (), R1: Iterable[int] = (),
              A2: Iterable[int] = (), R2: Iterable[int] = ()) -> OracleSolution:
        """Value and maximiser ``x`` of ``max_{x ∈ 𝒫(A1,R1)} min_{y ∈ 𝒫(A2,R2)} (1/l) xᵀQy``."""
        value, z = self._solve_key(Q, A1, R1, A2, R2)
        # A copy: the memo keeps its own solution vector.
        return OracleSolution(value, None if z is None else z[:self.n_edges].copy())

    def value(self, Q: ArrayLike, A1: Iterable[int] = (), R1: Iterable[int] = (),
              A2: Iterable[int] = (), R2: Iterable[int] = ()) -> float:
        """Only the value of :meth:`solve` (all the CAR algorithms use)."""
        return self._solve_key(Q, A1, R1, A2, R2)[0]

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

    For ``Q, Q'`` built by :func:`~dueling_gym.agents.cpe.bounds.bound_matrices` (either ``P̄`` or ``P̲``) and any fixed
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
