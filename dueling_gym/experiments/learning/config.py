"""The configuration of a training run, declared once per trainer as a frozen dataclass.

Every trainer has one :class:`TrainerConfig` subclass (``ESConfig``, ``PPOConfig``,
``DistillationConfig``) whose fields are its settings: each with its type, its default and its
help text, declared by :func:`setting`, and checked in ``__post_init__`` (a ValueError or
TypeError naming the field).  Everything else derives from the fields: the trainer's Python call
(a config, or keyword arguments that build one), the ``dueling-gym train`` options (generated
from the fields by :mod:`dueling_gym.cli_train`: option name, type, default, help, choices) and
the ``config.json`` a run writes (:meth:`TrainerConfig.recorded`, plus what the trainer derives).

A field's metadata (all optional but the help):

``help``
    One line for ``--help`` (the default is appended there; a help that states its default in
    words, e.g. ``"(default: random weights)"``, is left as it is).
``choices``
    The values allowed (checked in ``__post_init__`` and by the parser).
``parse``
    Reads the option's text when the field's type has no generic text form (a mapping).
``recorded``
    False for settings that do not change what the run computes (worker threads, how often to
    validate), or that are its budget where the trainer does not record it: they stay out of
    ``config.json``, so a resumed run may change them.
``omit_none``
    Recorded only when set: the configurations of runs made before the field existed stay what
    they were, so those runs still resume.
``command_line``
    False for a field that a ``dueling-gym train`` sub-command fixes itself (``ppo``/``a2c``).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Callable, ClassVar, Sequence

__all__ = ["TrainerConfig", "setting", "check_policy_path"]


def setting(default: Any = dataclasses.MISSING, *, help: str, choices: Sequence[Any] | None = None,
            parse: Callable[[str], Any] | None = None, recorded: bool = True, omit_none: bool = False,
            command_line: bool = True) -> Any:
    """A field of a trainer's configuration: its default and its command-line description.

    Parameters
    ----------
    default : object, optional
        The default (immutable: a tuple rather than a list); none makes the field required.
    help : str
        The option's line in ``--help``.
    choices : sequence, optional
        The values allowed.
    parse : callable, optional
        ``text -> value`` for a type without a generic text form.
    recorded, omit_none, command_line : bool
        See the module docstring.

    Returns
    -------
    object
        The ``dataclasses.field`` carrying ``default`` and the metadata above.
    """
    if not isinstance(help, str) or not help:
        raise TypeError("a setting needs a help text")
    metadata = {"help": help, "choices": None if choices is None else tuple(choices), "parse": parse,
                "recorded": recorded, "omit_none": omit_none, "command_line": command_line}
    return dataclasses.field(default=default, metadata=metadata)


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainerConfig:
    """Base of the trainers' configurations (frozen, keyword-only dataclasses of :func:`setting` fields)."""

    #: The ``algorithm`` entry of ``config.json`` (None: the trainer records none, or a field holds it).
    algorithm_name: ClassVar[str | None] = None

    def replace(self, **changes: Any) -> TrainerConfig:
        """A copy with ``changes`` (checked again)."""
        return dataclasses.replace(self, **changes)

    def recorded(self) -> dict[str, Any]:
        """The recorded fields (see the module docstring) as JSON-ready values: tuples as lists,
        mappings as dicts; a trainer adds what it derives before writing ``config.json``."""
        record: dict[str, Any] = {} if self.algorithm_name is None else {"algorithm": self.algorithm_name}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if not item.metadata.get("recorded", True) or (value is None and item.metadata.get("omit_none")):
                continue
            record[item.name] = _json_ready(value)
        return record

    @property
    def problem_families(self) -> list[str]:
        """The generator families the run trains on (the final comparison of ``dueling-gym train``)."""
        return list(self.families)  # type: ignore[attr-defined]  # the trainers' configurations name them so

    def _check_choice(self, name: str) -> None:
        choices = next(item for item in dataclasses.fields(self) if item.name == name).metadata["choices"]
        if getattr(self, name) not in choices:
            raise ValueError(f"{name} must be one of {choices}, got {getattr(self, name)!r}")

    def _set(self, name: str, value: Any) -> None:
        """Store the checked form of a field (``__post_init__`` of a frozen dataclass)."""
        object.__setattr__(self, name, value)


def _json_ready(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_json_ready(item) for item in value]
    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    return value


def check_policy_path(name: str, value: Any) -> str:
    """``value`` (a str or path of an existing file) as a str: what ``config.json`` records.

    Raises
    ------
    TypeError
        ``value`` is no path.
    ValueError
        No file is there.
    """
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be the path of a policy file, got {value!r} ({type(value).__name__})")
    if not Path(value).is_file():
        raise ValueError(f"{name} file {os.fspath(value)!r} does not exist")
    return os.fspath(value)
