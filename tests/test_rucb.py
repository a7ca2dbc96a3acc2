"""RUCB behaviour against the oracle facts (Zoghi et al. 2014)."""

from __future__ import annotations

import numpy as np
import pytest

from dueling_gym.agents import RUCB
from dueling_gym.experiments import simulate
from dueling_gym.problems import load_problem

HORIZON = 20_000
SEEDS = range(5)


@pytest.mark.parametrize("name", ["sushi", "mslr5-condorcet", "cyclic4"])
def test_finds_the_condorcet_winner_with_sublinear_regret(name):
    problem = load_problem(name)
    random_regret = problem.expected_random_regret("copeland_komiyama") * HORIZON
    found = 0
    for seed in SEEDS:
        result = simulate(RUCB(problem.n_arms), problem, HORIZON, seed=seed, checkpoints=[HORIZON // 2, HORIZON])
        first_half, total = result.cumulative_regret["copeland_komiyama"]
        found += result.recommendations[-1] == problem.condorcet_winner
        assert total < 0.25 * random_regret
        # Sublinear: the second half costs far less than the first.
        assert total - first_half < 0.5 * first_half
    assert found >= 4


def test_linear_copeland_regret_without_a_condorcet_winner():
    # MultiSol has three Copeland winners in a cycle and no Condorcet winner: every arm is
    # eventually beaten, RUCB's candidate set empties and it keeps choosing losers.
    problem = load_problem("multisol")
    for seed in range(3):
        result = simulate(RUCB(5), problem, HORIZON, seed=seed, checkpoints=[HORIZON // 2, HORIZON])
        first_half, total = result.cumulative_regret["copeland_komiyama"]
        assert (total - first_half) / (HORIZON // 2) > 0.08  # random pays 0.25 per duel


def test_exploits_with_self_duels_once_confident():
    result = simulate(RUCB(5), "mslr5-condorcet", HORIZON, seed=0, record_duels=True)
    last = result.duels[-2000:]
    assert np.mean((last[:, 0] == 0) & (last[:, 1] == 0)) > 0.8


def test_arxiv_variant_without_hypothesis_also_learns():
    result = simulate(RUCB(16, use_hypothesis=False), "sushi", HORIZON, seed=0)
    assert result.recommendations[-1] == 0
    assert "use_hypothesis=False" in repr(RUCB(16, use_hypothesis=False))


@pytest.mark.parametrize("alpha", [0.5, 0.3, -1.0, float("nan")])
def test_alpha_must_exceed_one_half(alpha):
    with pytest.raises(ValueError, match="alpha"):
        RUCB(5, alpha=alpha)


def test_alpha_type_checked():
    with pytest.raises(TypeError, match="alpha"):
        RUCB(5, alpha="big")
