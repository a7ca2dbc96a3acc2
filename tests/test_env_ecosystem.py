"""Every registered environment through Gymnasium's ecosystem: ``make_vec`` in every vectorization
mode, one type per ``info`` key, registered default problems, JSON specs, render modes, imports."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from gymnasium.envs.registration import EnvSpec

import dueling_gym
from dueling_gym.problems import load_problem

STEPS = 60


def _modes(env_id: str) -> list[str]:
    modes = ["sync", "async"]
    return modes + (["vector_entry_point"] if gym.spec(env_id).vector_entry_point else [])


def _shape(value: object) -> object:
    """A value's type, recursively through dicts and tuples."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(_shape(item) for item in value)
    return type(value)


@pytest.mark.parametrize("env_id,mode", [(env_id, mode) for env_id in dueling_gym.ENV_IDS for mode in _modes(env_id)])
def test_every_environment_steps_through_make_vec_with_random_actions(env_id, mode):
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, max_episode_steps=25)
    try:
        envs.reset(seed=0)
        envs.action_space.seed(0)
        for _ in range(STEPS):  # two truncations, so autoreset steps are among them
            observations, rewards, _, _, info = envs.step(envs.action_space.sample())
            assert observations.shape == (2,) and rewards.shape == (2,)
            assert info["_t"].all()
    finally:
        envs.close()


@pytest.mark.parametrize("env_id", dueling_gym.ENV_IDS)
def test_each_info_key_keeps_one_type(env_id):
    env = gym.make(env_id, max_episode_steps=40)
    env.action_space.seed(1)
    seen: dict[str, object] = {}
    _, info = env.reset(seed=1)
    infos = [info]
    for _ in range(150):
        _, _, terminated, truncated, info = env.step(env.action_space.sample())
        infos.append(info)
        if terminated or truncated:
            infos.append(env.reset()[1])
    for info in infos:
        for key, value in info.items():
            assert seen.setdefault(key, _shape(value)) == _shape(value), f"{env_id}: info[{key!r}] changed type"


def test_replay_info_uses_sentinels_and_the_replayed_flag():
    env = gym.make("ReplayDuel-v0")
    env.reset(seed=0)
    info = env.step((1, 1))[4]
    assert (info["replay"], info["replayed"], info["log_row"], info["log_line"], info["log_outcome"]) == \
        ("self_duel", False, -1, -1, "")
    info = env.step((0, 1))[4]
    assert info["replayed"] is True and info["log_row"] >= 0 and info["log_outcome"] in ("first_won", "second_won")


def test_registered_specs_name_their_default_problem():
    assert gym.spec("DuelingBandit-v0").kwargs == {"problem_sampler": {"generator": "utility_based", "n_arms": 8,
                                                                       "options": {}}}
    assert gym.spec("CopelandDuel-v0").kwargs == {"preferences": "multisol"}
    assert gym.spec("CombinatorialDuel-v0").kwargs == {"problem": "five_edge"}
    assert gym.spec("ReplayDuel-v0").kwargs == {"preferences": "mslr5-condorcet-synthetic-log"}
    assert gym.spec("RankerDuel-v0").kwargs["data"] is None
    assert gym.make("CopelandDuel-v0").unwrapped.problem.name == load_problem("multisol").name


def test_the_registered_default_gives_way_to_the_other_source():
    from dueling_gym.problems import BipartiteProblemSampler, ProblemSampler

    env = gym.make("DuelingBandit-v0", preferences="sushi")
    assert env.unwrapped.problem_sampler is None and env.spec.kwargs == {"preferences": "sushi"}
    env = gym.make("CopelandDuel-v0", problem_sampler=ProblemSampler("no_condorcet_winner", n_arms=6))
    assert env.unwrapped.n_arms == 6 and "preferences" not in env.spec.kwargs
    env = gym.make("CombinatorialDuel-v0", problem_sampler=BipartiteProblemSampler(3, 5, planted_condorcet=True))
    assert "problem" not in env.spec.kwargs
    with pytest.raises(ValueError, match="not both"):
        gym.make("CopelandDuel-v0", preferences="sushi", problem_sampler=ProblemSampler("utility_based", n_arms=10))


@pytest.mark.parametrize("env_id", ["DuelingBandit-v0", "CopelandDuel-v0"])
@pytest.mark.parametrize("preferences", [load_problem("sushi"), dueling_gym.PreferenceMatrix(
    [[0.5, 0.7, 0.9], [0.3, 0.5, 0.6], [0.1, 0.4, 0.5]], name="mine")])
def test_a_preference_matrix_spec_writes_to_json_and_rebuilds_the_same_duels(env_id, preferences):
    env = gym.make(env_id, preferences=preferences, max_episode_steps=30)
    rebuilt = gym.make(EnvSpec.from_json(env.spec.to_json()))
    assert rebuilt.unwrapped.problem == preferences
    for each in (env, rebuilt):
        each.reset(seed=4)
        each.action_space.seed(4)
    assert [env.step(env.action_space.sample())[:2] for _ in range(30)] == \
        [rebuilt.step(rebuilt.action_space.sample())[:2] for _ in range(30)]


def test_a_replay_problem_without_a_json_form_names_preferences(tmp_path):
    from dueling_gym.problems.comparisons import load_comparisons

    path = tmp_path / "log.csv"
    path.write_text("first,second,winner\na,b,a\nb,a,b\nb,c,c\na,c,a\n")
    env = gym.make("ReplayDuel-v0", preferences=load_comparisons(path))
    with pytest.raises(ValueError, match="preferences="):
        env.spec.to_json()
    by_path = gym.make("ReplayDuel-v0", preferences=path)
    assert json.loads(by_path.spec.to_json())["kwargs"]["preferences"] == str(path)
    assert by_path.unwrapped.problem == env.unwrapped.problem
    with pytest.raises(ValueError, match="neither"):
        gym.make("ReplayDuel-v0", preferences="sushi")


@pytest.mark.parametrize("env_id", dueling_gym.ENV_IDS)
def test_human_rendering_is_refused_at_make_naming_the_modes(env_id):
    with pytest.raises(ValueError, match=r"render_mode 'human': choose one of \['ansi', 'rgb_array'\]"):
        gym.make(env_id, render_mode="human")


def test_list_render_modes_are_still_collected():
    env = gym.make("CopelandDuel-v0", render_mode="rgb_array_list")
    env.reset(seed=0)
    env.step((0, 1))
    assert len(env.render()) == 2


def test_every_environment_class_is_importable_from_the_envs_package():
    import dueling_gym.envs as envs

    for env_id in dueling_gym.ENV_IDS:
        cls = type(gym.make(env_id).unwrapped)
        assert getattr(envs, cls.__name__) is cls and cls.__name__ in envs.__all__
        assert env_id in envs.__doc__ and cls.__name__ in envs.__doc__
    from dueling_gym.envs import ComparisonReplayEnv, RankerDuelEnv  # noqa: F401
