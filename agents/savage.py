"""SAVAGE: Sensitivity Analysis of VAriables for Generic Exploration.

Urvoy, Clérot, Féraud, Naamane. *Generic Exploration and K-armed Voting Bandits.* ICML 2013
(Algorithm 1; Copeland, Condorcet and Borda voting bandits in §4; explore-then-exploit in
Appendix B.1).  Spec §2.11.

**Reconstructed algorithm (spec gap V1).**  The formulas of the paper did not survive text
extraction; this module implements the reconstruction of spec §2.11, which was rebuilt from the
surviving prose and checked against three public implementations.  The steps are tagged
``[R1]``..``[R6]`` in the comments below:

* [R1] parameters ``x_1..x_N`` (pairs ``P[i, j]``, ``i < j``, or Borda's ``K`` wrapped
  parameters), all in the working set ``Wk`` with interval ``[a_k, b_k] = [0, 1]``;
* [R2] round robin: sample ``k = argmin_{k in Wk} n_k`` (ties: lowest index), one duel;
* [R3] radius ``sqrt(ln(2 N T / delta) / (2n))`` with a horizon ``T``, else the anytime radius
  ``sqrt(ln(pi^2 N n^2 / (3 delta)) / (2n))``;
* [R4] nested intervals ``[a_k, b_k] <- [max(a_k, m_k - c), min(b_k, m_k + c)]``;
* [R5] ``Wk <- {k in Wk : not IndepTest(k, H)}``, the variant's independence test;
* [R6] stop when ``Wk`` is empty (or after ``T`` duels); answer = the decision on the box ``H``;
  with a horizon and ``exploit=True``, duel ``(answer, answer)`` until ``T`` (regret version).

Per-duel cost: ``O(1)`` for Copeland/Condorcet, ``O(K)`` for the Borda variants, plus an
``O(|Wk|)`` sweep of the working set only when a count crossing changes some ``IndepTest``
(at most ``O(N)`` such sweeps per run).  The round robin keeps the working set as a sorted flat
array and a cursor: among the parameters still in ``Wk`` the counts differ by at most one and the
more-sampled ones form a prefix in index order, so "least sampled, lowest index" is simply "the
next active parameter after the last one sampled, wrapping around".
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba.experimental import structref

from dueling_gym.agents._savage_kernels import hoeffding_radius, nested_interval_update, savage_log_level
from dueling_gym.agents.base import AgentStateType, KernelDuelingAgent, check_number, register_agent

__all__ = ["SAVAGE", "SAVAGEBorda", "SAVAGECondorcet", "SAVAGE_VARIANTS"]

#: Accepted values of ``variant`` (the index is the kernels' variant code).
SAVAGE_VARIANTS = ("copeland", "condorcet", "borda", "borda_pairwise")
_COPELAND = 0
_CONDORCET = 1
_BORDA = 2
_BORDA_PAIRWISE = 3


@structref.register
class SAVAGEStateType(AgentStateType):
    """Numba type of the agent's structref state."""


class SAVAGEState(structref.StructRefProxy):
    """Numba-side state of :class:`SAVAGE` (phase fields readable from Python)."""

    @property
    def phase(self) -> tuple[bool, int, int, int]:
        """``(exploring, t, stop_time, n_active)``."""
        return _state_phase(self)


_FIELDS = [
    "rng", "variant", "n_arms", "exploit", "anytime", "horizon", "log_base",
    # one entry per parameter k (flat arrays)
    "first", "second", "pair_index", "counts", "wins", "lower", "upper", "active",
    # the working set Wk as a sorted array order[:n_active] and the round-robin cursor
    "order", "n_active", "cursor", "pending",
    # per-arm bookkeeping of the independence tests
    "cop_lo", "cop_up", "arm_lo", "arm_up", "excluded", "n_alive", "max_lo",
    "primary", "secondary",
    # phase; the last radius computed and its count
    "t", "exploring", "answer", "stop_time", "radius_count", "radius",
]
structref.define_proxy(SAVAGEState, SAVAGEStateType, _FIELDS)


@numba.njit(cache=True)
def _state_phase(state):
    return state.exploring, state.t, state.stop_time, state.n_active


# ---------------------------------------------------------------------------------------------
# Bookkeeping after one sample: each returns True when some IndepTest may have changed
# ---------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _update_copeland_counts(state, k, old_lower, old_upper):
    # CopLo_i = #{j : a_ij > 1/2}, CopUp_i = #{j : b_ij > 1/2}; the mirror interval of P[j, i]
    # is [1 - b_ij, 1 - a_ij], so arm j counts b_ij < 1/2 in CopLo_j and a_ij < 1/2 in CopUp_j.
    new_lower = state.lower[k]
    new_upper = state.upper[k]
    i = state.first[k]
    j = state.second[k]
    lo_i = np.int64(new_lower > 0.5) - np.int64(old_lower > 0.5)
    up_i = np.int64(new_upper > 0.5) - np.int64(old_upper > 0.5)
    lo_j = np.int64(new_upper < 0.5) - np.int64(old_upper < 0.5)
    up_j = np.int64(new_lower < 0.5) - np.int64(old_lower < 0.5)
    state.cop_lo[i] += lo_i
    state.cop_up[i] += up_i
    state.cop_lo[j] += lo_j
    state.cop_up[j] += up_j
    # The Copeland/Condorcet tests depend only on these integer counts: no change, no sweep.
    return lo_i != 0 or up_i != 0 or lo_j != 0 or up_j != 0


@numba.njit(cache=True, nogil=True)
def _update_borda(state, k):
    # Borda-K: parameter k is arm k; IndepTest(k) = hi_k < max_l lo_l (spec §2.11).
    if state.lower[k] > state.max_lo:
        state.max_lo = state.lower[k]
        return True  # every remaining arm may now be excluded
    return state.upper[k] < state.max_lo


@numba.njit(cache=True, nogil=True)
def _refresh_borda_interval(state, arm):
    # Borda interval of `arm` (times K-1): sum of a_ij over its pairs, mirror intervals for j < arm.
    low = 0.0
    high = 0.0
    for other in range(state.n_arms):
        if other < arm:
            k = state.pair_index[other, arm]
            low += 1.0 - state.upper[k]
            high += 1.0 - state.lower[k]
        elif other > arm:
            k = state.pair_index[arm, other]
            low += state.lower[k]
            high += state.upper[k]
    state.arm_lo[arm] = low
    state.arm_up[arm] = high


@numba.njit(cache=True, nogil=True)
def _update_borda_pairwise(state, k):
    _refresh_borda_interval(state, state.first[k])
    _refresh_borda_interval(state, state.second[k])
    best = state.arm_lo.max()
    changed = False
    for arm in range(state.n_arms):
        if not state.excluded[arm] and state.arm_up[arm] < best:
            state.excluded[arm] = True
            state.n_alive -= 1
            changed = True
    return changed


@numba.njit(cache=True, nogil=True)
def _independent(state, k, best, alive):
    """IndepTest(k, H) [R5]; `best` = max CopLo (Copeland), `alive` = arms left (Borda-K)."""
    variant = state.variant
    if variant == _BORDA:
        return state.upper[k] < best or alive <= 1
    if variant == _BORDA_PAIRWISE:
        # Both arms excluded, or a single arm left (the decision is then constant on H).
        return (state.excluded[state.first[k]] and state.excluded[state.second[k]]) or state.n_alive <= 1
    # (1) the sign of P[i, j] - 1/2 is settled.
    if state.lower[k] > 0.5 or state.upper[k] < 0.5:
        return True
    i = state.first[k]
    j = state.second[k]
    if variant == _COPELAND:
        # (2) neither arm can still be a Copeland winner (strict <, spec gap V3).
        return max(state.cop_up[i], state.cop_up[j]) < best
    # Condorcet (2'): one of the two arms already has a certain loss.
    top = state.n_arms - 1
    return state.cop_up[i] < top or state.cop_up[j] < top


@numba.njit(cache=True, nogil=True)
def _sweep(state):
    """Test every parameter of the working set and compact it, keeping the round-robin position."""
    next_param = state.order[state.cursor]
    best = 0.0
    alive = 0
    if state.variant == _COPELAND:
        best = state.cop_lo.max()
    elif state.variant == _BORDA:
        best = state.max_lo
        for index in range(state.n_active):
            alive += state.upper[state.order[index]] >= best
    kept = 0
    position = 0
    for index in range(state.n_active):
        k = state.order[index]
        if _independent(state, k, best, alive):
            state.active[k] = False
        else:
            state.order[kept] = k
            kept += 1
            if k < next_param:
                position += 1
    state.n_active = kept
    state.cursor = position if position < kept else 0


# ---------------------------------------------------------------------------------------------
# Decision on H and the current guess
# ---------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _decide(state, final):
    """The decision on the box H [R6].

    ``final`` (the working set is empty): the spec's rule with lowest-index ties.  Otherwise (a
    guess during exploration, or the budget ran out) the same primary score with ties broken by
    the empirical score (empirical Copeland count / Borda score / mean), then lowest index.
    """
    n_arms = state.n_arms
    variant = state.variant
    primary = state.primary
    secondary = state.secondary
    secondary[:] = 0.0
    if variant == _BORDA:
        for arm in range(n_arms):
            primary[arm] = state.lower[arm]
            if not final:
                secondary[arm] = state.wins[arm] / state.counts[arm] if state.counts[arm] > 0 else 0.5
    elif variant == _BORDA_PAIRWISE:
        primary[:] = state.arm_lo
    else:
        unbeaten = 0
        if variant == _CONDORCET:
            for arm in range(n_arms):
                unbeaten += state.cop_up[arm] == n_arms - 1
        for arm in range(n_arms):
            primary[arm] = state.cop_lo[arm]
            # Condorcet: the arms without a certain loss come first (fallback: all arms).
            if unbeaten > 0 and state.cop_up[arm] == n_arms - 1:
                primary[arm] += n_arms
    if not final and variant != _BORDA:
        for k in range(state.first.shape[0]):
            i = state.first[k]
            j = state.second[k]
            mean = state.wins[k] / state.counts[k] if state.counts[k] > 0 else 0.5
            if variant == _BORDA_PAIRWISE:
                secondary[i] += mean
                secondary[j] += 1.0 - mean
            elif mean > 0.5:
                secondary[i] += 1.0
            elif mean < 0.5:
                secondary[j] += 1.0
    choice = 0
    for arm in range(1, n_arms):
        if primary[arm] > primary[choice] or (primary[arm] == primary[choice] and secondary[arm] > secondary[choice]):
            choice = arm
    return choice


@numba.njit(cache=True, nogil=True)
def _stop(state):
    state.exploring = False
    state.stop_time = state.t
    state.answer = _decide(state, state.n_active == 0)


# ---------------------------------------------------------------------------------------------
# The three kernels
# ---------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def savage_act(state):
    if not state.exploring:
        if state.exploit:
            return state.answer, state.answer  # explore-then-exploit (S4 App. B.1)
        raise RuntimeError("SAVAGE(exploit=False) has stopped exploring: check `done` before calling act()")
    # [R2] least sampled first, lowest index: the parameter under the round-robin cursor.
    k = state.order[state.cursor]
    state.pending = k
    if state.variant == _BORDA:
        # Borda-K: parameter k = arm k against a uniformly random other arm, floor(u (K-1))
        # from one uniform u in [0, 1) (Generator.integers costs ~10x more inside Numba).
        others = state.n_arms - 1
        opponent = min(np.int64(state.rng.random() * others), others - 1)
        if opponent >= k:
            opponent += 1
        return k, opponent
    return state.first[k], state.second[k]


@numba.njit(cache=True, nogil=True)
def savage_observe(state, first, second, first_won):
    state.t += 1
    if state.exploring and first != second:  # a self-duel carries no information
        if state.variant == _BORDA:
            k = first  # the first arm's parameter: act() always puts the sampled arm first
            outcome = first_won
        elif first < second:
            k = state.pair_index[first, second]
            outcome = first_won
        else:
            k = state.pair_index[second, first]
            outcome = not first_won
        if state.active[k]:
            # [R3]-[R4] one more sample of parameter k, nested interval.
            state.counts[k] += 1
            if outcome:
                state.wins[k] += 1
            count = state.counts[k]
            # The radius depends on n only and a round of the round robin samples every
            # parameter at the same n: compute it once per round.
            if count != state.radius_count:
                state.radius_count = count
                state.radius = hoeffding_radius(savage_log_level(state.log_base, count, state.anytime), count)
            radius = state.radius
            old_lower = state.lower[k]
            old_upper = state.upper[k]
            state.lower[k], state.upper[k] = nested_interval_update(old_lower, old_upper, state.wins[k] / count, radius)
            variant = state.variant
            if variant == _BORDA:
                changed = _update_borda(state, k)
            elif variant == _BORDA_PAIRWISE:
                changed = _update_borda_pairwise(state, k)
            else:
                changed = _update_copeland_counts(state, k, old_lower, old_upper)
            if k == state.pending and state.order[state.cursor] == k:
                state.cursor += 1
                if state.cursor == state.n_active:
                    state.cursor = 0
            # [R5] the independence tests can only change when `changed`.
            if changed:
                _sweep(state)
        state.pending = -1
    # [R6] stop when Wk is empty or the horizon is reached.
    if state.exploring and (state.n_active == 0 or (state.horizon > 0 and state.t >= state.horizon)):
        _stop(state)


@numba.njit(cache=True, nogil=True)
def savage_recommend(state):
    if not state.exploring:
        return state.answer
    return _decide(state, False)


# ---------------------------------------------------------------------------------------------
# The agent
# ---------------------------------------------------------------------------------------------
@register_agent("savage")
class SAVAGE(KernelDuelingAgent):
    """SAVAGE for voting bandits (Urvoy et al., ICML 2013) -- **reconstructed** (spec §2.11, gap V1).

    The paper's formulas were lost; this is the reconstruction of spec §2.11: sample the
    still-relevant parameters round robin (least sampled first, lowest index), shrink nested
    Hoeffding intervals, and drop every parameter on which the decision no longer depends on the
    box of intervals ``H``; stop when none is left.

    Variants (parameters and independence tests):

    * ``"copeland"`` (default): the ``K(K-1)/2`` pairs; pair ``(i, j)`` is dropped once its sign
      is settled or neither arm can still be a Copeland winner
      (``max(CopUp_i, CopUp_j) < max_k CopLo_k``).  Answer: ``argmax CopLo``.
    * ``"condorcet"``: assumes a Condorcet winner exists; a pair is dropped once settled or one of
      its arms has a certain loss.  Answer: the arm without a certain loss (fallback ``argmax
      CopLo``).
    * ``"borda"``: the ``K``-parameter reduction; parameter ``i`` = arm ``i`` against a uniformly
      random other arm (drawn from the agent's generator), i.e. action elimination on Borda scores
      (arm ``i`` dropped once ``hi_i < max_k lo_k``).  Answer: the last arm standing.
    * ``"borda_pairwise"``: the pairs, with Borda intervals summed from the pair intervals; a pair
      is dropped once both arms are excluded or a single arm is left.  Exact Borda ties never
      resolve: only the horizon ends exploration then.

    With a ``horizon`` ``T`` the radius is ``sqrt(ln(2 N T / delta) / (2n))`` with ``delta = 1/T``
    by default, exploration lasts at most ``T`` duels, and with ``exploit=True`` the agent duels
    ``(answer, answer)`` once exploration has stopped: the explore-then-exploit regret version of
    the paper's Appendix B.1, as run in Zoghi et al. (2015) and Komiyama et al. (2016).  Because
    its behaviour depends on ``T``, regret curves need one run per horizon.  Without a horizon the
    radius is the anytime one, ``sqrt(ln(pi^2 N n^2 / (3 delta)) / (2n))`` (``delta = 0.05`` by
    default): pure exploration until :attr:`done`.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    horizon : int, optional
        Known horizon ``T >= 1`` (finite-horizon radius, exploitation after exploration).
    delta : float, optional
        Failure probability in ``(0, 1)``; default ``1/T`` with a horizon, else ``0.05``.
    variant : {"copeland", "condorcet", "borda", "borda_pairwise"}, default "copeland"
    exploit : bool, default True
        What ``act()`` does once exploration has stopped: duel ``(answer, answer)`` (True), or
        raise ``RuntimeError`` (False: strict pure exploration, callers must stop on ``done``).
    seed : int, optional
        Seed of the agent's generator (used by the ``"borda"`` variant's random opponents).

    Attributes
    ----------
    done : bool
        True once exploration has stopped; :meth:`recommend` is then the final answer (before:
        the current guess, primary score ``CopLo``/``BordaLo``/``lo`` with ties broken by the
        empirical score).
    exploration_duels : int or None
        The duel ``t0`` at which exploration stopped.

    Notes
    -----
    Registered as ``"savage"``; :class:`SAVAGEBorda` (``"savage_borda"``) and
    :class:`SAVAGECondorcet` (``"savage_condorcet"``) fix the variant.  ``observe`` expects the
    duels proposed by ``act`` (other duels count as samples of their parameter but do not move the
    round robin); self-duels and duels after exploration are ignored.  Arm order matters for
    lowest-index ties: shuffle arms across runs (spec §7).
    """

    pure_exploration = True
    act_kernel = savage_act
    observe_kernel = savage_observe
    recommend_kernel = savage_recommend

    def __init__(self, n_arms: int, *, horizon: int | None = None, delta: float | None = None,
                 variant: str = "copeland", exploit: bool = True, seed=None):
        if horizon is not None:
            if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)):
                raise TypeError(f"horizon must be an integer or None, got {type(horizon).__name__}")
            if horizon < 1:
                raise ValueError(f"horizon must be a positive integer, got {horizon}")
            horizon = int(horizon)
        if delta is not None:
            delta = check_number("delta", delta, minimum=0.0)
            if delta >= 1.0:
                raise ValueError(f"delta must lie in (0, 1), got {delta}")
        if not isinstance(variant, str) or variant.lower() not in SAVAGE_VARIANTS:
            raise ValueError(f"variant must be one of {SAVAGE_VARIANTS}, got {variant!r}")
        self.horizon = horizon
        self.delta = delta
        self.variant = variant.lower()
        self.exploit = bool(exploit)
        super().__init__(n_arms, seed=seed)

    @property
    def confidence(self) -> float:
        """The failure probability in use: ``delta``, else ``1/T`` with a horizon, else ``0.05``."""
        if self.delta is not None:
            return self.delta
        return 1.0 / self.horizon if self.horizon is not None else 0.05

    @property
    def n_parameters(self) -> int:
        """``N``: ``K`` for ``"borda"``, ``K(K-1)/2`` otherwise."""
        n_arms = self.n_arms
        return n_arms if self.variant == "borda" else n_arms * (n_arms - 1) // 2

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        code = SAVAGE_VARIANTS.index(self.variant)
        n_params = self.n_parameters
        pair_index = np.full((n_arms, n_arms), -1, dtype=np.int64)
        if code == _BORDA:
            first = np.arange(n_arms, dtype=np.int64)
            second = np.full(n_arms, -1, dtype=np.int64)
        else:
            first, second = (np.asarray(a, dtype=np.int64) for a in np.triu_indices(n_arms, 1))
            pair_index[first, second] = np.arange(n_params)
            pair_index[second, first] = np.arange(n_params)
        anytime = self.horizon is None
        # [R3] ln(2/delta'): delta' = delta/(N T) (finite), 6 delta/(pi^2 N n^2) (anytime, + 2 ln n).
        if anytime:
            log_base = math.log(math.pi ** 2 * n_params / (3.0 * self.confidence))
        else:
            log_base = math.log(2.0 * n_params * self.horizon / self.confidence)
        # Python-side views of the state's arrays (shared buffers).
        self.first, self.second = first, second
        self.counts = np.zeros(n_params, dtype=np.int64)
        self.wins = np.zeros(n_params, dtype=np.int64)
        self.lower = np.zeros(n_params)
        self.upper = np.ones(n_params)
        self.active = np.ones(n_params, dtype=np.bool_)
        self.state = SAVAGEState(
            self.rng, code, n_arms, self.exploit, anytime, 0 if anytime else self.horizon, log_base,
            first, second, pair_index, self.counts, self.wins, self.lower, self.upper, self.active,
            np.arange(n_params, dtype=np.int64), n_params, 0, -1,
            np.zeros(n_arms, dtype=np.int64), np.full(n_arms, n_arms - 1, dtype=np.int64),
            np.zeros(n_arms), np.full(n_arms, float(n_arms - 1)),  # Borda sums of [a, b] = [0, 1]
            np.zeros(n_arms, dtype=np.bool_), n_arms, 0.0,
            np.zeros(n_arms), np.zeros(n_arms),
            0, True, -1, -1, 0, math.inf,
        )

    @property
    def done(self) -> bool:
        return not self.state.phase[0]

    @property
    def exploration_duels(self) -> int | None:
        exploring, _, stop_time, _ = self.state.phase
        return None if exploring else int(stop_time)

    @property
    def working_set(self) -> np.ndarray:
        """Indices of the parameters still sampled (pairs ``(first[k], second[k])``; Borda: arms)."""
        return np.flatnonzero(self.active)


@register_agent("savage_borda")
class SAVAGEBorda(SAVAGE):
    """:class:`SAVAGE` with ``variant="borda"`` (the ``K``-parameter Borda reduction)."""

    def __init__(self, n_arms: int, *, horizon: int | None = None, delta: float | None = None,
                 exploit: bool = True, seed=None):
        super().__init__(n_arms, horizon=horizon, delta=delta, variant="borda", exploit=exploit, seed=seed)


@register_agent("savage_condorcet")
class SAVAGECondorcet(SAVAGE):
    """:class:`SAVAGE` with ``variant="condorcet"`` (assumes a Condorcet winner exists)."""

    def __init__(self, n_arms: int, *, horizon: int | None = None, delta: float | None = None,
                 exploit: bool = True, seed=None):
        super().__init__(n_arms, horizon=horizon, delta=delta, variant="condorcet", exploit=exploit, seed=seed)
