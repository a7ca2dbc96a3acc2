"""``rgb_array`` frames of the environments, drawn with NumPy only (no plotting library).

A frame shows the step ``t`` (duels played this episode) at its top left, above two heat maps
side by side, both indexed ``[row contestant, column contestant]``, with the contestants'
indices (arms, or the edges of a combinatorial problem) along their top and left edges:

* left, the *empirical preference matrix* ``W[i, j] / (W[i, j] + W[j, i])`` on a diverging
  scale: blue below 1/2 (``i`` loses to ``j`` more often), white at 1/2, red above 1/2; pairs not
  yet duelled are grey;
* right, the *duel counts* ``W[i, j] + W[j, i]`` (self-duels ``W[i, i]`` on the diagonal) on a
  white-to-green scale, logarithmic and relative to the largest count of the frame.

Pairs that cannot duel at all (edges at different positions of a combinatorial problem) are dark.
When the contestants are too many for every index to fit, every 2nd, 5th, 10th, 20th, ...
contestant is labelled.  Frames have a fixed size, :data:`FRAME_SHAPE`, whose sides are
multiples of 16 as video encoders prefer, so ``gymnasium.wrappers.RecordVideo`` can record an
episode.

Rendering stays cheap: the heat maps are coloured once per contestant pair and only then
enlarged, in ``uint8``; the labelled background is drawn once per number of contestants and
cached; text comes from a built-in 3x5-pixel font of digits.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["FRAME_SHAPE", "PANEL_TOP", "PANEL_LEFTS", "PANEL_SIDE", "preference_frame", "blank_frame"]

_PANEL = 256  # side of one heat map, in pixels
_MARGIN = 16
#: Side of one heat map, in pixels.
PANEL_SIDE = _PANEL
#: First pixel row of the heat maps: a header row with ``t`` and a row of column labels above.
PANEL_TOP = 2 * _MARGIN
_GUTTER = 2 * _MARGIN  # left of each heat map, for its row labels
#: First pixel column of the left (preferences) and right (counts) heat maps.
PANEL_LEFTS = (_GUTTER, 2 * _GUTTER + _PANEL)
#: ``(height, width, 3)`` of every frame.
FRAME_SHAPE = (PANEL_TOP + _PANEL + _MARGIN, PANEL_LEFTS[1] + _PANEL + _MARGIN, 3)

_BACKGROUND = np.array([245, 245, 245], dtype=np.float64)
_UNPLAYED = np.array([200, 200, 200], dtype=np.float64)
_INCOMPARABLE = np.array([70, 70, 70], dtype=np.float64)
_WHITE = np.array([255, 255, 255], dtype=np.float64)
_LOSES = np.array([33, 102, 172], dtype=np.float64)  # blue: empirical preference 0
_WINS = np.array([178, 24, 43], dtype=np.float64)  # red: empirical preference 1
_MOST = np.array([0, 90, 50], dtype=np.float64)  # dark green: the largest count
_INK = np.array([40, 40, 40], dtype=np.uint8)  # labels and the step

# A 3x5-pixel font (rows top to bottom), drawn at _SCALE pixels per font pixel.
_FONT = {
    "0": ("111", "101", "101", "101", "111"),
    "1": ("010", "110", "010", "010", "111"),
    "2": ("111", "001", "111", "100", "111"),
    "3": ("111", "001", "111", "001", "111"),
    "4": ("101", "101", "111", "001", "001"),
    "5": ("111", "100", "111", "001", "111"),
    "6": ("111", "100", "111", "101", "111"),
    "7": ("111", "001", "010", "010", "010"),
    "8": ("111", "101", "111", "101", "111"),
    "9": ("111", "101", "111", "001", "111"),
    "t": ("010", "111", "010", "010", "011"),
    "=": ("000", "111", "000", "111", "000"),
}
_SCALE = 2
_GLYPHS = {
    character: np.kron(np.array([[pixel == "1" for pixel in row] for row in rows]),
                       np.ones((_SCALE, _SCALE), dtype=bool))
    for character, rows in _FONT.items()
}
_GLYPH_HEIGHT, _GLYPH_WIDTH = _GLYPHS["0"].shape
_ADVANCE = _GLYPH_WIDTH + _SCALE  # one font pixel between characters
_LABEL_GAP = 4  # pixels between a label and its heat map


def _text_width(text: str) -> int:
    return len(text) * _ADVANCE - _SCALE


def _draw_text(frame: NDArray[np.uint8], text: str, top: int, left: int) -> None:
    """Write ``text`` (digits, ``t``, ``=``) into ``frame`` with its top-left corner at
    ``(top, left)``; whatever falls outside the frame is clipped."""
    mask = np.zeros((_GLYPH_HEIGHT, _text_width(text)), dtype=bool)
    for position, character in enumerate(text):
        start = position * _ADVANCE
        mask[:, start:start + _GLYPH_WIDTH] = _GLYPHS[character]
    rows = slice(max(top, 0), min(top + mask.shape[0], frame.shape[0]))
    columns = slice(max(left, 0), min(left + mask.shape[1], frame.shape[1]))
    if rows.start >= rows.stop or columns.start >= columns.stop:
        return
    visible = mask[rows.start - top:rows.stop - top, columns.start - left:columns.stop - left]
    frame[rows, columns][visible] = _INK


def _geometry(n: int) -> tuple[int, int, int]:
    """``(cell, side, offset)``: pixels per contestant (at least one: beyond 256 contestants the
    map is sampled), side of the drawn map, and its offset inside the panel (centred)."""
    cell = max(1, _PANEL // n)
    side = min(_PANEL, cell * n)
    return cell, side, (_PANEL - side) // 2


def _label_stride(n: int, side: int) -> int:
    """Label every contestant whose index is a multiple of the smallest 1, 2, 5, 10, 20, 50, ...
    that leaves room between neighbouring column labels (the widest one sets the room)."""
    needed = _text_width(str(n - 1)) + _LABEL_GAP
    stride, steps = 1, (2, 2.5, 2)  # 1, 2, 5, 10, 20, 50, ...
    while stride * side / n < needed and stride < n:
        stride = int(stride * steps[0])
        steps = steps[1:] + steps[:1]
    return stride


def blank_frame() -> NDArray[np.uint8]:
    """A frame with empty panels and no labels (before the first reset)."""
    frame = np.empty(FRAME_SHAPE, dtype=np.uint8)
    frame[:] = _BACKGROUND.astype(np.uint8)
    for left in PANEL_LEFTS:
        frame[PANEL_TOP:PANEL_TOP + _PANEL, left:left + _PANEL] = _UNPLAYED.astype(np.uint8)
    return frame


@lru_cache(maxsize=16)
def _labelled_background(n: int) -> NDArray[np.uint8]:
    """The background with the contestants' indices along both heat maps (read-only, cached:
    it depends on ``n`` alone, and drawing text is the slowest part of a frame)."""
    frame = np.empty(FRAME_SHAPE, dtype=np.uint8)
    frame[:] = _BACKGROUND.astype(np.uint8)
    _, side, offset = _geometry(n)
    stride = _label_stride(n, side)
    for index in range(0, n, stride):
        centre = offset + (index + 0.5) * side / n
        label = str(index)
        width = _text_width(label)
        row_top = PANEL_TOP + int(round(centre - _GLYPH_HEIGHT / 2))
        column_top = PANEL_TOP - _LABEL_GAP - _GLYPH_HEIGHT
        for panel_left in PANEL_LEFTS:
            _draw_text(frame, label, row_top, panel_left + offset - _LABEL_GAP - width)
            _draw_text(frame, label, column_top, panel_left + int(round(centre - width / 2)))
    frame.flags.writeable = False
    return frame


def _blend(low: NDArray[np.float64], high: NDArray[np.float64], weight: NDArray[np.float64]) -> NDArray[np.float64]:
    weight = weight[..., None]
    return (1.0 - weight) * low + weight * high


def preference_frame(
    wins: ArrayLike, comparable: ArrayLike | None = None, *, t: int | None = None
) -> NDArray[np.uint8]:
    """Draw the heat maps of a win-count matrix, with the contestants' indices and the step.

    Parameters
    ----------
    wins : array of shape (n, n)
        ``wins[i, j]``: how often contestant ``i`` beat contestant ``j`` (non-negative counts).
    comparable : bool array of shape (n, n), optional
        Which pairs can duel at all; the others are drawn dark.  Default: every pair.
    t : int, optional
        The step to show at the top left (``t=...``); nothing is shown when omitted.

    Returns
    -------
    ndarray of uint8, shape :data:`FRAME_SHAPE`
    """
    wins = np.asarray(wins, dtype=np.float64)
    if wins.ndim != 2 or wins.shape[0] != wins.shape[1] or wins.shape[0] == 0:
        raise ValueError(f"wins must be a square (n, n) matrix, got shape {wins.shape}")
    n = wins.shape[0]
    counts = wins + wins.T
    counts[np.diag_indices(n)] = np.diag(wins)  # a self-duel is one duel, counted once
    played = counts > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        empirical = np.where(played, wins / np.where(played, wins + wins.T, 1.0), 0.5)
    empirical[np.diag_indices(n)] = 0.5
    left = np.where(
        (empirical < 0.5)[..., None],
        _blend(_LOSES, _WHITE, np.clip(2.0 * empirical, 0.0, 1.0)),
        _blend(_WHITE, _WINS, np.clip(2.0 * empirical - 1.0, 0.0, 1.0)),
    )
    left[~played] = _UNPLAYED
    largest = counts.max()
    scale = np.log1p(counts) / np.log1p(largest) if largest > 0 else np.zeros_like(counts)
    right = _blend(_WHITE, _MOST, scale)
    if comparable is not None:
        comparable = np.asarray(comparable, dtype=bool)
        if comparable.shape != wins.shape:
            raise ValueError(f"comparable must have the shape of wins {wins.shape}, got {comparable.shape}")
        left[~comparable] = _INCOMPARABLE
        right[~comparable] = _INCOMPARABLE

    # Every contestant gets a square of `cell` pixels, separated by a background line when
    # cells are large.  Colours are rounded per pair, before enlarging: n x n values, not 256 x 256.
    cell, side, offset = _geometry(n)
    index = (np.arange(side) * n) // side if cell == 1 else np.arange(side) // cell
    frame = _labelled_background(n).copy()
    top = PANEL_TOP + offset
    background = _BACKGROUND.astype(np.uint8)
    for panel, panel_left in ((left, PANEL_LEFTS[0]), (right, PANEL_LEFTS[1])):
        start = panel_left + offset
        colours = np.rint(panel).astype(np.uint8)
        # Two one-axis takes: several times faster than one np.ix_ gather of the same pixels.
        frame[top:top + side, start:start + side] = colours.take(index, axis=0).take(index, axis=1)
        if cell >= 6:
            lines = np.arange(cell - 1, side, cell)
            frame[top + lines, start:start + side] = background
            frame[top:top + side, start + lines] = background
    if t is not None:
        _draw_text(frame, f"t={int(t)}", (PANEL_TOP - _MARGIN - _GLYPH_HEIGHT) // 2, PANEL_LEFTS[0])
    return frame
