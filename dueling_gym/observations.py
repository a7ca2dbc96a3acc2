"""Observations of a dueling run for learned policies, shared by training and deployment.

Two encodings of the duels played so far live here, in the core layer, so that the wrapper
that exposes them to a learner (:class:`~dueling_gym.wrappers.DuelStatistics`) and the agents
that deploy a trained policy (:class:`~dueling_gym.agents.PolicyAgent`,
:class:`~dueling_gym.agents.learned.LearnedAgent`) build bit-identical observations without
importing each other.

The pair-feature observation
----------------------------
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

with ``N[i, j] = W[i, j] + W[j, i]``.  Self-duels carry no information about the preferences,
so the diagonal is zero in channels 0-2; channel 3 holds ``log(1 + W[i,i]) / 8`` there, how
often arm ``i`` was played against itself (how long it has been exploited).  One global value
follows: ``log(1 + t) / 10``, ``t`` the number of duels played so far.  The flat observation is ``float32`` of length
``4 K^2 + 1``: the four ``K x K`` channel matrices, row-major, then the time value.

Every feature of pair ``(i, j)`` depends only on that pair's two counts, so an agent that
keeps the features can refresh just the pair it played (:func:`pair_features` on two
entries) and get exactly what :func:`encode_wins` computes from the whole matrix.

The duel-statistics observation
-------------------------------
For ``K`` arms it is a ``float32`` vector of length ``2 K^2`` in ``[0, 1]`` (a
``Box(0, 1, (2 K^2,))``), made of two ``K x K`` matrices flattened row-major, one after the
other:

* ``obs[:K*K].reshape(K, K)`` -- the **win-rate matrix** ``mu_hat[i, j] = W[i, j] / N[i, j]``:
  the fraction of the duels between ``i`` and ``j`` that ``i`` won (either orientation counts),
  ``1/2`` for a pair never played and on the diagonal;
* ``obs[K*K:].reshape(K, K)`` -- the **count matrix**, normalised as ``1 / sqrt(1 + N[i, j])``,
  the scale of a confidence radius: ``1`` for a pair never played, decreasing to ``0`` as it is
  sampled (symmetric).  The diagonal holds ``1 / sqrt(1 + S_i)``, ``S_i`` the number of
  self-duels ``(i, i)`` (pure exploitation, which carries no information about ``P``).

:func:`duel_statistics_observation` builds it from a win-count matrix, and
:class:`~dueling_gym.observations.DuelStatisticsTracker` keeps the counts of one run.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from dueling_gym.validation import check_n_arms

__all__ = [
    "N_PAIR_CHANNELS",
    "N_RECORD_FEATURES",
    "arm_records",
    "observation_size",
    "pair_feature_space",
    "pair_features",
    "time_feature",
    "encode_wins",
    "decode_observation",
    "duel_statistics_space",
    "duel_statistics_observation",
    "DuelStatisticsTracker",
]

#: Number of per-pair channels of the observation.
N_PAIR_CHANNELS = 4


#: Number of per-arm record features (:func:`arm_records`).
N_RECORD_FEATURES = 3


def arm_records(wins: NDArray[np.integer]) -> NDArray[np.float32]:
    """Each arm's record against the other arms, derived from the win counts (not part of the
    observation: a network computes it from the pair channels, which determine the counts).

    With ``net_i = sum_{j != i} (W[i, j] - W[j, i])`` (wins minus losses, the statistic Winner
    Stays plays by) and ``N_i = sum_{j != i} (W[i, j] + W[j, i])``, the three features of arm ``i`` are

    ====  =================================================  ======================================
     f    value                                               meaning
    ====  =================================================  ======================================
     0    ``clip(net_i / sqrt(N_i + 1) / 4, -2.5, 2.5)``      evidence that ``i`` beats the others
     1    ``max((net_i - max_k net_k) / sqrt(N_i + 1) / 4, -2.5)``  how far ``i`` trails the best record
     2    ``net_i / (N_i + 1)``                               its average margin
    ====  =================================================  ======================================

    computed in float64 and rounded to float32.

    Parameters
    ----------
    wins : ndarray of int, shape (..., K, K)

    Returns
    -------
    ndarray of float32, shape (..., K, 3)
    """
    wins = np.asarray(wins)
    if wins.ndim < 2 or wins.shape[-1] != wins.shape[-2]:
        raise ValueError(f"wins must have shape (..., K, K), got {wins.shape}")
    if not np.issubdtype(wins.dtype, np.integer):
        raise TypeError(f"wins must hold integer counts, got dtype {wins.dtype}")
    off_diagonal = 1 - np.eye(wins.shape[-1], dtype=np.int64)
    played = wins.astype(np.int64) * off_diagonal
    net = (played - np.swapaxes(played, -1, -2)).sum(axis=-1).astype(np.float64)
    duels = (played + np.swapaxes(played, -1, -2)).sum(axis=-1).astype(np.float64)
    root = np.sqrt(duels + 1.0)
    leader = net.max(axis=-1, keepdims=True)
    return np.stack([np.clip(net / root / 4.0, -2.5, 2.5), np.maximum((net - leader) / root / 4.0, -2.5),
                     net / (duels + 1.0)], axis=-1).astype(np.float32)


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
        The channels ``c = 0..3`` as ``K x K`` matrices (diagonal: zero, but the self-duel
        count in channel 3), then the time value.
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
    self_duels = wins[..., diagonal, diagonal].astype(np.float64)
    features[..., diagonal, diagonal, 3] = (np.log1p(self_duels) / 8.0).astype(np.float32)
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


# ---------------------------------------------------------------------------------------------
# The duel-statistics observation
# ---------------------------------------------------------------------------------------------
def duel_statistics_space(n_arms: int) -> spaces.Box:
    """The observation space of the duel-statistics observation: ``Box(0, 1, (2 K^2,), float32)``."""
    n_arms = check_n_arms(n_arms)
    return spaces.Box(low=0.0, high=1.0, shape=(2 * n_arms * n_arms,), dtype=np.float32)


def duel_statistics_observation(wins: NDArray[np.integer]) -> NDArray[np.float32]:
    """Build the duel-statistics observation from a win-count matrix (see the module docstring).

    Parameters
    ----------
    wins : ndarray of int, shape (K, K)
        ``wins[i, j]`` (``i != j``) = duels between ``i`` and ``j`` won by ``i``, whichever arm
        was first; ``wins[i, i]`` = number of self-duels ``(i, i)``.  This is the convention of
        ``DuelingBanditEnv.win_counts`` and of :class:`~dueling_gym.observations.DuelStatisticsTracker`.

    Returns
    -------
    ndarray of float32, shape (2 K^2,)
        A fresh array: the win-rate matrix then the normalised count matrix, row-major.
    """
    wins = np.asarray(wins)
    if wins.ndim != 2 or wins.shape[0] != wins.shape[1] or wins.shape[0] < 2:
        raise ValueError(f"wins must be a K x K matrix with K >= 2, got shape {wins.shape}")
    counts = (wins + wins.T).astype(np.float64)
    diagonal = np.diag_indices(wins.shape[0])
    counts[diagonal] = wins[diagonal]
    rates = np.full(counts.shape, 0.5)
    played = counts > 0
    np.divide(wins, counts, out=rates, where=played)
    rates[diagonal] = 0.5
    out = np.empty(2 * wins.size, dtype=np.float32)
    out[: wins.size] = rates.ravel()
    out[wins.size:] = (1.0 / np.sqrt(1.0 + counts)).ravel()
    return out


class DuelStatisticsTracker:
    """The win counts of one bandit run, from which the duel-statistics observation is built.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.

    Attributes
    ----------
    wins : ndarray of int64, shape (K, K)
        Win counts in the convention of :func:`duel_statistics_observation`.
    """

    def __init__(self, n_arms: int):
        self.n_arms = check_n_arms(n_arms)
        self.wins = np.zeros((self.n_arms, self.n_arms), dtype=np.int64)

    def reset(self) -> None:
        """Forget every duel (the start of an episode)."""
        self.wins[:] = 0

    def update(self, first: int, second: int, first_won: bool) -> None:
        """Record duel ``(first, second)``; ``first_won`` is True iff ``first`` won."""
        if first == second:
            self.wins[first, first] += 1
        elif first_won:
            self.wins[first, second] += 1
        else:
            self.wins[second, first] += 1

    def observation(self) -> NDArray[np.float32]:
        """The current observation (a fresh array)."""
        return duel_statistics_observation(self.wins)
