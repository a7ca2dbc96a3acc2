"""Interrupted sweeps stop quickly, leave no process behind and resume to the same results."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process-group checks use /proc")

# Units long enough (~0.2 s each) that the sweep is still running when it is interrupted.
ARGUMENTS = ["--agents", "rucb", "--problems", "sushi", "--seeds", "10", "--horizon", "100000", "--no-plot",
             "--no-progress", "--jobs", "2"]


def _start(out: Path) -> subprocess.Popen:
    # A new session stands in for the terminal: Ctrl-C reaches every process of its group.
    return subprocess.Popen([sys.executable, "-m", "dueling_gym.cli", "run", *ARGUMENTS, "--out", str(out)],
                            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _wait_for_units(out: Path, process: subprocess.Popen, count: int) -> None:
    deadline = time.monotonic() + 120
    while len(list((out / "units").glob("*.json"))) < count if (out / "units").exists() else True:
        if process.poll() is not None:
            pytest.fail(f"the sweep ended before it was interrupted: {process.communicate()}")
        if time.monotonic() > deadline:
            pytest.fail("no unit finished in time")
        time.sleep(0.05)


def _alive(pids: list[str]) -> list[str]:
    alive = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if state != "Z":
            alive.append(pid)
    return alive


def _group(pgid: int) -> list[str]:
    return subprocess.run(["pgrep", "-g", str(pgid)], capture_output=True, text=True).stdout.split()


def _wait_until_gone(pids: list[str], seconds: float) -> list[str]:
    deadline = time.monotonic() + seconds
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return _alive(pids)


def test_ctrl_c_stops_quickly_and_a_rerun_gives_the_uninterrupted_table(tmp_path):
    out = tmp_path / "interrupted"
    process = _start(out)
    try:
        _wait_for_units(out, process, 2)
        members = _group(process.pid)
        started = time.monotonic()
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=15)
        elapsed = time.monotonic() - started
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert elapsed < 15
    assert process.returncode == 130
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "units done" in lines[0] and "run the same command again to resume" in lines[0]
    assert _wait_until_gone(members, 5) == []
    assert not (out / "results.csv").exists()  # no partial table

    resumed = subprocess.run([sys.executable, "-m", "dueling_gym.cli", "run", *ARGUMENTS, "--out", str(out)],
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert not list((out / "units").glob(".*.tmp"))
    straight = tmp_path / "straight"
    subprocess.run([sys.executable, "-m", "dueling_gym.cli", "run", *ARGUMENTS, "--jobs", "1", "--out", str(straight)],
                   capture_output=True, text=True, timeout=300, check=True)
    assert (out / "results.csv").read_text() == (straight / "results.csv").read_text()


def test_workers_exit_when_the_parent_is_killed(tmp_path):
    out = tmp_path / "orphaned"
    process = _start(out)
    try:
        _wait_for_units(out, process, 1)
        workers = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
        assert workers
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        assert _wait_until_gone(workers, 5) == []
        finished = len(list((out / "units").glob("*.json")))
        time.sleep(1.0)
        assert len(list((out / "units").glob("*.json"))) == finished  # nobody writes units any more
    finally:
        for pid in _group(process.pid):
            os.kill(int(pid), signal.SIGKILL)


def test_an_unreachable_ray_cluster_fails_within_the_time_limit(tmp_path):
    pytest.importorskip("ray")
    from dueling_gym.experiments.runs.backends import connect_ray

    started = time.monotonic()
    with pytest.raises(ConnectionError, match="could not connect to Ray"):
        connect_ray("10.255.255.1:6379", 1, timeout=3.0)
    assert time.monotonic() - started < 15
