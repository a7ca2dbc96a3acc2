"""SCB: Scalable Copeland Bandits, and its Copeland PAC solver.

Zoghi, Karnin, Whiteson, de Rijke. *Copeland Dueling Bandits.* NIPS 2015: Algorithm 3 (SCB),
Algorithm 2 (the approximate Copeland bandit solver), Algorithm 4 of Appendix I (KL best-arm
identification) and the without-replacement remark of Appendix H.

Three nested procedures, run here as one explicit state machine inside Numba kernels so that the
fused simulator can run them:

* **"Query the pair until sure"** (Algorithm 2, line 1): duel ``(a_i, a_j)`` until the KL
  sequential test (a private kernel of SCB) decides the sign of
  ``p_ij − 1/2`` with error probability at most ``δ/K²``.  A decided sign is kept for the rest of
  the solver run (an ``int8`` K×K table), so a later query of the pair, from either side, costs
  no duel: the paper's analysis treats a decided pair as a deterministic answer (Appendix H).
* **The Copeland-score oracle** ``reward(i)`` (Algorithm 2, line 1): the decided sign of ``a_i``
  against an opponent ``a_j``; its mean is the normalised Copeland score ``cpld(a_i)``.  The
  opponents are drawn uniformly *without replacement* from the other ``K − 1`` arms (a lazy
  Fisher-Yates shuffle per arm), as Appendix H prescribes when ``ε²(1 − μ_1) < 1/K`` -- always the
  case for SCB's ``ε = 0``.  ``with_replacement=True`` draws every opponent afresh (Algorithm 2
  taken literally).
* **KL best-arm identification** (Algorithm 4) on the ``K`` oracles ``reward(i)``: lines 1-5
  sample every arm once, then rounds ``t = 2, 3, ...`` sample every arm of ``B`` (line 9), set the
  KL intervals (line 10), eliminate (line 11) and test the stop rule (line 8).
* **Epochs** (Algorithm 3): epoch ``r`` has ``T = 2^(2^r)`` duels and runs the solver at failure
  probability ``ln T / T`` with ``ε = 0`` and fresh statistics (line 2); it is force-terminated
  when the ``T`` duels are spent, otherwise its answer ``a`` is played as ``(a, a)`` for the
  remaining ``T − T_0`` duels (line 3).

Where the paper is silent
-------------------------
* *The sign test.*  Algorithm 2 only asks for "sufficiently many" duels to know the sign with
  probability ``1 − δ/K²``.  We stop at the first ``n`` with ``n·d(p̂, 1/2) > ln(n(n+1)K²/δ)``:
  by the Chernoff bound and a union bound over ``n`` it errs with probability at most ``δ/K²``
  for every non-tied pair, and its length is of the order ``ln(K²/(δΔ²))/Δ²`` that Section 5.2
  assumes.
* *The stop rule with ``ε = 0``.*  Line 8 stops only when ``max_B min I = max_B max I``, which KL
  intervals of positive width never satisfy.  Two facts make it stop: (i) without replacement,
  after ``K − 1`` samples an arm has met every opponent, so its score is known exactly and its
  interval is the point ``S_i/(K − 1)``; (ii) a single survivor (``|B| = 1``) is returned at once.
  ``0/0`` counts as ``1`` (stop) and ``x/0`` as ``+∞`` (continue).  With replacement the exact
  interval is used once every arm of ``B`` has a decided sign against all ``K − 1`` opponents
  (otherwise tied Copeland winners would never be separated and the solver would never stop).
* *Line 10 at small ``t``*: ``ln(4tK/δ) + 2 ln ln t`` is used as printed for ``t >= 2`` (at ``t = 2``
  the ``ln ln`` term is negative).
* *Recommendation while exploring*: ``argmax_{i in B} min I_i`` (the output line of Algorithm 4
  applied to the current state); lowest index on ties.
* ``reuse_across_epochs=True`` (off by default; the paper restarts from scratch) keeps the pair
  win counts of earlier epochs and re-runs the sign test on them at the new level.
* A duel passed to ``observe`` that is not the pending one counts towards the epoch budget but
  teaches the solver nothing.

State machine
-------------
The state always points at the next duel it needs: ``cursor`` is the arm whose ``reward`` is
being computed and ``opponent`` its current opponent.  :func:`scb_observe` records the outcome,
lets the sign test decide, and then ``_advance`` feeds every available answer to Algorithm 4
(cached pairs cost no duel), ending rounds (bounds, exact scores, elimination, stop rule) until
either a pair needs another duel or the solver has returned.  :func:`scb_act` only reads the state.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._random_draws import below
from dueling_gym.agents._scb_kernels import kl_bai_level, kl_bai_should_stop, kl_sign_test, squaring_epoch
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.stats import kl_lower_bound_scalar, kl_upper_bound_scalar
from dueling_gym.validation import check_integer, check_number, check_probability

__all__ = ["SCB", "CopelandPAC"]

_EXPLORING = 0
_EXPLOITING = 1  # the solver has returned ``answer`` (CopelandPAC: done)


class SCBState(AgentState, fields=[
    "rng",
    # configuration
    "epochs", "with_replacement", "reuse", "epsilon", "first_epoch",
    # epoch (Algorithm 3) and confidence levels
    "epoch", "budget", "epoch_duels", "log_inv_delta", "log_inv_level",
    # phase and result
    "phase", "answer", "solver_duels", "total_duels",
    # Algorithm 4
    "rewards", "lower", "upper", "candidates", "n_candidates", "t", "cursor",
    # Algorithm 2 oracle: opponent shuffles, the pending query, the pair cache
    "opponents", "opponent_position", "opponent", "wins", "sign", "n_decided", "decided_wins",
]):
    """Numba-side state shared by :class:`SCB` and :class:`CopelandPAC`."""


# ------------------------------------------------------------------------------------------
# Algorithm 2: the Copeland-score oracle reward(i)
# ------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _draw_opponent(state, arm):
    """Algorithm 2, line 1: an opponent ``j != arm`` (without replacement by default)."""
    n_arms = state.wins.shape[0]
    if state.with_replacement:
        opponent = below(state.rng.bit_generator, n_arms - 1)
        return opponent + 1 if opponent >= arm else opponent
    # Lazy Fisher-Yates: opponents[arm, :position] were already met in this epoch.
    position = state.opponent_position[arm]
    remaining = n_arms - 1 - position
    if remaining > 1:
        pick = position + below(state.rng.bit_generator, remaining)
        opponent = state.opponents[arm, pick]
        state.opponents[arm, pick] = state.opponents[arm, position]
        state.opponents[arm, position] = opponent
    state.opponent_position[arm] = position + 1
    return state.opponents[arm, position]


@numba.njit(cache=True, nogil=True)
def _decide(state, first, second):
    """Algorithm 2, line 1 ("until sure"): sign test on the pair's counts; cache a decided sign."""
    first_wins = state.wins[first, second]
    sign = kl_sign_test(first_wins, first_wins + state.wins[second, first], state.log_inv_level)
    if sign != 0:
        state.sign[first, second] = sign
        state.sign[second, first] = -sign
        state.n_decided[first] += 1
        state.n_decided[second] += 1
        if sign > 0:
            state.decided_wins[first] += 1
        else:
            state.decided_wins[second] += 1
    return sign


# ------------------------------------------------------------------------------------------
# Algorithm 4: KL best-arm identification on the rewards
# ------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _best_candidate(state):
    """Algorithm 4, output line: ``argmax_{i in B} lo_i`` (lowest index on ties)."""
    best = -1
    for arm in range(state.candidates.shape[0]):
        if state.candidates[arm] and (best < 0 or state.lower[arm] > state.lower[best]):
            best = arm
    return best


@numba.njit(cache=True, nogil=True)
def _next_candidate(state, after):
    for arm in range(after + 1, state.candidates.shape[0]):
        if state.candidates[arm]:
            return arm
    return -1


@numba.njit(cache=True, nogil=True)
def _exact_update(state):
    """Exact scores (Appendix H, opponents without replacement): once every arm of ``B`` has met
    all ``K − 1`` opponents, ``lo_i = hi_i = (decided wins of i) / (K − 1)``.

    Without replacement this happens exactly at ``t = K − 1`` (then ``S_i`` equals the decided
    wins); with replacement, once every pair of every surviving arm is decided (module notes).
    """
    n_arms = state.candidates.shape[0]
    if not state.with_replacement:
        if state.t != n_arms - 1:
            return
    else:
        for arm in range(n_arms):
            if state.candidates[arm] and state.n_decided[arm] < n_arms - 1:
                return
    for arm in range(n_arms):
        if state.candidates[arm]:
            score = state.decided_wins[arm] / (n_arms - 1.0)
            state.lower[arm] = score
            state.upper[arm] = score


@numba.njit(cache=True, nogil=True)
def _end_round(state):
    """Close round ``t`` of Algorithm 4 (every arm of ``B`` has ``t`` samples).

    Returns True when the solver stops (line 8 / output line), else starts round ``t + 1``.
    """
    n_arms = state.candidates.shape[0]
    t = state.t
    if t >= 2:
        # Line 10: I_i = {q : t d(S_i/t, q) <= ln(4tK/δ) + 2 ln ln t}.
        level = kl_bai_level(t, n_arms, state.log_inv_delta)
        for arm in range(n_arms):
            if state.candidates[arm]:
                mean = state.rewards[arm] / t
                state.lower[arm] = kl_lower_bound_scalar(mean, t, level)
                state.upper[arm] = kl_upper_bound_scalar(mean, t, level)
    # (Lines 1-5 at t = 1: I_i = [0, 1]; the exact update matters there only for K = 2.)
    _exact_update(state)
    max_lower = -1.0
    for arm in range(n_arms):
        if state.candidates[arm] and state.lower[arm] > max_lower:
            max_lower = state.lower[arm]
    # Line 11: remove i from B if max I_i < min I_j for some j in B (a no-op at t = 1 unless
    # the exact update fired, since then every I_i is still [0, 1]).
    for arm in range(n_arms):
        if state.candidates[arm] and state.upper[arm] < max_lower:
            state.candidates[arm] = False
            state.n_candidates -= 1
    max_upper = -1.0
    for arm in range(n_arms):
        if state.candidates[arm] and state.upper[arm] > max_upper:
            max_upper = state.upper[arm]
    # Line 8 (checked before the next round): continue while
    # (1 − max_B min I) / (1 − max_B max I) > 1 + ε and |B| > 1.
    if kl_bai_should_stop(state.n_candidates, max_lower, max_upper, state.epsilon):
        # Output line: argmax_{i in B} min I_i.
        state.answer = _best_candidate(state)
        state.phase = _EXPLOITING
        return True
    # Line 12: t <- t + 1; line 9 then samples every arm of B once more, ascending.
    state.t = t + 1
    state.cursor = _next_candidate(state, -1)
    return False


@numba.njit(cache=True, nogil=True)
def _advance(state):
    """Feed every answer available without a duel to Algorithm 4; stop at the next needed duel.

    On return either ``phase == _EXPLOITING`` or ``(cursor, opponent)`` is an undecided pair.
    """
    while True:
        arm = state.cursor
        if state.opponent < 0:
            state.opponent = _draw_opponent(state, arm)
        opponent = state.opponent
        sign = state.sign[arm, opponent]
        if sign == 0:
            sign = _decide(state, arm, opponent)  # carried-over counts (reuse_across_epochs)
            if sign == 0:
                return  # the sign test needs another duel of (arm, opponent)
        # reward(arm) = 1 iff arm beats its opponent (Algorithm 2, line 1); line 3 / line 9.
        if sign > 0:
            state.rewards[arm] += 1
        state.opponent = -1
        if state.t == 1:
            following = arm + 1 if arm + 1 < state.candidates.shape[0] else -1  # lines 1-5: all arms
        else:
            following = _next_candidate(state, arm)  # line 9: the arms of B
        if following >= 0:
            state.cursor = following
        elif _end_round(state):
            return


@numba.njit(cache=True, nogil=True)
def _start_solver(state):
    """Algorithm 4, lines 1-7, from scratch: ``S_i = 0``, ``I_i = [0, 1]``, ``B = [K]`` (fresh
    statistics; the pair counts are kept only with ``reuse_across_epochs``)."""
    state.sign[:, :] = 0
    state.n_decided[:] = 0
    state.decided_wins[:] = 0
    if not state.reuse:
        state.wins[:, :] = 0
    n_arms = state.wins.shape[0]
    for arm in range(n_arms):  # opponents[arm] = the other arms in ascending order
        for position in range(n_arms - 1):
            state.opponents[arm, position] = position + (position >= arm)
    state.opponent_position[:] = 0
    state.rewards[:] = 0
    state.lower[:] = 0.0
    state.upper[:] = 1.0
    state.candidates[:] = True
    state.n_candidates = n_arms
    state.t = 1
    state.cursor = 0
    state.opponent = -1
    state.phase = _EXPLORING
    state.answer = -1
    state.solver_duels = 0
    _advance(state)


@numba.njit(cache=True, nogil=True)
def _start_epoch(state, epoch):
    """Algorithm 3, lines 1-2: ``T = 2^(2^r)``; Algorithm 2 at ``δ = ln T / T`` with ``ε = 0``."""
    n_arms = state.wins.shape[0]
    budget, log_inv_delta = squaring_epoch(epoch)
    state.epoch = epoch
    state.budget = budget
    state.epoch_duels = 0
    state.log_inv_delta = log_inv_delta
    state.log_inv_level = log_inv_delta + 2.0 * math.log(n_arms)  # δ' = δ / K²
    _start_solver(state)


@numba.njit(cache=True, nogil=True)
def scb_start(state):
    """Initial state: epoch ``first_epoch`` (SCB) or the single solver run (CopelandPAC)."""
    state.total_duels = 0
    if state.epochs:
        _start_epoch(state, state.first_epoch)
    else:
        _start_solver(state)


# ------------------------------------------------------------------------------------------
# The three agent kernels
# ------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def scb_act(state):
    if state.phase == _EXPLORING:
        return state.cursor, state.opponent
    # Algorithm 3, line 3: query (a_i, a_i); CopelandPAC after returning: self-duel of the answer.
    return state.answer, state.answer


@numba.njit(cache=True, nogil=True)
def scb_observe(state, first, second, first_won):
    state.total_duels += 1
    arm = state.cursor
    opponent = state.opponent
    pending = False  # is this the duel the sign test asked for (in either orientation)?
    if state.phase == _EXPLORING:
        pending = (first == arm and second == opponent) or (first == opponent and second == arm)
        state.solver_duels += 1
        if pending:
            arm_won = first_won if first == arm else not first_won
            if arm_won:
                state.wins[arm, opponent] += 1
            else:
                state.wins[opponent, arm] += 1
    if state.epochs:
        state.epoch_duels += 1
        # Algorithm 3, line 2: force-terminate once the epoch's T duels are spent (line 3:
        # otherwise the remaining T − T0 duels were self-duels of the answer).
        if state.epoch_duels >= state.budget:
            _start_epoch(state, state.epoch + 1)
            return
    if state.phase == _EXPLORING and pending:
        if _decide(state, arm, opponent) != 0:
            _advance(state)


@numba.njit(cache=True, nogil=True)
def scb_recommend(state):
    """The identified arm once the solver has returned, else ``argmax_{i in B} lo_i``."""
    if state.phase == _EXPLOITING:
        return state.answer
    return _best_candidate(state)


@numba.njit(cache=True, nogil=True)
def _scb_status(state):
    """``(phase, answer, solver_duels, epoch, epoch_duels)`` for the Python side."""
    return state.phase, state.answer, state.solver_duels, state.epoch, state.epoch_duels


# ------------------------------------------------------------------------------------------
# Agents
# ------------------------------------------------------------------------------------------
class _CopelandSolverAgent(KernelDuelingAgent):
    """Shared construction of the SCB state for :class:`SCB` and :class:`CopelandPAC`."""

    paper = (
        PaperLink("NeurIPS 2015 proceedings",
                  "https://proceedings.neurips.cc/paper/2015/hash/9872ed9fc22fc182d371c3e9ed316094-Abstract.html"),
    )

    act_kernel = scb_act
    observe_kernel = scb_observe
    recommend_kernel = scb_recommend

    _epochs: bool
    _first_epoch: int = 1
    _log_inv_delta: float = 0.0
    _epsilon: float = 0.0
    reuse_across_epochs: bool = False
    with_replacement: bool

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        # opponents[i] = the other K - 1 arms (filled per solver run, shuffled lazily).
        self.opponents = np.zeros((n_arms, n_arms - 1), dtype=np.int64)
        self.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        self.sign = np.zeros((n_arms, n_arms), dtype=np.int8)
        self.rewards = np.zeros(n_arms, dtype=np.int64)
        self.lower = np.zeros(n_arms)
        self.upper = np.ones(n_arms)
        self.candidates = np.ones(n_arms, dtype=np.bool_)
        self.state = SCBState(
            rng=self.rng, epochs=self._epochs, with_replacement=self.with_replacement, reuse=self.reuse_across_epochs,
            epsilon=float(self._epsilon), first_epoch=self._first_epoch, epoch=0, budget=0, epoch_duels=0,
            log_inv_delta=float(self._log_inv_delta),
            log_inv_level=float(self._log_inv_delta + 2.0 * math.log(n_arms)), phase=_EXPLORING, answer=-1,
            solver_duels=0, total_duels=0, rewards=self.rewards, lower=self.lower, upper=self.upper,
            candidates=self.candidates, n_candidates=n_arms, t=1, cursor=0, opponents=self.opponents,
            opponent_position=np.zeros(n_arms, dtype=np.int64), opponent=-1, wins=self.wins, sign=self.sign,
            n_decided=np.zeros(n_arms, dtype=np.int64), decided_wins=np.zeros(n_arms, dtype=np.int64),
        )
        scb_start(self.state)

    @property
    def exploiting(self) -> bool:
        """True once the (current epoch's) solver has returned its answer."""
        return int(_scb_status(self.state)[0]) == _EXPLOITING

    @property
    def candidate_arms(self) -> np.ndarray:
        """Algorithm 4's surviving set ``B`` (ascending arm indices)."""
        return np.flatnonzero(self.candidates)


@register_agent("copeland_pac", target="copeland")
class CopelandPAC(_CopelandSolverAgent):
    """Copeland PAC solver of Zoghi et al. (NIPS 2015): Algorithm 2 on top of Algorithm 4.

    Returns, with probability at least ``1 − δ``, an ``ε``-Copeland winner ``i``
    (``1 − cpld_i <= (1 + ε)(1 − cpld*)``).  Each arm's "reward" is the sign of ``p_ij − 1/2``
    against a random opponent ``j`` (found by a KL sequential test at level ``δ/K²`` and cached),
    whose mean is the normalised Copeland score; KL best-arm identification (Algorithm 4)
    eliminates arms until the stop rule fires.  Opponents are drawn without replacement, so
    after ``K − 1`` rounds the surviving scores are exact and the solver stops even with
    ``ε = 0`` and several Copeland winners.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    delta : float, default 0.05
        Failure probability ``δ`` in ``(0, 1)``.
    epsilon : float, default 0.0
        Approximation parameter ``ε >= 0``.
    with_replacement : bool, default False
        Draw each opponent uniformly at random (Algorithm 2 literally) instead of without
        replacement.
    seed : int, optional
        Seed of the agent's generator.

    Notes
    -----
    Pure exploration: :attr:`done` becomes True when the solver returns;
    :meth:`~dueling_gym.agents.DuelingAgent.recommend` is
    then its answer and :meth:`act` returns the self-duel ``(answer, answer)``.
    :attr:`sample_complexity` is the number of duels it used.  A tied pair (``p_ij = 1/2``)
    that the solver must resolve makes it run forever.  Per duel ``O(1)``; per round of
    Algorithm 4 ``O(K)`` bisections; memory ``O(K²)``.
    """

    guarantee = (
        "With probability at least ``1 - δ`` it returns an ε-Copeland winner after ``O((1/K) Σ_i H_i (1 - "
        "cpld(a_i)) / (Δ_i^ε)²) log(1/δ)`` duels, at most ``O(H_∞ (log K + min(ε^-2, L_C))) log(1/δ)``, on any "
        "Copeland problem without ties (Zoghi, Karnin, Whiteson & de Rijke, NIPS 2015, Lemma 14)."
    )

    pure_exploration = True
    _epochs = False

    def __init__(self, n_arms: int, *, delta: float = 0.05, epsilon: float = 0.0, with_replacement: bool = False,
                 seed=None):
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        self.epsilon = check_number("epsilon", epsilon, strict=False, minimum=0.0)
        self.with_replacement = bool(with_replacement)
        self._log_inv_delta = -math.log(self.delta)
        self._epsilon = self.epsilon
        super().__init__(n_arms, seed=seed)

    @property
    def done(self) -> bool:
        """True once the solver has returned (then ``recommend()`` is its answer)."""
        return self.exploiting

    @property
    def sample_complexity(self) -> int:
        """Number of duels the solver used (so far, or in total once :attr:`done`)."""
        return int(_scb_status(self.state)[2])


@register_agent("scb", target="copeland")
class SCB(_CopelandSolverAgent):
    """Scalable Copeland Bandits (Zoghi, Karnin, Whiteson, de Rijke, NIPS 2015, Algorithm 3).

    Explore-then-exploit restarted on a squaring schedule: epoch ``r`` lasts ``T_r = 2^(2^r)``
    duels (4, 16, 256, 65 536, 2^32, ...) and runs the Copeland PAC solver
    (:class:`CopelandPAC`, ``ε = 0``) at failure probability ``δ_r = ln T_r / T_r`` with fresh
    statistics; if the solver returns arm ``a`` after ``T0`` duels, SCB plays ``(a, a)`` for
    the remaining ``T_r − T0`` duels, and if it has not returned after ``T_r`` duels it is
    force-terminated.  Anytime (the horizon is not needed).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    first_r : int, default 1
        Index of the first epoch (``1 <= first_r <= 6``; the paper starts at 1).
    with_replacement : bool, default False
        Draw the solver's opponents with replacement (Algorithm 2 literally).
    reuse_across_epochs : bool, default False
        Keep the pair win counts from one epoch to the next (the paper restarts from scratch);
        the sign tests are re-run on them at the new epoch's level.
    seed : int, optional
        Seed of the agent's generator.

    Notes
    -----
    Regret ``O(K log K log T)`` (Zoghi regret) when the Copeland winners have few losses.
    Nearly even pairs make the sign tests long: on problems with ``|p_ij − 1/2| ~ 0.01`` the
    first epochs are spent exploring and regret stays near linear for ``T ~ 10^5``.
    ``recommend()`` is the exploited arm, or ``argmax_{i in B} lo_i`` while the current epoch's
    solver is still exploring.  Per duel ``O(1)``; per round of Algorithm 4 ``O(K)``
    bisections; memory ``O(K²)``.
    """

    guarantee = (
        "Expected regret ``O(K (L_C + log K) log T / Δ_min²)`` on any Copeland problem without ties, no "
        "Condorcet winner needed (Zoghi, Karnin, Whiteson & de Rijke, NIPS 2015, Theorem 13: Lemma 14 with the "
        "squaring trick)."
    )

    _epochs = True

    def __init__(self, n_arms: int, *, first_r: int = 1, with_replacement: bool = False,
                 reuse_across_epochs: bool = False, seed=None):
        self.first_r = check_integer("first_r", first_r, minimum=1, maximum=6)
        self.with_replacement = bool(with_replacement)
        self.reuse_across_epochs = bool(reuse_across_epochs)
        self._first_epoch = self.first_r
        super().__init__(n_arms, seed=seed)

    @property
    def epoch(self) -> int:
        """Index ``r`` of the current epoch."""
        return int(_scb_status(self.state)[3])

    @property
    def solver_duels(self) -> int:
        """Duels the current epoch's solver has used so far (``T_0`` of Algorithm 3, line 3, once
        :attr:`exploiting`)."""
        return int(_scb_status(self.state)[2])
