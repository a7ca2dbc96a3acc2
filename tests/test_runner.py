"""The one runner: every study (regret sweep, CPE-DB sample complexity, learned-vs-classic evaluation)
resumes from verified unit files, refuses folders of another study, and behaves alike on every backend."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dueling_gym.experiments.runs.runner import run_units
from dueling_gym.experiments.sweeps.sweep import SweepInterrupted, UnitFailed
from dueling_gym.experiments.runs.store import content_digest
from dueling_gym.experiments.runs.work_units import WorkUnit, identity_digest


@dataclass(frozen=True)
class Square(WorkUnit):
    """A unit whose result is ``value ** 2``; every run leaves a file in ``log`` (not part of its identity)."""

    value: int
    log: str
    interrupt_at: int = -1

    @property
    def identity(self) -> dict[str, Any]:
        return {"study": "squares", "value": self.value}

    @property
    def key(self) -> str:
        return f"square{self.value}__{identity_digest(self.identity)[:16]}"

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Square:
        return cls(record["identity"]["value"], record["log"])

    def run(self) -> dict[str, Any]:
        if self.value == self.interrupt_at:
            raise KeyboardInterrupt
        if self.value < 0:
            raise ArithmeticError("negative")
        Path(self.log, f"{self.value}.{os.getpid()}.{np.random.default_rng().integers(1 << 60)}").touch()
        return {"square": self.value ** 2, "log": self.log}

    def check_result(self, record: dict[str, Any]) -> str | None:
        square = record.get("square")
        return None if isinstance(square, int) and square == self.value ** 2 else "square is wrong"


def _squares(tmp_path: Path, values, **options) -> list[Square]:
    log = tmp_path / "log"
    log.mkdir(exist_ok=True)
    return [Square(value, str(log), **options) for value in values]


def _runs(tmp_path: Path) -> list[int]:
    return sorted(int(path.name.split(".")[0]) for path in (tmp_path / "log").iterdir())


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_study_resumes_and_runs_only_what_is_missing(tmp_path, jobs):
    out = tmp_path / "study"
    first = run_units(_squares(tmp_path, range(6)), out, kind="squares", jobs=jobs, progress=False)
    assert [record["square"] for record in first] == [v * v for v in range(6)]
    again = run_units(_squares(tmp_path, range(9)), out, kind="squares", request={"more": True}, jobs=jobs,
                      progress=False)
    assert [record["square"] for record in again] == [v * v for v in range(9)]
    assert again[:6] == first
    assert _runs(tmp_path) == list(range(9))  # the first six ran once
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kind"] == "squares" and manifest["requests"] == [{}, {"more": True}]


def test_a_wrong_or_damaged_unit_file_is_moved_aside_and_run_again(tmp_path):
    out = tmp_path / "study"
    units = _squares(tmp_path, range(3))
    run_units(units, out, kind="squares", progress=False)
    wrong = out / "units" / f"{units[1].key}.json"
    wrong.write_text(wrong.read_text().replace('"square": 1', '"square": 7'))
    (out / "units" / f"{units[2].key}.json").write_text('{"format": 2, "iden')
    with pytest.warns(UserWarning) as caught:
        records = run_units(units, out, kind="squares", progress=False)
    assert [record["square"] for record in records] == [0, 1, 4]
    assert sorted(str(w.message).split(":")[0] for w in caught) == sorted(
        [f"unit file {units[1].key}.json is not a result of this unit", f"unit file {units[2].key}.json is empty, truncated or not JSON"])
    assert len(list((out / "units-rejected").iterdir())) == 2
    assert _runs(tmp_path) == [0, 1, 1, 2, 2]


def test_folders_hold_one_kind_of_study(tmp_path):
    from dueling_gym.experiments.sweeps.sweep import SweepSpec, run_sweep

    run_units(_squares(tmp_path, [1]), tmp_path / "squares", kind="squares", progress=False)
    with pytest.raises(ValueError, match="holds a squares, not a cubes"):
        run_units(_squares(tmp_path, [1]), tmp_path / "squares", kind="cubes", progress=False)
    spec = SweepSpec(agents=("random",), problems=("cyclic4",), seeds=(0,), horizon=10)
    with pytest.raises(ValueError, match="holds a squares, not a regret sweep"):
        run_sweep(spec, tmp_path / "squares", progress=False)
    run_sweep(spec, tmp_path / "sweep", progress=False)
    with pytest.raises(ValueError, match="holds a regret sweep, not a squares"):
        run_units(_squares(tmp_path, [1]), tmp_path / "sweep", kind="squares", progress=False)
    (tmp_path / "loose" / "units").mkdir(parents=True)
    (tmp_path / "loose" / "units" / "x.json").write_text("{}")
    with pytest.raises(ValueError, match="holds unit files but no manifest.json"):
        run_units(_squares(tmp_path, [1]), tmp_path / "loose", kind="squares", progress=False)


def test_ctrl_c_keeps_the_finished_units_and_a_failing_unit_is_named(tmp_path):
    out = tmp_path / "study"
    with pytest.raises(SweepInterrupted) as interrupted:
        run_units(_squares(tmp_path, range(5), interrupt_at=3), out, kind="squares", progress=False)
    assert (interrupted.value.done, interrupted.value.total) == (3, 5)
    assert "run the same command again to resume" in str(interrupted.value)
    run_units(_squares(tmp_path, range(5)), out, kind="squares", progress=False)
    assert _runs(tmp_path) == [0, 1, 2, 3, 4]
    with pytest.raises(UnitFailed, match=r"unit square-2__\w+ failed: ArithmeticError: negative"):
        run_units(_squares(tmp_path, [-2]), out, kind="squares", progress=False)
    with pytest.raises(SweepInterrupted, match="nothing was saved"):
        run_units(_squares(tmp_path, [0, 1], interrupt_at=1), None, kind="squares", progress=False)
    with pytest.raises(ValueError, match="jobs must be a positive integer"):
        run_units(_squares(tmp_path, [0]), out, kind="squares", jobs=0)


# --------------------------------------------------------------------------------------------
# The studies that run through it
# --------------------------------------------------------------------------------------------

def test_the_sample_complexity_study_resumes_from_verified_files(tmp_path, monkeypatch):
    from dueling_gym.experiments.studies import sample_complexity
    from dueling_gym.experiments.studies.sample_complexity import SampleComplexityUnit, run_study

    settings = dict(quick=True, agents=("clucb_borda_pac",), progress=False)
    first = run_study(tmp_path, jobs=2, **settings)
    assert len(first) == 5 and all(row["correct"] for row in first)
    # Without a folder nothing is written; the runs are the same.
    assert [(r["key"], r["samples"]) for r in run_study(None, **settings)] == [(r["key"], r["samples"]) for r in first]

    def must_not_run(self):
        raise AssertionError(f"{self.key} ran again")

    monkeypatch.setattr(SampleComplexityUnit, "run", must_not_run)
    assert run_study(tmp_path, **settings) == first
    path = sorted((tmp_path / "units").glob("*.json"))[0]
    record = json.loads(path.read_text())
    record["samples"] = "many"
    record["content_sha256"] = content_digest(record)  # re-signed: the field's own check must catch it
    path.write_text(json.dumps(record))
    monkeypatch.undo()
    with pytest.warns(UserWarning, match="samples is missing or not int"):
        again = run_study(tmp_path, **settings)
    assert sorted(r["samples"] for r in again) == sorted(r["samples"] for r in first)
    assert sample_complexity.KIND in (tmp_path / "manifest.json").read_text()


def test_the_sample_complexity_study_on_ray_matches_one_process(tmp_path):
    pytest.importorskip("ray")
    from dueling_gym.experiments.studies.sample_complexity import run_study

    settings = dict(quick=True, agents=("clucb_borda_pac",), progress=False)
    local = run_study(tmp_path / "local", **settings)
    remote = run_study(tmp_path / "ray", jobs=2, backend="ray", **settings)
    assert [(r["key"], r["samples"], r["correct"]) for r in local] == [(r["key"], r["samples"], r["correct"]) for r in remote]


def test_the_learned_evaluation_resumes_and_notices_a_changed_policy_file(tmp_path, monkeypatch):
    from dueling_gym.agents.learned import DATA_DIRECTORY
    from dueling_gym.experiments.studies import learned_evaluation
    from dueling_gym.experiments.studies.learned_evaluation import evaluate

    policy = tmp_path / "policy.npz"
    policy.write_bytes((DATA_DIRECTORY / "learned_k5.npz").read_bytes())
    settings = dict(agents=["learned", "rmed1"], families=("utility_based",), n_arms=5, horizons=(30, 60),
                    n_problems=3, policy=policy)
    out = tmp_path / "report"
    rows = evaluate(out, **settings)
    summary = (out / "summary.md").read_text()
    played: list[str] = []
    original = learned_evaluation._agent_regrets

    def counting(task):
        played.append(task[0])
        return original(task)

    monkeypatch.setattr(learned_evaluation, "_agent_regrets", counting)
    assert evaluate(out, jobs=2, **settings) == rows and played == []
    assert (out / "summary.md").read_text() == summary
    with np.load(policy) as archive:
        weights = {name: archive[name] for name in archive.files}
    np.savez(policy, **{**weights, "w": weights["w"] * 2.0})
    evaluate(out, **settings)
    assert played == ["learned"]  # a policy file with other contents is another unit


def test_more_local_jobs_than_cores_warn_and_workers_never_outnumber_the_units(tmp_path, monkeypatch):
    from dueling_gym.experiments.runs import runner
    from dueling_gym.experiments.runs.runner import usable_cores

    monkeypatch.setattr(runner, "_WARNED_JOBS", set())  # the warning comes once per process

    with pytest.warns(UserWarning, match="more than the .* cores"):
        records = run_units(_squares(tmp_path, range(3)), None, kind="squares", jobs=usable_cores() + 1, progress=False)
    assert [record["square"] for record in records] == [0, 1, 4]
    pids = {path.name.split(".")[1] for path in (tmp_path / "log").iterdir()}
    assert len(pids) <= 3


# --------------------------------------------------------------------------------------------
# dueling-gym verify: re-play and compare
# --------------------------------------------------------------------------------------------

def test_verify_replays_a_sweep_and_names_the_file_and_field_that_differ(tmp_path, capsys):
    from dueling_gym.cli import main
    from dueling_gym.experiments.sweeps.sweep import SweepSpec, run_sweep
    from dueling_gym.experiments.verify import verify_folder

    out = tmp_path / "sweep"
    run_sweep(SweepSpec(agents=("rucb", "ccb:alpha=1"), problems=("multisol",), seeds=(0, 1, 2), horizon=500), out,
              progress=False)
    report = verify_folder(out, progress=False)
    assert report.ok and len(report.identical) == 6 == report.n_files
    files = sorted((out / "units").glob("rucb*.json"))
    # Another seed's numbers, re-signed: every check of the file passes, only re-playing tells.
    donor, target = (json.loads(path.read_text()) for path in files[:2])
    target["cumulative_regret"] = donor["cumulative_regret"]
    target["content_sha256"] = content_digest(target)
    files[1].write_text(json.dumps(target))
    files[2].write_text("{")
    report = verify_folder(out, progress=False, jobs=2)
    assert report.differing == {files[1].name: ["cumulative_regret"]}
    assert list(report.failing) == [files[2].name] and len(report.identical) == 4
    share = verify_folder(out, fraction=0.5, seed=3, progress=False)
    assert len(share.identical) + len(share.differing) + len(share.failing) == 3
    assert main(["verify", str(out), "--no-progress"]) == 1
    printed = capsys.readouterr().out
    assert f"differs: {files[1].name}: cumulative_regret" in printed and "6 of 6 unit files checked" in printed
    with pytest.raises(SystemExit):
        main(["verify", str(out), "--fraction", "0"])
    with pytest.raises(ValueError, match="no manifest.json"):
        verify_folder(tmp_path)


def test_verify_replays_the_studies(tmp_path):
    from dueling_gym.experiments.studies.learned_evaluation import evaluate
    from dueling_gym.experiments.studies.sample_complexity import run_study
    from dueling_gym.experiments.verify import verify_folder

    run_study(tmp_path / "cpe", quick=True, agents=("clucb_borda_pac",), progress=False)
    report = verify_folder(tmp_path / "cpe", fraction=0.4, progress=False)
    assert report.ok and len(report.identical) == 2 and report.kind == "CPE-DB sample-complexity study"
    evaluate(tmp_path / "eval", agents=["learned", "rmed1"], families=("utility_based",), n_arms=5, horizons=(30,),
             n_problems=3, published=("cyclic4",), runs_per_published=2)
    report = verify_folder(tmp_path / "eval", progress=False)
    assert report.ok and report.n_files == 4  # learned plays cyclic4 (K = 4) with the general policy
