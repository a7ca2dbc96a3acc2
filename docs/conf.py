"""Sphinx configuration of the dueling-gym documentation (furo theme, MyST Markdown pages).

Build it with ``sphinx-build -W -b html docs docs/_build/html`` (``-W``: warnings are errors).
The environment pages and the algorithm index are generated from the package itself at build
time (``docs/_generate.py``), so the documentation cannot drift from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import dueling_gym  # noqa: E402

from _generate import generate_pages  # noqa: E402

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
exclude_patterns = ["_build", "README.md", "algorithms/generated/measured/*"]  # included by the hand-written pages
suppress_warnings = ["myst.header"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
nitpicky = False

html_theme = "furo"
html_title = "dueling-gym"
html_static_path: list[str] = []

generate_pages(HERE)


def _fenced_code_as_rest(app, what, name, obj, options, lines):
    """Docstrings show examples as Markdown fences; autodoc reads reST, so turn them into code blocks."""
    converted, inside = [], False
    for line in lines:
        stripped = line.strip()
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


def setup(app):
    app.connect("autodoc-process-docstring", _fenced_code_as_rest)
