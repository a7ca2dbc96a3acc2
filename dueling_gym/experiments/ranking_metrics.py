"""Scores of the answers of identification agents: winners, rankings and top-``k`` sets.

The true order of the arms under a target notion:

* ``"borda"``: by Borda score ``b_i`` (mean probability of beating a uniformly random other arm);
* ``"condorcet"`` and ``"copeland"``: by Copeland score (number of arms beaten), ties broken by
  Borda score.  On a totally ordered problem (utility-based, strong stochastic transitivity,
  Mallows) every pair is ordered and this is the order itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.problems.loading import as_preference_matrix

__all__ = ["target_scores", "true_ranking", "kendall_tau", "ranking_correct", "top_k_correct", "winner_correct",
           "epsilon_condorcet_correct"]

_TARGETS = ("condorcet", "borda", "copeland")


def _check_target(target: str) -> str:
    if target not in _TARGETS:
        raise ValueError(f"target must be one of {_TARGETS}, got {target!r}")
    return target


def _as_arms(arms: Any, n_arms: int, name: str) -> np.ndarray:
    values = np.asarray(arms)
    if values.ndim != 1 or values.size == 0 or not np.issubdtype(values.dtype, np.integer):
        raise TypeError(f"{name} must be a non-empty 1-D sequence of arm indices, got {arms!r}")
    if values.min() < 0 or values.max() >= n_arms:
        raise ValueError(f"{name} holds an arm outside [0, {n_arms}): {values.tolist()}")
    if np.unique(values).size != values.size:
        raise ValueError(f"{name} repeats an arm: {values.tolist()}")
    return values.astype(np.int64)


def target_scores(problem: PreferenceMatrix | np.ndarray | str, target: str) -> np.ndarray:
    """Scores whose descending order is the true order under ``target`` (higher is better)."""
    problem = as_preference_matrix(problem)
    _check_target(target)
    borda = np.asarray(problem.borda_scores, dtype=float)
    if target == "borda":
        return borda
    # Borda lies in [0, 1]: adding it to the integer Copeland count only breaks Copeland ties.
    return np.asarray(problem.wins, dtype=float) + 0.5 * borda


def true_ranking(problem: PreferenceMatrix | np.ndarray | str, target: str) -> np.ndarray:
    """Every arm, best first, under ``target`` (exact ties: lower index first)."""
    scores = target_scores(problem, target)
    return np.lexsort((np.arange(scores.size), -scores)).astype(np.int64)


def _pair_counts(ranking: Any, problem: PreferenceMatrix, target: str) -> tuple[int, int]:
    scores = target_scores(problem, target)
    order = _as_arms(ranking, problem.n_arms, "ranking")
    if order.size != problem.n_arms:
        raise ValueError(f"ranking must list all {problem.n_arms} arms, got {order.size}")
    ordered = scores[order]
    difference = ordered[:, None] - ordered[None, :]
    upper = np.triu(np.ones_like(difference, dtype=bool), 1)
    return int(np.count_nonzero((difference > 0) & upper)), int(np.count_nonzero((difference < 0) & upper))


def ranking_correct(ranking: Any, problem: PreferenceMatrix | np.ndarray | str, target: str) -> bool:
    """True iff no pair of arms is ranked against the true order (arms with equal scores in any order)."""
    return _pair_counts(ranking, as_preference_matrix(problem), target)[1] == 0


def kendall_tau(ranking: Any, problem: PreferenceMatrix | np.ndarray | str, target: str) -> float:
    """Kendall tau between a ranking (best first) and the true order under ``target``.

    ``(concordant - discordant) / (K (K - 1) / 2)`` over all pairs of arms: a pair is concordant
    when the arm ranked higher has the higher true score, discordant when it has the lower one;
    pairs with equal true scores count as neither.  1 for the true order, -1 for its reverse.
    """
    problem = as_preference_matrix(problem)
    concordant, discordant = _pair_counts(ranking, problem, target)
    pairs = problem.n_arms * (problem.n_arms - 1) / 2
    return float((concordant - discordant) / pairs)


def top_k_correct(arms: Any, problem: PreferenceMatrix | np.ndarray | str, target: str) -> bool:
    """True iff ``arms`` is a set of ``k = len(arms)`` best arms under ``target``.

    With ties at the boundary any tied choice counts: every chosen arm scores at least as high
    as every arm left out.
    """
    problem = as_preference_matrix(problem)
    scores = target_scores(problem, target)
    chosen = _as_arms(arms, problem.n_arms, "arms")
    rest = np.setdiff1d(np.arange(problem.n_arms), chosen)
    if rest.size == 0:
        return True
    return bool(scores[chosen].min() >= scores[rest].max() - 1e-12)


def winner_correct(arm: int, problem: PreferenceMatrix | np.ndarray | str, target: str) -> bool:
    """True iff ``arm`` is a winner under ``target`` (no Condorcet winner: always False)."""
    problem = as_preference_matrix(problem)
    _check_target(target)
    arm = int(_as_arms([arm], problem.n_arms, "arm")[0])
    if target == "condorcet":
        return problem.condorcet_winner == arm
    if target == "copeland":
        return bool(arm in problem.copeland_winners)
    return bool(arm in problem.borda_winners)


def epsilon_condorcet_correct(arm: int, problem: PreferenceMatrix | np.ndarray | str, epsilon: float) -> bool:
    """``P[i*, arm] <= 1/2 + epsilon`` for the Condorcet winner ``i*`` (an ε-maximum); False without one."""
    problem = as_preference_matrix(problem)
    winner = problem.condorcet_winner
    if winner is None:
        return False
    return bool(problem.matrix[winner, int(arm)] <= 0.5 + float(epsilon) + 1e-12)
