"""Aggregating sweep results: regret curves with confidence bands, summary tables and plots."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

__all__ = ["RegretCurve", "aggregate", "problems_of", "summary_rows", "summary_markdown", "summary_csv", "plot_regret",
           "lower_bound_lines"]

#: Two-sided 95% normal quantile used for confidence bands.
_Z95 = 1.959963984540054


@dataclass
class RegretCurve:
    """Mean cumulative regret of one agent on one problem across seeds."""

    agent: str
    problem: str
    notion: str
    checkpoints: np.ndarray
    runs: np.ndarray  # (n_seeds, n_checkpoints)
    correct_final: np.ndarray  # per seed: was the final recommendation a Copeland winner?

    @property
    def n_runs(self) -> int:
        return int(self.runs.shape[0])

    @property
    def mean(self) -> np.ndarray:
        return self.runs.mean(axis=0)

    @property
    def half_width(self) -> np.ndarray:
        """Half-width of the 95% confidence interval of the mean (normal approximation)."""
        if self.n_runs < 2:
            return np.zeros(self.runs.shape[1])
        return _Z95 * self.runs.std(axis=0, ddof=1) / math.sqrt(self.n_runs)


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
        curves.append(RegretCurve(agent, problem, notion, checkpoints, runs, correct))
    return curves


def problems_of(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``problem label -> PreferenceMatrix`` for the problems of a sweep (rebuilt from their specs)."""
    from dueling_gym.experiments.sweep import ProblemSpec

    problems = {}
    for record in records:
        if record["problem"] not in problems and "problem_spec" in record:
            problems[record["problem"]] = ProblemSpec(**record["problem_spec"]).build()
    return problems


def summary_rows(curves: Sequence[RegretCurve]) -> list[dict[str, Any]]:
    """Regret at the horizon with its 95% confidence interval, per (problem, agent)."""
    rows = []
    for curve in curves:
        rows.append({
            "problem": curve.problem,
            "agent": curve.agent,
            "runs": curve.n_runs,
            "T": int(curve.checkpoints[-1]),
            "notion": curve.notion,
            "mean_regret": float(curve.mean[-1]),
            "ci95": float(curve.half_width[-1]),
            "copeland_winner_rate": float(curve.correct_final.mean()),
        })
    return rows


def summary_markdown(curves: Sequence[RegretCurve]) -> str:
    """A Markdown table of :func:`summary_rows`."""
    rows = summary_rows(curves)
    lines = ["| problem | agent | runs | T | regret at T (mean ± 95% CI) | recommends a Copeland winner |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['problem']} | {row['agent']} | {row['runs']} | {row['T']} | "
                     f"{row['mean_regret']:.1f} ± {row['ci95']:.1f} | {100 * row['copeland_winner_rate']:.0f}% |")
    return "\n".join(lines) + "\n"


def summary_csv(curves: Sequence[RegretCurve]) -> str:
    rows = summary_rows(curves)
    header = ["problem", "agent", "runs", "T", "notion", "mean_regret", "ci95", "copeland_winner_rate"]
    return "\n".join([",".join(header)] + [",".join(str(row[h]) for h in header) for row in rows]) + "\n"


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


def _y_limit(finals: Sequence[float]) -> float:
    """Top of a panel: clip agents that are far above the rest (e.g. Random, linear) as papers do."""
    finals = sorted(float(f) for f in finals)
    reference = float(np.median(finals))
    kept = [f for f in finals if f <= 4 * max(reference, 1e-9)]
    return 1.15 * max(kept) if kept and max(kept) > 0 else 1.0


def plot_regret(
    curves: Sequence[RegretCurve],
    path: str | Path,
    *,
    problems: dict[str, Any] | None = None,
    formats: Sequence[str] = ("png", "svg"),
    title: str | None = None,
) -> list[Path]:
    """Cumulative regret vs t (log-x), mean and 95% band per agent, one panel per problem.

    Parameters
    ----------
    curves : sequence of RegretCurve
    path : path
        Output path without (or with) extension; one file per format is written.
    problems : dict, optional
        ``problem label -> PreferenceMatrix``; Copeland panels of known problems get the LB and
        ECWB lower-bound lines.
    formats : sequence of str
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

    by_problem: dict[str, list[RegretCurve]] = {}
    for curve in curves:
        by_problem.setdefault(curve.problem, []).append(curve)
    if not by_problem:
        raise ValueError("nothing to plot: no results")
    n_panels = len(by_problem)
    columns = min(3, n_panels)
    rows = math.ceil(n_panels / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, 3.9 * rows), squeeze=False)
    agents = list(dict.fromkeys(curve.agent for curve in curves))
    colours = {agent: plt.cm.tab10(index % 10) for index, agent in enumerate(agents)}
    for axis, (problem_label, members) in zip(axes.flat, by_problem.items()):
        for curve in members:
            t = curve.checkpoints
            axis.plot(t, curve.mean, label=curve.agent, color=colours[curve.agent], linewidth=1.6)
            if curve.n_runs > 1:
                axis.fill_between(t, curve.mean - curve.half_width, curve.mean + curve.half_width,
                                  color=colours[curve.agent], alpha=0.2, linewidth=0)
        notion = members[0].notion
        if problems and problem_label in problems:
            t_line = np.logspace(0, np.log10(max(c.checkpoints[-1] for c in members)), 100)
            for (name, slope), style in zip(lower_bound_lines(problems[problem_label], notion).items(), ("--", ":")):
                axis.plot(t_line, slope * np.log(t_line), style, color="black", linewidth=1.2, label=name)
        axis.set_xscale("log")
        axis.set_title(problem_label)
        axis.set_xlabel("t (duels)")
        axis.set_ylabel(f"cumulative regret ({notion})")
        axis.grid(True, which="both", alpha=0.3)
        axis.set_ylim(0, _y_limit([curve.mean[-1] + curve.half_width[-1] for curve in members]))
    for axis in list(axes.flat)[n_panels:]:
        axis.set_visible(False)
    handles, labels = [], []
    for axis in axes.flat:
        for handle, label in zip(*axis.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    figure.legend(handles, labels, loc="lower center", ncol=min(len(labels), 8), frameon=False)
    if title:
        figure.suptitle(title)
    figure.tight_layout(rect=(0, 0.07 if rows == 1 else 0.04, 1, 1))
    base = Path(path)
    if base.suffix.lstrip(".") in ("png", "svg", "pdf"):
        base = base.with_suffix("")
    base.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for extension in formats:
        target = base.with_suffix(f".{extension}")
        figure.savefig(target, dpi=130)
        written.append(target)
    plt.close(figure)
    return written
