"""Files written all at once: a reader, a crash or an interrupt sees the old file or the whole new one.

:func:`atomic_write` writes to a temporary file in the same folder (created with the permissions
of any new file: ``0666`` minus the umask) and renames it over the target; the temporary file
is removed if anything fails.  Results folders (:func:`atomic_write_text`) and training
checkpoints and policies (:mod:`dueling_gym.experiments.learning.npz_files`) are written through it.

Only a regular file or a new path is written: a FIFO, a device node, a folder or a symbolic
link at the target is refused before anything is written, since the rename would replace it
(as root, ``/dev/null`` itself) instead of writing where it leads.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import BinaryIO, Iterator

from dueling_gym.validation import check_regular_file

__all__ = ["atomic_write", "atomic_write_text"]


def _create_temporary(target: Path) -> tuple[Path, BinaryIO]:
    """A new, empty file beside ``target`` (same folder, so the final rename stays on one file
    system), created with mode 0666 so that the umask gives it the permissions of any new file."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
        try:
            descriptor = os.open(temporary, flags, 0o666)
        except FileExistsError:
            continue
        return temporary, os.fdopen(descriptor, "wb")
    raise FileExistsError(f"could not create a temporary file beside {target}")


def _sync(path: Path) -> None:
    """Flush ``path`` (a file or a folder) to the disk; folders cannot be opened on some systems."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass  # e.g. a file system that cannot sync folders: the rename is still atomic
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def atomic_write(path: str | Path, *, durable: bool = True, what: str = "file") -> Iterator[BinaryIO]:
    """Write ``path`` all at once: the block writes to the yielded binary file, which replaces
    ``path`` only once the block has finished.

    If the block (or the flush, or the rename) raises, ``path`` is left as it was and the
    temporary file is removed.  ``durable=True`` also puts the data and the rename on the disk
    (the file survives a power cut, not only a killed process).

    Raises
    ------
    ValueError
        If ``path`` exists and is not a regular file (a FIFO, a device node, a folder, a socket
        or a symbolic link, even one to a regular file): the rename would replace it rather
        than write where it leads.  ``what`` names the file in the message.
    """
    target = check_regular_file(path, what, new_ok=True, follow_symlinks=False)
    temporary, handle = _create_temporary(target)
    try:
        try:
            yield handle
            if handle.closed:  # the writer closed it itself: sync the file through a new descriptor
                if durable:
                    _sync(temporary)
            else:
                handle.flush()
                if durable:
                    os.fsync(handle.fileno())
        finally:
            handle.close()
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    if durable:
        _sync(target.parent)  # the rename itself survives a power cut once the folder is on the disk


def atomic_write_text(path: str | os.PathLike, text: str, *, durable: bool = True, what: str = "file") -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically, creating its folder if needed: a reader sees
    the old file or the whole new one.

    Unit files of a sweep pass ``durable=False`` -- a millisecond per unit -- because a unit file
    that a power cut left empty or short fails verification when it is read and is run again.
    ``what`` names the file in the message that refuses a target that is not a regular file
    (see ``atomic_write``).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, durable=durable, what=what) as handle:
        handle.write(text.encode("utf-8"))
