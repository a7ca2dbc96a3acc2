"""Cross-references for the type phrases of NumPy-style docstrings.

A NumPy docstring gives each parameter, attribute and return value a type phrase such as
``ndarray of int64, shape (K, K)``, ``float, default 0.05`` or ``{"copeland", "borda"}, optional``
(numpydoc's conventions).  Napoleon can turn such phrases into references
(``napoleon_preprocess_types``), but its tokenizer splits at every ", ", also inside a shape
tuple, and then asks Sphinx for classes named ``shape (K`` and ``K)``.  So the phrases are
converted here, before napoleon reads the docstring (napoleon then passes them on verbatim):

* the phrase is split at the top level only (outside brackets, braces, quotes and inline
  literals) at ", ", " or ", " of ", " and " and " to ";
* a piece that napoleon's type alias table (``napoleon_type_aliases``) names becomes that
  reference; a Python name (``int``, ``PreferenceMatrix``, ``numpy.random.Generator``) becomes a
  class reference, resolved like any other (so a misspelled name fails the nitpicky build);
* ``optional`` and ``default <value>`` are shown as in numpydoc: *optional*, *default* ``<value>``;
* ``shape (...)``, ``same shape ...``, value sets ``{...}``, quoted strings, numbers and tuples
  ``(...)`` are shown as literals;
* any other piece (free words such as ``shipped name``) stays text: it names no object.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: The NumPy sections whose entries are ``name : type`` (or ``type`` alone, in Returns/Yields).
FIELD_SECTIONS = frozenset({"parameters", "other parameters", "attributes", "returns", "yields", "receives",
                            "keyword arguments"})
#: The top-level separators of a type phrase, kept as text.
SEPARATORS = (", or ", ", and ", " or ", " and ", " of ", " to ", ", ")
_OPENING, _CLOSING = "([{", ")]}"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*(\.[A-Za-z_][A-Za-z_0-9]*)*$")
_NUMBER = re.compile(r"^[-+]?(\d[\d_]*\.?\d*(e[-+]?\d+)?|\.\d+)$", re.I)
_SINGLETONS = frozenset({"None", "True", "False"})
_HEADER_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_ENTRY = re.compile(r"^(?P<names>\*{0,2}[A-Za-z_]\w*(?:, \*{0,2}[A-Za-z_]\w*)*) : (?P<type>.+)$")


def split_phrase(phrase: str) -> list[str]:
    """``phrase`` cut at its top-level separators; the separators are items of their own."""
    pieces: list[str] = []
    depth, quote, start, index = 0, "", 0, 0
    while index < len(phrase):
        char = phrase[index]
        if quote:
            if phrase.startswith(quote, index):
                index += len(quote) - 1
                quote = ""
        elif phrase.startswith("``", index):
            quote, index = "``", index + 1
        elif char in "\"'":
            quote = char
        elif char in _OPENING:
            depth += 1
        elif char in _CLOSING:
            depth = max(depth - 1, 0)
        elif depth == 0:
            separator = next((s for s in SEPARATORS if phrase.startswith(s, index)), None)
            if separator:
                pieces += [phrase[start:index], separator]
                index += len(separator)
                start = index
                continue
        index += 1
    pieces.append(phrase[start:])
    return [piece for piece in pieces if piece]


def _literal(text: str) -> str:
    text = text.strip()
    if text.startswith("``") and text.endswith("``"):
        return text
    return f"``{text}``"


def convert_piece(piece: str, aliases: Mapping[str, str]) -> str:
    """One piece of a type phrase as reST (see the module docstring)."""
    text = piece.strip()
    if piece in SEPARATORS or not text:
        return piece
    if text in aliases:
        return aliases[text]
    if text == "optional":
        return "*optional*"
    if text.startswith("default ") or text.startswith("default="):
        return f"*default* {_literal(text[len('default') + 1:])}"
    shape = re.match(r"^(same shape|shape)\b\s*(.*)$", text)
    if shape:
        return shape.group(1) + (f" {_literal(shape.group(2))}" if shape.group(2) else "")
    if text in _SINGLETONS:
        return f":py:obj:`{text}`"
    if text[0] in "{(\"'" or _NUMBER.match(text):
        return _literal(text)
    if "`" in text:  # already reST
        return text
    if _NAME.match(text):
        return f":py:class:`{text}`"
    return text.replace("*", r"\*")


def convert_phrase(phrase: str, aliases: Mapping[str, str]) -> str:
    """A whole type phrase as reST."""
    return "".join(convert_piece(piece, aliases) for piece in split_phrase(phrase.strip()))


def convert_docstring(lines: list[str], aliases: Mapping[str, str]) -> list[str]:
    """``lines`` of a docstring with the type phrases of its NumPy field sections converted.

    An entry line of a field section sits at the section header's indentation; its
    description is indented further.  In Returns and Yields an entry may be a type alone.
    """
    converted = list(lines)
    section, indent = None, 0
    for number, line in enumerate(lines):
        following = lines[number + 1] if number + 1 < len(lines) else ""
        if line.strip() and _HEADER_UNDERLINE.match(following):
            section, indent = line.strip().lower(), len(line) - len(line.lstrip())
            continue
        if section not in FIELD_SECTIONS or not line.strip() or _HEADER_UNDERLINE.match(line):
            continue
        line_indent = len(line) - len(line.lstrip())
        if line_indent < indent:
            section = None
            continue
        if line_indent > indent:
            continue  # a description
        entry = _ENTRY.match(line.strip())
        if entry:
            converted[number] = " " * indent + entry.group("names") + " : " + convert_phrase(entry.group("type"),
                                                                                              aliases)
        elif section in ("returns", "yields", "receives"):
            converted[number] = " " * indent + convert_phrase(line.strip(), aliases)
    return converted


def convert_type_phrases(app, what, name, obj, options, lines) -> None:
    """``autodoc-process-docstring`` handler (connected ahead of napoleon's)."""
    lines[:] = convert_docstring(lines, app.config.napoleon_type_aliases or {})
