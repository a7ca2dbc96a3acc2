"""Result types of the Copeland lower bounds and the row pool CW-RMED keeps between steps."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from dueling_gym.problems.lower_bounds.structure import CopelandLowerBoundStructure

__all__ = ["SeparationResult", "FullRegionSolution", "RelaxedRegionSolution", "ConstraintPool"]


class SeparationResult(NamedTuple):
    """The smallest left-hand side of a family of constraints and the pairs that attain it.

    Attributes
    ----------
    value : float
        ``min sum_{p in S} q_p d_p`` over the admissible pair sets ``S``; ``+inf`` when the
        family is empty (no admissible ``(H, O)``, hence no constraint).
    pair_indices : ndarray of int64
        The minimising set ``S`` as sorted pair indices (``structure.pairs[pair_indices]``
        gives the arms); empty when ``value`` is ``+inf``.
    """

    value: float
    pair_indices: NDArray[np.int64]


class FullRegionSolution(NamedTuple):
    """Result of :meth:`CopelandLowerBoundStructure.full_region_constant <dueling_gym.problems.lower_bounds.CopelandLowerBoundStructure.full_region_constant>`.

    Attributes
    ----------
    value : float
        ``C*_{i1} = sum_p r_p q_p`` at the optimum (exact: both methods solve the linear
        programme of Theorem 2 to optimality).
    allocation : ndarray, shape (K, K)
        An optimal ``q`` as a symmetric matrix with zero diagonal (``q[i, j]`` draws of the
        pair ``{i, j}`` per ``ln T``).
    n_rows : int
        Number of constraint rows in the final LP: rows of equation (2) generated in this
        call plus those reused from the pool (``"rows"``), or all rows of the compact
        formulation (``"compact"``).
    method : str
        ``"compact"`` (one polynomial-size LP, the default) or ``"rows"`` (constraint
        generation over the rows of equation (2), used with a :class:`ConstraintPool`).
    """

    value: float
    allocation: NDArray[np.float64]
    n_rows: int
    method: str = "rows"


class RelaxedRegionSolution(NamedTuple):
    """Result of :meth:`CopelandLowerBoundStructure.relaxed_region_constant <dueling_gym.problems.lower_bounds.CopelandLowerBoundStructure.relaxed_region_constant>`.

    Attributes
    ----------
    value : float
        ``C^{E*}_{i1} = sum_p r_p q_p`` at the optimum.
    allocation : ndarray, shape (K, K)
        The optimal ``q`` of Theorem 5 as a symmetric matrix with zero diagonal.
    """

    value: float
    allocation: NDArray[np.float64]


class ConstraintPool:
    """Constraint rows of the full-region LPs, kept between calls (for CW-RMED).

    A row is an index set of pairs and depends only on the *sign structure* of the matrix
    (which pairs are superiors, inferiors or tied) and on the winner ``i1``.  While that
    structure stays the same, rows generated for one empirical matrix remain valid
    constraints for the next one and warm-start the constraint generation.  The pool clears
    itself when it is used with a structure whose signs differ.
    """

    def __init__(self) -> None:
        self._signature: bytes | None = None
        self._rows: dict[int, list[tuple[int, ...]]] = {}
        self._keys: dict[int, set[tuple[int, ...]]] = {}

    def __len__(self) -> int:
        return sum(len(rows) for rows in self._rows.values())

    def __repr__(self) -> str:
        counts = {winner: len(rows) for winner, rows in sorted(self._rows.items())}
        return f"ConstraintPool(rows_per_winner={counts})"

    def n_rows(self, i1: int) -> int:
        """Number of rows stored for winner ``i1``."""
        return len(self._rows.get(int(i1), ()))

    def rows(self, i1: int) -> list[tuple[int, ...]]:
        """The rows stored for winner ``i1`` (a copy; each row is a sorted tuple of pair indices)."""
        return list(self._rows.get(int(i1), ()))

    def clear(self) -> None:
        """Forget every row."""
        self._signature = None
        self._rows.clear()
        self._keys.clear()

    def rows_for(
        self, structure: CopelandLowerBoundStructure, i1: int
    ) -> tuple[list[tuple[int, ...]], set[tuple[int, ...]]]:
        """The live row list and key set of ``i1`` for ``structure`` (emptied on a sign change)."""
        if self._signature != structure.sign_signature:
            self.clear()
            self._signature = structure.sign_signature
        return self._rows.setdefault(i1, []), self._keys.setdefault(i1, set())
