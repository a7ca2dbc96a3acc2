"""The agent registry: building agents by name.

:func:`~dueling_gym.agents.register_agent` enters an agent class under a name (and the winner
notion it targets) when its module is imported; :func:`~dueling_gym.agents.make_agent` and
:func:`~dueling_gym.agents.agent_class` find a class by that name, or by import path for a
class outside the library (:mod:`dueling_gym.agents.external`).
:data:`LIBRARY_AGENTS` names the library's own agents, each by the ``"module:Class"`` that
registers it, and :data:`AGENT_REGISTRY` imports those modules lazily, one per name looked up.
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
    "LIBRARY_AGENTS",
    "TARGETS",
    "register_agent",
    "declared_target",
    "make_agent",
    "agent_class",
    "constructor_keywords",
    "list_agents",
    "agent_kind",
    "lazy_exports",
]


#: Registered name -> ``"module:Class"`` for each of the library's own agents (the class whose
#: ``@register_agent`` line registers that name).  Looking a name up imports its module alone
#: (importing all fifty agents, and with them SciPy's optimisers and the lower-bound code, cost
#: more than a short run).  ``tests/test_registry_table.py`` checks the table against the
#: modules' ``@register_agent`` lines both ways, and registering a name from a library module
#: that the table lacks is refused, so the two cannot drift apart.
LIBRARY_AGENTS: dict[str, str] = {
    "btm": "dueling_gym.agents.beat_the_mean:BeatTheMean",
    "btm_pac": "dueling_gym.agents.beat_the_mean_pac:BeatTheMeanPAC",
    "beat_the_winner": "dueling_gym.agents.beat_the_winner:BeatTheWinner",
    "ccb": "dueling_gym.agents.ccb:CCB",
    "cw_rmed": "dueling_gym.agents.rmed.cw_rmed:CWRMED",
    "dts": "dueling_gym.agents.dts:DTS",
    "dts_plus": "dueling_gym.agents.dts_plus:DTSPlus",
    "ecw_rmed": "dueling_gym.agents.rmed.ecw_rmed:ECWRMED",
    "interleaved_filtering": "dueling_gym.agents.interleaved_filter:InterleavedFilter2",
    "kl_ucb": "dueling_gym.agents.kl_ucb:KLUCB",
    "knockout": "dueling_gym.agents.knockout:Knockout",
    "learned": "dueling_gym.agents.learned:LearnedAgent",
    "mallows_mpi": "dueling_gym.agents.mallows_mpi:MallowsMPI",
    "mallows_mpr": "dueling_gym.agents.mallows_mpr:MallowsMPR",
    "merge_rucb": "dueling_gym.agents.merge_rucb:MergeRUCB",
    "multi_rucb": "dueling_gym.agents.multi_rucb:MultiRUCB",
    "multisbm": "dueling_gym.agents.multisbm:MultiSBM",
    "multisort": "dueling_gym.agents.multisort:Multisort",
    "opt_max": "dueling_gym.agents.opt_max:OptMax",
    "pl_pac": "dueling_gym.agents.pl_pac:PLPAC",
    "preference_estimator": "dueling_gym.agents.preference_estimator:PreferenceEstimator",
    "random": "dueling_gym.agents.random_agent:UniformRandom",
    "rcs": "dueling_gym.agents.rcs:RCS",
    "rex3": "dueling_gym.agents.rex3:REX3",
    "rmed1": "dueling_gym.agents.rmed.rmed:RMED1",
    "rmed2": "dueling_gym.agents.rmed.rmed2:RMED2",
    "rmed2fh": "dueling_gym.agents.rmed.rmed2:RMED2FH",
    "rucb": "dueling_gym.agents.rucb:RUCB",
    "savage": "dueling_gym.agents.savage:SAVAGE",
    "savage_borda": "dueling_gym.agents.savage:SAVAGEBorda",
    "savage_condorcet": "dueling_gym.agents.savage:SAVAGECondorcet",
    "copeland_pac": "dueling_gym.agents.scb:CopelandPAC",
    "scb": "dueling_gym.agents.scb:SCB",
    "self_sparring": "dueling_gym.agents.self_sparring:SelfSparring",
    "sequential_elimination": "dueling_gym.agents.sequential_elimination:SequentialElimination",
    "single_elimination": "dueling_gym.agents.single_elimination:SingleElimination",
    "sparring": "dueling_gym.agents.sparring:Sparring",
    "sparring_thompson": "dueling_gym.agents.sparring:SparringThompson",
    "sparring_ucb1": "dueling_gym.agents.sparring:SparringUCB1",
    "successive_elimination_borda": "dueling_gym.agents.successive_elimination_borda:SuccessiveEliminationBorda",
    "sup_klucb": "dueling_gym.agents.sup_klucb:SupKLUCB",
    "thompson": "dueling_gym.agents.thompson:BernoulliThompson",
    "ucb1": "dueling_gym.agents.ucb1:UCB1",
    "ucb_sbm": "dueling_gym.agents.ucb_sbm:UCBSBM",
    "versatile_db": "dueling_gym.agents.versatile_db:VersatileDB",
    "winner_stays_weak": "dueling_gym.agents.winner_stays:WinnerStaysWeak",
    "winner_stays_strong": "dueling_gym.agents.winner_stays:WinnerStaysStrong",
    "car_cond": "dueling_gym.agents.cpe.car:CARCond",
    "car_verify": "dueling_gym.agents.cpe.car:CARVerify",
    "car_parallel": "dueling_gym.agents.cpe.car:CARParallel",
    "clucb_borda_pac": "dueling_gym.agents.cpe.clucb_borda:CLUCBBordaPAC",
    "clucb_borda_exact": "dueling_gym.agents.cpe.clucb_borda:CLUCBBordaExact",
}


def _split_target(target: str) -> tuple[str, str]:
    """``"package.module:Class"`` -> ``("package.module", "Class")``."""
    module, colon, attribute = target.partition(":")
    if not colon or not module or not attribute.isidentifier():
        raise ValueError(f"an agent's target must read 'package.module:ClassName', got {target!r}")
    return module, attribute


def lazy_exports(namespace: dict[str, Any],
                 targets: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module-level ``__getattr__`` and ``__dir__`` (PEP 562) for names imported on first use.

    Parameters
    ----------
    namespace : dict
        The package's ``globals()``: a name, once imported, is kept there, so later look-ups
        no longer reach ``__getattr__``.
    targets : mapping
        Exported name -> ``"package.module:attribute"``.

    Returns
    -------
    (getattr, dir)
        ``getattr(name)`` imports the module of ``targets[name]`` and returns its attribute
        (``AttributeError`` for a name not in ``targets``); ``dir()`` lists the package's names
        and every target's.
    """
    package = namespace["__name__"]

    def load(name: str) -> Any:
        target = targets.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = _split_target(target)
        value = getattr(import_module(module), attribute)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted(set(namespace) | set(targets))

    return load, names


class AgentRegistry(Mapping[str, type]):
    """Registry name -> agent class, importing the declared agent modules on first use.

    :func:`~dueling_gym.agents.register_agent` enters a class when its module is imported.  A
    registry is built with its *declared* agents (``{name: "module:Class"}``;
    :data:`AGENT_REGISTRY` with :data:`LIBRARY_AGENTS`), so that looking up one name imports
    that one module.  A module under ``dueling_gym.agents.`` may only register a declared name,
    as the declared class, and no other module may take a declared name.  Iterating, ``len`` and
    ``items()`` import every declared module, so they see every agent.

    Parameters
    ----------
    declared : Mapping[str, str], optional
        Registered name -> ``"package.module:ClassName"`` of the class that registers it.
    """

    def __init__(self, declared: Mapping[str, str] | None = None) -> None:
        self._classes: dict[str, type] = {}
        #: name -> (module, class name); the class name is ``None`` for :meth:`declare`'s entries.
        self._declared: dict[str, tuple[str, str | None]] = {}
        self._declare_pending: list[Callable[[], None]] = []
        for name, target in (declared or {}).items():
            self._declared[name.lower()] = _split_target(target)

    def declare(self, module: str, names: Iterable[str]) -> None:
        """Note that importing ``module`` registers the agents ``names``."""
        for name in names:
            self._declared[name.lower()] = (module, None)

    def declare_on_first_lookup(self, declare: Callable[[], None]) -> None:
        """Call ``declare`` (which calls :meth:`declare`) before the registry is first searched."""
        self._declare_pending.append(declare)

    def _ensure_declared(self) -> None:
        while self._declare_pending:
            self._declare_pending.pop(0)()

    def register(self, name: str, cls: type) -> None:
        """Enter ``cls`` under ``name`` (what :func:`~dueling_gym.agents.register_agent` does)."""
        key = name.lower()
        self._ensure_declared()
        declared = self._declared.get(key)
        if declared is not None and declared[0] != cls.__module__:
            raise ValueError(f"agent name {name!r} is already taken by an agent of {declared[0]}")
        if declared is not None and declared[1] not in (None, cls.__name__):
            raise ValueError(f"agent name {name!r} is declared as {declared[0]}:{declared[1]}, "
                             f"not {cls.__name__}")
        if declared is None and cls.__module__.startswith("dueling_gym.agents."):
            # A library agent outside the table would be invisible to make_agent until imported.
            raise ValueError(f"agent {key!r} of {cls.__module__} is not declared: add "
                             f'"{key}": "{cls.__module__}:{cls.__name__}" to LIBRARY_AGENTS in '
                             "agents/registry.py (dueling_gym.agents.registry)")
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
            module = self._declared[key][0]
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


#: name -> agent class; the library's own agents are declared by :data:`LIBRARY_AGENTS`, and
#: :func:`~dueling_gym.agents.register_agent` enters every class (see :class:`AgentRegistry`).
AGENT_REGISTRY = AgentRegistry(LIBRARY_AGENTS)

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
