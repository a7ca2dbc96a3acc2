"""RMED1 (Komiyama et al., COLT 2015) and DTS (Wu and Liu, NIPS 2016): loop equivalence, behaviour
on the shipped problems, the algorithms' distinctive rules and hyperparameter validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_checks import (
    assert_observe_validates_the_action,
    assert_self_duels_arm_zero,
    beta_sampled_matrices,
    feed_wins,
    leader_wins,
    optimistic_candidates,
    refusal_test,
)
from agent_helpers import assert_paths_agree
from dueling_gym.agents import make_agent
from dueling_gym.agents.dts import DTS
from dueling_gym.agents.rmed import RMED1
from dueling_gym.experiments import simulate
from dueling_gym.problems import load_problem
from dueling_gym.stats import kl_bernoulli

AGENTS = {"rmed1": RMED1, "dts": DTS}
HORIZON = 20_000
SEEDS = range(5)


def _runs(name: str, problem: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Recommendations at T, regret over the first half and over the second half (5 seeds)."""
    n_arms = load_problem(problem).n_arms
    recommendations, first_half, second_half = [], [], []
    for seed in SEEDS:
        result = simulate(make_agent(name, n_arms), problem, HORIZON, seed=seed, checkpoints=[HORIZON // 2, HORIZON])
        half, total = result.cumulative_regret["copeland_komiyama"]
        recommendations.append(result.recommendations[-1])
        first_half.append(half)
        second_half.append(total - half)
    return np.array(recommendations), np.array(first_half), np.array(second_half)


# ---------------------------------------------------------------------------------------------
# The three loops agree duel for duel
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(AGENTS))
@pytest.mark.parametrize("problem", ["sushi", "multisol"])
def test_fused_generic_and_gym_loops_are_identical(name, problem):
    horizon, seed = 2000, 5
    n_arms = load_problem(problem).n_arms
    assert_paths_agree(lambda: make_agent(name, n_arms), problem, horizon, seed)


def test_reset_with_the_same_seed_replays_the_run():
    for name in AGENTS:
        agent = make_agent(name, 5)
        first = simulate(agent, "multisol", 1500, seed=3, record_duels=True)
        second = simulate(agent, "multisol", 1500, seed=3, record_duels=True)  # same object, reset inside
        np.testing.assert_array_equal(first.duels, second.duels)


# ---------------------------------------------------------------------------------------------
# Behaviour on the shipped problems
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(AGENTS))
@pytest.mark.parametrize("problem", ["sushi", "mslr5-condorcet"])
def test_finds_the_condorcet_winner_with_sublinear_regret(name, problem):
    instance = load_problem(problem)
    assert instance.condorcet_winner == 0
    recommendations, first_half, second_half = _runs(name, problem)
    assert np.sum(recommendations == 0) >= 4, recommendations
    random_regret = HORIZON * instance.expected_random_regret("copeland_komiyama")
    total = first_half + second_half
    assert np.all(total < 0.25 * random_regret), total
    assert total.mean() < 0.15 * random_regret, total
    # Sublinear growth: the second half of the horizon adds much less than the first.
    assert second_half.sum() < 0.6 * first_half.sum(), (first_half, second_half)


def test_rmed1_pays_linear_copeland_regret_without_a_condorcet_winner():
    problem = load_problem("multisol")
    assert problem.condorcet_winner is None
    # Without a Condorcet winner the Copeland winners' divergences I_i grow linearly, so every
    # arm keeps re-entering the loops: each loop has every arm once; a winner duels its superior
    # (another winner, no regret), a non-winner duels i_hat*, a winner.  Predicted regret per step:
    regret = problem.regret_matrix("copeland_komiyama")
    winners = problem.copeland_winners
    losers = [arm for arm in range(problem.n_arms) if arm not in winners]
    predicted = sum(regret[arm, winners].mean() for arm in losers) / problem.n_arms
    assert predicted == pytest.approx(0.125)  # (0.25 + 0.375) / 5 on MultiSol
    recommendations, first_half, second_half = _runs("rmed1", "multisol")
    per_step = second_half / (HORIZON // 2)
    assert np.all(per_step > 0.5 * predicted), per_step
    # ... whereas DTS, a Copeland algorithm, stops paying (checked below): the contrast is real.


def test_dts_finds_a_copeland_winner_without_a_condorcet_winner():
    problem = load_problem("multisol")
    recommendations, first_half, second_half = _runs("dts", "multisol")
    assert np.sum(np.isin(recommendations, problem.copeland_winners)) >= 4, recommendations
    random_regret = HORIZON * problem.expected_random_regret("copeland_komiyama")
    assert np.all(first_half + second_half < 0.1 * random_regret)
    assert np.all(second_half / (HORIZON // 2) < 0.01)


# ---------------------------------------------------------------------------------------------
# RMED1 rules
# ---------------------------------------------------------------------------------------------
def test_rmed1_initial_phase_and_first_loop_order():
    n_arms = 6
    result = simulate(RMED1(n_arms, initial_draws=2), "arxiv", 200, seed=1, record_duels=True)
    pairs = np.array([(i, j) for i in range(n_arms) for j in range(i + 1, n_arms)])
    n_pairs = len(pairs)
    # L0 = 2 rounds over all pairs i < j in lexicographic order ...
    np.testing.assert_array_equal(result.duels[:n_pairs], pairs)
    np.testing.assert_array_equal(result.duels[n_pairs:2 * n_pairs], pairs)
    # ... then the first loop L_C = [0, ..., K-1] in ascending order, each arm as first arm.
    np.testing.assert_array_equal(result.duels[2 * n_pairs:2 * n_pairs + n_arms, 0], np.arange(n_arms))


def test_rmed1_opponent_rule_self_duel_and_loop_exclusion():
    agent = RMED1(3, initial_draws=20, seed=0)
    # Initial phase: the first arm always wins, so 0 beats 1 and 2, and 1 beats 2 (20 times each).
    for _ in range(60):
        first, second = agent.act()
        assert first < second
        agent.observe((first, second), True)
    np.testing.assert_allclose(agent.empirical_divergence, [0.0, 20 * math.log(2), 40 * math.log(2)])
    # First loop [0, 1, 2]: O_hat_0 is empty and 0 = i_hat*, so (0, 0) is exploitation; 1 and 2
    # have i_hat* = 0 among their opponents (mu_hat <= 1/2) and duel it.
    assert agent.act() == (0, 0)
    agent.observe((0, 0), True)
    assert agent.act() == (1, 0)
    agent.observe((1, 0), False)
    assert agent.act() == (2, 0)
    agent.observe((2, 0), False)
    # I_1, I_2 exceed ln t + f(K) (about 4.2 + 0.91), so the next loops hold arm 0 only.
    assert agent.f_value == pytest.approx(0.3 * 3 ** 1.01)
    for _ in range(20):
        assert agent.act() == (0, 0)
        agent.observe((0, 0), True)
    assert agent.recommend() == 0
    # Self-duels are not recorded.
    assert agent.wins.sum() == 62


def test_rmed1_opponent_is_the_arm_beating_l_most_when_i_star_does_not():
    agent = RMED1(3, seed=0)
    # Arm 1 beats 0 and 2 in the initial round, 2 beats 0: I = [2 ln 2, 0, ln 2], i_hat* = 1.
    for (first, second), first_won in zip([(0, 1), (0, 2), (1, 2)], [False, False, True]):
        assert agent.act() == (first, second)
        agent.observe((first, second), first_won)
    assert agent.recommend() == 1
    # l = 0: O_hat_0 = {1, 2} and i_hat* = 1 is in it.
    assert agent.act() == (0, 1)
    agent.observe((0, 1), True)  # now mu_hat_01 = 1/2, I_0 = ln 2 = I_2: i_hat* is 1 still
    # l = 1: O_hat_1 = {0} (mu_hat_10 = 1/2 <= 1/2), i_hat* = 1 = l is not in it: m = argmin = 0.
    assert agent.act() == (1, 0)


def test_rmed1_divergences_match_a_fresh_computation():
    agent = RMED1(16)
    simulate(agent, "sushi", 5000, seed=2)
    wins = agent.wins
    totals = wins + wins.T
    means = np.divide(wins, totals, out=np.full(wins.shape, 0.5), where=totals > 0)
    expected = np.where(means < 0.5, totals * kl_bernoulli(means, np.full(wins.shape, 0.5)), 0.0).sum(axis=1)
    np.testing.assert_allclose(agent.empirical_divergence, expected, rtol=1e-12, atol=1e-12)
    assert agent.recommend() == int(np.argmin(expected))


# ---------------------------------------------------------------------------------------------
# DTS rules
# ---------------------------------------------------------------------------------------------
def test_dts_first_arm_has_the_law_of_the_full_first_sample():
    """The lazily drawn first sample gives the same law of a1 as drawing every theta_ij."""
    wins = np.array([[0, 6, 3, 4], [4, 0, 6, 2], [5, 3, 0, 7], [4, 6, 2, 0]])
    agent = DTS(4, seed=1)
    feed_wins(agent, wins)
    assert optimistic_candidates(wins, 0.51, int(wins.sum())).all()
    n_draws = 20_000
    firsts = np.array([agent.act()[0] for _ in range(n_draws)])
    observed = np.bincount(firsts, minlength=4) / n_draws
    # Reference: Algorithm 1 of Wu and Liu (2016), lines 7-9, literally: every theta_ij (i < j)
    # drawn, random ties.
    theta = beta_sampled_matrices(wins, 200_000, np.random.default_rng(0))
    votes = (theta > 0.5).sum(axis=2)
    maxima = votes == votes.max(axis=1, keepdims=True)
    reference = (maxima / maxima.sum(axis=1, keepdims=True)).mean(axis=0)
    assert reference.min() > 0.1  # a non-trivial law
    np.testing.assert_allclose(observed, reference, atol=0.02)


def test_dts_first_arm_is_an_optimistic_copeland_candidate():
    # Arm 3 is clearly beaten by 0 and 1: its optimistic count is below the others'.
    wins = np.array([[0, 10, 8, 60], [9, 0, 10, 60], [11, 9, 0, 30], [2, 1, 25, 0]])
    agent = DTS(4, seed=2)
    feed_wins(agent, wins)
    candidates = np.flatnonzero(optimistic_candidates(wins, agent.alpha, int(wins.sum())))
    assert 3 not in candidates
    firsts = {agent.act()[0] for _ in range(500)}
    assert firsts <= set(candidates.tolist())
    assert len(firsts) > 1


def test_dts_self_duel_when_no_arm_plausibly_beats_the_first():
    agent = DTS(4, seed=3)
    assert_self_duels_arm_zero(agent, leader_wins(4, 400, 100), 200)
    assert agent.recommend() == 0


def test_dts_second_arm_excludes_arms_known_to_beat_the_first():
    # A clear 3-cycle: 0 beats 1, 1 beats 2, 2 beats 0 (300 to 100 each, so l = 0.75 - 0.09 > 1/2).
    # Every arm is an optimistic candidate and wins one vote, so a1 is uniform; the arm that
    # beats a1 has l_{i,a1} > 1/2 and is excluded, the arm a1 beats samples theta' < 1/2:
    # the second arm is a1 itself.  Without the filter it would be a1's superior.
    wins = np.array([[0, 300, 100], [100, 0, 300], [300, 100, 0]])
    agent = DTS(3, seed=4)
    feed_wins(agent, wins)
    duels = [agent.act() for _ in range(300)]
    assert all(first == second for first, second in duels)
    assert {first for first, _ in duels} == {0, 1, 2}


# ---------------------------------------------------------------------------------------------
# Registry, hyperparameters, validation
# ---------------------------------------------------------------------------------------------
def test_registry_and_hyperparameters():
    rmed = make_agent("rmed1", 5, seed=0, f_scale=0.5)
    assert isinstance(rmed, RMED1) and rmed.name == "rmed1"
    assert rmed.hyperparameters == {"f_scale": 0.5, "f_exponent": 1.01, "initial_draws": 1}
    assert rmed.f_value == pytest.approx(0.5 * 5 ** 1.01)
    assert RMED1(5).f_value == pytest.approx(1.524336887)  # f(K) = 0.3 K^1.01 (paper's experiments)
    dts = make_agent("DTS", 5, seed=0)
    assert isinstance(dts, DTS) and dts.name == "dts"
    assert dts.hyperparameters == {"alpha": 0.51}
    assert "alpha=0.51" in repr(dts) and "f_scale=0.3" in repr(RMED1(4))
    for agent in (rmed, dts):
        assert 0 <= agent.recommend() < 5


test_bad_hyperparameters_raise = refusal_test(
    (lambda: RMED1(5, f_scale=-0.1), ValueError),
    (lambda: RMED1(5, f_scale="0.3"), TypeError),
    (lambda: RMED1(5, f_exponent=float("nan")), ValueError),
    (lambda: RMED1(5, f_exponent=None), TypeError),
    (lambda: RMED1(5, initial_draws=0), ValueError),
    (lambda: RMED1(5, initial_draws=1.5), TypeError),
    (lambda: RMED1(5, initial_draws=True), TypeError),
    (lambda: RMED1(1), ValueError),
    (lambda: RMED1(2.0), TypeError),
    (lambda: DTS(5, alpha=0.5), ValueError),
    (lambda: DTS(5, alpha=0.2), ValueError),
    (lambda: DTS(5, alpha=float("inf")), ValueError),
    (lambda: DTS(5, alpha="0.51"), TypeError),
    (lambda: DTS(1), ValueError),
    (lambda: make_agent("dts", 5, beta=1.0), TypeError),
    (lambda: make_agent("rmed1", 5, alpha=0.51), TypeError),
)


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_observe_validates_the_action(name):
    assert_observe_validates_the_action(make_agent(name, 4))
