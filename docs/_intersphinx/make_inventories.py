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
_PYTHON_BUILTINS = ("int", "float", "str", "bool", "bytes", "dict", "list", "tuple", "set", "frozenset",
                    "object", "type")
PYTHON = [
    *((name, "py:class", "library/functions.html", None) for name in _PYTHON_BUILTINS),
    ("callable", "py:function", "library/functions.html", None),
    ("None", "py:data", "library/constants.html", None),
    ("True", "py:data", "library/constants.html", None),
    ("False", "py:data", "library/constants.html", None),
    ("ValueError", "py:exception", "library/exceptions.html", None),
    ("TypeError", "py:exception", "library/exceptions.html", None),
    ("KeyError", "py:exception", "library/exceptions.html", None),
    ("RuntimeError", "py:exception", "library/exceptions.html", None),
    ("FileNotFoundError", "py:exception", "library/exceptions.html", None),
    ("abc.ABC", "py:class", "library/abc.html", None),
    ("collections.abc.Callable", "py:class", "library/collections.abc.html", None),
    ("collections.abc.Iterable", "py:class", "library/collections.abc.html", None),
    ("collections.abc.Iterator", "py:class", "library/collections.abc.html", None),
    ("collections.abc.Mapping", "py:class", "library/collections.abc.html", None),
    ("collections.abc.Sequence", "py:class", "library/collections.abc.html", None),
    ("argparse.ArgumentParser", "py:class", "library/argparse.html", None),
    ("argparse.Namespace", "py:class", "library/argparse.html", None),
    ("argparse.ArgumentDefaultsHelpFormatter", "py:class", "library/argparse.html", None),
    ("os.PathLike", "py:class", "library/os.html", None),
    ("pathlib.Path", "py:class", "library/pathlib.html", None),
    ("types.ModuleType", "py:class", "library/types.html", None),
    ("typing.Any", "py:data", "library/typing.html", None),
    ("typing.Literal", "py:data", "library/typing.html", None),
    ("path-like object", "std:term", "glossary.html", "term-path-like-object"),
    ("sequence", "std:term", "glossary.html", "term-sequence"),
    ("iterable", "std:term", "glossary.html", "term-iterable"),
    ("mapping", "std:term", "glossary.html", "term-mapping"),
    ("callable", "std:term", "glossary.html", "term-callable"),
    ("function", "std:term", "glossary.html", "term-function"),
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
    ("numpy.random.Generator", "py:class", "reference/random/generator.html", None),
    ("numpy.random._generator.Generator", "py:class", "reference/random/generator.html", "numpy.random.Generator"),
    ("numpy.random.default_rng", "py:function", "reference/random/generator.html", None),
    ("numpy.random.SeedSequence", "py:class", "reference/random/bit_generators/generated/numpy.random.SeedSequence.html",
     None),
    ("numpy.random.bit_generator.SeedSequence", "py:class",
     "reference/random/bit_generators/generated/numpy.random.SeedSequence.html", "numpy.random.SeedSequence"),
    ("array_like", "std:term", "glossary.html", "term-array_like"),
]

GYMNASIUM = [
    ("gymnasium.Env", "py:class", "api/env/", None),
    ("gymnasium.core.Env", "py:class", "api/env/", "gymnasium.Env"),
    ("gymnasium.Wrapper", "py:class", "api/wrappers/", None),
    ("gymnasium.core.Wrapper", "py:class", "api/wrappers/", "gymnasium.Wrapper"),
    ("gymnasium.ActionWrapper", "py:class", "api/wrappers/action_wrappers/", None),
    ("gymnasium.core.ActionWrapper", "py:class", "api/wrappers/action_wrappers/", "gymnasium.ActionWrapper"),
    ("gymnasium.make", "py:function", "api/registry/", None),
    ("gymnasium.make_vec", "py:function", "api/registry/", None),
    ("gymnasium.envs.registration.EnvSpec", "py:class", "api/registry/", None),
    ("gymnasium.spaces.Discrete", "py:class", "api/spaces/fundamental/", None),
    ("gymnasium.spaces.discrete.Discrete", "py:class", "api/spaces/fundamental/", "gymnasium.spaces.Discrete"),
    ("gymnasium.spaces.Box", "py:class", "api/spaces/fundamental/", None),
    ("gymnasium.spaces.box.Box", "py:class", "api/spaces/fundamental/", "gymnasium.spaces.Box"),
    ("gymnasium.spaces.MultiDiscrete", "py:class", "api/spaces/fundamental/", None),
    ("gymnasium.spaces.Dict", "py:class", "api/spaces/composite/", None),
    ("gymnasium.vector.VectorEnv", "py:class", "api/vector/", None),
    ("gymnasium.vector.vector_env.VectorEnv", "py:class", "api/vector/", "gymnasium.vector.VectorEnv"),
    ("gymnasium.utils.RecordConstructorArgs", "py:class", "api/utils/", None),
    ("gymnasium.utils.record_constructor.RecordConstructorArgs", "py:class", "api/utils/",
     "gymnasium.utils.RecordConstructorArgs"),
]

SCIPY = [
    ("scipy.optimize.linprog", "py:function", "reference/generated/scipy.optimize.linprog.html", None),
    ("scipy.optimize.linear_sum_assignment", "py:function",
     "reference/generated/scipy.optimize.linear_sum_assignment.html", None),
]

TABLES = {"python": PYTHON, "numpy": NUMPY, "gymnasium": GYMNASIUM, "scipy": SCIPY}


def inventory_bytes(project: str, entries: list[tuple[str, str, str, str | None]]) -> bytes:
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
