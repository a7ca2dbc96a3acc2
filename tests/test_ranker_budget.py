"""The comparison budget of ranker evaluations: the sequential rule (its schedule, its error
guarantee on pairs whose preference is known, the prefix property of its batches, independence of
the worker threads), the confidence in the printed winners, the cache of sequential estimates,
the command line and the RankerDuel environment under the one default."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.special import betainc

from dueling_gym.cli import main
from dueling_gym.envs.ranker_duel import RankerDuelEnv
from dueling_gym.problems import ranker_problems
from dueling_gym.problems.ltr_files import LTRData, write_ltr_file
from dueling_gym.problems.problem_files import read_problem_file
from dueling_gym.problems.ranker_budget import (
    DEFAULT_BUDGET,
    NEAR_TIE,
    NOT_A_PAIR,
    SETTLED,
    UNSETTLED,
    ComparisonBudget,
    resolve_budget,
)
from dueling_gym.problems.ranker_cache import cache_key, signature
from dueling_gym.problems.ranker_problems import ranker_evaluation, synthetic_ltr_data
from dueling_gym.problems.structure_confidence import structure_confidence

SMALL = ComparisonBudget(max_comparisons=1600, first_batch=100)


def _twin_data(n_queries=40, seed=0):
    """Rankers 0 and 1 are the same ranker (so P[0, 1] = 1/2 exactly: team draft is symmetric in
    its coins), ranker 2 orders by the grade (it beats both clearly), ranker 3 by noise."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(4, 12, size=n_queries)
    grades = rng.choice(5, size=int(sizes.sum()), p=[0.5, 0.25, 0.15, 0.07, 0.03])
    noise = rng.standard_normal(grades.size)
    features = np.column_stack([noise, noise, grades + 0.01 * rng.random(grades.size),
                                rng.standard_normal(grades.size)]).astype(np.float32)
    return LTRData.from_arrays(features, grades, np.concatenate(([0], np.cumsum(sizes))))


# ---------------------------------------------------------------------------------- the rule
def test_the_default_schedule_and_fixed_budgets():
    assert DEFAULT_BUDGET.looks == (200, 400, 800, 1600, 3200, 6400, 12800, 20000)
    assert not DEFAULT_BUDGET.is_fixed and DEFAULT_BUDGET.largest_batch == 7200
    fixed = ComparisonBudget.fixed(1000)
    assert fixed.is_fixed and fixed.looks == (1000,) and fixed.largest_batch == 1000
    assert resolve_budget(None, None) is DEFAULT_BUDGET
    assert resolve_budget(500, None) == ComparisonBudget.fixed(500)
    assert DEFAULT_BUDGET.level(10) == pytest.approx(0.05 / 80)
    described = DEFAULT_BUDGET.describe()
    assert json.loads(json.dumps(described)) == described and described["mode"] == "sequential"


@pytest.mark.parametrize("arguments, error, message", [
    ({"max_comparisons": 100, "first_batch": 200}, ValueError, r"max_comparisons \(100\) must be at least first_batch"),
    ({"first_batch": 1}, ValueError, "first_batch must be at least 2"),
    ({"error_rate": 0.0}, ValueError, "error_rate must be > 0.0"),
    ({"error_rate": 1.0}, ValueError, "error_rate must be < 1.0"),
    ({"tolerance": 0.5}, ValueError, "tolerance must be < 0.5"),
    ({"growth": 1.0}, ValueError, "growth must be > 1.0"),
    ({"growth": 1.001}, ValueError, "more than 200 looks"),
    ({"max_comparisons": 2000.0}, TypeError, "max_comparisons must be an integer"),
    ({"error_rate": "0.05"}, TypeError, "error_rate must be a number"),
])
def test_bad_budgets_are_refused(arguments, error, message):
    with pytest.raises(error, match=message):
        ComparisonBudget(**arguments)


def test_a_budget_and_a_fixed_count_are_not_given_together():
    with pytest.raises(ValueError, match="not both"):
        resolve_budget(100, DEFAULT_BUDGET)
    with pytest.raises(TypeError, match="budget must be a ComparisonBudget"):
        resolve_budget(None, 1000)
    with pytest.raises(ValueError, match="comparisons_per_pair must be at least 2"):
        ComparisonBudget.fixed(1)


def _run_rule(budget, probabilities, n_pairs, rng):
    """Play one pair with (win, tie, loss) probabilities look after look, as the estimate does."""
    counts = np.zeros(3, dtype=np.int64)
    played = 0
    for look in budget.looks:
        counts += rng.multinomial(look - played, probabilities)
        played = look
        status = budget.status(int(counts[0]), int(counts[2]), int(counts[1]), n_pairs)
        if status != UNSETTLED:
            break
    return status, counts


def test_a_pair_at_exactly_one_half_is_not_settled_beyond_the_stated_rate():
    """With error_rate 0.5 and one pair the rule may settle a 1/2 pair in at most half the runs; an
    interval too narrow by a factor 3 would settle it in most of them."""
    budget = ComparisonBudget(max_comparisons=6400, first_batch=50, error_rate=0.5, tolerance=0.05)
    rng = np.random.default_rng(1)
    statuses = [_run_rule(budget, [0.35, 0.3, 0.35], 1, rng)[0] for _ in range(2000)]
    settled = statuses.count(SETTLED) / len(statuses)
    assert settled <= 0.05  # the union bound is conservative; 0.5 is what the rule promises
    assert statuses.count(NEAR_TIE) > 0.9 * len(statuses)  # and the pair is recognised as a near-tie


@pytest.mark.parametrize("probabilities", [[0.45, 0.2, 0.35], [0.3, 0.3, 0.4], [0.2, 0.61, 0.19],
                                           [0.5, 0.02, 0.48]])
def test_every_decision_is_on_the_true_side(probabilities):
    """Settled pairs lie on their true side, near-ties within the tolerance; clear pairs all settle."""
    truth = probabilities[0] + probabilities[1] / 2 - 0.5
    rng = np.random.default_rng(2)
    for _ in range(200):
        status, counts = _run_rule(DEFAULT_BUDGET, probabilities, 100, rng)
        if status == SETTLED:
            assert np.sign(counts[0] - counts[2]) == np.sign(truth)
        elif status == NEAR_TIE:
            assert abs(truth) < DEFAULT_BUDGET.tolerance
        assert status == SETTLED or abs(truth) < 0.05


def test_ties_narrow_the_interval():
    """The empirical Bernstein interval profits from ties (a tie scores 1/2): many ties, narrower interval."""
    plain, tied = DEFAULT_BUDGET.radius(500, 500, 0, 10), DEFAULT_BUDGET.radius(50, 50, 900, 10)
    hoeffding = math.sqrt(math.log(4 / DEFAULT_BUDGET.level(10)) / 2000)
    assert plain == pytest.approx(hoeffding) and tied < 0.7 * hoeffding


# ---------------------------------------------------------------------------------- on ranker problems
def test_twin_rankers_never_settle_and_a_clear_winner_settles_early():
    data = _twin_data()
    budget = ComparisonBudget(max_comparisons=3200, first_batch=100, tolerance=0.05)
    for seed in range(4):
        matrix = ranker_evaluation(data, budget=budget, seed=seed, jobs=1, progress=False)
        statuses, comparisons = matrix.provenance["pair_status"], matrix.provenance["comparisons"]
        assert statuses[0, 1] in (NEAR_TIE, UNSETTLED)
        assert statuses[0, 2] == statuses[1, 2] == SETTLED and comparisons[0, 2] <= 400
        assert matrix.condorcet_winner == 2 and matrix[2, 0] > 0.5
        assert np.all(np.diagonal(statuses) == NOT_A_PAIR)
        assert sum(matrix.provenance["status_counts"].values()) == 6


def test_batches_reproduce_the_fixed_budgets_first_comparisons():
    data = synthetic_ltr_data(30, (3, 10), 5, seed=3)
    sequential = ranker_evaluation(data, budget=SMALL, seed=4, jobs=1, progress=False)
    played = sequential.provenance["comparisons"]
    assert len(np.unique(played[np.triu_indices(5, 1)])) > 1  # pairs stopped at different looks
    for n in np.unique(played[np.triu_indices(5, 1)]):
        fixed = ranker_evaluation(data, comparisons_per_pair=int(n), seed=4, jobs=1, progress=False)
        same = played == n
        for name in ("wins", "ties"):
            np.testing.assert_array_equal(sequential.provenance[name][same], fixed.provenance[name][same])


def test_the_sequential_estimate_does_not_depend_on_the_threads():
    data = synthetic_ltr_data(30, (3, 10), 6, seed=5)
    one = ranker_evaluation(data, budget=SMALL, seed=2, jobs=1, progress=False)
    three = ranker_evaluation(data, budget=SMALL, seed=2, jobs=3, progress=False)
    for name in ("wins", "ties", "comparisons", "pair_status"):
        np.testing.assert_array_equal(one.provenance[name], three.provenance[name])
    assert one.provenance["structure_confidence"] == three.provenance["structure_confidence"]


def test_the_provenance_records_the_rule_and_the_fixed_mode():
    data = synthetic_ltr_data(20, (3, 8), 4, seed=1)
    fixed = ranker_evaluation(data, comparisons_per_pair=300, jobs=1, progress=False)
    assert fixed.provenance["comparisons_per_pair"] == 300 and fixed.provenance["budget"]["mode"] == "fixed"
    assert fixed.provenance["total_comparisons"] == 6 * 300
    assert "fixed budget of 300 comparisons per pair" in fixed.source
    sequential = ranker_evaluation(data, budget=SMALL, jobs=1, progress=False)
    assert sequential.provenance["comparisons_per_pair"] is None
    assert sequential.provenance["budget"] == SMALL.describe()
    assert sequential.provenance["pair_status_names"] == ["unsettled", "near-tie", "settled"]
    confidence = sequential.provenance["structure_confidence"]
    assert confidence["copeland_winners"] == list(sequential.copeland_winners)
    assert confidence["condorcet_winner"] == sequential.condorcet_winner
    with pytest.raises(ValueError, match="not both"):
        ranker_evaluation(data, comparisons_per_pair=300, budget=SMALL, progress=False)


# ---------------------------------------------------------------------------------- confidence
def test_the_confidence_of_two_arms_is_the_beta_posterior():
    for wins, losses in ((12, 8), (40, 45), (3, 3)):
        counts = np.array([[0, wins], [losses, 0]])
        result = structure_confidence(counts, np.array([[0, 7], [7, 0]]), draws=20000,
                                      rng=np.random.default_rng(0))
        first_ahead = 1.0 - betainc(1 + wins, 1 + losses, 0.5)  # P(Beta(1 + wins, 1 + losses) > 1/2)
        expected = first_ahead if wins > losses else (1 - first_ahead if losses > wins else 0.0)
        assert result.p_condorcet == pytest.approx(expected, abs=0.015)
        if wins == losses:  # the printed structure (a tie: both arms Copeland winners) has probability 0
            assert result.copeland_winners == (0, 1) and result.condorcet_winner is None


def test_the_confidence_sees_which_pairs_matter():
    """Arm 0 beats everyone by far except arm 1, against which it is a coin flip: its Condorcet
    status is uncertain; a near-even pair between two losers changes nothing."""
    wins = np.array([[0, 51, 90, 90], [49, 0, 90, 90], [10, 10, 0, 50], [10, 10, 50, 0]])
    wins[2, 3], wins[3, 2] = 51, 49
    ties = np.zeros_like(wins)
    result = structure_confidence(wins, ties, rng=np.random.default_rng(1))
    assert result.condorcet_winner == 0 and result.copeland_winners == (0,)
    assert 0.45 < result.p_condorcet < 0.7 and not result.settled
    wins[0, 1], wins[1, 0] = 90, 10
    result = structure_confidence(wins, ties, rng=np.random.default_rng(1))
    assert result.p_condorcet == result.p_copeland == 1.0 and result.settled
    again = structure_confidence(wins, ties, rng=np.random.default_rng(1))
    assert again == result


def test_bad_counts_are_refused():
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match="integer counts"):
        structure_confidence(np.zeros((3, 3)), np.zeros((3, 3), dtype=int), rng=rng)
    with pytest.raises(ValueError, match="symmetric"):
        structure_confidence(np.zeros((2, 2), dtype=int), np.array([[0, 1], [2, 0]]), rng=rng)
    with pytest.raises(ValueError, match="zero diagonal"):
        structure_confidence(np.eye(2, dtype=int), np.zeros((2, 2), dtype=int), rng=rng)
    with pytest.raises(TypeError, match="Generator"):
        structure_confidence(np.zeros((2, 2), dtype=int), np.zeros((2, 2), dtype=int), rng=0)


# ---------------------------------------------------------------------------------- cache
def _cached(tmp_path):
    path, cache = tmp_path / "train.txt", tmp_path / "cache"
    write_ltr_file(path, synthetic_ltr_data(25, (3, 10), 5, seed=11))
    first = ranker_evaluation(path, budget=SMALL, cache_dir=cache, jobs=1, progress=False)
    (file,) = cache.glob("ranker_evaluation-*.npz")
    return path, cache, file, first


def _resign_with_the_folders_secret(file, cache, edit):
    with np.load(file) as stored:
        contents = {name: np.array(stored[name]) for name in stored.files}
    counts = {name: contents[name].copy() for name in ("wins", "ties", "comparisons")}
    edit(counts)
    facts_json, key = str(contents["facts"]), str(contents["key"])
    secret = (cache / ".signing-key").read_bytes()
    with open(file, "wb") as stream:
        np.savez(stream, key=np.array(key), facts=np.array(facts_json),
                 signature=np.array(signature(secret, key, counts, facts_json)), **counts)


def _off_schedule(counts):
    """One more tie: the pair's count is no look of the budget."""
    counts["ties"][0, 1] += 1
    counts["ties"][1, 0] += 1
    counts["comparisons"][0, 1] += 1
    counts["comparisons"][1, 0] += 1


def _stopped_undecided(counts):
    """A pair that stopped early made even: the rule would have played on."""
    played = counts["comparisons"]
    first, second = np.argwhere(np.triu(played < SMALL.max_comparisons, 1))[0]
    n = int(played[first, second])
    counts["wins"][first, second] = counts["wins"][second, first] = n // 2
    counts["ties"][first, second] = counts["ties"][second, first] = n - 2 * (n // 2)


def test_a_sequential_estimate_round_trips_through_the_cache(tmp_path, monkeypatch):
    path, cache, _, first = _cached(tmp_path)

    def no_simulation(*args, **kwargs):
        raise AssertionError("the cached result should have been used")

    with monkeypatch.context() as patch:
        patch.setattr(ranker_problems, "estimate_preferences", no_simulation)
        again = ranker_evaluation(path, budget=SMALL, cache_dir=cache, progress=False)
    assert again == first
    for name in ("comparisons", "pair_status"):
        np.testing.assert_array_equal(again.provenance[name], first.provenance[name])
    assert again.provenance["structure_confidence"] == first.provenance["structure_confidence"]
    # Another rule, another file.
    ranker_evaluation(path, budget=ComparisonBudget(max_comparisons=1600, first_batch=100, error_rate=0.1),
                      cache_dir=cache, jobs=1, progress=False)
    assert len(list(cache.glob("ranker_evaluation-*.npz"))) == 2


@pytest.mark.parametrize("edit", [_off_schedule, _stopped_undecided])
def test_counts_the_rule_cannot_have_played_are_refused(tmp_path, edit):
    path, cache, file, first = _cached(tmp_path)
    _resign_with_the_folders_secret(file, cache, edit)
    with pytest.warns(UserWarning, match="inconsistent"):
        again = ranker_evaluation(path, budget=SMALL, cache_dir=cache, jobs=1, progress=False)
    np.testing.assert_array_equal(again.provenance["wins"], first.provenance["wins"])


def test_the_cache_key_holds_the_rule():
    settings = {"rankers": "features", "interleaving": "team_draft", "click_model": "perfect", "cutoff": 10,
                "tie_break_seed": 0}
    budgets = [DEFAULT_BUDGET, ComparisonBudget.fixed(1000), ComparisonBudget.fixed(1000, error_rate=0.01),
               ComparisonBudget(tolerance=0.01), ComparisonBudget(max_comparisons=40000)]
    keys = {cache_key("digest", settings, budget, 0, "error") for budget in budgets}
    assert len(keys) == len(budgets)
    with pytest.raises(TypeError, match="budget must be a ComparisonBudget"):
        cache_key("digest", settings, 1000, 0, "error")


# ---------------------------------------------------------------------------------- command line, environment
def test_the_command_line_prints_the_confidence_and_warns_when_it_is_low(tmp_path, capsys):
    path = tmp_path / "twins.txt"
    write_ltr_file(path, _twin_data())
    base = ["problems", "--from-ltr", str(path), "--no-cache", "--no-bounds", "--jobs", "1"]
    # 2 comparisons per pair cannot tell the rankers apart reliably.
    assert main(base + ["--comparisons", "2"]) == 0
    out = capsys.readouterr().out
    assert "Confidence: P(Copeland winners = " in out and "posterior draws from the counts" in out
    assert "(fixed budget, error rate 0.05)" in out
    assert "WARNING: the printed winners are not settled" in out and "a larger --comparisons N" in out
    saved = tmp_path / "twins.json"
    assert main(base + ["--max-comparisons", "3200", "--tolerance", "0.05", "--save", str(saved)]) == 0
    out = capsys.readouterr().out
    assert "P(Condorcet winner = 2) = 1.000" in out and "WARNING" not in out
    assert "(sequential budget, error rate 0.05)" in out and "near-ties (within 0.05 of 1/2)" in out
    problem = read_problem_file(saved)
    assert problem.provenance["budget"]["max_comparisons"] == 3200
    np.testing.assert_array_equal(problem.provenance["pair_status"][2], [SETTLED, SETTLED, NOT_A_PAIR, SETTLED])


def test_the_command_line_refuses_a_fixed_and_a_sequential_budget_together(tmp_path, capsys):
    path = tmp_path / "twins.txt"
    write_ltr_file(path, _twin_data(n_queries=5))
    with pytest.raises(SystemExit) as exit_status:
        main(["problems", "--from-ltr", str(path), "--no-cache", "--comparisons", "50", "--max-comparisons", "100"])
    assert exit_status.value.code == 2 and "--max-comparisons bounds the sequential budget" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["problems", "--from-ltr", str(path), "--no-cache", "--tolerance", "0.6"])
    assert "tolerance must be < 0.5" in capsys.readouterr().err


def test_the_help_states_each_default_once(capsys):
    with pytest.raises(SystemExit):
        main(["problems", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default 20000; batches end at 200, 400, ... comparisons)" in text
    assert "(default 0.05)" in text and "(default 0.025)" in text and "(default: None)" not in text
    assert text.count("default 20000") == 1


def test_the_environment_uses_the_one_default_and_passes_a_budget_on():
    data = _twin_data(n_queries=20)
    env = RankerDuelEnv(data)
    assert env.problem.provenance["budget"] == DEFAULT_BUDGET.describe()
    assert env.problem == ranker_evaluation(data, jobs=1, progress=False)
    fixed = RankerDuelEnv(data, comparisons_per_pair=100)
    assert fixed.problem.provenance["total_comparisons"] == 600
    small = RankerDuelEnv(data, budget=SMALL)
    assert small.problem.provenance["budget"] == SMALL.describe()
    with pytest.raises(ValueError, match="do not apply to preferences given as a matrix"):
        RankerDuelEnv(data, preferences=fixed.problem, budget=SMALL)
