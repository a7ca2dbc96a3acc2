"""Sweeps: resumable after a killed worker, identical across backends and runs, CLI errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from dueling_gym.cli import main
from dueling_gym.experiments.sweeps.report import aggregate, summary_markdown
from dueling_gym.experiments.sweeps.sweep import AgentSpec, ProblemSpec, SweepSpec, load_results, run_sweep

SMALL = SweepSpec(agents=("rucb", "rmed1"), problems=("multisol", "cyclic4"), seeds=(0, 1, 2), horizon=3000)


def _unit_files(folder: Path) -> dict[str, float]:
    if not (folder / "units").exists():
        return {}
    return {path.name: path.stat().st_mtime_ns for path in (folder / "units").glob("*.json")}


def test_records_are_identical_across_jobs_and_runs(tmp_path):
    serial = run_sweep(SMALL, tmp_path / "serial", jobs=1, progress=False)
    parallel = run_sweep(SMALL, tmp_path / "parallel", jobs=2, progress=False)
    assert len(serial) == len(SMALL.units()) == 12
    strip = lambda records: [{k: v for k, v in r.items() if k not in ("wall_time", "content_sha256")} for r in records]  # noqa: E731, E501
    assert strip(serial) == strip(parallel)
    table = (tmp_path / "serial" / "results.csv").read_text()
    assert table == (tmp_path / "parallel" / "results.csv").read_text()
    assert table.splitlines()[0].startswith("agent,problem,seed,t,regret_copeland_komiyama")
    manifest = json.loads((tmp_path / "serial" / "manifest.json").read_text())
    assert manifest["requests"][0]["seeds"] == [0, 1, 2] and "numpy" in manifest["versions"]
    assert manifest["horizon"] == 3000


def test_rerun_skips_finished_units_and_rejects_a_different_sweep(tmp_path):
    run_sweep(SMALL, tmp_path, progress=False)
    before = _unit_files(tmp_path)
    run_sweep(SMALL, tmp_path, progress=False)
    assert _unit_files(tmp_path) == before  # nothing rewritten
    other = SweepSpec(agents=("rucb",), problems=("multisol",), seeds=(0,), horizon=10)
    with pytest.raises(ValueError, match="horizon 3000, this one has 10"):
        run_sweep(other, tmp_path, progress=False)


def test_resume_after_a_killed_worker_loses_and_repeats_nothing(tmp_path):
    out = tmp_path / "sweep"
    script = textwrap.dedent(f"""
        from dueling_gym.experiments.sweeps.sweep import SweepSpec, run_sweep
        spec = SweepSpec(agents=("rucb",), problems=("sushi",), seeds=tuple(range(40)), horizon=400_000)
        run_sweep(spec, {str(out)!r}, jobs=2, progress=False)
    """)
    process = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.time() + 120
        while len(_unit_files(out)) < 3:
            if time.time() > deadline:
                pytest.fail("no unit finished in time")
            if process.poll() is not None:
                pytest.fail("the sweep finished before a worker could be killed")
            time.sleep(0.1)
        workers = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
        # Workers are forked (Linux) or spawned; multiprocessing may also start a resource
        # tracker.  Kill a process that runs units.
        killed = False
        for pid in workers:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            if b"resource_tracker" not in command:
                os.kill(int(pid), signal.SIGKILL)
                killed = True
                break
        assert killed, "no worker process found"
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    finished = _unit_files(out)
    assert process.returncode != 0, "killing a worker must abort the sweep"
    assert 0 < len(finished) < 40
    # A unit killed mid-write leaves at most a hidden temporary file, never a final name.
    assert all(not name.startswith(".") for name in finished)
    for name in finished:
        json.loads((out / "units" / name).read_text())  # every finished file is complete

    spec = SweepSpec(agents=("rucb",), problems=("sushi",), seeds=tuple(range(40)), horizon=400_000)
    records = run_sweep(spec, out, jobs=2, progress=False)
    after = _unit_files(out)
    assert len(records) == 40 and len(after) == 40
    assert {r["seed"] for r in records} == set(range(40))
    assert all(after[name] == stamp for name, stamp in finished.items())  # finished units were not redone


def test_ray_backend_matches_local(tmp_path):
    pytest.importorskip("ray")
    local = run_sweep(SMALL, tmp_path / "local", jobs=1, progress=False)
    remote = run_sweep(SMALL, tmp_path / "ray", jobs=2, backend="ray", progress=False)
    strip = lambda records: [{k: v for k, v in r.items() if k not in ("wall_time", "content_sha256")} for r in records]  # noqa: E731, E501
    assert strip(local) == strip(remote)


def test_shuffled_arms_report_original_labels(tmp_path):
    spec = SweepSpec(agents=("rmed1",), problems=("mslr5-condorcet",), seeds=(0, 1, 2, 3), horizon=20_000)
    records = run_sweep(spec, tmp_path, progress=False)
    permutations = {tuple(r["permutation"]) for r in records}
    assert len(permutations) > 1  # the arm order really changes between runs
    assert all(r["recommendations"][-1] == 0 for r in records)  # yet the winner is reported as arm 0


def test_agent_and_problem_specs():
    spec = AgentSpec.parse("rucb:alpha=0.6,use_hypothesis=false")
    assert spec.hyperparameters == {"alpha": 0.6, "use_hypothesis": False} and spec.label.startswith("rucb:")
    problem = ProblemSpec.parse("unique_copeland_winner:n_arms=6,problem_seed=2,min_gap=0.1")
    assert problem.build().n_arms == 6 and problem.build() == problem.build()
    with pytest.raises(ValueError, match="choose one of"):
        AgentSpec.parse("nope")
    with pytest.raises(ValueError, match="shipped problem"):
        ProblemSpec.parse("nope")
    with pytest.raises(ValueError, match="n_arms and problem_seed"):
        ProblemSpec("utility_based")
    with pytest.raises(ValueError, match="key=value"):
        AgentSpec.parse("rucb:alpha")
    with pytest.raises(ValueError, match="horizon"):
        SweepSpec(agents=("rucb",), problems=("sushi",), seeds=(0,), horizon=0)


def test_report_table(tmp_path):
    records = run_sweep(SMALL, tmp_path, progress=False)
    curves = aggregate(records)
    assert {(c.problem, c.agent) for c in curves} == {(p, a) for p in ("multisol", "cyclic4") for a in ("rucb", "rmed1")}
    curve = next(c for c in curves if c.problem == "multisol" and c.agent == "rucb")
    finals = [r["cumulative_regret"]["copeland_komiyama"][-1] for r in records
              if r["problem"] == "multisol" and r["agent"] == "rucb"]
    assert curve.mean[-1] == pytest.approx(np.mean(finals))
    assert "| multisol | rucb | 3 | 3000 |" in summary_markdown(curves)
    with pytest.raises(ValueError, match="condorcet_strong"):
        aggregate(records, "condorcet_strong")


def test_cli_run_and_plot(tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["run", "--agents", "rucb", "random", "--problems", "cyclic4", "--seeds", "3", "--horizon", "2000",
                 "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "| cyclic4 | random | 3 | 2000 |" in text
    assert (out / "regret.png").exists() and (out / "summary.md").exists()
    assert not (out / "regret.svg").exists()  # SVG on request only
    assert main(["plot", str(out), "--notion", "copeland_zoghi", "--svg"]) == 0
    assert (out / "regret-copeland_zoghi.png").exists() and (out / "regret-copeland_zoghi.svg").exists()
    assert len(load_results(out)) == 6


@pytest.mark.parametrize(
    "argv,pattern",
    [
        (["run", "--agents", "rucbx", "--problems", "sushi", "--horizon", "10", "--out", "x"], "unknown agent 'rucbx'; choose one of"),
        (["run", "--agents", "rucb", "--problems", "sush", "--horizon", "10", "--out", "x"], "unknown problem 'sush'"),
        (["run", "--agents", "rucb", "--problems", "sushi", "--horizon", "0", "--out", "x"], "positive integer"),
        (["run", "--agents", "rucb", "--problems", "sushi", "--horizon", "5", "--seeds", "a", "--out", "x"], "seeds must be"),
        (["run", "--agents", "rucb", "--problems", "sushi", "--horizon", "5", "--out", "x", "--backend", "dask"], "invalid choice"),
        (["reproduce", "nope"], "unknown preset 'nope'; choose one of"),
        (["plot", "/nonexistent-folder"], "no results"),
    ],
)
def test_bad_cli_arguments_give_one_line_errors(argv, pattern, capsys):
    with pytest.raises(SystemExit) as excinfo:
        main(argv)
    assert excinfo.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert any(__import__("re").search(pattern, line) for line in err)
    assert len([line for line in err if "error" in line]) == 1


def test_reproduce_list(capsys):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert "komiyama2016" in out and "zoghi2015-scalability" in out


@pytest.mark.parametrize("quick", [True, False])
def test_every_preset_builds_with_registered_agents(quick):
    from dueling_gym.experiments.studies.presets import PRESETS

    for preset in PRESETS.values():
        if preset.kind != "regret":
            continue
        spec = SweepSpec(**preset.sweep_arguments(quick))  # raises on an unknown agent or problem
        assert spec.units()
        for problem in spec.problems[:3]:
            assert problem.build().n_arms >= 2


def test_reproduce_quick_preset_end_to_end(tmp_path, capsys, monkeypatch):
    # The quick preset shrunk further (two problems, two seeds) through the same code path.
    from dueling_gym.experiments.studies import presets

    small = presets.Preset(
        name="tiny", title="tiny", reference="test",
        full=dict(agents=("random", "ecw_rmed"), problems=("multisol",), seeds=(0,), horizon=2000),
        quick=dict(agents=("random", "ecw_rmed"), problems=("multisol", "cyclic4"), seeds=(0, 1), horizon=2000),
    )
    monkeypatch.setitem(presets.PRESETS, "tiny", small)
    assert main(["reproduce", "tiny", "--quick", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "| multisol | ecw_rmed | 2 | 2000 |" in out
    assert (tmp_path / "regret.png").exists()
    # The same as a Python call: nothing runs again, and the report comes back instead of being printed.
    stamps = {path.name: path.stat().st_mtime_ns for path in (tmp_path / "units").glob("*.json")}
    report = presets.reproduce("tiny", quick=True, out=tmp_path, progress=False, plot=False)
    assert {path.name: path.stat().st_mtime_ns for path in (tmp_path / "units").glob("*.json")} == stamps
    assert report.folder == tmp_path and "| multisol | ecw_rmed | 2 | 2000 |" in report.summary
    assert report.files == (tmp_path / "summary.md", tmp_path / "summary.csv") and report.figures == ()
    assert len(report.records) == 8 and {record["agent"] for record in report.records} == {"random", "ecw_rmed"}


@pytest.mark.slow
def test_reproduce_cpe_db_quick_resumes(tmp_path, capsys):
    argv = ["reproduce", "chen2020-cpe-db", "--quick", "--out", str(tmp_path), "--no-progress", "--no-plot"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "clucb_borda_pac" in out and "median ratio" in out
    units = sorted((tmp_path / "units").glob("*.json"))
    assert len(units) == 15  # 5 instances x 3 agents
    assert all(json.loads(path.read_text())["correct"] for path in units)
    stamps = {path.name: path.stat().st_mtime_ns for path in units}
    assert main(argv) == 0  # a second run reuses every finished unit
    assert {path.name: path.stat().st_mtime_ns for path in (tmp_path / "units").glob("*.json")} == stamps


def test_workers_get_every_unit_once_in_shrinking_batches():
    from dueling_gym.experiments.runs.runner import unit_batches as _batches

    units = list(range(1000))
    for jobs in (2, 16):
        batches = _batches(units, jobs)
        assert [unit for batch in batches for unit in batch] == units
        sizes = [len(batch) for batch in batches]
        assert max(sizes) <= 32 and sizes == sorted(sizes, reverse=True) and sizes[-1] == 1
    assert _batches(units[:5], 1) == [[0], [1], [2], [3], [4]]
