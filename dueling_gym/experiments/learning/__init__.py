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
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["FAMILIES", "REGRET_NOTION", "OBSERVATION", "train_commands"]

#: The generator families a policy is trained and evaluated on by default.
FAMILIES = ("no_condorcet_winner", "unique_copeland_winner", "utility_based")
#: The regret every trainer minimises and reports (Copeland regret on Komiyama et al.'s scale).
REGRET_NOTION = "copeland_komiyama"
#: What an exported policy's metadata says its input is.
OBSERVATION = "dueling_gym.observations (pair features v1)"


@cache
def train_commands() -> dict[str, tuple[ModuleType, Any]]:
    """Every ``dueling-gym train`` sub-command: name -> (the trainer module, its ``TrainCommand``).

    A trainer module of this package declares its sub-commands in ``TRAIN_COMMANDS`` (see
    :class:`~dueling_gym.experiments.learning.trainer.TrainCommand`); the command line takes them
    from here, so adding a trainer touches its own module only.  Only the modules that declare
    some are imported (the torch policy module is not), in the order of their names; read once
    per process (the parser and the command both ask).
    """
    import importlib

    commands: dict[str, tuple[ModuleType, Any]] = {}
    for path in sorted(Path(__file__).parent.glob("*.py")):
        if path.name.startswith("_") or "\nTRAIN_COMMANDS = " not in path.read_text(encoding="utf-8"):
            continue
        module = importlib.import_module(f"{__name__}.{path.stem}")
        for command in module.TRAIN_COMMANDS:
            if command.name in commands:
                raise ValueError(f"dueling-gym train {command.name} is declared by {commands[command.name][0].__name__} "
                                 f"and by {module.__name__}")
            commands[command.name] = (module, command)
    return commands
