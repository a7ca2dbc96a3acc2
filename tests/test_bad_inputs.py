"""Inputs that used to end in a raw library error now end in one line naming the argument and its range."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import dueling_gym  # noqa: F401 - registers the environments
from dueling_gym.agents import make_agent
from dueling_gym.cli import main
from dueling_gym.experiments.simulate import simulate
from dueling_gym.experiments.sweeps.sweep import SweepSpec
from dueling_gym.problems import PreferenceMatrix, five_edge_example, load_problem
from dueling_gym.problems.generators import GENERATORS


def _one_line_error(capsys, argv: list[str], pattern: str, code: int = 2) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == code
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "Traceback" not in error and pattern in error, error


@pytest.mark.parametrize("horizon", ["100000000000000000000", "9223372036854775807", "1000000000001"])
def test_horizons_beyond_the_limit(capsys, horizon, tmp_path):
    _one_line_error(capsys, ["run", "--agents", "rucb", "--problems", "cyclic4", "--seeds", "1", "--horizon", horizon,
                             "--out", str(tmp_path / "x")], "horizon must be at most 1000000000000")
    with pytest.raises(ValueError, match="horizon must be at most 1000000000000"):
        SweepSpec(agents=("rucb",), problems=("cyclic4",), seeds=(0,), horizon=int(horizon))
    with pytest.raises(ValueError, match="horizon must be at most"):
        simulate(make_agent("rucb", 4), load_problem("cyclic4"), int(horizon))


@pytest.mark.parametrize("seed,error,pattern", [(-1, ValueError, "seed must be at least 0"),
                                                ("7", TypeError, "seed must be an integer"),
                                                (1.5, TypeError, "seed must be an integer"),
                                                (True, TypeError, "seed must be an integer")])
def test_agent_seeds(seed, error, pattern):
    with pytest.raises(error, match=pattern):
        make_agent("rucb", 4, seed=seed)
    agent = make_agent("rucb", 4, seed=0)
    with pytest.raises(error, match=pattern):
        agent.reset(seed=seed)


def test_cli_seeds_and_counts(capsys, tmp_path):
    _one_line_error(capsys, ["demo", "--seed", "-1"], "expected a non-negative integer, got -1")
    # Refused by the parser, before any training starts.
    _one_line_error(capsys, ["train", "es", "--report-problems", "-5", "--out", str(tmp_path / "es")],
                    "expected a non-negative integer, got -5")
    assert not (tmp_path / "es").exists()


def test_problems_and_agents_the_machine_cannot_hold(monkeypatch):
    from dueling_gym import validation

    with pytest.raises(ValueError, match=r"n_arms=100000 needs about 596\.0 GiB"):
        GENERATORS["no_condorcet_winner"](100_000, np.random.default_rng(0))
    monkeypatch.setattr(validation, "available_memory", lambda: 2**30)  # a 1 GiB machine
    with pytest.raises(ValueError, match=r"agent 'rucb' with n_arms=10000 needs about 3\.0 GiB"):
        make_agent("rucb", 10_000)


def test_output_folders_and_manifests(capsys, tmp_path):
    (tmp_path / "file").write_text("")
    _one_line_error(capsys, ["run", "--agents", "rucb", "--problems", "cyclic4", "--seeds", "1", "--horizon", "10",
                             "--out", str(tmp_path / "file" / "sub")], "its parent")
    for manifest, missing in (({"format": 3}, "no 'horizon'"), ({"format": 3, "horizon": "10"}, "'horizon' is not")):
        (tmp_path / "damaged").mkdir(exist_ok=True)
        (tmp_path / "damaged" / "manifest.json").write_text(json.dumps(manifest))
        for argv in (["plot", str(tmp_path / "damaged")],
                     ["run", "--agents", "rucb", "--problems", "cyclic4", "--seeds", "1", "--horizon", "10", "--out",
                      str(tmp_path / "damaged")]):
            _one_line_error(capsys, argv, f"manifest.json is damaged ({missing}")


def test_matrices():
    with pytest.raises(ValueError, match="rows have different lengths"):
        PreferenceMatrix([[0.5, 0.5], [0.5]])
    with pytest.raises(TypeError, match="must be numeric"):
        PreferenceMatrix.from_upper_triangle([["0.5", "0.3"], ["0.7", "0.5"]])
    with pytest.raises(TypeError, match="must be numeric"):
        PreferenceMatrix([["0.5", "0.3"], ["0.7", "0.5"]])


@pytest.mark.parametrize("make", [
    lambda: gym.make("DuelingBandit-v0", preferences="cyclic4"),
    lambda: gym.make("CopelandDuel-v0", preferences="cyclic4"),
    lambda: gym.make("CombinatorialDuel-v0", problem=five_edge_example()),
])
def test_reset_options_are_not_silently_ignored(make):
    env = make()
    env.reset(seed=0, options=None)
    env.reset(options={})
    with pytest.raises(ValueError, match=r"takes no reset options, got \['junk'\]"):
        env.reset(options={"junk": 1})
    with pytest.raises(TypeError, match="options must be None or a dict, got list"):
        env.reset(options=[1])


def test_ctrl_c_while_starting_is_one_line(capsys, monkeypatch):
    from dueling_gym import cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert main(["problems"]) == 130
    assert capsys.readouterr().err == "dueling-gym: interrupted\n"


def test_a_folder_of_too_many_runs_is_refused_before_anything_is_read(capsys, tmp_path):
    from dueling_gym.experiments.sweeps.sweep import MAX_RUNS, run_sweep

    with pytest.raises(ValueError, match=f"more than the {MAX_RUNS} one results folder holds"):
        SweepSpec(agents=("rucb",), problems=("cyclic4",), seeds=range(MAX_RUNS + 1), horizon=10)
    out = tmp_path / "sweep"
    run_sweep(SweepSpec(agents=("rucb",), problems=("cyclic4",), seeds=(0,), horizon=10), out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["requests"][0]["seeds"] = list(range(10**6))  # edited by hand
    (out / "manifest.json").write_text(json.dumps(manifest))
    _one_line_error(capsys, ["plot", str(out)], "more than the 200000 one results folder holds")


def test_a_missing_plot_extra_is_one_line_before_any_work(capsys, monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the plot extra were not installed
    for argv in (["run", "--agents", "rucb", "--problems", "cyclic4", "--seeds", "1", "--horizon", "10", "--out",
                  str(tmp_path / "run")],
                 ["reproduce", "chen2020-cpe-db", "--quick", "--out", str(tmp_path / "cpe")],
                 ["reproduce", "learned-vs-classic", "--quick", "--out", str(tmp_path / "eval")]):
        _one_line_error(capsys, argv, "needs the plot extra: pip install 'dueling-gym[plot]' (or pass --no-plot)")
        assert not (tmp_path / argv[-1]).exists()
    assert main(["run", "--agents", "rucb", "--problems", "cyclic4", "--seeds", "1", "--horizon", "10", "--no-plot",
                 "--no-progress", "--out", str(tmp_path / "run")]) == 0
