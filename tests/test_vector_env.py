"""The native vector environments: equivalence with the single env, autoreset, errors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import dueling_gym  # noqa: F401
from dueling_gym.envs.vector import CopelandDuelVectorEnv, DuelingBanditVectorEnv
from dueling_gym.problems import ProblemSampler, load_problem


def make_vec(env_id, num_envs, **kwargs):
    return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)


@pytest.mark.parametrize("env_id", ["DuelingBandit-v0", "CopelandDuel-v0"])
@pytest.mark.parametrize("kwargs", [{}, {"preferences": "cyclic4"}])
def test_one_sub_env_reproduces_the_single_env_exactly(env_id, kwargs):
    single = gym.make(env_id, **kwargs)
    vector = make_vec(env_id, 1, **kwargs)
    single.reset(seed=5)
    vector.reset(seed=5)
    n_arms = single.unwrapped.n_arms
    rng = np.random.default_rng(0)
    for _ in range(600):
        action = rng.integers(0, n_arms, size=2)
        obs, reward, _, _, info = single.step(action)
        vobs, vreward, _, _, vinfo = vector.step(action[None, :])
        assert vobs[0] == obs and vreward[0] == reward
        for notion, value in info["cumulative_regret"].items():
            assert vinfo["cumulative_regret"][notion][0] == pytest.approx(value, abs=1e-9)
    assert vector.unwrapped.problems[0] == single.unwrapped.problem


def test_statistically_identical_to_single_env():
    n_envs, steps = 4096, 20
    vector = make_vec("CopelandDuel-v0", n_envs, preferences="sushi")
    vector.reset(seed=1)
    problem = load_problem("sushi")
    actions = np.random.default_rng(2).integers(0, 16, size=(n_envs, 2))
    wins = np.zeros(n_envs)
    for _ in range(steps):
        obs, reward, terminated, truncated, info = vector.step(actions)
        wins += obs
        np.testing.assert_allclose(reward, -problem.regret("copeland_komiyama", actions[:, 0], actions[:, 1]))
    p = problem.matrix[actions[:, 0], actions[:, 1]]
    # Aggregate z-score of the outcome counts across all sub-envs.
    z = (wins.sum() - steps * p.sum()) / np.sqrt(steps * (p * (1 - p)).sum())
    assert abs(z) < 5
    np.testing.assert_allclose(
        info["cumulative_regret"]["copeland_zoghi"],
        steps * problem.regret("copeland_zoghi", actions[:, 0], actions[:, 1]),
    )
    assert info["t"].tolist() == [steps] * n_envs


def test_next_step_autoreset_with_samplers():
    vector = make_vec("CopelandDuel-v0", 3, problem_sampler=ProblemSampler("no_condorcet_winner", n_arms=4),
                      max_episode_steps=2)
    obs, info = vector.reset(seed=0)
    problems = list(vector.unwrapped.problems)
    actions = np.array([[0, 1], [1, 2], [3, 3]])
    _, _, _, truncated, info = vector.step(actions)
    assert not truncated.any() and info["t"].tolist() == [1, 1, 1]
    _, _, terminated, truncated, info = vector.step(actions)
    assert truncated.all() and not terminated.any()
    obs, reward, _, truncated, info = vector.step(actions)  # the autoreset step
    assert obs.tolist() == [0, 0, 0] and reward.tolist() == [0, 0, 0] and not truncated.any()
    assert info["t"].tolist() == [0, 0, 0]
    notions = vector.unwrapped.regret_notions
    assert all(info["cumulative_regret"][n].tolist() == [0, 0, 0] for n in notions)
    assert "duel" not in info and "_duel" not in info  # as SyncVectorEnv: a reset reports no duel
    assert all(new != old for new, old in zip(vector.unwrapped.problems, problems))


def test_same_seed_same_trajectory_and_info_shapes():
    def run(seed):
        vector = make_vec("DuelingBandit-v0", 16)
        vector.reset(seed=seed)
        rng = np.random.default_rng(0)
        out = []
        for _ in range(50):
            obs, reward, _, _, info = vector.step(rng.integers(0, 8, size=(16, 2)))
            out.append((obs.copy(), reward.copy()))
        notions = {"copeland_komiyama", "copeland_zoghi", "condorcet_strong", "condorcet_weak", "borda"}
        assert set(info["regret"]) == notions | {f"_{notion}" for notion in notions}
        assert all(v.shape == (16,) for v in info["cumulative_regret"].values())
        assert info["duel"].shape == (16, 2) and info["duel"].dtype == np.int64
        return out

    a, b, c = run(3), run(3), run(4)
    assert all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(a, b))
    assert any(not np.array_equal(x[0], y[0]) for x, y in zip(a, c))


def test_spaces():
    vector = CopelandDuelVectorEnv(num_envs=7, preferences="sushi")
    assert vector.single_action_space == gym.spaces.MultiDiscrete([16, 16])
    assert vector.action_space.shape == (7, 2)
    assert vector.observation_space.shape == (7,)
    assert vector.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    vector.reset(seed=0)
    vector.step(vector.action_space.sample())


@pytest.mark.parametrize(
    "actions,error",
    [
        (np.zeros((3, 2), dtype=int), ValueError),
        (np.zeros((4, 3), dtype=int), ValueError),
        (np.zeros((4, 2)), TypeError),
        (np.zeros((4, 2), dtype=bool), TypeError),
        (np.full((4, 2), 250, dtype=np.uint8), ValueError),
        (np.full((4, 2), -3, dtype=np.int8), ValueError),
        (np.full((4, 2), 5), ValueError),
        (np.full((4, 2), -1), ValueError),
    ],
)
def test_bad_actions(actions, error):
    vector = DuelingBanditVectorEnv(num_envs=4, preferences="multisol", reward_regret="copeland_komiyama")
    vector.reset(seed=0)
    with pytest.raises(error, match="actions"):
        vector.step(actions)


def test_bad_construction_and_unreset_step():
    with pytest.raises(ValueError, match="num_envs"):
        DuelingBanditVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="max_episode_steps"):
        DuelingBanditVectorEnv(num_envs=2, max_episode_steps=0)
    with pytest.raises(ValueError, match="not defined"):
        DuelingBanditVectorEnv(num_envs=2, preferences="gap")
    with pytest.raises(ValueError, match="render_mode"):
        DuelingBanditVectorEnv(num_envs=2, render_mode="rgb_array")  # the single env has it, not the batch
    with pytest.raises(gym.error.ResetNeeded):
        CopelandDuelVectorEnv(num_envs=2).step(np.zeros((2, 2), dtype=int))


def test_render_ansi():
    vector = CopelandDuelVectorEnv(num_envs=2, render_mode="ansi")
    vector.reset(seed=0)
    for _ in range(5):
        vector.step(np.array([[0, 1], [2, 3]]))
    text = vector.render()
    assert "t=5" in text
    counts = vector.win_counts(0)
    assert counts[0, 1] + counts[1, 0] == 5


# ------------------------------------------------------------------ info as Gymnasium's vector modes batch it
def _assert_same_info(native, sync, path="info"):
    """Same keys, masks, dtypes and values; ``duel`` (tuples in Gymnasium's object array) compared as int64."""
    assert native.keys() == sync.keys(), f"{path}: {sorted(native)} != {sorted(sync)}"
    for key, value in sync.items():
        mine = native[key]
        where = f"{path}[{key!r}]"
        if isinstance(value, dict):
            _assert_same_info(mine, value, where)
        elif key == "duel":
            mask = sync["_duel"]
            assert mine.dtype == np.int64 and mine.shape == (len(mask), 2), where
            np.testing.assert_array_equal(mine[mask], np.array([list(d) for d in value[mask]]).reshape(-1, 2))
        else:
            assert mine.dtype == value.dtype and mine.shape == value.shape, f"{where}: {mine.dtype} {value.dtype}"
            np.testing.assert_array_equal(mine, value, err_msg=where)


@pytest.mark.parametrize("env_id", ["DuelingBandit-v0", "CopelandDuel-v0"])
@pytest.mark.parametrize("num_envs", [1, 3])
def test_info_equals_sync_vector_env_over_the_single_env(env_id, num_envs):
    """Regret infos do not depend on the random outcomes, so they must match step for step, autoresets included."""
    kwargs = {"preferences": "sushi", "max_episode_steps": 4}
    native = make_vec(env_id, num_envs, **kwargs)
    sync = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", **kwargs)
    assert isinstance(sync, gym.vector.SyncVectorEnv)
    native_obs, native_info = native.reset(seed=0)
    sync_obs, sync_info = sync.reset(seed=0)
    _assert_same_info(native_info, sync_info)
    np.testing.assert_array_equal(native_obs, sync_obs)
    rng = np.random.default_rng(1)
    for step in range(14):  # three episodes and their autoreset steps
        actions = rng.integers(0, 16, size=(num_envs, 2))
        native_step = native.step(actions)
        sync_step = sync.step(actions)
        _assert_same_info(native_step[4], sync_step[4])
        for mine, theirs in zip(native_step[1:4], sync_step[1:4]):  # rewards, terminated, truncated
            assert mine.dtype == theirs.dtype
            np.testing.assert_array_equal(mine, theirs)
        if num_envs == 1 and step < 4:  # Sync seeds sub-env i with seed + i: the first episode is the same
            np.testing.assert_array_equal(native_step[0], sync_step[0])
    native.close()
    sync.close()


def test_info_masks_with_a_sampler_have_gymnasiums_layout():
    kwargs = {"problem_sampler": ProblemSampler("no_condorcet_winner", n_arms=5), "max_episode_steps": 2}
    native = make_vec("CopelandDuel-v0", 4, **kwargs)
    sync = gym.make_vec("CopelandDuel-v0", num_envs=4, vectorization_mode="sync", **kwargs)

    def layout(info):
        return {key: (layout(value) if isinstance(value, dict) else (str(value.dtype), value.shape[:1],
                                                                       value.tolist() if key.startswith("_") else None))
                for key, value in info.items()}

    assert layout(native.reset(seed=0)[1]) == layout(sync.reset(seed=0)[1])
    actions = np.array([[0, 1], [2, 3], [4, 4], [1, 0]])
    for _ in range(5):
        native_info, sync_info = native.step(actions)[4], sync.step(actions)[4]
        sync_duel = sync_info.pop("duel", None)
        native_duel = native_info.pop("duel", None)
        assert (sync_duel is None) == (native_duel is None)
        assert layout(native_info) == layout(sync_info)


def test_info_masks_are_shared_read_only_arrays():
    vector = CopelandDuelVectorEnv(num_envs=3, preferences="multisol")
    _, info = vector.reset(seed=0)
    assert info["_t"].tolist() == [True] * 3 and not info["_t"].flags.writeable
    info = vector.step(np.array([[0, 1], [1, 2], [2, 3]]))[4]
    assert info["_duel"].tolist() == [True] * 3 and info["regret"]["_copeland_komiyama"].tolist() == [True] * 3
    with pytest.raises(ValueError, match="read-only"):
        info["_regret"][0] = False
