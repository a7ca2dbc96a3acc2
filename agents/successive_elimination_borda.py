"""Successive Elimination for the Borda winner (the Borda reduction of Jamieson et al.).

Jamieson, Katariya, Deshpande, Nowak. *Sparse Dueling Bandits.* AISTATS 2015,
Algorithm 1 (Successive Elimination with Comparison Sparsity, SECS), in its Borda-reduction
form: the elimination rule on the estimated Borda scores alone (SECS's second rule; its first,
sparsity-based rule never fires when the time gate is ``T_0 = ∞``).  This is the successive
elimination of Even-Dar et al. applied to the Borda reduction, the algorithm SECS is compared
with in the paper's experiments (§5).

* **Round ``t``** (Algorithm 1): draw ``I_t`` uniformly from all ``K`` arms and duel every
  active arm ``j`` against it, ``Z_{j, I_t} = 1`` if ``j`` won (``Z_{I_t, I_t} = 0``: no duel);
  ``ŝ_j = K / (K - 1) · mean_t Z_{j, I_t}`` is an unbiased estimate of the Borda score
  ``s_j = (1/(K-1)) Σ_{i≠j} P[j, i]``.
* **Elimination**: after round ``t``, remove every active ``j`` with
  ``max_i ŝ_i - ŝ_j > 2 c_t``; stop when one arm is left, the Borda winner with probability at
  least ``1 - δ`` (any matrix with a unique Borda winner, no other assumption).

Radius: each ``ŝ_j`` is an average of ``t`` independent variables in ``[0, K/(K-1)]``, so
Hoeffding's inequality with a union bound over the ``K`` arms and all rounds
(``Σ_t 1/(2t²) < 1``) gives ``c_t = K/(K-1) · sqrt(ln(4 K t² / δ) / (2t))``.  The paper's ``C_t``
is a Bernstein radius for the same event; duelpy (``SuccessiveElimination``) implements the
sparse rule with the paper's ``C_t`` (its additive term multiplied by ``t`` where the paper
divides by it).  Default ``δ = 0.1`` as in duelpy.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents.base import PaperLink
from dueling_gym.agents.identification import KernelIdentificationAgent, uniform_below
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import check_probability

__all__ = ["SuccessiveEliminationBorda"]


class SuccessiveEliminationBordaState(AgentState, fields=[
    "rng", "delta", "active", "n_active", "cursor", "opponent", "wins", "rounds", "eliminated_at", "finished", "t",
]):
    """Numba-side state of :class:`SuccessiveEliminationBorda`."""


@numba.njit(cache=True, nogil=True)
def _eliminate(state):
    """End of round ``t``: drop the arms whose Borda estimate is ``2 c_t`` below the best one."""
    state.rounds += 1
    n_arms = state.wins.shape[0]
    t = state.rounds
    scale = n_arms / (n_arms - 1.0)
    radius = scale * math.sqrt(math.log(4.0 * n_arms * t * t / state.delta) / (2.0 * t))
    best = -1.0
    for index in range(state.n_active):
        best = max(best, state.wins[state.active[index]])
    threshold = best - 2.0 * radius * t / scale  # on win counts: ŝ = scale * wins / t
    kept = 0
    for index in range(state.n_active):
        arm = state.active[index]
        if state.wins[arm] < threshold:
            state.eliminated_at[arm] = t
        else:
            state.active[kept] = arm
            kept += 1
    state.n_active = kept


@numba.njit(cache=True, nogil=True)
def _initialise(state):
    state.opponent = uniform_below(state.rng, state.wins.shape[0])
    state.cursor = 0
    _advance(state)


@numba.njit(cache=True, nogil=True)
def _advance(state):
    """Move to the next duel of the round, ending rounds (and the run) as they complete."""
    while True:
        # Z_{I_t, I_t} = 0 needs no duel: pass over the reference arm itself.
        while state.cursor < state.n_active and state.active[state.cursor] == state.opponent:
            state.cursor += 1
        if state.cursor < state.n_active:
            return
        _eliminate(state)
        if state.n_active == 1:
            state.finished = True
            state.opponent = state.active[0]
            return
        state.opponent = uniform_below(state.rng, state.wins.shape[0])
        state.cursor = 0


@numba.njit(cache=True, nogil=True)
def successive_elimination_borda_act(state):
    if state.finished:
        return state.active[0], state.active[0]
    return state.active[state.cursor], state.opponent


@numba.njit(cache=True, nogil=True)
def successive_elimination_borda_observe(state, first, second, first_won):
    state.t += 1
    if state.finished or first != state.active[state.cursor] or second != state.opponent:
        return
    state.wins[first] += first_won
    state.cursor += 1
    _advance(state)


@numba.njit(cache=True, nogil=True)
def successive_elimination_borda_recommend(state):
    best = state.active[0]
    for index in range(1, state.n_active):
        if state.wins[state.active[index]] > state.wins[best]:
            best = state.active[index]
    return best


@numba.njit(cache=True, nogil=True)
def successive_elimination_borda_ranking(state):
    # Active arms first, then by elimination round (later is better); within a group by wins.
    # Every arm eliminated in round t was sampled exactly t times, so wins compare fairly.
    n_arms = state.wins.shape[0]
    key = np.empty(n_arms)
    for arm in range(n_arms):
        stage = state.eliminated_at[arm] if state.eliminated_at[arm] > 0 else state.rounds + 1
        key[arm] = -(stage * (state.rounds + 2.0) + state.wins[arm] / (state.rounds + 1.0))
    return np.argsort(key, kind="mergesort").astype(np.int64)


@register_agent("successive_elimination_borda")
class SuccessiveEliminationBorda(KernelIdentificationAgent):
    """Successive Elimination on the Borda reduction (Jamieson et al., AISTATS 2015, Algorithm 1).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    delta : float, default 0.1
        Confidence ``δ``: the answer is the Borda winner with probability ``>= 1 - δ``.
    seed : int, optional
        Seed of the agent's generator (the reference arms ``I_t``).

    Notes
    -----
    Answer: the Borda winner (``answer_type = "winner"``, ``target = "borda"``).  The number of
    duels grows like ``Σ_j ln(K/(δ Δ_j)) / Δ_j²`` with the Borda gaps ``Δ_j = s_1 - s_j``; it
    does not stop when two arms tie on the Borda score (use ``max_samples``).  Per duel ``O(1)``,
    ``O(|A|)`` per round.
    """

    paper = (PaperLink("AISTATS 2015, PMLR 38", "https://proceedings.mlr.press/v38/jamieson15.html"),)
    guarantee = (
        "With probability at least ``1 - δ`` the Borda winner of any matrix that has a unique one, after a "
        "number of duels of the order of the sum of the inverse squared Borda gaps (up to logarithmic "
        "factors), which the paper shows no algorithm can beat without structural assumptions (Jamieson, "
        "Katariya, Deshpande & Nowak, AISTATS 2015, as stated in the abstract)."
    )

    answer_type = "winner"
    target = "borda"
    act_kernel = successive_elimination_borda_act
    observe_kernel = successive_elimination_borda_observe
    recommend_kernel = successive_elimination_borda_recommend
    ranking_kernel = successive_elimination_borda_ranking

    def __init__(self, n_arms: int, *, delta: float = 0.1, seed=None):
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        self.state = SuccessiveEliminationBordaState(
            rng=self.rng, delta=self.delta, active=np.arange(n_arms, dtype=np.int64), n_active=n_arms, cursor=0,
            opponent=0, wins=np.zeros(n_arms), rounds=0, eliminated_at=np.zeros(n_arms, dtype=np.int64),
            finished=False, t=0,
        )
        _initialise(self.state)
