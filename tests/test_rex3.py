"""REX3 (Gajane, Urvoy & Clérot, ICML 2015)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_helpers import assert_paths_agree
from dueling_gym.agents import REX3, make_agent
from dueling_gym.experiments import simulate
from dueling_gym.problems import load_problem
from dueling_gym.problems.generators import utility_based


@pytest.mark.parametrize("problem", ["cyclic4", "sushi"])
def test_fused_act_observe_and_gym_paths_agree(problem):
    n_arms = load_problem(problem).n_arms
    assert_paths_agree(lambda: REX3(n_arms, horizon=3000), problem, 3000, seed=6)


def test_sublinear_regret_on_a_utility_based_problem():
    # Theorem 1: O(sqrt(K ln K T)) regret with gamma tuned to T; ten times the horizon costs
    # about sqrt(10) ~ 3.2 times the regret, far from the tenfold of a linear regret.
    problem = utility_based(8, np.random.default_rng(0), spread=4.0)
    regret = {}
    for horizon in (10_000, 100_000):
        values = [simulate(REX3(8, horizon=horizon), problem, horizon, seed=seed).final_regret("condorcet_strong")
                  for seed in range(3)]
        regret[horizon] = np.mean(values)
    assert regret[100_000] < 5.0 * regret[10_000]
    assert regret[100_000] < 0.1 * 100_000 * problem.expected_random_regret("condorcet_strong")


def test_weights_follow_the_importance_weighted_update():
    agent = REX3(4, gamma=0.2, seed=0)
    agent.observe((1, 3), True)  # p is uniform: c_1 = 1 / (2 / 4) = 2, c_3 = -2
    np.testing.assert_allclose(agent.log_weights, [0.0, 0.2 / 4 * 2, 0.0, -0.2 / 4 * 2])
    agent.observe((2, 2), False)  # a self-duel changes nothing
    np.testing.assert_allclose(agent.log_weights, [0.0, 0.1, 0.0, -0.1])
    assert agent.recommend() == 1


def test_recommends_the_condorcet_winner_of_published_matrices():
    for name in ("arxiv", "mslr5-condorcet", "cyclic4"):
        problem = load_problem(name)
        result = simulate(REX3(problem.n_arms, horizon=50_000), problem, 50_000, seed=0)
        assert result.recommendations[-1] == problem.condorcet_winner


def test_registry_hyperparameters_and_validation():
    agent = make_agent("rex3", 5, seed=0, horizon=1000)
    assert isinstance(agent, REX3) and agent.hyperparameters == {"horizon": 1000, "gamma": None}
    assert agent.exploration_rate == pytest.approx(math.sqrt(5 * math.log(5) / 1000))
    assert REX3(5, horizon=2).exploration_rate == 0.5
    assert REX3(5, gamma=0.3, horizon=10).exploration_rate == 0.3
    with pytest.raises(ValueError, match="gamma or a horizon"):
        REX3(5)
    for bad in (0.0, 0.6, -0.1):
        with pytest.raises(ValueError, match="gamma"):
            REX3(5, gamma=bad)
