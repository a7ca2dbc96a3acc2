"""OptMax: an ε-maximum with O(K/ε² · ln(1/δ)) comparisons under strong stochastic transitivity.

Falahatgar, Hao, Orlitsky, Pichapati, Ravindrakumar. *Maxing and Ranking with Few
Assumptions.* NeurIPS 2017, §3.1 (maxing under strong stochastic transitivity): OPT-MAXIMIZE,
built on COMPARE and SEQ-ELIMINATE (:mod:`dueling_gym.agents.sequential_elimination`, whose
COMPARE stopping rule is reused here).

SEQ-ELIMINATE alone runs each of its ``K - 1`` comparisons at confidence ``δ / (K - 1)``, hence
``O(K/ε² · ln(K/δ))`` duels.  OPT-MAXIMIZE removes the ``ln K``: it first finds a good anchor on a
small random subset, then compares every arm to that anchor once at a constant confidence (only
the comparison of the best arm has to be right), and runs the expensive union-bound comparisons
only among the few arms that seemed to beat the anchor.  The three stages, as the kernels below
run them:

* **[anchor]** ``Q``: a uniformly random subset of ``ceil(K^{3/4})`` arms;
  ``a = SEQ-ELIMINATE(Q, ε_l = 0, ε_u = ε, δ/3)``;
* **[prune]** every other arm ``c``, in uniformly random order, is compared once with ``a``:
  ``COMPARE(c, a, 0, ε, δ/3)``; ``R`` is the set of the arms found better;
* **[final]** ``SEQ-ELIMINATE(R, 0, ε, δ/3)`` with ``a`` as its first anchor (each comparison at
  ``δ / (3|R|)``); the last anchor is the answer (``a`` itself when ``R`` is empty).

Why the answer is an ε-maximum with probability ``>= 1 - δ`` under strong stochastic transitivity
(SST), with ``b*`` the maximum: if ``P[b*, a] > 1/2 + ε``, [prune] keeps ``b*`` in ``R`` except with
probability ``δ/3``, and [final] then returns an ``ε``-maximum of ``R ∪ {a}``, which contains
``b*``, except with probability ``δ/3``.  Otherwise ``a`` is already an ``ε``-maximum, and [final]
(lower bias 0) only ever replaces its anchor by a better arm except with probability ``δ/3``, so
its answer ``o`` lies between ``a`` and ``b*`` in the order and, by SST, ``P[b*, o] <= P[b*, a]``.
[anchor] needs no guarantee: a good anchor only keeps ``R``, hence the cost of [final], small.
Total: ``O(K/ε² · ln(1/δ))`` duels when ``|R| ln|R| = O(K)``, which the paper obtains for
``δ <= K^{-1/3}`` from the ``K^{3/4}`` subset.

Choices and differences with duelpy (``OptMax``):

* The paper tunes the subset sizes and biases per range of ``δ`` (``δ <= K^{-1/3}``, up to
  ``1/ln K``, above); duelpy follows those three branches.  Here one schedule serves every ``δ``:
  the guarantee above holds for any ``δ``, and only the constant of the cost depends on the branch.
* Every COMPARE has lower bias 0 and upper bias ε (the argument above needs no more); the
  paper's intermediate biases (ε/2, 2ε/3) serve its cost analysis of each branch.
* Comparisons run at the union-bound confidences stated above (duelpy passes the stage's ``δ`` to
  every comparison of a stage, which guarantees ``1 - δ`` for one comparison only).
* Defaults ``ε = 0.05`` and ``δ = 0.1``, the values of the papers' experiments and duelpy's.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents.base import AgentState, register_agent
from dueling_gym.agents.identification import KernelIdentificationAgent, shuffle_prefix
from dueling_gym.agents.sequential_elimination import biased_compare_finished
from dueling_gym.validation import check_number, check_probability

__all__ = ["OptMax"]

# Stages of the run.
_ANCHOR, _PRUNE, _FINAL, _DONE = 0, 1, 2, 3


class OptMaxState(AgentState, fields=[
    "rng",
    "order",            # a uniformly random permutation of the arms; Q = order[:subset_size]
    "subset_size",      # |Q| = ceil(K^{3/4})
    "survivors",        # R (its first n_survivors entries)
    "n_survivors",
    "stage",            # _ANCHOR, _PRUNE, _FINAL or _DONE
    "position",         # index of the current challenger in the stage's list
    "anchor",
    "challenger",
    "duels",            # duels of the current COMPARE
    "challenger_wins",
    "middle",           # ε_m = (ε_l + ε_u) / 2 = ε/2 in every stage
    "anchor_delta",     # δ' of [anchor]: δ / (3 (|Q| - 1))
    "prune_delta",      # δ' of [prune]: δ / 3
    "final_delta",      # δ' of [final]: δ / (3 |R|), set when [final] starts
    "budget",           # m of the current stage's COMPARE
    "width",            # ε_u - ε_l = ε
    "t",
]):
    """Numba-side state of :class:`OptMax`."""


@numba.njit(cache=True, nogil=True)
def _budget(delta, width):
    return math.ceil(2.0 * math.log(2.0 / delta) / (width * width))


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
def _start_final(state):
    if state.n_survivors == 0:
        _finish(state)
        return
    state.stage = _FINAL
    state.final_delta = state.prune_delta / state.n_survivors
    state.budget = _budget(state.final_delta, state.width)
    state.position = 0
    _start_compare(state, state.survivors[0])


@numba.njit(cache=True, nogil=True)
def _start_prune(state):
    state.stage = _PRUNE
    state.budget = _budget(state.prune_delta, state.width)
    state.position = -1
    _next_prune(state)


@numba.njit(cache=True, nogil=True)
def _next_prune(state):
    # Every arm but the anchor, in the random order (Q's other arms included).
    n_arms = state.order.shape[0]
    state.position += 1
    if state.position < n_arms and state.order[state.position] == state.anchor:
        state.position += 1
    if state.position >= n_arms:
        _start_final(state)
        return
    _start_compare(state, state.order[state.position])


@numba.njit(cache=True, nogil=True)
def _initialise(state):
    shuffle_prefix(state.order, state.order.shape[0], state.rng)
    state.anchor = state.order[0]
    if state.subset_size < 2:
        _start_prune(state)
        return
    state.stage = _ANCHOR
    state.budget = _budget(state.anchor_delta, state.width)
    state.position = 1
    _start_compare(state, state.order[1])


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
    if not biased_compare_finished(state.challenger_wins, state.duels, state.middle,
                                   _stage_delta(state), state.budget):
        return
    better = state.challenger_wins / state.duels - 0.5 > state.middle
    if state.stage == _ANCHOR:
        if better:
            state.anchor = state.challenger
        state.position += 1
        if state.position >= state.subset_size:
            _start_prune(state)
        else:
            _start_compare(state, state.order[state.position])
    elif state.stage == _PRUNE:
        if better:
            state.survivors[state.n_survivors] = state.challenger
            state.n_survivors += 1
        _next_prune(state)
    else:
        if better:
            state.anchor = state.challenger
        state.position += 1
        if state.position >= state.n_survivors:
            _finish(state)
        else:
            _start_compare(state, state.survivors[state.position])


@numba.njit(cache=True, nogil=True)
def _stage_delta(state):
    if state.stage == _ANCHOR:
        return state.anchor_delta
    if state.stage == _PRUNE:
        return state.prune_delta
    return state.final_delta


@numba.njit(cache=True, nogil=True)
def _progress(state):
    return state.stage, state.n_survivors, state.duels


@numba.njit(cache=True, nogil=True)
def opt_max_recommend(state):
    return state.anchor


@numba.njit(cache=True, nogil=True)
def opt_max_done(state):
    return state.stage == _DONE


@numba.njit(cache=True, nogil=True)
def opt_max_ranking(state):
    # The anchor, then the arms of R (they seemed to beat the first anchor), then the rest by index.
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
    """OPT-MAXIMIZE (Falahatgar et al., NeurIPS 2017, §3.1): an ε-maximum under strong stochastic transitivity.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    epsilon : float, default 0.05
        Accuracy ``ε``: the answer ``o`` has ``P[b*, o] <= 1/2 + ε`` with probability ``>= 1 - δ``.
    delta : float, default 0.1
        Confidence ``δ`` of the whole run (``δ/3`` per stage, see the module notes).
    seed : int, optional
        Seed of the agent's generator (the subset ``Q``, the anchors and the orders).

    Notes
    -----
    Answer: the final anchor (``answer_type = "winner"``, ``target = "condorcet"``).  Stages
    ``"anchor"``, ``"prune"``, ``"final"``, ``"done"`` in :attr:`stage`; :attr:`survivors` is ``R``.
    Per duel ``O(1)``; ``O(K)`` memory.
    """

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
    def subset_size(self) -> int:
        """``|Q| = ceil(K^{3/4})``, the size of the random subset that chooses the first anchor."""
        return min(self.n_arms, math.ceil(self.n_arms ** 0.75))

    @property
    def stage(self) -> str:
        """The current stage: ``"anchor"``, ``"prune"``, ``"final"`` or ``"done"``."""
        return ("anchor", "prune", "final", "done")[_progress(self.state)[0]]

    @property
    def survivors(self) -> np.ndarray:
        """``R``: the arms that [prune] found better than the first anchor (so far)."""
        return self._survivors[: _progress(self.state)[1]].copy()

    @property
    def compare_duels(self) -> int:
        """Duels of the COMPARE under way (0 once it has answered)."""
        return int(_progress(self.state)[2])

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        subset = self.subset_size
        self._survivors = np.zeros(n_arms, dtype=np.int64)
        anchor_delta = self.delta / (3.0 * max(1, subset - 1))
        width = self.epsilon
        self.state = OptMaxState(
            rng=self.rng, order=np.arange(n_arms, dtype=np.int64), subset_size=subset, survivors=self._survivors,
            n_survivors=0, stage=_ANCHOR, position=0, anchor=0, challenger=0, duels=0, challenger_wins=0,
            middle=0.5 * width, anchor_delta=anchor_delta, prune_delta=self.delta / 3.0, final_delta=self.delta / 3.0,
            budget=1, width=width, t=0,
        )
        _initialise(self.state)
