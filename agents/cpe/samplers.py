"""Samplers of uniformly random covering matchings, the ``S(η)`` of CLUCB-Borda.

Chen, Du, Huang and Zhao (ICML 2020), Definition 1: CLUCB-Borda duels an edge ``z`` against
the edge at ``s(z)`` of a matching drawn from a law within total-variation distance ``η`` of
uniform over the covering matchings ``ℳ``.  Both samplers shipped here are exact (``η = 0``):
:class:`ExactMatchingSampler` decodes exact counts, :class:`RejectionMatchingSampler` needs no
counting.  :func:`make_sampler` builds one by name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from dueling_gym.problems.bipartite import BipartiteDuelProblem, Matching, TooManyMatchingsError

__all__ = ["MatchingSampler", "ExactMatchingSampler", "RejectionMatchingSampler", "make_sampler"]


class MatchingSampler(ABC):
    """Interface of the sampler ``S(η)`` of Definition 1: matchings from a law within TV ``η`` of uniform.

    CLUCB-Borda only needs the opponent ``e(M', s(z))`` of a sampled matching ``M'``;
    :meth:`sample_opponent` returns it (implementations may draw it from the same marginal law
    without building ``M'``).  ``eta`` states the sampler's total-variation bias; the agents
    keep the paper's ``ε/4`` margins whatever it is, and the paper's analysis needs ``eta <= ε/8``.

    Implementations shipped: :class:`ExactMatchingSampler` (``η = 0``, exact counting) and
    :class:`RejectionMatchingSampler` (``η = 0``, no counting).  No MCMC sampler is shipped: the
    Jerrum-Sinclair-Vigoda chain the paper uses only has a polynomial mixing bound of very high
    degree, so a chain run for a practical number of steps would have no stated ``η``; an
    exact sampler removes the bias term altogether.  A user-supplied
    subclass with a proven ``η`` plugs in through the agents' ``sampler=`` argument.
    """

    #: Total-variation distance between the sampler's law and the uniform law on ``ℳ``.
    eta: float = 0.0

    def __init__(self, graph: BipartiteDuelProblem):
        self.graph = graph

    @abstractmethod
    def sample(self, rng: np.random.Generator) -> Matching:
        """One maximum matching."""

    def sample_opponent(self, position: int, rng: np.random.Generator) -> int:
        """The edge at ``position`` of a sampled matching (Algorithm 1 lines 20-21)."""
        return int(self.sample(rng)[position])


class ExactMatchingSampler(MatchingSampler):
    """Exact uniform sampling (``η = 0``) from exact completion counts.

    ``method="matching"`` draws a whole matching with
    :meth:`BipartiteDuelProblem.sample_max_matching <dueling_gym.problems.BipartiteDuelProblem.sample_max_matching>` (one uniform rank, decoded position by
    position with completion counts).  ``method="marginal"`` (default) draws the opponent at a
    position directly from its exact marginal ``Pr[e(M', j) = e'] = N(e') / |ℳ|`` (``N(e')`` =
    matchings containing ``e'``): the same law for the only quantity the algorithm uses, since
    each round plays one duel with a fresh independent ``M'``; it costs one uniform draw instead
    of an ``l``-step decoding.  Counting is exponential in the worst case (counting perfect
    matchings is #P-hard) and raises :class:`~dueling_gym.problems.TooManyMatchingsError` on huge instances; use
    :class:`RejectionMatchingSampler` there.
    """

    eta = 0.0

    def __init__(self, graph: BipartiteDuelProblem, method: str = "marginal"):
        super().__init__(graph)
        if method not in ("marginal", "matching"):
            raise ValueError(f"method must be 'marginal' or 'matching', got {method!r}")
        self.method = method
        total = graph.count_max_matchings()
        counts = graph.edge_matching_counts()
        self._groups = [np.array(group, dtype=np.int64) for group in graph.edges_by_position]
        # Exact integer cumulative counts, as floats in [0, 1] for a searchsorted draw.
        self._cumulative = []
        for group in graph.edges_by_position:
            running, cumulative = 0, []
            for edge in group:
                running += counts[edge]
                cumulative.append(running / total)
            cumulative[-1] = 1.0
            self._cumulative.append(np.array(cumulative))

    def sample(self, rng: np.random.Generator) -> Matching:
        return self.graph.sample_max_matching(rng)

    def cumulative_marginals(self) -> np.ndarray:
        """The cumulative marginals of every position, concatenated in position order.

        Entry ``i`` belongs to the ``i``-th edge of ``graph.edges_by_position`` flattened; the
        compiled agents draw their opponents from this table exactly as :meth:`sample_opponent`.
        """
        return np.concatenate(self._cumulative) if self._cumulative else np.zeros(0)

    def sample_opponent(self, position: int, rng: np.random.Generator) -> int:
        if self.method == "matching":
            return int(self.graph.sample_max_matching(rng)[position])
        index = int(np.searchsorted(self._cumulative[position], rng.random(), side="right"))
        return int(self._groups[position][min(index, len(self._groups[position]) - 1)])


class RejectionMatchingSampler(MatchingSampler):
    """Exact uniform sampling (``η = 0``) by rejection, without any counting.

    Propose one edge per position independently and uniformly from ``E_j``; accept iff the
    candidates are distinct.  Every maximum matching has the same proposal probability
    ``prod_j 1/|E_j|``, so an accepted proposal is exactly uniform on ``ℳ``.  The expected
    number of proposals is ``prod_j |E_j| / |ℳ|`` -- cheap on dense graphs and when
    positions rarely compete for candidates, exponential in the worst case; ``max_trials``
    bounds a single draw (``RuntimeError`` beyond it).  Chosen over an MCMC chain because it
    is exact with an explicit cost, while a chain needs a mixing-time bound to state ``η``.
    """

    eta = 0.0

    def __init__(self, graph: BipartiteDuelProblem, max_trials: int = 1_000_000):
        super().__init__(graph)
        self.max_trials = int(max_trials)
        self._groups = [np.array(group, dtype=np.int64) for group in graph.edges_by_position]
        self._sizes = np.array([len(group) for group in graph.edges_by_position], dtype=np.int64)
        self._candidates = np.asarray(graph.edge_candidates)
        self._block = 64

    def sample(self, rng: np.random.Generator) -> Matching:
        l = len(self._groups)
        trials = 0
        while trials < self.max_trials:
            picks = (rng.random((self._block, l)) * self._sizes).astype(np.int64)
            for row in picks:
                trials += 1
                edges = [int(self._groups[j][row[j]]) for j in range(l)]
                candidates = self._candidates[edges]
                if np.unique(candidates).size == l:
                    return tuple(edges)
        raise RuntimeError(f"rejection sampler: no matching accepted in {self.max_trials} proposals")


def make_sampler(graph: BipartiteDuelProblem, sampler: str | MatchingSampler = "exact") -> MatchingSampler:
    """``"exact"`` (:class:`ExactMatchingSampler`), ``"exact_matching"`` (whole matchings),
    ``"rejection"`` (:class:`RejectionMatchingSampler`) or ``"auto"`` (exact when the counting
    dynamic programme fits, rejection otherwise); a
    :class:`~dueling_gym.agents.cpe.samplers.MatchingSampler` instance is returned
    as is."""
    if isinstance(sampler, MatchingSampler):
        return sampler
    if sampler == "exact":
        return ExactMatchingSampler(graph)
    if sampler == "exact_matching":
        return ExactMatchingSampler(graph, method="matching")
    if sampler == "rejection":
        return RejectionMatchingSampler(graph)
    if sampler == "auto":
        try:
            return ExactMatchingSampler(graph)
        except TooManyMatchingsError:
            return RejectionMatchingSampler(graph)
    raise ValueError(f"sampler must be 'exact', 'exact_matching', 'rejection', 'auto' or a MatchingSampler, "
                     f"got {sampler!r}")
