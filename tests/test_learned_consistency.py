"""The learned policy's consistency check and the per-size problem counts of the evaluation."""

import csv
import math

import numpy as np
import pytest
import torch

from dueling_gym.experiments.studies.learned_consistency import (
    CHECK_RUNS,
    FAST_RUN_GROWTH,
    GROWTH_LIMIT,
    PAPER_DEFAULTS,
    check_consistency,
    consistency_summary,
    check_pass_share,
    growth_interval,
    main,
)
from dueling_gym.experiments.studies.learned_evaluation import evaluate
from dueling_gym.problems import load_problem, lower_bound_constant

torch.set_num_threads(1)


def test_growth_interval_resamples_runs_in_pairs():
    short = np.array([10.0, 20.0, 30.0, 40.0])
    assert growth_interval(short, 3 * short) == pytest.approx((3.0, 3.0))  # every resample: ratio 3
    low, high = growth_interval(short, np.array([10.0, 20.0, 30.0, 400.0]))
    assert 1.0 <= low < high <= 400.0 / 40.0
    assert growth_interval(short, short * 2, seed=1) == growth_interval(short, short * 2, seed=1)
    assert all(math.isnan(value) for value in growth_interval(np.array([1.0]), np.array([2.0])))
    with pytest.raises(ValueError, match="same runs"):
        growth_interval(short, short[:3])


def test_check_pass_share_is_the_share_of_resampled_checks_within_the_limit():
    short = np.full(10, 100.0)
    assert check_pass_share(short, 1.5 * short) == 1.0  # every run logarithmic: every check passes
    assert check_pass_share(short, 10.0 * short) == 0.0  # every run linear: none does
    # One run in ten commits (tenfold) among runs that grow 1.25-fold: a check of 20 runs passes
    # when it draws that run at most once (25 + 8.75 k <= 40), P(Binomial(20, 0.1) <= 1) = 0.392.
    long = np.r_[np.full(9, 125.0), 1000.0]
    assert check_pass_share(short, long, resamples=40_000) == pytest.approx(0.392, abs=0.01)
    assert check_pass_share(short, long, runs=1, resamples=40_000) == pytest.approx(0.9, abs=0.01)
    assert check_pass_share(short, long, seed=3) == check_pass_share(short, long, seed=3)
    assert check_pass_share(np.zeros(3), np.zeros(3)) == 1.0  # no regret at all: nothing grows
    with pytest.raises(ValueError, match="same runs"):
        check_pass_share(short, long[:3])
    with pytest.raises(ValueError, match="runs"):
        check_pass_share(short, long, runs=0)
    assert CHECK_RUNS == 20


def test_fast_runs_count_the_runs_whose_regret_grows_linearly(tmp_path):
    # Uniformly random duels: every run's regret grows tenfold from 200 to 2000 duels.
    rows = check_consistency(tmp_path / "c", ["cyclic4"], runs=3, horizon=200, long_horizon=2000,
                             references=["random"])
    random_row = rows[-1]
    assert random_row["agent"] == "random" and random_row["growth"] > FAST_RUN_GROWTH
    assert random_row["fast_runs"] == 3 and random_row["pass_share"] == 0.0


def test_consistency_runs_are_the_evaluations_runs(tmp_path):
    """The regret at the short horizon is the evaluation's, run for run (same matrix, seeds, agent)."""
    rows = check_consistency(tmp_path / "c", ["cyclic4"], runs=3, horizon=200, long_horizon=2000,
                             variants={"as shipped": {}, "safeguard": {"safeguard_from": 100}})
    assert [(row["problems"], row["agent"], row["variant"]) for row in rows] == [
        ("cyclic4", "learned", "as shipped"), ("cyclic4", "learned", "safeguard")]
    evaluated = evaluate(tmp_path / "e", agents=["learned"], families=(), published=["cyclic4"], runs_per_published=3,
                         horizons=(200,), plot=False)
    assert rows[0]["mean"] == pytest.approx(evaluated[0]["mean"], rel=0, abs=1e-12)
    for row in rows:
        assert row["growth"] == pytest.approx(row["long_mean"] / row["mean"])
        assert row["long_mean"] >= row["mean"]  # regret never decreases
        assert row["verdict"] == ("logarithmic" if row["growth"] <= GROWTH_LIMIT else "too fast")
        assert 0 <= row["fast_runs"] <= 3 and 0.0 <= row["pass_share"] <= 1.0
    with (tmp_path / "c" / "consistency.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 2
    text = consistency_summary(rows)
    assert "| cyclic4 | learned | safeguard |" in text and "bootstrap" in text
    # Resumed from its units: the same rows without running again.
    assert check_consistency(tmp_path / "c", ["cyclic4"], runs=3, horizon=200, long_horizon=2000,
                             variants={"as shipped": {}, "safeguard": {"safeguard_from": 100}}) == rows
    # In the published arm order too, both play the same (other) runs.
    ordered = check_consistency(tmp_path / "c", ["cyclic4"], runs=3, horizon=200, long_horizon=2000, relabel=False)
    in_order = evaluate(tmp_path / "e2", agents=["learned"], families=(), published=["cyclic4"], runs_per_published=3,
                        horizons=(200,), plot=False, relabel_published=False)
    assert ordered[0]["mean"] == pytest.approx(in_order[0]["mean"], rel=0, abs=1e-12)
    assert ordered[0]["long_mean"] != rows[0]["long_mean"]


def test_references_run_on_the_same_runs_and_rows_carry_the_lower_bound(tmp_path):
    """A classic reference's rows are the evaluation's runs of that agent; every row's bound is LB ln T."""
    rows = check_consistency(tmp_path / "c", ["cyclic4", "gap"], runs=3, horizon=200, long_horizon=2000,
                             references=["rmed1"])
    assert [(row["problems"], row["agent"], row["variant"]) for row in rows] == [
        ("cyclic4", "learned", "as shipped"), ("gap", "learned", "as shipped"),
        ("cyclic4", "rmed1", PAPER_DEFAULTS), ("gap", "rmed1", PAPER_DEFAULTS)]
    evaluated = evaluate(tmp_path / "e", agents=["rmed1"], families=(), published=["gap"], runs_per_published=3,
                         horizons=(200,), plot=False)
    assert rows[3]["mean"] == pytest.approx(evaluated[0]["mean"], rel=0, abs=1e-12)
    for row in rows:
        constant = lower_bound_constant(load_problem(row["problems"]))
        assert row["lower_bound"] == pytest.approx(constant * math.log(200))
        assert row["long_lower_bound"] == pytest.approx(constant * math.log(2000))
        assert row["bound_share"] == pytest.approx(row["long_mean"] / row["long_lower_bound"])
    # RMED1 targets a Condorcet winner; Gap has none, so its regret is linear there (Komiyama et al. 2016).
    assert rows[3]["verdict"] == "too fast" and rows[3]["bound_share"] > 1
    assert "| gap | rmed1 | paper's defaults |" in consistency_summary(rows)


def test_the_command_line_runs_the_check_with_every_classic_agent_on_request(tmp_path, capsys, monkeypatch):
    """``--references all`` asks for every classic agent of the registry; the rows are the function's."""
    import dueling_gym.experiments.studies.learned_consistency as module

    monkeypatch.setattr(module, "classic_agents", lambda: ["rmed1", "winner_stays_strong"])
    main(["--out", str(tmp_path / "c"), "--published", "cyclic4", "--references", "all", "--runs", "2",
          "--horizon", "100", "--long-horizon", "300"])
    with (tmp_path / "c" / "consistency.csv").open() as handle:
        written = list(csv.DictReader(handle))
    assert [row["agent"] for row in written] == ["learned", "rmed1", "winner_stays_strong"]
    assert "| cyclic4 | winner_stays_strong | paper's defaults |" in capsys.readouterr().out
    rows = check_consistency(tmp_path / "c", ["cyclic4"], runs=2, horizon=100, long_horizon=300,
                             references=["rmed1", "winner_stays_strong"])
    assert [float(row["long_mean"]) for row in written] == [row["long_mean"] for row in rows]
    # Another setting of the learned agent runs beside the shipped one, named by its options.
    main(["--out", str(tmp_path / "v"), "--published", "cyclic4", "--runs", "2", "--horizon", "100",
          "--long-horizon", "300", "--variant", "safeguard_from=150,safeguard_clock=start"])
    with (tmp_path / "v" / "consistency.csv").open() as handle:
        varied = list(csv.DictReader(handle))
    assert [row["variant"] for row in varied] == ["as shipped", "safeguard_from=150,safeguard_clock=start"]
    assert varied[0]["mean"] == varied[1]["mean"] == written[0]["mean"]  # the same runs before duel 150
    assert varied[0]["long_mean"] == written[0]["long_mean"]
    # Bad settings are usage errors that name the problem, before anything runs.
    for arguments, message in ((["--references", "rmed1,nope"], "unknown: ['nope']"),
                               (["--variant", "seed=3"], "seed"),
                               (["--published", "cyclic5"], "cyclic5"), (["--runs", "0"], "runs")):
        with pytest.raises(SystemExit) as exit_info:
            main(["--out", str(tmp_path / "bad"), *arguments])
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_a_further_horizon_adds_the_next_decade_from_the_same_runs(tmp_path):
    """With a third horizon the same runs go on: the first columns are those of two horizons, and
    the further growth is the ratio of the next means."""
    two = check_consistency(tmp_path / "a", ["cyclic4"], runs=3, horizon=200, long_horizon=2000)
    three = check_consistency(tmp_path / "b", ["cyclic4"], runs=3, horizon=200, long_horizon=2000,
                              further_horizon=20_000)
    row = three[0]
    assert {key: row[key] for key in two[0]} == pytest.approx(two[0])
    assert row["further_horizon"] == 20_000 and row["further_mean"] >= row["long_mean"]
    assert row["further_growth"] == pytest.approx(row["further_mean"] / row["long_mean"])
    assert row["further_growth_low"] <= row["further_growth"] <= row["further_growth_high"]
    assert row["further_verdict"] == ("logarithmic" if row["further_growth"] <= GROWTH_LIMIT else "too fast")
    constant = lower_bound_constant(load_problem("cyclic4"))
    assert row["further_bound_share"] == pytest.approx(row["further_mean"] / (constant * math.log(20_000)))
    text = consistency_summary(three)
    assert "T = 20000 over T = 2000" in text and "share of LB ln T at T = 20000" in text
    with pytest.raises(ValueError, match="further_horizon"):
        check_consistency(tmp_path / "c", ["cyclic4"], runs=3, horizon=200, long_horizon=2000, further_horizon=2000)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(horizon=1000, long_horizon=1000), ValueError, "long_horizon"),
    (dict(runs=0), ValueError, "runs"),
    (dict(relabel="no"), TypeError, "relabel"),
    (dict(variants={}), ValueError, "at least one"),
    (dict(variants={"x": 1000}), TypeError, "options"),
    (dict(references="rmed1"), TypeError, "sequence of agent names"),
    (dict(references=["rmed1", "rmed1"]), ValueError, "distinct"),
    (dict(references=["learned"]), ValueError, "variants"),
    (dict(references=["rmed1", "no_such_agent"]), ValueError, r"unknown: \['no_such_agent'\]"),
    (dict(references=["savage"]), ValueError, "regret-minimising"),  # a pure-exploration agent
])
def test_consistency_refuses_bad_settings(tmp_path, kwargs, error, match):
    with pytest.raises(error, match=match):
        check_consistency(tmp_path, ["cyclic4"], **kwargs)


def test_problem_counts_per_size(tmp_path):
    rows = evaluate(tmp_path, agents=["learned", "rucb"], n_arms=(4, 5), n_problems={4: 2, 5: 3}, horizons=(50,),
                    plot=False)
    runs = {(row["problems"], row["agent"]): row["runs"] for row in rows}
    assert runs["utility_based K=4", "rucb"] == 2 and runs["utility_based K=5", "learned"] == 3
    with pytest.raises(ValueError, match="n_problems must give a number for each of n_arms"):
        evaluate(tmp_path / "x", agents=["rucb"], n_arms=(4, 5), n_problems={4: 2}, horizons=(50,), plot=False)
    with pytest.raises(ValueError, match="follow_up_problems"):
        evaluate(tmp_path / "y", agents=["rucb"], n_arms=(4,), n_problems=2, horizons=(50,), plot=False,
                 follow_up_problems={4: -1}, follow_up_horizon=50)


def test_with_references_each_setting_is_paired_with_the_lowest_reference(tmp_path):
    rows = check_consistency(tmp_path / "c", ["cyclic4"], runs=3, horizon=200, long_horizon=2000,
                             references=["random", "rmed1"])
    with (tmp_path / "c" / "consistency_paired.csv").open() as handle:
        paired = list(csv.DictReader(handle))
    assert [(row["variant"], row["problems"], int(row["horizon"])) for row in paired] == [
        ("as shipped", "cyclic4", 200), ("as shipped", "cyclic4", 2000)]
    means = {row["agent"]: (row["mean"], row["long_mean"]) for row in rows}
    for column, row in enumerate(paired):
        lowest = min(("random", "rmed1"), key=lambda agent: means[agent][column])
        assert row["best_classic"] == lowest and int(row["runs"]) == 3
        assert float(row["difference"]) == pytest.approx(means["learned"][column] - means[lowest][column])
        assert row["verdict"] in ("below", "tied", "above")
    # Without references there is nothing to pair with, and a stale file is not left behind.
    check_consistency(tmp_path / "c", ["cyclic4"], runs=3, horizon=200, long_horizon=2000)
    assert not (tmp_path / "c" / "consistency_paired.csv").exists()
