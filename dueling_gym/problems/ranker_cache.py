"""The cache of :func:`~dueling_gym.problems.ranker_evaluation`: keys, signatures, stored counts.

An estimate is stored under ``cache_dir`` in a file ``ranker_evaluation-<key[:40]>.npz``, its
:func:`cache_key` a SHA-256 digest of the data (:func:`file_digest` of the file's bytes, or
:func:`arrays_digest` of the arrays) and of every parameter that changes the result.  The file
holds the win, tie and comparison counts, the key, the facts of the estimate and a
:func:`signature`: an HMAC-SHA256 of all of it under a secret of the cache folder
(``.signing-key``: 32 random bytes, readable by its owner only, made on first use).  A plain
checksum can be recomputed by whoever edits the file; a keyed one cannot without the secret.
:func:`load_cached` uses a file only when its key, its signature and the consistency of its
counts all check out; otherwise it warns, and the estimate is recomputed and rewritten
(:func:`store_counts`, atomically).  The rationale is in the notes of
:mod:`dueling_gym.problems.ranker_problems`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import warnings
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dueling_gym.atomic_files import atomic_write
from dueling_gym.problems.click_models import CascadeClickModel
from dueling_gym.problems.interleaving import PROBABILISTIC_TAU
from dueling_gym.problems.ltr_data import LTRData
from dueling_gym.problems.ranker_budget import UNSETTLED, ComparisonBudget
from dueling_gym.validation import check_regular_file

__all__ = ["CACHE_FORMAT", "arrays_digest", "cache_key", "file_digest", "load_cached", "signature", "store_counts"]

#: Bump when a change of the simulation or of the cached facts changes results, so that older cache
#: files are not used (2: the facts hold ``comparison_data_sha256``; 3: a named click model takes the
#: table of the data's grade scale, so a file of 0-2 data cached under format 2 used the wrong one; 4: the
#: key and the facts hold the comparison budget, and a sequential budget gives every pair its own count).
CACHE_FORMAT = 4
#: The cache folder's signing secret (see _signing_secret) and its size in bytes.
_SIGNING_KEY_NAME = ".signing-key"
_SIGNING_KEY_BYTES = 32


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in blocks of 16 MiB.

    Parameters
    ----------
    path : Path
        The file (a learning-to-rank file, or its side file of query sizes).

    Returns
    -------
    str
        The hexadecimal digest.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 24), b""):
            digest.update(block)
    return digest.hexdigest()


def arrays_digest(data: LTRData) -> str:
    """The SHA-256 of a data set given as arrays: every array's dtype, shape and bytes.

    Parameters
    ----------
    data : LTRData
        The data set (its ``ascending_columns`` count when there are any).

    Returns
    -------
    str
        The hexadecimal digest.
    """
    digest = hashlib.sha256()
    for array in (data.features, data.relevance, data.query_offsets, data.query_ids):
        digest.update(repr((array.dtype.str, array.shape)).encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    if data.ascending_columns:  # they reorder the feature rankers' lists; absent, the digest is the old one
        digest.update(repr(("ascending_columns", data.ascending_columns)).encode())
    return digest.hexdigest()


def cache_key(data_digest: str | None, settings: Mapping[str, Any], budget: ComparisonBudget, seed: int,
              single_document_queries: str, *, reading: Mapping[str, Any] | None = None) -> str:
    """The key of an estimate: a SHA-256 of the data's digest and of every parameter that changes it.

    Parameters
    ----------
    data_digest : str or None
        The digest of the data (:func:`file_digest`, combined with a side file's, or
        :func:`arrays_digest`).
    settings : mapping
        The problem's ``rankers``, ``interleaving``, ``click_model`` (as
        :func:`~dueling_gym.problems.click_models.parse_click_model` returns it), ``cutoff`` and
        ``tie_break_seed``.
    budget : ComparisonBudget
        The comparisons per pair, a sequential rule or a fixed count (every parameter of the
        rule is in the key: it decides when a pair stops, and the statuses the provenance reports).
    seed : int
        As :func:`~dueling_gym.problems.ranker_evaluation`.
    single_document_queries : str
        The reader's choice for single-document queries.
    reading : mapping, optional
        The reading options set away from their defaults (absent from the key when empty, so a
        plain read keeps the key it always had).

    Returns
    -------
    str
        The hexadecimal key; its first 40 characters name the cache file.
    """
    if not isinstance(budget, ComparisonBudget):
        raise TypeError(f"budget must be a ComparisonBudget, got {type(budget).__name__}")
    rankers = settings["rankers"]
    if isinstance(rankers, str):
        rankers_key: Any = rankers
    else:
        weights = np.ascontiguousarray(np.asarray(rankers, dtype=np.float32))
        rankers_key = [list(weights.shape), hashlib.sha256(weights.tobytes()).hexdigest()]
    description = {
        "format": CACHE_FORMAT, "data": data_digest, "rankers": rankers_key,
        "interleaving": settings["interleaving"], "click_model": _click_model_key(settings["click_model"]),
        "cutoff": settings["cutoff"], "tie_break_seed": settings["tie_break_seed"],
        "budget": budget.describe(), "seed": seed,
        "single_document_queries": single_document_queries, "tau": PROBABILISTIC_TAU,
    }
    if reading:  # only when set, so that a plain read keeps the key it has always had
        description["reading"] = dict(reading)
    return hashlib.sha256(json.dumps(description, sort_keys=True, default=str).encode()).hexdigest()


def _click_model_key(request: str | CascadeClickModel) -> dict[str, Any]:
    """The click model as the cache key holds it (``request`` from :func:`parse_click_model`).

    The key is made before the data is parsed, so a bare name cannot be resolved to its table
    yet; it is keyed as the rule "table of the data's scale", which the data digest beside it
    makes one table.  A forced table or custom model is keyed by its probabilities and its
    grade count, so every table has its own key.
    """
    if isinstance(request, str):
        return {"name": request, "table": "from the data's grades"}
    return {"name": request.name, "grades": request.n_grades, "click": list(request.click),
            "stop": list(request.stop)}


def _signing_secret(cache_dir: Path) -> bytes:
    """The folder's secret (``cache_dir/.signing-key``, 32 random bytes, owner-only), made on first use.

    It is created under a temporary name and linked into place, so that two processes that
    start at once agree on one secret and neither reads a half-written one.  A secret of the
    wrong size is replaced; every file signed with the old one is then recomputed.
    """
    path = cache_dir / _SIGNING_KEY_NAME
    for _ in range(3):
        try:
            check_regular_file(path, "cache signing key", follow_symlinks=False)
            secret = path.read_bytes()
        except FileNotFoundError:
            secret = b""
        if len(secret) == _SIGNING_KEY_BYTES:
            return secret
        if secret:
            path.unlink(missing_ok=True)
        cache_dir.mkdir(parents=True, exist_ok=True)
        temporary = cache_dir / f".{_SIGNING_KEY_NAME}.{secrets.token_hex(6)}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as stream:
                stream.write(secrets.token_bytes(_SIGNING_KEY_BYTES))
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process linked its secret first: read that one
        finally:
            temporary.unlink(missing_ok=True)
    raise ValueError(f"cannot establish the cache signing key {path}")


def signature(secret: bytes, key: str, counts: Mapping[str, NDArray[np.int64]], facts_json: str) -> str:
    """HMAC-SHA256 under the folder's secret of the key, the facts and the counts.

    A plain checksum can be recomputed by whoever edits the file; a keyed one cannot without the
    secret, so an edited file is recomputed rather than trusted.

    Parameters
    ----------
    secret : bytes
        The cache folder's secret (``.signing-key``).
    key : str
        The estimate's :func:`cache_key`.
    counts : mapping of str to ndarray of int64
        The ``wins``, ``ties`` and ``comparisons`` (K x K).
    facts_json : str
        The facts of the estimate as stored (JSON, sorted keys).

    Returns
    -------
    str
        The hexadecimal signature.
    """
    signature = hmac.new(secret, key.encode() + facts_json.encode(), hashlib.sha256)
    for name in ("wins", "ties", "comparisons"):
        array = np.ascontiguousarray(counts[name], dtype=np.int64)
        signature.update(name.encode() + repr(array.shape).encode() + array.tobytes())
    return signature.hexdigest()


def store_counts(path: Path, key: str, counts: Mapping[str, NDArray[np.int64]], facts: Mapping[str, Any]) -> None:
    """Write an estimate's counts, facts, key and :func:`signature` to ``path`` (an ``.npz`` file).

    The folder is created if missing, and so is its signing secret.  The file is written to a
    temporary name and renamed, so a reader never sees half a file (it is not synced to the
    disk: a cache can be recomputed).

    Parameters
    ----------
    path : Path
        The cache file.
    key : str
        The estimate's :func:`cache_key`.
    counts : mapping of str to ndarray of int64
        The ``wins``, ``ties`` and ``comparisons`` (K x K).
    facts : mapping
        The facts of the estimate (JSON-serialisable).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    facts_json = json.dumps(dict(facts), sort_keys=True)
    signed = signature(_signing_secret(path.parent), key, counts, facts_json)
    # A cache can be recomputed: atomic (a reader sees no half file), not synced to the disk.
    with atomic_write(path, durable=False) as stream:
        np.savez(stream, key=np.array(key), facts=np.array(facts_json), signature=np.array(signed), **{
            name: np.asarray(counts[name], dtype=np.int64) for name in ("wins", "ties", "comparisons")})


def load_cached(path: Path, key: str) -> dict[str, Any] | None:
    """The cached counts and facts if ``path`` holds exactly the result for ``key``; otherwise None
    (after a warning when a file exists but does not check out: it is then recomputed).

    A file is used when it was written for ``key``, its signature under the folder's secret
    matches (see :func:`signature`), and its counts are consistent (shapes, symmetric ties and
    comparisons, non-negative, wins and ties adding up to the comparisons, and every pair's
    comparisons a look of the budget in the facts: the last look, or an earlier one at which the
    pair's counts decide it, as the rule stops a pair only then).

    Parameters
    ----------
    path : Path
        The cache file (absent: None, without a warning).
    key : str
        The :func:`cache_key` the file must have been written for.

    Returns
    -------
    dict or None
        ``{"counts": {"wins": ..., "ties": ..., "comparisons": ...}, "facts": {...}}``, or None.

    Warns
    -----
    UserWarning
        When a file exists but is not used (naming the file and why).
    """
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as stored:
            stored_key = str(stored["key"])
            facts_json = str(stored["facts"])
            counts = {name: np.array(stored[name], dtype=np.int64) for name in ("wins", "ties", "comparisons")}
            stored_signature = str(stored["signature"])
        facts = json.loads(facts_json)
        if stored_key != key:
            problem = "it was written for other data or parameters"
        elif not hmac.compare_digest(stored_signature,
                                     signature(_signing_secret(path.parent), key, counts, facts_json)):
            problem = "its signature does not match its contents (it was edited, or written under another signing key)"
        elif not isinstance(facts, dict) or not _consistent(counts, facts):
            problem = "its counts are inconsistent"
        else:
            return {"counts": counts, "facts": facts}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError) as error:
        problem = f"it cannot be read ({error})"
    warnings.warn(f"ignoring the cached ranker evaluation {path}: {problem}; recomputing it", stacklevel=3)
    return None


def _consistent(counts: Mapping[str, NDArray[np.int64]], facts: Mapping[str, Any]) -> bool:
    n = facts.get("n_rankers")
    shapes_ok = all(array.shape == (n, n) for array in counts.values())
    if not shapes_ok:
        return False
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    totals = counts["wins"] + counts["wins"].T + counts["ties"]
    # The lower triangle of ties and comparisons is read too (P[j, i]): it must mirror the upper.
    symmetric = all(np.array_equal(counts[name], counts[name].T) and not np.any(np.diagonal(counts[name]))
                    for name in ("ties", "comparisons"))
    non_negative = all(np.all(array >= 0) for array in counts.values())
    if not (symmetric and non_negative and not np.any(np.diagonal(counts["wins"]))
            and np.all(totals[upper] == counts["comparisons"][upper])):
        return False
    budget = _stored_budget(facts.get("budget"))
    if budget is None:
        return False
    if not np.all(np.isin(counts["comparisons"][upper], budget.looks)):
        return False
    # A pair stops before the last look only when its counts decide it.
    n_pairs = n * (n - 1) // 2
    for first, second in zip(*np.nonzero(upper & (counts["comparisons"] < budget.max_comparisons))):
        if budget.status(int(counts["wins"][first, second]), int(counts["wins"][second, first]),
                         int(counts["ties"][first, second]), n_pairs) == UNSETTLED:
            return False
    return True


def _stored_budget(described: Any) -> ComparisonBudget | None:
    """The budget that ``ComparisonBudget.describe()`` wrote, or None if it does not describe one."""
    if not isinstance(described, dict):
        return None
    try:
        budget = ComparisonBudget(**{name: described[name] for name in
                                     ("max_comparisons", "error_rate", "tolerance", "first_batch", "growth")})
    except (KeyError, TypeError, ValueError):
        return None
    return budget if budget.describe() == described else None
