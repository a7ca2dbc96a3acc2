"""Confidence radius and empirical preference bounds of the CPE-DB agents.

Chen, Du, Huang and Zhao, *Combinatorial Pure Exploration for Dueling Bandits* (ICML 2020):
the radius ``c_t = sqrt(ln(4 K' t³ / δ) / (2 T))`` of eq. (7) and Algorithm 1 line 6 (with
``x/0 := 1`` for an unsampled edge or pair), and the bounds ``P̄``, ``P̲`` of eq. (8) on the
comparable pairs, kept by :class:`PairStatistics`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.problems.bipartite import BipartiteDuelProblem

__all__ = ["log_constant", "confidence_radius", "preference_bounds", "bound_matrices", "PairStatistics"]


def log_constant(n_comparable_pairs: int, n_edges: int | None = None, *, paper_log_constant: bool = False) -> int:
    """The constant ``K'`` inside ``ln(4 K' t^3 / δ)``.

    * Borda algorithms (pass ``n_edges``): ``max(K, m)``.  The proof of Theorem 1 sums the
      per-edge failure probability ``δ / (2 K t^2)`` over the ``m`` *edges*, which stays below
      ``δ`` only if ``m <= 12 K / π²`` (the 5-edge example has ``m = 5 > 4.86``).  Taking
      ``max(K, m)`` makes that union bound hold on every graph, at the price of a slightly
      larger radius when ``m > K``; ``paper_log_constant=True`` keeps the printed ``K``.
    * Condorcet algorithms (``n_edges=None``): ``K``; their union bound runs over the ``K``
      pairs, so the printed constant is right.

    The result is at least 1 (``K = 0`` only happens when every position has a single edge;
    nothing is ever sampled then, but the logarithm stays defined).
    """
    if paper_log_constant or n_edges is None:
        return max(1, int(n_comparable_pairs))
    return max(1, int(n_comparable_pairs), int(n_edges))


def confidence_radius(counts: ArrayLike, t: int, delta: float, constant: int) -> NDArray[np.float64]:
    """``c_t = sqrt(ln(4 K' t³ / δ) / (2 T))`` per entry of ``counts``; ``c_t = 1`` where ``T = 0``.

    Eq. (7) and Algorithm 1 line 6 ("``x/0 := 1``").  ``t >= 1`` is the round, ``constant``
    is ``K'`` from :func:`log_constant`.  Vectorised over ``counts``.
    """
    if t < 1:
        raise ValueError(f"t must be at least 1, got {t}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    counts = np.asarray(counts, dtype=np.float64)
    half_level = 0.5 * math.log(4.0 * constant * float(t) ** 3 / delta)
    # sqrt(level / (2 T)) where T > 0 and sqrt(1) = 1 where T = 0.
    return np.sqrt(np.divide(half_level, counts, out=np.ones(counts.shape), where=counts > 0))


def preference_bounds(counts: ArrayLike, wins: ArrayLike, t: int, delta: float,
                      constant: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lower and upper confidence bounds per comparable pair (eq. (8)).

    ``counts[k]``, ``wins[k]``: duels of pair ``k = (e, e')`` of ``comparable_pairs`` and wins
    of its first edge ``e``.  Returns ``(lower, upper)`` with ``p̲ = max(0, p̂ - c)`` and
    ``p̄ = min(1, p̂ + c)`` for ``p_{e,e'}``; unsampled pairs get ``(0, 1)``.  The bounds for
    the reverse direction follow: ``p̄_{e',e} = 1 - p̲_{e,e'}`` and ``p̲_{e',e} = 1 - p̄_{e,e'}``.
    """
    counts = np.asarray(counts, dtype=np.float64)
    wins = np.asarray(wins, dtype=np.float64)
    radius = confidence_radius(counts, t, delta, constant)
    sampled = counts > 0
    mean = np.divide(wins, counts, out=np.full(counts.shape, 0.5), where=sampled)
    lower = np.where(sampled, np.maximum(0.0, mean - radius), 0.0)
    upper = np.where(sampled, np.minimum(1.0, mean + radius), 1.0)
    return lower, upper


def bound_matrices(graph: BipartiteDuelProblem, lower: ArrayLike,
                   upper: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The m×m matrices ``(P̄, P̲)`` from per-pair bounds (1/2 on the diagonal, 0 if incomparable)."""
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    pairs = graph.comparable_pairs
    first, second = pairs[:, 1], pairs[:, 2]
    m = graph.n_edges
    p_upper = np.zeros((m, m))
    p_lower = np.zeros((m, m))
    np.fill_diagonal(p_upper, 0.5)
    np.fill_diagonal(p_lower, 0.5)
    p_upper[first, second] = upper
    p_upper[second, first] = 1.0 - lower
    p_lower[first, second] = lower
    p_lower[second, first] = 1.0 - upper
    return p_upper, p_lower


class PairStatistics:
    """Duel counts and wins per comparable pair of a graph (the state behind ``P̄``, ``P̲``).

    ``counts[k]`` and ``wins[k]`` refer to row ``k = (position, e, e')`` of
    ``graph.comparable_pairs``; ``wins`` counts wins of the smaller edge ``e``.  Self-duels are
    not recorded (they carry no information about ``P``).
    """

    def __init__(self, graph: BipartiteDuelProblem):
        self.graph = graph
        self.counts = np.zeros(graph.n_comparable_pairs, dtype=np.int64)
        self.wins = np.zeros(graph.n_comparable_pairs, dtype=np.int64)

    def record(self, edge: int, other: int, first_won: bool) -> None:
        """Record one duel ``(edge, other)``; ``first_won`` is True iff ``edge`` won."""
        if edge == other:
            return
        k = self.graph.pair_index(edge, other)
        self.counts[k] += 1
        self.wins[k] += bool(first_won) == (edge < other)

    def bounds(self, t: int, delta: float, constant: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """:func:`preference_bounds` of the current statistics."""
        return preference_bounds(self.counts, self.wins, t, delta, constant)

    def empirical_means(self) -> NDArray[np.float64]:
        """``p̂`` per pair (1/2 when unsampled)."""
        return np.divide(self.wins, self.counts, out=np.full(self.counts.shape, 0.5), where=self.counts > 0)
