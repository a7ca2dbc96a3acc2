"""Every agent pickles and deep-copies, and the copy continues the original's exact trajectory.

Checkpoints, worker processes and what-if forks all rely on this.  The tests run over
``list_agents()``, so an agent registered later is covered automatically.
"""

from __future__ import annotations

import copy
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from itertools import combinations

import numba
import numpy as np
import pytest
from numba.experimental import structref
from numba.experimental.structref import StructRefProxy

from dueling_gym.agents import list_agents
from dueling_gym.agents._state_snapshot import decode_attributes, encode_attributes, read_fields
from dueling_gym.agents.state import AgentStateType

from agent_factories import build_agent, drive

WARM_UP, CONTINUATION = 150, 150


def _buffers(agent) -> tuple[dict[tuple, np.ndarray], dict[tuple, np.random.Generator]]:
    """Every array and generator of the agent: its attributes and the fields of its (nested) states."""
    arrays: dict[tuple, np.ndarray] = {}
    generators: dict[tuple, np.random.Generator] = {}
    seen: set[int] = set()

    def visit(path: tuple, value) -> None:
        if isinstance(value, np.ndarray):
            arrays[path] = value
        elif isinstance(value, np.random.Generator):
            generators[path] = value
        elif isinstance(value, StructRefProxy) and value._meminfo.data not in seen:
            seen.add(value._meminfo.data)
            for name, field in read_fields(value).items():
                visit(path + (name,), field)

    for name, value in vars(agent).items():
        visit((name,), value)
    return arrays, generators


def _sharing(agent) -> tuple[set, set]:
    """Which arrays share memory and which generators are one object, by path."""
    arrays, generators = _buffers(agent)
    shared_arrays = {(a, b) for a, b in combinations(sorted(arrays), 2) if np.shares_memory(arrays[a], arrays[b])}
    same_generators = {(a, b) for a, b in combinations(sorted(generators), 2) if generators[a] is generators[b]}
    return shared_arrays, same_generators


@pytest.mark.parametrize("name", list_agents())
def test_copies_continue_the_exact_trajectory_and_are_independent(name):
    agent = build_agent(name, seed=3)
    drive(agent, WARM_UP, outcome_seed=1)
    pickled = pickle.loads(pickle.dumps(agent))
    forked = copy.deepcopy(agent)
    assert type(pickled) is type(agent) and type(forked) is type(agent)
    if isinstance(getattr(agent, "state", None), StructRefProxy):
        # Same Numba type: the compiled kernels (and the fused simulator) are reused, not recompiled.
        assert pickled.state._numba_type_ == agent.state._numba_type_
        assert forked.state._numba_type_ == agent.state._numba_type_
        assert _sharing(pickled) == _sharing(agent) == _sharing(forked)
        original_arrays, original_generators = _buffers(agent)
        for copied in (pickled, forked):
            arrays, generators = _buffers(copied)
            assert not any(np.shares_memory(a, b) for a in arrays.values() for b in original_arrays.values())
            assert not {id(g) for g in generators.values()} & {id(g) for g in original_generators.values()}
    # The fork runs first: had it shared anything with the original, the original would drift
    # away from the pickled copy, which shares nothing by construction.
    forked_trace = drive(forked, CONTINUATION, outcome_seed=2)
    original_trace = drive(agent, CONTINUATION, outcome_seed=2)
    pickled_trace = drive(pickled, CONTINUATION, outcome_seed=2)
    assert forked_trace == original_trace == pickled_trace
    assert len(original_trace) > 0 or agent.done


@pytest.mark.parametrize("name", ["rucb", "sparring_thompson", "car_cond"])
def test_copy_of_a_copy_and_reset_continue_the_stream(name):
    agent = build_agent(name, seed=5)
    drive(agent, 60, outcome_seed=0)
    twice = pickle.loads(pickle.dumps(copy.deepcopy(agent)))
    assert drive(twice, 80, outcome_seed=4) == drive(agent, 80, outcome_seed=4)
    # reset() without a seed continues the generator's stream: in the copy too.
    agent.reset()
    twice.reset()
    assert drive(twice, 80, outcome_seed=6) == drive(agent, 80, outcome_seed=6)


def test_shallow_copy_shares_the_state():
    agent = build_agent("rucb", seed=0)
    drive(agent, 20, outcome_seed=0)
    shallow = copy.copy(agent)
    assert shallow.state is agent.state and shallow.wins is agent.wins and shallow.rng is agent.rng


def test_attribute_views_into_the_state_are_rebuilt_as_views():
    agent = build_agent("rucb", seed=0)
    agent.frozen_wins = agent.wins.view()
    agent.frozen_wins.flags.writeable = False
    agent.first_row = agent.wins[0]
    drive(agent, 50, outcome_seed=0)
    for clone in (pickle.loads(pickle.dumps(agent)), copy.deepcopy(agent)):
        assert clone.wins is read_fields(clone.state)["wins"]
        assert not clone.frozen_wins.flags.writeable and np.shares_memory(clone.frozen_wins, clone.wins)
        assert np.shares_memory(clone.first_row, clone.wins)
        drive(clone, 50, outcome_seed=1)
        np.testing.assert_array_equal(clone.frozen_wins, clone.wins)
        np.testing.assert_array_equal(clone.first_row, clone.wins[0])


def test_policy_agent_copies_continue_the_exact_trajectory():
    torch = pytest.importorskip("torch")
    sb3 = pytest.importorskip("stable_baselines3")
    torch.set_num_threads(1)
    import gymnasium as gym

    from dueling_gym.agents.policy import PolicyAgent
    from dueling_gym.wrappers import DuelStatistics

    env = DuelStatistics(gym.make("CopelandDuel-v0", preferences="mslr5-condorcet", max_episode_steps=50))
    model = sb3.PPO("MlpPolicy", env, seed=0, device="cpu", n_steps=64, batch_size=64)
    for policy in (model, model.policy):
        agent = PolicyAgent(policy, 5, deterministic=False, seed=0)  # sampled actions: the generator matters
        drive(agent, 30, outcome_seed=0)
        pickled = pickle.loads(pickle.dumps(agent))
        forked = copy.deepcopy(agent)
        forked_trace = drive(forked, 30, outcome_seed=1)
        assert forked_trace == drive(agent, 30, outcome_seed=1) == drive(pickled, 30, outcome_seed=1)


def _continue_in_worker(payload: bytes, steps: int, outcome_seed: int) -> tuple[list, bytes]:
    agent = pickle.loads(payload)
    return drive(agent, steps, outcome_seed), pickle.dumps(agent)


def test_a_pickled_agent_continues_in_a_fresh_process():
    names = ["sparring", "cw_rmed", "car_cond"]  # nested states, a process-wide LP pool, a replayed generator
    agents = {name: build_agent(name, seed=7) for name in names}
    for agent in agents.values():
        drive(agent, 80, outcome_seed=0)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        futures = {name: pool.submit(_continue_in_worker, pickle.dumps(agent), 80, 1)
                   for name, agent in agents.items()}
        results = {name: future.result(timeout=300) for name, future in futures.items()}
    for name, agent in agents.items():
        trace, returned = results[name]
        assert trace == drive(agent, 80, outcome_seed=1), name
        # The agent that worked in the other process comes back and continues in step with ours.
        assert drive(pickle.loads(returned), 40, outcome_seed=2) == drive(agent, 40, outcome_seed=2), name


@structref.register
class _ScratchStateType(AgentStateType):
    """A state whose kernel replaces its arrays (they then have no Python owner)."""


class _ScratchState(structref.StructRefProxy):
    pass


structref.define_proxy(_ScratchState, _ScratchStateType, ["values", "alias", "count"])


@numba.njit
def _regrow(state):
    state.values = np.arange(6.0)
    state.alias = state.values
    state.count += 1


def test_arrays_allocated_by_a_kernel_stay_shared():
    state = _ScratchState(np.ones(3), np.ones(3), 0)
    _regrow(state)
    fields = read_fields(state)
    assert fields["values"] is not read_fields(state)["values"]  # a new Python object at every read
    attributes = {"state": state, "same": fields["values"], "middle": fields["values"][2:4]}
    encoded = encode_attributes(attributes)
    for copied in (pickle.loads(pickle.dumps(encoded)), copy.deepcopy(encoded)):
        decoded = decode_attributes(copied)
        rebuilt = read_fields(decoded["state"])
        assert rebuilt["count"] == 1 and decoded["state"]._numba_type_ == state._numba_type_
        assert np.shares_memory(rebuilt["values"], rebuilt["alias"])
        assert np.shares_memory(decoded["same"], rebuilt["values"])
        _regrow_in_place(decoded["state"])
        np.testing.assert_array_equal(decoded["middle"], [-2.0, -3.0])
        np.testing.assert_array_equal(decoded["same"], -np.arange(6.0))
    np.testing.assert_array_equal(fields["values"], np.arange(6.0))  # the original is untouched


@numba.njit
def _regrow_in_place(state):
    for index in range(state.alias.shape[0]):
        state.alias[index] = -index
