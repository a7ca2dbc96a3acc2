"""Cross-references for the type phrases of NumPy-style docstrings.

A NumPy docstring gives each parameter, attribute and return value a type phrase such as
``ndarray of int64, shape (K, K)``, ``float, default 0.05`` or ``{"copeland", "borda"}, optional``
(numpydoc's conventions).  Napoleon can turn such phrases into references
(``napoleon_preprocess_types``), but its tokenizer splits at every ", ", also inside a shape
tuple, and then asks Sphinx for classes named ``shape (K`` and ``K)``.  So the phrases are
converted here, before napoleon reads the docstring (napoleon then passes them on verbatim):

* the phrase is split at the top level only (outside brackets, braces, quotes and inline
  literals) at ", ", " or ", " of ", " and " and " to ";
* a piece that the alias table of ``conf.py`` (``type_phrase_aliases``) names becomes that
  reference; a Python name that names a class (``int``, ``int64``, ``PreferenceMatrix``,
  ``numpy.random.Generator``: a builtin or NumPy scalar type, a capitalised or a dotted name)
  becomes a class reference, resolved like any other (so a misspelled name fails the nitpicky
  build), while a lower-case word (``label``, ``k``) stays text;
* ``optional`` and ``default <value>`` are shown as in numpydoc: *optional*, *default* ``<value>``;
* ``shape (...)``, ``same shape ...``, value sets ``{...}``, quoted strings, numbers and tuples
  ``(...)`` are shown as literals;
* any other piece (free words such as ``shipped name``) stays text: it names no object.

The type hints that autodoc writes into the descriptions (``autodoc_typehints = "description"``)
need two repairs, both made by :func:`unwrap_type_aliases`:

* an alias of ``autodoc_type_aliases`` inside a union (``ArrayLike | None``) is written by Sphinx
  as the repr of its placeholder, ``TypeAliasForwardRef('numpy.typing.ArrayLike')``, which the
  Python domain would read as two class names: the alias's target name takes its place, as
  Sphinx writes an alias that stands alone;
* an annotation that was evaluated before Sphinx saw it (a module-level alias such as
  ``PreferencesLike = PreferenceMatrix | ArrayLike | str``) holds ``ArrayLike`` expanded into the
  union of numpy's private protocol classes: that run of the union is written back as
  ``numpy.typing.ArrayLike`` (:data:`EXPANDED_ALIASES`).
"""

from __future__ import annotations

import re
import functools
import inspect
import sys
from collections.abc import Mapping
from typing import Any

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
#: Public aliases whose expansion (a union of private classes) is written back as the alias.
EXPANDED_ALIASES = ("numpy.typing.ArrayLike",)
_FORWARD_REFERENCE = re.compile(r"""TypeAliasForwardRef\((['"])(?P<name>[^'"]+)\1\)""")
_NAMES = re.compile(r"^\*{0,2}[A-Za-z_]\w*(?:, \*{0,2}[A-Za-z_]\w*)+$")
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


def convert_piece(piece: str, aliases: Mapping[str, str], namespace: Mapping[str, Any] | None = None) -> str:
    """One piece of a type phrase as reST (see the module docstring).

    ``namespace``: the globals of the module whose docstring holds the phrase; a capitalised
    name that it binds to a class (``PreferenceMatrix`` imported there) refers to that class by
    its full path, as the name means in that module.
    """
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
    if _NAME.match(text) and _names_a_type(text):
        bound = (namespace or {}).get(text) if "." not in text else None
        if isinstance(bound, type) and bound.__module__ != "builtins":
            return f":py:class:`~{bound.__module__}.{bound.__qualname__}`"
        # The package's own paths are long and read well by their last component.
        return f":py:class:`~{text}`" if text.startswith("dueling_gym.") else f":py:class:`{text}`"
    return text.replace("*", r"\*")


def convert_phrase(phrase: str, aliases: Mapping[str, str], namespace: Mapping[str, Any] | None = None) -> str:
    """A whole type phrase as reST."""
    return "".join(convert_piece(piece, aliases, namespace) for piece in split_phrase(phrase.strip()))


def _indentation(line: str) -> int:
    return len(line) - len(line.lstrip())


def convert_docstring(lines: list[str], aliases: Mapping[str, str],
                      namespace: Mapping[str, Any] | None = None) -> list[str]:
    """``lines`` of a docstring with the type phrases of its NumPy field sections converted.

    An entry line of a field section sits at the section header's indentation; its
    description is indented further.  In Returns and Yields an entry may be a type alone.  An
    attribute entry that names several attributes (``wins, losses : ndarray``) is written once
    per attribute: napoleon makes it one ``:ivar wins, losses:`` field, which Sphinx would read
    as the type ``wins,`` of an attribute ``losses``.
    """
    converted: list[str] = []
    section, indent, number = None, 0, 0
    while number < len(lines):
        line = lines[number]
        following = lines[number + 1] if number + 1 < len(lines) else ""
        number += 1
        if line.strip() and _HEADER_UNDERLINE.match(following):
            section, indent = line.strip().lower(), _indentation(line)
            converted.append(line)
            continue
        if section not in FIELD_SECTIONS or not line.strip() or _HEADER_UNDERLINE.match(line):
            converted.append(line)
            continue
        if _indentation(line) < indent:
            section = None
        if _indentation(line) != indent or section is None:
            converted.append(line)
            continue
        entry = _ENTRY.match(line.strip())
        names = entry.group("names") if entry else (line.strip() if _NAMES.match(line.strip()) else None)
        if section == "attributes" and names and ", " in names:
            end = number
            while end < len(lines) and (not lines[end].strip() or _indentation(lines[end]) > indent):
                end += 1
            kind = " : " + convert_phrase(entry.group("type"), aliases, namespace) if entry else ""
            for name in names.split(", "):
                converted += [" " * indent + name + kind, *lines[number:end]]
            number = end
        elif entry:
            converted.append(" " * indent + entry.group("names") + " : "
                             + convert_phrase(entry.group("type"), aliases, namespace))
        elif section in ("returns", "yields", "receives"):
            converted.append(" " * indent + convert_phrase(line.strip(), aliases, namespace))
        else:
            converted.append(line)
    return converted


def _module_namespace(obj: Any) -> Mapping[str, Any]:
    """The globals of the module that defines ``obj`` (a property's or cached property's getter)."""
    if inspect.ismodule(obj):
        return vars(obj)
    target = getattr(obj, "fget", None) or getattr(obj, "func", None) or obj
    module = sys.modules.get(getattr(target, "__module__", None) or "")
    return vars(module) if module else {}


def convert_type_phrases(app, what, name, obj, options, lines) -> None:
    """``autodoc-process-docstring`` handler (connected ahead of napoleon's)."""
    lines[:] = convert_docstring(lines, app.config.type_phrase_aliases or {}, _module_namespace(obj))


def _names_a_type(name: str) -> bool:
    """Whether a Python name of a type phrase stands for a class: a dotted path, a capitalised
    name (``PreferenceMatrix``), a builtin type (``int``) or a NumPy scalar type (``int64``).  Other
    lower-case words (``label``, ``first``, ``k``) are prose, not class names."""
    import builtins

    if "." in name or name[0].isupper():
        return True
    if isinstance(getattr(builtins, name, None), type):
        return True
    import numpy

    return isinstance(getattr(numpy, name, None), type)


def unwrap_forward_references(annotation: str, expansions: Mapping[str, str] | None = None) -> str:
    """``annotation`` (a type hint as autodoc writes it) with each alias placeholder
    ``TypeAliasForwardRef('name')`` replaced by ``name`` and each expansion of ``expansions``
    (expanded text -> alias name) replaced by the alias name."""
    annotation = _FORWARD_REFERENCE.sub(lambda match: match.group("name"), annotation)
    for expanded, alias in (expansions or {}).items():
        annotation = annotation.replace(expanded, alias)
    return annotation


@functools.lru_cache(maxsize=None)
def alias_expansions(mode: str = "fully-qualified", aliases: tuple[str, ...] = EXPANDED_ALIASES) -> dict[str, str]:
    """Expanded text -> alias name for ``aliases``, written as autodoc writes type hints in
    ``mode`` (``"fully-qualified"``, or ``"smart"``: a ``~`` before each dotted name)."""
    from importlib import import_module

    from sphinx.util.typing import stringify_annotation

    expansions = {}
    for alias in aliases:
        module, _, name = alias.rpartition(".")
        expanded = stringify_annotation(getattr(import_module(module), name), mode)
        written = alias if mode == "fully-qualified" else f"~{alias}"
        if expanded != written:
            expansions[expanded] = written
    return expansions


def _initializer_hints(cls: type, type_aliases: Mapping[str, str], mode: str) -> dict[str, str]:
    """The parameter type hints of ``cls.__init__``, evaluated in the module that defines it."""
    from sphinx.util.inspect import signature
    from sphinx.util.typing import stringify_annotation

    initializer = getattr(cls, "__init__", None)
    if initializer is None or initializer is object.__init__:
        return {}
    try:
        parameters = signature(initializer, bound_method=True, type_aliases=type_aliases).parameters
    except (TypeError, ValueError):
        return {}
    return {name: stringify_annotation(parameter.annotation, mode) for name, parameter in parameters.items()
            if parameter.annotation is not parameter.empty}


def unwrap_type_aliases(app, what, name, obj, options, signature, return_annotation) -> None:
    """``autodoc-process-signature`` handler: repair the type hints autodoc has just recorded for
    ``name``.  Returns nothing, so the signature stays as it is.

    Besides the repairs of the module docstring, two recordings are replaced.  A class's hints
    are recorded from the class, where ``typing.get_type_hints`` sees the class's own annotations
    rather than those of ``__init__``, so a string annotation of ``__init__`` (every module with
    ``from __future__ import annotations``) would stay as written (``gym.Env``, ``SeedLike``): they
    are evaluated from ``__init__`` itself.  An attribute whose value is callable (a sampler
    instance) gets the hints of its ``__call__``, which are not the attribute's type: they are
    dropped.
    """
    annotations = app.env.current_document.autodoc_annotations
    mode = "smart" if app.config.autodoc_typehints_format == "short" else "fully-qualified"
    if what in ("attribute", "data"):
        annotations.pop(name, None)
        return
    recorded = annotations.get(name)
    if recorded is None:
        return
    if what in ("class", "exception") and isinstance(obj, type):
        recorded.update(_initializer_hints(obj, app.config.autodoc_type_aliases, mode))
    expansions = alias_expansions(mode)
    for parameter, annotation in recorded.items():
        recorded[parameter] = unwrap_forward_references(annotation, expansions)
