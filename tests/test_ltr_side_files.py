"""Side files of query sizes that are compressed (``train.txt.query.gz``), beside plain or
compressed data: which names are looked for, ambiguity refused, and the decompression checks of
data files applied to them."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma

import pytest

from dueling_gym.problems import ltr_files
from dueling_gym.problems.ltr_files import read_ltr_file
from dueling_gym.problems.ltr_sources import group_file_for, with_side_digest

SIZES = (3, 2, 4, 3)
ROWS = [(query, (query + document) % 3, document, 0.5 * query) for query, size in enumerate(SIZES)
        for document in range(size)]
WITH_QID = "".join(f"{grade} qid:{query} 1:{document} 2:{value}\n" for query, grade, document, value in ROWS)
WITHOUT_QID = "".join(f"{grade} 1:{document} 2:{value}\n" for _, grade, document, value in ROWS)
SIDE = "".join(f"{size}\n" for size in SIZES).encode()
COMPRESSORS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


@pytest.fixture
def reference(tmp_path):
    qid = tmp_path / "qid.txt"
    qid.write_text(WITH_QID)
    return read_ltr_file(qid)


def _same(read, reference):
    assert read.features.tolist() == reference.features.tolist()
    assert read.relevance.tolist() == reference.relevance.tolist()
    assert read.query_offsets.tolist() == reference.query_offsets.tolist()


def _data(tmp_path, name="train.txt"):
    path = tmp_path / name
    compression = name.rpartition(".")[2]
    text = WITHOUT_QID.encode()
    path.write_bytes(COMPRESSORS[compression](text) if compression in COMPRESSORS else text)
    return path


@pytest.mark.parametrize("compression", sorted(COMPRESSORS))
@pytest.mark.parametrize("kind", ["query", "group"])
def test_a_compressed_side_file_beside_plain_data_gives_the_query_sizes(tmp_path, reference, compression, kind):
    data = _data(tmp_path)
    side = tmp_path / f"train.txt.{kind}.{compression}"
    side.write_bytes(COMPRESSORS[compression](SIDE))
    assert group_file_for(data, None) == side
    read = read_ltr_file(data, chunk_bytes=7)
    _same(read, reference)
    assert read.query_ids.tolist() == [0, 1, 2, 3]
    # The digest of the read is of the side file's bytes as they lie on disk, as the cache keys it.
    _, digest = ltr_files._read(data, None, "error", 1 << 20, digest=True)
    assert digest == with_side_digest(hashlib.sha256(data.read_bytes()).hexdigest(),
                                      hashlib.sha256(side.read_bytes()).hexdigest())


@pytest.mark.parametrize("side_name", ["train.txt.query.xz", "train.txt.gz.group.bz2", "train.txt.group",
                                       "train.txt.gz.query"])
def test_compressed_data_finds_a_side_file_of_its_own_name_or_of_its_text(tmp_path, reference, side_name):
    data = _data(tmp_path, "train.txt.gz")
    side = tmp_path / side_name
    compression = side_name.rpartition(".")[2]
    side.write_bytes(COMPRESSORS[compression](SIDE) if compression in COMPRESSORS else SIDE)
    assert group_file_for(data, None) == side
    _same(read_ltr_file(data), reference)


def test_a_compressed_side_file_named_by_the_option_is_read(tmp_path, reference):
    data = _data(tmp_path, "rows.svm")
    sizes = tmp_path / "sizes.bz2"
    sizes.write_bytes(bz2.compress(SIDE))
    _same(read_ltr_file(data, group_file=sizes), reference)
    packed = tmp_path / "sizes.query"  # gzip bytes under a plain name: known by its bytes, as data is
    packed.write_bytes(gzip.compress(SIDE))
    _same(read_ltr_file(data, group_file=packed), reference)


@pytest.mark.parametrize("data_name,sides", [
    ("train.txt", ["train.txt.query", "train.txt.query.gz"]),
    ("train.txt", ["train.txt.group.xz", "train.txt.query.bz2"]),
    ("train.txt.gz", ["train.txt.gz.query", "train.txt.query.gz"]),
    ("train.txt.xz", ["train.txt.group", "train.txt.xz.group.xz"]),
])
def test_two_candidate_side_files_are_refused_naming_both(tmp_path, data_name, sides):
    data = _data(tmp_path, data_name)
    for name in sides:
        compression = name.rpartition(".")[2]
        (tmp_path / name).write_bytes(COMPRESSORS[compression](SIDE) if compression in COMPRESSORS else SIDE)
    with pytest.raises(ValueError, match="more than one side file of query sizes") as refused:
        read_ltr_file(data)
    assert all(str(tmp_path / name) in str(refused.value) for name in sides)
    assert "group_file=" in str(refused.value) and "--group-file" in str(refused.value)
    assert read_ltr_file(data, group_file=tmp_path / sides[1]).n_queries == 4


def test_a_side_file_with_the_extension_replaced_is_not_looked_for(tmp_path):
    data = _data(tmp_path)
    (tmp_path / "train.query").write_bytes(SIDE)  # would belong to train.svm as much as to train.txt
    assert group_file_for(data, None) is None
    with pytest.raises(ValueError, match="missing qid"):
        read_ltr_file(data)


@pytest.mark.parametrize("compression", sorted(COMPRESSORS))
def test_corrupt_or_misnamed_compressed_side_files_are_refused_naming_them(tmp_path, compression):
    data = _data(tmp_path)
    side = tmp_path / f"train.txt.query.{compression}"
    side.write_bytes(COMPRESSORS[compression](SIDE)[:-6])  # truncated
    with pytest.raises(ValueError, match="corrupt or truncated") as refused:
        read_ltr_file(data)
    assert str(side) in str(refused.value)
    side.write_bytes(SIDE)  # plain text under a compressed name
    with pytest.raises(ValueError, match=f"the name says {'bzip2' if compression == 'bz2' else compression}"):
        read_ltr_file(data)


def test_a_compressed_side_file_is_refused_past_the_size_bound_and_the_decompression_limit(tmp_path):
    data = _data(tmp_path)  # 12 rows: at most 32 * 12 + 1024 bytes of sizes
    side = tmp_path / "train.txt.query.gz"
    side.write_bytes(gzip.compress(b"1\n" * 5000))  # 10000 bytes of text, a few dozen compressed
    with pytest.raises(ValueError, match=r"decompresses to more than 1408 bytes, more than one size per data row "
                                         r"can take \(12 rows"):
        read_ltr_file(data)
    side.write_bytes(gzip.compress(SIDE))
    with pytest.raises(ValueError, match=r"train.txt.query.gz: the gzip data decompresses to more than "
                                         r"max_decompressed_bytes=4 bytes"):
        read_ltr_file(data, max_decompressed_bytes=4)
    assert read_ltr_file(data, max_decompressed_bytes=len(SIDE)).n_queries == 4
    side.write_bytes(gzip.compress(SIDE) + b"\0" * 2000)  # larger on disk than the sizes can need
    with pytest.raises(ValueError, match=r"has \d+ bytes, more than one size per data row can take"):
        read_ltr_file(data)
