"""Moved to :mod:`dueling_gym.atomic_files` (the core writes problem files and caches through it
too); this name stays importable."""

from dueling_gym.atomic_files import atomic_write, atomic_write_text

__all__ = ["atomic_write", "atomic_write_text"]
