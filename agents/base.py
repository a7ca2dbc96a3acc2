"""The agent base classes: what every algorithm implements.

What a subclass implements
--------------------------
* :class:`~dueling_gym.agents.DuelingAgent` (a dueling-bandit algorithm): ``_reset_state()``
  (build the learning state from scratch), ``act() -> (i, j)``, ``observe(action, first_won)``
  and ``recommend() -> int``.
* :class:`~dueling_gym.agents.KernelDuelingAgent` (the same, compiled): ``_reset_state()``,
  which assigns the state (an :class:`~dueling_gym.agents.state.AgentState`) to ``self.state``,
  and three ``numba.njit(cache=True)`` kernels as class attributes:
  ``act_kernel(state) -> (i, j)``, ``observe_kernel(state, i, j, first_won)`` and
  ``recommend_kernel(state) -> int``.
* :class:`~dueling_gym.agents.BanditAgent` (a cardinal bandit algorithm): ``_reset_state()``,
  ``act() -> arm``, ``observe(arm, reward)`` and ``recommend() -> arm``.
* :class:`~dueling_gym.agents.KernelBanditAgent`: ``_reset_state()`` and the kernels
  ``act_kernel(state) -> arm``, ``observe_kernel(state, arm, reward)`` and
  ``recommend_kernel(state) -> arm``.

Everything else has a default a subclass may override: the smallest number of arms
(``_minimum_arms``), which problem sizes the defaults play (``plays_arms``), the files a run
depends on (``content_digests``), whether the agent stops (``pure_exploration`` and ``done``)
and how ``repr`` shows the problem size (``_size_description``).  The constructor takes the
problem size positionally and the hyperparameters by keyword, stores each hyperparameter
under its own name (``hyperparameters`` and ``repr`` read them back) and then calls
``super().__init__``, which seeds ``self.rng`` and calls ``_reset_state()``.

Writing a new dueling algorithm
-------------------------------
Subclass :class:`~dueling_gym.agents.DuelingAgent`; that is enough to run it in a Gymnasium
loop, in :func:`dueling_gym.experiments.simulate` (generic loop) and in sweeps.  To make it
fast, subclass :class:`~dueling_gym.agents.KernelDuelingAgent` instead: the Python methods call
the kernels, and the fast simulator calls the very same kernels inside one compiled loop, so
both paths give the same trajectory for the same seeds.  See ``agents/rucb.py`` for a complete
example.  :func:`~dueling_gym.agents.register_agent` (in :mod:`dueling_gym.agents.registry`)
makes the class constructible by name.  Its class attributes ``paper`` and ``guarantee`` say where
the algorithm comes from and what that paper proves about it; the algorithm pages print both.

Pickling and copying
--------------------
Every agent can be pickled and deep-copied (checkpoints, worker processes, what-if forks); the
copy continues the exact trajectory of the original, generator stream included.  Structref
states are handled generically (by a private module of the package): their fields are
read by name, nested states and arrays shared with Python attributes stay shared.  An agent that
keeps part of its state outside ``__dict__`` and its structrefs (e.g. in a process-wide registry)
extends ``__getstate__`` / ``__setstate__``; one whose state includes a running Python generator
uses :class:`ReplayPickling`.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar, NamedTuple

import numpy as np

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
    "PaperLink",
    "SeededAgent",
    "ArmedAgent",
    "DuelingAgent",
    "KernelDuelingAgent",
    "RUCBBoundsAgent",
    "BanditAgent",
    "KernelBanditAgent",
    "ReplayPickling",
]


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
    #: One sentence on what the paper proves about the algorithm.  It gives the kind of result
    #: (expected or high-probability regret, sample complexity, finite-time or asymptotic), its order
    #: and the assumption it needs (a Condorcet winner, a total order with stochastic transitivity, a
    #: utility-based model, none for Copeland) and cites the theorem or section; or it says plainly
    #: that the paper proves none, or reports what the abstract claims, marked "(as stated in the
    #: abstract)", where the theorem was not checked.  Each registered agent declares its own (the
    #: algorithm pages show it); empty for an agent that states none, such as a user's.
    guarantee: ClassVar[str] = ""

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


class RUCBBoundsAgent(KernelDuelingAgent):
    """Base of the agents whose confidence bounds are RUCB's, ``u = mu_hat + sqrt(alpha ln t / N)``.

    Takes and checks the exploration parameter ``alpha > 1/2`` (0.51 by default, as in Komiyama
    et al. 2016 and the DTS authors' experiments); used by RUCB, MultiRUCB, RCS and D-TS.  The
    bounds themselves are compiled functions shared with the other agents that use them.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    alpha : float
        Exploration parameter of the bounds, ``alpha > 1/2`` (Zoghi et al., ICML 2014, Algorithm 1).
    seed : int, SeedSequence or None
        Seed of the agent's own ``numpy.random.Generator``.
    """

    def __init__(self, n_arms: int, *, alpha: float = 0.51, seed: SeedLike = None):
        self.alpha = check_number("alpha", alpha, minimum=0.5)
        super().__init__(n_arms, seed=seed)


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
