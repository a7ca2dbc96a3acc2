"""The safeguard of the pair policy: it replaces the duels the data no longer justify, so that
the regret grows logarithmically whatever the network scores (dueling-gym's own design; no paper).

A network trained on runs of a given length learns what pays within that length; nothing in its
weights says what to do ten times later, and one that commits to an arm may never check it again
(linear regret).  The safeguard leaves to the network the duels that still teach something that
matters, and steps in when the network exploits an arm that is not a confident winner or keeps
to one pair, with the statistic of the RMED algorithms
(Komiyama, Honda, Kashima and Nakagawa, *Regret Lower Bound and Optimal Algorithm in Dueling
Bandit Problem*, COLT 2015: an arm's empirical divergence ``sum_j N_ij KL(p_ij, 1/2)`` against
``log t``), here pair by pair:

* the **evidence** of the pair ``{i, j}`` is ``N_ij * KL(p_ij, 1/2)``, the log-likelihood ratio
  of its empirical preference ``p_ij`` against a tie (``N_ij`` duels, Bernoulli divergence);
* after ``t`` duels a pair is **decided** for its leader when its evidence reaches ``log t``.
  The safeguard is on from duel ``start`` on (before it the network plays exactly as trained:
  short runs are where it is strongest); the threshold grows with ``t``, so a decision that no
  duel has confirmed since lapses and is checked again, at the rate a consistent algorithm needs;
* the **clock**: by default the threshold is the run's ``log t``, so a safeguard that starts late
  asks at once, of every pair, the evidence a run-long safeguard would have gathered by then, and
  its checks come all together.  With its own clock (``origin = start``) the threshold is
  ``log(t / start)``: it starts from nothing, every played pair is decided at first, and the
  decisions lapse and are checked as it grows, as they would have been from the first duel.
  A wrong decision on evidence ``e`` is then kept until ``t = start * exp(e)``, so it guards
  less in its first decades;
* an arm's Copeland bounds: ``lower`` counts the pairs decided for it, ``upper`` is ``K - 1``
  minus the pairs decided against it; an arm is a **confident winner** when all its pairs are
  decided for it (a Condorcet winner) or its ``lower`` reaches every other arm's ``upper`` (a
  Copeland winner, whatever the undecided pairs turn out to be).

The rule, for the network's duel ``(i, j)``, which *exploits* an arm: ``i`` of a self-duel, the
leader of a decided pair, the leader in the counts of an undecided one.  An arm **can still win**
while its ``upper`` is at least every arm's ``lower``; an undecided pair **matters** while one of
its arms can still win it (that arm can still win and does not trail the pair in the counts) or
would, on losing it, lower an ``upper`` that exceeds every ``lower`` (the arm blocks a confident
winner).  Deciding a pair that does not matter changes no arm's chance of becoming a confident
winner that is not settled anyway.

1. if there is a confident winner, it is exploited: the exploited arm's self-duel if that arm is
   one, else the self-duel of the confident winner with the largest ``lower``.  Nothing else
   teaches anything that matters any more (until the threshold grows past a decision);
2. otherwise an undecided pair that matters is played as chosen (it adds evidence where some is
   missing), unless it has more than twice the duels of the least-played pair that matters
   plus ``log t``: the network may explore where it likes, but not keep to one near tie while
   the checks of cheaper pairs wait;
3. otherwise, while some arm has lost no decided pair (a **Condorcet candidate**: a Condorcet
   winner is one, with high probability, for as long as the run lasts), the candidates are
   tested.  The *leader* is the exploited arm if it is a candidate, else the candidate that
   leads most of its pairs in the counts.  If the leader is the only candidate but another arm
   has won more decided pairs, the leader's least-played undecided pair is checked (a Condorcet
   winner eventually wins as many; the lone candidate of a problem without one, whose pairs may
   all be close to 1/2, need not).  Otherwise a lone leader is exploited once it leads each of
   its pairs in the counts with at least ``log t`` duels of each (a floor that costs little and
   makes the counts of a leader that is not a Condorcet winner turn against it), else the
   least-played of the pairs that fail this is checked.  With several candidates, they are
   refuted as RMED1 refutes arms (Komiyama et al. 2015, Algorithm 1): each is compared with the
   arm that beats it most in the counts (its undecided pair with the lowest
   ``(wins + 1) / (duels + 2)``; the leader takes its turn too, against the other candidates it
   does not lead), the least-played such pair first.  A pair with more than ten times the duels
   of the candidate's least-played undecided pair plus ``log t`` gives way to that pair: the
   lowest share may be a near tie, well estimated, while the arm that truly beats the candidate
   most is behind in a few unlucky duels.  Refuting an arm costs ``log t / KL`` duels of its
   *cheapest* beater, where confirming a winner costs as many duels of each of the winner's
   pairs, which on matrices whose winner barely beats some arms is far more;
4. otherwise (every arm has lost a decided pair: there is no Condorcet winner) the least-played
   undecided pair that matters.  The checks take turns over every way to a confident winner
   (raising a possible winner's ``lower``, lowering a blocker's ``upper``), so the cheapest way
   is completed first, and a near tie between two arms costs no more duels than that way needs
   (a near tie of two arms that cannot win costs none).  There is always such a pair: the arm
   with the largest ``lower`` is not a confident winner, so it has an undecided pair that it
   leads, ties or trails with ``upper`` above its ``lower``, or all its pairs are decided and
   an arm whose ``upper`` exceeds its ``lower`` blocks it, and that arm's undecided pairs
   matter.

What this guarantees: every duel played that is not a confident winner's or a lone Condorcet
candidate's self-duel belongs to an undecided pair that matters or to the floor of ``log t``
duels per pair; a pair whose preference is not exactly 1/2 stops being undecided after about
``log t / KL(p_ij, 1/2)`` duels, the network cannot keep to one undecided pair while the
checks of the others wait, and a confident winner chosen on evidence below ``log t`` is wrong
with probability about ``1/t``; so an arm the network commits to wrongly is found out, and the
duels that cost regret grow like ``log t`` rather than ``t``.  What it does not: the constant in
front of ``log t`` is the network's part (and the checks' order is simple, not optimal: on a
problem whose pairs are all close to 1/2 the checks themselves are what the regret is made of),
and a pair of arms tied exactly at 1/2 never becomes decided (it is played only while it
matters, and in turn with the other pairs that do).  These are measured, not proved:
``docs/learned-consistency.md`` reports the regret to ``10^6`` duels on every published matrix.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import numba
import numpy as np

__all__ = ["SAFEGUARD_CLOCKS", "check_safeguard_clock", "safeguard_origin", "pair_evidence", "safeguard_threshold",
           "new_safeguard_arrays",
           "reset_safeguard", "safeguard_observe", "safeguarded_duel", "safeguard_rule_digest"]


@functools.lru_cache(maxsize=1)
def safeguard_rule_digest() -> str:
    """The SHA-256 of this module's source, which identifies the rule.

    A study's record of a safeguarded run carries it, so that runs of an earlier version of the
    rule are run again rather than reused as if they were this version's.

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()

# The safeguard keeps, besides the win counts, four arrays (see :func:`new_safeguard_arrays`):
#   evidence (K, K) float  N_ij KL(p_ij, 1/2) of every pair (symmetric);
#   status   (K, K) int8   +1 where the pair is decided for the row's arm, -1 for the column's, 0 undecided;
#   bounds   (2, K) int64  every arm's Copeland lower and upper bound under ``status``;
#   expiry   (1,)   float  the smallest evidence of a decided pair (+inf if none, -inf: never computed).
# ``status`` is exact for the current threshold as long as the threshold stays at or below
# ``expiry``: a decided pair stays decided until the growing threshold passes its evidence, and
# an undecided one changes only when it is played (refreshed then).  So the bounds are updated
# pair by pair and rebuilt only when the threshold passes ``expiry`` -- a few times per decision.


#: The clocks the safeguard may keep.  On ``"run"`` its threshold after ``t`` duels is ``log t``;
#: on ``"start"`` it is ``log(t / start)``, counted from the duel the safeguard starts at.
SAFEGUARD_CLOCKS = ("run", "start")


def check_safeguard_clock(clock: str) -> str:
    """``clock`` if it is one of :data:`SAFEGUARD_CLOCKS`; TypeError or ValueError otherwise."""
    if not isinstance(clock, str):
        raise TypeError(f"safeguard_clock must be a string, got {type(clock).__name__}")
    if clock not in SAFEGUARD_CLOCKS:
        raise ValueError(f"safeguard_clock must be one of {SAFEGUARD_CLOCKS}, got {clock!r}")
    return clock


def safeguard_origin(start: int, clock: str) -> int:
    """The ``origin`` of ``safeguard_threshold`` for a safeguard from duel ``start`` (0: off)
    on ``clock``: ``start`` on its own clock, else 1 (the run's clock, ``log t``)."""
    return start if check_safeguard_clock(clock) == "start" and start > 0 else 1


def new_safeguard_arrays(n_arms: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fresh ``(evidence, status, bounds, expiry)`` arrays of the safeguard of a run of ``n_arms`` arms."""
    evidence = np.zeros((n_arms, n_arms))
    status = np.zeros((n_arms, n_arms), dtype=np.int8)
    bounds = np.zeros((2, n_arms), dtype=np.int64)
    expiry = np.zeros(1)
    reset_safeguard(evidence, status, bounds, expiry)
    return evidence, status, bounds, expiry


@numba.njit(cache=True, nogil=True)
def pair_evidence(wins_ij: int, wins_ji: int) -> float:
    """``N * KL(p, 1/2)`` of a pair with ``wins_ij`` and ``wins_ji`` wins (0 before any duel)."""
    total = wins_ij + wins_ji
    if total == 0:
        return 0.0
    evidence = 0.0
    # n * KL(p, 1/2) = sum over outcomes of count * log(2 * count / n), with 0 log 0 = 0.
    for count in (wins_ij, wins_ji):
        if count > 0:
            evidence += count * np.log(2.0 * count / total)
    return evidence


@numba.njit(cache=True, nogil=True)
def safeguard_threshold(n_duels: int, start: int, origin: int = 1) -> float:
    """The evidence a pair needs to be decided after ``n_duels`` duels: ``log(n_duels / origin)``,
    or -1 while the safeguard is off (``start <= 0`` or ``n_duels <= start``).

    ``origin`` 1 (the default) is the run's clock, ``log t``; ``origin = start`` starts the clock
    with the safeguard, so that its checks come gradually rather than all at once."""
    if start <= 0 or n_duels <= start:
        return -1.0
    return np.log(n_duels / origin)


@numba.njit(cache=True, nogil=True)
def reset_safeguard(evidence, status, bounds, expiry):  # pragma: no cover - compiled
    """The safeguard's arrays before the first duel."""
    evidence[:] = 0.0
    status[:] = 0
    bounds[0, :] = 0
    bounds[1, :] = evidence.shape[0] - 1
    expiry[0] = -np.inf  # the first active step rebuilds the statuses


@numba.njit(cache=True, nogil=True)
def _pair_status(wins, evidence, threshold, i, j):  # pragma: no cover - compiled
    """+1: the pair is decided for ``i``; -1: for ``j``; 0: undecided."""
    if evidence[i, j] < threshold or wins[i, j] == wins[j, i]:
        return 0
    return 1 if wins[i, j] > wins[j, i] else -1


@numba.njit(cache=True, nogil=True)
def _set_status(i, j, value, status, bounds):  # pragma: no cover - compiled
    """Change the pair's status to ``value`` and the two arms' bounds with it."""
    old = status[i, j]
    if old == value:
        return
    if old != 0:
        leader, trailer = (i, j) if old > 0 else (j, i)
        bounds[0, leader] -= 1
        bounds[1, trailer] += 1
    if value != 0:
        leader, trailer = (i, j) if value > 0 else (j, i)
        bounds[0, leader] += 1
        bounds[1, trailer] -= 1
    status[i, j] = value
    status[j, i] = -value


@numba.njit(cache=True, nogil=True)
def _rebuild(wins, threshold, evidence, status, bounds, expiry):  # pragma: no cover - compiled
    """Every pair's status at ``threshold``, the bounds and the expiry, from the counts."""
    n_arms = wins.shape[0]
    smallest = np.inf
    for i in range(n_arms):
        for j in range(i + 1, n_arms):
            value = _pair_status(wins, evidence, threshold, i, j)
            _set_status(i, j, value, status, bounds)
            if value != 0 and evidence[i, j] < smallest:
                smallest = evidence[i, j]
    expiry[0] = smallest


@numba.njit(cache=True, nogil=True)
def _check_arrays(wins, evidence, status, bounds, expiry, first, second):  # pragma: no cover - compiled
    """The arrays are the caller's and compiled code does not check indices: refuse shapes that
    do not match ``wins`` and arms outside it before anything is written."""
    n_arms = wins.shape[0]
    if (wins.shape[1] != n_arms or evidence.shape[0] != n_arms or evidence.shape[1] != n_arms
            or status.shape[0] != n_arms or status.shape[1] != n_arms or bounds.shape[0] != 2
            or bounds.shape[1] != n_arms or expiry.shape[0] < 1):
        raise ValueError("safeguard arrays must be evidence (K, K), status (K, K), bounds (2, K) and expiry (1,) "
                         "for the K arms of wins (K, K)")
    if first < 0 or first >= n_arms or second < 0 or second >= n_arms:
        raise ValueError("the duel's arms must lie in 0..K-1")


@numba.njit(cache=True, nogil=True)
def safeguard_observe(wins, first, second, threshold, evidence, status, bounds, expiry):  # pragma: no cover - compiled
    """After the duel ``(first, second)`` was counted in ``wins``: refresh that pair's evidence
    and, when the safeguard is on (``threshold`` is the next step's, >= 0), its status."""
    _check_arrays(wins, evidence, status, bounds, expiry, first, second)
    if first == second:
        return
    value = pair_evidence(wins[first, second], wins[second, first])
    evidence[first, second] = value
    evidence[second, first] = value
    if threshold >= 0.0 and expiry[0] > -np.inf:
        decided = _pair_status(wins, evidence, threshold, first, second)
        _set_status(first, second, decided, status, bounds)
        if decided != 0 and value < expiry[0]:
            expiry[0] = value


@numba.njit(cache=True, nogil=True)
def _matters(wins, upper, best_lower, arm, other):  # pragma: no cover - compiled
    """Whether deciding the pair ``{arm, other}`` can still change ``arm``'s part in finding a
    winner: it can still be won by ``arm`` (its upper bound at least every lower bound, and it
    does not trail the pair in the counts), or losing it lowers an upper bound that exceeds
    every lower bound (an arm that blocks any confident winner)."""
    if upper[arm] > best_lower:
        return True
    return upper[arm] == best_lower and wins[arm, other] >= wins[other, arm]


@numba.njit(cache=True, nogil=True)
def _useful(wins, upper, best_lower, i, j):  # pragma: no cover - compiled
    """Rule 1 and 4 of the module docstring: an undecided pair whose decision can still matter."""
    return _matters(wins, upper, best_lower, i, j) or _matters(wins, upper, best_lower, j, i)


@numba.njit(cache=True, nogil=True)
def _least_played_useful(wins, status, upper, best_lower):  # pragma: no cover - compiled
    """The least-played undecided pair that matters, as ``(i * K + j, duels)`` with ``i < j``
    (the first such pair on ties), or ``(-1, -1)`` when there is none."""
    n_arms = wins.shape[0]
    best_pair, best_count = -1, -1
    for i in range(n_arms):
        for j in range(i + 1, n_arms):
            if status[i, j] != 0 or not _useful(wins, upper, best_lower, i, j):
                continue
            count = wins[i, j] + wins[j, i]
            if best_pair < 0 or count < best_count:
                best_pair, best_count = i * n_arms + j, count
    return best_pair, best_count


@numba.njit(cache=True, nogil=True)
def safeguarded_duel(wins, threshold, evidence, status, bounds, expiry, first, second):  # pragma: no cover - compiled
    """The duel to play instead of the network's ``(first, second)`` (the same duel when the
    safeguard lets it through), as ``first * K + second``; ``threshold`` < 0: the safeguard is
    off and the duel goes through."""
    n_arms = wins.shape[0]
    if threshold < 0.0:
        return first * n_arms + second
    _check_arrays(wins, evidence, status, bounds, expiry, first, second)
    if threshold > expiry[0]:
        _rebuild(wins, threshold, evidence, status, bounds, expiry)
    lower, upper = bounds[0], bounds[1]
    undecided = first != second and status[first, second] == 0
    # The arm the duel exploits: ``first`` of a self-duel, the leader of a decided pair, the
    # leader in the counts of an undecided one (``first`` on a tie).
    if first == second:
        arm = first
    elif undecided:
        arm = first if wins[first, second] >= wins[second, first] else second
    else:
        arm = first if status[first, second] > 0 else second
    # Rule 1: a confident winner -- every pair decided for it (a Condorcet winner), or a lower
    # bound that no other arm's upper bound exceeds -- is exploited; nothing else teaches
    # anything that matters any more.
    top, second_top, top_arm, best_lower = -1, -1, -1, 0
    for i in range(n_arms):
        if upper[i] > top:
            top, second_top, top_arm = upper[i], top, i
        elif upper[i] > second_top:
            second_top = upper[i]
        if lower[i] > best_lower:
            best_lower = lower[i]
    winner = -1
    for i in range(n_arms):
        largest_other = second_top if i == top_arm else top
        if lower[i] == n_arms - 1 or lower[i] >= largest_other:
            if i == arm:
                return arm * n_arms + arm
            if winner < 0 or lower[i] > lower[winner]:
                winner = i
    if winner >= 0:
        return winner * n_arms + winner
    # Rule 2: an undecided pair whose decision can still matter is played as chosen, unless the
    # network keeps to it while the checks of other such pairs wait: it may lead the
    # least-played one by a factor of two plus log t duels.
    if undecided and _useful(wins, upper, best_lower, first, second):
        least_count = _least_played_useful(wins, status, upper, best_lower)[1]
        if wins[first, second] + wins[second, first] <= 2 * least_count + threshold:
            return first * n_arms + second
    # Rule 3: the Condorcet candidates are tested.
    condorcet_duel = _condorcet_duel(wins, threshold, status, lower, upper, best_lower, arm)
    if condorcet_duel >= 0:
        return condorcet_duel
    # Rule 4: every arm has lost a decided pair (no Condorcet winner): the least-played pair
    # whose decision can still matter.  There is one: the arm with the largest lower bound is
    # not a confident winner, so either it has an undecided pair, which it leads or ties (it
    # can win it) or trails with an upper bound above its lower (it blocks), or all its pairs
    # are decided and an arm whose upper bound exceeds its lower blocks it -- that arm has an
    # undecided pair, which matters since its upper bound exceeds every lower bound.
    least_played = _least_played_useful(wins, status, upper, best_lower)[0]
    if least_played >= 0:
        return least_played
    return arm * n_arms + arm  # unreachable (see above); keeps the kernel total


@numba.njit(cache=True, nogil=True)
def _empirical_copeland(wins, i):  # pragma: no cover - compiled
    """How many of ``i``'s pairs ``i`` leads in the counts (undecided or not)."""
    score = 0
    for j in range(wins.shape[0]):
        if j != i and wins[i, j] > wins[j, i]:
            score += 1
    return score


@numba.njit(cache=True, nogil=True)
def _condorcet_duel(wins, threshold, status, lower, upper, best_lower, arm):  # pragma: no cover - compiled
    """Rule 3 of the module docstring: the duel that tests the Condorcet candidates, as
    ``first * K + second``, or -1 when every arm has lost a decided pair (no candidate left)."""
    n_arms = wins.shape[0]
    unrefuted, leader, leader_score = 0, -1, -1
    for i in range(n_arms):
        if upper[i] == n_arms - 1:
            unrefuted += 1
            score = _empirical_copeland(wins, i)
            if leader < 0 or score > leader_score:
                leader, leader_score = i, score
    if unrefuted == 0:
        return -1
    if upper[arm] == n_arms - 1:
        leader = arm  # the network's own choice, while nothing refutes it
    if unrefuted == 1 and lower[leader] < best_lower:
        # Another arm has won more decided pairs than the lone candidate: a Condorcet winner
        # would eventually have won as many, a lone candidate of a problem without one (whose
        # pairs may all be close to 1/2, so that no count is evidence) need not.  Its
        # least-played undecided pair is checked (it has one, its lower bound being below K - 1).
        best_pair, best_count = -1, -1
        for j in range(n_arms):
            if j == leader or status[leader, j] != 0:
                continue
            count = wins[leader, j] + wins[j, leader]
            if best_pair < 0 or count < best_count:
                best_pair, best_count = leader * n_arms + j, count
        return best_pair
    if unrefuted == 1:
        # Every other arm has lost a decided pair: if the problem has a Condorcet winner, it is
        # the leader.  The leader is exploited while it also leads each of its pairs in the
        # counts with at least ``threshold`` duels; otherwise the least-played such pair is
        # checked.  The floor of log t duels per pair makes the counts of a leader that is not a
        # Condorcet winner converge to a pair it loses, which is then checked until decided.
        best_pair, best_count = -1, -1
        for j in range(n_arms):
            if j == leader:
                continue
            count = wins[leader, j] + wins[j, leader]
            if wins[leader, j] <= wins[j, leader] or count < threshold:
                if best_pair < 0 or count < best_count:
                    best_pair, best_count = leader * n_arms + j, count
        if best_pair < 0:
            return leader * n_arms + leader
        return best_pair
    # Several arms have lost no decided pair: refute the others, as RMED1 does (Komiyama et
    # al., COLT 2015, Algorithm 1, lines 8-10: an arm is compared with the arm that beats it most
    # in the counts).  Each candidate's most promising undecided pair is the one with its lowest
    # smoothed share of wins, (wins + 1) / (duels + 2), so that an unplayed pair counts as a tie;
    # of those, the least-played is checked, so the candidates take turns.  The leader takes its
    # turn too, as every arm of RMED1's candidate list does, against the other candidates it does
    # not lead in the counts (none: it is exploited in the others' place): without that turn, a
    # pair of another candidate tied at exactly 1/2 could stay its lowest share for good, while
    # the pair of the two candidates, whose decision refutes one of them, is never played.
    best_pair, best_count = -1, -1
    for j in range(n_arms):
        if upper[j] != n_arms - 1:
            continue
        rival, rival_share, rival_count = -1, 2.0, -1
        least, least_count = -1, -1
        for m in range(n_arms):
            if m == j or status[j, m] != 0 or (j == leader and (wins[j, m] > wins[m, j] or upper[m] != n_arms - 1)):
                continue
            count = wins[j, m] + wins[m, j]
            share = (wins[j, m] + 1.0) / (count + 2.0)
            if rival < 0 or share < rival_share or (share == rival_share and count < rival_count):
                rival, rival_share, rival_count = m, share, count
            if least < 0 or count < least_count:
                least, least_count = m, count
        # The counts' strongest beater may be a near tie whose share is well estimated while the
        # true strongest beater, unluckily behind in few duels, is never played again: the rival's
        # pair may lead the candidate's least-played one by a factor of ten plus log t duels (a
        # looser bound than rule 2's: the rival is usually right, and every duel past the bound
        # goes to a pair that is usually not).
        if rival >= 0 and rival_count > 10 * least_count + threshold:
            rival, rival_count = least, least_count
        if rival >= 0 and (best_pair < 0 or rival_count < best_count):
            best_pair, best_count = j * n_arms + rival, rival_count
    return best_pair
