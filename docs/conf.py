"""Sphinx configuration of the dueling-gym documentation (furo theme, MyST Markdown pages).

Build it with ``sphinx-build -W --keep-going -b html docs <output folder>`` (``-W``: warnings
are errors).  The environment pages, the algorithm pages and index, and a few fragments of
hand-written pages are generated from the package itself at build time (``docs/_generate.py``),
so the documentation cannot drift from the code.  They are generated into the build (below
Sphinx's doctree folder), never into ``docs/``: the sources may be read-only.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import dueling_gym  # noqa: E402

# The helper modules live beside this file: importing them must not write docs/__pycache__.
_write_bytecode = sys.dont_write_bytecode
sys.dont_write_bytecode = True
try:
    import _generate  # noqa: E402
    import _type_phrases  # noqa: E402
finally:
    sys.dont_write_bytecode = _write_bytecode

project = "dueling-gym"
author = "dueling-gym developers"
copyright = "2026, dueling-gym developers"
release = dueling_gym.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    # Copies MathJax 3 into the build (_static/mathjax) and points mathjax_path there: the pages
    # render their formulas without reaching a CDN.
    "sphinx-mathjax-offline",
    "sphinx.ext.viewcode",
    # A copy button on every code block; the prompts (``$ ``, ``>>> ``, ``... ``) and the output
    # lines of console sessions are left out of what it copies.
    "sphinx_copybutton",
]
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "README.md", "_intersphinx"]
suppress_warnings = ["myst.header"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
# ``members`` is given on each directive, not here: a default ``members: True`` would override a
# directive's own list of members (Sphinx replaces a listed value by a non-string default).
autodoc_default_options = {"show-inheritance": True}
# ``ArrayLike`` would otherwise be expanded into the union of numpy's private protocol classes.
# Sphinx leaves such an alias unexpanded only where the annotation is written as a string naming
# it; ``_type_phrases.unwrap_type_aliases`` handles the rest (the alias inside a union, and
# unions of module-level aliases that contain ``ArrayLike``).
autodoc_type_aliases = {"ArrayLike": "numpy.typing.ArrayLike"}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
# The type phrases of the docstrings are turned into references by ``_type_phrases`` (napoleon's
# own tokenizer splits shape tuples); napoleon passes the result on unchanged.
napoleon_preprocess_types = False
# Attributes as typed fields (like parameters), so their type phrases stay references.
napoleon_use_ivar = True
#: The words of the docstrings' type phrases that name something other than a class of that
#: name (read by ``_type_phrases``).  Not napoleon's ``napoleon_type_aliases``: napoleon merges that
#: table into ``autodoc_type_aliases`` when it reads attribute annotations, and the markup of its
#: values would then stand as class names in the rendered type hints.
type_phrase_aliases = {
    "ndarray": ":class:`~numpy.ndarray`",
    "array": ":class:`array <numpy.ndarray>`",
    "array_like": ":term:`numpy:array_like`",
    "int8": ":class:`~numpy.int8`",
    "int32": ":class:`~numpy.int32`",
    "int64": ":class:`~numpy.int64`",
    "uint8": ":class:`~numpy.uint8`",
    "float32": ":class:`~numpy.float32`",
    "float64": ":class:`~numpy.float64`",
    "Generator": ":class:`~numpy.random.Generator`",
    "SeedSequence": ":class:`~numpy.random.SeedSequence`",
    "path": ":term:`path <python:path-like object>`",
    "path-like": ":term:`path-like <python:path-like object>`",
    "Path": ":class:`~pathlib.Path`",
    "sequence": ":term:`python:sequence`",
    "sequences": ":term:`sequences <python:sequence>`",
    "iterable": ":term:`python:iterable`",
    "mapping": ":term:`python:mapping`",
    "callable": ":term:`python:callable`",
    "function": ":term:`python:function`",
}
# Every reference resolves: external names through the inventories below, the package's own
# through its API pages (a broken one fails the strict build).
nitpicky = True

# Third-party projects that have no stored inventory here (their ``objects.inv`` cannot be
# fetched at build time): the type hints and base classes that name them stay unlinked text.
nitpick_ignore_regex = [
    (r"py:.*", r"pettingzoo(\..+)?"),  # PettingZoo (the multi-agent environment's bases and returns)
    (r"py:.*", r"stable_baselines3(\..+)?"),  # Stable-Baselines3 (SB3DuelVecEnv's base class)
    (r"py:.*", r"numba(\..+)?"),  # Numba (the structref state classes of the kernel agents)
    (r"py:.*", r"torch(\..+)?"),  # PyTorch (the PPO trainer's network and tensors)
]

# No network at build time: each project's inventory is a file of the repository, written by
# _intersphinx/make_inventories.py from the names these pages reference.
intersphinx_mapping = {
    project: (url, str(HERE / "_intersphinx" / f"{project}.inv"))
    for project, url in {
        "python": "https://docs.python.org/3/",
        "numpy": "https://numpy.org/doc/stable/",
        "gymnasium": "https://gymnasium.farama.org/",
        "scipy": "https://docs.scipy.org/doc/scipy/",
    }.items()
}
intersphinx_timeout = 1

html_theme = "furo"
html_title = "dueling-gym"
html_static_path = ["_static"]
html_css_files = ["custom.css"]


def _repository_url() -> str | None:
    """The repository address that ``pyproject.toml`` declares under ``[project.urls]``, if any
    (the theme then links it in every page's footer)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        return None
    pyproject = HERE.parent / "pyproject.toml"
    if not pyproject.is_file():
        return None
    urls = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("urls", {})
    for key in ("Repository", "Source", "Source Code", "GitHub", "Homepage"):
        if urls.get(key):
            return urls[key]
    return None


html_theme_options = {}
if (_repository := _repository_url()) is not None:
    html_theme_options["footer_icons"] = [{
        "name": "Repository",
        "url": _repository,
        "html": "Source repository",
        "class": "",
    }]


def _fenced_code_as_rest(app, what, name, obj, options, lines):
    """Docstrings show examples as Markdown fences and sections as ``## Title`` lines (the
    environments, Gymnasium's layout); autodoc reads reST, so turn them into code blocks and
    rubrics."""
    converted, inside = [], False
    for line in lines:
        stripped = line.strip()
        if not inside and stripped.startswith("## ") and len(stripped) > 3:
            indent = line[: len(line) - len(line.lstrip())]
            converted += [f"{indent}.. rubric:: {stripped[3:].strip()}", ""]
            continue
        if stripped.startswith("```"):
            indent = line[: len(line) - len(line.lstrip())]
            if not inside:
                converted += [f"{indent}.. code-block:: {stripped[3:].strip() or 'text'}", ""]
            else:
                converted.append("")
            inside = not inside
            continue
        converted.append(("   " + line) if inside and line else line)
    lines[:] = converted


_BORDER = re.compile(r"^(\s*)(=+)(\s+=+)+\s*$")


def _malformed_tables_as_literal(app, what, name, obj, options, lines):
    """Show a reST simple table whose text runs into a column gap (which docutils rejects) as
    a literal block, as it reads in the source, instead of failing the build."""
    index = 0
    while index < len(lines):
        border = _BORDER.match(lines[index])
        if not border:
            index += 1
            continue
        end, borders = index + 1, 1
        while end < len(lines) and borders < 3 and lines[end].strip():
            borders += bool(_BORDER.match(lines[end]))
            end += 1
        table = lines[index:end]
        gaps = [i for i, char in enumerate(lines[index]) if char == " " and i >= len(border.group(1))]
        gaps = [i for i in gaps if i < len(lines[index].rstrip())]
        malformed = any(i < len(row) and row[i] != " " for row in table if not _BORDER.match(row) for i in gaps)
        if malformed:
            indent = border.group(1)
            lines[index:end] = [f"{indent}::", "", *(f"{indent}   {row[len(indent):]}" for row in table), ""]
            end = index + len(table) + 3
        index = end


def _is_private(cls: type) -> bool:
    return cls.__name__.startswith("_") or any(part.startswith("_") for part in cls.__module__.split("."))


def _public_bases(app, name, obj, options, bases):
    """Show the nearest documented ancestors in a class's *Bases* line: a private base of the
    package (a ``_Name`` class or one from a ``_module``) has no page of its own, so it is
    replaced by its own bases, recursively."""
    public: list[type] = []
    pending = list(bases)
    while pending:
        base = pending.pop(0)
        if isinstance(base, type) and base.__module__.startswith("dueling_gym") and _is_private(base):
            pending[:0] = [b for b in base.__bases__ if b is not object]
        elif base not in public:
            public.append(base)
    bases[:] = public or [object]


def setup(app):
    app.add_config_value("type_phrase_aliases", {}, "env", types=frozenset({dict}))
    app.connect("autodoc-process-bases", _public_bases)
    # After autodoc has recorded the type hints (it does so just before emitting the event).
    app.connect("autodoc-process-signature", _type_phrases.unwrap_type_aliases)
    # Ahead of napoleon (priority 500), which reads the type phrases.
    app.connect("autodoc-process-docstring", _type_phrases.convert_type_phrases, priority=400)
    app.connect("autodoc-process-docstring", _fenced_code_as_rest)
    app.connect("autodoc-process-docstring", _malformed_tables_as_literal)
    _generate.setup(app)
