"""The dueling-gym command line."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from dueling_gym.cli import main


def test_problems_table(capsys):
    assert main(["problems"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("| ")]
    assert len(lines) == 8  # header + 7 problems
    multisol = next(line for line in lines if line.startswith("| multisol"))
    cells = [c.strip() for c in multisol.strip("|").split("|")]
    assert cells[1:6] == ["5", "none", "0,1,2", "3", "1"]
    sushi = next(line for line in lines if line.startswith("| sushi"))
    assert "142.61" in sushi and "143.37" in sushi  # LB and ECWB constants


def test_agents_table_shows_required_hyperparameters_and_plain_descriptions(capsys):
    assert main(["agents", "--wide"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    assert "horizon (required)" in rows["rmed2fh"] and "alpha=3.0" in rows["rmed2fh"]
    assert "horizon (required)" in rows["interleaved_filtering"]
    assert "SAVAGE with variant=\"borda\"" in rows["savage_borda"]  # reST roles and backquotes stripped
    for banned in ("inspect._empty", ":class:", "``", "reconstructed"):
        assert banned not in out, banned
    assert not re.search(r"\bspec\b", out)  # descriptions cite papers


def test_the_agents_table_fits_the_terminal_and_takes_the_kinds_it_prints(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["agents"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert max(len(line) for line in lines) <= 100 and lines[0].split("|")[4].strip() == "description"
    assert main(["agents", "--kind", "identification"]) == 0
    kinds = {line.split("|")[2].strip() for line in capsys.readouterr().out.splitlines()[2:] if line.startswith("|")}
    assert kinds == {"identification"}
    assert main(["agents", "--kind", "regret-minimiser"]) == 0
    assert "savage " in capsys.readouterr().out


def test_demo_prints_linear_random_regret(capsys):
    assert main(["demo", "--horizon", "2000", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    final = [line for line in out.splitlines() if line.strip().startswith("2000")][0]
    regret = float(final.split()[1])
    assert 400 < regret < 600  # 0.25 per duel on MultiSol


def test_bad_arguments_give_one_line_errors(capsys):
    with pytest.raises(SystemExit) as excinfo:
        main(["demo", "--problem", "nope"])
    assert excinfo.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice" in err and "sushi" in err
    with pytest.raises(SystemExit):
        main(["demo", "--horizon", "-3"])
    assert "positive integer" in capsys.readouterr().err


def test_console_script_is_installed():
    result = subprocess.run([sys.executable, "-m", "dueling_gym.cli", "problems", "--no-bounds"],
                            capture_output=True, text=True, check=True)
    assert "mslr5-noncondorcet" in result.stdout
