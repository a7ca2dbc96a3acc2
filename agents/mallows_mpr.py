"""MallowsMPR: the most probable ranking of a Mallows model by merge sort with confident comparisons.

Busa-Fekete, Hüllermeier, Szörényi. *Preference-based rank elicitation using statistical models:
The case of Mallows.* ICML 2014 (the MPR problem, algorithm MallowsMPR).

Under a Mallows model with mode ``π`` every pair is ordered as in ``π`` with probability
``>= 1/(1 + φ) > 1/2``, so the mode, the most probable ranking, is recovered by any
comparison sort whose comparisons are decided by repeated duels.  MallowsMPR sorts with merge sort
(at most ``B = K ceil(log2 K)`` comparisons), each comparison a confident one: duels until
``|p̂ - 1/2| > sqrt(ln(4 B n² / δ) / (2n))`` (a union bound over the ``B`` comparisons and all
sample counts ``n``), so the sorted order is the mode with probability ``>= 1 - δ``.

Sample complexity ``O(K log K / ρ² ln(K log K/(δρ)))`` with ``ρ = (1 - φ)/(1 + φ)``.
Choices: bottom-up merge sort on a uniformly random initial order (the paper allows any sort with a
known comparison bound; duelpy's ``MallowsMPR`` defaults to merge sort too, on the index order);
a pair compared twice reuses its samples.  Default ``δ = 0.05`` as in duelpy.
"""

from __future__ import annotations

import math
from typing import Generator

import numpy as np

from dueling_gym.agents._mallows import confident_compare
from dueling_gym.agents.base import PaperLink
from dueling_gym.agents.identification import ConfidentProcedureAgent
from dueling_gym.agents.registry import register_agent

__all__ = ["MallowsMPR"]


@register_agent("mallows_mpr")
class MallowsMPR(ConfidentProcedureAgent):
    """MallowsMPR (Busa-Fekete et al., ICML 2014): the mode of a Mallows model by merge sort.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    delta : float, default 0.05
        Confidence ``δ``.
    seed : int, optional
        Seed of the agent's generator (the initial order of the merge sort).

    Notes
    -----
    Answer: a full ranking (``answer_type = "ranking"``, ``target = "condorcet"``: under
    Mallows the mode is the Copeland order).  Per duel ``O(1)``.
    """

    paper = (PaperLink("ICML 2014, PMLR 32", "https://proceedings.mlr.press/v32/busa-fekete14.html"),)
    guarantee = (
        "Under a Mallows model with dispersion ``φ``, its mode (the most probable ranking) with probability at "
        "least ``1 - δ`` after ``O(K log K / ρ² ln(K log K / (δρ)))`` duels, ``ρ = (1 - φ)/(1 + φ)`` "
        "(Busa-Fekete, Hüllermeier & Szörényi, ICML 2014, the MPR problem)."
    )

    answer_type = "ranking"
    target = "condorcet"

    @property
    def comparison_bound(self) -> int:
        """``B = K ceil(log2 K)``, the most comparisons merge sort makes on ``K`` arms."""
        return self.n_arms * math.ceil(math.log2(self.n_arms))

    def _reset_answer(self) -> None:
        super()._reset_answer()
        self.runs: list[list[int]] = [[arm] for arm in range(self.n_arms)]

    def _procedure(self) -> Generator[tuple[int, int], bool, None]:
        log_level = math.log(4.0 * self.comparison_bound / self.delta)
        self.runs = [[int(arm)] for arm in self.rng.permutation(self.n_arms)]
        while len(self.runs) > 1:
            merged: list[list[int]] = []
            for index in range(0, len(self.runs) - 1, 2):
                left, right = self.runs[index], self.runs[index + 1]
                out: list[int] = []
                a = b = 0
                while a < len(left) and b < len(right):
                    left_better = yield from confident_compare(left[a], right[b], log_level, self.wins, self.counts)
                    if left_better:
                        out.append(left[a])
                        a += 1
                    else:
                        out.append(right[b])
                        b += 1
                merged.append(out + left[a:] + right[b:])
            if len(self.runs) % 2 == 1:
                merged.append(self.runs[-1])
            self.runs = merged

    def ranking(self) -> np.ndarray:
        """The sorted order once done; before, the current sorted runs by their heads' estimates."""
        if len(self.runs) == 1:
            return np.asarray(self.runs[0], dtype=np.int64)
        mean = np.where(self.counts > 0, self.wins / np.maximum(self.counts, 1.0), 0.5).sum(axis=1)
        runs = sorted(self.runs, key=lambda run: -mean[run[0]])
        return np.asarray([arm for run in runs for arm in run], dtype=np.int64)

    def recommend(self) -> int:
        return int(self.ranking()[0])
