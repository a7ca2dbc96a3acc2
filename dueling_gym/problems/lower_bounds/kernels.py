"""Compiled cores of the Copeland lower bounds, shared with CW-RMED and ECW-RMED.

Komiyama, Honda and Nakagawa (ICML 2016): the separation oracle of the full region ``R_{i1}``
(equation (2), Lemma 1) and the sort-and-scan solution of the relaxed region ``R^E_{i1}``
(equations (4)-(5), Theorem 5).  The methods of
:class:`~dueling_gym.problems.lower_bounds.CopelandLowerBoundStructure` call them on a true
matrix; the agents (``agents/rmed/_copeland_step5.py``) call them on their empirical matrix inside the
compiled simulator.
"""

from __future__ import annotations

import numba
import numpy as np
from numpy.typing import NDArray

__all__ = ["kernel_workspace", "separation_table_kernel", "relaxed_region_kernel"]


# Argument conventions: ``pair_index`` (K×K, int64, -1 on the diagonal) maps arms to the
# lexicographic pair order; ``superior_mask[i, j]`` iff ``nu[i, j] < 1/2`` and
# ``inferior_mask[i, j]`` iff ``nu[i, j] > 1/2`` (False on the diagonal and for tied pairs);
# per-pair vectors are indexed by pair.  Sorting is stable (equal values keep index order), so
# every tie is broken towards the lowest arm.

def kernel_workspace(n_arms: int) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Scratch arrays for :func:`separation_table_kernel` and :func:`~dueling_gym.problems.lower_bounds.kernels.relaxed_region_kernel`."""
    return np.zeros((5, n_arms + 1)), np.zeros((3, n_arms + 1), dtype=np.int64)


@numba.njit(cache=True, nogil=True)
def _stable_argsort(values: NDArray[np.float64], count: int, order: NDArray[np.int64]) -> None:
    """``order[:count]`` = the indices ``0..count-1`` sorted by ``values`` (stable insertion sort).

    The lists sorted here have at most K entries; insertion sort is fast for them and keeps
    compilation light (NumPy's sorts compile slowly in Numba).
    """
    for k in range(count):
        value = values[k]
        position = k - 1
        while position >= 0 and values[order[position]] > value:
            order[position + 1] = order[position]
            position -= 1
        order[position + 1] = k


@numba.njit(cache=True, nogil=True)
def _h_part(
    size: int, n_inferiors: int, i2_rank: int, h_prefix: NDArray[np.float64], h_sorted: NDArray[np.float64]
) -> float:
    """Sum of the ``size`` smallest ``y`` over ``H_{i1} \\ {i2}`` (``i2_rank`` = rank of ``i2`` in
    ``H_{i1}`` by value, ``-1`` if ``i2`` is not an inferior of ``i1``)."""
    size = min(max(size, 0), n_inferiors)
    skips = i2_rank >= 0 and size > i2_rank
    end = min(size + 1, n_inferiors) if skips else size
    return h_prefix[end] - (h_sorted[i2_rank] if skips else 0.0)


# The three steps of the separation oracle share the scratch rows of :func:`kernel_workspace`:
# ``real_work`` = (H values, H sorted, H prefix sums, O values, O prefix sums) and
# ``integer_work`` = (sort order, rank in H, arm list).  The arm list serves the H-part first and
# is then reused for the O-part.  They are inlined so that no array is reference-counted per call.

@numba.njit(cache=True, nogil=True, inline="always")
def _sort_inferiors(i1, scaled, pair_index, inferior_mask, inferiors_by_value_out, real_work, integer_work):
    """Sort ``H_{i1}`` by ``y`` and take the prefix sums of the sorted values (the H-part).

    Fills ``inferiors_by_value_out``, the sorted values ``real_work[1]`` (with a 0 sentinel
    after them), their prefix sums ``real_work[2]`` and each arm's rank ``integer_work[1]``
    (``-1`` outside ``H_{i1}``).

    Returns
    -------
    int
        ``n_inferiors = |H_{i1}|``.
    """
    n_arms = pair_index.shape[0]
    h_values = real_work[0]
    h_sorted = real_work[1]
    h_prefix = real_work[2]
    order = integer_work[0]
    rank = integer_work[1]
    h_arms = integer_work[2]
    n_inferiors = 0
    for j in range(n_arms):
        rank[j] = -1
        if inferior_mask[i1, j]:
            h_arms[n_inferiors] = j
            h_values[n_inferiors] = scaled[pair_index[i1, j]]
            n_inferiors += 1
    _stable_argsort(h_values, n_inferiors, order)
    h_prefix[0] = 0.0
    for k in range(n_inferiors):
        arm = h_arms[order[k]]
        inferiors_by_value_out[k] = arm
        rank[arm] = k
        h_sorted[k] = h_values[order[k]]
        h_prefix[k + 1] = h_prefix[k] + h_sorted[k]
    h_sorted[n_inferiors] = 0.0
    return n_inferiors


@numba.njit(cache=True, nogil=True, inline="always")
def _sort_challenger_superiors(
    i1, i2, row, scaled, pair_index, superior_mask, superiors_by_value_out, real_work, integer_work
):
    """Sort ``O_{i2} \\ {i1}`` by ``y`` and take the prefix sums of the sorted values (the O-part).

    Row ``row`` of ``superiors_by_value_out`` lists those superiors by increasing ``y``, then the
    other arms in index order (what a stable sort with ``+inf`` for non-members gives).  The
    prefix sums ``real_work[4]`` stay flat past the last member, up to index ``K``.

    Returns
    -------
    int
        ``|O_{i2} \\ {i1}|``.
    """
    n_arms = pair_index.shape[0]
    o_values = real_work[3]
    o_prefix = real_work[4]
    order = integer_work[0]
    o_arms = integer_work[2]  # the H-part no longer needs its arm list
    o_available = 0
    for j in range(n_arms):
        if superior_mask[i2, j] and j != i1:
            o_arms[o_available] = j
            o_values[o_available] = scaled[pair_index[i2, j]]
            o_available += 1
    _stable_argsort(o_values, o_available, order)
    o_prefix[0] = 0.0
    for k in range(o_available):
        superiors_by_value_out[row, k] = o_arms[order[k]]
        o_prefix[k + 1] = o_prefix[k] + o_values[order[k]]
    position = o_available
    for j in range(n_arms):
        if not (superior_mask[i2, j] and j != i1):
            superiors_by_value_out[row, position] = j
            position += 1
    for k in range(o_available, n_arms):
        o_prefix[k + 1] = o_prefix[k]
    return o_available


@numba.njit(cache=True, nogil=True, inline="always")
def _fill_challenger_levels(
    i1, i2, row, n_inferiors, o_available, scaled, pair_index, losses, min_losses, level_low, n_levels,
    values_out, uses_i2_in_h_out, real_work, integer_work,
):
    """Row ``row`` of the separation table: the smaller of cases A and B at every loss level.

    Needs the H-part of :func:`_sort_inferiors` and the O-part of
    :func:`_sort_challenger_superiors` for ``i2`` in the scratch arrays.
    """
    n_arms = pair_index.shape[0]
    h_sorted = real_work[1]
    h_prefix = real_work[2]
    o_prefix = real_work[4]
    i2_rank = integer_work[1][i2]
    h_available = n_inferiors - 1 if i2_rank >= 0 else n_inferiors  # |H_{i1} \\ {i2}|
    opponent_losses = losses[i2]
    own_pair = scaled[pair_index[i1, i2]]
    for column in range(n_levels):
        level = level_low + column
        h_size = level + 1 - min_losses  # |H| that lifts i1 to l + 1 losses
        # Case A: i2 not in H; i1 stays a superior of i2, so i2 must lose L_{i2} - l others.
        o_size = max(0, opponent_losses - level)
        if h_size <= h_available and o_size <= o_available:
            value_a = _h_part(h_size, n_inferiors, i2_rank, h_prefix, h_sorted) + o_prefix[min(o_size, n_arms)]
        else:
            value_a = np.inf
        # Case B: i2 in H; reversing {i1, i2} already removes one superior of i2.
        o_size = max(0, opponent_losses - level - 1)
        if i2_rank >= 0 and h_size >= 1 and h_size - 1 <= h_available and o_size <= o_available:
            value_b = (own_pair + _h_part(h_size - 1, n_inferiors, i2_rank, h_prefix, h_sorted)) + o_prefix[
                min(o_size, n_arms)
            ]
        else:
            value_b = np.inf
        uses_i2_in_h_out[row, column] = value_b < value_a
        values_out[row, column] = min(value_a, value_b)


@numba.njit(cache=True, nogil=True)
def separation_table_kernel(
    i1, scaled, pair_index, superior_mask, inferior_mask, losses, min_losses, level_low, n_levels,
    values_out, uses_i2_in_h_out, inferiors_by_value_out, superiors_by_value_out, real_work, integer_work,
):
    """Sort-based separation oracle of the full region ``R_{i1}``, all ``(i2, l)`` at once.

    Equation (2) of Komiyama et al. asks, for every challenger ``i2``, loss level ``l`` and
    admissible ``(H, O)``, that ``sum_{p in S_HO} y_p >= 1``.  For fixed ``(i2, l)`` the smallest
    left-hand side takes the ``|H|`` smallest ``y`` among the pairs ``{i1, j}``,
    ``j in H_{i1}``, and the ``|O|`` smallest among ``{i2, j}``, ``j in O_{i2} \\ {i1}`` (the two
    parts share no pair), either without ``i2`` in ``H`` (case A) or with it (case B, where
    reversing ``{i1, i2}`` already removes one superior of ``i2``).

    Parameters
    ----------
    i1 : int
        A winner (``losses[i1] == min_losses``).
    scaled : ndarray, shape (K(K-1)/2,)
        The point ``y_p = q_p d_p`` (any positive multiple works: the minima scale with it).
    pair_index, superior_mask, inferior_mask, losses : ndarray
        The sign structure (see the comment at the top of this module).
    min_losses, level_low, n_levels : int
        ``L^(1)`` and the loss levels ``l = level_low .. level_low + n_levels - 1``
        (``max(0, L^(1) - 1) .. L^(2)``).
    values_out : ndarray, shape (>= K-1, >= n_levels)
        Row ``r`` = challenger ``i2 = r + (r >= i1)``, column ``c`` = level ``level_low + c``:
        the smallest left-hand side ``sum_{p in S_HO} y_p`` of that family, ``+inf`` when no
        admissible ``(H, O)`` exists.
    uses_i2_in_h_out : ndarray of bool, same shape
        Whether that minimum puts ``i2`` into ``H`` (case B).
    inferiors_by_value_out : ndarray of int64, shape (>= K,)
        ``H_{i1}`` sorted by ``y`` (its first ``n_inferiors`` entries).
    superiors_by_value_out : ndarray of int64, shape (>= K-1, K)
        Row ``r``: all arms sorted by ``y_{i2 j}``, the members of ``O_{i2} \\ {i1}`` first.
    real_work, integer_work : ndarray
        Scratch from :func:`kernel_workspace`.

    Returns
    -------
    int
        ``n_inferiors = |H_{i1}|``.
    """
    n_inferiors = _sort_inferiors(
        i1, scaled, pair_index, inferior_mask, inferiors_by_value_out, real_work, integer_work
    )
    for row in range(pair_index.shape[0] - 1):
        i2 = row + 1 if row >= i1 else row
        o_available = _sort_challenger_superiors(
            i1, i2, row, scaled, pair_index, superior_mask, superiors_by_value_out, real_work, integer_work
        )
        _fill_challenger_levels(
            i1, i2, row, n_inferiors, o_available, scaled, pair_index, losses, min_losses, level_low, n_levels,
            values_out, uses_i2_in_h_out, real_work, integer_work,
        )
    return n_inferiors


@numba.njit(cache=True, nogil=True)
def relaxed_region_kernel(
    i1, pair_index, superior_mask, inferior_mask, losses, scaled_costs, inverse_divergences, regrets,
    allocation_out, real_work, integer_work,
):
    """``C^{E*}_{i1}`` and its allocation by Theorem 5 of Komiyama et al. (sort and scan).

    ``allocation_out`` (per pair) receives ``q``: ``1/d`` on the pairs ``{i1, j}``, ``j in H_{i1}``
    (equation (4)); for each challenger ``i2``, the covering problem of equation (5) over
    ``Omega = O_{i2} \\ {i1}`` with costs ``c_j = r_{j i2} / d_{j i2}`` (``scaled_costs``) and
    ``k = |Omega| - (L_{i2} - L_{i1} + 1)``: no constraint when ``k < 0``, otherwise weight
    ``1/((h-k) d)`` on the ``h`` cheapest pairs, ``h`` minimising the mean cost
    ``(c_(1) + ... + c_(h)) / (h - k)`` over ``h = k+1 .. |Omega|`` (smallest ``h`` on ties,
    stable sort by cost).  ``inverse_divergences`` is ``1/d`` (0 on tied pairs).

    Returns
    -------
    float
        ``sum_p regrets[p] * q_p`` (summed in pair order).
    """
    n_arms = pair_index.shape[0]
    costs = real_work[0]
    order = integer_work[0]
    allocation_out[:] = 0.0
    for j in range(n_arms):
        if inferior_mask[i1, j]:
            pair = pair_index[i1, j]
            allocation_out[pair] = inverse_divergences[pair]
    for i2 in range(n_arms):
        if i2 == i1:
            continue
        omega_size = 0
        for j in range(n_arms):
            if superior_mask[i2, j] and j != i1:
                costs[j] = scaled_costs[pair_index[i2, j]]
                omega_size += 1
            else:
                costs[j] = np.inf
        slack = omega_size - (losses[i2] - losses[i1] + 1)  # Theorem 5's k
        if slack < 0:
            continue  # no subset of the required size: no constraint
        _stable_argsort(costs, n_arms, order)
        running = 0.0
        best_support = 0
        best_ratio = np.inf
        for support in range(1, omega_size + 1):
            running += costs[order[support - 1]]
            if support > slack:
                ratio = running / (support - slack)
                if ratio < best_ratio:  # first minimum = smallest h on ties
                    best_ratio = ratio
                    best_support = support
        weight = 1.0 / (best_support - slack)
        for k in range(best_support):
            pair = pair_index[i2, order[k]]
            allocation_out[pair] = weight * inverse_divergences[pair]
    value = 0.0
    for pair in range(allocation_out.shape[0]):
        value += regrets[pair] * allocation_out[pair]
    return value
