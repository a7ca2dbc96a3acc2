"""The tutorials print an interval beside every mean over runs, and none (n/a) for a single run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

TUTORIALS = Path(__file__).resolve().parent.parent / "docs" / "tutorials"


def _compare(tmp_path, n_runs: int, horizon: int) -> str:
    """The output of own_agent.compare, in a fresh interpreter (importing the module registers its agent)."""
    shutil.copy(TUTORIALS / "own_agent.py", tmp_path / "own_agent_tutorial.py")
    completed = subprocess.run(
        [sys.executable, "-c", f"import own_agent_tutorial as m\nm.compare(n_runs={n_runs}, horizon={horizon})"],
        check=False, capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env=dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"))
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


def test_the_own_agent_comparison_prints_student_t_intervals(tmp_path):
    out = _compare(tmp_path, n_runs=4, horizon=1200)
    assert "95% Student's t interval of the mean" in out
    rows = [line for line in out.splitlines() if line.startswith(("explore_commit", "rucb"))]
    assert len(rows) == 2
    for row in rows:  # every checkpoint: mean [low, high]
        assert len(re.findall(r"-?\d+ \[\s*-?\d+,\s*-?\d+\]", row)) == 3, row
    growth = [line for line in out.splitlines() if "committed to a wrong arm" in line]
    assert all(re.search(r"\d\.\d{3} ± (\d\.\d{3} \(95% t, \d+ runs\)|n/a \(one run\))", line) for line in growth)


def test_the_own_agent_comparison_of_one_run_prints_no_interval(tmp_path):
    out = _compare(tmp_path, n_runs=1, horizon=600)
    rows = [line for line in out.splitlines() if line.startswith(("explore_commit", "rucb"))]
    assert len(rows) == 2 and all(row.count("[n/a (one run)]") == 3 for row in rows), out
    assert "± 0.0" not in out and "[     0,      0]" not in out
