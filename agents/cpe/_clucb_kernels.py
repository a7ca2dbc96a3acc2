"""Compiled rounds of CLUCB-Borda-PAC and CLUCB-Borda-Exact (Chen, Du, Huang, Zhao, ICML 2020).

Algorithm 1 (CLUCB-Borda-PAC) and Algorithm 5 (CLUCB-Borda-Exact); ``[A1 Ln]`` / ``[A5 Ln]``
point to their lines.  The agents of :mod:`dueling_gym.agents.cpe.clucb_borda` keep their state
in the arrays below and advance it with these kernels, one duel per round:

* ``stats = (counts, sums, means)``: ``T(e)``, the wins of ``e`` and ``w̄(e)``;
* ``ints``: the slots ``T_ROUND .. SECOND`` (round ``t``, epoch ``q``, self-duels, status, pending duel);
* ``settings = [δ, ε, K']`` and ``options = [exact, reuse statistics, sampler kind, max trials]``;
* ``graph = (edge positions, edge candidates, edge_at, edges by position, their offsets)``;
* ``sampler = (cumulative marginals, group sizes)`` and ``workspace`` (preallocated buffers).

Every float is computed with the operations of the NumPy reference, in the same order, so the
duels, the random draws and the answer are those of the Python implementation bit for bit:
max-weight matchings come from :func:`~dueling_gym.agents.cpe._assignment.max_weight_covering`
(SciPy's solver and tie-breaking), sums from NumPy's pairwise summation, the opponent from the
same uniform draws as :class:`~dueling_gym.agents.cpe.samplers.ExactMatchingSampler`
(``method="marginal"``) or :class:`~dueling_gym.agents.cpe.samplers.RejectionMatchingSampler`.
Other samplers are called from Python (the kernel stops in the ``SERVICE`` status).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dueling_gym.agents._random_draws import uniform
from dueling_gym.agents.cpe._assignment import max_weight_covering, new_assignment_workspace, take_sum
from dueling_gym.agents.cpe._duel_source import draw_outcome

# Slots of ``ints``.
T_ROUND, EPOCH, SELF_DUELS, STATUS, FIRST, SECOND = 0, 1, 2, 3, 4, 5
N_INTS = 6
# Values of ints[STATUS] (CompiledAgent's codes).
RUNNING, DONE, SERVICE = 0, 1, 3
# ints[SECOND] while in SERVICE: the opponent is left to a Python sampler, or the rejection
# sampler gave up.
PYTHON_SAMPLER, SAMPLER_GAVE_UP = -1, -2
# Slots of ``settings`` and ``options``.
DELTA, EPSILON, LOG_CONSTANT = 0, 1, 2
EXACT, REUSE, SAMPLER_KIND, MAX_TRIALS = 0, 1, 2, 3
# Values of options[SAMPLER_KIND].
SAMPLER_PYTHON, SAMPLER_MARGINAL, SAMPLER_REJECTION = 0, 1, 2
#: Proposals drawn per block by the rejection sampler (RejectionMatchingSampler._block).
REJECTION_BLOCK = 64
#: CLUCB-Borda-Exact's relative tolerance of "equal adjusted weights" (Algorithm 5 line 18).
EQUALITY_TOLERANCE = 1e-12


def new_workspace(n_edges: int, n_positions: int, n_candidates: int) -> tuple:
    """Buffers of one agent: radius, adjusted weights, two matchings, the assignment's buffers, ..."""
    return (np.zeros(n_edges), np.zeros(n_edges), np.zeros(n_positions, dtype=np.int64),
            np.zeros(n_positions, dtype=np.int64), new_assignment_workspace(n_positions, n_candidates),
            np.zeros(n_positions), np.zeros(2 * n_positions, dtype=np.int64),
            np.ones(n_edges, dtype=np.bool_), np.zeros(REJECTION_BLOCK * n_positions),
            np.zeros(n_positions, dtype=np.int64))


@numba.njit(cache=True, nogil=True)
def _sample_opponent(position, options, graph, sampler, workspace, rng):
    """The edge at ``position`` of a uniformly random covering matching [A1 L20-21] [A5 L26-27]."""
    positions, candidates, edge_at, group_edges, group_start = graph
    cumulative, sizes = sampler
    kind = options[SAMPLER_KIND]
    if kind == SAMPLER_MARGINAL:
        # ExactMatchingSampler.sample_opponent: searchsorted(side="right") of one uniform in the
        # exact cumulative marginal of the position, clipped to the last edge.
        u = uniform(rng.bit_generator)
        start, stop = group_start[position], group_start[position + 1]
        index = 0
        while start + index < stop and cumulative[start + index] <= u:
            index += 1
        return group_edges[start + min(index, stop - start - 1)]
    if kind == SAMPLER_REJECTION:
        # RejectionMatchingSampler.sample: blocks of 64 proposals (one uniform per position, the
        # whole block drawn first), the first proposal with distinct candidates is accepted.
        n_positions = sizes.shape[0]
        draws, picks = workspace[8], workspace[9]
        bitgen = rng.bit_generator
        trials = 0
        while trials < options[MAX_TRIALS]:
            for i in range(REJECTION_BLOCK * n_positions):
                draws[i] = uniform(bitgen)
            for row in range(REJECTION_BLOCK):
                trials += 1
                distinct = True
                for j in range(n_positions):
                    picks[j] = group_edges[group_start[j] + np.int64(draws[row * n_positions + j] * sizes[j])]
                    for k in range(j):
                        if candidates[picks[k]] == candidates[picks[j]]:
                            distinct = False
                if distinct:
                    return picks[position]
        return SAMPLER_GAVE_UP
    return PYTHON_SAMPLER


@numba.njit(cache=True, nogil=True)
def _start_epoch(ints, stats, options):
    """[A5 L2-6]: epoch ``q`` starts from fresh statistics unless they are reused; ``w̄`` [A1 L3, L12]."""
    counts, sums, means = stats
    if options[EXACT] and not options[REUSE]:
        counts[:] = 0
        sums[:] = 0.0
        ints[T_ROUND] = 1
    for e in range(counts.shape[0]):
        means[e] = sums[e] / counts[e] if counts[e] > 0 else 0.0


@numba.njit(cache=True, nogil=True)
def _round(ints, stats, settings, options, graph, workspace):
    """One round up to the choice of ``z``: returns ``z``, or -1 (answer in ``workspace[2]``), -2 (epoch over)."""
    counts, sums, means = stats
    positions, candidates, edge_at, group_edges, group_start = graph
    radius, adjusted, matching, challenger, assignment, buffer, difference, allowed, _, _ = workspace
    n_edges, n_positions = counts.shape[0], matching.shape[0]
    if options[EXACT]:
        q = ints[EPOCH]
        epsilon = 2.0 ** -q                                                               # [A5 L3]
        delta = settings[DELTA] / (2.0 * q * q)                                           # [A5 L4]
    else:
        epsilon, delta = settings[EPSILON], settings[DELTA]
    margin = epsilon / 4.0
    if not max_weight_covering(means, positions, candidates, edge_at, allowed, assignment, matching):
        raise RuntimeError("the graph has no matching covering every position")         # [A1 L5] [A5 L8]
    # [A1 L6] [A5 L9]: c_t = sqrt(ln(4 K' t^3 / δ) / (2 T)), 1 where T = 0 (bounds.confidence_radius).
    half_level = 0.5 * math.log(4.0 * settings[LOG_CONSTANT] * math.pow(float(ints[T_ROUND]), 3.0) / delta)
    for e in range(n_edges):
        radius[e] = math.sqrt(half_level / counts[e]) if counts[e] > 0 else 1.0
        adjusted[e] = means[e] + radius[e] + margin                                       # [A1 L7-13]
    for j in range(n_positions):
        e = matching[j]
        adjusted[e] = means[e] - radius[e] - margin                                       # [A5 L10-16]
    max_weight_covering(adjusted, positions, candidates, edge_at, allowed, assignment, challenger)  # [A1 L14]
    own = take_sum(adjusted, matching, buffer)
    gap = take_sum(adjusted, challenger, buffer) - own
    if options[EXACT]:
        same = True
        for j in range(n_positions):
            same = same and challenger[j] == matching[j]
        if same or gap <= EQUALITY_TOLERANCE * max(1.0, abs(own)):                        # [A5 L18-21]
            return -1
        if gap <= n_positions * epsilon:                                                  # [A5 L22-24]
            return -2
    elif gap <= n_positions * epsilon:                                                    # [A1 L15-18]
        return -1
    # [A1 L19] [A5 L25]: largest radius on the symmetric difference (the positions where the
    # matchings differ), lowest edge index on ties.
    size = 0
    for j in range(n_positions):
        if matching[j] != challenger[j]:
            for edge in (matching[j], challenger[j]):
                k = size
                while k > 0 and difference[k - 1] > edge:   # insertion sort, ascending
                    difference[k] = difference[k - 1]
                    k -= 1
                difference[k] = edge
                size += 1
    z = difference[0]
    for k in range(1, size):
        if radius[difference[k]] > radius[z]:
            z = difference[k]
    return z


@numba.njit(cache=True, nogil=True)
def advance(ints, stats, settings, options, graph, sampler, workspace, rng):
    """Run rounds until a duel is pending (``RUNNING``), Python must sample (``SERVICE``) or the answer is found."""
    positions = graph[0]
    while True:
        z = _round(ints, stats, settings, options, graph, workspace)
        if z == -1:
            ints[STATUS] = DONE
            return
        if z == -2:
            ints[EPOCH] += 1                                                              # [A5 L2]: next epoch
            _start_epoch(ints, stats, options)
            continue
        # [A1 L20-21] [A5 L26-27]: opponent = edge of a sampled matching at s(z); (z, z) is a fair coin.
        ints[FIRST] = z
        ints[SECOND] = _sample_opponent(positions[z], options, graph, sampler, workspace, rng)
        ints[STATUS] = SERVICE if ints[SECOND] < 0 else RUNNING
        return


@numba.njit(cache=True, nogil=True)
def start(ints, stats, settings, options, graph, sampler, workspace, rng):
    """A fresh run: epoch 1 (Algorithm 5) or the only phase (Algorithm 1), up to the first duel."""
    _start_epoch(ints, stats, options)
    advance(ints, stats, settings, options, graph, sampler, workspace, rng)


@numba.njit(cache=True, nogil=True)
def _learn(ints, stats, won):
    """[A1 L22] [A5 L28]: the outcome of the pending duel updates ``w̄(z)``; the round ends."""
    counts, sums, means = stats
    z = ints[FIRST]
    if ints[SECOND] == z:
        ints[SELF_DUELS] += 1
    sums[z] += 1.0 if won else 0.0
    counts[z] += 1
    means[z] = sums[z] / counts[z]
    ints[T_ROUND] += 1


@numba.njit(cache=True, nogil=True)
def step(ints, stats, settings, options, graph, sampler, workspace, rng, won):
    """Feed the outcome of the pending duel and advance to the next one."""
    _learn(ints, stats, won)
    advance(ints, stats, settings, options, graph, sampler, workspace, rng)


@numba.njit(cache=True, nogil=True)
def play(ints, stats, settings, options, graph, sampler, workspace, rng, source, budget):
    """Up to ``budget`` duels against ``source`` (``DuelSource.arrays``), stopping early when not ``RUNNING``."""
    for _ in range(budget):
        if ints[STATUS] != RUNNING:
            return
        won = draw_outcome(source, ints[FIRST], ints[SECOND])
        step(ints, stats, settings, options, graph, sampler, workspace, rng, won)
