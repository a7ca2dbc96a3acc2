"""Names that moved or were renamed keep working where users imported them from.

A renamed name warns (``DeprecationWarning``) and returns the new object; a module that moved
re-exports the new module's objects themselves, so the old path and the new one are the same thing.
"""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("dueling_gym.reductions", "record_duel", "record_scored_duel"),
        ("dueling_gym.envs.dueling_bandit", "ProblemSpec", "PreferencesLike"),
    ],
)
def test_a_renamed_name_warns_and_is_the_new_object(module, old, new):
    imported = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=new):
        value = getattr(imported, old)
    assert value is getattr(imported, new)


def test_the_hand_kept_target_table_warns_and_agrees_with_the_classes():
    from dueling_gym.agents import catalogue

    with pytest.warns(DeprecationWarning, match="agent_target"):
        table = catalogue.AGENT_TARGETS
    assert table["rucb"] == catalogue.agent_target("rucb") == "condorcet"
    assert table["ccb"] == "copeland"


@pytest.mark.parametrize(
    ("old_module", "new_module", "names"),
    [
        ("dueling_gym.experiments.evolution", "dueling_gym.experiments.learning.evolution",
         ["train_evolution", "EvolutionTrainer", "FAMILIES", "main"]),
        ("dueling_gym.experiments.training", "dueling_gym.experiments.learning.training", ["main"]),
        ("dueling_gym.experiments.distillation", "dueling_gym.experiments.learning.distillation",
         ["distill_policy", "main"]),
        ("dueling_gym.experiments.atomic_files", "dueling_gym.atomic_files", ["atomic_write", "atomic_write_text"]),
    ],
)
def test_a_moved_module_reexports_the_same_objects(old_module, new_module, names):
    old, new = importlib.import_module(old_module), importlib.import_module(new_module)
    for name in names:
        assert getattr(old, name) is getattr(new, name), name


def test_an_unknown_name_is_still_an_attribute_error():
    reductions = importlib.import_module("dueling_gym.reductions")
    with pytest.raises(AttributeError, match="no_such_name"):
        reductions.no_such_name
