"""ECW-RMED: Efficient Copeland Winner Relative Minimum Empirical Divergence.

Komiyama, Honda, Nakagawa. *Copeland Dueling Bandit Problem: Regret Lower Bound, Optimal
Algorithm, and Computationally Efficient Algorithm.* ICML 2016, Algorithm 1 (ECW branch of
line 11), Theorems 4-6.

ECW-RMED shares CW-RMED's skeleton (the RMED loop the two share, a private module): forced
exploration (line 4), a loop over pairs (lines 5-6), the full-region confidence test (lines
8-9).  When that test fails it explores towards the optimum of the *relaxed* region
``R^E_{i1}(mu_hat)`` -- the candidate ``i1`` is verified against all its inferiors, and each
challenger ``i2`` is refuted separately -- which Theorem 5 solves by sorting, so
the whole agent runs in Numba kernels.  Its regret is ``ECWB * ln T + o(ln T)``
(Theorem 4), equal to the lower bound ``LB`` when there are several Copeland winners
(Theorem 6) and often close otherwise (but 114 times larger on the "gap" matrix).
"""

from __future__ import annotations

import numba

from dueling_gym.agents.rmed import _copeland_loop, _copeland_step5
from dueling_gym.agents.rmed._copeland_loop import CopelandRMEDAgent
from dueling_gym.agents.registry import register_agent

__all__ = ["ECWRMED"]


@numba.njit(cache=True, nogil=True)
def ecw_rmed_observe(state, first, second, first_won):
    """The shared skeleton with the sort-and-scan solver of line 11 (ECW)."""
    # The solver is reached through the module: a dispatcher imported by name would be
    # lowered as a dynamic global and make this kernel uncacheable.
    _copeland_loop.rmed_observe(state, first, second, first_won, _copeland_step5.relaxed_step5)


@register_agent("ecw_rmed", target="copeland")
class ECWRMED(CopelandRMEDAgent):
    """ECW-RMED (Komiyama et al., ICML 2016, Algorithm 1), a Copeland dueling bandit algorithm.

    Before every duel, a pair drawn fewer than ``alpha sqrt(ln t)`` times or with
    ``|mu_hat - 1/2| < beta / max(1, ln ln t)`` is drawn at once.  Otherwise the next pair of
    the current loop is drawn; then, if ``N / max(1, ln t)`` already lies in the full region
    ``R_{i1}(mu_hat)`` of some empirical Copeland winner ``i1`` (enough evidence that ``i1`` is
    a Copeland winner), the self-duel ``(i1, i1)`` joins the next loop; otherwise the pairs
    whose counts fall short of the relaxed optimum ``q*`` (Theorem 5) join it, together with
    ``(i_hat*, i_hat*)``.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    alpha : float, default 3.0
        ``alpha > 0``, scale of the forced-exploration count ``alpha sqrt(ln t)`` (the value of the
        paper's experiments).
    beta : float, default 0.01
        ``beta >= 0``, forced exploration of pairs with ``|mu_hat - 1/2| < beta / max(1, ln ln t)``
        (the value of the paper's experiments, which report that ``beta = 0``, switching the rule
        off, behaves almost identically).
    forced_check : {"every_step", "per_loop"}, default "every_step"
        When line 4 is checked: before every duel (the analysis and the DTS authors' code) or,
        literally as printed, once per pass over the loop (every deficient pair once).
    seed : int, optional
        Seed of the agent's generator (the algorithm is deterministic: every tie is broken by
        the lowest index: among empirical winners, and the smallest ``h`` in Theorem 5's scan;
        the paper leaves tie-breaking free).

    Notes
    -----
    Per step O(1) while the statistics are unchanged (self-duels); after a duel that changed
    them, ``O(|C_hat| K^2 log K)`` for the membership test and the sort-and-scan.
    :meth:`~dueling_gym.agents.DuelingAgent.recommend` returns the latest ``i_hat*``.
    :meth:`exploration_solution` evaluates line 11 on any matrix.

    References
    ----------
    J. Komiyama, J. Honda, H. Nakagawa. Copeland Dueling Bandit Problem: Regret Lower Bound,
    Optimal Algorithm, and Computationally Efficient Algorithm. ICML 2016.
    """

    guarantee = (
        "Copeland regret ``E[R(T)] <= min_{i1} C^E*_{i1} ln T + o(ln T)`` when the optimisers are unique "
        "(Theorem 4), whose constant is never below the optimal one and equals it when there are at least two "
        "Copeland winners (Theorem 6); no Condorcet winner needed (Komiyama, Honda & Nakagawa, ICML 2016)."
    )

    observe_kernel = ecw_rmed_observe
    step5_solver = _copeland_step5.relaxed_step5

    def __init__(self, n_arms: int, *, alpha: float = 3.0, beta: float = 0.01, forced_check: str = "every_step",
                 seed=None):
        self._set_common(alpha, beta, forced_check)
        super().__init__(n_arms, seed=seed)
