"""CombinatorialDuelEnv (CombinatorialDuel-v0): checkers, seeding, duel statistics, scoring, errors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import dueling_gym  # noqa: F401  (registers CombinatorialDuel-v0)
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from dueling_gym.envs.combinatorial_duel import CombinatorialDuelEnv
from dueling_gym.problems import (
    BipartiteDuelProblem,
    BipartiteProblemSampler,
    five_edge_example,
    random_bipartite_problem,
)

SAMPLER = BipartiteProblemSampler(3, 5, planted_condorcet=True, graph_seed=1)
CONFIGS = [
    {},
    {"problem": "five_edge", "render_mode": "ansi"},
    {"problem": random_bipartite_problem(4, 6, np.random.default_rng(0), edge_probability=0.7)},
    {"problem_sampler": SAMPLER, "render_mode": "ansi"},
]


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_gymnasium_and_sb3_checkers_pass(kwargs):
    env = gym.make("CombinatorialDuel-v0", **kwargs)
    assert isinstance(env.unwrapped, CombinatorialDuelEnv)
    check_env(env.unwrapped, skip_render_check=False)
    sb3_check_env(gym.make("CombinatorialDuel-v0", **kwargs), warn=True)
    sb3_check_env(CombinatorialDuelEnv(**kwargs), warn=True)


def test_spaces_and_duel_table():
    env = CombinatorialDuelEnv()
    problem = five_edge_example()
    assert env.problem == problem
    assert env.action_space == gym.spaces.Discrete(4)
    assert env.observation_space == gym.spaces.Discrete(2)
    assert env.duels == ((0, 0, 1), (0, 0, 2), (0, 1, 2), (1, 3, 4))
    assert env.duels == tuple(map(tuple, problem.comparable_pairs.tolist()))
    assert all(isinstance(x, int) for duel in env.duels for x in duel)


def _trajectory(env, seed, steps=200):
    observation, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    record = [(int(observation), info["t"])]
    for _ in range(steps):
        if rng.random() < 0.2:
            position = int(rng.integers(env.unwrapped.problem.n_positions))
            group = env.unwrapped.problem.edges_by_position[position]
            result = env.step_edges(*(int(e) for e in rng.choice(group, size=2)))
        else:
            result = env.step(rng.integers(env.action_space.n))
        observation, reward, terminated, truncated, info = result
        record.append((int(observation), reward, info["t"], info["edges"]))
    return record, env.unwrapped.problem


@pytest.mark.parametrize("kwargs", [{}, {"problem_sampler": SAMPLER}])
def test_same_seed_same_trajectory(kwargs):
    first, problem_a = _trajectory(CombinatorialDuelEnv(**kwargs), seed=11)
    second, problem_b = _trajectory(CombinatorialDuelEnv(**kwargs), seed=11)
    third, _ = _trajectory(CombinatorialDuelEnv(**kwargs), seed=12)
    assert first == second and problem_a == problem_b
    assert first != third


def test_sampler_draws_new_preferences_on_the_same_graph():
    env = CombinatorialDuelEnv(problem_sampler=SAMPLER)
    assert env.problem is None  # nothing drawn before the first reset
    problems = []
    for seed in range(3):
        env.reset(seed=seed)
        problems.append(env.problem)
    assert all(p.same_graph(problems[0]) for p in problems)
    assert problems[0] != problems[1]


def test_duel_outcomes_match_preferences():
    problem = random_bipartite_problem(2, 4, np.random.default_rng(3), edge_probability=1.0)
    env = CombinatorialDuelEnv(problem)
    env.reset(seed=5)
    n = 3000
    for k, (_, first, second) in enumerate(env.duels):
        p = problem.preferences[first, second]
        wins = sum(int(env.step(k)[0]) for _ in range(n))
        margin = 5 * np.sqrt(p * (1 - p) / n) + 1e-9
        assert abs(wins / n - p) < margin
        # Reversed orientation through step_edges: the first argument wins with 1 - p.
        reversed_wins = sum(int(env.step_edges(second, first)[0]) for _ in range(n))
        assert abs(reversed_wins / n - (1 - p)) < margin
    self_wins = sum(int(env.step_edges(0, 0)[0]) for _ in range(n))
    assert abs(self_wins / n - 0.5) < 5 * np.sqrt(0.25 / n)
    # Per-pair statistics count both orientations from the table's first edge.
    assert env.duel_counts.tolist() == [2 * n] * len(env.duels)
    np.testing.assert_allclose(env.duel_wins / (2 * n),
                               problem.preferences[problem.comparable_pairs[:, 1], problem.comparable_pairs[:, 2]],
                               atol=0.05)
    assert env.self_duel_counts[0] == n and env.samples == (2 * len(env.duels) + 1) * n


def test_rewards_and_info():
    env = CombinatorialDuelEnv()
    observation, info = env.reset(seed=0)
    assert observation == 0 and isinstance(observation, np.int64)
    assert info == {"t": 0, "cumulative_regret": 0.0}
    regrets = [0.25, 0.75, 0.5, 0.5]  # the 5-edge example's position Copeland regrets
    total, infos = 0.0, []
    for t, k in enumerate([0, 1, 2, 3, 1], start=1):
        observation, reward, terminated, truncated, info = env.step(np.int64(k))
        total += regrets[k]
        assert isinstance(observation, np.int64) and observation in (0, 1)
        assert type(reward) is float and reward == -regrets[k]
        assert terminated is False and truncated is False
        position, first, second = env.duels[k]
        assert info == {"duel": k, "position": position, "edges": (first, second), "regret": regrets[k],
                        "cumulative_regret": pytest.approx(total), "t": t}
        infos.append(info)
    assert len({id(i) for i in infos}) == len(infos)  # a fresh dict every call
    observation, reward, *_, info = env.step_edges(1, 1)  # self-duel of {s1}'s Copeland winner e2
    assert reward == 0.0 and info["duel"] is None and info["edges"] == (1, 1) and info["t"] == 6
    observation, reward, *_, info = env.step_edges(4, 3)
    assert reward == -0.5 and info["duel"] == 3 and info["edges"] == (4, 3)
    assert env.cumulative_regret == pytest.approx(total + 0.5)
    # Reset clears the statistics.
    env.reset()
    assert env.samples == 0 and env.duel_counts.sum() == 0 and env.cumulative_regret == 0.0


def test_score_matching():
    env = CombinatorialDuelEnv()
    env.reset(seed=1)
    for _ in range(7):
        env.step(env.action_space.sample())
    condorcet = env.score_matching((1, 4))
    assert condorcet["valid"] and condorcet["is_condorcet_winner"] and not condorcet["is_borda_winner"]
    assert condorcet["borda_gap"] == pytest.approx(0.025) and condorcet["samples"] == 7
    borda = env.score_matching([4, 0])
    assert borda["valid"] and borda["is_borda_winner"] and not borda["is_condorcet_winner"]
    assert borda["borda_gap"] == 0.0 and borda["borda_score"] == pytest.approx(0.64)
    invalid = env.score_matching((2, 3))  # e3 and e4 share candidate c3
    assert invalid["valid"] is False and invalid["borda_gap"] is None and invalid["samples"] == 7


def test_render_ansi():
    env = CombinatorialDuelEnv(render_mode="ansi")
    assert env.render() == "(not reset)\n"
    env.reset(seed=0)
    for k in (0, 0, 3):
        env.step(k)
    env.step_edges(2, 2)
    text = env.render()
    assert isinstance(text, str) and "t=4" in text and "self-duels: 1" in text
    row = [line for line in text.splitlines() if line.split()[:4] == ["0", "0", "0", "1"]][0]
    assert row.split()[4] == "2"
    with pytest.warns(UserWarning):
        assert CombinatorialDuelEnv().render() is None


@pytest.mark.parametrize("action,error", [
    (-1, ValueError), (4, ValueError), (np.int64(10), ValueError),
    (1.0, TypeError), (np.float64(2.0), TypeError), ("1", TypeError), (None, TypeError),
    ([0, 1], TypeError), (True, TypeError), (np.array([1, 2]), TypeError),
])
def test_malformed_actions(action, error):
    env = CombinatorialDuelEnv()
    env.reset(seed=0)
    with pytest.raises(error):
        env.step(action)


def test_zero_dimensional_integer_array_action_is_accepted():
    env = CombinatorialDuelEnv()
    env.reset(seed=0)
    assert env.step(np.array(2))[4]["duel"] == 2


@pytest.mark.parametrize("edges,error,message", [
    ((0, 3), ValueError, "incomparable"),
    ((0, 5), ValueError, "out of range"),
    ((-1, 0), ValueError, "out of range"),
    ((0.0, 1), TypeError, "integer"),
    ((0, False), TypeError, "boolean"),
])
def test_step_edges_errors(edges, error, message):
    env = CombinatorialDuelEnv()
    env.reset(seed=0)
    with pytest.raises(error, match=message):
        env.step_edges(*edges)


def test_step_before_reset_raises():
    env = CombinatorialDuelEnv()
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)
    with pytest.raises(gym.error.ResetNeeded):
        env.step_edges(0, 1)
    with pytest.raises(gym.error.ResetNeeded):
        CombinatorialDuelEnv(problem_sampler=SAMPLER).score_matching((0, 1, 2))


def test_constructor_errors():
    with pytest.raises(ValueError, match="not both"):
        CombinatorialDuelEnv("five_edge", problem_sampler=SAMPLER)
    with pytest.raises(ValueError, match="unknown bipartite problem"):
        CombinatorialDuelEnv("sushi")
    with pytest.raises(TypeError, match="BipartiteDuelProblem"):
        CombinatorialDuelEnv(np.eye(2))
    with pytest.raises(ValueError, match="render_mode"):
        CombinatorialDuelEnv(render_mode="human")
    with pytest.raises(TypeError, match="callable"):
        CombinatorialDuelEnv(problem_sampler=42)
    with pytest.raises(TypeError, match="must return a BipartiteDuelProblem"):
        CombinatorialDuelEnv(problem_sampler=lambda rng: "five_edge")
    lonely = BipartiteDuelProblem(2, 2, [(0, 0), (1, 1)], np.eye(2) * 0.5)
    with pytest.raises(ValueError, match="no comparable pairs"):
        CombinatorialDuelEnv(lonely)


def test_sampler_that_changes_the_graph_is_rejected_at_reset():
    def changing(rng):
        return random_bipartite_problem(3, 5, rng)  # a new random graph every call

    env = CombinatorialDuelEnv(problem_sampler=changing)
    with pytest.raises(ValueError, match="different graph"):
        for seed in range(20):
            env.reset(seed=seed)
