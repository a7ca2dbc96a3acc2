"""The comparison of an algorithm with its peers on the published matrices: table and dot plot.

Peers are the other regret minimisers of the ``baselines`` preset that target the same winner
notion (:func:`~dueling_gym.agents.catalogue.agent_target`): the agents a reader would choose
between.  ``data/regret_published_matrices.csv`` holds, per agent and matrix, the mean regret at
``T``, its standard error and the number of runs ``n``; the 95% intervals are Student's t,
``mean ± t_{0.975, n-1} · se`` (the runs are independent, and the CSV keeps no per-run values
for a bootstrap).

The figure is a dot plot, one panel per matrix, each on its own linear axis starting at zero,
so that a dot's distance from zero is the regret and two dots' distance is their difference
(bars on a logarithmic axis show neither).
"""

from __future__ import annotations

import math
from pathlib import Path

from dueling_gym.agents.catalogue import agent_role, agent_target
from dueling_gym.experiments.sweeps.report import BELOW_ZERO_MARK, regret_interval_cell

#: The uniform-play agent, the scale every panel states.
REFERENCE_AGENT = "random"
INTERVAL_METHOD = ("95% Student's t intervals over the runs, mean ± t(0.975, n − 1) × standard error "
                   "(n = {runs} runs; the standard errors are those of the data file)")


def half_width(sem: float, runs: int) -> float:
    """Half-width of the 95% Student's t interval of a mean with standard error ``sem`` over ``runs`` runs."""
    if runs < 2:
        return math.nan
    if not math.isfinite(sem) or sem < 0:
        raise ValueError(f"a standard error is a finite non-negative number, got {sem!r}")
    from scipy.stats import t

    return float(t.ppf(0.975, runs - 1) * sem)


def _stats(row: dict[str, str]) -> tuple[float, float]:
    return float(row["regret_mean"]), half_width(float(row["regret_sem"]), int(row["runs"]))


def peers(agents: list[str], regret: dict[tuple[str, str], dict[str, str]], problems: tuple[str, ...]) -> list[str]:
    """``agents`` and the measured regret minimisers with the same targets, best first.

    The order is the mean over ``problems`` of each agent's regret as a fraction of uniform
    play's (a scale-free average over matrices of very different regret).
    """
    measured = {agent for agent, _ in regret}
    targets = {agent_target(agent) for agent in agents}
    group = {agent for agent in measured if agent != REFERENCE_AGENT and agent_role(agent) == "regret minimiser"
             and agent_target(agent) in targets}
    group |= {agent for agent in agents if agent in measured}

    def score(agent: str) -> float:
        fractions = [float(regret[(agent, p)]["regret_mean"]) / float(regret[(REFERENCE_AGENT, p)]["regret_mean"])
                     for p in problems if (agent, p) in regret and (REFERENCE_AGENT, p) in regret]
        return sum(fractions) / len(fractions) if fractions else math.inf

    return sorted(group, key=lambda agent: (score(agent), agent))


def comparison_table(agents: list[str], rows: list[str], regret: dict[tuple[str, str], dict[str, str]],
                     problems: tuple[str, ...]) -> list[str]:
    """Regret at ``T`` with 95% t intervals: one row per agent of ``rows`` (``agents`` in bold), one column per matrix."""
    header = "| agent | " + " | ".join(f"{p} (K = {_arms(p, regret)})" for p in problems) + " |"
    lines = [header, "|---|" + "---|" * len(problems)]
    cells_seen = []
    for agent in [*rows, REFERENCE_AGENT]:
        cells = []
        for problem in problems:
            row = regret.get((agent, problem))
            if row is None:
                cells.append("-")
                continue
            mean, half = _stats(row)
            cells.append(regret_interval_cell(mean, half, int(row["runs"]), number=lambda v: f"{v:,.0f}"))
        cells_seen += cells
        label = f"**`{agent}`**" if agent in agents else f"`{agent}`"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    if any(cell.endswith(BELOW_ZERO_MARK) for cell in cells_seen):
        lines += ["", f"{BELOW_ZERO_MARK}: the Student's t interval reaches below zero, where regret cannot lie: "
                  "a skewed sample (a few runs locked onto a wrong arm), for which the symmetric interval is "
                  "too crude; `dueling-gym reproduce baselines` also reports percentile-bootstrap intervals "
                  "from the runs themselves."]
    return lines


def _arms(problem: str, regret: dict[tuple[str, str], dict[str, str]]) -> str:
    return next((row["n_arms"] for (_, p), row in regret.items() if p == problem), "?")


def comparison_figure(agents: list[str], rows: list[str], regret: dict[tuple[str, str], dict[str, str]],
                      problems: tuple[str, ...], image: Path, sources: list[Path]) -> bool:
    """Draw the dot plot of ``rows`` (``agents`` highlighted) to ``image``; False without data.

    The image is redrawn only when a file of ``sources`` is newer.
    """
    problems = tuple(p for p in problems if any((a, p) in regret for a in rows))
    if not problems or not rows:
        return False
    newest = max((path.stat().st_mtime for path in sources if path.exists()), default=math.inf)
    if image.exists() and image.stat().st_mtime >= newest:
        return True
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    height = 1.3 + 0.2 * len(rows)
    figure, axes = plt.subplots(1, len(problems), figsize=(11.0, height), dpi=110, sharey=True,
                               squeeze=False)
    axes = axes[0]
    positions = range(len(rows))
    for axis, problem in zip(axes, problems):
        right = 0.0
        for y, agent in zip(positions, rows):
            row = regret.get((agent, problem))
            if row is None:
                continue
            mean, half = _stats(row)
            half = 0.0 if math.isnan(half) else half
            own = agent in agents
            axis.errorbar(mean, y, xerr=half, fmt="o", color="C3" if own else "0.35", markersize=4 if own else 3,
                          capsize=2, elinewidth=1.0)
            right = max(right, mean + half)
        axis.set_xlim(0.0, right * 1.1 or 1.0)
        axis.xaxis.set_major_locator(MaxNLocator(3))
        axis.xaxis.set_major_formatter(FuncFormatter(_thousands))
        axis.grid(axis="x", color="0.9")
        axis.tick_params(labelsize=7)
        reference = regret.get((REFERENCE_AGENT, problem))
        scale = f"\nrandom: {_thousands(float(reference['regret_mean']))}" if reference else ""
        axis.set_title(f"{problem} (K = {_arms(problem, regret)}){scale}", fontsize=7)
    axes[0].set_yticks(list(positions), rows)
    axes[0].invert_yaxis()
    for label in axes[0].get_yticklabels():
        if label.get_text() in agents:
            label.set_color("C3")
            label.set_fontweight("bold")
    horizon = int(next(iter(regret.values()))["horizon"])
    figure.supxlabel(f"Copeland regret at T = {horizon:,} (Komiyama units; linear axis per matrix, from 0); "
                     "dots: means, whiskers: 95% Student's t intervals", fontsize=7)
    figure.tight_layout()
    image.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(image)
    plt.close(figure)
    return True


def _thousands(value: float, _position: object = None) -> str:
    if value >= 1000:
        return f"{value / 1000:.3g}k"
    return f"{value:.0f}"
