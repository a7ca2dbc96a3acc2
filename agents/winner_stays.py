"""Winner Stays: WS-W (weak regret) and WS-S (strong regret).

Chen, Frazier. *Dueling Bandits with Weak Regret.* ICML 2017 (Algorithm 1, WS-W; Algorithm 2,
WS-S).

WS-W keeps one integer per arm, ``C(t, i)`` = wins minus losses of arm ``i`` so far, and plays
the two arms with the largest ``C``, keeping last step's arms whenever they are still among the
maximisers (Algorithm 1):

* **[step 1]** ``I_t = I_{t-1}`` if ``I_{t-1} in argmax_i C``; else ``I_t = J_{t-1}`` if
  ``J_{t-1} in argmax_i C``; else a uniform draw from ``argmax_i C``;
* **[step 2]** ``J_t = I_{t-1}`` if ``I_{t-1} in argmax_{j != I_t} C``; else ``J_t = J_{t-1}``
  if it is in that set; else a uniform draw from ``argmax_{j != I_t} C``;
* **[step 3]** the winner's ``C`` goes up by one, the loser's down by one.

The analysis (§4, Figure 1) reads this as rounds of iterations: in round ``r`` the incumbent
meets the arms that have not yet played in the round one after another, and an iteration ends
when one of its two arms reaches ``C = -r``.  So round ``r`` is over exactly when ``K - 1``
arms sit at ``C = -r``; the kernels count them to know the round without any extra scan.

WS-S (Algorithm 2, parameter ``beta > 1``) alternates exploration and exploitation: in phase
``r`` it runs WS-W until WS-W's round ``r`` ends, then plays the round's winner against itself
for ``floor(beta^r)`` duels; ``C`` carries over from one exploration phase to the next.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._random_draws import random_argmax
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import SeedLike, check_number

__all__ = ["WinnerStaysWeak", "WinnerStaysStrong"]

#: Exploitation phases are capped at this many duels (``beta^r`` overflows int64 eventually).
_MAX_EXPLOITATION = 1 << 62


class WinnerStaysState(AgentState, fields=[
    "rng",
    "score",         # C(t, i): wins minus losses (int64, length K)
    "eligible",      # scratch mask for the uniform draws (all True except while excluding I_t)
    "last_first",    # I_{t-1} (-1 before the first duel)
    "last_second",   # J_{t-1}
    "round",         # WS-W round r in progress (1-based)
    "at_floor",      # arms with C = -r: the round ends when K - 1 of them are there
    "beta",          # WS-S exploitation growth (0 for WS-W: no exploitation)
    "exploit_arm",   # the arm played against itself during exploitation
    "exploit_left",  # duels left in the current exploitation phase
    "t",
]):
    """Numba-side state of :class:`~dueling_gym.agents.WinnerStaysWeak` and :class:`WinnerStaysStrong`."""

    @property
    def round(self) -> int:
        """The WS-W round in progress (1-based)."""
        return _state_round(self)


@numba.njit(cache=True)
def _state_round(state):
    return state.round


@numba.njit(cache=True, nogil=True)
def _max_score(score, excluded):
    best = np.iinfo(np.int64).min
    for arm in range(score.shape[0]):
        if arm != excluded and score[arm] > best:
            best = score[arm]
    return best


@numba.njit(cache=True, nogil=True)
def _kept_incumbent(state):
    """Step 1's incumbent: I_{t-1}, else J_{t-1}, when it is among argmax_i C; else -1."""
    score = state.score
    top = _max_score(score, -1)
    if state.last_first >= 0 and score[state.last_first] == top:
        return state.last_first
    if state.last_second >= 0 and score[state.last_second] == top:
        return state.last_second
    return -1


@numba.njit(cache=True, nogil=True)
def _choose_first(state):
    # Step 1: keep the incumbent when among argmax_i C; else a uniform draw.
    kept = _kept_incumbent(state)
    if kept >= 0:
        return kept
    return random_argmax(state.score, state.eligible, state.rng)


@numba.njit(cache=True, nogil=True)
def _choose_second(state, first):
    # Step 2: keep I_{t-1}, else J_{t-1}, when among argmax_{j != I_t} C; else a uniform draw.
    score = state.score
    top = _max_score(score, first)
    previous = state.last_first
    if previous >= 0 and previous != first and score[previous] == top:
        return previous
    previous = state.last_second
    if previous >= 0 and previous != first and score[previous] == top:
        return previous
    state.eligible[first] = False
    second = random_argmax(score, state.eligible, state.rng)
    state.eligible[first] = True
    return second


@numba.njit(cache=True, nogil=True)
def winner_stays_act(state):
    if state.exploit_left > 0:
        return state.exploit_arm, state.exploit_arm
    first = _choose_first(state)
    return first, _choose_second(state, first)


@numba.njit(cache=True, nogil=True)
def winner_stays_observe(state, first, second, first_won):
    state.t += 1
    if state.exploit_left > 0:
        state.exploit_left -= 1  # WS-S exploitation: a self-duel, nothing to learn
        return
    state.last_first = first
    state.last_second = second
    if first == second:
        return  # only reachable through a caller-chosen self-duel; a fair coin says nothing
    winner, loser = (first, second) if first_won else (second, first)
    state.score[winner] += 1
    state.score[loser] -= 1
    if state.score[loser] == -state.round:
        state.at_floor += 1
    if state.at_floor < state.score.shape[0] - 1:
        return
    # Round r is over: every arm but the round's winner sits at C = -r.
    completed = state.round
    state.round += 1
    state.at_floor = 0
    if state.beta > 0.0:
        length = state.beta ** completed
        state.exploit_left = _MAX_EXPLOITATION if length >= _MAX_EXPLOITATION else np.int64(math.floor(length))
        state.exploit_arm = winner


@numba.njit(cache=True, nogil=True)
def winner_stays_recommend(state):
    if state.exploit_left > 0:
        return state.exploit_arm
    # The arm step 1 would keep (the incumbent), else the lowest index among argmax C.
    kept = _kept_incumbent(state)
    if kept >= 0:
        return kept
    return int(np.argmax(state.score))


class _WinnerStays(KernelDuelingAgent):
    """Shared state handling of the two Winner Stays variants."""

    paper = (PaperLink("ICML 2017, PMLR 70", "https://proceedings.mlr.press/v70/chen17c.html"),)

    act_kernel = winner_stays_act
    observe_kernel = winner_stays_observe
    recommend_kernel = winner_stays_recommend
    _beta: float = 0.0

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        self.score = np.zeros(n_arms, dtype=np.int64)
        self.state = WinnerStaysState(
            rng=self.rng, score=self.score, eligible=np.ones(n_arms, dtype=np.bool_), last_first=-1, last_second=-1,
            round=1, at_floor=0, beta=self._beta, exploit_arm=-1, exploit_left=0, t=0,
        )

    @property
    def round(self) -> int:
        """The WS-W round in progress (1-based)."""
        return self.state.round


@register_agent("winner_stays_weak", target="condorcet")
class WinnerStaysWeak(_WinnerStays):
    """Winner Stays for weak regret, WS-W (Chen & Frazier, ICML 2017, Algorithm 1).

    Plays the two arms with the largest wins-minus-losses count ``C``, keeping last step's arms
    while they are still maximisers: the winner of a duel stays, the loser is replaced by an
    arm that has not played in the current round once it is ``r`` net losses down.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    seed : int, optional
        Seed of the agent's generator (uniform draws among tied maximisers).

    Notes
    -----
    Assumes a Condorcet winner.  Expected cumulative *weak* regret is bounded by a constant
    (``O(K^2)``, ``O(K log K)`` under a total order; Theorems 1 and 2), independent of the
    horizon.  The agent never plays a self-duel, so its strong regret grows linearly.
    :meth:`~dueling_gym.agents.DuelingAgent.recommend` returns the arm step 1 would keep (the incumbent),
    else the lowest index
    with the largest ``C``; it draws nothing.  Per step: two ``O(K)`` scans of ``C``.

    Where the paper's round picture (§4) and its pseudocode could be read differently we follow
    the pseudocode: when a round ends, ``J_{t-1}`` (the last arm beaten) is still a maximiser of
    ``C`` over ``j != I_t`` (all of them sit at ``-r``) and so it opens the next round; a public
    Java port of the round picture draws the first challenger of a round at random instead.
    """

    guarantee = (
        "Expected cumulative weak regret ``O(K²)``, and ``O(K log K)`` under a total order, constant in ``T``, "
        "assuming a Condorcet winner (Chen & Frazier, ICML 2017, as stated in the abstract)."
    )

    def __init__(self, n_arms: int, *, seed: SeedLike = None):
        super().__init__(n_arms, seed=seed)


@register_agent("winner_stays_strong", target="condorcet")
class WinnerStaysStrong(_WinnerStays):
    """Winner Stays for strong regret, WS-S (Chen & Frazier, ICML 2017, Algorithm 2).

    Exploration phase ``r``: WS-W (Algorithm 1) until its round ``r`` ends.  Exploitation phase
    ``r``: the round's winner duels itself ``floor(beta^r)`` times.  ``C`` is never reset.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    beta : float, default 2.0
        Growth factor ``beta > 1`` of the exploitation phases.  The analysis holds for every
        ``beta > 1`` (Theorem 3: ``O(K^2 + K log T)`` strong regret, the constant growing as
        ``beta`` approaches 1); 2 doubles the phases, as the public Python port does.
    seed : int, optional
        Seed of the agent's generator.

    Notes
    -----
    Exploitation phases are capped at ``2^62`` duels.  :meth:`~dueling_gym.agents.DuelingAgent.recommend`
    returns the exploited
    arm during exploitation, otherwise what :class:`~dueling_gym.agents.WinnerStaysWeak` recommends.  The public
    Python port runs a single WS-W duel before each exploitation phase instead of a full round;
    we follow the paper (and the public Java port), whose bound needs the round to finish.
    """

    guarantee = (
        "Expected cumulative strong regret ``O(K² + K log T)``, and ``O(K log K + K log T)`` under a total "
        "order, assuming a Condorcet winner (Chen & Frazier, ICML 2017, as stated in the abstract)."
    )

    def __init__(self, n_arms: int, *, beta: float = 2.0, seed: SeedLike = None):
        self.beta = check_number("beta", beta, minimum=1.0)
        self._beta = self.beta
        super().__init__(n_arms, seed=seed)
