"""The pair-feature observation of learned dueling policies, shared by training and deployment.

A dueling run is summarised without loss by its win-count matrix ``W`` (``W[i, j]`` = duels
between ``i`` and ``j`` won by ``i``, either orientation; ``W[i, i]`` = self-duels ``(i, i)``).
Learned policies see a fixed-size, horizon-free encoding of it: for every ordered pair
``(i, j)``, ``i != j``, four channels computed from ``W[i, j]`` and ``W[j, i]`` alone,

====  =====================================  ==========================================
 c    value                                  meaning
====  =====================================  ==========================================
 0    ``W[i,j] / N[i,j] - 1/2`` (0 unplayed)  empirical preference margin
 1    ``clip((W[i,j] - W[j,i]) / sqrt(N[i,j] + 1) / 4, -2.5, 2.5)``
                                             evidence for the sign of the margin
                                             (a z-score, scaled)
 2    ``1 / sqrt(1 + N[i,j])``               scale of a confidence radius
 3    ``log(1 + N[i,j]) / 8``                how often the pair was played
====  =====================================  ==========================================

with ``N[i, j] = W[i, j] + W[j, i]``; the diagonal is zero in every channel (self-duels carry
no information about the preferences).  One global value follows: ``log(1 + t) / 10``, ``t``
the number of duels played so far.  The flat observation is ``float32`` of length
``4 K^2 + 1``: the four ``K x K`` channel matrices, row-major, then the time value.

Every feature of pair ``(i, j)`` depends only on that pair's two counts, so an agent that
keeps the features can refresh just the pair it played (:func:`pair_features` on two
entries) and get exactly what :func:`encode_wins` computes from the whole matrix.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from dueling_gym.validation import check_n_arms

__all__ = [
    "N_PAIR_CHANNELS",
    "observation_size",
    "pair_feature_space",
    "pair_features",
    "time_feature",
    "encode_wins",
    "decode_observation",
]

#: Number of per-pair channels of the observation.
N_PAIR_CHANNELS = 4


def observation_size(n_arms: int) -> int:
    """Length of the flat observation for ``n_arms`` arms: ``4 K^2 + 1``."""
    n_arms = check_n_arms(n_arms)
    return N_PAIR_CHANNELS * n_arms * n_arms + 1


def pair_feature_space(n_arms: int) -> spaces.Box:
    """The observation space: ``Box(-2.5, 2.5, (4 K^2 + 1,), float32)`` (every channel lies in it)."""
    return spaces.Box(low=-2.5, high=2.5, shape=(observation_size(n_arms),), dtype=np.float32)


def pair_features(wins_ij: NDArray[np.integer], wins_ji: NDArray[np.integer]) -> NDArray[np.float32]:
    """The four channels of ordered pairs ``(i, j)`` from their win counts (off-diagonal pairs).

    Parameters
    ----------
    wins_ij, wins_ji : array of int, same shape ``S``
        Duels won by ``i`` against ``j`` and by ``j`` against ``i``.

    Returns
    -------
    ndarray of float32, shape ``S + (4,)``
    """
    wins_ij = np.asarray(wins_ij, dtype=np.float64)
    wins_ji = np.asarray(wins_ji, dtype=np.float64)
    counts = wins_ij + wins_ji
    margin = np.divide(wins_ij, counts, out=np.full(counts.shape, 0.5), where=counts > 0) - 0.5
    evidence = np.clip((wins_ij - wins_ji) / np.sqrt(counts + 1.0) / 4.0, -2.5, 2.5)
    radius = 1.0 / np.sqrt(1.0 + counts)
    frequency = np.log1p(counts) / 8.0
    return np.stack([margin, evidence, radius, frequency], axis=-1).astype(np.float32)


def time_feature(n_duels: NDArray[np.integer] | int) -> NDArray[np.float32]:
    """The global time value ``log(1 + t) / 10`` for ``t`` duels played (float32)."""
    return (np.log1p(np.asarray(n_duels, dtype=np.float64)) / 10.0).astype(np.float32)


def encode_wins(wins: NDArray[np.integer]) -> NDArray[np.float32]:
    """Flat observations of one or a batch of win-count matrices.

    Parameters
    ----------
    wins : array of int, shape ``(..., K, K)``
        Win counts in the convention of the module docstring (non-negative).

    Returns
    -------
    ndarray of float32, shape ``(..., 4 K^2 + 1)``
        The channels ``c = 0..3`` as ``K x K`` matrices (zero diagonal), then the time value.
    """
    wins = np.asarray(wins)
    if wins.ndim < 2 or wins.shape[-1] != wins.shape[-2] or wins.shape[-1] < 2:
        raise ValueError(f"wins must have shape (..., K, K) with K >= 2, got {wins.shape}")
    if not np.issubdtype(wins.dtype, np.integer):
        raise TypeError(f"wins must hold integer counts, got dtype {wins.dtype}")
    n_arms = wins.shape[-1]
    features = pair_features(wins, np.swapaxes(wins, -1, -2))  # (..., K, K, 4)
    diagonal = np.arange(n_arms)
    features[..., diagonal, diagonal, :] = 0.0
    batch = wins.shape[:-2]
    out = np.empty(batch + (N_PAIR_CHANNELS * n_arms * n_arms + 1,), dtype=np.float32)
    out[..., :-1] = np.moveaxis(features, -1, -3).reshape(batch + (-1,))
    out[..., -1] = time_feature(wins.sum(axis=(-1, -2)))
    return out


def decode_observation(observation: NDArray[np.floating], n_arms: int) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Split flat observations into pair features ``(..., K, K, 4)`` and the time value ``(...,)``."""
    n_arms = check_n_arms(n_arms)
    observation = np.asarray(observation, dtype=np.float32)
    if observation.shape[-1] != observation_size(n_arms):
        raise ValueError(f"observations of {n_arms} arms have length {observation_size(n_arms)}, got {observation.shape[-1]}")
    batch = observation.shape[:-1]
    channels = observation[..., :-1].reshape(batch + (N_PAIR_CHANNELS, n_arms, n_arms))
    return np.moveaxis(channels, -3, -1), observation[..., -1]
