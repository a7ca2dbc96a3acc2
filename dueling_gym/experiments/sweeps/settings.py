"""The ``key=value`` settings of agents and problems: parsed, checked for JSON, canonicalised.

Agent hyperparameters and generator options are stored in a results folder's manifest and in
every unit file, and they enter each unit's identity; so they must survive a JSON round trip,
and one setting written two ways (``alpha=1`` and ``alpha=1.0``) must be one value.  Both
:mod:`~dueling_gym.experiments.sweeps.agent_spec` and
:mod:`~dueling_gym.experiments.sweeps.problem_spec` read their settings through here.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

__all__ = ["check_json_values", "canonical_value", "parse_options"]


def check_json_values(values: dict[str, Any], what: str) -> None:
    """Settings are stored in the manifest and unit files, so they must survive a JSON round trip."""
    try:
        same = json.loads(json.dumps(values)) == values
    except (TypeError, ValueError):
        same = False
    if not same:
        raise TypeError(f"{what} must be JSON values (numbers, strings, booleans, lists), got {values!r}")


def _declares_float(parameter: inspect.Parameter | None) -> bool:
    """Whether a keyword declares a real number (a float default, or ``float`` / ``float | None``)."""
    if parameter is None:
        return False
    if isinstance(parameter.default, float):
        return True
    annotation = parameter.annotation
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return {part.strip() for part in str(text).split("|")} in ({"float"}, {"float", "None"})


def canonical_value(value: Any, parameter: inspect.Parameter | None, what: str) -> Any:
    """``value`` in the canonical form of its declared type: an integer given for a real number becomes a float.

    So ``alpha=1`` and ``alpha=1.0`` (or ``min_gap=0`` and the default ``0.0``) are one setting,
    one run and one row.  Nothing else is converted: a wrong type is left for the agent or
    generator to refuse with its own message.
    """
    if type(value) is int and _declares_float(parameter):
        try:
            return float(value)
        except OverflowError:
            raise ValueError(f"{what} must be a real number within float range, got an integer of "
                             f"{len(str(abs(value)))} digits") from None
    return value


def parse_options(text: str, what: str) -> dict[str, Any]:
    """``key=value,key=value`` -> dict (values read as JSON when possible, else kept as text)."""
    values: dict[str, Any] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, separator, value = item.partition("=")
        key = key.strip()
        if not separator or not key:
            raise ValueError(f"{what}: {item!r} must look like key=value")
        if key in values:
            raise ValueError(f"{what}: {key!r} is given twice")
        try:
            values[key] = json.loads(value)
        except json.JSONDecodeError:
            values[key] = value.strip()
    return values

