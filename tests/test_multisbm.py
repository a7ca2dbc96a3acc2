"""MultiSBM (Ailon, Karnin & Joachims, ICML 2014)."""

from __future__ import annotations

import numpy as np
import pytest

from agent_checks import assert_paths_agree_on
from dueling_gym.agents import MultiSBM, make_agent
from dueling_gym.experiments import simulate
from dueling_gym.problems import load_problem
from dueling_gym.problems.generators import utility_based


@pytest.mark.parametrize("problem", ["cyclic4", "sushi"])
def test_fused_act_observe_and_gym_paths_agree(problem):
    assert_paths_agree_on(problem, MultiSBM, 3000, seed=4)


def test_left_arm_is_the_previous_right_arm():
    result = simulate(MultiSBM(6), "arxiv", 2000, seed=1, record_duels=True)
    np.testing.assert_array_equal(result.duels[1:, 0], result.duels[:-1, 1])


def test_logarithmic_regret_on_utility_based_problems():
    # Theorem 4.1: O(K log T) regret under the linear link (here Bradley-Terry utilities).
    short, long = 5000, 50_000
    for seed in range(3):
        problem = utility_based(8, np.random.default_rng(seed), spread=4.0)
        result = simulate(MultiSBM(8), problem, long, seed=seed, checkpoints=[short, long])
        first, total = result.cumulative_regret["condorcet_strong"]
        assert result.recommendations[-1] == problem.condorcet_winner
        assert total < 3.0 * first  # a linear regret would be 10x


@pytest.mark.parametrize("name", ["sushi", "arxiv", "mslr5-condorcet"])
def test_recommends_the_condorcet_winner_of_published_matrices(name):
    problem = load_problem(name)
    for seed in range(2):
        result = simulate(MultiSBM(problem.n_arms), problem, 50_000, seed=seed)
        assert result.recommendations[-1] == problem.condorcet_winner


def test_registry_hyperparameters_and_validation():
    agent = make_agent("multisbm", 5, seed=0, a=1.5)
    assert isinstance(agent, MultiSBM) and agent.hyperparameters == {"a": 1.5}
    with pytest.raises(ValueError, match="a"):
        MultiSBM(5, a=-1.0)
    with pytest.raises(TypeError, match="a"):
        MultiSBM(5, a=None)
