"""Sup-KLUCB: KL-UCB on the pair reduction of a dueling bandit.

Agrawal, Chaporkar. *KLUCB Approach to Copeland Bandits.* 2019 (Algorithm 1).

Where the paper is silent this implementation chooses: the plug-in scores ``Sup_i`` (which
the paper defines for arms) come from the empirical matrix of every non-self duel, while the
KL-UCB width uses the super-arm's own play count; ``W[a] <- w`` of the pseudocode is read as an
increment; the constant ``c2`` (undefined at ``K = 2``) is ``40 / max(1, (K - 2)^2)``.

Sup-KLUCB is the composition of two parts:

* the **pair reduction** (:mod:`dueling_gym.reductions`): super-arms are the unordered pairs
  ``(i, j)``, ``i <= j``, self-pairs included, ``K̄ = K (K + 1) / 2`` of them in lexicographic
  order; super-arm ``k = (i, j)`` has mean ``mu_k = Sup_i * Sup_j``, the product of the plug-in
  scores of the empirical matrix of every non-self duel so far;
* the **KL-UCB index policy** over the super-arms, with the super-arm's own play count ``N_k``
  and the exploration level ``rho_n = c1 ln(n - K̄) + c2 ln(ln(n - K̄) + 1)``: after one play of
  every super-arm (``n = 1..K̄``), play ``argmax_k max{q : N_k d(mu_k, q) <= rho_n}`` (random
  ties).  The index is :func:`dueling_gym.stats.kl_upper_bound_scalar`.

Implementation notes
--------------------
The reduction's statistics are updated incrementally (one duel changes the scores of its two
arms, hence at most ``2K - 1`` means), with the very functions that compute them from scratch,
so the numbers are bit-identical to a full recomputation.

Computing all ``K̄`` KL-UCB indices each step would cost ``K̄`` bisections (about 140 µs on
Sushi).  :func:`klucb_select` returns exactly the argmax of all indices (same tie set, same
random draw; tested against :func:`klucb_select_reference`) but bisects at most the *anchor*
(the super-arm with the largest mean, least played among those) and the super-arms that may
reach its index.  The others are discarded by *certificates*: ``N_k d(mu_k, v) > rho`` proves
``index_k(rho) < v``, and the proof stays valid for every later step as long as ``mu_k`` and
``N_k`` do not change and ``rho_n`` stays below the stored level ``lambda_k`` (``rho_n`` only
grows), because the index is monotone in the level.  Certificates are issued slightly below
the current best index, so they survive its small downward drift; the stored levels include
margins that cover the floating-point error of the divergence and of the bisection.  When
every other super-arm holds a certificate, one divergence evaluation proves that the anchor's
index is above all of them and no bisection runs at all.  A step then costs ``O(K̄)``
comparisons plus, at most, a few bisections and divergence evaluations: on Sushi the fused
loop runs at about 10^6 steps per second.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._random_draws import below
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.reductions import (
    n_super_arms,
    pair_tables,
    plugin_scores,
    record_scored_duel,
    refresh_arm_means,
    score_kind,
    super_arm_means,
)
from dueling_gym.stats import kl_bernoulli_scalar, kl_upper_bound_scalar
from dueling_gym.validation import check_integer, check_n_arms, check_number

__all__ = ["SupKLUCB", "sup_klucb_level", "klucb_select", "klucb_select_reference"]

#: A certificate is issued at ``best - _BAR_FRACTION * (best - mu_anchor)``.
_BAR_FRACTION = 1e-3
#: Margins of a certificate (absolute on the divergence, relative on the level).
_KL_MARGIN = 1e-12
_LEVEL_MARGIN = 1e-6


@numba.njit(cache=True, nogil=True)
def sup_klucb_level(n: int, n_super: int, c1: float, c2: float) -> float:
    """``rho_n = c1 ln(n - K̄) + c2 ln(ln(n - K̄) + 1)`` for a round ``n > K̄`` (Algorithm 1, line 9)."""
    log_m = math.log(n - n_super)
    return c1 * log_m + c2 * math.log(log_m + 1.0)


@numba.njit(cache=True, nogil=True)
def _certified_level(mean: float, value: float, count: float) -> float:
    """A level ``lambda`` such that ``kl_upper_bound_scalar(mean, count, rho) < value`` for all ``rho < lambda``.

    Returns ``-1`` when no such certificate can be given safely.  Derivation: the bisection's
    output ``q`` satisfies ``d~(mean, q) <= rho / count`` for the computed divergence ``d~``,
    whose absolute error is below ``1e-13``; so ``d~(mean, value) - 1e-12 > rho / count``
    implies ``d(mean, q) < d(mean, value)``, i.e. ``q < value`` (``d(mean, .)`` increases on
    ``[mean, 1]``).  For ``mean = 0`` the index is the closed form ``1 - exp(-rho / count)``;
    the extra condition ``(1 - value) d~(0, value) > 1e-6`` keeps its rounding far below the gap.
    ``value = 1`` (the index of a super-arm with mean 1) is handled exactly: a bisection never
    returns 1, and the closed form returns 1 only when ``rho / count > 37.4``.
    """
    if count <= 0.0 or not mean < value:
        return -1.0
    if value >= 1.0:
        if mean > 0.0:
            # The bisection stops while its bracket is wider than 1e-12, so it never returns 1.
            return np.inf
        # 1 - exp(-x) rounds to 1 only for x > 37.4.
        return count * 36.0
    divergence = kl_bernoulli_scalar(mean, value)
    if mean <= 0.0 and (1.0 - value) * divergence <= 1e-6:
        return -1.0
    slack = divergence - _KL_MARGIN
    if slack <= 0.0:
        return -1.0
    return count * slack * (1.0 - _LEVEL_MARGIN)


# klucb_select's steps are inlined into it: they run once per step or once per super-arm, where
# a compiled call's reference counting of its array arguments would cost more than the step.


@numba.njit(cache=True, nogil=True, inline="always")
def _scan_certificates(means, counts, level, cert_value, cert_level):
    """``(anchor, others_certified, others_bound)`` of one pass over the super-arms.

    ``anchor`` is the super-arm with the largest mean, the least played among those (the index
    decreases with the count).  ``others_certified`` says whether every other super-arm holds a
    certificate valid at ``level``; ``others_bound`` is then the largest of their values.
    """
    anchor = 0
    n_uncertified = 0
    anchor_uncertified = False
    bound = -np.inf  # the two largest valid certificate values, and whose the largest is
    second_bound = -np.inf
    bound_owner = -1
    for k in range(means.shape[0]):
        mean = means[k]
        if mean > means[anchor] or (mean == means[anchor] and counts[k] < counts[anchor]):
            anchor = k
            anchor_uncertified = False
        if level < cert_level[k]:
            value = cert_value[k]
            if value > bound:
                second_bound = bound
                bound = value
                bound_owner = k
            elif value > second_bound:
                second_bound = value
        else:
            n_uncertified += 1
            if k == anchor:
                anchor_uncertified = True
    others_certified = n_uncertified == 0 or (n_uncertified == 1 and anchor_uncertified)
    if bound_owner == anchor:
        bound = second_bound  # the other super-arms' certificates only
    return anchor, others_certified, bound


@numba.njit(cache=True, nogil=True, inline="always")
def _index_provably_above(mean, count, level, bound):
    """Whether ``kl_upper_bound_scalar(mean, count, level) > bound`` is certain without a bisection.

    The index is at least the mean; otherwise ``d~(mean, bound + 2e-12) < level / count - 1e-12``
    puts the bisection's output above ``bound + 1e-12`` (see :func:`_certified_level`).
    """
    if mean > bound:
        return True
    target = bound + 2e-12
    if 0.0 < mean < target < 1.0 and level > 0.0 and count > 0.0:
        return kl_bernoulli_scalar(mean, target) < level / count - _KL_MARGIN
    return False


@numba.njit(cache=True, nogil=True, inline="always")
def _new_certificate(mean, count, level, best, bar):
    """``(found, value, lambda)``: a certificate ``index < value`` for every level below ``lambda > level``.

    Issued at ``bar`` (slightly below the best index, so that later steps can reuse it) when
    possible, else at ``best`` itself.
    """
    if mean < bar:
        certified = _certified_level(mean, bar, count)
        if level < certified:
            return True, bar, certified
    if mean < best and bar < best:
        certified = _certified_level(mean, best, count)
        if level < certified:
            return True, best, certified
    return False, best, -1.0


@numba.njit(cache=True, nogil=True, inline="always")
def _tied_maximisers(means, counts, level, cert_value, cert_level, ties, values, anchor):
    """The super-arms of largest index, in ``ties[:n_ties]``; returns ``n_ties``.

    The anchor's index ``best`` is computed exactly; every other super-arm is discarded by a
    valid certificate below ``best`` or a new one, or its index is computed exactly (once per
    distinct ``(mean, count)``).  ``ties[n_ties:n_computed]`` and ``values`` keep the other exact
    indices for that reuse.
    """
    anchor_mean = means[anchor]
    best = kl_upper_bound_scalar(anchor_mean, float(counts[anchor]), level)
    bar = best - _BAR_FRACTION * (best - anchor_mean)
    ties[0] = anchor
    values[0] = best
    n_computed = 1
    n_ties = 1
    for k in range(means.shape[0]):
        if k == anchor or (level < cert_level[k] and cert_value[k] <= best):
            continue
        mean = means[k]
        count = float(counts[k])
        found, value, certified = _new_certificate(mean, count, level, best, bar)
        if found:
            cert_value[k] = value
            cert_level[k] = certified
            continue
        # Exact index; equal (mean, count) give equal indices, so reuse an earlier bisection.
        index = -1.0
        for position in range(n_computed):
            other = ties[position]
            if means[other] == mean and counts[other] == counts[k]:
                index = values[position]
                break
        if index < 0.0:
            index = kl_upper_bound_scalar(mean, count, level)
        if index > best:  # k becomes the only tie; the former ties join the computed list
            best = index
            ties[n_computed] = ties[0]
            values[n_computed] = values[0]
            ties[0] = k
            values[0] = index
            n_ties = 1
        elif index == best:  # k joins the ties; the first computed non-tie moves to the end
            ties[n_computed] = ties[n_ties]
            values[n_computed] = values[n_ties]
            ties[n_ties] = k
            values[n_ties] = index
            n_ties += 1
        else:
            ties[n_computed] = k
            values[n_computed] = index
        n_computed += 1
    return n_ties


@numba.njit(cache=True, nogil=True, inline="always")
def _uniform_tie(ties, n_ties, rng):
    """A uniform member of ``ties[:n_ties]`` drawn as the reference does: the ``rng.integers(0, n_ties)``-th
    in index order (so the ties are insertion-sorted first)."""
    for position in range(1, n_ties):
        value = ties[position]
        cursor = position - 1
        while cursor >= 0 and ties[cursor] > value:
            ties[cursor + 1] = ties[cursor]
            cursor -= 1
        ties[cursor + 1] = value
    return ties[below(rng.bit_generator, n_ties)]


@numba.njit(cache=True, nogil=True)
def klucb_select(means, counts, level, cert_value, cert_level, ties, values, rng):
    """``argmax_k kl_upper_bound_scalar(means[k], counts[k], level)`` with uniformly random ties.

    Exactly the choice of :func:`klucb_select_reference` (same tie set, same single
    ``rng.integers(0, n_ties)`` draw when there is a tie), computed with few bisections.

    Parameters
    ----------
    means : ndarray of float64, shape (M,)
        Super-arm means in ``[0, 1]``.
    counts : ndarray of int64, shape (M,)
        Play counts.
    level : float
        Exploration level ``rho >= 0``.
    cert_value, cert_level : ndarray of float64, shape (M,)
        Certificates ``index_k(rho) < cert_value[k]`` for every ``rho < cert_level[k]``, read and
        refreshed here.  The caller invalidates a certificate (``cert_level[k] = -1``) whenever
        ``means[k]`` or ``counts[k]`` changes.
    ties, values : ndarray, shape (M,)
        Scratch space (int64 and float64).
    rng : numpy.random.Generator
        Used only to break an exact tie.

    Notes
    -----
    The *anchor* is the super-arm with the largest mean, the least played among those (the
    largest index among equal means: the index decreases with the count).

    Fast path: when every other super-arm holds a valid certificate, their indices are all below
    ``M = max cert_value``; if the anchor's index provably exceeds ``M`` (its mean does, or
    ``d~(mu, M + 2e-12) < rho / N - 1e-12``, which puts the bisection's output above
    ``M + 1e-12``), the anchor is the unique maximiser and no bisection is run.

    Otherwise the anchor's index ``best`` is computed exactly and every other super-arm is
    discarded by a valid certificate below ``best``, by a new certificate at a bar slightly below
    ``best`` (which later steps can reuse), or by a certificate at ``best``; the rest are
    evaluated exactly (once per distinct ``(mean, count)``) and compared exactly.
    """
    anchor, others_certified, others_bound = _scan_certificates(means, counts, level, cert_value, cert_level)
    # Fast path: every other index is below others_bound, which the anchor's provably exceeds.
    if others_certified and _index_provably_above(means[anchor], float(counts[anchor]), level, others_bound):
        return anchor
    n_ties = _tied_maximisers(means, counts, level, cert_value, cert_level, ties, values, anchor)
    if n_ties == 1:
        return ties[0]
    return _uniform_tie(ties, n_ties, rng)


@numba.njit(cache=True, nogil=True)
def klucb_select_reference(means, counts, level, rng):
    """The plain rule: every index by bisection, argmax with uniformly random ties (tests, documentation)."""
    size = means.shape[0]
    indices = np.empty(size)
    best = -1.0
    for k in range(size):
        indices[k] = kl_upper_bound_scalar(means[k], float(counts[k]), level)
        if indices[k] > best:
            best = indices[k]
    n_ties = 0
    for k in range(size):
        if indices[k] == best:
            n_ties += 1
    target = below(rng.bit_generator, n_ties) if n_ties > 1 else 0
    for k in range(size):
        if indices[k] == best:
            if target == 0:
                return k
            target -= 1
    return -1


class SupKLUCBState(AgentState, fields=[
    "rng", "kind", "c1", "c2", "c0", "t",
    # the reduction: pair statistics, scores, super-arm means and the indexing tables
    "wins", "scores", "means", "firsts", "seconds", "index",
    # KL-UCB over the super-arms
    "counts", "cert_value", "cert_level", "ties", "values", "changed",
    # forced exploration (opt-in)
    "min_pair_count",
]):
    """Numba-side state of :class:`SupKLUCB`."""


@numba.njit(cache=True, nogil=True)
def _forced_pair(state, n):
    """The first pair ``i < j`` (lexicographic) with ``N_ij < c0 sqrt(ln n)``, or ``(-1, -1)``."""
    threshold = state.c0 * math.sqrt(math.log(n))
    if state.min_pair_count >= threshold:
        return -1, -1
    wins = state.wins
    n_arms = wins.shape[0]
    for first in range(n_arms):
        for second in range(first + 1, n_arms):
            if wins[first, second] + wins[second, first] < threshold:
                return first, second
    return -1, -1


@numba.njit(cache=True, nogil=True)
def sup_klucb_act(state):
    n = state.t + 1  # the round being chosen (1-based)
    n_super = state.means.shape[0]
    if n <= n_super:  # lines 2-5: every super-arm once, in order
        return state.firsts[n - 1], state.seconds[n - 1]
    if state.c0 > 0.0:
        first, second = _forced_pair(state, n)
        if first >= 0:
            return first, second
    level = sup_klucb_level(n, n_super, state.c1, state.c2)  # line 9
    # Algorithm 1's KL-UCB step at that level: the super-arm of largest index, random ties.
    k = klucb_select(state.means, state.counts, level, state.cert_value, state.cert_level, state.ties,
                     state.values, state.rng)
    return state.firsts[k], state.seconds[k]


@numba.njit(cache=True, nogil=True)
def _invalidate_row(state, arm):
    n_changed = refresh_arm_means(state.scores, state.means, arm, state.changed)
    for position in range(n_changed):
        state.cert_level[state.changed[position]] = -1.0


@numba.njit(cache=True, nogil=True)
def sup_klucb_observe(state, first, second, first_won):
    state.t += 1
    k = state.index[first, second]
    state.counts[k] += 1
    state.cert_level[k] = -1.0
    if first == second:
        return  # a self-duel carries no information about P
    mask = record_scored_duel(state.wins, state.scores, first, second, first_won, state.kind)
    if mask & 1:
        _invalidate_row(state, first)
    if mask & 2:
        _invalidate_row(state, second)
    if state.c0 > 0.0 and state.wins[first, second] + state.wins[second, first] == state.min_pair_count + 1:
        wins = state.wins
        smallest = wins[0, 1] + wins[1, 0]
        for row in range(wins.shape[0]):
            for column in range(row + 1, wins.shape[0]):
                smallest = min(smallest, wins[row, column] + wins[column, row])
        state.min_pair_count = smallest


@numba.njit(cache=True, nogil=True)
def sup_klucb_recommend(state):
    # argmax_i Sup_i, lowest index on ties
    scores = state.scores
    best = 0
    for arm in range(1, scores.shape[0]):
        if scores[arm] > scores[best]:
            best = arm
    return best


@register_agent("sup_klucb", target="copeland")
class SupKLUCB(KernelDuelingAgent):
    """Sup-KLUCB (Agrawal & Chaporkar 2019): KL-UCB over the ``K(K+1)/2`` unordered pairs of arms.

    Each pair ``(i, j)``, ``i <= j`` (self-pairs included) is one arm of an ordinary bandit with
    mean ``Sup_i * Sup_j``, the product of the two arms' plug-in scores (Copeland or Borda) on
    the empirical preference matrix of all non-self duels.  After one duel of every pair,
    Sup-KLUCB duels the pair with the largest KL-UCB index at level
    ``rho_n = c1 ln(n - K̄) + c2 ln(ln(n - K̄) + 1)`` (random ties) and recommends
    ``argmax_i Sup_i``.  A winner's self-pair has the largest mean, so the algorithm ends up
    exploiting with self-duels.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    horizon : int, optional
        Informational only.  Algorithm 1 takes ``T`` as an input but uses it only as the loop
        bound (and to declare the winner at ``T``); the choices are anytime, so any horizon
        gives the same run.  Kept so experiment configurations can record it.
    c1 : float, optional
        Weight ``>= 0`` of ``ln(n - K̄)``; default ``2 / K`` (the paper's Copeland value).
    c2 : float, optional
        Weight ``>= 0`` of ``ln(ln(n - K̄) + 1)``; default ``3 / K + 40 / max(1, (K - 2)^2)``
        (the paper's ``3/K + 40/(K-2)^2``, with ``max(1, .)`` so that ``K = 2`` is defined).
    score : {"copeland", "borda"}, default "copeland"
        The plug-in score: normalised Copeland ``#{j : mu_hat_ij > 1/2} / (K - 1)`` (a pair at
        exactly 1/2 counts for neither side) or Borda ``b_hat_i``.
    forced_exploration : float, optional
        Opt-in safeguard, **not in the paper** (off by default): when set to ``c0 > 0`` (``True``
        means ``1.0``), every step after the initial phase first checks for
        non-self pairs with ``N_ij < c0 sqrt(ln n)`` and duels the lexicographically first one
        (ECW-RMED-style forced exploration); otherwise it takes the KL-UCB step.  It costs
        ``O(K^2 sqrt(ln T))`` extra duels and makes the lock-in described below correctable.
    seed : int, optional
        Seed of the agent's generator (used only to break exact ties between indices).

    Notes
    -----
    *Known weakness of the paper's rule.*  Self-duels carry no information.  Once
    the self-pair ``(i, i)`` of an arm whose plug-in score is ``Sup_i = 1`` is played, the
    empirical matrix stops changing, its mean ``1`` gives index ``1`` and no other super-arm can
    exceed it: the algorithm duels ``(i, i)`` forever.  That is right when ``i`` is the winner,
    but a non-winner that happens to win every duel it has played (e.g. all its single duels of
    the initial phase, or a lucky streak on nearly even pairs) is then exploited forever, with
    linear regret.  With the default constants, at ``T = 10^5`` over seeds 0-4 of
    :func:`~dueling_gym.experiments.simulate`, a non-winner locked in on 2 of 5 seeds on Gap,
    MSLR-5 Condorcet and MSLR-5 non-Condorcet and on 4 of 5 on ArXiv (none on Sushi, MultiSol
    and Table 2).  The default keeps the paper's behaviour.  ``forced_exploration`` keeps every
    pair sampled ``c0 sqrt(ln n)`` times, so a wrong ``Sup_i = 1`` can be corrected, but only
    as fast as that slowly growing count overturns a lucky majority: it helps most where the
    pairs are far from even (random matrices with gaps >= 0.1, ArXiv) and not on MSLR-5
    non-Condorcet.

    For ``K <= 3`` the paper's ``c2`` (``40 / (K-2)^2`` dominates) makes ``rho_n / N_k`` exceed
    37.4 within a few rounds for rarely played super-arms; the index of a mean-0 super-arm,
    ``1 - exp(-rho_n / N_k)``, then rounds to exactly ``1.0`` in double precision and ties with a
    locked self-pair.  This is kept (the index is the shared
    :func:`~dueling_gym.stats.kl_upper_bound_scalar`, evaluated exactly as printed).

    The paper assumes a unique winner.  With several winners the algorithm still runs: their
    pairs tie in ``mu`` and random tie-breaking keeps the choice well defined.

    At round ``n = K̄ + 1`` the level is ``0`` and the step is greedy (as printed).  A duel
    ``(i, j)`` observed by :meth:`observe` counts as a play of super-arm ``{i, j}``, whichever
    order the two arms come in.  Per step: ``O(K̄)`` comparisons plus at most a few bisections
    and divergence evaluations (see the module notes); memory ``O(K^2)``.
    """

    paper = (PaperLink("arXiv:1902.02778", "https://arxiv.org/abs/1902.02778"),)
    guarantee = (
        "No regret bound: the paper proves only that, with a unique winner, the arm Sup-KLUCB settles on is "
        "the Copeland (or other score) winner (Agrawal & Chaporkar 2019, Theorem 1 and Lemma 1.1), supports "
        "the method in experiments and leaves the regret analysis to future work."
    )

    act_kernel = sup_klucb_act
    observe_kernel = sup_klucb_observe
    recommend_kernel = sup_klucb_recommend

    def __init__(self, n_arms: int, *, horizon: int | None = None, c1: float | None = None,
                 c2: float | None = None, score: str = "copeland", forced_exploration: float | bool | None = None,
                 seed=None):
        size = check_n_arms(n_arms)
        self.horizon = None if horizon is None else check_integer("horizon", horizon, minimum=1)
        self._kind = score_kind(score)
        self.score = score.lower()
        if forced_exploration is True:
            forced_exploration = 1.0
        elif forced_exploration is False:
            forced_exploration = None
        if forced_exploration is not None:
            forced_exploration = check_number("forced_exploration", forced_exploration, minimum=0.0)
        self.forced_exploration = forced_exploration
        self.c1 = 2.0 / size if c1 is None else check_number("c1", c1, strict=False, minimum=0.0)
        self.c2 = (3.0 / size + 40.0 / max(1, (size - 2) ** 2)) if c2 is None else check_number(
            "c2", c2, strict=False, minimum=0.0)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        n_super = n_super_arms(n_arms)
        self.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        self.scores = plugin_scores(self.wins, self._kind, np.empty(n_arms))
        self.means = super_arm_means(self.scores, np.empty(n_super))
        self.counts = np.zeros(n_super, dtype=np.int64)
        firsts, seconds, index = pair_tables(n_arms)
        self.state = SupKLUCBState(
            rng=self.rng, kind=self._kind, c1=self.c1, c2=self.c2,
            c0=-1.0 if self.forced_exploration is None else self.forced_exploration, t=0, wins=self.wins,
            scores=self.scores, means=self.means, firsts=firsts, seconds=seconds, index=index, counts=self.counts,
            cert_value=np.full(n_super, np.inf), cert_level=np.full(n_super, -1.0),
            ties=np.zeros(n_super, dtype=np.int64), values=np.zeros(n_super),
            changed=np.zeros(n_arms, dtype=np.int64), min_pair_count=0,
        )
