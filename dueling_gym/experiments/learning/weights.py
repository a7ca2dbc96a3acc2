"""Pair-network weights for training: fresh ones, widened ones, and flat parameter vectors.

The shapes are those of :func:`dueling_gym.pair_network.weights.weight_shapes`, in
:data:`~dueling_gym.pair_network.weights.WEIGHT_NAMES` order, which is also the order of the draws and
of the flat vector, so the same generator gives the same network.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from dueling_gym.observations import N_PAIR_CHANNELS, N_RECORD_FEATURES
from dueling_gym.pair_network import WEIGHT_NAMES, weight_shapes
from dueling_gym.validation import check_integer, check_rng

__all__ = ["random_weights", "widen_weights", "flatten_weights", "unflatten_weights"]

#: Weights whose rows read the arm summaries ``[mean part, max part]`` of the pair embedding.
_SUMMARY_ROWS = ("A", "B", "S", "G", "G_s")


def random_weights(hidden: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Weights of a fresh pair network: uniform in ``+-1/sqrt(fan_in)`` (the usual linear-layer
    initialisation), drawn in :data:`~dueling_gym.pair_network.weights.WEIGHT_NAMES` order from ``rng``."""
    hidden = check_integer("hidden", hidden, minimum=1)
    rng = check_rng(rng)
    fan_in = {"W1": N_PAIR_CHANNELS, "b1": N_PAIR_CHANNELS, "C": N_PAIR_CHANNELS, "c": N_PAIR_CHANNELS,
              "R_a": N_RECORD_FEATURES, "R_b": N_RECORD_FEATURES, "R_s": N_RECORD_FEATURES,
              **{name: 2 * hidden for name in _SUMMARY_ROWS}}
    weights = {}
    for name, shape in weight_shapes(hidden).items():
        bound = 1.0 / np.sqrt(fan_in.get(name, hidden))
        weights[name] = rng.uniform(-bound, bound, size=shape)
    return weights


def widen_weights(weights: Mapping[str, np.ndarray], hidden: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The pair network ``weights`` grown to ``hidden`` units per layer, computing the same scores.

    The new units of every layer get fresh incoming weights (drawn as :func:`random_weights`
    draws them, in :data:`~dueling_gym.pair_network.weights.WEIGHT_NAMES` order from ``rng``), and
    everything they feed into the existing units, or into the scores, is zero: the embedding's
    new units enter the old embedding units and the old scorer units with zero weight, and the
    new scorer units have zero output weights (``w``, ``s``).  So the wider network starts as
    exactly the narrower policy, and training (gradient or evolution strategies) can put the new
    units to use.
    """
    old = int(np.shape(weights["W1"])[1])
    hidden = check_integer("hidden", hidden, minimum=old)
    if hidden == old:
        return {name: np.array(value, dtype=np.float64) for name, value in weights.items()}
    fresh = random_weights(hidden, rng)
    wide: dict[str, np.ndarray] = {}
    for name, shape in weight_shapes(hidden).items():
        value = np.asarray(weights[name], dtype=np.float64)
        if name in ("w", "s"):
            grown = np.zeros(shape)
            grown[:old] = value
        elif name in ("w0", "s0"):
            grown = value.copy()
        elif name == "W2" or name in _SUMMARY_ROWS:
            # The old units read the old units as before and the new ones with zero weight.
            grown = fresh[name].copy()
            grown[:, :old] = 0.0
            for part in range(value.shape[0] // old):  # W2: one block; the summaries: mean rows, then max rows
                grown[part * hidden:part * hidden + old, :old] = value[part * old:(part + 1) * old]
        else:  # only the new units' incoming weights are new
            grown = fresh[name].copy()
            grown[..., :old] = value
        wide[name] = grown
    return wide


def flatten_weights(weights: Mapping[str, np.ndarray]) -> np.ndarray:
    """The arrays of ``weights`` as one float64 vector, in :data:`~dueling_gym.pair_network.weights.WEIGHT_NAMES` order."""
    return np.concatenate([np.asarray(weights[name], dtype=np.float64).ravel() for name in WEIGHT_NAMES])


def unflatten_weights(vector: np.ndarray, hidden: int) -> dict[str, np.ndarray]:
    """The network of ``hidden`` units whose :func:`flatten_weights` is ``vector`` (views into it)."""
    shapes = weight_shapes(hidden)
    size = sum(int(np.prod(shape)) for shape in shapes.values())
    if np.shape(vector) != (size,):
        raise ValueError(f"a network of {hidden} hidden units has {size} weights, got a vector of shape {np.shape(vector)}")
    weights, offset = {}, 0
    for name, shape in shapes.items():
        count = int(np.prod(shape))
        weights[name] = vector[offset:offset + count].reshape(shape)
        offset += count
    return weights
