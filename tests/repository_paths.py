"""Folders of the source repository that the tests read but the installed package does not ship."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

#: The repository's root (the folder above ``tests/``).
REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
#: The earlier stages of the shipped learned policies (the ``--init`` files of their training
#: commands): kept in a source checkout only, so located from the tests' own path.
TRAINING_HISTORY_DIRECTORY = REPOSITORY_ROOT / "training-history"
#: The documentation's sources, whose helper modules (``docs/_generate.py`` ...) some tests import.
DOCS = REPOSITORY_ROOT / "docs"


def import_docs_module(name: str) -> ModuleType:
    """Import a helper module of ``docs/`` without writing ``docs/__pycache__``."""
    write_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    sys.path.insert(0, str(DOCS))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(DOCS))
        sys.dont_write_bytecode = write_bytecode
