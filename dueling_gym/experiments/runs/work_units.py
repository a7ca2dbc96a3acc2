"""What every study is made of: units of work, each fully named by its identity.

A study -- a regret sweep, the CPE-DB sample-complexity study, the learned-vs-classic
evaluation -- is a list of :class:`~dueling_gym.experiments.runs.work_units.WorkUnit`.  A unit runs alone, in any
process, and its
result is fully determined by its :attr:`~dueling_gym.experiments.runs.work_units.WorkUnit.identity`; so the one runner
(:mod:`dueling_gym.experiments.runs.runner`) can run units in any order, on any backend, write each
to its own file and reuse a file only when it holds exactly the unit asked for.
"""

from __future__ import annotations

import hashlib
import json
import re
from abc import ABC, abstractmethod
from typing import Any, ClassVar

__all__ = ["WorkUnit", "canonical_json", "identity_digest", "safe_name", "package_version"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.=+-]+")


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value`` (sorted keys; non-JSON values by ``repr``)."""
    return json.dumps(value, sort_keys=True, default=repr, separators=(",", ":"))


def identity_digest(identity: dict[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``identity``."""
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()


def safe_name(text: str) -> str:
    """``text`` with every run of characters unsafe in a file name replaced by ``-``."""
    return _UNSAFE.sub("-", text).strip("-")


def package_version() -> str:
    """The installed dueling-gym version (part of every unit's identity)."""
    import dueling_gym

    return str(dueling_gym.__version__)


class WorkUnit(ABC):
    """One unit of work of a study.

    Subclasses implement :attr:`identity`, :attr:`key`, :meth:`run` and :meth:`from_record`.
    A unit's record is ``{"format", "identity", "key"}``, what :meth:`run` returns and a SHA-256
    of all that; the runner writes it to ``units/<key>.json`` and, when the study is resumed,
    reuses a file only when its identity equals the unit's, its digest matches and
    :meth:`check_result` finds it plausible.  Units are pickled to worker processes, so they
    hold plain data.
    """

    #: Fields of the result that measure time rather than outcome (a re-play need not match them).
    volatile_fields: ClassVar[tuple[str, ...]] = ()

    @property
    @abstractmethod
    def identity(self) -> dict[str, Any]:
        """Everything that changes the unit's numbers, as JSON-ready data (the package version included)."""

    @property
    @abstractmethod
    def key(self) -> str:
        """File stem of the unit, readable names plus a digest of the identity (see :func:`identity_digest`)."""

    @abstractmethod
    def run(self) -> dict[str, Any]:
        """Do the work and return the result (JSON-ready; not the ``format``, ``identity`` or ``key``)."""

    @classmethod
    @abstractmethod
    def from_record(cls, record: dict[str, Any]) -> WorkUnit:
        """The unit a record (as written by the runner) is the result of: what ``dueling-gym verify`` re-plays."""

    def check_result(self, record: dict[str, Any]) -> str | None:
        """Why ``record`` (whose identity matches) is not a complete result of this unit; None when it is."""
        return None

    def labelled(self, record: dict[str, Any]) -> dict[str, Any]:
        """``record`` as this unit reports it (a regret sweep puts its own labels on reused files)."""
        return record
