"""REX3: Relative Exponential-weight algorithm for Exploration and Exploitation.

Gajane, Urvoy, Clérot. *A Relative Exponential Weighing Algorithm for Adversarial
Utility-based Dueling Bandits.* ICML 2015 (Algorithm 1, REX3).

REX3 is Exp3 for duels: one weight per arm, and both arms of a duel are drawn independently
from the same mixture ``p_i = (1 - gamma) w_i / sum_j w_j + gamma / K`` (Algorithm 1, lines
3-4).  The relative outcome ``psi = +1`` if the first arm won and ``-1`` otherwise yields the
importance-weighted estimates ``c_a = psi / (2 p_a)`` and ``c_b = -psi / (2 p_b)`` (line 6), and
``w_i <- w_i exp(gamma c_i / K)`` (line 7).  A self-duel ``a = b`` changes nothing: both
updates cancel (the paper's utility feedback for ``a = b`` is ``psi = 0``).

The weights are kept as logarithms and the mixture is computed from ``log w - max log w``, so
no weight overflows however long the run.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._random_draws import draw_index
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import SeedLike, check_integer, check_number

__all__ = ["REX3"]


class REX3State(AgentState, fields=["rng", "log_weights", "probabilities", "gamma", "t"]):
    """Numba-side state of :class:`REX3`."""


@numba.njit(cache=True, nogil=True)
def _mixture(state):
    """Fill ``probabilities`` with ``(1 - gamma) w / sum w + gamma / K`` (line 3)."""
    log_weights = state.log_weights
    n_arms = log_weights.shape[0]
    top = log_weights.max()
    total = 0.0
    for arm in range(n_arms):
        value = math.exp(log_weights[arm] - top)
        state.probabilities[arm] = value
        total += value
    gamma = state.gamma
    for arm in range(n_arms):
        state.probabilities[arm] = (1.0 - gamma) * state.probabilities[arm] / total + gamma / n_arms


@numba.njit(cache=True, nogil=True)
def rex3_act(state):
    _mixture(state)
    # Line 4: a and b drawn independently from p (with replacement).
    first = draw_index(state.probabilities, state.rng)
    return first, draw_index(state.probabilities, state.rng)


@numba.njit(cache=True, nogil=True)
def rex3_observe(state, first, second, first_won):
    state.t += 1
    if first == second:
        return
    _mixture(state)  # the weights have not changed since act: the same p
    psi = 1.0 if first_won else -1.0
    step = state.gamma / state.log_weights.shape[0]
    state.log_weights[first] += step * psi / (2.0 * state.probabilities[first])
    state.log_weights[second] -= step * psi / (2.0 * state.probabilities[second])


@numba.njit(cache=True, nogil=True)
def rex3_recommend(state):
    return np.argmax(state.log_weights)


@register_agent("rex3", target="utility")
class REX3(KernelDuelingAgent):
    """REX3 (Gajane, Urvoy & Clérot, ICML 2015, Algorithm 1) for adversarial utility-based duels.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    horizon : int, optional
        Horizon ``T``; when ``gamma`` is not given it is set to ``min(1/2, sqrt(K ln K / T))``,
        the finite-horizon value of the authors' published implementation (the paper's regret
        bound ``O(sqrt(K ln K T))`` is reached with a ``gamma`` of that order).
    gamma : float, optional
        Exploration rate ``gamma`` in ``(0, 1/2]``; overrides the horizon-based value.
    seed : int, optional
        Seed of the agent's generator (the two arms are drawn from it).

    Notes
    -----
    One of ``horizon`` and ``gamma`` must be given.  The expected regret against the best arm
    is ``O(sqrt(K ln K T))`` even when an adversary chooses the utilities (Theorem 1), so the
    regret is sublinear but not logarithmic on stochastic problems.  The authors' published
    implementation divides the second arm's estimate by ``2^{p_b}`` (a typo for ``2 p_b``); we
    use ``2 p_b``, which makes the estimates of the two arms symmetric as in the paper.
    :meth:`~dueling_gym.agents.DuelingAgent.recommend` returns the arm of largest weight (lowest index on
    ties).  ``O(K)`` per
    step.
    """

    paper = (PaperLink("ICML 2015, PMLR 37", "https://proceedings.mlr.press/v37/gajane15.html"),)
    guarantee = (
        "Expected regret ``O(sqrt(K ln K · T))`` against the best arm of a utility-based model, even when an "
        "adversary chooses the utilities (Gajane, Urvoy & Clérot, ICML 2015, Theorem 1): sublinear, not "
        "logarithmic, on stochastic problems."
    )

    act_kernel = rex3_act
    observe_kernel = rex3_observe
    recommend_kernel = rex3_recommend

    def __init__(self, n_arms: int, *, horizon: int | None = None, gamma: float | None = None,
                 seed: SeedLike = None):
        if horizon is not None:
            horizon = check_integer("horizon", horizon, minimum=1)
        if gamma is not None:
            gamma = check_number("gamma", gamma, minimum=0.0, maximum=0.5)
        elif horizon is None:
            raise ValueError("REX3 needs gamma or a horizon (gamma = min(1/2, sqrt(K ln K / T)))")
        self.horizon = horizon
        self.gamma = gamma
        super().__init__(n_arms, seed=seed)

    @property
    def exploration_rate(self) -> float:
        """The ``gamma`` in use (the given one, else ``min(1/2, sqrt(K ln K / T))``)."""
        if self.gamma is not None:
            return self.gamma
        return min(0.5, math.sqrt(self.n_arms * math.log(self.n_arms) / self.horizon))

    def _reset_state(self) -> None:
        self.log_weights = np.zeros(self.n_arms)
        self.state = REX3State(
            rng=self.rng, log_weights=self.log_weights, probabilities=np.full(self.n_arms, 1.0 / self.n_arms),
            gamma=self.exploration_rate, t=0,
        )
