"""Compiled steps of CAR-Cond, CAR-Verify and CAR-Parallel (Chen, Du, Huang, Zhao, ICML 2020).

:func:`cond_round` is the bookkeeping of one CAR-Cond round (Algorithm 2, line 7 and the exact
LP-skipping test of :mod:`~dueling_gym.agents.cpe.car`): the bounds of
:func:`~dueling_gym.agents.cpe.bounds.preference_bounds` and the drift of
:func:`~dueling_gym.agents.cpe.condorcet_oracle.oracle_drift`, with NumPy's operations and
summation order, so which LPs run is unchanged.  The oracle LPs themselves stay in Python.

:func:`verify_step` is Algorithm 4 (CAR-Verify), lines 5-15; ``[A4 Ln]`` points to its lines.
One verification step builds the bounds ``P̄_s, P̲_s`` from the pair statistics, finds the
strongest challenger of ``M̂`` under each (``l`` max-weight matchings, each forbidding one
edge of ``M̂``) and either stops ("error" or the answer ``M̂``) or names the next duel.  The
Python version of the step
(:func:`~dueling_gym.agents.cpe.bounds.preference_bounds`,
:func:`~dueling_gym.agents.cpe.bounds.bound_matrices`,
:meth:`~dueling_gym.problems.BipartiteDuelProblem.strongest_challenger`) is reproduced
operation for operation: SciPy's assignment solver and tie-breaking
(:mod:`~dueling_gym.agents.cpe._assignment`), NumPy's summation, the same radius formula, so
the duels and answers are unchanged.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents.cpe._assignment import max_weight_covering, new_assignment_workspace, numpy_sum, take_sum

# Return codes of verify_step.
VERIFY_ERROR, VERIFY_ANSWER, VERIFY_DUEL = 0, 1, 2


def new_verify_workspace(n_edges: int, n_positions: int, n_candidates: int, n_pairs: int) -> tuple:
    """Buffers of :func:`verify_step`: bounds, matrices, weights, matchings, the assignment's buffers."""
    return (np.zeros(n_pairs), np.zeros(n_pairs), np.zeros((n_edges, n_edges)), np.zeros((n_edges, n_edges)),
            np.zeros(n_edges), np.ones(n_edges, dtype=np.bool_), np.zeros(n_positions, dtype=np.int64),
            np.zeros(n_positions, dtype=np.int64), np.zeros(n_positions),
            new_assignment_workspace(n_positions, n_candidates))


@numba.njit(cache=True, nogil=True)
def cond_round(counts, wins, half_level, edges, cache_valid, ref_lower, ref_upper, values, starts, n_positions,
               epsilon, tolerance, lower, upper, needs, per_position):
    """Bounds and LP-skipping test of one CAR-Cond round; returns how many edges need their LPs.

    ``lower``/``upper`` get :func:`preference_bounds` with ``half_level = ln(4 K t³ / δ) / 2``
    (``sqrt(half_level / T)`` is the radius).  For each undecided edge ``edges[i]``,
    ``needs[i]`` is False when its cached values pass the skipping test, i.e.
    ``InL - ExU + 2 D + tolerance <= ε`` and ``ExL - InU + 2 D + tolerance <= ε`` with ``D``
    the :func:`oracle_drift` since they were computed (``starts``: :func:`position_starts`,
    one per position with pairs).  ``per_position`` is a buffer of at least ``len(starts)``.
    """
    n_pairs = counts.shape[0]
    for k in range(n_pairs):                                                              # [A2 L7]
        if counts[k] > 0:
            count = float(counts[k])
            radius = math.sqrt(half_level / count)
            mean = float(wins[k]) / count
            lower[k] = max(0.0, mean - radius)
            upper[k] = min(1.0, mean + radius)
        else:
            lower[k], upper[k] = 0.0, 1.0
    n_segments = starts.shape[0]
    n_needed = 0
    for i in range(edges.shape[0]):
        e = edges[i]
        needs[i] = True
        if cache_valid[e]:
            # oracle_drift: per position the largest bound change of its pairs, summed.
            for j in range(n_segments):
                end = starts[j + 1] if j + 1 < n_segments else n_pairs
                largest = -np.inf
                for k in range(starts[j], end):
                    change = max(abs(ref_lower[e, k] - lower[k]), abs(ref_upper[e, k] - upper[k]))
                    if change > largest:
                        largest = change
                per_position[j] = largest
            # NumPy's summation order (numpy_sum), so the bound is oracle_drift's to the last bit.
            drift = numpy_sum(per_position) / n_positions
            slack = 2.0 * drift + tolerance
            in_up, in_low, ex_up, ex_low = values[e, 0], values[e, 1], values[e, 2], values[e, 3]
            if in_low - ex_up + slack <= epsilon and ex_low - in_up + slack <= epsilon:
                needs[i] = False
        if needs[i]:
            n_needed += 1
    return n_needed


@numba.njit(cache=True, nogil=True)
def _bounds(counts, wins, s, delta, constant, pairs, lower, upper, p_upper, p_lower):
    """[A4 L5]: per-pair bounds (eq. (8)) and the matrices ``P̄``, ``P̲`` (``bound_matrices``)."""
    half_level = 0.5 * math.log(4.0 * constant * math.pow(float(s), 3.0) / delta)
    for k in range(counts.shape[0]):
        if counts[k] > 0:
            radius = math.sqrt(half_level / counts[k])
            mean = wins[k] / counts[k]
            lower[k] = max(0.0, mean - radius)
            upper[k] = min(1.0, mean + radius)
        else:
            lower[k], upper[k] = 0.0, 1.0
    p_upper[:, :] = 0.0
    p_lower[:, :] = 0.0
    for e in range(p_upper.shape[0]):
        p_upper[e, e] = 0.5
        p_lower[e, e] = 0.5
    for k in range(counts.shape[0]):
        first, second = pairs[k, 1], pairs[k, 2]
        p_upper[first, second] = upper[k]
        p_upper[second, first] = 1.0 - lower[k]
        p_lower[first, second] = lower[k]
        p_lower[second, first] = 1.0 - upper[k]


@numba.njit(cache=True, nogil=True)
def _strongest_challenger(Q, m_hat, positions, candidates, edge_at, workspace, best):
    """``max_{M ≠ M̂} f(M, M̂, Q)`` [A4 L6, L9]; the argmax goes to ``best`` (untouched when none)."""
    weights, allowed, rival, buffer, assignment = workspace[4], workspace[5], workspace[7], workspace[8], workspace[9]
    n_positions = m_hat.shape[0]
    for e in range(weights.shape[0]):
        weights[e] = Q[e, m_hat[positions[e]]]                                            # Q[e, ê_{s(e)}]
    best_value = -np.inf
    for j in range(n_positions):
        # Every M ≠ M̂ avoids some edge of M̂: the best matching forbidding each edge in turn;
        # the first best in the order of M̂ wins, as in strongest_challenger.
        allowed[m_hat[j]] = False
        found = max_weight_covering(weights, positions, candidates, edge_at, allowed, assignment, rival)
        allowed[m_hat[j]] = True
        if found:
            value = take_sum(weights, rival, buffer) / n_positions
            if value > best_value:
                best_value = value
                best[:] = rival
    return best_value


@numba.njit(cache=True, nogil=True)
def verify_step(counts, wins, s, delta, constant, pairs, pair_of, m_hat, positions, candidates, edge_at, workspace,
                duel):
    """Verification step ``s`` of Algorithm 4: ``VERIFY_ERROR``, ``VERIFY_ANSWER`` or ``VERIFY_DUEL`` (in ``duel``)."""
    lower, upper, p_upper, p_lower = workspace[0], workspace[1], workspace[2], workspace[3]
    challenger = workspace[6]
    _bounds(counts, wins, s, delta, constant, pairs, lower, upper, p_upper, p_lower)      # [A4 L5]
    if _strongest_challenger(p_lower, m_hat, positions, candidates, edge_at, workspace, challenger) >= 0.5:
        return VERIFY_ERROR                                                               # [A4 L6-8]
    challenger[:] = -1
    value = _strongest_challenger(p_upper, m_hat, positions, candidates, edge_at, workspace, challenger)  # [A4 L9]
    if challenger[0] < 0 or value <= 0.5:                                                 # [A4 L10-12]
        return VERIFY_ANSWER
    # [A4 L14]: the differing same-position pair (e ∈ M_t \\ M̂, g ∈ M̂ \\ M_t) with the largest
    # radius; lowest position on ties.
    half_level = 0.5 * math.log(4.0 * constant * math.pow(float(s), 3.0) / delta)
    best_radius = -np.inf
    for j in range(m_hat.shape[0]):
        e, g = challenger[j], m_hat[j]
        if e != g:
            k = pair_of[e, g]
            radius = math.sqrt(half_level / counts[k]) if counts[k] > 0 else 1.0
            if radius > best_radius:
                best_radius = radius
                duel[0], duel[1] = e, g
    return VERIFY_DUEL
