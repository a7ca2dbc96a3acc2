"""CW-RMED: Copeland Winner Relative Minimum Empirical Divergence.

Komiyama, Honda, Nakagawa. *Copeland Dueling Bandit Problem: Regret Lower Bound, Optimal
Algorithm, and Computationally Efficient Algorithm.* ICML 2016, Algorithm 1 (CW branch of line
11), Theorem 3.

CW-RMED is ECW-RMED's skeleton (the RMED loop the two share, a private module) with the optimal
exploration target: when the confidence test fails it explores towards the cheapest
allocation in the *full* region ``R_{i1}(mu_hat)``, a linear programme with exponentially many
constraints.  That programme is solved exactly by constraint generation with HiGHS around the
sort-based separation oracle (
:meth:`~dueling_gym.problems.lower_bounds.CopelandLowerBoundStructure.full_region_constant`),
called from the compiled kernel through ``numba.objmode``.  The generated rows are kept in a
:class:`~dueling_gym.problems.lower_bounds.ConstraintPool` between steps (they stay valid while
the empirical sign structure is unchanged; the pool clears itself when a sign flips).  While
the signs stay the same, only the costs of the LP move with ``mu_hat``, so the last optimum is
kept and reused as long as a duality certificate
(:class:`~dueling_gym.problems.lower_bounds.CoveringOptimumCertificate`) proves it optimal for
the new costs; HiGHS runs only when it does not (a few percent of the steps that reach line
11).  CW-RMED is asymptotically optimal: its regret is ``LB * ln T + o(ln T)`` (Theorem 3).
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

import numba

from dueling_gym.agents.rmed import _copeland_loop, _copeland_step5
from dueling_gym.agents.rmed._copeland_loop import CopelandRMEDAgent
from dueling_gym.agents.rmed._copeland_step5 import new_solver_id, release_solver_id
from dueling_gym.agents.registry import register_agent
from dueling_gym.problems.lower_bounds import ConstraintPool
from dueling_gym.validation import check_integer

__all__ = ["CWRMED"]


@numba.njit(cache=True)
def cw_rmed_observe(state, first, second, first_won):
    """The shared skeleton with the LP solver of line 11 (CW)."""
    # The solver is reached through the module (see ecw_rmed_observe).
    _copeland_loop.rmed_observe(state, first, second, first_won, _copeland_step5.full_region_step5)


@register_agent("cw_rmed", target="copeland")
class CWRMED(CopelandRMEDAgent):
    """CW-RMED (Komiyama et al., ICML 2016, Algorithm 1), asymptotically optimal for Copeland regret.

    Same loop as :class:`~dueling_gym.agents.ECWRMED`; when the confidence test fails, the
    exploration target is the optimum of the full lower-bound LP ``R*_{i1}(mu_hat)`` for
    every empirical Copeland winner ``i1`` (``i_hat* = argmin C*_{i1}``, lowest index on ties).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    alpha, beta : float, default 3.0 and 0.01
        Forced exploration (line 4), as for :class:`~dueling_gym.agents.ECWRMED`.
    forced_check : {"every_step", "per_loop"}, default "every_step"
        When line 4 is checked, as for :class:`~dueling_gym.agents.ECWRMED`.
    resolve_every : int, default 1
        Solve the LP again only every ``resolve_every``-th time line 11 is reached with changed
        statistics; in between the last ``q*`` is reused (a sign flip always forces a new
        solve).  ``1`` is the algorithm as printed.
    seed : int, optional
        Seed of the agent's generator (the algorithm is deterministic).

    Notes
    -----
    Line 11 is evaluated only when it is reached and ``mu_hat`` has changed since the last
    evaluation.  The last optimum of each winner is then re-certified (a small least-squares
    fit, tens of microseconds); only when the certificate fails is the LP solved again
    (constraint generation with HiGHS, warm-started from the rows of earlier steps, a few
    milliseconds).  On Sushi (K = 16) a run of 10^5 duels takes a few seconds.  Everything
    else runs in the shared Numba kernels.  :attr:`lp_statistics` counts solves and reuses.

    References
    ----------
    J. Komiyama, J. Honda, H. Nakagawa. Copeland Dueling Bandit Problem: Regret Lower Bound,
    Optimal Algorithm, and Computationally Efficient Algorithm. ICML 2016.
    """

    guarantee = (
        "Asymptotically optimal Copeland regret, ``E[R(T)] <= min_{i1} C*_{i1} ln T + o(ln T)``, the lower "
        "bound of Theorem 2 for strongly consistent algorithms, when the optimisers of that bound are unique; "
        "no Condorcet winner needed (Komiyama, Honda & Nakagawa, ICML 2016, Theorem 3)."
    )

    observe_kernel = cw_rmed_observe
    step5_solver = _copeland_step5.full_region_step5

    def __init__(self, n_arms: int, *, alpha: float = 3.0, beta: float = 0.01, forced_check: str = "every_step",
                 resolve_every: int = 1, seed=None):
        self._set_common(alpha, beta, forced_check)
        self.resolve_every = check_integer("resolve_every", resolve_every, minimum=1)
        self._pool_id = new_solver_id()
        weakref.finalize(self, release_solver_id, self._pool_id)
        super().__init__(n_arms, seed=seed)

    def _solver_id(self) -> int:
        return self._pool_id

    def _resolve_every(self) -> int:
        return self.resolve_every

    def _reset_state(self) -> None:
        _copeland_step5.solver_for(self._pool_id).clear()
        super()._reset_state()

    @property
    def constraint_pool(self) -> ConstraintPool:
        """The LP rows kept between steps (cleared by :meth:`reset` and on every sign flip)."""
        return _copeland_step5.solver_for(self._pool_id).pool

    @property
    def lp_statistics(self) -> dict[str, int]:
        """How often line 11 ran HiGHS (``"solves"``) and how often a certified earlier optimum
        was reused (``"reused"``), per winner, since the last reset."""
        solver = _copeland_step5.solver_for(self._pool_id)
        return {"solves": solver.n_lp_solves, "reused": solver.n_reused}

    def __getstate__(self) -> dict[str, Any]:
        # The row pool lives in a process-wide registry, under an id that means nothing in another
        # process: it travels with the agent and the copy registers it under an id of its own.
        state = super().__getstate__()
        state["_pool_solver"] = _copeland_step5.solver_for(self._pool_id)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        state["_pool_id"] = new_solver_id(state.pop("_pool_solver"))
        state["state"].fields["solver_id"] = state["_pool_id"]
        super().__setstate__(state)
        weakref.finalize(self, release_solver_id, self._pool_id)

    def _scratch_solver_id(self) -> tuple[int, Callable[[], Any]]:
        solver_id = new_solver_id()
        return solver_id, lambda: release_solver_id(solver_id)
