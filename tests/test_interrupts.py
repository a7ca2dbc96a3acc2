"""Ctrl-C in the console script is never lost (dueling_gym.interrupts): an interrupt that Python
drops inside a callback is delivered again, one that a library swallows ends the process after the
grace period, and one that a library wraps in another error still reads as an interrupt."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

from dueling_gym import cli
from dueling_gym.interrupts import caused_by_interrupt


def _child(body: str, grace_seconds: float = 0.5) -> subprocess.Popen:
    script = textwrap.dedent(f"""
        import sys, time
        from dueling_gym import interrupts
        interrupts.GRACE_SECONDS = {grace_seconds!r}
        interrupts.install_console_interrupts()
    """) + textwrap.dedent(body)
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _interrupt_when_ready(process: subprocess.Popen) -> tuple[str, str]:
    assert process.stdout.readline().strip() == "ready"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    return out, err


def test_an_interrupt_dropped_inside_a_weakref_callback_is_delivered_again():
    process = _child("""
        import weakref
        class Thing:
            pass
        def callback(reference):
            print("ready", flush=True)
            time.sleep(2)  # the interrupt lands here, where Python drops exceptions
        thing = Thing()
        keep = weakref.ref(thing, callback)
        try:
            del thing
            for _ in range(200):
                time.sleep(0.05)
            print("not interrupted", flush=True)
        except KeyboardInterrupt:
            interrupts.acknowledge_interrupt()
            print("interrupted after the callback", flush=True)
    """, grace_seconds=30.0)  # the watchdog must not be what ends it, however loaded the machine
    out, err = _interrupt_when_ready(process)
    assert process.returncode == 0 and out.strip() == "interrupted after the callback", (out, err)
    assert "Exception ignored" not in err and err.strip() == ""


def test_an_interrupt_a_library_swallows_ends_the_process_after_the_grace_period():
    process = _child("""
        try:
            print("ready", flush=True)
            time.sleep(5)
        except BaseException:
            pass  # a library that catches everything
        started = time.monotonic()
        while time.monotonic() - started < 30:
            time.sleep(0.05)
        print("ran to the end", flush=True)
    """)
    started = time.monotonic()
    out, err = _interrupt_when_ready(process)
    assert process.returncode == 130 and err == "dueling-gym: interrupted\n" and "ran to the end" not in out
    assert time.monotonic() - started < 20


def test_an_acknowledged_interrupt_may_take_its_time():
    process = _child("""
        try:
            print("ready", flush=True)
            time.sleep(5)
        except KeyboardInterrupt:
            interrupts.acknowledge_interrupt()
            time.sleep(1.5)  # cleaning up for longer than the grace period
            print("cleaned up", flush=True)
    """)
    out, err = _interrupt_when_ready(process)
    assert process.returncode == 0 and out.strip() == "cleaned up" and err == ""


def test_an_error_raised_because_of_an_interrupt_reads_as_one(monkeypatch, capsys):
    def wrapped(argv):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise RuntimeError("Error calling __set_name__") from interrupt

    monkeypatch.setattr(cli, "_main", wrapped)
    assert cli.main(["demo"]) == 130
    assert capsys.readouterr().err == "dueling-gym: interrupted\n"
    # An error that has nothing to do with an interrupt is raised as it is.
    monkeypatch.setattr(cli, "_main", lambda argv: (_ for _ in ()).throw(ValueError("bad")))
    with pytest.raises(ValueError, match="bad"):
        cli.main(["demo"])


def test_caused_by_interrupt_follows_causes_and_contexts():
    assert caused_by_interrupt(KeyboardInterrupt())
    assert not caused_by_interrupt(ValueError())
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise OSError("while cleaning up")  # noqa: B904 - the implicit context is what is tested
    except OSError as error:
        assert caused_by_interrupt(error)
    looped = ValueError()
    looped.__context__ = TypeError()
    looped.__context__.__context__ = looped
    assert not caused_by_interrupt(looped)
