"""OptMax: an ε-maximum with O(K/ε² · ln(1/δ)) comparisons under strong stochastic transitivity.

Falahatgar, Hao, Orlitsky, Pichapati, Ravindrakumar. *Maxing and Ranking with Few
Assumptions.* NeurIPS 2017: OPT-MAXIMIZE (Algorithm 3, Theorem 6), built on PICK-ANCHOR
(Algorithm 5 of the supplement, Lemma 3), PRUNE (Algorithm 2, Lemma 5), SEQ-ELIMINATE
(Algorithm 1, Theorem 2) and COMPARE (§3.1.1, Lemma 1; its adaptive stopping rule, Appendix A.1,
is the ``biased_compare_finished`` kernel of :mod:`dueling_gym.agents.sequential_elimination`).
``COMPARE(c, a, ε_l, ε_u, δ')`` duels ``c`` against ``a`` at most ``ceil(2 ln(2/δ') / (ε_u - ε_l)²)``
times and says "upper" (``c`` better) iff ``p̂(c beats a) - 1/2 > (ε_l + ε_u)/2``.

SEQ-ELIMINATE alone needs ``O(K/ε² · ln(K/δ))`` duels.  OPT-MAXIMIZE removes the ``ln K``.  With
``n = K`` arms, as the kernels below run it:

1. **δ <= 1/n**: return ``SEQ-ELIMINATE(S, 0, ε, δ)`` (stage ``"final"`` on every arm; each
   COMPARE at ``δ/n``).  Otherwise:
2. ``n' = sqrt(6 n ln n)`` (the cutoff of PRUNE);
3. **[anchor]** ``a = PICK-ANCHOR(S, n', ε/3, δ/4)``: ``s = min(ceil((n/n') ln(2/(δ/4))), n)`` arms
   drawn without replacement, then ``SEQ-ELIMINATE`` of them with biases ``(0, ε/3)`` and
   confidence ``(δ/4)/2``, i.e. each COMPARE at ``δ/(8s)``;
4. **[prune]** ``Q = PRUNE(S, a, n', ε/3, 2ε/3, δ/4)``: round ``t = 1, 2, ...`` runs
   ``COMPARE(e, a, ε/3, 2ε/3, (δ/4)/2^{t+1})`` for every ``e`` still in ``Q`` and removes ``e`` on
   "lower"; a round starts only while ``|Q| > 2n'`` and ``t < (ln n)²``;
5. **[check]** for ``e`` in ``Q``: ``COMPARE(e, a, 2ε/3, ε, δ/(4|Q|))``; at the first "upper",
   **[final]** return ``SEQ-ELIMINATE(Q, 0, ε, δ/4)`` (each COMPARE at ``δ/(4|Q|)``);
6. otherwise return ``a``.

Why the answer is an ε-maximum with probability ``>= 1 - δ`` under strong stochastic transitivity
(SST), with ``b*`` the maximum and ``p̃(i, j) = P[i, j] - 1/2`` (Lemmas 5 and 16-18 of the
supplement): if [check] says "upper" for some ``e``, then ``p̃(e, a) > 2ε/3`` and, by SST,
``p̃(b*, a) > 2ε/3``, so PRUNE kept ``b*`` and SEQ-ELIMINATE returns an ε-maximum of ``Q ∋ b*``.
If [check] says "lower" everywhere, then either ``b*`` is in ``Q`` and ``p̃(b*, a) < ε``, or PRUNE
dropped it, which (Lemma 5) happens only when ``a`` is already a ``2ε/3``-maximum.  PICK-ANCHOR's
guarantee only keeps ``Q`` small (``|Q| <= 2n'``, Lemma 5), hence [check] and [final] cheap.

Choices where the printed algorithm is read second-hand or leaves room (the algorithm boxes of
the paper could not be consulted directly; the steps above follow a reconstruction of Algorithms
1-3 and 5 from a formalization of the paper that quotes them):

* ``log`` is the natural logarithm in ``n'`` and in the round cap ``(ln n)²``; ``n'`` is used
  unrounded, so PRUNE runs a round only when ``n - 1 > 2 sqrt(6 n ln n)``, i.e. from ``n = 117``
  arms on.  For fewer arms ``Q`` is every arm but ``a`` and OPT-MAXIMIZE goes straight to [check].
* PRUNE and [check] run over ``S`` without ``a``: duelling ``a`` with itself carries no
  information (``p̃(a, a) = 0 <= ε/3``, so COMPARE would remove it anyway), and the argument above
  does not need ``a`` in ``Q``.
* The PICK-ANCHOR sample, its anchor and the order of its challengers come from one uniform
  permutation of the arms (its first ``s`` entries); PRUNE visits ``Q`` in that permutation's
  order; [final] draws its anchor and order by shuffling ``Q``.
* Every SEQ-ELIMINATE, including the δ <= 1/n branch, runs each COMPARE at (its δ)/(its set's size),
  the printed union bound; :class:`~dueling_gym.agents.SequentialElimination`
  uses ``δ/(K - 1)``, so the δ <= 1/n branch equals that agent run with ``δ (K - 1)/K``.
* Falahatgar et al.'s ICML 2018 follow-up (*The Limits of Maxing, Ranking, and Preference
  Learning*) has a different linear maxing algorithm, under medium stochastic transitivity, with
  three ranges of δ; duelpy's ``OptMax`` follows that one, not Algorithm 3.
* Defaults ``ε = 0.05`` and ``δ = 0.1``, as in duelpy.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents.base import PaperLink
from dueling_gym.agents.identification import KernelIdentificationAgent, shuffle_prefix
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.sequential_elimination import biased_compare_finished
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import check_number, check_probability

__all__ = ["OptMax"]

# Stages of the run.
_ANCHOR, _PRUNE, _CHECK, _FINAL, _DONE = 0, 1, 2, 3, 4
_STAGES = ("anchor", "prune", "check", "final", "done")


class OptMaxState(AgentState, fields=[
    "rng",
    "order",            # a uniformly random permutation of the arms; the PICK-ANCHOR sample is order[:sample_size]
    "sample_size",      # s, the size of the PICK-ANCHOR sample (K in the δ <= 1/K branch)
    "survivors",        # Q (its first n_survivors entries)
    "n_survivors",
    "stage",            # _ANCHOR, _PRUNE, _CHECK, _FINAL or _DONE
    "on_order",         # True while SEQ-ELIMINATE runs over order[:sample_size], False over Q
    "position",         # index of the current challenger in the stage's list
    "kept",             # PRUNE: survivors of the current round so far
    "round",            # PRUNE: the current round t (0 before the first)
    "max_rounds",       # PRUNE: rounds t < (ln K)² only
    "cutoff",           # n' = sqrt(6 K ln K)
    "anchor",
    "challenger",
    "duels",            # duels of the current COMPARE
    "challenger_wins",
    "epsilon",
    "delta",            # δ of the whole run
    "middle",           # ε_m = (ε_l + ε_u) / 2 of the current COMPARE
    "compare_delta",    # δ' of the current COMPARE
    "budget",           # m of the current COMPARE
    "t",
]):
    """Numba-side state of :class:`OptMax`."""


@numba.njit(cache=True, nogil=True)
def _set_compare(state, lower, upper, delta):
    width = upper - lower
    state.middle = 0.5 * (lower + upper)
    state.compare_delta = delta
    state.budget = math.ceil(2.0 * math.log(2.0 / delta) / (width * width))


@numba.njit(cache=True, nogil=True)
def _start_compare(state, challenger):
    state.challenger = challenger
    state.duels = 0
    state.challenger_wins = 0


@numba.njit(cache=True, nogil=True)
def _finish(state):
    state.stage = _DONE
    state.challenger = state.anchor


@numba.njit(cache=True, nogil=True)
def _seq_arm(state, position):
    if state.on_order:
        return state.order[position]
    return state.survivors[position]


@numba.njit(cache=True, nogil=True)
def _seq_size(state):
    if state.on_order:
        return state.sample_size
    return state.n_survivors


@numba.njit(cache=True, nogil=True)
def _start_seq_eliminate(state, stage, on_order, upper, delta):
    # SEQ-ELIMINATE(list, 0, upper, delta): the list is already in uniformly random order.
    state.stage = stage
    state.on_order = on_order
    size = _seq_size(state)
    state.anchor = _seq_arm(state, 0)
    if size < 2:
        _end_seq_eliminate(state)
        return
    _set_compare(state, 0.0, upper, delta / size)
    state.position = 1
    _start_compare(state, _seq_arm(state, 1))


@numba.njit(cache=True, nogil=True)
def _end_seq_eliminate(state):
    if state.stage == _ANCHOR:
        _start_prune(state)
    else:
        _finish(state)


@numba.njit(cache=True, nogil=True)
def _start_prune(state):
    # Q = every arm but the anchor, in the order of the permutation.
    count = 0
    for position in range(state.order.shape[0]):
        arm = state.order[position]
        if arm != state.anchor:
            state.survivors[count] = arm
            count += 1
    state.n_survivors = count
    state.stage = _PRUNE
    state.round = 0
    _next_round(state)


@numba.njit(cache=True, nogil=True)
def _next_round(state):
    if state.n_survivors <= 2.0 * state.cutoff or state.round + 1 >= state.max_rounds:
        _start_check(state)
        return
    state.round += 1
    epsilon = state.epsilon
    _set_compare(state, epsilon / 3.0, 2.0 * epsilon / 3.0, 0.25 * state.delta / 2.0 ** (state.round + 1))
    state.position = 0
    state.kept = 0
    _start_compare(state, state.survivors[0])


@numba.njit(cache=True, nogil=True)
def _start_check(state):
    if state.n_survivors == 0:
        _finish(state)
        return
    state.stage = _CHECK
    epsilon = state.epsilon
    _set_compare(state, 2.0 * epsilon / 3.0, epsilon, state.delta / (4.0 * state.n_survivors))
    state.position = 0
    _start_compare(state, state.survivors[0])


@numba.njit(cache=True, nogil=True)
def _initialise(state, small_delta):
    shuffle_prefix(state.order, state.order.shape[0], state.rng)
    if small_delta:
        _start_seq_eliminate(state, _FINAL, True, state.epsilon, state.delta)
    else:
        _start_seq_eliminate(state, _ANCHOR, True, state.epsilon / 3.0, state.delta / 8.0)


@numba.njit(cache=True, nogil=True)
def opt_max_act(state):
    return state.challenger, state.anchor


@numba.njit(cache=True, nogil=True)
def opt_max_observe(state, first, second, first_won):
    state.t += 1
    if state.stage == _DONE or first != state.challenger or second != state.anchor:
        return
    state.duels += 1
    state.challenger_wins += first_won
    if not biased_compare_finished(state.challenger_wins, state.duels, state.middle, state.compare_delta,
                                   state.budget):
        return
    upper = state.challenger_wins / state.duels - 0.5 > state.middle
    if state.stage == _PRUNE:
        if upper:
            state.survivors[state.kept] = state.challenger
            state.kept += 1
        state.position += 1
        if state.position < state.n_survivors:
            _start_compare(state, state.survivors[state.position])
        else:
            state.n_survivors = state.kept
            _next_round(state)
    elif state.stage == _CHECK:
        if upper:
            # SEQ-ELIMINATE(Q, 0, ε, δ/4) from a uniformly random anchor and order.
            shuffle_prefix(state.survivors, state.n_survivors, state.rng)
            _start_seq_eliminate(state, _FINAL, False, state.epsilon, 0.25 * state.delta)
            return
        state.position += 1
        if state.position < state.n_survivors:
            _start_compare(state, state.survivors[state.position])
        else:
            _finish(state)
    else:
        if upper:
            state.anchor = state.challenger
        state.position += 1
        if state.position < _seq_size(state):
            _start_compare(state, _seq_arm(state, state.position))
        else:
            _end_seq_eliminate(state)


@numba.njit(cache=True, nogil=True)
def _progress(state):
    return state.stage, state.n_survivors, state.duels, state.round


@numba.njit(cache=True, nogil=True)
def opt_max_recommend(state):
    return state.anchor


@numba.njit(cache=True, nogil=True)
def opt_max_done(state):
    return state.stage == _DONE


@numba.njit(cache=True, nogil=True)
def opt_max_ranking(state):
    # The anchor, then the arms of Q (still candidates to beat the anchor), then the rest by index.
    n_arms = state.order.shape[0]
    ranking = np.empty(n_arms, dtype=np.int64)
    taken = np.zeros(n_arms, dtype=np.bool_)
    ranking[0] = state.anchor
    taken[state.anchor] = True
    count = 1
    for position in range(state.n_survivors):
        arm = state.survivors[position]
        if not taken[arm]:
            ranking[count] = arm
            taken[arm] = True
            count += 1
    for arm in range(n_arms):
        if not taken[arm]:
            ranking[count] = arm
            count += 1
    return ranking


@register_agent("opt_max")
class OptMax(KernelIdentificationAgent):
    """OPT-MAXIMIZE (Falahatgar et al., NeurIPS 2017, Algorithm 3): an ε-maximum under strong stochastic transitivity.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    epsilon : float, default 0.05
        Accuracy ``ε``: the answer ``o`` has ``P[b*, o] <= 1/2 + ε`` with probability ``>= 1 - δ``.
    delta : float, default 0.1
        Confidence ``δ`` of the whole run (``δ/4`` per phase when ``δ > 1/K``, see the module notes).
    seed : int, optional
        Seed of the agent's generator (the PICK-ANCHOR sample, the anchors and the orders).

    Notes
    -----
    Answer: the final anchor (``answer_type = "winner"``, ``target = "condorcet"``).  Stages
    ``"anchor"``, ``"prune"``, ``"check"``, ``"final"``, ``"done"`` in :attr:`stage` (the
    ``δ <= 1/K`` branch is one ``"final"`` SEQ-ELIMINATE over every arm); :attr:`survivors` is
    ``Q``.  Per duel ``O(1)`` (``O(K)`` when a PRUNE or SEQ-ELIMINATE starts); ``O(K)`` memory.
    """

    paper = (
        PaperLink("NeurIPS 2017 proceedings",
                  "https://proceedings.neurips.cc/paper/2017/hash/db98dc0dbafde48e8f74c0de001d35e4-Abstract.html"),
    )
    guarantee = (
        "(ε, δ)-PAC: under strong stochastic transitivity an ε-maximum (``P[i*, out] <= 1/2 + ε``) with "
        "probability at least ``1 - δ`` after ``O(K/ε² · ln(1/δ))`` duels (Falahatgar, Hao, Orlitsky, "
        "Pichapati & Ravindrakumar, NeurIPS 2017, Theorem 6)."
    )

    answer_type = "winner"
    target = "condorcet"
    act_kernel = opt_max_act
    observe_kernel = opt_max_observe
    recommend_kernel = opt_max_recommend
    done_kernel = opt_max_done
    ranking_kernel = opt_max_ranking

    def __init__(self, n_arms: int, *, epsilon: float = 0.05, delta: float = 0.1, seed=None):
        self.epsilon = check_number("epsilon", epsilon, minimum=0.0, maximum=0.5)
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        super().__init__(n_arms, seed=seed)

    @property
    def small_delta(self) -> bool:
        """True when ``δ <= 1/K``, where OPT-MAXIMIZE is plain SEQ-ELIMINATE(S, 0, ε, δ)."""
        return self.delta <= 1.0 / self.n_arms

    @property
    def cutoff(self) -> float:
        """The cutoff ``n' = sqrt(6 K ln K)``; PRUNE stops once at most ``2n'`` candidates remain."""
        return math.sqrt(6.0 * self.n_arms * math.log(self.n_arms))

    @property
    def max_rounds(self) -> float:
        """The round limit ``(ln K)²``; PRUNE starts round ``t`` only while ``t < (ln K)²``."""
        return math.log(self.n_arms) ** 2

    @property
    def subset_size(self) -> int:
        """The size ``s = min(ceil((K/n') ln(8/δ)), K)`` of the PICK-ANCHOR sample (``K`` when ``δ <= 1/K``)."""
        if self.small_delta:
            return self.n_arms
        return min(self.n_arms, math.ceil(self.n_arms / self.cutoff * math.log(8.0 / self.delta)))

    @property
    def stage(self) -> str:
        """The current stage, one of ``"anchor"``, ``"prune"``, ``"check"``, ``"final"`` and ``"done"``."""
        return _STAGES[_progress(self.state)[0]]

    @property
    def survivors(self) -> np.ndarray:
        """The candidates ``Q`` that PRUNE kept (every arm but the anchor before PRUNE ends)."""
        return self._survivors[: _progress(self.state)[1]].copy()

    @property
    def prune_rounds(self) -> int:
        """Rounds PRUNE has started so far."""
        return int(_progress(self.state)[3])

    @property
    def compare_duels(self) -> int:
        """Duels of the COMPARE under way (0 once it has answered)."""
        return int(_progress(self.state)[2])

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        self._survivors = np.zeros(n_arms, dtype=np.int64)
        self.state = OptMaxState(
            rng=self.rng, order=np.arange(n_arms, dtype=np.int64), sample_size=self.subset_size,
            survivors=self._survivors, n_survivors=0, stage=_ANCHOR, on_order=True, position=0, kept=0, round=0,
            max_rounds=self.max_rounds, cutoff=self.cutoff, anchor=0, challenger=0, duels=0, challenger_wins=0,
            epsilon=self.epsilon, delta=self.delta, middle=0.5 * self.epsilon, compare_delta=self.delta, budget=1,
            t=0,
        )
        _initialise(self.state, self.small_delta)
