"""The learned-vs-classic evaluation: its follow-up stage, its worker processes, and the cached
policy weights the learned agent reads once per file."""

from __future__ import annotations

import csv
import os

import numpy as np
import pytest

from dueling_gym.agents import make_agent
from dueling_gym.agents.learned import DATA_DIRECTORY, load_policy_weights
from dueling_gym.experiments.studies import learned_evaluation
from dueling_gym.experiments.studies.learned_evaluation import evaluate


def _scripted_regrets(calls: list):
    """A stand-in for the simulation: ``learned`` scores 10 on every run; ``close`` 10 ± 1 (tied
    with it on any sample), ``better`` 2 (the policy is above it), ``beaten`` 30 (below it),
    ``near`` 10.2 ± 0.5 on the first stage's problems (tied) and 12 ± 0.5 on the follow-up's (below)."""
    def regrets(task):
        name, runs, horizons, options = task
        calls.append((name, [problem for problem, _ in runs], list(horizons)))
        seeds = np.array([seed for _, seed in runs], dtype=float)
        follow_up = len(horizons) == 1
        value = {"learned": np.full(seeds.size, 10.0), "close": 10.0 + np.where(seeds % 2 == 0, 1.0, -1.0),
                 "better": np.full(seeds.size, 2.0), "beaten": np.full(seeds.size, 30.0),
                 "near": np.full(seeds.size, 12.0 if follow_up else 10.2) + np.where(seeds % 2 == 0, 0.5, -0.5)}[name]
        return np.repeat(value[:, None], len(horizons), axis=1)
    return regrets


def test_the_follow_up_replays_only_what_the_first_stage_left_short_of_below_on_fresh_problems(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(learned_evaluation, "_agent_regrets", _scripted_regrets(calls))
    evaluate(tmp_path, agents=["learned", "close", "better", "beaten", "near"], families=("utility_based",), n_arms=5,
             horizons=(20, 50), n_problems=6, follow_up_problems=8, follow_up_horizon=50)
    rows = list(csv.DictReader((tmp_path / "follow_up.csv").open()))
    # Everything not below is replayed ("better" too), against the policy on the same 8 problems.
    assert [(row["classic_agent"], row["verdict"], row["runs"]) for row in rows] == [
        ("close", "tied", "8"), ("better", "above", "8"), ("near", "below", "8")]
    assert float(rows[2]["difference"]) == pytest.approx(-2.0)
    first_stage = [problems for name, problems, horizons in calls if len(horizons) == 2]
    follow_up = [problems for name, problems, horizons in calls if horizons == [50]]
    assert [name for name, _, horizons in calls if horizons == [50]] == ["learned", "close", "better", "near"]
    assert all(len(problems) == 8 for problems in follow_up)
    assert all(np.array_equal(a.matrix, b.matrix) for a, b in zip(follow_up[0], follow_up[1]))
    fresh = {problem.matrix.tobytes() for problem in follow_up[0]}
    assert fresh.isdisjoint(problem.matrix.tobytes() for problem in first_stage[0])
    summary = (tmp_path / "summary.md").read_text()
    assert "on 8 fresh problems" in summary and "| utility_based K=5 | 50 | better | 10.0 | 2.0 | +8.0 ± 0.0 | above |" in summary


def test_no_follow_up_file_when_everything_is_below_and_stale_files_are_removed(tmp_path, monkeypatch):
    (tmp_path / "follow_up.csv").write_text("from an earlier run")
    monkeypatch.setattr(learned_evaluation, "_agent_regrets", _scripted_regrets([]))
    evaluate(tmp_path, agents=["learned", "beaten"], families=("utility_based",), n_arms=5, horizons=(50,),
             n_problems=4, follow_up_problems=8, follow_up_horizon=50)
    assert not (tmp_path / "follow_up.csv").exists() and "Follow-up" not in (tmp_path / "summary.md").read_text()


def test_follow_up_options_are_checked(tmp_path):
    with pytest.raises(ValueError, match="follow_up_horizon must be one of the horizons"):
        evaluate(tmp_path, agents=["random"], horizons=(20, 50), n_problems=2, follow_up_problems=5, follow_up_horizon=100)
    with pytest.raises(ValueError, match="jobs"):
        evaluate(tmp_path, agents=["random"], horizons=(20,), n_problems=2, jobs=0)


def test_worker_processes_give_the_same_results_as_one_process(tmp_path):
    settings = dict(agents=["learned", "winner_stays_strong", "rmed1"], families=("utility_based",), n_arms=5,
                    horizons=(30, 60), n_problems=3, follow_up_problems=4, follow_up_horizon=60)
    one = evaluate(tmp_path / "one", jobs=1, **settings)
    two = evaluate(tmp_path / "two", jobs=2, **settings)
    assert one == two
    for name in ("summary.md", "paired.csv"):
        assert (tmp_path / "one" / name).read_text() == (tmp_path / "two" / name).read_text()


def test_agents_keep_their_own_copy_of_cached_weights_and_a_rewritten_file_is_read_again(tmp_path):
    weights, _ = load_policy_weights(DATA_DIRECTORY / "learned_k5.npz", 5)
    path = tmp_path / "policy.npz"
    np.savez(path, **weights, n_arms=np.array(5), hidden=np.array(weights["W1"].shape[1]))
    first = make_agent("learned", 5, seed=0, policy=str(path))
    first._load()["w"][:] = 0.0  # must not reach the next agent through the cache
    second = make_agent("learned", 5, seed=0, policy=str(path))
    assert np.array_equal(second._load()["w"], weights["w"])
    np.savez(path, **{**weights, "w": weights["w"] * 2.0}, n_arms=np.array(5), hidden=np.array(weights["W1"].shape[1]))
    status = path.stat()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 10**9))  # a new modification time, whatever the clock
    third = make_agent("learned", 5, seed=0, policy=str(path))
    assert np.array_equal(third._load()["w"], weights["w"] * 2.0)


def test_the_preset_runs_the_follow_up_with_the_workers_asked_for(tmp_path, monkeypatch, capsys):
    from dueling_gym.cli import main
    from dueling_gym.experiments.studies.presets import get_preset

    from dueling_gym.experiments.studies import learned_consistency

    full = get_preset("learned-vs-classic").sweep_arguments(quick=False)
    assert (full["follow_up_problems"], full["follow_up_horizon"]) == ({4: 40_000, 5: 40_000, 8: 40_000, 16: 0}, 1000)
    assert full["consistency"]["long_horizon"] == 100_000 and full["consistency"]["further_horizon"] == 1_000_000
    assert set(full["consistency"]["published"]) == set(full["published"])
    received, checked = {}, {}

    def record(output_dir, **options):
        received.update(options)
        (output_dir / "summary.md").write_text("the summary\n")
        (output_dir / "follow_up.csv").write_text("problems\n")
        return []

    def record_check(output_dir, published, **options):
        checked.update(options, published=published)
        (output_dir / "consistency.csv").write_text("problems\n")
        return [{"problems": "cyclic4", "agent": "learned", "variant": "as shipped", "horizon": 1000,
                 "long_horizon": 10_000, "mean": 1.0, "long_mean": 1.5, "growth": 1.5, "growth_low": 1.2,
                 "growth_high": 1.9, "runs": 2, "verdict": "logarithmic", "fast_runs": 0, "pass_share": 1.0,
                 "lower_bound": 2.0,
                 "long_lower_bound": 3.0, "bound_share": 0.5}]

    monkeypatch.setattr(learned_evaluation, "evaluate", record)
    monkeypatch.setattr(learned_consistency, "check_consistency", record_check)
    assert main(["reproduce", "learned-vs-classic", "--quick", "--out", str(tmp_path), "--jobs", "2", "--no-progress"]) == 0
    assert (received["follow_up_problems"], received["follow_up_horizon"], received["jobs"]) == (20, 1000, 2)
    assert received["n_arms"] == (5,) and received["progress"] is False
    assert checked["published"] == ("cyclic4",) and checked["jobs"] == 2 and checked["long_horizon"] == 10_000
    assert checked["references"] == ("rmed1",)
    printed = capsys.readouterr().out
    assert "the summary" in printed and "Consistency" in printed
    assert "(units/, follow_up.csv, consistency.csv, summary.md)" in printed  # the files written


def test_robustness_holds_every_agent_to_the_best_other_classic_agent():
    """Each agent against the best classic agent other than itself, by the paired rule; the
    learned policy is never an opponent of a classic agent."""
    runs = np.arange(6, dtype=float)
    jitter = np.where(runs % 2 == 0, 0.5, -0.5)
    per_run = {}
    for problem_set, values in {"easy": {"learned": 1.0, "steady": 5.0, "erratic": 5.0},
                                "hard": {"learned": 20.0, "steady": 9.0, "erratic": 30.0}}.items():
        for agent, level in values.items():
            # Two horizons: the second doubles every regret (same verdicts).
            column = level + (jitter if agent == "erratic" else np.zeros(runs.size))
            per_run[problem_set, agent] = np.stack([column, 2 * column], axis=1)
    rows = learned_evaluation.robustness(per_run, [100, 1000])
    assert len(rows) == 6 and {row["problem_sets"] for row in rows} == {2}
    above = {(row["agent"], row["horizon"]): (row["below"], row["tied"], row["above"]) for row in rows}
    # learned: below steady on easy, above steady on hard.
    assert above["learned", 100] == above["learned", 1000] == (1, 0, 1)
    # steady against erratic only (learned is not its opponent): tied on easy, below on hard.
    assert above["steady", 100] == (1, 1, 0)
    # erratic against steady: tied on easy, above on hard.
    assert above["erratic", 1000] == (0, 1, 1)
    text = learned_evaluation.robustness_summary(rows)
    assert "| learned | 1 | 1 | 2 of 4 |" in text and "| steady | 0 | 0 | 0 of 4 |" in text
    assert text.index("| steady |") < text.index("| erratic |") < text.index("| learned |")


def test_published_runs_relabel_the_arms_run_by_run_with_the_sweeps_permutation():
    from dueling_gym.experiments.studies.learned_evaluation import published_runs
    from dueling_gym.experiments.sweeps.units import arm_permutation
    from dueling_gym.problems import load_problem

    gap = load_problem("gap")
    runs = published_runs(gap, range(6))
    assert [seed for _, seed in runs] == list(range(6))
    for problem, seed in runs:
        permutation = arm_permutation(seed, 5, True)
        # (equal up to rounding: the matrix is stored with its lower triangle rebuilt from the upper)
        np.testing.assert_allclose(problem.matrix, gap.matrix[np.ix_(permutation, permutation)], rtol=0, atol=1e-12)
        # Relabelling changes no regret: arm k of the run is arm permutation[k] of the matrix.
        np.testing.assert_allclose(problem.arm_gaps("copeland_komiyama"), gap.arm_gaps("copeland_komiyama")[permutation])
    # The winner does not stay at index 0 (the published order lists the best arm first).
    assert {int(problem.copeland_winners[0]) for problem, _ in runs} != {0}
    assert all(problem is gap for problem, _ in published_runs(gap, range(3), relabel=False))
    with pytest.raises(TypeError, match="relabel_published"):
        evaluate("unused", published=("gap",), relabel_published="yes")


def test_a_published_unit_is_rebuilt_from_its_record_with_the_same_relabelled_runs(tmp_path):
    from dueling_gym.experiments.studies.learned_evaluation import EvaluationUnit, published_runs, published_source
    from dueling_gym.problems import load_problem

    arxiv = load_problem("arxiv")
    for relabel in (True, False):
        runs = published_runs(arxiv, range(4), relabel)
        unit = EvaluationUnit("random", "arxiv", published_source("arxiv", relabel), 0,
                              tuple(problem for problem, _ in runs), tuple(range(4)), (10, 20), {})
        again = EvaluationUnit.from_record({"identity": unit.identity, "options": {}})
        assert again.identity == unit.identity
        assert all(np.array_equal(a.matrix, b.matrix) for a, b in zip(again.problems, unit.problems))
    # The two orders are different runs, never one reused as the other.
    relabelled, published = (EvaluationUnit("random", "arxiv", published_source("arxiv", relabel), 0,
                                            tuple(p for p, _ in published_runs(arxiv, range(4), relabel)),
                                            tuple(range(4)), (10, 20), {}) for relabel in (True, False))
    assert relabelled.key != published.key


def test_the_published_order_hands_an_index_biased_agent_the_winner_and_relabelling_takes_it_away():
    """SCB recommends the lowest index among tied arms while it explores; Gap lists its Copeland
    winner first, so in the published order SCB plays it before it has learned anything."""
    from dueling_gym.experiments.studies.learned_evaluation import published_runs
    from dueling_gym.experiments.simulate import simulate
    from dueling_gym.problems import load_problem

    gap = load_problem("gap")
    means = {}
    for relabel in (False, True):
        regrets = [simulate(make_agent("scb", 5, seed=0), problem, 100, seed=seed)
                   .final_regret("copeland_komiyama") for problem, seed in published_runs(gap, range(100, 140), relabel)]
        means[relabel] = float(np.mean(regrets))
    # 15.8 against 23.8 (uniformly random duels: 25).
    assert means[False] < 18 < 22 < means[True]
