"""The K-armed Gymnasium environments: checkers, seeding, regret bookkeeping, errors."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import dueling_gym
from dueling_gym.envs import CopelandDuelEnv, DuelingBanditEnv
from dueling_gym.problems import ProblemSampler, load_problem

K_ARMED = ["DuelingBandit-v0", "CopelandDuel-v0"]
CONFIGS = [
    ("DuelingBandit-v0", {}),
    ("DuelingBandit-v0", {"preferences": "sushi"}),
    ("CopelandDuel-v0", {}),
    ("CopelandDuel-v0", {"preferences": "arxiv", "render_mode": "ansi"}),
    ("CopelandDuel-v0", {"problem_sampler": ProblemSampler("no_condorcet_winner", n_arms=6)}),
]


@pytest.mark.parametrize("env_id,kwargs", CONFIGS)
def test_gymnasium_and_sb3_checkers_pass(env_id, kwargs):
    env = gym.make(env_id, **kwargs)
    check_env(env.unwrapped, skip_render_check=False)
    sb3_check_env(gym.make(env_id, **kwargs), warn=True)


def test_registered_and_importable_by_module_prefix():
    for env_id in dueling_gym.ENV_IDS:
        assert env_id in gym.registry
    env = gym.make("dueling_gym:CopelandDuel-v0")
    assert isinstance(env.unwrapped, CopelandDuelEnv)
    assert env.spec.max_episode_steps == dueling_gym.DEFAULT_HORIZON


def test_registration_needs_the_import_not_an_entry_point():
    """Gymnasium >= 1.0 loads no plugins from entry points: ``import dueling_gym`` (or the
    ``"dueling_gym:"`` module prefix of an id) is what registers the environments."""
    code = textwrap.dedent("""
        import gymnasium as gym
        try:
            gym.make("CopelandDuel-v0")
        except gym.error.NameNotFound:
            print("unregistered")
        env = gym.make("dueling_gym:DuelingBandit-v0")  # imports dueling_gym, which registers all three
        print(type(env.unwrapped).__name__, sorted(i for i in gym.registry if "Duel" in i))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    assert lines[0] == "unregistered"
    assert lines[1] == "DuelingBanditEnv " + str(sorted(dueling_gym.ENV_IDS))
    pyproject = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    assert "gymnasium.envs" not in pyproject  # such an entry point would be dead code


def _trajectory(env, seed, steps=300):
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    record = []
    for _ in range(steps):
        action = rng.integers(0, env.unwrapped.n_arms, size=2)
        obs, reward, terminated, truncated, info = env.step(action)
        record.append((int(obs), reward, info["t"]))
    return record, env.unwrapped.problem


@pytest.mark.parametrize("env_id,kwargs", CONFIGS)
def test_same_seed_same_trajectory(env_id, kwargs):
    first, problem_a = _trajectory(gym.make(env_id, **kwargs), seed=11)
    second, problem_b = _trajectory(gym.make(env_id, **kwargs), seed=11)
    third, _ = _trajectory(gym.make(env_id, **kwargs), seed=12)
    assert first == second and problem_a == problem_b
    assert first != third


def test_sampler_draws_a_new_problem_each_reset():
    env = gym.make("DuelingBandit-v0")
    env.reset(seed=0)
    first = env.unwrapped.problem
    env.reset()
    assert env.unwrapped.problem != first
    assert env.unwrapped.problem.condorcet_winner is not None


def test_regret_bookkeeping_is_exact():
    env = gym.make("DuelingBandit-v0", preferences="sushi")
    problem = load_problem("sushi")
    _, info = env.reset(seed=3)
    assert info["cumulative_regret"]["copeland_komiyama"] == 0.0
    rng = np.random.default_rng(0)
    totals = dict.fromkeys(problem.defined_regret_notions, 0.0)
    for _ in range(500):
        i, j = rng.integers(0, 16, size=2)
        _, reward, terminated, truncated, info = env.step(np.array([i, j]))
        assert set(info["regret"]) == set(problem.defined_regret_notions)
        assert info["duel"] == (i, j) and all(type(arm) is int for arm in info["duel"])
        for notion in totals:
            assert info["regret"][notion] == pytest.approx(problem.regret(notion, i, j))
            totals[notion] += problem.regret(notion, i, j)
            assert info["cumulative_regret"][notion] == pytest.approx(totals[notion])
        assert reward == -info["regret"]["condorcet_strong"]
        assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
    assert info["t"] == 500


def test_copeland_env_defaults_and_reward():
    env = gym.make("CopelandDuel-v0")
    problem = env.unwrapped.problem
    assert problem.name == "multisol" and problem.condorcet_winner is None
    assert env.unwrapped.regret_notions == ("copeland_komiyama", "copeland_zoghi", "borda")
    env.reset(seed=0)
    _, reward, _, _, info = env.step(np.array([3, 4]))
    assert reward == pytest.approx(-(2 + 3) / 8)
    _, reward, _, _, info = env.step(np.array([0, 2]))
    assert reward == 0.0 and info["regret"]["copeland_zoghi"] == 0.0


def test_time_limit_truncates_at_the_horizon():
    env = gym.make("CopelandDuel-v0", max_episode_steps=5)
    env.reset(seed=0)
    flags = [env.step(np.array([0, 1]))[3] for _ in range(5)]
    assert flags == [False] * 4 + [True]


def test_outcome_frequencies_match_the_preference_matrix():
    env = DuelingBanditEnv(preferences="sushi")
    env.reset(seed=123)
    n = 20_000
    for first, second in [(0, 1), (2, 9), (15, 0), (4, 4)]:
        wins = sum(int(env.step((first, second))[0]) for _ in range(n))
        p = env.problem.matrix[first, second]
        assert abs(wins / n - p) < 5 * np.sqrt(p * (1 - p) / n)
    counts = env.win_counts
    assert counts[0, 1] + counts[1, 0] == n and counts[4, 4] > 0
    assert counts.sum() == 4 * n


@pytest.mark.parametrize(
    "action,error",
    [
        (np.array([0, 5]), ValueError),
        (np.array([-1, 0]), ValueError),
        ((0, 99), ValueError),
        (np.array([0.0, 1.0]), TypeError),
        (np.array([0, 1, 2]), TypeError),
        (3, TypeError),
        ("ab", TypeError),
        (np.array([[0, 1], [1, 0]]), TypeError),
    ],
)
def test_malformed_actions_raise(action, error):
    env = CopelandDuelEnv()
    env.reset(seed=0)
    with pytest.raises(error, match="action"):
        env.step(action)


def test_step_before_reset_raises():
    with pytest.raises(gym.error.ResetNeeded):
        CopelandDuelEnv().step((0, 1))


@pytest.mark.parametrize(
    "kwargs,error,pattern",
    [
        ({"preferences": "sushi", "problem_sampler": ProblemSampler("utility_based", n_arms=3)}, ValueError, "not both"),
        ({"preferences": "nope"}, ValueError, "unknown problem"),
        ({"preferences": [[0.5]]}, ValueError, "at least 2"),
        ({"preferences": "multisol", "reward_regret": "condorcet_strong"}, ValueError, "not defined"),
        ({"preferences": "sushi", "reward_regret": "copeland"}, ValueError, "unknown reward_regret"),
        ({"render_mode": "human"}, ValueError, "render_mode"),
        ({"problem_sampler": 3}, TypeError, "callable"),
        ({"problem_sampler": lambda rng: load_problem("sushi")}, ValueError, "n_arms"),
        ({"problem_sampler": ProblemSampler("utility_based", n_arms=3), "n_arms": 4}, ValueError, "disagrees"),
    ],
)
def test_bad_constructor_arguments(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        DuelingBanditEnv(**kwargs)


def test_sampler_returning_the_wrong_size_is_reported():
    env = DuelingBanditEnv(problem_sampler=lambda rng: load_problem("sushi"), n_arms=5, reward_regret="copeland_komiyama")
    with pytest.raises(ValueError, match="16 arms"):
        env.reset(seed=0)


def test_render_ansi_shows_counts():
    env = gym.make("CopelandDuel-v0", render_mode="ansi")
    env.reset(seed=0)
    for _ in range(7):
        env.step(np.array([1, 2]))
    text = env.render()
    assert "t=7" in text and "multisol" in text
    wins = env.unwrapped.win_counts
    assert wins[1, 2] + wins[2, 1] == 7
    assert str(wins[2, 1]) in text.splitlines()[4]
