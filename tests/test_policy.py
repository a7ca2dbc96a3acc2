"""PolicyAgent: a trained Stable-Baselines3 policy behind the DuelingAgent API."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import dueling_gym  # noqa: F401  (registers the environments)
from dueling_gym.agents import DuelingAgent, UniformRandom, list_agents
from dueling_gym.agents.policy import PolicyAgent, duel_statistics_space
from dueling_gym.experiments import simulate
from dueling_gym.wrappers import DuelStatistics, FlatPairActions

from agent_helpers import gym_loop

torch = pytest.importorskip("torch")
sb3 = pytest.importorskip("stable_baselines3")
torch.set_num_threads(1)


class FixedPolicy:
    """A stand-in policy: always the same action; records what it was shown."""

    def __init__(self, action, action_space=None, observation_space=None):
        self.action = action
        self.seen = []
        if action_space is not None:
            self.action_space = action_space
        if observation_space is not None:
            self.observation_space = observation_space

    def predict(self, observation, deterministic=True):
        self.seen.append(observation)
        return np.asarray(self.action), None


@pytest.fixture(scope="module")
def untrained_ppo():
    env = DuelStatistics(gym.make("CopelandDuel-v0", preferences="multisol", max_episode_steps=100))
    return sb3.PPO("MlpPolicy", env, seed=0, device="cpu", n_steps=64, batch_size=64)


def test_policy_agent_is_a_dueling_agent_and_not_registered():
    agent = PolicyAgent(FixedPolicy([1, 2]), 5, seed=0)
    assert isinstance(agent, DuelingAgent)
    assert "policy" not in list_agents()
    assert repr(agent) == "PolicyAgent(FixedPolicy, n_arms=5, observation='duel_statistics', deterministic=True, seed=0)"


def test_actions_map_to_duels():
    pair = PolicyAgent(FixedPolicy([3, 1], spaces.MultiDiscrete([5, 5])), 5)
    assert pair.act() == (3, 1)
    flat = PolicyAgent(FixedPolicy(np.int64(13), spaces.Discrete(25)), 5)
    assert flat.act() == (2, 3)
    inferred = PolicyAgent(FixedPolicy(np.array(7)), 5)  # no action_space: a scalar is a flat index
    assert inferred.act() == (1, 2)


@pytest.mark.parametrize("policy, message", [
    (object(), "predict"),
    (FixedPolicy([0, 1], spaces.MultiDiscrete([4, 4])), "action space"),
    (FixedPolicy(0, spaces.Discrete(15)), "action space"),
    (FixedPolicy([0, 1], observation_space=spaces.Discrete(2)), "observation space"),
])
def test_incompatible_policies_are_rejected(policy, message):
    with pytest.raises((TypeError, ValueError), match=message):
        PolicyAgent(policy, 5)


def test_invalid_arguments():
    with pytest.raises(ValueError, match="observation"):
        PolicyAgent(FixedPolicy([0, 1]), 5, observation="raw")
    with pytest.raises(TypeError, match="deterministic"):
        PolicyAgent(FixedPolicy([0, 1]), 5, deterministic="yes")
    with pytest.raises(ValueError, match="out of range"):
        PolicyAgent(FixedPolicy([0, 7]), 5).act()


class RandomPolicy(FixedPolicy):
    """A stand-in policy that duels uniformly random pairs from its own generator."""

    def __init__(self, seed):
        super().__init__(None, spaces.MultiDiscrete([5, 5]), duel_statistics_space(5))
        self.rng = np.random.default_rng(seed)

    def predict(self, observation, deterministic=True):
        self.seen.append(observation)
        return self.rng.integers(0, 5, size=2), None


def test_observation_is_the_wrapper_observation():
    """The agent shows the policy exactly what DuelStatistics shows it during training."""
    policy = RandomPolicy(0)
    agent = PolicyAgent(policy, 5, seed=0)
    raw = gym.make("CopelandDuel-v0", preferences="multisol", max_episode_steps=300)
    wrapped = DuelStatistics(gym.make("CopelandDuel-v0", preferences="multisol", max_episode_steps=300))
    raw.reset(seed=0)
    observation, _ = wrapped.reset(seed=0)  # same seed: same duel outcomes as ``raw``
    for _ in range(300):
        duel = agent.act()
        np.testing.assert_array_equal(policy.seen[-1], observation)
        outcome, *_ = raw.step(np.array(duel))
        observation, *_ = wrapped.step(np.array(duel))
        agent.observe(duel, bool(outcome))
    np.testing.assert_array_equal(agent.tracker.observation(), observation)
    assert agent.recommend() == int(np.argmax((agent.tracker.wins > agent.tracker.wins.T).sum(axis=1)))
    agent.reset(seed=1)
    assert np.all(agent.tracker.wins == 0)


def test_fast_path_matches_sb3_predict(untrained_ppo):
    agent = PolicyAgent(untrained_ppo, 5, seed=0)
    rng = np.random.default_rng(1)
    for _ in range(200):
        duel = agent.act()
        action, _ = untrained_ppo.predict(agent.tracker.observation(), deterministic=True)
        assert duel == (int(action[0]), int(action[1]))
        agent.observe(tuple(rng.integers(0, 5, size=2)), bool(rng.random() < 0.5))


def test_deterministic_given_a_seed(untrained_ppo):
    def run(deterministic, seed):
        agent = PolicyAgent(untrained_ppo, 5, deterministic=deterministic)
        return simulate(agent, "multisol", 300, seed=seed, fused=False, record_duels=True)

    first, again = run(False, 0), run(False, 0)
    assert np.array_equal(first.duels, again.duels) and first.final_regret() == again.final_regret()
    assert not np.array_equal(first.duels, run(False, 1).duels)  # the stochastic policy follows its seed
    assert len(np.unique(first.duels, axis=0)) > 3
    assert np.array_equal(run(True, 0).duels, run(True, 0).duels)


def test_greedy_policy_ignores_the_agent_seed(untrained_ppo):
    def duels(agent_seed):
        env = gym.make("CopelandDuel-v0", preferences="multisol", max_episode_steps=100)
        env.reset(seed=0)
        agent = PolicyAgent(untrained_ppo, 5, seed=agent_seed)
        played = []
        for _ in range(100):
            duel = agent.act()
            outcome, *_ = env.step(np.array(duel))
            agent.observe(duel, bool(outcome))
            played.append(duel)
        return played

    assert duels(1) == duels(2)


def test_stochastic_sampling_follows_the_policy_distribution(untrained_ppo):
    agent = PolicyAgent(untrained_ppo, 5, deterministic=False, seed=3)
    observation = agent.tracker.observation()
    with torch.no_grad():
        tensor, _ = untrained_ppo.policy.obs_to_tensor(observation)
        heads = untrained_ppo.policy.get_distribution(tensor).distribution
    expected_first = heads[0].probs.numpy().ravel()
    draws = np.array([agent.act() for _ in range(2000)])
    frequencies = np.bincount(draws[:, 0], minlength=5) / len(draws)
    np.testing.assert_allclose(frequencies, expected_first, atol=0.04)


def test_gym_loop_reproduces_simulate(untrained_ppo):
    agent = PolicyAgent(untrained_ppo, 5, deterministic=False)
    duels, outcomes, cumulative = gym_loop(agent, "multisol", 200, seed=4)
    result = simulate(agent, "multisol", 200, seed=4, fused=False, record_duels=True)
    assert np.array_equal(duels, result.duels) and np.array_equal(outcomes, result.outcomes)
    assert cumulative["copeland_komiyama"] == pytest.approx(result.final_regret())


def test_dqn_policy_with_flat_actions_runs():
    env = DuelStatistics(FlatPairActions(gym.make("CopelandDuel-v0", preferences="multisol", max_episode_steps=100)))
    model = sb3.DQN("MlpPolicy", env, seed=0, device="cpu", learning_starts=10, buffer_size=500)
    model.learn(200)
    for policy in (model, model.policy):
        agent = PolicyAgent(policy, 5, seed=0)
        result = simulate(agent, "multisol", 100, seed=0, fused=False)
        assert result.checkpoints[-1] == 100


def test_ppo_trained_on_one_problem_beats_random():
    """A tiny PPO budget on MultiSol (three Copeland winners, gaps 0.3) already beats Random there."""
    horizon = 200
    env = DuelStatistics(gym.make("CopelandDuel-v0", preferences="multisol", max_episode_steps=horizon))
    torch.manual_seed(0)
    model = sb3.PPO("MlpPolicy", env, seed=0, device="cpu", n_steps=512, batch_size=128)
    model.learn(2048)
    agent = PolicyAgent(model, 5, seed=0)
    learned = [simulate(agent, "multisol", horizon, seed=seed, fused=False).final_regret() for seed in range(5)]
    random = [simulate(UniformRandom(5), "multisol", horizon, seed=seed).final_regret() for seed in range(5)]
    assert np.mean(random) == pytest.approx(0.25 * horizon, rel=0.2)
    assert np.mean(learned) < 0.5 * np.mean(random)
