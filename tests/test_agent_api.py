"""The common agent API: construction, registry, seeding, validation."""

from __future__ import annotations

import numpy as np
import pytest

from dueling_gym.agents import RUCB, DuelingAgent, list_agents, make_agent


def test_make_agent_by_name():
    agent = make_agent("rucb", n_arms=5, seed=0, alpha=0.6)
    assert isinstance(agent, RUCB) and agent.alpha == 0.6 and agent.n_arms == 5
    assert make_agent("RUCB", n_arms=3).name == "rucb"
    assert "rucb" in list_agents() and "rucb" in list_agents("dueling")
    with pytest.raises(ValueError, match="unknown agent .* choose one of"):
        make_agent("rucbb", n_arms=5)
    with pytest.raises(TypeError, match="does not accept"):
        make_agent("rucb", n_arms=5, beta=2)
    with pytest.raises(ValueError, match="kind"):
        list_agents("other")


def test_repr_and_hyperparameters():
    agent = RUCB(4, seed=3)
    assert repr(agent) == "RUCB(n_arms=4, alpha=0.51, use_hypothesis=True, seed=3)"
    assert agent.hyperparameters == {"alpha": 0.51, "use_hypothesis": True}


@pytest.mark.parametrize("n_arms,error", [(1, ValueError), (0, ValueError), (2.5, TypeError), (True, TypeError)])
def test_n_arms_validation(n_arms, error):
    with pytest.raises(error, match="n_arms"):
        RUCB(n_arms)


def test_observe_validates_the_action():
    agent = RUCB(3, seed=0)
    with pytest.raises(ValueError, match="out of range"):
        agent.observe((0, 3), True)
    with pytest.raises(TypeError, match="pair of integer arms"):
        agent.observe((0.0, 1.0), True)
    with pytest.raises(TypeError, match="pair of integer arms"):
        agent.observe(2, True)


def test_reset_with_seed_replays_and_without_seed_continues():
    def run(agent, steps=200):
        duels = []
        rng = np.random.default_rng(0)
        for _ in range(steps):
            duel = agent.act()
            agent.observe(duel, rng.random() < 0.5)
            duels.append(duel)
        return duels

    agent = RUCB(6, seed=9)
    first = run(agent)
    agent.reset(seed=9)
    assert run(agent) == first
    assert agent.wins.sum() > 0
    agent.reset()
    assert agent.wins.sum() == 0
    assert run(agent) != first


def test_act_returns_python_ints_in_range():
    agent = RUCB(4, seed=1)
    for _ in range(50):
        first, second = agent.act()
        assert type(first) is int and type(second) is int and 0 <= first < 4 and 0 <= second < 4
        agent.observe((first, second), True)
    assert type(agent.recommend()) is int
    assert agent.done is False


def test_abstract_base_cannot_be_instantiated():
    with pytest.raises(TypeError):
        DuelingAgent(3)
