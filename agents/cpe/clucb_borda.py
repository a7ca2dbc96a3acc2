"""CLUCB-Borda-PAC and CLUCB-Borda-Exact: identifying the Borda matching (CPE-DB).

Chen, Du, Huang, Zhao, *Combinatorial Pure Exploration for Dueling Bandits*, ICML 2020:
Algorithm 1 (CLUCB-Borda-PAC, §3.2) and Algorithm 5 (CLUCB-Borda-Exact, Appendix B.5).
Comments ``[A1 Ln]`` / ``[A5 Ln]`` point to line ``n`` of those algorithms.

The Borda matching is the max-weight matching under the edge rewards
``w(e) = E[p_{e, e(M', s(e))}]``, ``M'`` uniform over the maximum matchings (eq. (4)); a duel of
``e`` against the same-position edge of a sampled matching is an unbiased sample of ``w(e)``,
so the problem reduces to combinatorial pure exploration with semi-bandit feedback (CLUCB of
Chen et al., 2014).  Per round: two max-weight covering matchings (the library's one
assignment routine, through :class:`~dueling_gym.agents.cpe.base.MatchingSolver`) and one
sampler call; memory ``O(m)``.

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

from collections.abc import Generator
from typing import Any

import numpy as np

from dueling_gym.agents.base import check_number, register_agent
from dueling_gym.agents.cpe.base import Duel, GeneratorAgent, MatchingSolver, SeedLike
from dueling_gym.agents.cpe.bounds import confidence_radius, log_constant
from dueling_gym.agents.cpe.samplers import MatchingSampler, make_sampler
from dueling_gym.problems.bipartite import Matching
from dueling_gym.validation import check_probability

__all__ = ["CLUCBBordaPAC", "CLUCBBordaExact"]

#: Relative tolerance of CLUCB-Borda-Exact's "equal adjusted weights" stop (Algorithm 5 line 18).
EQUALITY_TOLERANCE = 1e-12


class _CLUCBBorda(GeneratorAgent):
    """Shared round of Algorithms 1 and 5."""

    target = "borda"

    def _configure(self) -> None:
        self._sampler = make_sampler(self.graph, self.sampler)
        self._mwmc = MatchingSolver(self.graph)
        self._check_sampler()
        self._positions = np.asarray(self.graph.edge_positions)
        self._log_constant = log_constant(self.n_comparable_pairs, self.n_edges,
                                          paper_log_constant=self.paper_log_constant)

    def _check_sampler(self) -> None:
        """Validate the sampler's bias against the algorithm's needs (hook)."""

    def _reset_algorithm_state(self) -> None:
        self.counts = np.zeros(self.n_edges, dtype=np.int64)   # T(e)
        self.sums = np.zeros(self.n_edges)                      # wins of e in its samples
        self.t = 1                                              # round within the current phase
        self.epoch = 1
        self.self_duels = 0

    def means(self) -> np.ndarray:
        """``w̄(e)`` (0 when unsampled, [A1 L12])."""
        return np.divide(self.sums, self.counts, out=np.zeros(self.n_edges), where=self.counts > 0)

    def current_guess(self) -> Matching:
        matching = self._mwmc(self.means())
        assert matching is not None
        return matching

    def _rounds(self, epsilon: float, delta: float, exact: bool) -> Generator[Duel, bool, Matching | None]:
        """Rounds of Algorithm 1 (``exact=False``) or of one epoch of Algorithm 5 (``exact=True``).

        Returns the answer, or ``None`` when an epoch of Algorithm 5 ends (next epoch).
        """
        mwmc, l, sampler, rng = self._mwmc, self.n_positions, self._sampler, self.rng
        positions, counts, sums = self._positions, self.counts, self.sums
        means = self.means()                                                            # [A1 L3, L12]
        margin = epsilon / 4.0
        while True:
            matching = mwmc(means)                                                       # [A1 L5] [A5 L8]
            radius = confidence_radius(counts, self.t, delta, self._log_constant)         # [A1 L6] [A5 L9]
            chosen = np.array(matching)
            adjusted = means + radius + margin                                           # [A1 L7-13]
            adjusted[chosen] = means[chosen] - radius[chosen] - margin                   # [A5 L10-16]
            challenger = mwmc(adjusted)                                                  # [A1 L14] [A5 L17]
            own = float(adjusted[chosen].sum())
            gap = float(adjusted[np.array(challenger)].sum()) - own
            if exact:
                if challenger == matching or gap <= EQUALITY_TOLERANCE * max(1.0, abs(own)):  # [A5 L18-21]
                    return matching
                if gap <= l * epsilon:                                                   # [A5 L22-24]
                    return None
            elif gap <= l * epsilon:                                                     # [A1 L15-18]
                return matching
            # [A1 L19] [A5 L25]: largest radius on the symmetric difference, lowest index on ties
            # (both matchings list one edge per position, so the difference is where they differ).
            difference = sorted(a for pair in zip(matching, challenger) if pair[0] != pair[1] for a in pair)
            z = difference[int(np.argmax(radius[difference]))]
            # [A1 L20-21] [A5 L26-27]: opponent = edge of a sampled matching at s(z); the
            # self-duel (z, z) is a fair coin that is played and counted (module docstring).
            opponent = sampler.sample_opponent(int(positions[z]), rng)
            won = yield (z, opponent)
            self.self_duels += opponent == z
            sums[z] += bool(won)                                                          # [A1 L22] [A5 L28]
            counts[z] += 1
            means[z] = sums[z] / counts[z]
            self.t += 1


@register_agent("clucb_borda_pac")
class CLUCBBordaPAC(_CLUCBBorda):
    """CLUCB-Borda-PAC (Chen et al., ICML 2020, Algorithm 1): an ε-optimal Borda matching.

    Returns ``Out`` with ``B(Out) >= B(M^B) - ε`` with probability at least ``1 - δ``, after
    ``O(H^B_ε ln(H^B_ε / δ))`` duels (Theorem 1).  One duel per round; the round's answer test
    is ``w̃(M̃_t) - w̃(M_t) <= l ε`` (``w`` units, ``w(M) = l B(M)``).

    Parameters
    ----------
    problem : BipartiteDuelProblem, CombinatorialDuelEnv or (n_candidates, n_positions, edges)
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

    def _run(self) -> Generator[Duel, bool, Matching | None]:
        return (yield from self._rounds(self.epsilon, self.delta, exact=False))


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
        As :class:`CLUCBBordaPAC`.
    sampler : str or MatchingSampler, default "exact"
        Must be exact (``eta == 0``): the epochs need ``η_q = ε_q / 8 -> 0``.
    reuse_samples_if_exact : bool, default False
        Keep the statistics across epochs.  Valid with an exact sampler: every duel of an edge
        is then an unbiased sample of its reward whatever the epoch, and the round counter
        ``t`` runs on across epochs so that ``T(e) <= t`` and each epoch's confidence radius
        still hold.  The default discards them, as printed ([A5 L6]).
    """

    def __init__(self, problem: Any, *, delta: float = 0.05, paper_log_constant: bool = False,
                 reuse_samples_if_exact: bool = False, sampler: str | MatchingSampler = "exact",
                 seed: SeedLike = None):
        self.delta = check_probability("delta", delta, open_low=True, open_high=True)
        self.reuse_samples_if_exact = bool(reuse_samples_if_exact)
        self.paper_log_constant = bool(paper_log_constant)
        self.sampler = sampler
        super().__init__(problem, seed=seed)

    def _check_sampler(self) -> None:
        if self._sampler.eta != 0.0:
            raise ValueError("CLUCB-Borda-Exact needs an exact sampler (eta = 0): its epochs use eta_q = eps_q/8 -> 0")

    def _run(self) -> Generator[Duel, bool, Matching | None]:
        q = 1
        while True:                                                                        # [A5 L2]
            epsilon = 2.0 ** -q                                                            # [A5 L3]
            delta = self.delta / (2.0 * q * q)                                             # [A5 L4]
            self.epoch = q
            if not self.reuse_samples_if_exact:                                            # [A5 L6]
                self.counts[:] = 0
                self.sums[:] = 0.0
                self.t = 1
            answer = yield from self._rounds(epsilon, delta, exact=True)                   # [A5 L7-29]
            if answer is not None:
                return answer
            q += 1
