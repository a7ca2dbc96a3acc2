"""PL-PAC: the best item of a Plackett-Luce model from budgeted QuickSort runs.

Szörényi, Busa-Fekete, Paul, Hüllermeier. *Online Rank Elicitation for Plackett-Luce: A Dueling
Bandits Approach.* NIPS 2015: Algorithm 1 (PLPAC, the PAC-item problem) with its Budgeted
QuickSort subroutine and rank breaking.

* **Budgeted QuickSort**: QuickSort of the active set ``A`` with uniformly random
  pivots, each comparison one duel, aborted once the comparison budget is spent; the output is an
  ordered list of buckets (an unsorted bucket stays a bucket).  The paper's key fact is that under Plackett-Luce the pairwise marginals of this output are the model's
  ``P[i, j] = v_i / (v_i + v_j)`` for every pair it orders, even pairs never dueled.
* **Rank breaking** (Algorithm 1, line 7): every pair of ``A`` in different buckets counts one
  sample, a win for the arm in the better bucket.
* **Confidence and elimination**: ``c_ij = sqrt(ln(4 M² n_ij² / δ) / (2 n_ij))``
  (``M = K`` items, ``n_ij`` samples of the pair); an arm with ``p̂_ij + c_ij < 1/2`` against some
  ``j`` is dropped from ``A``.
* **Stopping**: once some arm ``i`` of ``A`` has ``p̂_ij - c_ij > 1/2 - ε`` against every
  other active ``j``; it is returned, an ε-best item (``P[i, j] > 1/2 - ε`` for every ``j``, so
  ``P[i*, i] < 1/2 + ε``) with probability ``>= 1 - δ`` under Plackett-Luce.

Choices: the budget of one QuickSort run is ``ceil(3 (|A| + 1) ln |A|)`` comparisons, about
1.5 times the expected ``2 |A| ln |A|`` of a complete QuickSort, so that most runs finish;
duelpy uses this budget for its AMPR variant and ``|A| - 1`` pivot steps for PAC-item.  Defaults
``ε = 0.1``, ``δ = 0.05`` as in duelpy (``PlackettLucePACItem``).  Rank breaking, elimination and
the stopping test run after each QuickSort, as in the paper.
"""

from __future__ import annotations

import math
from typing import Generator

import numba
import numpy as np

from dueling_gym.agents.base import PaperLink
from dueling_gym.agents.identification import ConfidentProcedureAgent
from dueling_gym.agents.registry import register_agent
from dueling_gym.validation import check_number

__all__ = ["PLPAC", "budgeted_quicksort"]


@numba.njit(cache=True, nogil=True)
def _after_sort(wins, counts, active, arms, bucket_of, delta, epsilon):
    """The steps after one QuickSort: rank breaking, elimination, stopping test.

    Returns the answer, or -1 to go on.  Works on the active arms only.
    """
    n_arms = wins.shape[0]
    size = arms.shape[0]
    # Rank breaking: each pair in different buckets is one sample, won by the better bucket.
    for a in range(size):
        i = arms[a]
        for b in range(size):
            j = arms[b]
            if i != j and bucket_of[i] != bucket_of[j]:
                counts[i, j] += 1.0
                if bucket_of[i] < bucket_of[j]:
                    wins[i, j] += 1.0
    lower = np.full((size, size), np.inf)
    upper = np.full((size, size), -np.inf)
    for a in range(size):
        for b in range(size):
            i = arms[a]
            j = arms[b]
            if i == j:
                continue
            n = counts[i, j]
            if n > 0:
                mean = wins[i, j] / n
                radius = math.sqrt(math.log(4.0 * n_arms * n_arms * n * n / delta) / (2.0 * n))
                lower[a, b] = mean - radius
                upper[a, b] = mean + radius
            else:
                lower[a, b] = -np.inf
                upper[a, b] = np.inf
    # Elimination: drop every arm some active arm beats with confidence (never all of them).
    keep = np.ones(size, dtype=np.bool_)
    for a in range(size):
        for b in range(size):
            if a != b and upper[a, b] < 0.5:
                keep[a] = False
                break
    if not keep.any():  # impossible on consistent intervals; keep the best worst case
        best = 0
        for a in range(1, size):
            if lower[a].min() > lower[best].min():
                best = a
        keep[best] = True
    for a in range(size):
        if not keep[a]:
            active[arms[a]] = False
    # Stopping test: an arm whose interval lies above 1/2 - epsilon against every other active arm.
    answer = -1
    answer_margin = -np.inf
    for a in range(size):
        if not keep[a]:
            continue
        margin = np.inf
        for b in range(size):
            if b != a and keep[b]:
                margin = min(margin, lower[a, b])
        if margin > 0.5 - epsilon and margin > answer_margin:
            answer = arms[a]
            answer_margin = margin
    return answer


def budgeted_quicksort(arms: list[int], budget: int, rng: np.random.Generator
                       ) -> Generator[tuple[int, int], bool, list[list[int]]]:
    """Budgeted QuickSort as a duel procedure: yields ``(i, pivot)``, receives "``i`` won", returns the buckets.

    Buckets are best first.  When the budget runs out mid-partition, that bucket stays unsorted
    (its arms not yet compared with the pivot could fall on either side).
    """
    buckets: list[list[int]] = [list(arms)]
    spent = 0
    position = 0
    while position < len(buckets):
        bucket = buckets[position]
        if len(bucket) < 2:
            position += 1
            continue
        if spent >= budget:
            break
        pivot = bucket[int(rng.integers(len(bucket)))]
        better: list[int] = []
        worse: list[int] = []
        rest = [arm for arm in bucket if arm != pivot]
        for arm in rest:
            if spent >= budget:
                # Out of budget mid-partition: the arms not yet compared with the pivot could
                # belong on either side, so the whole bucket stays unsorted.
                return buckets
            won = yield arm, pivot
            spent += 1
            (better if won else worse).append(arm)
        buckets[position:position + 1] = [part for part in (better, [pivot], worse) if part]
    return buckets


@register_agent("pl_pac")
class PLPAC(ConfidentProcedureAgent):
    """PLPAC (Szörényi et al., NIPS 2015, Algorithm 1): an ε-best item under Plackett-Luce.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    epsilon : float, default 0.1
        The answer beats every arm with probability at least ``1/2 - ε``.
    delta : float, default 0.05
        Confidence ``δ``.
    seed : int, optional
        Seed of the agent's generator (the QuickSort pivots).

    Notes
    -----
    Answer: the winner (``answer_type = "winner"``, ``target = "condorcet"``; under
    Plackett-Luce the best item is the Condorcet winner).  Sample complexity
    ``O(max_i 1/Δ_i² ln(K/(Δ_i δ)))`` per QuickSort round with ``Δ_i = max(ε, P[i*, i] - 1/2)/2``
    (the paper's sample-complexity bound).  Per duel ``O(1)`` plus ``O(|A|²)`` per QuickSort run for rank breaking.
    """

    paper = (
        PaperLink("NeurIPS 2015 proceedings",
                  "https://proceedings.neurips.cc/paper/2015/hash/7eacb532570ff6858afd2723755ff790-Abstract.html"),
    )
    guarantee = (
        "Under a Plackett-Luce model, an ε-best item (``P[i*, out] < 1/2 + ε``) with probability at least ``1 "
        "- δ``, after ``O(max_i 1/Δ_i² ln(K/(Δ_i δ)))`` duels per QuickSort round, ``Δ_i = max(ε, P[i*, i] - "
        "1/2)/2`` (Szörényi, Busa-Fekete, Paul & Hüllermeier, NIPS 2015, the PLPAC sample-complexity bound)."
    )

    answer_type = "winner"
    target = "condorcet"

    def __init__(self, n_arms: int, *, epsilon: float = 0.1, delta: float = 0.05, seed=None):
        self.epsilon = check_number("epsilon", epsilon, minimum=0.0, maximum=0.5)
        super().__init__(n_arms, delta=delta, seed=seed)

    def _reset_answer(self) -> None:
        super()._reset_answer()
        self.active = np.ones(self.n_arms, dtype=bool)
        self.answer_arm: int | None = None
        self.sorts = 0

    def _procedure(self) -> Generator[tuple[int, int], bool, None]:
        while True:
            arms = np.flatnonzero(self.active)
            if arms.size == 1:
                self.answer_arm = int(arms[0])
                return
            budget = math.ceil(3 * (arms.size + 1) * math.log(arms.size))
            buckets = yield from budgeted_quicksort(arms.tolist(), budget, self.rng)
            self.sorts += 1
            bucket_of = np.full(self.n_arms, -1, dtype=np.int64)
            for position, bucket in enumerate(buckets):
                bucket_of[bucket] = position
            answer = _after_sort(self.wins, self.counts, self.active, arms, bucket_of, self.delta, self.epsilon)
            if answer >= 0:
                self.answer_arm = int(answer)
                return

    def recommend(self) -> int:
        if self.answer_arm is not None:
            return self.answer_arm
        mean = np.where(self.counts > 0, self.wins / np.maximum(self.counts, 1.0), 0.5)
        score = np.where(self.active, mean.sum(axis=1), -np.inf)
        return int(np.argmax(score))

    def ranking(self) -> np.ndarray:
        """The answer first, then the arms by estimated Borda score (active arms before dropped ones)."""
        mean = np.where(self.counts > 0, self.wins / np.maximum(self.counts, 1.0), 0.5)
        key = mean.sum(axis=1) / (self.n_arms - 1) + 2.0 * self.active
        best = self.recommend()
        key[best] = np.inf
        return np.argsort(-key, kind="stable").astype(np.int64)
