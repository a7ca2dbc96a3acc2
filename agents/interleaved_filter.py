"""Interleaved Filter 2 (IF2): explore by successive one-versus-all matches, then exploit.

Yue, Broder, Kleinberg, Joachims. *The K-armed Dueling Bandits Problem.* Journal of Computer
and System Sciences 78(5), 2012 (Algorithm 2, IF2; estimates and intervals of §3, eqs. (6)-(8);
``delta = 1/(T K^2)``; explore-then-exploit as in §3).

The comments tag the lines of Algorithm 2:

* **[init]** ``b_hat`` uniform on the arms, ``W = B minus {b_hat}``;
* **[match]** one pass of "for b in W: compare b_hat and b" (the duel is ``(b_hat, b)``), updating
  ``P_hat_{b_hat,b}`` (the fraction of the pair's duels ``b_hat`` won) and its interval
  ``C = (P_hat - c_t, P_hat + c_t)``, ``c_t = sqrt(ln(1/delta) / t)`` after ``t`` duels of the pair;
* **[filter]** after the pass, every ``b`` with ``P_hat > 1/2`` and ``1/2`` outside ``C`` leaves ``W``;
* **[switch]** if some ``b'`` has ``P_hat < 1/2`` and ``1/2`` outside ``C``: prune every ``b`` with
  ``P_hat > 1/2`` (the IF2 pruning step), ``b_hat <- b'``, ``W <- W minus {b'}``, reset all estimates;
* **[exploit]** once ``W`` is empty, ``b_hat`` is played against itself.

Each duel costs ``O(1)``; the end of a pass costs ``O(K)``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import SeedLike, check_integer

__all__ = ["InterleavedFilter2"]


class InterleavedFilterState(AgentState, fields=[
    "rng",
    "wins",        # duels of (b_hat, b) won by b_hat in the current match
    "counts",      # duels of (b_hat, b) in the current match
    "active",      # W as a mask (b_hat is never in it)
    "n_active",
    "candidate",   # b_hat
    "cursor",      # the arm of W the pass plays next
    "log_level",   # ln(1/delta) = ln(T K^2)
    "switches",    # how many times b_hat changed
    "t",
]):
    """Numba-side state of :class:`InterleavedFilter2`."""


@numba.njit(cache=True, nogil=True)
def _next_active(active, start):
    for arm in range(start, active.shape[0]):
        if active[arm]:
            return arm
    return -1


@numba.njit(cache=True, nogil=True)
def interleaved_filter_act(state):
    if state.n_active == 0:
        return state.candidate, state.candidate  # [exploit]
    return state.candidate, state.cursor  # [match]


@numba.njit(cache=True, nogil=True)
def _end_of_pass(state):
    n_arms = state.active.shape[0]
    # [filter] arms b_hat confidently beats.
    challenger = -1
    lowest = 2.0
    for arm in range(n_arms):
        if not state.active[arm]:
            continue
        count = state.counts[arm]
        mean = state.wins[arm] / count
        radius = math.sqrt(state.log_level / count)
        if mean > 0.5 and mean - radius >= 0.5:
            state.active[arm] = False
            state.n_active -= 1
        elif mean < 0.5 and mean + radius <= 0.5 and mean < lowest:
            # [switch] candidates b' that confidently beat b_hat; the clearest one is taken.
            challenger = arm
            lowest = mean
    if challenger >= 0:
        for arm in range(n_arms):
            if state.active[arm] and state.wins[arm] / state.counts[arm] > 0.5:
                state.active[arm] = False  # IF2 pruning
                state.n_active -= 1
        state.active[challenger] = False
        state.n_active -= 1
        state.candidate = challenger
        state.switches += 1
        state.wins[:] = 0
        state.counts[:] = 0
    state.cursor = _next_active(state.active, 0)


@numba.njit(cache=True, nogil=True)
def interleaved_filter_observe(state, first, second, first_won):
    state.t += 1
    # Only the duel the current pass asked for is a sample of the match.
    if state.n_active == 0 or first != state.candidate or second != state.cursor:
        return
    state.counts[second] += 1
    if first_won:
        state.wins[second] += 1
    state.cursor = _next_active(state.active, second + 1)
    if state.cursor < 0:
        _end_of_pass(state)


@numba.njit(cache=True, nogil=True)
def interleaved_filter_recommend(state):
    return state.candidate


@register_agent("interleaved_filtering", target="condorcet")
class InterleavedFilter2(KernelDuelingAgent):
    """Interleaved Filter 2 (Yue, Broder, Kleinberg & Joachims, JCSS 2012, Algorithm 2).

    A candidate ``b_hat`` plays round-robin matches against the arms of ``W``; arms it
    confidently beats are filtered out, and an arm that confidently beats it becomes the new
    candidate (after pruning every arm the old candidate was empirically beating).  When ``W``
    is empty the candidate is exploited with self-duels.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    horizon : int
        The horizon ``T >= 1``; it sets ``delta = 1/(T K^2)`` and so the radius
        ``sqrt(ln(T K^2) / t)`` (the run may go on past ``T``).
    seed : int, optional
        Seed of the agent's generator (the initial candidate is drawn from it at reset).

    Notes
    -----
    Regret ``O(K log T / epsilon_{1,2})`` (Theorem 2) assumes a total order with strong
    stochastic transitivity and the stochastic triangle inequality.  The duel is always
    ``(b_hat, b)`` and a match visits ``W`` in increasing index order.  When several arms
    confidently beat ``b_hat`` at the end of a pass, the paper takes any of them; we take the
    one with the smallest ``P_hat_{b_hat,b'}`` (lowest index on ties), the clearest evidence.
    A public Python implementation uses a wider radius (a factor ``sqrt(8)``), keeps no pruning
    step (IF1) and takes the first such arm; we follow the paper's IF2 and its interval (8).
    :meth:`~dueling_gym.agents.DuelingAgent.recommend` returns ``b_hat``.
    """

    paper = (PaperLink("JCSS 78(5), doi:10.1016/j.jcss.2011.12.028", "https://doi.org/10.1016/j.jcss.2011.12.028"),)
    guarantee = (
        "Expected regret ``O(K log T / ε_{1,2})``, ``ε_{1,2}`` the gap between the two best arms, under a "
        "total order with strong stochastic transitivity and the stochastic triangle inequality (Yue, Broder, "
        "Kleinberg & Joachims, JCSS 2012, Theorem 2)."
    )

    act_kernel = interleaved_filter_act
    observe_kernel = interleaved_filter_observe
    recommend_kernel = interleaved_filter_recommend

    def __init__(self, n_arms: int, *, horizon: int, seed: SeedLike = None):
        self.horizon = check_integer("horizon", horizon, minimum=1)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        candidate = int(self.rng.integers(0, n_arms))  # [init] b_hat uniform on B
        self.active = np.ones(n_arms, dtype=np.bool_)
        self.active[candidate] = False
        self.wins = np.zeros(n_arms, dtype=np.int64)
        self.counts = np.zeros(n_arms, dtype=np.int64)
        first = int(np.flatnonzero(self.active)[0])
        self.state = InterleavedFilterState(
            rng=self.rng, wins=self.wins, counts=self.counts, active=self.active, n_active=n_arms - 1,
            candidate=candidate, cursor=first, log_level=math.log(self.horizon * n_arms * n_arms), switches=0, t=0,
        )

    @property
    def candidate(self) -> int:
        """The current candidate ``b_hat``."""
        return int(interleaved_filter_recommend(self.state))

    @property
    def remaining(self) -> np.ndarray:
        """The arms still in ``W``."""
        return np.flatnonzero(self.active)
