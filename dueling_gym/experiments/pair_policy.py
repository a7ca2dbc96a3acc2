"""Moved to :mod:`dueling_gym.experiments.learning.pair_policy` (needs the ``rl`` extra)."""

from __future__ import annotations

from dueling_gym.experiments.learning.pair_policy import (
    WEIGHT_NAMES,
    PairNetwork,
    PairPolicy,
    export_policy_weights,
    network_from_weights,
    network_weights,
)

__all__ = ["PairNetwork", "PairPolicy", "export_policy_weights", "network_weights", "network_from_weights", "WEIGHT_NAMES"]
