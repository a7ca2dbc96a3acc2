"""Agents imported by path (``package.module:ClassName``) run beside the registered ones."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dueling_gym.agents import make_agent
from dueling_gym.cli import main
from dueling_gym.experiments.simulate import simulate
from dueling_gym.experiments.sweeps.sweep import SweepSpec, load_results, run_sweep
from dueling_gym.problems import load_problem

SUBCLASS = '''
import numpy as np
from dueling_gym.agents import DuelingAgent


class StayWithTheWinner(DuelingAgent):
    """Duels the current champion against a random challenger; the winner becomes champion."""

    def __init__(self, n_arms, *, patience: float = 1.0, seed=None):
        self.patience = patience
        super().__init__(n_arms, seed=seed)

    def _reset_state(self):
        self.champion = 0

    def act(self):
        challenger = int(self.rng.integers(self.n_arms - 1))
        return self.champion, challenger + (challenger >= self.champion)

    def observe(self, action, first_won):
        self.champion = action[0] if first_won else action[1]

    def recommend(self):
        return self.champion
'''

DUCK_TYPED = '''
import numpy as np


class Uniform:
    """Not a DuelingAgent: the same API, nothing more."""

    def __init__(self, n_arms, *, favourite: int = 0, seed=None):
        self.n_arms, self.favourite = n_arms, favourite
        self.rng = np.random.default_rng(seed)

    def reset(self, *, seed=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self):
        first, second = self.rng.integers(self.n_arms, size=2)
        return int(first), int(second)

    def observe(self, action, first_won):
        pass

    def recommend(self):
        return self.favourite
'''


@pytest.fixture
def modules(tmp_path, monkeypatch):
    """Two agent modules in the current folder, with names of their own for each test."""
    suffix = tmp_path.name.replace("-", "_")
    (tmp_path / f"mine_{suffix}.py").write_text(textwrap.dedent(SUBCLASS))
    (tmp_path / f"duck_{suffix}.py").write_text(textwrap.dedent(DUCK_TYPED))
    monkeypatch.chdir(tmp_path)
    yield f"mine_{suffix}:StayWithTheWinner", f"duck_{suffix}:Uniform"
    for name in (f"mine_{suffix}", f"duck_{suffix}"):
        sys.modules.pop(name, None)


def test_make_agent_and_simulate_accept_an_import_path(modules):
    mine, duck = modules
    problem = load_problem("multisol")
    agent = make_agent(mine, problem.n_arms, seed=0, patience=2)
    assert agent.patience == 2
    first = simulate(agent, problem, 500, seed=3)
    again = simulate(make_agent(mine, problem.n_arms, seed=0, patience=2), problem, 500, seed=3)
    np.testing.assert_array_equal(first.cumulative_regret["copeland_komiyama"], again.cumulative_regret["copeland_komiyama"])
    wrapped = make_agent(duck, problem.n_arms, seed=0, favourite=2)
    assert wrapped.recommend() == 2 and wrapped.hyperparameters == {"favourite": 2}
    simulate(wrapped, problem, 200, seed=1)
    with pytest.raises(TypeError, match="does not accept"):
        make_agent(duck, problem.n_arms, bogus=1)


def test_a_wrapped_agent_is_checked_like_a_library_agent(modules):
    _, duck = modules
    agent = make_agent(duck, 4, seed=0, favourite=9)
    with pytest.raises(ValueError, match="recommendation"):
        agent.recommend()


@pytest.mark.parametrize("path,error,pattern", [
    ("no_such_module_xyz:Agent", ValueError, "cannot import module 'no_such_module_xyz'"),
    ("json:NoSuchClass", ValueError, "has no class 'NoSuchClass'"),
    ("json:JSONDecoder", TypeError, "must subclass dueling_gym.agents.DuelingAgent"),
    ("not a module:Agent", ValueError, "is not a module path"),
])
def test_bad_import_paths_are_one_clear_error(path, error, pattern):
    with pytest.raises(error, match=pattern):
        make_agent(path, 4)


def test_a_sweep_runs_them_beside_the_baselines_and_notices_edited_code(modules, tmp_path, capsys):
    mine, duck = modules
    out = tmp_path / "sweep"
    argv = ["run", "--agents", f"{mine}:patience=2", duck, "rucb", "--problems", "multisol", "--seeds", "2",
            "--horizon", "300", "--no-plot", "--no-progress", "--jobs", "2", "--out", str(out)]
    assert main(argv) == 0
    assert f"{mine}:patience=2" in capsys.readouterr().out
    records = load_results(out)
    mine_record = next(r for r in records if r["agent_name"] == mine)
    assert mine_record["identity"]["agent"]["source"]["source_sha256"]
    assert mine_record["identity"]["agent"]["hyperparameters"] == {"patience": 2.0}
    assert main(["verify", str(out), "--no-progress"]) == 0
    # In this process the module's code is the one imported: nothing new runs.
    spec = SweepSpec(agents=(f"{mine}:patience=2", duck, "rucb"), problems=("multisol",), seeds=(0, 1), horizon=300)
    module_file = tmp_path / f"{mine.partition(':')[0]}.py"
    module_file.write_text(module_file.read_text() + "\n# a change\n")
    run_sweep(spec, out, progress=False)
    assert len(list((out / "units").glob("*.json"))) == 6
    # A new process imports the edited module: new runs of that agent, and only of it.
    completed = subprocess.run([sys.executable, "-m", "dueling_gym.cli", *argv], capture_output=True, text=True,
                               cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert len(list((out / "units").glob("*.json"))) == 8
    manifest = json.loads((out / "manifest.json").read_text())
    assert [agent["name"] for agent in manifest["agents"]] == [mine, duck, "rucb"]


def test_benchmark_writes_a_report_card_ranking_the_agent_per_problem(modules, tmp_path, capsys):
    mine, _ = modules
    out = tmp_path / "bench"
    assert main(["benchmark", "--agents", mine, "--baselines", "rucb", "ccb", "--quick", "--out", str(out),
                 "--no-progress", "--jobs", "2"]) == 0
    report = (out / "report.md").read_text()
    assert report.startswith(f"# Benchmark: {mine}") and "Student's t" in report
    rows = [line for line in report.splitlines() if line.startswith(f"| sushi | {mine} |")]
    assert len(rows) == 2  # both horizons
    assert all(1 <= int(row.split("|")[4]) <= 3 for row in rows)
    assert "## Mean rank over the suite" in report and (out / "regret.png").exists()
    assert (out / "short" / "manifest.json").exists() and (out / "long" / "manifest.json").exists()
    with pytest.raises(SystemExit):
        main(["benchmark", "--agents", "no_such_module_q:X", "--quick", "--out", str(tmp_path / "x")])
    assert "cannot import module" in capsys.readouterr().err
