"""Write the intersphinx inventories that the documentation links external names with.

This script is the source of the ``*.inv`` files beside it; run it again after changing the
tables below (``python docs/_intersphinx/make_inventories.py``) and commit what it writes.

The documentation is built without network access, so Sphinx cannot fetch the projects' own
``objects.inv``.  These files stand in for them and list only the external names that the
documentation references (in docstrings, type hints and pages), each with the address of its
entry in the project's public documentation.  A name that the documentation starts to use
must be added here (the nitpicky build, ``sphinx-build -n``, reports it).

Besides the public name, a few entries give the path that a class reports at run time when it
differs (``numpy.random.Generator`` is ``numpy.random._generator.Generator`` to ``inspect``,
``gymnasium.Env`` is ``gymnasium.core.Env``): type hints are rendered from the live objects,
so they name that path.  Sphinx's own inventories list such paths too (as the ``canonical``
name of the documented class); both point at the same page.

The format is Sphinx's inventory version 2: four header lines, then zlib-compressed lines
``name domain:role priority uri display-name`` (``$`` at the end of ``uri`` stands for
``name``; ``-`` as display name means the name itself).
"""

from __future__ import annotations

import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: project key -> (project name, documentation base URL).  conf.py maps the same keys.
PROJECTS = {
    "python": ("Python", "https://docs.python.org/3/"),
    "numpy": ("NumPy", "https://numpy.org/doc/stable/"),
    "gymnasium": ("Gymnasium", "https://gymnasium.farama.org/"),
    "scipy": ("SciPy", "https://docs.scipy.org/doc/scipy/"),
}

# Each entry: (name, "domain:role", page relative to the project's base URL, anchor or None for
# "#<name>").  Terms of the glossary are ``std:term`` with the anchor Sphinx gives them.
Entry = tuple[str, str, str, str | None]


def _on_page(role: str, page: str, names) -> list[Entry]:
    """One entry per name, all with ``role`` on ``page`` and anchored at the name itself."""
    return [(name, role, page, None) for name in names]


def _glossary_terms(terms) -> list[Entry]:
    """The glossary entries of ``terms``, at the anchors Sphinx gives them (``term-`` and the term, dashed)."""
    return [(term, "std:term", "glossary.html", "term-" + term.replace(" ", "-")) for term in terms]


def _class_and_runtime_path(name: str, runtime_path: str, page: str) -> list[Entry]:
    """A class under its public ``name`` and under the path it reports at run time, both at its entry."""
    return [(name, "py:class", page, None), (runtime_path, "py:class", page, name)]


_PYTHON_BUILTINS = ("int", "float", "str", "bool", "bytes", "dict", "list", "tuple", "set", "frozenset",
                    "object", "type")
PYTHON = [
    *_on_page("py:class", "library/functions.html", _PYTHON_BUILTINS),
    ("callable", "py:function", "library/functions.html", None),
    *_on_page("py:data", "library/constants.html", ("None", "True", "False")),
    *_on_page("py:exception", "library/exceptions.html",
              ("ValueError", "TypeError", "KeyError", "RuntimeError", "FileNotFoundError")),
    ("abc.ABC", "py:class", "library/abc.html", None),
    *_on_page("py:class", "library/collections.abc.html",
              (f"collections.abc.{name}" for name in ("Callable", "Iterable", "Iterator", "Mapping", "Sequence"))),
    *_on_page("py:class", "library/argparse.html",
              ("argparse.ArgumentParser", "argparse.Namespace", "argparse.ArgumentDefaultsHelpFormatter")),
    ("os.PathLike", "py:class", "library/os.html", None),
    ("pathlib.Path", "py:class", "library/pathlib.html", None),
    ("types.ModuleType", "py:class", "library/types.html", None),
    *_on_page("py:data", "library/typing.html", ("typing.Any", "typing.Literal")),
    *_glossary_terms(("path-like object", "sequence", "iterable", "mapping", "callable", "function")),
]

_NUMPY_SCALARS = ("bool", "bool_", "int8", "int32", "int64", "uint8", "float32", "float64", "integer", "floating")
NUMPY = [
    ("numpy.ndarray", "py:class", "reference/generated/numpy.ndarray.html", None),
    ("numpy.dtype", "py:class", "reference/generated/numpy.dtype.html", None),
    *((f"numpy.{name}", "py:class", "reference/arrays.scalars.html", None) for name in _NUMPY_SCALARS),
    ("numpy.typing.ArrayLike", "py:data", "reference/typing.html", None),
    ("numpy.typing.NDArray", "py:data", "reference/typing.html", None),
    # Type hints refer to the two aliases as classes.
    ("numpy.typing.ArrayLike", "py:class", "reference/typing.html", None),
    ("numpy.typing.NDArray", "py:class", "reference/typing.html", None),
    *_class_and_runtime_path("numpy.random.Generator", "numpy.random._generator.Generator",
                             "reference/random/generator.html"),
    ("numpy.random.default_rng", "py:function", "reference/random/generator.html", None),
    *_class_and_runtime_path("numpy.random.SeedSequence", "numpy.random.bit_generator.SeedSequence",
                             "reference/random/bit_generators/generated/numpy.random.SeedSequence.html"),
    *_glossary_terms(("array_like",)),
]

GYMNASIUM = [
    *_class_and_runtime_path("gymnasium.Env", "gymnasium.core.Env", "api/env/"),
    *_class_and_runtime_path("gymnasium.Wrapper", "gymnasium.core.Wrapper", "api/wrappers/"),
    *_class_and_runtime_path("gymnasium.ActionWrapper", "gymnasium.core.ActionWrapper",
                             "api/wrappers/action_wrappers/"),
    *_on_page("py:function", "api/registry/", ("gymnasium.make", "gymnasium.make_vec")),
    ("gymnasium.envs.registration.EnvSpec", "py:class", "api/registry/", None),
    *_class_and_runtime_path("gymnasium.spaces.Discrete", "gymnasium.spaces.discrete.Discrete",
                             "api/spaces/fundamental/"),
    *_class_and_runtime_path("gymnasium.spaces.Box", "gymnasium.spaces.box.Box", "api/spaces/fundamental/"),
    ("gymnasium.spaces.MultiDiscrete", "py:class", "api/spaces/fundamental/", None),
    ("gymnasium.spaces.Dict", "py:class", "api/spaces/composite/", None),
    *_class_and_runtime_path("gymnasium.vector.VectorEnv", "gymnasium.vector.vector_env.VectorEnv", "api/vector/"),
    *_class_and_runtime_path("gymnasium.utils.RecordConstructorArgs",
                             "gymnasium.utils.record_constructor.RecordConstructorArgs", "api/utils/"),
]

SCIPY = [
    ("scipy.optimize.linprog", "py:function", "reference/generated/scipy.optimize.linprog.html", None),
    ("scipy.optimize.linear_sum_assignment", "py:function",
     "reference/generated/scipy.optimize.linear_sum_assignment.html", None),
]

TABLES = {"python": PYTHON, "numpy": NUMPY, "gymnasium": GYMNASIUM, "scipy": SCIPY}


def inventory_bytes(project: str, entries: list[Entry]) -> bytes:
    """The inventory (version 2) of ``entries`` for ``project`` (a key of :data:`PROJECTS`).

    The anchor of an entry is the name itself unless given (the fourth field); a ``std:term``
    entry shows the term as written.
    """
    name_of_project, _ = PROJECTS[project]
    header = ("# Sphinx inventory version 2\n"
              f"# Project: {name_of_project}\n"
              "# Version: \n"
              "# The remainder of this file is compressed using zlib.\n").encode()
    lines = []
    seen = set()
    for name, role, page, anchor in entries:
        if (name, role) in seen:
            raise ValueError(f"{project}: {name} ({role}) listed twice")
        seen.add((name, role))
        uri = f"{page}#{anchor}" if anchor else f"{page}#$"
        lines.append(f"{name} {role} 1 {uri} -\n")
    return header + zlib.compress("".join(sorted(lines)).encode(), 9)


def main() -> None:
    for project, entries in TABLES.items():
        path = HERE / f"{project}.inv"
        path.write_bytes(inventory_bytes(project, entries))
        print(f"{path.name}: {len(entries)} names")


if __name__ == "__main__":
    main()
