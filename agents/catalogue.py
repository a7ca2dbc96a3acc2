"""What each registered agent is for: its role and the winner notion it targets.

``dueling-gym agents``, the README's table and the documentation's algorithm index read these
two facts from here.  Roles:

* ``"regret minimiser"``: a dueling agent that runs for ever and is judged by its regret
  (explore-then-exploit agents such as SAVAGE included);
* ``"identification"``: a dueling agent that stops and answers (``pure_exploration``);
* ``"bandit"``: a cardinal multi-armed bandit learner (``act() -> arm``);
* ``"combinatorial"``: a pure-exploration agent over matchings of a bipartite problem.

Targets: ``"condorcet"``, ``"copeland"``, ``"borda"``; ``"utility"`` for the reductions to
cardinal bandits whose guarantees assume a utility-based (linear link) model, where the best arm
is the Condorcet winner; ``"best mean"`` for the bandit learners; ``"-"`` for uniform random play.
"""

from __future__ import annotations

from dueling_gym.agents.base import AGENT_REGISTRY, DuelingAgent, agent_kind

__all__ = ["AGENT_TARGETS", "agent_role", "agent_target"]

#: Winner notion targeted by each registered agent (with its default hyperparameters).
AGENT_TARGETS: dict[str, str] = {
    # regret minimisers
    "beat_the_winner": "condorcet", "btm": "condorcet", "ccb": "copeland", "cw_rmed": "copeland",
    "dts": "copeland", "dts_plus": "copeland", "ecw_rmed": "copeland", "interleaved_filtering": "condorcet",
    "learned": "copeland", "merge_rucb": "condorcet", "multi_rucb": "condorcet", "multisbm": "utility",
    "random": "-", "rcs": "condorcet", "rex3": "utility", "rmed1": "condorcet", "rmed2": "condorcet",
    "rmed2fh": "condorcet", "rucb": "condorcet", "savage": "copeland", "savage_borda": "borda",
    "savage_condorcet": "condorcet", "scb": "copeland", "self_sparring": "utility", "sparring": "utility",
    "sparring_thompson": "utility", "sparring_ucb1": "utility", "sup_klucb": "copeland",
    "versatile_db": "condorcet", "winner_stays_strong": "condorcet", "winner_stays_weak": "condorcet",
    # identification
    "btm_pac": "condorcet", "copeland_pac": "copeland", "knockout": "condorcet", "mallows_mpi": "condorcet",
    "mallows_mpr": "condorcet", "multisort": "copeland", "opt_max": "condorcet", "pl_pac": "condorcet",
    "preference_estimator": "copeland", "sequential_elimination": "condorcet", "single_elimination": "condorcet",
    "successive_elimination_borda": "borda",
    # bandit learners
    "kl_ucb": "best mean", "thompson": "best mean", "ucb1": "best mean", "ucb_sbm": "best mean",
    # combinatorial pure exploration (the best matching under this notion)
    "car_cond": "condorcet", "car_parallel": "condorcet", "car_verify": "condorcet",
    "clucb_borda_exact": "borda", "clucb_borda_pac": "borda",
}

#: Explore-then-exploit agents that declare ``pure_exploration`` (they can stop) but minimise regret.
_EXPLORE_THEN_EXPLOIT = ("savage", "savage_borda", "savage_condorcet")


def agent_role(name: str) -> str:
    """``"regret minimiser"``, ``"identification"``, ``"bandit"`` or ``"combinatorial"``."""
    cls = _registered(name)
    kind = agent_kind(cls)
    if kind != "dueling":
        return kind
    assert issubclass(cls, DuelingAgent)
    if cls.pure_exploration and name not in _EXPLORE_THEN_EXPLOIT:
        return "identification"
    return "regret minimiser"


def agent_target(name: str) -> str:
    """The winner notion agent ``name`` targets (see the module notes); ``"?"`` if not catalogued."""
    _registered(name)
    return AGENT_TARGETS.get(name, "?")


def _registered(name: str) -> type:
    key = str(name).lower()
    if key not in AGENT_REGISTRY:
        raise ValueError(f"unknown agent {name!r}")
    return AGENT_REGISTRY[key]
