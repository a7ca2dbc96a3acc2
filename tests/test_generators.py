"""Random problem generators: structure, seeding and validation."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from dueling_gym.problems import (
    GENERATORS,
    BipartiteProblemSampler,
    ProblemSampler,
    cyclic_copeland_winners,
    no_condorcet_winner,
    unique_copeland_winner,
    utility_based,
)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("model", ["bradley_terry", "thurstone"])
def test_utility_based_has_condorcet_winner_and_total_order(seed, model):
    problem = utility_based(7, np.random.default_rng(seed), model=model)
    assert problem.condorcet_winner is not None
    # A total order: Copeland scores are a permutation of 0..K-1.
    assert sorted(problem.wins.tolist()) == list(range(7))


@pytest.mark.parametrize("seed", range(5))
def test_no_condorcet_winner(seed):
    problem = no_condorcet_winner(6, np.random.default_rng(seed), min_gap=0.1)
    assert problem.condorcet_winner is None
    off = problem.matrix[~np.eye(6, dtype=bool)]
    assert np.all(np.abs(off - 0.5) >= 0.1)


def test_cyclic_copeland_winners_matches_the_paper_at_k_500():
    problem = cyclic_copeland_winners(500, np.random.default_rng(0))
    assert problem.n_copeland_winners == 3
    assert problem.wins[problem.copeland_winners].tolist() == [498, 498, 498]
    others = np.delete(problem.wins, problem.copeland_winners)
    assert sorted(others.tolist()) == list(range(497))
    winners = problem.copeland_winners.tolist()
    sub = problem.matrix[np.ix_(winners, winners)] > 0.5
    assert sub.sum(axis=1).tolist() == [1, 1, 1]  # a 3-cycle


def test_cyclic_copeland_without_shuffle_puts_winners_first():
    problem = cyclic_copeland_winners(10, np.random.default_rng(1), shuffle=False)
    assert problem.copeland_winners.tolist() == [0, 1, 2]


@pytest.mark.parametrize("n_arms", [2, 3, 8, 36])
def test_unique_copeland_winner(n_arms):
    problem = unique_copeland_winner(n_arms, np.random.default_rng(n_arms))
    assert problem.n_copeland_winners == 1


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_same_seed_same_problem(name):
    n_arms = 6
    first = GENERATORS[name](n_arms, np.random.default_rng(42))
    second = GENERATORS[name](n_arms, np.random.default_rng(42))
    third = GENERATORS[name](n_arms, np.random.default_rng(43))
    assert first == second
    assert first != third


def test_generator_validation():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="at least 2"):
        utility_based(1, rng)
    with pytest.raises(ValueError, match="at least 3"):
        no_condorcet_winner(2, rng)
    with pytest.raises(TypeError, match="Generator"):
        utility_based(4, 0)
    with pytest.raises(TypeError, match="integer"):
        utility_based(4.0, rng)
    with pytest.raises(ValueError, match="min_gap"):
        no_condorcet_winner(4, rng, min_gap=0.6)
    with pytest.raises(ValueError, match="low"):
        cyclic_copeland_winners(5, rng, low=0.4)
    with pytest.raises(ValueError, match="model"):
        utility_based(4, rng, model="plackett")


def test_problem_sampler_is_picklable_and_validates():
    sampler = ProblemSampler("no_condorcet_winner", n_arms=5, min_gap=0.1)
    clone = pickle.loads(pickle.dumps(sampler))
    assert clone(np.random.default_rng(3)) == sampler(np.random.default_rng(3))
    assert not sampler.always_has_condorcet_winner
    assert ProblemSampler("utility_based", n_arms=4).always_has_condorcet_winner
    assert "min_gap=0.1" in repr(sampler)
    with pytest.raises(ValueError, match="unknown generator"):
        ProblemSampler("nope", n_arms=4)
    with pytest.raises(TypeError):
        ProblemSampler("utility_based", n_arms=4, bogus=1)


@pytest.mark.parametrize("sampler", [
    ProblemSampler("utility_based", n_arms=4, model="thurstone", spread=np.float32(2.5)),
    ProblemSampler("no_condorcet_winner", n_arms=5, min_gap=np.float64(0.1)),
    ProblemSampler("cyclic_copeland_winners", n_arms=6, low=0.55, high=np.float64(0.95), shuffle=np.bool_(False)),
    ProblemSampler("unique_copeland_winner", n_arms=3),
])
def test_problem_sampler_json_round_trip_draws_the_same_problems(sampler):
    described = sampler.to_json()
    parsed = json.loads(json.dumps(described))  # JSON-compatible: NumPy scalars became Python ones
    assert parsed == described and set(described) == {"generator", "n_arms", "options"}
    clone = ProblemSampler.from_json(parsed)
    assert repr(clone) == repr(ProblemSampler(sampler.generator, sampler.n_arms, **parsed["options"]))
    assert clone.always_has_condorcet_winner == sampler.always_has_condorcet_winner
    first, second = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(3):
        assert clone(first) == sampler(second)


def test_problem_sampler_from_json_validates():
    with pytest.raises(TypeError, match="mapping"):
        ProblemSampler.from_json('{"generator": "utility_based", "n_arms": 4}')
    with pytest.raises(ValueError, match=r"missing \['n_arms'\], unknown \['arms'\]"):
        ProblemSampler.from_json({"generator": "utility_based", "arms": 4})
    with pytest.raises(TypeError, match="options"):
        ProblemSampler.from_json({"generator": "utility_based", "n_arms": 4, "options": [["spread", 2.0]]})
    with pytest.raises(ValueError, match="unknown generator"):
        ProblemSampler.from_json({"generator": "nope", "n_arms": 4})
    with pytest.raises(TypeError):
        ProblemSampler.from_json({"generator": "utility_based", "n_arms": 4, "options": {"bogus": 1}})
    sampler = ProblemSampler("utility_based", n_arms=4)
    sampler.options["spread"] = {"not": "a number"}  # only reachable by editing a built sampler
    with pytest.raises(TypeError, match="spread"):
        sampler.to_json()


def test_bipartite_sampler_json_round_trip_keeps_the_graph_and_the_draws():
    sampler = BipartiteProblemSampler(3, 6, graph_seed=4, edge_probability=0.7, planted_condorcet=np.bool_(True))
    described = json.loads(json.dumps(sampler.to_json()))
    assert described["edges"] == [list(edge) for edge in sampler.edges]
    assert described["options"] == {"planted_condorcet": True}
    clone = BipartiteProblemSampler.from_json(described)
    assert clone.edges == sampler.edges
    first, second = clone(np.random.default_rng(2)), sampler(np.random.default_rng(2))
    np.testing.assert_array_equal(first.preferences, second.preferences)
    with pytest.raises(ValueError, match=r"missing \['edges'\]"):
        BipartiteProblemSampler.from_json({"n_positions": 3, "n_candidates": 6})
