"""Learning-to-rank files in the layouts the ranking tools write: query sizes in a side file
(LightGBM's FILE.query, XGBoost's FILE.group), gzip / bzip2 / xz compression, NULL feature values
and rank-valued features (lower is better), through the reader, ranker_evaluation, the command
line and the RankerDuel environment."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import tracemalloc

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dueling_gym.cli import main
from dueling_gym.envs.ranker_duel import RankerDuelEnv
from dueling_gym.problems import ltr_files
from dueling_gym.problems.ltr_files import LTRData, read_ltr_file
from dueling_gym.problems.ranker_problems import RankerEvaluationProblem, ranker_evaluation

# Four queries of 3, 2, 4 and 3 documents; features 1-3, a comment on one line.
SIZES = (3, 2, 4, 3)
ROWS = [(query, (query + document) % 3, document, 0.5 * query) for query, size in enumerate(SIZES)
        for document in range(size)]
WITH_QID = "".join(f"{grade} qid:{query + 10} 1:{document} 2:{value} 3:{document % 2}"
                   f"{' # docid = x' if document == 1 else ''}\n" for query, grade, document, value in ROWS)
WITHOUT_QID = "".join(f"{grade} 1:{document} 2:{value} 3:{document % 2}\n" for _, grade, document, value in ROWS)
SIDE = "".join(f"{size}\n" for size in SIZES)
COMPRESSORS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


def _write(path, text):
    path.write_text(text)
    return path


def _same_data(read, reference):
    assert np.array_equal(read.features, reference.features)
    assert np.array_equal(read.relevance, reference.relevance)
    assert np.array_equal(read.query_offsets, reference.query_offsets)


# ---------------------------------------------------------------------------------- side file of query sizes
@pytest.mark.parametrize("suffix", [".query", ".group"])
def test_a_side_file_next_to_the_data_gives_the_query_sizes(tmp_path, suffix):
    reference = read_ltr_file(_write(tmp_path / "qid.txt", WITH_QID))
    data = _write(tmp_path / "train.txt", WITHOUT_QID)
    _write(tmp_path / f"train.txt{suffix}", SIDE)
    for chunk_bytes in (5, 1 << 20):
        read = read_ltr_file(data, chunk_bytes=chunk_bytes)
        _same_data(read, reference)
        assert read.query_ids.tolist() == [0, 1, 2, 3]  # positions: the side file has no ids


def test_a_side_file_named_by_the_option_or_beside_the_compressed_data(tmp_path):
    reference = read_ltr_file(_write(tmp_path / "qid.txt", WITH_QID))
    data = _write(tmp_path / "rows.svm", WITHOUT_QID)
    sizes = _write(tmp_path / "sizes-of-the-queries.txt", SIDE)
    _same_data(read_ltr_file(data, group_file=sizes), reference)
    _same_data(read_ltr_file(str(data), group_file=str(sizes)), reference)
    compressed = tmp_path / "train.txt.gz"
    compressed.write_bytes(gzip.compress(WITHOUT_QID.encode()))
    _write(tmp_path / "train.txt.query", SIDE)  # the side file of the uncompressed name
    _same_data(read_ltr_file(compressed), reference)
    with pytest.raises(FileNotFoundError, match="query-size side file not found"):
        read_ltr_file(data, group_file=tmp_path / "absent.query")
    with pytest.raises(TypeError, match="group_file must be a path"):
        read_ltr_file(data, group_file=True)


@pytest.mark.parametrize("side,message", [
    ("3\n2\n4\n", r"lists 9 documents in 3 queries, but .*rows.txt has 12 data lines"),
    ("3\n2\n4\n3\n1\n", r"lists 13 documents in 5 queries, but .*rows.txt has 12 data lines"),
    ("3\n2\n0\n4\n3\n", r"line 3: a query of 0 documents"),
    ("3\n-2\n4\n3\n", r"line 2 holds a negative size \(-2\)"),
    ("3\n2.0\n4\n3\n", r"line 2 holds '2.0', not a whole number"),
    ("3\n2 1\n4\n3\n", r"line 2 holds '2 1', not a whole number"),
    ("three\n", r"line 1 holds 'three', not a whole number"),
    ("3\n\n2\n4\n3\n", r"line 2 is blank"),
    ("", r"lists no query"),
    ("3\n2\n4\n3\n\n  \n", None),  # blank lines an editor leaves at the end are fine
])
def test_side_file_mismatches_are_refused_naming_the_line(tmp_path, side, message):
    data = _write(tmp_path / "rows.txt", WITHOUT_QID)
    sizes = _write(tmp_path / "rows.txt.query", side)
    if message is None:
        assert read_ltr_file(data).n_queries == 4
        return
    with pytest.raises(ValueError, match=message) as refused:
        read_ltr_file(data)
    assert str(sizes) in str(refused.value) and "\n" not in str(refused.value)


def test_side_file_conflicts_are_refused(tmp_path):
    data = _write(tmp_path / "train.txt", WITHOUT_QID)
    with pytest.raises(ValueError, match=r"line 1: .*missing qid.*side file FILE.query or FILE.group"):
        read_ltr_file(data)  # no qid: and no side file
    _write(tmp_path / "train.txt.query", SIDE)
    _write(tmp_path / "train.txt.group", SIDE)
    with pytest.raises(ValueError, match="more than one side file of query sizes.*group_file="):
        read_ltr_file(data)
    assert read_ltr_file(data, group_file=tmp_path / "train.txt.group").n_queries == 4
    # A stale side file beside a file with qid: fields: refused, and group_file=False reads the qids.
    qid_data = _write(tmp_path / "qid.txt", WITH_QID)
    _write(tmp_path / "qid.txt.query", SIDE)
    with pytest.raises(ValueError, match=r"qid.txt, line 1: this line has a qid: field, but the query sizes come "
                                         r"from a side file \(.*qid.txt.query\).*group_file=False.*--no-group-file"):
        read_ltr_file(qid_data)
    assert read_ltr_file(qid_data, group_file=False).query_ids.tolist() == [10, 11, 12, 13]


def test_a_hostile_side_file_is_refused_before_it_is_read(tmp_path):
    data = _write(tmp_path / "rows.txt", WITHOUT_QID)
    _write(tmp_path / "rows.txt.query", "1\n" * 5000)  # far more bytes than 12 rows can need
    with pytest.raises(ValueError, match=r"has 10000 bytes, more than one size per data row can take \(12 rows"):
        read_ltr_file(data)
    (tmp_path / "rows.txt.query").unlink()
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "rows.txt.query")  # would block in open() if not refused first
        with pytest.raises(ValueError, match="query-size side file .* is a FIFO"):
            read_ltr_file(data)


def test_single_document_queries_of_a_side_file_name_its_line(tmp_path):
    data = _write(tmp_path / "rows.txt", WITHOUT_QID)
    _write(tmp_path / "rows.txt.query", "3\n1\n1\n4\n3\n")
    with pytest.raises(ValueError, match=r"rows.txt.query, line 2: query 1 has a single document \(2 such queries"
                                         r".*--single-document-queries drop"):
        read_ltr_file(data)
    read = read_ltr_file(data, single_document_queries="drop")
    assert read.dropped_queries == (1, 2) and read.query_offsets.tolist() == [0, 3, 7, 10]


def test_the_cache_key_holds_the_side_files_digest(tmp_path):
    data = _write(tmp_path / "rows.txt", WITHOUT_QID)
    side = _write(tmp_path / "rows.txt.query", SIDE)
    cache = tmp_path / "cache"
    options = {"comparisons_per_pair": 40, "cache_dir": cache, "progress": False, "jobs": 1, "cutoff": 3}
    first = ranker_evaluation(data, **options)
    assert first.provenance["data_sha256"] != hashlib.sha256(data.read_bytes()).hexdigest()
    _write(side, "3\n2\n2\n2\n3\n")  # the same rows, other queries: not the cached matrix
    second = ranker_evaluation(data, **options)
    assert second.provenance["cache_key"] != first.provenance["cache_key"]
    assert second.provenance["n_queries"] == 5 and len(list(cache.glob("*.npz"))) == 2
    assert ranker_evaluation(data, **options) == second  # and a hit under the new key


# ---------------------------------------------------------------------------------- compression
@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_compressed_files_are_read_as_their_text(tmp_path, suffix):
    reference = read_ltr_file(_write(tmp_path / "plain.txt", WITH_QID))
    path = tmp_path / f"train.txt.{suffix}"
    path.write_bytes(COMPRESSORS[suffix](WITH_QID.encode()))
    for chunk_bytes in (1, 13, 1 << 20):
        data, digest = ltr_files._read(path, None, "error", chunk_bytes, digest=True)
        _same_data(data, reference)
        # The digest is of the compressed bytes on disk, what a cache hit hashes without decompressing.
        assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    renamed = tmp_path / "no-suffix.dat"  # recognised by its first bytes, whatever its name
    renamed.write_bytes(path.read_bytes())
    _same_data(read_ltr_file(renamed), reference)
    cache = tmp_path / "cache"
    estimate = ranker_evaluation(path, comparisons_per_pair=30, cache_dir=cache, progress=False, jobs=1, cutoff=3)
    assert ranker_evaluation(path, comparisons_per_pair=30, cache_dir=cache, progress=False, jobs=1,
                             cutoff=3) == estimate


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_corrupt_truncated_or_misnamed_compressed_files_are_refused(tmp_path, suffix):
    whole = COMPRESSORS[suffix](WITH_QID.encode() * 20)
    path = tmp_path / f"train.txt.{suffix}"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match="corrupt or truncated"):
        read_ltr_file(path)
    path.write_bytes(whole[:12] + bytes(64) + whole[76:])
    with pytest.raises(ValueError, match=r"corrupt or truncated|line \d+"):
        read_ltr_file(path)
    path.write_text(WITH_QID)  # plain text under a compressed name
    with pytest.raises(ValueError, match="the name says .* but the file does not start like .*plain text"):
        read_ltr_file(path)


def test_formats_that_are_not_decompressed_are_refused_by_name(tmp_path):
    import zipfile

    path = tmp_path / "MSLR.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("train.txt", WITH_QID)
    with pytest.raises(ValueError, match="is a zip archive, which is not read; decompress it first"):
        read_ltr_file(path)


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_a_decompression_bomb_is_refused_naming_the_limit(tmp_path, suffix, monkeypatch):
    path = tmp_path / f"bomb.txt.{suffix}"
    # 48 MiB of text in a few KiB: one compressed stream repeated (every format reads concatenated streams).
    path.write_bytes(COMPRESSORS[suffix](b"1 qid:1 1:0\n" * (1 << 16)) * 64)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"decompresses to more than max_decompressed_bytes=1000000 bytes "
                                             r"\(the limit given\).*--max-decompressed-bytes") as refused:
            read_ltr_file(path, max_decompressed_bytes=1_000_000, chunk_bytes=1 << 16)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # A chunk of text and the decoder's own state (xz: its 8 MiB dictionary), never the text.
    assert peak < 20 << 20, f"{peak / 2**20:.1f} MiB allocated before the refusal"
    assert "\n" not in str(refused.value)
    # The default limit: DECOMPRESSION_RATIO_LIMIT times the compressed size, at least MIN_DECOMPRESSED_LIMIT.
    monkeypatch.setattr(ltr_files, "MIN_DECOMPRESSED_LIMIT", 1 << 16)
    with pytest.raises(ValueError, match=r"the default limit, 100 times the compressed size"):
        read_ltr_file(path)
    assert read_ltr_file(path, max_decompressed_bytes=48 << 20).n_documents == 1 << 22
    with pytest.raises(ValueError, match="max_decompressed_bytes must be"):
        read_ltr_file(path, max_decompressed_bytes=0)


def test_an_xz_header_asking_for_too_much_decoder_memory_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "train.txt.xz"
    path.write_bytes(lzma.compress(WITH_QID.encode()))  # preset 6: an 8 MiB dictionary
    monkeypatch.setattr(ltr_files, "XZ_MEMORY_LIMIT", 1 << 20)
    with pytest.raises(ValueError, match=r"train.txt.xz: its xz header asks for more than 1 MiB of decoder memory"):
        read_ltr_file(path)


# ---------------------------------------------------------------------------------- NULL values
NULLS = ("2 qid:1 1:NULL 2:3 3:1\n"
         "0 qid:1 1:2 2:NULL 3:1\n"
         "1 qid:1 1:5 2:1 3:NULL\n"
         "1 qid:2 1:-1 2:NULL 3:2\n"
         "0 qid:2 1:4 2:7 3:NULL\n")


def test_null_values_are_refused_by_default_naming_the_option(tmp_path):
    path = _write(tmp_path / "agg.txt", NULLS)
    with pytest.raises(ValueError, match=r"agg.txt, line 1: a feature value is missing \(NULL\); pass "
                                         r"missing='zero' or missing='worst' \(command line: --missing\)"):
        read_ltr_file(path)
    with pytest.raises(ValueError, match="missing must be one of"):
        read_ltr_file(path, missing="mean")
    for bad in ("1 qid:1 1:NULLX\n0 qid:1 1:1\n", "1 qid:1 1:null\n0 qid:1 1:1\n", "1 qid:1 1:NUL\n0 qid:1 1:1\n"):
        with pytest.raises(ValueError, match="finite decimal number"):  # only NULL itself is a missing value
            read_ltr_file(_write(tmp_path / "bad.txt", bad), missing="zero")


def test_null_values_read_as_zero_or_as_the_worst_value_of_their_feature(tmp_path):
    path = _write(tmp_path / "agg.txt", NULLS)
    zero = read_ltr_file(path, missing="zero").features
    assert zero[:, 0].tolist() == [0, 2, 5, -1, 4] and zero[:, 1].tolist() == [3, 0, 1, 0, 7]
    worst = read_ltr_file(path, missing="worst", chunk_bytes=7).features
    assert worst[:, 0].tolist() == [-2, 2, 5, -1, 4]  # one below the column's smallest value
    assert worst[:, 1].tolist() == [3, 0, 1, 0, 7] and worst[:, 2].tolist() == [1, 1, 0, 2, 0]
    ranked = read_ltr_file(path, missing="worst", lower_is_better=[3]).features
    assert ranked[:, 2].tolist() == [1, 1, 3, 2, 3]  # a rank: one above the largest is the worst
    big = _write(tmp_path / "big.txt", "1 qid:1 1:NULL\n0 qid:1 1:-3e12\n")  # 1 is lost to float32 rounding
    value = read_ltr_file(big, missing="worst").features[0, 0]
    assert value < np.float32(-3e12) and value == np.nextafter(np.float32(-3e12), np.float32(-np.inf))
    edge = _write(tmp_path / "edge.txt", "1 qid:1 1:NULL\n0 qid:1 1:-3.4028234e38\n")
    with pytest.raises(ValueError, match="no value is worse than all of its values"):
        read_ltr_file(edge, missing="worst")
    only = _write(tmp_path / "only.txt", "1 qid:1 1:NULL 2:1\n0 qid:1 1:NULL 2:2\n")
    assert read_ltr_file(only, missing="worst").features[:, 0].tolist() == [0, 0]


def test_the_ranker_of_a_feature_puts_documents_without_a_value_last(tmp_path):
    path = _write(tmp_path / "agg.txt", NULLS)
    problem = RankerEvaluationProblem(read_ltr_file(path, missing="worst"), cutoff=3)
    assert problem.ranked_lists[0, 0].tolist() == [2, 1, 0]  # feature 1: 5, 2, then the NULL
    assert problem.ranked_lists[0, 1].tolist()[-1] == 1  # feature 2: the NULL last


# ---------------------------------------------------------------------------------- rank-valued features
def _rank_file(path):
    """Feature 1 is a rank (1 = the best document); feature 2 a noisy score, higher is better."""
    lines = []
    for query in range(30):
        for position in range(5):
            grade = 4 - position
            noisy = (grade + (query + 2 * position) % 4) / 2
            lines.append(f"{grade} qid:{query} 1:{position + 1} 2:{noisy}\n")
    return _write(path, "".join(lines))


def test_rank_valued_features_change_the_winner(tmp_path):
    path = _rank_file(tmp_path / "ranks.txt")
    cache = tmp_path / "cache"
    options = {"comparisons_per_pair": 400, "progress": False, "jobs": 1, "cache_dir": cache, "cutoff": 5}
    as_scores = ranker_evaluation(path, **options)
    assert as_scores.matrix[0, 1] < 0.5  # read as a score, the rank puts the worst document first
    for lower_is_better in ([1], True):
        as_ranks = ranker_evaluation(path, lower_is_better=lower_is_better, **options)
        assert as_ranks.matrix[0, 1] > 0.5 and as_ranks.provenance["read_options"]["lower_is_better"] in ([1], "all")
    assert ranker_evaluation(path, **options) == as_scores  # the direction is in the cache key
    assert len(list(cache.glob("*.npz"))) == 3
    data = read_ltr_file(path, lower_is_better=[1])
    assert data.ascending_columns == (0,) and data.features[0, 0] == 1  # the values are not changed
    problem = RankerEvaluationProblem(data, cutoff=5)
    assert problem.ranked_lists[0, 0].tolist() == [0, 1, 2, 3, 4]
    from_arrays = LTRData.from_arrays(data.features, data.relevance, data.query_offsets, ascending_columns=[0])
    assert np.array_equal(RankerEvaluationProblem(from_arrays, cutoff=5).ranked_lists, problem.ranked_lists)


@pytest.mark.parametrize("value,error,message", [
    ([0], ValueError, r"lower_is_better holds 0, outside 1\.\."),
    ([1, 1], ValueError, "names a column more than once"),
    (["1"], TypeError, "must hold integers"),
    ([1.0], TypeError, "must hold integers"),
    ("1", TypeError, "must be a sequence of integers"),
    ([3], ValueError, "lower_is_better names feature 3, but the file has 2 features"),
])
def test_bad_lower_is_better_values_are_refused(tmp_path, value, error, message):
    path = _rank_file(tmp_path / "ranks.txt")
    with pytest.raises(error, match=message):
        read_ltr_file(path, lower_is_better=value)


def test_read_options_do_not_apply_to_data_in_memory(tmp_path):
    data = read_ltr_file(_rank_file(tmp_path / "ranks.txt"))
    with pytest.raises(ValueError, match="describe a file to read"):
        ranker_evaluation(data, lower_is_better=True, comparisons_per_pair=10, progress=False)


# ---------------------------------------------------------------------------------- the parser's new flags
line_parts = st.sampled_from(["0", "1", "4", " ", "\t", "qid:", "qid:7", "1:", "2:", "3:", "7:", "0.5", "NULL",
                              "NUL", "NULLL", "-2e3", "#", "\n", "\r\n", ":", "x"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(line_parts, max_size=50).map("".join), rows=st.integers(0, 5), width=st.integers(0, 4),
       capacity=st.integers(0, 5), flags=st.sampled_from([0, 1, 2, 3]))
def test_the_parser_never_writes_past_its_arrays_in_any_layout(text, rows, width, capacity, flags):
    kernel = ltr_files._parse_kernel()
    buffer = np.frombuffer(text.encode(), dtype=np.uint8)
    whole_features = np.full((rows + 2, width), -7.0, dtype=np.float32)
    whole_relevance = np.full(rows + 2, -7, dtype=np.int32)
    whole_qids = np.full(capacity + 2, -7, dtype=np.int64)
    whole_lines = np.full(capacity + 2, -7, dtype=np.int64)
    status, documents, _, _ = kernel(buffer, whole_features[:rows], 0, whole_relevance[:rows], whole_qids[:capacity],
                                     whole_lines[:capacity], 1, 0, flags)
    assert np.all(whole_features[rows:] == -7) and np.all(whole_relevance[rows:] == -7)
    assert np.all(whole_qids[capacity:] == -7) and np.all(whole_lines[capacity:] == -7)
    assert status == 0 or status in ltr_files._ERRORS
    if not flags & 2:  # NaN only where NULL is accepted
        assert not np.any(np.isnan(whole_features))
    if flags & 1:
        assert np.all(whole_qids[:documents] == 0)


# ---------------------------------------------------------------------------------- command line and environment
def test_the_command_line_reads_every_layout(tmp_path, capsys):
    data = tmp_path / "agg.txt.xz"
    lines = [f"{4 - position} {f'1:{position + 1}' if position < 4 else '1:NULL'} 2:{position % 2}\n"
             for _ in range(12) for position in range(5)] + ["1 1:1 2:1\n"]
    data.write_bytes(lzma.compress("".join(lines).encode()))
    side = _write(tmp_path / "sizes.txt", "5\n" * 12 + "1\n")
    base = ["problems", "--from-ltr", str(data), "--comparisons-per-pair", "30", "--no-cache", "--no-bounds",
            "--jobs", "1", "--cutoff", "3"]
    with pytest.raises(SystemExit) as exit_status:  # a NULL value, refused by default
        main(base + ["--group-file", str(side)])
    assert exit_status.value.code == 2 and "--missing" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_status:  # the one-document query names the option that drops it
        main(base + ["--group-file", str(side), "--missing", "worst"])
    assert exit_status.value.code == 2 and "--single-document-queries drop" in capsys.readouterr().err
    layout = ["--group-file", str(side), "--missing", "worst", "--single-document-queries", "drop"]
    assert main(base + layout + ["--lower-is-better", "1"]) == 0
    assert "ranker-evaluation K=2" in capsys.readouterr().out
    assert main(base + layout + ["--lower-is-better"]) == 0  # no index: every feature
    with pytest.raises(SystemExit) as exit_status:
        main(base + layout + ["--max-decompressed-bytes", "100"])
    assert exit_status.value.code == 2 and "max_decompressed_bytes=100" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(base + ["--group-file", str(side), "--no-group-file"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_the_environment_passes_the_read_options(tmp_path):
    data = _write(tmp_path / "rows.txt", WITHOUT_QID)
    _write(tmp_path / "rows.txt.query", "3\n1\n1\n4\n3\n")
    options = {"comparisons_per_pair": 20, "cutoff": 3}
    with pytest.raises(ValueError, match="single_document_queries='drop'"):
        RankerDuelEnv(data, **options)
    env = RankerDuelEnv(data, single_document_queries="drop", **options)
    assert env.ranker_problem.n_queries == 3 and env.ranker_problem.dropped_queries == (1, 2)
    env.reset(seed=0)
    env.step((0, 1))
    made = gym.make("RankerDuel-v0", data=str(data), single_document_queries="drop",
                    group_file=str(tmp_path / "rows.txt.query"), lower_is_better=[1], **options)
    assert made.unwrapped.ranker_problem.n_queries == 3
    made.close()
    with pytest.raises(ValueError, match="read options single_document_queries, missing apply only when data is"):
        RankerDuelEnv(read_ltr_file(data, single_document_queries="drop"), single_document_queries="drop",
                      missing="zero", **options)
    with pytest.raises(ValueError, match="single_document_queries must be"):
        RankerDuelEnv(data, single_document_queries="keep", **options)
