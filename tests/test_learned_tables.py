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
    assert text.count("**too fast**") == sum(row["verdict"] == "too fast" for row in consistency)


def test_consistency_rows_name_the_agent_and_the_bound_share():
    """Each row says whose regret it is (the learned policy's setting or a classic reference) and its bound share."""
    consistency = _rows("consistency.csv")
    text = tables.learned_fragments(DOCS)["learned/consistency"]
    for row in consistency:
        agent = f"learned, {row['variant']}" if row["agent"] == "learned" else row["agent"]
        assert f"| {row['problems']} | {agent} | {float(row['mean']):.1f} |" in text
        assert text.count(f"| {float(row['bound_share']):.2f} |") >= 1
    assert {row["agent"] for row in consistency} > {"learned"}
