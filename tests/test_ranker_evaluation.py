"""LETOR files, interleaving and cascade clicks, each checked against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dueling_gym.problems.interleaving import (
    CLICK_MODELS,
    click_model,
    probabilistic_interleave,
    probabilistic_outcome,
    team_draft_interleave,
)
from dueling_gym.problems.ltr_files import LTRData, read_ltr_file, write_ltr_file
from dueling_gym.problems.ranker_problems import synthetic_ltr_data

GOOD_FILE = (
    "# a comment line before the data\n"
    "2 qid:10 1:0.5 3:-1.25e1 # docid = GX001 inc = 1\n"
    "\n"
    "0 qid:10 2:3 3:0.001\r\n"
    "1   qid:7\t1:1 2:+2 3:3E0\n"
    "4 qid:7 1:1.5\n"
    "3 qid:8 2:0.25\n"
    "0 qid:8"
)


def _write(tmp_path, text, name="data.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


# ---------------------------------------------------------------------------------- reader
@pytest.mark.parametrize("chunk_bytes", [1, 7, 33, 1 << 20])
def test_reader_values_qids_comments_and_boundaries(tmp_path, chunk_bytes):
    data = read_ltr_file(_write(tmp_path, GOOD_FILE), chunk_bytes=chunk_bytes)
    expected = np.array([[0.5, 0.0, -12.5], [0.0, 3.0, np.float32(0.001)], [1.0, 2.0, 3.0], [1.5, 0.0, 0.0],
                         [0.0, 0.25, 0.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    assert data.features.dtype == np.float32 and data.features.shape == (6, 3)
    np.testing.assert_array_equal(data.features, expected)
    np.testing.assert_array_equal(data.relevance, [2, 0, 1, 4, 3, 0])
    np.testing.assert_array_equal(data.query_offsets, [0, 2, 4, 6])
    np.testing.assert_array_equal(data.query_ids, [10, 7, 8])
    assert (data.n_documents, data.n_features, data.n_queries) == (6, 3, 3)
    assert not data.features.flags.writeable


def test_reader_pads_to_n_features_and_refuses_a_larger_index(tmp_path):
    path = _write(tmp_path, GOOD_FILE)
    assert read_ltr_file(path, n_features=5).features.shape == (6, 5)
    with pytest.raises(ValueError, match=r"data.txt, line 2: a feature index exceeds n_features \(2\)"):
        read_ltr_file(path, n_features=2)


@pytest.mark.parametrize("text,line,message", [
    ("1 qid:1 1:0.5\n1 qid:1 1:x\n", 2, "a feature value must be a finite decimal number"),
    ("1 qid:1 1:0.5\n# note\n1 qid:1 2 3\n", 3, "a feature must be written <index>:<value>"),
    ("1 qid:1 1:nan\n1 qid:1 1:1\n", 1, "finite decimal"),
    ("1 qid:1 1:1e45\n1 qid:1 1:1\n", 1, "does not fit a float32"),
    ("1 qid:1 2:1 1:1\n1 qid:1 1:1\n", 1, "strictly increasing"),
    ("1 qid:1 1:1 1:2\n1 qid:1 1:1\n", 1, "strictly increasing"),
    ("1 qid:1 0:1\n1 qid:1 1:1\n", 1, "indices start at 1"),
    ("-1 qid:1 1:1\n1 qid:1 1:1\n", 1, "relevance label must be a non-negative integer"),
    ("1.0 qid:1 1:1\n1 qid:1 1:1\n", 1, "relevance label must be a non-negative integer"),
    ("1 qid:1 1:1\n1 qid:1 1:2.5x\n", 2, "finite decimal"),
    ("1 qid:x 1:1\n1 qid:1 1:1\n", 1, "missing qid"),
])
def test_reader_refuses_bad_lines_with_their_line_number(tmp_path, text, line, message):
    for chunk_bytes in (3, 1 << 20):
        with pytest.raises(ValueError, match=rf"data.txt, line {line}: .*{message}"):
            read_ltr_file(_write(tmp_path, text), chunk_bytes=chunk_bytes)


def test_reader_refuses_a_missing_qid(tmp_path):
    with pytest.raises(ValueError, match=r"line 3: the second field must be 'qid:.*missing qid.*'2 1:0.5 2:1'"):
        read_ltr_file(_write(tmp_path, "1 qid:4 1:1\n0 qid:4 1:2\n2 1:0.5 2:1\n"))


def test_single_document_query_is_refused_or_dropped_explicitly(tmp_path):
    path = _write(tmp_path, "1 qid:1 1:1\n0 qid:1 1:2\n2 qid:2 1:7\n1 qid:3 1:3\n0 qid:3 1:4\n3 qid:9 1:5\n")
    with pytest.raises(ValueError, match=r"line 3: query qid:2 has a single document \(2 such queries"):
        read_ltr_file(path)
    data = read_ltr_file(path, single_document_queries="drop")
    assert data.dropped_queries == (2, 9)
    np.testing.assert_array_equal(data.query_ids, [1, 3])
    np.testing.assert_array_equal(data.query_offsets, [0, 2, 4])
    np.testing.assert_array_equal(data.features[:, 0], [1, 2, 3, 4])
    np.testing.assert_array_equal(data.relevance, [1, 0, 1, 0])
    with pytest.raises(ValueError, match="single_document_queries"):
        read_ltr_file(path, single_document_queries="ignore")


@pytest.mark.parametrize("chunk_bytes", [4, 1 << 20])
def test_non_contiguous_query_is_refused(tmp_path, chunk_bytes):
    path = _write(tmp_path, "1 qid:1 1:1\n0 qid:1 1:2\n2 qid:2 1:7\n1 qid:2 1:3\n0 qid:1 1:4\n")
    with pytest.raises(ValueError, match=r"line 5: query qid:1 continues here .*began at line 1.*contiguous"):
        read_ltr_file(path, chunk_bytes=chunk_bytes)


def test_empty_file_and_arrays_validation(tmp_path):
    with pytest.raises(ValueError, match="no documents"):
        read_ltr_file(_write(tmp_path, "# only a comment\n\n"))
    with pytest.raises(ValueError, match="at least two"):
        LTRData.from_arrays(np.zeros((3, 2)), [0, 1, 2], [0, 1, 3])
    with pytest.raises(TypeError, match="relevance"):
        LTRData.from_arrays(np.zeros((2, 2)), [0.5, 1.0], [0, 2])
    with pytest.raises(ValueError, match="finite"):
        LTRData.from_arrays(np.array([[np.nan], [1.0]]), [0, 1], [0, 2])


def test_writer_round_trip(tmp_path):
    data = synthetic_ltr_data(20, (2, 9), 5, seed=3)
    path = tmp_path / "synthetic.txt"
    write_ltr_file(path, data, decimals=4)
    back = read_ltr_file(path, chunk_bytes=100)
    np.testing.assert_array_equal(back.relevance, data.relevance)
    np.testing.assert_array_equal(back.query_offsets, data.query_offsets)
    np.testing.assert_array_equal(back.query_ids, data.query_ids)
    np.testing.assert_allclose(back.features, np.round(data.features.astype(np.float64), 4), rtol=1e-6, atol=1e-7)
    first_line = path.read_text().splitlines()[0].split()
    assert first_line[1] == "qid:1" and [field.split(":")[0] for field in first_line[2:]] == ["1", "2", "3", "4", "5"]


# ---------------------------------------------------------------------------------- team draft
# A = (1, 2, 3), B = (2, 4, 1).  A coin is read only when both teams have picked equally often,
# i.e. at positions 0 and 2 (after one pick each); position 1 always goes to the team behind.
#   coin0 = A: A takes 1, B takes 2, then coin2 = A: A takes 3  -> [1, 2, 3], teams A B A
#                                         coin2 = B: B takes 4  -> [1, 2, 4], teams A B B
#   coin0 = B: B takes 2, A takes 1, then coin2 = A: A takes 3  -> [2, 1, 3], teams B A A
#                                         coin2 = B: B takes 4  -> [2, 1, 4], teams B A B
TEAM_DRAFT_CASES = {
    (True, True): ([1, 2, 3], [0, 1, 0]),
    (True, False): ([1, 2, 4], [0, 1, 1]),
    (False, True): ([2, 1, 3], [1, 0, 0]),
    (False, False): ([2, 1, 4], [1, 0, 1]),
}


@pytest.mark.parametrize("coin0,coin2", list(TEAM_DRAFT_CASES))
@pytest.mark.parametrize("coin1", [True, False])
def test_team_draft_lists_by_hand(coin0, coin1, coin2):
    docs, teams = team_draft_interleave([1, 2, 3], [2, 4, 1], coins=[coin0, coin1, coin2])
    expected_docs, expected_teams = TEAM_DRAFT_CASES[(coin0, coin2)]
    assert docs.tolist() == expected_docs and teams.tolist() == expected_teams


def test_team_draft_credit_by_hand():
    """Clicks on documents 1 and 4: A wins under lists [1,2,3] and [2,1,3], the other two tie,
    so over the four equally likely coin outcomes A wins 1/2 and ties 1/2."""
    outcomes = []
    for coins in TEAM_DRAFT_CASES:
        docs, teams = team_draft_interleave([1, 2, 3], [2, 4, 1], coins=[coins[0], True, coins[1]])
        credit_a = sum(1 for doc, team in zip(docs, teams) if doc in (1, 4) and team == 0)
        credit_b = sum(1 for doc, team in zip(docs, teams) if doc in (1, 4) and team == 1)
        outcomes.append(int(np.sign(credit_a - credit_b)))
    assert sorted(outcomes) == [0, 0, 1, 1]


def test_team_draft_identical_lists_and_bad_input():
    docs, _ = team_draft_interleave([5, 6, 7], [5, 6, 7], rng=np.random.default_rng(0))
    assert docs.tolist() == [5, 6, 7]
    with pytest.raises(ValueError, match="exactly one"):
        team_draft_interleave([1, 2], [2, 1])
    with pytest.raises(ValueError, match="twice"):
        team_draft_interleave([1, 1], [2, 1], coins=[True, True])
    with pytest.raises(TypeError, match="coins"):
        team_draft_interleave([1, 2], [2, 1], coins=[1, 0])


# ---------------------------------------------------------------------------------- probabilistic
def test_probabilistic_interleave_probabilities_by_hand():
    """A = (1, 2, 3), B = (3, 1, 2), tau = 3: weights 1, 1/8, 1/27 (total 251/216).

    First document: 1 with P = (216/251 + 27/251) / 2 = 243/502, 2 with (27/251 + 8/251)/2 = 35/502,
    3 with (8/251 + 216/251)/2 = 224/502.  Posterior that A contributed 1 at the top:
    (216/251) / (216/251 + 27/251) = 8/9.  After 1 is shown A has {2: 1/8, 3: 1/27} and B
    {3: 1, 2: 1/27}: document 3 next has p_A = (1/27)/(35/216) = 8/35 and p_B = 27/28, so its
    posterior is (8/35) / (8/35 + 27/28) = 32/167; the last document has p_A = p_B = 1, posterior 1/2.
    """
    rng = np.random.default_rng(5)
    n = 30_000
    first_counts = {1: 0, 2: 0, 3: 0}
    posterior_132 = None
    for _ in range(n):
        docs, posterior = probabilistic_interleave([1, 2, 3], [3, 1, 2], rng)
        first_counts[int(docs[0])] += 1
        if docs.tolist() == [1, 3, 2]:
            posterior_132 = posterior
    for doc, probability in {1: 243 / 502, 2: 35 / 502, 3: 224 / 502}.items():
        assert abs(first_counts[doc] / n - probability) < 4.5 * math.sqrt(probability * (1 - probability) / n)
    np.testing.assert_allclose(posterior_132, [8 / 9, 32 / 167, 1 / 2], rtol=1e-12)


def test_probabilistic_outcome_equals_enumeration_of_assignments():
    posterior = np.array([0.9, 0.2, 0.6, 0.5, 0.35])
    clicks = np.array([True, False, True, True, True])
    expected = 0.0
    clicked = np.flatnonzero(clicks)
    for assignment in range(2 ** clicked.size):
        to_a = [(assignment >> bit) & 1 for bit in range(clicked.size)]
        probability = math.prod(posterior[p] if a else 1 - posterior[p] for p, a in zip(clicked, to_a))
        expected += probability * np.sign(sum(to_a) - (clicked.size - sum(to_a)))
    assert probabilistic_outcome(posterior, clicks) == pytest.approx(expected, abs=1e-14)
    assert probabilistic_outcome(posterior, np.zeros(5, dtype=bool)) == 0.0


# ---------------------------------------------------------------------------------- clicks
def _cascade_click_probabilities(grades, model):
    """P(click at rank r) = click[g_r] * prod_{s < r} (1 - click[g_s] * stop[g_s])."""
    reach, probabilities = 1.0, []
    for grade in grades:
        probabilities.append(reach * model.click[grade])
        reach *= 1.0 - model.click[grade] * model.stop[grade]
    return probabilities


def test_navigational_click_probabilities_by_hand():
    # Grades 4, 0, 2, 1: 0.95; 0.145 * 0.05; 0.145 * 0.99 * 0.5; 0.145 * 0.99 * 0.75 * 0.3.
    expected = [0.95, 0.00725, 0.071775, 0.03229875]
    assert _cascade_click_probabilities([4, 0, 2, 1], CLICK_MODELS["navigational"]) == pytest.approx(expected)


@pytest.mark.parametrize("name", sorted(CLICK_MODELS))
def test_click_frequencies_match_the_cascade(name):
    model = CLICK_MODELS[name]
    grades = [3, 0, 4, 1, 2, 0, 4]
    n = 40_000
    clicks = model.simulate(grades, np.random.default_rng(11), n_sessions=n)
    for rank, probability in enumerate(_cascade_click_probabilities(grades, model)):
        width = 4.5 * math.sqrt(probability * (1 - probability) / n) + 1e-12
        assert abs(clicks[:, rank].mean() - probability) <= width, (name, rank)


def test_click_model_specs():
    custom = click_model({"click": [0.1, 0.9], "stop": [0.0, 0.5]})
    assert custom.name == "custom" and custom.n_grades == 2
    with pytest.raises(ValueError, match="unknown click model"):
        click_model("impatient")
    with pytest.raises(ValueError, match=r"click model stop\[1\]"):
        click_model({"click": [0.1, 0.9], "stop": [0.0, 1.5]})
    with pytest.raises(ValueError, match="as many stop"):
        click_model({"click": [0.1, 0.9], "stop": [0.0]})
    with pytest.raises(ValueError, match="exactly the keys"):
        click_model({"click": [0.1]})
    with pytest.raises(ValueError, match="grades must lie"):
        CLICK_MODELS["perfect"].simulate([5], np.random.default_rng(0))
