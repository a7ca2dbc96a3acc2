"""Combinatorial pure exploration for dueling bandits (CPE-DB), installed as ``dueling_gym.agents.cpe``.

Chen, Du, Huang and Zhao, *Combinatorial Pure Exploration for Dueling Bandits* (ICML 2020):
the agents duel edges of a bipartite graph (:class:`~dueling_gym.problems.BipartiteDuelProblem`)
and stop with a matching that covers every position.

* :mod:`.base` -- :class:`~dueling_gym.agents.CombinatorialAgent`, :class:`GeneratorAgent` (an algorithm written as
  a generator of duels), :class:`CompiledAgent` (an algorithm advanced by Numba kernels, able to
  play many duels per call against a :class:`DuelSource`), :func:`~dueling_gym.agents.cpe.graph_only` (the graph an
  agent may see) and :class:`MatchingSolver` (its per-round max-weight matchings).
* :mod:`.bounds` -- the confidence radius and the empirical bounds ``P̄``, ``P̲``.
* :mod:`.condorcet_oracle` -- the exact Condorcet oracle (one LP) and its Lipschitz drift bound.
* :mod:`.samplers` -- exact uniform samplers of covering matchings.
* :mod:`.clucb_borda` -- CLUCB-Borda-PAC and CLUCB-Borda-Exact (the Borda matching).
* :mod:`.car` -- CAR-Cond, CAR-Verify and CAR-Parallel (the Condorcet matching).

The agents are registered (``make_agent("car_cond", problem, delta=0.05)``) and run with
:func:`dueling_gym.experiments.run_pure_exploration`.
"""

from dueling_gym.agents.cpe._duel_source import DuelSource
from dueling_gym.agents.cpe.base import CombinatorialAgent, CompiledAgent, GeneratorAgent, MatchingSolver, graph_only
from dueling_gym.agents.cpe.bounds import PairStatistics, bound_matrices, confidence_radius, log_constant
from dueling_gym.agents.cpe.car import CARCond, CARParallel, CARVerify
from dueling_gym.agents.cpe.clucb_borda import CLUCBBordaExact, CLUCBBordaPAC
from dueling_gym.agents.cpe.condorcet_oracle import CondorcetOracle, condorcet_oracle, oracle_drift
from dueling_gym.agents.cpe.samplers import (
    ExactMatchingSampler,
    MatchingSampler,
    RejectionMatchingSampler,
    make_sampler,
)

__all__ = [
    "CombinatorialAgent",
    "GeneratorAgent",
    "CompiledAgent",
    "DuelSource",
    "MatchingSolver",
    "graph_only",
    "PairStatistics",
    "bound_matrices",
    "confidence_radius",
    "log_constant",
    "CondorcetOracle",
    "condorcet_oracle",
    "oracle_drift",
    "MatchingSampler",
    "ExactMatchingSampler",
    "RejectionMatchingSampler",
    "make_sampler",
    "CLUCBBordaPAC",
    "CLUCBBordaExact",
    "CARCond",
    "CARVerify",
    "CARParallel",
]
