"""The common agent API: :class:`~dueling_gym.agents.DuelingAgent`, :class:`BanditAgent` and the agent registry.

Writing a new dueling algorithm
-------------------------------
Subclass :class:`~dueling_gym.agents.DuelingAgent` and implement ``_reset_state()``, ``act()``, ``observe()`` and
``recommend()``.  That is enough to run it in a Gymnasium loop, in
:func:`dueling_gym.experiments.simulate` (generic loop) and in sweeps.

To make it fast, subclass :class:`~dueling_gym.agents.KernelDuelingAgent` instead: keep the whole state in a Numba
structref (arrays, scalars and the agent's ``numpy.random.Generator``), declared by its field
names as an :class:`AgentState` subclass and built by keyword, and write three
``numba.njit(cache=True)`` kernels ``act(state) -> (i, j)``, ``observe(state, i, j,
first_won)`` and ``recommend(state) -> int``.  The Python methods call the kernels, and the
fast simulator calls the very same kernels inside one compiled loop, so both paths give the
same trajectory for the same seeds.  See ``agents/rucb.py`` for a complete example.

Pickling and copying
--------------------
Every agent can be pickled and deep-copied (checkpoints, worker processes, what-if forks); the
copy continues the exact trajectory of the original, generator stream included.  Structref
states are handled generically (by a private module of the package): their fields are
read by name, nested states and arrays shared with Python attributes stay shared.  An agent that
keeps part of its state outside ``__dict__`` and its structrefs (e.g. in a process-wide registry)
extends ``__getstate__`` / ``__setstate__``.
"""

from __future__ import annotations

import functools
import inspect
import keyword
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import Any, Callable, ClassVar, Iterable, NamedTuple

import numba
import numpy as np
from numba.core import types
from numba.experimental import structref

from dueling_gym.agents._state_snapshot import decode_attributes, encode_attributes
from dueling_gym.validation import (
    SeedLike,
    check_action,
    check_arm,
    check_n_arms,
    check_number,
    check_outcome,
    check_pairwise_memory,
    check_reward,
    check_seed,
)

__all__ = [
    "SeededAgent",
    "PaperLink",
    "ArmedAgent",
    "AgentStateType",
    "AgentState",
    "DuelingAgent",
    "KernelDuelingAgent",
    "BanditAgent",
    "KernelBanditAgent",
    "ReplayPickling",
    "AgentRegistry",
    "register_agent",
    "make_agent",
    "agent_class",
    "constructor_keywords",
    "list_agents",
    "agent_kind",
    "AGENT_REGISTRY",
    "check_n_arms",
    "check_action",
    "check_number",
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


class AgentStateType(types.StructRef):
    """Base of the Numba structref types that hold a kernel agent's state.

    :class:`AgentState` creates and registers one subclass per agent state;
    literal field types (e.g. a Python ``True`` passed at construction) are widened so one
    compiled kernel serves every state of that agent.
    """

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class AgentState(structref.StructRefProxy):
    """Base of the Python proxies of kernel agent states: a state declared by its field names.

    A subclass names its fields in the class statement and is then built by keyword::

        class RUCBState(AgentState, fields=["rng", "wins", "t"]):
            ...  # a docstring

        state = RUCBState(rng=rng, wins=np.zeros((3, 3), dtype=np.int64), t=0)

    Declaring the subclass creates and registers its Numba type, an :class:`~dueling_gym.agents.base.AgentStateType`
    subclass available as ``RUCBState.numba_type`` and, for a class defined at module level, as
    the module attribute ``RUCBStateType`` next to the proxy (pickle and Numba's on-disk cache
    index find types by module and name, so the name stays the one of a hand-written type), and
    defines the proxy's constructor (in Python and in compiled code) and its boxing.  Fields are
    stored in declaration order; construction requires every field, by keyword, and raises
    :class:`TypeError` naming the missing or unexpected ones.

    Attributes
    ----------
    field_names : tuple of str
        The fields, in declaration order.
    numba_type : type
        The registered :class:`~dueling_gym.agents.base.AgentStateType` subclass of this state.
    """

    field_names: ClassVar[tuple[str, ...]] = ()
    numba_type: ClassVar[type[AgentStateType]]

    def __init_subclass__(cls, *, fields: Iterable[str] | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if fields is None:
            raise TypeError(f"{cls.__name__} must name its fields: class {cls.__name__}(AgentState, fields=[...])")
        names = tuple(fields)
        for name in names:
            if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) or name == "_STATE_CLASS":
                raise TypeError(f"{cls.__name__}: field names must be identifiers, got {name!r}")
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise TypeError(f"{cls.__name__}: duplicate fields {duplicates}")
        if not names:
            raise TypeError(f"{cls.__name__} must have at least one field")
        type_name = f"{cls.__name__}Type"
        numba_type = type(type_name, (AgentStateType,), {
            "__module__": cls.__module__,
            "__qualname__": f"{cls.__qualname__}Type",
            "__doc__": f"Numba type of :class:`{cls.__name__}`.",
        })
        module = sys.modules.get(cls.__module__)
        if module is not None and "." not in cls.__qualname__:
            # Pickle (Numba's cache index included) finds the type by module and name.
            existing = getattr(module, type_name, None)
            reloaded = isinstance(existing, type) and issubclass(existing, AgentStateType)
            if existing is not None and not reloaded:
                raise TypeError(
                    f"{cls.__module__}.{type_name} already exists; {cls.__name__} needs that name for its Numba type"
                )
            setattr(module, type_name, numba_type)
        structref.register(numba_type)
        cls.field_names = names
        cls.numba_type = numba_type
        structref.define_proxy(cls, numba_type, list(names))

    def __new__(cls, *args: Any, **values: Any) -> AgentState:
        if args:
            raise TypeError(
                f"{cls.__name__} takes its fields by keyword ({', '.join(cls.field_names)}); "
                f"got {len(args)} positional argument(s)"
            )
        missing = [name for name in cls.field_names if name not in values]
        unexpected = sorted(name for name in values if name not in cls.field_names)
        if missing or unexpected:
            problems = []
            if missing:
                problems.append(f"missing field(s) {', '.join(missing)}")
            if unexpected:
                problems.append(f"unexpected field(s) {', '.join(unexpected)}")
            raise TypeError(f"{cls.__name__}: {'; '.join(problems)}")
        return _state_constructor(cls)(*(values[name] for name in cls.field_names))


def _state_constructor(cls: type[AgentState]) -> Callable[..., AgentState]:
    """The compiled constructor of a state class, cached on disk.

    Numba's own proxy constructor is a fresh ``njit`` function per class that is never cached,
    so every process compiled every state it built (about half a second per agent), and it
    takes its fields as ``*args``, which Numba types in Python at every call (0.2 ms for a
    20-field state).  This one names each field as a parameter (typed by Numba's C fast path:
    0.02 ms) and is compiled with Numba's on-disk cache: its code object is attributed to this
    file, whose stamp Numba checks, and its name carries the class's module and name, so every
    class has its own cache entry.  Classes another process could not import by name (defined
    in ``__main__`` or inside a function) are compiled per process instead.
    """
    constructor = cls.__dict__.get("_compiled_constructor")
    if constructor is None:
        name = "construct_" + f"{cls.__module__}.{cls.__qualname__}".replace(".", "_").replace("<", "").replace(">", "")
        parameters = ", ".join(cls.field_names)
        source = f"def {name}({parameters}):\n    return _STATE_CLASS({parameters})\n"
        # The function lives in this module's name space as far as Numba's cache is concerned.
        namespace: dict[str, Any] = {"__name__": __name__, "_STATE_CLASS": cls}
        exec(compile(source, __file__, "exec"), namespace)  # noqa: S102 - field names are checked identifiers
        importable = cls.__module__ != "__main__" and "<" not in cls.__qualname__
        constructor = numba.njit(cache=importable, nogil=True)(namespace[name])
        cls._compiled_constructor = constructor
    return constructor


class PaperLink(NamedTuple):
    """Where the paper an algorithm implements can be read.

    Attributes
    ----------
    venue : str
        The venue as cited (``"ICML 2014, PMLR 32"``, or a journal with its DOI).
    url : str, optional
        The publisher's page: the proceedings page, the DOI resolver or the preprint server;
        empty (the default) for a paper cited by its venue only, whose page the library has not
        confirmed.
    """

    venue: str
    url: str = ""


class SeededAgent(ABC):
    """Seeding, reset, hyperparameter bookkeeping, ``repr`` and pickling shared by every agent.

    Dueling, bandit and combinatorial agents all derive from it.  A subclass sets the attributes
    that size its problem, calls ``SeededAgent.__init__`` for the generator and then builds its
    state with ``_reset_state()``; it describes its problem size in ``repr`` through
    ``_size_description()``.
    """

    #: Registry name (set by :func:`~dueling_gym.agents.register_agent`).
    name: ClassVar[str] = ""
    #: The paper the algorithm implements, by its venue and, where confirmed, the publisher's page
    #: (its documentation page links it); empty for the library's own agents only.
    paper: ClassVar[tuple[PaperLink, ...]] = ()

    def __init__(self, *, seed: SeedLike = None):
        self.seed = check_seed("seed", seed)
        self.rng = np.random.default_rng(self.seed)

    @property
    def hyperparameters(self) -> dict[str, Any]:
        """The constructor's keyword arguments (besides ``seed``) and their values."""
        names = [
            name for name, parameter in inspect.signature(type(self).__init__).parameters.items()
            if parameter.kind == parameter.KEYWORD_ONLY and name != "seed"
        ]
        return {name: getattr(self, name) for name in names}

    def reset(self, *, seed: SeedLike = None) -> None:
        """Forget everything learned; re-seed the agent's generator when ``seed`` is given.

        With ``seed=None`` the generator continues its stream (a new, different run).
        """
        if seed is not None:
            self.seed = check_seed("seed", seed)
            self.rng = np.random.default_rng(self.seed)
        self._reset_state()

    @abstractmethod
    def _reset_state(self) -> None:
        """(Re)build the learning state from scratch; called by ``__init__`` and ``reset``."""

    def _size_description(self) -> str:
        """The problem size as shown first in ``repr`` (e.g. ``"n_arms=5"``)."""
        return f"n_arms={self.n_arms}"

    def __repr__(self) -> str:
        parameters = "".join(f", {key}={value!r}" for key, value in self.hyperparameters.items())
        return f"{type(self).__name__}({self._size_description()}{parameters}, seed={self.seed!r})"

    # ------------------------------------------------------------------ pickling and copying
    def __getstate__(self) -> dict[str, Any]:
        # Structref states hold raw pointers; they travel as their fields (see _state_snapshot).
        return encode_attributes(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(decode_attributes(state))

    def __copy__(self) -> SeededAgent:
        # A shallow copy shares everything, the compiled state included (Python's usual meaning);
        # without this, copy.copy would go through __getstate__ and share only the arrays.
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        return clone


class ArmedAgent(SeededAgent):
    """A :class:`~dueling_gym.agents.base.SeededAgent` over ``n_arms`` arms (the dueling and the bandit agents)."""

    def __init__(self, n_arms: int, *, seed: SeedLike = None):
        self.n_arms = check_n_arms(n_arms, self._minimum_arms())
        if isinstance(self, DuelingAgent):  # pairwise statistics: K x K arrays
            check_pairwise_memory(f"agent {self.name or type(self).__name__!r}", self.n_arms, arrays=4)
        super().__init__(seed=seed)
        self._reset_state()

    @classmethod
    def _minimum_arms(cls) -> int:
        return 2


class DuelingAgent(ArmedAgent):
    """A dueling-bandit algorithm: chooses duels, learns from their outcomes.

    Subclasses implement :meth:`act`, :meth:`observe`, :meth:`recommend` and
    ``_reset_state``.  Agents never see rewards, ``info`` or the true preference matrix.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    seed : int, SeedSequence or None
        Seed of the agent's own ``numpy.random.Generator`` (``self.rng``).
    """

    #: True for pure-exploration agents, which expose :attr:`done`.
    pure_exploration: ClassVar[bool] = False
    #: True for agents that can stop exploring (``pure_exploration``) but then exploit their
    #: answer for ever: judged by their regret, not by their answer (SAVAGE).
    explore_then_exploit: ClassVar[bool] = False

    @classmethod
    def plays_arms(cls, n_arms: int) -> bool:
        """Whether the agent, with its default hyperparameters, can play a problem with ``n_arms``
        arms (every ``K >= 2`` unless a subclass says otherwise, e.g. a policy shipped for some
        ``K`` only)."""
        return n_arms >= 2

    @classmethod
    def content_digests(cls, n_arms: int, hyperparameters: dict[str, Any]) -> dict[str, str]:
        """SHA-256 of every file the agent would read that changes its runs, by name (none by default).

        A sweep puts these in a run's identity, so a file rewritten at the same path makes
        new runs instead of reusing the old file's.
        """
        return {}

    @abstractmethod
    def act(self) -> tuple[int, int]:
        """The next duel ``(first, second)``; ``first == second`` means pure exploitation."""

    @abstractmethod
    def observe(self, action: tuple[int, int], first_won: bool) -> None:
        """Learn from the outcome of duel ``action`` (``first_won`` is True iff ``action[0]`` won)."""

    @abstractmethod
    def recommend(self) -> int:
        """The agent's current guess of the best arm."""

    @property
    def done(self) -> bool:
        """True once a pure-exploration agent has stopped sampling; always False for the other agents."""
        return False


class KernelDuelingAgent(DuelingAgent):
    """A :class:`~dueling_gym.agents.DuelingAgent` whose per-step work runs in Numba kernels over a structref state.

    Subclasses set the three kernels as class attributes and build the state in
    ``_reset_state`` (assigning it to ``self.state``).  The Python API is implemented here,
    once, on top of the kernels; :func:`dueling_gym.experiments.simulate` fuses the same
    kernels with the Bernoulli draws into one compiled loop.
    """

    act_kernel: ClassVar[Callable[..., Any]]
    observe_kernel: ClassVar[Callable[..., Any]]
    recommend_kernel: ClassVar[Callable[..., Any]]
    state: Any

    def act(self) -> tuple[int, int]:
        first, second = type(self).act_kernel(self.state)
        return int(first), int(second)

    def observe(self, action: tuple[int, int], first_won: bool) -> None:
        first, second = check_action(action, self.n_arms)
        type(self).observe_kernel(self.state, first, second, check_outcome(first_won))

    def recommend(self) -> int:
        return int(type(self).recommend_kernel(self.state))


class BanditAgent(ArmedAgent):
    """An ordinary (cardinal) multi-armed bandit algorithm: ``act() -> arm``, ``observe(arm, reward)``.

    Rewards lie in ``[0, 1]``.  Sparring and the reduction wrappers build on these agents.
    """

    @abstractmethod
    def act(self) -> int:
        """The next arm to pull."""

    @abstractmethod
    def observe(self, arm: int, reward: float) -> None:
        """Learn from reward ``reward`` in ``[0, 1]`` of arm ``arm``."""

    @abstractmethod
    def recommend(self) -> int:
        """The arm currently believed best."""

    def _check_arm_reward(self, arm: Any, reward: Any) -> tuple[int, float]:
        return check_arm(arm, self.n_arms), check_reward(reward)


class KernelBanditAgent(BanditAgent):
    """A :class:`BanditAgent` whose per-step work runs in Numba kernels (see :class:`~dueling_gym.agents.KernelDuelingAgent`).

    Kernels: ``act(state) -> arm``, ``observe(state, arm, reward)``, ``recommend(state) -> arm``.
    Dueling agents built from bandit agents (Sparring) call these kernels from their own.
    """

    act_kernel: ClassVar[Callable[..., Any]]
    observe_kernel: ClassVar[Callable[..., Any]]
    recommend_kernel: ClassVar[Callable[..., Any]]
    state: Any

    def act(self) -> int:
        return int(type(self).act_kernel(self.state))

    def observe(self, arm: int, reward: float) -> None:
        arm, reward = self._check_arm_reward(arm, reward)
        type(self).observe_kernel(self.state, arm, reward)

    def recommend(self) -> int:
        return int(type(self).recommend_kernel(self.state))


class ReplayPickling:
    """Mixin: pickling and ``copy.deepcopy`` for agents whose state includes a running Python generator.

    A generator cannot be copied, but such an agent's whole state is a function of how it was
    built, of its generator state at the last reset and of the outcomes fed to the algorithm
    since (the algorithms are deterministic given their generator).  The copy is rebuilt from
    these three and replays the outcomes, after which it continues the exact trajectory of the
    original.  The price is recomputing the run so far; one byte is kept per outcome.

    A subclass calls ``_start_replay_log()`` at the start of ``_reset_state``, calls
    ``_log_outcome()`` whenever an outcome advances the algorithm, and implements
    ``_replay_outcome()`` (advance by one logged outcome, logging it again).  Attributes set by
    hand after construction are not carried over.
    """

    rng: np.random.Generator
    seed: Any
    _replay_rng_state: dict[str, Any]
    _replay_outcomes: bytearray

    def _start_replay_log(self) -> None:
        self._replay_rng_state = self.rng.bit_generator.state
        self._replay_outcomes = bytearray()

    def _log_outcome(self, first_won: bool) -> None:
        self._replay_outcomes.append(first_won)

    def _replay_outcome(self, first_won: bool) -> None:
        """Advance the algorithm by one logged outcome (and log it again)."""
        raise NotImplementedError

    def _replay_arguments(self) -> tuple[Any, ...]:
        """The positional arguments of the constructor (default: ``n_arms``)."""
        return (getattr(self, "n_arms"),)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_replayed_agent, (type(self), self._replay_arguments(), getattr(self, "hyperparameters"), self.seed,
                                  self._replay_rng_state, bytes(self._replay_outcomes)))

    def __copy__(self) -> Any:
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        return clone


def _replayed_agent(cls: type, arguments: tuple[Any, ...], hyperparameters: dict[str, Any], seed: Any,
                    rng_state: dict[str, Any], outcomes: bytes) -> Any:
    """Rebuild a pickled :class:`ReplayPickling` agent: construct, rewind the generator, replay."""
    agent = cls(*arguments, seed=seed, **hyperparameters)
    agent.rng.bit_generator.state = rng_state
    agent._reset_state()
    for first_won in outcomes:
        agent._replay_outcome(bool(first_won))
    return agent


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
        :data:`~dueling_gym.agents.base.TARGETS`.  Default: the class's own ``target`` attribute when it is
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
