"""Beat-the-Mean: online regret minimisation against the mean bandit of a working set.

Yue, Joachims. *Beat the Mean Bandit.* ICML 2011 (Algorithm 1, the online version; the
confidence radius of §3 with ``delta = 1/(2TK)`` as in the regret analysis of §4).

BTM keeps a working set ``W`` and, for every arm ``b`` in it, how often ``b`` beat an opponent
drawn uniformly from ``W`` (itself included): an estimate ``P_hat_b`` of the probability that
``b`` beats the *mean bandit* of ``W``.  The comments tag the lines of Algorithm 1:

* **[select]** ``b = argmin_{b in W} n_b`` (fewest comparisons, random ties), ``b'`` uniform on
  ``W``; the duel is ``(b, b')`` and only ``b``'s statistics change (``w_b`` on a win, ``n_b``);
* **[radius]** ``c* = c_{delta,gamma}(n*) = 3 gamma^2 sqrt(ln(1/delta) / n*)`` with
  ``n* = min_{b in W} n_b`` (``c* = 1`` while ``n* = 0``);
* **[eliminate]** if ``min_b P_hat_b + c* <= max_b P_hat_b - c*``, the arm ``argmin_b P_hat_b``
  leaves ``W`` and every comparison against it is deleted from the other arms' ``w_b, n_b``;
* **[exploit]** once ``|W| = 1`` the survivor is played against itself.

The per-pair counts ``n_{b,b'}, w_{b,b'}`` (``b`` the selected arm) make the deletion exact; the
per-arm totals over ``W`` are kept incrementally, so a step costs ``O(|W|)``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._random_draws import below as stream_below
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import SeedLike, check_integer, check_number

__all__ = ["BeatTheMean", "record_and_eliminate", "only_survivor", "working_set_arrays"]


class BeatTheMeanState(AgentState, fields=[
    "rng",
    "pair_counts",  # n_{b,b'}: duels (b, b') with b the selected arm (K x K)
    "pair_wins",    # w_{b,b'}: those won by b
    "counts",       # n_b = sum over b' in W of n_{b,b'}
    "wins",         # w_b
    "estimates",    # scratch: P_hat_b (1/2 while n_b = 0)
    "active",       # W as a mask
    "n_active",
    "log_level",    # ln(1/delta) = ln(2 T K)
    "gamma",
    "t",
]):
    """Numba-side state of :class:`BeatTheMean`."""


def working_set_arrays(n_arms: int) -> dict[str, np.ndarray]:
    """Fresh Beat-the-Mean bookkeeping for ``n_arms`` arms: ``W`` = every arm, no comparisons yet.

    Returns the state fields ``active``, ``pair_counts``, ``pair_wins``, ``counts`` and ``wins``
    (see ``BeatTheMeanState``) by name; the agents keep them as attributes too, so the arrays the
    kernels update in place stay readable from Python.
    """
    return {
        "active": np.ones(n_arms, dtype=np.bool_),
        "pair_counts": np.zeros((n_arms, n_arms), dtype=np.int64),
        "pair_wins": np.zeros((n_arms, n_arms), dtype=np.int64),
        "counts": np.zeros(n_arms, dtype=np.int64),
        "wins": np.zeros(n_arms, dtype=np.int64),
    }


@numba.njit(cache=True, nogil=True)
def only_survivor(state):
    active = state.active
    for arm in range(active.shape[0]):
        if active[arm]:
            return arm
    return -1


@numba.njit(cache=True, nogil=True)
def _tied_member(values, active, value, target):
    """The ``target``-th arm of ``W`` (by index) with ``values[arm] == value``."""
    for arm in range(active.shape[0]):
        if active[arm] and values[arm] == value:
            if target == 0:
                return arm
            target -= 1
    return -1


@numba.njit(cache=True, nogil=True)
def beat_the_mean_act(state):
    # Speed: each read of an array field (or call passing one) costs two reference-count updates
    # in Numba, so the kernels read each field once and draw from the bit generator (the same
    # stream as ``rng.integers``, see ``_random_draws``).
    active = state.active
    n_active = state.n_active
    if n_active == 1:
        survivor = only_survivor(state)  # [exploit]
        return survivor, survivor
    counts = state.counts
    bitgen = state.rng.bit_generator
    # [select] the arm with the fewest comparisons (random ties), ...
    fewest = -1
    tied = 0
    for arm in range(active.shape[0]):
        if active[arm]:
            if fewest < 0 or counts[arm] < fewest:
                fewest = counts[arm]
                tied = 1
            elif counts[arm] == fewest:
                tied += 1
    first = _tied_member(counts, active, fewest, stream_below(bitgen, tied))
    # ... against a uniform member of W.
    second = _tied_member(active, active, True, stream_below(bitgen, n_active))
    return first, second


@numba.njit(cache=True, nogil=True)
def _eliminate(state, loser):
    # [eliminate] W <- W minus {b'}: forget every comparison against b'.
    active = state.active
    counts = state.counts
    wins = state.wins
    pair_counts = state.pair_counts
    pair_wins = state.pair_wins
    active[loser] = False
    state.n_active -= 1
    for arm in range(active.shape[0]):
        if active[arm]:
            counts[arm] -= pair_counts[arm, loser]
            wins[arm] -= pair_wins[arm, loser]


@numba.njit(cache=True, nogil=True)
def beat_the_mean_observe(state, first, second, first_won):
    state.t += 1
    # Only duels (b, b') of the exploration phase, with both arms in W, are BTM's own samples.
    active = state.active
    if state.n_active == 1 or not (active[first] and active[second]):
        return
    record_and_eliminate(state, first, second, first_won)


@numba.njit(cache=True, nogil=True)
def record_and_eliminate(state, first, second, first_won):
    """Record BTM's sample ``(b, b')`` of arms of ``W``, then apply [radius] and [eliminate].

    Shared by the online version and the PAC version (:mod:`dueling_gym.agents.beat_the_mean_pac`),
    whose states carry the same fields; ``state.log_level`` is ``ln(1/delta)`` of the version.
    Returns ``n* = min_{b in W} n_b`` after the sample (before the elimination it may cause).
    One pass over ``W`` gives ``n*`` and the extreme ``P_hat_b``; the random tie-breaks of
    ``argmin P_hat`` and ``argmax P_hat`` are drawn in that order, as uniform ranks among the
    tied arms.
    """
    state.pair_counts[first, second] += 1
    counts = state.counts
    wins = state.wins
    estimates = state.estimates
    active = state.active
    counts[first] += 1
    if first_won:
        state.pair_wins[first, second] += 1
        wins[first] += 1
    # [radius] c* from the least compared arm of W; in the same pass, the extreme estimates.
    fewest = -1
    lowest = 0.0
    n_lowest = 0
    highest = 0.0
    n_highest = 0
    for arm in range(active.shape[0]):
        if active[arm]:
            count = counts[arm]
            if fewest < 0 or count < fewest:
                fewest = count
            estimate = 0.5 if count == 0 else wins[arm] / count
            estimates[arm] = estimate
            if n_lowest == 0 or estimate < lowest:
                lowest = estimate
                n_lowest = 1
            elif estimate == lowest:
                n_lowest += 1
            if n_highest == 0 or estimate > highest:
                highest = estimate
                n_highest = 1
            elif estimate == highest:
                n_highest += 1
    if fewest == 0:
        return fewest  # c* = 1: no arm can be separated yet
    radius = 3.0 * state.gamma * state.gamma * math.sqrt(state.log_level / fewest)
    # [eliminate] test: the arm of lowest P_hat (random ties) against the largest P_hat (whose
    # tie-break, though it cannot change the value, is drawn as well).
    bitgen = state.rng.bit_generator
    worst_rank = stream_below(bitgen, n_lowest)
    stream_below(bitgen, n_highest)
    if lowest + radius <= highest - radius:
        _eliminate(state, _tied_member(estimates, active, lowest, worst_rank))
    return fewest


@numba.njit(cache=True, nogil=True)
def beat_the_mean_recommend(state):
    if state.n_active == 1:
        return only_survivor(state)
    # The arm of W most likely to beat the mean bandit (lowest index on ties; draws nothing).
    active = state.active
    counts = state.counts
    wins = state.wins
    best = -1
    value = -1.0
    for arm in range(active.shape[0]):
        if active[arm]:
            count = counts[arm]
            estimate = 0.5 if count == 0 else wins[arm] / count
            if estimate > value:
                value = estimate
                best = arm
    return best


@register_agent("btm", target="condorcet")
class BeatTheMean(KernelDuelingAgent):
    """Beat-the-Mean, online version (Yue & Joachims, ICML 2011, Algorithm 1).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    horizon : int
        The horizon ``T >= 1``; it sets the confidence ``delta = 1/(2TK)`` of the online
        version (the run may go on past ``T``: the algorithm simply keeps its radius).
    gamma : float, default 1.0
        Relaxed stochastic transitivity ``gamma >= 1`` assumed of the problem (``gamma = 1`` is
        strong stochastic transitivity); the radius is ``3 gamma^2 sqrt(ln(1/delta) / n*)``.
    seed : int, optional
        Seed of the agent's generator.

    Notes
    -----
    Regret guarantees (Theorem 2) assume a total order with relaxed stochastic transitivity
    and the stochastic triangle inequality.  ``b'`` is drawn from the whole working set, ``b``
    included: the mean bandit of ``W`` is the uniform mixture over ``W``, and a duel of ``b``
    against itself is a fair coin, as in the paper's definition of ``P_b``.  Ties in the arm
    to eliminate are broken uniformly at random (the paper leaves them open).  Exploration
    duels count only while both arms are in ``W``; caller-chosen duels outside it are ignored.
    :meth:`~dueling_gym.agents.DuelingAgent.recommend` returns the survivor, or the arm of ``W`` with the
    largest ``P_hat``.

    A public C++ implementation computes the estimates before adding the current duel, takes
    the maximum estimate through a position in the working set instead of the arm, and can
    eliminate an unset arm when every estimate is 1; none of that is followed here.
    """

    paper = (PaperLink("ICML 2011"),)
    guarantee = (
        "High-probability regret ``O(γ^7 K log T)`` (gap-dependent factors aside) under a total order with "
        "γ-relaxed stochastic transitivity and the stochastic triangle inequality, ``γ = 1`` being strong "
        "stochastic transitivity (Yue & Joachims, ICML 2011, §4)."
    )

    act_kernel = beat_the_mean_act
    observe_kernel = beat_the_mean_observe
    recommend_kernel = beat_the_mean_recommend

    def __init__(self, n_arms: int, *, horizon: int, gamma: float = 1.0, seed: SeedLike = None):
        self.horizon = check_integer("horizon", horizon, minimum=1)
        self.gamma = check_number("gamma", gamma, strict=False, minimum=1.0)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        arrays = working_set_arrays(n_arms)
        vars(self).update(arrays)  # the kernels update them in place; they stay readable here
        self.state = BeatTheMeanState(
            rng=self.rng, **arrays, estimates=np.full(n_arms, 0.5), n_active=n_arms,
            log_level=math.log(2.0 * self.horizon * n_arms), gamma=self.gamma, t=0,
        )

    @property
    def working_set(self) -> np.ndarray:
        """The arms still in the working set ``W``."""
        return np.flatnonzero(self.active)
