"""docs/learned.md's tables are the learned-vs-classic run's files, every row of them."""

import csv

from repository_paths import DOCS, import_docs_module

tables = import_docs_module("_learned_tables")
DATA = DOCS / tables.DATA


def _rows(name):
    with (DATA / name).open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_page_takes_in_every_table():
    text = (DOCS / "learned.md").read_text()
    fragments = tables.learned_fragments(DOCS)
    for name in ("learned/regret", "learned/paired", "learned/follow-up", "learned/consistency"):
        assert name in fragments and f"```{{generated}} {name}\n```" in text


def test_every_problem_set_and_verdict_is_shown():
    paired = _rows("paired.csv")
    fragments = tables.learned_fragments(DOCS)
    sets = {row["problems"] for row in paired}
    regret_lines = fragments["learned/regret"].splitlines()[2:]
    paired_lines = fragments["learned/paired"].splitlines()[2:]
    assert {line.split(" | ")[0].lstrip("| ") for line in regret_lines} == sets
    assert len(paired_lines) == len(sets)
    shown = fragments["learned/paired"]
    for row in paired:  # wins and losses alike
        assert f"({row['verdict']}; {row['best_classic']})" in shown
    # Bold marks exactly the rows where the learned policy is below the best classic agent.
    assert shown.count("**") == 2 * sum(row["verdict"] == "below" for row in paired)


def test_the_sets_are_ordered_by_size_then_published():
    order = tables._set_order(["sushi", "utility_based K=16", "gap", "no_condorcet_winner K=4", "utility_based K=4"])
    assert order == ["no_condorcet_winner K=4", "utility_based K=4", "utility_based K=16", "gap", "sushi"]


def test_consistency_rows_name_their_verdicts():
    consistency = _rows("consistency.csv")
    text = tables.learned_fragments(DOCS)["learned/consistency"]
    assert len(text.splitlines()) == 2 + len(consistency)
    assert text.count("**too fast**") == sum((row["verdict"] == "too fast") + (row.get("further_verdict") == "too fast")
                                             for row in consistency)


def test_consistency_rows_name_the_agent_and_the_bound_share():
    """Each row says whose regret it is (the learned policy's setting or a classic reference) and its bound share."""
    consistency = _rows("consistency.csv")
    text = tables.learned_fragments(DOCS)["learned/consistency"]
    for row in consistency:
        agent = f"learned, {row['variant']}" if row["agent"] == "learned" else row["agent"]
        assert f"| {row['problems']} | {agent} | {float(row['mean']):.1f} |" in text
        share = row["further_bound_share"] if row.get("further_horizon") else row["bound_share"]
        assert text.count(f"| {float(share):.2f} |") >= 1
    assert {row["agent"] for row in consistency} > {"learned"}


def test_a_two_horizon_consistency_run_has_no_further_columns():
    row = {"problems": "gap", "agent": "rmed1", "variant": "paper's defaults", "horizon": "10", "long_horizon": "100",
           "mean": "5", "long_mean": "60", "growth": "12", "growth_low": "10", "growth_high": "14",
           "verdict": "too fast", "bound_share": "3"}
    text = tables.consistency_table([row])
    assert "T = 100: share of LB ln T" in text and "T = 1000" not in text
    assert "| gap | rmed1 | 5.0 | 60.0 | 12.00 [10.00, 14.00] | **too fast** | 3.00 |" in text
    further = {**row, "further_horizon": "1000", "further_mean": "90", "further_growth": "1.5",
               "further_growth_low": "1.2", "further_growth_high": "1.8", "further_verdict": "logarithmic",
               "further_bound_share": "0.9"}
    assert ("| gap | rmed1 | 5.0 | 60.0 | 12.00 [10.00, 14.00] | **too fast** | 90.0 | 1.50 [1.20, 1.80] | "
            "logarithmic | 0.90 |") in tables.consistency_table([further])
