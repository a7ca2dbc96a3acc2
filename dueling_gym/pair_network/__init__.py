"""The pair network of the ``learned`` agent: weights, weight files, compiled forward pass, batch runs.

A permutation-equivariant network (dueling-gym's own, no paper) scores every duel ``(i, j)`` of
``K`` arms from the duel statistics alone, with the same weights for every pair, so relabelling
the arms relabels the scores and one policy serves every ``K``:

* pair embedding ``g_ij = relu(relu(e_ij @ W1 + b1) @ W2 + b2)`` of the features ``e_ij`` of each
  ordered pair ``i != j`` (:func:`dueling_gym.observations.pair_features`);
* arm summary ``h_i = [mean_{j != i} g_ij, max_{j != i} g_ij]``;
* global context ``m = mean_i h_i``;
* arm record ``r_i`` (:func:`dueling_gym.observations.arm_records`);
* duel score for ``i != j``: ``w . relu(h_i @ A + h_j @ B + r_i @ R_a + r_j @ R_b + e_ij @ C + c
  + m @ G + tau * d) + w0``, with ``tau`` the time value;
* self-duel score ``(i, i)``: ``s . relu(h_i @ S + r_i @ R_s + s_b + m @ G_s + tau * s_t
  + n_i * s_n) + s0``, ``n_i`` the arm's self-duel count channel;
* the ``K^2`` scores are the logits of the policy's categorical distribution over duels.

Modules:

:mod:`~dueling_gym.pair_network.weights`
    :data:`~dueling_gym.pair_network.weights.WEIGHT_NAMES`, :func:`~dueling_gym.pair_network.weights.weight_shapes` and the record :class:`~dueling_gym.pair_network.weights.PairWeights` the kernels read.
:mod:`~dueling_gym.pair_network.files`
    :func:`~dueling_gym.pair_network.files.load_policy_weights`: the ``.npz`` weight file, checked array by array, older
    versions of the network migrated.
:mod:`~dueling_gym.pair_network.kernels`
    the forward pass as incremental Numba kernels (the agent's act and observe).
:mod:`~dueling_gym.pair_network.safeguard`
    the mask that keeps the policy's regret logarithmic beyond the horizons it was trained on.
:mod:`~dueling_gym.pair_network.thompson_check`
    the posterior check of the network's self-duels (an option of the agent, off by default).
:mod:`~dueling_gym.pair_network.episodes`
    :func:`~dueling_gym.pair_network.episodes.policy_episode_regret`: whole runs on a batch of problems, for training.

The network is trained by :mod:`dueling_gym.experiments.learning` (evolution strategies,
distillation, PPO); this package needs only NumPy and Numba.
"""

from __future__ import annotations

from dueling_gym.pair_network.episodes import policy_episode_regret
from dueling_gym.pair_network.files import average_policy_files, load_policy_weights, read_policy_file
from dueling_gym.pair_network.kernels import (
    NetworkCaches,
    arm_record_values,
    choose_duel,
    duel_scores,
    fill_unplayed,
    new_network_caches,
    pair_feature_values,
    record_network_duel,
    refresh_network_duel,
    time_value,
)
from dueling_gym.pair_network.safeguard import (
    SAFEGUARD_CLOCKS,
    check_safeguard_clock,
    new_safeguard_arrays,
    pair_evidence,
    reset_safeguard,
    safeguard_observe,
    safeguard_origin,
    safeguard_rule_digest,
    safeguard_threshold,
    safeguarded_duel,
)
from dueling_gym.pair_network.thompson_check import (
    EXACT_POSTERIOR_DUELS,
    new_check_arrays,
    posterior_preference,
    reset_check,
    thompson_check_digest,
    thompson_check_observe,
    thompson_checked_duel,
)
from dueling_gym.pair_network.weights import MEAN_ONLY_NAMES, WEIGHT_NAMES, PairWeights, pack_weights, weight_shapes

__all__ = [
    "WEIGHT_NAMES", "MEAN_ONLY_NAMES", "PairWeights", "weight_shapes", "pack_weights",
    "read_policy_file", "load_policy_weights", "average_policy_files",
    "NetworkCaches", "new_network_caches", "time_value", "pair_feature_values", "arm_record_values", "fill_unplayed", "record_network_duel", "refresh_network_duel", "duel_scores",
    "choose_duel", "policy_episode_regret",
    "pair_evidence", "safeguard_threshold", "new_safeguard_arrays", "reset_safeguard", "safeguard_observe", "safeguarded_duel",
    "safeguard_rule_digest", "SAFEGUARD_CLOCKS", "check_safeguard_clock",
    "safeguard_origin",
    "EXACT_POSTERIOR_DUELS", "posterior_preference", "new_check_arrays", "reset_check", "thompson_check_observe",
    "thompson_checked_duel", "thompson_check_digest",
]
