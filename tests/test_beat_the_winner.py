"""Beat the Winner (Peköz, Ross & Zhang)."""

from __future__ import annotations

import numpy as np
import pytest

from agent_checks import assert_paths_agree_on
from condorcet_behaviour import CONDORCET_PROBLEMS
from dueling_gym.agents import BeatTheWinner, make_agent
from dueling_gym.experiments import simulate
from dueling_gym.problems import load_problem


@pytest.mark.parametrize("problem", ["cyclic4", "sushi"])
def test_fused_act_observe_and_gym_paths_agree(problem):
    assert_paths_agree_on(problem, BeatTheWinner, 3000, seed=9)


def test_matches_are_first_to_r_wins_and_the_winner_stays():
    result = simulate(BeatTheWinner(6), "arxiv", 5000, seed=2, record_duels=True)
    duels, outcomes = result.duels, result.outcomes
    # With K >= 3 the next challenger is never the loser, so a new match is a new pair.
    starts = np.concatenate([[0], np.flatnonzero(np.any(np.diff(duels, axis=0) != 0, axis=1)) + 1])
    queue_order = []
    for r, (start, stop) in enumerate(zip(starts[:-1], starts[1:]), start=1):
        first_wins = int(outcomes[start:stop].sum())
        second_wins = (stop - start) - first_wins
        assert max(first_wins, second_wins) == r and min(first_wins, second_wins) < r
        winner = duels[start, 0] if first_wins == r else duels[start, 1]
        loser = duels[start, 1] if first_wins == r else duels[start, 0]
        assert duels[stop, 0] == winner  # the winner stays
        queue_order.append(loser)
    # Losers rejoin the back of the queue: every K - 1 matches later the same arm is challenging.
    challengers = duels[starts, 1]
    np.testing.assert_array_equal(challengers[5:len(queue_order) + 1], queue_order[: len(challengers) - 5])


# Sushi is left out: its two best arms are so close that 10^5 duels rarely separate them.
@pytest.mark.parametrize("name", [name for name in CONDORCET_PROBLEMS if name != "sushi"])
def test_the_condorcet_winner_ends_up_the_incumbent(name):
    problem = load_problem(name)
    horizon = 100_000
    found, involved_early, involved_late = 0, 0.0, 0.0
    for seed in range(3):
        result = simulate(BeatTheWinner(problem.n_arms), problem, horizon, seed=seed, record_duels=True)
        found += result.recommendations[-1] == problem.condorcet_winner
        involved = np.any(result.duels == problem.condorcet_winner, axis=1)
        involved_early += involved[: horizon // 10].mean()
        involved_late += involved[horizon // 2:].mean()
    assert found >= 2
    # The winner takes part in a growing share of the duels (weak regret per duel falls).
    assert involved_late >= involved_early and involved_late / 3 > 0.7


def test_registry_and_reset():
    agent = make_agent("beat_the_winner", 5, seed=3)
    assert isinstance(agent, BeatTheWinner) and agent.hyperparameters == {}
    first = agent.act()
    agent.observe(first, True)
    agent.reset(seed=3)
    assert agent.act() == first and first[0] != first[1]
