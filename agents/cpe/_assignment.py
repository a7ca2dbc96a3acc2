"""Max-weight covering matchings and NumPy-exact sums in compiled code (the agents' MWMC oracle).

The CPE-DB agents call the MWMC oracle (a max-weight matching covering every position, some
edges forbidden) once or twice per duel.  :func:`max_weight_covering` solves it inside Numba
kernels with the *same* algorithm, floating-point operations and tie-breaking as the library's
routine :func:`~dueling_gym.problems.bipartite.solve_covering_assignment`, which calls
:func:`scipy.optimize.linear_sum_assignment` on the position × candidate matrix: a line-by-line
port of SciPy's shortest-augmenting-path solver (Crouse 2016, SciPy's ``rectangular_lsap.cpp``:
the same negation for maximisation, the same reverse scan order of the columns, the same
preference for an unassigned column among equal reduced costs).  Equal-weight optima thus get
SciPy's deterministic choice, so agents using it make exactly the decisions they made with SciPy.
(SciPy is distributed under the BSD 3-Clause licence; this port follows its algorithm and
order of operations.)

:func:`numpy_sum` adds like ``ndarray.sum`` does for float64 (NumPy's pairwise summation), so
sums of matching weights compare bit for bit with the Python code's.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["new_assignment_workspace", "linear_sum_assignment_min", "max_weight_covering", "numpy_sum", "take_sum"]


def new_assignment_workspace(n_rows: int, n_columns: int) -> tuple:
    """Buffers of :func:`linear_sum_assignment_min` / :func:`max_weight_covering` (reused across calls).

    ``(cost, col4row, u, v, shortest, path, row4col, row_seen, column_seen, remaining)``.
    """
    return (np.zeros((n_rows, n_columns)), np.zeros(n_rows, dtype=np.int64), np.zeros(n_rows), np.zeros(n_columns),
            np.zeros(n_columns), np.zeros(n_columns, dtype=np.int64), np.zeros(n_columns, dtype=np.int64),
            np.zeros(n_rows, dtype=np.bool_), np.zeros(n_columns, dtype=np.bool_),
            np.zeros(n_columns, dtype=np.int64))


@numba.njit(cache=True, nogil=True)
def _augmenting_path(nc, cost, u, v, path, row4col, shortest, i, row_seen, column_seen, remaining):
    """SciPy's ``augmenting_path``: the sink column of the shortest augmenting path from row ``i``
    (``-1`` when none is finite) and the path's length."""
    min_value = 0.0
    n_remaining = nc
    for it in range(nc):
        # Reverse order, as SciPy (a constant matrix then gives the identity assignment).
        remaining[it] = nc - it - 1
    row_seen[:] = False
    column_seen[:] = False
    shortest[:] = np.inf
    sink = -1
    while sink == -1:
        index = -1
        lowest = np.inf
        row_seen[i] = True
        for it in range(n_remaining):
            j = remaining[it]
            reduced = min_value + cost[i, j] - u[i] - v[j]
            if reduced < shortest[j]:
                path[j] = i
                shortest[j] = reduced
            # Among equal costs prefer a column that is still free (a new sink), as SciPy does.
            if shortest[j] < lowest or (shortest[j] == lowest and row4col[j] == -1):
                lowest = shortest[j]
                index = it
        min_value = lowest
        if min_value == np.inf:
            return -1, min_value
        j = remaining[index]
        if row4col[j] == -1:
            sink = j
        else:
            i = row4col[j]
        column_seen[j] = True
        n_remaining -= 1
        remaining[index] = remaining[n_remaining]
    return sink, min_value


@numba.njit(cache=True, nogil=True)
def linear_sum_assignment_min(workspace):
    """Minimum-cost assignment of every row of ``workspace[0]`` (``nr <= nc``, entries finite or ``+inf``).

    SciPy's ``solve`` without the transposition (never needed here: rows are positions and a
    graph with more positions than candidates has no covering matching).  Writes the column of
    each row into ``workspace[1]`` and returns False when no finite assignment exists (SciPy's
    "cost matrix is infeasible").
    """
    cost, col4row, u, v, shortest, path, row4col, row_seen, column_seen, remaining = workspace
    nr, nc = cost.shape
    u[:] = 0.0
    v[:] = 0.0
    path[:] = -1
    row4col[:] = -1
    col4row[:] = -1
    for current in range(nr):
        sink, min_value = _augmenting_path(nc, cost, u, v, path, row4col, shortest, current, row_seen,
                                           column_seen, remaining)
        if sink < 0:
            return False
        # Dual update, then augmentation along the path (SciPy's order of operations).
        u[current] += min_value
        for i in range(nr):
            if row_seen[i] and i != current:
                u[i] += min_value - shortest[col4row[i]]
        for j in range(nc):
            if column_seen[j]:
                v[j] -= min_value - shortest[j]
        j = sink
        while True:
            i = path[j]
            row4col[j] = i
            previous = col4row[i]
            col4row[i] = j
            j = previous
            if i == current:
                break
    return True


@numba.njit(cache=True, nogil=True)
def max_weight_covering(weights, positions, candidates, edge_at, allowed, workspace, matching):
    """Max-weight matching covering every position among the ``allowed`` edges.

    The compiled twin of ``solve_covering_assignment(weights, ..., required=[], forbidden=F,
    maximize=True)`` with ``allowed = ~F``: the ``l × n`` cost matrix of ``workspace``
    (:func:`new_assignment_workspace`) receives the negated weights and ``+inf`` off the allowed
    edges, exactly SciPy's matrix for ``maximize=True``.  Writes the edges in position order
    into ``matching`` and returns False when no allowed matching covers every position.
    """
    cost, col4row = workspace[0], workspace[1]
    cost[:, :] = np.inf
    for e in range(weights.shape[0]):
        if allowed[e]:
            cost[positions[e], candidates[e]] = -weights[e]
    if cost.shape[0] > cost.shape[1] or not linear_sum_assignment_min(workspace):
        return False
    for row in range(cost.shape[0]):
        matching[row] = edge_at[row, col4row[row]]
    return True


@numba.njit(cache=True, nogil=True)
def _block_sum(values, start, n):
    # NumPy's pairwise_sum below its recursion threshold: a plain loop under 8 terms, 8
    # accumulators up to 128 terms.
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += values[i]
        return total
    r0, r1, r2, r3 = values[start], values[start + 1], values[start + 2], values[start + 3]
    r4, r5, r6, r7 = values[start + 4], values[start + 5], values[start + 6], values[start + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += values[start + i]
        r1 += values[start + i + 1]
        r2 += values[start + i + 2]
        r3 += values[start + i + 3]
        r4 += values[start + i + 4]
        r5 += values[start + i + 5]
        r6 += values[start + i + 6]
        r7 += values[start + i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += values[start + i]
        i += 1
    return total


@numba.njit(cache=True, nogil=True)
def _pairwise_sum(values, start, n):
    # NumPy's pairwise_sum: above 128 terms, the sum of the two halves (the first rounded down to
    # a multiple of 8).  The recursion runs on an explicit stack (Numba cannot cache recursive
    # functions); frames are (start, length, stage, left half's sum).
    if n <= 128:
        return _block_sum(values, start, n)
    starts = np.empty(64, dtype=np.int64)
    lengths = np.empty(64, dtype=np.int64)
    stages = np.zeros(64, dtype=np.int64)
    left_sums = np.empty(64)
    top = 0
    starts[0], lengths[0], stages[0] = start, n, 0
    value, have_value = 0.0, False
    while True:
        if have_value:
            if top < 0:
                return value
            if stages[top] == 1:   # the left half is summed: keep it, sum the right half
                left_sums[top] = value
                stages[top] = 2
                half = lengths[top] // 2
                half -= half % 8
                top += 1
                starts[top], lengths[top], stages[top] = starts[top - 1] + half, lengths[top - 1] - half, 0
                have_value = False
            else:                  # both halves summed
                value = left_sums[top] + value
                top -= 1
            continue
        length = lengths[top]
        if length <= 128:
            value, have_value = _block_sum(values, starts[top], length), True
            top -= 1
            continue
        half = length // 2
        half -= half % 8
        stages[top] = 1
        top += 1
        starts[top], lengths[top], stages[top] = starts[top - 1], half, 0


@numba.njit(cache=True, nogil=True)
def numpy_sum(values):
    """``float(values.sum())`` for a contiguous float64 vector, bit for bit."""
    return _pairwise_sum(values, 0, values.shape[0])


@numba.njit(cache=True, nogil=True)
def take_sum(values, indices, buffer):
    """``float(values[indices].sum())`` bit for bit (``buffer`` holds the gathered values)."""
    for i in range(indices.shape[0]):
        buffer[i] = values[indices[i]]
    return _pairwise_sum(buffer, 0, indices.shape[0])
