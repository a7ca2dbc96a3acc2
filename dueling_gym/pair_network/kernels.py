"""The pair network's forward pass as incremental Numba kernels over one :class:`~dueling_gym.pair_network.weights.PairWeights`.

A run keeps caches of everything the scores are made of (:class:`~dueling_gym.pair_network.kernels.NetworkCaches`), and a duel
refreshes only what it changed: the features and embedding of the one pair it was played by
(both orders), the summaries of its two arms, the records of the arms whose record moved, then
the score layers' inputs (the global context changes every score).  The per-step arithmetic is a
few multiply-adds per duel score in plain loops (NumPy's per-call overhead would dominate it).

The caches keep the hidden unit ``k`` before the arms (``pair_input`` and ``base`` are indexed
``[k, i * K + j]``, ``projections`` and ``record_terms`` ``[p, k, i]``), so that the loops over the
duels read and write consecutive memory (the compiler turns them into vector instructions) while
every score still sums its hidden units in order.

Every feature is computed exactly as :mod:`dueling_gym.observations` computes it (float64
arithmetic in the same order, rounded to float32), and every sum is accumulated in the same
order as the network's definition (:mod:`dueling_gym.pair_network`), so the scores equal those of
the network evaluated on the encoded observation, bit for bit, whatever the layout.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

__all__ = ["NetworkCaches", "new_network_caches", "time_value", "pair_feature_values", "arm_record_values",
           "fill_unplayed", "record_network_duel", "refresh_network_duel", "duel_scores", "choose_duel"]


class NetworkCaches(NamedTuple):
    """What a run of the pair network keeps between duels (``K`` arms, ``H`` hidden units, ``F``
    pair channels), made by ``new_network_caches`` and filled by ``fill_unplayed``, which checks
    every array against the run's win counts and weights.  The kernels of a duel
    (``record_network_duel``, ``choose_duel``) check, every call, the arms and the arrays they
    index by duel (compiled code does not bound indices); the agent pays about a fifth of its
    speed at K = 5 for it.

    The first eight arrays are the run's state; the others are scratch space of one duel, kept
    here so that no duel allocates memory.
    """

    embedding: np.ndarray     # (K, K, H): pair embeddings g_ij, zero on the diagonal
    pair_input: np.ndarray    # (H, K * K): [k, i * K + j] the pair's direct input (e_ij @ C + c)[k] to its score
    summary: np.ndarray       # (K, 2H): arm summaries [mean_j g_ij, max_j g_ij] over opponents j
    projections: np.ndarray   # (3, H, K): [p, k, i] (summary_i @ A, @ B, @ S)[k]
    base: np.ndarray          # (H, K * K): [k, i * K + j] the duel (i, j)'s score layer input before the time term
    self_base: np.ndarray     # (K, H): the self-duel score layer's input before the time term
    records: np.ndarray       # (K, N_RECORD_FEATURES): the arm records the terms below were made of
    record_terms: np.ndarray  # (3, H, K): [p, k, i] (r_i @ R_a, @ R_b, @ R_s)[k]
    context: np.ndarray       # (2H,) scratch: the global context
    duel_context: np.ndarray  # (H,) scratch: context @ G
    self_context: np.ndarray  # (H,) scratch: context @ G_s
    new_records: np.ndarray   # (K, N_RECORD_FEATURES) scratch: the records after the duel
    arm_totals: np.ndarray    # (2, K) scratch: every arm's net wins and duels
    features: np.ndarray      # (F,) scratch: one ordered pair's features
    accumulators: np.ndarray  # (5, H) scratch: sums over one input, one per hidden unit
    scores: np.ndarray        # (K * K,) scratch: every duel's score, [i * K + j]


@numba.njit(cache=True, nogil=True)
def new_network_caches(n_arms: int, weights) -> NetworkCaches:
    """Unfilled :class:`NetworkCaches` of a run of the network ``weights`` (a
    :class:`~dueling_gym.pair_network.weights.PairWeights`) with ``n_arms`` arms (fill them with
    :func:`fill_unplayed`)."""
    hidden, n_channels, n_record_features = weights.b1.size, weights.W1.shape[0], weights.R_a.shape[0]
    return NetworkCaches(
        np.empty((n_arms, n_arms, hidden)), np.empty((hidden, n_arms * n_arms)), np.empty((n_arms, 2 * hidden)),
        np.empty((3, hidden, n_arms)), np.empty((hidden, n_arms * n_arms)), np.empty((n_arms, hidden)),
        np.empty((n_arms, n_record_features)), np.empty((3, hidden, n_arms)),
        np.empty(2 * hidden), np.empty(hidden), np.empty(hidden), np.empty((n_arms, n_record_features)),
        np.empty((2, n_arms)), np.empty(n_channels), np.empty((5, hidden)), np.empty(n_arms * n_arms))


@numba.njit(cache=True, nogil=True)
def time_value(n_duels: int) -> float:
    """The time channel after ``n_duels`` duels, exactly :func:`~dueling_gym.observations.time_feature`
    (``log(1 + t) / 10`` rounded to float32)."""
    return np.float64(np.float32(np.log1p(np.float64(n_duels)) / 10.0))


@numba.njit(cache=True, nogil=True, inline="always")
def _pair_features_into(wins_ij, wins_ji, out):  # pragma: no cover - compiled
    """:func:`pair_feature_values` without the check of ``out`` (the caches' own scratch array)."""
    counts = float(wins_ij + wins_ji)
    margin = wins_ij / counts - 0.5 if counts > 0 else 0.0
    evidence = min(max((float(wins_ij) - float(wins_ji)) / np.sqrt(counts + 1.0) / 4.0, -2.5), 2.5)
    out[0] = np.float32(margin)
    out[1] = np.float32(evidence)
    out[2] = np.float32(1.0 / np.sqrt(1.0 + counts))
    out[3] = np.float32(np.log1p(counts) / 8.0)


@numba.njit(cache=True, nogil=True)
def pair_feature_values(wins_ij: int, wins_ji: int, out: np.ndarray) -> None:
    """The four channels of one ordered pair, exactly as :func:`~dueling_gym.observations.pair_features`
    computes them (float64 arithmetic in the same order, rounded to float32)."""
    if out.size < 4:
        raise ValueError("pair_feature_values writes four channels: out must hold at least 4 values")
    _pair_features_into(wins_ij, wins_ji, out)


@numba.njit(cache=True, nogil=True, inline="always")
def _arm_records_into(wins, totals, out):  # pragma: no cover - compiled
    """:func:`arm_record_values` with the scratch array ``totals`` (2, K) of the caller."""
    n_arms = wins.shape[0]
    leader = -np.inf
    for i in range(n_arms):
        net = 0.0
        duels = 0.0
        for j in range(n_arms):
            if i != j:
                net += wins[i, j] - wins[j, i]
                duels += wins[i, j] + wins[j, i]
        totals[0, i] = net
        totals[1, i] = duels
        leader = max(leader, net)
    for i in range(n_arms):
        net, duels = totals[0, i], totals[1, i]
        root = np.sqrt(duels + 1.0)
        out[i, 0] = np.float32(min(max(net / root / 4.0, -2.5), 2.5))
        out[i, 1] = np.float32(max((net - leader) / root / 4.0, -2.5))
        out[i, 2] = np.float32(net / (duels + 1.0))


@numba.njit(cache=True, nogil=True)
def arm_record_values(wins, out):  # pragma: no cover - compiled
    """Every arm's record, exactly :func:`~dueling_gym.observations.arm_records` (float64
    arithmetic in the same order, rounded to float32)."""
    if wins.shape[1] != wins.shape[0] or out.shape[0] != wins.shape[0] or out.shape[1] < 3:
        raise ValueError("arm_record_values needs wins (K, K) and out (K, 3)")
    _arm_records_into(wins, np.empty((2, wins.shape[0])), out)


@numba.njit(cache=True, nogil=True, inline="always")
def _layer_into(inputs, matrix, bias, out):  # pragma: no cover - compiled
    """``out = bias + inputs @ matrix``: every unit ``k`` adds ``inputs[f] * matrix[f, k]`` in the
    order of ``f``, all units at once (the loop over ``k`` reads rows of ``matrix``)."""
    for k in range(out.size):
        out[k] = bias[k]
    for f in range(inputs.size):
        value = inputs[f]
        for k in range(out.size):
            out[k] += value * matrix[f, k]


@numba.njit(cache=True, nogil=True, inline="always")
def _project_three(inputs, first, second, third, sums, out, column):  # pragma: no cover - compiled
    """``out[p, :, column] = inputs @ (first, second, third)[p]``, each unit adding its terms in
    the order of ``inputs``, all units at once (rows 2 to 4 of ``sums`` hold the running sums)."""
    hidden = out.shape[1]
    for k in range(hidden):
        sums[2, k] = 0.0
        sums[3, k] = 0.0
        sums[4, k] = 0.0
    for f in range(inputs.size):
        value = inputs[f]
        for k in range(hidden):
            sums[2, k] += value * first[f, k]
            sums[3, k] += value * second[f, k]
            sums[4, k] += value * third[f, k]
    for k in range(hidden):
        out[0, k, column] = sums[2, k]
        out[1, k, column] = sums[3, k]
        out[2, k, column] = sums[4, k]


@numba.njit(cache=True, nogil=True)
def _refresh_pair(wins, winner, loser, W1, b1, W2, b2, C, c, embedding, pair_input, features,
                  accumulators):  # pragma: no cover - compiled
    """Embedding and direct score input of the pair ``(winner, loser)``, in both orders."""
    first_layer, second_layer, direct = accumulators[0], accumulators[1], accumulators[2]
    n_arms = wins.shape[0]
    hidden = b1.size
    for row, col in ((winner, loser), (loser, winner)):
        _pair_features_into(wins[row, col], wins[col, row], features)
        _layer_into(features, W1, b1, first_layer)
        for k in range(hidden):
            first_layer[k] = first_layer[k] if first_layer[k] > 0.0 else 0.0
        _layer_into(first_layer, W2, b2, second_layer)
        _layer_into(features, C, c, direct)
        duel = row * n_arms + col
        for k in range(hidden):
            embedding[row, col, k] = second_layer[k] if second_layer[k] > 0.0 else 0.0
            pair_input[k, duel] = direct[k]


@numba.njit(cache=True, nogil=True)
def _refresh_arm(arm, A, B, S, embedding, summary, projections, sums):  # pragma: no cover - compiled
    """Arm ``arm``'s summary ``[mean_j g_arm,j, max_j g_arm,j]`` (over opponents ``j``) and its
    three projections ``summary @ A``, ``@ B``, ``@ S``."""
    n_arms, _, hidden = embedding.shape
    for k in range(hidden):
        sums[0, k] = 0.0
        sums[1, k] = 0.0  # embeddings are ReLU outputs, so 0 is below every one of them
    for j in range(n_arms):
        if j != arm:
            for k in range(hidden):
                value = embedding[arm, j, k]
                sums[0, k] += value
                sums[1, k] = value if value > sums[1, k] else sums[1, k]
    for k in range(hidden):
        summary[arm, k] = sums[0, k] / (n_arms - 1)
        summary[arm, hidden + k] = sums[1, k]
    _project_three(summary[arm], A, B, S, sums, projections, arm)


@numba.njit(cache=True, nogil=True)
def _refresh_records(wins, R_a, R_b, R_s, records, new_records, terms, totals, sums,
                     every_arm):  # pragma: no cover - compiled
    """The arm records of ``wins`` and their terms ``r_i @ R_a``, ``@ R_b``, ``@ R_s``: for
    every arm, or (``every_arm`` false) for the arms whose record changed -- a duel moves the
    records of its two arms, and the leader's net wins move every arm's second feature only
    when the leader's count changes."""
    n_arms, n_features = records.shape
    _arm_records_into(wins, totals, new_records)
    for i in range(n_arms):
        if not every_arm:
            changed = False
            for f in range(n_features):
                if new_records[i, f] != records[i, f]:
                    changed = True
            if not changed:
                continue
        for f in range(n_features):
            records[i, f] = new_records[i, f]
        _project_three(records[i], R_a, R_b, R_s, sums, terms, i)


@numba.njit(cache=True, nogil=True)
def _refresh_bases(G, G_s, s_b, summary, projections, pair_input, terms, context, duel_context, self_context, base,
                   self_base):  # pragma: no cover - compiled
    """The score layers' inputs (before the time term) from the arm projections, the pair inputs,
    the global context ``mean_i summary_i`` (through ``G`` for duels, ``G_s`` for self-duels) and
    the arm records' terms (``R_a``, ``R_b`` for the two arms of a duel, ``R_s`` for a self-duel)."""
    n_arms, width = summary.shape
    hidden = base.shape[0]
    for f in range(width):
        context[f] = 0.0
    for i in range(n_arms):
        for f in range(width):
            context[f] += summary[i, f]
    for f in range(width):
        context[f] /= n_arms
    for k in range(hidden):
        duel_context[k] = 0.0
        self_context[k] = 0.0
    for f in range(width):
        value = context[f]
        for k in range(hidden):
            duel_context[k] += value * G[f, k]
            self_context[k] += value * G_s[f, k]
    for i in range(n_arms):
        for k in range(hidden):
            self_base[i, k] = projections[2, k, i] + s_b[k] + self_context[k] + terms[2, k, i]
    for k in range(hidden):
        shared = duel_context[k]
        for i in range(n_arms):
            # The sum in the network's order: first arm, second arm, pair, context, records.
            first, first_record = projections[0, k, i], terms[0, k, i]
            for j in range(n_arms):
                duel = i * n_arms + j
                base[k, duel] = (first + projections[1, k, j] + pair_input[k, duel] + shared + first_record
                                 + terms[1, k, j])


@numba.njit(cache=True, nogil=True, inline="always")
def _refresh_derived(wins, caches, weights, every_arm):  # pragma: no cover - compiled
    """The records' terms (of every arm, or of the arms whose record changed) and the score
    layers' inputs, once the pair embeddings and arm summaries are up to date."""
    _refresh_records(wins, weights.R_a, weights.R_b, weights.R_s, caches.records, caches.new_records,
                     caches.record_terms, caches.arm_totals, caches.accumulators, every_arm)
    _refresh_bases(weights.G, weights.G_s, weights.s_b, caches.summary, caches.projections, caches.pair_input,
                   caches.record_terms, caches.context, caches.duel_context, caches.self_context, caches.base,
                   caches.self_base)


@numba.njit(cache=True, nogil=True, inline="always")
def _check_caches(caches, wins, weights):  # pragma: no cover - compiled
    """The caches are the caller's and compiled code does not check indices: refuse caches whose
    shapes do not match the ``K`` arms of ``wins`` and the network of ``weights`` before anything
    is written.  (One expression without short-circuits: it compiles to a few comparisons.)"""
    n_arms, hidden, n_features = wins.shape[0], weights.b1.size, weights.R_a.shape[0]
    n_duels = n_arms * n_arms
    embedding, projections, record_terms = caches.embedding, caches.projections, caches.record_terms
    wrong = ((wins.shape[1] != n_arms) | (embedding.shape[0] != n_arms) | (embedding.shape[1] != n_arms)
             | (embedding.shape[2] != hidden) | (caches.pair_input.shape[0] != hidden)
             | (caches.pair_input.shape[1] != n_duels) | (caches.summary.shape[0] != n_arms)
             | (caches.summary.shape[1] != 2 * hidden) | (projections.shape[0] != 3) | (projections.shape[1] != hidden)
             | (projections.shape[2] != n_arms) | (caches.base.shape[0] != hidden) | (caches.base.shape[1] != n_duels)
             | (caches.self_base.shape[0] != n_arms) | (caches.self_base.shape[1] != hidden)
             | (caches.records.shape[0] != n_arms) | (caches.records.shape[1] != n_features)
             | (record_terms.shape[0] != 3) | (record_terms.shape[1] != hidden) | (record_terms.shape[2] != n_arms)
             | (caches.context.size != 2 * hidden) | (caches.duel_context.size != hidden)
             | (caches.self_context.size != hidden) | (caches.new_records.shape[0] != n_arms)
             | (caches.new_records.shape[1] != n_features) | (caches.arm_totals.shape[0] != 2)
             | (caches.arm_totals.shape[1] != n_arms) | (caches.features.size != weights.W1.shape[0])
             | (caches.accumulators.shape[0] != 5) | (caches.accumulators.shape[1] != hidden)
             | (caches.scores.size != n_duels))
    if wrong:
        raise ValueError("the network caches do not match wins (K, K) and the weights: make them with "
                         "new_network_caches(K, weights)")


@numba.njit(cache=True, nogil=True, inline="always")
def _scores_into(caches, wins, tau, weights, scores):  # pragma: no cover - compiled
    """Every duel's score into ``scores`` (K * K,), duel ``(i, j)`` at ``i * K + j``."""
    d, w, w0, s_t, s_n, s, s0 = weights.d, weights.w, weights.w0, weights.s_t, weights.s_n, weights.s, weights.s0
    base, self_base = caches.base, caches.self_base
    hidden, n_duels = base.shape
    n_arms = self_base.shape[0]
    for index in range(n_duels):
        scores[index] = w0
    for k in range(hidden):
        shift, weight = tau * d[k], w[k]
        for index in range(n_duels):
            pre = base[k, index] + shift
            # A select rather than a branch, so that the loop vectorises; every score still adds
            # its hidden units in order.
            scores[index] = scores[index] + pre * weight if pre > 0.0 else scores[index]
    for i in range(n_arms):
        # How often the arm has been played against itself: exploitation so far.
        plays = np.float64(np.float32(np.log1p(np.float64(wins[i, i])) / 8.0))
        value = s0
        for k in range(hidden):
            pre = self_base[i, k] + tau * s_t[k] + plays * s_n[k]
            if pre > 0.0:
                value += pre * s[k]
        scores[i * n_arms + i] = value


@numba.njit(cache=True, nogil=True)
def duel_scores(caches, wins, tau, weights, out):  # pragma: no cover - compiled
    """Every duel's score (the policy's logit) into ``out`` (K, K), at time value ``tau``."""
    _check_caches(caches, wins, weights)
    n_arms = wins.shape[0]
    if out.shape[0] != n_arms or out.shape[1] != n_arms:
        raise ValueError("duel_scores writes every duel's score: out must have shape (K, K)")
    scores = caches.scores
    _scores_into(caches, wins, tau, weights, scores)
    for i in range(n_arms):
        for j in range(n_arms):
            out[i, j] = scores[i * n_arms + j]


@numba.njit(cache=True, nogil=True, inline="always")
def choose_duel(caches, wins, tau, weights, uniform):  # pragma: no cover - compiled
    """Flat index ``first * K + second`` of the duel: the argmax of the scores (``uniform < 0``;
    the lowest flat index on ties) or a draw from their softmax by inversion of ``uniform``.

    ``caches`` should be those :func:`fill_unplayed` checked against the same ``wins`` and
    ``weights``; the arrays this writes and indexes by duel are checked against ``wins`` every call
    (a few comparisons), so mismatched caches raise ``ValueError`` instead of being written past.
    """
    flat = caches.scores
    n_arms = wins.shape[0]
    if (wins.shape[1] != n_arms or flat.size != n_arms * n_arms or caches.base.shape[1] != n_arms * n_arms
            or caches.self_base.shape[0] != n_arms or caches.base.shape[0] != weights.b1.size
            or caches.self_base.shape[1] != weights.b1.size):
        raise ValueError("the network caches do not match wins (K, K) and the weights: make them with "
                         "new_network_caches(K, weights)")
    _scores_into(caches, wins, tau, weights, flat)
    best = np.argmax(flat)
    if uniform < 0.0:
        return best
    top = flat[best]
    total = 0.0
    for index in range(flat.size):
        flat[index] = np.exp(flat[index] - top)
        total += flat[index]
    target = uniform * total
    running = 0.0
    for index in range(flat.size):
        running += flat[index]
        if target < running:
            return index
    return flat.size - 1


@numba.njit(cache=True, nogil=True)
def fill_unplayed(caches, weights, wins):  # pragma: no cover - compiled
    """Fill the caches of a run with no duels yet: every pair has the features of zero counts.

    Raises ``ValueError`` when an array of ``caches`` does not match the ``K`` arms of ``wins``
    (``K x K``) and the network of ``weights``: the kernels of a duel then trust the caches.
    """
    _check_caches(caches, wins, weights)
    W1, b1, W2, b2, C, c = weights.W1, weights.b1, weights.W2, weights.b2, weights.C, weights.c
    embedding, pair_input, features = caches.embedding, caches.pair_input, caches.features
    first_layer, second_layer, direct = caches.accumulators[0], caches.accumulators[1], caches.accumulators[2]
    n_arms, _, hidden = embedding.shape
    # Every pair has the same features, so one embedding and one direct input serve them all.
    _pair_features_into(0, 0, features)
    _layer_into(features, W1, b1, first_layer)
    for k in range(hidden):
        first_layer[k] = first_layer[k] if first_layer[k] > 0.0 else 0.0
    _layer_into(first_layer, W2, b2, second_layer)
    _layer_into(features, C, c, direct)
    for i in range(n_arms):
        for j in range(n_arms):
            for k in range(hidden):
                pair_input[k, i * n_arms + j] = direct[k]
                # No self-pair enters the arm summaries.
                embedding[i, j, k] = 0.0 if i == j else (second_layer[k] if second_layer[k] > 0.0 else 0.0)
    for arm in range(n_arms):
        _refresh_arm(arm, weights.A, weights.B, weights.S, embedding, caches.summary, caches.projections,
                     caches.accumulators)
    _refresh_derived(wins, caches, weights, True)


@numba.njit(cache=True, nogil=True, inline="always")
def record_network_duel(wins, first, second, first_won, caches, weights):  # pragma: no cover - compiled
    """Count a duel and refresh the network caches of the pair it changed.

    Unlike the agents' win-count update, a self-duel is counted, on the diagonal of ``wins``, and
    refreshes no cache.  ``caches`` should be those :func:`fill_unplayed` checked against the same
    ``wins`` and ``weights``; arms outside ``0 .. K-1`` and caches of another number of arms or
    hidden units raise ``ValueError`` before anything is written (a few comparisons per duel).
    """
    _check_duel(wins, first, second, caches, weights)
    if first == second:
        wins[first, first] += 1
        return
    winner, loser = (first, second) if first_won else (second, first)
    wins[winner, loser] += 1
    _refresh_after_duel(wins, winner, loser, caches, weights)


@numba.njit(cache=True, nogil=True, inline="always")
def refresh_network_duel(wins, first, second, first_won, caches, weights):  # pragma: no cover - compiled
    """Refresh the caches of a second network after a duel that :func:`record_network_duel` has
    already counted in ``wins`` (two networks reading the same duels share the counts; the caches
    are each network's own).  A self-duel refreshes nothing; the checks are
    :func:`record_network_duel`'s."""
    _check_duel(wins, first, second, caches, weights)
    if first != second:
        winner, loser = (first, second) if first_won else (second, first)
        _refresh_after_duel(wins, winner, loser, caches, weights)


@numba.njit(cache=True, nogil=True, inline="always")
def _check_duel(wins, first, second, caches, weights):  # pragma: no cover - compiled
    """Refuse arms outside ``0 .. K-1`` and, for a duel of two arms, caches of another number of
    arms or hidden units, before anything is written."""
    n_arms = wins.shape[0]
    if first < 0 or first >= n_arms or second < 0 or second >= n_arms or wins.shape[1] != n_arms:
        raise ValueError("the duel's arms must lie in 0..K-1 of a K x K wins array")
    embedding = caches.embedding
    if first != second and (embedding.shape[0] != n_arms or embedding.shape[1] != n_arms
                            or embedding.shape[2] != weights.b1.size):
        raise ValueError("the network caches do not match wins (K, K) and the weights: make them with "
                         "new_network_caches(K, weights)")


@numba.njit(cache=True, nogil=True, inline="always")
def _refresh_after_duel(wins, winner, loser, caches, weights):  # pragma: no cover - compiled
    """Everything a counted duel of ``winner`` over ``loser`` changes in the caches."""
    embedding = caches.embedding
    # The helpers take the arrays they use, not the two records: every array passed to a
    # compiled function is reference-counted (an atomic operation) on the way in and out.
    summary, projections, accumulators = caches.summary, caches.projections, caches.accumulators
    _refresh_pair(wins, winner, loser, weights.W1, weights.b1, weights.W2, weights.b2, weights.C, weights.c, embedding,
                  caches.pair_input, caches.features, accumulators)
    # Only the two arms of the pair change their summaries; the context changes every score.
    A, B, S = weights.A, weights.B, weights.S
    _refresh_arm(winner, A, B, S, embedding, summary, projections, accumulators)
    _refresh_arm(loser, A, B, S, embedding, summary, projections, accumulators)
    _refresh_derived(wins, caches, weights, False)
