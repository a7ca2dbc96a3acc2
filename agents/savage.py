"""SAVAGE: Sensitivity Analysis of VAriables for Generic Exploration.

Urvoy, Clérot, Féraud, Naamane. *Generic Exploration and K-armed Voting Bandits.* ICML 2013.
Algorithm 1 (generic SAVAGE) applied to the voting bandits of §4: Copeland bandits (§4.1), the
Condorcet restriction of the feasible set (§4.1, Theorem 3) and Borda bandits (§4.2); the
regret version is the explore-then-exploit wrapper of Appendix B.1 (Algorithm 4).

The comments below tag each step with the part of Algorithm 1 it implements:

* **[init]** the working set ``W`` holds every parameter (pairs ``x_ij``, ``i < j``; for Borda
  the ``K`` parameters ``x_i.``), the hypothesis set ``H`` is the box ``[a_k, b_k] = [0, 1]``;
* **[loop]** explore while ``W`` is not empty and fewer than ``T`` samples were taken;
* **[select]** sample a parameter of ``W`` with the fewest samples, ``k in argmin_{k in W} t_k``;
* **[confidence]** Hoeffding radius ``c(t) = sqrt(ln(eta(t) / delta) / (2 t))`` with
  ``eta(t) = 2 N T`` for a known horizon and ``eta(t) = pi^2 N t^2 / 3`` for ``T = inf``,
  which makes the union bound over the ``N`` parameters and all sample counts equal ``delta``
  (condition (1) of the paper, used in the proof of Theorem 1, Appendix A.1);
* **[H]** ``H <- H ∩ {x : |x_k - mu_k| <= c(t_k)}``: nested intervals
  ``[a_k, b_k] <- [max(a_k, mu_k - c), min(b_k, mu_k + c)]`` (the forced inclusion of the
  successive confidence sets described in §3.1);
* **[W]** ``W <- W minus {j : IndepTest(f, H, j)}``, the variant's independence predicate;
* **[return]** the decision on ``H`` once ``W`` is empty; Algorithm 4 then plays it until ``T``.

Per-duel cost: ``O(1)`` amortised for all variants, plus an ``O(|W|)`` sweep of the working set
only when a count crossing can change some ``IndepTest`` (at most ``O(N)`` such sweeps per run).
The selection keeps ``W`` as a sorted flat array and a cursor: among the parameters still in
``W`` the counts differ by at most one and the more-sampled ones form a prefix in index order, so
"fewest samples, lowest index" is simply "the next parameter of ``W`` after the last one
sampled, wrapping around".
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._confidence_bounds import hoeffding_radius, nested_interval_update, savage_log_level
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import check_integer, check_probability

__all__ = ["SAVAGE", "SAVAGEBorda", "SAVAGECondorcet", "SAVAGE_VARIANTS"]

#: Accepted values of ``variant`` (the index is the kernels' variant code).
SAVAGE_VARIANTS = ("copeland", "condorcet", "borda")
_COPELAND = 0
_CONDORCET = 1
_BORDA = 2


_FIELDS = [
    "rng", "variant", "n_arms", "exploit", "anytime", "horizon", "log_base",
    # one entry per parameter k (flat arrays)
    "first", "second", "pair_index", "counts", "wins", "lower", "upper", "active",
    # the working set Wk as a sorted array order[:n_active] and the round-robin cursor
    "order", "n_active", "cursor", "pending",
    # per-arm bookkeeping of the independence tests
    "cop_lo", "cop_up", "max_lo",
    "primary", "secondary",
    # phase; the last radius computed and its count
    "t", "exploring", "answer", "stop_time", "radius_count", "radius",
]


class SAVAGEState(AgentState, fields=_FIELDS):
    """Numba-side state of :class:`SAVAGE` (phase fields readable from Python)."""

    @property
    def phase(self) -> tuple[bool, int, int, int]:
        """``(exploring, t, stop_time, n_active)``."""
        return _state_phase(self)


@numba.njit(cache=True)
def _state_phase(state):
    return state.exploring, state.t, state.stop_time, state.n_active


# ---------------------------------------------------------------------------------------------
# Bookkeeping after one sample: each returns True when some IndepTest may have changed
# ---------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _update_copeland_counts(state, k, old_lower, old_upper):
    # The Copeland score of arm i on the box H lies in [CopLo_i, CopUp_i] with
    # CopLo_i = #{j : a_ij > 1/2} and CopUp_i = #{j : b_ij > 1/2} (the bounds behind the
    # Copeland predicate of §4.1, illustrated in Appendix B.3).  The mirror interval of x_ji is
    # [1 - b_ij, 1 - a_ij], so arm j counts b_ij < 1/2 in CopLo_j and a_ij < 1/2 in CopUp_j.
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
    # Borda (§4.2): parameter k is x_k., arm k's mean win rate; with the argmax predicate of
    # §3.1, parameter k is independent once b_k < max_l a_l (k cannot be the argmax).
    if state.lower[k] > state.max_lo:
        state.max_lo = state.lower[k]
        return True  # every remaining arm may now be excluded
    return state.upper[k] < state.max_lo


@numba.njit(cache=True, nogil=True)
def _independent(state, k, best, alive):
    """IndepTest(f, H, k) [W]; `best` = max CopLo (Copeland), `alive` = arms left (Borda)."""
    variant = state.variant
    if variant == _BORDA:
        # §3.1 argmax predicate: k cannot be the argmax, or the argmax is already decided
        # (a single arm has b >= max a, so f is constant on H whatever x_k is).
        return state.upper[k] < best or alive <= 1
    # The sign of x_ij - 1/2 is settled on H: the exact value of x_ij no longer matters.
    if state.lower[k] > 0.5 or state.upper[k] < 0.5:
        return True
    i = state.first[k]
    j = state.second[k]
    if variant == _COPELAND:
        # §4.1: neither arm can still be a Copeland winner, max(CopUp_i, CopUp_j) < max_l CopLo_l.
        # Strict: an arm whose best case ties the leader's worst case may still be a winner.
        return max(state.cop_up[i], state.cop_up[j]) < best
    # Condorcet feasible set (§4.1, Theorem 3): a Condorcet winner beats everyone, so once one
    # arm of the pair has a certain loss (CopUp < K - 1) the pair cannot change which arm is it.
    # This subsumes the settled-sign test above (a settled sign is a certain loss of one arm).
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
    """The decision on the box H [return].

    ``final`` (the working set is empty, so the decision is constant on H up to exact ties): the
    arm with the largest lower score, lowest index among ties.  Otherwise (a guess during
    exploration, or the budget ran out) the same primary score with ties broken by the empirical
    score (empirical Copeland count / empirical Borda mean), then lowest index.
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
            if mean > 0.5:
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
            # Appendix B.1, Algorithm 4: play the explored decision until the horizon.
            return state.answer, state.answer
        raise RuntimeError("SAVAGE(exploit=False) has stopped exploring: check `done` before calling act()")
    # [select] fewest samples first, lowest index: the parameter under the round-robin cursor.
    k = state.order[state.cursor]
    state.pending = k
    if state.variant == _BORDA:
        # §4.2: one sample of x_k. is a duel of arm k against a uniformly random other arm,
        # floor(u (K-1)) from one uniform u in [0, 1) (Generator.integers costs ~10x more
        # inside Numba).
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
            # [confidence] and [H]: one more sample of parameter k, nested interval.
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
            if state.variant == _BORDA:
                changed = _update_borda(state, k)
            else:
                changed = _update_copeland_counts(state, k, old_lower, old_upper)
            if k == state.pending and state.order[state.cursor] == k:
                state.cursor += 1
                if state.cursor == state.n_active:
                    state.cursor = 0
            # [W] the independence tests can only change when `changed`.
            if changed:
                _sweep(state)
        state.pending = -1
    # [loop] stop when W is empty or the horizon is reached; [return] the decision on H.
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
@register_agent("savage", target="copeland")
class SAVAGE(KernelDuelingAgent):
    """SAVAGE for voting bandits (Urvoy, Clérot, Féraud & Naamane, ICML 2013, Algorithm 1).

    Samples the parameters still in the working set round robin (fewest samples first, lowest
    index), shrinks nested Hoeffding intervals around their means, and removes every parameter on
    which the decision no longer depends given the box of intervals ``H`` (the paper's
    ``IndepTest``); exploration stops when the working set is empty.

    Variants (parameters, independence test, answer):

    * ``"copeland"`` (default, §4.1): the ``N = K(K-1)/2`` pairs ``x_ij``, ``i < j``; pair
      ``(i, j)`` leaves once the sign of ``x_ij - 1/2`` is settled or neither arm can still be a
      Copeland winner, ``max(CopUp_i, CopUp_j) < max_l CopLo_l``.  Answer: ``argmax CopLo``.
    * ``"condorcet"`` (§4.1, Theorem 3): the same pairs on the feasible set of matrices that
      admit a Condorcet winner; a pair leaves once one of its arms has a certain loss.  Answer:
      the arm without a certain loss (fallback ``argmax CopLo`` if the assumption fails).
    * ``"borda"`` (§4.2): the ``N = K`` parameters ``x_i.`` (arm ``i``'s mean win rate against a
      uniformly random other arm, drawn from the agent's generator) with the argmax predicate of
      §3.1: arm ``i`` leaves once ``b_i < max_l a_l``.  Answer: the last arm standing.  Exact
      Borda ties never resolve: only the horizon ends exploration then.

    The radius is ``c(n) = sqrt(ln(eta / delta) / (2 n))`` after ``n`` samples of a parameter,
    with ``eta = 2 N T`` for a known horizon ``T`` and ``eta = pi^2 N n^2 / 3`` without one (the
    two choices of the paper that make the union bound over parameters and sample counts equal
    ``delta``).  With a ``horizon``, ``delta = 1/T`` by default, exploration lasts at most ``T``
    duels, and with ``exploit=True`` the agent duels ``(answer, answer)`` once exploration has
    stopped: the explore-then-exploit regret version of Appendix B.1 (Algorithm 4).  Because its
    behaviour depends on ``T``, regret curves need one run per horizon.  Without a horizon
    (``delta = 0.05`` by default) it is a pure-exploration algorithm: stop on :attr:`done`.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    horizon : int, optional
        Known horizon ``T >= 1`` (finite-horizon radius, exploitation after exploration).
    delta : float, optional
        Failure probability in ``(0, 1)``; default ``1/T`` with a horizon, else ``0.05``.
    variant : {"copeland", "condorcet", "borda"}, default "copeland"
    exploit : bool, default True
        What ``act()`` does once exploration has stopped: duel ``(answer, answer)`` (True), or
        raise ``RuntimeError`` (False: strict pure exploration, callers must stop on ``done``).
    seed : int, optional
        Seed of the agent's generator (used by the ``"borda"`` variant's random opponents).

    Attributes
    ----------
    done : bool
        True once exploration has stopped; :meth:`~dueling_gym.agents.DuelingAgent.recommend` is then the
        final answer (before:
        the current guess, primary score ``CopLo`` / Borda lower bound with ties broken by the
        empirical score).
    exploration_duels : int or None
        The duel ``t0`` at which exploration stopped.

    Notes
    -----
    Registered as ``"savage"``; :class:`SAVAGEBorda` (``"savage_borda"``) and
    :class:`SAVAGECondorcet` (``"savage_condorcet"``) fix the variant.  ``observe`` expects the
    duels proposed by ``act`` (other duels count as samples of their parameter but do not move the
    round robin); self-duels and duels after exploration are ignored.  Arm order matters for
    lowest-index ties: shuffle the arms across runs when comparing algorithms.
    """

    paper = (PaperLink("ICML 2013, PMLR 28", "https://proceedings.mlr.press/v28/urvoy13.html"),)
    guarantee = (
        "Pure exploration: with probability at least ``1 - δ`` the answer is a Copeland winner, after an "
        "exploration time bounded through how far each pair is from deciding the answer (Urvoy, Clérot, Féraud "
        "& Naamane, ICML 2013, Theorem 1, applied to Copeland bandits in §4.1); with ``exploit=True`` it then "
        "plays that answer (Appendix B.1)."
    )

    pure_exploration = True
    explore_then_exploit = True
    act_kernel = savage_act
    observe_kernel = savage_observe
    recommend_kernel = savage_recommend

    def __init__(self, n_arms: int, *, horizon: int | None = None, delta: float | None = None,
                 variant: str = "copeland", exploit: bool = True, seed=None):
        if horizon is not None:
            horizon = check_integer("horizon", horizon, minimum=1)
        if delta is not None:
            delta = check_probability("delta", delta, open_low=True, open_high=True)
        if not isinstance(variant, str) or variant.lower() not in SAVAGE_VARIANTS:
            raise ValueError(f"variant must be one of {SAVAGE_VARIANTS}, got {variant!r}")
        self.horizon = horizon
        self.delta = delta
        self.variant = variant.lower()
        self.exploit = bool(exploit)
        super().__init__(n_arms, seed=seed)

    @property
    def confidence(self) -> float:
        """The failure probability in use (``delta``, else ``1/T`` with a horizon, else ``0.05``)."""
        if self.delta is not None:
            return self.delta
        return 1.0 / self.horizon if self.horizon is not None else 0.05

    @property
    def n_parameters(self) -> int:
        """The number ``N`` of parameters, ``K`` for ``"borda"`` and ``K(K-1)/2`` otherwise."""
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
        # [confidence] ln(eta / delta): eta = 2 N T (known T), pi^2 N n^2 / 3 (T = inf; the
        # 2 ln n term is added per count by savage_log_level).
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
            rng=self.rng, variant=code, n_arms=n_arms, exploit=self.exploit, anytime=anytime,
            horizon=0 if anytime else self.horizon, log_base=log_base, first=first, second=second,
            pair_index=pair_index, counts=self.counts, wins=self.wins, lower=self.lower, upper=self.upper,
            active=self.active, order=np.arange(n_params, dtype=np.int64), n_active=n_params, cursor=0, pending=-1,
            cop_lo=np.zeros(n_arms, dtype=np.int64), cop_up=np.full(n_arms, n_arms - 1, dtype=np.int64), max_lo=0.0,
            primary=np.zeros(n_arms), secondary=np.zeros(n_arms), t=0, exploring=True, answer=-1, stop_time=-1,
            radius_count=0, radius=math.inf,
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
        """Indices of the parameters still sampled (pairs ``(first[k], second[k])``, or arms for Borda)."""
        return np.flatnonzero(self.active)


@register_agent("savage_borda", target="borda")
class SAVAGEBorda(SAVAGE):
    """:class:`SAVAGE` with ``variant="borda"`` (Urvoy et al., ICML 2013, §4.2): Borda bandits on the row parameters ``x_i.`` of the matrix."""

    guarantee = (
        "The generic SAVAGE guarantee on the ``K`` Borda parameters: with probability at least ``1 - δ`` the "
        "answer is the Borda winner, after an exploration time bounded through the Borda gaps (Urvoy, Clérot, "
        "Féraud & Naamane, ICML 2013, Theorem 1 with the argmax predicate of §3.1, used for Borda bandits in "
        "§4.2)."
    )

    def __init__(self, n_arms: int, *, horizon: int | None = None, delta: float | None = None,
                 exploit: bool = True, seed=None):
        super().__init__(n_arms, horizon=horizon, delta=delta, variant="borda", exploit=exploit, seed=seed)


@register_agent("savage_condorcet", target="condorcet")
class SAVAGECondorcet(SAVAGE):
    """:class:`SAVAGE` with ``variant="condorcet"`` (Urvoy et al., ICML 2013, §4.1, Theorem 3): the Condorcet feasible set."""

    guarantee = (
        "If the matrix has a Condorcet winner, SAVAGE on the Condorcet feasible set is (ε, δ)-PAC for the "
        "Copeland bandits problem, with an exploration time that improves on the Copeland variant's but keeps "
        "a ``K²`` term (Urvoy, Clérot, Féraud & Naamane, ICML 2013, Theorem 3)."
    )

    def __init__(self, n_arms: int, *, horizon: int | None = None, delta: float | None = None,
                 exploit: bool = True, seed=None):
        super().__init__(n_arms, horizon=horizon, delta=delta, variant="condorcet", exploit=exploit, seed=seed)
