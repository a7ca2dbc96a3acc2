"""Input validation shared by every layer: numbers, probabilities, seeds, arrays, outcomes and duels.

Every public entry point of the package checks its inputs with these functions, so a bad
value is refused with a ``TypeError`` (wrong kind of value) or a ``ValueError`` (right kind,
wrong value) that names the argument, and nothing is silently coerced, clipped or counted.

Files and messages: :func:`check_regular_file` refuses a FIFO, a device or a folder before it is
read (and, for a file about to be replaced, a symbolic link too); :func:`reject_duplicate_keys`
refuses JSON objects that give a key twice; :func:`echo` caps the user's values that a message
repeats, and :func:`echo_list` the lists of them (a few, then how many more).
"""

from __future__ import annotations

import math
import os
import stat
from operator import index
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "SeedLike",
    "check_bool",
    "check_integer",
    "check_n_arms",
    "available_memory",
    "check_pairwise_memory",
    "check_reset_options",
    "check_number",
    "check_probability",
    "check_real_array",
    "MAX_ATOL",
    "check_atol",
    "real_matrix",
    "check_preference_entries",
    "antisymmetric_rebuild",
    "check_seed",
    "check_rng",
    "check_outcome",
    "check_reward",
    "check_arm",
    "check_action",
    "check_action_batch",
    "check_discrete_action",
    "read_only",
    "MAX_ECHO",
    "echo",
    "MAX_LISTED",
    "echo_list",
    "check_regular_file",
    "reject_duplicate_keys",
]

SeedLike = int | np.random.SeedSequence | None


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` as a Python bool; only ``bool`` and ``numpy.bool_`` are accepted (no 0/1, no strings)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {value!r} ({type(value).__name__})")
    return bool(value)


def check_integer(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as a Python int; refuse bools, floats and anything out of ``[minimum, maximum]``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}")
    return value


def check_n_arms(n_arms: Any, minimum: int = 2) -> int:
    """Validate a number of arms (an integer ``>= minimum``)."""
    return check_integer("n_arms", n_arms, minimum=minimum)


def available_memory() -> int | None:
    """Bytes of memory this machine can still hand out (Linux ``MemAvailable``; None where unknown)."""
    try:
        with open("/proc/meminfo") as stream:
            for line in stream:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass  # no readable figure: the memory is unknown
    return None


#: Bytes below which :func:`check_pairwise_memory` does not look at the machine.
_SMALL_ALLOCATION = 256 * 2**20


def check_pairwise_memory(what: str, n_arms: int, *, arrays: int = 8) -> None:
    """Refuse ``n_arms`` when ``arrays`` K x K float64 arrays (what a problem or a dueling agent holds, with
    the copies made while building it) do not fit in the memory available now.

    A preference matrix, its derived matrices and an agent's pairwise statistics are all K x K;
    at ``K = 100 000`` one such array alone takes 80 GB, and an allocation that fails part-way
    leaves the machine swapping before Python can say anything.
    """
    needed = arrays * 8 * n_arms * n_arms
    if needed < _SMALL_ALLOCATION:  # any machine holds it; reading the memory figures costs more than a small agent
        return
    available = available_memory()
    if available is not None and needed > available:
        raise ValueError(f"{what} with n_arms={n_arms} needs about {needed / 2**30:.1f} GiB ({arrays} K x K arrays of "
                         f"float64), more than the {available / 2**30:.1f} GiB this machine has available")


def check_number(
    name: str,
    value: Any,
    *,
    strict: bool = True,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_maximum: bool = False,
) -> float:
    """Return a finite real ``value`` as a float, bounded below by ``minimum`` (strictly when ``strict``)
    and above by ``maximum`` (inclusive, or strictly when ``strict_maximum``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if minimum is not None and ((strict and value <= minimum) or (not strict and value < minimum)):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum}, got {value}")
    if maximum is not None and ((strict_maximum and value >= maximum) or (not strict_maximum and value > maximum)):
        raise ValueError(f"{name} must be {'<' if strict_maximum else '<='} {maximum}, got {value}")
    return value


def check_probability(name: str, value: Any, *, open_low: bool = False, open_high: bool = False) -> float:
    """A number in ``[0, 1]``; ``open_low`` / ``open_high`` exclude 0 / 1 (e.g. a confidence ``delta``)."""
    value = check_number(name, value, strict=False, minimum=0.0, maximum=1.0)
    if (open_low and value == 0.0) or (open_high and value == 1.0):
        interval = f"{'(' if open_low else '['}0, 1{')' if open_high else ']'}"
        raise ValueError(f"{name} must lie in {interval}, got {value}")
    return value


def check_real_array(
    name: str,
    values: Any,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
) -> NDArray[np.float64]:
    """Return ``values`` as a float64 array (no copy when it already is one) of finite entries in
    ``[minimum, maximum]`` (both inclusive; either may be None).

    Values that do not convert to real numbers raise a TypeError, NaN, infinities and entries out
    of range a ValueError; the messages name the argument.
    """
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be numeric: {error}") from None
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got {values!r}")
    low = minimum is not None and np.any(array < minimum)
    high = maximum is not None and np.any(array > maximum)
    if low or high:
        if minimum is not None and maximum is not None:
            raise ValueError(f"{name} must lie in [{minimum:g}, {maximum:g}], got {values!r}")
        if low:
            raise ValueError(f"{name} must be >= {minimum:g}, got {values!r}")
        raise ValueError(f"{name} must be <= {maximum:g}, got {values!r}")
    return array


#: Largest tolerance accepted by the preference-matrix checks.  The two triangles of a matrix
#: printed to two decimals disagree by at most 0.01, far below it; a larger tolerance would no
#: longer absorb rounding but let arbitrary lower triangles be overwritten without a word.
MAX_ATOL = 0.05


def check_atol(atol: Any) -> float:
    """Validate the tolerance of the preference-matrix checks: a finite number in ``[0, MAX_ATOL]``.

    A NaN tolerance would make every comparison ``error > atol`` false and switch the checks
    off; a negative one would refuse every matrix.  Both are refused here.
    """
    return check_number("atol", atol, strict=False, minimum=0.0, maximum=MAX_ATOL)


def real_matrix(name: str, values: Any) -> NDArray[np.float64]:
    """A float64 copy of ``values``; non-numeric (strings, objects), complex and ragged input is refused, not parsed."""
    try:
        array = np.asarray(values)
    except ValueError:  # rows of different lengths
        raise ValueError(f"{name} must be a rectangular array: its rows have different lengths") from None
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise TypeError(f"{name} must be numeric, got dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.complexfloating):
        raise TypeError(f"{name} must be real, got a complex array")
    return np.array(array, dtype=np.float64, copy=True)


def check_preference_entries(name: str, array: NDArray[np.float64], atol: float, *,
                             comparable: NDArray[np.bool_] | None = None, hint: str = "") -> None:
    """Check a square matrix of win probabilities ``P``; the message names the first offending entry.

    Every entry is finite and in ``[0, 1]``, the diagonal is ``1/2`` and ``P[i, j] + P[j, i] = 1``,
    each within ``atol``.  ``comparable`` (boolean, same shape) restricts the last check to the
    pairs that can meet in a duel (the others are the caller's business); ``hint`` is appended to
    the message of that check.
    """
    bad = np.argwhere(~np.isfinite(array))
    if bad.size:
        i, j = bad[0]
        raise ValueError(f"{name} entry [{i}, {j}] is not finite ({array[i, j]})")
    bad = np.argwhere((array < 0.0) | (array > 1.0))
    if bad.size:
        i, j = bad[0]
        raise ValueError(f"{name} entry [{i}, {j}] = {array[i, j]} is outside [0, 1]")
    diagonal_error = np.abs(np.diag(array) - 0.5)
    if np.any(diagonal_error > atol):
        i = int(np.argmax(diagonal_error))
        raise ValueError(f"{name} diagonal entry [{i}, {i}] = {array[i, i]} must be 1/2")
    antisymmetry_error = np.abs(array + array.T - 1.0)
    if comparable is not None:
        antisymmetry_error = np.where(comparable, antisymmetry_error, 0.0)
    if np.any(antisymmetry_error > atol):
        i, j = np.unravel_index(int(np.argmax(antisymmetry_error)), array.shape)
        i, j = (i, j) if i < j else (j, i)
        raise ValueError(
            f"{name} entries [{i}, {j}] = {array[i, j]} and [{j}, {i}] = {array[j, i]} "
            f"must sum to 1 (P[i, j] + P[j, i] = {array[i, j] + array[j, i]}){hint}"
        )


def antisymmetric_rebuild(array: NDArray[np.float64], comparable: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
    """``P`` rebuilt from its strict upper triangle: ``P[j, i] = 1 - P[i, j]``, ``1/2`` on the diagonal.

    Stored matrices are rebuilt this way so that every derived fact (``P + Pᵀ = 1``, hence e.g.
    ``f(M1, M2) + f(M2, M1) = 1``) holds without rounding drift.  With ``comparable``, entries
    outside the mask are 0 (pairs that never duel).
    """
    upper_source, lower_source = array, 1.0 - array
    if comparable is not None:
        upper_source = np.where(comparable, array, 0.0)
        lower_source = np.where(comparable, 1.0 - array, 0.0)
    rebuilt = np.triu(upper_source, 1) + np.triu(lower_source, 1).T
    np.fill_diagonal(rebuilt, 0.5)
    return rebuilt


def check_seed(name: str, seed: Any, *, allow_sequence: bool = True) -> int | np.random.SeedSequence | None:
    """A seed for ``numpy.random.default_rng``: None, a non-negative integer or a ``SeedSequence``.

    ``allow_sequence=False`` refuses a ``SeedSequence``: Gymnasium's ``reset(seed=...)`` takes
    None or a non-negative integer only.
    """
    if seed is None:
        return None
    if isinstance(seed, np.random.SeedSequence):
        if allow_sequence:
            return seed
        raise TypeError(f"{name} must be None or a non-negative integer, got a numpy.random.SeedSequence")
    return check_integer(name, seed, minimum=0)


def check_reset_options(options: Any) -> None:
    """Refuse ``reset(options=...)`` other than None or an empty dict: the library's environments take none,
    and an option that is silently ignored looks like one that worked."""
    if options is None:
        return
    if not isinstance(options, dict):
        raise TypeError(f"options must be None or a dict, got {type(options).__name__}")
    if options:
        raise ValueError(f"this environment takes no reset options, got {sorted(map(str, options))}; "
                         "choose the problem when making the environment")


def check_rng(rng: Any) -> np.random.Generator:
    """A ``numpy.random.Generator`` (legacy ``RandomState`` and seeds are refused: pass a Generator)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def check_outcome(first_won: Any) -> bool:
    """The outcome of a duel: exactly ``bool``, ``numpy.bool_`` or the integers 0 and 1.

    Floats (a reward such as -0.25), NaN, other integers and strings such as ``"False"`` are
    refused rather than read through ``bool()``, which would count them as a win.
    """
    if isinstance(first_won, (bool, np.bool_)):
        return bool(first_won)
    if isinstance(first_won, (int, np.integer)):
        if first_won in (0, 1):
            return bool(first_won)
        raise ValueError(f"first_won must be 0 or 1 (or a bool), got {first_won!r}")
    raise TypeError(
        f"first_won must be a bool or the integer 0 or 1, got {first_won!r} ({type(first_won).__name__})"
    )


def check_reward(reward: Any) -> float:
    """A bandit reward: a finite real number in ``[0, 1]`` (bools are read as 0 and 1)."""
    if isinstance(reward, (bool, np.bool_)):
        return float(reward)
    return check_number("reward", reward, strict=False, minimum=0.0, maximum=1.0)


def check_arm(arm: Any, n_arms: int, name: str = "arm") -> int:
    """An arm index in ``[0, n_arms)``; any integer type, no bools, floats or strings."""
    if isinstance(arm, (bool, np.bool_)) or isinstance(arm, (str, bytes)):
        raise TypeError(f"{name} must be an integer, got {arm!r}")
    try:
        arm = index(arm)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {arm!r} ({type(arm).__name__})") from None
    if not 0 <= arm < n_arms:
        raise ValueError(f"{name} {arm} is out of range: arms must lie in [0, {n_arms - 1}]")
    return arm


def _pair_error(action: Any) -> TypeError:
    return TypeError(f"action must be a pair of integer arms (first, second), got {action!r}")


def check_action(action: Any, n_arms: int) -> tuple[int, int]:
    """Validate a duel ``(first, second)`` and return it as two Python ints.

    Accepted: a tuple, list or 1-D NumPy array of length 2 of any integer dtype (``int8`` ..
    ``uint64``).  Sets and dicts (no order), strings, bools and floats are refused.
    """
    if isinstance(action, np.ndarray):
        # dtype.kind is much cheaper than np.issubdtype, and this runs once per environment step.
        if action.shape != (2,) or action.dtype.kind not in "iu":
            raise TypeError(
                f"action must be a pair of integer arms (first, second), got an array of shape "
                f"{action.shape} and dtype {action.dtype}"
            )
        first, second = action.tolist()
        if 0 <= first < n_arms and 0 <= second < n_arms:
            return first, second
        raise ValueError(f"action {action!r} is out of range: arms must lie in [0, {n_arms - 1}]")
    if not (isinstance(action, (tuple, list)) and len(action) == 2):
        raise _pair_error(action)
    first, second = action
    try:
        first = check_arm(first, n_arms, "first arm")
        second = check_arm(second, n_arms, "second arm")
    except TypeError:
        raise _pair_error(action) from None
    except ValueError:
        raise ValueError(f"action {action!r} is out of range: arms must lie in [0, {n_arms - 1}]") from None
    return first, second


def check_action_batch(actions: Any, n_envs: int, n_arms: int) -> NDArray[np.int64]:
    """Validate one duel per sub-environment and return them as an ``int64`` array of shape ``(n_envs, 2)``.

    Any integer dtype is accepted (``int8`` .. ``uint64``) and widened to ``int64``, so that
    flat duel indices such as ``first * K + second`` cannot overflow a narrow dtype.  Arrays of
    floats, bools or objects are refused (TypeError), as are other shapes (ValueError) and arms
    outside ``[0, n_arms)`` (ValueError).  The result never aliases ``actions``.
    """
    try:
        array = np.asarray(actions)
    except ValueError:  # ragged nesting
        raise ValueError(f"actions must have shape ({n_envs}, 2) (first, second arm per env), got {actions!r}") from None
    if array.dtype.kind not in "iu":
        raise TypeError(f"actions must be an integer array (one (first, second) pair per env), got dtype {array.dtype}")
    if array.shape != (n_envs, 2):
        raise ValueError(f"actions must have shape ({n_envs}, 2) (first, second arm per env), got {array.shape}")
    if array.size:
        # Viewed as unsigned integers of the same width, negative arms become huge and fail the
        # same single comparison as arms >= n_arms.
        unsigned = array.view(np.dtype(f"u{array.dtype.itemsize}"))
        if int(unsigned.max()) >= n_arms:
            raise ValueError(f"actions out of range: arms must lie in [0, {n_arms - 1}]")
    return array.astype(np.int64, copy=True)


def check_discrete_action(action: Any, n: int, name: str = "action") -> int:
    """An index into ``Discrete(n)``: a Python or NumPy integer, or an integer array of shape ``()`` or ``(1,)``.

    Bools, floats, strings, containers and arrays of other shapes or dtypes are refused with a
    TypeError; integers outside ``[0, n)`` with a ValueError.
    """
    if isinstance(action, np.ndarray):
        if action.shape not in ((), (1,)) or action.dtype.kind not in "iu":
            raise TypeError(
                f"{name} must be an integer (or an integer array of shape () or (1,)), got an array of shape "
                f"{action.shape} and dtype {action.dtype}"
            )
        value = action.reshape(()).item()
    elif isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise TypeError(f"{name} must be an integer in [0, {n - 1}], got {action!r} ({type(action).__name__})")
    else:
        value = int(action)
    if not 0 <= value < n:
        raise ValueError(f"{name} {value} is out of range: it must lie in [0, {n - 1}]")
    return value


def read_only(array: NDArray[Any]) -> NDArray[Any]:
    """Mark ``array`` read-only and return it (facts of a problem must not be changed in place)."""
    array.flags.writeable = False
    return array


#: Characters of a user-given value that an error message repeats (see :func:`echo`).
MAX_ECHO = 80
#: Items of a user-given sequence that an error message repeats.
_MAX_ECHO_ITEMS = 20
#: A container's items are shown until they take this many times the cap of one value.
_ECHO_BUDGET = 3
#: Levels of nested containers that an error message spells out.
_MAX_ECHO_LEVELS = 3
#: Characters of a path that a message repeats when the path cannot even be looked up (a real
#: path is shown whole: the system limits it to a few thousand characters).
_MAX_PATH_ECHO = 240


def echo(value: Any, limit: int = MAX_ECHO, *, quote: bool = True, _level: int = 0) -> str:
    """A user-given value as an error message repeats it: its ``repr``, capped at ``limit`` characters.

    Names read from files (system names, column names, labels) can be arbitrarily long: a
    400 MB name repeated whole makes a message that no terminal or log can show.  A longer value
    becomes its first ``limit`` characters followed by ``... (N characters)``; a list, tuple, set
    or dict shows at most 20 items (each capped, and no more once they take about three times
    ``limit``) followed by ``... (N more)``, and containers nested
    more than two levels deep as ``[...]`` (a value parsed from deeply nested JSON would
    otherwise exhaust the recursion limit while the message is being built).

    Parameters
    ----------
    value : Any
        The value to show.
    limit : int, default MAX_ECHO
        The most characters of a string (or of another value's ``repr``) to show.
    quote : bool, default True
        False shows a string as plain text instead of its ``repr`` (e.g. names in a list that
        the message joins with commas).

    Returns
    -------
    str
        The capped text.
    """
    if isinstance(value, str):
        # Slice before repr: the repr of a 400 MB string would itself take 400 MB.
        shown = value if len(value) <= limit else value[:limit]
        text = repr(shown) if quote else shown
        return text if len(value) <= limit else f"{text}... ({len(value):,} characters)"
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        opening, closing = "[]" if isinstance(value, list) else "()" if isinstance(value, tuple) else "{}"
        if _level >= _MAX_ECHO_LEVELS:
            return f"{opening}...{closing}" if value else opening + closing
        level = _level + 1
        items = list(value.items() if isinstance(value, dict) else value)[:_MAX_ECHO_ITEMS]
        parts: list[str] = []
        used = 0
        for item in items:
            if used > _ECHO_BUDGET * limit:  # 20 long names would still make a long message
                break
            if isinstance(value, dict):
                key, item = item
                part = f"{echo(key, limit, quote=quote, _level=level)}: {echo(item, limit, quote=quote, _level=level)}"
            else:
                part = echo(item, limit, quote=quote, _level=level)
            parts.append(part)
            used += len(part) + 2
        if len(value) > len(parts):
            parts.append(f"... ({len(value) - len(parts):,} more)")
        trailing = "," if isinstance(value, tuple) and len(value) == 1 else ""
        return opening + ", ".join(parts) + trailing + closing
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4 * limit:
        # repr of an integer past Python's digit limit raises instead of printing.
        return f"an integer of {value.bit_length():,} bits"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


#: Items of a list that :func:`echo_list` names before counting the rest.
MAX_LISTED = 5


def echo_list(values: Sequence[Any], shown: int = MAX_LISTED, *, limit: int = MAX_ECHO, quote: bool = False) -> str:
    """Values that a message lists, as ``a, b, c, d, e and 12 more``.

    A message about systems dropped from a log, or about groups of systems, may concern
    thousands of them; past the first ``shown`` only their number is told.  Each value shown is
    capped by :func:`echo`, and fewer are named once they take about three times ``limit``.

    Parameters
    ----------
    values : sequence
        The values to list, in the order the message gives them.
    shown : int, default MAX_LISTED
        How many are named (at least 1).
    limit : int, default MAX_ECHO
        The most characters of one value to show (see :func:`echo`).
    quote : bool, default False
        True shows strings as their ``repr``.

    Returns
    -------
    str
        The capped list (``""`` for no values).
    """
    shown = check_integer("shown", shown, minimum=1)
    parts: list[str] = []
    used = 0
    for value in values[:shown]:
        if parts and used > _ECHO_BUDGET * limit:  # five long names would still make a long message
            break
        parts.append(echo(value, limit, quote=quote))
        used += len(parts[-1]) + 2
    rest = len(values) - len(parts)
    return ", ".join(parts) + (f" and {rest:,} more" if rest > 0 else "")


def _file_kind(mode: int) -> str:
    """What a ``stat`` mode describes, in words (for the messages of :func:`check_regular_file`)."""
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))
    return next((kind for test, kind in kinds if test(mode)), "not a regular file")


def check_regular_file(path: str | os.PathLike[str], what: str, *, new_ok: bool = False,
                       follow_symlinks: bool = True) -> Path:
    """Refuse a path that is not a regular file, before anything reads or replaces it.

    Reading a FIFO blocks until some other process writes to it, reading ``/dev/zero`` never
    ends (until the memory is gone), and replacing a FIFO, a device node or a symbolic link with
    a new file destroys it (as root, ``/dev/null`` itself).  Only a regular file (or, with
    ``new_ok``, a path where nothing exists yet) is accepted.

    Parameters
    ----------
    path : str or os.PathLike
        The path to check.
    what : str
        What the file is, for the message (e.g. ``"problem file"``).
    new_ok : bool, default False
        Accept a path where nothing exists (a file about to be written).
    follow_symlinks : bool, default True
        True checks what a symbolic link points to (reading through a link is harmless);
        False refuses the link itself (replacing it would break the link, not write its target).

    Returns
    -------
    pathlib.Path
        ``path`` as a Path.

    Raises
    ------
    FileNotFoundError
        If nothing exists at ``path`` and ``new_ok`` is false.
    ValueError
        If ``path`` is a folder, a FIFO, a device, a socket or (without ``follow_symlinks``) a
        symbolic link, or cannot be looked up at all (a name too long, a file used as a folder).
    """
    path = Path(path)
    try:
        mode = (os.stat if follow_symlinks else os.lstat)(path).st_mode
    except FileNotFoundError:
        if new_ok:
            return path
        raise FileNotFoundError(f"{what} not found: {echo(str(path), _MAX_PATH_ECHO, quote=False)}") from None
    except OSError as error:  # a name too long, a file used as a folder, a loop of links
        raise ValueError(f"{what} {echo(str(path), _MAX_PATH_ECHO, quote=False)}: {error.strerror}") from None
    if not stat.S_ISREG(mode):
        action = "write to" if new_ok else "read"
        raise ValueError(f"{what} {path} is {_file_kind(mode)}, not a regular file; refusing to {action} it "
                         f"(give the path of a regular file{' or a new one' if new_ok else ''})")
    return path


def reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An ``object_pairs_hook`` for ``json.loads`` that refuses an object naming a key twice.

    ``json.loads`` keeps the last of two values for one key without a word, so a record
    ``{"winner": "a", "winner": "b"}`` would silently count as a win of ``b``.

    Parameters
    ----------
    pairs : list of (str, Any)
        The object's members in the order of the text.

    Returns
    -------
    dict
        The object.

    Raises
    ------
    ValueError
        If a key appears more than once (the message names it; the caller adds the file and line).
    """
    record = dict(pairs)
    if len(record) != len(pairs):  # the common case costs one length comparison
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {echo(key)} in a JSON object (which value is meant?)")
            seen.add(key)
    return record
