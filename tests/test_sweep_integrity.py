"""Sweep folders never give silently wrong results: duplicates, foreign or damaged unit files,
validation before writing, extension and conflicts."""

from __future__ import annotations

import json
import shutil
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dueling_gym.experiments.sweep import ProblemSpec, SweepSpec, load_results, run_sweep

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
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "sweep"
        shutil.copytree(folder, out)
        files = _units(out)
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


def test_duplicates_are_counted_once(tmp_path):
    with pytest.warns(UserWarning, match="given more than once"):
        spec = SweepSpec(agents=("rucb", "RUCB", "rucb:alpha=0.51"), problems=("cyclic4", "cyclic"),
                         seeds=(1, 1, 2), horizon=HORIZON)
    assert len(spec.agents) == 1 and len(spec.problems) == 1 and spec.seeds == (1, 2)
    records = run_sweep(spec, tmp_path, progress=False)
    assert len(records) == 2 == len(_units(tmp_path))
    from dueling_gym.experiments.report import aggregate

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

    from dueling_gym.experiments.sweep import UnitFailed

    simulate_module = importlib.import_module("dueling_gym.experiments.simulate")

    real = simulate_module.simulate
    calls = []

    def failing_on_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("numerical trouble")
        return real(*args, **kwargs)

    monkeypatch.setattr(simulate_module, "simulate", failing_on_second)
    with pytest.raises(UnitFailed, match="seed1.*numerical trouble"):
        run_sweep(SweepSpec(**BASE), tmp_path, progress=False)
    assert len(_units(tmp_path)) == 1
    monkeypatch.setattr(simulate_module, "simulate", real)
    assert len(run_sweep(SweepSpec(**BASE), tmp_path, progress=False)) == 4


def test_settings_that_cannot_be_stored_are_refused():
    import numpy as np

    from dueling_gym.experiments.sweep import AgentSpec

    with pytest.raises(TypeError, match="JSON"):
        AgentSpec("rucb", {"alpha": np.int64(1)})
    with pytest.raises(TypeError, match="JSON"):
        ProblemSpec("unique_copeland_winner", 4, 0, {"min_gap": object()})
