"""The common agent API: :class:`DuelingAgent`, :class:`BanditAgent` and the agent registry.

Writing a new dueling algorithm
-------------------------------
Subclass :class:`DuelingAgent` and implement ``_reset_state()``, ``act()``, ``observe()`` and
``recommend()``.  That is enough to run it in a Gymnasium loop, in
:func:`dueling_gym.experiments.simulate` (generic loop) and in sweeps.

To make it fast, subclass :class:`KernelDuelingAgent` instead: keep the whole state in a Numba
structref (arrays, scalars and the agent's ``numpy.random.Generator``) and write three
``numba.njit(cache=True)`` kernels ``act(state) -> (i, j)``, ``observe(state, i, j,
first_won)`` and ``recommend(state) -> int``.  The Python methods call the kernels, and the
fast simulator calls the very same kernels inside one compiled loop, so both paths give the
same trajectory for the same seeds.  See ``agents/rucb.py`` for a complete example.
"""

from __future__ import annotations

import inspect
from operator import index
from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar

import numpy as np
from numba.core import types

__all__ = [
    "AgentStateType",
    "DuelingAgent",
    "KernelDuelingAgent",
    "BanditAgent",
    "KernelBanditAgent",
    "register_agent",
    "make_agent",
    "list_agents",
    "agent_kind",
    "AGENT_REGISTRY",
    "check_n_arms",
    "check_action",
    "check_number",
]

SeedLike = int | np.random.SeedSequence | None

#: name -> agent class; filled by :func:`register_agent`.
AGENT_REGISTRY: dict[str, type] = {}


class AgentStateType(types.StructRef):
    """Base of the Numba structref types that hold a kernel agent's state.

    Subclass it once per agent and decorate the subclass with ``numba.experimental.structref.register``;
    literal field types (e.g. a Python ``True`` passed at construction) are widened so one
    compiled kernel serves every state of that agent.
    """

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


def check_n_arms(n_arms: Any, minimum: int = 2) -> int:
    """Validate a number of arms (an integer ``>= minimum``)."""
    if isinstance(n_arms, bool) or not isinstance(n_arms, (int, np.integer)):
        raise TypeError(f"n_arms must be an integer, got {type(n_arms).__name__}")
    if n_arms < minimum:
        raise ValueError(f"n_arms must be at least {minimum}, got {n_arms}")
    return int(n_arms)


def check_action(action: Any, n_arms: int) -> tuple[int, int]:
    """Validate a duel ``(first, second)`` and return it as two Python ints."""
    try:
        first, second = action
        first, second = index(first), index(second)
    except (TypeError, ValueError):
        raise TypeError(f"action must be a pair of integer arms (first, second), got {action!r}") from None
    if not (0 <= first < n_arms and 0 <= second < n_arms):
        raise ValueError(f"action {action!r} is out of range: arms must lie in [0, {n_arms - 1}]")
    return first, second


def check_number(name: str, value: Any, *, strict: bool = True, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if minimum is not None:
        if (strict and value <= minimum) or (not strict and value < minimum):
            raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum}, got {value}")
    return value


class _AgentBase(ABC):
    """Seeding, hyperparameter bookkeeping and ``repr`` shared by every agent."""

    #: Registry name (set by :func:`register_agent`).
    name: ClassVar[str] = ""

    def __init__(self, n_arms: int, *, seed: SeedLike = None):
        self.n_arms = check_n_arms(n_arms, self._minimum_arms())
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self._reset_state()

    @classmethod
    def _minimum_arms(cls) -> int:
        return 2

    @property
    def hyperparameters(self) -> dict[str, Any]:
        """The constructor's keyword arguments (besides ``n_arms`` and ``seed``) and their values."""
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
            self.seed = seed
            self.rng = np.random.default_rng(seed)
        self._reset_state()

    @abstractmethod
    def _reset_state(self) -> None:
        """(Re)build the learning state from scratch; called by ``__init__`` and ``reset``."""

    def __repr__(self) -> str:
        parameters = "".join(f", {key}={value!r}" for key, value in self.hyperparameters.items())
        return f"{type(self).__name__}(n_arms={self.n_arms}{parameters}, seed={self.seed!r})"


class DuelingAgent(_AgentBase):
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
        """Pure-exploration agents: True once they have stopped sampling. Always False otherwise."""
        return False


class KernelDuelingAgent(DuelingAgent):
    """A :class:`DuelingAgent` whose per-step work runs in Numba kernels over a structref state.

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
        type(self).observe_kernel(self.state, first, second, bool(first_won))

    def recommend(self) -> int:
        return int(type(self).recommend_kernel(self.state))


class BanditAgent(_AgentBase):
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
        try:
            arm = index(arm)
        except TypeError:
            raise TypeError(f"arm must be an integer, got {arm!r}") from None
        if not 0 <= arm < self.n_arms:
            raise ValueError(f"arm {arm} is out of range: arms must lie in [0, {self.n_arms - 1}]")
        if isinstance(reward, (bool, np.bool_)):
            reward = float(reward)
        try:
            reward = float(reward)
        except (TypeError, ValueError):
            raise TypeError(f"reward must be a number in [0, 1], got {reward!r}") from None
        if not 0.0 <= reward <= 1.0:
            raise ValueError(f"reward must lie in [0, 1], got {reward}")
        return arm, reward


class KernelBanditAgent(BanditAgent):
    """A :class:`BanditAgent` whose per-step work runs in Numba kernels (see :class:`KernelDuelingAgent`).

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


def register_agent(name: str) -> Callable[[type], type]:
    """Class decorator: make an agent constructible by name with :func:`make_agent`."""

    def decorator(cls: type) -> type:
        key = name.lower()
        if key in AGENT_REGISTRY and AGENT_REGISTRY[key] is not cls:
            raise ValueError(f"agent name {name!r} is already registered to {AGENT_REGISTRY[key].__name__}")
        AGENT_REGISTRY[key] = cls
        cls.name = key
        return cls

    return decorator


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


def make_agent(name: str, n_arms: int, *, seed: SeedLike = None, **hyperparameters: Any) -> Any:
    """Build a registered agent by name, e.g. ``make_agent("rucb", n_arms=5, seed=0, alpha=0.51)``.

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the registered names).
    TypeError
        If a hyperparameter is not accepted by that agent.
    """
    key = str(name).lower()
    if key not in AGENT_REGISTRY:
        raise ValueError(f"unknown agent {name!r}; choose one of {list_agents()}")
    cls = AGENT_REGISTRY[key]
    accepted = [
        parameter for parameter, spec in inspect.signature(cls.__init__).parameters.items()
        if spec.kind == spec.KEYWORD_ONLY and parameter != "seed"
    ]
    unknown = sorted(set(hyperparameters) - set(accepted))
    if unknown:
        raise TypeError(f"{cls.__name__} does not accept {unknown}; its hyperparameters are {accepted}")
    return cls(n_arms, seed=seed, **hyperparameters)
