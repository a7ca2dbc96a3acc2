"""The Thompson check of the pair policy: when the network exploits an arm, a posterior sample of the
preferences decides whether it may (dueling-gym's own design; no paper).

A network trained on runs of a given length may commit to an arm on evidence that a longer run
would overturn, and then never duel that arm's pairs again (linear regret).  The check asks, each
time the network proposes a self-duel ``(i, i)``, what Thompson sampling would: it samples every
pair's preference from its posterior, ``theta_ab ~ Beta(W_ab + 1, W_ba + 1)`` (``W_ab``: wins of
``a`` over ``b``; the uniform prior), and

1. if ``i`` is a Copeland winner of the sample (no arm beats more arms in it) and of the counts
   (no arm leads more pairs), the self-duel stands;
2. otherwise one of the two verdicts does not crown ``i``: let the **rival** ``r`` be a winner
   of that verdict (of the sample's when neither crowns ``i``), the one whose pair with ``i`` has
   the fewest duels (lowest index on ties).  Among the pairs of ``i`` and of ``r`` that are
   **undecided** (evidence ``N KL(p, 1/2)`` below ``log t``, as the safeguard's
   ``pair_evidence`` measures it, or an exact tie in the counts) and whose sampled orientation
   differs from the counts' (a tie in the counts differs from either), the least-played is
   dueled: these are the pairs on which the two verdicts part.  None is when ``i`` cannot reach
   ``r``'s Copeland score whatever their undecided pairs turn out to be (``i``'s decided wins plus
   its undecided pairs fall short of ``r``'s decided wins): a pair of two arms that cannot win, or
   an exact tie, would otherwise be dueled for ever;
3. if there is none, the pair ``(i, r)`` is dueled while it is undecided, and ``r``'s self-duel
   is played once it is decided.  A network that insists on ``i`` is otherwise crowned again by
   every sample that flips a pair of a few duels, for ever: step 1 asks the counts too because the
   sample alone would crown ``i`` whenever it flips one of the rival's thin pairs, and a
   self-duel adds no duel to them.

Only the orientation of each sampled pair matters, so the check draws, for each pair, one uniform
number against the posterior probability that ``a`` beats ``b``, ``P(theta_ab > 1/2) =
P(Binomial(N + 1, 1/2) <= W_ab)`` with ``N = W_ab + W_ba`` (the Beta distribution's tail as a
binomial sum), kept per pair and refreshed when the pair is played: exact up to
:data:`EXACT_POSTERIOR_DUELS` duels, and beyond by the normal approximation with continuity
correction (its error is below ``0.01``, where a sample's orientation is a coin with that bias).

What it guarantees: nothing proved.  A wrong arm ``i`` loses its crown in a sample with a
probability that falls only as the evidence for it grows, and each time it does, duels add
evidence where the sample and the counts disagree, as in Thompson sampling, so a wrong commitment
on thin evidence is revisited at a rate that does not vanish with ``t``; and an arm the counts do
not crown is not exploited while the pairs that would crown it are thin.  What it does not: the
network's non-self duels are not checked (a network that keeps to one decided pair is not caught),
and near ties that matter to the Copeland winner keep being dueled for as long as their posterior
is uncertain, which on a problem of near ties is what the regret is made of.  Against a network
that proposes the same wrong arm every time, the regret grows by less than half from ``10^4`` to
``10^5`` duels on MSLR-5 Condorcet, Cyclic-4 and MultiSol, about twofold on Gap, whose winner
beats an arm at 0.51, and up to eightfold on ArXiv, where the arm insisted on ties another arm
exactly and that pair stays dueled while the winner's own pairs, near ties too, leave the arm a
chance (``tests/test_thompson_check.py``).  ``docs/learned-consistency.md`` reports what it does on the
published matrices.
"""

from __future__ import annotations

import functools
import hashlib
import math
from pathlib import Path

import numba
import numpy as np

from dueling_gym.pair_network.safeguard import pair_evidence

__all__ = ["EXACT_POSTERIOR_DUELS", "posterior_preference", "new_check_arrays", "reset_check",
           "thompson_check_observe", "thompson_checked_duel", "thompson_check_digest"]

#: Duels of a pair up to which ``posterior_preference`` sums the binomial tail exactly.
EXACT_POSTERIOR_DUELS = 200


@functools.lru_cache(maxsize=1)
def thompson_check_digest() -> str:
    """The SHA-256 of this module's source, which identifies the rule (a run of another version is another run).

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


@numba.njit(cache=True, nogil=True)
def posterior_preference(wins_ab: int, wins_ba: int) -> float:
    """``P(theta > 1/2)`` for ``theta ~ Beta(wins_ab + 1, wins_ba + 1)``: the posterior probability,
    under the uniform prior, that ``a`` beats ``b`` (1/2 before any duel)."""
    trials = wins_ab + wins_ba + 1
    if trials <= EXACT_POSTERIOR_DUELS + 1:
        # P(Binomial(trials, 1/2) <= wins_ab), summed term by term in logs.
        log_norm = math.lgamma(trials + 1.0) - trials * math.log(2.0)
        total = 0.0
        for k in range(wins_ab + 1):
            total += math.exp(log_norm - math.lgamma(k + 1.0) - math.lgamma(trials - k + 1.0))
        return min(total, 1.0)
    z = (wins_ab + 0.5 - 0.5 * trials) / (0.5 * math.sqrt(trials))
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def new_check_arrays(n_arms: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fresh ``(posterior, sampled_wins, scores)`` arrays of the check of a run of ``n_arms`` arms.

    ``posterior[a, b]`` is ``posterior_preference`` of the pair's counts (1/2 off the diagonal
    before any duel); the other two are scratch: the sample's orientations (``int8``, K x K) and
    the Copeland scores of the sample and of the counts (``int64``, 2 x K).
    """
    posterior = np.zeros((n_arms, n_arms))
    sampled_wins = np.zeros((n_arms, n_arms), dtype=np.int8)
    scores = np.zeros((2, n_arms), dtype=np.int64)
    reset_check(posterior)
    return posterior, sampled_wins, scores


@numba.njit(cache=True, nogil=True)
def reset_check(posterior):  # pragma: no cover - compiled
    """The posterior of a run before the first duel: every pair a coin."""
    posterior[:] = 0.5


@numba.njit(cache=True, nogil=True)
def _check_pair(wins, posterior, first, second):  # pragma: no cover - compiled
    """Refuse a posterior not sized like the counts, or arms outside them (the loops index both unchecked)."""
    n_arms = wins.shape[0]
    if wins.shape[1] != n_arms or posterior.shape[0] != n_arms or posterior.shape[1] != n_arms:
        raise ValueError("the Thompson check's posterior must be K x K, like the win counts")
    if first < 0 or first >= n_arms or second < 0 or second >= n_arms:
        raise ValueError("the duel's arms must lie in 0..K-1")


@numba.njit(cache=True, nogil=True)
def thompson_check_observe(wins, first, second, posterior):  # pragma: no cover - compiled
    """Refresh the posterior of the pair just played (``wins`` already counts the duel)."""
    _check_pair(wins, posterior, first, second)
    if first != second:
        value = posterior_preference(wins[first, second], wins[second, first])
        posterior[first, second] = value
        posterior[second, first] = 1.0 - value


@numba.njit(cache=True, nogil=True)
def _sample_copeland(posterior, rng, sampled_wins, scores):  # pragma: no cover - compiled
    """One posterior sample's orientations (``sampled_wins[a, b] = 1``: ``a`` beats ``b``) and its
    Copeland scores (``scores[0]``)."""
    n_arms = posterior.shape[0]
    scores[0, :] = 0
    for a in range(n_arms):
        sampled_wins[a, a] = 0
        for b in range(a + 1, n_arms):
            if rng.random() < posterior[a, b]:
                sampled_wins[a, b], sampled_wins[b, a] = 1, 0
                scores[0, a] += 1
            else:
                sampled_wins[a, b], sampled_wins[b, a] = 0, 1
                scores[0, b] += 1


@numba.njit(cache=True, nogil=True)
def _count_copeland(wins, scores):  # pragma: no cover - compiled
    """The counts' Copeland scores (``scores[1]``): the pairs each arm leads strictly."""
    n_arms = wins.shape[0]
    scores[1, :] = 0
    for a in range(n_arms):
        for b in range(a + 1, n_arms):
            if wins[a, b] > wins[b, a]:
                scores[1, a] += 1
            elif wins[b, a] > wins[a, b]:
                scores[1, b] += 1


@numba.njit(cache=True, nogil=True)
def _undecided(wins, threshold, a, b):  # pragma: no cover - compiled
    """Whether the pair's evidence is below ``threshold`` or its counts are tied."""
    return wins[a, b] == wins[b, a] or pair_evidence(wins[a, b], wins[b, a]) < threshold


@numba.njit(cache=True, nogil=True)
def thompson_checked_duel(wins, posterior, sampled_wins, scores, rng, exploited,
                          threshold):  # pragma: no cover - compiled
    """Flat index ``first * K + second`` of the duel to play instead of the self-duel of
    ``exploited`` (the self-duel itself when the sample and the counts both crown it);
    ``threshold`` is ``log t``."""
    n_arms = wins.shape[0]
    _check_pair(wins, posterior, exploited, exploited)
    if (sampled_wins.shape[0] != n_arms or sampled_wins.shape[1] != n_arms or scores.shape[0] != 2
            or scores.shape[1] != n_arms):
        raise ValueError("the Thompson check's scratch arrays must be K x K and 2 x K, like the win counts")
    _sample_copeland(posterior, rng, sampled_wins, scores)
    _count_copeland(wins, scores)
    crowned_in_sample = scores[0, exploited] >= scores[0].max()
    if crowned_in_sample and scores[1, exploited] >= scores[1].max():  # step 1
        return exploited * n_arms + exploited
    # The rival: a winner of the verdict that does not crown the exploited arm, the one whose pair
    # with it has the fewest duels.
    verdict = 1 if crowned_in_sample else 0
    top = scores[verdict].max()
    rival, fewest = -1, -1
    for arm in range(n_arms):
        if scores[verdict, arm] == top:
            duels = wins[exploited, arm] + wins[arm, exploited]
            if rival < 0 or duels < fewest:
                rival, fewest = arm, duels
    # Step 2, unless the exploited arm cannot reach the rival's score whatever its undecided pairs
    # and the rival's turn out to be: no pair of theirs can then crown it.
    upper, lower = 0, 0
    for y in range(n_arms):
        if y != exploited and (wins[exploited, y] > wins[y, exploited] or _undecided(wins, threshold, exploited, y)):
            upper += 1
        if y != rival and wins[rival, y] > wins[y, rival] and not _undecided(wins, threshold, rival, y):
            lower += 1
    first, second, fewest = -1, -1, -1
    for side in range(2 if upper >= lower else 0):
        x = exploited if side == 0 else rival
        for y in range(n_arms):
            if y == x or (side == 1 and y == exploited):  # (exploited, rival) is counted once
                continue
            if not _undecided(wins, threshold, x, y):
                continue
            lead = wins[x, y] - wins[y, x]
            if (sampled_wins[x, y] == 1 and lead <= 0) or (sampled_wins[y, x] == 1 and lead >= 0):
                duels = wins[x, y] + wins[y, x]
                if first < 0 or duels < fewest:
                    first, second, fewest = x, y, duels
    if first >= 0:
        return first * n_arms + second
    # Step 3: the sample agrees with the counts on every undecided pair of the two arms; the pair
    # of the exploited arm and its rival while it is undecided (a self-duel would teach nothing,
    # and a network that insists on its arm would be crowned again by every sample that flips
    # that thin pair), then the rival's self-duel.
    if _undecided(wins, threshold, exploited, rival):
        return exploited * n_arms + rival
    return rival * n_arms + rival
