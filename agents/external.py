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
import path, its hyperparameters, the SHA-256 of its module's source file, the SHA-256 of every
module of the user's own code that module imports (directly or through other such modules;
the standard library and installed packages are left out) and the version of the
distribution that installed it (see :func:`source_identity`), so editing the module or a
helper it imports makes new runs instead of reusing the old ones.

A module that cannot be imported -- missing, with a syntax error, or raising while it runs --
is one :class:`AgentImportError` naming the module and the error, never a traceback.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import importlib.util
import inspect
import os
import site
import sys
import sysconfig
from typing import Any, ClassVar

from dueling_gym.agents.base import DuelingAgent
from dueling_gym.validation import SeedLike, check_action, check_arm, check_outcome, check_seed

__all__ = ["AgentImportError", "is_import_path", "load_agent_class", "source_identity"]

_LOADED: dict[str, type] = {}
#: Module name -> its identity as it was when imported (the code that runs, even if the file changes later).
_SOURCES: dict[str, dict[str, str]] = {}


class AgentImportError(ValueError):
    """An agent's module (named by import path) cannot be imported: missing, broken or raising.

    A ``ValueError``, so every caller that refuses a bad agent name refuses this one too; its own
    class lets a reader of a results folder tell "the agent's code is gone or broken" from "the
    folder is damaged".
    """


#: Longest error text quoted in a one-line message (an exception may carry a whole file).
_MAX_ERROR_TEXT = 300


def _one_line(text: str) -> str:
    """``text`` on one line and at most :data:`_MAX_ERROR_TEXT` characters (messages are printed whole)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= _MAX_ERROR_TEXT else flat[:_MAX_ERROR_TEXT - 3] + "..."


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
    AgentImportError
        When the module cannot be imported: not found, a syntax error, or an exception (even
        ``SystemExit``) raised while it runs; one line naming the module and the error.
    ValueError
        When the module has no such class.
    TypeError
        When the class neither subclasses ``DuelingAgent`` nor implements ``act``, ``observe``,
        ``recommend`` and ``reset``.
    """
    if path in _LOADED:
        return _LOADED[path]
    module_name, class_name = _check_path(path)
    if os.getcwd() not in sys.path:  # as `python -m` does: a module in the current folder is found
        sys.path.insert(0, os.getcwd())
    module = _import_module(path, module_name)
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


def _import_module(path: str, module_name: str) -> Any:
    """Import the agent's module; any failure of the user's code is one :class:`AgentImportError`."""
    try:
        return importlib.import_module(module_name)
    except SyntaxError as error:  # IndentationError and TabError included
        where = f"{error.filename}, line {error.lineno}" if error.filename else f"line {error.lineno}"
        raise AgentImportError(f"agent {path!r}: module {module_name!r} has a syntax error ({where}: "
                               f"{_one_line(error.msg)})") from None
    except ImportError as error:
        raise AgentImportError(f"agent {path!r}: cannot import module {module_name!r} "
                               f"({_one_line(str(error))})") from None
    except SystemExit as error:  # the module's own sys.exit() must not end the caller's program
        raise AgentImportError(f"agent {path!r}: module {module_name!r} called sys.exit({error.code!r}) "
                               "while being imported") from None
    except Exception as error:  # noqa: BLE001 - whatever the user's module raises is reported, not a traceback
        raise AgentImportError(f"agent {path!r}: importing module {module_name!r} raised "
                               f"{type(error).__name__}: {_one_line(str(error))}") from None


def source_identity(cls: type) -> dict[str, Any]:
    """What identifies an imported agent's code.

    Its module, the SHA-256 of the module's source file, the SHA-256 of every module of the
    user's own code it imports (``"imports"``, module name -> SHA-256; present when there are
    any) and the version of the distribution providing the module's top-level package (if any).

    Taken when the module was imported, so it describes the code this process runs even if a
    file is edited afterwards (a new process then imports, and identifies, the new code).

    Parameters
    ----------
    cls : type
        An agent class returned by :func:`load_agent_class` (or any class of an imported module).

    Returns
    -------
    dict
        JSON-ready identity of the class's code.
    """
    original = getattr(cls, "wrapped_class", cls)
    module_name = original.__module__
    if module_name not in _SOURCES:
        _SOURCES[module_name] = _module_identity(sys.modules[module_name])
    return dict(_SOURCES[module_name])


def _module_identity(module: Any) -> dict[str, Any]:
    identity: dict[str, Any] = {"module": module.__name__}
    source = inspect.getsourcefile(module) if hasattr(module, "__file__") else None
    if source and os.path.isfile(source):
        identity["source_sha256"] = _file_sha256(source)
    # Without these, editing a helper module of the user's changes the numbers but not the
    # identity, and a sweep would reuse the old runs as if they were the new code's.
    imported = _user_imports(module.__name__)
    if imported:
        identity["imports"] = imported
    from importlib.metadata import PackageNotFoundError, packages_distributions, version

    top = module.__name__.partition(".")[0]
    for distribution in packages_distributions().get(top, [])[:1]:
        try:
            identity["version"] = version(distribution)
        except PackageNotFoundError:  # pragma: no cover - an inconsistent installation
            pass
    return identity


def _file_sha256(path: str) -> str:
    with open(path, "rb") as stream:
        return hashlib.sha256(stream.read()).hexdigest()


@functools.lru_cache(maxsize=1)
def _installed_roots() -> tuple[str, ...]:
    """Folders of the standard library and of installed packages (resolved), whose code is not the user's."""
    paths = sysconfig.get_paths()
    roots = {paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    try:
        roots.update(site.getsitepackages())
    except AttributeError:  # pragma: no cover - old virtualenvs without getsitepackages
        pass
    roots.add(site.getusersitepackages())
    return tuple(sorted(os.path.realpath(root) + os.sep for root in roots if root))


def _locate(name: str) -> tuple[str | None, bool]:
    """The file module ``name`` is (or would be) loaded from, and whether it is a namespace package.

    Found without running the module; ``(None, False)`` when there is no such module or it has
    no file (a built-in).
    """
    module = sys.modules.get(name)
    if module is not None:
        origin = getattr(module, "__file__", None)
        if isinstance(origin, str) and os.path.isfile(origin):
            return origin, False
        return None, hasattr(module, "__path__")
    try:  # finding a submodule imports its parent packages: only ever the user's (see _user_imports)
        spec = importlib.util.find_spec(name)
    except Exception:  # noqa: BLE001 - a name that is no module (an attribute, a typo) has no file
        return None, False
    if spec is None:
        return None, False
    if spec.has_location and isinstance(spec.origin, str) and os.path.isfile(spec.origin):
        return spec.origin, False
    return None, spec.submodule_search_locations is not None


def _is_user_code(name: str, origin: str) -> bool:
    """Whether module ``name`` at ``origin`` is the user's code rather than Python's, ours or an installed package's.

    Code outside the standard library and site-packages counts as the user's, an editable
    install included: following too much only ever makes new runs, following too little
    reuses old ones.
    """
    if name.partition(".")[0] == "dueling_gym":
        return False
    return not os.path.realpath(origin).startswith(_installed_roots())


def _imported_names(origin: str, name: str) -> list[str]:
    """Every module name the source at ``origin`` may import (any import statement, even inside functions)."""
    if not origin.endswith(".py"):
        return []
    try:
        with open(origin, "rb") as stream:
            tree = ast.parse(stream.read(), filename=origin)
    except (OSError, SyntaxError, ValueError):  # a file that changed or broke since it was imported
        return []
    package = name if os.path.basename(origin) == "__init__.py" else name.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                if node.level - 1 > len(parts):
                    continue
                base = ".".join(parts[:len(parts) - (node.level - 1)])
                full = ".".join(part for part in (base, node.module) if part)
            else:
                full = node.module or ""
            if not full:
                continue
            names.append(full)
            # ``from package import helper`` imports a module when ``helper`` is one.
            names += [f"{full}.{alias.name}" for alias in node.names if alias.name != "*"]
    return names


def _user_imports(module_name: str) -> dict[str, str]:
    """Module name -> SHA-256 of its file, for every module of the user's code ``module_name`` imports.

    Followed through the import statements of the user's modules (and their parent packages,
    which importing runs too); a module of the standard library, of an installed package or of
    dueling-gym ends the walk there, so its own imports are never read.
    """
    found: dict[str, str] = {}
    seen: set[str] = set()
    passable: set[str] = set()  # the user's modules and namespace packages: their submodules may be the user's
    pending = [module_name]
    while pending:
        name = pending.pop()
        parts = name.split(".")
        # Parents first: a package outside the user's code ends the walk before any of its
        # submodules is looked up (which would import that package).
        for candidate in (".".join(parts[:index]) for index in range(1, len(parts) + 1)):
            if candidate in seen:
                if candidate in passable:
                    continue
                break
            seen.add(candidate)
            origin, namespace = _locate(candidate)
            if namespace:
                passable.add(candidate)
                continue
            if origin is None or not _is_user_code(candidate, origin):
                break
            passable.add(candidate)
            if candidate != module_name:
                found[candidate] = _file_sha256(origin)
            pending += _imported_names(origin, candidate)
    return dict(sorted(found.items()))


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
