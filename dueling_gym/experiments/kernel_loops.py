"""Compiled loops over an agent's kernels, cached on disk like the kernels themselves.

The fast runners (:func:`~dueling_gym.experiments.simulate`, the pure-exploration runner) play
whole runs inside one compiled function that calls the agent's ``act``/``observe``/... kernels.
Passing the kernels as arguments would make that function impossible to cache (its cache key
would hold the kernels' dispatchers, which differ in every process), so every process would
compile it again.  Instead, :func:`loop_for` makes one copy of a loop *template* per agent
class, with the class's kernels bound as the copy's globals, and compiles it with Numba's
on-disk cache: a fresh process loads it.

The copy's name carries the agent's module and class and the size and modification time of
the files defining its kernels, so a cached loop is never reused after the kernels change.
Classes that another process could not import by name (defined in ``__main__`` or inside a
function) are compiled per process.
"""

from __future__ import annotations

import builtins
import hashlib
import inspect
import os
import types
from typing import Any, Callable

import numba

__all__ = ["loop_for"]

_LOOPS: dict[tuple[Callable[..., Any], type], Any] = {}


def _kernel_stamp(kernels: dict[str, Any]) -> str:
    stamp = hashlib.sha256()
    for name, kernel in sorted(kernels.items()):
        source = inspect.getsourcefile(getattr(kernel, "py_func", kernel))
        status = os.stat(source) if source else None
        stamp.update(f"{name}={source}:{status.st_size if status else 0}:{status.st_mtime_ns if status else 0};".encode())
    return stamp.hexdigest()[:12]


def loop_for(template: Callable[..., Any], agent_class: type, kernel_names: dict[str, str]) -> Any:
    """The compiled copy of ``template`` for ``agent_class`` (built once per process, cached on disk).

    Parameters
    ----------
    template : function
        A plain Python function whose body calls the kernels by global names (``act(state)``).
    agent_class : type
        The agent class whose kernels are bound.
    kernel_names : dict
        Global name in the template -> attribute of the class (e.g. ``{"act": "act_kernel"}``).
    """
    key = (template, agent_class)
    loop = _LOOPS.get(key)
    if loop is None:
        kernels = {name: getattr(agent_class, attribute) for name, attribute in kernel_names.items()}
        name = (f"{template.__name__}_{agent_class.__module__}_{agent_class.__qualname__}_"
                f"{_kernel_stamp(kernels)}").replace(".", "_")
        namespace = {"__name__": template.__module__, "__builtins__": builtins, **kernels}
        function = types.FunctionType(template.__code__, namespace, name)
        function.__qualname__ = name
        function.__doc__ = template.__doc__
        importable = agent_class.__module__ != "__main__" and "<" not in agent_class.__qualname__
        loop = numba.njit(cache=importable, nogil=True)(function)
        _LOOPS[key] = loop
    return loop
