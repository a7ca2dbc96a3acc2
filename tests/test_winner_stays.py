"""Winner Stays (Chen & Frazier, ICML 2017): WS-W and WS-S against the paper's claims."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_helpers import assert_paths_agree
from condorcet_behaviour import CONDORCET_PROBLEMS, assert_finds_condorcet_winner_with_sublinear_regret
from dueling_gym.agents import WinnerStaysStrong, WinnerStaysWeak, make_agent
from dueling_gym.experiments import simulate
from dueling_gym.problems import load_problem


@pytest.mark.parametrize("make", [lambda k: WinnerStaysWeak(k), lambda k: WinnerStaysStrong(k, beta=1.5)])
@pytest.mark.parametrize("problem", ["cyclic4", "sushi"])
def test_fused_act_observe_and_gym_paths_agree(make, problem):
    n_arms = load_problem(problem).n_arms
    assert_paths_agree(lambda: make(n_arms), problem, 3000, seed=5)


def test_the_winner_stays_and_counts_stay_balanced():
    # Algorithm 1: the winner of a duel is always one of the two arms of the next duel, and
    # C(t, i) (wins minus losses) sums to zero; WS-W never plays an arm against itself.
    result = simulate(WinnerStaysWeak(16), "sushi", 5000, seed=3, record_duels=True)
    duels, outcomes = result.duels, result.outcomes
    assert np.all(duels[:, 0] != duels[:, 1])
    winners = np.where(outcomes, duels[:, 0], duels[:, 1])
    assert np.all((duels[1:, 0] == winners[:-1]) | (duels[1:, 1] == winners[:-1]))
    agent = WinnerStaysWeak(16)
    simulate(agent, "sushi", 5000, seed=3)
    assert agent.score.sum() == 0
    # In round r every arm outside the current duel waits at -(r - 1) (not yet played in the
    # round) or sits at -r (beaten in it); nothing falls below -r.
    r = agent.round
    assert np.sum(agent.score == -(r - 1)) + np.sum(agent.score == -r) >= agent.n_arms - 2
    assert agent.score.min() >= -r


@pytest.mark.parametrize("name", CONDORCET_PROBLEMS)
def test_weak_regret_stops_growing_and_the_winner_is_found(name):
    # Theorems 1-2: the expected cumulative weak regret of WS-W is a constant (independent of T).
    problem = load_problem(name)
    short, long = 2000, 20_000
    regrets, found = [], 0
    for seed in range(6):
        result = simulate(WinnerStaysWeak(problem.n_arms), problem, long, seed=seed, checkpoints=[short, long])
        regrets.append(result.cumulative_regret["condorcet_weak"])
        found += result.recommendations[-1] == problem.condorcet_winner
    regrets = np.array(regrets)
    assert found >= 5
    # From T to 10 T the weak regret barely moves: a linear regret would add nine times what the
    # first T duels cost; WS-W adds a small fraction (a late lost iteration of the winner).
    assert regrets[:, 1].sum() - regrets[:, 0].sum() <= 0.25 * regrets[:, 0].sum() + 1.0, regrets
    # ... and WS-W never exploits with a self-duel, so its strong regret keeps growing linearly.
    strong = simulate(WinnerStaysWeak(problem.n_arms), problem, long, seed=0, checkpoints=[long // 2, long])
    half, total = strong.cumulative_regret["condorcet_strong"]
    assert (total - half) / (long // 2) > 0.005


@pytest.mark.parametrize("name", CONDORCET_PROBLEMS)
def test_strong_variant_finds_the_condorcet_winner_with_logarithmic_regret(name):
    # Theorem 3: O(K^2 + K log T) strong regret.
    assert_finds_condorcet_winner_with_sublinear_regret(lambda k: WinnerStaysStrong(k), name, max_growth=2.0)


def test_exploitation_phases_last_floor_beta_to_the_r():
    beta = 1.7
    result = simulate(WinnerStaysStrong(5, beta=beta), "mslr5-condorcet", 3000, seed=1, record_duels=True)
    self_duel = result.duels[:, 0] == result.duels[:, 1]
    # Lengths of the maximal runs of self-duels (the last one may be cut by the horizon).
    edges = np.flatnonzero(np.diff(np.concatenate([[0], self_duel.astype(np.int8), [0]])))
    lengths = (edges[1::2] - edges[::2]).tolist()
    expected = [math.floor(beta ** r) for r in range(1, len(lengths) + 1)]
    assert len(lengths) >= 8
    assert lengths[:-1] == expected[:-1]
    assert lengths[-1] <= expected[-1]
    # Every exploitation phase follows a completed round, and its arm is the round's winner:
    # the arm that won the duel just before the phase.
    starts = edges[::2]
    winners = np.where(result.outcomes, result.duels[:, 0], result.duels[:, 1])
    assert np.all(result.duels[starts, 0] == winners[starts - 1])


def test_registry_hyperparameters_and_validation():
    assert isinstance(make_agent("winner_stays_weak", 4, seed=0), WinnerStaysWeak)
    strong = make_agent("winner_stays_strong", 4, seed=0, beta=3)
    assert strong.hyperparameters == {"beta": 3.0}
    assert WinnerStaysWeak(4).hyperparameters == {}
    assert repr(WinnerStaysStrong(3, seed=1)) == "WinnerStaysStrong(n_arms=3, beta=2.0, seed=1)"
    for bad in (1.0, 0.5, float("inf")):
        with pytest.raises(ValueError, match="beta"):
            WinnerStaysStrong(4, beta=bad)
    with pytest.raises(TypeError, match="beta"):
        WinnerStaysStrong(4, beta="2")
    with pytest.raises(TypeError, match="does not accept"):
        make_agent("winner_stays_weak", 4, beta=2.0)


def test_reset_replays_the_same_run():
    agent = WinnerStaysWeak(6, seed=11)
    first = [agent.act() for _ in range(1)]
    agent.observe(first[0], True)
    agent.reset(seed=11)
    assert agent.act() == first[0]
    assert agent.score.sum() == 0 and agent.round == 1
