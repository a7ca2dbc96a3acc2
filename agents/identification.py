"""Common base of the identification (pure-exploration) agents over ``K`` arms.

An identification agent samples duels until its stopping rule fires, then answers a question
about the preference matrix: the best arm (``answer_type = "winner"``), a full ranking
(``"ranking"``) or the set of the ``k`` best arms (``"top_k"``), under a notion of "best" named
by ``target`` (``"condorcet"``, ``"borda"`` or ``"copeland"``).

:class:`KernelIdentificationAgent` extends the fast kernel agents with two more kernels:

* ``done_kernel(state) -> bool``: the stopping rule has fired;
* ``ranking_kernel(state) -> int64 array``: every arm, best first (the answer once ``done``;
  the current guess before).

After stopping, ``act`` keeps returning the self-duel ``(winner, winner)`` (pure exploitation,
no information), so the agents also run in the regret simulator and in a Gymnasium loop of any
length; :func:`dueling_gym.experiments.run_pure_exploration` stops on ``done``.
Duels that are not the one the agent asked for are ignored by every identification agent: a
sample only counts for the comparison that requested it.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Callable, ClassVar, Generator

import numba
import numpy as np

from dueling_gym.agents.base import DuelingAgent, KernelDuelingAgent, ReplayPickling
from dueling_gym.validation import check_action, check_integer, check_outcome, check_probability

__all__ = ["IdentificationMixin", "KernelIdentificationAgent", "ProcedureIdentificationAgent",
           "ConfidentProcedureAgent", "finished_done", "shuffle_prefix", "uniform_below", "ANSWER_TYPES", "TARGETS"]

_BOOLEANS = (bool, np.bool_)

#: What an identification agent returns.
ANSWER_TYPES = ("winner", "ranking", "top_k")
#: The winner notions an identification agent can target.
TARGETS = ("condorcet", "borda", "copeland")


class IdentificationMixin:
    """The answer API shared by identification agents (kernel-based or plain Python).

    Subclasses provide :meth:`ranking` and :attr:`~dueling_gym.agents.DuelingAgent.done`; ``answer_type``,
    ``target`` and
    (for ``"top_k"`` answers) the attribute ``k`` describe the answer.
    """

    pure_exploration: ClassVar[bool] = True
    #: ``"winner"``, ``"ranking"`` or ``"top_k"``.
    answer_type: ClassVar[str] = "winner"
    #: ``"condorcet"``, ``"borda"`` or ``"copeland"``.
    target: ClassVar[str] = "condorcet"

    def ranking(self) -> np.ndarray:  # pragma: no cover - abstract in spirit
        """Every arm, best first (the answer once :attr:`~dueling_gym.agents.DuelingAgent.done`, the current guess before)."""
        raise NotImplementedError

    def top_k(self, k: int | None = None) -> np.ndarray:
        """The ``k`` best arms of :meth:`ranking` (default: the agent's own ``k``, else 1)."""
        if k is None:
            k = int(getattr(self, "k", 1) or 1)
        k = check_integer("k", k, minimum=1, maximum=self.n_arms)  # type: ignore[attr-defined]
        return self.ranking()[:k]

    def answer(self) -> Any:
        """The agent's answer: an arm (``"winner"``), a ranking array or a top-``k`` array."""
        if self.answer_type == "winner":
            return int(self.recommend())  # type: ignore[attr-defined]
        if self.answer_type == "top_k":
            return self.top_k()
        return self.ranking()


@numba.njit(cache=True, nogil=True)
def finished_done(state):
    """The default ``done_kernel``: the state's ``finished`` flag, set by the observe kernel when it stops."""
    return state.finished


class KernelIdentificationAgent(IdentificationMixin, KernelDuelingAgent):
    """A :class:`~dueling_gym.agents.KernelDuelingAgent` that stops: adds the ``done`` and ``ranking`` kernels.

    ``done_kernel`` defaults to ``finished_done`` (this module), for states that keep a ``finished`` flag.
    """

    done_kernel: ClassVar[Callable[..., Any]] = finished_done
    ranking_kernel: ClassVar[Callable[..., Any]]

    @property
    def done(self) -> bool:
        """True once the stopping rule has fired."""
        return bool(type(self).done_kernel(self.state))

    def ranking(self) -> np.ndarray:
        return np.asarray(type(self).ranking_kernel(self.state), dtype=np.int64).copy()


class ProcedureIdentificationAgent(IdentificationMixin, ReplayPickling, DuelingAgent):
    """An identification agent written as one sequential procedure (a Python generator).

    Subclasses implement ``_procedure()``, the algorithm exactly as the paper states it: each
    ``first_won = yield (i, j)`` asks for one duel and receives its outcome, and returning ends
    the run.  ``act``/``observe`` drive the generator one duel at a time, so the algorithm runs
    unchanged in the runner, the regret simulator and a Gymnasium loop.  The procedure keeps its
    answer in attributes that :meth:`~dueling_gym.agents.identification.IdentificationMixin.ranking` /
    :meth:`~dueling_gym.agents.DuelingAgent.recommend` read.  Pickling and deep copies
    replay the outcomes since the last reset (:class:`~dueling_gym.agents.base.ReplayPickling`).
    """

    def _reset_state(self) -> None:
        self._start_replay_log()
        self._finished = False
        self._pending: tuple[int, int] | None = None
        self._stopped_arm: int | None = None  # the answer's arm, computed once after stopping
        self._reset_answer()
        self._steps = self._procedure()
        self._resume(None)

    @abstractmethod
    def _reset_answer(self) -> None:
        """Reset the attributes holding the answer (called before the procedure starts)."""

    @abstractmethod
    def _procedure(self) -> Generator[tuple[int, int], bool, None]:
        """The algorithm: yields duels, receives their outcomes, returns when it stops."""

    def _resume(self, outcome: bool | None) -> None:
        try:
            pair = next(self._steps) if outcome is None else self._steps.send(outcome)
        except StopIteration:
            self._finished = True
            self._pending = None
            return
        self._pending = (int(pair[0]), int(pair[1]))

    @property
    def done(self) -> bool:
        """True once the procedure has returned."""
        return self._finished

    def act(self) -> tuple[int, int]:
        if self._pending is None:
            # Stopped: self-duels of the answer carry no information and change nothing, so the
            # answer (which may cost a full ranking) is computed once.
            if self._stopped_arm is None:
                self._stopped_arm = int(self.recommend())
            return self._stopped_arm, self._stopped_arm
        return self._pending

    def observe(self, action: tuple[int, int], first_won: bool) -> None:
        pending = self._pending
        # Fast path: the requested duel with a boolean outcome needs no further validation.
        # (Python ints only: (True, False) equals (1, 0) but is not a duel.)
        if (type(action) is tuple and action == pending and type(first_won) in _BOOLEANS
                and type(action[0]) is int and type(action[1]) is int):
            self._advance(bool(first_won))
            return
        action = check_action(action, self.n_arms)
        outcome = check_outcome(first_won)
        if pending is not None and action == pending:
            self._advance(outcome)

    def _advance(self, outcome: bool) -> None:
        self._log_outcome(outcome)
        self._resume(outcome)

    def _replay_outcome(self, first_won: bool) -> None:
        self._advance(first_won)


class ConfidentProcedureAgent(ProcedureIdentificationAgent):
    """A :class:`ProcedureIdentificationAgent` at confidence ``δ`` that tallies its duels per pair.

    ``wins`` and ``counts`` (``K x K`` floats, zero after every reset) are the outcome tallies the
    procedure fills; subclasses that keep more answer attributes extend ``_reset_answer`` and
    call it first.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    delta : float, default 0.05
        Confidence ``δ`` in ``(0, 1)``.
    seed : int, optional
        Seed of the agent's generator.
    """

    def __init__(self, n_arms: int, *, delta: float = 0.05, seed=None):
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        super().__init__(n_arms, seed=seed)

    def _reset_answer(self) -> None:
        self.wins = np.zeros((self.n_arms, self.n_arms))
        self.counts = np.zeros((self.n_arms, self.n_arms))


@numba.njit(cache=True, nogil=True)
def uniform_below(rng, count):
    """A uniform integer in ``[0, count)`` from one uniform double (cheaper than ``integers`` in Numba)."""
    value = np.int64(rng.random() * count)
    return value if value < count else count - 1


@numba.njit(cache=True, nogil=True)
def shuffle_prefix(values, count, rng):
    """Shuffle ``values[:count]`` in place (Fisher-Yates), uniformly over permutations."""
    for position in range(count - 1, 0, -1):
        other = uniform_below(rng, position + 1)
        held = values[position]
        values[position] = values[other]
        values[other] = held
