"""Brute-force oracles of the Copeland lower bounds (Komiyama et al., ICML 2016), for tests.

They enumerate every constraint row of the full region (equation (2)) or of the relaxed region
(equations (4)-(5)) and solve one explicit LP with HiGHS: exponential in K, so only for small
matrices, and independent of the separation oracle, the compact LP and the sort-and-scan that
the package uses.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linprog

from dueling_gym.problems.lower_bounds import CopelandLowerBoundStructure

#: Default cap on the rows the brute-force cross-checks may enumerate.
_BRUTE_FORCE_MAX_ROWS = 500_000


def _structure(preferences) -> CopelandLowerBoundStructure:
    if isinstance(preferences, CopelandLowerBoundStructure):
        return preferences
    return CopelandLowerBoundStructure(preferences)


def _check_winner(structure: CopelandLowerBoundStructure, i1: int) -> int:
    if int(i1) not in structure.winners.tolist():
        raise ValueError(f"arm {i1} is not a Copeland winner")
    return int(i1)


def _solve_covering_lp(costs, rows, lower, upper) -> NDArray[np.float64]:
    """``argmin costs @ y`` s.t. ``sum_{p in row} y_p >= 1`` per row, ``lower <= y <= upper`` (dense)."""
    bounds = np.stack([lower, upper], axis=1)
    if rows:
        matrix = np.zeros((len(rows), costs.size))
        for number, row in enumerate(rows):
            matrix[number, list(row)] = -1.0
        result = linprog(costs, A_ub=matrix, b_ub=-np.ones(len(rows)), bounds=bounds, method="highs")
    else:
        result = linprog(costs, bounds=bounds, method="highs")
    assert result.status == 0, result.message
    return np.clip(result.x, lower, upper)


def _count_full_region_rows(structure: CopelandLowerBoundStructure, i1: int) -> int:
    n_inferiors = int(structure.inferior_mask[i1].sum())
    total = 0
    for i2 in range(structure.n_arms):
        if i2 == i1:
            continue
        n_superiors = int(structure.superior_mask[i2].sum() - structure.superior_mask[i2, i1])
        for level in structure.levels.tolist():
            h_size = level + 1 - structure.min_losses
            o_size = max(0, int(structure.losses[i2]) - level)
            # an upper bound: with or without i2 in H, |O| is o_size or o_size - 1
            total += math.comb(n_inferiors, h_size) * max(
                math.comb(n_superiors, o_size), math.comb(n_superiors, max(0, o_size - 1))
            )
    return total


def full_region_rows(
    preferences: CopelandLowerBoundStructure | PreferenceMatrix | ArrayLike,
    i1: int,
    max_rows: int = _BRUTE_FORCE_MAX_ROWS,
) -> list[tuple[int, ...]]:
    """Every constraint row of ``R_{i1}`` (equation (2) of Komiyama et al.), enumerated explicitly.

    A row is the sorted tuple of pair indices of one ``S_HO(i1, i2, l, H, O)``; duplicates are
    merged.  Exponential in ``K``: meant for cross-checks on small matrices.

    Raises
    ------
    ValueError
        If ``i1`` is not a winner or the enumeration would exceed ``max_rows`` candidates.
    """
    structure = _structure(preferences)
    i1 = _check_winner(structure, i1)
    if _count_full_region_rows(structure, i1) > max_rows:
        raise ValueError(f"more than {max_rows} candidate rows: brute force is for small K only")
    inferiors = np.flatnonzero(structure.inferior_mask[i1]).tolist()
    rows: set[tuple[int, ...]] = set()
    for i2 in range(structure.n_arms):
        if i2 == i1:
            continue
        superiors = [j for j in np.flatnonzero(structure.superior_mask[i2]).tolist() if j != i1]
        for level in structure.levels.tolist():
            for h_set in itertools.combinations(inferiors, level + 1 - structure.min_losses):
                o_size = max(0, int(structure.losses[i2]) - level - (i2 in h_set))
                for o_set in itertools.combinations(superiors, o_size):
                    pairs = [structure.pair_index[i1, j] for j in h_set] + [structure.pair_index[i2, j] for j in o_set]
                    rows.add(tuple(sorted(int(p) for p in pairs)))
    return sorted(rows)


def full_region_constant_bruteforce(
    preferences: CopelandLowerBoundStructure | PreferenceMatrix | ArrayLike,
    i1: int,
    max_rows: int = _BRUTE_FORCE_MAX_ROWS,
) -> float:
    """``C*_{i1}`` from one LP holding every row of :func:`full_region_rows` (small ``K`` only).

    Cross-check of :meth:`CopelandLowerBoundStructure.full_region_constant`.
    """
    structure = _structure(preferences)
    rows = full_region_rows(structure, i1, max_rows)
    scaled = _solve_covering_lp(structure.scaled_costs, rows, np.zeros(structure.n_pairs), structure.box_upper)
    return float(structure.scaled_costs @ scaled)


def relaxed_region_constant_bruteforce(
    preferences: CopelandLowerBoundStructure | PreferenceMatrix | ArrayLike,
    i1: int,
    max_rows: int = _BRUTE_FORCE_MAX_ROWS,
) -> float:
    """``C^{E*}_{i1}`` as one explicit LP over equations (4)-(5) of Komiyama et al. (small ``K`` only).

    Cross-check of the sort-and-scan :meth:`CopelandLowerBoundStructure.relaxed_region_constant`.
    """
    structure = _structure(preferences)
    i1 = _check_winner(structure, i1)
    lower = np.zeros(structure.n_pairs)
    verified = structure.pair_index[i1, structure.inferior_mask[i1]]
    lower[verified] = 1.0  # equation (4): y = q d = 1 on i1's pairs with its inferiors
    rows: set[tuple[int, ...]] = set()
    for i2 in range(structure.n_arms):
        if i2 == i1:
            continue
        superiors = [j for j in np.flatnonzero(structure.superior_mask[i2]).tolist() if j != i1]
        subset_size = int(structure.losses[i2] - structure.losses[i1] + 1)
        if math.comb(len(superiors), subset_size) + len(rows) > max_rows:
            raise ValueError(f"more than {max_rows} candidate rows: brute force is for small K only")
        for o_set in itertools.combinations(superiors, subset_size):
            rows.add(tuple(sorted(int(structure.pair_index[i2, j]) for j in o_set)))
    scaled = _solve_covering_lp(structure.scaled_costs, sorted(rows), lower, structure.box_upper)
    return float(structure.scaled_costs @ scaled)
