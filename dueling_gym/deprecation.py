"""Names that were renamed keep working, with a warning, where users imported them from."""

from __future__ import annotations

import warnings
from typing import Any, Callable, Mapping

__all__ = ["renamed_names"]


def renamed_names(module: str, renamed: Mapping[str, str], namespace: Mapping[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that serves each old name of ``renamed`` as its new name.

    Parameters
    ----------
    module : str
        The module's ``__name__`` (named in the warning and in the ``AttributeError``).
    renamed : mapping
        Old name -> new name.
    namespace : mapping
        The module's ``globals()``, where the new names are looked up when an old one is asked for.

    Returns
    -------
    callable
        ``__getattr__(name)``: the new object, with a ``DeprecationWarning`` naming the new name,
        or ``AttributeError`` for a name that was never there.
    """

    def __getattr__(name: str) -> Any:
        if name in renamed:
            warnings.warn(f"{module}.{name} is renamed {renamed[name]}", DeprecationWarning, stacklevel=2)
            return namespace[renamed[name]]
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
