"""Exact counting, ranking, enumeration and uniform sampling of the covering matchings.

The decision class of CPE-DB is the set ``ℳ`` of matchings that fill every position.  The
Borda facts average over all of it, and CLUCB-Borda duels against uniformly random members of
it.  Everything here rests on one dynamic programme over (position, set of candidates already
used): ``F[j][used]`` counts the ways to fill positions ``0..j-1`` with exactly the candidates
in ``used`` and ``G[j][used]`` the ways to complete positions ``j..l-1`` avoiding them.  Its
size is exponential in the worst case (counting perfect matchings is #P-hard), instant on the
paper's instances and the tests' ones; past
:data:`~dueling_gym.problems.bipartite.enumeration.MAX_COUNTING_STATES` states it stops with
:class:`~dueling_gym.problems.TooManyMatchingsError`.

Uniform sampling is exact (decode one uniform rank), where Chen et al. (2020, Definition 1)
allow a sampler within total-variation distance ``η`` of uniform (their choice is the
Jerrum-Sinclair-Vigoda chain).  An exact sampler removes the bias term altogether.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from dueling_gym.problems.bipartite.matching import Matching

__all__ = [
    "TooManyMatchingsError",
    "MatchingCounter",
    "uniform_below",
    "DEFAULT_ENUMERATION_LIMIT",
    "MAX_COUNTING_STATES",
]

#: ``max_matchings`` refuses to list more matchings than this unless told otherwise.
DEFAULT_ENUMERATION_LIMIT = 100_000
#: Exact counting is a dynamic programme over (position, set of used candidates); past this
#: many states it would exhaust memory, so it stops with a clear error instead.
MAX_COUNTING_STATES = 2_000_000


class TooManyMatchingsError(ValueError):
    """Raised when an exact computation over all maximum matchings would be too large.

    Enumeration
    (:meth:`BipartiteDuelProblem.max_matchings <dueling_gym.problems.BipartiteDuelProblem.max_matchings>`)
    stops at a limit; counting and
    exact sampling stop when the dynamic programme needs more than
    :data:`~dueling_gym.problems.bipartite.enumeration.MAX_COUNTING_STATES` states.
    """


def uniform_below(rng: np.random.Generator, bound: int) -> int:
    """A uniform integer in ``[0, bound)`` for any Python int ``bound`` (exact, no float)."""
    if bound <= np.iinfo(np.int64).max:
        return int(rng.integers(bound))
    n_bits = bound.bit_length()
    n_bytes = (n_bits + 7) // 8
    while True:  # rejection: accepts with probability > 1/2
        value = int.from_bytes(rng.bytes(n_bytes), "little") >> (8 * n_bytes - n_bits)
        if value < bound:
            return value


class MatchingCounter:
    """The counting tables of one graph and what they give: ``|ℳ|``, ``N(e)``, unranking, the list.

    Parameters
    ----------
    edges_by_position : sequence of sequences of int
        ``E_j``, the edges at each position, ascending.
    edge_candidates : array_like of int
        Candidate of every edge.
    label : str
        Names the problem in error messages.

    Raises
    ------
    TooManyMatchingsError
        If the dynamic programme needs more than
        :data:`~dueling_gym.problems.bipartite.enumeration.MAX_COUNTING_STATES` states.
    """

    def __init__(self, edges_by_position: tuple[tuple[int, ...], ...], edge_candidates: NDArray[np.int64],
                 label: str):
        self._by_position = [[(e, 1 << int(edge_candidates[e])) for e in group] for group in edges_by_position]
        self.label = label
        self.forward, self.completions = self._tables()

    def _tables(self) -> tuple[list[dict[int, int]], list[dict[int, int]]]:
        forward: list[dict[int, int]] = [{0: 1}]
        n_states = 1
        for group in self._by_position:
            level: dict[int, int] = {}
            for used, ways in forward[-1].items():
                for _, bit in group:
                    if not used & bit:
                        level[used | bit] = level.get(used | bit, 0) + ways
            n_states += len(level)
            if n_states > MAX_COUNTING_STATES:
                raise TooManyMatchingsError(
                    f"{self.label}: exact counting of the maximum matchings needs more than "
                    f"{MAX_COUNTING_STATES} dynamic-programming states; the instance is too large for exact "
                    "Borda facts or exact uniform sampling"
                )
            forward.append(level)
        completions: list[dict[int, int]] = [{} for _ in forward]
        completions[-1] = dict.fromkeys(forward[-1], 1)
        for j in range(len(self._by_position) - 1, -1, -1):
            following = completions[j + 1]
            completions[j] = {
                used: sum(following[used | bit] for _, bit in self._by_position[j] if not used & bit)
                for used in forward[j]
            }
        return forward, completions

    @property
    def total(self) -> int:
        """``|ℳ|`` (an exact Python int)."""
        return self.completions[0][0]

    @cached_property
    def edge_counts(self) -> tuple[int, ...]:
        """How many covering matchings contain each edge, ``N(e)`` (exact Python ints)."""
        counts = [0] * sum(len(group) for group in self._by_position)
        for j, group in enumerate(self._by_position):
            following = self.completions[j + 1]
            for used, ways in self.forward[j].items():
                for e, bit in group:
                    if not used & bit:
                        counts[e] += ways * following[used | bit]
        return tuple(counts)

    def matching_at(self, rank: int) -> Matching:
        """The ``rank``-th covering matching in lexicographic order, for ``0 <= rank < total``.

        At each position the admissible edges are scanned in ascending order and ``rank`` is
        reduced by the completion counts of the branches it skips.
        """
        used = 0
        matching = []
        for j, group in enumerate(self._by_position):
            following = self.completions[j + 1]
            for e, bit in group:
                if used & bit:
                    continue
                ways = following.get(used | bit, 0)
                if rank < ways:
                    matching.append(e)
                    used |= bit
                    break
                rank -= ways
        return tuple(matching)

    @cached_property
    def all_matchings(self) -> tuple[Matching, ...]:
        """Every covering matching, in lexicographic order (depth-first, dead branches pruned)."""
        out: list[Matching] = []
        n_positions = len(self._by_position)

        def extend(j: int, used: int, prefix: list[int]) -> None:
            if j == n_positions:
                out.append(tuple(prefix))
                return
            following = self.completions[j + 1]
            for e, bit in self._by_position[j]:
                if not used & bit and following.get(used | bit, 0):
                    prefix.append(e)
                    extend(j + 1, used | bit, prefix)
                    prefix.pop()

        extend(0, 0, [])
        return tuple(out)
