"""CCB: Copeland Confidence Bound.

Zoghi, Karnin, Whiteson, de Rijke. *Copeland Dueling Bandits.* NIPS 2015 (Algorithm 1).

Choices where the printed pseudocode is ambiguous (each marked in the kernels):

* line 13 writes ``B^i``; the list meant is ``B^c`` of the challenger ``c`` just chosen;
* line 13's argmax of ``u_jc`` never returns ``c`` on a tie: ``c`` duels itself only when it is
  the unique maximiser (the rule of RUCB, Zoghi et al. 2014), otherwise a uniform choice among
  the other maximisers;
* when line 13's pool ``B^c`` leaves no eligible opponent, the pool falls back to all arms;
* line 9B rebuilds ``B^i`` only for the arms removed from ``B``;
* line 9C adds the arms whose Copeland score is known exactly in ascending index order.

CCB needs no Condorcet winner: it chooses an optimistic Copeland winner ``c`` (preferring a
shortlist ``B`` of arms that have looked like Copeland winners) and duels it against an arm
likely to discredit it (preferring the arms on ``c``'s list ``B^c`` of "formidable opponents").

Implementation notes
--------------------
Every decision of Algorithm 1 but one compares a bound ``u_ij`` or ``l_ij`` with 1/2.  With the
evidence ``e_ij = N (1/2 - mu_hat_ij)^2 / alpha`` (computed by the agents' private pair statistics; ``-1`` unless
``i`` trails ``j``), ``u_ij < 1/2`` iff ``e_ij > ln t`` and ``l_ji >= 1/2`` iff ``e_ij >= ln t``.
The state keeps both comparisons for every pair (``u_below``, ``l_at_least``) and the scores
``CpUp``/``CpLo`` they add up to.  A comparison changes only when its pair is played
(``observe`` refreshes that pair) or when the growing ``ln t`` reaches an evidence value;
``next_event`` is the smallest evidence not yet reached, and only then are all pairs
re-compared.  Everything else per step is O(K).  The exception is line 13's argmax of
``u_jc``: those bounds are computed exactly (by the RUCB upper bound of the agents' private pair statistics)
because ties among them are decided by exact equality.

``act`` runs lines 6-13 in one kernel, one inlined helper per step of the pseudocode; only
rare events (full re-comparison, resets, line 10's pair list, random subsets) call compiled
helpers.  Every compiled call and every array kept in a local or passed as an argument costs
atomic reference counting, which dominated the per-step time when lines 9 and 13 were
separate kernels (see the note above the inlined steps).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._candidate_sets import keep_random_subset, preferred_argmax
from dueling_gym.agents._confidence_bounds import rucb_upper_bound, trailing_evidence
from dueling_gym.agents._pair_statistics import empirical_copeland_counts, record_duel
from dueling_gym.agents._random_draws import uniform_choice
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import check_number

__all__ = ["CCB"]


class CCBState(AgentState, fields=[
    "rng", "n_arms", "wins", "alpha", "t", "log_t",
    # confidence comparisons and the Copeland scores CpUp, CpLo (see the module docstring)
    "evidence", "u_below", "l_at_least", "upper_scores", "lower_scores", "next_event",
    # shortlists: B_t (shortlist), B_t^i (opponents[i]), L_C bar (lc_bar)
    "shortlist", "n_shortlist", "opponents", "n_opponents", "lc_bar", "check_reset",
    # line 10: the pairs {(i, j) : j in B^i, l_ij <= 1/2 <= u_ij}, flattened, refreshed lazily
    "pairs", "n_pairs", "pairs_stale",
    # scratch
    "mask", "bounds", "members",
]):
    """Numba-side state of :class:`CCB`."""


# The compiled helpers below run only on rare events.  Arrays are filled with explicit loops (no
# slice assignments): fewer reference-count operations and a much shorter compile time.


@numba.njit(cache=True, nogil=True)
def _refresh_all(state, log_t):
    """Re-compare every pair with ``ln t``; find the next ``ln t`` at which a comparison changes."""
    n_arms = state.n_arms
    evidence = state.evidence
    u_below = state.u_below
    l_at_least = state.l_at_least
    upper = state.upper_scores
    lower = state.lower_scores
    for i in range(n_arms):
        upper[i] = n_arms - 1
        lower[i] = 0
    next_event = np.inf
    for i in range(n_arms):
        for j in range(n_arms):
            if i == j:
                continue
            value = evidence[i, j]
            below = value > log_t  # u_ij < 1/2
            at_least = value >= log_t  # l_ji >= 1/2
            u_below[i, j] = below
            l_at_least[j, i] = at_least
            upper[i] -= below
            lower[j] += at_least
            if at_least and value < next_event:
                next_event = value
    state.next_event = next_event
    state.pairs_stale = True
    # A growing ln t only turns u_ij < 1/2 off, so no hypothesis can become disproven here (9A).


@numba.njit(cache=True, nogil=True, inline="always")
def _clear_opponents(opponents, n_opponents, arm):
    """``B^arm = {}``."""
    for k in range(opponents.shape[1]):
        opponents[arm, k] = False
    n_opponents[arm] = 0


@numba.njit(cache=True, nogil=True)
def _reset_shortlists(state):
    """Lines 2-4: B = all arms, B^k = {} for all k, L_C bar = K."""
    for i in range(state.n_arms):
        state.shortlist[i] = True
        _clear_opponents(state.opponents, state.n_opponents, i)
    state.n_shortlist = state.n_arms
    state.lc_bar = state.n_arms
    state.n_pairs = 0
    state.pairs_stale = False


@numba.njit(cache=True, nogil=True)
def _hypothesis_disproven(state):
    """Line 9A test: some i and j in B^i with l_ij > 1/2 (i.e. u_ji < 1/2)."""
    for i in range(state.n_arms):
        if state.n_opponents[i] > 0:
            for j in range(state.n_arms):
                if state.opponents[i, j] and state.u_below[j, i]:
                    return True
    return False


@numba.njit(cache=True, nogil=True)
def _collect_pairs(state):
    """Line 10's set {(i, j) : j in B^i and l_ij <= 1/2 <= u_ij}, flattened row-major into ``pairs``."""
    n_arms = state.n_arms
    opponents = state.opponents
    u_below = state.u_below
    pairs = state.pairs
    count = 0
    for i in range(n_arms):
        for j in range(n_arms):
            inside = opponents[i, j] and not u_below[i, j] and not u_below[j, i]
            pairs[i * n_arms + j] = inside
            count += inside
    state.n_pairs = count
    state.pairs_stale = False


# The steps of ccb_act below are inlined into it: a compiled call, or an array passed as an
# argument, costs reference counting, more than the O(K) work of a step.  Loops that only read
# use the state's arrays in place (``state.shortlist[i]``, free); loops that write an array bind
# the arrays they touch to locals once (one count each), since a store would otherwise make the
# compiler reload every field on each iteration (measured on K = 16: 5-8% of a step).


@numba.njit(cache=True, nogil=True, inline="always")
def _largest_scores(state):
    """``max_i CpUp_i`` (line 8: C_t is its maximisers) and ``max_j CpLo_j`` (line 9B's threshold)."""
    top = 0
    best_lower = 0
    for i in range(state.n_arms):
        top = max(top, state.upper_scores[i])
        best_lower = max(best_lower, state.lower_scores[i])
    return top, best_lower


@numba.njit(cache=True, nogil=True, inline="always")
def _remove_non_copeland_winners(state, best_lower):
    """Line 9B: drop from B the arms with CpUp_i < max_j CpLo_j; an empty B is reset (lines 2-4)."""
    n_arms = state.n_arms
    lc_bar = state.lc_bar
    n_shortlist = state.n_shortlist
    changed = False  # did some B^i change (line 10's pair list is then stale)?
    for i in range(n_arms):
        if state.shortlist[i] and state.upper_scores[i] < best_lower:
            state.shortlist[i] = False
            n_shortlist -= 1
            # Rebuild B^i = {k : u_ik < 1/2} only for the arm being removed.
            if state.n_opponents[i] != lc_bar + 1:
                for k in range(n_arms):
                    state.opponents[i, k] = state.u_below[i, k]
                state.n_opponents[i] = n_arms - 1 - state.upper_scores[i]
                changed = True
    state.n_shortlist = n_shortlist
    if n_shortlist == 0:
        _reset_shortlists(state)
    if changed:
        state.pairs_stale = True


@numba.njit(cache=True, nogil=True, inline="always")
def _trim_opponent_lists(state, winner, keep):
    """Line 9C for the other arms j: B^j loses all its members if it has fewer than ``keep``, else
    all but a uniformly random ``keep`` of them.  Returns whether some B^j changed."""
    changed = False
    for j in range(state.n_arms):
        size = state.n_opponents[j]
        if j == winner or size == keep or size == 0:
            continue
        if size < keep:
            _clear_opponents(state.opponents, state.n_opponents, j)
        else:
            keep_random_subset(state.opponents[j], size, keep, state.rng, state.members)
            state.n_opponents[j] = keep
        changed = True
    return changed


@numba.njit(cache=True, nogil=True, inline="always")
def _add_copeland_winners(state, top):
    """Line 9C: every arm of C_t whose Copeland score is known exactly joins B (ascending order),
    with B^i = {}, L_C bar = its number of losses, and the other lists cut to L_C bar + 1."""
    n_shortlist = state.n_shortlist
    lc_bar = state.lc_bar
    changed = False
    for i in range(state.n_arms):
        score = state.upper_scores[i]
        if score != top or score != state.lower_scores[i]:
            continue
        if not state.shortlist[i]:
            state.shortlist[i] = True
            n_shortlist += 1
        if state.n_opponents[i] > 0:
            _clear_opponents(state.opponents, state.n_opponents, i)
            changed = True
        lc_bar = state.n_arms - 1 - score
        if _trim_opponent_lists(state, i, lc_bar + 1):
            changed = True
    state.n_shortlist = n_shortlist
    state.lc_bar = lc_bar
    if changed:
        state.pairs_stale = True


@numba.njit(cache=True, nogil=True, inline="always")
def _open_listed_pair(state):
    """Line 10: a uniform pair (i, j), j in B^i, whose interval contains 1/2, as ``i K + j``; -1 if none."""
    if state.pairs_stale:
        _collect_pairs(state)
    if state.n_pairs > 0:
        return uniform_choice(state.pairs, state.n_pairs, state.rng)
    return -1


@numba.njit(cache=True, nogil=True, inline="always")
def _optimistic_copeland_winner(state, top):
    """Lines 11-12: c uniform on C_t, or with probability 2/3 on B_t ∩ C_t when that is non-empty."""
    upper = state.upper_scores
    shortlist = state.shortlist
    mask = state.mask
    n_top = 0
    n_both = 0
    for i in range(state.n_arms):
        is_top = upper[i] == top
        n_top += is_top
        n_both += is_top and shortlist[i]
    restrict = n_both > 0 and state.rng.random() < 2.0 / 3.0
    for i in range(state.n_arms):
        mask[i] = upper[i] == top and (shortlist[i] or not restrict)
    return uniform_choice(mask, n_both if restrict else n_top, state.rng)


@numba.njit(cache=True, nogil=True, inline="always")
def _formidable_opponent(state, challenger, log_t):
    """Line 13: d = argmax u_jc over the eligible j (l_jc <= 1/2, i.e. not u_cj < 1/2) of a pool
    that is B^c with probability 1/2 (all arms if B^c has no eligible member), else all arms."""
    n_arms = state.n_arms
    opponents = state.opponents
    u_below = state.u_below
    mask = state.mask
    n_eligible = 0
    if state.rng.random() < 0.5:
        for j in range(n_arms):
            mask[j] = opponents[challenger, j] and not u_below[challenger, j]
            n_eligible += mask[j]
    if n_eligible == 0:  # pool = all arms (c itself is always eligible there)
        for j in range(n_arms):
            mask[j] = not u_below[challenger, j]
    wins = state.wins
    alpha = state.alpha
    bounds = state.bounds
    best = -np.inf
    for j in range(n_arms):
        if mask[j]:
            bounds[j] = rucb_upper_bound(wins, j, challenger, alpha, log_t)
            best = max(best, bounds[j])
    # Exact ties decide (hence exact bounds); a tie never selects c, which duels itself only
    # as the unique maximiser.
    n_others = 0
    for j in range(n_arms):
        mask[j] = mask[j] and j != challenger and bounds[j] == best
        n_others += mask[j]
    if n_others == 0:
        return challenger
    return uniform_choice(mask, n_others, state.rng)


@numba.njit(cache=True, nogil=True)
def ccb_act(state):
    log_t = state.log_t
    # Lines 6-7: bounds and optimistic / pessimistic Copeland scores (kept up to date incrementally).
    if log_t >= state.next_event:
        _refresh_all(state, log_t)
    # Line 8: C_t = {i : CpUp_i = top}.
    top, best_lower = _largest_scores(state)
    # Line 9A. Reset disproven hypotheses.  A listed opponent can become provably beaten only
    # when its pair is played, so observe() flags the possibility and the full test runs then.
    if state.check_reset:
        state.check_reset = False
        if _hypothesis_disproven(state):
            _reset_shortlists(state)
    _remove_non_copeland_winners(state, best_lower)  # line 9B
    _add_copeland_winners(state, top)  # line 9C
    # Line 10. With probability 1/4 duel a random listed pair whose interval contains 1/2.
    if state.rng.random() < 0.25:
        pair = _open_listed_pair(state)
        if pair >= 0:
            return pair // state.n_arms, pair % state.n_arms
    challenger = _optimistic_copeland_winner(state, top)  # lines 11-12
    return challenger, _formidable_opponent(state, challenger, log_t)  # line 13


@numba.njit(cache=True, nogil=True)
def ccb_observe(state, first, second, first_won):
    # Line 14.  The duel just played was duel t; the next one is t + 1 (ln 1 = 0 before the first).
    state.t += 1
    log_t = math.log(state.t + 1.0)
    state.log_t = log_t
    if not record_duel(state.wins, first, second, first_won):
        return  # a self-duel carries no information about P
    # Re-compare both orientations of the pair with the next step's ln t.
    next_event = state.next_event
    for i, j in ((first, second), (second, first)):
        value = trailing_evidence(state.wins, i, j, state.alpha)
        state.evidence[i, j] = value
        below = value > log_t  # u_ij < 1/2
        at_least = value >= log_t  # l_ji >= 1/2
        if below != state.u_below[i, j]:
            state.u_below[i, j] = below
            state.upper_scores[i] += -1 if below else 1
            state.pairs_stale = True
            if below and state.opponents[j, i]:
                state.check_reset = True  # l_ji > 1/2 for j's listed opponent i (line 9A)
        if at_least != state.l_at_least[j, i]:
            state.l_at_least[j, i] = at_least
            state.lower_scores[j] += 1 if at_least else -1
        if at_least and value < next_event:
            next_event = value
    state.next_event = next_event


@numba.njit(cache=True, nogil=True)
def ccb_recommend(state):
    # Empirical Copeland winner; ties: members of B first, then the lowest index.
    return preferred_argmax(empirical_copeland_counts(state.wins), state.shortlist)


@numba.njit(cache=True, nogil=True)
def _lc_bar(state):
    return state.lc_bar


@register_agent("ccb", target="copeland")
class CCB(KernelDuelingAgent):
    """Copeland Confidence Bound (Zoghi et al., NIPS 2015, Algorithm 1).

    Chooses an optimistic Copeland winner ``c`` (highest ``#{k : u_ck >= 1/2}``, preferring a
    shortlist ``B`` of likely Copeland winners) and duels it against the arm most likely to
    beat it among those not yet proven worse (preferring ``c``'s "formidable opponents"
    ``B^c``).  ``c`` duels itself only when no other arm is a plausible opponent, which is how
    CCB exploits.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    alpha : float, default 0.51
        Exploration parameter ``alpha > 1/2`` of the bounds ``mu_hat +- sqrt(alpha ln t / N)``
        (0.51 as in Komiyama et al. 2016 and the DTS authors' experiments; the paper's
        expected-regret corollary needs ``alpha > 1``).
    seed : int, optional
        Seed of the agent's generator.

    Attributes
    ----------
    wins : ndarray of int, shape (K, K)
        ``wins[i, j]`` = duels of ``{i, j}`` won by ``i``.
    shortlist : ndarray of bool, shape (K,)
        The shortlist ``B_t`` of potential Copeland winners.
    opponents : ndarray of bool, shape (K, K)
        ``opponents[i, j]`` iff ``j`` is in ``B_t^i``, the formidable opponents of ``i``.

    Notes
    -----
    The arrays above are live views of the kernel state: read them, do not write them.

    Regret ``O(K^2 + K ln T)`` without a Condorcet assumption (no ties ``p_ij = 1/2``).  Per
    step: ``O(K)``, plus ``O(K^2)`` when ``ln t`` reaches a stored evidence value (see the
    module docstring) or a shortlist changes.
    """

    paper = (
        PaperLink("NeurIPS 2015 proceedings",
                  "https://proceedings.neurips.cc/paper/2015/hash/9872ed9fc22fc182d371c3e9ed316094-Abstract.html"),
    )
    guarantee = (
        "Expected regret ``O((K² + (C + L_C) K ln T) / Δ²)`` for ``α > 1``, and with probability ``1 - δ`` for "
        "``α > 1/2`` at most ``A_δ + B_δ sqrt(ln T) + 2K (C + L_C + 1) ln T / Δ²``, on any Copeland problem "
        "without ties ``p_ij = 1/2``, no Condorcet winner needed (``C`` Copeland winners, ``L_C`` their "
        "losses; Zoghi, Karnin, Whiteson & de Rijke, NIPS 2015, eq. (1) and Theorem 11)."
    )

    act_kernel = ccb_act
    observe_kernel = ccb_observe
    recommend_kernel = ccb_recommend

    def __init__(self, n_arms: int, *, alpha: float = 0.51, seed=None):
        self.alpha = check_number("alpha", alpha, minimum=0.5)
        super().__init__(n_arms, seed=seed)

    @property
    def lc_bar(self) -> int:
        """Current estimate ``L_C bar`` of the number of losses of a Copeland winner (``K`` after a reset)."""
        return int(_lc_bar(self.state))

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        self.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        self.shortlist = np.ones(n_arms, dtype=np.bool_)
        self.opponents = np.zeros((n_arms, n_arms), dtype=np.bool_)
        self.state = CCBState(
            rng=self.rng, n_arms=n_arms, wins=self.wins, alpha=self.alpha, t=0, log_t=0.0,
            evidence=np.full((n_arms, n_arms), -1.0), u_below=np.zeros((n_arms, n_arms), dtype=np.bool_),
            l_at_least=np.zeros((n_arms, n_arms), dtype=np.bool_),
            upper_scores=np.full(n_arms, n_arms - 1, dtype=np.int64), lower_scores=np.zeros(n_arms, dtype=np.int64),
            next_event=np.inf, shortlist=self.shortlist, n_shortlist=n_arms, opponents=self.opponents,
            n_opponents=np.zeros(n_arms, dtype=np.int64), lc_bar=n_arms, check_reset=False,
            pairs=np.zeros(n_arms * n_arms, dtype=np.bool_), n_pairs=0, pairs_stale=False,
            mask=np.zeros(n_arms, dtype=np.bool_), bounds=np.zeros(n_arms), members=np.zeros(n_arms, dtype=np.int64),
        )
