"""SB3DuelVecEnv: the native vector env behind Stable-Baselines3's VecEnv protocol."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
torch = pytest.importorskip("torch")
torch.set_num_threads(1)

from dueling_gym import ProblemSampler  # noqa: E402
from dueling_gym.envs.vector import CopelandDuelVectorEnv  # noqa: E402
from dueling_gym.observations import encode_wins, observation_size  # noqa: E402
from dueling_gym.wrappers.sb3_vec_env import SB3DuelVecEnv  # noqa: E402

K = 4


def make(num_envs=3, horizon=5, actions="flat", preferences=None):
    if preferences is None:
        native = CopelandDuelVectorEnv(num_envs=num_envs, max_episode_steps=horizon,
                                       problem_sampler=ProblemSampler("unique_copeland_winner", n_arms=K))
    else:
        native = CopelandDuelVectorEnv(num_envs=num_envs, max_episode_steps=horizon, preferences=preferences)
    return SB3DuelVecEnv(native, actions=actions)


def test_spaces_and_reset_observation():
    env = make()
    assert env.observation_space.shape == (observation_size(K),)
    assert env.action_space.n == K * K
    observation = env.reset()
    np.testing.assert_array_equal(observation, encode_wins(np.zeros((3, K, K), dtype=np.int64)))


def test_observations_count_the_duels_and_episodes_end_together():
    env = make(num_envs=3, horizon=5)
    env.seed(1)
    env.reset()
    rng = np.random.default_rng(0)
    for step in range(5):
        actions = rng.integers(0, K * K, size=3)
        observation, rewards, dones, infos = env.step(actions)
        assert rewards.shape == (3,) and np.all(rewards <= 0)
        if step < 4:
            assert not dones.any()
            assert np.all(env.wins.sum(axis=(1, 2)) == step + 1)
            first, second = np.divmod(actions, K)
            played = env.wins[np.arange(3), first, second] + env.wins[np.arange(3), second, first]
            assert np.all(played >= 1)
            np.testing.assert_array_equal(observation, encode_wins(env.wins))
            assert all(info == {} for info in infos)
    assert dones.all()
    for k, info in enumerate(infos):
        assert info["TimeLimit.truncated"] is True
        assert info["episode"]["l"] == 5
        assert info["terminal_observation"].shape == (observation_size(K),)
        assert info["cumulative_regret"]["copeland_komiyama"] == pytest.approx(-info["episode"]["r"], rel=1e-5)
    # The final observation counts all five duels; the returned one starts the next run.
    assert np.exp(10 * infos[0]["terminal_observation"][-1]) - 1 == pytest.approx(5, rel=1e-5)
    np.testing.assert_array_equal(observation, encode_wins(np.zeros((3, K, K), dtype=np.int64)))
    assert env.episodes_completed == 1 and env.episode_step == 0


def test_self_duels_are_counted_on_the_diagonal():
    env = make(num_envs=2, horizon=10, actions="pair")
    env.reset()
    env.step(np.array([[1, 1], [2, 2]]))
    assert env.wins[0, 1, 1] == 1 and env.wins[1, 2, 2] == 1 and env.wins.sum() == 2


def test_seeding_reproduces_problems_and_outcomes():
    def run(seed):
        env = make(num_envs=4, horizon=3)
        env.seed(seed)
        env.reset()
        out = []
        for _ in range(7):
            observation, rewards, _, _ = env.step(np.arange(4) * 3 % (K * K))
            out.append((observation.copy(), rewards.copy()))
        return out

    first, second, other = run(3), run(3), run(4)
    for (o1, r1), (o2, r2) in zip(first, second):
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)
    assert any(not np.array_equal(r1, r3) for (_, r1), (_, r3) in zip(first, other))


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="actions must be one of"):
        make(actions="pairs")
    with pytest.raises(ValueError, match="max_episode_steps"):
        SB3DuelVecEnv(CopelandDuelVectorEnv(num_envs=2, preferences="multisol"))
    with pytest.raises(TypeError, match="native dueling vector env"):
        SB3DuelVecEnv(object())
    env = make()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(3, dtype=np.int64))
    env.reset()
    with pytest.raises(ValueError, match=r"lie in \[0, 15\]"):
        env.step(np.array([0, 1, 16]))
    with pytest.raises(TypeError, match="integers"):
        env.step(np.zeros(3))
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(4, dtype=np.int64))


def test_sb3_ppo_learns_through_the_adapter():
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_checker import check_env  # noqa: F401  (SB3 present)

    env = make(num_envs=16, horizon=8)
    model = PPO("MlpPolicy", env, n_steps=8, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(256)
    assert model.num_timesteps == 256
    assert env.get_attr("n_arms") == [K] * 16
    assert env.env_is_wrapped(object) == [False] * 16


def test_final_infos_carry_the_regret_notions_and_no_mask_keys():
    env = make(num_envs=2, horizon=3)
    env.seed(0)
    env.reset()
    for _ in range(3):
        _, _, dones, infos = env.step(np.zeros(2, dtype=np.int64))
    assert dones.all()
    for info in infos:
        regret = info["cumulative_regret"]
        assert set(regret) == set(env.vector_env.regret_notions)
        assert not any(key.startswith("_") for key in regret)
        assert all(isinstance(value, float) for value in regret.values())


def test_public_from_dueling_gym_wrappers_and_imported_lazily():
    import dueling_gym.wrappers as wrappers

    assert "SB3DuelVecEnv" in wrappers.__all__ and "SB3DuelVecEnv" in dir(wrappers)
    assert wrappers.SB3DuelVecEnv is SB3DuelVecEnv
    from stable_baselines3.common.vec_env import VecEnv

    # The public class derives from SB3's VecEnv alone: no private base in its documentation.
    assert SB3DuelVecEnv.__bases__ == (VecEnv,) and SB3DuelVecEnv.__qualname__ == "SB3DuelVecEnv"
    assert "Parameters" in SB3DuelVecEnv.__doc__ and "DummyVecEnv" in SB3DuelVecEnv.__doc__
    loaded = json.loads(subprocess.run(
        [sys.executable, "-c", "import sys, json, dueling_gym.wrappers; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True).stdout)
    assert not [name for name in loaded if name.split(".")[0] in ("stable_baselines3", "torch")]
