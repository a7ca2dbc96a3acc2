"""Reference implementations of CPE-DB pieces (Chen, Du, Huang, Zhao, ICML 2020), for tests only.

* :func:`brute_force_max_min` -- the Condorcet oracle value by enumerating the matchings and
  solving the matrix game with one LP (exponential in the graph; tiny instances only).
* :func:`frank_wolfe_condorcet_oracle` and :func:`frank_wolfe_paper_cost` -- the paper's own
  approximate oracle (Appendix C.2, Algorithms 6-7), capped; the package uses the exact LP.
* :func:`car_cond_reference` -- CAR-Cond (Algorithm 2) as printed: all four oracle values of
  every undecided edge in every round, with none of the agent's LP-skipping.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import linprog

from dueling_gym.agents.cpe import CondorcetOracle, PairStatistics, bound_matrices, log_constant
from dueling_gym.problems import BipartiteDuelProblem


def brute_force_max_min(problem: BipartiteDuelProblem, Q: ArrayLike, A1, R1, A2, R2) -> float:
    """max over mixed strategies on the x-matchings of min over the y-matchings (a matrix game LP)."""
    Q = np.asarray(Q)
    matchings = problem.max_matchings()
    rows = [M for M in matchings if set(A1) <= set(M) and not set(R1) & set(M)]
    columns = [M for M in matchings if set(A2) <= set(M) and not set(R2) & set(M)]
    if not rows:
        return -math.inf
    if not columns:
        return math.inf
    game = np.array([[Q[list(a), list(b)].sum() for b in columns] for a in rows]) / problem.n_positions
    n_rows = len(rows)
    # maximise v s.t. lambda^T game[:, k] >= v for all k, sum lambda = 1, lambda >= 0
    objective = np.r_[np.zeros(n_rows), -1.0]
    a_ub = np.c_[-game.T, np.ones(len(columns))]
    result = linprog(objective, A_ub=a_ub, b_ub=np.zeros(len(columns)),
                     A_eq=np.r_[np.ones(n_rows), 0.0][None, :], b_eq=[1.0],
                     bounds=[(0, None)] * n_rows + [(None, None)], method="highs")
    assert result.status == 0
    return -result.fun


def frank_wolfe_paper_cost(graph: BipartiteDuelProblem, epsilon: float) -> dict[str, int]:
    """Iteration counts of Algorithms 6-7 with the printed parameters.

    ``T = ceil((4 l K / ε)²)`` outer steps, each needing one min-cost matching (sub-gradient) and
    ``ceil(16 l² / ε'²)`` Frank-Wolfe steps with ``ε' = ε / (2 K sqrt(T))``, each one min-cost
    matching: about ``16384 l⁶ K⁶ / ε⁶`` matchings per oracle call.
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

    Algorithm 6 maximises the concave ``g(x) = min_{y ∈ 𝒫(A2,R2)} (1/l) xᵀQy`` over
    ``𝒫(A1, R1)``: the sub-gradient at ``x`` is ``(1/l) Q y0`` with ``y0`` a min-cost covering
    matching for the costs ``Qᵀx``; step ``η = 2 l / (K sqrt(T))``.  The projection is
    Algorithm 7, Frank-Wolfe on ``||z - p||²`` whose linear step is a min-cost matching for the
    costs ``z - p``, step ``2/(s+1)``, last iterate returned.  Every iterate is feasible, so the
    best ``g(x^(s))`` seen is returned: a lower bound on the exact value.  Both loops are capped
    (the printed counts are far out of reach, :func:`frank_wolfe_paper_cost`) and the step size
    follows the capped horizon.  ``-inf`` / ``+inf`` for an empty x / y polytope.
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
    step = 2.0 * l / (K * math.sqrt(outer))

    def indicator(matching) -> NDArray[np.float64]:
        chi = np.zeros(graph.n_edges)
        chi[list(matching)] = 1.0
        return chi

    def g_and_gradient(x: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        y0 = graph.max_weight_matching(Q.T @ x, required=A2, forbidden=R2, maximize=False)
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
    return max(best, g_and_gradient(x)[0])


def car_cond_reference(graph: BipartiteDuelProblem, delta: float, duel: Callable[[int, int], bool],
                       max_duels: int) -> tuple[list[tuple[int, int, bool]], tuple[int, ...] | None, int]:
    """CAR-Cond (Algorithm 2) evaluating all four oracle values of every undecided edge each round.

    ``duel(e, e2)`` returns True iff ``e`` won.  Returns the duels played with their outcomes,
    the answer (``None`` when stopped by ``max_duels`` or stalled) and the number of oracle LPs.
    Epochs, the order of the duels and of the decisions, and the stop are the agent's.
    """
    oracle = CondorcetOracle(graph)
    pairs = graph.comparable_pairs
    stats = PairStatistics(graph)
    constant = log_constant(graph.n_comparable_pairs)
    accepted = np.zeros(graph.n_edges, dtype=bool)
    rejected = np.zeros(graph.n_edges, dtype=bool)
    record: list[tuple[int, int, bool]] = []
    calls, t, q = 0, 0, 1
    while len(record) < max_duels:
        t += 1
        while t > 4 ** q:
            q += 1
        epsilon = 2.0 ** -q
        undecided = ~(accepted | rejected)
        active = np.flatnonzero(undecided[pairs[:, 1]] & undecided[pairs[:, 2]])
        for k in active.tolist():
            e, e2 = int(pairs[k, 1]), int(pairs[k, 2])
            won = bool(duel(e, e2))
            record.append((e, e2, won))
            stats.record(e, e2, won)
        p_upper, p_lower = bound_matrices(graph, *stats.bounds(t, delta, constant))
        A, R = np.flatnonzero(accepted).tolist(), np.flatnonzero(rejected).tolist()
        accept, reject = [], []
        for e in np.flatnonzero(undecided).tolist():
            in_up, in_low = oracle.value(p_upper, A + [e], R, A, R), oracle.value(p_lower, A + [e], R, A, R)
            ex_up, ex_low = oracle.value(p_upper, A, R + [e], A, R), oracle.value(p_lower, A, R + [e], A, R)
            calls += 4
            if in_low > ex_up + epsilon:
                accept.append(e)
                if len(A) + len(accept) == graph.n_positions:
                    break
            elif ex_low > in_up + epsilon:
                reject.append(e)
        accepted[accept] = True
        rejected[reject] = True
        if int(accepted.sum()) >= graph.n_positions:
            return record, tuple(np.flatnonzero(accepted).tolist()), calls
        if not (accept or reject or active.size):
            return record, None, calls
    return record, None, calls
