"""The pair network's weight file: an ``.npz`` archive written atomically, read with every array checked before use.

A policy file (``policy.npz`` written by ``dueling-gym train``, or a shipped ``learned_k{K}.npz``)
holds the arrays :data:`~dueling_gym.pair_network.weights.WEIGHT_NAMES`, the sizes ``n_arms`` and
``hidden`` (one integer each) and optionally ``metadata`` (one JSON object string: the training
configuration and command).

The compiled kernels trust the arrays they are given: they take the hidden width from ``W1`` and
index every other array with it, without bounds checks (a short ``b1`` makes them read whatever
memory follows it), and one NaN weight turns every score into NaN.  So a policy file is read here
one member at a time: each array's header (dtype and shape) is checked against the sizes the file
declares before its data is read, the data must be exactly what the header announces (and pass
the archive's CRC-32), and the values must be finite.  Nothing is ever unpickled.  Every defect
raises one :class:`ValueError` naming the file and the array; only errors of the operating system
on opening the file (a missing file, no permission) are left as :class:`OSError`.

The writer, :func:`save_policy_atomically`, is the reader's counterpart: it refuses non-finite
weights (which the reader would refuse) and writes through
``dueling_gym.atomic_files.atomic_write``, so a crash, a full disk or an interrupt leaves
the complete old file or the complete new one, never a part.

Files of older versions of the network are migrated on reading: a file of the first version (arm
summaries by mean only, no global context) and files written before the self-duel count or the
arm records existed are read as the current network with the missing parts at zero, which leaves
their scores unchanged.
"""

from __future__ import annotations

import hashlib
import json
import math
import zipfile
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from dueling_gym.atomic_files import atomic_write
from dueling_gym.observations import N_RECORD_FEATURES
from dueling_gym.pair_network.weights import MEAN_ONLY_NAMES, WEIGHT_NAMES, weight_shapes

__all__ = ["read_policy_file", "load_policy_weights", "save_policy_atomically", "average_policy_files"]

#: Arrays added after the first version; a file written before they existed reads them as zero (same scores).
_LATER_NAMES = WEIGHT_NAMES[len(MEAN_ONLY_NAMES):]
#: The context weights enter together: one without the other is no version of the network.
_CONTEXT_NAMES = ("G", "G_s")
#: The arm-record weights enter together too.
_RECORD_NAMES = ("R_a", "R_b", "R_s")
#: Weights reading the arm summaries, which the first version pooled by mean only (``hidden`` rows).
_SUMMARY_READERS = ("A", "B", "S")


class _Header(NamedTuple):
    shape: tuple[int, ...]
    dtype: np.dtype


def _cause(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


class _Refused(ValueError):
    """A header refused by a check (its message is final)."""


class _Archive:
    """The members of an open ``.npz`` archive, each read header first and without pickles."""

    def __init__(self, archive: zipfile.ZipFile, label: str):
        self._zip = archive
        self.label = label
        # np.savez stores array NAME as member NAME.npy.
        self._members = {info.filename[:-4]: info for info in archive.infolist() if info.filename.endswith(".npy")}
        self.filenames = [info.filename for info in archive.infolist()]

    def has(self, name: str) -> bool:
        return name in self._members

    def _damaged(self, name: str, error: BaseException) -> ValueError:
        return ValueError(f"{self.label} is not a readable .npz policy file: array {name} is damaged ({_cause(error)})")

    def read(self, name: str, check: Callable[[_Header], None]) -> np.ndarray:
        """Array ``name``, once ``check`` (which raises :class:`_Refused`) has accepted its header:
        only then are its data read, and only as many bytes as the file really holds."""
        info = self._members[name]
        # A damaged member fails in many ways (zipfile, zlib, NumPy's header parser): all mean
        # the same to the caller.
        try:
            with self._zip.open(info) as member:
                version = np.lib.format.read_magic(member)
                if version == (1, 0):
                    shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(member)
                else:
                    shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(member)
                header = _Header(tuple(int(size) for size in shape), dtype)
                check(header)
                expected = math.prod(header.shape) * dtype.itemsize
                held = info.file_size - member.tell()
                if held != expected:
                    raise ValueError(f"{held} bytes of data where the header announces {expected}")
                data = member.read(expected + 1)  # reaching the end makes zipfile check the CRC-32
                if len(data) != expected:
                    raise ValueError(f"{len(data)} bytes of data where the header announces {expected}")
                return np.frombuffer(data, dtype=dtype).reshape(header.shape, order="F" if fortran_order else "C")
        except _Refused:
            raise
        except Exception as error:
            raise self._damaged(name, error) from error


def _read_size(archive: _Archive, name: str, minimum: int) -> int:
    def check(header: _Header) -> None:
        if header.dtype.kind not in "iu" or header.shape != ():
            raise _Refused(f"{archive.label}: array {name} has dtype {header.dtype} and shape {header.shape}, "
                           "expected one integer")

    value = int(archive.read(name, check))
    if value < minimum:
        raise ValueError(f"{archive.label}: array {name} is {value}, expected at least {minimum}")
    return value


def _read_metadata(archive: _Archive) -> dict[str, Any]:
    def check(header: _Header) -> None:
        if header.dtype.kind != "U" or header.shape != ():
            raise _Refused(f"{archive.label}: array metadata has dtype {header.dtype} and shape {header.shape}, "
                           "expected one JSON string")

    text = str(archive.read("metadata", check))
    try:
        metadata = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"{archive.label}: array metadata is not valid JSON ({error})") from error
    if not isinstance(metadata, dict):
        raise ValueError(f"{archive.label}: array metadata holds a JSON {type(metadata).__name__}, expected an object")
    return metadata


def _read_weight_arrays(archive: _Archive, hidden: int) -> dict[str, np.ndarray]:
    expected = weight_shapes(hidden)
    names = MEAN_ONLY_NAMES + tuple(name for name in _LATER_NAMES if archive.has(name))
    first_version = "G" not in names
    weights = {}
    for name in names:
        allowed = [expected[name]]
        if first_version and name in _SUMMARY_READERS:
            allowed.insert(0, (hidden, hidden))  # arm summaries by mean only

        def check(header: _Header, name: str = name, allowed: list[tuple[int, ...]] = allowed) -> None:
            if header.dtype.kind != "f":
                raise _Refused(f"{archive.label}: array {name} has dtype {header.dtype}, "
                               "expected real floating-point numbers")
            if header.shape not in allowed:
                raise _Refused(f"{archive.label}: array {name} has shape {header.shape}, expected "
                               + " or ".join(str(shape) for shape in allowed))

        # float64 is what the kernels compute in; a float128 beyond its range becomes inf, refused too.
        with np.errstate(over="ignore"):
            values = archive.read(name, check).astype(np.float64)
        if not np.isfinite(values).all():
            raise ValueError(f"{archive.label}: array {name} holds non-finite values (NaN or infinity)")
        weights[name] = values
    return weights


def _complete(weights: dict[str, np.ndarray], hidden: int) -> dict[str, np.ndarray]:
    """The weights of an older version of the network as the current network computing the same
    scores: the parts it did not have are zero."""
    if "G" not in weights:
        for name in _SUMMARY_READERS:
            if weights[name].shape == (hidden, hidden):
                weights[name] = np.vstack([weights[name], np.zeros((hidden, hidden))])
        for name in _CONTEXT_NAMES:
            weights[name] = np.zeros((2 * hidden, hidden))
    if "s_n" not in weights:
        weights["s_n"] = np.zeros(hidden)
    for name in ("R_a", "R_b", "R_s"):
        if name not in weights:
            weights[name] = np.zeros((N_RECORD_FEATURES, hidden))
    return {name: weights[name] for name in WEIGHT_NAMES}


def read_policy_file(path: str | Path) -> tuple[dict[str, np.ndarray], int, int, dict[str, Any]]:
    """Read and check an exported pair policy.

    Parameters
    ----------
    path : str or Path
        An ``.npz`` file written by ``dueling-gym train`` (or of an older version of the network).

    Returns
    -------
    weights : dict of str to ndarray
        Every array of :data:`~dueling_gym.pair_network.weights.WEIGHT_NAMES` as a float64 copy, those of an older version of the
        network completed with zeros.
    n_arms, hidden : int
        The sizes the file declares.
    metadata : dict
        The file's ``metadata`` JSON object (empty without one).

    Raises
    ------
    ValueError
        The file is no readable ``.npz`` archive, lacks an array, or holds an array of the wrong
        dtype or shape or with non-finite values; the message names the file and the array.
    OSError
        The file cannot be opened.
    """
    label = str(path)
    with open(path, "rb") as handle:
        try:
            opened = zipfile.ZipFile(handle)
        except Exception as error:  # empty, truncated, random bytes, a pickle, a lone .npy ...
            raise ValueError(f"{label} is not a readable .npz policy file ({_cause(error)})") from error
        with opened:
            archive = _Archive(opened, label)
            missing = [name for name in MEAN_ONLY_NAMES + ("n_arms", "hidden") if not archive.has(name)]
            if missing:
                raise ValueError(f"{label} is not an exported pair policy (missing arrays {missing})")
            # A member of no known name is a damaged or foreign file: a byte flipped in the name
            # of an optional array would otherwise load it as absent (zeros), a different policy.
            known = {f"{name}.npy" for name in (*WEIGHT_NAMES, "n_arms", "hidden", "metadata")}
            unknown = [name for name in archive.filenames if name not in known]
            if unknown:
                raise ValueError(f"{label} is not an exported pair policy (unexpected member {unknown[0]!r}: "
                                 "a damaged or foreign file)")
            for group in (_CONTEXT_NAMES, _RECORD_NAMES):  # parts of the network that come together
                present = [name for name in group if archive.has(name)]
                if present and len(present) < len(group):
                    absent = ", ".join(name for name in group if name not in present)
                    raise ValueError(f"{label} is not an exported pair policy (array {present[0]} without {absent})")
            n_arms = _read_size(archive, "n_arms", minimum=2)
            hidden = _read_size(archive, "hidden", minimum=1)
            weights = _read_weight_arrays(archive, hidden)
            metadata = _read_metadata(archive) if archive.has("metadata") else {}
    return _complete(weights, hidden), n_arms, hidden, metadata


def load_policy_weights(path: str | Path, n_arms: int | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read exported pair-network weights (float64 copies) and their metadata; check ``n_arms``
    (``None``: accept the file's own, e.g. for a starting point of training, since the weights do
    not depend on K).

    A file of the first version of the network (arm summaries by mean only, no global context:
    no ``G``, ``A`` of ``hidden`` rows) is read as the same network with the max-pooling rows of
    ``A``, ``B``, ``S`` and the context weights ``G``, ``G_s`` set to zero; likewise a file
    without the self-duel weights ``s_n`` or the arm-record weights ``R_a``, ``R_b``, ``R_s``
    (written before they existed) gets them at zero, which leaves its scores unchanged.

    Every array is checked before the compiled kernels see it (they index the arrays without
    bounds checks): its dtype (real floating point for the weights, one integer for ``n_arms``
    and ``hidden``, one JSON object string for ``metadata``), its exact shape for the declared
    ``hidden``, and finite values.  Nothing is unpickled.

    Returns
    -------
    weights : dict of str to ndarray
        The arrays :data:`~dueling_gym.pair_network.weights.WEIGHT_NAMES`.
    metadata : dict
        The file's metadata, with ``hidden`` and ``n_arms`` added.

    Raises
    ------
    ValueError
        The file is not a readable ``.npz`` policy, or an array is missing or wrong (the message
        names the file and the array), or the policy is for another number of arms.
    OSError
        The file cannot be opened.
    """
    weights, trained_arms, hidden, metadata = read_policy_file(path)
    if n_arms is not None and trained_arms != n_arms:
        raise ValueError(f"{path} holds a policy for {trained_arms} arms, not {n_arms}")
    metadata["hidden"] = hidden
    metadata["n_arms"] = trained_arms
    return weights, metadata


def save_policy_atomically(path: str | Path, weights: Mapping[str, np.ndarray], **extra: object) -> Path:
    """Write a pair policy: ``weights`` then ``extra`` (e.g. ``n_arms``, ``hidden``, ``metadata``)
    as ``numpy.savez`` arrays to ``path`` (exactly that name: no ``.npz`` is added), atomically.

    Parameters
    ----------
    path : str or Path
        The policy file; replaced whole, or left as it was when anything fails.
    weights : mapping of str to ndarray
        The network's arrays (:data:`~dueling_gym.pair_network.weights.WEIGHT_NAMES`).
    **extra
        Further arrays: the sizes and the metadata :func:`read_policy_file` reads.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ValueError
        A weight holds NaN or infinity (the reader would refuse the file); nothing is written.
    """
    target = Path(path)
    for name, array in weights.items():
        values = np.asarray(array)
        if values.dtype.kind in "fc" and not np.isfinite(values).all():
            raise ValueError(f"refusing to write {target}: array {name} holds non-finite values (NaN or infinity); "
                             "training produced non-finite weights (try a smaller learning rate)")
    with atomic_write(target) as handle:
        np.savez(handle, **weights, **extra)
    return target


def average_policy_files(sources: list[str | Path], out: str | Path, *, n_arms: int) -> Path:
    """Write the policy whose every weight array is the mean of those of ``sources``, for ``n_arms`` arms.

    Averaging the weights of networks trained from one starting point (here, policies of
    different sizes trained further from the same weights) gives a network between them; the
    mean is taken array by array in the order the files are named (so the file is the same bit
    for bit from the same sources in the same order).

    Parameters
    ----------
    sources : list of str or Path
        At least two policy files of the same hidden width (their own numbers of arms do not
        matter: the weights do not depend on K).
    out : str or Path
        The policy file to write (atomically; its metadata names each source with its SHA-256).
    n_arms : int
        The number of arms the averaged policy is for (recorded as the file's size).

    Returns
    -------
    Path
        ``out``.

    Raises
    ------
    ValueError
        Fewer than two sources, a source that is not a readable policy, widths that differ, or
        ``n_arms`` below 2.
    """
    if isinstance(sources, (str, Path)) or len(sources) < 2:
        raise ValueError(f"sources must name at least two policy files, got {sources!r}")
    if isinstance(n_arms, bool) or not isinstance(n_arms, (int, np.integer)) or n_arms < 2:
        raise ValueError(f"n_arms must be an integer >= 2, got {n_arms!r}")
    read = [load_policy_weights(path) for path in sources]
    widths = {metadata["hidden"] for _, metadata in read}
    if len(widths) != 1:
        raise ValueError(f"the sources' networks differ in width ({sorted(widths)}): they cannot be averaged")
    total = {name: read[0][0][name].copy() for name in WEIGHT_NAMES}
    for weights, _ in read[1:]:
        for name in WEIGHT_NAMES:
            total[name] += weights[name]
    averaged = {name: total[name] / len(read) for name in WEIGHT_NAMES}
    hidden = widths.pop()
    files = {Path(path).name: hashlib.sha256(Path(path).read_bytes()).hexdigest() for path in sources}
    names = ", ".join(repr(str(path)) for path in sources)
    metadata = {"config": {"algorithm": "average", "n_arms": int(n_arms), "hidden": hidden, "sources": files},
                "command": (f"python -c \"from dueling_gym.pair_network import average_policy_files; "
                            f"average_policy_files([{names}], {str(out)!r}, n_arms={int(n_arms)})\"")}
    return save_policy_atomically(out, averaged, n_arms=np.array(int(n_arms)), hidden=np.array(hidden),
                                  metadata=np.array(json.dumps(metadata)))
