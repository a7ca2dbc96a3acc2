"""The replay environment: logged frequencies, agreement with DuelingBandit-v0, info, refusals."""

from __future__ import annotations

import csv
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec
from gymnasium.utils.env_checker import check_env

from dueling_gym.envs.comparison_replay import ComparisonReplayEnv, default_replay_problem
from dueling_gym.envs.dueling_bandit import DuelingBanditEnv
from dueling_gym.problems import PreferenceMatrix, load_problem
from dueling_gym.problems.comparisons import load_comparisons

# Pair (a, b): a won 3, tie 2, b won 1 -> P[a, b] = (3 + 1) / 6 = 2/3 with ties="half".
# Pair (a, c): a won 1, c won 2 -> 1/3.  Pair (b, c): b won 1, tie 1 -> 3/4; (c, d), (b, d) logged; (a, d) missing.
ROWS = [("a", "b", "a"), ("b", "a", "tie"), ("b", "a", "a"), ("a", "b", "b"), ("a", "b", "tie"), ("b", "a", "second"),
        ("a", "c", "c"), ("c", "a", "first"), ("c", "a", "a"), ("b", "c", "b"), ("c", "b", "tie"),
        ("c", "d", "c"), ("d", "c", "d"), ("d", "c", "c"), ("b", "d", "d"), ("d", "b", "b")]
INDEX = {"a": 0, "b": 1, "c": 2, "d": 3}


def _table(rows=ROWS):
    return {"first": [r[0] for r in rows], "second": [r[1] for r in rows], "winner": [r[2] for r in rows]}


def _outcome(row, first):
    """The logged outcome of ``row`` seen from the duel whose first arm is ``first``."""
    a, b, winner = row
    code = {"first": a, "second": b}.get(winner, winner)
    if code == "tie":
        return "tie"
    return "first_won" if INDEX[code] == first else "second_won"


def _problem(ties="half"):
    return load_comparisons(_table(), ties=ties, fill_missing="bradley_terry")


def test_default_environment_passes_the_gymnasium_checker():
    env = gym.make(EnvSpec("ComparisonReplayCheck-v0", entry_point=ComparisonReplayEnv, max_episode_steps=50))
    check_env(env.unwrapped, skip_render_check=True)
    observation, info = env.reset(seed=0)
    assert env.unwrapped.problem is default_replay_problem()
    assert env.unwrapped.problem.condorcet_winner == load_problem("mslr5-condorcet").condorcet_winner
    assert env.unwrapped.reward_regret == "condorcet_strong"
    check_env(ComparisonReplayEnv(_problem()), skip_render_check=True)


@pytest.mark.parametrize("ties", ["half", "drop"])
def test_observations_equal_dueling_bandit_v0_for_the_same_seed(ties):
    problem = _problem(ties)
    replay = ComparisonReplayEnv(problem, reward_regret="borda")
    reference = DuelingBanditEnv(PreferenceMatrix(problem.matrix), reward_regret="borda")
    actions = np.random.default_rng(1).integers(0, 4, size=(5000, 2))
    for seed in (0, 1, 2):
        replay.reset(seed=seed)
        reference.reset(seed=seed)
        for action in actions:
            observation, reward, _, _, info = replay.step(action)
            expected, expected_reward, _, _, expected_info = reference.step(action)
            assert observation == expected and reward == expected_reward
            assert info["cumulative_regret"] == expected_info["cumulative_regret"]


def _frequencies(env, duel, duels):
    env.reset(seed=11)
    rows, outcomes, observed = Counter(), Counter(), Counter()
    for _ in range(duels):
        observation, _, _, _, info = env.step(duel)
        assert info["replay"] == "log"
        rows[info["log_row"]] += 1
        outcomes[info["log_outcome"]] += 1
        observed[(info["log_outcome"], int(observation))] += 1
    return rows, outcomes, observed


@pytest.mark.parametrize("duel", [(0, 1), (1, 0), (1, 2), (2, 0)])
def test_replayed_frequencies_equal_the_logs(duel):
    env = ComparisonReplayEnv(_problem())
    first, second = duel
    logged = [index for index, (a, b, _) in enumerate(ROWS) if {INDEX[a], INDEX[b]} == {first, second}]
    duels = 60_000
    rows, outcomes, observed = _frequencies(env, duel, duels)
    assert set(rows) == set(logged)
    for row in logged:  # each logged comparison with probability 1/n: within 5 standard deviations
        share = 1 / len(logged)
        assert abs(rows[row] / duels - share) < 5 * np.sqrt(share * (1 - share) / duels)
    # The replayed outcome is the logged one, and the observation agrees with it.
    expected = Counter(_outcome(ROWS[row], first) for row in logged)
    for outcome, count in expected.items():
        assert abs(outcomes[outcome] / duels - count / len(logged)) < 5 * np.sqrt(0.25 / duels)
    assert observed[("first_won", 0)] == 0 and observed[("second_won", 1)] == 0
    if expected["tie"]:  # a tie is half a win each
        ties = outcomes["tie"]
        assert abs(observed[("tie", 1)] / ties - 0.5) < 5 * np.sqrt(0.25 / ties)


def test_a_grid_of_uniforms_replays_every_comparison_equally_often():
    """Exact version of the frequency test: uniforms (k + 1/2) / (m n) hit every row m times."""
    env = ComparisonReplayEnv(_problem())
    replay = env.unwrapped._replay
    matrix = env.unwrapped.problem.matrix
    for first, second in [(0, 1), (1, 0), (0, 2), (2, 1), (3, 2)]:
        logged = [index for index, (a, b, _) in enumerate(ROWS) if {INDEX[a], INDEX[b]} == {first, second}]
        repeats = 7
        grid = (np.arange(repeats * len(logged)) + 0.5) / (repeats * len(logged))
        rows = Counter()
        for uniform in grid.tolist():
            info = replay.replayed(first, second, uniform, uniform < matrix[first, second])
            rows[info["log_row"]] += 1
            assert info["log_outcome"] == _outcome(ROWS[info["log_row"]], first)
        assert rows == {row: repeats for row in logged}


def test_drop_rule_replays_decisive_comparisons_only():
    env = ComparisonReplayEnv(_problem("drop"))
    rows, outcomes, _ = _frequencies(env, (0, 1), 4000)
    assert "tie" not in outcomes
    assert set(rows) == {0, 2, 3, 5}


def test_info_names_the_logged_line(tmp_path):
    path = tmp_path / "log.csv"
    with path.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["first", "second", "winner"])
        writer.writerows(ROWS)
    env = ComparisonReplayEnv(load_comparisons(path, fill_missing="bradley_terry"))
    env.reset(seed=0)
    lines = path.read_text().splitlines()
    for duel in [(0, 1), (2, 1), (3, 2)]:
        info = env.step(duel)[4]
        assert info["log_line"] == info["log_row"] + 2
        a, b, _ = lines[info["log_line"] - 1].split(",")
        assert {INDEX[a], INDEX[b]} == set(duel)


def test_filled_pairs_and_self_duels_are_reported():
    problem = _problem()
    assert problem.provenance["filled_pairs"] == (("a", "d"),)
    env = ComparisonReplayEnv(problem)
    env.reset(seed=5)
    wins = 0
    for _ in range(20_000):
        observation, _, _, _, info = env.step((0, 3))
        wins += int(observation)
    assert info["replay"] == "bradley_terry" and not info["replayed"]
    assert info["log_row"] == -1 and info["log_line"] == -1 and info["log_outcome"] == ""
    assert info["replay_mean"] == problem.matrix[0, 3]
    assert abs(wins / 20_000 - problem.matrix[0, 3]) < 5 * np.sqrt(0.25 / 20_000)
    info = env.step((2, 2))[4]
    assert info["replay"] == "self_duel" and info["replay_mean"] == 0.5
    info = env.step((0, 1))[4]
    assert info["replay"] == "log" and info["replay_mean"] == pytest.approx(2 / 3)


def test_regret_is_computed_on_the_matrix_of_means():
    problem = _problem()
    env = ComparisonReplayEnv(problem, reward_regret="copeland_komiyama")
    env.reset(seed=0)
    _, reward, _, _, info = env.step((1, 3))
    assert -reward == pytest.approx(problem.regret("copeland_komiyama", 1, 3))
    assert info["regret"]["borda"] == pytest.approx(problem.regret("borda", 1, 3))


def test_problems_without_a_log_are_refused():
    with pytest.raises(ValueError, match="load_comparisons"):
        ComparisonReplayEnv(load_problem("sushi"))
    with pytest.raises(TypeError, match="load_comparisons"):
        ComparisonReplayEnv(np.array([[0.5, 0.6], [0.4, 0.5]]))
    problem = _problem()
    tampered = PreferenceMatrix(load_problem("cyclic4").matrix, provenance=problem.provenance)
    with pytest.raises(ValueError, match="does not belong to this matrix"):
        ComparisonReplayEnv(tampered)


def test_step_before_reset_and_bad_actions():
    env = ComparisonReplayEnv(_problem())
    with pytest.raises(gym.error.ResetNeeded):
        env.step((0, 1))
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step((0, 4))
