"""Ctrl-C in the ``dueling-gym`` console script: honoured even where Python would lose it.

A KeyboardInterrupt is an exception raised wherever the main thread happens to be, and there it
can be lost.  Python drops one raised inside a weakref callback or a finaliser (it reports it as
"Exception ignored in ..." and carries on: importlib runs such a callback each time it releases
a module lock), and a library may catch it, or wrap it in another error, while it is imported
(a class body interrupted in ``__set_name__`` becomes a RuntimeError).  The commands import
lazily, so a Ctrl-C in a command's first second could be lost and the command would run on to its
end, or end in a traceback that is not about anything the user did wrong.

So the console script, once its ``main`` runs (before that, ``import dueling_gym`` makes Ctrl-C
exit at once with one line), handles SIGINT with :func:`install_console_interrupts`:

* the KeyboardInterrupt is raised as usual, so that the code that cleans up (a sweep's runner,
  ``finally`` blocks) does;
* one that Python had to drop is signalled again a millisecond later, from a helper thread, when
  the callback that swallowed it has returned; after an interrupt, what finalisers report is
  not shown (it is the debris of the interrupted imports);
* a watchdog thread ends the process with one line and status 130 unless the interrupt is
  acknowledged (:func:`acknowledge_interrupt`, by the code that catches it to clean up) within
  :data:`GRACE_SECONDS`;
* :func:`caused_by_interrupt` tells the command line that an error was raised because of one.
"""

from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
import time
from typing import Any

__all__ = ["GRACE_SECONDS", "install_console_interrupts", "acknowledge_interrupt", "caused_by_interrupt"]

#: Seconds an interrupt may go unacknowledged before the watchdog ends the process.
GRACE_SECONDS = 10.0

_MESSAGE = b"dueling-gym: interrupted\n"
_counts = {"raised": 0, "acknowledged": 0}


def install_console_interrupts() -> None:
    """Handle SIGINT (and ``sys.unraisablehook``) as the module docstring says; for the console
    script's own process only, as it changes process-wide state."""
    signal.signal(signal.SIGINT, _interrupt)
    sys.unraisablehook = _unraisable


def acknowledge_interrupt() -> None:
    """Say that every interrupt raised so far has been caught by code that will end the command:
    the watchdog lets it take its time."""
    _counts["acknowledged"] = _counts["raised"]


def caused_by_interrupt(error: BaseException) -> bool:
    """Whether ``error`` is a KeyboardInterrupt or was raised while one was handled or because of
    one (its ``__context__`` or ``__cause__`` chain holds one)."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        pending += [current.__cause__, current.__context__]
    return False


def _interrupt(signum: int, frame: Any) -> None:
    _counts["raised"] += 1
    threading.Thread(target=_exit_unless_acknowledged, args=(_counts["raised"],), daemon=True).start()
    raise KeyboardInterrupt


def _exit_unless_acknowledged(number: int) -> None:
    time.sleep(GRACE_SECONDS)
    if _counts["acknowledged"] < number:
        os.write(2, _MESSAGE)
        os._exit(130)


def _unraisable(unraisable: Any) -> None:
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        # Dropped inside a callback: signal it again once the callback has returned.
        threading.Timer(0.001, _thread.interrupt_main).start()
        return
    if _counts["raised"] == 0:
        sys.__unraisablehook__(unraisable)
