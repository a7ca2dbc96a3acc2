"""Maximum-likelihood fit of the Bradley–Terry model to pairwise win counts.

The model (Bradley & Terry, Biometrika 1952) gives each system ``i`` a strength
``pi_i = exp(theta_i)`` and says that ``i`` beats ``j`` with probability
``pi_i / (pi_i + pi_j) = sigmoid(theta_i - theta_j)``.  Given win counts ``W[i, j]`` (how often
``i`` beat ``j``; fractional counts are allowed, so that a tie can count as half a win for each
side) the log-likelihood is

    l(theta) = sum_{i != j} W[i, j] * log sigmoid(theta_i - theta_j),

a concave function, invariant under adding a constant to every ``theta_i``.

Existence and uniqueness.  The maximum exists, and is unique up to that constant, exactly when
for every split of the systems into two non-empty groups some system of each group beat some
system of the other, i.e. when the directed graph ``i -> j`` whenever ``W[i, j] > 0`` is strongly
connected (Ford, Amer. Math. Monthly 1957; Assumption 1 of Hunter, Ann. Statist. 2004).  When it
is not (a system that never lost, one that never won, groups of systems never compared with each
other, or a group that beat another group every time they met), the likelihood grows without
bound as some strengths go to infinity: :func:`fit_bradley_terry` then refuses, naming the
systems involved, rather than returning an arbitrary point of a diverging run.  No regularisation
is applied: a prior would change every fitted value, and which prior suits a log is the user's
decision.

Algorithm.  Newton's method on ``theta`` with a backtracking (Armijo) line search.  The Hessian
is minus a weighted graph Laplacian ``L`` (weights ``n_ij p_ij (1 - p_ij)``, ``n_ij`` the
comparisons of the pair); its null space is the constant vector, so each step solves
``(L + 11^T / K) delta = gradient``, which gives the Newton step orthogonal to the constants.
Newton converges in a handful of iterations where the MM algorithm of Hunter (2004, Section 3)
converges linearly, slowly when strengths are far apart; both find the same maximiser.  The
returned log-strengths are centred (they sum to zero).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.validation import check_integer, check_number, echo_list, read_only, real_matrix

__all__ = ["BradleyTerryFit", "fit_bradley_terry", "bradley_terry_probabilities", "check_mle_exists", "comparison_groups",
           "describe_groups"]

#: Largest number of backtracking halvings of one Newton step.
_MAX_HALVINGS = 60
#: An ascent below this fraction of the log-likelihood's size is lost in its rounding (see _line_search).
_ROUNDING = 1e-12


@dataclass(frozen=True)
class BradleyTerryFit:
    """The maximum-likelihood Bradley–Terry strengths of a set of win counts.

    Attributes
    ----------
    log_strengths : ndarray, shape (K,)
        ``theta``, centred so that it sums to zero (read-only).  ``exp(theta)`` are the strengths.
    log_likelihood : float
        ``sum W[i, j] log sigmoid(theta_i - theta_j)`` at the maximum.
    iterations : int
        Newton iterations used.
    gradient_norm : float
        Largest absolute entry of the log-likelihood's gradient at the returned point.
    """

    log_strengths: NDArray[np.float64]
    log_likelihood: float
    iterations: int
    gradient_norm: float

    def probabilities(self) -> NDArray[np.float64]:
        """The fitted K×K matrix ``sigmoid(theta_i - theta_j)`` (``1/2`` on the diagonal)."""
        return bradley_terry_probabilities(self.log_strengths)


def bradley_terry_probabilities(log_strengths: ArrayLike) -> NDArray[np.float64]:
    """``P[i, j] = sigmoid(theta_i - theta_j)``, computed so that ``P + P.T == 1`` exactly.

    Parameters
    ----------
    log_strengths : array_like, shape (K,)
        ``theta``; finite reals.
    """
    theta = real_matrix("log_strengths", log_strengths)
    if theta.ndim != 1:
        raise ValueError(f"log_strengths must be one-dimensional, got shape {theta.shape}")
    if not np.all(np.isfinite(theta)):
        raise ValueError("log_strengths must be finite")
    difference = theta[:, None] - theta[None, :]
    upper = _sigmoid(difference)
    # Lower triangle as 1 - upper so the matrix is exactly antisymmetric around 1/2.
    matrix = np.triu(upper, 1) + np.triu(1.0 - upper, 1).T
    np.fill_diagonal(matrix, 0.5)
    return matrix


def fit_bradley_terry(wins: ArrayLike, *, names: Sequence[object] | None = None, tolerance: float = 1e-10,
                      max_iterations: int = 200) -> BradleyTerryFit:
    """Fit the Bradley–Terry model to win counts by maximum likelihood.

    Parameters
    ----------
    wins : array_like, shape (K, K)
        ``wins[i, j]``: how often system ``i`` beat system ``j``; finite, non-negative, zero on the
        diagonal.  Fractional values are allowed (e.g. a tie counted as half a win each).
    names : sequence, optional
        Names of the systems, used in error messages (default: their indices).
    tolerance : float, default 1e-10
        Convergence threshold on the largest gradient entry, relative to the total number of
        comparisons.
    max_iterations : int, default 200
        Newton iterations before giving up with a ``RuntimeError``.

    Returns
    -------
    BradleyTerryFit

    Raises
    ------
    TypeError
        If ``wins`` is not numeric.
    ValueError
        If ``wins`` is not a square matrix of finite non-negative counts with a zero diagonal and
        at least two systems, or if the maximum-likelihood estimate does not exist (the message
        names the systems that never lost, never won, or the groups that cause it).
    """
    counts = real_matrix("wins", wins)
    tolerance = check_number("tolerance", tolerance, minimum=0.0)
    max_iterations = check_integer("max_iterations", max_iterations, minimum=1)
    _check_wins(counts)
    labels = _labels(names, counts.shape[0])
    check_mle_exists(counts, labels)

    n_systems = counts.shape[0]
    comparisons = counts + counts.T
    total_wins = counts.sum(axis=1)
    scale = max(float(comparisons.sum()) / 2.0, 1.0)
    theta = np.zeros(n_systems)
    likelihood = _log_likelihood(counts, theta)
    for iteration in range(1, max_iterations + 1):
        probability = _sigmoid(theta[:, None] - theta[None, :])
        gradient = total_wins - (comparisons * probability).sum(axis=1)
        gradient_norm = float(np.abs(gradient).max())
        if gradient_norm <= tolerance * scale:
            return _finished(theta, likelihood, iteration - 1, gradient_norm)
        weights = comparisons * probability * (1.0 - probability)
        laplacian = np.diag(weights.sum(axis=1)) - weights
        step = np.linalg.solve(laplacian + 1.0 / n_systems, gradient)
        theta, likelihood = _line_search(counts, theta, likelihood, step, gradient)
    probability = _sigmoid(theta[:, None] - theta[None, :])
    gradient_norm = float(np.abs(total_wins - (comparisons * probability).sum(axis=1)).max())
    if gradient_norm <= tolerance * scale:
        return _finished(theta, likelihood, max_iterations, gradient_norm)
    raise RuntimeError(f"the Bradley-Terry fit did not converge in {max_iterations} Newton iterations "
                       f"(largest gradient entry {gradient_norm:.3g})")


def check_mle_exists(wins: NDArray[np.float64], names: Sequence[str]) -> None:
    """Refuse win counts whose Bradley–Terry maximum-likelihood estimate does not exist.

    The estimate exists iff the graph ``i -> j`` (``i`` beat ``j`` at least once) is strongly
    connected (Ford 1957; Hunter 2004, Assumption 1).  The message names the culprits: systems
    never compared with each other, systems that never lost or never won, or a group of systems
    that beat (or lost to) the rest in every comparison between them.
    """
    beat = wins > 0
    components = comparison_groups(wins)
    if len(components) > 1:
        raise ValueError(
            "the Bradley-Terry maximum-likelihood estimate does not exist: the comparison graph is not "
            f"connected (no system of one group was ever compared with one of another): "
            f"{describe_groups(components, names)}")
    never_lost = np.flatnonzero(~beat.any(axis=0))
    never_won = np.flatnonzero(~beat.any(axis=1))
    if never_lost.size or never_won.size:
        parts = []
        if never_lost.size:
            parts.append(f"never lost: {_names_text(names, never_lost)[1:-1]}")
        if never_won.size:
            parts.append(f"never won: {_names_text(names, never_won)[1:-1]}")
        raise ValueError("the Bradley-Terry maximum-likelihood estimate does not exist (its strengths would be "
                         f"infinite) because some systems {'; '.join(parts)}")
    # Systems that 0 beat, directly or through a chain of wins: none of them ever beat a system
    # outside the set, so those outside won every comparison with them.
    beaten = _reachable(beat, 0)
    if not beaten.all():
        _refuse_dominance(winners=~beaten, losers=beaten, names=names)
    # Systems that beat 0, directly or through a chain: no system outside the set ever beat one of them.
    beating = _reachable(beat.T, 0)
    if not beating.all():
        _refuse_dominance(winners=beating, losers=~beating, names=names)


def _refuse_dominance(winners: NDArray[np.bool_], losers: NDArray[np.bool_], names: Sequence[str]) -> None:
    raise ValueError(
        "the Bradley-Terry maximum-likelihood estimate does not exist: systems "
        f"{_names_text(names, np.flatnonzero(winners))} won every comparison against systems "
        f"{_names_text(names, np.flatnonzero(losers))}")


#: Groups of systems that a message lists (each group itself capped by :func:`~dueling_gym.validation.echo_list`).
_MAX_GROUPS = 3


def comparison_groups(wins: ArrayLike) -> list[list[int]]:
    """The groups of systems linked by comparisons: connected components of the graph with an
    edge ``i - j`` whenever ``wins[i, j] + wins[j, i] > 0``.

    Parameters
    ----------
    wins : array_like, shape (K, K)
        Win counts as :func:`fit_bradley_terry` takes them.

    Returns
    -------
    list of list of int
        Each group's systems in increasing order; the largest group first, groups of equal size
        in the order of their first system (a system never compared is a group of its own).
    """
    counts = real_matrix("wins", wins)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError(f"wins must be a square matrix, got shape {counts.shape}")
    compared = (counts > 0) | (counts > 0).T
    return sorted(_components(compared), key=lambda group: (-len(group), group[0]))


def describe_groups(groups: Sequence[Sequence[int]], names: Sequence[object]) -> str:
    """``{a, b, c and 7 more}; {d, e}; and 40 more groups``: groups of systems as a message shows
    them, the number of groups and of names in each capped (a sparse log may fall into thousands)."""
    labels = [str(name) for name in names]
    text = "; ".join(_names_text(labels, group) for group in groups[:_MAX_GROUPS])
    if len(groups) > _MAX_GROUPS:
        text += f"; and {len(groups) - _MAX_GROUPS:,} more groups"
    return text


def _names_text(names: Sequence[str], indices: Sequence[int] | NDArray[np.intp]) -> str:
    """``{a, b, c}``: the names of systems ``indices`` as a message shows them, each name and their
    number capped (names come from the user's log and may be arbitrarily long or many)."""
    return "{" + echo_list([names[i] for i in indices]) + "}"


# ------------------------------------------------------------------------------ helpers
def _check_wins(counts: NDArray[np.float64]) -> None:
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError(f"wins must be a square matrix, got shape {counts.shape}")
    if counts.shape[0] < 2:
        raise ValueError(f"a Bradley-Terry fit needs at least 2 systems, got {counts.shape[0]}")
    if not np.all(np.isfinite(counts)):
        raise ValueError("wins must be finite")
    if np.any(counts < 0):
        i, j = np.argwhere(counts < 0)[0]
        raise ValueError(f"wins must be non-negative, got wins[{i}, {j}] = {counts[i, j]}")
    if np.any(np.diag(counts) != 0):
        i = int(np.flatnonzero(np.diag(counts))[0])
        raise ValueError(f"wins must be zero on the diagonal (a system does not play itself), got wins[{i}, {i}] = "
                         f"{counts[i, i]}")


def _labels(names: Sequence[object] | None, n_systems: int) -> list[str]:
    if names is None:
        return [str(i) for i in range(n_systems)]
    labels = [str(name) for name in names]
    if len(labels) != n_systems:
        raise ValueError(f"names has {len(labels)} entries for {n_systems} systems")
    return labels


def _sigmoid(x: NDArray[np.float64]) -> NDArray[np.float64]:
    # exp of a non-positive number only: no overflow for large differences.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _log_likelihood(counts: NDArray[np.float64], theta: NDArray[np.float64]) -> float:
    difference = theta[:, None] - theta[None, :]
    return float(-(counts * np.logaddexp(0.0, -difference)).sum())


def _line_search(counts: NDArray[np.float64], theta: NDArray[np.float64], likelihood: float,
                 step: NDArray[np.float64], gradient: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
    """Backtracking along the Newton step until the Armijo condition holds."""
    slope = float(gradient @ step)  # > 0: the Newton direction ascends a concave function
    if slope <= _ROUNDING * max(1.0, abs(likelihood)):
        # Next to the maximum the ascent the step promises is below the rounding error of the
        # log-likelihood, which then cannot rank the points (every halving would be refused and
        # the fit would stall short of the gradient test); the full Newton step, which converges
        # quadratically there, is taken.
        candidate = theta + step
        return candidate, _log_likelihood(counts, candidate)
    size = 1.0
    for _ in range(_MAX_HALVINGS):
        candidate = theta + size * step
        value = _log_likelihood(counts, candidate)
        if value >= likelihood + 1e-4 * size * slope:
            return candidate, value
        size *= 0.5
    return theta, likelihood  # no ascent left at machine precision: the caller's gradient test decides


def _finished(theta: NDArray[np.float64], likelihood: float, iterations: int, gradient_norm: float) -> BradleyTerryFit:
    return BradleyTerryFit(read_only(theta - theta.mean()), likelihood, iterations, gradient_norm)


def _reachable(adjacency: NDArray[np.bool_], start: int) -> NDArray[np.bool_]:
    """Nodes reachable from ``start`` along the edges of ``adjacency`` (``start`` included)."""
    seen = np.zeros(adjacency.shape[0], dtype=bool)
    seen[start] = True
    frontier = seen.copy()
    while frontier.any():
        frontier = adjacency[frontier].any(axis=0) & ~seen
        seen |= frontier
    return seen


def _components(adjacency: NDArray[np.bool_]) -> list[list[int]]:
    """Connected components of an undirected graph, each sorted, in order of their smallest node."""
    unassigned = np.ones(adjacency.shape[0], dtype=bool)
    components = []
    while unassigned.any():
        start = int(np.flatnonzero(unassigned)[0])
        members = _reachable(adjacency, start)
        components.append([int(i) for i in np.flatnonzero(members)])
        unassigned &= ~members
    return components
