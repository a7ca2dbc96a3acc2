"""Pieces the modules of the ``dueling-gym`` command line share.

The argparse value types of counts and fractions (:func:`positive_int`, :func:`non_negative_int`,
:func:`fraction`), the help formatter that ends an option's help with its default
(:class:`DefaultsHelpFormatter`) and the Markdown tables the commands print (:func:`format_table`).
The commands themselves live in :mod:`dueling_gym.cli` and, for ``dueling-gym problems``,
:mod:`dueling_gym.cli_problems`.
"""

from __future__ import annotations

import argparse
import re

__all__ = ["DefaultsHelpFormatter", "format_table", "fraction", "non_negative_int", "positive_int"]


def format_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, every column padded to its widest cell.

    Parameters
    ----------
    header : list of str
        The column names.
    rows : list of list of str
        The cells, one list per row, in the order of ``header``.

    Returns
    -------
    str
        The table's lines (header, separator, rows), without a final newline.
    """
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    separator = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), separator, *(line(row) for row in rows)])


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Ends an option's help with its default, once: not when the help already states it in words,
    nor for flags and options whose default is None (nothing worth printing)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (not action.option_strings or action.nargs == 0 or default is None or default is argparse.SUPPRESS
                or re.search(r"\bdefault\b", text, re.IGNORECASE) or "%(default)" in text):
            return text
        return text + " (default: %(default)s)"


def _integer_at_least(text: str, minimum: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
    return value


def positive_int(text: str) -> int:
    """The argparse type of a count of at least 1 (workers, comparisons, a cutoff).

    Parameters
    ----------
    text : str
        The option's value as given on the command line.

    Returns
    -------
    int
        The integer.

    Raises
    ------
    argparse.ArgumentTypeError
        When ``text`` is not an integer, or is below 1.
    """
    return _integer_at_least(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """The argparse type of a seed or a count that may be 0.

    Parameters
    ----------
    text : str
        The option's value as given on the command line.

    Returns
    -------
    int
        The integer.

    Raises
    ------
    argparse.ArgumentTypeError
        When ``text`` is not an integer, or is negative.
    """
    return _integer_at_least(text, 0, "a non-negative integer")


def fraction(text: str) -> float:
    """The argparse type of a share in (0, 1].

    Parameters
    ----------
    text : str
        The option's value as given on the command line.

    Returns
    -------
    float
        The number.

    Raises
    ------
    argparse.ArgumentTypeError
        When ``text`` is not a number, or lies outside (0, 1].
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text}")
    return value
