"""Interleaved Filter 2 (Yue, Broder, Kleinberg & Joachims, JCSS 2012)."""

from __future__ import annotations

import numpy as np
import pytest

from agent_checks import assert_paths_agree_on, bradley_terry
from dueling_gym.agents import InterleavedFilter2, make_agent
from dueling_gym.experiments import simulate
from dueling_gym.problems import load_problem


@pytest.mark.parametrize("problem", ["cyclic4", "sushi"])
def test_fused_act_observe_and_gym_paths_agree(problem):
    assert_paths_agree_on(problem, lambda n_arms: InterleavedFilter2(n_arms, horizon=3000), 3000, seed=8)


def test_identifies_the_best_arm_of_utility_based_problems_then_exploits():
    # Theorem 2's setting: a total order with strong stochastic transitivity.
    rng = np.random.default_rng(0)
    horizon = 100_000
    for seed in range(4):
        utilities = rng.permutation(np.arange(6.0))
        problem = bradley_terry(utilities)
        agent = InterleavedFilter2(6, horizon=horizon)
        result = simulate(agent, problem, horizon, seed=seed, checkpoints=[horizon // 2, horizon])
        assert agent.remaining.size == 0
        assert result.recommendations.tolist() == [int(np.argmax(utilities))] * 2
        half, total = result.cumulative_regret["condorcet_strong"]
        assert total == half  # exploitation: self-duels of the Condorcet winner cost nothing


@pytest.mark.parametrize("name, horizon", [("arxiv", 100_000), ("mslr5-condorcet", 100_000), ("cyclic4", 100_000),
                                           ("sushi", 300_000)])
def test_recommends_the_condorcet_winner_of_the_published_matrices(name, horizon):
    problem = load_problem(name)
    found = 0
    for seed in range(3):
        result = simulate(InterleavedFilter2(problem.n_arms, horizon=horizon), problem, horizon, seed=seed)
        found += result.recommendations[-1] == problem.condorcet_winner
    assert found >= 2


def test_candidate_blocks_and_round_robin_matches():
    result = simulate(InterleavedFilter2(16, horizon=20_000), "sushi", 20_000, seed=3, record_duels=True)
    first, second = result.duels[:, 0], result.duels[:, 1]
    # [switch] an old candidate is never a candidate again: each arm leads one contiguous block.
    changes = np.flatnonzero(np.diff(first)) + 1
    leaders = first[np.concatenate([[0], changes])]
    assert len(set(leaders.tolist())) == leaders.size <= 16
    # [match] within a block the opponents come in passes of increasing index (the pass
    # restarts at a lower index), and the candidate plays itself only once W is empty.
    exploring = first != second
    block = first[exploring]
    opponents = second[exploring]
    same_block = block[1:] == block[:-1]
    restarts = same_block & (opponents[1:] <= opponents[:-1])
    increasing = same_block & (opponents[1:] > opponents[:-1])
    assert np.all(restarts | increasing | ~same_block)
    if not exploring.all():
        assert np.all(~exploring[np.argmin(exploring):])


def test_registry_hyperparameters_and_validation():
    agent = make_agent("interleaved_filtering", 4, seed=0, horizon=1000)
    assert isinstance(agent, InterleavedFilter2)
    assert agent.hyperparameters == {"horizon": 1000}
    assert 0 <= agent.candidate < 4 and agent.candidate not in agent.remaining
    with pytest.raises(TypeError):
        InterleavedFilter2(4)
    with pytest.raises(ValueError, match="horizon"):
        InterleavedFilter2(4, horizon=-3)
