"""Training of the ``learned`` agent's pair network: one subpackage for every trainer.

Modules (the trainers are imported on demand; this package itself is light):

:mod:`~dueling_gym.experiments.learning.trainer`
    :class:`~dueling_gym.experiments.learning.trainer.Trainer`, the base class of the trainers
    (seeding, budget, checkpoints, validation log, export), and the declaration of their
    ``dueling-gym train`` sub-commands.
:mod:`~dueling_gym.experiments.learning.config`
    :class:`~dueling_gym.experiments.learning.config.TrainerConfig`: each trainer's settings as
    one frozen dataclass, from which its Python call, its options and its ``config.json`` derive.
:mod:`~dueling_gym.experiments.learning.evolution`
    evolution strategies on the regret itself (``dueling-gym train es``; NumPy only).
:mod:`~dueling_gym.experiments.learning.distillation`
    supervised distillation of teachers' duels (``dueling-gym train distill``; torch).
:mod:`~dueling_gym.experiments.learning.training`
    PPO or A2C with Stable-Baselines3 (``dueling-gym train ppo|a2c``; the ``rl`` extra).
:mod:`~dueling_gym.experiments.learning.pair_policy`
    the pair network in torch, as a Stable-Baselines3 policy.
:mod:`~dueling_gym.experiments.learning.weights`, :mod:`~dueling_gym.experiments.learning.problems`
    fresh and widened weights, and the training problems.

The network itself (weights, file format, compiled forward pass, batch evaluator) is
:mod:`dueling_gym.pair_network`.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType
from typing import Any

__all__ = ["FAMILIES", "REGRET_NOTION", "OBSERVATION", "TRAINERS", "train_commands"]

#: The generator families a policy is trained and evaluated on by default.
FAMILIES = ("no_condorcet_winner", "unique_copeland_winner", "utility_based")
#: The regret every trainer minimises and reports (Copeland regret on Komiyama et al.'s scale).
REGRET_NOTION = "copeland_komiyama"
#: What an exported policy's metadata says its input is.
OBSERVATION = "dueling_gym.observations (pair features v1)"

#: Sub-command name -> ``"module:TRAIN_COMMANDS"`` for every ``dueling-gym train`` sub-command
#: (the trainer module's declaration that holds it), in the order ``dueling-gym train --help`` lists them.
#: ``tests/test_registry_table.py`` checks it against the modules' ``TRAIN_COMMANDS`` both ways.
TRAINERS = {
    "distill": "dueling_gym.experiments.learning.distillation:TRAIN_COMMANDS",
    "es": "dueling_gym.experiments.learning.evolution:TRAIN_COMMANDS",
    "ppo": "dueling_gym.experiments.learning.training:TRAIN_COMMANDS",
    "a2c": "dueling_gym.experiments.learning.training:TRAIN_COMMANDS",
}


@cache
def train_commands() -> dict[str, tuple[ModuleType, Any]]:
    """Every ``dueling-gym train`` sub-command: name -> (the trainer module, its ``TrainCommand``).

    A trainer module of this package declares its sub-commands in ``TRAIN_COMMANDS`` (see
    :class:`~dueling_gym.experiments.learning.trainer.TrainCommand`) and :data:`TRAINERS` names
    each one's module; the command line takes them from here.  Only those modules are imported
    (the torch policy module is not); read once per process (the parser and the command both ask).

    Raises
    ------
    ValueError
        If a module lacks a sub-command that :data:`TRAINERS` gives it, or declares one that
        :data:`TRAINERS` does not name.
    """
    import importlib

    commands: dict[str, tuple[ModuleType, Any]] = {}
    for name, target in TRAINERS.items():
        module_name, _, attribute = target.partition(":")
        module = importlib.import_module(module_name)
        declared = {command.name: command for command in getattr(module, attribute)}
        if name not in declared:
            raise ValueError(f"dueling-gym train {name}: {target} declares no command {name!r}")
        undeclared = sorted(set(declared) - set(TRAINERS))
        if undeclared:
            raise ValueError(f"{target} declares {undeclared}, which TRAINERS in {__name__} does not name")
        commands[name] = (module, declared[name])
    return commands
