"""The Condorcet oracle's direct HiGHS route and memo give exactly what linprog gives.

:class:`~dueling_gym.agents.cpe.CondorcetOracle` (Chen, Du, Huang, Zhao, ICML 2020, §4.1) hands
its LP to HiGHS the way ``scipy.optimize.linprog(method="highs")`` does, without linprog's
per-call overhead, and memoises solved LPs.  These tests compare the value and the maximiser
``x`` bit for bit with linprog on random instances, check the fallbacks when SciPy's private
HiGHS binding is missing or disagrees, and check that the compiled CAR-Cond round
(:func:`~dueling_gym.agents.cpe._car_kernels.cond_round`) reproduces
:func:`~dueling_gym.agents.cpe.bounds.preference_bounds` and
:func:`~dueling_gym.agents.cpe.condorcet_oracle.oracle_drift` exactly.
"""

from __future__ import annotations

import importlib
import math
import types

import numpy as np
import pytest

from dueling_gym.agents.cpe import CondorcetOracle, bound_matrices, oracle_drift
from dueling_gym.agents.cpe.bounds import preference_bounds
from dueling_gym.agents.cpe.condorcet_oracle import position_starts
from dueling_gym.problems import five_edge_example, random_bipartite_problem

# The package re-exports a function named like the module: import the module itself.
oracle_module = importlib.import_module("dueling_gym.agents.cpe.condorcet_oracle")
car_kernels = importlib.import_module("dueling_gym.agents.cpe._car_kernels")


def random_bounds(rng: np.random.Generator, n_pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """Pair bounds with many exact 0s and 1s (zero entries of ``P̲``, dropped from the sparse LP)."""
    lower = np.where(rng.random(n_pairs) < 0.3, 0.0, rng.random(n_pairs) * 0.6)
    upper = np.where(rng.random(n_pairs) < 0.3, 1.0, np.minimum(1.0, lower + rng.random(n_pairs) * 0.5))
    return lower, upper


def random_sets(rng: np.random.Generator, n_edges: int) -> tuple[list[int], ...]:
    """``(A1, R1, A2, R2)`` shaped like CAR-Cond's calls: ``A + [e]`` or ``R + [e]`` against ``(A, R)``."""
    edges = rng.permutation(n_edges).tolist()
    A = edges[:int(rng.integers(0, 2))]
    R = edges[len(A):len(A) + int(rng.integers(0, 3))]
    e = edges[-1]
    return (A + [e], R, A, R) if rng.random() < 0.5 else (A, R + [e], A, R)


def instances(seed: int, n_graphs: int):
    """Random graphs, bound matrices and sets: ``(oracle, Q, sets)``."""
    rng = np.random.default_rng(seed)
    for _ in range(n_graphs):
        n_positions = int(rng.integers(2, 5))
        problem = random_bipartite_problem(n_positions, n_positions + int(rng.integers(0, 3)), rng,
                                           edge_probability=float(rng.uniform(0.5, 0.9)))
        oracle = CondorcetOracle(problem)
        for _ in range(6):
            p_upper, p_lower = bound_matrices(problem, *random_bounds(rng, problem.n_comparable_pairs))
            sets = random_sets(rng, problem.n_edges)
            yield oracle, p_upper, sets
            yield oracle, p_lower, sets


@pytest.fixture
def route():
    found = oracle_module._highs_route()
    if found is None:
        pytest.skip("SciPy's private HiGHS binding is not the expected one: the oracle uses linprog")
    return found


def test_direct_route_equals_linprog_bit_for_bit(route):
    compared = with_zeros = 0
    for oracle, Q, sets in instances(seed=11, n_graphs=25):
        pattern = oracle._pattern(tuple(tuple(s) for s in sets))
        if pattern.infinite is not None:
            continue
        entries = -Q[pattern.source, pattern.target] / oracle.n_positions
        fast = oracle._solve_with_highs(route, pattern, entries)
        reference = oracle._solve_with_linprog(pattern, Q)
        assert fast is not None
        assert fast[0] == reference[0]
        assert fast[1].tobytes() == reference[1].tobytes()
        compared += 1
        with_zeros += not entries.all()
    assert compared >= 150 and with_zeros >= 20


def test_solve_equals_the_linprog_formulation(route):
    # The public API, memo included, against linprog on the LP as the oracle formulates it.
    from scipy.optimize import linprog

    checked = 0
    for oracle, Q, sets in instances(seed=5, n_graphs=10):
        for _ in range(2):   # the second call is answered from the memo
            solution = oracle.solve(Q, *sets)
            if not oracle.feasible(*sets[:2]):
                assert solution.value == -math.inf and solution.x is None
                continue
            if not oracle.feasible(*sets[2:]):
                assert solution.value == math.inf and solution.x is None
                continue
            allowed = oracle.allowed_edges(*sets[:2]), oracle.allowed_edges(*sets[2:])
            c, a_ub, b_ub, a_eq, b_eq, bounds = oracle._dense_lp(Q, *allowed)
            result = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
            assert solution.value == float(-result.fun) == oracle.value(Q, *sets)
            assert solution.x.tobytes() == result.x[:oracle.n_edges].tobytes()
            checked += 1
    assert checked >= 60
    assert oracle.n_reused > 0


def test_memo_returns_copies_and_counts():
    problem = five_edge_example()
    oracle = CondorcetOracle(problem)
    first = oracle.solve(problem.preferences, [1])
    first.x[:] = -1.0                                   # the caller's copy, not the memo's
    second = oracle.solve(problem.preferences, [1])
    assert second.value == first.value and np.all(second.x >= 0.0)
    assert (oracle.n_calls, oracle.n_lp_solves, oracle.n_reused) == (2, 1, 1)
    oracle.clear_memo()
    assert oracle.value(problem.preferences, [1]) == first.value and oracle.n_lp_solves == 2


def test_linprog_fallback_gives_the_same_answers(monkeypatch, route):
    cases = list(instances(seed=3, n_graphs=4))
    fast = [oracle.solve(Q, *sets) for oracle, Q, sets in cases]
    monkeypatch.setattr(oracle_module, "_ROUTE", False)
    for (oracle, Q, sets), expected in zip(cases, fast):
        oracle.clear_memo()
        slow = oracle.solve(Q, *sets)
        assert slow.value == expected.value
        assert (slow.x is None and expected.x is None) or slow.x.tobytes() == expected.x.tobytes()
    # Patterns built without the route solve through linprog too.
    problem = five_edge_example()
    assert CondorcetOracle(problem).value(problem.preferences) == pytest.approx(0.5)


def test_route_is_refused_when_the_private_api_differs(monkeypatch):
    import scipy.optimize._highspy as highspy

    monkeypatch.setattr(oracle_module, "_ROUTE", None)
    monkeypatch.setattr(highspy, "_core", types.SimpleNamespace())        # binding without its classes
    assert oracle_module._highs_route() is None
    monkeypatch.undo()
    monkeypatch.setattr(oracle_module, "_ROUTE", None)
    monkeypatch.setattr(oracle_module, "_LINPROG_HIGHS_SIGNATURE", (("lp", None),))   # other linprog options
    assert oracle_module._highs_route() is None
    problem = five_edge_example()
    assert CondorcetOracle(problem).value(problem.preferences) == pytest.approx(0.5)


def test_route_that_disagrees_with_linprog_is_dropped(monkeypatch):
    monkeypatch.setattr(oracle_module, "_ROUTE", None)
    route = oracle_module._highs_route()
    if route is None:
        pytest.skip("SciPy's private HiGHS binding is not the expected one: the oracle uses linprog")
    solve = route.solve

    def off_by_a_bit(lp):
        solved = solve(lp)
        return None if solved is None else (np.nextafter(solved[0], 1.0), solved[1], solved[2])

    monkeypatch.setattr(route, "solve", off_by_a_bit)
    problem = five_edge_example()
    oracle = CondorcetOracle(problem)
    value = oracle.value(problem.preferences)
    assert value == oracle._solve_with_linprog(oracle._pattern(((), (), (), ())), problem.preferences)[0]
    assert oracle_module._ROUTE is False
    assert oracle.value(problem.preferences, [1]) == CondorcetOracle(problem).value(problem.preferences, [1])


def test_the_drift_sum_adds_in_numpys_order():
    from dueling_gym.agents.cpe._assignment import numpy_sum

    rng = np.random.default_rng(2)
    for n in [*range(1, 40), 127, 128, 129, 136, 255, 256, 300, 1000, 4099]:
        for _ in range(5):
            values = rng.random(n) * rng.choice([1e-3, 0.1, 1.0], size=n)
            assert numpy_sum(values) == values.reshape(1, -1).sum(axis=-1)[0]


@pytest.mark.parametrize("n_positions", [2, 3, 9])
def test_compiled_cond_round_matches_bounds_and_drift(n_positions):
    # cond_round must reproduce preference_bounds and the skipping test on oracle_drift exactly.
    rng = np.random.default_rng(n_positions)
    problem = random_bipartite_problem(n_positions, n_positions + 1, rng, edge_probability=0.8)
    m, K = problem.n_edges, problem.n_comparable_pairs
    starts = position_starts(problem)
    skipped = needed = 0
    for t in (1, 7, 300, 5000):
        counts = rng.integers(0, 40, K) * (t // 7 + 1)
        wins = np.minimum(counts, rng.integers(0, 40, K) * (t // 7 + 1))
        half_level = 0.5 * math.log(4.0 * K * float(t) ** 3 / 0.05)
        expected_lower, expected_upper = preference_bounds(counts, wins, t, 0.05, K)
        edges = np.flatnonzero(rng.random(m) < 0.8)
        cache_valid = rng.random(m) < 0.8
        # References near the new bounds, and values near the decision thresholds, so that both
        # outcomes of the skipping test occur.
        noise = rng.normal(0.0, 1e-3, (2, m, K)) * (rng.random((m, 1)) < 0.7)
        ref_lower, ref_upper = expected_lower + noise[0], expected_upper + noise[1]
        values = rng.normal(0.0, 0.02, (m, 4))
        lower, upper, needs = np.zeros(K), np.zeros(K), np.zeros(m, dtype=bool)
        epsilon = 2.0 ** -5
        n_needed = car_kernels.cond_round(counts, wins, half_level, edges, cache_valid, ref_lower, ref_upper, values,
                                          starts, n_positions, epsilon, 1e-7, lower, upper, needs,
                                          np.zeros(max(1, starts.size)))
        assert lower.tobytes() == expected_lower.tobytes() and upper.tobytes() == expected_upper.tobytes()
        drift = np.asarray(oracle_drift(problem, ref_lower[edges], ref_upper[edges], lower, upper, starts=starts))
        expected = []
        for i, e in enumerate(edges.tolist()):
            in_up, in_low, ex_up, ex_low = values[e]
            slack = 2.0 * drift[i] + 1e-7
            skip = cache_valid[e] and in_low - ex_up + slack <= epsilon and ex_low - in_up + slack <= epsilon
            expected.append(not skip)
        assert needs[:edges.size].tolist() == expected and n_needed == sum(expected)
        skipped += len(expected) - sum(expected)
        needed += sum(expected)
    assert skipped > 0 and needed > 0
