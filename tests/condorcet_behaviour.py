"""Behaviour checks shared by the tests of the Condorcet dueling-bandit agents.

Each check runs an agent on the shipped matrices through :func:`simulate` and tests a claim
the Condorcet papers make: the Condorcet winner is found with regret growing like ``ln T``, and
without a Condorcet winner the Copeland regret grows linearly.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from dueling_gym.experiments import simulate
from dueling_gym.problems import load_problem

#: The shipped matrices with a Condorcet winner (arm 0 in all of them).
CONDORCET_PROBLEMS = ("sushi", "arxiv", "mslr5-condorcet", "cyclic4")


def regret_at(make_agent: Callable[[int], object], problem_name: str, horizon: int, seeds,
              checkpoints) -> tuple[np.ndarray, np.ndarray]:
    """Copeland regret at ``checkpoints`` (one row per seed) and the recommendation at the end."""
    problem = load_problem(problem_name)
    regrets, recommendations = [], []
    for seed in seeds:
        result = simulate(make_agent(problem.n_arms), problem, horizon, seed=seed, checkpoints=checkpoints)
        regrets.append(result.cumulative_regret["copeland_komiyama"])
        recommendations.append(result.recommendations[-1])
    return np.array(regrets), np.array(recommendations)


def assert_finds_condorcet_winner_with_sublinear_regret(make_agent, problem_name: str, short: int = 3000,
                                                        seeds=range(5), max_growth: float = 4.0) -> np.ndarray:
    """Regret from ``short`` to ``10 * short`` duels grows by far less than 10x, and the winner is recommended.

    Returns the regret at ``10 * short`` per seed.
    """
    problem = load_problem(problem_name)
    winner = problem.condorcet_winner
    assert winner is not None
    regrets, recommendations = regret_at(make_agent, problem_name, 10 * short, seeds, [short, 10 * short])
    assert np.sum(recommendations == winner) >= len(recommendations) - 1, recommendations
    growth = regrets[:, 1].sum() / regrets[:, 0].sum()
    assert growth < max_growth, (problem_name, growth, regrets)
    # ... and far below what uniformly random duels pay.
    random_regret = 10 * short * problem.expected_random_regret("copeland_komiyama")
    assert np.all(regrets[:, 1] < 0.35 * random_regret), regrets
    return regrets[:, 1]


def assert_linear_regret_without_condorcet_winner(make_agent, problem_name: str = "multisol", short: int = 2000,
                                                  seeds=range(3), min_rate: float = 0.05) -> None:
    """Without a Condorcet winner the Copeland regret keeps growing at a constant rate."""
    assert load_problem(problem_name).condorcet_winner is None
    regrets, _ = regret_at(make_agent, problem_name, 10 * short, seeds, [short, 5 * short, 10 * short])
    late_rate = (regrets[:, 2] - regrets[:, 1]) / (5 * short)
    assert np.all(late_rate > min_rate), late_rate
    assert regrets[:, 2].sum() / regrets[:, 0].sum() > 7.0, regrets
