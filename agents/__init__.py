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

from functools import cache as _cache
from pathlib import Path as _Path

from dueling_gym.agents.base import BanditAgent, DuelingAgent, KernelBanditAgent, KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import AGENT_REGISTRY, agent_class, list_agents, make_agent, register_agent
from dueling_gym.agents.state import AgentState

#: The modules of the common API (base classes, registry, compiled state), which define no agent.
_API_MODULES = ("base.py", "registry.py", "state.py")
#: The exported base classes that register no agent name, by module.
_BASE_CLASS_MODULES = {"CombinatorialAgent": "cpe.base", "PolicyAgent": "policy"}


@_cache
def _agent_modules() -> dict[str, dict[str, str]]:
    """Module -> {class name: registry name}, read from the modules' ``@register_agent`` lines.

    The agent modules are imported on first use -- ``make_agent("ccb", ...)`` imports ``ccb``
    alone, and ``from dueling_gym.agents import CCB`` likewise (module ``__getattr__``) -- because
    importing all of them costs more than a short run.  So that a new algorithm needs no entry
    in a table here, which module registers which name is read from the source text (a few
    milliseconds, once, on the first lookup); ``tests/test_catalogue.py`` checks what it reads
    against the classes that importing every module registers.
    """
    import re

    registration = re.compile(r'^@register_agent\(\s*"([^"]+)"[^\n]*\n(?:@[^\n]*\n)*class (\w+)', re.M)
    package = _Path(__file__).parent
    modules: dict[str, dict[str, str]] = {}
    for path in sorted(package.glob("*.py")) + sorted(package.glob("cpe/*.py")):
        if path.name.startswith("_") or path.name in _API_MODULES:
            continue
        text = path.read_text(encoding="utf-8")
        if "@register_agent(" in text:
            module = path.relative_to(package).with_suffix("").as_posix().replace("/", ".")
            modules[module] = {class_name: name for name, class_name in registration.findall(text)}
    return modules


@_cache
def _class_modules() -> dict[str, str]:
    """Exported class name -> the module that defines it."""
    classes = {name: f"{__name__}.{module}" for name, module in _BASE_CLASS_MODULES.items()}
    for module, registered in _agent_modules().items():
        classes.update({class_name: f"{__name__}.{module}" for class_name in registered})
    return classes


def _declare_library_agents() -> None:
    for module, registered in _agent_modules().items():
        AGENT_REGISTRY.declare(f"{__name__}.{module}", registered.values())


AGENT_REGISTRY.declare_on_first_lookup(_declare_library_agents)

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


def __getattr__(name: str):
    if name == "__all__":
        # Computed on first use, like the class table it lists.
        return list(_BASE_API) + sorted(_class_modules())
    module = _class_modules().get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_class_modules()))
