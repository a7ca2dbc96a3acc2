"""The pair network's forward pass as incremental Numba kernels over one :class:`~dueling_gym.pair_network.weights.PairWeights`.

A run keeps caches of everything the scores are made of, and a duel refreshes only what it
changed: the features and embedding of the one pair it was played by (both orders), the
summaries of its two arms, then the score layers' inputs (the global context and the arm records
change every score).  The per-step arithmetic is a few hundred multiply-adds in plain loops
(NumPy's per-call overhead would dominate it).  The caches of a run with ``K`` arms and ``H``
hidden units:

``embedding`` (K, K, H)
    pair embeddings ``g_ij``, zero on the diagonal;
``pair_input`` (K, K, H)
    the pair's direct input ``e_ij @ C + c`` to its score;
``summary`` (K, 2H)
    arm summaries ``[mean_j g_ij, max_j g_ij]`` over opponents ``j``;
``projections`` (3, K, H)
    ``summary @ A``, ``@ B``, ``@ S``;
``base`` (K, K, H), ``self_base`` (K, H)
    the duel and self-duel score layers' inputs before the time term.

Every feature is computed exactly as :mod:`dueling_gym.observations` computes it (float64
arithmetic in the same order, rounded to float32), so the scores equal those of the network
evaluated on the encoded observation.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["time_value", "pair_feature_values", "arm_record_values", "fill_unplayed", "record_network_duel", "duel_scores",
           "choose_duel"]


@numba.njit(cache=True, nogil=True)
def time_value(n_duels: int) -> float:
    """The time channel after ``n_duels`` duels, exactly :func:`~dueling_gym.observations.time_feature`
    (``log(1 + t) / 10`` rounded to float32)."""
    return np.float64(np.float32(np.log1p(np.float64(n_duels)) / 10.0))


@numba.njit(cache=True, nogil=True)
def pair_feature_values(wins_ij: int, wins_ji: int, out: np.ndarray) -> None:
    """The four channels of one ordered pair, exactly as :func:`~dueling_gym.observations.pair_features`
    computes them (float64 arithmetic in the same order, rounded to float32)."""
    counts = float(wins_ij + wins_ji)
    margin = wins_ij / counts - 0.5 if counts > 0 else 0.0
    evidence = min(max((float(wins_ij) - float(wins_ji)) / np.sqrt(counts + 1.0) / 4.0, -2.5), 2.5)
    out[0] = np.float32(margin)
    out[1] = np.float32(evidence)
    out[2] = np.float32(1.0 / np.sqrt(1.0 + counts))
    out[3] = np.float32(np.log1p(counts) / 8.0)


@numba.njit(cache=True, nogil=True)
def arm_record_values(wins, out):  # pragma: no cover - compiled
    """Every arm's record, exactly :func:`~dueling_gym.observations.arm_records` (float64
    arithmetic in the same order, rounded to float32)."""
    n_arms = wins.shape[0]
    net = np.zeros(n_arms)
    duels = np.zeros(n_arms)
    for i in range(n_arms):
        for j in range(n_arms):
            if i != j:
                net[i] += wins[i, j] - wins[j, i]
                duels[i] += wins[i, j] + wins[j, i]
    leader = net.max()
    for i in range(n_arms):
        root = np.sqrt(duels[i] + 1.0)
        out[i, 0] = np.float32(min(max(net[i] / root / 4.0, -2.5), 2.5))
        out[i, 1] = np.float32(max((net[i] - leader) / root / 4.0, -2.5))
        out[i, 2] = np.float32(net[i] / (duels[i] + 1.0))


@numba.njit(cache=True, nogil=True)
def _refresh_pair(wins, winner, loser, embedding, pair_input, weights):  # pragma: no cover - compiled
    """Embedding and direct score input of the pair ``(winner, loser)``, in both orders."""
    W1, b1, W2, b2, C, c = weights.W1, weights.b1, weights.W2, weights.b2, weights.C, weights.c
    features = np.empty(W1.shape[0])
    hidden = np.empty(W1.shape[1])
    for row, col in ((winner, loser), (loser, winner)):
        pair_feature_values(wins[row, col], wins[col, row], features)
        for k in range(W1.shape[1]):
            value = b1[k]
            for f in range(W1.shape[0]):
                value += features[f] * W1[f, k]
            hidden[k] = value if value > 0.0 else 0.0
        for k in range(W2.shape[1]):
            value = b2[k]
            for f in range(W2.shape[0]):
                value += hidden[f] * W2[f, k]
            embedding[row, col, k] = value if value > 0.0 else 0.0
            value = c[k]
            for f in range(C.shape[0]):
                value += features[f] * C[f, k]
            pair_input[row, col, k] = value


@numba.njit(cache=True, nogil=True)
def _refresh_arm(embedding, arm, weights, summary, projections):  # pragma: no cover - compiled
    """Arm ``arm``'s summary ``[mean_j g_arm,j, max_j g_arm,j]`` (over opponents ``j``) and its
    three projections ``summary @ A``, ``@ B``, ``@ S``."""
    A, B, S = weights.A, weights.B, weights.S
    n_arms, _, hidden = embedding.shape
    for k in range(hidden):
        total = 0.0
        largest = 0.0  # embeddings are ReLU outputs, so 0 is below every one of them
        for j in range(n_arms):
            if j != arm:
                value = embedding[arm, j, k]
                total += value
                if value > largest:
                    largest = value
        summary[arm, k] = total / (n_arms - 1)
        summary[arm, hidden + k] = largest
    for k in range(hidden):
        as_first = 0.0
        as_second = 0.0
        own = 0.0
        for f in range(2 * hidden):
            value = summary[arm, f]
            as_first += value * A[f, k]
            as_second += value * B[f, k]
            own += value * S[f, k]
        projections[0, arm, k] = as_first
        projections[1, arm, k] = as_second
        projections[2, arm, k] = own


@numba.njit(cache=True, nogil=True)
def _refresh_bases(summary, projections, pair_input, weights, base, self_base, wins):  # pragma: no cover - compiled
    """The score layers' inputs (before the time term) from the arm projections, the pair inputs,
    the global context ``mean_i summary_i`` (through ``G`` for duels, ``G_s`` for self-duels) and
    the arm records of ``wins`` (through ``R_a``, ``R_b`` for the two arms of a duel, ``R_s`` for
    a self-duel)."""
    G, G_s, s_b, R_a, R_b, R_s = weights.G, weights.G_s, weights.s_b, weights.R_a, weights.R_b, weights.R_s
    n_arms, width = summary.shape
    hidden = base.shape[2]
    context = np.zeros(width)
    for i in range(n_arms):
        for f in range(width):
            context[f] += summary[i, f]
    context /= n_arms
    duel_context = np.zeros(hidden)
    self_context = np.zeros(hidden)
    for k in range(hidden):
        for f in range(width):
            duel_context[k] += context[f] * G[f, k]
            self_context[k] += context[f] * G_s[f, k]
    record = np.empty((n_arms, R_a.shape[0]))
    arm_record_values(wins, record)
    record_terms = np.zeros((3, n_arms, hidden))
    for i in range(n_arms):
        for k in range(hidden):
            for f in range(R_a.shape[0]):
                record_terms[0, i, k] += record[i, f] * R_a[f, k]
                record_terms[1, i, k] += record[i, f] * R_b[f, k]
                record_terms[2, i, k] += record[i, f] * R_s[f, k]
    for i in range(n_arms):
        for k in range(hidden):
            self_base[i, k] = projections[2, i, k] + s_b[k] + self_context[k] + record_terms[2, i, k]
        for j in range(n_arms):
            for k in range(hidden):
                base[i, j, k] = (projections[0, i, k] + projections[1, j, k] + pair_input[i, j, k] + duel_context[k]
                                 + record_terms[0, i, k] + record_terms[1, j, k])


@numba.njit(cache=True, nogil=True)
def duel_scores(base, self_base, wins, tau, weights, out):  # pragma: no cover - compiled
    """Every duel's score (the policy's logit) into ``out`` (K, K), at time value ``tau``."""
    d, w, w0, s_t, s_n, s, s0 = weights.d, weights.w, weights.w0, weights.s_t, weights.s_n, weights.s, weights.s0
    n_arms, _, hidden = base.shape
    for i in range(n_arms):
        for j in range(n_arms):
            if i == j:
                # How often the arm has been played against itself: exploitation so far.
                plays = np.float64(np.float32(np.log1p(np.float64(wins[i, i])) / 8.0))
                value = s0
                for k in range(hidden):
                    pre = self_base[i, k] + tau * s_t[k] + plays * s_n[k]
                    if pre > 0.0:
                        value += pre * s[k]
            else:
                value = w0
                for k in range(hidden):
                    pre = base[i, j, k] + tau * d[k]
                    if pre > 0.0:
                        value += pre * w[k]
            out[i, j] = value


@numba.njit(cache=True, nogil=True)
def choose_duel(base, self_base, wins, tau, weights, uniform):  # pragma: no cover - compiled
    """Flat index ``first * K + second`` of the duel: the argmax of the scores (``uniform < 0``;
    the lowest flat index on ties) or a draw from their softmax by inversion of ``uniform``."""
    n_arms = base.shape[0]
    scores = np.empty((n_arms, n_arms))
    duel_scores(base, self_base, wins, tau, weights, scores)
    flat = scores.ravel()
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
def fill_unplayed(embedding, pair_input, summary, projections, base, self_base, weights, wins):  # pragma: no cover - compiled
    """Caches of a run with no duels yet: every pair has the features of zero counts."""
    W1, b1, W2, b2, C, c = weights.W1, weights.b1, weights.W2, weights.b2, weights.C, weights.c
    n_arms, _, hidden = embedding.shape
    features = np.empty(W1.shape[0])
    pair_feature_values(0, 0, features)
    first_layer = np.empty(hidden)
    for k in range(hidden):
        value = b1[k]
        for f in range(W1.shape[0]):
            value += features[f] * W1[f, k]
        first_layer[k] = value if value > 0.0 else 0.0
    for i in range(n_arms):
        for j in range(n_arms):
            for k in range(hidden):
                value = c[k]
                for f in range(C.shape[0]):
                    value += features[f] * C[f, k]
                pair_input[i, j, k] = value
                if i == j:
                    embedding[i, j, k] = 0.0  # no self-pair enters the arm summaries
                else:
                    value = b2[k]
                    for f in range(hidden):
                        value += first_layer[f] * W2[f, k]
                    embedding[i, j, k] = value if value > 0.0 else 0.0
    for arm in range(n_arms):
        _refresh_arm(embedding, arm, weights, summary, projections)
    _refresh_bases(summary, projections, pair_input, weights, base, self_base, wins)


@numba.njit(cache=True, nogil=True)
def record_network_duel(wins, first, second, first_won, embedding, pair_input, summary, projections, base,
                        self_base, weights):  # pragma: no cover - compiled
    """Count a duel and refresh the network caches of the pair it changed.

    Unlike the agents' win-count update, a self-duel is counted, on the diagonal of ``wins``, and
    refreshes no cache.
    """
    if first == second:
        wins[first, first] += 1
        return
    winner, loser = (first, second) if first_won else (second, first)
    wins[winner, loser] += 1
    _refresh_pair(wins, winner, loser, embedding, pair_input, weights)
    # Only the two arms of the pair change their summaries; the context changes every score.
    _refresh_arm(embedding, winner, weights, summary, projections)
    _refresh_arm(embedding, loser, weights, summary, projections)
    _refresh_bases(summary, projections, pair_input, weights, base, self_base, wins)
