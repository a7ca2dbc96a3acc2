"""Dueling-bandit and multi-armed bandit algorithms (installed as ``dueling_gym.agents``).

Every algorithm lives in its own module, named after the paper's algorithm, behind one API:
``act() -> (i, j)``, ``observe(action, first_won)``, ``recommend()``, ``reset(seed=)``.
Agents never see rewards, ``info`` or the true preference matrix.  Build them by class or by
name::

    from dueling_gym.agents import RUCB, make_agent
    agent = make_agent("rucb", n_arms=5, seed=0)

See :mod:`dueling_gym.agents.base` for how to add an algorithm, :mod:`dueling_gym.agents.registry` for
building agents by name and :mod:`dueling_gym.agents.state` for the compiled state of the fast ones.
"""

from dueling_gym.agents.base import BanditAgent, DuelingAgent, KernelBanditAgent, KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import (
    AGENT_REGISTRY,
    LIBRARY_AGENTS,
    agent_class,
    lazy_exports,
    list_agents,
    make_agent,
    register_agent,
)
from dueling_gym.agents.state import AgentState

#: The exported base classes that register no agent name: class name -> ``"module:Class"``.
_BASE_CLASSES = {
    "CombinatorialAgent": "dueling_gym.agents.cpe.base:CombinatorialAgent",
    "PolicyAgent": "dueling_gym.agents.policy:PolicyAgent",
}
#: Every exported class imported on first use (``from dueling_gym.agents import CCB`` imports
#: ``ccb`` alone): class name -> ``"module:Class"``, the agents' read off
#: :data:`~dueling_gym.agents.registry.LIBRARY_AGENTS`.
_LAZY_CLASSES = {**_BASE_CLASSES, **{target.rpartition(":")[2]: target for target in LIBRARY_AGENTS.values()}}

#: The names defined here (``__all__`` adds the algorithm classes, found on first use).
_BASE_API = {
    "DuelingAgent": DuelingAgent,
    "KernelDuelingAgent": KernelDuelingAgent,
    "BanditAgent": BanditAgent,
    "KernelBanditAgent": KernelBanditAgent,
    "AgentState": AgentState,
    "PaperLink": PaperLink,
    "make_agent": make_agent,
    "agent_class": agent_class,
    "list_agents": list_agents,
    "register_agent": register_agent,
    "AGENT_REGISTRY": AGENT_REGISTRY,
}


_load_lazy, __dir__ = lazy_exports(globals(), _LAZY_CLASSES)


def __getattr__(name: str):
    if name == "__all__":
        # Computed on first use, like the class table it lists.
        return list(_BASE_API) + sorted(_LAZY_CLASSES)
    return _load_lazy(name)
