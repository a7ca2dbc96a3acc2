"""BipartiteDuelProblem (CPE-DB, Chen, Du, Huang, Zhao, ICML 2020): oracle numbers, brute force, errors."""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import pytest
from scipy.stats import chisquare

from dueling_gym.problems import (
    BIPARTITE_PROBLEMS,
    BipartiteDuelProblem,
    BipartiteProblemSampler,
    TooManyMatchingsError,
    five_edge_example,
    load_bipartite_problem,
    max_weight_matching,
    random_bipartite_graph,
    random_bipartite_problem,
)
from dueling_gym.problems.bipartite.enumeration import uniform_below


def _edge_set(label: str) -> tuple[int, ...]:
    """``"{e1,e5}"`` -> ``(0, 4)``."""
    return tuple(int(part.strip()[1:]) - 1 for part in label.strip("{}").split(","))


# --------------------------------------------------------------------------- brute-force references
def brute_matchings(problem: BipartiteDuelProblem) -> list[tuple[int, ...]]:
    """Every covering matching, from the product of the positions' edge lists (independent of the DP)."""
    out = []
    for choice in itertools.product(*problem.edges_by_position):
        candidates = [int(problem.edges[e, 0]) for e in choice]
        if len(set(candidates)) == len(candidates):
            out.append(tuple(choice))
    return out


def brute_f(problem, first, second) -> float:
    return sum(problem.preferences[a, b] for a, b in zip(first, second)) / problem.n_positions


def brute_weight(weights, matchings, required=(), forbidden=(), maximize=True):
    admissible = [m for m in matchings if set(required) <= set(m) and not set(forbidden) & set(m)]
    if not admissible:
        return None
    values = [sum(weights[e] for e in m) for m in admissible]
    return max(values) if maximize else min(values)


def random_instances(count: int, seed: int, **options):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n_positions = int(rng.integers(1, 5))
        n_candidates = int(rng.integers(n_positions, n_positions + 3))
        yield random_bipartite_problem(n_positions, n_candidates, rng,
                                       edge_probability=float(rng.uniform(0.3, 0.9)), **options)


# --------------------------------------------------------------------------- the paper's example (Chen et al. 2020, Figures 1-4)
def test_five_edge_graph_and_pairs(example, cpe):
    labels = [example.edge_label(e) for e in range(example.n_edges)]
    assert labels == [f"{name}={cpe['edges'][name]}" for name in cpe["edges"]]
    assert example.n_comparable_pairs == cpe["num_comparable_pairs_K"] == 4
    assert example.comparable_pairs.tolist() == [[0, 0, 1], [0, 0, 2], [0, 1, 2], [1, 3, 4]]
    assert example.edges_by_position == ((0, 1, 2), (3, 4))
    assert "Chen" in example.source and "ICML 2020" in example.source


def test_five_edge_max_matchings(example, cpe):
    expected = [_edge_set(label) for label in cpe["maximum_matchings"]]
    assert list(example.max_matchings()) == expected
    assert [example.format_matching(m) for m in example.max_matchings()] == cpe["maximum_matchings"]
    assert example.count_max_matchings() == 5
    assert example.edge_matching_counts() == (2, 2, 1, 2, 3)


def test_five_edge_f_table(example, cpe):
    expected = np.array(cpe["f_matrix_rows_beat_cols"])
    np.testing.assert_allclose(example.matching_preference_table(), expected, atol=1e-12)
    matchings = example.max_matchings()
    for a, first in enumerate(matchings):
        for b, second in enumerate(matchings):
            assert example.matching_preference(first, second) == pytest.approx(expected[a, b], abs=1e-12)
            assert example.matching_preference(first, second) + example.matching_preference(second, first) \
                == pytest.approx(1.0, abs=1e-12)


def test_five_edge_borda_facts(example, cpe):
    scores = dict(zip(cpe["maximum_matchings"], example.borda_scores()))
    for label, value in cpe["borda_scores"].items():
        assert scores[label] == pytest.approx(value, abs=1e-12)
    winner = example.borda_winner()
    assert example.format_matching(winner) == cpe["borda_winner"] == "{e1,e5}"
    assert example.borda_score(winner) == pytest.approx(cpe["borda_winner_score"], abs=1e-12)
    assert example.borda_score(winner) == pytest.approx(0.64, abs=1e-12)
    expected_w = [cpe["edge_rewards_w"][f"e{e + 1}"] for e in range(5)]
    np.testing.assert_allclose(example.edge_rewards(), expected_w, atol=1e-12)
    # Reduction identity w(M) = l B(M) (Chen et al. 2020, eq. (4)).
    for matching, score in zip(example.max_matchings(), example.borda_scores()):
        assert example.matching_reward(matching) == pytest.approx(example.n_positions * score, abs=1e-12)
    expected_gaps = [cpe["borda_gaps"][f"e{e + 1}"] for e in range(5)]
    np.testing.assert_allclose(example.borda_gaps(), expected_gaps, atol=1e-12)
    assert example.borda_hardness() == pytest.approx(cpe["borda_hardness_HB"], abs=1e-4)
    assert example.borda_hardness() == pytest.approx(819.1111, abs=1e-4)


def test_five_edge_condorcet_facts(example, cpe):
    winner = example.condorcet_winner()
    assert example.format_matching(winner) == cpe["condorcet_winner"] == "{e2,e5}"
    assert example.borda_score(winner) == pytest.approx(cpe["condorcet_winner_borda_score"], abs=1e-12)
    assert example.borda_score(winner) == pytest.approx(0.615, abs=1e-12)
    assert example.is_condorcet_winner(winner)
    assert not any(example.is_condorcet_winner(m) for m in example.max_matchings() if m != winner)
    # The strongest challenger of {e2,e5} is {e1,e5} with f = 0.525 (row 4 of the f table).
    value, rival = example.condorcet_challenge(winner)
    assert value == pytest.approx(0.525, abs=1e-12) and rival == (0, 4)


def test_five_edge_score(example):
    condorcet = example.score([4, 1])  # any order is accepted
    assert condorcet["valid"] and condorcet["is_condorcet_winner"] and not condorcet["is_borda_winner"]
    assert condorcet["borda_gap"] == pytest.approx(0.64 - 0.615, abs=1e-12)
    borda = example.score((0, 4))
    assert borda["is_borda_winner"] and not borda["is_condorcet_winner"] and borda["borda_gap"] == 0.0
    assert borda["borda_score"] == pytest.approx(0.64)
    for invalid in [(2, 3), (0,), (0, 1), (0, 3, 4), (0, 9), (-1, 4)]:
        result = example.score(invalid)
        assert result == {"valid": False, "is_borda_winner": False, "is_condorcet_winner": False,
                          "borda_score": None, "borda_gap": None}
    with pytest.raises(TypeError):
        example.score("e1e5")
    with pytest.raises(TypeError):
        example.score([0.0, 4.0])


def test_five_edge_position_copeland_regret(example):
    # s1: e2 beats e1 and e3, e1 beats e3 -> losses (1, 0, 2); s2: e5 beats e4 -> losses (1, 0).
    assert example.edge_copeland_losses.tolist() == [1, 0, 2, 1, 0]
    np.testing.assert_allclose(example.duel_copeland_regrets, [0.25, 0.75, 0.5, 0.5])
    assert example.copeland_regret(1, 1) == 0.0
    assert example.copeland_regret(2, 2) == pytest.approx(1.0)
    assert example.copeland_regret(2, 0) == example.copeland_regret(0, 2) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="different positions"):
        example.copeland_regret(0, 3)
    with pytest.raises(ValueError, match="out of range"):
        example.copeland_regret(0, 5)


def test_registry_and_from_position_preferences(example):
    assert load_bipartite_problem("five_edge") == example
    assert set(BIPARTITE_PROBLEMS) == {"five_edge"}
    with pytest.raises(ValueError, match="unknown bipartite problem"):
        load_bipartite_problem("six_edge")
    rebuilt = BipartiteDuelProblem.from_position_preferences(
        4,
        [([2, 0, 1], [[0.5, 0.0, 0.45], [1.0, 0.5, 0.45], [0.55, 0.55, 0.5]]),  # candidates listed out of order
         ([3, 2], [[0.5, 1.0], [0.0, 0.5]])],
    )
    assert rebuilt == example


# --------------------------------------------------------------------------- exact counting, enumeration, sampling
def test_counting_and_enumeration_match_brute_force():
    for problem in random_instances(25, seed=1):
        expected = brute_matchings(problem)
        assert problem.count_max_matchings() == len(problem.max_matchings()) == len(expected)
        assert list(problem.max_matchings()) == expected  # lexicographic (paper) order
        for rank, matching in enumerate(expected):
            assert problem.max_matching_at(rank) == matching
        counts = [sum(e in m for m in expected) for e in range(problem.n_edges)]
        assert list(problem.edge_matching_counts()) == counts


def test_enumeration_limit_and_counting_without_enumeration():
    # Complete bipartite graph 8 candidates x 6 positions: 8!/2! = 20160 matchings.
    n_candidates, n_positions = 8, 6
    edges = [(c, s) for s in range(n_positions) for c in range(n_candidates)]
    positions = np.array([s for _, s in edges])
    preferences = np.where(positions[:, None] == positions[None, :], 0.5, 0.0)
    problem = BipartiteDuelProblem(n_candidates, n_positions, edges, preferences)
    assert problem.count_max_matchings() == math.factorial(8) // math.factorial(2)
    with pytest.raises(TooManyMatchingsError, match="20160 maximum matchings"):
        problem.max_matchings(limit=1000)
    with pytest.raises(TooManyMatchingsError):
        problem.condorcet_winner(limit=1000)
    sample = problem.sample_max_matching(np.random.default_rng(0))
    assert problem.is_matching(sample)
    assert problem.max_matching_at(0) == tuple(range(0, 48, 9))  # candidate j at position j
    # All pairs tied: every matching has Borda score 1/2, so all gaps are 0 and H^B is infinite.
    np.testing.assert_allclose(problem.edge_rewards(), 0.5)
    assert problem.borda_hardness() == math.inf


def test_exact_sampler_is_uniform():
    # A graph with 18 matchings of unequal "shape" (positions with 2..4 admissible edges).
    edges = [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (3, 1), (1, 2), (2, 2), (3, 2), (4, 2)]
    positions = np.array([s for _, s in edges])
    preferences = np.where(positions[:, None] == positions[None, :], 0.5, 0.0)
    problem = BipartiteDuelProblem(5, 3, edges, preferences)
    matchings = problem.max_matchings()
    assert len(matchings) == len(brute_matchings(problem))
    n_draws = 36_000
    draws = problem.sample_max_matching(np.random.default_rng(2024), size=n_draws)
    lookup = {m: k for k, m in enumerate(matchings)}
    frequencies = np.bincount([lookup[m] for m in draws], minlength=len(matchings))
    assert frequencies.min() > 0
    assert chisquare(frequencies).pvalue > 1e-4  # generous: a biased sampler gives p ~ 0
    assert np.all(np.abs(frequencies / n_draws - 1 / len(matchings)) < 0.01)
    # Same generator state, same samples; single draws follow the same stream.
    again = problem.sample_max_matching(np.random.default_rng(2024), size=5)
    assert again == draws[:5]
    rng = np.random.default_rng(2024)
    assert [problem.sample_max_matching(rng) for _ in range(5)] == draws[:5]


def test_uniform_below_handles_counts_beyond_int64():
    rng = np.random.default_rng(0)
    bound = 3 * 2**70 + 1
    values = [uniform_below(rng, bound) for _ in range(2000)]
    assert all(0 <= v < bound for v in values)
    # Top-third frequency close to 1/3.
    assert abs(np.mean([v >= 2 * 2**70 for v in values]) - 1 / 3) < 0.05


# --------------------------------------------------------------------------- MWMC
def test_max_weight_matching_equals_brute_force_with_constraints():
    rng = np.random.default_rng(7)
    checked_infeasible = 0
    for problem in random_instances(30, seed=3):
        matchings = brute_matchings(problem)
        for _ in range(6):
            weights = rng.normal(size=problem.n_edges)
            cap = min(3, problem.n_edges + 1)
            required = rng.choice(problem.n_edges, size=int(rng.integers(0, cap)), replace=False).tolist()
            forbidden = rng.choice(problem.n_edges, size=int(rng.integers(0, cap)), replace=False).tolist()
            for maximize in (True, False):
                expected = brute_weight(weights, matchings, required, forbidden, maximize)
                got = problem.max_weight_matching(weights, required=required, forbidden=forbidden, maximize=maximize)
                same = max_weight_matching(weights, problem.edges, problem.n_positions, problem.n_candidates,
                                           required=required, forbidden=forbidden, maximize=maximize)
                assert got == same
                if expected is None:
                    assert got is None
                    checked_infeasible += 1
                else:
                    assert got in matchings and set(required) <= set(got) and not set(forbidden) & set(got)
                    assert sum(weights[e] for e in got) == pytest.approx(expected, abs=1e-9)
    assert checked_infeasible > 0


def test_max_weight_matching_function_errors_and_examples():
    edges = [(0, 0), (1, 0), (1, 1), (2, 1)]
    assert max_weight_matching([0.6, 0.5, 0.2, 0.7], edges, 2, 3) == (0, 3)
    assert max_weight_matching([0.6, 0.5, 0.2, 0.7], edges, 2, 3, required=[1, 2]) is None  # share candidate 1
    assert max_weight_matching([0.6, 0.5, 0.2, 0.7], edges, 2, 3, forbidden=[0, 1]) is None
    assert max_weight_matching([0.6, 0.5, 0.2, 0.7], edges, 2, 3, required=[0], forbidden=[0]) is None
    with pytest.raises(ValueError, match="shape"):
        max_weight_matching([0.6, 0.5], edges, 2, 3)
    with pytest.raises(ValueError, match="finite"):
        max_weight_matching([0.6, np.nan, 0.2, 0.7], edges, 2, 3)
    with pytest.raises(ValueError, match="duplicate"):
        max_weight_matching([1.0, 1.0], [(0, 0), (0, 0)], 1, 1)
    with pytest.raises(ValueError, match="out of range"):
        max_weight_matching([1.0] * 4, edges, 2, 3, required=[4])
    with pytest.raises(TypeError):
        max_weight_matching([1.0] * 4, edges, 2, 3, forbidden=[0.5])


# --------------------------------------------------------------------------- Borda and Condorcet against brute force
def test_borda_facts_equal_brute_force():
    for problem in random_instances(20, seed=5):
        matchings = brute_matchings(problem)
        table = np.array([[brute_f(problem, a, b) for b in matchings] for a in matchings])
        np.testing.assert_allclose(problem.matching_preference_table(), table, atol=1e-12)
        np.testing.assert_allclose(problem.borda_scores(), table.mean(axis=1), atol=1e-12)
        w = [np.mean([problem.preferences[e, m[problem.edges[e, 1]]] for m in matchings])
             for e in range(problem.n_edges)]
        np.testing.assert_allclose(problem.edge_rewards(), w, atol=1e-12)
        best = int(np.argmax(table.mean(axis=1)))
        assert problem.borda_score(problem.borda_winner()) == pytest.approx(table.mean(axis=1)[best], abs=1e-12)
        rewards = {m: sum(w[e] for e in m) for m in matchings}
        top = max(rewards.values())
        for e in range(problem.n_edges):
            if e in problem.borda_winner():
                rivals = [r for m, r in rewards.items() if e not in m]
            else:
                rivals = [r for m, r in rewards.items() if e in m]
            expected = top - max(rivals) if rivals else math.inf
            assert problem.borda_gaps()[e] == pytest.approx(expected, abs=1e-9)


def test_condorcet_winner_equals_brute_force():
    found = {True: 0, False: 0}
    for planted in (False, True):
        for problem in random_instances(20, seed=11, planted_condorcet=planted):
            matchings = brute_matchings(problem)
            winners = [a for a in matchings
                       if all(brute_f(problem, a, b) > 0.5 + 1e-12 for b in matchings if b != a)]
            assert len(winners) <= 1
            expected = winners[0] if winners else None
            assert problem.condorcet_winner() == expected
            found[expected is not None] += 1
            for matching in matchings:
                assert problem.is_condorcet_winner(matching) == (matching == expected)
    assert found[True] > 0 and found[False] > 0  # both branches exercised


def test_strongest_challenger_equals_brute_force():
    # The best matching other than M under arbitrary weights, by l constrained max-weight
    # matchings (each forbidding one edge of M), against the enumeration of all matchings.
    rng = np.random.default_rng(17)
    for problem in random_instances(15, seed=5):
        matchings = brute_matchings(problem)
        for _ in range(3):
            weights = rng.random(problem.n_edges)
            matching = matchings[int(rng.integers(len(matchings)))]
            others = [sum(weights[e] for e in m) / problem.n_positions for m in matchings if m != matching]
            for maximize, best in ((True, max), (False, min)):
                value, rival = problem.strongest_challenger(weights, matching, maximize=maximize)
                if not others:
                    assert rival is None and value == (-math.inf if maximize else math.inf)
                    continue
                assert value == pytest.approx(best(others), abs=1e-12) and rival != matching
                assert value == pytest.approx(sum(weights[e] for e in rival) / problem.n_positions, abs=1e-12)
    with pytest.raises(ValueError, match="exactly once"):
        five_edge_example().strongest_challenger(np.zeros(5), (0, 1))


def test_tied_graph_keeps_the_graph_and_hides_the_preferences(example):
    tied = BipartiteDuelProblem.tied(example.n_candidates, example.n_positions, example.edges, name="graph")
    assert tied.same_graph(example) and tied != example and tied.name == "graph"
    same = example.edge_positions[:, None] == example.edge_positions[None, :]
    np.testing.assert_array_equal(tied.preferences, np.where(same, 0.5, 0.0))
    assert tied.max_matchings() == example.max_matchings()
    np.testing.assert_array_equal(tied.edge_at, example.edge_at)
    assert example.edge_at[1, 3] == 4 and example.edge_at[0, 3] == -1
    with pytest.raises(ValueError, match="at least one edge"):
        BipartiteDuelProblem.tied(3, 1, [])


# --------------------------------------------------------------------------- generators
@pytest.mark.parametrize("n_positions,n_candidates", [(1, 3), (3, 3), (4, 7), (6, 9)])
def test_planted_instances_have_a_condorcet_matching(n_positions, n_candidates):
    rng = np.random.default_rng(n_positions * 100 + n_candidates)
    for _ in range(5):
        problem = random_bipartite_problem(n_positions, n_candidates, rng, planted_condorcet=True,
                                           edge_probability=0.6, min_gap=0.0)
        winner = problem.condorcet_winner()
        assert winner is not None and problem.is_condorcet_winner(winner)
        off = problem.preferences[np.ix_(winner, range(problem.n_edges))]
        # Every planted edge beats every other edge at its position.
        for row, edge in zip(off, winner):
            others = [e for e in problem.edges_by_position[problem.edges[edge, 1]] if e != edge]
            assert np.all(row[others] > 0.5)


def test_generators_are_seeded_and_valid():
    a = random_bipartite_problem(3, 5, np.random.default_rng(4))
    b = random_bipartite_problem(3, 5, np.random.default_rng(4))
    c = random_bipartite_problem(3, 5, np.random.default_rng(5))
    assert a == b and a != c
    assert a.name == "random_bipartite_l3_n5"
    gaps = np.abs(a.preferences[a.comparable_pairs[:, 1], a.comparable_pairs[:, 2]] - 0.5)
    assert np.all(gaps >= 0.05)
    edges = random_bipartite_graph(4, 6, np.random.default_rng(0), edge_probability=0.0)
    assert len(edges) == 4  # only the planted matching
    assert edges == sorted(edges, key=lambda edge: (edge[1], edge[0]))
    fixed = random_bipartite_problem(3, 5, np.random.default_rng(1), edges=a.edges, planted_condorcet=True)
    assert fixed.same_graph(a) and fixed.condorcet_winner() is not None
    with pytest.raises(TypeError, match="Generator"):
        random_bipartite_problem(3, 5, 0)
    with pytest.raises(ValueError, match="at least 3"):
        random_bipartite_problem(3, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="edge_probability"):
        random_bipartite_problem(3, 5, np.random.default_rng(0), edge_probability=1.5)
    with pytest.raises(ValueError, match="min_gap"):
        random_bipartite_problem(3, 5, np.random.default_rng(0), min_gap=0.5)


def test_problem_sampler_keeps_the_graph():
    sampler = BipartiteProblemSampler(3, 5, planted_condorcet=True, graph_seed=3)
    rng = np.random.default_rng(0)
    problems = [sampler(rng) for _ in range(4)]
    assert all(p.same_graph(problems[0]) for p in problems)
    assert len({p.preferences.tobytes() for p in problems}) == 4
    assert all(p.condorcet_winner() is not None for p in problems)
    assert pickle.loads(pickle.dumps(sampler)).edges == sampler.edges
    with pytest.raises(TypeError, match="unknown sampler options"):
        BipartiteProblemSampler(3, 5, edge_probabilty=0.3)


# --------------------------------------------------------------------------- immutability and validation
def test_immutable_and_picklable(example):
    for array in (example.edges, example.preferences, example.edge_rewards(), example.borda_gaps(),
                  example.comparable_pairs, example.edge_copeland_losses):
        with pytest.raises(ValueError):
            array[0] = 0
    clone = pickle.loads(pickle.dumps(example))
    assert clone == example and hash(clone) == hash(example) and clone.name == "five_edge"
    assert "five_edge" in repr(example)
    assert example.summary()["condorcet_winner"] == [1, 4]


def _five_edge_parts():
    edges = [(0, 0), (1, 0), (2, 0), (2, 1), (3, 1)]
    preferences = np.array(five_edge_example().preferences)
    return edges, preferences


@pytest.mark.parametrize("mutate,error,message", [
    (lambda e, p: (e[::-1], p), ValueError, "sorted by \\(position, candidate\\)"),
    (lambda e, p: (e[:1] + e[:1] + e[2:], p), ValueError, "duplicates edge 0"),
    (lambda e, p: ([(9, 0)] + e[1:], p), ValueError, "candidate outside"),
    (lambda e, p: (e[:4] + [(3, 5)], p), ValueError, "position outside"),
    (lambda e, p: ([(0.0, 0.0)] + e[1:], p), TypeError, "integer"),
    (lambda e, p: (e, p[:4, :4]), ValueError, "shape \\(5, 5\\)"),
    (lambda e, p: (e, _set(p, (0, 1), np.nan)), ValueError, "not finite"),
    (lambda e, p: (e, _set(p, (0, 1), 1.2)), ValueError, "outside \\[0, 1\\]"),
    (lambda e, p: (e, _set(p, (2, 2), 0.4)), ValueError, "must be 1/2"),
    (lambda e, p: (e, _set(p, (0, 3), 0.3)), ValueError, "incomparable"),
    (lambda e, p: (e, _set(p, (0, 1), 0.7)), ValueError, "\\[0, 1\\] = 0.7 and \\[1, 0\\] = 0.55 must sum to 1"),
    (lambda e, p: (e, p.astype(str)), TypeError, "numeric"),
])
def test_validation_errors_name_the_problem_and_entry(mutate, error, message):
    edges, preferences = _five_edge_parts()
    bad_edges, bad_preferences = mutate(edges, preferences)
    with pytest.raises(error, match=message) as caught:
        BipartiteDuelProblem(4, 2, bad_edges, bad_preferences, name="broken")
    if error is ValueError:
        assert "'broken'" in str(caught.value)


def _set(array, where, value):
    array = array.copy()
    array[where] = value
    return array


def test_validation_of_sizes_and_coverage():
    with pytest.raises(ValueError, match="no matching covers all 2 positions"):
        # Both positions can only be filled by candidate 0.
        BipartiteDuelProblem(2, 2, [(0, 0), (0, 1)], np.eye(2) * 0.5, name="starved")
    with pytest.raises(ValueError, match="n_candidates=1 < n_positions=2"):
        BipartiteDuelProblem(1, 2, [(0, 0), (0, 1)], np.eye(2) * 0.5)
    with pytest.raises(ValueError, match="no matching covers"):
        BipartiteDuelProblem(3, 2, [(0, 0), (1, 0)], np.full((2, 2), 0.5))  # position 1 has no edge
    with pytest.raises(TypeError, match="n_positions must be an integer"):
        BipartiteDuelProblem(3, 2.0, [(0, 0)], [[0.5]])
    with pytest.raises(ValueError, match="at least one edge"):
        BipartiteDuelProblem(3, 1, [], np.zeros((0, 0)))


def test_matching_validation(example):
    assert example.canonical_matching([4, 1]) == (1, 4)
    assert example.is_matching((0, 3)) and not example.is_matching((2, 3))
    with pytest.raises(ValueError, match="uses a candidate twice"):
        example.canonical_matching((2, 3))
    with pytest.raises(ValueError, match="exactly once"):
        example.matching_preference((0, 1), (0, 3))
    with pytest.raises(ValueError, match="out of range"):
        example.canonical_matching((0, 7))
    with pytest.raises(TypeError):
        example.canonical_matching(5)
    with pytest.raises(ValueError, match="rank"):
        example.max_matching_at(5)
    assert example.edge_index(3, 1) == 4
    with pytest.raises(ValueError, match="no edge"):
        example.edge_index(3, 0)
