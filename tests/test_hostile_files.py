"""Hostile files: problem files and comparison logs that are not what they claim to be.

Saving never replaces a FIFO, a device node or a symbolic link; reading refuses files that are
not regular (a FIFO blocks, /dev/zero never ends); a key given twice in a JSON object, JSON
nested too deeply for the parser, and provenance numbers that do not fit their dtype are refused
with one ValueError naming the file (and line); and no message repeats a user's value whole.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import tempfile
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dueling_gym.atomic_files import atomic_write_text
from dueling_gym.cli import main
from dueling_gym.experiments.sweeps.sweep import ProblemSpec
from dueling_gym.problems import PreferenceMatrix, load_comparisons, read_problem_file, save_problem
from dueling_gym.problems.datasets import canonical_name
from dueling_gym.validation import MAX_ECHO, check_regular_file, echo

#: A message that repeats a user's value whole is longer than this; a capped one is far shorter.
SHORT = 1000
HYPOTHESIS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MATRIX = [[0.5, 0.7, 0.4], [0.3, 0.5, 0.8], [0.6, 0.2, 0.5]]


def _problem() -> PreferenceMatrix:
    return PreferenceMatrix(MATRIX, name="three", source="a test",
                            provenance={"arms": ["a", "b", "c"], "wins": np.array([[0, 7, 4], [3, 0, 8], [6, 2, 0]])})


def _log_lines(*extra: str) -> str:
    """A small JSON-lines log in which every pair is compared (then ``extra`` lines)."""
    rows = [("a", "b", "a"), ("b", "c", "b"), ("a", "c", "c"), ("b", "a", "a"), ("c", "b", "b"), ("c", "a", "a")]
    lines = [json.dumps({"first": f, "second": s, "winner": w}) for f, s, w in rows]
    return "\n".join([*lines, *extra]) + "\n"


@contextlib.contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging for ever (reading a FIFO without a writer blocks)."""
    def expire(*_: object) -> None:
        raise TimeoutError(f"still blocked after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ====================================================================================== saving
def test_saving_refuses_a_fifo_and_leaves_it_a_fifo(tmp_path):
    fifo = tmp_path / "problem.json"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"problem\.json is a FIFO \(named pipe\), not a regular file"):
        save_problem(_problem(), fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["problem.json"]  # no temporary file left


def test_saving_refuses_a_symbolic_link_and_leaves_link_and_target_alone(tmp_path):
    target = tmp_path / "kept.json"
    target.write_text("precious\n")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    with pytest.raises(ValueError, match=r"link\.json is a symbolic link, not a regular file"):
        save_problem(_problem(), link)
    assert link.is_symlink() and target.read_text() == "precious\n"
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(ValueError, match="symbolic link"):
        save_problem(_problem(), dangling)
    assert dangling.is_symlink() and not (tmp_path / "nowhere.json").exists()


def test_saving_refuses_dev_null_and_leaves_it_a_character_device():
    before = os.lstat("/dev/null")
    with pytest.raises(ValueError, match=r"/dev/null is a character device, not a regular file"):
        save_problem(_problem(), "/dev/null")
    after = os.lstat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_saving_refuses_a_folder_and_still_writes_regular_files_and_new_paths(tmp_path):
    with pytest.raises(ValueError, match="is a folder"):
        save_problem(_problem(), tmp_path)
    path = tmp_path / "new.json"
    assert read_problem_file(save_problem(_problem(), path)) == _problem()
    assert read_problem_file(save_problem(_problem(), path)) == _problem()  # a regular file is replaced


def test_every_atomic_writer_refuses_what_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "results.csv"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"results\.csv is a FIFO"):
        atomic_write_text(fifo, "a,b\n")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_the_problems_command_refuses_the_save_path_before_estimating(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    log.write_text(_log_lines())
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    with pytest.raises(SystemExit) as exit_status:
        main(["problems", "--from-comparisons", str(log), "--save", str(fifo)])
    captured = capsys.readouterr()
    assert exit_status.value.code == 2 and captured.out == ""  # refused before the problem is estimated
    assert captured.err.count("\n") == 1 and "is a FIFO" in captured.err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# ====================================================================================== reading
def test_reading_refuses_a_fifo_or_a_device_before_opening_it(tmp_path):
    fifo = tmp_path / "problem.json"
    os.mkfifo(fifo)
    with _deadline(20):
        with pytest.raises(ValueError, match=r"problem\.json is a FIFO"):
            read_problem_file(fifo)
        with pytest.raises(ValueError, match=r"/dev/zero is a character device"):
            read_problem_file("/dev/zero")
        with pytest.raises(ValueError, match=r"/dev/zero is a character device"):
            ProblemSpec.parse("file:/dev/zero").matrix
        log = tmp_path / "log.jsonl"
        os.mkfifo(log)
        with pytest.raises(ValueError, match=r"comparison log .*log\.jsonl is a FIFO"):
            load_comparisons(log)
        zeros = tmp_path / "zeros.csv"
        zeros.symlink_to("/dev/zero")  # a link is followed when reading: what it leads to is refused
        with pytest.raises(ValueError, match="is a character device"):
            load_comparisons(zeros)
    with pytest.raises(FileNotFoundError, match="problem file not found"):
        read_problem_file(tmp_path / "missing.json")


def test_a_problem_file_through_a_symbolic_link_is_read(tmp_path):
    path = save_problem(_problem(), tmp_path / "problem.json")
    link = tmp_path / "link.json"
    link.symlink_to(path)
    assert read_problem_file(link) == _problem()


def test_a_path_that_cannot_be_looked_up_is_one_short_value_error(tmp_path):
    with pytest.raises(ValueError, match="File name too long") as error:
        read_problem_file("x" * 100_000)
    assert len(str(error.value)) < SHORT
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="Not a directory"):
        read_problem_file(tmp_path / "file" / "problem.json")


# ====================================================================================== duplicate keys
@pytest.mark.parametrize("key", ["first", "second", "winner", "judge"])
def test_a_log_line_giving_a_key_twice_is_refused_with_its_line(tmp_path, key):
    # The key's two values follow the other members, e.g. {"second": "b", ..., "first": "a", "first": "c"}.
    members = {"first": '"a"', "second": '"b"', "winner": '"a"', "judge": '"x"'}
    second_value = {"first": '"c"', "second": '"c"', "winner": '"b"', "judge": '"y"'}[key]
    others = ", ".join(f'"{name}": {value}' for name, value in members.items() if name != key)
    line = "{" + f'{others}, "{key}": {members[key]}, "{key}": {second_value}' + "}"
    path = tmp_path / "log.jsonl"
    path.write_text(_log_lines(line))
    with pytest.raises(ValueError, match=rf"log\.jsonl, line 7: duplicate key '{key}' in a JSON object"):
        load_comparisons(path)


def test_a_problem_file_giving_a_key_twice_or_nan_is_refused(tmp_path):
    path = save_problem(_problem(), tmp_path / "problem.json")
    text = path.read_text()
    path.write_text(text.replace('"name": "three",', '"name": "three", "name": "other",', 1))
    with pytest.raises(ValueError, match=r"problem\.json: not a problem file \(duplicate key 'name'"):
        read_problem_file(path)
    path.write_text(text.replace('"source": "a test"', '"source": "a test", "extra": NaN', 1))
    with pytest.raises(ValueError, match=r"problem\.json: not a problem file \(NaN is not valid JSON"):
        read_problem_file(path)


# ====================================================================================== nesting
def _nested(depth: int, kind: str) -> str:
    return ("[" * depth + "]" * depth) if kind == "array" else ('{"a": ' * depth + "1" + "}" * depth)


@HYPOTHESIS
@given(depth=st.integers(1, 200_000), kind=st.sampled_from(["array", "object"]))
def test_a_log_line_nested_at_any_depth_is_one_value_error_naming_the_line(depth, kind):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.jsonl"
        path.write_text(_log_lines('{"first": "a", "second": "b", "winner": %s}' % _nested(depth, kind)))
        with pytest.raises(ValueError, match=r"log\.jsonl, line 7: ") as error:
            load_comparisons(path)
    assert len(str(error.value)) < SHORT


@HYPOTHESIS
@given(depth=st.integers(1, 200_000), where=st.sampled_from(["provenance", "matrix", "name"]))
def test_a_problem_file_nested_at_any_depth_reads_or_is_one_value_error_naming_the_file(depth, where):
    with tempfile.TemporaryDirectory() as folder:
        path = save_problem(_problem(), Path(folder) / "problem.json")
        document = json.loads(path.read_text())
        if where == "provenance":
            document["provenance"]["deep"] = "__nested__"
        else:
            document[where] = "__nested__"
        path.write_text(json.dumps(document).replace('"__nested__"', _nested(depth, "array")))
        try:
            problem = read_problem_file(path)
        except ValueError as error:
            assert str(error).startswith(str(path)) and len(str(error)) < SHORT
            assert where != "provenance" or depth > 50
        else:  # only a provenance value nested no deeper than any saved problem's reads back
            assert where == "provenance" and depth <= 64
            value = problem.provenance["deep"]
            for _ in range(depth - 1):
                assert isinstance(value, list) and len(value) == 1
                value = value[0]
            assert value == []


# ====================================================================================== dtypes
INTEGER_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _with_array(path: Path, array: object, dtype: str) -> None:
    document = json.loads(path.read_text())
    document["provenance"]["values"] = {"array": array, "dtype": dtype}
    path.write_text(json.dumps(document))


@HYPOTHESIS
@given(dtype=st.sampled_from(INTEGER_DTYPES), value=st.integers(-(2**70), 2**70) | st.integers(-(10**400), 10**400))
def test_provenance_integers_read_back_exactly_or_are_refused_if_they_overflow(dtype, value):
    info = np.iinfo(dtype)
    with tempfile.TemporaryDirectory() as folder:
        path = save_problem(_problem(), Path(folder) / "problem.json")
        _with_array(path, [[1, value], [value, 0]], dtype)
        if info.min <= value <= info.max:
            array = read_problem_file(path).provenance["values"]
            assert array.dtype == np.dtype(dtype) and array.tolist() == [[1, value], [value, 0]]
        else:
            with pytest.raises(ValueError, match=rf"provenance\.values: entry \[0, 1\] = .* does not fit in an array "
                                                 rf"of dtype {dtype}") as error:
                read_problem_file(path)
            assert str(error.value).startswith(str(path)) and len(str(error.value)) < SHORT


@pytest.mark.parametrize(("array", "dtype", "message"), [
    ([1e39], "float32", r"entry \[0\] is infinite or does not fit in dtype float32"),
    ([1e10], "float16", r"entry \[0\] is infinite or does not fit in dtype float16"),
    ("[1e400]", "float64", r"entry \[0\] is infinite"),
    ("[%d]" % 10**400, "float64", "an integer is too large for dtype float64"),
    (["1.5"], "float64", r"entry \[0\] = '1\.5' does not fit in an array of dtype float64"),
    ([1.5], "int64", r"entry \[0\] = 1\.5 does not fit in an array of dtype int64"),
    ([None], "int64", r"entry \[0\] = None does not fit"),
    ([2], "bool", r"entry \[0\] = 2 does not fit in an array of dtype bool \(it must be true or false\)"),
    ([[1], [2, 3]], "int64", "not a rectangular array"),
    ([1], "int", r"an array of dtype 'int' cannot be read"),
    ([1], "object", r"an array of dtype 'object' cannot be read"),
    ([1], "x" * 10_000, r"unknown dtype 'xxx.*\.\.\. \(10,000 characters\)"),
    ([1], 5, "the dtype must be a string, got 5"),
])
def test_provenance_values_that_do_not_fit_their_dtype_are_refused(tmp_path, array, dtype, message):
    path = save_problem(_problem(), tmp_path / "problem.json")
    if isinstance(array, str):  # JSON that json.dumps cannot write (a literal beyond float64)
        _with_array(path, "__raw__", dtype)
        path.write_text(path.read_text().replace('"__raw__"', array))
    else:
        _with_array(path, array, dtype)
    with pytest.raises(ValueError, match=message) as error:
        read_problem_file(path)
    assert str(error.value).startswith(f"{path}: provenance.values") and len(str(error.value)) < SHORT


# ====================================================================================== long values
LONG = st.integers(MAX_ECHO + 1, 2_000_000)


@HYPOTHESIS
@given(length=LONG, case=st.sampled_from(["same system", "neither side", "label clash", "never compared",
                                          "missing column", "not a string", "never lost"]))
def test_no_comparison_log_message_repeats_a_long_name_whole(length, case):
    name = "n" * length
    rows = {
        "same system": [(name, name, name)],
        "neither side": [("a", "b", name)],
        "label clash": [(name, "b", name)],  # the system's name is also a tie label
        "never compared": [(name, "b", name), ("c", "d", "c")],
        # (name, d) never compared: the Bradley-Terry fill fails because the long-named system never lost.
        "never lost": [(name, "b", name), (name, "c", name), ("b", "c", "b"), ("c", "b", "c"), ("d", "b", "d"),
                       ("b", "d", "b")],
    }.get(case, [("a", "b", "a")])
    lines = [json.dumps({"first": f, "second": s, "winner": w}) for f, s, w in rows]
    if case == "missing column":
        lines = [json.dumps({name: 1, "second": "b", "winner": "a"})]
    if case == "not a string":
        lines = [json.dumps({"first": [name] * 50, "second": "b", "winner": "a"})]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.jsonl"
        path.write_text("\n".join(lines) + "\n")
        fill = "bradley_terry" if case == "never lost" else None
        with pytest.raises(ValueError) as error:
            load_comparisons(path, fill_missing=fill, tie_values=name if case == "label clash" else "tie")
    message = str(error.value)
    assert len(message) < SHORT and f"... ({length:,} characters)" in message, message


def test_no_problem_file_or_problem_name_message_repeats_a_long_value_whole(tmp_path):
    path = save_problem(_problem(), tmp_path / "problem.json")
    document = json.loads(path.read_text())
    for key, value in (("version", "v" * 1_000_000), ("name", ["n" * 1_000_000])):
        path.write_text(json.dumps({**document, key: value}))
        with pytest.raises(ValueError, match=r"\.\.\. \(1,000,000 characters\)") as error:
            read_problem_file(path)
        assert len(str(error.value)) < SHORT
    with pytest.raises(ValueError, match=r"unknown problem 'xxx.*\.\.\. \(1,000,000 characters\)") as error:
        canonical_name("x" * 1_000_000)
    assert len(str(error.value)) < SHORT


# ====================================================================================== the helpers
def test_echo_caps_long_values_and_keeps_short_ones_as_their_repr():
    assert echo("abc") == "'abc'" and echo(7) == "7" and echo(None) == "None" and echo(("a",)) == "('a',)"
    assert echo("a" * 500) == repr("a" * MAX_ECHO) + "... (500 characters)"
    assert echo("a" * 500, quote=False) == "a" * MAX_ECHO + "... (500 characters)"
    assert echo(list(range(25))) == "[" + ", ".join(map(str, range(20))) + ", ... (5 more)]"
    assert echo(10**5000).startswith("an integer of ")  # its repr would raise: past Python's digit limit
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert echo(deep) == "[[[[...]]]]"  # no RecursionError


def test_check_regular_file_accepts_regular_files_and_new_paths_only(tmp_path):
    regular = tmp_path / "file.json"
    regular.write_text("{}")
    assert check_regular_file(str(regular), "file") == regular
    assert check_regular_file(tmp_path / "new.json", "file", new_ok=True) == tmp_path / "new.json"
    with pytest.raises(FileNotFoundError, match="file not found"):
        check_regular_file(tmp_path / "new.json", "file")
    link = tmp_path / "link.json"
    link.symlink_to(regular)
    assert check_regular_file(link, "file") == link
    with pytest.raises(ValueError, match="symbolic link"):
        check_regular_file(link, "file", new_ok=True, follow_symlinks=False)
    with pytest.raises(ValueError, match="is a folder"):
        check_regular_file(tmp_path, "file")
