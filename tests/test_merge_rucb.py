"""MergeRUCB (Zoghi, Whiteson and de Rijke, WSDM 2015): loop equivalence, batches, local duels,
elimination and merging, behaviour on the shipped problems and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_checks import assert_observe_validates_the_action, assert_registered, assert_reset_replays, refusal_test
from agent_helpers import assert_paths_agree
from condorcet_behaviour import (
    CONDORCET_PROBLEMS,
    assert_finds_condorcet_winner_with_sublinear_regret,
    regret_at,
)
from dueling_gym.agents import MergeRUCB
from dueling_gym.experiments import simulate
from dueling_gym.problems.generators import utility_based


@pytest.mark.parametrize("problem", ["sushi", "multisol"])
def test_fused_generic_and_gym_loops_are_identical(problem):
    n_arms = 16 if problem == "sushi" else 5
    # 30 000 duels on Sushi reach eliminations and merges.
    horizon = 30_000 if problem == "sushi" else 3000
    fused = assert_paths_agree(lambda: MergeRUCB(n_arms), problem, horizon, seed=11)
    if problem == "sushi":
        agent = MergeRUCB(16)
        simulate(agent, problem, horizon, seed=11)
        assert agent.stage > 1 and not agent.alive.all()
    assert fused.recommendations[-1] >= 0


@pytest.mark.parametrize(("n_arms", "partition_size", "sizes"), [(16, 4, [4, 4, 4, 4]), (10, 4, [4, 3, 3]),
                                                                  (5, 4, [3, 2]), (4, 4, [4]), (7, 2, [2, 2, 2, 1])])
def test_initial_batches_are_a_random_partition(n_arms, partition_size, sizes):
    agent = MergeRUCB(n_arms, partition_size=partition_size, seed=0)
    assert [len(batch) for batch in agent.batches] == sizes
    assert sorted(arm for batch in agent.batches for arm in batch) == list(range(n_arms))
    assert agent.stage == 1 and agent.alive.all()
    partitions = {tuple(map(tuple, MergeRUCB(n_arms, partition_size=partition_size, seed=seed).batches))
                  for seed in range(10)}
    assert len(partitions) > 1


def test_every_duel_is_local_to_the_current_batch():
    problem = utility_based(40, np.random.default_rng(0), spread=6.0)
    agent = MergeRUCB(40, seed=1)
    rng = np.random.default_rng(2)
    seen_stages = set()
    for step in range(40_000):
        first, second = agent.act()
        batches = agent.batches
        current = batches[step % len(batches)]
        assert first in current and second in current
        assert agent.alive[first] and agent.alive[second]
        seen_stages.add(agent.stage)
        agent.observe((first, second), bool(rng.random() < problem.matrix[first, second]))
    # Batches stay small while their number shrinks: no batch exceeds twice P plus the singletons merged in.
    assert len(seen_stages) >= 3
    assert max(len(batch) for batch in agent.batches) <= 12


def test_confidently_beaten_arms_are_eliminated_within_their_batch():
    agent = MergeRUCB(8, partition_size=4, seed=3)
    batch = agent.batches[0]
    loser, winner = batch[0], batch[1]
    other_batch = agent.batches[1]
    # The loser has lost 200 of 200 duels against the winner: u < 1/2 for any reasonable t.
    for _ in range(200):
        agent.observe((winner, loser), True)
    # An arm of another batch that lost to `winner` is not in `winner`'s batch: it stays.
    for _ in range(200):
        agent.observe((winner, other_batch[0]), True)
    level = math.log(agent.wins.sum() + 1 + agent.exploration_offset)
    assert 200 * 0.25 / agent.alpha > level
    first, second = agent.act()  # t = 400: batch 0's turn
    assert not agent.alive[loser] and loser not in agent.batches[0]
    assert agent.alive[other_batch[0]]
    assert {first, second} <= set(batch) - {loser}
    for _ in range(100):
        duel = agent.act()
        assert loser not in duel
        agent.observe(duel, True)


def test_batches_merge_pairwise_when_the_survivors_halve():
    agent = MergeRUCB(16, partition_size=4, seed=4)
    batches = agent.batches
    # In each batch two arms lose everything to the first arm of the batch: 8 of 16 arms go.
    for batch in batches:
        for loser in batch[2:]:
            for _ in range(300):
                agent.observe((batch[0], loser), True)
    for _ in range(4):  # each batch takes its turn (b = t mod |B|) and eliminates its two losers
        duel = agent.act()
        agent.observe(duel, True)
    assert agent.alive.sum() == 8 and len(agent.batches) == 4 and agent.stage == 1
    agent.act()  # 8 <= 16 / 2: merge step
    assert agent.stage == 2 and len(agent.batches) == 2
    assert sorted(len(batch) for batch in agent.batches) == [4, 4]
    assert sorted(arm for batch in agent.batches for arm in batch) == sorted(np.flatnonzero(agent.alive))


def test_last_survivor_duels_itself_and_is_recommended():
    agent = MergeRUCB(4, partition_size=4, seed=5)
    for loser in (1, 2, 3):
        for _ in range(400):
            agent.observe((0, loser), True)
    assert agent.act() == (0, 0)
    assert agent.batches == [[0]] and agent.recommend() == 0
    agent.observe((0, 0), False)
    assert agent.wins.sum() == 1200  # a self-duel carries no information


def test_a_cycle_never_empties_a_batch():
    agent = MergeRUCB(3, partition_size=4, seed=6)
    for winner, loser in ((0, 1), (1, 2), (2, 0)):
        for _ in range(400):
            agent.observe((winner, loser), True)
    for _ in range(30):
        first, second = agent.act()
        assert first != second
    assert agent.alive.all() and agent.batches[0] and len(agent.batches[0]) == 3


@pytest.mark.parametrize("problem", CONDORCET_PROBLEMS)
def test_finds_the_condorcet_winner_with_logarithmic_regret(problem):
    # The exploration offset C(0.01) keeps the first eliminations slow, hence the longer horizon.
    assert_finds_condorcet_winner_with_sublinear_regret(lambda n_arms: MergeRUCB(n_arms), problem, short=20_000)


def test_linear_regret_when_local_eliminations_leave_a_non_copeland_arm():
    # On Gap every arm is beaten by another one: the last survivor of the local eliminations is
    # the Copeland winner only by luck, and otherwise it pays a constant regret per duel forever.
    regrets, recommendations = regret_at(lambda n_arms: MergeRUCB(n_arms), "gap", 100_000, range(6),
                                         [50_000, 100_000])
    late_rate = (regrets[:, 1] - regrets[:, 0]) / 50_000
    linear = late_rate > 0.2
    assert linear.sum() >= 3, late_rate
    assert np.all(recommendations[linear] != 0)


def test_registry_hyperparameters_and_offset():
    expected_hyperparameters = {"partition_size": 6, "alpha": 1.01, "failure_probability": 0.01}
    agent = assert_registered("merge_rucb", MergeRUCB, 16, expected_hyperparameters, partition_size=6)
    expected = (3.04 * 256 / (1.02 * 0.01)) ** (1 / 1.02)
    assert agent.exploration_offset == pytest.approx(expected)
    assert "partition_size=6" in repr(agent)
    assert_reset_replays(agent, 30)


test_bad_hyperparameters_raise = refusal_test(
    (lambda: MergeRUCB(8, partition_size=1), ValueError),
    (lambda: MergeRUCB(8, partition_size=2.5), TypeError),
    (lambda: MergeRUCB(8, partition_size=True), TypeError),
    (lambda: MergeRUCB(8, alpha=0.5), ValueError),
    (lambda: MergeRUCB(8, alpha="1"), TypeError),
    (lambda: MergeRUCB(8, failure_probability=0.0), ValueError),
    (lambda: MergeRUCB(8, failure_probability=1.0), ValueError),
    (lambda: MergeRUCB(1), ValueError),
)


def test_observe_validates_the_action():
    assert_observe_validates_the_action(MergeRUCB(4))
