"""Crash-safe files of training runs: written atomically, read back with every defect a ValueError.

Training writes checkpoints and exported policies while it runs, so a crash, a full disk or an
interrupt can come at any byte of a write.  :func:`save_npz_atomically` writes through
:func:`~dueling_gym.atomic_files.atomic_write` (a temporary file flushed to the disk
and renamed over the target), so the target is always either the complete old file or the
complete new one.  :func:`load_npz` reads arrays back
without unpickling anything and turns every way a file can be unreadable into one
:class:`ValueError` naming the file; :func:`check_finite` refuses NaN and infinity, which would
otherwise resume or export silently.  The policy file has its own writer beside its reader,
:func:`dueling_gym.pair_network.files.save_policy_atomically`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from dueling_gym.atomic_files import atomic_write

__all__ = ["save_npz_atomically", "load_npz", "check_finite"]


def save_npz_atomically(path: str | Path, /, **arrays: object) -> Path:
    """:func:`numpy.savez` of ``arrays`` to ``path`` (exactly that name: no ``.npz`` is added),
    through :func:`atomic_write`; returns ``path`` as a :class:`~pathlib.Path`."""
    target = Path(path)
    with atomic_write(target) as handle:
        np.savez(handle, **arrays)
    return target


def check_finite(arrays: Mapping[str, object], where: str, hint: str = "") -> None:
    """Raise ``ValueError("{where}: array {name} holds non-finite values ...")`` for the first of
    ``arrays`` holding NaN or infinity (``hint``, if given, ends the message)."""
    for name, array in arrays.items():
        values = np.asarray(array)
        if values.dtype.kind in "fc" and not np.isfinite(values).all():
            ending = f"; {hint}" if hint else ""
            raise ValueError(f"{where}: array {name} holds non-finite values (NaN or infinity){ending}")


def load_npz(path: str | Path, names: Sequence[str], hint: str = "") -> dict[str, np.ndarray]:
    """The arrays ``names`` of the ``.npz`` file ``path``, read at once, without unpickling.

    Raises
    ------
    ValueError
        ``path`` is not a readable ``.npz`` archive (empty, truncated, damaged, random bytes,
        pickled objects) or lacks one of ``names``; the message names the file and ends with
        ``hint``, if given (e.g. how to start afresh).
    OSError
        ``path`` cannot be opened.
    """
    label = str(path)
    ending = f"; {hint}" if hint else ""
    with open(path, "rb") as handle:
        # A damaged archive fails in many ways (zipfile, zlib, NumPy's header parser): all mean
        # the same to the caller.
        try:
            archive = np.load(handle, allow_pickle=False)
        except Exception as error:
            raise ValueError(f"{label} is not a readable .npz file ({type(error).__name__}: {error}){ending}") from error
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise ValueError(f"{label} is not a readable .npz file (it holds a single array){ending}")
        with archive:
            missing = [name for name in names if name not in archive.files]
            if missing:
                raise ValueError(f"{label} is not a complete file of this kind (missing arrays {missing}){ending}")
            try:
                damaged = archive.zip.testzip()  # every member's CRC-32, so flipped bits are caught too
                if damaged is not None:
                    raise ValueError(f"member {damaged} fails its CRC-32 check")
                arrays = {name: archive[name] for name in names}
            except Exception as error:
                raise ValueError(f"{label} is not a readable .npz file ({type(error).__name__}: {error}){ending}") from error
    for name, array in arrays.items():
        if not isinstance(array, np.ndarray):  # a member that is no .npy array comes back as bytes
            raise ValueError(f"{label}: array {name} is not a NumPy array{ending}")
    return arrays
