"""``dueling-gym train`` takes its sub-commands from the trainer modules that declare them."""

from __future__ import annotations

import argparse

import pytest

from dueling_gym.cli import build_parser
from dueling_gym.experiments.learning import train_commands
from dueling_gym.experiments.learning.trainer import TrainCommand


def test_every_trainer_module_declares_its_commands():
    commands = train_commands()
    assert {name: module.__name__.rpartition(".")[2] for name, (module, _) in commands.items()} == {
        "distill": "distillation", "es": "evolution", "ppo": "training", "a2c": "training"}
    for name, (module, command) in commands.items():
        assert command.name == name
        assert callable(module.build_parser) and callable(module.run_from_arguments)


def test_the_command_line_offers_exactly_the_declared_commands():
    parser = build_parser()
    train = next(action for action in parser._subparsers._group_actions[0].choices["train"]._actions  # noqa: SLF001
                 if isinstance(action, argparse._SubParsersAction))  # noqa: SLF001
    assert list(train.choices) == list(train_commands())


def test_the_final_comparison_uses_the_families_each_trainer_names():
    parser = build_parser()
    es = parser.parse_args(["train", "es", "--out", "o", "--families", "utility_based,no_condorcet_winner"])
    assert train_commands()["es"][1].families(es) == ["utility_based", "no_condorcet_winner"]
    distill = parser.parse_args(["train", "distill", "--out", "o", "--init", "p.npz",
                                 "--teachers", "utility_based=rucb,no_condorcet_winner=init"])
    assert train_commands()["distill"][1].families(distill) == ["utility_based", "no_condorcet_winner"]


def test_a_missing_requirement_is_one_line_naming_the_extra():
    command = TrainCommand("demo", "a demonstration", families=lambda arguments: [],
                           requires=("a_module_that_is_not_installed",))
    with pytest.raises(ImportError, match=r"dueling-gym train demo needs a_module_that_is_not_installed: "
                                          r"pip install 'dueling-gym\[rl\]'"):
        command.check_installed()
    TrainCommand("numpy-only", "needs nothing extra", families=lambda arguments: [], requires=("numpy",)
                 ).check_installed()
