"""The constants LB (Theorem 2) and ECWB (Theorem 4) of Komiyama et al. (ICML 2016)."""

from __future__ import annotations

from numpy.typing import ArrayLike

from dueling_gym.problems.lower_bounds.structure import CopelandLowerBoundStructure
from dueling_gym.problems.preference import PreferenceMatrix

__all__ = ["lower_bound_constant", "ecw_lower_bound_constant"]


def _as_structure(
    preferences: CopelandLowerBoundStructure | PreferenceMatrix | ArrayLike, regret: ArrayLike | str | None
) -> CopelandLowerBoundStructure:
    if isinstance(preferences, CopelandLowerBoundStructure):
        if regret is not None:
            raise ValueError("pass the regret when building the CopelandLowerBoundStructure, not here")
        return preferences
    return CopelandLowerBoundStructure(preferences, regret)


def lower_bound_constant(
    preferences: PreferenceMatrix | ArrayLike | CopelandLowerBoundStructure, regret: ArrayLike | str | None = None
) -> float:
    """The "LB" constant ``min_{i1 in winners} C*_{i1}`` of Komiyama et al. (2016), Theorem 2.

    Every strongly consistent algorithm has ``E[R(T)] >= LB * ln T - o(ln T)``; the value is
    in units of the chosen regret (Komiyama's Copeland regret by default; double it for
    Zoghi's scale).  Computed exactly, per winner, by one compact linear programme
    (:meth:`CopelandLowerBoundStructure.full_region_constant <dueling_gym.problems.lower_bounds.CopelandLowerBoundStructure.full_region_constant>`), in a few seconds at K = 500.

    Parameters
    ----------
    preferences : PreferenceMatrix, array_like of shape (K, K) or CopelandLowerBoundStructure
        The preference matrix (``P + P.T == 1``, diagonal ``1/2``; ties allowed).
    regret : array_like or str, optional
        Per-pair regrets, see :class:`~dueling_gym.problems.lower_bounds.CopelandLowerBoundStructure`.

    Returns
    -------
    float
        LB, in the units of the chosen regret.

    Raises
    ------
    ValueError
        If the matrix or the regret is invalid.

    Examples
    --------
    >>> from dueling_gym.problems import load_problem
    >>> round(lower_bound_constant(load_problem("gap")), 4)
    11.0249
    """
    structure = _as_structure(preferences, regret)
    return min(structure.full_region_constant(int(i1)).value for i1 in structure.winners)


def ecw_lower_bound_constant(
    preferences: PreferenceMatrix | ArrayLike | CopelandLowerBoundStructure, regret: ArrayLike | str | None = None
) -> float:
    """The "ECWB" constant ``min_{i1 in winners} C^{E*}_{i1}`` of Komiyama et al. (2016), Theorem 4.

    ECW-RMED's regret is ``ECWB * ln T + o(ln T)``.  ``ECWB >= LB``, with equality when there
    are at least two Copeland winners (Theorem 6).  Computed exactly by sorting (Theorem 5).

    Parameters
    ----------
    preferences, regret
        As for :func:`~dueling_gym.problems.lower_bound_constant`.

    Returns
    -------
    float
        ECWB, in the units of the chosen regret.

    Raises
    ------
    ValueError
        If the matrix or the regret is invalid (see :func:`~dueling_gym.problems.lower_bound_constant`).

    Examples
    --------
    >>> from dueling_gym.problems import load_problem
    >>> round(ecw_lower_bound_constant(load_problem("gap")), 2)
    1252.51
    """
    structure = _as_structure(preferences, regret)
    return min(structure.relaxed_region_constant(int(i1)).value for i1 in structure.winners)
