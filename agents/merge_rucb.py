"""MergeRUCB: RUCB on small batches of arms that merge as arms are eliminated.

Zoghi, Whiteson, de Rijke. *MergeRUCB: A Method for Large-Scale Online Ranker Evaluation.*
WSDM 2015 (Algorithm 1).

MergeRUCB targets many arms under the Condorcet assumption.  The arms are split at random into
batches of about ``P`` arms, and every comparison is *local*: the batches take turns, and the
current batch ``B_b`` (``b = t mod |B|``) first drops every arm that is confidently beaten by
another arm of the batch (``u_ij < 1/2``), then duels a uniformly random arm ``a_c`` of the batch
against the batch arm with the highest upper bound ``u_jc`` of beating it.  Whenever the number
of surviving arms has halved again (at most ``K / 2^s`` arms in stage ``s``), the batches are
merged pairwise, so the batches stay about ``P`` arms large while their number shrinks, until a
single arm, the Condorcet winner with high probability, is left and duels itself.

Upper bounds: ``u_ij = mu_hat_ij + sqrt(alpha ln(t + C) / N_ij)`` (``u_ij = 1`` for an unplayed
pair), where ``t`` is the number of the current duel and ``C = C(delta) = ((4 alpha - 1) K^2 /
((2 alpha - 1) delta))^(1 / (2 alpha - 1))`` is the exploration offset of the regret analysis
(the RUCB constant; the bounds hold for all pairs and times with probability ``1 - delta``).

Choices where the paper leaves details open, and the public implementations:

* Batches: the arms are shuffled with the agent's generator at every reset and dealt into
  ``ceil(K / P)`` batches whose sizes differ by at most one (``K < 2P`` gives one or two batches).
* A batch reduced to a single arm is merged into the next batch in turn (its arm has
  nothing left to duel within the batch); with one batch of one arm left, that arm duels itself.
  duelpy instead skips the duel in such a step, which a one-duel-per-step interface cannot do.
* A batch is never emptied: if every arm of a batch is confidently beaten by another arm of the
  batch (a cycle, possible only without a Condorcet winner), the batch is kept as it is.
* Merging at the end of a stage: the batches are sorted by size (stable, by batch creation
  order on ties) and the ``i``-th smallest is merged with the ``i``-th largest, which halves
  their number and evens their sizes; an odd middle batch stays alone.  duelpy merges by size
  thresholds ``P/2`` and ``3P/2`` instead.
* The challenger ``a_d`` maximises ``u_jc`` over the batch with random ties that never favour
  ``a_c`` (``u_cc = 1/2``); after the elimination step every other arm of the batch has
  ``u_jc >= 1/2``, so ``a_d != a_c`` whenever the batch has two arms or more.
* :meth:`MergeRUCB.recommend` returns the last surviving arm, or while several survive the
  empirical Copeland winner among the survivors (lowest index on ties).

Cost per step: the elimination test and the challenger look at the current batch only
(``O(P^2)`` evidence comparisons without square roots, ``O(P)`` bounds), independent of ``K``;
the pairwise merge costs ``O(K/P log(K/P))`` and happens at most ``log2 K`` times.  The win
matrix ``W`` is still ``K x K``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._confidence_bounds import rucb_upper_bound, trailing_evidence
from dueling_gym.agents._pair_statistics import record_duel
from dueling_gym.agents._random_draws import below
from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import check_integer, check_number, check_probability

__all__ = ["MergeRUCB"]

# counters[...] of the state (scalars that Python reads too)
_N_BATCHES = 0
_REMAINING = 1
_STAGE = 2


class MergeRUCBState(AgentState, fields=[
    "rng",          # the agent's numpy Generator
    "wins",         # W[i, j] = duels of {i, j} won by i (K x K, int64)
    "alive",        # arms not eliminated
    "next_arm",     # linked lists of the batches: the arm after each arm (-1 at the end)
    "batch_head",   # first arm of each batch (-1 once merged away)
    "batch_size",   # arms in each batch
    "order",        # active batch ids, order[:n_batches]
    "counters",     # [number of batches, surviving arms, stage s]
    "members",      # scratch: the current batch's arms
    "values",       # scratch: per-member values
    "flags",        # scratch: per-member flags
    "alpha",
    "offset",       # C, the exploration offset
    "t",            # duels observed so far
]):
    """Numba-side state of :class:`MergeRUCB`."""


@numba.njit(cache=True, nogil=True)
def _gather(state, batch):
    """Copy the arms of ``batch`` into ``state.members``; returns their number."""
    count = 0
    arm = state.batch_head[batch]
    while arm >= 0:
        state.members[count] = arm
        count += 1
        arm = state.next_arm[arm]
    return count


@numba.njit(cache=True, nogil=True)
def _relink(state, batch, count):
    """Rebuild ``batch`` from the members whose flag is False (the survivors)."""
    head = -1
    previous = -1
    size = 0
    for position in range(count):
        arm = state.members[position]
        if state.flags[position]:
            state.alive[arm] = False
            continue
        if previous < 0:
            head = arm
        else:
            state.next_arm[previous] = arm
        previous = arm
        size += 1
    state.next_arm[previous] = -1
    state.batch_head[batch] = head
    state.batch_size[batch] = size


@numba.njit(cache=True, nogil=True)
def _eliminate(state, batch, level):
    """Drop the arms ``i`` of ``batch`` with ``u_ij < 1/2`` for some ``j`` of the batch.

    ``u_ij < 1/2`` iff the trailing evidence ``N (1/2 - mu_hat_ij)^2 / alpha`` exceeds
    ``ln(t + C)``, so no square root is needed.  A batch is never emptied.
    """
    count = _gather(state, batch)
    n_dropped = 0
    for position in range(count):
        arm = state.members[position]
        beaten = False
        for other_position in range(count):
            other = state.members[other_position]
            if other != arm and trailing_evidence(state.wins, arm, other, state.alpha) > level:
                beaten = True
                break
        state.flags[position] = beaten
        n_dropped += beaten
    if n_dropped == 0 or n_dropped == count:
        return
    _relink(state, batch, count)
    state.counters[_REMAINING] -= n_dropped


@numba.njit(cache=True, nogil=True)
def _absorb(state, source, target):
    """Append the arms of batch ``source`` to batch ``target``."""
    arm = state.batch_head[source]
    while state.next_arm[arm] >= 0:
        arm = state.next_arm[arm]
    state.next_arm[arm] = state.batch_head[target]
    state.batch_head[target] = state.batch_head[source]
    state.batch_size[target] += state.batch_size[source]
    state.batch_head[source] = -1
    state.batch_size[source] = 0


@numba.njit(cache=True, nogil=True)
def _merge_stage(state):
    """End of a stage: merge the i-th smallest batch with the i-th largest."""
    n_batches = state.counters[_N_BATCHES]
    sizes = np.empty(n_batches, dtype=np.int64)
    for position in range(n_batches):
        sizes[position] = state.batch_size[state.order[position]]
    ranked = state.order[:n_batches][np.argsort(sizes, kind="mergesort")]
    kept = 0
    for position in range(n_batches // 2):
        small = ranked[position]
        large = ranked[n_batches - 1 - position]
        _absorb(state, small, large)
        state.order[kept] = large
        kept += 1
    if n_batches % 2 == 1:
        state.order[kept] = ranked[n_batches // 2]
        kept += 1
    state.counters[_N_BATCHES] = kept
    state.counters[_STAGE] += 1


@numba.njit(cache=True, nogil=True)
def merge_rucb_act(state):
    n_arms = state.wins.shape[0]
    counters = state.counters
    # Merge step: the surviving arms have halved again.
    if counters[_N_BATCHES] > 1 and counters[_REMAINING] * 2 ** counters[_STAGE] <= n_arms:
        _merge_stage(state)
    level = math.log(state.t + 1.0 + state.offset)  # the current duel is number t + 1
    while True:
        position = state.t % counters[_N_BATCHES]  # b = t mod |B|
        batch = state.order[position]
        _eliminate(state, batch, level)
        if state.batch_size[batch] >= 2:
            break
        if counters[_N_BATCHES] == 1:
            arm = state.batch_head[batch]
            return arm, arm  # the last survivor duels itself
        # A single arm has nobody to duel in its batch: it joins the next batch.
        _absorb(state, batch, state.order[(position + 1) % counters[_N_BATCHES]])
        for later in range(position, counters[_N_BATCHES] - 1):
            state.order[later] = state.order[later + 1]
        counters[_N_BATCHES] -= 1
    count = _gather(state, batch)
    champion = state.members[below(state.rng.bit_generator, count)]
    # Challenger: argmax_{j in B_b} u_{j, c}, random ties, never c on a tie.
    best = -1.0
    n_best = 0
    for position in range(count):
        arm = state.members[position]
        if arm == champion:
            state.values[position] = -1.0
            continue
        bound = rucb_upper_bound(state.wins, arm, champion, state.alpha, level)
        state.values[position] = bound
        if bound > best:
            best = bound
            n_best = 1
        elif bound == best:
            n_best += 1
    if best < 0.5:
        return champion, champion
    pick = below(state.rng.bit_generator, n_best) if n_best > 1 else 0
    for position in range(count):
        if state.values[position] == best:
            if pick == 0:
                return champion, state.members[position]
            pick -= 1
    return champion, champion  # unreachable


@numba.njit(cache=True, nogil=True)
def merge_rucb_observe(state, first, second, first_won):
    state.t += 1
    record_duel(state.wins, first, second, first_won)


@numba.njit(cache=True, nogil=True)
def merge_rucb_recommend(state):
    # The empirical Copeland winner among the surviving arms (lowest index on ties).
    n_arms = state.wins.shape[0]
    best_arm = -1
    best_count = -1
    for i in range(n_arms):
        if not state.alive[i]:
            continue
        count = 0
        for j in range(n_arms):
            if j != i and state.alive[j] and state.wins[i, j] > state.wins[j, i]:
                count += 1
        if count > best_count:
            best_count = count
            best_arm = i
    return best_arm


@register_agent("merge_rucb", target="condorcet")
class MergeRUCB(KernelDuelingAgent):
    """MergeRUCB (Zoghi, Whiteson and de Rijke, WSDM 2015, Algorithm 1).

    RUCB-style duels inside small batches of arms; confidently beaten arms are eliminated
    within their batch, and the batches merge pairwise each time the surviving arms halve.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    partition_size : int, default 4
        ``P``, the initial batch size (``P >= 2``; 4 as in duelpy).
    alpha : float, default 1.01
        Exploration parameter ``alpha > 1/2`` of ``u = mu_hat + sqrt(alpha ln(t + C) / N)``
        (1.01 as in duelpy).
    failure_probability : float, default 0.01
        ``delta`` in ``(0, 1)``, which sets the exploration offset ``C(delta)`` (see the module notes;
        0.01 as in duelpy).
    seed : int, optional
        Seed of the agent's generator (the random partition, ``a_c`` and ties).

    Notes
    -----
    Assumes a Condorcet winner.  Per step ``O(P^2)`` work on the current batch, independent of
    ``K``.  :attr:`batches` lists the current batches; :attr:`exploration_offset` is ``C``.
    """

    paper = (PaperLink("WSDM 2015"),)
    guarantee = (
        "Assumes a Condorcet winner; the paper calls MergeRUCB the first provably scalable dueling bandit "
        "algorithm and gives theoretical guarantees of its soundness, whose bound its abstract does not state "
        "(Zoghi, Whiteson & de Rijke, WSDM 2015, as stated in the abstract)."
    )

    act_kernel = merge_rucb_act
    observe_kernel = merge_rucb_observe
    recommend_kernel = merge_rucb_recommend

    def __init__(self, n_arms: int, *, partition_size: int = 4, alpha: float = 1.01,
                 failure_probability: float = 0.01, seed: int | np.random.SeedSequence | None = None):
        self.partition_size = check_integer("partition_size", partition_size, minimum=2)
        self.alpha = check_number("alpha", alpha, minimum=0.5)
        self.failure_probability = check_probability("failure_probability", failure_probability,
                                                     open_low=True, open_high=True)
        super().__init__(n_arms, seed=seed)

    @property
    def exploration_offset(self) -> float:
        """``C(delta) = ((4 alpha - 1) K^2 / ((2 alpha - 1) delta))^(1 / (2 alpha - 1))``."""
        alpha = self.alpha
        base = (4 * alpha - 1) * self.n_arms ** 2 / ((2 * alpha - 1) * self.failure_probability)
        return float(math.exp(math.log(base) / (2 * alpha - 1)))

    @property
    def batches(self) -> list[list[int]]:
        """The current batches (arm lists, in the order the batches take turns)."""
        result = []
        for batch in self._order[:self._counters[_N_BATCHES]]:
            arms = []
            arm = self._batch_head[batch]
            while arm >= 0:
                arms.append(int(arm))
                arm = self._next_arm[arm]
            result.append(arms)
        return result

    @property
    def stage(self) -> int:
        """The stage ``s``; the next merge happens once at most ``K / 2^s`` arms survive."""
        return int(self._counters[_STAGE])

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        n_batches = -(-n_arms // self.partition_size)
        shuffled = self.rng.permutation(n_arms)
        next_arm = np.full(n_arms, -1, dtype=np.int64)
        batch_head = np.full(n_batches, -1, dtype=np.int64)
        batch_size = np.zeros(n_batches, dtype=np.int64)
        for batch, arms in enumerate(np.array_split(shuffled, n_batches)):
            batch_head[batch] = arms[0]
            next_arm[arms[:-1]] = arms[1:]
            batch_size[batch] = arms.size
        #: ``W[i, j]`` (shared with the compiled state, read-only from Python).
        self.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        #: Arms not eliminated yet (shared with the compiled state, read-only from Python).
        self.alive = np.ones(n_arms, dtype=np.bool_)
        self._next_arm, self._batch_head, self._batch_size = next_arm, batch_head, batch_size
        self._order = np.arange(n_batches, dtype=np.int64)
        self._counters = np.array([n_batches, n_arms, 1], dtype=np.int64)
        self.state = MergeRUCBState(
            rng=self.rng, wins=self.wins, alive=self.alive, next_arm=next_arm, batch_head=batch_head,
            batch_size=batch_size, order=self._order, counters=self._counters,
            members=np.zeros(n_arms, dtype=np.int64), values=np.zeros(n_arms), flags=np.zeros(n_arms, dtype=np.bool_),
            alpha=self.alpha, offset=self.exploration_offset, t=0,
        )
