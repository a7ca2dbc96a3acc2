"""CLUCB-Borda-PAC and CLUCB-Borda-Exact: identifying the Borda matching (CPE-DB).

Chen, Du, Huang, Zhao, *Combinatorial Pure Exploration for Dueling Bandits*, ICML 2020:
Algorithm 1 (CLUCB-Borda-PAC, §3.2) and Algorithm 5 (CLUCB-Borda-Exact, Appendix B.5).
Comments ``[A1 Ln]`` / ``[A5 Ln]`` point to line ``n`` of those algorithms.

The Borda matching is the max-weight matching under the edge rewards
``w(e) = E[p_{e, e(M', s(e))}]``, ``M'`` uniform over the maximum matchings (eq. (4)); a duel of
``e`` against the same-position edge of a sampled matching is an unbiased sample of ``w(e)``,
so the problem reduces to combinatorial pure exploration with semi-bandit feedback (CLUCB of
Chen et al., 2014).  Per round: two max-weight covering matchings and one sampler call;
memory ``O(m)``.

The rounds run in Numba kernels (private to the package, driven as a
:class:`~dueling_gym.agents.cpe.CompiledAgent`): the matchings come from a compiled port
of SciPy's assignment solver with its tie-breaking (also private), the shipped exact
samplers draw from ``self.rng`` exactly as their Python methods do, and
:func:`~dueling_gym.experiments.run_pure_exploration` plays blocks of duels
in one compiled loop.  Duels, random draws and answers are those of the Python formulation
bit for bit; a user-supplied sampler is called from Python once per round.

Choices where the paper leaves room:

* The sampler is exact (``η = 0``; :class:`~dueling_gym.agents.cpe.samplers.ExactMatchingSampler`,
  or ``sampler="rejection"``) instead of an MCMC chain with a bias ``η``; the printed ``ε/4``
  margins are kept anyway.
* ``max(K, m)`` replaces ``K`` inside the logarithm, so that the union bound of Theorem 1 over
  the ``m`` edges holds on every graph (:func:`~dueling_gym.agents.cpe.bounds.log_constant`;
  ``paper_log_constant=True`` keeps ``K``).
* When the sampled matching contains ``z`` the duel is the self-duel ``(z, z)``: ``w(z)``
  averages ``p_{z,z} = 1/2`` over those matchings, so the fair coin is played, counted and
  averaged into ``w̄(z)``.
* Exact's stopping test "``w̃(M̃_t) = w̃(M_t)``" compares floats; it is tested as
  ``M̃_t == M_t`` or a relative gap below ``1e-12``.
* Ties: max-weight ties are SciPy's deterministic choice; ``z`` is the lowest-index maximiser
  of the radius.  The radius of an unsampled edge is 1 ("``x/0 := 1``", as printed).

**How CLUCB-Borda-Exact behaves as printed.**  While ``M̃_t ≠ M_t`` the gap
``w̃(M̃_t) - w̃(M_t)`` is positive and shrinks as the radii shrink; it reaches 0 exactly when
``M̃_t`` switches to ``M_t``.  Its last positive value is of the order of one round's change of
the radii, so the epoch-ending test ``gap <= l ε_q`` (line 22) usually fires *just before* the
stopping test (line 18) would, in every epoch until ``ε_q`` is smaller than that last step.
The proof of Theorem 2 claims the opposite for epoch ``q* = floor(log2(l / Δ_min)) + 1``, but
its contradiction step ("``w(M̃_t) - w(M_t) < Δ_min`` contradicts the definition of
``Δ_min``") does not hold when ``M_t = M^B``.  Correctness is unaffected (stopping only uses
line 18), but the sample count is that of one full identification per epoch: on the 5-edge
example the runs stop in epoch 16-17 (``q* = 6``) after 0.3-0.9 million duels.  With the exact
sampler, ``reuse_samples_if_exact=True`` makes later epochs cheap (about 10x fewer duels); the
default stays as printed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dueling_gym.agents.base import PaperLink
from dueling_gym.agents.cpe import _clucb_kernels as kernels
from dueling_gym.agents.cpe.base import CompiledAgent, Duel, MatchingSolver, SeedLike
from dueling_gym.agents.cpe.bounds import log_constant
from dueling_gym.agents.cpe.samplers import (
    ExactMatchingSampler,
    MatchingSampler,
    RejectionMatchingSampler,
    make_sampler,
)
from dueling_gym.agents.registry import register_agent
from dueling_gym.problems.bipartite import Matching
from dueling_gym.validation import check_number, check_probability

__all__ = ["CLUCBBordaPAC", "CLUCBBordaExact"]

#: Relative tolerance of CLUCB-Borda-Exact's "equal adjusted weights" stop (Algorithm 5 line 18).
EQUALITY_TOLERANCE = kernels.EQUALITY_TOLERANCE


class _CLUCBBorda(CompiledAgent):
    """Shared round of Algorithms 1 and 5, run by the package's private CLUCB kernels.

    The state lives in arrays: :attr:`counts` (``T(e)``), :attr:`sums` (wins of ``e`` in its
    samples), the means ``w̄`` and the slots of ``_ints`` (round :attr:`t` within the phase,
    :attr:`epoch`, :attr:`self_duels`, status, pending duel).  The exact marginal sampler and
    the rejection sampler are compiled; any other sampler is called from Python once per round.
    """

    paper = (PaperLink("ICML 2020, PMLR 119", "https://proceedings.mlr.press/v119/chen20d.html"),)

    target = "borda"
    _exact = False

    def _configure(self) -> None:
        self._sampler = make_sampler(self.graph, self.sampler)
        self._mwmc = MatchingSolver(self.graph)
        self._check_sampler()
        self._positions = np.asarray(self.graph.edge_positions)
        self._log_constant = log_constant(self.n_comparable_pairs, self.n_edges,
                                          paper_log_constant=self.paper_log_constant)
        groups = self.graph.edges_by_position
        group_edges = np.array([e for group in groups for e in group], dtype=np.int64)
        group_start = np.cumsum([0] + [len(group) for group in groups]).astype(np.int64)
        self._graph_arrays = (self._positions.astype(np.int64), np.asarray(self.graph.edge_candidates, dtype=np.int64),
                              np.asarray(self.graph.edge_at, dtype=np.int64), group_edges, group_start)
        sizes = np.diff(group_start)
        sampler, kind, max_trials, cumulative = self._sampler, kernels.SAMPLER_PYTHON, 0, np.zeros(0)
        # Only the shipped samplers are compiled (exactly their draws); subclasses may change them.
        if type(sampler) is ExactMatchingSampler and sampler.method == "marginal":
            kind, cumulative = kernels.SAMPLER_MARGINAL, sampler.cumulative_marginals()
        elif type(sampler) is RejectionMatchingSampler and sampler._block == kernels.REJECTION_BLOCK:
            kind, max_trials = kernels.SAMPLER_REJECTION, sampler.max_trials
        self._sampler_arrays = (np.ascontiguousarray(cumulative, dtype=np.float64), sizes)
        self._options = np.array([self._exact, getattr(self, "reuse_samples_if_exact", False), kind, max_trials],
                                 dtype=np.int64)
        self._settings = np.array([self.delta, getattr(self, "epsilon", 0.0), self._log_constant], dtype=np.float64)

    def _check_sampler(self) -> None:
        """Validate the sampler's bias against the algorithm's needs (hook)."""

    def _reset_algorithm_state(self) -> None:
        self.counts = np.zeros(self.n_edges, dtype=np.int64)   # T(e)
        self.sums = np.zeros(self.n_edges)                      # wins of e in its samples
        self._means = np.zeros(self.n_edges)                    # w̄(e)
        self._ints = np.zeros(kernels.N_INTS, dtype=np.int64)
        self._ints[kernels.T_ROUND] = 1
        self._ints[kernels.EPOCH] = 1
        self._workspace = kernels.new_workspace(self.n_edges, self.n_positions, self.n_candidates)
        self._stats = (self.counts, self.sums, self._means)
        kernels.start(self._ints, self._stats, self._settings, self._options, self._graph_arrays,
                      self._sampler_arrays, self._workspace, self.rng)

    # ------------------------------------------------------------------ state
    @property
    def t(self) -> int:
        """Round ``t`` within the current phase (1 + the duels of the phase)."""
        return int(self._ints[kernels.T_ROUND])

    @property
    def epoch(self) -> int:
        """Epoch ``q`` of Algorithm 5 (always 1 for Algorithm 1)."""
        return int(self._ints[kernels.EPOCH])

    @property
    def self_duels(self) -> int:
        """Self-duels ``(z, z)`` played so far (fair coins, counted as samples)."""
        return int(self._ints[kernels.SELF_DUELS])

    def means(self) -> np.ndarray:
        """``w̄(e)`` (0 when unsampled, [A1 L12])."""
        return np.divide(self.sums, self.counts, out=np.zeros(self.n_edges), where=self.counts > 0)

    def current_guess(self) -> Matching:
        matching = self._mwmc(self.means())
        assert matching is not None
        return matching

    # ------------------------------------------------------------------ kernels
    @property
    def _status(self) -> int:
        return int(self._ints[kernels.STATUS])

    def _pending_duel(self) -> Duel:
        return int(self._ints[kernels.FIRST]), int(self._ints[kernels.SECOND])

    def _final_answer(self) -> Matching:
        return tuple(sorted(int(e) for e in self._workspace[2]))

    def _step_kernel(self, first_won: bool) -> None:
        kernels.step(self._ints, self._stats, self._settings, self._options, self._graph_arrays,
                     self._sampler_arrays, self._workspace, self.rng, first_won)

    def _play_kernel(self, source: tuple, budget: int) -> None:
        kernels.play(self._ints, self._stats, self._settings, self._options, self._graph_arrays,
                     self._sampler_arrays, self._workspace, self.rng, source, budget)

    def _serve(self) -> None:
        # [A1 L20-21] [A5 L26-27] with a sampler the kernels cannot run: one Python draw per round.
        ints = self._ints
        if ints[kernels.STATUS] != kernels.SERVICE:
            return
        if ints[kernels.SECOND] == kernels.SAMPLER_GAVE_UP:
            raise RuntimeError(f"rejection sampler: no matching accepted in {self._sampler.max_trials} proposals")
        z = int(ints[kernels.FIRST])
        ints[kernels.SECOND] = self._sampler.sample_opponent(int(self._positions[z]), self.rng)
        ints[kernels.STATUS] = kernels.RUNNING


@register_agent("clucb_borda_pac")
class CLUCBBordaPAC(_CLUCBBorda):
    """CLUCB-Borda-PAC (Chen et al., ICML 2020, Algorithm 1): an ε-optimal Borda matching.

    Returns ``Out`` with ``B(Out) >= B(M^B) - ε`` with probability at least ``1 - δ``, after
    ``O(H^B_ε ln(H^B_ε / δ))`` duels (Theorem 1).  One duel per round; the round's answer test
    is ``w̃(M̃_t) - w̃(M_t) <= l ε`` (``w`` units, ``w(M) = l B(M)``).

    Parameters
    ----------
    problem : dueling_gym.problems.BipartiteDuelProblem, dueling_gym.envs.CombinatorialDuelEnv or (n_candidates, n_positions, edges)
        The graph (preferences are never read).
    delta : float, default 0.05
        Confidence ``δ ∈ (0, 1)``.
    epsilon : float, default 0.05
        Accuracy ``ε > 0`` in Borda-score units.
    paper_log_constant : bool, default False
        Keep the printed ``K`` inside the logarithm instead of ``max(K, m)`` (module docstring).
    sampler : str or MatchingSampler, default "exact"
        ``"exact"``, ``"exact_matching"``, ``"rejection"``, ``"auto"`` or an instance
        (:func:`~dueling_gym.agents.cpe.samplers.make_sampler`); its ``eta`` must be at most ``ε/8``.
    seed : int, SeedSequence or None
        Seed of the agent's generator (used by the sampler).
    """

    guarantee = (
        "With probability at least ``1 - δ`` it returns a matching whose Borda score is within ``ε`` of the "
        "best, after ``O(H^B_ε ln(H^B_ε / δ))`` duels, with no Condorcet assumption (Chen, Du, Huang & Zhao, "
        "ICML 2020, Theorem 1)."
    )

    def __init__(self, problem: Any, *, delta: float = 0.05, epsilon: float = 0.05,
                 paper_log_constant: bool = False, sampler: str | MatchingSampler = "exact",
                 seed: SeedLike = None):
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        self.epsilon = check_number("epsilon", epsilon, strict=True, minimum=0.0)
        self.paper_log_constant = bool(paper_log_constant)
        self.sampler = sampler
        super().__init__(problem, seed=seed)

    def _check_sampler(self) -> None:
        if self._sampler.eta > self.epsilon / 8.0:                                        # [A1 L2]
            raise ValueError(f"the sampler's bias eta={self._sampler.eta} exceeds epsilon/8 = {self.epsilon / 8}")


@register_agent("clucb_borda_exact")
class CLUCBBordaExact(_CLUCBBorda):
    """CLUCB-Borda-Exact (Chen et al., ICML 2020, Algorithm 5): the exact Borda matching.

    Epochs ``q = 1, 2, ...`` run the rounds of CLUCB-Borda-PAC with ``ε_q = 2^-q`` and
    ``δ_q = δ / (2 q²)`` from fresh statistics; an epoch ends when ``w̃(M̃_t) - w̃(M_t) <= l ε_q``
    and the run ends when ``M_t`` itself maximises the adjusted weights.  Returns ``M^B`` with
    probability at least ``1 - δ`` (Theorem 2).

    Parameters
    ----------
    problem, delta, paper_log_constant, seed
        As :class:`~dueling_gym.agents.CLUCBBordaPAC`.
    sampler : str or MatchingSampler, default "exact"
        Must be exact (``eta == 0``): the epochs need ``η_q = ε_q / 8 -> 0``.
    reuse_samples_if_exact : bool, default False
        Keep the statistics across epochs.  Valid with an exact sampler: every duel of an edge
        is then an unbiased sample of its reward whatever the epoch, and the round counter
        ``t`` runs on across epochs so that ``T(e) <= t`` and each epoch's confidence radius
        still hold.  The default discards them, as printed ([A5 L6]).
    """

    guarantee = (
        "With probability at least ``1 - δ`` it returns the Borda matching after ``O(width(G)² H^B ln(ℓ / "
        "Δ^B_min) (ln(width(G) H^B / δ) + ln ln(ℓ / Δ^B_min)))`` duels, with no Condorcet assumption (Chen, "
        "Du, Huang & Zhao, ICML 2020, Theorem 2)."
    )

    def __init__(self, problem: Any, *, delta: float = 0.05, paper_log_constant: bool = False,
                 reuse_samples_if_exact: bool = False, sampler: str | MatchingSampler = "exact",
                 seed: SeedLike = None):
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        self.reuse_samples_if_exact = bool(reuse_samples_if_exact)
        self.paper_log_constant = bool(paper_log_constant)
        self.sampler = sampler
        super().__init__(problem, seed=seed)

    _exact = True

    def _check_sampler(self) -> None:
        if self._sampler.eta != 0.0:
            raise ValueError("CLUCB-Borda-Exact needs an exact sampler (eta = 0): its epochs use eta_q = eps_q/8 -> 0")
