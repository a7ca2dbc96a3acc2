"""Small Numba kernels shared by the cardinal-bandit learners and the agents built on them.

* :func:`bandit_act`, :func:`bandit_observe`, :func:`bandit_recommend` are generic entry points
  that compiled code (e.g. Sparring's kernels) calls on the structref state of *any* registered
  bandit learner.  Numba picks the learner's own kernel from the state's type at compile time,
  so there is no run-time dispatch cost.  Each bandit module registers its state type with
  :func:`register_bandit_kernels`.
* :func:`beta_argmax` is the Thompson-sampling step shared by Bernoulli Thompson sampling and
  Self-Sparring: one ``Beta(S_i + 1, F_i + 1)`` draw per arm, argmax with random ties.
* :func:`bernoulli_reward` is the Bernoulli trick of Agrawal & Goyal (2012) for rewards in
  ``[0, 1]``.
"""

from __future__ import annotations

from typing import Any, Callable

import numba
import numpy as np
from numba.extending import overload

from dueling_gym.agents._random_draws import below

__all__ = [
    "register_bandit_kernels",
    "bandit_act",
    "bandit_observe",
    "bandit_recommend",
    "beta_argmax",
    "bernoulli_reward",
]

#: structref type class -> (act, observe, recommend) kernels of a bandit learner.
_BANDIT_KERNELS: dict[type, tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]] = {}


def register_bandit_kernels(state_type: type, act: Callable[..., Any], observe: Callable[..., Any],
                            recommend: Callable[..., Any]) -> None:
    """Make :func:`bandit_act` & co. accept states of ``state_type`` (a ``StructRef`` subclass)."""
    _BANDIT_KERNELS[state_type] = (act, observe, recommend)


def _kernels_for(state: Any) -> tuple[Callable[..., Any], ...] | None:
    return _BANDIT_KERNELS.get(type(state))


def bandit_act(state: Any) -> int:
    """The next arm of the bandit learner whose state is ``state`` (compiled code only)."""
    raise TypeError("bandit_act dispatches on a learner's Numba state (via numba.extending.overload) and is only "
                    "callable from compiled kernels; from Python, call the agent's own method")


def bandit_observe(state: Any, arm: int, reward: float) -> None:
    """Feed ``reward`` in ``[0, 1]`` of ``arm`` to the learner whose state is ``state`` (compiled code only)."""
    raise TypeError("bandit_observe dispatches on a learner's Numba state (via numba.extending.overload) and is only "
                    "callable from compiled kernels; from Python, call the agent's own method")


def bandit_recommend(state: Any) -> int:
    """The recommended arm of the learner whose state is ``state`` (compiled code only)."""
    raise TypeError("bandit_recommend dispatches on a learner's Numba state (via numba.extending.overload) and is only "
                    "callable from compiled kernels; from Python, call the agent's own method")


@overload(bandit_act)
def _overload_bandit_act(state):
    kernels = _kernels_for(state)
    if kernels is None:
        return None
    act = kernels[0]

    def implementation(state):
        return act(state)

    return implementation


@overload(bandit_observe)
def _overload_bandit_observe(state, arm, reward):
    kernels = _kernels_for(state)
    if kernels is None:
        return None
    observe = kernels[1]

    def implementation(state, arm, reward):
        observe(state, arm, reward)

    return implementation


@overload(bandit_recommend)
def _overload_bandit_recommend(state):
    kernels = _kernels_for(state)
    if kernels is None:
        return None
    recommend = kernels[2]

    def implementation(state):
        return recommend(state)

    return implementation


@numba.njit(cache=True, nogil=True)
def beta_argmax(successes: np.ndarray, failures: np.ndarray, rng: np.random.Generator) -> int:
    """``argmax_i theta_i`` with ``theta_i ~ Beta(successes[i] + 1, failures[i] + 1)``, random ties.

    Ties (exact float equality, which has probability zero unless the sampler degenerates) are
    broken uniformly by reservoir sampling, so the generator is consumed only when one occurs.
    """
    best_arm = 0
    best_value = -1.0
    n_best = 0
    for arm in range(successes.shape[0]):
        value = rng.beta(successes[arm] + 1.0, failures[arm] + 1.0)
        if value > best_value:
            best_value = value
            best_arm = arm
            n_best = 1
        elif value == best_value:
            n_best += 1
            if below(rng.bit_generator, n_best) == 0:
                best_arm = arm
    return best_arm


@numba.njit(cache=True, nogil=True)
def bernoulli_reward(reward: float, rng: np.random.Generator) -> bool:
    """A Bernoulli(``reward``) draw (Agrawal & Goyal's trick); no draw is made for ``reward`` in {0, 1}."""
    if reward >= 1.0:
        return True
    if reward <= 0.0:
        return False
    return rng.random() < reward


# ---------------------------------------------------------------------------------------------
# Pieces shared by the index-based learners (UCB1, UCB-SBM, KL-UCB) and Thompson sampling.
# ---------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def mean_plus_bonus_argmax(counts: np.ndarray, sums: np.ndarray, scale: float) -> int:
    """``argmax_i mean_i + sqrt(scale / n_i)``; an unplayed arm first (lowest index), ties to the lowest index.

    UCB1 uses ``scale = 2 ln t``, UCB-SBM ``scale = (a + 2) ln t / 2``.
    """
    best_arm = 0
    best = -np.inf
    for arm in range(counts.shape[0]):
        count = counts[arm]
        if count == 0:
            return arm
        index = sums[arm] / count + np.sqrt(scale / count)
        if index > best:
            best = index
            best_arm = arm
    return best_arm


@numba.njit(cache=True, nogil=True)
def record_pull(state, arm, reward):
    """Add a pull of ``arm`` with ``reward`` to a learner state with ``counts``, ``sums`` and ``t``."""
    state.counts[arm] += 1
    state.sums[arm] += reward
    state.t += 1


@numba.njit(cache=True, nogil=True)
def most_played(state):
    """The most played arm (lowest index on ties): every bandit learner's recommendation."""
    return np.argmax(state.counts)
