"""Intervals in tables (one run gives none; a t interval of regret below zero is flagged or
replaced by the bootstrap one) and the statistics taken from SciPy."""

from __future__ import annotations

import inspect
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from dueling_gym.experiments.sweeps.report import RegretCurve, family_summary_markdown, summary_csv, summary_markdown
from dueling_gym.stats import NO_SPREAD_NOTE, bootstrap_mean_interval, mean_half_width, student_t_quantile


def _curve(finals, agent="a", problem="p"):
    finals = np.asarray(finals, dtype=float)
    runs = np.stack([finals / 2, finals], axis=1)
    return RegretCurve(agent, problem, "copeland_komiyama", np.array([50, 100]), runs,
                       np.ones(finals.size, dtype=bool), family="fam", n_arms=4)


SKEWED = [0.0] * 9 + [1000.0]  # t interval 100 ± 226: below zero


# ------------------------------------------------------------------------------------------
# Student's t quantiles
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("probability", [0.5 + 1e-9, 0.5 + 1e-7, 0.5 + 1e-4, 0.505, 0.6, 0.75, 0.8, 0.9, 0.975, 0.995])
def test_t_quantiles_match_the_closed_forms_of_one_and_two_degrees_of_freedom(probability):
    cauchy = math.tan(math.pi * (probability - 0.5))
    two = (2 * probability - 1) / math.sqrt(2 * probability * (1 - probability))
    assert student_t_quantile(probability, 1) == pytest.approx(cauchy, rel=1e-12)
    assert student_t_quantile(probability, 2) == pytest.approx(two, rel=1e-12)
    assert student_t_quantile(1 - probability, 1) == -student_t_quantile(probability, 1)


def test_t_quantiles_are_scipys_in_the_tail_and_agree_with_it_at_the_centre():
    from scipy.stats import t

    for df in (1, 2, 4, 9, 99, 10**4, 10**6, 2.5):
        for probability in (0.8, 0.9, 0.95, 0.975, 0.995, 1 - 1e-9):
            assert student_t_quantile(probability, df) == float(t.ppf(probability, df))
        for probability in (0.55, 0.6, 0.7, 0.75):
            assert student_t_quantile(probability, df) == pytest.approx(float(t.ppf(probability, df)), rel=1e-13)
    assert student_t_quantile(0.5, 3) == 0.0
    assert mean_half_width([1.0, 2.0, 3.0]) == pytest.approx(float(t.ppf(0.975, 2)) / math.sqrt(3))


def test_the_statistics_module_imports_scipy_stats_only_when_a_quantile_is_asked_for():
    code = ("import sys, json; import dueling_gym.stats as s; before = 'scipy.stats' in sys.modules; "
            "s.student_t_quantile(0.975, 9); print(json.dumps([before, 'scipy.stats' in sys.modules]))")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(output) == [False, True]


def test_the_bootstrap_kept_is_scipys_percentile_bootstrap_up_to_the_last_bits():
    from scipy import stats

    if "rng" not in inspect.signature(stats.bootstrap).parameters:
        pytest.skip("scipy.stats.bootstrap takes no rng argument before SciPy 1.15")
    sample = np.random.default_rng(1).exponential(100.0, 12)
    mine = bootstrap_mean_interval(sample, seed=3)
    theirs = stats.bootstrap((sample,), np.mean, method="percentile", n_resamples=10_000, confidence_level=0.95,
                             rng=np.random.default_rng(3)).confidence_interval
    np.testing.assert_allclose(mine, (theirs.low, theirs.high), rtol=1e-12)


# ------------------------------------------------------------------------------------------
# Tables of regret sweeps
# ------------------------------------------------------------------------------------------

def test_one_run_prints_n_a_and_says_why():
    text = summary_markdown([_curve([7.0])])
    assert "| 7.0 ± n/a | n/a |" in text
    assert "± 0.0" not in text and "[7.0, 7.0]" not in text
    assert NO_SPREAD_NOTE in text
    row = summary_csv([_curve([7.0])], header=False).strip().split(",")
    assert row[5] == "7.0" and row[6:9] == ["nan", "nan", "nan"]
    family = family_summary_markdown([_curve([7.0])])
    assert "7.0 ± n/a | n/a |" in family and NO_SPREAD_NOTE in family


def test_tables_with_several_runs_carry_no_note():
    text = summary_markdown([_curve([10.0, 11.0, 12.0])])
    assert "| 11.0 ± 2.5 | [10.0, 12.0] |" in text and "n/a" not in text and "†" not in text


def test_a_t_interval_of_regret_below_zero_is_marked_beside_its_bootstrap_interval():
    text = summary_markdown([_curve(SKEWED)])
    half = mean_half_width(np.array(SKEWED))
    low, high = bootstrap_mean_interval(np.array(SKEWED))
    assert f"| 100.0 ± {half:.1f}† | [{low:.1f}, {high:.1f}] |" in text
    assert "reaches below zero" in text and "bootstrap interval beside it" in text
    assert "†" in family_summary_markdown([_curve(SKEWED)])


def test_the_benchmark_table_shows_the_bootstrap_interval_where_the_t_one_reaches_below_zero():
    from dueling_gym.experiments.studies.benchmark import _report_section
    from dueling_gym.experiments.sweeps.report import summary_rows

    rows = [dict(r, agent=agent) for agent, curve in (("mine", _curve(SKEWED)), ("base", _curve([5.0])))
            for r in summary_rows([curve])]
    lines, _ = _report_section("T = 100", rows, ["mine"])
    text = "\n".join(lines)
    low, high = bootstrap_mean_interval(np.array(SKEWED))
    assert f"| p | mine | 100.0 (bootstrap [{low:.1f}, {high:.1f}]) |" in text
    assert "base 5.0 ± n/a |" in text
    assert NO_SPREAD_NOTE in text and "percentile-bootstrap interval instead" in text


# ------------------------------------------------------------------------------------------
# Tables of the learned-vs-classic evaluation
# ------------------------------------------------------------------------------------------

def test_learned_evaluation_tables_print_n_a_for_one_run_and_bootstrap_below_zero():
    from dueling_gym.experiments.studies import learned_evaluation as evaluation

    per_run = {("set", "learned"): np.array([[3.0, 4.0]]), ("set", "classic"): np.array([[5.0, 9.0]])}
    rows = evaluation._regret_rows(per_run, [10, 20])
    assert all(math.isnan(row["ci95"]) for row in rows)
    summary = evaluation._summary(rows, [10, 20], per_run)
    assert "| learned | 3.0 ± n/a | 4.0 ± n/a |" in summary and NO_SPREAD_NOTE in summary
    comparisons = evaluation.paired_comparison(per_run, [10, 20])
    assert [row["verdict"] for row in comparisons] == ["tied", "tied"]  # one run decides nothing
    paired = evaluation._paired_summary(comparisons)
    assert "| -2.0 ± n/a | tied |" in paired and NO_SPREAD_NOTE in paired

    skewed = {("set", "learned"): np.array(SKEWED)[:, None], ("set", "classic"): np.full((10, 1), 50.0)}
    rows = evaluation._regret_rows(skewed, [10])
    summary = evaluation._summary(rows, [10], skewed)
    low, high = bootstrap_mean_interval(np.array(SKEWED))
    assert f"| learned | 100.0 (bootstrap [{low:.1f}, {high:.1f}]) |" in summary
    assert "| classic | 50.0 ± 0.0 |" in summary  # equal runs: a genuine zero spread
    assert "percentile-bootstrap interval instead" in summary and "n/a" not in summary
