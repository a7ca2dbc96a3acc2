"""Exported pair-policy files are checked array by array before the compiled kernels see them.

Every defect (a wrong dtype, shape or value of any weight, wrong sizes or metadata, a file that
is no readable ``.npz`` archive) raises one ValueError naming the file and the array, and every
valid file (shipped or written by the trainers) loads exactly as it always did.
"""

from __future__ import annotations

import json
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dueling_gym.agents import make_agent
from dueling_gym.agents.learned import DATA_DIRECTORY, WEIGHT_NAMES, load_policy_weights
from dueling_gym.observations import N_RECORD_FEATURES
from repository_paths import TRAINING_HISTORY_DIRECTORY

SHIPPED = DATA_DIRECTORY / "learned_k5.npz"
HIDDEN = 16


def _stored(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


BASE = _stored(SHIPPED)


def _write(folder: str | Path, arrays: dict[str, Any], name: str = "policy.npz") -> Path:
    path = Path(folder) / name
    np.savez(path, **arrays)  # pickles object arrays, as a careless writer would
    return path


def _refused(path: Path, *fragments: str) -> str:
    with pytest.raises(ValueError) as info:
        load_policy_weights(path, 5)
    message = str(info.value)
    assert str(path) in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


def _reference_loader(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """What loading always returned for a valid file: float64 copies, older versions of the
    network completed with zeros, the metadata with ``hidden``."""
    stored = _stored(path)
    hidden = int(stored["hidden"])
    weights = {name: stored[name].astype(np.float64) for name in WEIGHT_NAMES if name in stored}
    if "G" not in weights:
        for name in ("A", "B", "S"):
            if weights[name].shape == (hidden, hidden):
                weights[name] = np.vstack([weights[name], np.zeros((hidden, hidden))])
        weights["G"] = np.zeros((2 * hidden, hidden))
        weights["G_s"] = np.zeros((2 * hidden, hidden))
    weights.setdefault("s_n", np.zeros(hidden))
    for name in ("R_a", "R_b", "R_s"):
        weights.setdefault(name, np.zeros((N_RECORD_FEATURES, hidden)))
    metadata = json.loads(str(stored["metadata"])) if "metadata" in stored else {}
    metadata["hidden"] = hidden
    metadata["n_arms"] = int(stored["n_arms"])
    return weights, metadata


@pytest.mark.parametrize("path", sorted([*DATA_DIRECTORY.glob("*.npz"), *TRAINING_HISTORY_DIRECTORY.glob("*.npz")]),
                         ids=lambda path: path.name)
def test_every_shipped_file_loads_exactly_as_before(path):
    weights, metadata = load_policy_weights(path)
    expected, expected_metadata = _reference_loader(path)
    assert set(weights) == set(WEIGHT_NAMES) == set(expected)
    for name in WEIGHT_NAMES:
        assert weights[name].dtype == np.float64 and weights[name].flags.writeable
        np.testing.assert_array_equal(weights[name], expected[name], err_msg=name)
        assert weights[name].shape == expected[name].shape
    assert metadata == expected_metadata


def test_float32_float64_and_fortran_ordered_copies_load_the_same_values(tmp_path):
    reference, _ = load_policy_weights(SHIPPED, 5)
    as_float32 = {name: BASE[name].astype(np.float32) if name in WEIGHT_NAMES else BASE[name] for name in BASE}
    weights, _ = load_policy_weights(_write(tmp_path, as_float32, "f32.npz"), 5)
    for name in WEIGHT_NAMES:
        np.testing.assert_array_equal(weights[name], BASE[name].astype(np.float32).astype(np.float64))
    fortran = {name: np.asfortranarray(value) if value.ndim == 2 else value for name, value in BASE.items()}
    weights, _ = load_policy_weights(_write(tmp_path, fortran, "fortran.npz"), 5)
    for name in WEIGHT_NAMES:
        np.testing.assert_array_equal(weights[name], reference[name])
    # Without metadata the file still loads; the metadata then only records the sizes.
    bare = {name: value for name, value in BASE.items() if name != "metadata"}
    assert load_policy_weights(_write(tmp_path, bare, "bare.npz"), 5)[1] == {"hidden": HIDDEN, "n_arms": 5}


# --- every weight array, every kind of defect --------------------------------------------------

_BAD_DTYPES = {
    "complex": lambda value: value.astype(np.complex128),
    "complex with zero imaginary part": lambda value: value + 0j,
    "object (pickled)": lambda value: value.astype(object),
    "integer": lambda value: np.round(value).astype(np.int64),
    "bool": lambda value: value > 0,
    "string": lambda value: value.astype(str),
}


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(WEIGHT_NAMES), dtype=st.sampled_from(sorted(_BAD_DTYPES)))
def test_a_weight_of_the_wrong_dtype_is_refused_naming_the_file_and_the_array(name, dtype):
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, {**BASE, name: _BAD_DTYPES[dtype](BASE[name])})
        _refused(path, f"array {name} ", "dtype")


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(WEIGHT_NAMES), shape=st.lists(st.integers(0, 40), max_size=3).map(tuple),
       seed=st.integers(0, 2**32 - 1))
def test_a_weight_of_the_wrong_shape_is_refused_naming_the_file_and_the_array(name, shape, seed):
    if shape == BASE[name].shape:
        shape = shape + (1,)
    values = np.random.default_rng(seed).normal(size=shape)
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, {**BASE, name: values})
        _refused(path, f"array {name} has shape {shape}", f"expected {BASE[name].shape}")


@pytest.mark.parametrize("name", WEIGHT_NAMES)
def test_an_empty_or_transposed_weight_is_refused(tmp_path, name):
    _refused(_write(tmp_path, {**BASE, name: np.zeros(0)}, "empty.npz"), f"array {name} has shape (0,)")
    _refused(_write(tmp_path, {**BASE, name: np.zeros((0, HIDDEN))}, "rows.npz"), f"array {name} has shape (0, 16)")
    _refused(_write(tmp_path, {**BASE, name: np.float64(0.5)}, "scalar.npz"), f"array {name} has shape ()")
    if BASE[name].ndim == 2 and BASE[name].shape[0] != BASE[name].shape[1]:
        _refused(_write(tmp_path, {**BASE, name: BASE[name].T}, "transposed.npz"), f"array {name} has shape")


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(WEIGHT_NAMES), bad=st.sampled_from([np.nan, np.inf, -np.inf]), data=st.data())
def test_a_weight_with_a_nan_or_an_infinity_is_refused(name, bad, data):
    values = BASE[name].copy()
    index = data.draw(st.integers(0, values.size - 1))
    values.reshape(-1)[index] = bad
    dtype = data.draw(st.sampled_from([np.float16, np.float32, np.float64]))
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, {**BASE, name: values.astype(dtype)})
        _refused(path, f"array {name} holds non-finite values")


def test_a_float128_weight_beyond_float64_is_refused(tmp_path):
    values = BASE["w"].astype(np.longdouble)
    values[3] = np.finfo(np.longdouble).max
    with np.errstate(over="ignore"):
        in_float64 = values.astype(np.float64)
    if not np.isinf(in_float64[3]):
        pytest.skip("long double is float64 on this platform")
    _refused(_write(tmp_path, {**BASE, "w": values}), "array w holds non-finite values")


@pytest.mark.parametrize("name", ["b1", "c", "d", "s_t", "s_b", "b2", "R_a", "w0"])
def test_the_agent_refuses_a_short_array_instead_of_reading_past_its_end(tmp_path, name):
    short = BASE[name][:0] if BASE[name].ndim == 1 else BASE[name][:1]
    path = _write(tmp_path, {**BASE, name: short})
    for _ in range(3):  # three agents: each refused, none playing from stray memory
        with pytest.raises(ValueError, match=f"array {name} has shape") as info:
            make_agent("learned", 5, seed=0, policy=str(path))
        assert str(path.resolve()) in str(info.value)


@pytest.mark.parametrize("name", [*WEIGHT_NAMES[:16], "n_arms", "hidden"])
def test_a_file_without_a_required_array_is_refused(tmp_path, name):
    arrays = {key: value for key, value in BASE.items() if key != name}
    message = _refused(_write(tmp_path, arrays), "missing arrays")
    assert repr(name) in message


# --- the sizes and the metadata ----------------------------------------------------------------

_BAD_SIZES = {
    "float": np.array(5.0), "string": np.array("5"), "one-element vector": np.array([5]),
    "bool": np.array(True), "complex": np.array(5 + 0j), "object (pickled)": np.array(5, dtype=object),
    "empty": np.zeros(0, dtype=np.int64),
}


@pytest.mark.parametrize("entry", ["n_arms", "hidden"])
@pytest.mark.parametrize("kind", sorted(_BAD_SIZES))
def test_sizes_of_the_wrong_type_are_refused(tmp_path, entry, kind):
    _refused(_write(tmp_path, {**BASE, entry: _BAD_SIZES[kind]}), f"array {entry} has dtype", "expected one integer")


def test_sizes_out_of_range_or_disagreeing_with_the_arrays_are_refused(tmp_path):
    _refused(_write(tmp_path, {**BASE, "n_arms": np.array(1)}, "a.npz"), "array n_arms is 1, expected at least 2")
    _refused(_write(tmp_path, {**BASE, "hidden": np.array(-3)}, "b.npz"), "array hidden is -3")
    _refused(_write(tmp_path, {**BASE, "hidden": np.array(8)}, "c.npz"), "array W1 has shape (4, 16), expected (4, 8)")
    path = _write(tmp_path, {**BASE, "n_arms": np.array(4, dtype=np.uint8)}, "d.npz")
    with pytest.raises(ValueError, match="holds a policy for 4 arms, not 5"):
        load_policy_weights(path, 5)
    assert load_policy_weights(path)[0]["W1"].shape == (4, HIDDEN)  # another K is a valid starting point


_BAD_METADATA = {
    "bytes": (np.array(b"{}"), "expected one JSON string"),
    "integer": (np.array(3), "expected one JSON string"),
    "vector": (np.array(["{}", "{}"]), "expected one JSON string"),
    "object (pickled)": (np.array({"a": 1}, dtype=object), "expected one JSON string"),
    "not JSON": (np.array("{'a': 1"), "is not valid JSON"),
    "a JSON list": (np.array("[1, 2]"), "holds a JSON list, expected an object"),
    "a JSON number": (np.array("3"), "holds a JSON int, expected an object"),
}


@pytest.mark.parametrize("kind", sorted(_BAD_METADATA))
def test_metadata_of_the_wrong_type_is_refused(tmp_path, kind):
    value, fragment = _BAD_METADATA[kind]
    _refused(_write(tmp_path, {**BASE, "metadata": value}), "array metadata", fragment)


# --- older versions of the network ---------------------------------------------------------------

def test_older_versions_load_with_zeros_but_their_arrays_are_checked_too(tmp_path):
    mean_only = {name: value for name, value in _stored(TRAINING_HISTORY_DIRECTORY / "ppo_k5.npz").items()}
    assert mean_only["A"].shape == (HIDDEN, HIDDEN) and "G" not in mean_only
    weights, _ = load_policy_weights(_write(tmp_path, mean_only, "ok.npz"), 5)
    assert weights["A"].shape == (2 * HIDDEN, HIDDEN) and not weights["G"].any()
    _refused(_write(tmp_path, {**mean_only, "A": np.zeros((HIDDEN + 1, HIDDEN))}, "a.npz"),
             "array A has shape (17, 16), expected (16, 16) or (32, 16)")
    _refused(_write(tmp_path, {**mean_only, "S": np.zeros((HIDDEN, 0))}, "s.npz"), "array S has shape (16, 0)")
    # With the context weights, the arm summaries must have their max-pooling rows.
    _refused(_write(tmp_path, {**BASE, "A": BASE["A"][:HIDDEN]}, "pooled.npz"),
             "array A has shape (16, 16), expected (32, 16)")
    # The context weights come together.
    for present, absent in (("G", "G_s"), ("G_s", "G")):
        arrays = {name: value for name, value in BASE.items() if name != absent}
        _refused(_write(tmp_path, arrays, f"only_{present}.npz"), f"array {present} without {absent}")
    # So do the arm-record weights; and a member of no known name (e.g. a name a damaged byte
    # changed) is refused rather than read as an absent optional array.
    arrays = {name: value for name, value in BASE.items() if name != "R_b"}
    _refused(_write(tmp_path, arrays, "no_R_b.npz"), "array R_a without R_b")
    renamed = {("R_`" if name == "R_a" else name): value for name, value in BASE.items()}
    _refused(_write(tmp_path, renamed, "renamed.npz"), "unexpected member 'R_`.npy'")


# --- files that are no readable policy -------------------------------------------------------------

def test_empty_random_pickled_and_single_array_files_are_refused(tmp_path):
    cases = {
        "empty.npz": b"",
        "random.npz": np.random.default_rng(0).bytes(4000),
        "pickle.npz": pickle.dumps(BASE),
        "text.npz": b"W1,b1\n1,2\n",
    }
    for name, content in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        _refused(path, "is not a readable .npz policy file")
    np.save(tmp_path / "single.npy", BASE["W1"])
    _refused(tmp_path / "single.npy", "is not a readable .npz policy file")
    np.save(tmp_path / "objects.npy", np.array([BASE], dtype=object), allow_pickle=True)
    _refused(tmp_path / "objects.npy", "is not a readable .npz policy file")


@settings(max_examples=100, deadline=None)
@given(content=st.binary(max_size=2000))
def test_random_bytes_are_refused(content):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "policy.npz"
        path.write_bytes(content)
        _refused(path, "is not a readable .npz policy file")


_SHIPPED_BYTES = SHIPPED.read_bytes()


@settings(max_examples=150, deadline=None)
@given(length=st.integers(0, len(_SHIPPED_BYTES) - 1))
def test_a_truncated_file_is_refused(length):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "policy.npz"
        path.write_bytes(_SHIPPED_BYTES[:length])
        _refused(path, "is not a readable .npz policy file")


@settings(max_examples=300, deadline=None)
@given(position=st.integers(0, len(_SHIPPED_BYTES) - 1), flip=st.integers(1, 255))
@example(position=34763, flip=1)  # a byte of a member's name in the central directory: R_a read as absent
def test_a_corrupted_byte_is_refused_or_harmless(position, flip):
    """A damaged byte anywhere either makes loading fail with a ValueError naming the file (the
    archive's CRC-32 covers every array's header and data) or changes nothing that is read."""
    content = bytearray(_SHIPPED_BYTES)
    content[position] ^= flip
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "policy.npz"
        path.write_bytes(bytes(content))
        try:
            weights, metadata = load_policy_weights(path, 5)
        except ValueError as error:
            assert str(path) in str(error)
            return
    expected, expected_metadata = load_policy_weights(SHIPPED, 5)
    assert metadata == expected_metadata
    for name in WEIGHT_NAMES:
        np.testing.assert_array_equal(weights[name], expected[name])


def test_a_flipped_bit_in_the_weights_is_caught_by_the_checksum(tmp_path):
    content = bytearray(_SHIPPED_BYTES)
    position = content.find(BASE["W2"].tobytes()[:16])
    content[position + 5] ^= 0x04
    path = tmp_path / "policy.npz"
    path.write_bytes(bytes(content))
    _refused(path, "array W2 is damaged", "CRC")


def test_the_errors_of_the_operating_system_are_left_as_they_are(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_policy_weights(tmp_path / "missing.npz")
    if os.name == "posix":
        with pytest.raises(IsADirectoryError):
            load_policy_weights(tmp_path)
