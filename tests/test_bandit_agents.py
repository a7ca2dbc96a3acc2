"""Cardinal bandit agents: UCB1, KL-UCB, Bernoulli Thompson sampling and UCB-SBM."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dueling_gym.agents.base import BanditAgent, KernelBanditAgent
from dueling_gym.agents.kl_ucb import KLUCB, KLUCBState
from dueling_gym.agents.registry import list_agents, make_agent
from dueling_gym.agents.thompson import BernoulliThompson
from dueling_gym.agents.ucb1 import UCB1
from dueling_gym.agents.ucb_sbm import UCBSBM
from dueling_gym.stats import kl_upper_bound

BANDITS = [UCB1, KLUCB, BernoulliThompson, UCBSBM]
MEANS = np.array([0.2, 0.45, 0.5, 0.8, 0.65, 0.3])
BEST = int(np.argmax(MEANS))


def run_bernoulli(agent: BanditAgent, means: np.ndarray, horizon: int, env_seed: int) -> tuple[np.ndarray, float]:
    """Play ``horizon`` rounds on Bernoulli arms; return the pulled arms and the pseudo-regret."""
    env = np.random.default_rng(env_seed)
    rewards = env.random((horizon, means.size)) < means  # one reward table: same rewards for any agent
    arms = np.zeros(horizon, dtype=np.int64)
    for t in range(horizon):
        arm = agent.act()
        agent.observe(arm, float(rewards[t, arm]))
        arms[t] = arm
    regret = float(np.sum(means.max() - means[arms]))
    return arms, regret


@pytest.mark.parametrize("cls", BANDITS, ids=lambda cls: cls.__name__)
def test_learns_the_best_arm(cls):
    horizon = 4000
    agent = cls(MEANS.size, seed=3)
    arms, regret = run_bernoulli(agent, MEANS, horizon, env_seed=5)
    counts = np.bincount(arms, minlength=MEANS.size)
    uniform_regret = horizon * (MEANS.max() - MEANS.mean())
    assert counts.argmax() == BEST
    assert counts[BEST] > 0.6 * horizon
    assert regret < 0.25 * uniform_regret
    assert agent.recommend() == BEST


@pytest.mark.parametrize("cls", [UCB1, KLUCB, UCBSBM], ids=lambda cls: cls.__name__)
def test_index_policies_play_unplayed_arms_first(cls):
    agent = cls(5, seed=0)
    pulled = []
    for _ in range(5):
        arm = agent.act()
        pulled.append(arm)
        agent.observe(arm, 1.0)  # even a perfect first arm does not stop the initial round
    assert pulled == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("cls", BANDITS, ids=lambda cls: cls.__name__)
def test_same_seed_same_sequence_and_reset(cls):
    first, _ = run_bernoulli(cls(MEANS.size, seed=11), MEANS, 600, env_seed=1)
    agent = cls(MEANS.size, seed=11)
    second, _ = run_bernoulli(agent, MEANS, 600, env_seed=1)
    np.testing.assert_array_equal(first, second)
    # reset(seed=) forgets everything and replays the same run
    agent.reset(seed=11)
    assert agent.counts.sum() == 0
    third, _ = run_bernoulli(agent, MEANS, 600, env_seed=1)
    np.testing.assert_array_equal(first, third)
    # reset() without a seed also starts from scratch
    agent.reset()
    assert agent.counts.sum() == 0 and agent.recommend() == 0


def test_thompson_depends_on_its_seed():
    first, _ = run_bernoulli(BernoulliThompson(MEANS.size, seed=1), MEANS, 300, env_seed=1)
    second, _ = run_bernoulli(BernoulliThompson(MEANS.size, seed=2), MEANS, 300, env_seed=1)
    assert not np.array_equal(first, second)


def test_thompson_bernoulli_trick_for_fractional_rewards():
    agent = BernoulliThompson(3, seed=0)
    for _ in range(4000):
        agent.observe(1, 0.3)
    assert agent.successes[1] + agent.failures[1] == 4000 == agent.counts[1]
    assert agent.successes[1] / 4000 == pytest.approx(0.3, abs=0.03)
    # binary rewards are used as they are and do not consume the generator
    before = agent.rng.bit_generator.state
    agent.observe(2, 1.0)
    agent.observe(2, 0)
    agent.observe(2, True)
    assert agent.rng.bit_generator.state == before
    assert (agent.successes[2], agent.failures[2]) == (2.0, 1.0)


def test_ucb_sbm_index():
    agent = UCBSBM(4, a=3.0)
    for arm, reward in [(0, 1.0), (1, 0.0), (2, 1.0), (3, 0.5), (0, 0.0), (2, 1.0), (1, 1.0), (3, 0.25)]:
        agent.observe(arm, reward)
    t = 9  # the next round, 1-based
    index = agent.sums / agent.counts + np.sqrt((3.0 + 2.0) * math.log(t) / (2.0 * agent.counts))
    assert agent.act() == int(np.argmax(index)) == 2
    # ties go to the lowest index
    tied = UCBSBM(3)
    for arm in (0, 1, 2, 2, 1, 0):
        tied.observe(arm, 0.5)
    assert tied.act() == 0


def test_ucb1_index():
    agent = UCB1(3)
    for arm, reward in [(0, 1.0), (1, 0.0), (2, 0.6), (0, 0.0), (1, 1.0), (1, 1.0)]:
        agent.observe(arm, reward)
    index = agent.sums / agent.counts + np.sqrt(2.0 * math.log(6) / agent.counts)
    assert agent.act() == int(np.argmax(index))


@pytest.mark.parametrize("c", [0.0, 3.0])
def test_kl_ucb_matches_plain_argmax_of_kl_indices(c):
    """The screened argmax of the kernel equals the argmax of all KL-UCB indices (lowest index ties)."""
    rng = np.random.default_rng(0)
    agent = KLUCB(2, c=c)
    for trial in range(400):
        n_arms = int(rng.integers(2, 10))
        counts = rng.integers(1, 40, n_arms) * rng.integers(1, 25, n_arms)
        if trial % 4 == 0:
            counts[:] = counts[0]  # exact ties between identical arms
        sums = np.floor(rng.random(n_arms) * (counts + 1)).astype(float)
        if trial % 4 == 0:
            sums[:] = sums[0]
        t = int(counts.sum())
        agent.state = KLUCBState(rng=agent.rng, counts=counts, sums=sums, c=c, t=t)
        log_t = math.log(t)
        level = log_t + (c * math.log(log_t) if c and log_t > 1 else 0.0)
        expected = int(np.argmax(kl_upper_bound(sums / counts, counts.astype(float), level)))
        assert agent.act() == expected


@pytest.mark.parametrize("cls", BANDITS, ids=lambda cls: cls.__name__)
def test_arm_and_reward_validation(cls):
    agent = cls(3, seed=0)
    with pytest.raises(ValueError, match="out of range"):
        agent.observe(3, 1.0)
    with pytest.raises(ValueError, match="out of range"):
        agent.observe(-1, 1.0)
    with pytest.raises(TypeError, match="arm"):
        agent.observe(1.5, 1.0)
    with pytest.raises(ValueError, match="reward"):
        agent.observe(0, 1.5)
    with pytest.raises(ValueError, match="reward"):
        agent.observe(0, -0.1)
    with pytest.raises(ValueError, match="reward"):
        agent.observe(0, float("nan"))
    with pytest.raises(TypeError, match="reward"):
        agent.observe(0, "high")
    assert agent.counts.sum() == 0  # nothing was recorded
    agent.observe(np.int64(2), np.float32(0.0))
    assert agent.counts[2] == 1


def test_bad_hyperparameters():
    with pytest.raises(ValueError, match="c must be"):
        KLUCB(3, c=-1.0)
    with pytest.raises(TypeError, match="c must be a number"):
        KLUCB(3, c="3")
    with pytest.raises(ValueError, match="a must be"):
        UCBSBM(3, a=-0.5)
    with pytest.raises(ValueError, match="finite"):
        UCBSBM(3, a=float("inf"))
    with pytest.raises(ValueError, match="n_arms"):
        UCB1(1)
    with pytest.raises(TypeError, match="n_arms"):
        BernoulliThompson(2.5)


def test_registry_and_repr():
    assert {"ucb1", "kl_ucb", "thompson", "ucb_sbm"} <= set(list_agents("bandit"))
    for name, cls in [("ucb1", UCB1), ("kl_ucb", KLUCB), ("thompson", BernoulliThompson), ("ucb_sbm", UCBSBM)]:
        agent = make_agent(name, n_arms=4, seed=0)
        assert type(agent) is cls and isinstance(agent, KernelBanditAgent)
    assert make_agent("kl_ucb", 4, c=3).hyperparameters == {"c": 3.0}
    assert repr(UCBSBM(4, seed=1)) == "UCBSBM(n_arms=4, a=3.0, seed=1)"
    assert UCB1(4).hyperparameters == {}
    with pytest.raises(TypeError, match="does not accept"):
        make_agent("ucb1", 4, c=1.0)
