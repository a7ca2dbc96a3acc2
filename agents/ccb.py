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

``act`` runs lines 6-13 in one kernel; only rare events (full re-comparison, resets, line 10's
pair list, random subsets) call helpers.  Every helper call and every array read from the
structref costs atomic reference counting, which dominated the per-step time when lines 9 and
13 were separate kernels.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._copeland_kernels import choose_uniform, keep_random_subset, preferred_argmax
from dueling_gym.agents._pair_statistics import empirical_copeland_counts, rucb_upper_bound, trailing_evidence
from dueling_gym.agents.base import AgentState, KernelDuelingAgent, check_number, register_agent

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


# Arrays are bound to locals and filled with explicit loops (no slice assignments): fewer
# reference-count operations per step and a much shorter compile time.


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


@numba.njit(cache=True, nogil=True)
def _reset_shortlists(state):
    """Lines 2-4: B = all arms, B^k = {} for all k, L_C bar = K."""
    n_arms = state.n_arms
    shortlist = state.shortlist
    opponents = state.opponents
    n_opponents = state.n_opponents
    for i in range(n_arms):
        shortlist[i] = True
        n_opponents[i] = 0
        for j in range(n_arms):
            opponents[i, j] = False
    state.n_shortlist = n_arms
    state.lc_bar = n_arms
    state.n_pairs = 0
    state.pairs_stale = False


@numba.njit(cache=True, nogil=True)
def _hypothesis_disproven(state):
    """Line 9A test: some i and j in B^i with l_ij > 1/2 (i.e. u_ji < 1/2)."""
    n_arms = state.n_arms
    opponents = state.opponents
    u_below = state.u_below
    n_opponents = state.n_opponents
    for i in range(n_arms):
        if n_opponents[i] == 0:
            continue
        for j in range(n_arms):
            if opponents[i, j] and u_below[j, i]:
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


@numba.njit(cache=True, nogil=True)
def ccb_act(state):
    n_arms = state.n_arms
    rng = state.rng
    log_t = state.log_t
    # Lines 6-7: bounds and optimistic / pessimistic Copeland scores (kept up to date incrementally).
    if log_t >= state.next_event:
        _refresh_all(state, log_t)
    upper = state.upper_scores  # CpUp_i = #{k != i : u_ik >= 1/2}
    lower = state.lower_scores  # CpLo_i = #{k != i : l_ik >= 1/2}
    u_below = state.u_below
    shortlist = state.shortlist
    opponents = state.opponents
    n_opponents = state.n_opponents
    # Line 8: C_t = {i : CpUp_i = top}.
    top = 0
    best_lower = 0
    for i in range(n_arms):
        top = max(top, upper[i])
        best_lower = max(best_lower, lower[i])

    # Line 9A. Reset disproven hypotheses.  A listed opponent can become provably beaten only
    # when its pair is played, so observe() flags the possibility and the full test runs then.
    if state.check_reset:
        state.check_reset = False
        if _hypothesis_disproven(state):
            _reset_shortlists(state)
    lc_bar = state.lc_bar
    n_shortlist = state.n_shortlist
    changed = False  # did some B^i change (line 10's pair list is then stale)?
    # Line 9B. Remove non-Copeland winners: CpUp_i < max_j CpLo_j.
    for i in range(n_arms):
        if shortlist[i] and upper[i] < best_lower:
            shortlist[i] = False
            n_shortlist -= 1
            # Rebuild B^i = {k : u_ik < 1/2} only for the arm being removed.
            if n_opponents[i] != lc_bar + 1:
                for k in range(n_arms):
                    opponents[i, k] = u_below[i, k]
                n_opponents[i] = n_arms - 1 - upper[i]
                changed = True
    if n_shortlist == 0:
        _reset_shortlists(state)
        n_shortlist = n_arms
        lc_bar = n_arms
    # Line 9C. Add Copeland winners: arms of C_t whose score is known exactly (ascending order).
    for i in range(n_arms):
        if upper[i] != top or upper[i] != lower[i]:
            continue
        if not shortlist[i]:
            shortlist[i] = True
            n_shortlist += 1
        if n_opponents[i] > 0:
            for k in range(n_arms):
                opponents[i, k] = False
            n_opponents[i] = 0
            changed = True
        lc_bar = n_arms - 1 - upper[i]
        keep = lc_bar + 1
        for j in range(n_arms):
            size = n_opponents[j]
            if j == i or size == keep or size == 0:
                continue
            if size < keep:
                for k in range(n_arms):
                    opponents[j, k] = False
                n_opponents[j] = 0
            else:  # keep a uniformly random subset of L_C bar + 1 opponents
                keep_random_subset(opponents[j], size, keep, rng, state.members)
                n_opponents[j] = keep
            changed = True
    state.n_shortlist = n_shortlist
    state.lc_bar = lc_bar
    if changed:
        state.pairs_stale = True

    # Line 10. With probability 1/4 duel a random listed pair whose interval contains 1/2.
    if rng.random() < 0.25:
        if state.pairs_stale:
            _collect_pairs(state)
        if state.n_pairs > 0:
            index = choose_uniform(state.pairs, state.n_pairs, rng)
            return index // n_arms, index % n_arms

    # Line 11. With probability 2/3 restrict C_t to B_t ∩ C_t when that is non-empty.
    mask = state.mask
    n_top = 0
    n_both = 0
    for i in range(n_arms):
        is_top = upper[i] == top
        n_top += is_top
        n_both += is_top and shortlist[i]
    restrict = n_both > 0 and rng.random() < 2.0 / 3.0
    for i in range(n_arms):
        mask[i] = upper[i] == top and (shortlist[i] or not restrict)
    # Line 12. c uniform on the candidates.
    challenger = choose_uniform(mask, n_both if restrict else n_top, rng)

    # Line 13. With probability 1/2 the pool is B^c (the chosen c's list), else all arms;
    # d = argmax u_jc over the eligible j (l_jc <= 1/2, i.e. not u_cj < 1/2).
    n_eligible = 0
    if rng.random() < 0.5:
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
    # A tie never selects c; c duels itself only as the unique maximiser.
    n_others = 0
    for j in range(n_arms):
        mask[j] = mask[j] and j != challenger and bounds[j] == best
        n_others += mask[j]
    if n_others == 0:
        return challenger, challenger
    return challenger, choose_uniform(mask, n_others, rng)


@numba.njit(cache=True, nogil=True)
def ccb_observe(state, first, second, first_won):
    # Line 14.  The duel just played was duel t; the next one is t + 1 (ln 1 = 0 before the first).
    state.t += 1
    log_t = math.log(state.t + 1.0)
    state.log_t = log_t
    if first == second:
        return  # a self-duel carries no information about P
    wins = state.wins
    if first_won:
        wins[first, second] += 1
    else:
        wins[second, first] += 1
    # Re-compare both orientations of the pair with the next step's ln t.
    evidence = state.evidence
    u_below = state.u_below
    l_at_least = state.l_at_least
    upper = state.upper_scores
    lower = state.lower_scores
    next_event = state.next_event
    for i, j in ((first, second), (second, first)):
        value = trailing_evidence(wins, i, j, state.alpha)
        evidence[i, j] = value
        below = value > log_t  # u_ij < 1/2
        at_least = value >= log_t  # l_ji >= 1/2
        if below != u_below[i, j]:
            u_below[i, j] = below
            upper[i] += -1 if below else 1
            state.pairs_stale = True
            if below and state.opponents[j, i]:
                state.check_reset = True  # l_ji > 1/2 for j's listed opponent i (line 9A)
        if at_least != l_at_least[j, i]:
            l_at_least[j, i] = at_least
            lower[j] += 1 if at_least else -1
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
