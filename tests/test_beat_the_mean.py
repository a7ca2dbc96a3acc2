"""Beat-the-Mean (Yue & Joachims, ICML 2011), online version."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_checks import assert_paths_agree_on, bradley_terry
from condorcet_behaviour import CONDORCET_PROBLEMS
from dueling_gym.agents import BeatTheMean, make_agent
from dueling_gym.experiments import simulate
from dueling_gym.problems import load_problem


@pytest.mark.parametrize("problem", ["cyclic4", "sushi"])
def test_fused_act_observe_and_gym_paths_agree(problem):
    assert_paths_agree_on(problem, lambda n_arms: BeatTheMean(n_arms, horizon=3000), 3000, seed=2)


def test_identifies_the_best_arm_of_a_utility_based_problem_then_exploits():
    # Theorem 2's setting (total order, strong stochastic transitivity): the working set shrinks
    # to the best arm, after which every duel is its self-duel and the regret stops growing.
    problem = bradley_terry([1.0, 4.0, 0.0, 2.0, 3.0])
    horizon = 200_000
    for seed in range(3):
        agent = BeatTheMean(5, horizon=horizon)
        result = simulate(agent, problem, horizon, seed=seed, checkpoints=[horizon // 2, horizon])
        assert agent.working_set.tolist() == [1]
        assert result.recommendations.tolist() == [1, 1]
        half, total = result.cumulative_regret["condorcet_strong"]
        assert total == half


@pytest.mark.parametrize("name", CONDORCET_PROBLEMS)
def test_recommends_the_condorcet_winner_of_the_published_matrices(name):
    problem = load_problem(name)
    horizon = 100_000
    found = 0
    for seed in range(3):
        agent = BeatTheMean(problem.n_arms, horizon=horizon)
        result = simulate(agent, problem, horizon, seed=seed)
        found += result.recommendations[-1] == problem.condorcet_winner
        assert problem.condorcet_winner in agent.working_set  # never eliminated
    assert found >= 2


def test_statistics_forget_eliminated_arms_and_the_stopping_rule_holds():
    problem = load_problem("mslr5-condorcet")
    horizon = 30_000
    agent = BeatTheMean(5, horizon=horizon)
    simulate(agent, problem, horizon, seed=4)
    state = agent
    active = agent.working_set
    assert 1 < active.size < 5
    # n_b and w_b count only duels against arms still in W ([eliminate] deletes the others).
    np.testing.assert_array_equal(state.counts[active], state.pair_counts[np.ix_(active, active)].sum(axis=1))
    np.testing.assert_array_equal(state.wins[active], state.pair_wins[np.ix_(active, active)].sum(axis=1))
    # No pair of W is separated by the radius (otherwise the last duel would have eliminated one).
    estimates = state.wins[active] / state.counts[active]
    radius = 3.0 * math.sqrt(math.log(2 * horizon * 5) / state.counts[active].min())
    assert estimates.min() + radius > estimates.max() - radius
    # Least-compared-first selection keeps the counts of W within a narrow band.
    assert state.counts[active].max() - state.counts[active].min() <= state.counts[active].max() // 2


def test_registry_hyperparameters_and_validation():
    agent = make_agent("btm", 4, seed=0, horizon=1000)
    assert isinstance(agent, BeatTheMean)
    assert agent.hyperparameters == {"horizon": 1000, "gamma": 1.0}
    with pytest.raises(TypeError):
        BeatTheMean(4)  # the horizon is required
    with pytest.raises(ValueError, match="horizon"):
        BeatTheMean(4, horizon=0)
    with pytest.raises(TypeError, match="horizon"):
        BeatTheMean(4, horizon=1e5)
    with pytest.raises(ValueError, match="gamma"):
        BeatTheMean(4, horizon=10, gamma=0.5)
