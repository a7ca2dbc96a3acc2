"""Every agent and environment still does exactly what it did when its trajectory was recorded."""

from __future__ import annotations

import json

import pytest

from golden_trajectories import DATA, cases

RECORDED = json.loads(DATA.read_text())
CASES = cases()


def test_every_recorded_case_still_exists():
    assert set(RECORDED) <= set(CASES), sorted(set(RECORDED) - set(CASES))


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_trajectory_is_unchanged(name):
    assert CASES[name]() == RECORDED[name], f"{name}: the trajectory changed"
