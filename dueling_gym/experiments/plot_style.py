"""How the library's figures tell their series apart, label their axes and say what their bands are.

Every figure drawing several agents (the regret figures of sweeps, presets and ``dueling-gym
benchmark``, the learned-vs-classic figure) takes its styles from :func:`agent_styles`, computed
once per figure from the sorted set of every agent in it: an agent keeps its colour, line style and
marker in every panel, and the same set of agents gets the same styles in every figure, whatever
order the results were read in.  Ten well-separated colours (matplotlib's ``tab10``) are not enough
for the ``baselines`` preset (28 agents), and a grey background with a highlighted few would hide
the comparison that preset exists for (every agent beside every other), so each further group of
ten agents changes the line style and the marker: 30 agents never share all three, and any two
agents of one colour differ in both line style and marker.

Bands and error bars of regret (a non-negative, often skewed quantity: runs that lock onto a wrong
arm pay linear regret, the others logarithmic) are percentile-bootstrap intervals of the mean
(:func:`percentile_band`, the recipe of :func:`dueling_gym.stats.bootstrap_mean_interval`),
which stay inside the range of the runs; a Student's t band would reach below zero.  The tables
keep the t interval beside the bootstrap one.  :func:`band_caption` is the line each figure
prints to say so.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.validation import check_integer

__all__ = ["COLOURS", "LINE_STYLES", "MARKERS", "agent_styles", "series_styles", "percentile_band", "band_caption",
           "notion_words", "regret_label", "BOOTSTRAP_RESAMPLES"]

#: Ten well-separated colours (matplotlib's ``tab10``).
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
#: Line style and marker of each successive group of ten series; 4 styles x 7 markers (coprime)
#: give 28 distinct groups, so 280 series before a (colour, style, marker) triple repeats.
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = (None, "o", "s", "^", "D", "v", "P")

#: Resamples of every bootstrap band (those of the tables' bootstrap column).
BOOTSTRAP_RESAMPLES = 10_000
#: Resampled means computed at once by :func:`percentile_band` (bounds its memory to ~16 MB of counts).
_BOOTSTRAP_CELLS = 2_000_000

#: Each regret notion in words, for axis labels.
_NOTION_WORDS = {
    "copeland_komiyama": "Copeland, Komiyama scale",
    "copeland_zoghi": "Copeland, Zoghi scale",
    "condorcet_strong": "strong Condorcet",
    "condorcet_weak": "weak Condorcet",
    "borda": "Borda",
}


def series_styles(labels: Iterable[str]) -> dict[str, dict[str, Any]]:
    """A distinct ``{"color", "linestyle", "marker"}`` for each label, in the given order (duplicates ignored).

    Series ``i`` gets colour ``i mod 10``; its group ``i // 10`` picks the line style and the
    marker, so the first ten series are plain solid lines and up to 280 series never share all
    three.
    """
    styles = {}
    for index, label in enumerate(dict.fromkeys(labels)):
        group = index // len(COLOURS)
        styles[label] = {"color": COLOURS[index % len(COLOURS)],
                         "linestyle": LINE_STYLES[group % len(LINE_STYLES)],
                         "marker": MARKERS[group % len(MARKERS)]}
    return styles


def agent_styles(agents: Iterable[str]) -> dict[str, dict[str, Any]]:
    """:func:`series_styles` of the sorted set of ``agents``: one style per agent for a whole figure.

    Examples
    --------
    >>> agent_styles(["rucb", "ccb", "rucb"])["ccb"]["color"]
    '#1f77b4'
    """
    names = list(agents)
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"agent names must be strings, got {sorted({type(n).__name__ for n in names})}")
    return series_styles(sorted(set(names)))


def percentile_band(runs: ArrayLike, *, level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES,
                    seed: int = 0) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile-bootstrap interval of the mean of ``runs`` (rows: runs) at every column.

    The resamples are those of :func:`dueling_gym.stats.bootstrap_mean_interval` with the same
    ``seed`` (the same run indices, drawn from ``numpy.random.default_rng(seed)``), so the band at
    a column matches the tables' bootstrap interval of that column up to rounding.  One row gives
    the row itself at both ends (no spread).

    Parameters
    ----------
    runs : array_like of shape (n_runs, n_columns)
        One row per run, e.g. the cumulative regret of each run at every checkpoint.
    level : float, default 0.95
    resamples : int, default 10 000
    seed : int, default 0

    Returns
    -------
    (low, high) : tuple of ndarray of shape (n_columns,)
    """
    array = np.asarray(runs, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f"runs must be a non-empty (n_runs, n_columns) array, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError("runs must be finite")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    resamples = check_integer("resamples", resamples, minimum=1)
    n = array.shape[0]
    if n < 2:
        return array[0].copy(), array[0].copy()
    rng = np.random.default_rng(seed)
    # Drawn in chunks: consecutive draws of a Generator continue one stream, so the indices are
    # those of one (resamples, n) draw, without holding a (resamples, n, n_columns) array.
    chunk = max(1, _BOOTSTRAP_CELLS // n)
    means = np.empty((resamples, array.shape[1]))
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        indices = rng.integers(0, n, size=(rows, n))
        counts = np.bincount((indices + n * np.arange(rows)[:, None]).ravel(), minlength=rows * n).reshape(rows, n)
        means[start:start + rows] = counts @ array / n
    low, high = np.quantile(means, [0.5 * (1.0 - level), 0.5 * (1.0 + level)], axis=0)
    return low, high


def band_caption(run_counts: Sequence[int], *, mark: str = "bands") -> str:
    """The line a figure prints to say what its ``mark`` (bands, error bars) are and over how many runs.

    Examples
    --------
    >>> print(band_caption([10, 10]))
    bands: 95% percentile-bootstrap interval of the mean (10 000 resamples of the runs), 10 runs per curve
    """
    counts = sorted({check_integer("runs", count, minimum=1) for count in run_counts})
    if not counts:
        raise ValueError("band_caption needs the run count of at least one series")
    per = "curve" if mark == "bands" else "point"
    if counts[-1] < 2:
        return f"one run per {per}: no {mark} (one run gives no spread)"
    runs = f"{counts[0]} runs" if len(counts) == 1 else f"{counts[0]}-{counts[-1]} runs"
    resamples = f"{BOOTSTRAP_RESAMPLES:,}".replace(",", " ")
    caption = f"{mark}: 95% percentile-bootstrap interval of the mean ({resamples} resamples of the runs), {runs} per {per}"
    if counts[0] < 2:
        caption += f" ({per}s of one run have none)"
    return caption


def notion_words(notion: str) -> str:
    """A regret notion in words (``"copeland_komiyama"`` -> ``"Copeland, Komiyama scale"``)."""
    if notion not in _NOTION_WORDS:
        raise ValueError(f"unknown regret notion {notion!r}; known: {sorted(_NOTION_WORDS)}")
    return _NOTION_WORDS[notion]


def regret_label(notion: str, *, at_horizon: bool = False) -> str:
    """The y label of a regret axis, in words: ``cumulative regret (Copeland, Komiyama scale)``."""
    return f"{'regret at T' if at_horizon else 'cumulative regret'} ({notion_words(notion)})"
