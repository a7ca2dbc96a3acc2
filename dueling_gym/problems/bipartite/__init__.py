"""Combinatorial pure exploration for dueling bandits (CPE-DB): bipartite matching problems.

The setting of Chen, Du, Huang and Zhao, *Combinatorial Pure Exploration for Dueling Bandits*
(ICML 2020): candidates fill the positions of a bipartite graph, edges at the same position
duel, and the answer is a matching that covers every position.

* :mod:`.problem` -- :class:`~dueling_gym.problems.BipartiteDuelProblem`, the validated instance with its Borda,
  Condorcet and per-position Copeland facts.
* :mod:`.matching` -- the max-weight covering matching (:func:`~dueling_gym.problems.max_weight_matching`,
  :func:`~dueling_gym.problems.bipartite.solve_covering_assignment`), the one assignment routine every algorithm uses.
* :mod:`.enumeration` -- exact counting, unranking, enumeration and uniform sampling of the
  covering matchings.
* :mod:`.validation` -- checks of the edges and of the edge-preference matrix.

Random instances are drawn by :func:`dueling_gym.problems.random_bipartite_problem`, and the
paper's 5-edge example is :func:`dueling_gym.problems.five_edge_example`.
"""

from dueling_gym.problems.bipartite.enumeration import (
    DEFAULT_ENUMERATION_LIMIT,
    MAX_COUNTING_STATES,
    TooManyMatchingsError,
)
from dueling_gym.problems.bipartite.matching import Matching, max_weight_matching, solve_covering_assignment
from dueling_gym.problems.bipartite.problem import BORDA_TOLERANCE, CONDORCET_TOLERANCE, BipartiteDuelProblem

__all__ = [
    "BipartiteDuelProblem",
    "Matching",
    "TooManyMatchingsError",
    "max_weight_matching",
    "solve_covering_assignment",
    "BORDA_TOLERANCE",
    "CONDORCET_TOLERANCE",
    "DEFAULT_ENUMERATION_LIMIT",
    "MAX_COUNTING_STATES",
]
