"""Every agent is strict at its inputs: outcomes, rewards and actions are validated, never coerced.

``bool()`` would read a reward of -0.25, NaN, 2 or the string ``"False"`` as a win of the first
arm; a set, a dict or ``(True, False)`` would pass as a duel.  Each such input must be refused
with a TypeError or ValueError, and a refused observation must leave the agent untouched.  The
tests run over ``list_agents()``, so an agent registered later is covered automatically.
"""

from __future__ import annotations

import functools
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dueling_gym.agents import list_agents
from dueling_gym.agents.policy import PolicyAgent
from dueling_gym.reductions import PairReduction

from agent_factories import N_ARMS, build_agent, drive

DUELING = list_agents("dueling")
BANDIT = list_agents("bandit")
COMBINATORIAL = list_agents("combinatorial")
EXAMPLES = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

#: Outcomes that are accepted, each with the bool it stands for.
GOOD_OUTCOMES = [(True, True), (False, False), (np.True_, True), (np.False_, False), (1, True), (0, False),
                 (np.int64(1), True), (np.uint8(0), False), (np.int8(1), True)]
bad_outcomes = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),        # 0.0 and 1.0 too: a float is a reward, not an outcome
    st.integers().filter(lambda value: value not in (0, 1)),
    st.integers(min_value=-128, max_value=127).filter(lambda value: value not in (0, 1)).map(np.int8),
    st.text(max_size=6),
    st.sampled_from([None, "False", "True", b"\x01", np.float64(1.0), np.float32(0.0), np.nan, -0.25, 1 + 0j,
                     np.array(True), np.array([1]), [True], (True,), Fraction(1), Decimal(0)]),
)
arm = st.integers(min_value=0, max_value=N_ARMS - 1)
bad_actions = st.one_of(
    st.dictionaries(arm, arm, min_size=2, max_size=2),
    st.sets(arm, min_size=2, max_size=2),
    st.frozensets(arm, min_size=2, max_size=2),
    st.tuples(st.booleans(), st.booleans()),
    st.tuples(arm, st.booleans()),
    st.tuples(st.floats(), arm),
    st.tuples(arm, arm, arm),
    st.tuples(arm),
    st.tuples(st.integers(min_value=N_ARMS), arm),
    st.tuples(arm, st.integers(max_value=-1)),
    st.text(min_size=2, max_size=2),
    st.integers(),
    st.none(),
    st.sampled_from([np.array([0.0, 1.0]), np.array([True, False]), np.array([0, 1, 2]), np.array([[0, 1]])]),
)
bad_rewards = st.one_of(
    st.floats().filter(lambda value: not 0.0 <= value <= 1.0),   # NaN and infinities included
    st.integers().filter(lambda value: value not in (0, 1)),
    st.text(max_size=4),
    st.sampled_from([None, "0.5", np.float64(np.nan), np.float32(1.5), -0.25, 0.5 + 0j, [0.5], np.array([0.5])]),
)
good_rewards = st.one_of(st.floats(min_value=0.0, max_value=1.0), st.booleans(), st.sampled_from([0, 1]),
                         st.floats(min_value=0.0, max_value=1.0, width=32).map(np.float32))


@functools.cache
def _shared_agent(name: str):
    # Refused inputs do not change an agent, so one agent per name serves every example.
    return build_agent(name, seed=0)


def _refuses_feedback(name: str, feedback, match: str) -> None:
    agent = _shared_agent(name)
    with pytest.raises((TypeError, ValueError), match=match):
        agent.observe(agent.act(), feedback)


def _refused(call, value) -> None:
    with pytest.raises((TypeError, ValueError)) as error:
        call()
    assert str(error.value), f"{value!r} was refused without a message"


# ---------------------------------------------------------------------------------------------
# Dueling and combinatorial agents
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", DUELING + COMBINATORIAL)
@EXAMPLES
@given(outcome=bad_outcomes)
def test_dueling_and_combinatorial_agents_refuse_anything_but_a_boolean_outcome(name, outcome):
    _refuses_feedback(name, outcome, "first_won")


@pytest.mark.parametrize("name", DUELING + COMBINATORIAL)
@EXAMPLES
@given(action=bad_actions)
def test_dueling_and_combinatorial_agents_refuse_anything_but_a_pair_of_arms_or_edges(name, action):
    agent = _shared_agent(name)
    _refused(lambda: agent.observe(action, True), action)


@pytest.mark.parametrize("name", DUELING + COMBINATORIAL)
def test_accepted_outcomes_mean_their_bool_and_refused_inputs_change_nothing(name):
    plain, mixed = build_agent(name, seed=1), build_agent(name, seed=1)
    rng = np.random.default_rng(0)
    for step in range(120):
        if plain.done and name in COMBINATORIAL:
            break
        duel = plain.act()
        assert mixed.act() == duel
        first, second = duel
        # Refused observations in between must leave no trace.
        for action, outcome in (((first, second), -0.25), ((first, second), float("nan")), ((first, second), 2),
                                ((first, second), "False"), ({first, second}, True), ({first: second}, True),
                                ((True, False), True), ((float(first), second), True)):
            _refused(lambda: mixed.observe(action, outcome), (action, outcome))
        value, meaning = GOOD_OUTCOMES[int(rng.integers(len(GOOD_OUTCOMES)))]
        plain.observe(duel, meaning)
        mixed.observe((np.int64(first), np.int64(second)) if step % 2 else [first, second], value)
        assert np.asarray(mixed.recommend()).tolist() == np.asarray(plain.recommend()).tolist()
    assert drive(mixed, 60, outcome_seed=3) == drive(plain, 60, outcome_seed=3)


# ---------------------------------------------------------------------------------------------
# Bandit agents
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", BANDIT)
@EXAMPLES
@given(reward=bad_rewards)
def test_bandit_agents_refuse_rewards_outside_the_unit_interval(name, reward):
    _refuses_feedback(name, reward, "reward")


@pytest.mark.parametrize("name", BANDIT)
@EXAMPLES
@given(arm=st.one_of(st.booleans(), st.floats(), st.integers(min_value=N_ARMS), st.integers(max_value=-1),
                     st.text(max_size=2), st.none(), st.tuples(st.integers(0, 4))))
def test_bandit_agents_refuse_anything_but_an_arm(name, arm):
    agent = _shared_agent(name)
    _refused(lambda: agent.observe(arm, 0.5), arm)


@pytest.mark.parametrize("name", BANDIT)
@EXAMPLES
@given(reward=good_rewards)
def test_bandit_agents_accept_rewards_in_the_unit_interval_as_their_float(name, reward):
    reference, agent = build_agent(name, seed=2), build_agent(name, seed=2)
    arm = agent.act()
    assert reference.act() == arm
    agent.observe(np.int64(arm), reward)
    reference.observe(arm, float(reward))
    assert drive(agent, 20, outcome_seed=0) == drive(reference, 20, outcome_seed=0)


# ---------------------------------------------------------------------------------------------
# The learned-policy agent and the pair reduction
# ---------------------------------------------------------------------------------------------
class _ConstantPolicy:
    def predict(self, observation, deterministic=True):
        return np.array([1, 2]), None


@EXAMPLES
@given(outcome=bad_outcomes, action=bad_actions)
def test_policy_agent_refuses_bad_outcomes_and_actions(outcome, action):
    agent = PolicyAgent(_ConstantPolicy(), N_ARMS, seed=0)
    with pytest.raises((TypeError, ValueError), match="first_won"):
        agent.observe((1, 2), outcome)
    _refused(lambda: agent.observe(action, True), action)
    assert agent.tracker.wins.sum() == 0
    agent.observe((1, 2), np.int64(1))
    assert agent.tracker.wins[1, 2] == 1


@EXAMPLES
@given(outcome=bad_outcomes, first=st.one_of(st.booleans(), st.floats(), st.integers(min_value=N_ARMS)))
def test_pair_reduction_refuses_bad_outcomes_and_arms(outcome, first):
    reduction = PairReduction(N_ARMS)
    with pytest.raises((TypeError, ValueError), match="first_won"):
        reduction.update(0, 1, outcome)
    _refused(lambda: reduction.update(first, 1, True), first)
    assert reduction.wins.sum() == 0
    reduction.update(np.int64(0), 1, np.True_)
    reduction.update(1, 0, 0)
    assert reduction.wins[0, 1] == 2
