"""D-TS+ (Wu and Liu, NIPS 2016): loop equivalence, the law of the tie-broken first candidate,
behaviour on the shipped problems and validation."""

from __future__ import annotations


import numpy as np
import pytest

from agent_checks import (
    assert_paths_agree_on,
    assert_registered,
    beta_sampled_matrices,
    feed_wins,
    leader_wins,
    optimistic_candidates,
    refusal_test,
)
from condorcet_behaviour import CONDORCET_PROBLEMS, assert_finds_condorcet_winner_with_sublinear_regret, regret_at
from dueling_gym.agents import DTS, DTSPlus, make_agent
from dueling_gym.problems import load_problem
from dueling_gym.stats import kl_bernoulli

# Every arm is an optimistic Copeland candidate (no upper bound is below 1/2 at t = 99), sampled
# Copeland scores tie often, and the pairs are unequally informative (0 vs 2 is far from 1/2,
# 0 vs 1 and 2 vs 3 are close to it), so breaking ties by R_i differs visibly from random ties.
WINS = np.array([[0, 20, 2, 6], [18, 0, 3, 6], [12, 10, 0, 6], [5, 6, 5, 0]])


def _reference_first_arm_law(wins: np.ndarray, candidates: np.ndarray, n_samples: int, rng) -> np.ndarray:
    """Step 3 of D-TS+ written out with every theta_ij drawn: most sampled wins among C, ties
    broken by the least R_i = sum_j (2 zeta* - zeta_i - zeta_j) / d(theta_ij, 1/2)."""
    n_arms = wins.shape[0]
    theta = beta_sampled_matrices(wins, n_samples, rng)
    votes = (theta > 0.5).sum(axis=2)
    top = np.where(candidates, votes, -1).max(axis=1)
    tied = candidates & (votes == top[:, None])
    divergence = kl_bernoulli(theta, np.full(theta.shape, 0.5))
    gaps = 2 * top[:, None, None] - votes[:, :, None] - votes[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(theta != 0.5, gaps / divergence, 0.0)
    regret = np.where(tied, terms.sum(axis=2), np.inf)
    firsts = regret.argmin(axis=1)
    return np.bincount(firsts, minlength=n_arms) / n_samples


@pytest.mark.parametrize("problem", ["sushi", "multisol"])
def test_fused_generic_and_gym_loops_are_identical(problem):
    assert_paths_agree_on(problem, DTSPlus, 1500, seed=13)


def test_first_arm_has_the_law_of_the_tie_broken_sample():
    agent = DTSPlus(4, seed=1)
    feed_wins(agent, WINS)
    candidates = optimistic_candidates(WINS, agent.alpha, int(WINS.sum()))
    assert candidates.all()
    n_draws = 20_000
    firsts = np.array([agent.act()[0] for _ in range(n_draws)])
    observed = np.bincount(firsts, minlength=4) / n_draws
    reference = _reference_first_arm_law(WINS, candidates, 200_000, np.random.default_rng(0))
    np.testing.assert_allclose(observed, reference, atol=0.015)
    # The tie-breaking matters: D-TS (random ties) has a different law on the same statistics.
    dts = DTS(4, seed=1)
    feed_wins(dts, WINS)
    dts_law = np.bincount([dts.act()[0] for _ in range(n_draws)], minlength=4) / n_draws
    assert np.abs(dts_law - reference).max() > 0.07


def test_single_candidate_draws_no_first_sample():
    # Arm 0 beats everyone clearly, so C = {0}; only the second sample (of the arms that may
    # still beat 0) is drawn.
    wins = leader_wins(3, 300, 100)
    wins[1, 2] = wins[2, 1] = 50
    agent = DTSPlus(3, seed=2)
    feed_wins(agent, wins)
    assert all(agent.act() == (0, 0) for _ in range(100))


@pytest.mark.parametrize("problem", CONDORCET_PROBLEMS)
def test_finds_the_condorcet_winner_with_logarithmic_regret(problem):
    assert_finds_condorcet_winner_with_sublinear_regret(lambda n_arms: DTSPlus(n_arms), problem)


def test_finds_a_copeland_winner_without_a_condorcet_winner():
    # Like D-TS, D-TS+ targets Copeland winners: on MultiSol its regret stops growing.
    problem = load_problem("multisol")
    regrets, recommendations = regret_at(lambda n_arms: DTSPlus(n_arms), "multisol", 20_000, range(3),
                                         [2000, 10_000, 20_000])
    assert np.all(np.isin(recommendations, problem.copeland_winners))
    assert np.all((regrets[:, 2] - regrets[:, 1]) / 10_000 < 0.01), regrets


def test_registry_and_hyperparameters():
    agent = assert_registered("dts_plus", DTSPlus, 5, {"alpha": 0.6}, alpha=0.6)
    assert repr(agent) == "DTSPlus(n_arms=5, alpha=0.6, seed=0)"
    assert make_agent("dts", 5).name == "dts"  # the D-TS registration is untouched


test_bad_hyperparameters_raise = refusal_test(
    (lambda: DTSPlus(5, alpha=0.5), ValueError),
    (lambda: DTSPlus(5, alpha="0.51"), TypeError),
    (lambda: DTSPlus(1), ValueError),
    (lambda: make_agent("dts_plus", 5, beta=1.0), TypeError),
)
