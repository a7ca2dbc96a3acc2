"""RCS (Zoghi et al., WSDM 2014): loop equivalence, the sampled champion, the fall-back and
challenger rules, behaviour on the shipped problems and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from agent_checks import (
    assert_paths_agree_on,
    assert_observe_validates_the_action,
    assert_registered,
    assert_reset_replays,
    assert_self_duels_arm_zero,
    beta_sampled_matrices,
    feed_wins,
    leader_wins,
    refusal_test,
)
from condorcet_behaviour import (
    CONDORCET_PROBLEMS,
    assert_finds_condorcet_winner_with_sublinear_regret,
    assert_linear_regret_without_condorcet_winner,
)
from dueling_gym.agents import RCS, make_agent
from dueling_gym.agents.rcs import _binomial_half_tail, sampled_condorcet_winner


@pytest.mark.parametrize("problem", ["sushi", "multisol"])
def test_fused_generic_and_gym_loops_are_identical(problem):
    assert_paths_agree_on(problem, RCS, 2000, seed=7)


def test_binomial_tail_is_exact():
    for trials in (1, 2, 7, 40, 301, 5000, 200_001):
        for least in {trials // 2 + 1, (2 * trials) // 3 + 1, trials}:
            if least > trials / 2:
                expected = stats.binom.sf(least - 1, trials, 0.5)
                assert _binomial_half_tail(trials, least) == pytest.approx(expected, rel=1e-10, abs=1e-300)


def test_sampled_condorcet_winner_has_the_law_of_the_full_sample():
    """Lazy draws and the one-uniform shortcut leave the law of the sample's Condorcet winner as
    in Algorithm 1, where every theta_ij ~ Beta(W_ij + 1, W_ji + 1) is drawn."""
    # Concentrated pairs (0 vs 3, 1 vs 3, 2 vs 3) take the shortcut; the others draw Beta variates.
    wins = np.array([[0, 9, 6, 70], [7, 0, 8, 64], [5, 6, 0, 14], [30, 36, 4, 0]])
    agent = RCS(4, seed=3)
    feed_wins(agent, wins)
    n_draws = 40_000
    winners = np.array([sampled_condorcet_winner(agent.state) for _ in range(n_draws)])
    observed = np.bincount(winners + 1, minlength=5) / n_draws
    theta = beta_sampled_matrices(wins, 400_000, np.random.default_rng(0))
    is_winner = (theta >= 0.5).all(axis=2)
    reference = np.concatenate([[1 - is_winner.any(axis=1).mean()], is_winner.mean(axis=0)])
    assert reference[0] > 0.1 and reference[1:4].min() > 0.05  # a non-trivial law
    np.testing.assert_allclose(observed, reference, atol=0.012)


def test_one_uniform_shortcut_draws_the_exact_tail_probability():
    # Two arms, 14 wins to 4: the Chernoff bound (about 0.034) is below 0.05, so the side of
    # theta_01 is drawn with one uniform; arm 1 is the sample's winner with probability
    # P(theta_01 < 1/2) = P(Bin(19, 1/2) >= 15).
    agent = RCS(2, seed=8)
    feed_wins(agent, np.array([[0, 14], [4, 0]]))
    n_draws = 200_000
    winners = np.array([sampled_condorcet_winner(agent.state) for _ in range(n_draws)])
    expected = stats.binom.sf(14, 19, 0.5)
    assert np.mean(winners == 1) == pytest.approx(expected, abs=0.0012)
    assert set(np.unique(winners)) == {0, 1}


def test_least_chosen_champion_when_the_sample_has_no_condorcet_winner():
    # A clear 3-cycle (0 beats 1, 1 beats 2, 2 beats 0, 300 to 100): a sampled matrix never has
    # a Condorcet winner, so the champion is the arm chosen least often, and the challenger is
    # the arm that beats it (its upper bound is far above 1/2).
    wins = np.array([[0, 300, 100], [100, 0, 300], [300, 100, 0]])
    agent = RCS(3, seed=4)
    feed_wins(agent, wins)
    for step in range(60):
        champion, challenger = agent.act()
        assert agent.champion_turns.max() - agent.champion_turns.min() <= 1
        assert challenger == (champion - 1) % 3
    np.testing.assert_array_equal(agent.champion_turns, [20, 20, 20])
    np.testing.assert_array_equal(agent.wins, wins)  # act() alone learns nothing


def test_self_duel_once_the_condorcet_winner_is_clear():
    wins = leader_wins(4, 400, 100)
    wins[1, 2] = wins[2, 1] = wins[1, 3] = wins[3, 1] = wins[2, 3] = wins[3, 2] = 50
    agent = RCS(4, seed=5)
    assert_self_duels_arm_zero(agent, wins, 200)
    assert agent.recommend() == 0


def test_challenger_maximises_the_upper_bound_against_the_champion():
    agent = RCS(5, seed=6)
    rng = np.random.default_rng(1)
    for _ in range(300):
        first, second = agent.act()
        agent.observe((first, second), bool(rng.random() < 0.5))
    wins = agent.wins.copy()
    t = int(wins.sum())
    totals = wins + wins.T
    for _ in range(50):
        champion, challenger = agent.act()
        upper = np.array([wins[j, champion] / totals[j, champion] + math.sqrt(0.51 * math.log(t + 1) / totals[j, champion])
                          if j != champion else 0.5 for j in range(5)])
        assert upper[challenger] == pytest.approx(upper.max())


@pytest.mark.parametrize("problem", CONDORCET_PROBLEMS)
def test_finds_the_condorcet_winner_with_logarithmic_regret(problem):
    assert_finds_condorcet_winner_with_sublinear_regret(lambda n_arms: RCS(n_arms), problem)


def test_linear_copeland_regret_without_a_condorcet_winner():
    # MultiSol: the sampled matrices rarely have a Condorcet winner, the least-chosen rule then
    # cycles through every arm, including the two Copeland losers.
    assert_linear_regret_without_condorcet_winner(lambda n_arms: RCS(n_arms))


def test_registry_hyperparameters_and_reset():
    agent = assert_registered("rcs", RCS, 5, {"alpha": 0.8}, alpha=0.8)
    assert "alpha=0.8" in repr(agent)
    assert_reset_replays(agent, 20)
    assert agent.champion_turns.sum() == 20


test_bad_hyperparameters_raise = refusal_test(
    (lambda: RCS(5, alpha=0.5), ValueError),
    (lambda: RCS(5, alpha=float("nan")), ValueError),
    (lambda: RCS(5, alpha="0.51"), TypeError),
    (lambda: RCS(1), ValueError),
    (lambda: make_agent("rcs", 5, beta=1.0), TypeError),
)


def test_observe_validates_the_action():
    assert_observe_validates_the_action(RCS(4))
