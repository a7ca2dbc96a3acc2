"""Moved to :mod:`dueling_gym.pair_network.files` (the weight file) and :mod:`dueling_gym.pair_network.weights`."""

from __future__ import annotations

from dueling_gym.pair_network.files import read_policy_file
from dueling_gym.pair_network.weights import MEAN_ONLY_NAMES, WEIGHT_NAMES, weight_shapes

__all__ = ["WEIGHT_NAMES", "MEAN_ONLY_NAMES", "weight_shapes", "read_policy_file"]
