"""Agents imported by path: ``package.module:ClassName`` wherever a registered name is accepted.

A researcher's own algorithm runs beside the library's without being registered:
``make_agent("my_package.my_module:MyAgent", 5, seed=0, alpha=1.0)``, or on the command line
``dueling-gym run --agents my_package.my_module:MyAgent:alpha=1.0 ccb ecw_rmed ...``.

The class either subclasses :class:`~dueling_gym.agents.DuelingAgent` (see the "own agent"
tutorial), or merely implements the same API -- ``__init__(n_arms, *, seed=None, **hyperparameters)``,
``act() -> (i, j)``, ``observe(action, first_won)``, ``recommend() -> int`` and
``reset(*, seed=None)`` -- in which case it is wrapped so that every duel, outcome and
recommendation it exchanges is checked like a library agent's.  As with ``python -m``, the
current folder is searched for the module first.  A sweep identifies such an agent by its
import path, its hyperparameters, the SHA-256 of its module's source file and the version of
the distribution that installed it (see :func:`source_identity`), so editing the module makes
new runs instead of reusing the old ones.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import sys
from typing import Any, ClassVar

from dueling_gym.agents.base import DuelingAgent, SeedLike
from dueling_gym.validation import check_action, check_arm, check_outcome, check_seed

__all__ = ["is_import_path", "load_agent_class", "source_identity"]

_LOADED: dict[str, type] = {}
#: Module name -> its identity as it was when imported (the code that runs, even if the file changes later).
_SOURCES: dict[str, dict[str, str]] = {}


def is_import_path(name: str) -> bool:
    """Whether ``name`` names a class by import path (``module:Class``) rather than a registered agent."""
    return ":" in name


def _check_path(path: str) -> tuple[str, str]:
    module_name, _, class_name = path.partition(":")
    if not module_name or not all(part.isidentifier() for part in module_name.split(".")):
        raise ValueError(f"agent {path!r}: {module_name!r} is not a module path (like my_package.my_module)")
    if not class_name.isidentifier():
        raise ValueError(f"agent {path!r}: {class_name!r} is not a class name")
    return module_name, class_name


def load_agent_class(path: str) -> type[DuelingAgent]:
    """The dueling-agent class named by ``path`` (``package.module:ClassName``), imported once.

    Raises
    ------
    ValueError
        When the module cannot be imported or has no such class.
    TypeError
        When the class neither subclasses ``DuelingAgent`` nor implements ``act``, ``observe``,
        ``recommend`` and ``reset``.
    """
    if path in _LOADED:
        return _LOADED[path]
    module_name, class_name = _check_path(path)
    if os.getcwd() not in sys.path:  # as `python -m` does: a module in the current folder is found
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"agent {path!r}: cannot import module {module_name!r} ({error})") from None
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        raise ValueError(f"agent {path!r}: module {module_name!r} has no class {class_name!r}")
    if not issubclass(cls, DuelingAgent):
        missing = [name for name in ("act", "observe", "recommend", "reset") if not callable(getattr(cls, name, None))]
        if missing:
            raise TypeError(f"agent {path!r} must subclass dueling_gym.agents.DuelingAgent or implement act, "
                            f"observe, recommend and reset; it lacks {missing}")
        cls = _wrapped(cls, path)
    _SOURCES.setdefault(module_name, _module_identity(module))
    _LOADED[path] = cls
    return cls


def source_identity(cls: type) -> dict[str, str]:
    """What identifies an imported agent's code: its module, the SHA-256 of the module's source
    file and the version of the distribution providing the module's top-level package (if any).

    Taken when the module was imported, so it describes the code this process runs even if the
    file is edited afterwards (a new process then imports, and identifies, the new code).
    """
    original = getattr(cls, "wrapped_class", cls)
    module_name = original.__module__
    if module_name not in _SOURCES:
        _SOURCES[module_name] = _module_identity(sys.modules[module_name])
    return dict(_SOURCES[module_name])


def _module_identity(module: Any) -> dict[str, str]:
    identity = {"module": module.__name__}
    source = inspect.getsourcefile(module) if hasattr(module, "__file__") else None
    if source and os.path.isfile(source):
        with open(source, "rb") as stream:
            identity["source_sha256"] = hashlib.sha256(stream.read()).hexdigest()
    from importlib.metadata import PackageNotFoundError, packages_distributions, version

    top = module.__name__.partition(".")[0]
    for distribution in packages_distributions().get(top, [])[:1]:
        try:
            identity["version"] = version(distribution)
        except PackageNotFoundError:  # pragma: no cover - an inconsistent installation
            pass
    return identity


class _WrappedAgent(DuelingAgent):
    """A duck-typed agent behind the library's checks (its duels, outcomes and recommendations)."""

    wrapped_class: ClassVar[type]

    def __init__(self, n_arms: int, *, seed: SeedLike = None, **hyperparameters: Any):
        super().__init__(n_arms, seed=seed)
        self._hyperparameters = dict(hyperparameters)
        self._inner = type(self).wrapped_class(self.n_arms, seed=self.seed, **hyperparameters)

    @property
    def hyperparameters(self) -> dict[str, Any]:
        return dict(self._hyperparameters)

    def _reset_state(self) -> None:
        pass  # the wrapped agent keeps and resets its own state

    def reset(self, *, seed: SeedLike = None) -> None:
        seed = check_seed("seed", seed)
        super().reset(seed=seed)
        self._inner.reset(seed=seed)

    def act(self) -> tuple[int, int]:
        return check_action(self._inner.act(), self.n_arms)

    def observe(self, action: tuple[int, int], first_won: bool) -> None:
        self._inner.observe(check_action(action, self.n_arms), check_outcome(first_won))

    def recommend(self) -> int:
        return check_arm(self._inner.recommend(), self.n_arms, "recommendation")


def _wrapped(cls: type, path: str) -> type[DuelingAgent]:
    """A :class:`_WrappedAgent` subclass for ``cls`` whose signature shows ``cls``'s hyperparameters."""
    wrapper = type(cls.__name__, (_WrappedAgent,), {"wrapped_class": cls, "__module__": __name__,
                                                    "__doc__": cls.__doc__, "name": path})
    parameters = [parameter for parameter in inspect.signature(cls.__init__).parameters.values()
                  if parameter.kind == parameter.KEYWORD_ONLY and parameter.name != "seed"]
    own = inspect.signature(_WrappedAgent.__init__).parameters
    signature = inspect.Signature([own["self"], own["n_arms"], *parameters, own["seed"]])

    def __init__(self: _WrappedAgent, n_arms: int, *, seed: SeedLike = None, **hyperparameters: Any) -> None:
        _WrappedAgent.__init__(self, n_arms, seed=seed, **hyperparameters)

    __init__.__signature__ = signature  # type: ignore[attr-defined]
    wrapper.__init__ = __init__  # type: ignore[misc]
    return wrapper
