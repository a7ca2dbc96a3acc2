"""DTS: Double Thompson Sampling.

Wu, Liu. *Double Thompson Sampling for Dueling Bandits.* NIPS 2016 (Algorithm 1, D-TS).

DTS targets Copeland winners (the Condorcet winner when there is one).  The first arm is a
Thompson sample of the Copeland winner, restricted to the arms that are Copeland winners
under optimistic (RUCB-type) bounds; the second arm is a Thompson sample of the arm most
likely to beat the first, among the arms that may still beat it.  When no arm plausibly
beats the first one, the duel is a self-duel (pure exploitation).

Implementation note: the first Thompson sample is drawn lazily (see ``_first_arm``): a
candidate's row of ``theta`` is abandoned once its vote count can no longer reach the best
complete row.  This draws far fewer Beta variates and leaves the law of the first arm exactly
as in the paper, where every ``theta_ij`` is drawn up front.  Only each pair's side of 1/2 is
kept (as counts per row and a bit per pair), and the optimistic counts look only at the pairs
played so far.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._confidence_bounds import rucb_lower_bound, rucb_upper_bound
from dueling_gym.agents._pair_statistics import empirical_copeland_winner, record_duel
from dueling_gym.agents._random_draws import random_argmax
from dueling_gym.agents.base import PaperLink, RUCBBoundsAgent
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState

__all__ = ["DTS"]


class DTSState(AgentState, fields=[
    "rng",         # the agent's numpy Generator
    "wins",        # W[i, j] = duels of {i, j} won by i (K x K, int64)
    "played",      # the pairs i < j played so far, as i * K + j, in order of first duel (K(K-1)/2 slots)
    "n_played",    # number of pairs in played
    "optimistic",  # scratch: optimistic Copeland counts zeta_bar_i
    "candidates",  # scratch mask: C = argmax zeta_bar
    "theta",       # scratch: first Thompson sample theta_ij, i < j (drawn lazily; kept if keep_theta)
    "keep_theta",  # whether the values theta_ij are stored (D-TS+ needs them, D-TS only their side of 1/2)
    "drawn",       # scratch bit rows: bit j of row i set once theta_ij is drawn in this first sample
    "row_drawn",   # scratch: #{j : theta_ij drawn in this first sample}
    "row_votes",   # scratch: #{j : theta_ij drawn in this first sample and > 1/2}
    "last_first",  # a1 of the previous step (-1 before the first)
    "votes",       # scratch: #{j != i : theta_ij > 1/2}
    "eligible",    # scratch mask: {i : l_{i,a1} <= 1/2}
    "theta2",      # scratch: second Thompson sample theta'_i
    "alpha",
    "t",           # duels observed so far
]):
    """Numba-side state of :class:`DTS`."""


@numba.njit(cache=True, nogil=True)
def beta_variate(rng, a, b):
    """``rng.beta(a, b)``: the same value from the same draws of ``rng``, ``Beta(1, 1)`` made cheaper.

    For ``a = b = 1`` the Generator uses Johnk's algorithm (``U, V`` uniform until
    ``0 < U^(1/a) + V^(1/b) <= 1``, then ``U^(1/a) / (U^(1/a) + V^(1/b))``), whose powers are
    the identity there; this loop takes the same two uniforms per try without calling ``pow``.
    Other parameters go to ``rng.beta``.  Shared with D-TS+.
    """
    if a == 1.0 and b == 1.0:
        while True:
            first = rng.random()
            second = rng.random()
            total = first + second
            if total <= 1.0 and total > 0.0:
                return first / total
    return rng.beta(a, b)


@numba.njit(cache=True, nogil=True, inline="always")
def _is_drawn(drawn, i, j):
    """Whether bit ``j`` of row ``i`` of the bit rows ``drawn`` is set."""
    return ((drawn[i, j >> 6] >> (j & 63)) & 1) == 1


@numba.njit(cache=True, nogil=True, inline="always")
def _draw_row(rng, wins, theta, keep_theta, drawn, row_drawn, row_votes, arm, start, bar):
    """Draw the pairs ``(arm, j)``, ``j >= start``, not drawn yet in this sample, while ``arm`` can reach ``bar`` votes.

    Each ``theta_{low,high} ~ Beta(W_{low,high} + 1, W_{high,low} + 1)`` (``low < high``) is
    marked drawn in both rows and counted, with its vote, for both arms; with ``keep_theta`` the
    value is stored in ``theta[low, high]`` (``theta_{high,low} = 1 - theta_{low,high}``).  D-TS
    only needs the votes: at large K, storing ``theta_{low,high}`` from the row of ``high`` (a
    write in another row for every pair) costs more than the draws.  The row is abandoned as soon
    as ``votes + pairs left < bar``; a negative ``bar`` draws every pair.  Inlined, and the
    pair's draw written out in its loop: a compiled call per row or per pair, with its array
    arguments reference-counted, makes sampling slower (twice as slow per pair).
    """
    n_arms = wins.shape[0]
    if row_votes[arm] + (n_arms - 1 - row_drawn[arm]) < bar:
        return  # the pairs drawn already rule the row out
    for other in range(start, n_arms):
        if other == arm or _is_drawn(drawn, arm, other):
            continue
        low = min(arm, other)
        high = max(arm, other)
        value = beta_variate(rng, wins[low, high] + 1.0, wins[high, low] + 1.0)
        if keep_theta:
            theta[low, high] = value
        drawn[low, high >> 6] |= 1 << (high & 63)
        drawn[high, low >> 6] |= 1 << (low & 63)
        row_drawn[low] += 1
        row_drawn[high] += 1
        if value > 0.5:
            row_votes[low] += 1
        elif value < 0.5:
            row_votes[high] += 1
        if row_votes[arm] + (n_arms - 1 - row_drawn[arm]) < bar:
            return  # cannot reach the bar any more


@numba.njit(cache=True, nogil=True)
def first_sample_votes(state):
    """Take a new first sample and set ``state.votes[i] = #{j != i : theta_ij > 1/2}`` for ``i in C``.

    Rows that cannot reach the maximum are cut short and get ``-1`` (see :func:`_first_arm`);
    the rows of all maximisers are complete.  Returns the maximum.  Shared with D-TS+.
    """
    return _sample_votes(state.rng, state.wins, state.theta, state.keep_theta, state.drawn, state.row_drawn,
                         state.row_votes, state.candidates, state.votes, state.last_first)


@numba.njit(cache=True, nogil=True)
def _sample_votes(rng, wins, theta, keep_theta, drawn, row_drawn, row_votes, candidates, votes_out, start):
    """:func:`first_sample_votes` on the state's arrays (a loop over arrays compiles to faster code
    than one over a state's fields).  ``start`` is the previous first arm, looked at first."""
    n_arms = wins.shape[0]
    drawn[:, :] = 0  # a new sample: nothing drawn yet
    row_drawn[:] = 0
    row_votes[:] = 0
    if start >= 0 and not candidates[start]:
        start = -1
    best = -1
    for position in range(-1, n_arms):
        arm = start if position < 0 else position
        if arm < 0 or not candidates[arm] or (position >= 0 and arm == start):
            continue
        # The pairs drawn already (by the rows looked at before) are counted at once: they cost
        # no draw, and ``votes + left`` only decreases, so the row is abandoned exactly when a
        # pair-by-pair count would abandon it.  Then the other pairs are drawn in index order.
        # This is _draw_row(..., arm, 0, best) written out: through the inlined helper, D-TS
        # ran 13-15% fewer duels per second at K = 16 (measured side by side).
        if row_votes[arm] + (n_arms - 1 - row_drawn[arm]) >= best:
            for other in range(n_arms):
                if other == arm or _is_drawn(drawn, arm, other):
                    continue
                low = min(arm, other)
                high = max(arm, other)
                value = beta_variate(rng, wins[low, high] + 1.0, wins[high, low] + 1.0)
                if keep_theta:
                    theta[low, high] = value
                drawn[low, high >> 6] |= 1 << (high & 63)
                drawn[high, low >> 6] |= 1 << (low & 63)
                row_drawn[low] += 1
                row_drawn[high] += 1
                if value > 0.5:
                    row_votes[low] += 1
                elif value < 0.5:
                    row_votes[high] += 1
                if row_votes[arm] + (n_arms - 1 - row_drawn[arm]) < best:
                    break
        votes = row_votes[arm]
        if votes + (n_arms - 1 - row_drawn[arm]) < best:
            votes_out[arm] = -1  # cannot reach the maximum
        else:
            votes_out[arm] = votes  # every pair drawn: the exact count
            if votes > best:
                best = votes
    return best


@numba.njit(cache=True, nogil=True)
def complete_first_sample(state):
    """Draw the pairs of the current first sample not drawn yet and set ``state.votes`` for every arm.

    The missing pairs ``theta_ij``, ``i < j``, are drawn in row-major order; then
    ``state.votes[i] = #{j != i : theta_ij > 1/2}`` for all ``i``.  Used by D-TS+, whose
    tie-breaking needs the whole sample.
    """
    for arm in range(state.wins.shape[0]):
        _draw_row(state.rng, state.wins, state.theta, state.keep_theta, state.drawn, state.row_drawn,
                  state.row_votes, arm, arm + 1, -1)
    state.votes[:] = state.row_votes


@numba.njit(cache=True, nogil=True)
def _first_arm(state):
    """``a1 = argmax_{i in C} #{j != i : theta_ij > 1/2}`` with random ties (step 3).

    The pairs are drawn lazily and a candidate's row is abandoned as soon as it can no longer
    reach the best count found so far (``votes + pairs left < best``): abandoned rows are not
    maximisers, complete rows have exact counts, so the maximiser set, and hence the law of
    ``a1``, is exactly that of drawing every ``theta_ij`` up front; only fewer Beta draws are
    made.  The previous ``a1`` is scanned first (it usually sets a high bar), and within a row
    the pairs drawn already in this step are looked at before new ones are drawn.
    """
    first_sample_votes(state)
    return random_argmax(state.votes, state.candidates, state.rng)


@numba.njit(cache=True, nogil=True)
def dts_candidates(state):
    """Steps 1-2: the mask ``state.candidates`` of ``C = argmax_i zeta_bar_i``; returns ``|C|``.

    ``zeta_bar_i = #{j != i : u_ij >= 1/2}`` are the optimistic Copeland counts (``state.optimistic``).
    Shared with D-TS+.
    """
    n_arms = state.wins.shape[0]
    wins = state.wins
    alpha = state.alpha
    log_t = math.log(state.t + 1.0)  # the current duel is number t + 1
    # For each pair at most the arm that trails empirically can have u < 1/2, so one bound
    # per pair, and none for level pairs, whose u is >= 1/2 on both sides: unplayed pairs are
    # level, so only the played ones are looked at (at most t of the K(K-1)/2 pairs).
    for i in range(n_arms):
        state.optimistic[i] = n_arms - 1
    played = state.played
    for index in range(state.n_played):
        i, j = divmod(played[index], n_arms)
        if wins[i, j] < wins[j, i]:
            if rucb_upper_bound(wins, i, j, alpha, log_t) < 0.5:
                state.optimistic[i] -= 1
        elif wins[j, i] < wins[i, j]:
            if rucb_upper_bound(wins, j, i, alpha, log_t) < 0.5:
                state.optimistic[j] -= 1
    top = state.optimistic.max()
    n_candidates = 0
    for i in range(n_arms):
        state.candidates[i] = state.optimistic[i] == top
        n_candidates += state.candidates[i]
    return n_candidates


@numba.njit(cache=True, nogil=True)
def dts_second_arm(state, first):
    """Step 4: ``a2 = argmax theta'_i`` over ``{i : l_{i,a1} <= 1/2}`` (random ties), which holds ``a1``.

    ``theta'_i ~ Beta(W_{i,a1} + 1, W_{a1,i} + 1)`` and ``theta'_{a1} = 1/2``.  Shared with D-TS+.
    """
    n_arms = state.wins.shape[0]
    wins = state.wins
    log_t = math.log(state.t + 1.0)
    for i in range(n_arms):
        if i == first:
            state.eligible[i] = True
            state.theta2[i] = 0.5
        elif rucb_lower_bound(wins, i, first, state.alpha, log_t) <= 0.5:
            state.eligible[i] = True
            state.theta2[i] = beta_variate(state.rng, wins[i, first] + 1.0, wins[first, i] + 1.0)
        else:
            state.eligible[i] = False
    return random_argmax(state.theta2, state.eligible, state.rng)


@numba.njit(cache=True, nogil=True, inline="always")
def dts_duel(state, first):
    """Step 4 for the first arm ``a1 = first``: returns the duel ``(a1, a2)``.  Shared with D-TS+.

    ``a1`` is remembered as the row that the next lazy first sample looks at first.
    """
    state.last_first = first
    return first, dts_second_arm(state, first)


@numba.njit(cache=True, nogil=True)
def dts_act(state):
    # Steps 1-2: optimistic Copeland counts and their maximisers C; a sole candidate is a1 (no sample).
    if dts_candidates(state) == 1:
        return dts_duel(state, random_argmax(state.optimistic, state.candidates, state.rng))
    # Step 3: first Thompson sample, a1 = argmax_{i in C} #{j != i : theta_ij > 1/2}; step 4.
    return dts_duel(state, _first_arm(state))


@numba.njit(cache=True, nogil=True)
def dts_observe(state, first, second, first_won):
    state.t += 1
    wins = state.wins
    if first != second and wins[first, second] == 0 and wins[second, first] == 0:
        state.played[state.n_played] = min(first, second) * wins.shape[0] + max(first, second)
        state.n_played += 1
    record_duel(wins, first, second, first_won)


@numba.njit(cache=True, nogil=True)
def dts_recommend(state):
    # The empirical Copeland winner (lowest index on ties).
    return empirical_copeland_winner(state.wins)


@register_agent("dts", target="copeland")
class DTS(RUCBBoundsAgent):
    """Double Thompson Sampling, D-TS (Wu and Liu, NIPS 2016).

    The first arm is drawn by Thompson sampling of the Copeland winner among the arms with the
    largest optimistic Copeland count ``#{j : u_ij >= 1/2}``; the second arm by Thompson
    sampling of the arm most likely to beat the first, among the arms ``i`` with
    ``l_{i,a1} <= 1/2`` (the first arm itself included, which gives a self-duel when no other
    arm plausibly beats it).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    alpha : float, default 0.51
        Exploration parameter ``alpha > 1/2`` of RUCB's upper and lower bounds
        ``mu_hat +- sqrt(alpha ln t / N)`` (0.51 as in the authors' experiments).
    seed : int, optional
        Seed of the agent's generator (Beta samples and ties).

    Notes
    -----
    Works with Copeland winners; no Condorcet winner is needed.  Per step: one bound comparison
    (one square root) per pair played so far, as unplayed pairs are level and never lower an
    optimistic count, and Beta draws.  The first sample is drawn lazily: only the pairs needed
    to identify ``argmax_{i in C}`` of the vote counts are drawn, which leaves the law of ``a1``
    exactly that of the full sample of Algorithm 1 (lines 7-9) but needs about ``K - 1`` draws
    instead of ``K(K-1)/2`` once one arm dominates (none when ``|C| = 1``); the second sample
    draws ``theta'_i`` for the eligible arms only.  :meth:`~dueling_gym.agents.DuelingAgent.recommend`
    returns the empirical
    Copeland winner (lowest index on ties).

    While many arms are candidates with similar samples, the lazy sample still draws nearly
    every pair: every row's count is about ``(K - 1) / 2`` and must be known to within a few
    standard deviations of the best.  With many arms this lasts long: a pair needs about
    ``4 alpha ln t`` duels before ``u_ij < 1/2``, so at ``K = 2000`` every arm stays a candidate
    for the first ``10^4`` duels and each duel draws about ``2 * 10^6`` Beta variates (some
    0.05-0.08 s per duel on one core).  Memory: three ``K x K`` arrays at most (wins, played
    pairs, and the sample's values for D-TS+) and ``K x K`` bits.

    References
    ----------
    H. Wu, X. Liu. Double Thompson Sampling for Dueling Bandits. NIPS 2016.
    """

    paper = (
        PaperLink("NeurIPS 2016 proceedings",
                  "https://proceedings.neurips.cc/paper/2016/hash/9de6d14fff9806d4bcd1ef555be766cd-Abstract.html"),
    )
    guarantee = (
        "Regret ``O(K² log T)`` on Copeland dueling bandits, refined to ``O(K log T + K² log log T)`` on "
        "Condorcet ones and many practical Copeland ones (Wu & Liu, NIPS 2016, as stated in the abstract)."
    )

    act_kernel = dts_act
    observe_kernel = dts_observe
    recommend_kernel = dts_recommend

    #: Whether the first sample's values are kept (D-TS+ needs them; D-TS only their side of 1/2).
    _keep_theta = False

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        self.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        theta_shape = (n_arms, n_arms) if self._keep_theta else (0, 0)
        self.state = DTSState(
            rng=self.rng, wins=self.wins, played=np.zeros(n_arms * (n_arms - 1) // 2, dtype=np.int64), n_played=0,
            optimistic=np.zeros(n_arms, dtype=np.int64),
            candidates=np.zeros(n_arms, dtype=np.bool_), theta=np.zeros(theta_shape), keep_theta=self._keep_theta,
            drawn=np.zeros((n_arms, (n_arms + 63) // 64), dtype=np.int64), row_drawn=np.zeros(n_arms, dtype=np.int64),
            row_votes=np.zeros(n_arms, dtype=np.int64), last_first=-1,
            votes=np.zeros(n_arms, dtype=np.int64), eligible=np.zeros(n_arms, dtype=np.bool_),
            theta2=np.zeros(n_arms), alpha=self.alpha, t=0,
        )
