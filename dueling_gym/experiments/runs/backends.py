"""Running units: in this process, in a local process pool, or on Ray.

Interrupts and dying parents are handled so that no work outlives the sweep:

* Ctrl-C stops a sweep within seconds: queued units are cancelled, running workers are
  terminated (a unit's file is written atomically, so a killed unit leaves no final file), and
  :class:`~dueling_gym.experiments.runs.backends.SweepInterrupted` reports how many units are done.
* Workers ignore SIGINT (only the parent decides) and exit as soon as their parent dies: on
  Linux the kernel kills them (``PR_SET_PDEATHSIG`` through ``prctl``, where ``ctypes`` and
  ``prctl`` can be reached); everywhere a watchdog thread notices that the parent pid changed
  or that the parent's process sentinel closed (Windows keeps a dead parent's pid).
* Workers are forked on Linux and spawned elsewhere, or wherever ``fork`` is not offered.
* Connecting to a Ray cluster is bounded in time.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any, Callable, Sequence

from dueling_gym.interrupts import acknowledge_interrupt

__all__ = ["SweepInterrupted", "UnitFailed", "run_serial", "run_pool", "run_ray", "connect_ray", "progress_bar",
           "RAY_CONNECT_TIMEOUT"]

#: Seconds allowed for connecting to a Ray cluster.
RAY_CONNECT_TIMEOUT = 30.0
#: Seconds between a worker's checks that its parent is alive.
_WATCHDOG_PERIOD = 0.5


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by Ctrl-C; finished units are kept and a re-run resumes."""

    def __init__(self, done: int, total: int, out_dir: str):
        super().__init__(done, total, out_dir)
        self.done, self.total, self.out_dir = done, total, out_dir

    def __str__(self) -> str:
        if not self.out_dir:  # a study run without a folder keeps nothing
            return f"interrupted: {self.done} of {self.total} units were done (nothing was saved)"
        return (f"interrupted: {self.done} of {self.total} units done in {self.out_dir}; "
                "run the same command again to resume")


class UnitFailed(RuntimeError):
    """A unit raised an error; finished units are kept."""


def _set_parent_death_signal() -> bool:
    """Ask the kernel to kill this process when its parent dies; whether that was armed.

    Only Linux has ``prctl(PR_SET_PDEATHSIG)``.  Where it is missing (macOS, Windows, a Python
    without ``ctypes``, a libc without ``prctl``) nothing is armed and the watchdog thread of
    ``_worker_init`` is what ends an orphaned worker, within ``_WATCHDOG_PERIOD``.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (ImportError, OSError, AttributeError):  # no ctypes, no libc, or no prctl: the watchdog suffices
        return False
    pr_set_pdeathsig = 1
    return prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0) == 0


def _parent_gone(parent_pid: int, parent: Any) -> bool:
    """Whether the parent process has died.

    On POSIX an orphan is re-parented, so its parent pid changes.  On Windows a process keeps
    its dead parent's pid, so the parent's sentinel (``multiprocessing.parent_process()``,
    which closes when the parent exits) is asked too.
    """
    if os.getppid() != parent_pid:
        return True
    return parent is not None and not parent.is_alive()


def _watch_parent(parent_pid: int, parent: Any = None) -> None:
    while True:
        if _parent_gone(parent_pid, parent):
            os._exit(1)
        time.sleep(_WATCHDOG_PERIOD)


def _parent_sentinel() -> Any:
    """The parent's process handle where the parent pid cannot tell its death (Windows), else None."""
    if os.name != "nt":
        return None
    import multiprocessing

    return multiprocessing.parent_process()


def _worker_init(parent_pid: int) -> None:
    """Initializer of pool workers: ignore Ctrl-C, die with the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _set_parent_death_signal()
    parent = _parent_sentinel()
    if _parent_gone(parent_pid, parent):  # the parent died before the death signal was armed
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent_pid, parent), daemon=True, name="parent-watchdog").start()


def run_serial(tasks: Sequence[Any], run: Callable[[Any], Any], on_done: Callable[[Any, Any], None],
               describe: Callable[[Any], str]) -> None:
    """Run tasks one after the other in this process; ``on_done(task, result)`` after each."""
    for task in tasks:
        try:
            result = run(task)
        except UnitFailed:
            raise
        except Exception as error:
            raise UnitFailed(f"unit {describe(task)} failed: {type(error).__name__}: {error}") from error
        on_done(task, result)


def _stop(processes: Sequence[Any]) -> None:
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + 3.0
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join(1.0)


def progress_bar(**options: Any) -> Any:
    """A tqdm progress bar that starts no monitor thread.

    The local pool forks its workers (see :func:`run_pool`), and a process should not fork while
    it runs other threads; tqdm's monitor is a thread.
    """
    from tqdm.auto import tqdm

    class Bar(tqdm):  # type: ignore[misc,valid-type]
        monitor_interval = 0

    return Bar(**options)


def _start_method() -> str:
    """How pool workers start: ``fork`` on Linux, ``spawn`` elsewhere or where ``fork`` is absent.

    A forked worker inherits the parent's imports and the compiled code it has loaded, so it
    starts in milliseconds; a spawned one imports everything and loads Numba's target again
    (about 1.5 s of CPU per worker, which is most of a short sweep's cost on many cores).
    Forking is safe here: the library runs no threads of its own in the parent (the progress
    bar has no monitor thread) and never uses Numba's parallel threading layer.  Elsewhere
    (macOS, Windows) forking is unsafe or absent, so workers are spawned.  A unit's result
    does not depend on how its worker started: it is a function of the unit alone.
    """
    import multiprocessing

    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return "fork"
    return "spawn"


def run_pool(tasks: Sequence[Any], run: Callable[[Any], Any], on_done: Callable[[Any, Any], None], jobs: int,
             describe: Callable[[Any], str]) -> None:
    """Run tasks in ``jobs`` worker processes; ``on_done(task, result)`` as each finishes.

    The workers start once and run every task they are given (they stay warm: imports and
    compiled code are loaded once per worker, not once per task).

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C, after cancelling queued tasks and terminating the workers.
    UnitFailed
        When a task raised; queued tasks are cancelled and the workers terminated.
    """
    import multiprocessing

    context = multiprocessing.get_context(_start_method())
    before = {process.pid for process in multiprocessing.active_children()}
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_worker_init,
                               initargs=(os.getpid(),))
    workers: list[Any] = []
    finished_cleanly = False
    try:
        # Workers are spawned by the first submits; they start with SIGINT ignored so a Ctrl-C
        # during their start-up cannot print a traceback from them.
        in_main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if in_main_thread else None
        try:
            futures = {pool.submit(run, task): task for task in tasks}
        finally:
            if in_main_thread:
                signal.signal(signal.SIGINT, previous)
        workers = [p for p in multiprocessing.active_children() if p.pid not in before]
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in done:
                error = future.exception()
                if isinstance(error, UnitFailed):
                    raise error
                if error is not None:
                    raise UnitFailed(f"unit {describe(futures[future])} failed: {type(error).__name__}: {error}") from error
                on_done(futures[future], future.result())
        finished_cleanly = True
    finally:
        if finished_cleanly:
            pool.shutdown(wait=True)
        else:
            pool.shutdown(wait=False, cancel_futures=True)
            _stop(workers or [p for p in multiprocessing.active_children() if p.pid not in before])


def connect_ray(address: str | None, jobs: int, timeout: float = RAY_CONNECT_TIMEOUT) -> bool:
    """Initialise Ray (a local instance, or the cluster at ``address``) within ``timeout`` seconds.

    Returns whether Ray was started here (and should be shut down afterwards).

    Raises
    ------
    ImportError
        Without the ``ray`` extra.
    ConnectionError
        When the cluster cannot be reached in time.
    """
    try:
        import ray
    except ImportError as error:  # pragma: no cover - depends on the optional extra
        raise ImportError("the Ray backend needs the 'ray' extra: pip install 'dueling-gym[ray]'") from error
    if ray.is_initialized():
        return False
    if address not in (None, "auto", "local") and ":" in address and "://" not in address:
        _check_reachable(address, timeout)
    if address is None:
        ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
        return True
    # Ray retries an unreachable cluster inside its C++ client, where no signal or thread can
    # stop it, and ray.init must run in the main thread; so a child process tries first, under a
    # time limit, and only a cluster that answered is joined here.
    import subprocess

    probe = ("import sys, ray; ray.init(address=sys.argv[1], include_dashboard=False, log_to_driver=False); "
             "ray.shutdown()")
    try:
        answer = subprocess.run([sys.executable, "-c", probe, address], capture_output=True, text=True,
                                timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ConnectionError(f"could not connect to Ray at {address} within {timeout:.0f} s") from None
    if answer.returncode != 0:
        lines = [line for line in answer.stderr.strip().splitlines() if line.strip()]
        raise ConnectionError(f"could not connect to Ray at {address}: {lines[-1] if lines else 'unknown error'}")
    ray.init(address=address, include_dashboard=False, log_to_driver=False)
    return True


def _check_reachable(address: str, timeout: float) -> None:
    import socket

    host, _, port = address.rpartition(":")
    try:
        port_number = int(port)
    except ValueError:
        raise ValueError(f"Ray address {address!r} must look like HOST:PORT or 'auto'") from None
    try:
        with socket.create_connection((host, port_number), timeout=min(timeout, 10.0)):
            pass
    except OSError as error:
        raise ConnectionError(f"could not connect to Ray at {address}: {error.strerror or error}") from None


def run_ray(tasks: Sequence[Any], run: Callable[[Any], Any], on_done: Callable[[Any, Any], None],
            describe: Callable[[Any], str]) -> None:
    """Run tasks as Ray tasks (Ray must be initialised, see :func:`connect_ray`); ``on_done(task, result)``."""
    import ray

    remote = ray.remote(run)
    references = {remote.remote(task): task for task in tasks}
    pending = list(references)
    try:
        while pending:
            finished, pending = ray.wait(pending, num_returns=1, timeout=0.5)
            for reference in finished:
                try:
                    result = ray.get(reference)
                except Exception as error:  # noqa: BLE001 - Ray wraps the task's error
                    raise UnitFailed(f"unit {describe(references[reference])} failed: {error}") from error
                on_done(references[reference], result)
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            acknowledge_interrupt()  # cancelling the tasks may take longer than the watchdog's grace
        for reference in pending:
            ray.cancel(reference, force=True)
        raise
