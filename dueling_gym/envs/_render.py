"""``rgb_array`` frames of the environments, drawn with NumPy only (no plotting library).

A frame shows two heat maps side by side, both indexed ``[row contestant, column contestant]``:

* left, the *empirical preference matrix* ``W[i, j] / (W[i, j] + W[j, i])`` on a diverging
  scale: blue below 1/2 (``i`` loses to ``j`` more often), white at 1/2, red above 1/2; pairs not
  yet duelled are grey;
* right, the *duel counts* ``W[i, j] + W[j, i]`` (self-duels ``W[i, i]`` on the diagonal) on a
  white-to-green scale, logarithmic and relative to the largest count of the frame.

Pairs that cannot duel at all (edges at different positions of a combinatorial problem) are dark.
Frames have a fixed size, :data:`FRAME_SHAPE`, whose sides are multiples of 16 as video encoders
prefer, so ``gymnasium.wrappers.RecordVideo`` can record an episode.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["FRAME_SHAPE", "preference_frame", "blank_frame"]

_PANEL = 256  # side of one heat map, in pixels
_MARGIN = 16
#: ``(height, width, 3)`` of every frame.
FRAME_SHAPE = (_PANEL + 2 * _MARGIN, 2 * _PANEL + 3 * _MARGIN, 3)

_BACKGROUND = np.array([245, 245, 245], dtype=np.float64)
_UNPLAYED = np.array([200, 200, 200], dtype=np.float64)
_INCOMPARABLE = np.array([70, 70, 70], dtype=np.float64)
_WHITE = np.array([255, 255, 255], dtype=np.float64)
_LOSES = np.array([33, 102, 172], dtype=np.float64)  # blue: empirical preference 0
_WINS = np.array([178, 24, 43], dtype=np.float64)  # red: empirical preference 1
_MOST = np.array([0, 90, 50], dtype=np.float64)  # dark green: the largest count


def blank_frame() -> NDArray[np.uint8]:
    """A frame with empty panels (before the first reset)."""
    frame = np.empty(FRAME_SHAPE, dtype=np.uint8)
    frame[:] = _BACKGROUND.astype(np.uint8)
    for left in (_MARGIN, 2 * _MARGIN + _PANEL):
        frame[_MARGIN:_MARGIN + _PANEL, left:left + _PANEL] = _UNPLAYED.astype(np.uint8)
    return frame


def _blend(low: NDArray[np.float64], high: NDArray[np.float64], weight: NDArray[np.float64]) -> NDArray[np.float64]:
    weight = weight[..., None]
    return (1.0 - weight) * low + weight * high


def preference_frame(wins: ArrayLike, comparable: ArrayLike | None = None) -> NDArray[np.uint8]:
    """Draw the heat maps of a win-count matrix.

    Parameters
    ----------
    wins : array of shape (n, n)
        ``wins[i, j]``: how often contestant ``i`` beat contestant ``j`` (non-negative counts).
    comparable : bool array of shape (n, n), optional
        Which pairs can duel at all; the others are drawn dark.  Default: every pair.

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

    # Every contestant gets a square of `cell` pixels (at least one pixel: beyond 256
    # contestants the map is sampled), separated by a background line when cells are large.
    cell = max(1, _PANEL // n)
    side = min(_PANEL, cell * n)
    index = (np.arange(side) * n) // side if cell == 1 else np.arange(side) // cell
    frame = np.empty(FRAME_SHAPE, dtype=np.float64)
    frame[:] = _BACKGROUND
    top = _MARGIN + (_PANEL - side) // 2
    for panel, start in ((left, _MARGIN), (right, 2 * _MARGIN + _PANEL)):
        start += (_PANEL - side) // 2
        frame[top:top + side, start:start + side] = panel[np.ix_(index, index)]
        if cell >= 6:
            lines = np.arange(cell - 1, side, cell)
            frame[top + lines, start:start + side] = _BACKGROUND
            frame[top:top + side, start + lines] = _BACKGROUND
    return np.rint(frame).astype(np.uint8)
