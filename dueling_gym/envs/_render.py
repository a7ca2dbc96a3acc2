"""``rgb_array`` frames of the environments, drawn with NumPy only (no plotting library).

A frame explains itself.  Its top line names the environment (the title) and its problem and,
right-aligned, the step ``t`` (duels played this episode).  Below, two heat maps side by side,
both indexed ``[row contestant i, column contestant j]``, each with a title, the contestants'
indices (arms, the edges of a combinatorial problem, rankers) along its top and left edges, the
axis labels ``row ... i`` (left) and ``column ... j`` (below), and a colour bar with ticks:

* left, the *empirical preference matrix* ``W[i, j] / (W[i, j] + W[j, i])`` on a diverging
  scale: blue below 1/2 (``i`` loses to ``j`` more often), white at 1/2, red above 1/2; pairs not
  yet duelled are grey;
* right, the *duel counts* ``W[i, j] + W[j, i]`` (self-duels ``W[i, i]`` on the diagonal) on a
  white-to-green scale, logarithmic (``log(1 + count)``) and relative to the largest count of the
  frame: the ticks under its colour bar are counts, 1, 10, 100, ... and the largest.

Pairs that cannot duel at all (edges at different positions of a combinatorial problem) are dark.
When the contestants are too many for every index to fit, every 2nd, 5th, 10th, 20th, ...
contestant is labelled.  Frames have a fixed size, :data:`FRAME_SHAPE`, whose sides are
multiples of 16 as video encoders prefer, so ``gymnasium.wrappers.RecordVideo`` can record an
episode.

Rendering stays cheap and reads only counts (never a random stream): the heat maps are
coloured once per contestant pair and only then enlarged, in ``uint8``; everything that depends
only on the number of contestants and the titles (labels, colour bars, legends) is drawn once
and cached; per frame only the step and the count ticks are written, from cached glyph masks.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.envs._font import DIGIT_HEIGHT, TEXT_HEIGHT, text_mask, text_width

__all__ = [
    "COLOUR_BAR_TOP", "FRAME_SHAPE", "PANEL_LEFTS", "PANEL_SIDE", "PANEL_TOP", "TITLE_HEIGHT",
    "blank_frame", "frame_labels", "preference_frame",
]

_PANEL = 256  # side of one heat map, in pixels
_MARGIN = 16
_GUTTER = 48  # left of each heat map: its vertical axis label and its row labels
#: Side of one heat map, in pixels.
PANEL_SIDE = _PANEL
#: Pixel rows ``[0, TITLE_HEIGHT)`` hold the title and the step, nothing else.
TITLE_HEIGHT = 24
_PANEL_TITLE_TOP = 28
_LABEL_GAP = 4  # pixels between a label and its heat map
_DIGIT_SCALE = 2
#: First pixel row of the heat maps (above them: the title, the panel titles, the column labels).
PANEL_TOP = 56
#: First pixel column of the left (preferences) and right (counts) heat maps.
PANEL_LEFTS = (_GUTTER, 2 * _GUTTER + _PANEL)
_XLABEL_TOP = PANEL_TOP + _PANEL + 6
#: First pixel row of the colour bars under the heat maps.
COLOUR_BAR_TOP = PANEL_TOP + _PANEL + 20
_BAR_HEIGHT = 10
_TICK_LABEL_TOP = COLOUR_BAR_TOP + _BAR_HEIGHT + 5
_LEGEND_TOP = _TICK_LABEL_TOP + TEXT_HEIGHT + 7
#: ``(height, width, 3)`` of every frame.
FRAME_SHAPE = (_LEGEND_TOP + TEXT_HEIGHT + 14, PANEL_LEFTS[1] + _PANEL + _MARGIN, 3)

_BACKGROUND = np.array([245, 245, 245], dtype=np.float64)
_UNPLAYED = np.array([200, 200, 200], dtype=np.float64)
_INCOMPARABLE = np.array([70, 70, 70], dtype=np.float64)
_WHITE = np.array([255, 255, 255], dtype=np.float64)
_LOSES = np.array([33, 102, 172], dtype=np.float64)  # blue: empirical preference 0
_WINS = np.array([178, 24, 43], dtype=np.float64)  # red: empirical preference 1
_MOST = np.array([0, 90, 50], dtype=np.float64)  # dark green: the largest count
_INK = np.array([40, 40, 40], dtype=np.uint8)  # text, ticks, outlines

_PREFERENCE_TITLE = "P(row beats column), observed"
_COUNT_TITLE = "duels per pair (log scale)"
_TITLE_SCALE = 2
_ASCENT = 7  # font pixels of a glyph above its baseline (the eighth row is for descenders)
_TITLE_BASELINE = 20  # first pixel row below the title's letters


def _draw(frame: NDArray[np.uint8], mask: NDArray[np.bool_], top: int, left: int) -> None:
    """Ink ``mask`` into ``frame`` with its top-left corner at ``(top, left)``; whatever falls
    outside the frame is clipped."""
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
    needed = text_width(str(n - 1), "digits", _DIGIT_SCALE) + _LABEL_GAP
    stride, steps = 1, (2, 2.5, 2)  # 1, 2, 5, 10, 20, 50, ...
    while stride * side / n < needed and stride < n:
        stride = int(stride * steps[0])
        steps = steps[1:] + steps[:1]
    return stride


def _blend(low: NDArray[np.float64], high: NDArray[np.float64], weight: NDArray[np.float64]) -> NDArray[np.float64]:
    weight = weight[..., None]
    return (1.0 - weight) * low + weight * high


def _preference_colours(empirical: NDArray[np.float64]) -> NDArray[np.float64]:
    """Blue (0) to white (1/2) to red (1)."""
    return np.where(
        (empirical < 0.5)[..., None],
        _blend(_LOSES, _WHITE, np.clip(2.0 * empirical, 0.0, 1.0)),
        _blend(_WHITE, _WINS, np.clip(2.0 * empirical - 1.0, 0.0, 1.0)),
    )


def frame_labels(env: Any) -> dict[str, str | None]:
    """The ``title`` and ``problem`` of ``env``'s frames (keyword arguments of
    :func:`preference_frame`): its registered id (its class name when it was built without
    ``gymnasium.make``) and the name of its current problem, if it has one."""
    spec = getattr(env, "spec", None)
    problem = getattr(getattr(env, "problem", None), "name", None)
    return {"title": spec.id if spec is not None else type(env).__name__, "problem": problem or None}


def _shortened(text: str, room: int) -> str:
    """``text``, its end replaced by ``..`` until it fits in ``room`` pixels."""
    while len(text) > 3 and text_width(text) > room:
        text = text[:-3] + ".."
    return text


def _draw_title(frame: NDArray[np.uint8], title: str | None, problem: str | None) -> None:
    """The title, large (small when it would leave no room for the step), then ``problem: ...``
    small, on the title's baseline, shortened to fit."""
    room = FRAME_SHAPE[1] - 2 * _MARGIN - text_width("step t=00000000", scale=_TITLE_SCALE)
    left, baseline = _MARGIN // 2, _TITLE_BASELINE
    if title:
        scale = _TITLE_SCALE if text_width(title, scale=_TITLE_SCALE) <= room else 1
        mask = text_mask(_shortened(title, room), scale=scale)
        _draw(frame, mask, baseline - _ASCENT * scale, left)
        left += mask.shape[1] + 10
    if problem:
        mask = text_mask(_shortened(f"problem: {problem}", room - left + _MARGIN // 2))
        _draw(frame, mask, baseline - _ASCENT, left)


def _colour_bar(frame: NDArray[np.uint8], left: int, colours: NDArray[np.float64]) -> None:
    """A horizontal bar of ``colours`` (one per pixel column of a panel), outlined in ink."""
    frame[COLOUR_BAR_TOP:COLOUR_BAR_TOP + _BAR_HEIGHT, left:left + _PANEL] = np.rint(colours).astype(np.uint8)
    frame[[COLOUR_BAR_TOP - 1, COLOUR_BAR_TOP + _BAR_HEIGHT], left - 1:left + _PANEL + 1] = _INK
    frame[COLOUR_BAR_TOP - 1:COLOUR_BAR_TOP + _BAR_HEIGHT + 1, [left - 1, left + _PANEL]] = _INK


def _tick(frame: NDArray[np.uint8], left: int, fraction: float, label: str) -> tuple[int, int]:
    """A tick under a colour bar at ``fraction`` of its length, labelled; returns the label's
    pixel columns ``(start, stop)``."""
    x = left + int(round(fraction * (_PANEL - 1)))
    frame[COLOUR_BAR_TOP + _BAR_HEIGHT:COLOUR_BAR_TOP + _BAR_HEIGHT + 3, x] = _INK
    width = text_width(label)
    start = min(max(x - width // 2, left - _GUTTER // 2), left + _PANEL + _MARGIN - width)
    _draw(frame, text_mask(label), _TICK_LABEL_TOP, start)
    return start, start + width


def _legend(frame: NDArray[np.uint8], left: int, entries: list[tuple[NDArray[np.float64] | None, str]]) -> None:
    """Swatches (a colour, or none) with their meaning, in a row under a colour bar."""
    x = left
    for colour, text in entries:
        if colour is not None:
            frame[_LEGEND_TOP - 1:_LEGEND_TOP + TEXT_HEIGHT - 1, x - 1:x + TEXT_HEIGHT + 1] = _INK
            frame[_LEGEND_TOP:_LEGEND_TOP + TEXT_HEIGHT - 2, x:x + TEXT_HEIGHT] = colour.astype(np.uint8)
            x += TEXT_HEIGHT + 4
        _draw(frame, text_mask(text), _LEGEND_TOP, x)
        x += text_width(text) + 12


@lru_cache(maxsize=16)
def _labelled_background(n: int | None, title: str | None, problem: str | None, contestant: str,
                         incomparable: bool) -> NDArray[np.uint8]:
    """Everything but the heat maps, the step and the count ticks (read-only, cached: it depends
    on these arguments alone, and drawing text is the slowest part of a frame).  ``n=None``:
    the frame before the first reset, empty panels without contestants."""
    frame = np.empty(FRAME_SHAPE, dtype=np.uint8)
    frame[:] = _BACKGROUND.astype(np.uint8)
    _draw_title(frame, title, problem)
    fraction = np.arange(_PANEL) / (_PANEL - 1)
    for panel_left, panel_title, bar in ((PANEL_LEFTS[0], _PREFERENCE_TITLE, _preference_colours(fraction)),
                                         (PANEL_LEFTS[1], _COUNT_TITLE, _blend(_WHITE, _MOST, fraction))):
        _draw(frame, text_mask(panel_title), _PANEL_TITLE_TOP, panel_left)
        xlabel, ylabel = text_mask(f"column {contestant} j"), np.rot90(text_mask(f"row {contestant} i"))
        _draw(frame, xlabel, _XLABEL_TOP, panel_left + (_PANEL - xlabel.shape[1]) // 2)
        _draw(frame, ylabel, PANEL_TOP + (_PANEL - ylabel.shape[0]) // 2, panel_left - _GUTTER + 4)
        _colour_bar(frame, panel_left, bar)
        if n is None:
            frame[PANEL_TOP:PANEL_TOP + _PANEL, panel_left:panel_left + _PANEL] = _UNPLAYED.astype(np.uint8)
    for fraction, label in ((0.0, "0"), (0.5, "0.5"), (1.0, "1")):
        _tick(frame, PANEL_LEFTS[0], fraction, label)
    dark = [(_INCOMPARABLE, "cannot duel")] if incomparable else []
    _legend(frame, PANEL_LEFTS[0], [(_UNPLAYED, "not duelled yet"), *dark])
    _legend(frame, PANEL_LEFTS[1], [(None, "diagonal: self-duels"), *dark])
    if n is not None:
        _, side, offset = _geometry(n)
        stride = _label_stride(n, side)
        column_top = PANEL_TOP - _LABEL_GAP - DIGIT_HEIGHT * _DIGIT_SCALE
        for index in range(0, n, stride):
            centre = offset + (index + 0.5) * side / n
            label = text_mask(str(index), "digits", _DIGIT_SCALE)
            row_top = PANEL_TOP + int(round(centre - label.shape[0] / 2))
            for panel_left in PANEL_LEFTS:
                _draw(frame, label, row_top, panel_left + offset - _LABEL_GAP - label.shape[1])
                _draw(frame, label, column_top, panel_left + int(round(centre - label.shape[1] / 2)))
    frame.flags.writeable = False
    return frame


def _count_ticks(frame: NDArray[np.uint8], largest: int) -> None:
    """Ticks of the count colour bar: 0, the powers of ten below the largest count whose labels
    do not collide, and the largest count."""
    left = PANEL_LEFTS[1]
    if largest <= 0:
        _tick(frame, left, 0.0, "0")
        return
    scale = np.log1p(largest)
    last = _tick(frame, left, 0.0, "0")[1]
    end = left + _PANEL - 1 - text_width(str(largest)) // 2 - 6  # where the largest count's label starts
    power = 1
    while power < largest:
        x = left + int(round(np.log1p(power) / scale * (_PANEL - 1)))
        width = text_width(str(power))
        if x - width // 2 > last + 6 and x + width // 2 < end:
            last = _tick(frame, left, np.log1p(power) / scale, str(power))[1]
        power *= 10
    _tick(frame, left, 1.0, str(largest))


def blank_frame(title: str | None = None, problem: str | None = None, contestant: str = "arm") -> NDArray[np.uint8]:
    """A frame with empty panels and no contestants (before the first reset), with the title and
    the problem's name."""
    return _labelled_background(None, title or None, problem or None, contestant, False).copy()


def preference_frame(
    wins: ArrayLike, comparable: ArrayLike | None = None, *, t: int | None = None, title: str | None = None,
    problem: str | None = None, contestant: str = "arm",
) -> NDArray[np.uint8]:
    """Draw the heat maps of a win-count matrix, labelled, with colour bars, the title and the step.

    Parameters
    ----------
    wins : array of shape (n, n)
        ``wins[i, j]``: how often contestant ``i`` beat contestant ``j`` (non-negative counts).
    comparable : bool array of shape (n, n), optional
        Which pairs can duel at all; the others are drawn dark (and the legend says so).
        Default: every pair.
    t : int, optional
        The step to show at the top right (``step t=...``); nothing is shown when omitted.
    title, problem : str, optional
        The title at the top left (the environment) and the name of its problem, written after
        it (see :func:`frame_labels`).
    contestant : str
        What the rows and columns are, for the axis labels (``"arm"``, ``"edge"``, ``"ranker"``).

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
    left = _preference_colours(empirical)
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
    frame = _labelled_background(n, title or None, problem or None, contestant, comparable is not None).copy()
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
    _count_ticks(frame, int(largest))
    if t is not None:
        step = text_mask(f"step t={int(t)}", scale=_TITLE_SCALE)
        _draw(frame, step, _TITLE_BASELINE - _ASCENT * _TITLE_SCALE, FRAME_SHAPE[1] - _MARGIN // 2 - step.shape[1])
    return frame
