"""Versatile-DB (Saha & Gaillard, ICML 2022): loop equivalence, the Tsallis-INF step, the
importance-weighted estimates, and the paper's best-of-both-worlds claims."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_checks import assert_registered, assert_reset_replays, refusal_test
from agent_helpers import assert_paths_agree
from condorcet_behaviour import CONDORCET_PROBLEMS, assert_finds_condorcet_winner_with_sublinear_regret
from dueling_gym.agents import VersatileDB, make_agent
from dueling_gym.agents.versatile_db import tsallis_inf_weights


@pytest.mark.parametrize(("problem", "n_arms"), [("sushi", 16), ("multisol", 5)])
def test_fused_act_observe_and_gym_paths_agree(problem, n_arms):
    assert_paths_agree(lambda: VersatileDB(n_arms), problem, 3000, seed=5)


def _ftrl_by_bisection(losses: np.ndarray, eta: float) -> np.ndarray:
    """argmin over the simplex of <L, x> - (4/eta) sum sqrt(x_i), by bisection on the normaliser."""
    low, high = losses.min() - 2.0 * math.sqrt(len(losses)) / eta - 1.0, losses.min() - 1e-300
    for _ in range(200):
        middle = 0.5 * (low + high)
        total = np.sum(4.0 / (eta * (losses - middle)) ** 2)
        low, high = (middle, high) if total < 1.0 else (low, middle)
    weights = 4.0 / (eta * (losses - 0.5 * (low + high))) ** 2
    return weights / weights.sum()


@pytest.mark.parametrize("seed", range(5))
def test_tsallis_step_solves_the_ftrl_problem(seed):
    rng = np.random.default_rng(seed)
    n_arms = int(rng.integers(2, 40))
    losses = rng.exponential(50.0, size=n_arms) * rng.integers(0, 2, size=n_arms)
    eta = 2.0 / math.sqrt(rng.integers(1, 10**6))
    weights = np.empty(n_arms)
    tsallis_inf_weights(losses, eta, weights)
    assert weights.sum() == pytest.approx(1.0, abs=1e-12) and np.all(weights > 0)
    np.testing.assert_allclose(weights, _ftrl_by_bisection(losses, eta), rtol=1e-7)
    # KKT: L_i - 2 / (eta sqrt(x_i)) is the same for every arm (the multiplier of sum x = 1).
    stationarity = losses - 2.0 / (eta * np.sqrt(weights))
    assert np.ptp(stationarity) < 1e-6 * (1.0 + np.abs(stationarity).max())
    # Smaller loss, larger weight; equal losses, equal weights (uniform at the start).
    assert np.all(np.diff(weights[np.argsort(losses)]) <= 1e-15)
    tsallis_inf_weights(np.zeros(n_arms), eta, weights)
    np.testing.assert_allclose(weights, 1.0 / n_arms)


def test_importance_weighted_losses_by_hand():
    agent = VersatileDB(4, seed=0)
    first, second = agent.act()
    left, right = agent.left_weights.copy(), agent.right_weights.copy()
    np.testing.assert_allclose(left, 0.25)
    agent.observe((first, second), False)  # the left arm lost: loss 1 / x^+ for it, 0 for the right learner
    expected = np.zeros(4)
    expected[first] = 1.0 / left[first]
    np.testing.assert_allclose(agent.left_losses, expected)
    np.testing.assert_array_equal(agent.right_losses, 0.0)
    agent.observe((2, 3), True)  # a duel the agent did not ask for still counts, with duel 2's weights
    eta = 2.0 / math.sqrt(2.0)
    weights = np.empty(4)
    tsallis_inf_weights(np.zeros(4), eta, weights)
    assert agent.right_losses[3] == pytest.approx(1.0 / weights[3])
    assert agent.recommend() not in (first, 3)


def test_estimates_are_unbiased():
    # E[l_hat^+_i] = x^+_i * P(i loses against k^-) / x^+_i = sum_j x^-_j P[j, i]: the loss of the
    # reduction's bandit game, for every arm at once.
    preferences = np.array([[0.5, 0.7, 0.8], [0.3, 0.5, 0.6], [0.2, 0.4, 0.5]])
    history = [((0, 1), True), ((0, 1), True), ((2, 1), True), ((0, 2), True), ((1, 0), False)] * 2

    def replayed(seed):
        agent = VersatileDB(3, seed=seed)
        for duel, first_won in history:  # observe draws nothing: every copy is in the same state
            agent.observe(duel, first_won)
        return agent

    start = replayed(0).left_losses.copy()
    rng = np.random.default_rng(3)
    n_draws = 20_000
    total = np.zeros(3)
    for seed in range(n_draws):
        agent = replayed(seed)
        first, second = agent.act()
        agent.observe((first, second), bool(rng.random() < preferences[first, second]))
        total += agent.left_losses - start
    assert np.ptp(agent.right_weights) > 0.05  # a non-uniform opponent
    expected = agent.right_weights @ preferences  # expected[i] = sum_j x^-_j P[j, i]
    np.testing.assert_allclose(total / n_draws, expected, rtol=0.06)


@pytest.mark.parametrize("problem", CONDORCET_PROBLEMS)
def test_logarithmic_regret_against_the_condorcet_winner(problem):
    # The stochastic half of the best-of-both-worlds result: O(sum_i log T / Delta_i).
    assert_finds_condorcet_winner_with_sublinear_regret(lambda n_arms: VersatileDB(n_arms), problem)


def _adversarial_regret(agent_factory, horizon: int, seed: int) -> float:
    """Average regret against arm 0 on a sequence of matrices that switch every 50 duels.

    Arm 0 beats every arm with probability 0.6 in every matrix (the Condorcet winner of the whole
    sequence); among the others the order flips from one block to the next, so that every other arm
    is the runner-up half of the time.
    """
    n_arms = 5
    ascending = np.full((n_arms, n_arms), 0.5)
    for i in range(1, n_arms):
        for j in range(1, n_arms):
            ascending[i, j] = 0.5 + 0.4 * np.sign(i - j)
    ascending[0, 1:], ascending[1:, 0] = 0.6, 0.4
    descending = ascending.copy()
    descending[1:, 1:] = ascending[1:, 1:].T
    agent = agent_factory(n_arms)
    agent.reset(seed=seed)
    rng = np.random.default_rng(seed + 1000)
    regret = 0.0
    for t in range(horizon):
        matrix = ascending if (t // 50) % 2 == 0 else descending
        first, second = agent.act()
        regret += 0.5 * (matrix[0, first] - 0.5 + matrix[0, second] - 0.5)
        agent.observe((first, second), bool(rng.random() < matrix[first, second]))
    return regret


def test_square_root_regret_against_adversarial_preferences():
    # The adversarial half: regret O(sqrt(K T)) against the Condorcet winner of the sequence
    # (each Tsallis-INF learner's bound 4 sqrt(K T) + 1 with importance-weighted estimates).
    horizon = 20_000
    for seed in range(2):
        regret = _adversarial_regret(lambda n: VersatileDB(n), horizon, seed)
        assert regret <= 4.0 * math.sqrt(5 * horizon) + 1.0, regret
    short = np.mean([_adversarial_regret(lambda n: VersatileDB(n), horizon // 4, seed) for seed in range(2)])
    long = np.mean([_adversarial_regret(lambda n: VersatileDB(n), horizon, seed) for seed in range(2)])
    assert long < 2.5 * short  # sublinear: 4x the duels, about 2x the regret or less


def test_registry_hyperparameters_and_reset():
    agent = assert_registered("versatile_db", VersatileDB, 6, {"learning_rate": 1.0}, learning_rate=1.0)
    assert_reset_replays(agent, 5)


test_bad_hyperparameters_raise = refusal_test(
    (lambda: VersatileDB(5, learning_rate=0.0), ValueError),
    (lambda: VersatileDB(5, learning_rate=float("inf")), ValueError),
    (lambda: VersatileDB(5, learning_rate="2"), TypeError),
    (lambda: VersatileDB(1), ValueError),
    (lambda: make_agent("versatile_db", 5, eta=1.0), TypeError),
)
