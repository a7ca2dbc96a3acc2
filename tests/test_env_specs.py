"""Environment specs with a problem sampler: ``env.spec.to_json()`` and back rebuild the same environment."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec

import dueling_gym  # noqa: F401
from dueling_gym.problems import BipartiteProblemSampler, ProblemSampler
from dueling_gym.wrappers import DuelStatistics

SAMPLED = [
    ("DuelingBandit-v0", ProblemSampler("utility_based", n_arms=4, model="thurstone", spread=2.5)),
    ("CopelandDuel-v0", ProblemSampler("no_condorcet_winner", n_arms=5, min_gap=np.float64(0.1))),
    ("CombinatorialDuel-v0", BipartiteProblemSampler(3, 5, planted_condorcet=True, min_gap=0.1)),
]


def _trajectory(env, seed: int, steps: int = 30) -> list:
    env.reset(seed=seed)
    env.action_space.seed(seed)
    return [env.step(env.action_space.sample())[:2] for _ in range(steps)]


def _matrix(env) -> np.ndarray:
    problem = env.unwrapped.problem
    return problem.preferences if hasattr(problem, "preferences") else problem.matrix


@pytest.mark.parametrize("env_id,sampler", SAMPLED)
def test_spec_round_trips_through_json(env_id, sampler):
    env = gym.make(env_id, problem_sampler=sampler, max_episode_steps=40)
    text = env.spec.to_json()
    assert json.loads(text)["kwargs"]["problem_sampler"] == sampler.to_json()
    spec = EnvSpec.from_json(text)
    assert spec == env.spec  # what gym.make recorded is the JSON form itself
    rebuilt = gym.make(spec)
    assert rebuilt.spec.max_episode_steps == 40
    assert type(rebuilt.unwrapped.problem_sampler) is type(sampler)
    for seed in (0, 7):
        env.reset(seed=seed)
        rebuilt.reset(seed=seed)
        np.testing.assert_array_equal(_matrix(rebuilt), _matrix(env))  # the same problem is drawn
        assert _trajectory(rebuilt, seed) == _trajectory(env, seed)  # and the same duels follow


@pytest.mark.parametrize("env_id,sampler", SAMPLED)
def test_the_json_form_is_accepted_directly(env_id, sampler):
    given = gym.make(env_id, problem_sampler=sampler)
    described = gym.make(env_id, problem_sampler=json.loads(json.dumps(sampler.to_json())))
    assert described.unwrapped.problem_sampler.to_json() == sampler.to_json()
    assert _trajectory(described, 3) == _trajectory(given, 3)


def test_the_spec_keeps_serialising_through_wrappers_and_the_vector_env():
    sampler = ProblemSampler("unique_copeland_winner", n_arms=4)
    wrapped = DuelStatistics(gym.make("CopelandDuel-v0", problem_sampler=sampler, max_episode_steps=20))
    rebuilt = gym.make(EnvSpec.from_json(wrapped.spec.to_json()))
    assert isinstance(rebuilt, DuelStatistics)
    np.testing.assert_array_equal(rebuilt.reset(seed=1)[0], wrapped.reset(seed=1)[0])

    native = gym.make_vec("CopelandDuel-v0", num_envs=3, vectorization_mode="vector_entry_point",
                          problem_sampler=sampler, max_episode_steps=10)
    again = gym.make_vec(EnvSpec.from_json(native.spec.to_json()))
    assert (again.num_envs, again.max_episode_steps) == (3, 10)
    native.reset(seed=2)
    again.reset(seed=2)
    assert all(a == b for a, b in zip(again.problems, native.problems))


def test_other_callables_stay_usable_but_to_json_names_problem_sampler():
    def sampler(rng):
        return ProblemSampler("utility_based", n_arms=4)(rng)

    env = gym.make("DuelingBandit-v0", problem_sampler=sampler, n_arms=4, reward_regret="borda")
    assert env.spec.kwargs["problem_sampler"] is sampler
    with pytest.raises(ValueError, match=r"problem_sampler=<function .*sampler.* has no JSON form"):
        env.spec.to_json()
    with pytest.raises(ValueError, match="problem_sampler"):
        env.unwrapped.spec.to_json()
    rebuilt = gym.make(env.spec)  # in-process the spec still rebuilds the environment
    assert _trajectory(rebuilt, 0) == _trajectory(env, 0)



def test_a_bad_json_form_is_reported_as_problem_sampler():
    with pytest.raises(ValueError, match="problem_sampler: .*unknown generator"):
        gym.make("CopelandDuel-v0", problem_sampler={"generator": "nope", "n_arms": 5})
    with pytest.raises(ValueError, match="problem_sampler: .*missing \\['n_arms'\\]"):
        gym.make("CopelandDuel-v0", problem_sampler={"generator": "utility_based"})
    with pytest.raises(TypeError, match="problem_sampler: "):
        gym.make("CopelandDuel-v0", problem_sampler={"generator": "utility_based", "n_arms": 5, "options": [1]})
    with pytest.raises(ValueError, match="problem_sampler: .*unknown \\['edge_probability'\\]"):
        gym.make("CombinatorialDuel-v0", problem_sampler={"n_positions": 2, "n_candidates": 3, "edges": [[0, 0]],
                                                          "edge_probability": 0.5})


def test_environments_built_directly_have_no_spec():
    env = dueling_gym.envs.CopelandDuelEnv(problem_sampler=ProblemSampler("no_condorcet_winner", n_arms=5))
    assert env.spec is None
