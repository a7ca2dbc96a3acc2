"""Learning-to-rank files and ranker evaluations fed hostile input: files that change while they are
read, truncated or extended lines, a matrix estimated on other data, hand-edited caches that are
re-signed without the cache folder's secret, and sizes that cannot fit in memory."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dueling_gym.envs.ranker_duel import RankerDuelEnv
from dueling_gym.problems import ltr_files, ranker_cache, ranker_problems
from dueling_gym.problems.ltr_files import LTRData, read_ltr_file, write_ltr_file
from dueling_gym.problems.ranker_problems import (
    RankerEvaluationProblem,
    ranker_evaluation,
    synthetic_ltr_data,
)

SMALL_FILE = "".join(f"{(query + document) % 3} qid:{query} 1:{document} 2:0.5 3:{query}.25\n"
                     for query in range(4) for document in range(3))


def _run_python(code: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter: a parser that corrupted memory would kill it, not pytest."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          timeout=timeout)


# ---------------------------------------------------------------------------------- a file that changes
GROWTH_BETWEEN_PASSES = """
    import sys
    from dueling_gym.problems import ltr_files

    path, mode = sys.argv[1], sys.argv[2]
    count_lines = ltr_files._ChunkedReader._count_lines

    def append_after_counting(self, stream, size):
        lines = count_lines(self, stream, size)
        with open(path, "a") as appended:  # another process still writing the file
            appended.write("".join(f"1 qid:{q} 1:0.5 2:1 3:2 4:8\\n" for q in range(100, 3100) for _ in range(3)))
        return lines

    def count_too_few(self, stream, size):  # the bytes changed in place: more lines than counted
        count_lines(self, stream, size)
        return 2

    ltr_files._ChunkedReader._count_lines = append_after_counting if mode == "append" else count_too_few
    try:
        ltr_files.read_ltr_file(path, chunk_bytes=64)
    except ValueError as error:
        print("refused:", error)
    else:
        print("read")
"""


@pytest.mark.parametrize("mode", ["append", "more-lines"])
def test_a_file_that_grows_between_the_passes_is_refused_in_one_line(tmp_path, mode):
    path = tmp_path / "growing.txt"
    path.write_text(SMALL_FILE)
    result = _run_python(GROWTH_BETWEEN_PASSES, str(path), mode)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("refused:") and "changed while it was being read" in result.stdout
    assert len(result.stdout.strip().splitlines()) == 1


CONCURRENT_WRITER = """
    import sys, threading, time
    from dueling_gym.problems.ltr_files import read_ltr_file

    path = sys.argv[1]

    def writer():  # a download still arriving: a few thousand short appends
        for query in range(1000, 4000):
            with open(path, "a") as stream:
                stream.write("".join(f"{d % 3} qid:{query} 1:{d}.5 2:1 3:{query}\\n" for d in range(3)))
            if query % 50 == 0:
                time.sleep(0.001)

    thread = threading.Thread(target=writer)
    thread.start()
    outcomes = set()
    reads = 0
    while thread.is_alive() and reads < 200:
        reads += 1
        try:
            data = read_ltr_file(path, chunk_bytes=997, single_document_queries="drop")
        except ValueError as error:
            outcomes.add("changed" if "changed while" in str(error) else f"other: {error}")
        else:
            assert data.features.shape[0] == data.relevance.shape[0] == data.query_offsets[-1]
            outcomes.add("read")
    thread.join()
    print(sorted(outcomes))
"""


def test_reading_a_file_another_thread_appends_to_never_crashes(tmp_path):
    path = tmp_path / "download.txt"
    path.write_text(SMALL_FILE)
    result = _run_python(CONCURRENT_WRITER, str(path))
    assert result.returncode == 0, result.stderr[-2000:]
    outcomes = eval(result.stdout.strip())  # a list of short strings printed by the script
    assert set(outcomes) <= {"read", "changed"}, outcomes


def test_only_regular_files_are_read(tmp_path):
    with pytest.raises(ValueError, match="not a regular file"):
        read_ltr_file(tmp_path)
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe"
        os.mkfifo(fifo)
        with pytest.raises(ValueError, match="not a regular file"):  # would block in open() if not refused first
            read_ltr_file(fifo)


# ---------------------------------------------------------------------------------- the compiled parser
def _guarded(shape, dtype, spare, fill):
    """An array of ``shape`` that is a view of a larger one: writes past it land in ``spare`` guard rows."""
    whole = np.full((shape[0] + spare,) + tuple(shape[1:]), fill, dtype=dtype)
    return whole, whole[: shape[0]]


line_parts = st.sampled_from(["0", "1", "4", " ", "\t", "qid:", "qid:7", "qid:8", "1:", "2:", "3:", "7:", "0.5",
                              "-2e3", "1e40", "#", "\n", "\r\n", "99999999999999999999", ":", ".", "e", "x"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(line_parts, max_size=60).map("".join), rows=st.integers(0, 6), width=st.integers(0, 4),
       first_row=st.integers(0, 3), capacity=st.integers(0, 6), limit=st.sampled_from([0, 3]))
def test_the_parsing_kernel_never_writes_past_its_arrays(text, rows, width, first_row, capacity, limit):
    kernel = ltr_files._parse_kernel()
    buffer = np.frombuffer(text.encode(), dtype=np.uint8)
    features_all, features = _guarded((rows, width), np.float32, 3, -7.0)
    relevance_all, relevance = _guarded((rows,), np.int32, 3, -7)
    qids_all, qids = _guarded((capacity,), np.int64, 3, -7)
    lines_all, lines = _guarded((capacity,), np.int64, 3, -7)
    status, documents, error_at, _ = kernel(buffer, features, first_row, relevance, qids, lines, 1, limit)
    for whole, part in ((features_all, features), (relevance_all, relevance), (qids_all, qids), (lines_all, lines)):
        assert np.all(whole[part.shape[0]:] == -7), "a write landed past the array"
    assert 0 <= documents <= min(capacity, max(rows - first_row, 0))
    assert status in ltr_files._ERRORS or status == 0
    assert 0 <= error_at <= buffer.size


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, len(SMALL_FILE)), tail=st.lists(line_parts, max_size=30).map("".join),
       chunk_bytes=st.sampled_from([1, 5, 17, 64, 1 << 16]))
def test_truncated_or_extended_files_are_read_or_refused(tmp_path, cut, tail, chunk_bytes):
    path = tmp_path / "cut.txt"
    path.write_bytes((SMALL_FILE[:cut] + tail).encode())
    try:
        data = read_ltr_file(path, chunk_bytes=chunk_bytes, single_document_queries="drop")
    except ValueError as error:
        assert str(path) in str(error) and "\n" not in str(error)
    else:
        assert data.features.shape[0] == data.relevance.shape[0] == data.query_offsets[-1]
        assert np.all(np.isfinite(data.features)) and np.all(np.diff(data.query_offsets) >= 2)


TRUNCATED_AND_EXTENDED = """
    import sys
    import numpy as np
    from dueling_gym.problems.ltr_files import read_ltr_file

    path, seed = sys.argv[1], int(sys.argv[2])
    original = open(path, "rb").read()
    rng = np.random.default_rng(seed)
    alphabet = np.frombuffer(b"0123456789 :.qid#e-\\n\\r\\t", dtype=np.uint8)
    outcomes = {"read": 0, "refused": 0}
    for _ in range(300):
        cut = int(rng.integers(0, len(original) + 1))
        tail = alphabet[rng.integers(0, alphabet.size, size=int(rng.integers(0, 200)))].tobytes()
        with open(path + ".case", "wb") as stream:
            stream.write(original[:cut] + tail)
        try:
            read_ltr_file(path + ".case", chunk_bytes=int(rng.integers(1, 300)), single_document_queries="drop")
            outcomes["read"] += 1
        except ValueError:
            outcomes["refused"] += 1
    print(outcomes)
"""


def test_many_truncated_and_extended_files_in_a_separate_process(tmp_path):
    path = tmp_path / "base.txt"
    write_ltr_file(path, synthetic_ltr_data(6, (2, 5), 5, seed=3))
    result = _run_python(TRUNCATED_AND_EXTENDED, str(path), "11")
    assert result.returncode == 0, result.stderr[-2000:]
    outcomes = json.loads(result.stdout.strip().replace("'", '"'))
    assert outcomes["read"] + outcomes["refused"] == 300 and outcomes["read"] > 0 and outcomes["refused"] > 0


# ---------------------------------------------------------------------------------- a matrix of other data
def test_the_environment_refuses_a_matrix_estimated_on_other_data(tmp_path):
    data_a = synthetic_ltr_data(20, (3, 10), 4, seed=1)
    data_b = synthetic_ltr_data(20, (3, 10), 4, seed=2)
    matrix_a = ranker_evaluation(data_a, comparisons_per_pair=50, progress=False)
    assert len(matrix_a.provenance["comparison_data_sha256"]) == 64
    with pytest.raises(ValueError, match="estimated on other data"):
        RankerDuelEnv(data_b, preferences=matrix_a)
    # The same content read from a file (another digest of the bytes) is the same data.
    path = tmp_path / "a.txt"
    write_ltr_file(path, data_a)
    from_file = ranker_evaluation(path, comparisons_per_pair=50, progress=False)
    RankerDuelEnv(data_a, preferences=from_file)
    RankerDuelEnv(path, preferences=matrix_a)
    # A matrix whose provenance lacks the digest (made by hand) is refused, not trusted.
    provenance = {name: value for name, value in matrix_a.provenance.items() if name != "comparison_data_sha256"}
    stripped = type(matrix_a)(matrix_a.matrix, provenance=provenance)
    with pytest.raises(ValueError, match="comparison_data_sha256"):
        RankerDuelEnv(data_a, preferences=stripped)


def test_the_data_digest_covers_what_the_comparisons_read():
    data = synthetic_ltr_data(15, (3, 8), 4, seed=5)
    one = RankerEvaluationProblem(data).comparison_data_sha256
    assert RankerEvaluationProblem(data).comparison_data_sha256 == one
    relevance = np.array(data.relevance)
    relevance[0] = (relevance[0] + 1) % 5
    other = LTRData.from_arrays(data.features, relevance, data.query_offsets, data.query_ids)
    assert RankerEvaluationProblem(other).comparison_data_sha256 != one
    assert RankerEvaluationProblem(data, tie_break_seed=1).comparison_data_sha256 != one


# ---------------------------------------------------------------------------------- hand-edited caches
def _cached(tmp_path, **options):
    data = synthetic_ltr_data(25, (3, 10), 5, seed=11)
    path = tmp_path / "train.txt"
    write_ltr_file(path, data)
    cache = tmp_path / "cache"
    first = ranker_evaluation(path, comparisons_per_pair=120, cache_dir=cache, progress=False, **options)
    (file,) = cache.glob("ranker_evaluation-*.npz")
    return path, cache, file, first


def _plain_checksum(key, counts, facts_json):
    """What a hand editor can compute: a SHA-256 of everything the file holds (no secret)."""
    digest = hashlib.sha256(key.encode() + facts_json.encode())
    for name in ("wins", "ties", "comparisons"):
        array = np.ascontiguousarray(counts[name], dtype=np.int64)
        digest.update(name.encode() + repr(array.shape).encode() + array.tobytes())
    return digest.hexdigest()


def _resign(file, edit, sign):
    """Apply ``edit`` to the stored arrays and facts, then sign them again with ``sign``."""
    with np.load(file) as stored:
        contents = {name: np.array(stored[name]) for name in stored.files}
    counts = {name: contents[name].copy() for name in ("wins", "ties", "comparisons")}
    facts = json.loads(str(contents["facts"]))
    edit(counts, facts)
    facts_json = json.dumps(facts, sort_keys=True)
    key = str(contents["key"])
    with open(file, "wb") as stream:
        np.savez(stream, key=np.array(key), facts=np.array(facts_json),
                 signature=np.array(sign(key, counts, facts_json)), **counts)


def _swap_all_wins(counts, facts):
    counts["wins"] = counts["wins"].T.copy()


def _swap_the_winners_pairs(counts, facts):
    wins = counts["wins"]
    winner = int(np.argmax((wins > wins.T).sum(axis=1)))
    counts["wins"][winner, :], counts["wins"][:, winner] = wins[:, winner].copy(), wins[winner, :].copy()


def _swap_one_pair_of_the_winner(counts, facts):
    wins = counts["wins"]
    winner = int(np.argmax((wins > wins.T).sum(axis=1)))
    other = (winner + 1) % wins.shape[0]
    wins[winner, other], wins[other, winner] = wins[other, winner], wins[winner, other]


def _lower_ties(counts, facts):
    counts["ties"][1, 0] += 2
    counts["wins"][0, 1] -= 1
    counts["wins"][1, 0] -= 1


def _other_data_digest(counts, facts):
    facts["comparison_data_sha256"] = "0" * 64


_EDITS = [_swap_all_wins, _swap_the_winners_pairs, _swap_one_pair_of_the_winner, _lower_ties, _other_data_digest]


def _another_secret(key, counts, facts_json):
    return ranker_cache.signature(b"\x01" * 32, key, counts, facts_json)


@pytest.mark.parametrize("sign", [_plain_checksum, _another_secret], ids=["sha256", "other-secret"])
@pytest.mark.parametrize("edit", _EDITS)
def test_a_re_signed_hand_edit_of_the_cache_is_caught_and_recomputed(tmp_path, edit, sign):
    path, cache, file, first = _cached(tmp_path)
    _resign(file, edit, sign)
    with pytest.warns(UserWarning, match="signature does not match"):
        again = ranker_evaluation(path, comparisons_per_pair=120, cache_dir=cache, progress=False)
    assert again == first
    np.testing.assert_array_equal(again.provenance["wins"], first.provenance["wins"])
    with warnings.catch_warnings():  # rewritten: the next load trusts it again
        warnings.simplefilter("error")
        assert ranker_evaluation(path, comparisons_per_pair=120, cache_dir=cache, progress=False) == first


def test_inconsistent_counts_are_refused_even_when_signed_with_the_folders_secret(tmp_path):
    path, cache, file, first = _cached(tmp_path)
    secret = (cache / ".signing-key").read_bytes()
    _resign(file, _lower_ties,
            lambda key, counts, facts_json: ranker_cache.signature(secret, key, counts, facts_json))
    with pytest.warns(UserWarning, match="inconsistent"):
        assert ranker_evaluation(path, comparisons_per_pair=120, cache_dir=cache, progress=False) == first


def test_the_signing_secret_is_private_and_a_lost_secret_means_recomputing(tmp_path):
    path, cache, file, first = _cached(tmp_path)
    secret_file = cache / ".signing-key"
    assert len(secret_file.read_bytes()) == 32
    assert secret_file.stat().st_mode & 0o077 == 0
    secret_file.unlink()
    with pytest.warns(UserWarning, match="signature does not match"):
        assert ranker_evaluation(path, comparisons_per_pair=120, cache_dir=cache, progress=False) == first
    assert len(secret_file.read_bytes()) == 32
    assert not list(cache.glob("*.tmp"))


def test_a_cache_hit_parses_nothing(tmp_path, monkeypatch):
    path, cache, file, first = _cached(tmp_path)

    def no_parsing(*args, **kwargs):
        raise AssertionError("a cache hit parsed the data")

    monkeypatch.setattr(ranker_problems, "_read", no_parsing)
    monkeypatch.setattr(ranker_problems, "RankerEvaluationProblem", no_parsing)
    again = ranker_evaluation(path, comparisons_per_pair=120, cache_dir=cache, progress=False)
    assert again == first
    assert again.provenance["comparison_data_sha256"] == first.provenance["comparison_data_sha256"]


# ---------------------------------------------------------------------------------- sizes refused up front
@pytest.fixture
def one_gib_free(monkeypatch):
    """A machine with 1 GiB available, whatever this one has."""
    import dueling_gym.validation as validation

    monkeypatch.setattr(validation, "available_memory", lambda: 2**30)
    monkeypatch.setattr(ltr_files, "available_memory", lambda: 2**30)


@pytest.mark.parametrize("index", [99_999, 999_999_999])
def test_a_huge_feature_index_is_refused_with_its_size_before_allocating(tmp_path, one_gib_free, index):
    path = tmp_path / "wide.txt"
    path.write_text(f"1 qid:1 1:0.5 {index}:1\n0 qid:1 2:0.5\n2 qid:2 1:1\n0 qid:2 3:1\n")
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"needs about [0-9.]+ (GiB|TiB)") as refused:
            ranker_evaluation(path, comparisons_per_pair=10, progress=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MiB were allocated before the refusal"
    assert "\n" not in str(refused.value)


def test_too_many_comparisons_per_pair_are_refused_before_reading_the_data(tmp_path):
    missing = tmp_path / "not-there.txt"  # the refusal comes first, so the file is never opened
    with pytest.raises(ValueError, match=r"comparisons_per_pair=1000000000000 .*needs about [0-9.]+ TiB"):
        ranker_evaluation(missing, comparisons_per_pair=10**12, progress=False)
    data = synthetic_ltr_data(5, (3, 5), 3, seed=0)
    problem = RankerEvaluationProblem(data)
    with pytest.raises(ValueError, match="TiB"):
        ranker_problems.estimate_preferences(problem, 10**12)


def test_the_cli_refuses_hostile_ltr_input_in_one_line(tmp_path):
    path = tmp_path / "train.txt"
    write_ltr_file(path, synthetic_ltr_data(5, (3, 5), 3, seed=0))
    result = subprocess.run([sys.executable, "-m", "dueling_gym.cli", "problems", "--from-ltr", str(path),
                             "--comparisons-per-pair", str(10**12), "--no-cache", "--no-bounds"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "TiB" in result.stderr
    result = subprocess.run([sys.executable, "-m", "dueling_gym.cli", "problems", "--from-ltr", str(tmp_path),
                             "--no-cache", "--no-bounds"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "not a regular file" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_row_writer_never_writes_past_its_buffer():
    from dueling_gym.problems import ltr_kernels

    format_rows = ltr_kernels.compiled().format_rows
    features = np.full((3, 4), -123456.789, dtype=np.float32)
    relevance = np.array([2**31 - 1] * 3, dtype=np.int32)
    qids = np.array([2**63 - 1] * 3, dtype=np.int64)
    needed = ltr_kernels.max_row_bytes(4, 6)
    guarded = np.full(3 * needed + 64, 7, dtype=np.uint8)
    for size in (0, needed - 1):  # not even one worst-case row fits: refused
        assert format_rows(features, relevance, qids, 6, guarded[:size]) == -1
        assert np.all(guarded[size:] == 7)  # nothing past the buffer it was given
    for size in range(needed, 3 * needed, 7):  # refused, or written within the buffer
        guarded[:] = 7
        used = format_rows(features, relevance, qids, 6, guarded[:size])
        assert used == -1 or 0 < used <= size
        assert np.all(guarded[size:] == 7)
    guarded[:] = 7
    used = format_rows(features, relevance, qids, 6, guarded[:3 * needed])
    assert 0 < used <= 3 * needed and np.all(guarded[3 * needed:] == 7)
