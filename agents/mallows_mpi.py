"""MallowsMPI: the most preferred item of a Mallows model from confident pairwise comparisons.

Busa-Fekete, Hüllermeier, Szörényi. *Preference-based rank elicitation using statistical models:
The case of Mallows.* ICML 2014 (the MPI problem, algorithm MallowsMPI).

Under a Mallows model with mode ``π`` and dispersion ``φ``, every pair ``(i, j)`` with ``i`` ahead
of ``j`` in ``π`` has ``P[i, j] >= 1/(1 + φ) > 1/2``, so the item first in ``π`` is the
Condorcet winner and every pairwise comparison can be decided by repeated duels.

* **MallowsMPI**: a uniformly random first candidate; the other arms, in random order, are each
  compared with the candidate until a confidence interval excludes 1/2, and the winner becomes
  the candidate; the last candidate is returned (the paper's sequential "king of the hill").
* **Confidence interval**: ``sqrt(ln(4 N n² / δ) / (2n))`` after ``n`` duels of a pair, a union
  bound over ``N`` comparisons and all sample counts; here ``N = K`` (duelpy's choice; ``K - 1``
  comparisons are made), so the answer is the Condorcet winner with probability ``>= 1 - δ``.

Sample complexity ``O(K/ρ² ln(K/(δρ)))`` with ``ρ = (1 - φ)/(1 + φ)``.  Default
``δ = 0.05`` as in duelpy (``MallowsMPI``), which implements the same procedure.  The Mallows
marginals for test problems are computed by the private Mallows helpers of
:mod:`dueling_gym.agents`.
"""

from __future__ import annotations

import math
from typing import Generator

import numpy as np

from dueling_gym.agents._mallows import confident_compare, mallows_preferences
from dueling_gym.agents.base import PaperLink
from dueling_gym.agents.identification import ConfidentProcedureAgent
from dueling_gym.agents.registry import register_agent

__all__ = ["MallowsMPI", "mallows_preferences"]


@register_agent("mallows_mpi")
class MallowsMPI(ConfidentProcedureAgent):
    """MallowsMPI (Busa-Fekete et al., ICML 2014): the Condorcet winner of a Mallows model.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    delta : float, default 0.05
        Confidence ``δ``.
    seed : int, optional
        Seed of the agent's generator (the order in which arms challenge the candidate).

    Notes
    -----
    Answer: the winner (``answer_type = "winner"``, ``target = "condorcet"``).  Does not stop
    on a pair with ``P = 1/2`` exactly (impossible under Mallows; use ``max_samples``).
    Per duel ``O(1)``.
    """

    paper = (PaperLink("ICML 2014, PMLR 32", "https://proceedings.mlr.press/v32/busa-fekete14.html"),)
    guarantee = (
        "Under a Mallows model with dispersion ``φ``, the first item of its mode (the Condorcet winner) with "
        "probability at least ``1 - δ`` after ``O(K/ρ² ln(K/(δρ)))`` duels, ``ρ = (1 - φ)/(1 + φ)`` "
        "(Busa-Fekete, Hüllermeier & Szörényi, ICML 2014, the MPI problem)."
    )

    answer_type = "winner"
    target = "condorcet"

    def _reset_answer(self) -> None:
        super()._reset_answer()
        self.candidate = 0
        self.beaten = np.zeros(self.n_arms, dtype=bool)

    def _procedure(self) -> Generator[tuple[int, int], bool, None]:
        log_level = math.log(4.0 * self.n_arms / self.delta)
        order = self.rng.permutation(self.n_arms)
        self.candidate = int(order[0])
        for challenger in order[1:].tolist():
            candidate_better = yield from confident_compare(self.candidate, challenger, log_level, self.wins,
                                                            self.counts)
            if candidate_better:
                self.beaten[challenger] = True
            else:
                self.beaten[self.candidate] = True
                self.candidate = challenger

    def recommend(self) -> int:
        return self.candidate

    def ranking(self) -> np.ndarray:
        """The candidate first, then the arms not yet beaten, then the beaten ones (by index)."""
        key = self.beaten.astype(float)
        key[self.candidate] = -1.0
        return np.argsort(key, kind="stable").astype(np.int64)
