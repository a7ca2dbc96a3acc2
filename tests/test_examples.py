"""Smoke tests: every example script runs with tiny settings and prints what it should."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

CASES = {
    "gym_loop.py": (["--quick", "--horizon", "200"], ["Gymnasium loop regret", "identical"]),
    "vector_env.py": (["--quick", "--num-envs", "8", "--horizon", "100"], ["random:", "explore-then-commit:"]),
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
