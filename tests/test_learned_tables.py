"""The learned pages' tables are the learned-vs-classic run's files, every row of them."""

import csv

from repository_paths import DOCS, import_docs_module

tables = import_docs_module("_learned_tables")
DATA = DOCS / tables.DATA


def _rows(name):
    with (DATA / name).open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_page_takes_in_every_table():
    pages = {"learned.md": ("learned/regret", "learned/paired", "learned/follow-up", "learned/scorecard",
                            "learned/robustness"),
             "learned-consistency.md": ("learned/consistency", "learned/classic-consistency",
                                        "learned/consistency-runs")}
    fragments = tables.learned_fragments(DOCS)
    for page, names in pages.items():
        text = (DOCS / page).read_text()
        for name in names:
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


def test_the_scorecard_counts_every_row_and_names_the_losses():
    paired = _rows("paired.csv")
    text = tables.learned_fragments(DOCS)["learned/scorecard"]
    lines = text.splitlines()
    horizons = sorted({int(row["horizon"]) for row in paired})
    counted = 0
    for horizon, line in zip(horizons, lines[2:2 + len(horizons)]):
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows = [row for row in paired if int(row["horizon"]) == horizon]
        assert cells[0] == f"T = {horizon}"
        assert [int(cell) for cell in cells[1:4]] == [sum(row["verdict"] == v for row in rows) for v in ("below", "tied", "above")]
        above = [row["problems"] for row in rows if row["verdict"] == "above"]
        assert all(f"{name} (" in cells[4] for name in above) and (above or cells[4] == "none")
        counted += sum(int(cell) for cell in cells[1:4])
    assert counted == len(paired)
    shipped = [row for row in _rows("consistency.csv") if row["agent"] == "learned" and row["variant"] == "as shipped"]
    passing = sum(row["verdict"] == "logarithmic" for row in shipped)
    assert f"at most twofold on {passing} of {len(shipped)} published matrices" in text
    assert all(f"{row['problems']} {float(row['growth']):.2f}" in text for row in shipped)


def test_the_scorecard_without_a_consistency_check():
    rows = [{"problems": "gap", "horizon": "100", "best_classic": "scb", "difference": "3.4", "ci95": "2.5",
             "verdict": "above"},
            {"problems": "gap", "horizon": "1000", "best_classic": "cw_rmed", "difference": "-14", "ci95": "20",
             "verdict": "tied"}]
    text = tables.scorecard_table(rows, None)
    assert "| T = 100 | 0 | 0 | 1 | gap (+3.4 ± 2.5 against scb) |" in text
    assert "| T = 1000 | 0 | 1 | 0 | none |" in text
    assert "2 rows (1 problem set × 2 horizons)" in text and "twofold" not in text


def test_the_check_on_more_runs_shows_every_row_and_the_paired_differences():
    rows, paired = _rows("consistency_runs.csv"), _rows("consistency_runs_paired.csv")
    text = tables.learned_fragments(DOCS)["learned/consistency-runs"]
    assert "```{generated} learned/consistency-runs\n```" in (DOCS / "learned-consistency.md").read_text()
    for row in rows:  # wins and losses alike, with the committed runs and the share of passing checks
        agent = row["agent"] if row["agent"] != "learned" or row["variant"] == "as shipped" else \
            f"learned, {row['variant']}"
        assert (f"| {row['problems']} | {agent} | {float(row['mean']):.1f} | {float(row['long_mean']):.1f} | "
                in text)
        assert f"| {row['fast_runs']} | {float(row['pass_share']):.2f} |" in text
    assert text.count("**") == 2 * sum(row["verdict"] != "logarithmic" for row in rows)
    shipped = [row for row in paired if row["variant"] == "as shipped"]
    variants = {row["variant"] for row in paired}
    for row in paired:  # every setting of the learned agent, paired at both horizons
        label = row["problems"] if len(variants) == 1 else f"{row['problems']}, {row['variant']}"
        line = next(line for line in text.splitlines() if line.startswith(f"| {label} | "))
        assert f"({row['verdict']}; {row['best_classic']})" in line
    assert {row["problems"] for row in shipped} == {row["problems"] for row in rows}
    assert int(rows[0]["runs"]) == 100
