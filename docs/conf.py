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
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "README.md"]
suppress_warnings = ["myst.header"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
nitpicky = False

html_theme = "furo"
html_title = "dueling-gym"
html_static_path = ["_static"]
html_css_files = ["custom.css"]


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


def setup(app):
    app.connect("autodoc-process-docstring", _fenced_code_as_rest)
    app.connect("autodoc-process-docstring", _malformed_tables_as_literal)
    _generate.setup(app)
