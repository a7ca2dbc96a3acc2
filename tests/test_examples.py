"""Smoke tests: every example script runs with tiny settings and prints what it should."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

CASES = {
    "gym_loop.py": (["--quick", "--horizon", "200"], ["Gymnasium loop regret", "identical"]),
    "vector_env.py": (["--quick", "--num-envs", "8", "--horizon", "100"],
                      ["random:", "explore-then-commit:", "(95% t)", "Student's t with n - 1 degrees of freedom"]),
    "reduction_kl_ucb.py": (["--quick", "--horizon", "500"], ["KLUCB(n_arms=15", "t=    500", "Copeland regret"]),
    "train_ppo.py": (
        ["--quick", "--timesteps", "256", "--horizon", "30", "--problems", "2", "--n-envs", "2",
         "--baselines", "random,rucb,not_an_agent"],
        ["trained in", "regret at T", "| ppo_sampled |", "| ppo_greedy |", "| random |", "| rucb |",
         "note: agent 'not_an_agent' is not available"],
    ),
}


@pytest.mark.parametrize("script", sorted(CASES))
def test_example_runs(script):
    if script == "train_ppo.py":
        pytest.importorskip("stable_baselines3")
    arguments, expected = CASES[script]
    environment = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *arguments],
        capture_output=True, text=True, timeout=300, env=environment, cwd=EXAMPLES.parent,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    for text in expected:
        assert text in completed.stdout, completed.stdout[-3000:]


def _run(script, arguments):
    environment = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    completed = subprocess.run([sys.executable, str(EXAMPLES / script), *arguments], check=False, capture_output=True,
                               text=True, timeout=300, env=environment, cwd=EXAMPLES.parent)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


def test_vector_env_prints_an_interval_beside_every_mean_and_none_for_one_run():
    out = _run("vector_env.py", ["--quick", "--num-envs", "8", "--horizon", "100"])
    results = [line for line in out.splitlines() if "mean Copeland regret at T" in line]
    assert len(results) == 2 and all(re.search(r"\d ± \d+\.\d \(95% t\)", line) for line in results), out
    single = _run("vector_env.py", ["--quick", "--num-envs", "1", "--horizon", "50"])
    results = [line for line in single.splitlines() if "mean Copeland regret at T" in line]
    assert len(results) == 2 and all("± n/a (one run)" in line for line in results), single
    assert "± 0.0" not in single
