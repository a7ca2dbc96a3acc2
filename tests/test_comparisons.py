"""Problems from comparison logs: counts, means, Wilson intervals, tie rules, Bradley–Terry fill, bad input.

The oracles are counted by hand from the small log below; the Bradley–Terry maximum is checked
against a closed form (two systems) and against SciPy's optimiser on the negative log-likelihood.
"""

from __future__ import annotations

import csv
import hashlib
import json
import pickle
import sys

import numpy as np
import pytest

from dueling_gym.problems import PreferenceMatrix
from dueling_gym.problems.bradley_terry import bradley_terry_probabilities, fit_bradley_terry
from dueling_gym.problems.comparisons import load_comparisons, read_comparisons, wilson_interval

Z95 = 1.959963984540054  # standard normal quantile of 0.975

# Rows (first, second, winner), every winner encoding once.  By hand, per pair:
#   alpha-beta : alpha won rows 1 and 3, beta row 2             -> 2 : 1, no tie
#   alpha-gamma: alpha won rows 5 and 9, tie row 4              -> 2 : 0, 1 tie
#   beta-gamma : gamma won rows 6 and 7, tie row 8              -> 0 : 2, 1 tie
ROWS = [
    ("alpha", "beta", "alpha"),
    ("beta", "alpha", "first"),
    ("alpha", "beta", "model_a"),
    ("gamma", "alpha", "tie"),
    ("alpha", "gamma", "alpha"),
    ("beta", "gamma", "second"),
    ("gamma", "beta", "gamma"),
    ("beta", "gamma", "tie"),
    ("gamma", "alpha", "model_b"),
]
ARMS = ("alpha", "beta", "gamma")
WINS = [[0, 2, 2], [1, 0, 0], [0, 2, 0]]
TIES = [[0, 0, 1], [0, 0, 1], [1, 1, 0]]
HALF = [[0.5, 2 / 3, 5 / 6], [1 / 3, 0.5, 1 / 6], [1 / 6, 5 / 6, 0.5]]
DECISIVE = [[0.5, 2 / 3, 1.0], [1 / 3, 0.5, 0.0], [0.0, 1.0, 0.5]]


def _table(rows=ROWS):
    return {"first": [r[0] for r in rows], "second": [r[1] for r in rows], "winner": [r[2] for r in rows]}


def _write_csv(path, rows=ROWS, delimiter=",", header=("first", "second", "winner")):
    with path.open("w", newline="") as stream:
        writer = csv.writer(stream, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _write_jsonl(path, rows=ROWS):
    path.write_text("".join(json.dumps({"first": a, "second": b, "winner": w, "judge": "x"}) + "\n"
                            for a, b, w in rows))
    return path


def _sources(tmp_path):
    pyarrow = pytest.importorskip("pyarrow")
    import pyarrow.parquet as parquet

    table = pyarrow.table(_table())
    parquet.write_table(table, tmp_path / "log.parquet")
    return {
        "csv": _write_csv(tmp_path / "log.csv"),
        "tsv": _write_csv(tmp_path / "log.tsv", delimiter="\t"),
        "jsonl": _write_jsonl(tmp_path / "log.jsonl"),
        "ndjson": _write_jsonl(tmp_path / "log.ndjson"),
        "parquet": tmp_path / "log.parquet",
        "dict": _table(),
        "arrow": table,
        "frame": _FakeFrame(_table()),
    }


class _FakeFrame:
    """The DataFrame protocol the loader relies on: ``.columns`` and ``frame[name].tolist()``."""

    def __init__(self, columns):
        self._columns = {name: np.array(values, dtype=object) for name, values in columns.items()}
        self.columns = list(columns)

    def __getitem__(self, name):
        return self._columns[name]


# ------------------------------------------------------------------------------ counts and means
def test_every_source_gives_the_hand_counted_problem(tmp_path):
    problems = {kind: load_comparisons(source) for kind, source in _sources(tmp_path).items()}
    for kind, problem in problems.items():
        np.testing.assert_allclose(problem.matrix, HALF, atol=1e-15, err_msg=kind)
        assert problem.provenance["arms"] == ARMS
        assert problem.provenance["wins"].tolist() == WINS
        assert problem.provenance["ties"].tolist() == TIES
        assert problem.provenance["counts"].tolist() == [[0, 3, 3], [3, 0, 3], [3, 3, 0]]
        assert problem.provenance["rows_read"] == 9
        assert problem.condorcet_winner == 0 and problem.copeland_winners.tolist() == [0]
    assert problems["csv"].provenance["log_lines"].tolist() == list(range(2, 11))
    assert problems["jsonl"].provenance["log_lines"].tolist() == list(range(1, 10))
    assert problems["dict"].provenance["log_lines"] is None
    assert problems["csv"].name == "log" and problems["dict"].name == "comparison log"


def test_file_provenance_records_path_and_sha256(tmp_path):
    path = _write_csv(tmp_path / "battles.csv")
    problem = load_comparisons(path, name="battles")
    assert problem.provenance["log_origin"] == str(path)
    assert problem.provenance["log_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert problem.provenance["columns"] == ("first", "second", "winner")
    assert "battles.csv" in problem.source and problem.name == "battles"
    table_problem = load_comparisons(_table())
    assert table_problem.provenance["log_origin"] == "table" and table_problem.provenance["log_sha256"] is None


def test_log_arrays_encode_each_row():
    problem = load_comparisons(_table())
    index = {arm: i for i, arm in enumerate(ARMS)}
    assert problem.provenance["log_first"].tolist() == [index[r[0]] for r in ROWS]
    assert problem.provenance["log_second"].tolist() == [index[r[1]] for r in ROWS]
    assert problem.provenance["log_outcome"].tolist() == [1, 1, 1, 0, 1, -1, 1, 0, -1]


def test_custom_columns_and_labels():
    table = {"a": ["x", "y", "x"], "b": ["y", "x", "y"], "result": [1, 2, 0]}
    problem = load_comparisons(table, first="a", second="b", winner="result", first_wins=1, second_wins=[2],
                               tie_values=(0,))
    # x won row 0 and row 1 (second side), row 2 a tie: P[x, y] = (2 + 1/2) / 3.
    assert problem.matrix[0, 1] == pytest.approx(5 / 6)
    integers = load_comparisons({"first": [3, 1], "second": [1, 3], "winner": [3, 1]})
    assert integers.provenance["arms"] == (1, 3) and integers.matrix[0, 1] == 0.5


# ------------------------------------------------------------------------------ tie rules
def test_tie_rule_half_counts_a_tie_as_half_a_win_each():
    problem = load_comparisons(_table(), ties="half")
    assert problem.provenance["sample_sizes"].tolist() == [[0, 3, 3], [3, 0, 3], [3, 3, 0]]
    assert problem.provenance["ties_total"] == 2 and problem.provenance["ties_dropped"] == 0
    assert problem.provenance["tie_rule"] == "half"


@pytest.mark.parametrize("rule", ["drop", "separate"])
def test_tie_rules_drop_and_separate_use_decisive_comparisons(rule):
    problem = load_comparisons(_table(), ties=rule)
    np.testing.assert_allclose(problem.matrix, DECISIVE, atol=1e-15)
    assert problem.provenance["sample_sizes"].tolist() == [[0, 3, 2], [3, 0, 2], [2, 2, 0]]
    assert problem.provenance["ties"].tolist() == TIES  # kept per pair in both cases
    assert problem.provenance["ties_total"] == 2
    assert problem.provenance["ties_dropped"] == (2 if rule == "drop" else 0)


def test_a_pair_with_only_ties_has_no_decisive_comparison():
    rows = [("a", "b", "tie"), ("a", "b", "tie"), ("a", "c", "a"), ("b", "c", "c")]
    assert load_comparisons(_table(rows)).matrix[0, 1] == 0.5  # half: an exact tie of the matrix
    with pytest.raises(ValueError, match=r"ties only.*\('a', 'b'\)"):
        load_comparisons(_table(rows), ties="drop")


# ------------------------------------------------------------------------------ intervals
def _wilson_roots(successes, trials, z=Z95):
    """Independent oracle: the roots p of (p_hat - p)^2 = z^2 p (1 - p) / n."""
    p_hat = successes / trials
    a = 1 + z * z / trials
    roots = np.sort(np.roots([a, -(2 * p_hat + z * z / trials), p_hat * p_hat]).real)
    return np.clip(roots, 0.0, 1.0)


def test_intervals_are_wilson_intervals():
    half = load_comparisons(_table())
    for (i, j), (successes, trials) in {(0, 1): (2, 3), (1, 0): (1, 3), (0, 2): (2.5, 3), (1, 2): (0.5, 3)}.items():
        np.testing.assert_allclose([half.provenance["ci_lower"][i, j], half.provenance["ci_upper"][i, j]],
                                   _wilson_roots(successes, trials), atol=1e-12)
    dropped = load_comparisons(_table(), ties="drop")
    # Closed forms at p_hat = 0 and 1 with n = 2: [0, z^2 / (n + z^2)] and [n / (n + z^2), 1].
    assert dropped.provenance["ci_lower"][1, 2] == 0.0
    assert dropped.provenance["ci_upper"][1, 2] == pytest.approx(Z95**2 / (2 + Z95**2), abs=1e-12)
    assert dropped.provenance["ci_lower"][0, 2] == pytest.approx(2 / (2 + Z95**2), abs=1e-12)
    assert dropped.provenance["ci_upper"][0, 2] == 1.0
    assert np.isnan(np.diag(half.provenance["ci_lower"])).all()
    assert "Wilson" in half.provenance["interval_method"]


def test_confidence_level_changes_the_interval():
    problem = load_comparisons(_table(), confidence=0.8)
    z80 = 1.2815515655446004
    np.testing.assert_allclose([problem.provenance["ci_lower"][0, 1], problem.provenance["ci_upper"][0, 1]],
                               _wilson_roots(2, 3, z80), atol=1e-12)
    assert problem.provenance["confidence"] == 0.8


def test_wilson_interval_function():
    lower, upper = wilson_interval([0, 3, 7], [0, 6, 10])
    assert np.isnan(lower[0]) and np.isnan(upper[0])
    assert lower[1] + upper[1] == pytest.approx(1.0)  # symmetric around 1/2
    np.testing.assert_allclose([lower[2], upper[2]], _wilson_roots(7, 10), atol=1e-12)
    with pytest.raises(ValueError, match="exceed"):
        wilson_interval(3, 2)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 2, confidence=1.0)


# ------------------------------------------------------------------------------ missing pairs
SPARSE = [("a", "b", "a"), ("b", "a", "b"), ("a", "b", "a"), ("b", "c", "b"), ("c", "b", "b"), ("c", "b", "c"),
          ("a", "c", "c"), ("a", "c", "a"), ("c", "d", "c"), ("d", "c", "d"), ("c", "d", "tie")]


def test_missing_pairs_are_refused_by_name():
    with pytest.raises(ValueError, match=r"2 pair\(s\) never compared: \('a', 'd'\), \('b', 'd'\).*bradley_terry"):
        load_comparisons(_table(SPARSE))


def _scipy_bradley_terry(wins):
    from scipy.optimize import minimize

    wins = np.asarray(wins, dtype=float)

    def negative_log_likelihood(theta):
        difference = theta[:, None] - theta[None, :]
        return float((wins * np.logaddexp(0.0, -difference)).sum())

    def gradient(theta):
        probability = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        return -(wins.sum(axis=1) - ((wins + wins.T) * probability).sum(axis=1))

    result = minimize(negative_log_likelihood, np.zeros(len(wins)), jac=gradient, method="BFGS",
                      options={"gtol": 1e-10})
    return result.x - result.x.mean()


def test_bradley_terry_fill_matches_an_independent_fit():
    problem = load_comparisons(_table(SPARSE), fill_missing="bradley_terry")
    # Hand counts with the tie of c-d as half a win each: a 2:1 b, b 2:1 c, c 1:1 a, c 1.5:1.5 d.
    wins = [[0, 2, 1, 0], [1, 0, 2, 0], [1, 1, 0, 1.5], [0, 0, 1.5, 0]]
    theta = _scipy_bradley_terry(wins)
    np.testing.assert_allclose(problem.provenance["bradley_terry_log_strengths"], theta, atol=1e-6)
    fitted = bradley_terry_probabilities(theta)
    for i, j in [(0, 3), (1, 3)]:
        assert problem.matrix[i, j] == pytest.approx(fitted[i, j], abs=1e-6)
        assert problem.matrix[j, i] == pytest.approx(fitted[j, i], abs=1e-6)
        assert np.isnan(problem.provenance["ci_lower"][i, j])
    # Compared pairs keep their empirical means.
    assert problem.matrix[0, 1] == pytest.approx(2 / 3) and problem.matrix[2, 3] == 0.5
    assert problem.provenance["filled_pairs"] == (("a", "d"), ("b", "d"))
    assert problem.provenance["fill_missing"] == "bradley_terry"


def test_bradley_terry_two_systems_closed_form():
    fit = fit_bradley_terry([[0, 7], [3, 0]])
    assert fit.log_strengths[0] - fit.log_strengths[1] == pytest.approx(np.log(7 / 3), abs=1e-12)
    assert fit.log_strengths.sum() == pytest.approx(0.0, abs=1e-15)
    assert fit.probabilities()[0, 1] == pytest.approx(0.7, abs=1e-12)


def test_bradley_terry_recovers_known_strengths_from_a_large_log():
    rng = np.random.default_rng(7)
    theta = np.array([1.5, 0.8, 0.3, 0.0, -0.6, -2.0])
    theta -= theta.mean()
    truth = bradley_terry_probabilities(theta)
    rows = []
    for i in range(6):
        for j in range(i + 1, min(i + 3, 6)):  # only neighbours up to distance 2: 6 pairs stay missing
            for won in (rng.random(3000) < truth[i, j]).tolist():
                rows.append((f"s{i}", f"s{j}", "first" if won else "second"))
    problem = load_comparisons(_table(rows), fill_missing="bradley_terry")
    assert len(problem.provenance["filled_pairs"]) == 6
    estimate = problem.provenance["bradley_terry_log_strengths"]
    # Standard errors are about 0.03 with 3000 comparisons per pair: 0.12 is four of them.
    np.testing.assert_allclose(estimate, theta, atol=0.12)
    np.testing.assert_allclose(problem.matrix, truth, atol=0.03)


@pytest.mark.parametrize("wins,message", [
    ([[0, 1, 1], [0, 0, 1], [0, 1, 0]], r"never lost: a"),
    ([[0, 1, 1], [1, 0, 1], [0, 0, 0]], r"never won: c"),
    ([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], r"not connected.*\{a, b\}; \{c, d\}"),
    ([[0, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], r"\{a, b\} won every comparison against .*\{c, d\}"),
    ([[0, 1, 0, 0], [1, 0, 0, 0], [1, 0, 0, 1], [0, 0, 1, 0]], r"\{c, d\} won every comparison against .*\{a, b\}"),
])
def test_bradley_terry_refuses_when_the_mle_does_not_exist(wins, message):
    with pytest.raises(ValueError, match=message):
        fit_bradley_terry(wins, names="abcd"[:len(wins)])


def test_fill_refuses_a_log_whose_mle_does_not_exist():
    rows = [("a", "b", "a"), ("a", "b", "a"), ("b", "c", "b"), ("c", "b", "c")]  # a never lost; (a, c) missing
    with pytest.raises(ValueError, match="never lost: a"):
        load_comparisons(_table(rows), fill_missing="bradley_terry")


# ------------------------------------------------------------------------------ bad input
def test_missing_column_lists_the_columns_found(tmp_path):
    path = _write_csv(tmp_path / "log.csv", header=("model_a", "model_b", "winner"))
    with pytest.raises(ValueError, match=r"missing column\(s\) \['first', 'second'\]; columns found: "
                                         r"\['model_a', 'model_b', 'winner'\]"):
        load_comparisons(path)
    problem = load_comparisons(path, first="model_a", second="model_b")
    np.testing.assert_allclose(problem.matrix, HALF)
    with pytest.raises(ValueError, match=r"columns found: \['first', 'second', 'outcome'\]"):
        load_comparisons({"first": [], "second": [], "outcome": []})


def test_winner_neither_side_names_file_and_line(tmp_path):
    rows = list(ROWS)
    rows[4] = ("alpha", "gamma", "delta")
    with pytest.raises(ValueError, match=r"log\.csv, line 6: winner 'delta' is neither side"):
        load_comparisons(_write_csv(tmp_path / "log.csv", rows))
    with pytest.raises(ValueError, match=r"log\.jsonl, line 5: winner 'delta'"):
        load_comparisons(_write_jsonl(tmp_path / "log.jsonl", rows))
    with pytest.raises(ValueError, match=r"table row 4 \(0-based\): winner 'delta'"):
        load_comparisons(_table(rows))


def test_malformed_json_line_is_named(tmp_path):
    path = _write_jsonl(tmp_path / "log.jsonl")
    lines = path.read_text().splitlines()
    lines[2] = '{"first": "alpha", "second": "beta", "winner": '
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"log\.jsonl, line 3: not valid JSON"):
        load_comparisons(path)
    path.write_text('{"first": "a", "second": "b", "winner": "a"}\n[1, 2]\n')
    with pytest.raises(ValueError, match=r"line 2: expected a JSON object"):
        load_comparisons(path)


def test_same_system_twice_is_refused_with_its_line(tmp_path):
    rows = list(ROWS) + [("beta", "beta", "beta")]
    with pytest.raises(ValueError, match=r"line 11: the same system 'beta' on both sides"):
        load_comparisons(_write_csv(tmp_path / "log.csv", rows))


def test_empty_logs_are_refused(tmp_path):
    with pytest.raises(ValueError, match="no rows"):
        load_comparisons(_write_csv(tmp_path / "log.csv", rows=[]))
    with pytest.raises(ValueError, match="no rows"):
        load_comparisons({"first": [], "second": [], "winner": []})
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(ValueError, match="no rows"):
        load_comparisons(tmp_path / "empty.jsonl")
    (tmp_path / "blank.csv").write_text("")
    with pytest.raises(ValueError, match="empty"):
        load_comparisons(tmp_path / "blank.csv")


@pytest.mark.parametrize("rows,message", [
    ([("a", "", "a")], r"line 2: empty system name in column 'second'"),
    ([("a", "b", "a"), ("a", "b", "a", "extra")], r"line 3: 4 fields, the header has 3"),
])
def test_malformed_csv_rows(tmp_path, rows, message):
    path = tmp_path / "log.csv"
    with path.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["first", "second", "winner"])
        writer.writerows(rows)
    with pytest.raises(ValueError, match=message):
        load_comparisons(path)


def test_bad_values_in_tables():
    with pytest.raises(ValueError, match=r"row 1 \(0-based\): system name None"):
        load_comparisons({"first": ["a", None], "second": ["b", "a"], "winner": ["a", "a"]})
    with pytest.raises(ValueError, match="winner 1.0 must be a string or an integer"):
        load_comparisons({"first": ["a"], "second": ["b"], "winner": [1.0]})
    with pytest.raises(ValueError, match="mix strings and integers"):
        load_comparisons({"first": ["a", 2], "second": ["b", "a"], "winner": ["a", "a"]})
    with pytest.raises(ValueError, match="different lengths"):
        load_comparisons({"first": ["a", "b"], "second": ["b"], "winner": ["a"]})
    with pytest.raises(ValueError, match=r"\['tie'\] are also winner labels"):
        load_comparisons({"first": ["tie"], "second": ["b"], "winner": ["b"]})
    relabelled = load_comparisons({"first": ["tie"], "second": ["b"], "winner": ["b"]}, tie_values="draw")
    assert relabelled.provenance["arms"] == ("b", "tie") and relabelled.matrix[0, 1] == 1.0


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(ties="halves"), ValueError, "ties must be one of"),
    (dict(ties=None), TypeError, "ties must be one of"),
    (dict(fill_missing="mean"), ValueError, "fill_missing must be one of"),
    (dict(confidence=0.0), ValueError, "confidence"),
    (dict(confidence="0.9"), TypeError, "confidence"),
    (dict(first=1), TypeError, "first must be a column name"),
    (dict(first="winner"), ValueError, "three different columns"),
    (dict(first_wins=["first"], second_wins=["first"]), ValueError, "two outcomes"),
    (dict(tie_values=[None]), TypeError, "labels must be strings or integers"),
    (dict(name=3), TypeError, "name must be a string"),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        load_comparisons(_table(), **kwargs)


def test_bad_sources(tmp_path):
    with pytest.raises(ValueError, match="unsupported file type '.xlsx'"):
        load_comparisons(tmp_path / "log.xlsx")
    with pytest.raises(FileNotFoundError, match="not found"):
        load_comparisons(tmp_path / "absent.csv")
    with pytest.raises(TypeError, match="source must be a path"):
        load_comparisons(42)
    with pytest.raises(TypeError, match="column 'first' must be a sequence"):
        load_comparisons({"first": "ab", "second": ["b"], "winner": ["a"]})
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(ValueError, match="not a readable Parquet file"):
        load_comparisons(tmp_path / "bad.parquet")


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch):
    path = tmp_path / "log.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r'pip install "dueling-gym\[data\]"'):
        load_comparisons(path)


# ------------------------------------------------------------------------------ the problem object
def test_pickling_keeps_the_provenance():
    problem = load_comparisons(_table(SPARSE), fill_missing="bradley_terry", name="sparse")
    copy = pickle.loads(pickle.dumps(problem))
    assert isinstance(copy, PreferenceMatrix) and copy == problem
    assert copy.name == "sparse" and copy.source == problem.source
    assert copy.provenance.keys() == problem.provenance.keys()
    for key, value in problem.provenance.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(copy.provenance[key], value)
            assert not copy.provenance[key].flags.writeable
        else:
            assert copy.provenance[key] == value, key


def test_provenance_arrays_are_read_only():
    problem = load_comparisons(_table())
    with pytest.raises(ValueError):
        problem.provenance["wins"][0, 1] = 5


def test_read_comparisons_exposes_the_encoded_rows(tmp_path):
    log = read_comparisons(_write_csv(tmp_path / "log.csv"))
    assert log.arms == ARMS and log.n_rows == 9 and log.lines.tolist() == list(range(2, 11))
