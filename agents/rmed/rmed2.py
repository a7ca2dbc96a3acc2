"""RMED2 and RMED2FH: Relative Minimum Empirical Divergence with the regret-aware opponent rule.

Komiyama, Honda, Kashima, Nakagawa. *Regret Lower Bound and Optimal Algorithm in Dueling
Bandit Problem.* COLT 2015 (the RMED loop algorithm with the RMED2 and RMED2FH opponent rules).

RMED2 keeps RMED1's loop over the arms that are still plausible Condorcet winners
(:mod:`dueling_gym.agents.rmed.rmed`: ``I_i - min_j I_j <= ln t + f(K)``), but chooses the opponent
``m(t)`` of the loop arm ``l`` to match the regret lower bound: the bound charges arm ``l`` with
``min_j (Delta_l + Delta_j) / d(mu_lj, 1/2)`` over the arms ``j`` that beat it (``Delta_i`` is the
regret of arm ``i``), i.e. ``l`` should mostly be compared with the arm that shows ``l``'s
inferiority at the lowest regret per unit of information, not always with the estimated winner.
With ``i_hat* = argmin_i I_i``:

* ``b_hat(l) = argmin_{j : mu_hat_lj < 1/2} max(mu_hat_{i*l} + mu_hat_{i*j} - 1, 0.01) / d(mu_hat_lj, 1/2)``
  (``mu_hat_{i*l} + mu_hat_{i*j} - 1`` estimates ``Delta_l + Delta_j``; lowest index on ties;
  ``i_hat*`` when no arm beats ``l`` empirically);
* ``O_hat_l = {j != l : mu_hat_lj <= 1/2}``;
* ``m(t) = i_hat*`` if ``i_hat* in O_hat_l`` and ``N_{l,i*} ln ln t <= N_{l,b_hat}`` (the winner is still
  compared with ``l`` a ``1 / ln ln t`` fraction as often as ``b_hat``, which keeps ``i_hat*``
  reliable); otherwise ``b_hat`` if ``b_hat in O_hat_l``; otherwise RMED1's rule (``i_hat*`` if
  it is in ``O_hat_l`` or ``O_hat_l`` is empty, else ``argmin_{j in O_hat_l} mu_hat_lj``).

Both need every pair to be well explored: before each duel, the first pair ``i < j`` (in
lexicographic order) with ``N_ij < alpha ln ln t`` is drawn instead of the loop's pair.  RMED2FH
knows the horizon ``T``: it explores every pair up to ``alpha ln ln T`` at once, and fixes
``b_hat(i)`` for every arm at the first loop step after that exploration.

Choices and the public implementations:

* The constants are those of the authors' code (duelingbanditlib): ``alpha = 3``,
  ``f(K) = 0.3 K^1.01`` and the floor 0.01 of the estimated regret (without it a negative
  estimate would make a pair look free), as is the order of the checks (the ``i_hat*`` test
  before ``b_hat``).  That code evaluates ``ln ln t`` as ``ln(ln t + 0.01)``; here ``ln ln t`` is
  used as written: below ``t = 3``, where it is not positive, no pair is forced and the winner
  test, in the multiplied form ``N_{l,i*} ln ln t <= N_{l,b_hat}``, always holds.
* After the initial round over all pairs (``L0 = 1`` as in RMED1), the forced draws do not
  advance the loop: the loop step ``l(t)`` is taken only by the duels it chooses.  The authors'
  code lets every duel advance it.
* The C++ code of Wu and Liu (DuelingBandits) computes the regret estimate with the opposite
  sign (``1 - mu_hat_{i*l} - mu_hat_{i*j}``), which selects the pair of largest regret per unit
  of information; the lower bound (and the authors' code) minimise the regret, which is what
  is done here.  That code also replaces the per-pair forced exploration by a global round
  robin over all pairs while ``t < K(K-1)/2 alpha ln ln t``.
* Ties of ``i_hat*`` are broken at random (as in :class:`~dueling_gym.agents.RMED1`);
  :meth:`~dueling_gym.agents.DuelingAgent.recommend` returns ``argmin_i I_i`` (lowest index on ties).

RMED2 assumes a Condorcet winner; RMED2FH is asymptotically optimal for a known horizon.
Per step ``O(K)``; the forced-exploration test costs ``O(1)`` unless a pair is deficient (the
smallest pair count and how many pairs have it are kept up to date).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._pair_statistics import empirical_preference
from dueling_gym.agents._random_draws import random_argmin_bits
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.rmed.rmed import initial_duel, record_win, rmed_advance_loop, rmed_loop_fields
from dueling_gym.agents.state import AgentState
from dueling_gym.stats import kl_bernoulli_scalar
from dueling_gym.validation import check_integer, check_number

__all__ = ["RMED2", "RMED2FH"]

#: Floor of the estimated regret Delta_l + Delta_j in the choice of b_hat(l).
_REGRET_FLOOR = 0.01


class RMED2State(AgentState, fields=[
    "rng",            # the agent's numpy Generator
    "wins",           # W[i, j] = duels of {i, j} won by i (K x K, int64)
    "divergence",     # D[i, j] = N_ij d(mu_hat_ij, 1/2) if mu_hat_ij < 1/2 else 0
    "info",           # I_i = sum_j D[i, j]
    "initial_first",  # initial round: the K(K-1)/2 pairs (i < j) in lexicographic order
    "initial_second",
    "n_initial",      # L0 * K(K-1)/2 initial duels
    "loop", "loop_size", "cursor", "remaining", "next_loop", "next_size", "in_next",  # as in RMED1
    "all_arms",       # all-True mask
    "opponents",      # scratch mask: O_hat_l
    "scratch",        # scratch values: mu_hat_lj
    "f_value",        # f(K)
    "alpha",          # forced exploration: N_ij >= alpha ln ln t
    "horizon",        # T for RMED2FH (the exploration level is alpha ln ln T); 0 for RMED2
    "partner",        # RMED2FH: b_hat(i) fixed after exploration (-1 until then)
    "counts",         # [smallest pair count, number of pairs with it]
    "loop_duel",      # whether the last act() returned the loop's duel
    "t",              # duels observed so far
]):
    """Numba-side state of :class:`~dueling_gym.agents.RMED2` and :class:`RMED2FH`."""


# Speed: as in RMED1 (see :mod:`dueling_gym.agents.rmed.rmed`), each array field is read once per
# kernel call and the helpers are inlined, because Numba reference-counts every array taken from
# the state or passed to a compiled function (atomic updates that cost more than the O(K) step).


@numba.njit(cache=True, nogil=True, inline="always")
def _log_log(t):
    """``ln ln t`` (not positive for ``t < e``)."""
    return math.log(math.log(t)) if t > 1.0 else -math.inf


@numba.njit(cache=True, nogil=True, inline="always")
def _required_count(alpha, horizon, t):
    """Forced exploration level ``ceil(alpha ln ln t)`` (``T`` for RMED2FH); ``N_ij`` below it is deficient."""
    level = alpha * _log_log(horizon if horizon > 0 else t + 1.0)
    return math.ceil(level) if level > 0.0 else 0


@numba.njit(cache=True, nogil=True)
def _refresh_counts(wins, counts):
    """Recompute the smallest pair count and its multiplicity (``O(K^2)``, rare)."""
    n_arms = wins.shape[0]
    smallest = np.iinfo(np.int64).max
    multiplicity = 0
    for i in range(n_arms):
        for j in range(i + 1, n_arms):
            total = wins[i, j] + wins[j, i]
            if total < smallest:
                smallest = total
                multiplicity = 1
            elif total == smallest:
                multiplicity += 1
    counts[0] = smallest
    counts[1] = multiplicity


@numba.njit(cache=True, nogil=True)
def regret_aware_partner(state, arm, best):
    """``b_hat(arm)`` given ``i_hat* = best`` (lowest index on ties; ``best`` if no arm beats ``arm``)."""
    return _partner(state.wins, arm, best)


@numba.njit(cache=True, nogil=True, inline="always")
def _partner(wins, arm, best):
    """:func:`regret_aware_partner` on the win counts ``W``."""
    n_arms = wins.shape[0]
    partner = best
    smallest = math.inf
    for j in range(n_arms):
        mean = empirical_preference(wins, arm, j)
        if j == arm or mean >= 0.5:
            continue
        regret = empirical_preference(wins, best, arm) + empirical_preference(wins, best, j) - 1.0
        value = max(regret, _REGRET_FLOOR) / kl_bernoulli_scalar(mean, 0.5)
        if value < smallest:
            smallest = value
            partner = j
    return partner


@numba.njit(cache=True, nogil=True)
def rmed2_act(state):
    state.loop_duel = False
    t = state.t
    if t < state.n_initial:
        return initial_duel(state, t)
    wins = state.wins
    n_arms = wins.shape[0]
    horizon = state.horizon
    # Forced exploration: the first pair with N_ij < alpha ln ln t (ln ln T for RMED2FH).
    required = _required_count(state.alpha, horizon, t)
    if state.counts[0] < required:
        for i in range(n_arms):
            for j in range(i + 1, n_arms):
                if wins[i, j] + wins[j, i] < required:
                    return i, j
    opponents = state.opponents
    scratch = state.scratch
    bitgen = state.rng.bit_generator
    state.loop_duel = True
    arm = state.loop[state.cursor]
    best = random_argmin_bits(state.info, state.all_arms, bitgen)
    if horizon > 0:
        partners = state.partner
        if partners[0] < 0:  # RMED2FH: fix b_hat(i) at the first loop step after exploration
            for i in range(n_arms):
                partners[i] = _partner(wins, i, best)
        partner = partners[arm]
    else:
        partner = _partner(wins, arm, best)
    # O_hat_l = {j != l : mu_hat_lj <= 1/2}  <=>  W_lj <= W_jl (exact).
    n_opponents = 0
    for j in range(n_arms):
        is_opponent = j != arm and wins[arm, j] <= wins[j, arm]
        opponents[j] = is_opponent
        if is_opponent:
            n_opponents += 1
            scratch[j] = empirical_preference(wins, arm, j)
    best_is_opponent = n_opponents > 0 and opponents[best]
    if best_is_opponent:
        pair_best = wins[arm, best] + wins[best, arm]
        pair_partner = wins[arm, partner] + wins[partner, arm]
        if pair_best * _log_log(t + 1.0) <= pair_partner:
            return arm, best
    if partner != arm and opponents[partner]:
        return arm, partner
    # RMED1's rule.
    if n_opponents == 0 or best_is_opponent:
        return arm, best
    return arm, random_argmin_bits(scratch, opponents, bitgen)


@numba.njit(cache=True, nogil=True)
def rmed2_observe(state, first, second, first_won):
    state.t += 1
    if first != second:
        wins = state.wins
        counts = state.counts
        pair_total = wins[first, second] + wins[second, first]
        if first_won:
            record_win(wins, state.divergence, state.info, first, second)
        else:
            record_win(wins, state.divergence, state.info, second, first)
        if pair_total == counts[0]:
            counts[1] -= 1
            if counts[1] == 0:
                _refresh_counts(wins, counts)
    if state.loop_duel:
        state.loop_duel = False
        rmed_advance_loop(state)


@numba.njit(cache=True, nogil=True)
def rmed2_recommend(state):
    return int(np.argmin(state.info))


class _RMED2Base(KernelDuelingAgent):
    """State and hyperparameters shared by :class:`~dueling_gym.agents.RMED2` and :class:`RMED2FH`."""

    paper = (PaperLink("COLT 2015, PMLR 40", "https://proceedings.mlr.press/v40/Komiyama15.html"),)

    act_kernel = rmed2_act
    observe_kernel = rmed2_observe
    recommend_kernel = rmed2_recommend

    def _set_common(self, alpha: float, f_scale: float, f_exponent: float) -> None:
        self.alpha = check_number("alpha", alpha, strict=False, minimum=0.0)
        self.f_scale = check_number("f_scale", f_scale, strict=False, minimum=0.0)
        self.f_exponent = check_number("f_exponent", f_exponent)

    def _horizon(self) -> int:
        return 0

    @property
    def f_value(self) -> float:
        """``f(K) = f_scale * K ** f_exponent``."""
        return self.f_scale * self.n_arms ** self.f_exponent

    def _reset_state(self) -> None:
        n_pairs = self.n_arms * (self.n_arms - 1) // 2
        self._partner = np.full(self.n_arms, -1, dtype=np.int64)
        self.state = RMED2State(
            **rmed_loop_fields(self, 1), alpha=float(self.alpha), horizon=float(self._horizon()),
            partner=self._partner, counts=np.array([0, n_pairs], dtype=np.int64), loop_duel=False, t=0,
        )


@register_agent("rmed2", target="condorcet")
class RMED2(_RMED2Base):
    """RMED2 (Komiyama et al., COLT 2015): RMED1's loop with the regret-aware opponent ``b_hat(l)``.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    alpha : float, default 3.0
        Forced exploration: every pair is drawn at least ``alpha ln ln t`` times (the authors' value).
    f_scale, f_exponent : float, default 0.3 and 1.01
        ``f(K) = f_scale K^f_exponent``, the slack of the loop test, as in :class:`~dueling_gym.agents.RMED1`.
    seed : int, optional
        Seed of the agent's generator (used only to break ties).

    Notes
    -----
    Assumes a Condorcet winner.  See the module notes for the rules and the choices made.
    """

    guarantee = (
        "No bound of its own: it assumes a Condorcet winner, and the paper proves the asymptotically optimal "
        "bound for RMED2FH, the version that knows the horizon, running the anytime RMED2 in experiments "
        "(Komiyama, Honda, Kashima & Nakagawa, COLT 2015)."
    )

    def __init__(self, n_arms: int, *, alpha: float = 3.0, f_scale: float = 0.3, f_exponent: float = 1.01,
                 seed: int | np.random.SeedSequence | None = None):
        self._set_common(alpha, f_scale, f_exponent)
        super().__init__(n_arms, seed=seed)


@register_agent("rmed2fh", target="condorcet")
class RMED2FH(_RMED2Base):
    """RMED2FH (Komiyama et al., COLT 2015): RMED2 for a known horizon, with ``b_hat`` fixed after exploration.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    horizon : int
        The number of duels ``T`` (``T >= 3``); every pair is first drawn ``ceil(alpha ln ln T)`` times.
    alpha, f_scale, f_exponent : float
        As for :class:`~dueling_gym.agents.RMED2`.
    seed : int, optional
        Seed of the agent's generator (used only to break ties).

    Notes
    -----
    :attr:`partners` is ``b_hat(i)`` for every arm once fixed (``-1`` before).
    """

    guarantee = (
        "Asymptotically optimal under a Condorcet winner: its regret upper bound matches the paper's "
        "information-divergence lower bound, the first to do so (Komiyama, Honda, Kashima & Nakagawa, COLT "
        "2015, as stated in the abstract)."
    )

    def __init__(self, n_arms: int, *, horizon: int, alpha: float = 3.0, f_scale: float = 0.3,
                 f_exponent: float = 1.01, seed: int | np.random.SeedSequence | None = None):
        self.horizon = check_integer("horizon", horizon, minimum=3)
        self._set_common(alpha, f_scale, f_exponent)
        super().__init__(n_arms, seed=seed)

    def _horizon(self) -> int:
        return self.horizon

    @property
    def partners(self) -> np.ndarray:
        """``b_hat(i)`` as fixed at the end of the exploration (all ``-1`` before)."""
        return self._partner.copy()
