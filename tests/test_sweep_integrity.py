"""Sweep folders never give silently wrong results: duplicates, foreign or damaged unit files,
validation before writing, extension and conflicts."""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dueling_gym.experiments.sweeps.sweep import ProblemSpec, SweepSpec, load_results, run_sweep

HORIZON = 300
BASE = dict(agents=("rucb", "rmed1"), problems=("cyclic4",), seeds=(0, 1), horizon=HORIZON)


def _quiet_run(spec: SweepSpec, out: Path, **options) -> list[dict]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = run_sweep(spec, out, progress=False, **options)
    return records, [str(w.message) for w in caught]


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A finished sweep, and a unit file of the same units at another horizon (a foreign file)."""
    folder = tmp_path_factory.mktemp("clean")
    run_sweep(SweepSpec(**BASE), folder, progress=False)
    other = tmp_path_factory.mktemp("other")
    run_sweep(SweepSpec(**(BASE | {"horizon": HORIZON + 1, "seeds": (0,)})), other, progress=False)
    return folder, sorted((other / "units").glob("*.json"))


def _units(folder: Path) -> list[Path]:
    return sorted((folder / "units").glob("*.json"))


@contextlib.contextmanager
def _scratch_copy(folder: Path) -> Iterator[tuple[Path, list[Path]]]:
    """A scratch copy of the sweep ``folder`` and its unit files, deleted on leaving."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "sweep"
        shutil.copytree(folder, out)
        yield out, _units(out)


def _wrong_horizon(text: str) -> str:
    record = json.loads(text)
    record["identity"]["horizon"] = HORIZON * 10
    record["horizon"] = HORIZON * 10
    return json.dumps(record)


def _dropped_field(text: str) -> str:
    record = json.loads(text)
    del record["cumulative_regret"]
    return json.dumps(record)


def _short_curve(text: str) -> str:
    record = json.loads(text)
    for values in record["cumulative_regret"].values():
        values.pop()
    return json.dumps(record)


CORRUPTIONS = st.sampled_from(["truncate", "empty", "foreign", "wrong_horizon", "garbage", "json_list",
                               "dropped_field", "short_curve", "nan"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    damage=st.lists(st.tuples(st.integers(0, 3), CORRUPTIONS, st.floats(0, 1)), max_size=4, unique_by=lambda d: d[0]),
    strays=st.lists(st.sampled_from(["notes.txt", "x.json", "rucb__cyclic4__seed9__0000.json", "units.json.bak"]),
                    max_size=3, unique=True),
)
def test_damaged_or_foreign_unit_files_are_moved_aside_and_rerun(clean, damage, strays):
    folder, foreign = clean
    expected_table = (folder / "results.csv").read_text()
    with _scratch_copy(folder) as (out, files):
        for index, kind, fraction in damage:
            path = files[index]
            text = path.read_text()
            new = {
                "truncate": text[: int(fraction * (len(text) - 1))],
                "empty": "",
                "foreign": foreign[0].read_text(),
                "wrong_horizon": _wrong_horizon(text),
                "garbage": "\x00\xff not json",
                "json_list": "[1, 2, 3]",
                "dropped_field": _dropped_field(text),
                "short_curve": _short_curve(text),
                "nan": text.replace("]", ", NaN]", 1),
            }[kind]
            path.write_text(new, errors="surrogateescape")
        stray_contents = {}
        for name in strays:
            (out / "units" / name).write_text('{"stray": true}')
            stray_contents[name] = '{"stray": true}'

        records, messages = _quiet_run(SweepSpec(**BASE), out)

        assert (out / "results.csv").read_text() == expected_table
        assert len(records) == 4
        rejected = sorted((out / "units-rejected").glob("*")) if (out / "units-rejected").exists() else []
        assert len(rejected) == len(damage)  # every damaged file kept, none deleted
        for index, _, _ in damage:
            name = files[index].name
            assert any(name in message for message in messages), (name, messages)
        for name, content in stray_contents.items():  # strays are neither read nor touched
            assert (out / "units" / name).read_text() == content


def _edit(field_path: tuple, value):
    """An edit of one field of a unit record (``field_path`` into the nested record)."""
    def edit(record: dict) -> None:
        target = record
        for key in field_path[:-1]:
            target = target[key]
        if callable(value):
            target[field_path[-1]] = value(target[field_path[-1]])
        else:
            target[field_path[-1]] = value
    return edit


def _drop_notion(record: dict) -> None:
    del record["cumulative_regret"]["borda"]


def _invent_notion(record: dict) -> None:
    record["cumulative_regret"]["bogus"] = list(record["cumulative_regret"]["borda"])


#: Hand edits that keep the file well-formed JSON of the right unit, each with the field the
#: rejection must name.  (cyclic4 has no Condorcet winner: copeland_komiyama, copeland_zoghi, borda.)
IMPLAUSIBLE = {
    "huge regret": (_edit(("cumulative_regret", "borda", -1), 1e300), "regret of 'borda'"),
    "integer beyond floats": (_edit(("cumulative_regret", "borda", -1), 10 ** 400), "regret of 'borda'"),
    "negative regret": (_edit(("cumulative_regret", "copeland_zoghi", 0), -1.0), "regret of 'copeland_zoghi'"),
    "decreasing regret": (_edit(("cumulative_regret", "borda"), lambda v: v[::-1] if v[0] != v[-1] else [1.0] + v[1:]),
                          "regret of 'borda'"),
    "string regret": (_edit(("cumulative_regret", "borda", 0), "0.5"), "regret of 'borda'"),
    "missing notion": (_drop_notion, "notions"),
    "invented notion": (_invent_notion, "notions"),
    "seed relabelled": (_edit(("seed",), 7), "seed"),
    "horizon edited": (_edit(("horizon",), 1), "horizon"),
    "arm out of range": (_edit(("recommendations", -1), 999), "recommendations"),
    "boolean arm": (_edit(("recommendations", 0), True), "recommendations"),
    "string booleans": (_edit(("recommendation_is_copeland_winner",), lambda v: ["x" for _ in v]),
                        "recommendation_is_copeland_winner"),
    "flipped winner flag": (_edit(("recommendation_is_copeland_winner", -1), lambda v: not v),
                            "recommendation_is_copeland_winner"),
    "permutation edited": (_edit(("permutation",), lambda v: v[::-1]), "permutation"),
    "negative wall time": (_edit(("wall_time",), -3.0), "wall_time"),
    "problem relabelled": (_edit(("problem_spec", "name"), "sushi"), "problem_spec"),
    "key of another file": (_edit(("key",), "rucb__cyclic4__seed1__0000000000000000"), "key"),
}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 3), st.sampled_from(sorted(IMPLAUSIBLE)), st.booleans()), min_size=1,
                      max_size=3, unique_by=lambda e: e[0]))
def test_implausible_unit_files_are_rejected_naming_the_field(clean, edits):
    """Edited files are caught by their content digest; re-signed ones by the check of the field itself."""
    from dueling_gym.experiments.runs.store import content_digest

    folder, _ = clean
    expected_table = (folder / "results.csv").read_text()
    with _scratch_copy(folder) as (out, files):
        for index, name, resign in edits:
            record = json.loads(files[index].read_text())
            IMPLAUSIBLE[name][0](record)
            if resign:
                record["content_sha256"] = content_digest(record)
            files[index].write_text(json.dumps(record))

        records, messages = _quiet_run(SweepSpec(**BASE), out)

        assert (out / "results.csv").read_text() == expected_table
        assert len(records) == 4 and len(list((out / "units-rejected").iterdir())) == len(edits)
        for index, name, resign in edits:
            message = next(m for m in messages if files[index].name in m)
            expected = IMPLAUSIBLE[name][1] if resign else "content_sha256"
            assert expected in message, (name, message)


def test_every_field_of_a_unit_file_with_a_value_of_another_type_is_rejected(clean):
    """Each field in turn gets a value of a type it never has (the file re-signed): always rejected."""
    from dueling_gym.experiments.runs.store import content_digest

    folder, _ = clean
    record = json.loads(_units(folder)[0].read_text())
    for field in sorted(set(record) - {"content_sha256"}):
        bogus = [1] if isinstance(record[field], dict) else {"bogus": 1}
        with _scratch_copy(folder) as (out, files):
            path = files[0]
            edited = json.loads(path.read_text()) | {field: bogus}
            edited["content_sha256"] = content_digest(edited)
            path.write_text(json.dumps(edited))
            records, messages = _quiet_run(SweepSpec(**BASE), out)
            assert any(path.name in message for message in messages), field
            assert (out / "results.csv").read_text() == (folder / "results.csv").read_text(), field


def test_duplicates_are_counted_once(tmp_path):
    with pytest.warns(UserWarning, match="given more than once"):
        spec = SweepSpec(agents=("rucb", "RUCB", "rucb:alpha=0.51"), problems=("cyclic4", "cyclic"),
                         seeds=(1, 1, 2), horizon=HORIZON)
    assert len(spec.agents) == 1 and len(spec.problems) == 1 and spec.seeds == (1, 2)
    records = run_sweep(spec, tmp_path, progress=False)
    assert len(records) == 2 == len(_units(tmp_path))
    from dueling_gym.experiments.sweeps.report import aggregate

    assert [curve.n_runs for curve in aggregate(load_results(tmp_path))] == [2]


def test_generator_options_equal_to_defaults_are_the_same_problem():
    a = ProblemSpec.parse("unique_copeland_winner:n_arms=5,problem_seed=1")
    b = ProblemSpec.parse("Unique_Copeland_Winner:problem_seed=1,n_arms=5,min_gap=0.0")
    assert a == b and a.label == b.label


def test_identity_covers_what_changes_the_numbers():
    base = SweepSpec(**BASE).units()[0]
    variants = [
        SweepSpec(**(BASE | {"horizon": HORIZON + 1})),
        SweepSpec(**BASE, shuffle_arms=False),
        SweepSpec(**BASE, checkpoints=(10, HORIZON)),
        SweepSpec(**(BASE | {"agents": ("rucb:alpha=0.6",)})),
        SweepSpec(**(BASE | {"problems": ("mslr5-condorcet",)})),
        SweepSpec(**(BASE | {"seeds": (5,)})),
    ]
    keys = {base.key} | {spec.units()[0].key for spec in variants}
    assert len(keys) == len(variants) + 1
    assert base.identity["dueling_gym"] and base.identity["problem"]["matrix_sha256"]


@pytest.mark.parametrize("options,pattern", [
    (dict(agents=("rucb:alpha=-1",)), "alpha"),
    (dict(agents=("rucb:nope=1",)), "does not accept"),
    (dict(agents=("linear_ucb",)), "unknown agent"),
    (dict(problems=("unique_copeland_winner:n_arms=abc,problem_seed=1",)), "n_arms"),
    (dict(problems=("unique_copeland_winner:n_arms=4,problem_seed=1,min_gap=abc",)), "min_gap"),
    (dict(problems=("unique_copeland_winner:n_arms=4,problem_seed=1,colour=1",)), "no option"),
    (dict(problems=("sushi:n_arms=3",)), "takes no"),
    (dict(seeds=(-1,)), "seed"),
    (dict(seeds=(1.5,)), "seed"),
    (dict(horizon=0), "horizon"),
])
def test_bad_inputs_are_refused_before_anything_is_written(tmp_path, options, pattern):
    out = tmp_path / "never"
    with pytest.raises((ValueError, TypeError), match=pattern):
        run_sweep(SweepSpec(**(BASE | options)), out, progress=False)
    assert not out.exists()


def test_a_notion_missing_on_a_problem_is_refused_before_running(tmp_path):
    out = tmp_path / "never"
    with pytest.raises(ValueError, match="condorcet_strong.*multisol"):
        run_sweep(SweepSpec(**(BASE | {"problems": ("cyclic4", "multisol")})), out, progress=False,
                  notion="condorcet_strong")
    assert not out.exists()


def test_extension_runs_only_missing_units_and_conflicts_name_the_parameter(tmp_path):
    run_sweep(SweepSpec(**BASE), tmp_path, progress=False)
    stamps = {p.name: p.stat().st_mtime_ns for p in _units(tmp_path)}
    extended = SweepSpec(**(BASE | {"seeds": (0, 1, 2), "problems": ("cyclic4", "multisol")}))
    records = run_sweep(extended, tmp_path, progress=False)
    assert len(records) == 12 and len(_units(tmp_path)) == 12
    assert all(p.stat().st_mtime_ns == stamps[p.name] for p in _units(tmp_path) if p.name in stamps)
    # A sub-sweep runs nothing; the folder's table keeps every unit of the folder.
    assert len(run_sweep(SweepSpec(**BASE), tmp_path, progress=False)) == 4
    assert len(load_results(tmp_path)) == 12
    rows = (tmp_path / "results.csv").read_text().splitlines()[1:]
    assert len({tuple(row.split(",")[:3]) for row in rows}) == 12
    for change, pattern in [({"horizon": HORIZON + 1}, "horizon"), ({"shuffle_arms": False}, "shuffling"),
                            ({"checkpoints": (5, HORIZON)}, "checkpoints")]:
        with pytest.raises(ValueError, match=pattern):
            run_sweep(SweepSpec(**(BASE | change)), tmp_path, progress=False)


def test_unusable_output_folders(tmp_path):
    spec = SweepSpec(**BASE)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        run_sweep(spec, tmp_path / "file", progress=False)
    with pytest.raises(ValueError, match="parent .* does not exist"):
        run_sweep(spec, tmp_path / "missing" / "out", progress=False)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "manifest.json").write_text('{"spec": {}}')
    with pytest.raises(ValueError, match="older dueling-gym"):
        run_sweep(spec, tmp_path / "old", progress=False)


def test_result_files_follow_the_umask(tmp_path):
    import os

    previous = os.umask(0o027)
    try:
        run_sweep(SweepSpec(**(BASE | {"seeds": (0,), "agents": ("rucb",)})), tmp_path, progress=False)
    finally:
        os.umask(previous)
    for path in [tmp_path / "manifest.json", tmp_path / "results.csv", *_units(tmp_path)]:
        assert path.stat().st_mode & 0o777 == 0o640, path


def test_a_failing_unit_is_reported_and_finished_units_are_kept(tmp_path, monkeypatch):
    import importlib

    from dueling_gym.experiments.sweeps.sweep import UnitFailed

    simulate_module = importlib.import_module("dueling_gym.experiments.simulate")

    # A sweep's units play the validated entry (their spec checked the arguments).
    real = simulate_module.simulate_validated
    calls = []

    def failing_on_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("numerical trouble")
        return real(*args, **kwargs)

    monkeypatch.setattr(simulate_module, "simulate_validated", failing_on_second)
    with pytest.raises(UnitFailed, match="seed1.*numerical trouble"):
        run_sweep(SweepSpec(**BASE), tmp_path, progress=False)
    assert len(_units(tmp_path)) == 1
    monkeypatch.setattr(simulate_module, "simulate_validated", real)
    assert len(run_sweep(SweepSpec(**BASE), tmp_path, progress=False)) == 4


def test_settings_that_cannot_be_stored_are_refused():
    import numpy as np

    from dueling_gym.experiments.sweeps.sweep import AgentSpec

    with pytest.raises(TypeError, match="JSON"):
        AgentSpec("rucb", {"alpha": np.int64(1)})
    with pytest.raises(TypeError, match="JSON"):
        ProblemSpec("unique_copeland_winner", 4, 0, {"min_gap": object()})


def test_equal_settings_typed_differently_are_one_run(tmp_path):
    with pytest.warns(UserWarning, match="given more than once"):
        spec = SweepSpec(agents=("ccb:alpha=1", "ccb:alpha=1.0"), problems=(
            "unique_copeland_winner:n_arms=5,problem_seed=1,min_gap=0", "unique_copeland_winner:n_arms=5,problem_seed=1"),
            seeds=(0,), horizon=HORIZON)
    assert len(spec.agents) == 1 and spec.agents[0].hyperparameters == {"alpha": 1.0}
    assert spec.agents[0].label == "ccb:alpha=1"  # tables show what was typed
    assert len(spec.problems) == 1 and spec.problems[0].options == {}
    with pytest.raises(ValueError, match="alpha of agent 'ccb' must be a real number within float range"):
        SweepSpec(agents=(f"ccb:alpha={10 ** 400}",), problems=("cyclic4",), seeds=(0,), horizon=HORIZON)


def test_a_policy_file_rewritten_at_its_path_makes_new_runs(tmp_path):
    from dueling_gym.agents.learned import DATA_DIRECTORY

    policy = tmp_path / "policy.npz"
    policy.write_bytes((DATA_DIRECTORY / "learned_k5.npz").read_bytes())
    spec = SweepSpec(agents=(f"learned:policy={json.dumps(str(policy))}",), problems=("mslr5-condorcet",), seeds=(0,),
                     horizon=HORIZON)
    first = run_sweep(spec, tmp_path / "sweep", progress=False)
    assert first[0]["identity"]["agent"]["files"]["policy_sha256"]
    with np.load(policy) as archive:
        weights = {name: archive[name] for name in archive.files}
    np.savez(policy, **{**weights, "w": -weights["w"]})
    second = run_sweep(spec, tmp_path / "sweep", progress=False)
    assert second[0]["key"] != first[0]["key"] and len(_units(tmp_path / "sweep")) == 2
    assert second[0]["cumulative_regret"] != first[0]["cumulative_regret"]


def test_the_folder_lock_is_taken_before_the_manifest_is_read(tmp_path, monkeypatch):
    from dueling_gym.experiments.runs.store import FolderLock

    out = tmp_path / "sweep"
    run_sweep(SweepSpec(**BASE), out, progress=False)
    manifest = (out / "manifest.json").read_text()
    with FolderLock(out):  # another sweep is running in the folder
        with pytest.raises(ValueError, match="in use by another running sweep"):
            run_sweep(SweepSpec(**(BASE | {"seeds": (5,)})), out, progress=False)
    assert (out / "manifest.json").read_text() == manifest
    # A sweep into a new folder that fails before writing anything (here: no cluster) leaves nothing behind.
    def unreachable(address, jobs):
        raise ConnectionError("could not connect to Ray")

    from dueling_gym.experiments.runs import runner

    monkeypatch.setattr(runner, "connect_ray", unreachable)  # a sweep's units run through the runner
    with pytest.raises(ConnectionError):
        run_sweep(SweepSpec(**BASE), tmp_path / "new", progress=False, backend="ray", address="auto")
    assert not (tmp_path / "new").exists()
