"""Identification (pure-exploration) agents over K arms, and the runner's answer scores."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_checks import bradley_terry
from agent_helpers import assert_paths_agree
from dueling_gym.agents import make_agent
from dueling_gym.agents.knockout import Knockout
from dueling_gym.agents.mallows_mpi import MallowsMPI, mallows_preferences
from dueling_gym.agents.mallows_mpr import MallowsMPR
from dueling_gym.agents.multisort import Multisort
from dueling_gym.agents.pl_pac import PLPAC, budgeted_quicksort
from dueling_gym.agents.preference_estimator import PreferenceEstimator
from dueling_gym.agents.sequential_elimination import SequentialElimination
from dueling_gym.agents.single_elimination import SingleElimination
from dueling_gym.agents.successive_elimination_borda import SuccessiveEliminationBorda
from dueling_gym.experiments.pure_exploration import run_pure_exploration
from dueling_gym.experiments.ranking_metrics import (
    kendall_tau,
    ranking_correct,
    top_k_correct,
    true_ranking,
    winner_correct,
)
from dueling_gym.problems import PreferenceMatrix
from dueling_gym.problems.generators import utility_based


def run_many(make, problem, seeds, **kwargs):
    agent = make()
    return [run_pure_exploration(agent, problem, seed=seed, **kwargs) for seed in seeds]


def assert_pac_on_utility_based_problems(make, n_arms, runs, delta):
    """``make()`` is epsilon-correct in at least ``1 - delta`` of ``runs`` runs on each of two
    utility-based problems of ``n_arms`` arms (problem seeds 0 and 1).  Returns the runs per problem."""
    runs_per_problem = []
    for problem_seed in range(2):
        problem = utility_based(n_arms, np.random.default_rng(problem_seed))
        results = run_many(make, problem, range(runs))
        assert np.mean([r.epsilon_correct for r in results]) >= 1 - delta
        runs_per_problem.append(results)
    return runs_per_problem


def assert_wide_gaps_cost_less(make):
    """On eight Bradley-Terry arms, utility gaps of 1 cost under half the duels of gaps of 0.2 (30 runs each)."""
    easy = bradley_terry(np.arange(8) * 1.0)
    hard = bradley_terry(np.arange(8) * 0.2)
    easy_samples = np.mean([r.samples for r in run_many(make, easy, range(30))])
    hard_samples = np.mean([r.samples for r in run_many(make, hard, range(30))])
    assert easy_samples < 0.5 * hard_samples


# ------------------------------------------------------------------------------------------
# Runner and ranking metrics on hand-made examples
# ------------------------------------------------------------------------------------------
LINEAR = bradley_terry([3.0, 2.0, 1.0, 0.0])  # true order 0 > 1 > 2 > 3


def test_true_ranking_and_kendall_tau_by_hand():
    np.testing.assert_array_equal(true_ranking(LINEAR, "condorcet"), [0, 1, 2, 3])
    np.testing.assert_array_equal(true_ranking(LINEAR, "borda"), [0, 1, 2, 3])
    assert kendall_tau([0, 1, 2, 3], LINEAR, "borda") == 1.0
    assert kendall_tau([3, 2, 1, 0], LINEAR, "borda") == -1.0
    # One adjacent swap: 5 concordant, 1 discordant pair of 6.
    assert kendall_tau([1, 0, 2, 3], LINEAR, "condorcet") == pytest.approx(4 / 6)
    with pytest.raises(ValueError, match="all 4 arms"):
        kendall_tau([0, 1, 2], LINEAR, "borda")
    with pytest.raises(ValueError, match="repeats"):
        kendall_tau([0, 0, 1, 2], LINEAR, "borda")
    with pytest.raises(ValueError, match="target"):
        true_ranking(LINEAR, "plurality")


def test_top_k_and_winner_by_hand():
    assert top_k_correct([1, 0], LINEAR, "borda")
    assert not top_k_correct([0, 2], LINEAR, "borda")
    assert top_k_correct([0, 1, 2, 3], LINEAR, "borda")
    assert winner_correct(0, LINEAR, "condorcet") and not winner_correct(1, LINEAR, "condorcet")
    # Cyclic 3x3: no Condorcet winner, every arm is a Copeland winner.
    cyclic = PreferenceMatrix(np.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.7], [0.7, 0.3, 0.5]]))
    assert not winner_correct(0, cyclic, "condorcet")
    assert all(winner_correct(arm, cyclic, "copeland") for arm in range(3))
    # A tie at the top-2 boundary: either tied arm completes a correct set.
    tied = PreferenceMatrix(np.array([[0.5, 0.9, 0.9], [0.1, 0.5, 0.5], [0.1, 0.5, 0.5]]))
    assert top_k_correct([0, 1], tied, "borda") and top_k_correct([0, 2], tied, "borda")
    assert not top_k_correct([1, 2], tied, "borda")


def test_runner_scores_a_k_armed_agent_and_is_reproducible():
    agent = Knockout(4, epsilon=0.05, delta=0.1)
    first = run_pure_exploration(agent, LINEAR, seed=3)
    again = run_pure_exploration(agent, LINEAR, seed=3)
    assert first.to_dict() | {"wall_time": 0, "time_per_sample": 0} == again.to_dict() | {"wall_time": 0,
                                                                                             "time_per_sample": 0}
    assert first.answer_type == "winner" and first.recommendation == (first.winner,)
    assert first.stopped and first.samples > 0
    assert first.correct == (first.winner == 0) == first.is_condorcet_winner
    assert first.epsilon_correct == (LINEAR.matrix[0, first.winner] <= 0.55)
    capped = run_pure_exploration(agent, LINEAR, seed=3, max_samples=10)
    assert capped.samples == 10 and not capped.stopped and not capped.correct
    with pytest.raises(ValueError, match="arms"):
        run_pure_exploration(Knockout(5), LINEAR, seed=0)
    with pytest.raises(TypeError, match="pure-exploration"):
        run_pure_exploration(make_agent("rucb", 4), LINEAR, seed=0)


def test_generic_loop_matches_fused_loop():
    problem = utility_based(6, np.random.default_rng(1))
    fused = run_pure_exploration(Knockout(6), problem, seed=4)
    generic = run_pure_exploration(Knockout(6), problem, seed=4, fused=False)
    assert (fused.samples, fused.winner) == (generic.samples, generic.winner) and generic.stopped
    with pytest.raises(ValueError, match="fused=False"):
        run_pure_exploration(make_agent("savage", 4, delta=0.1, exploit=False), LINEAR, seed=0, fused=True)


# ------------------------------------------------------------------------------------------
# Knockout (Falahatgar et al. 2017)
# ------------------------------------------------------------------------------------------
def knockout_worst_case(n_arms, epsilon, delta, gamma=1.0):
    """Duels of Algorithm 3 if every COMPARE ran to its budget m (floor(m) + 1 duels)."""
    c = 2 ** (1 / 3) - 1
    total, alive, round_ = 0, n_arms, 0
    while alive > 1:
        round_ += 1
        eps = c * epsilon / (gamma * 2 ** (round_ / 3))
        dlt = delta / 2 ** round_
        total += (alive // 2) * (math.floor(math.log(2 / dlt) / (2 * eps ** 2)) + 1)
        alive = (alive + 1) // 2
    return total


def test_knockout_paths_agree():
    assert_paths_agree(lambda: Knockout(16, epsilon=0.2, delta=0.2), "sushi", 3000, seed=2)


def test_knockout_structure_and_validation():
    agent = Knockout(5, epsilon=0.1, delta=0.1, seed=0)
    assert agent.pure_exploration and not agent.done and agent.hyperparameters == {
        "epsilon": 0.1, "delta": 0.1, "gamma": 1.0}
    result = run_pure_exploration(agent, bradley_terry([4, 3, 2, 1, 0]), seed=0)
    assert result.stopped and agent.done and agent.act() == (result.winner, result.winner)
    ranking = agent.ranking()
    assert sorted(ranking.tolist()) == list(range(5)) and ranking[0] == result.winner
    assert result.samples <= knockout_worst_case(5, 0.1, 0.1)
    for bad in ({"epsilon": 0.0}, {"delta": 1.0}, {"gamma": 1.5}, {"epsilon": "0.1"}):
        with pytest.raises((ValueError, TypeError)):
            Knockout(5, **bad)


@pytest.mark.slow
def test_knockout_is_pac_and_adapts_to_the_gap():
    epsilon, delta = 0.05, 0.1
    runs_per_problem = assert_pac_on_utility_based_problems(lambda: Knockout(12, epsilon=epsilon, delta=delta), 12, 60, delta)
    for results in runs_per_problem:
        assert max(r.samples for r in results) <= knockout_worst_case(12, epsilon, delta)
    # Early stopping of COMPARE: well separated arms cost fewer duels.
    assert_wide_gaps_cost_less(lambda: Knockout(8))


# ------------------------------------------------------------------------------------------
# Single-Elimination Top-1 / Top-k (Mohajer et al. 2017)
# ------------------------------------------------------------------------------------------
def test_single_elimination_paths_agree():
    assert_paths_agree(lambda: SingleElimination(16, k=3, duels_per_match=15), "sushi", 3000, seed=1)


def test_single_elimination_plays_whole_matches():
    problem = bradley_terry(np.arange(9) * 0.45)
    for k, answer_type in ((1, "winner"), (4, "top_k")):
        agent = SingleElimination(9, k=k, duels_per_match=7, seed=0)
        result = run_pure_exploration(agent, problem, seed=2)
        assert result.stopped and result.answer_type == answer_type and len(result.recommendation) == k
        depth = math.ceil(math.log2(math.ceil(9 / k))) + math.ceil(math.log2(k))
        matches = result.samples // 7
        assert result.samples % 7 == 0 and 8 <= matches <= 8 + (k - 1) * depth
        ranking = agent.ranking()
        assert sorted(ranking.tolist()) == list(range(9)) and tuple(ranking[:k]) == result.recommendation
    # m from the union bound: grows like 1/gap^2 and with log(k).
    m1 = SingleElimination(64, gap=0.1, delta=0.01).matches_duels
    assert m1 == math.ceil(math.log(6 / 0.01) / (2 * 0.01))
    assert SingleElimination(64, gap=0.05).matches_duels > 3.9 * m1
    assert SingleElimination(64, k=8).matches_duels > m1
    with pytest.raises(ValueError):
        SingleElimination(5, k=6)
    with pytest.raises(TypeError):
        SingleElimination(5, duels_per_match=2.5)


@pytest.mark.slow
def test_single_elimination_is_correct_with_probability_one_minus_delta():
    delta = 0.05
    problem = bradley_terry(np.random.default_rng(3).permutation(12) * 0.45)  # adjacent gaps >= 0.11
    for k in (1, 3):
        results = run_many(lambda: SingleElimination(12, k=k, gap=0.1, delta=delta), problem, range(40))
        assert np.mean([r.correct for r in results]) >= 1 - delta
        order = true_ranking(problem, "condorcet")[:k]
        assert np.mean([r.recommendation == tuple(order) for r in results]) >= 1 - delta  # sorted top-k


# ------------------------------------------------------------------------------------------
# Sequential Elimination (Falahatgar et al. 2017)
# ------------------------------------------------------------------------------------------
def test_sequential_elimination_paths_agree():
    assert_paths_agree(lambda: SequentialElimination(16, epsilon=0.2, delta=0.2), "sushi", 3000, seed=3)


def test_sequential_elimination_structure():
    agent = SequentialElimination(6, epsilon=0.1, delta=0.1, seed=0)
    assert agent.comparison_budget == math.ceil(2 * math.log(2 * 5 / 0.1) / 0.01)
    result = run_pure_exploration(agent, bradley_terry(np.arange(6) * 1.0), seed=1)
    assert result.stopped and 5 <= result.samples <= 5 * agent.comparison_budget
    assert agent.ranking()[0] == result.winner == agent.recommend()
    with pytest.raises(ValueError, match="epsilon_lower"):
        SequentialElimination(4, epsilon=0.1, epsilon_lower=0.1)


@pytest.mark.slow
def test_sequential_elimination_is_pac_and_adapts_to_the_gap():
    delta = 0.1
    assert_pac_on_utility_based_problems(lambda: SequentialElimination(10, epsilon=0.05, delta=delta), 10, 60, delta)
    assert_wide_gaps_cost_less(lambda: SequentialElimination(8))


# ------------------------------------------------------------------------------------------
# Successive Elimination on the Borda reduction (Jamieson et al. 2015)
# ------------------------------------------------------------------------------------------
def test_successive_elimination_borda_paths_agree():
    assert_paths_agree(lambda: SuccessiveEliminationBorda(16, delta=0.2), "sushi", 3000, seed=4)


def test_successive_elimination_borda_rounds():
    """Each round duels every active arm once against one reference arm (never against itself)."""
    problem = PreferenceMatrix(np.array([[0.5, 0.9, 0.9], [0.1, 0.5, 0.6], [0.1, 0.4, 0.5]]))
    agent = SuccessiveEliminationBorda(3, delta=0.1, seed=0)
    agent.reset(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(30):
        first, second = agent.act()
        assert first != second
        agent.observe((first, second), bool(rng.random() < problem.matrix[first, second]))
    result = run_pure_exploration(agent, problem, seed=0)
    assert result.stopped and result.correct and result.target == "borda"
    assert agent.ranking()[0] == 0 and agent.act() == (0, 0)


@pytest.mark.slow
def test_successive_elimination_borda_finds_the_borda_winner():
    delta = 0.1
    # Without a Condorcet winner the Borda winner is still identified; the bigger gap costs less.
    from dueling_gym.problems.generators import no_condorcet_winner

    problem = no_condorcet_winner(6, np.random.default_rng(1))
    results = run_many(lambda: SuccessiveEliminationBorda(6, delta=delta), problem, range(30))
    assert np.mean([r.correct for r in results]) >= 1 - delta
    easy = bradley_terry(np.arange(6) * 1.0)
    hard = bradley_terry(np.arange(6) * 0.3)
    easy_samples = np.mean([r.samples for r in run_many(lambda: SuccessiveEliminationBorda(6), easy, range(10))])
    hard_results = run_many(lambda: SuccessiveEliminationBorda(6), hard, range(10))
    assert all(r.correct for r in hard_results)
    assert easy_samples < 0.25 * np.mean([r.samples for r in hard_results])


# ------------------------------------------------------------------------------------------
# Preference-matrix estimator
# ------------------------------------------------------------------------------------------
def test_preference_estimator_paths_agree():
    assert_paths_agree(lambda: PreferenceEstimator(5, delta=0.2), "mslr5-condorcet", 3000, seed=5,
                       env_id="DuelingBandit-v0")


def test_preference_estimator_round_robin_and_budget():
    agent = PreferenceEstimator(4, delta=0.1)
    pairs = [agent.act()]
    agent.observe(pairs[0], True)
    for _ in range(5):
        pairs.append(agent.act())
        agent.observe(pairs[-1], True)
    assert sorted(pairs) == [(i, j) for i in range(4) for j in range(i + 1, 4)]  # one pass: every pair once
    capped = run_pure_exploration(PreferenceEstimator(4, budget=50), bradley_terry([0.0, 0.0, 1.0, 2.0]), seed=0)
    assert capped.stopped and capped.samples == 50  # the tied pair never decides: the budget stops it
    with pytest.raises(ValueError, match="score"):
        PreferenceEstimator(4, score="kemeny")


@pytest.mark.slow
def test_preference_estimator_ranks_correctly():
    delta = 0.1
    problem = bradley_terry([2.0, 0.0, 1.5, 0.5, 1.0])
    for score in ("copeland", "borda"):
        results = run_many(lambda: PreferenceEstimator(5, delta=delta, score=score), problem, range(20))
        assert np.mean([r.correct for r in results]) >= 1 - delta
        assert all(r.kendall_tau == 1.0 for r in results if r.correct)
    # Without a Condorcet winner: the unique Copeland winner and every pairwise sign are found.
    from dueling_gym.problems.generators import unique_copeland_winner

    problem = unique_copeland_winner(5, np.random.default_rng(0), min_gap=0.15)
    results = run_many(lambda: PreferenceEstimator(5, delta=delta), problem, range(10))
    assert np.mean([r.winner_correct and r.stopped for r in results]) >= 1 - delta


def assert_python_paths_agree(make_agent, problem_name: str, horizon: int, seed: int):
    """Python identification agents: the simulator's act/observe loop and a Gymnasium loop agree."""
    from agent_helpers import gym_loop
    from dueling_gym.experiments import simulate

    generic = simulate(make_agent(), problem_name, horizon, seed=seed, record_duels=True, fused=False)
    duels, outcomes, _ = gym_loop(make_agent(), problem_name, horizon, seed)
    np.testing.assert_array_equal(generic.duels, duels)
    np.testing.assert_array_equal(generic.outcomes, outcomes)


# ------------------------------------------------------------------------------------------
# PL-PAC (Szörényi et al. 2015)
# ------------------------------------------------------------------------------------------
def drive(procedure, better):
    """Run a duel procedure with the deterministic comparator ``better(i, j)``; returns (result, duels)."""
    duels = 0
    try:
        pair = next(procedure)
        while True:
            duels += 1
            pair = procedure.send(better(*pair))
    except StopIteration as stop:
        return stop.value, duels


def test_budgeted_quicksort_sorts_and_respects_its_budget():
    rng = np.random.default_rng(0)
    arms = list(rng.permutation(12))
    buckets, duels = drive(budgeted_quicksort(arms, 10_000, rng), lambda i, j: i < j)
    assert buckets == [[arm] for arm in range(12)] and duels <= 12 * 11 // 2
    buckets, duels = drive(budgeted_quicksort(arms, 7, rng), lambda i, j: i < j)
    assert duels == 7 and sorted(arm for bucket in buckets for arm in bucket) == list(range(12))
    # Buckets are ordered: every arm of an earlier bucket is better than every arm of a later one.
    flat_max = [max(bucket) for bucket in buckets]
    flat_min = [min(bucket) for bucket in buckets]
    assert all(flat_max[b] < flat_min[b + 1] for b in range(len(buckets) - 1)) and len(buckets) < 12


def test_pl_pac_paths_agree_and_answer():
    assert_python_paths_agree(lambda: PLPAC(16, epsilon=0.2, delta=0.2), "sushi", 1500, seed=1)
    agent = PLPAC(6, epsilon=0.1, delta=0.1)
    result = run_pure_exploration(agent, bradley_terry(np.arange(6) * 1.0), seed=0)
    assert result.stopped and agent.done and agent.act() == (result.winner, result.winner)
    assert agent.ranking()[0] == result.winner and agent.sorts >= 1


@pytest.mark.slow
def test_pl_pac_is_pac_under_plackett_luce():
    delta = 0.1
    assert_pac_on_utility_based_problems(lambda: PLPAC(8, epsilon=0.1, delta=delta), 8, 30, delta)
    easy = bradley_terry(np.arange(6) * 1.0)
    hard = bradley_terry(np.arange(6) * 0.3)
    easy_samples = np.mean([r.samples for r in run_many(lambda: PLPAC(6, epsilon=0.02), easy, range(10))])
    hard_samples = np.mean([r.samples for r in run_many(lambda: PLPAC(6, epsilon=0.02), hard, range(10))])
    assert easy_samples < 0.5 * hard_samples


# ------------------------------------------------------------------------------------------
# Mallows MPI / MPR (Busa-Fekete et al. 2014)
# ------------------------------------------------------------------------------------------
def mallows_problem(n_arms, phi, seed):
    return PreferenceMatrix(mallows_preferences(np.random.default_rng(seed).permutation(n_arms), phi), name="mallows")


def test_mallows_marginals_by_hand():
    phi = 0.5
    matrix = mallows_preferences([2, 0, 1], phi)
    assert matrix[2, 0] == pytest.approx(1 / (1 + phi)) and matrix[0, 1] == pytest.approx(1 / (1 + phi))
    # Two positions apart: h(3) - h(2) with h(k) = k / (1 - phi^k).
    assert matrix[2, 1] == pytest.approx(3 / (1 - phi ** 3) - 2 / (1 - phi ** 2))
    np.testing.assert_allclose(matrix + matrix.T, 1.0)
    np.testing.assert_array_equal(true_ranking(PreferenceMatrix(matrix), "condorcet"), [2, 0, 1])
    with pytest.raises(ValueError, match="phi"):
        mallows_preferences([0, 1], 1.0)
    with pytest.raises(ValueError, match="permutation"):
        mallows_preferences([0, 0], 0.5)


def test_mallows_paths_agree_and_answers():
    assert_python_paths_agree(lambda: MallowsMPI(16, delta=0.2), "sushi", 1500, seed=2)
    assert_python_paths_agree(lambda: MallowsMPR(16, delta=0.2), "sushi", 1500, seed=2)
    problem = mallows_problem(7, 0.3, 0)
    mpi = run_pure_exploration(MallowsMPI(7, delta=0.05), problem, seed=0)
    mpr_agent = MallowsMPR(7, delta=0.05)
    mpr = run_pure_exploration(mpr_agent, problem, seed=0)
    assert mpi.stopped and mpi.answer_type == "winner"
    assert mpr.stopped and mpr.answer_type == "ranking" and len(mpr.recommendation) == 7
    assert mpr_agent.comparison_bound == 7 * 3 and mpr.winner == mpr.recommendation[0]


@pytest.mark.slow
def test_mallows_mpi_and_mpr_are_correct_and_cheaper_for_concentrated_models():
    delta = 0.1
    for phi in (0.5, 0.8):
        problem = mallows_problem(8, phi, 1)
        mpi = run_many(lambda: MallowsMPI(8, delta=delta), problem, range(20))
        mpr = run_many(lambda: MallowsMPR(8, delta=delta), problem, range(20))
        assert np.mean([r.correct for r in mpi]) >= 1 - delta
        assert np.mean([r.correct for r in mpr]) >= 1 - delta and np.mean([r.kendall_tau for r in mpr]) > 0.95
    # rho = (1 - phi) / (1 + phi): samples grow like 1/rho^2 (Theorems 3 and 5).
    samples = {phi: np.mean([r.samples for r in run_many(lambda: MallowsMPR(8), mallows_problem(8, phi, 2),
                                                          range(10))]) for phi in (0.3, 0.8)}
    assert samples[0.3] < 0.25 * samples[0.8]


# ------------------------------------------------------------------------------------------
# Multisort (Maystre & Grossglauser 2017)
# ------------------------------------------------------------------------------------------
def test_multisort_paths_agree_and_budget():
    assert_python_paths_agree(lambda: Multisort(16, n_sorts=3), "sushi", 1500, seed=3)
    problem = bradley_terry(np.arange(8) * 2.0)
    agent = Multisort(8, n_sorts=4)
    result = run_pure_exploration(agent, problem, seed=0)
    assert result.stopped and agent.completed_sorts == 4 and result.answer_type == "ranking"
    assert 4 * 7 <= result.samples <= 4 * 28  # each QuickSort: between K - 1 and K (K - 1) / 2 duels
    capped = run_pure_exploration(Multisort(8, n_sorts=100, budget=50), problem, seed=0)
    assert capped.stopped and capped.samples <= 50


@pytest.mark.slow
def test_multisort_ranking_improves_with_more_sorts():
    problem = bradley_terry(np.random.default_rng(4).permutation(10) * 0.5)
    taus = {n: np.mean([r.kendall_tau for r in run_many(lambda: Multisort(10, n_sorts=n), problem, range(30))])
            for n in (1, 15)}
    assert taus[15] > taus[1] and taus[15] > 0.8


def test_ranking_correct_allows_ties_only():
    tied = PreferenceMatrix(np.array([[0.5, 0.9, 0.9], [0.1, 0.5, 0.5], [0.1, 0.5, 0.5]]))
    assert ranking_correct([0, 2, 1], tied, "borda") and ranking_correct([0, 1, 2], tied, "borda")
    assert not ranking_correct([1, 0, 2], tied, "borda")
    assert kendall_tau([0, 2, 1], tied, "borda") == pytest.approx(2 / 3)  # the tied pair counts as neither


def test_procedure_agents_validate_input_and_reset_cleanly():
    agent = MallowsMPI(4, delta=0.1, seed=0)
    pair = agent.act()
    with pytest.raises(TypeError):
        agent.observe(pair, 0.3)
    with pytest.raises(ValueError):
        agent.observe((0, 9), True)
    agent.observe((pair[1], pair[0]) if pair[0] != pair[1] else pair, True)  # not the requested duel: ignored
    assert agent.act() == pair
    for _ in range(5):
        agent.observe(agent.act(), True)
    agent.reset(seed=0)  # abandons the comparison in progress; the fresh run starts from nothing
    assert agent.counts.sum() == 0 and agent.act() == pair and not agent.done
    assert list(agent.top_k(2)) == list(agent.ranking()[:2])
