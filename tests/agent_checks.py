"""Checks and hand-built inputs shared by the tests of single agents.

Bradley-Terry problems and win matrices built by hand, driving an agent to a given win matrix,
the reference posterior samples of Thompson-sampling agents, and the checks every agent's test
file makes of its loops, its registration, its reset and its validation.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import pytest

from agent_helpers import assert_paths_agree
from dueling_gym.agents import make_agent
from dueling_gym.problems import PreferenceMatrix, load_problem


def assert_paths_agree_on(problem_name: str, make: Callable[[int], object], horizon: int, seed: int):
    """:func:`agent_helpers.assert_paths_agree` on a shipped problem, for ``make(n_arms)`` of its size."""
    n_arms = load_problem(problem_name).n_arms
    return assert_paths_agree(lambda: make(n_arms), problem_name, horizon, seed=seed)


def bradley_terry(utilities) -> PreferenceMatrix:
    """The Bradley-Terry matrix ``P[i, j] = 1 / (1 + exp(-(u_i - u_j)))`` of ``utilities``.

    A total order with strong stochastic transitivity and the stochastic triangle inequality;
    the lower triangle is the exact complement of the upper one.
    """
    utilities = np.asarray(utilities, dtype=float)
    matrix = 1.0 / (1.0 + np.exp(-(utilities[:, None] - utilities[None, :])))
    np.fill_diagonal(matrix, 0.5)
    return PreferenceMatrix.from_upper_triangle(matrix, name="bt")


def leader_wins(n_arms: int, won: int, lost: int) -> np.ndarray:
    """A win matrix in which arm 0 beat every other arm ``won`` times and lost to it ``lost`` times.

    The other pairs have not been played.
    """
    wins = np.zeros((n_arms, n_arms), dtype=np.int64)
    wins[0, 1:] = won
    wins[1:, 0] = lost
    return wins


def feed_wins(agent, wins: np.ndarray) -> None:
    """Drive ``agent`` through ``observe`` so that its win matrix becomes ``wins``."""
    for i, j in zip(*np.nonzero(wins)):
        for _ in range(wins[i, j]):
            agent.observe((i, j), True)
    np.testing.assert_array_equal(agent.wins, wins)


def assert_self_duels_arm_zero(agent, wins: np.ndarray, steps: int) -> None:
    """Fed ``wins``, ``agent`` asks ``steps`` times for arm 0's self-duel, which teaches it nothing."""
    feed_wins(agent, wins)
    assert all(agent.act() == (0, 0) for _ in range(steps))
    agent.observe((0, 0), True)
    np.testing.assert_array_equal(agent.wins, wins)


def optimistic_candidates(wins: np.ndarray, alpha: float, t: int) -> np.ndarray:
    """The arms whose optimistic Copeland score is the highest, as a boolean mask.

    The upper bound of ``P[i, j]`` is ``W_ij / N_ij + sqrt(alpha ln(t + 1) / N_ij)``, and 1 for
    a pair never played (the RUCB bound of Zoghi et al., ICML 2014, which D-TS and D-TS+ use).
    """
    totals = wins + wins.T
    means = np.divide(wins, totals, out=np.full(wins.shape, 0.5), where=totals > 0)
    upper = np.where(totals > 0, means + np.sqrt(alpha * math.log(t + 1) / np.maximum(totals, 1)), 1.0)
    np.fill_diagonal(upper, 0.5)
    counts = (upper >= 0.5).sum(axis=1) - 1
    return counts == counts.max()


def beta_sampled_matrices(wins: np.ndarray, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """``n_samples`` preference matrices with every ``theta_ij ~ Beta(W_ij + 1, W_ji + 1)`` drawn (i < j).

    ``theta_ji = 1 - theta_ij`` and the diagonal is 1/2: the posterior samples that Thompson-sampling
    dueling agents (RCS, D-TS, D-TS+) draw, written out in full as a reference.
    """
    n_arms = wins.shape[0]
    theta = np.full((n_samples, n_arms, n_arms), 0.5)
    for i in range(n_arms):
        for j in range(i + 1, n_arms):
            theta[:, i, j] = rng.beta(wins[i, j] + 1, wins[j, i] + 1, size=n_samples)
            theta[:, j, i] = 1 - theta[:, i, j]
    return theta


def assert_registered(name: str, cls: type, n_arms: int, hyperparameters: dict, **options):
    """``make_agent(name, n_arms, seed=0, **options)`` builds a ``cls`` named ``name`` with ``hyperparameters``.

    Returns the agent.
    """
    agent = make_agent(name, n_arms, seed=0, **options)
    assert isinstance(agent, cls) and agent.name == name
    assert agent.hyperparameters == hyperparameters
    return agent


def assert_reset_replays(agent, steps: int) -> None:
    """After ``reset(seed=0)`` a seed-0 ``agent`` asks for the same first ``steps`` duels again."""
    first = [agent.act() for _ in range(steps)]
    agent.reset(seed=0)
    assert [agent.act() for _ in range(steps)] == first


def assert_observe_validates_the_action(agent) -> None:
    """A four-armed ``agent`` refuses an arm out of range (ValueError) and a lone arm (TypeError)."""
    with pytest.raises(ValueError):
        agent.observe((0, 4), True)
    with pytest.raises(TypeError):
        agent.observe(0, True)


def refusal_test(*cases: tuple[Callable[[], object], type[Exception]]):
    """A test, parametrised over ``(factory, error)`` cases, that each ``factory()`` raises its ``error``.

    Assign it to a module-level name starting with ``test_`` for pytest to collect it.
    """

    @pytest.mark.parametrize(("factory", "error"), cases)
    def test_refused(factory, error):
        with pytest.raises(error):
            factory()

    return test_refused
