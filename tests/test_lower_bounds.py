"""Lower-bound constants of Komiyama et al. (ICML 2016): LB (Theorem 2) and ECWB (Theorem 4).

Checks against the oracle numbers of the published matrices (tests/data/oracles.json), against
brute-force LPs that enumerate every constraint (tests/lower_bound_oracles.py), and the
structural facts of the paper (Theorem 6, membership of the LP optimum, ties, regret scaling,
the row pool, bad input); both LP methods (compact and constraint generation) are checked, and
the compact one on large problems through Theorem 6.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from conftest import ORACLE_CASES, ORACLE_TOLERANCE, load_oracles
from dueling_gym.problems import (
    PreferenceMatrix,
    cyclic_copeland_winners,
    ecw_lower_bound_constant,
    load_problem,
    lower_bound_constant,
    no_condorcet_winner,
    unique_copeland_winner,
)
from dueling_gym.problems.lower_bounds import ConstraintPool, CopelandLowerBoundStructure
from lower_bound_oracles import full_region_constant_bruteforce, full_region_rows, relaxed_region_constant_bruteforce
from dueling_gym.stats import kl_bernoulli

ORACLES = load_oracles()


def _structure(name: str) -> CopelandLowerBoundStructure:
    return CopelandLowerBoundStructure(load_problem(name))


def _random_preferences(rng: np.random.Generator, n_arms: int, tie_probability: float = 0.0) -> np.ndarray:
    """A random K×K preference matrix; some draws use a coarse grid so equal costs (ties in the
    sorts) occur, and some pairs are exactly tied at 1/2."""
    if rng.random() < 0.3:
        upper = rng.choice([0.1, 0.3, 0.4, 0.6, 0.7, 0.9], size=(n_arms, n_arms))
    else:
        upper = rng.uniform(0.05, 0.95, size=(n_arms, n_arms))
    upper = np.where(rng.random((n_arms, n_arms)) < tie_probability, 0.5, upper)
    matrix = np.triu(upper, 1) + np.triu(1.0 - upper, 1).T
    np.fill_diagonal(matrix, 0.5)
    return matrix


def _random_structures(seed: int, count: int) -> list[CopelandLowerBoundStructure]:
    rng = np.random.default_rng(seed)
    structures = []
    for _ in range(count):
        n_arms = int(rng.integers(2, 7))
        structures.append(CopelandLowerBoundStructure(_random_preferences(rng, n_arms, rng.choice([0.0, 0.2]))))
    return structures


RANDOM_STRUCTURES = _random_structures(seed=20160619, count=120)
MULTI_WINNER_STRUCTURES = [
    CopelandLowerBoundStructure(cyclic_copeland_winners(n_arms, np.random.default_rng(seed), low=0.52, high=0.95))
    for n_arms in (4, 5, 6)
    for seed in range(4)
]


# ---------------------------------------------------------------------- published matrices
@pytest.mark.parametrize("oracle_key,name", ORACLE_CASES)
def test_constants_match_oracles(oracle_key, name):
    expected = ORACLES[oracle_key]["lower_bounds"]
    problem = load_problem(name)
    assert lower_bound_constant(problem) == pytest.approx(expected["LB_constant"], abs=ORACLE_TOLERANCE)
    assert ecw_lower_bound_constant(problem) == pytest.approx(expected["ECWB_constant"], abs=ORACLE_TOLERANCE)
    # plain arrays are accepted too
    assert lower_bound_constant(problem.matrix) == pytest.approx(expected["LB_constant"], abs=ORACLE_TOLERANCE)


@pytest.mark.parametrize("oracle_key,name", ORACLE_CASES)
def test_per_winner_constants_match_oracles(oracle_key, name):
    per_winner = ORACLES[oracle_key]["lower_bounds"]["per_copeland_winner_1based"]
    structure = _structure(name)
    assert sorted(int(w) - 1 for w in per_winner) == structure.winners.tolist()
    for winner, expected in per_winner.items():
        i1 = int(winner) - 1
        full = structure.full_region_constant(i1)
        generated = structure.full_region_constant(i1, pool=ConstraintPool())
        relaxed = structure.relaxed_region_constant(i1)
        assert full.method == "compact" and generated.method == "rows"
        assert full.value == pytest.approx(expected["C_star_LP"], abs=ORACLE_TOLERANCE)
        assert generated.value == pytest.approx(expected["C_star_LP"], abs=ORACLE_TOLERANCE)
        assert relaxed.value == pytest.approx(expected["C_E_star_sortscan"], abs=ORACLE_TOLERANCE)
        # same separation oracle and tie-breaking: the same number of rows, give or take
        expected_rows = expected["generated_constraints"]
        assert abs(generated.n_rows - expected_rows) <= max(3, expected_rows // 2)


@pytest.mark.parametrize("oracle_key,name", ORACLE_CASES)
def test_published_matrices_agree_with_brute_force(oracle_key, name):
    structure = _structure(name)
    for i1 in structure.winners.tolist():
        full = structure.full_region_constant(i1)
        relaxed = structure.relaxed_region_constant(i1)
        assert full.value == pytest.approx(full_region_constant_bruteforce(structure, i1), rel=1e-7, abs=1e-7)
        assert relaxed.value == pytest.approx(relaxed_region_constant_bruteforce(structure, i1), rel=1e-7, abs=1e-7)


def test_gap_ratio_exceeds_one_hundred():
    problem = load_problem("gap")
    assert ecw_lower_bound_constant(problem) / lower_bound_constant(problem) > 100.0


def test_ecwb_equals_lb_with_several_winners_and_is_close_on_sushi():
    for name in ("multisol", "mslr5-noncondorcet"):
        problem = load_problem(name)
        assert ecw_lower_bound_constant(problem) == pytest.approx(lower_bound_constant(problem), rel=1e-9)
    sushi = load_problem("sushi")
    assert 1.0 < ecw_lower_bound_constant(sushi) / lower_bound_constant(sushi) < 1.01


# ---------------------------------------------------------------------- random matrices
@pytest.mark.parametrize("chunk", range(4))
def test_random_matrices_agree_with_brute_force(chunk):
    for structure in RANDOM_STRUCTURES[chunk::4]:
        for i1 in structure.winners.tolist():
            full = structure.full_region_constant(i1)
            generated = structure.full_region_constant(i1, pool=ConstraintPool())
            relaxed = structure.relaxed_region_constant(i1)
            brute_full = full_region_constant_bruteforce(structure, i1)
            brute_relaxed = relaxed_region_constant_bruteforce(structure, i1)
            assert full.value == pytest.approx(brute_full, rel=1e-7, abs=1e-9)
            assert generated.value == pytest.approx(brute_full, rel=1e-7, abs=1e-9)
            assert relaxed.value == pytest.approx(brute_relaxed, rel=1e-7, abs=1e-9)
            # Theorem 6, inequality (8)
            assert relaxed.value >= full.value - 1e-9


def test_random_pool_has_several_winners_and_ties():
    # guard: the random sample exercises the cases the other tests rely on
    assert sum(s.winners.size >= 2 for s in RANDOM_STRUCTURES) >= 20
    assert sum(bool(np.any(s.divergences == 0.0)) for s in RANDOM_STRUCTURES) >= 20
    assert sum(s.min_losses >= 1 for s in RANDOM_STRUCTURES) >= 20


SEVERAL_WINNERS = MULTI_WINNER_STRUCTURES + [s for s in RANDOM_STRUCTURES if s.winners.size >= 2][:15]


@pytest.mark.parametrize("structure", SEVERAL_WINNERS, ids=[f"case{n}" for n in range(len(SEVERAL_WINNERS))])
def test_relaxed_equals_full_with_several_winners(structure):
    # Theorem 6, equality (9)
    assert structure.winners.size >= 2
    for i1 in structure.winners.tolist():
        full = structure.full_region_constant(i1).value
        relaxed = structure.relaxed_region_constant(i1).value
        assert relaxed == pytest.approx(full, rel=1e-7, abs=1e-9)


def _condorcet_with_many_levels(n_arms: int, seed: int) -> CopelandLowerBoundStructure:
    """A random matrix whose arm 0 beats every other arm: L^(1) = 0 and L^(2) large, so the
    full region has many loss levels and the compact LP must bring families in by rounds."""
    matrix = _random_preferences(np.random.default_rng(seed), n_arms)
    matrix[0, 1:] = np.maximum(matrix[0, 1:], 1.0 - matrix[0, 1:])
    matrix[1:, 0] = 1.0 - matrix[0, 1:]
    return CopelandLowerBoundStructure(matrix)


def test_compact_lp_with_many_levels_matches_constraint_generation():
    structures = [_condorcet_with_many_levels(12, seed) for seed in range(12)]
    structures = [s for s in structures if s.levels.size > 4][:3]  # more levels than the LP starts with
    assert len(structures) == 3
    for structure in structures:
        compact = structure.full_region_constant(0)
        generated = structure.full_region_constant(0, pool=ConstraintPool())
        assert compact.method == "compact"
        assert compact.value == pytest.approx(generated.value, rel=1e-7)
        assert structure.in_full_region(0, compact.allocation, atol=1e-7)


def test_compact_lp_matches_constraint_generation_on_a_mid_sized_problem():
    structure = CopelandLowerBoundStructure(unique_copeland_winner(20, np.random.default_rng(3), min_gap=0.05))
    i1 = int(structure.winners[0])
    compact = structure.full_region_constant(i1)
    generated = structure.full_region_constant(i1, pool=ConstraintPool())
    assert compact.value == pytest.approx(generated.value, rel=1e-7)
    assert compact.value <= structure.relaxed_region_constant(i1).value + 1e-9  # Theorem 6, (8)


def test_compact_point_missing_a_row_falls_back_to_constraint_generation(monkeypatch):
    from dueling_gym.problems.lower_bounds.lp import CompactFullRegionLP

    structure = _structure("sushi")
    exact = structure.full_region_constant(0).value
    solve = CompactFullRegionLP.solve

    def halved(self, active):  # a point that misses rows, as a solver failure would give
        scaled, n_rows = solve(self, active)
        return 0.5 * scaled, n_rows

    monkeypatch.setattr(CompactFullRegionLP, "solve", halved)
    solution = structure.full_region_constant(0)
    assert solution.method == "rows"
    assert solution.value == pytest.approx(exact, rel=1e-9)


def _check_theorem_6_at_scale(problem: PreferenceMatrix, winners: int) -> None:
    """With several Copeland winners C*_{i1} = C^{E*}_{i1} (Theorem 6, (9)): an exact reference
    for the compact LP on problems far beyond brute force and constraint generation."""
    structure = CopelandLowerBoundStructure(problem)
    assert structure.winners.size >= 2
    for i1 in structure.winners[:winners].tolist():
        full = structure.full_region_constant(i1)
        assert full.method == "compact"
        assert full.value == pytest.approx(structure.relaxed_region_constant(i1).value, rel=1e-7)
        assert structure.separation_minimum(i1, full.allocation).value >= 1.0 - 1e-7


def test_hundred_arms_three_cyclic_winners():
    _check_theorem_6_at_scale(cyclic_copeland_winners(100, np.random.default_rng(0)), winners=3)


def test_hundred_arms_without_condorcet_winner():
    problem = no_condorcet_winner(100, np.random.default_rng(1), min_gap=0.05)
    lb, ecwb = lower_bound_constant(problem), ecw_lower_bound_constant(problem)
    assert 0.0 < lb <= ecwb * (1.0 + 1e-9)
    structure = CopelandLowerBoundStructure(problem)
    for i1 in structure.winners.tolist():
        full = structure.full_region_constant(i1)
        assert structure.in_full_region(i1, full.allocation, atol=1e-7)
        # optimal, not merely feasible: shrinking it leaves the region
        assert not structure.in_full_region(i1, 0.999 * full.allocation)


@pytest.mark.slow
def test_five_hundred_arms_three_cyclic_winners():
    # the large problem of Zoghi et al. (2015): winners with score 498, the others 0..496
    _check_theorem_6_at_scale(cyclic_copeland_winners(500, np.random.default_rng(0)), winners=1)


# ---------------------------------------------------------------------- allocations and membership
def _check_lp_optimum(structure: CopelandLowerBoundStructure, i1: int) -> None:
    solution = structure.full_region_constant(i1)
    allocation = solution.allocation
    assert allocation.shape == (structure.n_arms, structure.n_arms)
    np.testing.assert_array_equal(allocation, allocation.T)
    np.testing.assert_array_equal(np.diag(allocation), 0.0)
    pairs = structure.pair_vector(allocation)
    assert np.all(pairs >= 0.0)
    assert np.all(pairs * structure.divergences <= 1.0 + 1e-9)  # box q_p <= 1/d_p
    assert np.all(pairs[structure.divergences == 0.0] == 0.0)  # tied pairs are never drawn
    assert structure.objective(allocation) == pytest.approx(solution.value)
    assert structure.in_full_region(i1, allocation, atol=1e-7)
    assert structure.separation_minimum(i1, allocation).value >= 1.0 - 1e-7
    for i2 in range(structure.n_arms):
        for level in structure.levels.tolist():
            if i2 != i1:
                assert structure.min_lhs(i1, i2, level, allocation).value >= 1.0 - 1e-7


@pytest.mark.parametrize("oracle_key,name", ORACLE_CASES)
def test_lp_optimum_lies_in_full_region(oracle_key, name):
    structure = _structure(name)
    for i1 in structure.winners.tolist():
        _check_lp_optimum(structure, i1)


def test_random_lp_optima_lie_in_full_region():
    for structure in RANDOM_STRUCTURES[:40]:
        for i1 in structure.winners.tolist():
            _check_lp_optimum(structure, i1)


@pytest.mark.parametrize("oracle_key,name", ORACLE_CASES)
def test_membership_boundaries(oracle_key, name):
    structure = _structure(name)
    for i1 in structure.winners.tolist():
        informative = structure.divergences > 0
        trivial = np.where(informative, 1.0 / np.where(informative, structure.divergences, 1.0), 0.0)
        assert structure.in_full_region(i1, trivial)  # q = 1/d is always feasible (remark after eq. (2))
        assert not structure.in_full_region(i1, 1.01 * trivial)  # the box
        optimum = structure.full_region_constant(i1).allocation
        assert not structure.in_full_region(i1, 0.99 * optimum)  # some constraint is tight
        assert not structure.in_full_region(i1, np.zeros(structure.n_pairs))
        relaxed = structure.relaxed_region_constant(i1).allocation
        assert structure.in_full_region(i1, relaxed, atol=1e-9)  # R^E is inside R (proof of Theorem 6)


def _lhs_by_enumeration(structure, i1, i2, level, scaled):
    """min over every admissible (H, O) of one (i1, i2, l), straight from equation (2)."""
    inferiors = np.flatnonzero(structure.inferior_mask[i1]).tolist()
    superiors = [j for j in np.flatnonzero(structure.superior_mask[i2]).tolist() if j != i1]
    best = math.inf
    for h_set in itertools.combinations(inferiors, level + 1 - structure.min_losses):
        o_size = max(0, int(structure.losses[i2]) - level - (i2 in h_set))
        for o_set in itertools.combinations(superiors, o_size):
            total = sum(scaled[structure.pair_index[i1, j]] for j in h_set)
            total += sum(scaled[structure.pair_index[i2, j]] for j in o_set)
            best = min(best, total)
    return best


def test_min_lhs_matches_enumeration_of_subsets():
    rng = np.random.default_rng(7)
    checked = 0
    for structure in RANDOM_STRUCTURES[:60] + [_structure("gap"), _structure("cyclic4")]:
        allocation = rng.uniform(0.0, 1.0, structure.n_pairs) * rng.choice([0.0, 1.0, 1.0], structure.n_pairs)
        if rng.random() < 0.3:  # equal values: exercises the tie-breaking of the sorts
            allocation = np.round(allocation, 1)
        allocation = allocation / np.where(structure.divergences > 0, structure.divergences, 1.0)
        scaled = allocation * structure.divergences
        i1 = int(structure.winners[0])
        for i2 in range(structure.n_arms):
            if i2 == i1:
                continue
            for level in structure.levels.tolist():
                value, pair_indices = structure.min_lhs(i1, i2, level, allocation)
                expected = _lhs_by_enumeration(structure, i1, i2, level, scaled)
                if math.isinf(expected):
                    assert math.isinf(value) and pair_indices.size == 0
                    continue
                checked += 1
                assert value == pytest.approx(expected, abs=1e-12)
                assert scaled[pair_indices].sum() == pytest.approx(value, abs=1e-12)
                assert tuple(pair_indices.tolist()) in set(full_region_rows(structure, i1))
    assert checked > 100


def test_relaxed_allocation_satisfies_equations_4_and_5():
    for structure in RANDOM_STRUCTURES[:60]:
        for i1 in structure.winners.tolist():
            allocation = structure.relaxed_region_constant(i1).allocation
            scaled = allocation * structure.pair_matrix(structure.divergences)
            # (4): every inferior of i1 is verified completely
            np.testing.assert_allclose(scaled[i1, structure.inferior_mask[i1]], 1.0)
            # (5): for every i2 the required number of smallest e_j sums to at least 1
            for i2 in range(structure.n_arms):
                if i2 == i1:
                    continue
                omega = [j for j in np.flatnonzero(structure.superior_mask[i2]) if j != i1]
                size = int(structure.losses[i2] - structure.losses[i1] + 1)
                if size <= len(omega):
                    assert np.sort(scaled[i2, omega])[:size].sum() >= 1.0 - 1e-12


def test_condorcet_winner_relaxed_constant_is_closed_form():
    # L^(1) = 0: equation (5) asks for L_{i2} + 1 of the L_{i2} - 1 superiors, so only (4) remains
    for name in ("sushi", "arxiv", "mslr5-condorcet", "cyclic4"):
        structure = _structure(name)
        i1 = int(structure.winners[0])
        regrets = structure.pair_matrix(structure.regrets)[i1]
        divergences = structure.pair_matrix(structure.divergences)[i1]
        others = np.arange(structure.n_arms) != i1
        expected = float(np.sum(regrets[others] / divergences[others]))
        assert structure.relaxed_region_constant(i1).value == pytest.approx(expected, rel=1e-12)


def test_two_arms_closed_form():
    matrix = np.array([[0.5, 0.7], [0.3, 0.5]])
    expected = 0.5 / kl_bernoulli(0.7, 0.5)  # r = (0 + 1 - 0) / (2 (K-1)) = 1/2, q = 1/d
    assert lower_bound_constant(matrix) == pytest.approx(expected, rel=1e-9)
    assert ecw_lower_bound_constant(matrix) == pytest.approx(expected, rel=1e-9)


def test_all_pairs_tied_needs_no_exploration():
    structure = CopelandLowerBoundStructure(np.full((4, 4), 0.5))
    assert structure.winners.tolist() == [0, 1, 2, 3]
    solution = structure.full_region_constant(2)
    assert solution.value == 0.0 and solution.n_rows == 0
    assert structure.relaxed_region_constant(2).value == 0.0
    assert structure.in_full_region(2, np.zeros((4, 4)))


# ---------------------------------------------------------------------- ties, regret, structure
def test_arxiv_tied_pair_carries_no_information():
    structure = _structure("arxiv")
    tied = structure.pair_index[3, 5]
    assert structure.divergences[tied] == 0.0
    assert not structure.superior_mask[3, 5] and not structure.inferior_mask[3, 5]
    assert structure.full_region_constant(0).allocation[3, 5] == 0.0
    assert structure.relaxed_region_constant(0).allocation[3, 5] == 0.0


@pytest.mark.parametrize("oracle_key,name", ORACLE_CASES)
def test_structure_facts_match_preference_matrix(oracle_key, name):
    problem = load_problem(name)
    structure = CopelandLowerBoundStructure(problem)
    np.testing.assert_array_equal(structure.losses, problem.losses)
    assert structure.min_losses == problem.min_losses
    assert structure.second_min_losses == problem.second_min_losses
    np.testing.assert_array_equal(structure.winners, problem.copeland_winners)  # no tie changes the winners here
    off_diagonal = 1.0 - np.eye(problem.n_arms)
    komiyama = problem.regret_matrix("copeland_komiyama") * off_diagonal
    np.testing.assert_allclose(structure.pair_matrix(structure.regrets), komiyama)
    assert structure.pairs.shape == (problem.n_arms * (problem.n_arms - 1) // 2, 2)


def test_custom_regret_scales_the_constants():
    problem = load_problem("gap")
    komiyama = problem.regret_matrix("copeland_komiyama")
    lb = lower_bound_constant(problem)
    ecwb = ecw_lower_bound_constant(problem)
    assert lower_bound_constant(problem, regret=np.array(komiyama)) == pytest.approx(lb)
    # without ties Zoghi's regret is twice Komiyama's
    assert lower_bound_constant(problem, regret="copeland_zoghi") == pytest.approx(2 * lb)
    assert ecw_lower_bound_constant(problem, regret="copeland_zoghi") == pytest.approx(2 * ecwb)
    structure = CopelandLowerBoundStructure(problem)
    assert lower_bound_constant(problem, regret=3 * structure.regrets) == pytest.approx(3 * lb)


def test_constraint_pool_is_reused_and_cleared_on_sign_change():
    problem = load_problem("sushi")
    structure = CopelandLowerBoundStructure(problem)
    fresh = structure.full_region_constant(0)
    pool = ConstraintPool()
    first = structure.full_region_constant(0, pool=pool)
    assert pool.n_rows(0) == first.n_rows
    assert first.value == pytest.approx(fresh.value, rel=1e-9)
    # a slightly different matrix with the same signs: the stored rows stay valid
    nudged = np.clip(problem.matrix + 0.01 * np.sign(problem.matrix - 0.5), 0.0, 1.0)
    nudged_structure = CopelandLowerBoundStructure(nudged)
    warm = nudged_structure.full_region_constant(0, pool=pool)
    cold = nudged_structure.full_region_constant(0)
    assert warm.value == pytest.approx(cold.value, rel=1e-9)
    assert pool.n_rows(0) == warm.n_rows >= first.n_rows
    # flip one pair: the pool must forget rows that belong to another sign structure
    flipped = problem.matrix.copy()
    flipped[14, 15], flipped[15, 14] = flipped[15, 14], flipped[14, 15]
    flipped_structure = CopelandLowerBoundStructure(flipped)
    solution = flipped_structure.full_region_constant(0, pool=pool)
    assert solution.n_rows == pool.n_rows(0) == len(pool)
    assert solution.value == pytest.approx(flipped_structure.full_region_constant(0).value, rel=1e-9)


def test_allocation_views_round_trip():
    structure = _structure("gap")
    vector = np.arange(structure.n_pairs, dtype=float)
    matrix = structure.pair_matrix(vector)
    np.testing.assert_array_equal(structure.pair_vector(matrix), vector)
    np.testing.assert_array_equal(structure.pair_vector(vector), vector)
    for index, (i, j) in enumerate(structure.pairs.tolist()):
        assert structure.pair_index[i, j] == structure.pair_index[j, i] == index


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "matrix",
    [
        np.array([[0.5, 0.7, 0.2], [0.3, 0.5, 0.6]]),  # not square
        np.array([[0.5]]),  # K < 2
        np.array([[0.5, 1.2], [-0.2, 0.5]]),  # outside [0, 1]
        np.array([[0.5, 0.7], [0.4, 0.5]]),  # P + P.T != 1
        np.array([[0.5, np.nan], [np.nan, 0.5]]),  # not finite
        np.array([[0.3, 0.7], [0.3, 0.5]]),  # diagonal
        np.zeros(3),  # not two-dimensional
    ],
)
def test_bad_matrices_raise_value_error(matrix):
    with pytest.raises(ValueError):
        lower_bound_constant(matrix)
    with pytest.raises(ValueError):
        ecw_lower_bound_constant(matrix)


def test_bad_arguments_raise_value_error():
    structure = _structure("gap")  # unique winner 0, L = [1, 2, 2, 3, 2]
    with pytest.raises(ValueError, match="not a Copeland winner"):
        structure.full_region_constant(1)
    with pytest.raises(ValueError, match="not a Copeland winner"):
        structure.relaxed_region_constant(3)
    for bad_arm in (-1, 5, 1.0, True):
        with pytest.raises(ValueError):
            structure.full_region_constant(bad_arm)
    with pytest.raises(ValueError):
        structure.min_lhs(0, 0, 1, np.zeros(10))  # i2 == i1
    with pytest.raises(ValueError):
        structure.min_lhs(0, 1, 7, np.zeros(10))  # level out of range
    with pytest.raises(ValueError):
        structure.in_full_region(0, np.zeros(7))  # wrong allocation shape
    asymmetric = np.zeros((5, 5))
    asymmetric[0, 1] = 1.0
    with pytest.raises(ValueError, match="symmetric"):
        structure.in_full_region(0, asymmetric)
    with pytest.raises(ValueError):
        structure.in_full_region(0, np.full(10, np.inf))
    problem = load_problem("gap")
    with pytest.raises(ValueError):
        lower_bound_constant(problem, regret=np.ones(4))  # wrong length
    with pytest.raises(ValueError):
        lower_bound_constant(problem, regret=-np.ones(10))  # negative
    with pytest.raises(ValueError):
        lower_bound_constant(problem, regret=np.triu(np.ones((5, 5)), 1))  # asymmetric matrix
    with pytest.raises(ValueError):
        lower_bound_constant(problem, regret="no-such-regret")
    with pytest.raises(ValueError):
        lower_bound_constant(structure, regret=np.ones(10))  # regret belongs to the structure


def test_exported_from_problems_package():
    import dueling_gym.problems as problems

    assert "lower_bound_constant" in problems.__all__
    assert "ecw_lower_bound_constant" in problems.__all__
    assert problems.lower_bound_constant is lower_bound_constant
    assert isinstance(load_problem("gap"), PreferenceMatrix)
