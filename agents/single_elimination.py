"""Single-elimination tournaments for the top-1 arm and the sorted top-k arms.

Mohajer, Suh, Elmahdy. *Active Learning for Top-K Rank Aggregation from Noisy Comparisons.*
ICML 2017: Algorithm 1 (top-1 selection by a single-elimination tournament) and
Algorithm 2 (top-``K`` sorting: ``K`` sub-groups, their top-1 winners in a short list kept in a
max-heap, and after each extraction the next best arm of the extracted arm's sub-group).

* **Match** (both algorithms): two arms are compared ``m`` times and the one with more wins goes
  on (ties, possible for even ``m``, are broken uniformly at random).
* **Top-1** (Algorithm 1): the arms, in random order, are paired layer by layer; winners move
  up; after ``ceil(log2 K)`` layers one arm is left.  An odd arm of a layer moves up unplayed.
* **Top-k** (Algorithm 2): the arms are split at random into ``k`` sub-groups of near-equal size
  and a tournament tree is built on each; the short list of the ``k`` sub-group winners is kept
  in a priority structure ordered by matches.  Extracting the best arm of the short list outputs
  it; its sub-group's next best arm is then found by replaying only the matches on the path of
  the extracted arm (the other matches of that tree are already decided), and it enters the short
  list.  Here the paper's max-heap is a *winner tree* over the short list: it answers the same
  queries with ``O(log k)`` matches per extraction, and replaying a path is the same operation
  in both trees, so one data structure serves the whole algorithm.

The number of duels per match: the paper (eq. (16)) takes
``m`` of order ``(1 + ε) log log K / Δ`` for top-1 and ``max(log k, log log K) / Δ`` for top-k,
with ``Δ`` the squared gap of the relevant pairs.  Here ``m`` comes from the same union bound
made explicit with Hoeffding's inequality (a match between arms ``P = 1/2 + g`` apart errs with
probability at most ``exp(-2 m g²)``): top-1 needs the best arm's ``L`` matches
(``L`` = depth of the tree) to be right, ``m = ceil(ln(L / δ) / (2 gap²))``; top-k needs the
matches of the top-``k`` arms, fewer than ``2 k L``, ``m = ceil(ln(2 k L / δ) / (2 gap²))``.  Then
the answer is right with probability at least ``1 - δ`` whenever every pair involving a top arm
has ``|P - 1/2| >= gap``.  ``duels_per_match`` sets ``m`` directly.

Defaults: ``gap = 0.1`` (squared gap ``0.01``, duelpy's default ``preference_separation``) and
``δ = 0.01`` (duelpy's default failure probability, which it names ``epsilon``).  duelpy takes the
gap already squared, and its top-1 formula is the ``k = 1`` formula above; its top-k sorting
splits the arms by index (``arms[i::k]``) where the paper's sub-groups are arbitrary, and plays
the sub-groups' tournaments in full again for each extraction instead of replaying one path.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents.base import PaperLink
from dueling_gym.agents.identification import KernelIdentificationAgent, shuffle_prefix, uniform_below
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import check_integer, check_number, check_probability

__all__ = ["SingleElimination", "duels_per_match"]


def duels_per_match(n_arms: int, k: int, gap: float, delta: float) -> int:
    """``m`` of the module docstring for a tree of depth ``L`` over ``n_arms`` arms in ``k`` groups."""
    depth = _depth(n_arms, k)
    matches = depth if k == 1 else 2 * k * depth
    return max(1, math.ceil(math.log(matches / delta) / (2.0 * gap * gap)))


def _depth(n_arms: int, k: int) -> int:
    largest_group = -(-n_arms // k)
    return max(1, math.ceil(math.log2(largest_group)) + math.ceil(math.log2(k)))


class SingleEliminationState(AgentState, fields=[
    "rng", "left", "right", "parent", "winner", "leaf", "root", "todo", "n_todo", "todo_position", "node", "first",
    "second", "duels", "first_wins", "duels_per_match", "k", "extracted", "n_extracted", "finished", "t",
]):
    """Numba-side state of :class:`SingleElimination`."""


@numba.njit(cache=True, nogil=True)
def _build_level(state, nodes, count, next_node):
    """Pair ``nodes[:count]`` into parents until one is left; returns (root, next free node)."""
    while count > 1:
        kept = 0
        for position in range(0, count - 1, 2):
            parent = next_node
            next_node += 1
            state.left[parent] = nodes[position]
            state.right[parent] = nodes[position + 1]
            state.parent[nodes[position]] = parent
            state.parent[nodes[position + 1]] = parent
            state.todo[state.n_todo] = parent  # children before parents: bottom-up order
            state.n_todo += 1
            nodes[kept] = parent
            kept += 1
        if count % 2 == 1:
            nodes[kept] = nodes[count - 1]  # the odd node moves up unplayed
            kept += 1
        count = kept
    return nodes[0], next_node


@numba.njit(cache=True, nogil=True)
def _build(state, n_arms, k):
    order = np.arange(n_arms)
    shuffle_prefix(order, n_arms, state.rng)
    for position in range(n_arms):
        state.winner[position] = order[position]
        state.leaf[order[position]] = position
    next_node = n_arms
    group_roots = np.empty(k, dtype=np.int64)
    start = 0
    for group in range(k):
        size = n_arms // k + (1 if group < n_arms % k else 0)
        nodes = np.arange(start, start + size)
        group_root, next_node = _build_level(state, nodes, size, next_node)
        group_roots[group] = group_root
        start += size
    root, next_node = _build_level(state, group_roots, k, next_node)
    state.root = root


@numba.njit(cache=True, nogil=True)
def _advance(state):
    """Decide every match that needs no duel; stop at the next one to play (or finish)."""
    while True:
        while state.todo_position < state.n_todo:
            node = state.todo[state.todo_position]
            a = state.winner[state.left[node]]
            b = state.winner[state.right[node]]
            if a >= 0 and b >= 0:
                state.node = node
                state.first = a
                state.second = b
                state.duels = 0
                state.first_wins = 0
                return
            state.winner[node] = a if a >= 0 else b
            state.todo_position += 1
        best = state.winner[state.root]
        state.extracted[state.n_extracted] = best
        state.n_extracted += 1
        if state.n_extracted == state.k:
            state.finished = True
            state.first = state.extracted[0]
            state.second = state.extracted[0]
            return
        # Remove the extracted arm and replay only its path to the root.
        node = state.leaf[best]
        state.winner[node] = -1
        state.n_todo = 0
        state.todo_position = 0
        while state.parent[node] >= 0:
            node = state.parent[node]
            state.todo[state.n_todo] = node
            state.n_todo += 1


@numba.njit(cache=True, nogil=True)
def single_elimination_act(state):
    return state.first, state.second


@numba.njit(cache=True, nogil=True)
def single_elimination_observe(state, first, second, first_won):
    state.t += 1
    if state.finished or first != state.first or second != state.second:
        return
    state.duels += 1
    state.first_wins += first_won
    if state.duels < state.duels_per_match:
        return
    twice = 2 * state.first_wins
    if twice > state.duels or (twice == state.duels and uniform_below(state.rng, 2) == 0):
        state.winner[state.node] = state.first
    else:
        state.winner[state.node] = state.second
    state.todo_position += 1
    _advance(state)


@numba.njit(cache=True, nogil=True)
def single_elimination_recommend(state):
    return state.extracted[0] if state.n_extracted > 0 else state.first


@numba.njit(cache=True, nogil=True)
def single_elimination_ranking(state):
    # The extracted arms in order, then the rest by index.
    n_arms = state.leaf.shape[0]
    ranking = np.empty(n_arms, dtype=np.int64)
    taken = np.zeros(n_arms, dtype=np.bool_)
    for position in range(state.n_extracted):
        ranking[position] = state.extracted[position]
        taken[state.extracted[position]] = True
    position = state.n_extracted
    for arm in range(n_arms):
        if not taken[arm]:
            ranking[position] = arm
            position += 1
    return ranking


@register_agent("single_elimination")
class SingleElimination(KernelIdentificationAgent):
    """Single-Elimination Top-1 / Top-k (Mohajer, Suh & Elmahdy, ICML 2017, Algorithms 1-2).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    k : int, default 1
        Number of top arms to output, in order (``1``: Algorithm 1; more: Algorithm 2).
    gap : float, default 0.1
        Assumed lower bound on ``|P[i, j] - 1/2|`` for the pairs involving a top arm.
    delta : float, default 0.01
        Failure probability ``δ``.
    duels_per_match : int, optional
        Duels per match ``m``; default: from ``gap`` and ``delta`` (module docstring).
    seed : int, optional
        Seed of the agent's generator (the random bracket, tie-breaking).

    Notes
    -----
    Answer: ``k = 1``, the winner (``target = "condorcet"``); ``k > 1``, the top-``k`` arms in
    order (:meth:`top_k`).  Fixed sample count: ``m`` times the number of matches played, at
    most ``(K - 1) + (k - 1) L``.  Per duel ``O(1)``.
    """

    paper = (PaperLink("ICML 2017, PMLR 70", "https://proceedings.mlr.press/v70/mohajer17a.html"),)
    guarantee = (
        "With the library's number of duels per match (Hoeffding's inequality with a union bound over the "
        "matches that count), the answer is right with probability at least ``1 - δ`` whenever every pair "
        "involving a top arm has ``|P - 1/2| >= gap``; the paper's analysis takes matches of ``(1 + ε) log log "
        "K / Δ`` duels for the top arm (Mohajer, Suh & Elmahdy, ICML 2017, eq. (16))."
    )

    target = "condorcet"
    act_kernel = single_elimination_act
    observe_kernel = single_elimination_observe
    recommend_kernel = single_elimination_recommend
    ranking_kernel = single_elimination_ranking

    def __init__(self, n_arms: int, *, k: int = 1, gap: float = 0.1, delta: float = 0.01,
                 duels_per_match: int | None = None, seed=None):
        n_arms = check_integer("n_arms", n_arms, minimum=2)
        self.k = check_integer("k", k, minimum=1, maximum=n_arms)
        self.gap = check_number("gap", gap, minimum=0.0, maximum=0.5)
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        if duels_per_match is not None:
            duels_per_match = check_integer("duels_per_match", duels_per_match, minimum=1)
        self.duels_per_match = duels_per_match
        super().__init__(n_arms, seed=seed)

    @property
    def answer_type(self) -> str:  # type: ignore[override]
        return "winner" if self.k == 1 else "top_k"

    @property
    def matches_duels(self) -> int:
        """``m``, the duels of one match."""
        if self.duels_per_match is not None:
            return self.duels_per_match
        return duels_per_match(self.n_arms, self.k, self.gap, self.delta)

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        size = 2 * n_arms
        self.state = SingleEliminationState(
            rng=self.rng, left=np.full(size, -1, dtype=np.int64), right=np.full(size, -1, dtype=np.int64),
            parent=np.full(size, -1, dtype=np.int64), winner=np.full(size, -1, dtype=np.int64),
            leaf=np.zeros(n_arms, dtype=np.int64), root=0, todo=np.zeros(size, dtype=np.int64), n_todo=0,
            todo_position=0, node=0, first=0, second=0, duels=0, first_wins=0, duels_per_match=self.matches_duels,
            k=self.k, extracted=np.zeros(self.k, dtype=np.int64), n_extracted=0, finished=False, t=0,
        )
        _build(self.state, n_arms, self.k)
        _advance(self.state)
