"""Beat-the-Mean, PAC version (Yue & Joachims, ICML 2011, Algorithm 2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_checks import assert_paths_agree_on, assert_registered, bradley_terry, refusal_test
from dueling_gym.agents import BeatTheMeanPAC, make_agent
from dueling_gym.agents.beat_the_mean_pac import comparison_budget
from dueling_gym.experiments.pure_exploration import run_pure_exploration
from dueling_gym.problems import PreferenceMatrix


@pytest.mark.parametrize("problem", ["cyclic4", "sushi"])
def test_fused_act_observe_and_gym_paths_agree(problem):
    assert_paths_agree_on(problem, lambda n_arms: BeatTheMeanPAC(n_arms, epsilon=0.45, delta=0.3), 3000, seed=2)


@pytest.mark.parametrize(("n_arms", "epsilon", "delta", "gamma"), [(5, 0.1, 0.1, 1.0), (16, 0.2, 0.05, 1.2), (2, 0.45, 0.5, 1.0)])
def test_budget_is_the_least_fixed_point(n_arms, epsilon, delta, gamma):
    budget = comparison_budget(n_arms, epsilon, delta, gamma)
    scale = 36 * gamma ** 6 / epsilon ** 2
    assert budget == math.ceil(scale * math.log(n_arms ** 3 * budget / delta))
    assert all(n < math.ceil(scale * math.log(n_arms ** 3 * n / delta)) for n in range(1, budget, max(1, budget // 500)))
    # The radius at N is ε / (2γ).
    radius = 3 * gamma ** 2 * math.sqrt(math.log(n_arms ** 3 * budget / delta) / budget)
    assert radius <= epsilon / (2 * gamma) + 1e-12


def test_stops_once_every_arm_of_the_working_set_has_n_comparisons():
    # Two indistinguishable arms are never separated: the run stops when both have N comparisons.
    problem = PreferenceMatrix(np.full((3, 3), 0.5), name="indifferent")
    agent = BeatTheMeanPAC(3, epsilon=0.45, delta=0.5, seed=0)
    result = run_pure_exploration(agent, problem, seed=1)
    budget = agent.budget
    assert result.stopped and agent.done
    active = agent.working_set
    assert active.size >= 2 and agent.counts[active].min() == budget
    assert result.samples <= 3 * budget
    assert agent.act() == (result.winner, result.winner)
    ranking = agent.ranking()
    assert sorted(ranking.tolist()) == [0, 1, 2] and ranking[0] == result.winner


def test_returns_the_best_arm_of_a_clear_total_order_by_elimination():
    problem = bradley_terry([1.0, 4.0, 0.0, 2.0, 3.0])
    for seed in range(3):
        agent = BeatTheMeanPAC(5, epsilon=0.2, delta=0.1)
        result = run_pure_exploration(agent, problem, seed=seed)
        assert result.winner == 1 and agent.working_set.tolist() == [1]
        assert agent.counts[1] < agent.budget  # elimination, not the budget, ended the run
        # Eliminated arms are ranked last eliminated first; the weakest arm (2) went out first.
        assert agent.ranking()[0] == 1 and agent.ranking()[-1] == 2


@pytest.mark.slow
def test_is_pac_on_utility_based_problems():
    # Theorem: with probability 1 - δ the answer is ε-optimal (here utilities with gaps near ε).
    epsilon, delta = 0.1, 0.1
    rng = np.random.default_rng(7)
    correct = []
    for problem_seed in range(3):
        problem = bradley_terry(np.sort(rng.uniform(0.0, 1.0, size=6)))
        agent = BeatTheMeanPAC(6, epsilon=epsilon, delta=delta)
        correct += [run_pure_exploration(agent, problem, seed=seed).epsilon_correct for seed in range(15)]
    assert np.mean(correct) >= 1 - delta


test_bad_hyperparameters_raise = refusal_test(
    (lambda: BeatTheMeanPAC(5, epsilon=0.0), ValueError),
    (lambda: BeatTheMeanPAC(5, delta=0.0), ValueError),
    (lambda: BeatTheMeanPAC(5, gamma=0.9), ValueError),
    (lambda: BeatTheMeanPAC(5, epsilon="0.1"), TypeError),
    (lambda: make_agent("btm_pac", 5, horizon=10), TypeError),
)


def test_registry():
    agent = assert_registered("btm_pac", BeatTheMeanPAC, 4, {"epsilon": 0.2, "delta": 0.1, "gamma": 1.0}, epsilon=0.2)
    assert agent.pure_exploration
