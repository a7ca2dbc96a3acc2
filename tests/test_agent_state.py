"""AgentState: kernel agent states declared by field names and built by keyword."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from dueling_gym.agents import rucb
from dueling_gym.agents._state_snapshot import decode_attributes, encode_attributes, read_fields
from dueling_gym.agents.state import AgentState, AgentStateType


class _PairState(AgentState, fields=["values", "count", "flag"]):
    """A small state for the tests."""


def test_the_numba_type_is_a_module_attribute_under_the_usual_name():
    assert _PairState.numba_type is globals()["_PairStateType"]
    assert issubclass(_PairState.numba_type, AgentStateType)
    assert rucb.RUCBState.numba_type is rucb.RUCBStateType
    assert rucb.RUCBStateType.__module__ == rucb.__name__ and rucb.RUCBStateType.__qualname__ == "RUCBStateType"
    assert pickle.loads(pickle.dumps(rucb.RUCBStateType)) is rucb.RUCBStateType


def test_fields_by_keyword_in_declaration_order():
    state = _PairState(flag=True, count=3, values=np.arange(3.0))
    assert _PairState.field_names == ("values", "count", "flag")
    fields = read_fields(state)
    assert list(fields) == ["values", "count", "flag"] and fields["count"] == 3 and fields["flag"] is True
    # literal types are widened: one Numba type for every state of this kind
    assert _PairState(values=np.zeros(2), count=0, flag=False)._numba_type_ == state._numba_type_


def test_missing_unexpected_and_positional_fields_are_type_errors():
    with pytest.raises(TypeError, match=r"missing field\(s\) count, flag"):
        _PairState(values=np.zeros(2))
    with pytest.raises(TypeError, match=r"unexpected field\(s\) extra"):
        _PairState(values=np.zeros(2), count=0, flag=False, extra=1)
    with pytest.raises(TypeError, match="by keyword"):
        _PairState(np.zeros(2), 0, False)


def test_bad_declarations_are_type_errors():
    with pytest.raises(TypeError, match="must name its fields"):
        type("NoFields", (AgentState,), {})
    with pytest.raises(TypeError, match="duplicate"):
        type("Twice", (AgentState,), {}, fields=["a", "a"])
    with pytest.raises(TypeError, match="identifiers"):
        type("BadName", (AgentState,), {}, fields=["not a name"])


def test_states_survive_pickle_and_deepcopy():
    state = _PairState(values=np.arange(4.0), count=7, flag=True)
    encoded = encode_attributes({"state": state})
    for copied in (pickle.loads(pickle.dumps(encoded)), copy.deepcopy(encoded)):
        rebuilt = decode_attributes(copied)["state"]
        assert type(rebuilt) is _PairState
        fields = read_fields(rebuilt)
        np.testing.assert_array_equal(fields["values"], np.arange(4.0))
        assert fields["count"] == 7 and fields["flag"] is True
