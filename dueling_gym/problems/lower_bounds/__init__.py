"""Regret lower-bound constants of Copeland dueling bandits (Komiyama et al., ICML 2016).

Komiyama, Honda and Nakagawa, *Copeland Dueling Bandit Problem: Regret Lower Bound, Optimal
Algorithm, and Computationally Efficient Algorithm*, ICML 2016, show that every strongly
consistent algorithm suffers ``E[R(T)] >= LB * ln T - o(ln T)`` (Theorem 2) with

* ``LB = min_{i1 in winners} C*_{i1}``: ``C*_{i1}`` is the cheapest allocation of duels
  ``q`` ("draws per ln T") in the *full region* ``R_{i1}`` of Lemma 1 / equation (2) -- a linear
  programme with exponentially many constraints, solved here exactly, either as one compact
  LP of polynomial size (:mod:`.lp`) or by constraint generation around the sort-based
  separation oracle of Section 4.1.1 (:mod:`.kernels`);

and that ECW-RMED attains ``ECWB = min_{i1} C^{E*}_{i1}`` (Theorem 4), the optimum over the
smaller *relaxed region* ``R^E_{i1}`` of equations (4)-(5), computed by sorting (Theorem 5).
``C^{E*}_{i1} >= C*_{i1}`` always, with equality when there are at least two Copeland winners
(Theorem 6).

Everything is computed from a matrix ``nu`` that may be the true preference matrix (for the
``LB``/``ECWB`` curves of the paper's plots) or an *empirical* matrix ``mu_hat(t)`` (inside
CW-RMED / ECW-RMED, Algorithm 1).  Conventions:

* arms are ``0..K-1``; pairs ``p = {i, j}`` are indexed ``0..K(K-1)/2 - 1`` in the lexicographic
  order of ``(i, j)``, ``i < j`` (``structure.pairs``);
* superiors ``O_i = {j : nu[i, j] < 1/2}``, inferiors ``H_i = {j : nu[i, j] > 1/2}``,
  losses ``L_i = |O_i|``, ``L^(1) <= L^(2)`` the two smallest losses, and the winners are the
  arms with ``L_i = L^(1)`` (the paper's ``C_cop``; with ties this may differ from argmax of
  strict wins, and the region formulas need ``L_{i1} = L^(1)``);
* ``d_p = d(nu_ij, 1/2)`` (:func:`dueling_gym.stats.kl_bernoulli`); a tied pair
  (``nu_ij = 1/2``) is neither superior nor inferior, has ``d_p = 0`` and never enters a
  constraint (it carries no information, so no number of draws can help);
* ``r_p = (L_i + L_j - 2 L^(1)) / (2(K-1))`` (Komiyama's Copeland regret) unless another
  per-pair regret is supplied.

Optimisation is carried out on the scaled variables ``y_p = q_p d_p``, in which the box is
``0 <= y_p <= 1`` and every constraint is "a sum of some ``y_p`` is at least 1", so each LP row
is a 0/1 vector and the problem is well scaled.

Modules: :mod:`.structure` (the derived quantities and the per-winner optima), :mod:`.lp`
(the linear programmes), :mod:`.kernels` (compiled cores shared with the agents),
:mod:`.certificate` (optimality certificates for CW-RMED), :mod:`.constants` (LB and ECWB).
"""

from dueling_gym.problems.lower_bounds.certificate import CoveringOptimumCertificate, covering_lp_is_optimal
from dueling_gym.problems.lower_bounds.constants import ecw_lower_bound_constant, lower_bound_constant
from dueling_gym.problems.lower_bounds.kernels import kernel_workspace, relaxed_region_kernel, separation_table_kernel
from dueling_gym.problems.lower_bounds.solutions import (
    ConstraintPool,
    FullRegionSolution,
    RelaxedRegionSolution,
    SeparationResult,
)
from dueling_gym.problems.lower_bounds.structure import CopelandLowerBoundStructure

__all__ = [
    "CopelandLowerBoundStructure",
    "ConstraintPool",
    "FullRegionSolution",
    "RelaxedRegionSolution",
    "SeparationResult",
    "lower_bound_constant",
    "ecw_lower_bound_constant",
    "separation_table_kernel",
    "relaxed_region_kernel",
    "kernel_workspace",
    "covering_lp_is_optimal",
    "CoveringOptimumCertificate",
]
