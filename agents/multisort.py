"""Multisort: repeated noisy QuickSort runs aggregated by Copeland's method.

Maystre, Grossglauser. *Just Sort It! A Simple and Effective Approach to Active Preference
Learning.* ICML 2017 (Multisort).

* **Sorting**: QuickSort with uniformly random pivots in which every comparison is one
  noisy duel.  Under Bradley-Terry/Thurstone models its output is close to the true order
  (the displacement bound of §3.1, Theorem 2), and consecutive runs are independent.
* **Multisort**: run QuickSort again and again and aggregate the rankings with Copeland's
  method: arm ``i`` scores one point for every arm ``j`` it precedes in a majority of the runs;
  the aggregate ranks by that score.  Ties in the Copeland score are broken by the mean position
  over the runs (Borda count of the runs), then by index.

The paper studies Multisort under a comparison budget, without a stopping rule; here the run
stops after ``n_sorts`` complete QuickSorts (default 10) or ``budget`` duels, whichever comes
first (a sort cut by the budget is not aggregated).  duelpy's ``Multisort`` runs QuickSorts until
its time horizon and ranks by the summed positions ``K - index`` over the runs (a Borda count of
the rankings, although its comments call it Copeland); this module follows the paper's Copeland
aggregation and uses the Borda count of the runs only to break Copeland ties.
"""

from __future__ import annotations

from typing import Generator

import numpy as np

from dueling_gym.agents.base import PaperLink
from dueling_gym.agents.identification import ProcedureIdentificationAgent
from dueling_gym.agents.pl_pac import budgeted_quicksort
from dueling_gym.agents.registry import register_agent
from dueling_gym.validation import check_integer

__all__ = ["Multisort"]

_NO_BUDGET = 2 ** 62


@register_agent("multisort")
class Multisort(ProcedureIdentificationAgent):
    """Multisort (Maystre & Grossglauser, ICML 2017): Copeland aggregation of repeated noisy QuickSorts.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    n_sorts : int, default 10
        Number of QuickSort runs.
    budget : int, optional
        Stop after this many duels (a partial run is discarded); default: no budget.
    seed : int, optional
        Seed of the agent's generator (the pivots).

    Notes
    -----
    Answer: a full ranking (``answer_type = "ranking"``, ``target = "copeland"``).  About
    ``2 K ln K`` duels per run.  Per duel ``O(1)``, ``O(K²)`` per run for the aggregation.
    """

    paper = (PaperLink("ICML 2017, PMLR 70", "https://proceedings.mlr.press/v70/maystre17a.html"),)
    guarantee = (
        "Under the Bradley-Terry model with conditions on its parameters, one noisy QuickSort run displaces "
        "the arms little from the true order (Maystre & Grossglauser, ICML 2017, §3.1, Theorem 2); Multisort, "
        "which repeats the sort and aggregates the runs, is evaluated empirically only."
    )

    answer_type = "ranking"
    target = "copeland"

    def __init__(self, n_arms: int, *, n_sorts: int = 10, budget: int | None = None, seed=None):
        self.n_sorts = check_integer("n_sorts", n_sorts, minimum=1)
        if budget is not None:
            budget = check_integer("budget", budget, minimum=1)
        self.budget = budget
        super().__init__(n_arms, seed=seed)

    def _reset_answer(self) -> None:
        n_arms = self.n_arms
        self.precedes = np.zeros((n_arms, n_arms))  # runs in which row came before column
        self.position_sum = np.zeros(n_arms)
        self.completed_sorts = 0

    def _procedure(self) -> Generator[tuple[int, int], bool, None]:
        arms = list(range(self.n_arms))
        left = self.budget if self.budget is not None else _NO_BUDGET
        for _ in range(self.n_sorts):
            counted = _Counted(budgeted_quicksort(arms, left, self.rng))
            buckets = yield from counted
            left -= counted.duels
            if any(len(bucket) > 1 for bucket in buckets):
                return  # the budget cut this run short
            order = np.asarray([bucket[0] for bucket in buckets])
            position = np.empty(self.n_arms)
            position[order] = np.arange(self.n_arms)
            self.precedes += position[:, None] < position[None, :]
            self.position_sum += position
            self.completed_sorts += 1
            if left <= 0:
                return

    def ranking(self) -> np.ndarray:
        """Copeland aggregation of the completed runs (index order before the first one)."""
        runs = max(self.completed_sorts, 1)
        copeland = (self.precedes > runs / 2).sum(axis=1)
        mean_position = self.position_sum / runs
        return np.lexsort((np.arange(self.n_arms), mean_position, -copeland)).astype(np.int64)

    def recommend(self) -> int:
        return int(self.ranking()[0])


class _Counted:
    """Wraps a duel procedure and counts the duels it asks for."""

    def __init__(self, procedure: Generator[tuple[int, int], bool, list[list[int]]]):
        self.procedure = procedure
        self.duels = 0

    def __iter__(self):
        return self

    def __next__(self):
        return self.send(None)

    def send(self, value):
        pair = self.procedure.send(value)
        self.duels += 1
        return pair
