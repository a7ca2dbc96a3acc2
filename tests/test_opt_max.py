"""OptMax (Falahatgar et al., NeurIPS 2017): loop equivalence, the three stages, the PAC
guarantee under strong stochastic transitivity and the ln K saving over SEQ-ELIMINATE."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_helpers import assert_paths_agree
from dueling_gym.agents import OptMax, SequentialElimination, make_agent
from dueling_gym.experiments.pure_exploration import run_pure_exploration
from dueling_gym.problems import PreferenceMatrix
from dueling_gym.problems.generators import utility_based


def bradley_terry(utilities) -> PreferenceMatrix:
    utilities = np.asarray(utilities, dtype=float)
    matrix = 1.0 / (1.0 + np.exp(-(utilities[:, None] - utilities[None, :])))
    np.fill_diagonal(matrix, 0.5)
    return PreferenceMatrix.from_upper_triangle(matrix, name="bt")


def indifferent(n_arms: int) -> PreferenceMatrix:
    """Every duel a fair coin: every arm is an ε-maximum and every COMPARE runs close to its budget."""
    return PreferenceMatrix(np.full((n_arms, n_arms), 0.5), name="indifferent")


@pytest.mark.parametrize(("problem", "n_arms"), [("sushi", 16), ("cyclic4", 4)])
def test_fused_act_observe_and_gym_paths_agree(problem, n_arms):
    assert_paths_agree(lambda: OptMax(n_arms, epsilon=0.2, delta=0.2), problem, 3000, seed=3)


def test_stages_subset_and_answer():
    agent = OptMax(20, epsilon=0.1, delta=0.1, seed=0)
    assert agent.subset_size == math.ceil(20 ** 0.75) == 10 and agent.stage == "anchor"
    assert agent.pure_exploration and agent.hyperparameters == {"epsilon": 0.1, "delta": 0.1}
    problem = bradley_terry(np.linspace(0.0, 4.0, 20))
    result = run_pure_exploration(agent, problem, seed=1)
    assert result.stopped and agent.done and agent.stage == "done"
    assert agent.act() == (result.winner, result.winner)  # after stopping: the answer's self-duel
    ranking = agent.ranking()
    assert sorted(ranking.tolist()) == list(range(20)) and ranking[0] == result.winner == agent.recommend()
    survivors = agent.survivors
    assert len(set(survivors.tolist())) == len(survivors) and set(survivors) <= set(range(20))
    # The answer, then the other arms of R in the order they entered it.
    others = [arm for arm in survivors.tolist() if arm != ranking[0]]
    assert ranking[1:1 + len(others)].tolist() == others
    # The duels asked for are always (challenger, anchor); other duels are ignored.
    fresh = OptMax(5, seed=2)
    first, second = fresh.act()
    fresh.observe(((first + 1) % 5, second), True)
    assert fresh.compare_duels == 0
    fresh.observe((first, second), True)
    assert fresh.compare_duels == 1


def test_every_duel_is_budgeted():
    # Worst case: indifferent arms; each COMPARE stops at its budget m = ceil(2 ln(2/δ') / ε²) at the latest.
    n_arms, epsilon, delta = 12, 0.2, 0.1
    agent = OptMax(n_arms, epsilon=epsilon, delta=delta, seed=0)
    result = run_pure_exploration(agent, indifferent(n_arms), seed=0)

    def budget(confidence):
        return math.ceil(2 * math.log(2 / confidence) / epsilon ** 2)

    subset = agent.subset_size
    bound = ((subset - 1) * budget(delta / (3 * (subset - 1))) + (n_arms - 1) * budget(delta / 3)
             + len(agent.survivors) * budget(delta / (3 * max(1, len(agent.survivors)))))
    assert result.stopped and result.samples <= bound


@pytest.mark.parametrize("problem_seed", range(2))
def test_is_pac_under_strong_stochastic_transitivity(problem_seed):
    # The guarantee: an ε-maximum (P[b*, answer] <= 1/2 + ε) with probability at least 1 - δ.
    epsilon, delta = 0.05, 0.1
    problem = utility_based(12, np.random.default_rng(problem_seed))
    agent = OptMax(12, epsilon=epsilon, delta=delta)
    results = [run_pure_exploration(agent, problem, seed=seed) for seed in range(60)]
    assert all(result.stopped for result in results)
    assert np.mean([result.epsilon_correct for result in results]) >= 1 - delta


def test_removes_the_log_k_factor_of_sequential_elimination():
    # O(K/ε² ln(1/δ)) duels instead of SEQ-ELIMINATE's O(K/ε² ln(K/δ)): on indifferent arms the
    # duels per arm stay flat in K for OptMax and grow like ln K for SEQ-ELIMINATE.
    epsilon, delta = 0.2, 0.1

    def per_arm(factory, n_arms):
        samples = [run_pure_exploration(factory(n_arms), indifferent(n_arms), seed=seed).samples for seed in range(3)]
        return np.mean(samples) / n_arms

    opt_small, opt_large = per_arm(lambda k: OptMax(k, epsilon=epsilon, delta=delta), 20), \
        per_arm(lambda k: OptMax(k, epsilon=epsilon, delta=delta), 400)
    seq_small, seq_large = per_arm(lambda k: SequentialElimination(k, epsilon=epsilon, delta=delta), 20), \
        per_arm(lambda k: SequentialElimination(k, epsilon=epsilon, delta=delta), 400)
    assert opt_large < 1.15 * opt_small, (opt_small, opt_large)
    assert seq_large > 1.3 * seq_small, (seq_small, seq_large)
    assert opt_large < 0.8 * seq_large


@pytest.mark.parametrize(
    ("factory", "error"),
    [
        (lambda: OptMax(5, epsilon=0.0), ValueError),
        (lambda: OptMax(5, epsilon=0.6), ValueError),
        (lambda: OptMax(5, delta=1.0), ValueError),
        (lambda: OptMax(5, delta="0.1"), TypeError),
        (lambda: OptMax(1), ValueError),
        (lambda: make_agent("opt_max", 5, gamma=1.0), TypeError),
    ],
)
def test_bad_hyperparameters_raise(factory, error):
    with pytest.raises(error):
        factory()
