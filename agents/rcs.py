"""RCS: Relative Confidence Sampling.

Zoghi, Whiteson, de Rijke, Munos. *Relative Confidence Sampling for Efficient On-line Ranker
Evaluation.* WSDM 2014 (Algorithm 1).

RCS keeps RUCB's optimistic choice of the second arm but replaces RUCB's conservative choice of
the first arm (the *champion*) by a Thompson sample: one preference matrix ``theta`` is drawn
from the Beta posteriors of all pairs (a simulated round-robin tournament), and its Condorcet
winner becomes the champion.  When the sampled matrix has no Condorcet winner, the champion is
the arm that has been champion least often so far.  The challenger is then the arm with the
largest RUCB upper bound of beating the champion.

The steps of Algorithm 1, as the kernels below implement them:

* upper bounds ``u_ij = mu_hat_ij + sqrt(alpha ln t / N_ij)`` (``u_ij = 1`` for an unplayed pair,
  ``u_ii = 1/2``), with ``t`` the number of the current duel;
* sample ``theta_ij ~ Beta(W_ij + 1, W_ji + 1)`` for ``i < j`` and ``theta_ji = 1 - theta_ij``;
* champion ``c``: an arm with ``theta_cj >= 1/2`` for every ``j``; if there is none, an arm with
  the fewest champion turns ``B_c`` (uniformly random among ties); then ``B_c <- B_c + 1``;
* challenger ``d = argmax_j u_jc`` with random ties that never favour ``c`` (as in RUCB); ``d = c``,
  a self-duel, when no other arm has ``u_jc >= 1/2``;
* duel ``(c, d)``, update ``W``.

Implementation choices and the public implementations:

* The sampled tournament is resolved lazily: a knock-out pass (starting from the previous
  champion) leaves the only arm that can be the sample's Condorcet winner, which is then checked
  against every other arm; only the pairs these two passes look at are drawn, at most ``2K - 3``
  of the ``K(K-1)/2``.  Pairs are independent and the champion is a function of the sample, so
  its law is exactly that of drawing every ``theta_ij``; once one arm dominates, ``K - 1`` draws
  per step suffice (when the knock-out pass keeps its first arm, that arm has beaten every other
  and the check pass is skipped).
* Only the side of 1/2 on which ``theta_ij`` falls matters, and it is drawn exactly without a
  Beta variate when the posterior is concentrated: ``P(theta_ij < 1/2) = P(Bin(N_ij + 1, 1/2) >=
  W_ij + 1)``, so the less likely side has probability ``p = P(Bin(N + 1, 1/2) >= max(W_ij, W_ji)
  + 1)``, which the Chernoff bound ``b = exp(-(N + 1) d(k / (N + 1), 1/2))`` dominates.  With one
  uniform ``u``: ``u >= b`` gives the likely side; otherwise ``p`` is summed exactly and the
  unlikely side is taken iff ``u < p``.  This is a Bernoulli(``p``) draw, so the law is unchanged;
  ``b`` changes only when the pair is played and is kept per pair.  Pairs with ``b >= 0.05``
  draw ``theta_ij ~ Beta`` as written.
* Ties in "chosen least often": the paper leaves them open; both the C++ code of Wu and Liu
  (DuelingBandits) and duelpy take the lowest index.  Here they are broken uniformly at random,
  the convention of every agent in this package; with the lowest index the first rounds, where
  no sampled matrix has a Condorcet winner, would visit the arms in a fixed order.
* The C++ code of Wu and Liu counts a sampled pair exactly at 1/2 for the second arm; with
  continuous Beta samples such ties have probability zero, so the rule ``theta_cj >= 1/2`` is used
  as written.
* :meth:`RCS.recommend` returns the empirical Copeland winner (lowest index on ties), the arm
  that RUCB's Algorithm 1 returns at the end of a run.

RCS assumes a Condorcet winner; the paper gives no regret bound.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._confidence_bounds import rucb_upper_bound
from dueling_gym.agents._pair_statistics import empirical_copeland_winner, record_duel
from dueling_gym.agents._random_draws import below, random_argmin_bits, uniform as stream_uniform
from dueling_gym.agents.base import PaperLink, RUCBBoundsAgent
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.stats import kl_bernoulli_scalar

__all__ = ["RCS"]


class RCSState(AgentState, fields=[
    "rng",             # the agent's numpy Generator
    "wins",            # W[i, j] = duels of {i, j} won by i (K x K, int64)
    "champion_turns",  # B_i = steps in which i was the champion
    "tail_bound",      # b_ij (i < j): Chernoff bound on the less likely side of theta_ij vs 1/2
    "sampled",         # i < j: 2 s + [theta_ij >= 1/2] for the last sample s that drew the pair
    "round",           # number of samples taken
    "last_champion",   # champion of the previous step (-1 before the first)
    "every_arm",       # mask of all arms (a champion without a sampled Condorcet winner may be any arm)
    "alpha",
    "t",               # duels observed so far
]):
    """Numba-side state of :class:`RCS`."""

#: Pairs whose tail bound is at least this draw ``theta_ij`` from the Beta posterior itself.
_BETA_DRAW_BOUND = 0.05


@numba.njit(cache=True, nogil=True)
def _binomial_half_tail(trials, least):
    """``P(Bin(trials, 1/2) >= least)`` for ``least > trials / 2``, summed from the first term."""
    term = math.exp(math.lgamma(trials + 1.0) - math.lgamma(least + 1.0) - math.lgamma(trials - least + 1.0)
                    - trials * math.log(2.0))
    total = 0.0
    j = least
    while j <= trials and term > 1e-18 * total:
        total += term
        term *= (trials - j) / (j + 1.0)
        j += 1
    return total


@numba.njit(cache=True, nogil=True)
def _refresh_tail_bound(wins, tail_bound, low, high):
    trials = wins[low, high] + wins[high, low] + 1.0
    least = max(wins[low, high], wins[high, low]) + 1.0
    ratio = least / trials
    tail_bound[low, high] = math.exp(-trials * kl_bernoulli_scalar(ratio, 0.5)) if ratio > 0.5 else 1.0


@numba.njit(cache=True, nogil=True)
def sampled_condorcet_winner(state):
    """The Condorcet winner of a fresh posterior sample ``theta``, or ``-1`` if it has none.

    Knock-out pass: the survivor of a sequence of sampled duels is the only arm that has not
    lost one, hence the only possible Condorcet winner; it is then checked against all arms.
    """
    # Speed: each read of an array field (or call passing one) costs two reference-count
    # updates in Numba, more than a draw; so the fields are read once, both passes run in this
    # one loop, and uniforms come from the bit generator (the same stream as ``rng.random()``).
    rng = state.rng
    bitgen = rng.bit_generator
    wins = state.wins
    tail_bound = state.tail_bound
    sampled = state.sampled
    n_arms = wins.shape[0]
    state.round += 1
    mark = 2 * state.round  # sampled[i, j] >> 1 == round: the pair is drawn in this sample
    start = state.last_champion if state.last_champion >= 0 else 0
    survivor = start
    for step in range(2 * n_arms):
        checking = step >= n_arms  # second pass: the survivor against every arm
        if step == n_arms and survivor == start:
            return survivor  # it beat every arm in the first pass: nothing left to check
        arm = step - n_arms if checking else step
        if arm == (survivor if checking else start):
            continue
        # Is theta[survivor, arm] >= 1/2?  The pair is drawn on first use in this sample.
        low = min(survivor, arm)
        high = max(survivor, arm)
        if sampled[low, high] < mark:
            wins_low = wins[low, high]
            wins_high = wins[high, low]
            bound = tail_bound[low, high]
            if bound >= _BETA_DRAW_BOUND:
                low_beats = rng.beta(wins_low + 1.0, wins_high + 1.0) >= 0.5
            else:
                uniform = stream_uniform(bitgen)
                unlikely = False
                if uniform < bound:
                    trials = wins_low + wins_high + 1
                    unlikely = uniform < _binomial_half_tail(trials, max(wins_low, wins_high) + 1)
                low_beats = (wins_low > wins_high) != unlikely
            sampled[low, high] = mark + (1 if low_beats else 0)
        beats = ((sampled[low, high] & 1) == 1) == (survivor == low)
        if not beats:
            if checking:
                return -1
            survivor = arm
    return survivor


@numba.njit(cache=True, nogil=True)
def _challenger(wins, champion, alpha, log_t, bitgen):
    """RUCB's opponent rule over all arms (as ``rucb_challenger`` with every arm eligible).

    ``argmax_{j != c} u_jc`` with uniformly random ties; ``c`` itself (a self-duel) when that
    maximum is below ``1/2``.  The bounds are recomputed in the tie pass instead of stored, and
    the draw comes from the bit generator: calling ``rucb_challenger`` (a compiled call with
    reference-counted arrays and the Generator) makes RCS about 20% slower.
    """
    best = -1
    value = 0.0
    count = 0
    for arm in range(wins.shape[0]):
        if arm == champion:
            continue
        bound = rucb_upper_bound(wins, arm, champion, alpha, log_t)
        if best < 0 or bound > value:
            value = bound
            best = arm
            count = 1
        elif bound == value:
            count += 1
    if count > 1:
        target = below(bitgen, count)
        for arm in range(wins.shape[0]):
            if arm != champion and rucb_upper_bound(wins, arm, champion, alpha, log_t) == value:
                if target == 0:
                    best = arm
                    break
                target -= 1
    if value < 0.5:
        return champion
    return best


@numba.njit(cache=True, nogil=True)
def rcs_act(state):
    log_t = math.log(state.t + 1.0)  # the current duel is number t + 1
    # Champion c: the Condorcet winner of a sample theta from the Beta posteriors, ...
    champion = sampled_condorcet_winner(state)
    bitgen = state.rng.bit_generator
    champion_turns = state.champion_turns
    if champion < 0:
        # ... else an arm with the fewest champion turns B_c; then B_c <- B_c + 1.
        champion = random_argmin_bits(champion_turns, state.every_arm, bitgen)
    champion_turns[champion] += 1
    state.last_champion = champion
    # Challenger d = argmax_j u_jc (c itself when no other arm has u_jc >= 1/2), RUCB's rule.
    return champion, _challenger(state.wins, champion, state.alpha, log_t, bitgen)


@numba.njit(cache=True, nogil=True)
def rcs_observe(state, first, second, first_won):
    state.t += 1
    wins = state.wins
    if record_duel(wins, first, second, first_won):
        _refresh_tail_bound(wins, state.tail_bound, min(first, second), max(first, second))


@numba.njit(cache=True, nogil=True)
def rcs_recommend(state):
    return empirical_copeland_winner(state.wins)


@register_agent("rcs", target="condorcet")
class RCS(RUCBBoundsAgent):
    """Relative Confidence Sampling (Zoghi, Whiteson, de Rijke and Munos, WSDM 2014, Algorithm 1).

    The champion is the Condorcet winner of a preference matrix sampled from the Beta
    posteriors (else the arm that was champion least often); the challenger is the arm with the
    highest RUCB upper bound of beating it.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    alpha : float, default 0.51
        Exploration parameter ``alpha > 1/2`` of the upper bounds ``mu_hat + sqrt(alpha ln t / N)``
        (0.51, the value used for RUCB in this package and in the DTS authors' experiments; duelpy
        uses 0.501).
    seed : int, optional
        Seed of the agent's generator (posterior samples and ties).

    Notes
    -----
    Assumes a Condorcet winner (no regret bound is proved in the paper).  Per step ``O(K)``:
    between ``K - 1`` and ``2K - 3`` pairs drawn, mostly with one uniform each (see the module notes),
    and ``K`` upper bounds.
    ``champion_turns`` is ``B``, the number of steps each arm was the champion.

    References
    ----------
    M. Zoghi, S. Whiteson, M. de Rijke, R. Munos. Relative Confidence Sampling for Efficient
    On-line Ranker Evaluation. WSDM 2014.
    """

    paper = (PaperLink("WSDM 2014, doi:10.1145/2556195.2556256", "https://doi.org/10.1145/2556195.2556256"),)
    guarantee = (
        "None: the paper compares RCS with RUCB and SAVAGE in experiments and states no regret bound (Zoghi, "
        "Whiteson, de Rijke & Munos, WSDM 2014, as stated in the abstract); it assumes a Condorcet winner."
    )

    act_kernel = rcs_act
    observe_kernel = rcs_observe
    recommend_kernel = rcs_recommend

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        #: ``W[i, j]`` (shared with the compiled state, read-only from Python).
        self.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        #: ``B_i`` (shared with the compiled state, read-only from Python).
        self.champion_turns = np.zeros(n_arms, dtype=np.int64)
        self.state = RCSState(
            rng=self.rng, wins=self.wins, champion_turns=self.champion_turns, tail_bound=np.ones((n_arms, n_arms)),
            sampled=np.zeros((n_arms, n_arms), dtype=np.int64), round=0, last_champion=-1,
            every_arm=np.ones(n_arms, dtype=np.bool_),
            alpha=self.alpha, t=0,
        )
