"""Gymnasium wrappers: checkers, spaces, exact regret accounting, reductions with bandit agents."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

import dueling_gym
from dueling_gym import ProblemSampler
from dueling_gym.agents import KLUCB, UCB1, BernoulliThompson
from dueling_gym.observations import DuelStatisticsTracker
from dueling_gym.reductions import PairReduction, plugin_scores, score_kind
from dueling_gym.wrappers import (
    BordaReductionWrapper,
    DuelStatistics,
    FlatPairActions,
    PairReductionWrapper,
    duel_statistics_observation,
)

ENV_IDS = ("DuelingBandit-v0", "CopelandDuel-v0")

# name -> wrapper stack applied to a made environment
STACKS = {
    "pair_copeland": lambda env: PairReductionWrapper(env),
    "pair_borda": lambda env: PairReductionWrapper(env, score="borda"),
    "borda": BordaReductionWrapper,
    "duel_statistics": DuelStatistics,
    "flat": FlatPairActions,
    "statistics_of_flat": lambda env: DuelStatistics(FlatPairActions(env)),
    "flat_of_statistics": lambda env: FlatPairActions(DuelStatistics(env)),
    "statistics_of_pair": lambda env: DuelStatistics(PairReductionWrapper(env)),
    "statistics_of_borda": lambda env: DuelStatistics(BordaReductionWrapper(env)),
}

# Gymnasium's checker always warns that a wrapped environment is not the raw one.
_EXPECTED_GYM_WARNING = "is different from the unwrapped version"


def _make(env_id: str, stack: str, **kwargs) -> gym.Env:
    kwargs.setdefault("max_episode_steps", 50)
    return STACKS[stack](gym.make(env_id, **kwargs))


@pytest.mark.parametrize("stack", sorted(STACKS))
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasium_checker(env_id, stack):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(_make(env_id, stack))
    unexpected = [str(w.message) for w in caught if _EXPECTED_GYM_WARNING not in str(w.message)]
    assert unexpected == []


@pytest.mark.parametrize("stack", sorted(STACKS))
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_stable_baselines3_checker(env_id, stack):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_checker.check_env(_make(env_id, stack), warn=True)
    assert [str(w.message) for w in caught] == []


def test_wrappers_record_their_constructor_arguments():
    env = PairReductionWrapper(gym.make("CopelandDuel-v0", preferences="cyclic4"), score="borda")
    assert isinstance(env, gym.utils.RecordConstructorArgs)
    assert env._saved_kwargs == {"score": "borda"}
    rebuilt = gym.make(env.spec)  # the spec carries the wrapper and its arguments
    assert isinstance(rebuilt, PairReductionWrapper) and rebuilt.score == "borda"
    assert rebuilt.unwrapped.problem == env.unwrapped.problem
    for wrapper in (BordaReductionWrapper, DuelStatistics, FlatPairActions):
        wrapped = wrapper(gym.make("CopelandDuel-v0"))
        assert isinstance(wrapped, gym.utils.RecordConstructorArgs)
        assert type(gym.make(wrapped.spec)) is wrapper


def test_spaces():
    base = gym.make("CopelandDuel-v0", preferences="multisol")
    assert PairReductionWrapper(base).action_space == spaces.Discrete(15)
    assert PairReductionWrapper(base).observation_space == spaces.Discrete(2)
    assert BordaReductionWrapper(base).action_space == spaces.Discrete(5)
    assert FlatPairActions(base).action_space == spaces.Discrete(25)
    statistics = DuelStatistics(base)
    assert statistics.observation_space == spaces.Box(0.0, 1.0, (50,), np.float32)
    assert statistics.action_space == base.action_space


def test_wrappers_reject_environments_that_are_not_duels():
    with pytest.raises(TypeError, match="MultiDiscrete"):
        PairReductionWrapper(gym.make("CartPole-v1"))
    with pytest.raises(TypeError, match="MultiDiscrete"):
        BordaReductionWrapper(FlatPairActions(gym.make("CopelandDuel-v0")))
    with pytest.raises(TypeError, match="MultiDiscrete"):
        FlatPairActions(gym.make("CombinatorialDuel-v0"))
    with pytest.raises(TypeError, match="Discrete\\(2\\)"):
        DuelStatistics(DuelStatistics(gym.make("CopelandDuel-v0")))


@pytest.mark.parametrize("wrapper, bad, error", [
    (PairReductionWrapper, 15, ValueError), (PairReductionWrapper, -1, ValueError),
    (PairReductionWrapper, 1.5, TypeError), (BordaReductionWrapper, 5, ValueError),
    (BordaReductionWrapper, np.array([0, 1]), TypeError), (FlatPairActions, 25, ValueError),
    (FlatPairActions, "3", TypeError),
])
def test_invalid_actions_raise(wrapper, bad, error):
    env = wrapper(gym.make("CopelandDuel-v0", preferences="multisol"))
    env.reset(seed=0)
    with pytest.raises(error, match="action"):
        env.step(bad)


def test_integer_like_actions_are_accepted():
    env = PairReductionWrapper(gym.make("CopelandDuel-v0", preferences="multisol"))
    env.reset(seed=0)
    for action in (3, np.int64(3), np.array(3), np.array([3])):
        assert env.step(action)[4]["duel"] == (0, 3)


# ---------------------------------------------------------------------------------------------
# Exact regret accounting
# ---------------------------------------------------------------------------------------------
def _duel_of(stack: str, env: gym.Env, action, info) -> tuple[int, int]:
    """The duel an action plays, decoded from the stack's own action map where it is known
    (and then checked against the duel the environment reports in info)."""
    n_arms = env.unwrapped.n_arms
    if stack.startswith("pair") or stack == "statistics_of_pair":
        duel = tuple(int(a) for a in PairReduction(n_arms).pair(int(action)))
    elif "borda" in stack and not stack.startswith("pair"):
        # the opponent is random: only the first arm follows from the action
        assert info["duel"][0] == int(action)
        duel = info["duel"]
    elif np.ndim(action) == 0:  # FlatPairActions on top
        duel = divmod(int(action), n_arms)
    else:
        first, second = action
        duel = (int(first), int(second))
    assert tuple(info["duel"]) == tuple(duel)
    return duel


@pytest.mark.parametrize("stack", sorted(STACKS))
@pytest.mark.parametrize("env_id, source", [
    ("CopelandDuel-v0", {"preferences": "gap"}),
    ("DuelingBandit-v0", {"preferences": "sushi"}),
    ("CopelandDuel-v0", {"problem_sampler": ProblemSampler("no_condorcet_winner", n_arms=4)}),
])
def test_regret_accounting_is_exact(env_id, source, stack):
    horizon = 300
    env = _make(env_id, stack, max_episode_steps=horizon, **source)
    env.action_space.seed(7)
    for episode in range(2):  # the second episode checks that everything restarts at reset
        _, info = env.reset(seed=episode)
        problem = env.unwrapped.problem
        notions = problem.defined_regret_notions
        assert set(info["cumulative_regret"]) >= {"copeland_komiyama", "copeland_zoghi", "borda"}
        assert all(value == 0.0 for value in info["cumulative_regret"].values())
        totals = dict.fromkeys(info["cumulative_regret"], 0.0)
        for t in range(1, horizon + 1):
            action = env.action_space.sample()
            _, _, terminated, truncated, info = env.step(action)
            first, second = _duel_of(stack, env, action, info)
            for notion in totals:
                step_regret = float(problem.regret(notion, first, second))
                assert info["regret"][notion] == pytest.approx(step_regret, abs=1e-12)
                totals[notion] += step_regret
            assert info["t"] == t
            assert terminated is False and truncated is (t == horizon)
        for notion in totals:
            assert notion in notions
            assert info["cumulative_regret"][notion] == pytest.approx(totals[notion], rel=1e-12, abs=1e-9)


# ---------------------------------------------------------------------------------------------
# Pair reduction
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("score", ["copeland", "borda"])
def test_pair_reduction_reward_is_estimated_sup_product_after_the_duel(score):
    env = PairReductionWrapper(gym.make("CopelandDuel-v0", preferences="mslr5-noncondorcet"), score=score)
    reduction = PairReduction(5, score)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(400):
        k = int(rng.integers(0, 15))
        outcome, reward, _, _, info = env.step(k)
        first, second = reduction.pair(k)
        assert info["duel"] == (first, second)
        reduction.update(first, second, bool(outcome))
        # from scratch: plug-in scores of the environment's own win counts (self-duels excluded)
        wins = env.unwrapped.win_counts.copy()
        np.fill_diagonal(wins, 0)
        scores = plugin_scores(wins, score_kind(score), np.empty(5))
        assert type(reward) is float
        assert reward == reduction.mean(k) == pytest.approx(scores[first] * scores[second], abs=1e-15)
        assert 0.0 <= reward <= 1.0
    env.reset(seed=3)
    assert np.all(env.reduction.wins == 0)


def test_pair_reduction_self_pair_is_a_self_duel():
    env = PairReductionWrapper(gym.make("CopelandDuel-v0", preferences="multisol"))
    env.reset(seed=0)
    k = env.reduction.index(2, 2)
    _, reward, _, _, info = env.step(k)
    assert info["duel"] == (2, 2) and reward == 0.0 and info["regret"]["copeland_komiyama"] == 0.0
    assert np.all(env.reduction.wins == 0)


def test_pair_reduction_with_kl_ucb_has_sublinear_copeland_regret():
    """MultiSol: gaps of 0.3; KL-UCB on the pair reduction settles on pairs of Copeland winners."""
    horizon = 20_000
    problem = dueling_gym.load_problem("multisol")
    random_total = problem.expected_random_regret("copeland_komiyama") * horizon  # 5000
    for seed in range(3):
        env = PairReductionWrapper(gym.make("CopelandDuel-v0", preferences="multisol", max_episode_steps=horizon))
        agent = KLUCB(env.action_space.n, seed=seed)
        env.reset(seed=seed)
        halfway = None
        for t in range(1, horizon + 1):
            k = agent.act()
            _, reward, _, _, info = env.step(k)
            agent.observe(k, reward)
            if t == horizon // 2:
                halfway = info["cumulative_regret"]["copeland_komiyama"]
        final = info["cumulative_regret"]["copeland_komiyama"]
        assert final < 0.03 * random_total
        assert final - halfway < 0.3 * halfway  # the second half costs far less than the first
        first, second = env.reduction.pair(agent.recommend())
        assert {first, second} <= set(problem.copeland_winners.tolist())
        assert env.reduction.best_arm() in problem.copeland_winners


# ---------------------------------------------------------------------------------------------
# Borda reduction
# ---------------------------------------------------------------------------------------------
def test_borda_reduction_opponents_are_uniform_and_reproducible():
    def opponents(seed):
        env = BordaReductionWrapper(gym.make("DuelingBandit-v0", preferences="sushi", max_episode_steps=5000))
        env.reset(seed=seed)
        drawn = []
        for _ in range(3000):
            outcome, reward, _, _, info = env.step(3)
            drawn.append(info["duel"][1])
            assert info["duel"][0] == 3 and reward == float(outcome) and type(reward) is float
        return np.array(drawn)

    first = opponents(0)
    assert np.array_equal(first, opponents(0))
    assert not np.array_equal(first, opponents(1))
    assert 3 not in first
    counts = np.bincount(first, minlength=16)
    assert counts[3] == 0 and counts[np.arange(16) != 3].min() > 3000 / 15 * 0.6


def test_borda_reduction_mean_reward_is_the_borda_score():
    problem = dueling_gym.load_problem("cyclic4")
    env = BordaReductionWrapper(gym.make("CopelandDuel-v0", preferences="cyclic4", max_episode_steps=20_000))
    env.reset(seed=0)
    for arm in range(4):
        rewards = [env.step(arm)[1] for _ in range(4000)]
        assert np.mean(rewards) == pytest.approx(problem.borda_scores[arm], abs=0.03)


@pytest.mark.parametrize("agent_class", [UCB1, KLUCB, BernoulliThompson])
@pytest.mark.parametrize("problem_name", ["cyclic4", "mslr5-condorcet"])
def test_bandit_agents_find_the_borda_winner_through_the_borda_reduction(agent_class, problem_name):
    horizon = 10_000
    problem = dueling_gym.load_problem(problem_name)
    env = BordaReductionWrapper(gym.make("CopelandDuel-v0", preferences=problem_name, max_episode_steps=horizon))
    agent = agent_class(env.action_space.n, seed=0)  # the ordinary bandit agent, unchanged
    env.reset(seed=0)
    truncated = False
    while not truncated:
        arm = agent.act()
        _, reward, _, truncated, info = env.step(arm)
        agent.observe(arm, reward)
    assert info["t"] == horizon
    assert agent.recommend() in problem.borda_winners
    assert agent.counts[agent.recommend()] > horizon / 2


# ---------------------------------------------------------------------------------------------
# DuelStatistics and FlatPairActions
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stack", ["duel_statistics", "statistics_of_flat", "statistics_of_pair", "statistics_of_borda"])
def test_duel_statistics_observation_matches_the_environment_counts(stack):
    env = _make("CopelandDuel-v0", stack, preferences="arxiv", max_episode_steps=500)
    env.action_space.seed(1)
    observation, _ = env.reset(seed=2)
    n_arms = 6
    assert np.array_equal(observation, np.concatenate([np.full(36, 0.5), np.ones(36)]).astype(np.float32))
    for _ in range(200):
        observation, *_ = env.step(env.action_space.sample())
        assert observation.dtype == np.float32 and observation.shape == (2 * n_arms * n_arms,)
        assert np.array_equal(observation, duel_statistics_observation(env.unwrapped.win_counts))
    rates = observation[:36].reshape(6, 6)
    counts = observation[36:].reshape(6, 6)
    np.testing.assert_allclose(rates + rates.T, np.ones((6, 6)), atol=1e-6)
    np.testing.assert_array_equal(counts, counts.T)
    observation, _ = env.reset(seed=3)  # statistics restart with the episode
    assert np.all(observation[:36] == 0.5) and np.all(observation[36:] == 1.0)


def test_duel_statistics_observations_are_fresh_arrays():
    env = DuelStatistics(gym.make("CopelandDuel-v0"))
    first, _ = env.reset(seed=0)
    second, *_ = env.step(np.array([0, 1]))
    assert not np.shares_memory(first, second)
    assert np.all(first[:25] == 0.5)


def test_duel_statistics_tracker_matches_a_hand_computation():
    tracker = DuelStatisticsTracker(3)
    for duel, won in [((0, 1), True), ((1, 0), True), ((0, 1), True), ((2, 2), False), ((2, 0), False)]:
        tracker.update(*duel, won)
    observation = tracker.observation()
    rates, counts = observation[:9].reshape(3, 3), observation[9:].reshape(3, 3)
    np.testing.assert_allclose(rates, [[0.5, 2 / 3, 1.0], [1 / 3, 0.5, 0.5], [0.0, 0.5, 0.5]], rtol=1e-6)
    np.testing.assert_allclose(counts, 1 / np.sqrt(1 + np.array([[0, 3, 1], [3, 0, 0], [1, 0, 1]])), rtol=1e-6)


def test_flat_pair_actions_decode_row_major():
    env = FlatPairActions(gym.make("CopelandDuel-v0", preferences="multisol"))
    env.reset(seed=0)
    for action in range(25):
        assert np.array_equal(env.action(action), [action // 5, action % 5])
    _, reward, *_ = env.step(3 * 5 + 4)
    assert reward == -dueling_gym.load_problem("multisol").regret("copeland_komiyama", 3, 4)
