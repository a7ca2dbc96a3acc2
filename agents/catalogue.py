"""What each registered agent is for: its role and the winner notion it targets.

Both facts live on the agent classes (the role follows from the class's family and its
``pure_exploration`` / ``explore_then_exploit`` flags; the target is declared with
``register_agent(name, target=...)``); ``dueling-gym agents``, the README's table, the
documentation's algorithm index and the presets read them through this module.  Roles:

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

from collections.abc import Iterable

from dueling_gym.agents.base import AGENT_REGISTRY, DuelingAgent, agent_kind, declared_target, list_agents

__all__ = ["agent_role", "agent_target", "regret_minimisers"]


def agent_role(name: str) -> str:
    """``"regret minimiser"``, ``"identification"``, ``"bandit"`` or ``"combinatorial"``, from the
    agent class: its family, ``pure_exploration`` and ``explore_then_exploit``."""
    cls = _registered(name)
    kind = agent_kind(cls)
    if kind != "dueling":
        return kind
    assert issubclass(cls, DuelingAgent)
    if cls.pure_exploration and not cls.explore_then_exploit:
        return "identification"
    return "regret minimiser"


def agent_target(name: str) -> str:
    """The winner notion agent ``name`` targets, as its class declares it when registered
    (``register_agent(name, target=...)``, or the class's ``target``; ``"?"`` when it declares none)."""
    _registered(name)  # loads the agent's module, which registers it
    return declared_target(name)


def regret_minimisers(arm_counts: Iterable[int] = ()) -> list[str]:
    """The registered dueling agents judged by their regret, sorted by name; with ``arm_counts``,
    those whose class plays every one of these numbers of arms with its default hyperparameters
    (:meth:`~dueling_gym.agents.DuelingAgent.plays_arms`)."""
    counts = tuple(arm_counts)
    return [name for name in list_agents("dueling") if agent_role(name) == "regret minimiser"
            and all(AGENT_REGISTRY[name].plays_arms(count) for count in counts)]


def _registered(name: str) -> type:
    key = str(name).lower()
    if key not in AGENT_REGISTRY:
        raise ValueError(f"unknown agent {name!r}")
    return AGENT_REGISTRY[key]


def __getattr__(name: str):
    # ``AGENT_TARGETS`` was a table kept here by hand; the targets now live on the agent classes.
    if name == "AGENT_TARGETS":
        import warnings

        warnings.warn("dueling_gym.agents.catalogue.AGENT_TARGETS is deprecated: the targets are declared by the "
                      "agent classes; use agent_target(name)", DeprecationWarning, stacklevel=2)
        AGENT_REGISTRY.load_all()
        return {key: declared_target(key) for key in sorted(AGENT_REGISTRY)}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
