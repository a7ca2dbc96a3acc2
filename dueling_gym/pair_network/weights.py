"""The arrays of the pair network: their names, their shapes, and one packed record for the kernels.

The network (dueling-gym's own, no paper) scores every duel ``(i, j)`` of ``K`` arms from the
duel statistics alone, with the same weights for every pair, so it does not depend on ``K``; the
docstring of :mod:`dueling_gym.pair_network` gives its equations.  Its weights are 22 named
arrays (row-vector convention, ``x @ W``).  The compiled kernels take them as one
:class:`PairWeights` record, a :class:`~typing.NamedTuple` that Numba passes by value into
``@njit`` code, so a kernel reads ``weights.W1`` rather than the eleventh of 25 positional
arguments.
"""

from __future__ import annotations

from typing import Mapping, NamedTuple

import numpy as np

from dueling_gym.observations import N_PAIR_CHANNELS, N_RECORD_FEATURES

__all__ = ["WEIGHT_NAMES", "MEAN_ONLY_NAMES", "PairWeights", "weight_shapes", "pack_weights"]

#: Arrays of the pair network, in the order of the fields of :class:`PairWeights` (and of every
#: exported file since the first version).
WEIGHT_NAMES = ("W1", "b1", "W2", "b2", "A", "B", "C", "c", "d", "w", "w0", "S", "s_b", "s_t", "s", "s0",
                "G", "G_s", "s_n", "R_a", "R_b", "R_s")
#: Arrays of the first version of the network (mean-pooled arm summaries, no global context).
MEAN_ONLY_NAMES = WEIGHT_NAMES[:16]
#: The two output biases, stored as arrays of shape (1,) and packed as plain floats.
SCALAR_NAMES = ("w0", "s0")


class PairWeights(NamedTuple):
    """The pair network's weights as the compiled kernels read them (see :func:`pack_weights`).

    Every array is C-contiguous float64 (one compiled specialisation serves every policy);
    ``w0`` and ``s0`` are floats.  The field names are :data:`WEIGHT_NAMES`.
    """

    W1: np.ndarray   # (N_PAIR_CHANNELS, H): pair features -> first embedding layer
    b1: np.ndarray   # (H,)
    W2: np.ndarray   # (H, H): second embedding layer
    b2: np.ndarray   # (H,)
    A: np.ndarray    # (2H, H): summary of the duel's first arm
    B: np.ndarray    # (2H, H): summary of the duel's second arm
    C: np.ndarray    # (N_PAIR_CHANNELS, H): the pair's own features
    c: np.ndarray    # (H,)
    d: np.ndarray    # (H,): time term of a duel
    w: np.ndarray    # (H,): duel output weights
    w0: float        # duel output bias
    S: np.ndarray    # (2H, H): summary of a self-duel's arm
    s_b: np.ndarray  # (H,)
    s_t: np.ndarray  # (H,): time term of a self-duel
    s: np.ndarray    # (H,): self-duel output weights
    s0: float        # self-duel output bias
    G: np.ndarray    # (2H, H): global context of a duel
    G_s: np.ndarray  # (2H, H): global context of a self-duel
    s_n: np.ndarray  # (H,): self-duel count of the arm
    R_a: np.ndarray  # (N_RECORD_FEATURES, H): record of the duel's first arm
    R_b: np.ndarray  # (N_RECORD_FEATURES, H): record of the duel's second arm
    R_s: np.ndarray  # (N_RECORD_FEATURES, H): record of a self-duel's arm


def weight_shapes(hidden: int) -> dict[str, tuple[int, ...]]:
    """The shape of every array of the current network with ``hidden`` units, in
    :data:`WEIGHT_NAMES` order (row-vector convention, ``x @ W``).

    The compiled kernels allocate their caches from ``W1.shape[1]`` and loop over those sizes
    when they read the other arrays, so every array must have exactly this shape.
    """
    units = (hidden,)
    pair = (N_PAIR_CHANNELS, hidden)  # reads the N_PAIR_CHANNELS features of an ordered pair
    summary = (2 * hidden, hidden)  # reads an arm summary [mean part, max part] or the global context
    record = (N_RECORD_FEATURES, hidden)  # reads an arm's record
    return {
        # Pair embedding relu(relu(e @ W1 + b1) @ W2 + b2).
        "W1": pair, "b1": units, "W2": (hidden, hidden), "b2": units,
        # Duel scorer w . relu(h_i @ A + h_j @ B + e_ij @ C + c + tau * d + ...) + w0.
        "A": summary, "B": summary, "C": pair, "c": units, "d": units, "w": units, "w0": (1,),
        # Self-duel scorer s . relu(h_i @ S + s_b + tau * s_t + n_i * s_n + ...) + s0.
        "S": summary, "s_b": units, "s_t": units, "s": units, "s0": (1,),
        # Global context m @ G (duels) and m @ G_s (self-duels), self-duel count weights.
        "G": summary, "G_s": summary, "s_n": units,
        # Arm records r_i @ R_a, r_j @ R_b (duels) and r_i @ R_s (self-duels).
        "R_a": record, "R_b": record, "R_s": record,
    }


def pack_weights(weights: Mapping[str, np.ndarray]) -> PairWeights:
    """The arrays :data:`WEIGHT_NAMES` of ``weights`` as one :class:`PairWeights`.

    Arrays are C-contiguous float64 (the very arrays when they already are: the kernels never
    write to them); ``w0`` and ``s0`` become the float of their one element.  Every array must
    have the shape :func:`weight_shapes` gives for the width of ``W1``: the kernels index them
    without bounds checks, so a wrong shape would read other memory.

    Raises
    ------
    ValueError
        An array is missing or has the wrong shape (the message names it).
    """
    missing = [name for name in WEIGHT_NAMES if name not in weights]
    if missing:
        raise ValueError(f"pair-network weights lack the arrays {missing}")
    w1 = np.asarray(weights["W1"])
    if w1.ndim != 2 or w1.shape[1] < 1:
        raise ValueError(f"array W1 has shape {w1.shape}, expected ({N_PAIR_CHANNELS}, hidden)")
    expected = weight_shapes(int(w1.shape[1]))
    packed = {}
    for name in WEIGHT_NAMES:
        array = np.ascontiguousarray(weights[name], dtype=np.float64)
        if array.shape != expected[name]:
            raise ValueError(f"array {name} has shape {array.shape}, expected {expected[name]} "
                             f"(a network of {w1.shape[1]} hidden units)")
        packed[name] = float(array[0]) if name in SCALAR_NAMES else array
    return PairWeights(**packed)
