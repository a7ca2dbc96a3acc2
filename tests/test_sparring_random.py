"""Uniform Random, Sparring and Self-Sparring: loop equivalence, statistics, behaviour, errors."""

from __future__ import annotations

import numpy as np
import pytest

from agent_helpers import assert_paths_agree
from dueling_gym.agents._pair_statistics import empirical_copeland_winner
from dueling_gym.agents.base import KernelDuelingAgent
from dueling_gym.agents.random_agent import UniformRandom
from dueling_gym.agents.registry import list_agents, make_agent
from dueling_gym.agents.self_sparring import SelfSparring
from dueling_gym.agents.sparring import Sparring, SparringThompson, SparringUCB1
from dueling_gym.experiments import simulate
from dueling_gym.problems import load_problem

#: id -> factory(n_arms); every dueling agent and option of this module.
AGENTS = {
    "random": lambda n: UniformRandom(n),
    "random_include_self": lambda n: UniformRandom(n, include_self=True),
    "sparring": lambda n: Sparring(n),
    "sparring_thompson": lambda n: SparringThompson(n),
    "sparring_ucb1": lambda n: SparringUCB1(n),
    "sparring_kl_ucb": lambda n: Sparring(n, learner="kl_ucb"),
    "self_sparring": lambda n: SelfSparring(n),
    "self_sparring_skip_self": lambda n: SelfSparring(n, skip_self_updates=True, eta=0.5),
}

#: the learners that must find a Condorcet winner
LEARNING_AGENTS = ["sparring", "sparring_thompson", "self_sparring"]


@pytest.mark.parametrize("name", list(AGENTS))
def test_fused_generic_and_gym_loops_are_identical(name):
    problem, horizon, seed = "mslr5-condorcet", 1500, 7
    make = AGENTS[name]
    assert_paths_agree(lambda: make(5), problem, horizon, seed)


@pytest.mark.parametrize("problem", ["sushi", "multisol", "arxiv", "cyclic4"])
@pytest.mark.parametrize("include_self", [False, True])
def test_random_regret_matches_closed_form(problem, include_self):
    matrix = load_problem(problem)
    n_arms, horizon = matrix.n_arms, 200_000
    regret = matrix.regret_matrix("copeland_komiyama")
    if include_self:
        values = regret.ravel()
    else:
        values = regret[~np.eye(n_arms, dtype=bool)]
        assert values.mean() == pytest.approx(matrix.expected_random_regret("copeland_komiyama"), rel=1e-12)
    result = simulate(UniformRandom(n_arms, include_self=include_self), problem, horizon, seed=3)
    per_round = result.final_regret("copeland_komiyama") / horizon
    margin = 5.0 * values.std() / np.sqrt(horizon)  # five standard errors of the mean
    assert abs(per_round - values.mean()) <= margin


def test_random_duels_and_statistics():
    agent = UniformRandom(4, seed=0)
    counts = np.zeros((4, 4), dtype=np.int64)
    rng = np.random.default_rng(1)
    n_self = 0
    for _ in range(12_000):
        first, second = agent.act()
        counts[first, second] += 1
        n_self += first == second
        agent.observe((first, second), bool(rng.random() < 0.5 + 0.1 * (second - first)))
    assert n_self == 0
    off_diagonal = counts[~np.eye(4, dtype=bool)]
    assert off_diagonal.min() > 0.8 * 1000 and off_diagonal.max() < 1.2 * 1000  # uniform over 12 ordered pairs
    assert agent.wins.sum() == 12_000
    assert agent.recommend() == empirical_copeland_winner(agent.wins) == 0

    with_self = UniformRandom(4, include_self=True, seed=0)
    duels = [with_self.act() for _ in range(8000)]
    share = np.mean([first == second for first, second in duels])
    assert share == pytest.approx(0.25, abs=0.03)
    with_self.observe((2, 2), True)  # self-duels are not recorded
    assert with_self.wins.sum() == 0


def test_sparring_starts_with_self_duels_fed_to_both_learners():
    agent = Sparring(4, seed=0)
    for arm in range(4):
        # both UCB-SBM learners play their unplayed arms in order: a self-duel each time; if a
        # self-duel were not fed to both learners, one of them would repeat its unplayed arm
        assert agent.act() == (arm, arm)
        agent.observe((arm, arm), arm % 2 == 0)


def test_self_sparring_updates():
    agent = SelfSparring(3, eta=0.5, seed=0)
    agent.observe((0, 1), True)
    np.testing.assert_array_equal(agent.successes, [0.5, 0.0, 0.0])
    np.testing.assert_array_equal(agent.failures, [0.0, 0.5, 0.0])
    agent.observe((2, 2), False)  # slot-wise: one win and one loss for arm 2
    np.testing.assert_array_equal(agent.successes, [0.5, 0.0, 0.5])
    np.testing.assert_array_equal(agent.failures, [0.0, 0.5, 0.5])
    np.testing.assert_array_equal(agent.plays, [1, 1, 2])
    skipping = SelfSparring(3, skip_self_updates=True)
    skipping.observe((2, 2), True)
    assert skipping.successes.sum() == skipping.failures.sum() == 0
    assert skipping.plays[2] == 2 and skipping.recommend() == 2


@pytest.mark.parametrize("problem", ["sushi", "mslr5-condorcet"])
@pytest.mark.parametrize("name", LEARNING_AGENTS)
def test_finds_the_condorcet_winner(name, problem):
    matrix = load_problem(problem)
    assert matrix.condorcet_winner == 0
    horizon = 20_000
    random_regret = horizon * matrix.expected_random_regret("copeland_komiyama")
    agent = AGENTS[name](matrix.n_arms)
    hits = 0
    for seed in range(5):
        result = simulate(agent, problem, horizon, seed=seed, checkpoints=[horizon])
        hits += result.recommendations[-1] == 0
        assert result.final_regret("copeland_komiyama") < 0.4 * random_regret
    assert hits >= 4


def test_registry_names_and_hyperparameters():
    dueling = set(list_agents("dueling"))
    assert {"random", "sparring", "sparring_thompson", "sparring_ucb1", "self_sparring"} <= dueling
    expected = {
        "random": (UniformRandom, {"include_self": False}),
        "sparring": (Sparring, {"learner": "ucb_sbm", "a": 3.0}),
        "sparring_thompson": (SparringThompson, {}),
        "sparring_ucb1": (SparringUCB1, {}),
        "self_sparring": (SelfSparring, {"eta": 1.0, "skip_self_updates": False}),
    }
    for name, (cls, hyperparameters) in expected.items():
        agent = make_agent(name, n_arms=5, seed=0)
        assert type(agent) is cls and isinstance(agent, KernelDuelingAgent)
        assert agent.hyperparameters == hyperparameters
    assert make_agent("sparring", 5, learner="Thompson").learner == "thompson"
    assert repr(Sparring(3, seed=2)) == "Sparring(n_arms=3, learner='ucb_sbm', a=3.0, seed=2)"
    with pytest.raises(TypeError, match="does not accept"):
        make_agent("sparring_thompson", 5, learner="ucb1")


def test_bad_hyperparameters():
    with pytest.raises(ValueError, match="unknown learner"):
        Sparring(4, learner="exp3")
    with pytest.raises(TypeError, match="learner must be a string"):
        Sparring(4, learner=1)
    with pytest.raises(ValueError, match="a must be"):
        Sparring(4, a=-1.0)
    with pytest.raises(TypeError, match="a must be a number"):
        Sparring(4, a="3")
    with pytest.raises(ValueError, match="no effect"):
        Sparring(4, learner="thompson", a=2.0)
    with pytest.raises(ValueError, match="eta must be"):
        SelfSparring(4, eta=0.0)
    with pytest.raises(TypeError, match="eta must be a number"):
        SelfSparring(4, eta=None)
    with pytest.raises(TypeError, match="skip_self_updates"):
        SelfSparring(4, skip_self_updates="yes")
    with pytest.raises(TypeError, match="include_self"):
        UniformRandom(4, include_self=1)
    with pytest.raises(ValueError, match="n_arms"):
        SparringThompson(1)
    with pytest.raises(ValueError, match="out of range"):
        SelfSparring(3).observe((0, 3), True)
