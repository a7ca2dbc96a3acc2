"""The pair reduction of Sup-KLUCB: a K-armed dueling bandit seen as a K̄-armed ordinary bandit.

Agrawal and Chaporkar (*KLUCB Approach to Copeland Bandits*, 2019, §3 and Algorithm 1) turn a
K-armed dueling problem into a multi-armed bandit whose arms ("super-arms") are the unordered
pairs of arms, self-pairs included::

    k <-> (i, j),  0 <= i <= j < K,  K̄ = K (K + 1) / 2,  lexicographic order
    (0,0), (0,1), ..., (0,K-1), (1,1), (1,2), ..., (K-1,K-1)

The "mean" of super-arm ``k = (i, j)`` is ``mu_k = Sup_i * Sup_j``, the product of the two arms'
plug-in scores.  The paper defines ``Sup_i`` for arms but does not say which duels estimate it;
here the scores are computed on the empirical preference matrix built from **every** non-self
duel so far, the estimate that uses all the information: one duel moves the mean of many
super-arms, and a self-duel moves nothing.  Scores are normalised to ``[0, 1]``:

* ``"copeland"`` -- ``Sup_i = #{j != i : mu_hat_ij > 1/2} / (K - 1)``; a pair at exactly 1/2
  (e.g. unplayed) counts for neither side;
* ``"borda"`` -- ``Sup_i = b_hat_i = (1 / (K - 1)) sum_{j != i} mu_hat_ij`` with
  ``mu_hat_ij = 1/2`` for an unplayed pair.

The logic lives here once, in two forms:

* Numba kernels (``numba.njit``) that compiled agents call on their own arrays -- indexing
  (:func:`super_arm_index`, :func:`super_arm_pair`, :func:`pair_tables`), scores
  (:func:`arm_score`, :func:`plugin_scores`), means (:func:`super_arm_means`,
  :func:`refresh_arm_means`) and the incremental update (:func:`record_scored_duel`);
* :class:`PairReduction`, a small Python object over the same kernels for plain Python code such
  as the Gymnasium reduction wrapper (action space ``Discrete(K̄)``, reward = the estimated
  ``Sup_i * Sup_j`` of the chosen super-arm).

Pair statistics: ``wins[i, j]`` counts the duels of the unordered pair ``{i, j}`` won by
``i``; a duel ``(i, j)`` and a duel ``(j, i)`` update the same counts (the order of the two
arms in a duel carries no information about ``P``).

Example
-------
>>> reduction = PairReduction(3)
>>> reduction.n_super_arms, reduction.pair(4), reduction.index(2, 1)
(6, (1, 2), 4)
>>> reduction.update(0, 1, True)
>>> reduction.scores().tolist(), reduction.mean(reduction.index(0, 0))
([0.5, 0.0, 0.0], 0.25)
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from dueling_gym.validation import check_arm, check_discrete_action, check_n_arms, check_outcome, read_only

__all__ = [
    "COPELAND",
    "BORDA",
    "SCORE_KINDS",
    "score_kind",
    "n_super_arms",
    "super_arm_index",
    "super_arm_pair",
    "pair_tables",
    "arm_score",
    "plugin_scores",
    "super_arm_means",
    "refresh_arm_means",
    "record_scored_duel",
    "PairReduction",
]

#: Integer code of the Copeland plug-in score, as the Numba kernels take it.
COPELAND = 0
#: Integer code of the Borda plug-in score, as the Numba kernels take it.
BORDA = 1
#: Score name -> integer code.
SCORE_KINDS: dict[str, int] = {"copeland": COPELAND, "borda": BORDA}


def score_kind(score: str) -> int:
    """The integer code of a score name (``"copeland"`` or ``"borda"``, case-insensitive).

    Raises
    ------
    TypeError
        If ``score`` is not a string.
    ValueError
        If the name is unknown.
    """
    if not isinstance(score, str):
        raise TypeError(f"score must be 'copeland' or 'borda', got {score!r}")
    key = score.lower()
    if key not in SCORE_KINDS:
        raise ValueError(f"score must be one of {sorted(SCORE_KINDS)}, got {score!r}")
    return SCORE_KINDS[key]


# ---------------------------------------------------------------------------------------------
# Indexing: super-arm k <-> unordered pair (i, j), i <= j, lexicographic
# ---------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def n_super_arms(n_arms: int) -> int:
    """``K̄ = K (K + 1) / 2``, the number of unordered pairs of ``K`` arms, self-pairs included."""
    return n_arms * (n_arms + 1) // 2


@numba.njit(cache=True, nogil=True)
def _row_offset(first: int, n_arms: int) -> int:
    # super-arm index of (first, first): K + (K-1) + ... over the rows before ``first``
    return first * (2 * n_arms - first + 1) // 2


@numba.njit(cache=True, nogil=True)
def super_arm_index(first: int, second: int, n_arms: int) -> int:
    """The super-arm ``k`` of the unordered pair ``{first, second}`` (order of the two arms is irrelevant).

    Lexicographic over ``i <= j``: ``k = i K - i (i - 1) / 2 + (j - i)`` with ``i = min``,
    ``j = max``.  No range check (callers pass valid arms).
    """
    if first > second:
        first, second = second, first
    return _row_offset(first, n_arms) + second - first


@numba.njit(cache=True, nogil=True)
def super_arm_pair(k: int, n_arms: int) -> tuple[int, int]:
    """The pair ``(i, j)``, ``i <= j``, of super-arm ``k`` (inverse of :func:`super_arm_index`)."""
    # Row i is the largest with offset(i) <= k; start from the real root and correct rounding.
    b = 2.0 * n_arms + 1.0
    first = int((b - math.sqrt(max(b * b - 8.0 * k, 0.0))) / 2.0)
    if first < 0:
        first = 0
    if first > n_arms - 1:
        first = n_arms - 1
    while first > 0 and _row_offset(first, n_arms) > k:
        first -= 1
    while first < n_arms - 1 and _row_offset(first + 1, n_arms) <= k:
        first += 1
    return first, first + k - _row_offset(first, n_arms)


@numba.njit(cache=True, nogil=True)
def pair_tables(n_arms: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lookup tables of the indexing, for kernels that need it every step.

    Returns
    -------
    firsts, seconds : ndarray of int64, shape (K̄,)
        ``(firsts[k], seconds[k])`` is the pair of super-arm ``k`` (``firsts[k] <= seconds[k]``).
    index : ndarray of int64, shape (K, K)
        ``index[i, j] = index[j, i]`` is the super-arm of the pair ``{i, j}``.
    """
    count = n_super_arms(n_arms)
    firsts = np.empty(count, dtype=np.int64)
    seconds = np.empty(count, dtype=np.int64)
    index = np.empty((n_arms, n_arms), dtype=np.int64)
    k = 0
    for first in range(n_arms):
        for second in range(first, n_arms):
            firsts[k] = first
            seconds[k] = second
            index[first, second] = k
            index[second, first] = k
            k += 1
    return firsts, seconds, index


# ---------------------------------------------------------------------------------------------
# Plug-in scores and super-arm means
# ---------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def arm_score(wins: np.ndarray, arm: int, kind: int) -> float:
    """The plug-in normalised score ``Sup_arm`` of one arm from the wins matrix.

    Parameters
    ----------
    wins : ndarray, shape (K, K)
        ``wins[i, j]`` = duels of the pair ``{i, j}`` won by ``i`` (integer or float counts).
    arm : int
        The arm.
    kind : int
        :data:`COPELAND` (``#{j != arm : mu_hat > 1/2} / (K - 1)``, ties at 1/2 count for
        neither side) or :data:`BORDA` (``b_hat = mean over j != arm of mu_hat``, ``1/2`` for an
        unplayed pair).

    Returns
    -------
    float
        A value in ``[0, 1]``.  Every other routine of this module derives scores from this
        function, so incremental and from-scratch computations agree bit for bit.
    """
    n_arms = wins.shape[0]
    if kind == COPELAND:
        beaten = 0
        for other in range(n_arms):
            if other != arm and wins[arm, other] > wins[other, arm]:
                beaten += 1
        return beaten / (n_arms - 1)
    total = 0.0
    for other in range(n_arms):
        if other == arm:
            continue
        won = wins[arm, other]
        played = won + wins[other, arm]
        total += 0.5 if played == 0 else won / played
    return total / (n_arms - 1)


@numba.njit(cache=True, nogil=True)
def plugin_scores(wins: np.ndarray, kind: int, out: np.ndarray) -> np.ndarray:
    """``out[i] = Sup_i`` for every arm (see :func:`arm_score`); returns ``out``."""
    for arm in range(wins.shape[0]):
        out[arm] = arm_score(wins, arm, kind)
    return out


@numba.njit(cache=True, nogil=True)
def super_arm_means(scores: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out[k] = Sup_i * Sup_j`` for every super-arm ``k = (i, j)``; returns ``out``.

    A self-pair gets ``Sup_i ** 2``.  ``scores`` has shape ``(K,)``, ``out`` shape ``(K̄,)``.
    """
    n_arms = scores.shape[0]
    k = 0
    for first in range(n_arms):
        for second in range(first, n_arms):
            out[k] = scores[first] * scores[second]
            k += 1
    return out


@numba.njit(cache=True, nogil=True)
def refresh_arm_means(scores: np.ndarray, means: np.ndarray, arm: int, changed: np.ndarray) -> int:
    """Recompute the ``K`` super-arm means that involve ``arm`` after its score changed.

    Parameters
    ----------
    scores : ndarray, shape (K,)
        Current scores.
    means : ndarray, shape (K̄,)
        Super-arm means, updated in place (the values equal :func:`super_arm_means` exactly).
    arm : int
        The arm whose score changed.
    changed : ndarray of int64, shape (>= K,)
        Receives the super-arms whose mean actually changed, in its first entries.

    Returns
    -------
    int
        How many super-arms changed (the filled length of ``changed``).
    """
    n_arms = scores.shape[0]
    n_changed = 0
    for other in range(n_arms):
        if other < arm:
            k = super_arm_index(other, arm, n_arms)
            value = scores[other] * scores[arm]
        else:
            k = super_arm_index(arm, other, n_arms)
            value = scores[arm] * scores[other]
        if means[k] != value:
            means[k] = value
            changed[n_changed] = k
            n_changed += 1
    return n_changed


@numba.njit(cache=True, nogil=True)
def record_scored_duel(wins: np.ndarray, scores: np.ndarray, first: int, second: int, first_won: bool, kind: int) -> int:
    """Add one duel outcome to ``wins`` and refresh the scores of its two arms.

    A self-duel (``first == second``) carries no information and changes nothing.

    Returns
    -------
    int
        Bit mask of the arms whose score changed: ``1`` for ``first``, ``2`` for ``second``.
    """
    if first == second:
        return 0
    if first_won:
        wins[first, second] += 1
    else:
        wins[second, first] += 1
    mask = 0
    value = arm_score(wins, first, kind)
    if value != scores[first]:
        scores[first] = value
        mask |= 1
    value = arm_score(wins, second, kind)
    if value != scores[second]:
        scores[second] = value
        mask |= 2
    return mask


# ---------------------------------------------------------------------------------------------
# Python front end
# ---------------------------------------------------------------------------------------------
class PairReduction:
    """The pair reduction as a plain Python object (for wrappers and scripts).

    Keeps the pair statistics of every non-self duel, the plug-in scores and the super-arm
    means, updated incrementally by the same Numba kernels that compiled agents use.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    score : {"copeland", "borda"}, default "copeland"
        The plug-in score ``Sup_i`` (see the module docstring).

    Attributes
    ----------
    n_arms : int
        ``K``.
    score : str
        The score name.
    n_super_arms : int
        ``K̄ = K (K + 1) / 2``.
    wins : ndarray of int64, shape (K, K)
        Pair statistics (read-only view); ``wins[i, j]`` = duels of ``{i, j}`` won by ``i``.
    pairs : ndarray of int64, shape (K̄, 2)
        ``pairs[k] = (i, j)``, ``i <= j`` (read-only).

    Examples
    --------
    A reduction wrapper's step, for super-arm ``k``::

        first, second = reduction.pair(k)
        first_won = duel(first, second)         # the dueling environment
        reduction.update(first, second, first_won)
        reward = reduction.mean(k)              # estimated Sup_first * Sup_second
    """

    def __init__(self, n_arms: int, score: str = "copeland"):
        self.n_arms = check_n_arms(n_arms)
        self._kind = score_kind(score)
        self.score = score.lower()
        self.n_super_arms = int(n_super_arms(self.n_arms))
        firsts, seconds, index = pair_tables(self.n_arms)
        self._pairs = read_only(np.stack([firsts, seconds], axis=1))
        self._index = index
        self._changed = np.empty(self.n_arms, dtype=np.int64)
        self.reset()

    def reset(self) -> None:
        """Forget every duel (scores and means return to their no-data values)."""
        self._wins = np.zeros((self.n_arms, self.n_arms), dtype=np.int64)
        self._scores = plugin_scores(self._wins, self._kind, np.empty(self.n_arms))
        self._means = super_arm_means(self._scores, np.empty(self.n_super_arms))

    # -- indexing -----------------------------------------------------------------------------
    @property
    def pairs(self) -> NDArray[np.int64]:
        """``pairs[k] = (i, j)`` with ``i <= j``, lexicographic (read-only)."""
        return self._pairs

    def pair(self, k: int) -> tuple[int, int]:
        """The pair ``(i, j)``, ``i <= j``, of super-arm ``k``."""
        k = self._check_super_arm(k)
        return int(self._pairs[k, 0]), int(self._pairs[k, 1])

    def index(self, first: int, second: int) -> int:
        """The super-arm of the unordered pair ``{first, second}``."""
        first, second = self._check_arm(first), self._check_arm(second)
        return int(self._index[first, second])

    # -- statistics ---------------------------------------------------------------------------
    def update(self, first: int, second: int, first_won: bool) -> None:
        """Record the outcome of duel ``(first, second)``; a self-duel changes nothing."""
        first, second = self._check_arm(first), self._check_arm(second)
        mask = record_scored_duel(self._wins, self._scores, first, second, check_outcome(first_won), self._kind)
        if mask & 1:
            refresh_arm_means(self._scores, self._means, first, self._changed)
        if mask & 2:
            refresh_arm_means(self._scores, self._means, second, self._changed)

    @property
    def wins(self) -> NDArray[np.int64]:
        """Pair statistics ``W`` (read-only view)."""
        return read_only(self._wins.view())

    def scores(self) -> NDArray[np.float64]:
        """The plug-in scores ``Sup_i`` in ``[0, 1]`` (a copy)."""
        return self._scores.copy()

    def means(self) -> NDArray[np.float64]:
        """The super-arm means ``mu_k = Sup_i * Sup_j`` in ``[0, 1]``, shape ``(K̄,)`` (a copy)."""
        return self._means.copy()

    def mean(self, k: int) -> float:
        """The mean ``Sup_i * Sup_j`` of super-arm ``k`` (the reduction's reward for ``k``)."""
        return float(self._means[self._check_super_arm(k)])

    def best_arm(self) -> int:
        """``argmax_i Sup_i`` (lowest index on ties): the reduction's recommended arm."""
        return int(np.argmax(self._scores))

    def _check_arm(self, arm: Any) -> int:
        return check_arm(arm, self.n_arms)

    def _check_super_arm(self, k: Any) -> int:
        return check_discrete_action(k, self.n_super_arms, name="super-arm")

    def __repr__(self) -> str:
        return f"PairReduction(n_arms={self.n_arms}, score={self.score!r})"
