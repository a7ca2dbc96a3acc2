"""How settled the winners of an estimated preference matrix are, from its win, tie and loss counts.

An estimate such as :func:`~dueling_gym.problems.ranker_evaluation` prints its Copeland winners
and its Condorcet winner; with too few comparisons another seed prints others.
:func:`structure_confidence` estimates the probability that the printed ones are right.

**Model.**  Each comparison of a pair ``i < j`` is a win, a tie or a loss of ``i`` with
probabilities ``(p_w, p_t, p_l)``, so ``P[i, j] = p_w + p_t / 2`` and ``P[i, j] > 1/2`` exactly
when ``p_w > p_l``.  Under the uniform Dirichlet prior the posterior of ``(p_w, p_t, p_l)`` is
``Dirichlet(1 + wins, 1 + ties, 1 + losses)``, and ``p_w / (p_w + p_l)`` is then
``Beta(1 + wins, 1 + losses)``, independent of the ties: a tie moves ``P[i, j]`` towards 1/2
but says nothing about its side.  (Counting a tie as half a win of a Bernoulli trial instead
would treat the pair as noisier than it is, and understate the confidence of pairs that tie
often.)  Each posterior draw decides every pair's side; its Copeland winner set and Condorcet
winner are compared with the printed ones, and the shares of agreeing draws are returned.  The
pairs are independent, as their comparisons are (each pair draws from its own generator).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.validation import check_integer, check_rng

__all__ = ["StructureConfidence", "structure_confidence", "CONFIDENCE_WARNING_LEVEL"]

#: Below this probability of either printed structure, ``dueling-gym problems`` prints a warning.
CONFIDENCE_WARNING_LEVEL = 0.95
#: Posterior draws whose pair sides are held at once (draws x pairs booleans).
_DRAWS_AT_ONCE = 256


@dataclass(frozen=True)
class StructureConfidence:
    """The printed winner structure of an estimate and the posterior probability that it is right.

    Attributes
    ----------
    copeland_winners : tuple of int
        The Copeland winners of the counts (``i`` beats ``j`` when it won more than it lost).
    condorcet_winner : int or None
        The Condorcet winner of the counts, or None.
    p_copeland : float
        Posterior probability that the Copeland winner set is exactly ``copeland_winners``.
    p_condorcet : float
        Posterior probability that the Condorcet winner is ``condorcet_winner`` (for None: that
        there is none).
    draws : int
        The posterior draws behind both (their Monte-Carlo standard error is at most
        ``0.5 / sqrt(draws)``).
    """

    copeland_winners: tuple[int, ...]
    condorcet_winner: int | None
    p_copeland: float
    p_condorcet: float
    draws: int

    @property
    def settled(self) -> bool:
        """Whether both probabilities reach :data:`CONFIDENCE_WARNING_LEVEL`."""
        return min(self.p_copeland, self.p_condorcet) >= CONFIDENCE_WARNING_LEVEL

    def describe(self) -> dict[str, Any]:
        """As plain values (provenance)."""
        return {"copeland_winners": list(self.copeland_winners), "condorcet_winner": self.condorcet_winner,
                "p_copeland": self.p_copeland, "p_condorcet": self.p_condorcet, "draws": self.draws,
                "method": "posterior draws, Dirichlet(1 + wins, 1 + ties, 1 + losses) per pair"}


def structure_confidence(wins: ArrayLike, ties: ArrayLike, *, draws: int = 2000,
                         rng: np.random.Generator) -> StructureConfidence:
    """The probability that the Copeland winner set and the Condorcet winner of the counts are right.

    See the module's notes for the model.

    Parameters
    ----------
    wins : array_like of int, shape (K, K)
        ``wins[i, j]``: comparisons of the pair that ``i`` won (zero diagonal).
    ties : array_like of int, shape (K, K)
        Symmetric tie counts (they do not move a pair's side; they are checked for shape and sign).
    draws : int, default 2000
        Posterior draws.
    rng : numpy.random.Generator
        The source of the draws.

    Returns
    -------
    StructureConfidence

    Raises
    ------
    TypeError
        ``rng`` is not a Generator, ``draws`` not an integer, the counts not integers.
    ValueError
        Counts that are not square, negative, with a non-zero diagonal, or ties that are not symmetric.
    """
    rng = check_rng(rng)
    draws = check_integer("draws", draws, minimum=1)
    wins, ties = _counts("wins", wins), _counts("ties", ties)
    if wins.shape != ties.shape:
        raise ValueError(f"wins and ties must have the same shape, got {wins.shape} and {ties.shape}")
    if not np.array_equal(ties, ties.T):
        raise ValueError("ties must be symmetric (ties[i, j] == ties[j, i])")
    n_arms = wins.shape[0]
    firsts, seconds = np.triu_indices(n_arms, 1)
    first_wins, second_wins = wins[firsts, seconds], wins[seconds, firsts]
    beats = np.zeros((n_arms, n_arms), dtype=bool)
    beats[firsts, seconds] = first_wins > second_wins
    beats[seconds, firsts] = second_wins > first_wins
    copeland_scores = beats.sum(axis=1)
    printed_set = copeland_scores == copeland_scores.max()
    condorcet = np.flatnonzero(copeland_scores == n_arms - 1)
    printed_condorcet = int(condorcet[0]) if condorcet.size else -1
    # Each draw: a pair's side is Beta(1 + wins, 1 + losses) > 1/2; a Copeland score counts the
    # pairs won, through the first ranker's and the second ranker's incidence of every pair.
    # (float32 products count exactly: a score is at most K - 1.)
    alpha, beta = first_wins + 1.0, second_wins + 1.0
    as_first = np.zeros((firsts.size, n_arms), dtype=np.float32)
    as_first[np.arange(firsts.size), firsts] = 1.0
    as_second = np.zeros((firsts.size, n_arms), dtype=np.float32)
    as_second[np.arange(firsts.size), seconds] = 1.0
    same_set = same_condorcet = 0
    for start in range(0, draws, _DRAWS_AT_ONCE):
        size = min(_DRAWS_AT_ONCE, draws - start)
        first_side = (rng.beta(alpha, beta, size=(size, firsts.size)) > 0.5).astype(np.float32)
        scores = np.rint(first_side @ as_first + (1.0 - first_side) @ as_second).astype(np.int64)
        best = scores.max(axis=1, keepdims=True)
        same_set += int(np.all((scores == best) == printed_set, axis=1).sum())
        has_condorcet = best[:, 0] == n_arms - 1
        drawn = np.where(has_condorcet, np.argmax(scores, axis=1), -1)
        same_condorcet += int((drawn == printed_condorcet).sum())
    return StructureConfidence(tuple(int(arm) for arm in np.flatnonzero(printed_set)),
                               None if printed_condorcet < 0 else printed_condorcet,
                               same_set / draws, same_condorcet / draws, draws)


def _counts(name: str, value: ArrayLike) -> NDArray[np.int64]:
    array = np.asarray(value)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer counts, got dtype {array.dtype}")
    if array.ndim != 2 or array.shape[0] != array.shape[1] or array.shape[0] < 2:
        raise ValueError(f"{name} must be a square K x K array with K >= 2, got shape {array.shape}")
    if np.any(array < 0) or np.any(np.diagonal(array)):
        raise ValueError(f"{name} must be non-negative with a zero diagonal")
    return array.astype(np.int64)
