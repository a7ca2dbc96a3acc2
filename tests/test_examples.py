"""Smoke tests: every tutorial script that takes options runs with tiny settings and prints what it should.

The scripts live beside their pages in ``docs/tutorials`` (the build runs the short ones with
their defaults); these runs cover their options and the long scripts the build does not run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = ROOT / "docs" / "tutorials"

CASES = {
    "gym_loop.py": (["--agent", "rucb", "--problem", "mslr5-condorcet", "--horizon", "200"],
                    ["Gymnasium loop: regret", "identical: True"]),
    "vector_env.py": (["--num-envs", "8", "--horizon", "100"],
                      ["random:", "explore-then-commit:", "(95% t)", "Student's t with n - 1 degrees of freedom"]),
    "reductions.py": (["--problem", "multisol", "--horizon", "500"], ["KLUCB(n_arms=15", "t =    500", "Copeland regret"]),
    "train_ppo.py": (
        ["--quick", "--timesteps", "256", "--horizon", "30", "--problems", "2", "--n-envs", "2",
         "--baselines", "random,rucb,not_an_agent"],
        ["trained in", "regret at T", "| ppo_sampled |", "| ppo_greedy |", "| random |", "| rucb |",
         "note: agent 'not_an_agent' is not available"],
    ),
}


@pytest.mark.parametrize("script", sorted(CASES))
def test_tutorial_script_runs(script):
    if script == "train_ppo.py":
        pytest.importorskip("stable_baselines3")
    arguments, expected = CASES[script]
    environment = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    completed = subprocess.run(
        [sys.executable, str(TUTORIALS / script), *arguments],
        capture_output=True, text=True, timeout=300, env=environment, cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    for text in expected:
        assert text in completed.stdout, completed.stdout[-3000:]


def _run(script, arguments):
    environment = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    completed = subprocess.run([sys.executable, str(TUTORIALS / script), *arguments], check=False, capture_output=True,
                               text=True, timeout=300, env=environment, cwd=ROOT)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


def test_vector_env_prints_an_interval_beside_every_mean_and_none_for_one_run():
    out = _run("vector_env.py", ["--num-envs", "8", "--horizon", "100"])
    results = [line for line in out.splitlines() if "mean Copeland regret at T" in line]
    assert len(results) == 2 and all(re.search(r"\d ± \d+\.\d \(95% t\)", line) for line in results), out
    single = _run("vector_env.py", ["--num-envs", "1", "--horizon", "50"])
    results = [line for line in single.splitlines() if "mean Copeland regret at T" in line]
    assert len(results) == 2 and all("± n/a (one run)" in line for line in results), single
    assert "± 0.0" not in single
