"""Damaged entries of Numba's on-disk cache are discarded and compiled again, with one warning.

Numba keeps each cached function in an index file (``.nbi``) and one data file per signature
(``.nbc``).  A file cut short (a full disk, a killed process on a file system without atomic
renames) or overwritten with garbage makes Numba's loader raise (``UnpicklingError``,
``EOFError``, ...) on every later call of the function, in every process, until someone finds
and deletes the file.  :func:`install` wraps the two readers of
:class:`numba.core.caching.IndexDataCacheFile`: a file that cannot be read is removed and warned
about once (naming it), the function is compiled again, and Numba writes a good file in its place.

``import dueling_gym`` installs the wrapper when ``numba.core.caching`` is first imported (a
one-shot finder of its own asks :func:`guarded_spec` for the module), so importing dueling-gym
neither imports Numba nor compiles this module until Numba is imported.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

__all__ = ["install", "guarded_spec"]

#: Files already warned about in this process (a file that cannot be removed is warned about once).
_WARNED: set[str] = set()


def _discard(path: str, error: BaseException) -> None:
    """Remove the damaged cache file ``path`` and warn once about it."""
    try:
        os.unlink(path)
        removed = "removed it"
    except FileNotFoundError:  # another process removed it first
        removed = "removed it"
    except OSError as unlink_error:
        removed = f"could not remove it ({unlink_error.strerror or unlink_error})"
    if path not in _WARNED:
        _WARNED.add(path)
        warnings.warn(f"damaged Numba cache file {path} ({type(error).__name__}: {error}); {removed} and "
                      "compiling the function again", UserWarning, stacklevel=3)


def install(caching: Any = None) -> None:
    """Wrap the readers of Numba's cache files in ``caching`` (default: ``numba.core.caching``); idempotent."""
    if caching is None:
        import numba.core.caching as caching
    cache_file = caching.IndexDataCacheFile
    if getattr(cache_file, "_dueling_gym_guarded", False):
        return
    load_index, load_data = cache_file._load_index, cache_file._load_data

    def _load_index(self: Any) -> dict:
        # Numba reads a missing index as empty and lets other OSErrors (permissions) through;
        # anything else is a damaged file: read it as empty, so the function is compiled again
        # and a new index is written.
        try:
            overloads = load_index(self)
            if not isinstance(overloads, dict):
                raise TypeError(f"the index holds a {type(overloads).__name__}, not a dict")
        except OSError:
            raise
        except Exception as error:
            _discard(self._index_path, error)
            return {}
        return overloads

    def _load_data(self: Any, name: str) -> Any:
        # Numba's loader treats an OSError here as a missing entry; a damaged file is made one.
        try:
            data = load_data(self, name)
            if not isinstance(data, tuple):
                raise TypeError(f"the entry holds a {type(data).__name__}, not a tuple")
        except OSError:
            raise
        except Exception as error:
            path = self._data_path(name)
            _discard(path, error)
            raise FileNotFoundError(path) from error
        return data

    cache_file._load_index, cache_file._load_data = _load_index, _load_data
    cache_file._dueling_gym_guarded = True


def guarded_spec(finder: Any, fullname: str, path: Any = None, target: Any = None) -> Any:
    """The spec of ``numba.core.caching`` from the other finders of ``sys.meta_path``, its loader
    wrapped to :func:`install` the guard once the module has run; ``finder`` (the package's
    one-shot finder that asked) is taken off ``sys.meta_path``."""
    spec = None
    for other in list(sys.meta_path):
        if other is finder or not hasattr(other, "find_spec"):
            continue
        spec = other.find_spec(fullname, path, target)
        if spec is not None:
            break
    # The import system stops at the spec returned, so removing the finder while it iterates is safe.
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)
    if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
        spec.loader = _InstallingLoader(spec.loader)
    return spec


class _InstallingLoader:
    """Delegates to the module's own loader; installs the guard once the module has run."""

    def __init__(self, loader: Any):
        self._loader = loader

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        install(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_code, ... (inspect, tracebacks)
        return getattr(self._loader, name)
