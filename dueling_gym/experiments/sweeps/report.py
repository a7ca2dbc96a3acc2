"""Aggregating sweep results: regret curves with confidence bands, summary tables and plots."""

from __future__ import annotations

import csv
import io
import math
import textwrap
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from dueling_gym.experiments.plot_style import agent_styles, band_caption, percentile_band, regret_label, series_styles
from dueling_gym.stats import INTERVAL_METHOD, NO_SPREAD, NO_SPREAD_NOTE, bootstrap_mean_interval, mean_half_width

__all__ = ["RegretCurve", "aggregate", "problems_of", "summary_rows", "summary_markdown", "summary_csv", "plot_regret",
           "lower_bound_lines", "family_summary_markdown", "panel_layout", "Panel", "MAX_PROBLEM_PANELS", "SUMMARY_COLUMNS",
           "series_styles", "regret_interval_cell", "interval_notes"]

#: Above this many problems, problems of one generator family are plotted as aggregates.
MAX_PROBLEM_PANELS = 12



@dataclass
class RegretCurve:
    """Mean cumulative regret of one agent on one problem across seeds."""

    agent: str
    problem: str
    notion: str
    checkpoints: np.ndarray
    runs: np.ndarray  # (n_seeds, n_checkpoints)
    correct_final: np.ndarray  # per seed: was the final recommendation a Copeland winner?
    family: str = ""  # generator and options of a generated problem; a shipped problem's own name
    n_arms: int = 0

    @property
    def n_runs(self) -> int:
        return int(self.runs.shape[0])

    @property
    def mean(self) -> np.ndarray:
        return self.runs.mean(axis=0)

    @cached_property
    def final_bootstrap(self) -> tuple[float, float]:
        """95% percentile-bootstrap interval of the mean regret at the horizon (resampled once:
        the Markdown and CSV summaries of a folder both show it)."""
        return bootstrap_mean_interval(self.runs[:, -1])

    @cached_property
    def band(self) -> tuple[np.ndarray, np.ndarray]:
        """95% percentile-bootstrap interval of the mean at every checkpoint (the figures' band:
        regret is non-negative and skewed, where a t band reaches below zero)."""
        return percentile_band(self.runs)

    @property
    def half_width(self) -> np.ndarray:
        """Half-width of the 95% confidence interval of the mean at every checkpoint (Student's t)."""
        if self.n_runs < 2:
            return np.zeros(self.runs.shape[1])
        return np.asarray(mean_half_width(self.runs, axis=0))


def aggregate(records: Sequence[dict[str, Any]], notion: str = "copeland_komiyama") -> list[RegretCurve]:
    """Group unit records by (problem, agent) into :class:`RegretCurve` objects (input order kept)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in records:
        if notion not in record["cumulative_regret"]:
            raise ValueError(f"regret notion {notion!r} is not recorded for {record['problem']}; "
                             f"available: {sorted(record['cumulative_regret'])}")
        groups.setdefault((record["problem"], record["agent"]), []).append(record)
    curves = []
    for (problem, agent), members in groups.items():
        members = sorted(members, key=lambda r: r["seed"])
        checkpoints = np.asarray(members[0]["checkpoints"], dtype=np.int64)
        if any(r["checkpoints"] != members[0]["checkpoints"] for r in members):
            raise ValueError(f"runs of {agent} on {problem} have different checkpoints")
        runs = np.array([r["cumulative_regret"][notion] for r in members], dtype=np.float64)
        correct = np.array([r["recommendation_is_copeland_winner"][-1] for r in members], dtype=bool)
        curves.append(RegretCurve(agent, problem, notion, checkpoints, runs, correct, _family(members[0]),
                                  int(members[0].get("n_arms", 0))))
    return curves


def _family(record: dict[str, Any]) -> str:
    spec = record.get("problem_spec")
    if not spec or spec.get("n_arms") is None:
        return record["problem"]
    return spec["name"] + "".join(f"-{key}={value}" for key, value in sorted(spec.get("options", {}).items()))


def problems_of(records: Sequence[dict[str, Any]], labels: Sequence[str] | None = None) -> dict[str, Any]:
    """``problem label -> PreferenceMatrix`` for the problems of a sweep (rebuilt from their specs).

    ``labels`` restricts it to those problems (e.g. the ones :func:`panel_layout` draws alone).
    """
    from dueling_gym.experiments.sweeps.sweep import ProblemSpec

    wanted = None if labels is None else set(labels)
    problems = {}
    for record in records:
        if wanted is not None and record["problem"] not in wanted:
            continue
        if record["problem"] not in problems and "problem_spec" in record:
            problems[record["problem"]] = ProblemSpec(**record["problem_spec"]).build()
    return problems


#: How the second interval of the summaries is made.  Regret at the horizon is often skewed or
#: bimodal (runs that lock onto a wrong arm pay linear regret, the others logarithmic), where the
#: symmetric t interval misplaces the mass.
BOOTSTRAP_METHOD = ("95% percentile-bootstrap intervals of the mean (10 000 resamples of the runs, "
                    "numpy.random.default_rng(0)), for skewed or bimodal regret")


#: Marks a Student's t interval of regret that reaches below zero.
BELOW_ZERO_MARK = "†"
#: The line under a table with a bootstrap column whose t intervals :data:`BELOW_ZERO_MARK` marks.
BELOW_ZERO_NOTE = (f"{BELOW_ZERO_MARK}: the Student's t interval reaches below zero, where regret cannot lie "
                   "(a skewed sample): read the bootstrap interval beside it")
#: The line under a table whose cells show the bootstrap interval in place of such a t interval.
BOOTSTRAP_SHOWN_NOTE = ("Where the Student's t interval of a regret would reach below zero (a skewed sample), "
                        "the cell shows the percentile-bootstrap interval instead, named as such")


def _one_decimal(value: float) -> str:
    return f"{value:.1f}"


def regret_interval_cell(mean: float, half: float, runs: int, bootstrap: tuple[float, float] | None = None, *,
                         show_bootstrap: bool = False, number: Any = _one_decimal) -> str:
    """A table cell ``mean ± half-width`` of a regret (a non-negative quantity).

    One run gives ``mean ± n/a`` (no spread can be estimated).  A t interval that reaches below
    zero is marked with :data:`BELOW_ZERO_MARK` -- or, with ``show_bootstrap``, replaced by the
    ``bootstrap`` interval: ``mean (bootstrap [low, high])``.  :func:`interval_notes` gives the
    lines that explain both under the table.
    """
    if runs < 2 or not math.isfinite(half):
        return f"{number(mean)} ± {NO_SPREAD}"
    if mean - half >= 0.0:
        return f"{number(mean)} ± {number(half)}"
    if show_bootstrap and bootstrap is not None:
        return f"{number(mean)} (bootstrap [{number(bootstrap[0])}, {number(bootstrap[1])}])"
    return f"{number(mean)} ± {number(half)}{BELOW_ZERO_MARK}"


def interval_notes(cells: Sequence[str]) -> list[str]:
    """The legend lines that the table cells ``cells`` need (none when they hold no n/a, mark nor bootstrap)."""
    notes = []
    if any(NO_SPREAD in cell for cell in cells):
        notes.append(NO_SPREAD_NOTE + ".")
    if any(cell.endswith(BELOW_ZERO_MARK) for cell in cells):
        notes.append(BELOW_ZERO_NOTE + ".")
    if any("(bootstrap [" in cell for cell in cells):
        notes.append(BOOTSTRAP_SHOWN_NOTE + ".")
    return notes


def _bootstrap_cell(low: float, high: float, runs: int) -> str:
    return f"[{low:.1f}, {high:.1f}]" if runs >= 2 else NO_SPREAD


def summary_rows(curves: Sequence[RegretCurve]) -> list[dict[str, Any]]:
    """Regret at the horizon with its 95% confidence intervals (Student's t, and a percentile
    bootstrap for skewed samples), per (problem, agent).

    With one run the intervals are NaN (``nan`` in ``summary.csv``): no spread can be estimated.
    """
    rows = []
    for curve in curves:
        bootstrap_low, bootstrap_high = curve.final_bootstrap
        half = float(curve.half_width[-1])
        if curve.n_runs < 2:
            bootstrap_low = bootstrap_high = half = math.nan
        rows.append({
            "problem": curve.problem,
            "agent": curve.agent,
            "runs": curve.n_runs,
            "T": int(curve.checkpoints[-1]),
            "notion": curve.notion,
            "mean_regret": float(curve.mean[-1]),
            "ci95": half,
            "bootstrap_low": bootstrap_low,
            "bootstrap_high": bootstrap_high,
            "copeland_winner_rate": float(curve.correct_final.mean()),
        })
    return rows


def summary_markdown(curves: Sequence[RegretCurve], notion: str | None = None) -> str:
    """A Markdown table of :func:`summary_rows`, headed by the regret notion it reports."""
    from dueling_gym.problems.preference import REGRET_NOTIONS

    rows = summary_rows(curves)
    notions = sorted({curve.notion for curve in curves}) or ([notion] if notion else [])
    if len(notions) > 1:
        raise ValueError(f"one summary holds one regret notion, got {notions}")
    heading = (f"Regret notion: {notions[0]} -- {REGRET_NOTIONS.get(notions[0], '')}" if notions
               else "Regret notion: none (no results)")
    lines = [heading, "",
             "| problem | agent | runs | T | regret at T (mean ± 95% CI) | bootstrap 95% CI | "
             "recommends a Copeland winner |",
             "|---|---|---|---|---|---|---|"]
    cells = []
    for row in rows:
        cells += [regret_interval_cell(row["mean_regret"], row["ci95"], row["runs"]),
                  _bootstrap_cell(row["bootstrap_low"], row["bootstrap_high"], row["runs"])]
        lines.append(f"| {row['problem']} | {row['agent']} | {row['runs']} | {row['T']} | "
                     f"{cells[-2]} | {cells[-1]} | {100 * row['copeland_winner_rate']:.0f}% |")
    lines += ["", f"Intervals: {INTERVAL_METHOD}; beside them, {BOOTSTRAP_METHOD}.", *interval_notes(cells)]
    return "\n".join(lines) + "\n"


def family_summary_markdown(curves: Sequence[RegretCurve]) -> str:
    """Regret at T pooled per (problem family, K, agent): the readable table of a sweep over many
    generated problems (shipped problems are their own family)."""
    groups: dict[tuple[str, int, str], list[RegretCurve]] = {}
    for curve in curves:
        groups.setdefault((curve.family or curve.problem, curve.n_arms, curve.agent), []).append(curve)
    notion = curves[0].notion if curves else "none"
    lines = [f"Regret notion: {notion}, pooled over the problems of each family and K", "",
             "| family | K | agent | problems | runs | T | regret at T (mean ± 95% CI) | bootstrap 95% CI | "
             "recommends a Copeland winner |",
             "|---|---|---|---|---|---|---|---|---|"]
    cells = []
    for (family, n_arms, agent), members in sorted(groups.items(), key=lambda item: (item[0][0], item[0][1])):
        finals = np.concatenate([c.runs[:, -1] for c in members])
        correct = np.concatenate([c.correct_final for c in members])
        half = mean_half_width(finals)
        low, high = bootstrap_mean_interval(finals)
        cells += [regret_interval_cell(float(finals.mean()), half, finals.size), _bootstrap_cell(low, high, finals.size)]
        lines.append(f"| {family} | {n_arms} | {agent} | {len(members)} | {finals.size} | "
                     f"{int(members[0].checkpoints[-1])} | {cells[-2]} | {cells[-1]} | "
                     f"{100 * correct.mean():.0f}% |")
    lines += ["", f"Intervals: {INTERVAL_METHOD}; beside them, {BOOTSTRAP_METHOD}.", *interval_notes(cells)]
    return "\n".join(lines) + "\n"


SUMMARY_COLUMNS = ["problem", "agent", "runs", "T", "notion", "mean_regret", "ci95", "bootstrap_low", "bootstrap_high",
                   "copeland_winner_rate"]


def summary_csv(curves: Sequence[RegretCurve], header: bool = True) -> str:
    """:func:`summary_rows` as CSV (quoted where a label holds a comma); the ``notion`` column names the notion."""
    stream = io.StringIO()
    writer = csv.DictWriter(stream, SUMMARY_COLUMNS, lineterminator="\n")
    if header:
        writer.writeheader()
    writer.writerows(summary_rows(curves))
    return stream.getvalue()


def lower_bound_lines(problem: Any, notion: str) -> dict[str, float]:
    """Slopes (per ``ln T``) of the LB and ECWB lines of Komiyama et al. (2016) in ``notion`` units.

    Only Copeland notions have these bounds; other notions give ``{}``.
    """
    from dueling_gym.problems.lower_bounds import ecw_lower_bound_constant, lower_bound_constant

    if notion == "copeland_komiyama":
        scale = 1.0
    elif notion == "copeland_zoghi" and problem.tied_pairs.size == 0:
        scale = 2.0  # without ties Zoghi regret is exactly twice Komiyama regret
    else:
        return {}
    return {"LB": scale * lower_bound_constant(problem), "ECWB": scale * ecw_lower_bound_constant(problem)}


#: A curve that grows this much over its last decade of t grows linearly (a logarithmic one
#: grows by 1.1-2x there, a linear one by about 10x).
_LINEAR_GROWTH = 5.0


def _grows_linearly(curve: RegretCurve) -> bool:
    """Whether ``curve``'s mean regret grows about linearly over its last decade of t."""
    t, mean = curve.checkpoints, curve.mean
    earlier = np.flatnonzero(t <= t[-1] / 10)
    if earlier.size == 0 or mean[-1] <= 0:
        return False
    before = mean[earlier[-1]]
    return before <= 0 or mean[-1] / before > _LINEAR_GROWTH


#: A reference line (LB, ECWB) sets a linear y-axis only up to this many times the top of the
#: curves (twice: the curves keep at least half the panel's height); above, it is clipped and
#: marked where it leaves the panel, as a linear curve is.  A log axis allows a decade.
_LINE_SQUEEZE = 2.0
_LINE_SQUEEZE_LOG = 10.0


def _curve_top(curve: RegretCurve) -> float:
    """The highest point of ``curve``'s mean and band."""
    return float(max(np.max(curve.mean), np.max(curve.band[1]) if curve.n_runs > 1 else -np.inf))


def _y_limit(curves: Sequence[RegretCurve], bound_tops: Sequence[float] = ()) -> float:
    """Top of a linear y-axis: the curves whose regret is not linear, and the lower-bound lines near them.

    Linear-regret curves (agents that fail on the problem) would otherwise set the scale, and
    every logarithmic curve and the bounds would lie flat on zero: they leave the panel at the
    top, marked there (see :func:`_mark_off_scale`).  So does a bound above
    :data:`_LINE_SQUEEZE` times the curves (ECWB on ``gap`` is 100 times LB).
    """
    kept = [curve for curve in curves if not _grows_linearly(curve)]
    data = max((_curve_top(curve) for curve in kept), default=0.0)
    near = [float(b) for b in bound_tops if data <= 0 or float(b) <= _LINE_SQUEEZE * data]
    top = max([data, *near])
    return 1.15 * top if top > 0 else 1.0


def _mark_off_scale(axis: Any, curves: Sequence[RegretCurve], styles: dict[str, dict[str, Any]], top: float,
                    bounds: dict[str, float] | None = None, horizon: int = 1, heading: str = "") -> bool:
    """Mark, at the top edge, where each curve or bound line leaves the panel, and name them with
    their value at T (under ``heading``, in one box); whether anything was marked."""
    names = []
    for curve in curves:
        above = np.flatnonzero(curve.mean > top)
        if above.size:
            axis.plot([curve.checkpoints[above[0]]], [top], marker="^", markersize=7, color=styles[curve.agent]["color"],
                      clip_on=False, zorder=5)
            names.append(f"{curve.agent} {curve.mean[-1]:.3g}")
    for name, slope in (bounds or {}).items():
        final = slope * math.log(horizon)
        if final > top:
            axis.plot([math.exp(top / slope)], [top], marker="^", markersize=7, color="black", clip_on=False, zorder=5)
            names.append(f"{name} {final:.3g}")
    lines = [heading] if heading else []
    if names:
        lines += ["off scale (regret at T):", *(", ".join(names[i:i + 3]) for i in range(0, len(names), 3))]
    if lines:
        axis.text(0.02, 0.97, "\n".join(lines), transform=axis.transAxes, fontsize=6.5, va="top", ha="left",
                  bbox={"facecolor": "white", "alpha": 0.8, "linewidth": 0, "pad": 1.5})
    return bool(names)


@dataclass
class Panel:
    """One panel of a regret figure.

    ``kind`` is ``"problem"`` (curves of one problem over t), ``"family"`` (curves pooled over
    every run of every problem of a generator family, over t) or ``"family_vs_k"`` (regret at
    T against the number of arms K, for a family).
    """

    title: str
    kind: str
    curves: list[RegretCurve]


def panel_layout(curves: Sequence[RegretCurve], max_problem_panels: int = MAX_PROBLEM_PANELS) -> list[Panel]:
    """Which panels a regret figure draws.

    Up to ``max_problem_panels`` problems get a panel each.  Above that, the problems drawn from
    one generator with the same options (a *family*, e.g. 850 random matrices) are pooled: one
    panel of the mean regret over t across all their runs and, when the family's problems differ
    in K, one of the regret at T against K; shipped problems keep their own panels.  A figure never has more than
    ``2 * max_problem_panels`` panels (ValueError otherwise).
    """
    by_problem: dict[str, list[RegretCurve]] = {}
    for curve in curves:
        by_problem.setdefault(curve.problem, []).append(curve)
    if len(by_problem) <= max_problem_panels:
        return [Panel(problem, "problem", members) for problem, members in by_problem.items()]
    families: dict[str, list[str]] = {}
    for problem, members in by_problem.items():
        families.setdefault(members[0].family or problem, []).append(problem)
    panels = []
    for family, problems in families.items():
        if len(problems) == 1:
            panels.append(Panel(problems[0], "problem", by_problem[problems[0]]))
            continue
        members = [curve for problem in problems for curve in by_problem[problem]]
        title = f"{family} (mean over {len(problems)} problems)"
        panels.append(Panel(title, "family", members))
        if len({curve.n_arms for curve in members}) > 1:  # against K only where K varies
            panels.append(Panel(f"{family}: regret at T vs K", "family_vs_k", members))
    if len(panels) > 2 * max_problem_panels:
        raise ValueError(f"{len(by_problem)} problems in {len(families)} families would need {len(panels)} panels; "
                         "plot fewer problems at a time")
    return panels


def _pooled(members: Sequence[RegretCurve]) -> list[RegretCurve]:
    """One curve per agent pooling every run of every problem in ``members``."""
    by_agent: dict[str, list[RegretCurve]] = {}
    for curve in members:
        by_agent.setdefault(curve.agent, []).append(curve)
    pooled = []
    for agent, curves in by_agent.items():
        if any(not np.array_equal(c.checkpoints, curves[0].checkpoints) for c in curves):
            raise ValueError(f"runs of {agent} in {curves[0].family} have different checkpoints")
        pooled.append(RegretCurve(agent, curves[0].family, curves[0].notion, curves[0].checkpoints,
                                  np.vstack([c.runs for c in curves]), np.concatenate([c.correct_final for c in curves]),
                                  curves[0].family, 0))
    return pooled


# The regret figure's layout, in inches: each panel's cell, and the margins and gaps that hold
# tick labels, axis labels and panel titles; the legend's rows and the title below and above.
_PANEL_WIDTH, _PANEL_HEIGHT = 5.2, 3.9
_MARGIN_LEFT, _MARGIN_RIGHT, _MARGIN_TOP, _MARGIN_BOTTOM = 0.8, 0.2, 0.35, 0.55
_GAP_WIDTH, _GAP_HEIGHT = 0.95, 0.95
_LEGEND_ROW, _LEGEND_PAD, _TITLE_HEIGHT, _CAPTION_ROW = 0.21, 0.2, 0.4, 0.17

#: Line styles of the reference lines, in the order :func:`lower_bound_lines` gives them.
_BOUND_STYLES = ("--", ":")


def _draw_over_t(axis: Any, curves: Sequence[RegretCurve], styles: dict[str, dict[str, Any]],
                 bounds: dict[str, float] | None = None) -> bool:
    """Mean regret over t with its bootstrap band per agent, the lower-bound lines ``slope · ln t``,
    and a y-axis scaled to the sublinear curves (and the bounds near them); whether a curve or
    line left the panel (marked at its top edge)."""
    for curve in curves:
        t = curve.checkpoints
        style = styles[curve.agent]
        axis.plot(t, curve.mean, label=curve.agent, color=style["color"], linestyle=style["linestyle"],
                  marker=style["marker"], markevery=0.1, markersize=4, linewidth=1.6)
        if curve.n_runs > 1:
            low, high = curve.band
            axis.fill_between(t, low, high, color=style["color"], alpha=0.2 if len(styles) <= 10 else 0.08, linewidth=0)
    bounds = dict(bounds or {})
    horizon = max(int(curve.checkpoints[-1]) for curve in curves) if curves else 1
    t_line = np.logspace(0, np.log10(max(horizon, 2)), 200)
    for (name, slope), style in zip(bounds.items(), _BOUND_STYLES):
        axis.plot(t_line, slope * np.log(t_line), linestyle=style, color="black", linewidth=1.2, label=f"{name} · ln t")
    bound_tops = [slope * math.log(horizon) for slope in bounds.values()]
    axis.set_xscale("log")
    axis.set_xlabel("t (duels)")
    if curves and all(_grows_linearly(curve) for curve in curves):
        # Every agent is still in its linear phase at this horizon: a log y-axis shows them all
        # beside the bounds, which a linear one would flatten onto zero.
        highest = max(max(_curve_top(curve) for curve in curves), 1.0)
        near = [b for b in bound_tops if b <= _LINE_SQUEEZE_LOG * highest]
        top = 2.0 * max([highest, *near])
        axis.set_yscale("log")
        axis.set_ylim(1.0, top)
        return _mark_off_scale(axis, [], styles, top, bounds, horizon,
                               heading="log scale: every agent's regret still grows linearly here")
    top = _y_limit(curves, bound_tops)
    axis.set_ylim(0, top)
    return _mark_off_scale(axis, curves, styles, top, bounds, horizon)


def _draw_versus_arms(axis: Any, members: Sequence[RegretCurve], styles: dict[str, dict[str, Any]]) -> list[int]:
    """Regret at T against K per agent, with bootstrap error bars; the run count of every point."""
    by_agent: dict[str, dict[int, list[np.ndarray]]] = {}
    for curve in members:
        by_agent.setdefault(curve.agent, {}).setdefault(curve.n_arms, []).append(curve.runs[:, -1])
    tops, counts = [], []
    for agent, by_arms in by_agent.items():
        arms = sorted(by_arms)
        finals = [np.concatenate(by_arms[k]) for k in arms]
        means = np.array([f.mean() for f in finals])
        intervals = np.array([bootstrap_mean_interval(f) for f in finals])
        style = styles[agent]
        axis.errorbar(arms, means, yerr=np.vstack([means - intervals[:, 0], intervals[:, 1] - means]), label=agent,
                      color=style["color"], linestyle=style["linestyle"], marker=style["marker"] or ".", markersize=4,
                      linewidth=1.4, capsize=2)
        tops += list(intervals[:, 1])
        counts += [f.size for f in finals]
    axis.set_xlabel("K (arms)")
    axis.set_ylim(0, 1.15 * max(max(tops, default=0.0), 1e-9))
    return counts


def plot_regret(
    curves: Sequence[RegretCurve],
    path: str | Path,
    *,
    problems: dict[str, Any] | None = None,
    formats: Sequence[str] = ("png",),
    title: str | None = None,
) -> list[Path]:
    """Cumulative regret vs t (log-x), mean and 95% band per agent, laid out by :func:`panel_layout`.

    Bands (and the error bars of regret at T against K) are 95% percentile-bootstrap intervals of
    the mean (:func:`~dueling_gym.experiments.plot_style.percentile_band`: regret is
    non-negative and skewed, where a Student's t band reaches below zero); a caption under the
    legend says so, with the run counts.  Every agent keeps one colour, line style and marker
    in every panel (:func:`~dueling_gym.experiments.plot_style.agent_styles`).

    Parameters
    ----------
    curves : sequence of RegretCurve
    path : path
        Output path without (or with) extension; one file per format is written.
    problems : dict, optional
        ``problem label -> PreferenceMatrix``; Copeland panels of single problems get the LB and
        ECWB lower-bound lines.
    formats : sequence of str, default ("png",)
        Image formats (``"png"``, ``"svg"``, ``"pdf"``).

    Returns
    -------
    list of Path
        The files written.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:  # pragma: no cover - optional extra
        raise ImportError("plots need matplotlib: pip install 'dueling-gym[plot]'") from error

    if not curves:
        raise ValueError("nothing to plot: no results")
    panels = panel_layout(curves)
    columns = min(3, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(_PANEL_WIDTH * columns, _PANEL_HEIGHT * rows), squeeze=False)
    # One style per agent for the whole figure, from the sorted set of its agents (plot_style).
    styles = agent_styles(curve.agent for curve in curves)
    drawn = [_draw_panel(axis, panel, styles, problems, curves[0].notion) for axis, panel in zip(axes.flat, panels)]
    for axis in list(axes.flat)[len(panels):]:
        axis.set_visible(False)
    handles, labels = _legend_entries(axes)
    _lay_out(figure, handles, labels, columns, rows, title, _caption(drawn))
    written = _save_figure(figure, path, formats)
    plt.close(figure)
    return written


@dataclass
class _Drawn:
    """What a panel drew, for the figure's caption."""

    band_runs: list[int]  # run count of every banded curve
    bar_runs: list[int]  # run count of every point with error bars
    bounds: bool  # LB / ECWB lines
    marked: bool  # something left the panel, marked at its top edge


def _draw_panel(axis: Any, panel: Panel, styles: dict[str, dict[str, Any]], problems: dict[str, Any] | None,
                notion: str) -> _Drawn:
    """One panel: regret at T against K, or regret over t (with the lower bounds of a single problem)."""
    if panel.kind == "family_vs_k":
        drawn = _Drawn([], _draw_versus_arms(axis, panel.curves, styles), False, False)
        axis.set_ylabel(regret_label(notion, at_horizon=True))
    else:
        members = panel.curves if panel.kind == "problem" else _pooled(panel.curves)
        bounds = (lower_bound_lines(problems[panel.title], notion)
                  if panel.kind == "problem" and problems and panel.title in problems else None)
        marked = _draw_over_t(axis, members, styles, bounds)
        drawn = _Drawn([curve.n_runs for curve in members], [], bool(bounds), marked)
        axis.set_ylabel(regret_label(notion))
    # A fixed title position (y given): matplotlib otherwise measures every tick label to place it.
    axis.set_title(panel.title, fontsize=10, y=1.0, pad=5)
    # Major grid lines only: a log axis's minor ticks are most of the drawing time (each
    # tick is a few text and line objects) and add little for the eye.
    axis.grid(True, which="major", alpha=0.3)
    axis.minorticks_off()
    return drawn


#: The caption line of a figure with lower-bound lines.
_BOUNDS_CAPTION = ("LB: the asymptotic regret lower bound of every strongly consistent algorithm; ECWB: ECW-RMED's "
                  "asymptotic regret (Komiyama, Honda, Nakagawa, ICML 2016, Theorems 2 and 4)")
#: The caption line of a figure where something leaves a panel.
_OFF_SCALE_CAPTION = "▲ at a panel's top edge: where a curve or line leaves the panel (its regret at T in the box)"


def _caption(drawn: Sequence[_Drawn]) -> list[str]:
    """The lines under a regret figure: what its bands and error bars are, and its marks."""
    lines = []
    band_runs = [count for panel in drawn for count in panel.band_runs]
    bar_runs = [count for panel in drawn for count in panel.bar_runs]
    if band_runs:
        lines.append(band_caption(band_runs))
    if bar_runs:
        lines.append(band_caption(bar_runs, mark="error bars"))
    if any(panel.bounds for panel in drawn):
        lines.append(_BOUNDS_CAPTION)
    if any(panel.marked for panel in drawn):
        lines.append(_OFF_SCALE_CAPTION)
    return lines


def _legend_entries(axes: Any) -> tuple[list[Any], list[str]]:
    """Every panel's legend handles, each label once (first panel's handle), in panel order."""
    handles, labels = [], []
    for axis in axes.flat:
        for handle, label in zip(*axis.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    return handles, labels


def _lay_out(figure: Any, handles: list[Any], labels: list[str], columns: int, rows: int, title: str | None,
             caption: Sequence[str] = ()) -> None:
    """Size the figure and place its panels, title, legend and caption (below the legend)."""
    # A fixed layout, computed in inches, instead of tight_layout and a "tight" bounding box:
    # both draw the figure an extra time.  One legend for the figure, below the panels (outside
    # every axis, so it never covers a curve or an x-label), with as many columns as fit the
    # figure's width; the figure is grown to hold its rows and the title.
    width = _PANEL_WIDTH * columns
    n_columns = max(1, min(len(labels), int(width // 1.9)))
    # Wrapped to the figure's width (a one-panel figure is 5.2 inches wide): about 17 characters
    # of 8-point caption text, 11 of the 12-point title, per inch.
    caption = [part for line in caption for part in textwrap.wrap(line, int(17 * width))]
    title = "\n".join(textwrap.wrap(title, int(11 * width))) if title else title
    caption_height = _CAPTION_ROW * len(caption)
    legend_height = _LEGEND_PAD + _LEGEND_ROW * math.ceil(len(labels) / n_columns) + caption_height
    title_height = _TITLE_HEIGHT + 0.22 * title.count("\n") if title else 0.0
    panels_height = _PANEL_HEIGHT * rows
    height = panels_height + legend_height + title_height
    figure.set_size_inches(width, height)
    figure.subplots_adjust(
        left=_MARGIN_LEFT / width, right=1 - _MARGIN_RIGHT / width,
        bottom=(legend_height + _MARGIN_BOTTOM) / height, top=1 - (title_height + _MARGIN_TOP) / height,
        wspace=_GAP_WIDTH / (_PANEL_WIDTH - _GAP_WIDTH), hspace=_GAP_HEIGHT / (_PANEL_HEIGHT - _GAP_HEIGHT),
    )
    if title:
        figure.suptitle(title, y=1 - 0.12 / height, va="top")
    figure.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, (0.08 + caption_height) / height),
                  ncol=n_columns, frameon=False, fontsize=9, handlelength=3.0)
    if caption:
        figure.text(0.5, 0.06 / height, "\n".join(caption), ha="center", va="bottom", fontsize=8, color="#333333",
                    linespacing=1.4)


def _save_figure(figure: Any, path: str | Path, formats: Sequence[str]) -> list[Path]:
    """Write ``figure`` once per format, at ``path`` with that format's extension."""
    base = Path(path)
    if base.suffix.lstrip(".") in ("png", "svg", "pdf"):
        base = base.with_suffix("")
    base.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for extension in formats:
        target = base.with_suffix(f".{extension}")
        # Light PNG compression: the default level spends a quarter of the drawing time encoding.
        figure.savefig(target, dpi=130, **({"pil_kwargs": {"compress_level": 3}} if extension == "png" else {}))
        written.append(target)
    return written
