"""PreferenceMatrix facts against the oracle numbers of the published matrices."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from conftest import ORACLE_TO_PROBLEM, load_oracles
from dueling_gym.problems import PreferenceMatrix, dataset_info, list_problems, load_problem

ORACLES = load_oracles()
CASES = sorted(ORACLE_TO_PROBLEM.items())


@pytest.mark.parametrize("oracle_key,name", CASES)
def test_copeland_facts_match_oracles(oracle_key, name):
    facts = ORACLES[oracle_key]
    problem = load_problem(name)
    assert problem.n_arms == facts["sanity"]["K"]
    assert problem.wins.tolist() == facts["Cpld_wins"]
    assert problem.losses.tolist() == facts["L_losses"]
    np.testing.assert_allclose(problem.copeland_scores, facts["cpld_normalized"], atol=1e-6)
    assert (problem.copeland_winners + 1).tolist() == facts["copeland_winners_1based"]
    assert problem.n_copeland_winners == facts["num_copeland_winners_C"]
    expected_condorcet = facts["condorcet_winner_1based"]
    assert problem.condorcet_winner == (None if expected_condorcet is None else expected_condorcet - 1)
    assert problem.min_losses == facts["L1_min_losses"]
    assert problem.copeland_winner_losses == facts["L_C_losses_of_copeland_winner"]
    assert (problem.tied_pairs + 1).tolist() == facts["sanity"]["tied_pairs_1based"]


@pytest.mark.parametrize("oracle_key,name", CASES)
def test_borda_facts_match_oracles(oracle_key, name):
    facts = ORACLES[oracle_key]
    problem = load_problem(name)
    np.testing.assert_allclose(problem.borda_scores, facts["borda_scores_excl_self"], atol=1e-6)
    np.testing.assert_allclose(problem.borda_scores_with_self, facts["borda_scores_incl_self_overK"], atol=1e-6)
    assert (problem.borda_winners + 1).tolist() == facts["borda_winners_1based"]


@pytest.mark.parametrize("oracle_key,name", CASES)
def test_random_regret_matches_oracles(oracle_key, name):
    facts = ORACLES[oracle_key]
    problem = load_problem(name)
    assert problem.expected_random_regret("copeland_komiyama") == pytest.approx(
        facts["random_expected_copeland_regret_per_round_komiyama"], abs=1e-6)
    zoghi = problem.expected_random_regret("copeland_zoghi")
    if problem.tied_pairs.size == 0:
        # The oracle's Zoghi value is "twice Komiyama", which holds only without ties.
        assert zoghi == pytest.approx(facts["random_expected_copeland_regret_per_round_zoghi"], abs=1e-6)
    else:
        # With ties Zoghi regret is computed from strict wins (ArXiv: 1.0667, not 2 x 0.4667).
        wins = problem.wins / (problem.n_arms - 1)
        gaps = 2 * (wins.max() - wins)
        assert zoghi == pytest.approx(gaps.mean(), abs=1e-12)


def test_mslr_condorcet_is_rebuilt_from_upper_triangle():
    problem = load_problem("mslr5-condorcet")
    raw = ORACLES["MSLR5_Condorcet"]["raw_as_printed"]
    # As printed, arm 4 (1-based) has Borda 0.3425; the upper-triangle rebuild gives 0.34175.
    assert raw["borda_scores_excl_self"][3] == pytest.approx(0.3425)
    assert problem.borda_scores[3] == pytest.approx(0.34175)
    assert problem.matrix[3, 1] == pytest.approx(0.273)
    assert dataset_info("mslr5-condorcet").rebuilt_from_upper_triangle
    assert "0.276" in problem.source


def test_regret_spot_checks():
    spot = ORACLES["formula_spot_checks"]
    gap = load_problem("gap")
    assert [gap.regret("copeland_komiyama", 0, 3), gap.regret("copeland_zoghi", 0, 3)] == pytest.approx(
        spot["Gap r_Komiyama(1,4), r_Zoghi(1,4)"])
    assert [gap.regret("copeland_komiyama", 3, 3), gap.regret("copeland_zoghi", 3, 3)] == pytest.approx(
        spot["Gap r_Komiyama(4,4), r_Zoghi(4,4)"])
    arxiv = load_problem("arxiv")
    assert [arxiv.regret("copeland_komiyama", 3, 5), arxiv.regret("copeland_zoghi", 3, 5) / 2] == pytest.approx(
        spot["ArXiv(tie 4~6) r_Komiyama(4,6), r_Zoghi(4,6)/2"])
    cyclic = load_problem("cyclic4")
    assert cyclic.regret("condorcet_strong", 1, 2) == pytest.approx(
        spot["Table2 strong Condorcet regret (Delta_i+Delta_j)/2 for (2,3)"])
    assert cyclic.regret("condorcet_weak", 0, 2) == pytest.approx(
        spot["Table2 weak Condorcet regret min(Delta_i,Delta_j) for (1,3)"])


@pytest.mark.parametrize("name", list_problems())
def test_regret_relations(name):
    problem = load_problem(name)
    komiyama = problem.regret_matrix("copeland_komiyama")
    zoghi = problem.regret_matrix("copeland_zoghi")
    if problem.tied_pairs.size == 0:
        np.testing.assert_allclose(zoghi, 2 * komiyama, atol=1e-12)
    winners = problem.copeland_winners
    # Copeland regret vanishes exactly on pairs of Copeland winners.
    zero = np.argwhere(np.isclose(komiyama, 0.0))
    assert set(map(tuple, zero.tolist())) == {(i, j) for i in winners.tolist() for j in winners.tolist()}
    assert komiyama.min() >= 0 and komiyama.max() <= 1
    assert zoghi.max() <= 2
    if problem.condorcet_winner is not None:
        strong = problem.regret_matrix("condorcet_strong")
        weak = problem.regret_matrix("condorcet_weak")
        star = problem.condorcet_winner
        assert strong[star, star] == 0 and np.count_nonzero(strong == 0) == 1
        assert np.all(weak[star] == 0) and np.all(weak[:, star] == 0)
        assert set(problem.defined_regret_notions) >= {"condorcet_strong", "condorcet_weak"}
    else:
        assert "condorcet_strong" not in problem.defined_regret_notions
        with pytest.raises(ValueError, match="Condorcet winner"):
            problem.regret("condorcet_strong", 0, 1)


def test_regret_is_vectorised_over_pairs():
    problem = load_problem("sushi")
    first = np.array([0, 3, 15, 7])
    second = np.array([1, 3, 0, 2])
    values = problem.regret("copeland_komiyama", first, second)
    assert values.shape == (4,)
    expected = [(problem.losses[i] + problem.losses[j]) / 30 for i, j in zip(first, second)]
    np.testing.assert_allclose(values, expected)
    grid = problem.regret("borda", first[:, None], second[None, :])
    assert grid.shape == (4, 4)
    with pytest.raises(ValueError, match="out|lie in"):
        problem.regret("borda", 16, 0)
    with pytest.raises(TypeError, match="integers"):
        problem.regret("borda", 0.5, 0)
    with pytest.raises(ValueError, match="unknown regret notion"):
        problem.regret("copeland", 0, 1)


@pytest.mark.parametrize("name", list_problems())
def test_von_neumann_winner_is_an_equilibrium(name):
    problem = load_problem(name)
    weights = problem.von_neumann_winner
    assert weights.sum() == pytest.approx(1.0) and np.all(weights >= 0)
    assert np.all(weights @ problem.matrix >= 0.5 - 1e-9)
    if problem.condorcet_winner is not None:
        assert weights[problem.condorcet_winner] == pytest.approx(1.0)


def test_multisol_von_neumann_is_uniform_on_the_cycle():
    weights = load_problem("multisol").von_neumann_winner
    np.testing.assert_allclose(weights, [1 / 3, 1 / 3, 1 / 3, 0, 0], atol=1e-9)


@pytest.mark.parametrize(
    "matrix,error,pattern",
    [
        ([[0.5]], ValueError, "at least 2 arms"),
        ([[0.5, 0.6, 0.4]], ValueError, "square"),
        (np.zeros((2, 2, 2)), ValueError, "square"),
        ([[0.5, np.nan], [0.5, 0.5]], ValueError, r"\[0, 1\] is not finite"),
        ([[0.5, 1.2], [-0.2, 0.5]], ValueError, r"entry \[0, 1\] = 1.2 is outside"),
        ([[0.5, 0.7], [0.4, 0.5]], ValueError, r"\[0, 1\] = 0.7 and \[1, 0\] = 0.4 must sum to 1"),
        ([[0.4, 0.7], [0.3, 0.5]], ValueError, r"diagonal entry \[0, 0\]"),
        ([["a", "b"], ["c", "d"]], TypeError, "numeric"),
        ([[0.5, 1j], [1, 0.5]], TypeError, "real"),
    ],
)
def test_invalid_matrices_are_rejected_with_a_named_entry(matrix, error, pattern):
    with pytest.raises(error, match=pattern):
        PreferenceMatrix(matrix)


@pytest.mark.parametrize("atol,error", [(np.nan, ValueError), (-1e-9, ValueError), (np.inf, ValueError),
                                        (1.0, ValueError), (None, TypeError), (True, TypeError)])
def test_tolerance_is_validated_on_every_construction_path(atol, error):
    matrix = [[0.5, 0.7], [0.3, 0.5]]
    with pytest.raises(error, match="atol"):
        PreferenceMatrix(matrix, atol=atol)
    with pytest.raises(error, match="atol"):
        PreferenceMatrix.from_upper_triangle(matrix, atol=atol)


def test_tolerance_absorbs_only_rounding():
    printed = [[0.5, 0.727], [0.276, 0.5]]  # the two triangles disagree by 0.003
    with pytest.raises(ValueError, match="sum to 1"):
        PreferenceMatrix(printed)
    repaired = PreferenceMatrix(printed, atol=0.01)
    assert repaired.matrix[1, 0] == 1.0 - 0.727
    assert PreferenceMatrix.from_upper_triangle(printed) == repaired


def test_matrix_is_immutable_and_copied():
    source = np.array([[0.5, 0.7], [0.3, 0.5]])
    problem = PreferenceMatrix(source)
    source[0, 1] = 0.1
    assert problem.matrix[0, 1] == 0.7
    with pytest.raises(ValueError):
        problem.matrix[0, 1] = 0.2
    with pytest.raises(ValueError):
        problem.losses[0] = 3


def test_pickle_and_equality_round_trip():
    problem = load_problem("arxiv")
    clone = pickle.loads(pickle.dumps(problem))
    assert clone == problem and hash(clone) == hash(problem)
    assert clone.name == "arxiv" and clone.source == problem.source
    assert np.asarray(problem).shape == (6, 6)


def test_unknown_dataset_lists_valid_names():
    with pytest.raises(ValueError, match="sushi"):
        load_problem("sushy")
    assert load_problem("Sushi16") is load_problem("sushi")
    assert load_problem("table2").name == "cyclic4"


def test_duel_table_layout():
    problem = load_problem("cyclic4")
    notions = problem.defined_regret_notions
    table = problem.duel_table(notions)
    assert table.shape == (16, 1 + len(notions))
    i, j = 2, 1
    assert table[i * 4 + j, 0] == problem.matrix[i, j]
    for column, notion in enumerate(notions, start=1):
        assert table[i * 4 + j, column] == problem.regret(notion, i, j)


def test_provenance_is_read_only_and_survives_pickling():
    counts = np.array([[0, 3], [3, 0]])
    problem = PreferenceMatrix([[0.5, 0.7], [0.3, 0.5]], provenance={"counts": counts, "rule": "half"})
    counts[0, 1] = 99  # the problem kept its own copy
    assert problem.provenance["counts"][0, 1] == 3
    with pytest.raises(TypeError):
        problem.provenance["rule"] = "drop"
    with pytest.raises(ValueError):
        problem.provenance["counts"][0, 1] = 5
    copy = pickle.loads(pickle.dumps(problem))
    assert copy.provenance["rule"] == "half" and copy.provenance["counts"].tolist() == [[0, 3], [3, 0]]
    assert PreferenceMatrix(problem).provenance["rule"] == "half"
    assert dict(PreferenceMatrix([[0.5, 0.5], [0.5, 0.5]]).provenance) == {}
    with pytest.raises(TypeError, match="provenance must be a mapping"):
        PreferenceMatrix([[0.5, 0.5], [0.5, 0.5]], provenance=[("rule", "half")])
