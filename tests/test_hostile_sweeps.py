"""Results folders under hostile input: problems that share a name, agents whose helper modules
change, tables that no unit backs, and agent modules that cannot be imported."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from dueling_gym.cli import main
from dueling_gym.experiments.sweeps.sweep import ProblemSpec, SweepSpec, folder_units, load_results, run_sweep
from dueling_gym.experiments.verify import verify_folder
from dueling_gym.problems import save_problem
from dueling_gym.problems.preference import PreferenceMatrix

HORIZON = 200
FIRST = [[0.5, 0.7, 0.6], [0.3, 0.5, 0.8], [0.4, 0.2, 0.5]]
SECOND = [[0.5, 0.4, 0.6], [0.6, 0.5, 0.8], [0.4, 0.2, 0.5]]


def _battles(folder: Path, matrix: list[list[float]]) -> Path:
    """A problem saved as ``FOLDER/battles.json`` with no name of its own: it is named by the file's stem."""
    folder.mkdir(parents=True, exist_ok=True)
    return save_problem(PreferenceMatrix(matrix), folder / "battles.json")


def _run(out: Path, *problems: Path, agents: tuple[str, ...] = ("rucb",)) -> None:
    argv = ["run", "--agents", *agents, "--problems", *(f"file:{path}" for path in problems), "--seeds", "2",
            "--horizon", str(HORIZON), "--no-plot", "--no-progress", "--out", str(out)]
    assert main(argv) == 0


def _runs_in_table(out: Path) -> set[tuple[str, str, str]]:
    with open(out / "results.csv", newline="") as stream:
        return {(row["agent"], row["problem"], row["seed"]) for row in csv.DictReader(stream)}


def _digest8(path: Path) -> str:
    return ProblemSpec.parse(f"file:{path}").identity["matrix_sha256"][:8]


# --------------------------------------------------------------------------------------------
# Two problems of one name are two problems
# --------------------------------------------------------------------------------------------

def test_a_second_problem_of_the_same_name_run_into_the_folder_keeps_the_first(tmp_path, capsys):
    first, second = _battles(tmp_path / "a", FIRST), _battles(tmp_path / "b", SECOND)
    out = tmp_path / "results"
    _run(out, first)
    _run(out, second)
    tagged = f"battles@{_digest8(second)}"
    assert _runs_in_table(out) == {("rucb", label, seed) for label in ("battles", tagged) for seed in "01"}
    summary = (out / "summary.md").read_text()
    assert "| battles | rucb | 2 |" in summary and f"| {tagged} | rucb | 2 |" in summary
    manifest = json.loads((out / "manifest.json").read_text())
    assert [(p["options"]["path"], p["label"]) for p in manifest["problems"]] == [(str(first), "battles"),
                                                                                 (str(second), tagged)]
    # Each problem keeps its label: running either again runs and relabels nothing.
    _run(out, second, first)
    assert len(list((out / "units").glob("*.json"))) == 4
    assert {(r["problem"], r["problem_spec"]["options"]["path"]) for r in load_results(out)} == {
        ("battles", str(first)), (tagged, str(second))}
    assert verify_folder(out, progress=False).ok


def test_two_problems_of_the_same_name_in_one_command_are_both_run_and_reported(tmp_path, capsys):
    first, second = _battles(tmp_path / "a", FIRST), _battles(tmp_path / "b", SECOND)
    out = tmp_path / "results"
    _run(out, first, second)
    tagged = f"battles@{_digest8(second)}"
    printed = capsys.readouterr().out
    assert "| battles | rucb | 2 |" in printed and f"| {tagged} | rucb | 2 |" in printed
    assert _runs_in_table(out) == {("rucb", label, seed) for label in ("battles", tagged) for seed in "01"}
    records = load_results(out)
    assert len(records) == 4 and len({r["identity"]["problem"]["matrix_sha256"] for r in records}) == 2
    assert verify_folder(out, progress=False).ok


def test_a_problem_named_like_another_is_told_apart_by_its_digest_or_refused(tmp_path):
    from dueling_gym.problems import load_problem

    sushi = save_problem(load_problem("sushi"), tmp_path / "sushi.json")  # a file named like a shipped problem
    spec = SweepSpec(agents=("rucb",), problems=("sushi", f"file:{sushi}"), seeds=(0,), horizon=HORIZON)
    assert [p.label for p in spec.problems] == ["sushi", f"sushi@{_digest8(sushi)}"]
    # The same matrix under the same name in three files: the third cannot be told apart.
    copies = [_battles(tmp_path / name, FIRST) for name in "xyz"]
    with pytest.raises(ValueError, match="same matrix under the same name .* give it once"):
        SweepSpec(agents=("rucb",), problems=tuple(f"file:{path}" for path in copies), seeds=(0,), horizon=HORIZON)
    with pytest.raises(ValueError, match="cannot be labelled 'other'"):
        ProblemSpec("sushi", display_label="other")
    with pytest.raises(ValueError, match="cannot be labelled"):
        ProblemSpec("sushi", display_label="sushi@nothex00")


def test_a_unit_file_name_does_not_depend_on_the_label_a_folder_gives(tmp_path):
    first, second = _battles(tmp_path / "a", FIRST), _battles(tmp_path / "b", SECOND)
    alone = tmp_path / "alone"
    run_sweep(SweepSpec(agents=("rucb",), problems=(f"file:{second}",), seeds=(0,), horizon=HORIZON), alone,
              progress=False)
    together = tmp_path / "together"
    run_sweep(SweepSpec(agents=("rucb",), problems=(f"file:{first}", f"file:{second}"), seeds=(0,), horizon=HORIZON),
              together, progress=False)
    names = {path.name for path in (alone / "units").glob("*.json")}
    assert names < {path.name for path in (together / "units").glob("*.json")}


# --------------------------------------------------------------------------------------------
# An imported agent is identified by all of its user's code
# --------------------------------------------------------------------------------------------

AGENT = '''
import json  # the standard library is not the user's code

import numpy as np  # nor is an installed package
from dueling_gym.agents import DuelingAgent

from .helper import challenger


class Champion(DuelingAgent):
    """The current champion against a challenger the helper picks."""

    def _reset_state(self):
        self.champion = 0

    def act(self):
        return self.champion, challenger(self.rng, self.n_arms, self.champion)

    def observe(self, action, first_won):
        self.champion = action[0] if first_won else action[1]

    def recommend(self):
        from . import tuning  # imported on first use: its code is the agent's all the same
        return tuning.final(self.champion)
'''

HELPER = '''
def challenger(rng, n_arms, champion):
    other = int(rng.integers(n_arms - 1))
    return other + (other >= champion)
'''

CHANGED_HELPER = '''
def challenger(rng, n_arms, champion):
    return (champion + 1) % n_arms  # another rule: other numbers
'''


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package of the user's in the current folder: an agent module and the helper module it imports."""
    name = "lab_" + tmp_path.name.replace("-", "_")
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "agent.py").write_text(textwrap.dedent(AGENT))
    (root / "helper.py").write_text(textwrap.dedent(HELPER))
    (root / "tuning.py").write_text("def final(champion):\n    return champion\n")
    monkeypatch.chdir(tmp_path)
    yield name, root
    for module in [module for module in sys.modules if module == name or module.startswith(name + ".")]:
        sys.modules.pop(module)


def test_the_identity_of_an_imported_agent_holds_every_module_of_the_users_code(package):
    from dueling_gym.agents.external import load_agent_class, source_identity

    name, root = package
    identity = source_identity(load_agent_class(f"{name}.agent:Champion"))
    assert identity["module"] == f"{name}.agent"
    assert sorted(identity["imports"]) == [name, f"{name}.helper", f"{name}.tuning"]  # nothing of numpy's or ours


def test_a_changed_helper_module_makes_new_runs_instead_of_reusing_the_old(package, tmp_path):
    name, root = package
    out = tmp_path / "results"
    argv = [sys.executable, "-m", "dueling_gym.cli", "run", "--agents", f"{name}.agent:Champion", "rucb",
            "--problems", "multisol", "--seeds", "2", "--horizon", "300", "--no-plot", "--no-progress",
            "--out", str(out)]
    first = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert len(list((out / "units").glob("*.json"))) == 4
    again = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert again.returncode == 0 and len(list((out / "units").glob("*.json"))) == 4  # nothing changed: reused
    (root / "helper.py").write_text(textwrap.dedent(CHANGED_HELPER))
    changed = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert changed.returncode == 0, changed.stderr
    units = sorted((out / "units").glob("*.json"))
    assert len(units) == 6  # the imported agent's two runs again, under the new code; rucb's reused
    helpers = {json.loads(path.read_text())["identity"]["agent"].get("source", {}).get("imports", {}).get(
        f"{name}.helper") for path in units if path.name.startswith(name)}
    assert len(helpers) == 2


# --------------------------------------------------------------------------------------------
# verify checks the tables against the unit files
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """A finished sweep with its tables (results.csv, summary.md, summary.csv)."""
    out = tmp_path_factory.mktemp("reported") / "results"
    assert main(["run", "--agents", "rucb", "ccb", "--problems", "multisol", "cyclic4", "--seeds", "2", "--horizon",
                 str(HORIZON), "--no-plot", "--no-progress", "--out", str(out)]) == 0
    return out


def _copy(folder: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(folder, target)
    return target


def _verify(folder: Path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(folder), "--no-progress"])
    return code, capsys.readouterr().out


def test_verify_passes_a_folder_whose_tables_are_its_units(reported, tmp_path, capsys):
    assert _verify(reported, capsys)[0] == 0
    # A sweep run without a report has no summaries; plotted in a notion of choice (the folder
    # records none), the summaries lead with that notion: still what the units give.
    folder = tmp_path / "api"
    run_sweep(SweepSpec(agents=("rucb",), problems=("multisol",), seeds=(0, 1), horizon=HORIZON), folder,
              progress=False)
    assert _verify(folder, capsys)[0] == 0
    assert main(["plot", str(folder), "--notion", "copeland_zoghi"]) == 0
    assert (folder / "summary.md").read_text().startswith("Regret notion: copeland_zoghi")
    assert _verify(folder, capsys)[0] == 0


def test_verify_fails_on_tables_whose_units_were_deleted(reported, tmp_path, capsys):
    folder = _copy(reported, tmp_path)
    for path in sorted((folder / "units").glob("ccb*.json")):
        path.unlink()
    code, printed = _verify(folder, capsys)
    assert code == 1 and "4 of 4 unit files checked, 4 identical" in printed
    assert "table differs: results.csv: 4 runs that no unit file backs (e.g. agent 'ccb'" in printed
    assert "table differs: summary.md: " in printed and "table differs: summary.csv: " in printed


def test_verify_fails_on_an_empty_units_folder(reported, tmp_path, capsys):
    folder = _copy(reported, tmp_path)
    for path in (folder / "units").glob("*.json"):
        path.unlink()
    code, printed = _verify(folder, capsys)
    assert code == 1 and "results.csv: shows 8 runs, and no unit file backs any" in printed
    assert "units: holds no unit file" in printed


@pytest.mark.parametrize("table,edit,expected", [
    ("results.csv", lambda text: text.replace("rucb,multisol,1,", "rucb,multisol,0,", 1),
     "results.csv: 2 runs whose rows differ from their unit files"),
    ("results.csv", lambda text: text + "rucb,multisol,7,200,1.0,1.0,1.0,1.0,1.0,0,1\n",
     "results.csv: 1 run that no unit file backs (e.g. agent 'rucb', problem 'multisol', seed '7')"),
    ("summary.md", lambda text: text.replace("| rucb |", "| ccb |", 1), "summary.md: line "),
    ("summary.csv", lambda text: text.replace(",rucb,", ",best,", 1), "summary.csv: line "),
    ("summary.md", lambda text: text + "\n| extra | row |\n", "summary.md: has 2 lines more"),
])
def test_verify_fails_on_an_edited_table_naming_it(reported, tmp_path, capsys, table, edit, expected):
    folder = _copy(reported, tmp_path)
    path = folder / table
    path.write_text(edit(path.read_text()))
    code, printed = _verify(folder, capsys)
    assert code == 1 and f"table differs: {expected}" in printed
    assert "8 identical when re-played" in printed  # the units themselves are sound


def test_verify_fails_when_results_csv_is_gone_but_its_units_are_there(reported, tmp_path, capsys):
    folder = _copy(reported, tmp_path)
    (folder / "results.csv").unlink()
    code, printed = _verify(folder, capsys)
    assert code == 1 and "results.csv: is missing, though 8 runs have unit files" in printed


# --------------------------------------------------------------------------------------------
# An agent module that cannot be imported: one line, never a traceback
# --------------------------------------------------------------------------------------------

BROKEN_MODULES = {
    "syntax": ("def act(:\n", r"has a syntax error \(.*line 1: .*\)"),
    "raising": ("raise RuntimeError('no accelerator\\nhere')\n",
                "importing module '.*' raised RuntimeError: no accelerator here"),
    "exiting": ("import sys\nsys.exit(3)\n", r"called sys.exit\(3\) while being imported"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN_MODULES))
@pytest.mark.parametrize("command", ["run", "benchmark"])
def test_an_agent_module_that_cannot_be_imported_is_one_line(tmp_path, monkeypatch, capsys, kind, command):
    source, pattern = BROKEN_MODULES[kind]
    module = f"broken_{kind}_{command}_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    if command == "run":
        argv = ["run", "--agents", f"{module}:Agent", "--problems", "multisol", "--seeds", "1", "--horizon", "100",
                "--no-plot", "--no-progress", "--out", str(tmp_path / "out")]
    else:
        argv = ["benchmark", "--agents", f"{module}:Agent", "--quick", "--no-progress", "--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit) as exit_status:
        main(argv)
    error = capsys.readouterr().err
    assert exit_status.value.code == 2
    assert error.count("\n") == 1 and "Traceback" not in error and f"module '{module}'" in error
    import re

    assert re.search(pattern, error), error
    assert not (tmp_path / "out").exists()


def test_plot_says_the_agent_module_cannot_be_imported_not_that_the_folder_is_damaged(tmp_path, monkeypatch, capsys):
    from dueling_gym.agents import external

    module = "vanishing_" + tmp_path.name.replace("-", "_")
    (tmp_path / f"{module}.py").write_text(textwrap.dedent('''
        from dueling_gym.agents import DuelingAgent


        class Agent(DuelingAgent):
            def _reset_state(self):
                pass

            def act(self):
                return 0, 1

            def observe(self, action, first_won):
                pass

            def recommend(self):
                return 0
    '''))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "results"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_sweep(SweepSpec(agents=(f"{module}:Agent",), problems=("multisol",), seeds=(0,), horizon=100), out,
                  progress=False)
    (tmp_path / f"{module}.py").unlink()  # the agent's code is gone: a new process could not import it
    sys.modules.pop(module)
    monkeypatch.setattr(external, "_LOADED", {})
    with pytest.raises(ValueError, match="holds runs of an agent whose module cannot be imported") as error:
        folder_units(out)
    assert "damaged" not in str(error.value)
    with pytest.raises(SystemExit) as exit_status:
        main(["plot", str(out)])
    printed = capsys.readouterr().err
    assert exit_status.value.code == 2 and f"cannot import module '{module}'" in printed and "damaged" not in printed
