"""Comparison logs in the shapes users have: winner/loser tables, count tables, compressed files,
a format named by argument, and sparse logs reduced to the systems a fit can relate.

Each layout is checked against the same comparisons written as an outcome log (one row per
comparison), whose reading the tests of ``load_comparisons`` pin down by hand.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import math

import numpy as np
import pytest

from dueling_gym.cli import main
from dueling_gym.envs.comparison_replay import ComparisonReplayEnv
from dueling_gym.problems import read_problem_file, save_problem
from dueling_gym.problems.bradley_terry import comparison_groups, fit_bradley_terry
from dueling_gym.problems.comparisons import load_comparisons, read_comparisons
from dueling_gym.validation import echo_list

# Games as (winner, loser).  By hand: a-b 2:1, b-c 1:0, a-c 1:1.
GAMES = [("a", "b"), ("a", "b"), ("b", "a"), ("b", "c"), ("c", "a"), ("a", "c")]
# The same comparisons as a count table, pair (a, b) split over two rows in both orders.
COUNT_ROWS = [("a", "b", 1, 0, 0), ("b", "a", 1, 1, 0), ("b", "c", 1, 0, 2), ("a", "c", 1, 1, 0)]
# COUNT_ROWS as one row per comparison (ties included).
COUNT_OUTCOMES = ([("a", "b", "a"), ("b", "a", "b"), ("b", "a", "a"), ("b", "c", "b"), ("b", "c", "tie"),
                   ("b", "c", "tie"), ("a", "c", "a"), ("a", "c", "c")])
COMPRESSORS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


def _outcomes(rows):
    return {"first": [r[0] for r in rows], "second": [r[1] for r in rows], "winner": [r[2] for r in rows]}


def _csv(rows, header):
    return ",".join(header) + "\n" + "".join(",".join(map(str, row)) + "\n" for row in rows)


def _write(path, text, compression=None):
    data = text.encode()
    path.write_bytes(COMPRESSORS[compression](data) if compression else data)
    return path


def _count_csv(rows=COUNT_ROWS, ties=True):
    header = ("a", "b", "wins_a", "wins_b", "ties")
    return _csv([row if ties else row[:4] for row in rows], header if ties else header[:4])


COUNTS = dict(first="a", second="b", counts=("wins_a", "wins_b", "ties"))


# ====================================================================================== winner / loser
def test_winner_loser_table_matches_the_outcome_log(tmp_path):
    path = _write(tmp_path / "games.csv", _csv(GAMES, ("winner_name", "loser_name")))
    problem = load_comparisons(path, winner="winner_name", loser="loser_name")
    expected = load_comparisons(_outcomes([(w, l, w) for w, l in GAMES]))
    np.testing.assert_array_equal(problem.matrix, expected.matrix)
    np.testing.assert_array_equal(problem.provenance["wins"], [[0, 2, 1], [1, 0, 1], [1, 0, 0]])
    assert problem.provenance["layout"] == "winner_loser"
    assert problem.provenance["columns"] == ("winner_name", "loser_name")
    assert problem.provenance["ties_total"] == 0 and problem.provenance["log_lines"].tolist() == [2, 3, 4, 5, 6, 7]
    table = {"w": [w for w, _ in GAMES], "l": [l for _, l in GAMES]}
    np.testing.assert_array_equal(load_comparisons(table, winner="w", loser="l").matrix, expected.matrix)


def test_winner_loser_names_that_look_like_labels_are_systems():
    # No winner labels in this layout: a system called "tie" is a system.
    problem = load_comparisons({"w": ["tie", "first"], "l": ["first", "tie"]}, winner="w", loser="l")
    assert problem.provenance["arms"] == ("first", "tie") and problem.matrix[0, 1] == 0.5


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(first="x"), ValueError, "first= and second= do not apply"),
    (dict(tie_values=["draw"]), ValueError, "first_wins=, second_wins= and tie_values= .* leave them out"),
    (dict(counts=("x", "y")), ValueError, "describe different layouts"),
    (dict(loser="w"), ValueError, "winner and loser must name two different columns"),
    (dict(loser=3), TypeError, "loser must be a column name"),
])
def test_winner_loser_refusals(kwargs, error, message):
    arguments = dict(winner="w", loser="l") | kwargs
    with pytest.raises(error, match=message):
        load_comparisons({"w": ["a"], "l": ["b"]}, **arguments)


def test_winner_loser_same_system_is_refused_with_its_line(tmp_path):
    path = _write(tmp_path / "games.csv", _csv([("a", "b"), ("c", "c")], ("w", "l")))
    with pytest.raises(ValueError, match=r"games\.csv, line 3: the same system 'c' as winner and loser"):
        load_comparisons(path, winner="w", loser="l")


# ====================================================================================== counts
def test_count_table_sums_rows_of_a_pair_in_either_order(tmp_path):
    path = _write(tmp_path / "counts.csv", _count_csv())
    problem = load_comparisons(path, **COUNTS)
    expected = load_comparisons(_outcomes(COUNT_OUTCOMES))
    np.testing.assert_array_equal(problem.matrix, expected.matrix)
    np.testing.assert_array_equal(problem.provenance["wins"], expected.provenance["wins"])
    np.testing.assert_array_equal(problem.provenance["ties"], expected.provenance["ties"])
    assert problem.provenance["layout"] == "counts" and problem.provenance["rows_read"] == 8
    assert problem.provenance["columns"] == ("a", "b", "wins_a", "wins_b", "ties")
    # Every comparison names the line of its count: line 2 holds 1, line 3 holds 2, line 4 holds 3.
    assert problem.provenance["log_lines"].tolist() == [2, 3, 3, 4, 4, 4, 5, 5]


def test_count_table_without_ties_and_from_json_lines_and_tables(tmp_path):
    rows = [row[:4] for row in COUNT_ROWS]
    decisive = [row for row in COUNT_OUTCOMES if row[2] != "tie"]
    expected = load_comparisons(_outcomes(decisive)).matrix
    csv_path = _write(tmp_path / "counts.csv", _count_csv(ties=False))
    jsonl = _write(tmp_path / "counts.jsonl", "".join(json.dumps(dict(zip(("a", "b", "wins_a", "wins_b"), row))) + "\n"
                                                      for row in rows))
    table = {"a": [r[0] for r in rows], "b": [r[1] for r in rows], "wins_a": np.array([r[2] for r in rows]),
             "wins_b": [r[3] for r in rows]}
    for source in (csv_path, jsonl, table):
        problem = load_comparisons(source, first="a", second="b", counts=["wins_a", "wins_b"])
        np.testing.assert_array_equal(problem.matrix, expected)


def test_count_table_replays_its_comparisons(tmp_path):
    problem = load_comparisons(_write(tmp_path / "counts.csv", _count_csv()), **COUNTS)
    env = ComparisonReplayEnv(problem)
    env.reset(seed=1)
    _, _, _, _, info = env.step((0, 1))
    assert info["replayed"] and info["log_line"] in (2, 3)


def test_zero_count_rows_name_systems_without_comparisons():
    table = {"a": ["x", "x", "y", "z"], "b": ["y", "z", "z", "x"], "n": [2, 0, 1, 1], "m": [1, 0, 1, 0]}
    problem = load_comparisons(table, first="a", second="b", counts=("n", "m"), min_comparisons=1)
    assert problem.provenance["dropped_systems"] == () and problem.provenance["arms"] == ("x", "y", "z")
    table = {"a": ["x", "w"], "b": ["y", "z"], "n": [2, 0], "m": [1, 0]}
    problem = load_comparisons(table, first="a", second="b", counts=("n", "m"), min_comparisons=1)
    assert problem.provenance["arms"] == ("x", "y") and problem.provenance["dropped_systems"] == ("w", "z")


@pytest.mark.parametrize("cell,reason", [
    ("2.5", "not written as plain digits"), ("-1", "not written as plain digits"), ("3.0", "not written as plain"),
    ("nan", "not written as plain digits"), ("", "empty"), ("+3", "not written as plain digits"),
    ("99999999999", "more than 2,147,483,647"),
])
def test_bad_counts_in_a_csv_file_name_line_and_column(tmp_path, cell, reason):
    path = _write(tmp_path / "counts.csv", "a,b,wins_a,wins_b\nx,y,1,2\nx,z,3," + cell + "\n")
    with pytest.raises(ValueError, match=rf"counts\.csv, line 3: count .* in column 'wins_b' is {reason}"):
        load_comparisons(path, first="a", second="b", counts=("wins_a", "wins_b"))


@pytest.mark.parametrize("value,reason", [
    (2.5, "a float"), (3.0, "a float"), (float("nan"), "NaN"), (-1, "negative"), (True, "a boolean"),
    (None, "missing"), ("2", r"text \(a str\)"), (2**40, "more than"),
])
def test_bad_counts_in_tables_and_json_name_row_and_column(tmp_path, value, reason):
    # Digits as text are a count only in CSV and TSV files, where every value is text.
    table = {"a": ["x", "x"], "b": ["y", "z"], "n": [1, value], "m": [0, 1]}
    with pytest.raises(ValueError, match=rf"table row 1 \(0-based\): count .* in column 'n' is {reason}"):
        load_comparisons(table, first="a", second="b", counts=("n", "m"))
    if value is not True and not (isinstance(value, float) and math.isnan(value)):  # no NaN in strict JSON
        path = _write(tmp_path / "counts.jsonl", "".join(json.dumps({"a": a, "b": b, "n": n, "m": m}) + "\n"
                                                         for a, b, n, m in zip(*table.values())))
        with pytest.raises(ValueError, match=rf"counts\.jsonl, line 2: count .* in column 'n' is {reason}"):
            load_comparisons(path, first="a", second="b", counts=("n", "m"))


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(counts="n"), TypeError, "counts must be a tuple of 2 or 3 column names"),
    (dict(counts=("n",)), ValueError, "counts must name 2 or 3 columns"),
    (dict(counts=("n", "m", "t", "u")), ValueError, "counts must name 2 or 3 columns"),
    (dict(counts=("n", 2)), TypeError, r"counts\[1\] must be a column name"),
    (dict(counts=("n", "n")), ValueError, "first, second and counts must name four different columns"),
    (dict(counts=("a", "m")), ValueError, "first, second and counts must name four different columns"),
    (dict(counts=("n", "m"), winner="w"), ValueError, "winner= does not apply"),
    (dict(counts=("n", "m"), first_wins="x"), ValueError, "a count table does not have"),
    (dict(counts=("n", "m", "ties")), ValueError, r"missing column\(s\) \['ties'\].*first=, second= and counts="),
])
def test_count_table_argument_refusals(kwargs, error, message):
    table = {"a": ["x"], "b": ["y"], "n": [1], "m": [0]}
    with pytest.raises(error, match=message):
        load_comparisons(table, first="a", second="b", **kwargs)


def test_count_table_of_zeros_and_of_too_many_comparisons_are_refused():
    table = {"a": ["x"], "b": ["y"], "n": [0], "m": [0]}
    with pytest.raises(ValueError, match="every count .* is zero"):
        load_comparisons(table, first="a", second="b", counts=("n", "m"))
    table = {"a": ["x", "x"], "b": ["y", "z"], "n": [2**31 - 1, 2**31 - 1], "m": [0, 0]}
    with pytest.raises(ValueError, match="add up to 4,294,967,294 comparisons"):
        load_comparisons(table, first="a", second="b", counts=("n", "m"))


# ====================================================================================== compression and format
@pytest.mark.parametrize("compression", ["gz", "bz2", "xz"])
@pytest.mark.parametrize("suffix", ["csv", "tsv", "jsonl"])
def test_compressed_logs_read_like_plain_ones(tmp_path, compression, suffix):
    rows = [(w, l, w) for w, l in GAMES]
    if suffix == "jsonl":
        text = "".join(json.dumps(dict(zip(("first", "second", "winner"), row))) + "\n" for row in rows)
    else:
        text = _csv(rows, ("first", "second", "winner"))
        text = text.replace(",", "\t") if suffix == "tsv" else text
    plain = load_comparisons(_write(tmp_path / f"log.{suffix}", text))
    path = _write(tmp_path / f"games.{suffix}.{compression}", text, compression)
    problem = load_comparisons(path)
    np.testing.assert_array_equal(problem.matrix, plain.matrix)
    np.testing.assert_array_equal(problem.provenance["log_lines"], plain.provenance["log_lines"])
    assert problem.name == "games"
    assert problem.provenance["log_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_compressed_count_table(tmp_path):
    path = _write(tmp_path / "counts.CSV.GZ", _count_csv(), "gz")
    expected = load_comparisons(_outcomes(COUNT_OUTCOMES)).matrix
    np.testing.assert_array_equal(load_comparisons(path, **COUNTS).matrix, expected)


@pytest.mark.parametrize("compression,name", [("gz", "gzip"), ("bz2", "bzip2"), ("xz", "xz")])
def test_corrupt_and_truncated_compressed_files_are_named(tmp_path, compression, name):
    garbage = _write(tmp_path / f"bad.csv.{compression}", "")
    garbage.write_bytes(b"this is not compressed data at all, " * 20)
    with pytest.raises(ValueError, match=rf"bad\.csv\.{compression}: not a readable {name} file"):
        load_comparisons(garbage)
    whole = COMPRESSORS[compression](_csv([(w, l, w) for w, l in GAMES] * 50, ("first", "second", "winner")).encode())
    truncated = tmp_path / f"cut.csv.{compression}"
    truncated.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match=rf"cut\.csv\.{compression}: not a readable {name} file"):
        load_comparisons(truncated)


def test_compressed_text_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "log.csv.gz"
    path.write_bytes(gzip.compress(b"first,second,winner\n\xff,b,b\n"))
    with pytest.raises(ValueError, match=r"log\.csv\.gz: not UTF-8 text"):
        load_comparisons(path)


def test_format_override_for_names_that_do_not_say(tmp_path):
    text = _csv([(w, l, w) for w, l in GAMES], ("first", "second", "winner"))
    expected = load_comparisons(_write(tmp_path / "log.csv", text)).matrix
    for path, format in [(_write(tmp_path / "results.txt", text), "csv"),
                         (_write(tmp_path / "export.gz", text, "gz"), "csv"),
                         (_write(tmp_path / "tabs.csv", text.replace(",", "\t")), "tsv"),
                         (_write(tmp_path / "noname", text), "csv")]:
        np.testing.assert_array_equal(load_comparisons(path, format=format).matrix, expected)
    lines = "".join(json.dumps({"first": w, "second": l, "winner": w}) + "\n" for w, l in GAMES)
    for format in ("jsonl", "ndjson"):
        path = _write(tmp_path / f"dump.{format}.data.xz", lines, "xz")
        np.testing.assert_array_equal(load_comparisons(path, format=format).matrix, expected)
    log = read_comparisons(_write(tmp_path / "log.dat", text), format="csv")
    assert log.layout == "outcomes" and log.n_rows == len(GAMES)


def test_format_refusals(tmp_path):
    text = _csv([("a", "b", "a")], ("first", "second", "winner"))
    with pytest.raises(ValueError, match=r"results\.txt: unsupported file type '\.txt'.*format="):
        load_comparisons(_write(tmp_path / "results.txt", text))
    with pytest.raises(ValueError, match=r"export\.gz: no file type in its name.*\.gz, \.bz2, \.xz"):
        load_comparisons(_write(tmp_path / "export.gz", text, "gz"))
    with pytest.raises(ValueError, match="format must be one of"):
        load_comparisons(_write(tmp_path / "log.csv", text), format="excel")
    with pytest.raises(TypeError, match="format must be one of"):
        load_comparisons(tmp_path / "log.csv", format=1)
    with pytest.raises(ValueError, match="a table in memory has none"):
        load_comparisons(_outcomes([("a", "b", "a")]), format="csv")
    with pytest.raises(ValueError, match=r"log\.parquet\.gz: a gzip-compressed Parquet file cannot be read"):
        load_comparisons(_write(tmp_path / "log.parquet.gz", text, "gz"))
    with pytest.raises(FileNotFoundError):
        load_comparisons(tmp_path / "absent.csv.gz")


# ====================================================================================== sparse logs
# Two groups never compared with each other: {a, b, c} (6 comparisons) and {x, y} (2).
SPARSE = [("a", "b", "a"), ("b", "a", "b"), ("b", "c", "b"), ("c", "b", "c"), ("a", "c", "a"), ("c", "a", "c"),
          ("x", "y", "x"), ("y", "x", "y")]


def test_largest_group_is_kept_and_the_dropped_systems_recorded(tmp_path):
    problem = load_comparisons(_outcomes(SPARSE), fill_missing="bradley_terry", components="largest")
    provenance = problem.provenance
    assert provenance["arms"] == ("a", "b", "c") and problem.n_arms == 3
    assert provenance["dropped_systems"] == ("x", "y") and provenance["dropped_disconnected"] == ("x", "y")
    assert provenance["dropped_few_comparisons"] == () and provenance["rows_dropped"] == 2
    assert provenance["rows_read"] == 8 and provenance["log_first"].size == 6
    assert provenance["components"] == "largest"
    assert "2 systems dropped" in problem.source and "x, y" in problem.source
    np.testing.assert_array_equal(problem.matrix, load_comparisons(_outcomes(SPARSE[:6])).matrix)
    ComparisonReplayEnv(problem)  # the log kept matches the matrix
    saved = read_problem_file(save_problem(problem, tmp_path / "sparse.json"))
    assert saved.provenance["dropped_systems"] == ["x", "y"]


def test_groups_of_equal_size_keep_the_one_with_more_comparisons():
    rows = [("a", "b", "a"), ("x", "y", "x"), ("y", "x", "y"), ("x", "y", "y")]
    problem = load_comparisons(_outcomes(rows), components="largest")
    assert problem.provenance["arms"] == ("x", "y") and problem.provenance["dropped_systems"] == ("a", "b")
    rows = [("a", "b", "a"), ("x", "y", "x")]  # a full tie: the group of the first system in sorted order
    assert load_comparisons(_outcomes(rows), components="largest").provenance["arms"] == ("a", "b")


def test_min_comparisons_drops_systems_until_every_one_left_has_enough():
    # d has 1 comparison; once it is dropped, c has 2 (one lost with d), below 3, and goes too.
    rows = [("a", "b", "a"), ("b", "a", "b"), ("a", "b", "a"), ("a", "c", "c"), ("b", "c", "b"), ("c", "d", "d")]
    problem = load_comparisons(_outcomes(rows), min_comparisons=3)
    assert problem.provenance["arms"] == ("a", "b")
    assert problem.provenance["dropped_few_comparisons"] == ("c", "d") and problem.provenance["min_comparisons"] == 3
    assert problem.provenance["rows_dropped"] == 3 and problem.matrix[0, 1] == pytest.approx(2 / 3)
    assert "2 systems dropped (2 with fewer than 3 comparisons: c, d)" in problem.source
    unchanged = load_comparisons(_outcomes(rows[:3]), min_comparisons=3)
    assert unchanged.provenance["dropped_systems"] == () and unchanged.n_arms == 2


def test_min_comparisons_counts_ties_only_when_they_enter_the_matrix():
    rows = [("a", "b", "a"), ("b", "a", "b"), ("a", "c", "tie"), ("b", "c", "b")] + [("a", "b", "a")]
    half = load_comparisons(_outcomes(rows), min_comparisons=2, fill_missing="bradley_terry")
    assert half.provenance["arms"] == ("a", "b", "c")
    drop = load_comparisons(_outcomes(rows), ties="drop", min_comparisons=2)
    assert drop.provenance["arms"] == ("a", "b") and drop.provenance["dropped_few_comparisons"] == ("c",)


def test_both_rules_together_record_each_reason():
    rows = SPARSE + [("a", "z", "a")]
    problem = load_comparisons(_outcomes(rows), min_comparisons=2, components="largest")
    assert problem.provenance["dropped_few_comparisons"] == ("z",)
    assert problem.provenance["dropped_disconnected"] == ("x", "y")
    assert problem.provenance["dropped_systems"] == ("x", "y", "z")
    assert "3 systems dropped" in problem.source


def test_sparse_refusals():
    with pytest.raises(ValueError, match=r"2 groups of systems never compared.*\{a, b, c\}; \{x, y\}.*"
                                         r"components='largest' \(on the command line: --components largest\)"):
        load_comparisons(_outcomes(SPARSE), fill_missing="bradley_terry")
    with pytest.raises(ValueError, match=r"fewer than 2 systems are left after dropping 5 with fewer than 9 comparisons \(a, b, c, x, y\): "
                                         "nothing to estimate; lower min_comparisons"):
        load_comparisons(_outcomes(SPARSE), min_comparisons=9)
    with pytest.raises(ValueError, match="components must be one of"):
        load_comparisons(_outcomes(SPARSE), components="biggest")
    with pytest.raises(TypeError, match="min_comparisons"):
        load_comparisons(_outcomes(SPARSE), min_comparisons=1.5)
    with pytest.raises(ValueError, match="min_comparisons"):
        load_comparisons(_outcomes(SPARSE), min_comparisons=-1)
    # Without a fill the pairs never compared are named, as before.
    with pytest.raises(ValueError, match="never compared"):
        load_comparisons(_outcomes(SPARSE))


def test_messages_listing_systems_are_capped():
    # One group of 40 systems in a cycle, and 200 pairs of their own.
    big = [(f"s{i:03d}", f"s{(i + 1) % 40:03d}", f"s{i:03d}") for i in range(40)]
    big += [(f"s{(i + 1) % 40:03d}", f"s{i:03d}", f"s{(i + 1) % 40:03d}") for i in range(40)]
    pairs = [(f"p{i:03d}a", f"p{i:03d}b", f"p{i:03d}a") for i in range(200)]
    with pytest.raises(ValueError) as error:
        load_comparisons(_outcomes(big + pairs), fill_missing="bradley_terry")
    message = str(error.value)
    assert "201 groups" in message and "and 35 more}" in message and "and 198 more groups" in message
    assert len(message) < 800, message
    problem = load_comparisons(_outcomes(big + pairs), fill_missing="bradley_terry", components="largest")
    assert problem.n_arms == 40 and len(problem.provenance["dropped_systems"]) == 400
    assert "400 systems dropped" in problem.source and "and 395 more" in problem.source
    assert len(problem.source) < 400
    with pytest.raises(ValueError) as error:  # without a fill: the pairs never compared, capped too
        load_comparisons(_outcomes(big + pairs))
    message = str(error.value)
    assert "96340 pair(s) never compared: ('p000a', 'p001a'), " in message and " more. Log more" in message
    assert len(message) < 600, message


def test_bradley_terry_groups_and_capped_messages():
    wins = np.zeros((12, 12))
    wins[0, 1] = wins[1, 0] = wins[5, 6] = 1
    assert comparison_groups(wins)[:3] == [[0, 1], [5, 6], [2]]
    with pytest.raises(ValueError, match=r"not connected.*\{0, 1\}; \{5, 6\}; \{2\}; and 7 more groups$"):
        fit_bradley_terry(wins)
    names = [f"system-{i}" for i in range(30)]
    wins = np.ones((30, 30)) - np.eye(30)
    wins[0, :] = 0
    with pytest.raises(ValueError, match=r"never won: system-0$"):
        fit_bradley_terry(wins, names=names)
    wins = np.ones((30, 30)) - np.eye(30)
    wins[1:, 0] = 0  # system-0 never lost
    wins[0, 1:] = 1
    with pytest.raises(ValueError, match="never lost: system-0"):
        fit_bradley_terry(wins, names=names)


def test_echo_list():
    assert echo_list(["a", "b", "c"]) == "a, b, c"
    assert echo_list([f"n{i}" for i in range(12)]) == "n0, n1, n2, n3, n4 and 7 more"
    assert echo_list(("x", "y"), shown=1, quote=True) == "'x' and 1 more"
    assert echo_list([]) == ""
    text = echo_list(["n" * 10_000] * 50)
    assert len(text) < 500 and text.endswith("more") and "(10,000 characters)" in text
    with pytest.raises(ValueError, match="shown"):
        echo_list(["a"], shown=0)


# ====================================================================================== command line
def test_command_line_layouts(tmp_path, capsys):
    games = _write(tmp_path / "games.csv.bz2", _csv(GAMES, ("w", "l")), "bz2")
    assert main(["problems", "--from-comparisons", str(games), "--winner", "w", "--loser", "l", "--no-bounds"]) == 0
    out = capsys.readouterr().out
    assert "| games" in out and "Arms: 0 = a, 1 = b, 2 = c" in out
    counts = _write(tmp_path / "counts.txt", _count_csv())
    assert main(["problems", "--from-comparisons", str(counts), "--first", "a", "--second", "b", "--counts",
                 "wins_a,wins_b,ties", "--format", "csv", "--no-bounds"]) == 0
    assert "8 pairwise comparisons" in capsys.readouterr().out
    sparse = _write(tmp_path / "sparse.csv", _csv(SPARSE, ("first", "second", "winner")))
    assert main(["problems", "--from-comparisons", str(sparse), "--fill-missing", "bradley_terry", "--components",
                 "largest", "--min-comparisons", "1", "--no-bounds"]) == 0
    assert "2 systems dropped" in capsys.readouterr().out
    for bad in (["--counts", "wins_a"], ["--counts", "a,,b"], ["--format", "xlsx"], ["--components", "all"],
                ["--min-comparisons", "-1"]):
        with pytest.raises(SystemExit) as exit_status:
            main(["problems", "--from-comparisons", str(counts), *bad])
        assert exit_status.value.code == 2
    err = capsys.readouterr().err
    assert "argument --counts: expected COL_A,COL_B or COL_A,COL_B,COL_TIES" in err
