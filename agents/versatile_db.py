"""Versatile-DB: the dueling-to-bandit reduction run with two Tsallis-INF learners.

Saha, Gaillard. *Versatile Dueling Bandits: Best-of-both World Analyses for Learning from
Relative Preferences.* ICML 2022, PMLR 162 (the reduction of §3 and its Tsallis-INF instance,
Versatile-DB, of §4; the arXiv version, 2202.06694, is titled "...Best-of-both-World Analyses for
Online Learning from Preferences").  The learner is Tsallis-INF with the 1/2-Tsallis entropy
(Zimmert & Seldin, JMLR 2021, Algorithm 1, with the Newton normalisation of their Algorithm 2).

The reduction turns the duel into two adversarial multi-armed bandit games, one per side of the
duel.  The left learner ``+`` and the right learner ``-`` each keep a vector of cumulative loss
estimates ``L_hat^+``, ``L_hat^-``; at duel ``t``:

* **[FTRL]** each side plays ``x_t = argmin_{x in simplex} <L_hat_{t-1}, x> + psi_t(x)`` with the
  1/2-Tsallis regulariser ``psi_t(x) = -(4 / eta_t) sum_i sqrt(x_i)`` and ``eta_t = c / sqrt(t)``;
  in closed form ``x_{t,i} = 4 / (eta_t (L_hat_{t-1,i} - lambda))^2``, with the normaliser
  ``lambda < min_i L_hat_{t-1,i}`` found by Newton's method;
* **[sample]** ``k^+ ~ x_t^+`` and ``k^- ~ x_t^-``, independently; the duel is ``(k^+, k^-)``;
* **[estimate]** with ``o_t = 1`` iff ``k^+`` won, the importance-weighted losses are
  ``l_hat^+(k^+) = (1 - o_t) / x^+_{t,k^+}`` and ``l_hat^-(k^-) = o_t / x^-_{t,k^-}`` (zero for the
  other arms), added to ``L_hat^+`` and ``L_hat^-``.

The loss of arm ``i`` for the left learner is the probability that it loses against the right
learner's draw, and symmetrically; against a Condorcet winner ``i*`` each learner's bandit regret
is at least its half of the dueling regret, so the two Tsallis-INF guarantees carry over:
``O(sqrt(K T))`` against adversarial preferences and ``O(sum_i log T / Delta_i)`` under
stochastic preferences with a Condorcet winner (the paper's best-of-both-worlds results).

Implementation choices:

* ``c = 2`` by default: ``eta_t = 2 / sqrt(t)`` is the learning rate of Tsallis-INF with
  importance-weighted estimates in Zimmert & Seldin's analysis, which the reduction inherits;
  with the factor 4 of the regulariser, ``x_{t,i} = t / (L_hat_{t-1,i} - lambda)^2`` at ``c = 2``.
* Newton's method starts at ``lambda_0 = min_i L_hat_i - 2 / eta_t``, where the leading arm alone
  has weight 1, so ``sum_i x_i >= 1``; the sum is convex and increasing in ``lambda``, so from
  this side the iterates fall monotonically to the root without passing it.  They stop when
  the sum is within ``1e-12`` of 1 (at most 50 steps) and the weights are then divided by their
  sum.
* A duel ``(k, k)`` is fed to both learners with the environment's fair-coin outcome, as any
  other duel (its expected loss, 1/2, is the true one).
* :meth:`VersatileDB.recommend` returns the arm with the smallest total loss estimate
  ``L_hat^+_i + L_hat^-_i`` (lowest index on ties): the arm both learners favour.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._random_draws import draw_index
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import SeedLike, check_number

__all__ = ["VersatileDB", "tsallis_inf_weights"]

#: Newton's method stops once ``|sum_i x_i - 1|`` is below this (or after ``_NEWTON_STEPS`` steps).
_NEWTON_TOLERANCE = 1e-12
_NEWTON_STEPS = 50


class VersatileDBState(AgentState, fields=[
    "rng",
    "left_losses",    # L_hat^+: cumulative importance-weighted losses of the left learner
    "right_losses",   # L_hat^-
    "left_weights",   # x_t^+ of the current duel
    "right_weights",  # x_t^-
    "fresh",          # the weights belong to the current L_hat and t (set by act)
    "scale",          # c in eta_t = c / sqrt(t)
    "t",              # duels observed so far
]):
    """Numba-side state of :class:`VersatileDB`."""


@numba.njit(cache=True, nogil=True)
def tsallis_inf_weights(losses, eta, weights):
    """Write ``x = argmin_{x in simplex} <losses, x> - (4 / eta) sum_i sqrt(x_i)`` into ``weights``.

    ``x_i = 4 / (eta (losses_i - lambda))^2`` with ``lambda`` the root of ``sum_i x_i = 1``, found by
    Newton's method from the right-hand side (see the module notes).
    """
    lowest = losses[0]
    for i in range(1, losses.shape[0]):
        if losses[i] < lowest:
            lowest = losses[i]
    # With d_i = eta (losses_i - lambda) > 0: x_i = 4 / d_i^2 and d(sum x)/d(lambda) = sum 8 eta / d_i^3.
    level = lowest - 2.0 / eta
    for _ in range(_NEWTON_STEPS):
        total = 0.0
        slope = 0.0
        for i in range(losses.shape[0]):
            inverse = 1.0 / (eta * (losses[i] - level))
            weight = 4.0 * inverse * inverse
            total += weight
            slope += 2.0 * eta * weight * inverse
        if total - 1.0 <= _NEWTON_TOLERANCE:
            break
        level -= (total - 1.0) / slope
    total = 0.0
    for i in range(losses.shape[0]):
        inverse = 1.0 / (eta * (losses[i] - level))
        weights[i] = 4.0 * inverse * inverse
        total += weights[i]
    for i in range(losses.shape[0]):
        weights[i] /= total


@numba.njit(cache=True, nogil=True)
def _refresh_weights(state):
    # The weights are a function of (L_hat, t) only: computed once per duel.
    if not state.fresh:
        eta = state.scale / math.sqrt(state.t + 1.0)
        tsallis_inf_weights(state.left_losses, eta, state.left_weights)
        tsallis_inf_weights(state.right_losses, eta, state.right_weights)
        state.fresh = True


@numba.njit(cache=True, nogil=True)
def versatile_db_act(state):
    # [FTRL] both learners' distributions for duel t + 1, then [sample] one arm from each.
    _refresh_weights(state)
    return draw_index(state.left_weights, state.rng), draw_index(state.right_weights, state.rng)


@numba.njit(cache=True, nogil=True)
def versatile_db_observe(state, first, second, first_won):
    # [estimate] with the distributions of duel t (computed here if act was not called for it).
    _refresh_weights(state)
    state.fresh = False
    state.t += 1
    if first_won:
        state.right_losses[second] += 1.0 / state.right_weights[second]
    else:
        state.left_losses[first] += 1.0 / state.left_weights[first]


@numba.njit(cache=True, nogil=True)
def versatile_db_recommend(state):
    best = 0
    value = state.left_losses[0] + state.right_losses[0]
    for i in range(1, state.left_losses.shape[0]):
        total = state.left_losses[i] + state.right_losses[i]
        if total < value:
            value = total
            best = i
    return best


@register_agent("versatile_db", target="condorcet")
class VersatileDB(KernelDuelingAgent):
    """Versatile-DB (Saha & Gaillard, ICML 2022): one Tsallis-INF learner per side of the duel.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    learning_rate : float, default 2.0
        The constant ``c > 0`` of the learning rate ``eta_t = c / sqrt(t)`` of both Tsallis-INF
        learners (2, Zimmert & Seldin's rate for importance-weighted estimates).
    seed : int, optional
        Seed of the agent's generator (the two arms of each duel).

    Notes
    -----
    Anytime: no horizon, no confidence level.  Regret ``O(sqrt(K T))`` against any (adversarial)
    sequence of preference matrices with a Condorcet winner, and ``O(sum_{i != i*} log T /
    Delta_i)`` in the stochastic case, with ``Delta_i = P[i*, i] - 1/2``.  Per step ``O(K)`` times
    the Newton steps (a handful) for each learner; ``O(K)`` memory.  ``left_losses`` and
    ``right_losses`` are ``L_hat^+`` and ``L_hat^-``; ``left_weights`` and
    ``right_weights`` the distributions of the last duel.
    """

    paper = (PaperLink("ICML 2022, PMLR 162", "https://proceedings.mlr.press/v162/saha22a.html"),)
    guarantee = (
        "Regret ``O(sqrt(K T))`` against any (adversarial) sequence of preference matrices with a Condorcet "
        "winner, and ``O(Σ_{i ≠ i*} log T / Δ_i)`` under stochastic preferences with one, at once and without "
        "knowing which (Saha & Gaillard, ICML 2022, the best-of-both-worlds results for Versatile-DB, §4)."
    )

    act_kernel = versatile_db_act
    observe_kernel = versatile_db_observe
    recommend_kernel = versatile_db_recommend

    def __init__(self, n_arms: int, *, learning_rate: float = 2.0, seed: SeedLike = None):
        self.learning_rate = check_number("learning_rate", learning_rate, minimum=0.0)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        # The kernels update these arrays in place; they stay readable here.
        self.left_losses = np.zeros(n_arms)
        self.right_losses = np.zeros(n_arms)
        self.left_weights = np.full(n_arms, 1.0 / n_arms)
        self.right_weights = np.full(n_arms, 1.0 / n_arms)
        self.state = VersatileDBState(
            rng=self.rng, left_losses=self.left_losses, right_losses=self.right_losses,
            left_weights=self.left_weights, right_weights=self.right_weights, fresh=False, scale=self.learning_rate,
            t=0,
        )
