"""Random problem generators: structure, seeding and validation."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from dueling_gym.problems import (
    GENERATORS,
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
