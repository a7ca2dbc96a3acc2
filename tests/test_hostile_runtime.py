"""Runs that are killed, interrupted or sabotaged at run time still end in one line and lose nothing.

* Training logs: one row per evaluation (strictly increasing budget column) whatever kills the run
  and however often it resumes, and no temporary file of a killed write is left behind.
* A damaged file of Numba's on-disk cache is discarded and compiled again, with one warning.
* An agent calling ``sys.exit`` fails its unit in one line naming the agent.
* Ctrl-C while the console script is still importing: exit 130, one line.
* An interrupted sweep counts the units whose files are on disk.
"""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from dueling_gym.agents.learned import WEIGHT_NAMES
from dueling_gym.experiments.learning.evolution import EvolutionTrainer, train_evolution

TINY_ES = dict(families=("no_condorcet_winner", "utility_based"), n_arms=4, horizon=40, pairs=2, problems_per_family=2,
               hidden=4, eval_every=2, eval_problems=3, normalise="random", threads=1, progress=False, command="test")
TINY_PPO = dict(n_arms=4, horizon=10, timesteps=160, n_envs=8, n_steps=5, batch_size=40, n_epochs=1, hidden=4,
                eval_every=40, eval_problems=2, progress=False, seed=7, command="test")


def _column(folder: Path) -> list[int]:
    with (folder / "evaluations.csv").open(newline="") as handle:
        return [int(row[0]) for row in list(csv.reader(handle))[1:]]


def _temporaries(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".tmp"))


def _same_policy(first: Path, second: Path) -> bool:
    with np.load(first) as a, np.load(second) as b:
        return all(np.array_equal(a[name], b[name]) for name in WEIGHT_NAMES)


class _Killed(KeyboardInterrupt):
    """Stands in for a kill at a chosen point (nothing after it runs)."""


# --- evolution strategies -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def es_uninterrupted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("es") / "full"
    return train_evolution(folder, generations=6, **TINY_ES)


def test_es_killed_after_a_validation_row_logs_each_generation_once(es_uninterrupted, tmp_path, monkeypatch):
    assert _column(es_uninterrupted.parent) == [0, 2, 4, 6]
    run = tmp_path / "run"
    original = EvolutionTrainer.save_checkpoint

    def killed_at_four(self):
        if self.completed == 4:  # the row of generation 4 is logged, its checkpoint not yet written
            raise _Killed
        original(self)

    monkeypatch.setattr(EvolutionTrainer, "save_checkpoint", killed_at_four)
    for _ in range(3):
        with pytest.raises(_Killed):
            train_evolution(run, generations=6, **TINY_ES)
        assert _column(run) == [0, 2, 4]
    monkeypatch.setattr(EvolutionTrainer, "save_checkpoint", original)
    policy = train_evolution(run, generations=6, **TINY_ES)
    assert _column(run) == [0, 2, 4, 6]
    assert _same_policy(policy, es_uninterrupted)  # bit-identical across the kills
    assert _temporaries(run) == []


_KILL_WHILE_WRITING = """
import os, signal, sys
import numpy as np
from dueling_gym.experiments.learning.evolution import train_evolution

original, calls = np.savez, [0]

def savez(file, *args, **kwargs):
    calls[0] += 1
    if calls[0] == int(sys.argv[2]):
        file.write(b"PK\\x03\\x04 half an archive")
        file.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    return original(file, *args, **kwargs)

np.savez = savez
train_evolution(sys.argv[1], generations=6, **{settings})
"""


def test_es_killed_while_writing_its_checkpoint_resumes_cleanly(es_uninterrupted, tmp_path):
    run = tmp_path / "run"
    script = _KILL_WHILE_WRITING.replace("{settings}", repr(TINY_ES))
    # The second checkpoint (generation 4) is cut short by a real kill: its temporary file stays.
    child = subprocess.run([sys.executable, "-c", script, str(run), "2"], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert _temporaries(run) and _column(run) == [0, 2, 4]
    (run / "notes.tmp").write_text("not the trainer's")  # not a temporary file of the trainer: kept
    policy = train_evolution(run, generations=6, **TINY_ES)
    assert _column(run) == [0, 2, 4, 6]
    assert _temporaries(run) == ["notes.tmp"]
    assert _same_policy(policy, es_uninterrupted)


def test_a_log_damaged_by_an_older_version_is_read_as_one_row_per_evaluation(es_uninterrupted, tmp_path):
    run = tmp_path / "run"
    train_evolution(run, generations=4, **TINY_ES)
    lines = (run / "evaluations.csv").read_text().splitlines()
    # Rows logged twice, a row past the checkpoint and a row cut short, as appending versions left.
    damaged = [lines[0], lines[1], lines[2], lines[2], lines[3], lines[3], "6,1", ""]
    (run / "evaluations.csv").write_text("\n".join(damaged))
    train_evolution(run, generations=6, **TINY_ES)
    assert _column(run) == [0, 2, 4, 6]


# --- PPO (Stable-Baselines3) ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ppo():
    torch = pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    torch.set_num_threads(1)
    from dueling_gym.experiments.learning import training

    return training


def test_ppo_logs_its_last_evaluation_once(ppo, tmp_path):
    ppo.train(tmp_path / "run", **TINY_PPO)
    assert _column(tmp_path / "run") == [40, 80, 120, 160]
    assert _temporaries(tmp_path / "run") == []
    ppo.train(tmp_path / "run", **TINY_PPO)  # finished: nothing to do, nothing logged
    assert _column(tmp_path / "run") == [40, 80, 120, 160]


def test_ppo_killed_anywhere_after_an_evaluation_logs_it_once(ppo, tmp_path, monkeypatch):
    run = tmp_path / "run"
    trainer = ppo.StableBaselinesTrainer
    save_checkpoint, export = trainer.save_checkpoint, trainer.export

    def killed_before_the_last_checkpoint(self):
        if self.completed == 160:
            raise _Killed
        save_checkpoint(self)

    def killed_before_exporting(self):
        raise _Killed

    monkeypatch.setattr(trainer, "save_checkpoint", killed_before_the_last_checkpoint)
    with pytest.raises(_Killed):
        ppo.train(run, **TINY_PPO)
    assert _column(run) == [40, 80, 120, 160]
    monkeypatch.setattr(trainer, "save_checkpoint", save_checkpoint)
    monkeypatch.setattr(trainer, "export", killed_before_exporting)
    for _ in range(2):  # resumed from the last checkpoint, with nothing left to train
        with pytest.raises(_Killed):
            ppo.train(run, **TINY_PPO)
        assert _column(run) == [40, 80, 120, 160]
    monkeypatch.setattr(trainer, "export", export)
    (run / ".checkpoint_160.zip.0123456789ab.tmp").write_bytes(b"PK")  # as a kill mid-write leaves it
    ppo.train(run, **TINY_PPO)
    assert _column(run) == [40, 80, 120, 160]
    assert _temporaries(run) == []


# --- Numba's on-disk cache ------------------------------------------------------------------------

_KERNEL = """
import numba


@numba.njit(cache=True)
def increment(x):
    return x + 1
"""


def _call_kernel(folder: Path, cache: Path, first: str) -> subprocess.CompletedProcess:
    imports = "import dueling_gym, kernel_module" if first == "dueling_gym" else "import numba, dueling_gym, kernel_module"
    code = f"{imports}; print(kernel_module.increment(41))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=folder, timeout=300,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(folder)})


@pytest.mark.parametrize("damage", ["truncated data", "garbage data", "truncated index", "garbage index"])
def test_a_damaged_numba_cache_file_is_discarded_and_compiled_again(tmp_path, damage):
    (tmp_path / "kernel_module.py").write_text(_KERNEL)
    cache = tmp_path / "cache"
    first = _call_kernel(tmp_path, cache, "dueling_gym")
    assert first.returncode == 0 and first.stdout.strip() == "42", first.stderr
    suffix = ".nbc" if "data" in damage else ".nbi"
    (victim,) = cache.rglob(f"*{suffix}")
    content = victim.read_bytes()
    victim.write_bytes(content[: len(content) // 2] if "truncated" in damage else b"\x80\x05garbage" * 7)
    # Numba itself fails on every call.
    broken = subprocess.run([sys.executable, "-c", "import kernel_module; kernel_module.increment(41)"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env={**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(tmp_path)})
    assert broken.returncode != 0
    # With dueling-gym imported (before or after Numba): one warning naming the file, then the result.
    again = _call_kernel(tmp_path, cache, "numba" if "garbage" in damage else "dueling_gym")
    assert again.returncode == 0 and again.stdout.strip() == "42", again.stderr
    warnings = [line for line in again.stderr.splitlines() if "damaged Numba cache file" in line]
    assert len(warnings) == 1 and str(victim) in warnings[0], again.stderr
    # The function was compiled again and cached: the next process loads it without a word.
    last = _call_kernel(tmp_path, cache, "dueling_gym")
    assert last.returncode == 0 and last.stdout.strip() == "42" and "damaged" not in last.stderr, last.stderr


def test_the_cache_guard_does_not_import_numba():
    code = "import sys, dueling_gym; print('numba' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


# --- agents that exit, and interrupts -----------------------------------------------------------

_EXITING_AGENT = '''
from dueling_gym.agents import DuelingAgent


class Quitter(DuelingAgent):
    def _reset_state(self):
        self.t = 0

    def act(self):
        self.t += 1
        if self.t == 5:
            import sys
            sys.exit(3)
        return 0, 1

    def observe(self, action, first_won):
        pass

    def recommend(self):
        return 0
'''


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_agent_calling_sys_exit_fails_its_unit_in_one_line_naming_it(tmp_path, monkeypatch, capsys, jobs):
    from dueling_gym.cli import main

    module = f"quitter_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(_EXITING_AGENT))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(SystemExit) as exit_info:
            main(["run", "--agents", f"{module}:Quitter", "--problems", "cyclic4", "--seeds", "2", "--horizon", "20",
                  "--no-plot", "--no-progress", "--jobs", jobs, "--out", str(tmp_path / "out")])
    finally:
        sys.modules.pop(module, None)
    assert exit_info.value.code == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and f"the agent {module}:Quitter called sys.exit(3)" in lines[0], lines


def test_an_interrupted_sweep_counts_the_unit_files_on_disk(tmp_path, monkeypatch):
    from dueling_gym.experiments.runs import runner
    from dueling_gym.experiments.sweeps.sweep import SweepInterrupted, SweepSpec, run_sweep

    original, calls = runner.run_one, [0]

    def interrupted_after_writing(unit, out_dir=None):
        record = original(unit, out_dir)
        calls[0] += 1
        if calls[0] == 2:  # the second unit's file is written, its record never reported
            raise KeyboardInterrupt
        return record

    monkeypatch.setattr(runner, "run_one", interrupted_after_writing)
    spec = SweepSpec(agents=("random",), problems=("cyclic4",), seeds=(0, 1, 2), horizon=10)
    with pytest.raises(SweepInterrupted) as interrupted:
        run_sweep(spec, tmp_path / "out", progress=False)
    assert len(list((tmp_path / "out" / "units").glob("*.json"))) == 2
    assert (interrupted.value.done, interrupted.value.total) == (2, 3)
    assert "2 of 3 units done" in str(interrupted.value)


def _console_script() -> str | None:
    beside = Path(sys.executable).with_name("dueling-gym")
    return str(beside) if beside.exists() else shutil.which("dueling-gym")


def _bare_interpreter_seconds() -> float:
    """Wall seconds of ``python -c pass``: the interpreter's own start-up (``site`` and whatever the
    environment's ``.pth`` files import), which no code of the package can shorten or guard."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - started)
    return sorted(times)[1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals a child process")
@pytest.mark.skipif(_console_script() is None, reason="the dueling-gym console script is not installed")
def test_ctrl_c_while_the_console_script_starts_is_one_line():
    # Interrupts while the package and its dependencies are imported (before main() runs), and
    # later while the command runs; the command takes many seconds, so it never ends first.
    start_up = 1.5 * _bare_interpreter_seconds()
    for delay in (start_up + 0.02, start_up + 0.06, start_up + 0.12, start_up + 0.4):
        # As from a terminal: a shell that runs the tests in the background has SIGINT ignored,
        # and a child that inherits the ignore rightly keeps it.
        process = subprocess.Popen([_console_script(), "demo", "--horizon", "100000000"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            time.sleep(delay)
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            pytest.fail(f"the interrupt at {delay:.3f} s was lost; stdout {out[-300:]!r}, stderr {err[-2000:]!r}")
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == 130, (delay, err)
        assert err.strip() == "dueling-gym: interrupted", (delay, err)


def test_an_agent_that_exits_in_its_constructor_is_one_line(tmp_path):
    (tmp_path / "exits_when_built.py").write_text(
        "from dueling_gym.agents.base import DuelingAgent\n"
        "class Quitter(DuelingAgent):\n"
        "    def __init__(self, n_arms, seed=None):\n"
        "        raise SystemExit(4)\n"
        "    def _reset_state(self):\n        pass\n"
        "    def act(self):\n        return 0, 0\n"
        "    def observe(self, action, first_won):\n        pass\n"
        "    def recommend(self):\n        return 0\n")
    completed = subprocess.run(
        [sys.executable, "-m", "dueling_gym.cli", "run", "--agents", "exits_when_built:Quitter", "--problems", "sushi",
         "--seeds", "1", "--horizon", "100", "--out", str(tmp_path / "out")],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert completed.returncode == 2, completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and "called sys.exit(4) while it was built" in lines[0], completed.stderr
