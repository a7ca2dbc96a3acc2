"""The agent registry: building agents by name.

:func:`~dueling_gym.agents.register_agent` enters an agent class under a name (and the winner
notion it targets) when its module is imported; :func:`~dueling_gym.agents.make_agent` and
:func:`~dueling_gym.agents.agent_class` find a class by that name, or by import path for a
class outside the library (:mod:`dueling_gym.agents.external`).
:data:`AGENT_REGISTRY` imports the library's own agent modules lazily, one per name looked up.
The classes themselves are in :mod:`dueling_gym.agents.base`, which does not import this
module.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import Any, Callable, Iterable

from dueling_gym.agents.base import BanditAgent, DuelingAgent
from dueling_gym.validation import SeedLike

__all__ = [
    "AgentRegistry",
    "AGENT_REGISTRY",
    "TARGETS",
    "register_agent",
    "declared_target",
    "make_agent",
    "agent_class",
    "constructor_keywords",
    "list_agents",
    "agent_kind",
]


class AgentRegistry(Mapping[str, type]):
    """Registry name -> agent class, importing the library's own agent modules on first use.

    :func:`~dueling_gym.agents.register_agent` enters a class when its module is imported.  The library's own
    agents are *declared* first, by module (``dueling_gym.agents`` does this on the first lookup),
    so that looking up one name imports that one module instead of all fifty: importing every
    agent (and with them SciPy's optimisers and the lower-bound code) cost more than a short run.
    Iterating, ``len`` and ``items()`` import every declared module, so they see every agent.
    """

    def __init__(self) -> None:
        self._classes: dict[str, type] = {}
        self._declared: dict[str, str] = {}
        self._declare_pending: list[Callable[[], None]] = []

    def declare(self, module: str, names: Iterable[str]) -> None:
        """Note that importing ``module`` registers the agents ``names``."""
        for name in names:
            self._declared[name.lower()] = module

    def declare_on_first_lookup(self, declare: Callable[[], None]) -> None:
        """Call ``declare`` (which calls :meth:`declare`) before the registry is first searched."""
        self._declare_pending.append(declare)

    def _ensure_declared(self) -> None:
        while self._declare_pending:
            self._declare_pending.pop(0)()

    def register(self, name: str, cls: type) -> None:
        """Enter ``cls`` under ``name`` (what :func:`~dueling_gym.agents.register_agent` does)."""
        key = name.lower()
        if not cls.__module__.startswith("dueling_gym.agents."):
            # Another library's agent must not take a name of ours; ours are checked by the tests.
            self._ensure_declared()
        declared = self._declared.get(key)
        if declared is not None and declared != cls.__module__:
            raise ValueError(f"agent name {name!r} is already taken by an agent of {declared}")
        if key in self._classes and self._classes[key] is not cls:
            raise ValueError(f"agent name {name!r} is already registered to {self._classes[key].__name__}")
        self._classes[key] = cls

    def load_all(self) -> None:
        """Import every declared module (all agents are then registered)."""
        self._ensure_declared()
        for name in list(self._declared):
            self._load(name)

    def _load(self, key: str) -> type:
        cls = self._classes.get(key)
        if cls is None:
            module = self._declared[key]
            import_module(module)
            cls = self._classes.get(key)
            if cls is None:
                raise ImportError(f"importing {module} did not register the agent {key!r}")
        return cls

    def __getitem__(self, name: str) -> type:
        key = name.lower() if isinstance(name, str) else name
        if key in self._classes:
            return self._classes[key]
        self._ensure_declared()
        if key in self._declared:
            return self._load(key)
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        if name in self._classes:
            return True
        self._ensure_declared()
        return name in self._declared

    def __iter__(self) -> Iterator[str]:
        self.load_all()
        return iter(list(self._classes))

    def __len__(self) -> int:
        self.load_all()
        return len(self._classes)

    def __repr__(self) -> str:
        self._ensure_declared()
        return f"AgentRegistry({sorted(set(self._classes) | set(self._declared))})"


#: name -> agent class; filled by :func:`~dueling_gym.agents.register_agent` (see :class:`AgentRegistry`).
AGENT_REGISTRY = AgentRegistry()

#: The winner notions an agent can declare as its target (see :mod:`dueling_gym.agents.catalogue`).
TARGETS = ("condorcet", "copeland", "borda", "utility", "best mean", "-", "?")
#: Registered name -> the target its class declared at registration.
_DECLARED_TARGETS: dict[str, str] = {}


def register_agent(name: str, *, target: str | None = None) -> Callable[[type], type]:
    """Class decorator: make an agent constructible by name with :func:`~dueling_gym.agents.make_agent`.

    Parameters
    ----------
    name : str
        The registered name (case-insensitive).
    target : str, optional
        The winner notion the agent targets with its default hyperparameters, one of
        :data:`~dueling_gym.agents.registry.TARGETS`.  Default: the class's own ``target`` attribute when it is
        a string (the
        identification agents declare it for their answers), else ``"?"`` (not declared).  The
        agents table, the documentation and the presets read it
        (:func:`~dueling_gym.agents.catalogue.agent_target`).
    """
    if target is not None and target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")

    def decorator(cls: type) -> type:
        key = name.lower()
        own = getattr(cls, "target", None)
        if isinstance(own, str) and target is not None and own != target:
            raise ValueError(f"agent {key!r}: register_agent(target={target!r}) disagrees with the class's "
                             f"target {own!r}")
        declared = target if target is not None else own if isinstance(own, str) else "?"
        if declared not in TARGETS:
            raise ValueError(f"agent {key!r}: target must be one of {TARGETS}, got {declared!r}")
        AGENT_REGISTRY.register(key, cls)
        cls.name = key
        _DECLARED_TARGETS[key] = declared
        return cls

    return decorator


def declared_target(name: str) -> str:
    """The target the agent registered as ``name`` declared (``"?"`` when none)."""
    return _DECLARED_TARGETS.get(str(name).lower(), "?")


def list_agents(kind: str | None = None) -> list[str]:
    """Registered agent names; ``kind`` = ``"dueling"``, ``"bandit"`` or ``"combinatorial"`` filters them."""
    names = sorted(AGENT_REGISTRY)
    if kind is None:
        return names
    if kind not in ("dueling", "bandit", "combinatorial"):
        raise ValueError(f"kind must be 'dueling', 'bandit', 'combinatorial' or None, got {kind!r}")
    return [name for name in names if agent_kind(AGENT_REGISTRY[name]) == kind]


def agent_kind(cls: type) -> str:
    """``"dueling"`` (K-armed duels), ``"bandit"`` (cardinal arms) or ``"combinatorial"`` (matchings)."""
    if issubclass(cls, DuelingAgent):
        return "dueling"
    if issubclass(cls, BanditAgent):
        return "bandit"
    return "combinatorial"


@functools.lru_cache(maxsize=None)
def constructor_keywords(cls: type) -> tuple[str, ...]:
    """The keyword-only parameters of ``cls``'s constructor besides ``seed`` (its hyperparameters).

    Read once per class: a sweep builds an agent per run, and reading a signature costs more
    than building a small agent.
    """
    return tuple(name for name, parameter in inspect.signature(cls.__init__).parameters.items()
                 if parameter.kind == parameter.KEYWORD_ONLY and name != "seed")


def agent_class(name: str) -> type:
    """The class of a registered agent (``"rucb"``) or of one named by import path
    (``"my_package.my_module:MyAgent"``, see :mod:`dueling_gym.agents.external`).

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the registered names) or cannot be imported.
    """
    if ":" in str(name):
        from dueling_gym.agents.external import load_agent_class

        return load_agent_class(str(name).strip())
    key = str(name).lower()
    if key not in AGENT_REGISTRY:
        raise ValueError(f"unknown agent {name!r}; choose one of {list_agents()} (or a class by import path, "
                         "package.module:ClassName)")
    return AGENT_REGISTRY[key]


def make_agent(name: str, n_arms: int, *, seed: SeedLike = None, **hyperparameters: Any) -> Any:
    """Build an agent by name, e.g. ``make_agent("rucb", n_arms=5, seed=0, alpha=0.51)``; the name may
    also be an import path, ``make_agent("my_package.my_module:MyAgent", 5)``.

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the registered names).
    TypeError
        If a hyperparameter is not accepted by that agent.
    """
    cls = agent_class(name)
    accepted = constructor_keywords(cls)
    unknown = sorted(set(hyperparameters) - set(accepted))
    if unknown:
        raise TypeError(f"{cls.__name__} does not accept {unknown}; its hyperparameters are {accepted}")
    return cls(n_arms, seed=seed, **hyperparameters)
