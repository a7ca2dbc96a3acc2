"""CAR-Cond, CAR-Verify and CAR-Parallel: identifying the Condorcet matching (CPE-DB).

Chen, Du, Huang, Zhao, *Combinatorial Pure Exploration for Dueling Bandits*, ICML 2020:
Algorithm 2 (CAR-Cond, §4.1), Algorithm 4 (CAR-Verify) and Algorithm 3 (CAR-Parallel, §4.3).
Comments ``[A2 Ln]``, ``[A3 Ln]``, ``[A4 Ln]`` point to line ``n`` of those algorithms.  The
algorithms are Python generators that ``yield`` duels; the
:class:`~dueling_gym.agents.cpe.GeneratorAgent` adapter turns them into ``act``/``observe``.

**CAR-Cond** keeps accepted / rejected / undecided edge sets ``A, R, U``.  Epoch ``q`` has
``ε_q = 2^-q`` and rounds ``t = e_{q-1}+1 .. e_q`` with ``e_q = 4^q`` and ``e_0 = 0`` (so epoch 1
is rounds 1..4).  A round duels every pair of undecided edges sharing a position once, builds
the bounds ``P̄_t, P̲_t`` (radius ``sqrt(ln(4 K t³/δ) / (2 T))``, ``t`` = round), and for every
undecided edge compares the Condorcet-oracle values with the edge forced in / out:
``InL > ExU + ε_q`` accepts, ``ExL > InU + ε_q`` rejects, where the upper values ``U`` are
computed on ``P̄`` and the lower values ``L`` on ``P̲`` (our reading of the paper's notation).
The oracle is the exact LP of :class:`~dueling_gym.agents.cpe.condorcet_oracle.CondorcetOracle`
(the paper's approximate Frank-Wolfe oracle is far too slow to run, see there).

*Skipping provably useless LP calls* (exact): the four oracle values of an edge depend on the
bounds only through a 1-Lipschitz map
(:func:`~dueling_gym.agents.cpe.condorcet_oracle.oracle_drift` bounds the change ``D`` since
they were last computed, as long as ``A`` and ``R`` are unchanged).
``InL_t - ExU_t <= InL_ref - ExU_ref + 2D``, so when both that bound and the reject analogue
stay ``<= ε_q`` the edge cannot be decided this round and its LPs are skipped; otherwise all
needed values are recomputed.  Two more exact shortcuts: ``InL <= InU`` and ``ExL <= ExU``
(``P̲ <= P̄`` entrywise), so ``InL`` is only solved when ``InU > ExU + ε_q`` and ``ExL`` only
when ``ExU > InU + ε_q``.  Decisions are the same as evaluating all four LPs every round (up
to the LP solver's 1e-7 tolerance).

**CAR-Verify(δ)** (``δ < δ0 = 0.01``): ``M̂ = CAR-Cond(δ0)``, then verification steps
``t = 1, 2, ...``: error if the best challenger ``max_{M ≠ M̂} f(M, M̂, P̲_t) >= 1/2``; answer
``M̂`` if ``max_{M ≠ M̂} f(M, M̂, P̄_t) <= 1/2``; else duel the differing same-position pair of
the ``P̄`` challenger with the largest radius.  The best challenger is that of
:meth:`~dueling_gym.problems.BipartiteDuelProblem.strongest_challenger` (``l`` max-weight
matchings, each forbidding one edge of ``M̂``); a whole verification step runs in one compiled
call (the package's private CAR kernels, with the same operations and tie-breaking as the
Python functions).
CAR-Cond's rounds stay in Python around one compiled call for the bounds and the skipping test
(with NumPy's operations and summation order): their cost is the
oracle LPs (HiGHS, as :func:`scipy.optimize.linprog` calls it), which have no exact compiled
equivalent.  An LP identical to one solved earlier in the run (in CAR-Parallel, often one of
another instance) is answered from the oracle's memo.

**CAR-Parallel(δ)**: instances ``V_k = CAR-Verify(δ / 2^{k+1})``, ``k = 0, 1, ...`` (each with its
own statistics and its own CAR-Cond run); at global step ``t`` every ``V_k`` with
``t mod 2^k = 0`` is resumed for exactly one duel.  The first instance that returns a matching
ends the run.

Choices the paper leaves open, made here:

* CAR-Cond takes ``δ`` as an input (CAR-Verify runs it at ``δ0``).
* Verification starts from fresh statistics rather than CAR-Cond's samples, so that its
  confidence event does not depend on how CAR-Cond's samples were chosen.
* In CAR-Parallel an instance that answers "error" is dropped and the others go on.
* Sets are frozen during a round, so ``R_{t-1} ∪ {e}`` and ``R_t`` coincide (Algorithm 2
  line 18); pairs with a decided edge are never sampled again (as printed); unsampled pairs
  have radius 1 ("``x/0 := 1``").
* A round that plays no duel and decides nothing can never make progress (it only happens
  after a wrong decision, i.e. outside the ``1 - δ`` event); it ends the run as a failure
  (``failed = True``).
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dueling_gym.agents.base import PaperLink
from dueling_gym.agents.cpe import _car_kernels
from dueling_gym.agents.cpe.base import Duel, GeneratorAgent, MatchingSolver, SeedLike
from dueling_gym.agents.cpe.bounds import PairStatistics, bound_matrices, log_constant
from dueling_gym.agents.cpe.condorcet_oracle import CondorcetOracle, position_starts
from dueling_gym.agents.registry import register_agent
from dueling_gym.problems.bipartite import Matching
from dueling_gym.validation import check_probability

__all__ = ["CARCond", "CARVerify", "CARParallel", "CondState"]

#: Safety slack of the LP-skipping test (HiGHS feasibility tolerance is 1e-7).
SKIP_TOLERANCE = 1e-7


@dataclass
class CondState:
    """State of one CAR-Cond run (inspectable while it runs)."""

    accepted: np.ndarray
    rejected: np.ndarray
    stats: PairStatistics
    t: int = 0
    epoch: int = 1
    oracle_calls: int = 0
    skipped_evaluations: int = 0
    samples: int = 0
    # LP-skipping cache: references of the bounds and (upper bounds on) the four values.
    cache_valid: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    ref_lower: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    ref_upper: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    values: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))  # InU, InL<=, ExU, ExL<=


@dataclass
class _Instance:
    """One CAR-Verify instance of CAR-Parallel."""

    k: int
    delta: float
    cond: CondState
    verify_stats: PairStatistics
    generator: Any = None
    pending: Duel | None = None
    alive: bool = True
    phase: str = "cond"
    m_hat: Matching | None = None


@dataclass
class _RoundSets:
    """What a CAR-Cond round reads of ``A`` and ``R`` (frozen during the round, [A2 L8, L10])."""

    active: list[int]        # the pairs of undecided edges, the duels of [A2 L6]
    duels: list[Duel]
    accepted: list[int]      # A
    rejected: list[int]      # R
    edges: np.ndarray        # U, the undecided edges
    edge_list: list[int]


class _CAR(GeneratorAgent):
    """Shared machinery: CAR-Cond rounds, the verification loop, the oracle."""

    paper = (PaperLink("ICML 2020, PMLR 119", "https://proceedings.mlr.press/v119/chen20d.html"),)

    target = "condorcet"

    def _set_verification_deltas(self, delta: float, delta0: float, algorithm: str) -> None:
        # CAR-Verify and CAR-Parallel run CAR-Cond at delta0 first, then verify at delta < delta0.
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        self.delta0 = check_probability("delta0", delta0, open_low=True, open_high=True)
        if self.delta >= self.delta0:
            raise ValueError(f"{algorithm} requires delta < delta0 = {self.delta0}, got {self.delta}")

    def _configure(self) -> None:
        self._oracle = CondorcetOracle(self.graph)
        self._mwmc = MatchingSolver(self.graph)
        self._pairs = np.asarray(self.graph.comparable_pairs)
        self._log_constant = log_constant(self.n_comparable_pairs)   # union bound over the K pairs
        self._positions = np.asarray(self.graph.edge_positions)
        self._starts = position_starts(self.graph)
        self._graph_arrays = (self._positions.astype(np.int64), np.asarray(self.graph.edge_candidates, dtype=np.int64),
                              np.asarray(self.graph.edge_at, dtype=np.int64))
        self._pair_of = np.full((self.n_edges, self.n_edges), -1, dtype=np.int64)
        self._pair_of[self._pairs[:, 1], self._pairs[:, 2]] = np.arange(self.n_comparable_pairs)
        self._pair_of[self._pairs[:, 2], self._pairs[:, 1]] = np.arange(self.n_comparable_pairs)

    def _reset_state(self) -> None:
        # Each run starts with an empty LP memo, so that its cost does not depend on earlier runs.
        self._oracle.clear_memo()
        super()._reset_state()

    # ------------------------------------------------------------------ states
    def _new_cond_state(self) -> CondState:
        m, K = self.n_edges, self.n_comparable_pairs
        return CondState(
            accepted=np.zeros(m, dtype=bool), rejected=np.zeros(m, dtype=bool), stats=PairStatistics(self.graph),
            cache_valid=np.zeros(m, dtype=bool), ref_lower=np.zeros((m, K)), ref_upper=np.zeros((m, K)),
            values=np.zeros((m, 4)),
        )

    def _cond_guess(self, state: CondState) -> Matching:
        """Best guess of a running CAR-Cond: contains ``A``, avoids ``R``, favours empirically strong edges."""
        means = state.stats.empirical_means()
        strength = np.zeros(self.n_edges)
        np.add.at(strength, self._pairs[:, 1], means - 0.5)
        np.add.at(strength, self._pairs[:, 2], 0.5 - means)
        matching = self._mwmc(strength, required=np.flatnonzero(state.accepted),
                              forbidden=np.flatnonzero(state.rejected))
        if matching is None:
            matching = self._mwmc(strength)
        assert matching is not None
        return matching

    # ------------------------------------------------------------------ oracle
    def _oracle_value(self, Q: np.ndarray, A1: list[int], R1: list[int], A2: list[int], R2: list[int],
                      state: CondState) -> float:
        state.oracle_calls += 1
        return self._oracle.value(Q, A1, R1, A2, R2)

    # ------------------------------------------------------------------ CAR-Cond (Algorithm 2)
    def _car_cond(self, delta: float, state: CondState) -> Generator[Duel, bool, Matching | None]:
        counts, wins = state.stats.counts, state.stats.wins
        # Per-round buffers: the bounds are copied into the cache rows, never kept across rounds.
        lower, upper = np.zeros(self.n_comparable_pairs), np.zeros(self.n_comparable_pairs)
        needs = np.zeros(self.n_edges, dtype=np.bool_)
        per_position = np.zeros(max(1, self._starts.size))
        sets: _RoundSets | None = None
        q = 1                                                                               # [A2 L2-3]
        while True:
            state.t += 1
            t = state.t
            while t > 4 ** q:                                                               # [A2 L4-5]: e_q = 4^q
                q += 1
            state.epoch = q
            epsilon = 2.0 ** -q
            if sets is None:  # A and R change only after a decision
                sets = self._round_sets(state)
            # [A2 L6]: one duel per pair of undecided edges at the same position (ascending pairs).
            for k, duel in zip(sets.active, sets.duels):
                won = yield duel
                counts[k] += 1
                wins[k] += bool(won)
                state.samples += 1
            # [A2 L7] and the skipping test in one compiled call (preference_bounds, oracle_drift).
            half_level = 0.5 * math.log(4.0 * self._log_constant * float(t) ** 3 / delta)
            n_needed = _car_kernels.cond_round(counts, wins, half_level, sets.edges, state.cache_valid,
                                               state.ref_lower, state.ref_upper, state.values, self._starts,
                                               self.n_positions, epsilon, SKIP_TOLERANCE, lower, upper, needs,
                                               per_position)
            if n_needed == 0:
                state.skipped_evaluations += len(sets.edge_list)
                accept, reject = [], []
            else:
                accept, reject = self._decide_edges(state, sets, lower, upper, needs, epsilon)  # [A2 L9-18]
            if accept or reject:
                state.accepted[accept] = True
                state.rejected[reject] = True
                state.cache_valid[:] = False   # oracle values depend on A and R
                sets = None
                if int(state.accepted.sum()) >= self.n_positions:                           # [A2 L20]
                    return tuple(sorted(np.flatnonzero(state.accepted).tolist()))
            elif not sets.active:
                return None   # stalled: no duel to play and nothing decided (only after a wrong decision)

    def _round_sets(self, state: CondState) -> _RoundSets:
        """``A``, ``R``, the undecided edges and their pairs, frozen during a round [A2 L8, L10]."""
        pairs = self._pairs
        undecided = ~(state.accepted | state.rejected)
        active = np.flatnonzero(undecided[pairs[:, 1]] & undecided[pairs[:, 2]]).tolist()
        edges = np.flatnonzero(undecided)
        return _RoundSets(
            active=active, duels=[(int(pairs[k, 1]), int(pairs[k, 2])) for k in active],
            accepted=np.flatnonzero(state.accepted).tolist(), rejected=np.flatnonzero(state.rejected).tolist(),
            edges=edges, edge_list=edges.tolist(),
        )

    def _decide_edges(self, state: CondState, sets: _RoundSets, lower: np.ndarray, upper: np.ndarray,
                      needs: np.ndarray, epsilon: float) -> tuple[list[int], list[int]]:
        """[A2 L9-18]: the undecided edges accepted and rejected this round.

        Only the edges marked in ``needs`` are evaluated (the others provably stay undecided);
        their oracle values and the bounds they were computed on are cached for the skipping test.
        """
        matrices: tuple[np.ndarray, np.ndarray] | None = None
        accept: list[int] = []
        reject: list[int] = []
        for i, e in enumerate(sets.edge_list):                                              # [A2 L9]
            if not needs[i]:
                state.skipped_evaluations += 1
                continue
            if matrices is None:
                matrices = bound_matrices(self.graph, lower, upper)
            in_up, in_low, ex_up, ex_low = self._edge_values(state, e, sets, *matrices, epsilon)
            state.values[e] = (in_up, in_low, ex_up, ex_low)
            state.ref_lower[e] = lower
            state.ref_upper[e] = upper
            state.cache_valid[e] = all(map(math.isfinite, (in_up, in_low, ex_up, ex_low)))
            if in_low > ex_up + epsilon:                                                    # [A2 L15-16]
                accept.append(e)
                if len(sets.accepted) + len(accept) == self.n_positions:                    # [A2 L20]
                    break
            elif ex_low > in_up + epsilon:                                                  # [A2 L17-18]
                reject.append(e)
        return accept, reject

    def _edge_values(self, state: CondState, e: int, sets: _RoundSets, p_upper: np.ndarray, p_lower: np.ndarray,
                     epsilon: float) -> tuple[float, float, float, float]:
        """[A2 L11-14]: ``InU, InL, ExU, ExL`` of edge ``e``, the oracle values with ``e`` forced in / out.

        ``InL <= InU`` and ``ExL <= ExU``, so a lower value is solved only when it can decide the
        edge; otherwise it is reported as its upper value.
        """
        A, R = sets.accepted, sets.rejected
        A_in, R_ex = A + [e], R + [e]
        in_up = self._oracle_value(p_upper, A_in, R, A, R, state)                          # [A2 L11]
        ex_up = self._oracle_value(p_upper, A, R_ex, A, R, state)                          # [A2 L13]
        in_low = in_up
        if in_up > ex_up + epsilon and math.isfinite(in_up):
            in_low = self._oracle_value(p_lower, A_in, R, A, R, state)                     # [A2 L12]
        ex_low = ex_up
        if ex_up > in_up + epsilon and math.isfinite(ex_up):
            ex_low = self._oracle_value(p_lower, A, R_ex, A, R, state)                     # [A2 L14]
        return in_up, in_low, ex_up, ex_low

    # ------------------------------------------------------------------ verification (Algorithm 4)
    def _verify(self, delta: float, m_hat: Matching, stats: PairStatistics) -> Generator[Duel, bool, Matching | None]:
        # Each step [A4 L5-14] (bounds, the strongest challengers under P̲ and P̄, the pair to
        # duel) is one compiled call, the same operations as preference_bounds, bound_matrices
        # and BipartiteDuelProblem.strongest_challenger with weights Q[e, ê_{s(e)}].
        m_hat_array = np.asarray(m_hat, dtype=np.int64)
        workspace = _car_kernels.new_verify_workspace(self.n_edges, self.n_positions, self.n_candidates,
                                                      self.n_comparable_pairs)
        duel = np.zeros(2, dtype=np.int64)
        positions, candidates, edge_at = self._graph_arrays
        pair_of, counts, wins = self._pair_of, stats.counts, stats.wins
        s = 0
        while True:                                                                         # [A4 L4]
            s += 1
            outcome = _car_kernels.verify_step(counts, wins, s, delta, float(self._log_constant),
                                               self._pairs, pair_of, m_hat_array, positions, candidates,
                                               edge_at, workspace, duel)
            if outcome == _car_kernels.VERIFY_ERROR:                                        # [A4 L6-8]
                return None
            if outcome == _car_kernels.VERIFY_ANSWER:                                       # [A4 L10-12]
                return m_hat
            e, g = int(duel[0]), int(duel[1])
            won = yield (e, g)                                                              # [A4 L15]
            # stats.record(e, g, won) for a pair of distinct edges, with the pair looked up here.
            k = pair_of[e, g]
            counts[k] += 1
            wins[k] += bool(won) == (e < g)

    def _car_verify(self, delta: float, instance: _Instance) -> Generator[Duel, bool, Matching | None]:
        m_hat = yield from self._car_cond(self.delta0, instance.cond)                      # [A4 L2-3]
        if m_hat is None:
            return None
        instance.m_hat = m_hat
        instance.phase = "verify"
        return (yield from self._verify(delta, m_hat, instance.verify_stats))

    def _new_instance(self, k: int, delta: float) -> _Instance:
        return _Instance(k=k, delta=delta, cond=self._new_cond_state(), verify_stats=PairStatistics(self.graph))

    def _instance_guess(self, instance: _Instance) -> Matching:
        return instance.m_hat if instance.m_hat is not None else self._cond_guess(instance.cond)


@register_agent("car_cond")
class CARCond(_CAR):
    """CAR-Cond (Chen et al., ICML 2020, Algorithm 2): the Condorcet matching with confidence ``1 - δ``.

    Sample complexity ``O(sum_j sum_{e ≠ e' ∈ E_j} (Δ^C_{e,e'})^-2 ln(K / (δ (Δ^C_{e,e'})²)))``
    (Theorem 4); assumes a Condorcet matching exists.  Per round: up to ``K`` duels and up to
    ``4 |U|`` oracle LPs (far fewer once the skipping test of the module docstring applies).

    Parameters
    ----------
    problem : dueling_gym.problems.BipartiteDuelProblem, dueling_gym.envs.CombinatorialDuelEnv or (n_candidates, n_positions, edges)
        The graph (preferences are never read).
    delta : float, default 0.05
        Error probability ``δ ∈ (0, 1)``: the answer is the Condorcet matching with probability
        at least ``1 - δ``.
    seed : int, SeedSequence or None
        Accepted for API uniformity; the algorithm is deterministic given the outcomes.
    """

    guarantee = (
        "With probability at least ``1 - δ`` it returns the Condorcet matching, which it assumes exists, after "
        "``O(Σ_j Σ_{e ≠ e' ∈ E_j} (Δ^C_{e,e'})^-2 ln(K / (δ (Δ^C_{e,e'})²)))`` duels (Chen, Du, Huang & Zhao, "
        "ICML 2020, Theorem 4)."
    )

    def __init__(self, problem: Any, *, delta: float = 0.05, seed: SeedLike = None):
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        super().__init__(problem, seed=seed)

    def _reset_algorithm_state(self) -> None:
        self.state = self._new_cond_state()

    def _run(self) -> Generator[Duel, bool, Matching | None]:
        return (yield from self._car_cond(self.delta, self.state))

    def current_guess(self) -> Matching:
        return self._cond_guess(self.state)


@register_agent("car_verify")
class CARVerify(_CAR):
    """CAR-Verify (Chen et al., ICML 2020, Algorithm 4): CAR-Cond(δ0) then verification at ``δ``.

    Returns the Condorcet matching or "error" with probability at least ``1 - δ`` (Lemma 12);
    on "error" the agent stops with ``failed = True`` (its recommendation is then CAR-Cond's
    candidate ``M̂``).  Verification statistics start fresh (module docstring).

    Parameters
    ----------
    problem : dueling_gym.problems.BipartiteDuelProblem, dueling_gym.envs.CombinatorialDuelEnv or (n_candidates, n_positions, edges)
        The graph (preferences are never read).
    delta : float, default 0.005
        Verification confidence; the paper requires ``δ < δ0``.
    delta0 : float, default 0.01
        Confidence of the inner CAR-Cond run (the paper's constant ``δ0 = 0.01``).
    seed : int, SeedSequence or None
        Accepted for API uniformity; the algorithm is deterministic given the outcomes.
    """

    guarantee = (
        "If a Condorcet matching exists, with probability at least ``1 - δ`` it returns that matching or "
        "declares \"error\" (Chen, Du, Huang & Zhao, ICML 2020, appendix: the correctness lemma of CAR-Verify, "
        "the verification step of CAR-Parallel)."
    )

    def __init__(self, problem: Any, *, delta: float = 0.005, delta0: float = 0.01, seed: SeedLike = None):
        self._set_verification_deltas(delta, delta0, "CAR-Verify (Algorithm 4 line 1)")
        super().__init__(problem, seed=seed)

    def _reset_algorithm_state(self) -> None:
        self.instance = self._new_instance(0, self.delta)

    @property
    def state(self) -> CondState:
        """The inner CAR-Cond state."""
        return self.instance.cond

    @property
    def phase(self) -> str:
        """``"cond"`` (CAR-Cond running) or ``"verify"``."""
        return self.instance.phase

    def _run(self) -> Generator[Duel, bool, Matching | None]:
        return (yield from self._car_verify(self.delta, self.instance))

    def current_guess(self) -> Matching:
        return self._instance_guess(self.instance)


@register_agent("car_parallel")
class CARParallel(_CAR):
    """CAR-Parallel (Chen et al., ICML 2020, Algorithm 3): parallel CAR-Verify instances.

    Instance ``V_k = CAR-Verify(δ / 2^{k+1})``, ``k = 0, 1, ...``, is resumed for one duel at every
    global step ``t`` with ``t mod 2^k = 0`` (instance ``k`` starts at ``t = 2^k``); the first
    answer wins, instances returning "error" are dropped.  Returns the Condorcet matching with
    probability at least ``1 - δ`` and expected sample complexity of Theorem 5.  The sample count
    is the total number of duels over all instances.

    Parameters
    ----------
    problem : dueling_gym.problems.BipartiteDuelProblem, dueling_gym.envs.CombinatorialDuelEnv or (n_candidates, n_positions, edges)
        The graph (preferences are never read).
    delta : float, default 0.005
        Overall confidence; the paper requires ``δ < 0.01``.
    delta0 : float, default 0.01
        Confidence of every instance's inner CAR-Cond run.
    seed : int, SeedSequence or None
        Accepted for API uniformity; the algorithm is deterministic given the outcomes.
    """

    guarantee = (
        "If a Condorcet matching exists and ``δ < 0.01``, it returns that matching with probability at least "
        "``1 - δ`` after an expected ``O(Σ_j Σ_{e ≠ e' ∈ E_j} ln(K / (Δ^C_{e,e'})²) / (Δ^C_{e,e'})² + H^C_ver "
        "ln(H^C_ver / δ))`` duels (Chen, Du, Huang & Zhao, ICML 2020, Theorem 5)."
    )

    #: Instances beyond this index are never created (2**62 global steps are out of reach).
    MAX_INSTANCES = 62

    def __init__(self, problem: Any, *, delta: float = 0.005, delta0: float = 0.01, seed: SeedLike = None):
        self._set_verification_deltas(delta, delta0, "CAR-Parallel (Algorithm 3 line 1)")
        super().__init__(problem, seed=seed)

    def _reset_algorithm_state(self) -> None:
        self.instances: list[_Instance] = []
        self.global_step = 0
        self.winner: int | None = None

    def _run(self) -> Generator[Duel, bool, Matching | None]:
        instances = self.instances
        while True:                                                                         # [A3 L4]
            self.global_step += 1
            t = self.global_step
            k = 0
            while t % (1 << k) == 0 and k <= self.MAX_INSTANCES:                            # [A3 L5]
                if k == len(instances):                                                     # [A3 L2-3]: start V_k
                    instance = self._new_instance(k, self.delta / 2.0 ** (k + 1))
                    instance.generator = self._car_verify(instance.delta, instance)
                    instances.append(instance)
                    try:
                        instance.pending = next(instance.generator)
                    except StopIteration as stop:   # answered without sampling (a single matching)
                        if stop.value is not None:
                            self.winner = k
                            return stop.value
                        instance.alive = False
                instance = instances[k]
                if instance.alive:                                                          # [A3 L6]: one duel
                    won = yield instance.pending
                    try:
                        instance.pending = instance.generator.send(won)
                    except StopIteration as stop:
                        if stop.value is not None:                                          # [A3 L7-9]
                            self.winner = k
                            return stop.value
                        instance.alive = False                                              # "error": dropped
                        instance.pending = None
                k += 1
            if k > self.MAX_INSTANCES and not any(instance.alive for instance in instances):  # pragma: no cover
                return None

    def current_guess(self) -> Matching:
        for instance in self.instances:
            if instance.alive:
                return self._instance_guess(instance)
        return super().current_guess()
