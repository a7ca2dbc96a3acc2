"""Preference-matrix estimation: sample every pair until its side of 1/2 is known, then rank.

A plain, assumption-free identification baseline (the "estimate all pairwise preferences"
strategy discussed e.g. by Falahatgar et al., *Maxing and Ranking with Few Assumptions*,
NeurIPS 2017, and the uniform-sampling baseline of Urvoy et al., ICML 2013): it learns the
sign of ``P[i, j] - 1/2`` for every pair and ranks the arms by Copeland score (number of arms
beaten) or by Borda score.

* **Sampling**: the pairs whose confidence interval still contains 1/2 are dueled in
  round-robin passes, one duel per pair per pass (pairs decided during a pass leave at its end).
* **Confidence interval**: Hoeffding's inequality with a union bound over the
  ``N = K (K - 1) / 2`` pairs and all sample counts ``n``:
  ``|p̂ - P| <= sqrt(ln(4 N n² / δ) / (2n))`` for all pairs and all ``n`` with probability at
  least ``1 - δ`` (``Σ_n 1/(2 n²) < 1``).
* **Stopping**: when every interval excludes 1/2 (then every pairwise sign, hence the Copeland
  ranking, is right with probability ``1 - δ``), or after ``budget`` duels.
* **Answer**: the ranking by the target score, from the estimated matrix: Copeland counts the
  pairs with ``p̂ > 1/2`` (ties broken by the Borda estimate), Borda averages ``p̂`` over the
  other arms.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents.identification import KernelIdentificationAgent
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import check_integer, check_probability

__all__ = ["PreferenceEstimator"]


class PreferenceEstimatorState(AgentState, fields=[
    "first", "second", "n_open", "cursor", "wins", "counts", "decided", "log_pairs", "budget", "outcomes", "by_borda",
    "finished", "t",
]):
    """Numba-side state of :class:`PreferenceEstimator`."""


@numba.njit(cache=True, nogil=True)
def _decided(wins, count, log_pairs):
    radius = math.sqrt((log_pairs + 2.0 * math.log(count)) / (2.0 * count))
    return abs(wins / count - 0.5) > radius


@numba.njit(cache=True, nogil=True)
def _end_pass(state):
    kept = 0
    for index in range(state.n_open):
        if not state.decided[index]:
            state.first[kept] = state.first[index]
            state.second[kept] = state.second[index]
            state.wins[kept] = state.wins[index]
            state.counts[kept] = state.counts[index]
            kept += 1
    state.decided[:kept] = False
    state.n_open = kept
    state.cursor = 0
    if kept == 0:
        state.finished = True


@numba.njit(cache=True, nogil=True)
def preference_estimator_act(state):
    if state.finished:
        best = _ranking(state)[0]
        return best, best
    return state.first[state.cursor], state.second[state.cursor]


@numba.njit(cache=True, nogil=True)
def preference_estimator_observe(state, first, second, first_won):
    state.t += 1
    if state.finished or first != state.first[state.cursor] or second != state.second[state.cursor]:
        return
    index = state.cursor
    state.wins[index] += first_won
    state.counts[index] += 1
    state.decided[index] = _decided(state.wins[index], state.counts[index], state.log_pairs)
    _record(state, first, second, first_won)
    state.cursor += 1
    if state.budget > 0 and state.t >= state.budget:
        state.finished = True
    elif state.cursor >= state.n_open:
        _end_pass(state)


@numba.njit(cache=True, nogil=True)
def _record(state, first, second, first_won):
    # The full win/count matrix (kept apart from the open-pair lists, which are compacted).
    state.outcomes[first, second] += first_won
    state.outcomes[second, first] += 1 - first_won


@numba.njit(cache=True, nogil=True)
def _estimate(state, row, column):
    total = state.outcomes[row, column] + state.outcomes[column, row]
    return state.outcomes[row, column] / total if total > 0 else 0.5


@numba.njit(cache=True, nogil=True)
def _ranking(state):
    n_arms = state.outcomes.shape[0]
    key = np.zeros(n_arms)
    for row in range(n_arms):
        copeland = 0.0
        borda = 0.0
        for column in range(n_arms):
            if column != row:
                estimate = _estimate(state, row, column)
                borda += estimate
                copeland += estimate > 0.5
        borda /= n_arms - 1.0
        # Borda lies in [0, 1], so adding it only breaks Copeland ties.
        key[row] = -borda if state.by_borda else -(copeland + 0.5 * borda)
    return np.argsort(key, kind="mergesort").astype(np.int64)


@numba.njit(cache=True, nogil=True)
def preference_estimator_recommend(state):
    return _ranking(state)[0]


@numba.njit(cache=True, nogil=True)
def preference_estimator_ranking(state):
    return _ranking(state)


@register_agent("preference_estimator", target="copeland")
class PreferenceEstimator(KernelIdentificationAgent):
    """Round-robin preference-matrix estimation until every pair's interval excludes 1/2 (the uniform baseline of Urvoy et al., ICML 2013).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    delta : float, default 0.05
        Confidence ``δ`` shared by all pairs.
    budget : int, optional
        Stop after this many duels even if some pairs are undecided (needed when some
        ``P[i, j] = 1/2``); default: no budget.
    score : {"copeland", "borda"}, default "copeland"
        The ranking's score, and the agent's ``target``.
    seed : int, optional
        Unused (the algorithm is deterministic); accepted for the common API.

    Notes
    -----
    Answer: a full ranking (``answer_type = "ranking"``).  Duels: about
    ``Σ_{i<j} ln(N/(δ Δ_ij)) / (2 Δ_ij²)`` with ``Δ_ij = |P[i, j] - 1/2|``.  Per duel ``O(1)``.
    """

    guarantee = (
        "The library's own baseline (no paper): when it stops by itself every pairwise sign, hence the "
        "Copeland ranking, is right with probability at least ``1 - δ`` (Hoeffding's inequality with a union "
        "bound over the pairs and the sample counts); no sample-complexity bound is claimed, and a pair tied "
        "at exactly 1/2 keeps it sampling until its budget."
    )

    answer_type = "ranking"
    act_kernel = preference_estimator_act
    observe_kernel = preference_estimator_observe
    recommend_kernel = preference_estimator_recommend
    ranking_kernel = preference_estimator_ranking

    def __init__(self, n_arms: int, *, delta: float = 0.05, budget: int | None = None, score: str = "copeland",
                 seed=None):
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        if budget is not None:
            budget = check_integer("budget", budget, minimum=1)
        self.budget = budget
        if score not in ("copeland", "borda"):
            raise ValueError(f"score must be 'copeland' or 'borda', got {score!r}")
        self.score = score
        super().__init__(n_arms, seed=seed)

    @property
    def target(self) -> str:  # type: ignore[override]
        return self.score

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        first, second = np.triu_indices(n_arms, 1)
        n_pairs = first.size
        log_pairs = math.log(4.0 * n_pairs / self.delta)
        self.state = PreferenceEstimatorState(
            first=first.astype(np.int64), second=second.astype(np.int64), n_open=n_pairs, cursor=0,
            wins=np.zeros(n_pairs), counts=np.zeros(n_pairs), decided=np.zeros(n_pairs, dtype=np.bool_),
            log_pairs=log_pairs, budget=self.budget or 0, outcomes=np.zeros((n_arms, n_arms)),
            by_borda=self.score == "borda", finished=False, t=0,
        )
