"""Bring your own agent: one command that puts it beside every baseline on a standard suite.

:func:`benchmark` (``dueling-gym benchmark --agents my_package.my_module:MyAgent``) runs the
given agents and every registered regret-minimising baseline on

* the seven published matrices of Komiyama, Honda and Nakagawa (ICML 2016, Section 7): sushi,
  arxiv, mslr5-condorcet, mslr5-noncondorcet, gap, multisol, cyclic4;
* problems drawn from three generator families with five arms (a unique Copeland winner, no
  Condorcet winner, utility-based), ``problems_per_family`` of each;

at a short and a long horizon (two regret sweeps, ``short/`` and ``long/``, resumable like any
sweep), and writes ``report.md``: for each horizon and problem, every agent of yours with its
mean cumulative Copeland regret (Komiyama scale) and Student's t interval, its rank among all
agents by mean regret (1 = lowest), and the best baseline with its own interval; a summary of
ranks over the suite; and ``regret.png``, the long horizon's curves of your agents beside the
five baselines with the best mean rank.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

__all__ = ["SUITE_PUBLISHED", "SUITE_FAMILIES", "benchmark", "benchmark_folder", "suite_problems"]

SUITE_PUBLISHED = ("sushi", "arxiv", "mslr5-condorcet", "mslr5-noncondorcet", "gap", "multisol", "cyclic4")
SUITE_FAMILIES = ("unique_copeland_winner", "no_condorcet_winner", "utility_based")
_NOTION = "copeland_komiyama"
#: Problems drawn for the suite come from seeds of their own (not the training streams of the learned agent).
_SUITE_PROBLEM_SEED = 70_000


def suite_problems(problems_per_family: int) -> list[str]:
    """The suite's problems in the sweep's text form."""
    generated = [f"{family}:n_arms=5,problem_seed={_SUITE_PROBLEM_SEED + index}"
                 for family in SUITE_FAMILIES for index in range(problems_per_family)]
    return [*SUITE_PUBLISHED, *generated]


def benchmark_folder(quick: bool) -> Path:
    """The default folder of :func:`benchmark`: ``results/benchmark`` (``results/benchmark-quick``).

    The quick and the full benchmark run at different horizons, which one folder cannot hold.
    """
    return Path("results") / ("benchmark-quick" if quick else "benchmark")


def _check_out_dir(out: Path) -> None:
    """Refuse, in one line and before anything runs, a folder that cannot be created or written.

    Missing parents are allowed (they are created); the nearest existing one must be a
    writable folder.
    """
    if out.exists():
        if not out.is_dir():
            raise ValueError(f"output folder {out} is a file, not a folder")
        target = out
    else:
        target = out.parent
        while not target.exists() and target != target.parent:
            target = target.parent
        if not target.is_dir():
            raise ValueError(f"cannot create output folder {out}: {target} is a file, not a folder")
    if not os.access(target, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write to {target}: permission denied")


def _ranks(rows: list[dict[str, Any]]) -> dict[tuple[str, str], int]:
    """(problem, agent) -> rank of the agent's mean regret on the problem (1 = lowest; ties share)."""
    ranks = {}
    for problem in dict.fromkeys(row["problem"] for row in rows):
        means = sorted(row["mean_regret"] for row in rows if row["problem"] == problem)
        for row in rows:
            if row["problem"] == problem:
                ranks[problem, row["agent"]] = 1 + sum(mean < row["mean_regret"] for mean in means)
    return ranks


def _regret_cell(row: dict[str, Any]) -> str:
    """``mean ± half-width``; ``± n/a`` for one run; the bootstrap interval where the t one reaches below zero."""
    from dueling_gym.experiments.sweeps.report import regret_interval_cell

    return regret_interval_cell(row["mean_regret"], row["ci95"], row["runs"],
                                (row["bootstrap_low"], row["bootstrap_high"]), show_bootstrap=True)


def _report_section(title: str, rows: list[dict[str, Any]], mine: Sequence[str]) -> tuple[list[str], dict]:
    from dueling_gym.experiments.sweeps.report import interval_notes

    ranks = _ranks(rows)
    n_agents = len({row["agent"] for row in rows})
    lines = [f"## {title}", "", "| problem | agent | regret at T | rank (of " + str(n_agents) + ") | best baseline |",
             "|---|---|---:|---:|---|"]
    cells = []
    for problem in dict.fromkeys(row["problem"] for row in rows):
        here = [row for row in rows if row["problem"] == problem]
        baselines = [row for row in here if row["agent"] not in mine]
        best = min(baselines, key=lambda row: row["mean_regret"]) if baselines else None
        for row in (row for row in here if row["agent"] in mine):
            cells.append(_regret_cell(row))
            shown = f"{best['agent']} {_regret_cell(best)}" if best else "–"
            cells.append(shown)
            lines.append(f"| {problem} | {row['agent']} | {cells[-2]} | {ranks[problem, row['agent']]} | {shown} |")
    notes = interval_notes(cells)
    lines += ["", *notes] if notes else []
    lines.append("")
    return lines, ranks


def benchmark(
    agents: Sequence[str],
    out_dir: str | os.PathLike | None = None,
    *,
    quick: bool = False,
    baselines: Sequence[str] | None = None,
    jobs: int = 1,
    backend: str = "local",
    address: str | None = None,
    progress: bool = True,
) -> Path:
    """Run ``agents`` beside ``baselines`` (default: every registered regret minimiser) on the suite.

    Parameters
    ----------
    agents : sequence of str
        Your agents: registered names or import paths (``package.module:ClassName``), with
        hyperparameters as for ``dueling-gym run`` (``package.module:ClassName:alpha=1.0``).
    out_dir : path, optional
        Folder of the two sweeps (``short/``, ``long/``) and of ``report.md`` and ``regret.png``
        (default: :func:`benchmark_folder`, ``results/benchmark[-quick]``); missing parent
        folders are created.
    quick : bool
        T = 1000 and 10^4, 3 seeds, 2 problems per family (a few minutes); otherwise T = 1000 and
        10^5, 10 seeds, 5 problems per family.
    baselines : sequence of str, optional
        Agents to compare with (default: every registered regret-minimising dueling agent
        except ``learned``, whose policies exist for some numbers of arms only).
    jobs, backend, address, progress
        As for :func:`~dueling_gym.experiments.sweeps.sweep.run_sweep`.

    Returns
    -------
    Path
        The report's path.
    """
    from dueling_gym.experiments.sweeps.report import aggregate, summary_rows
    from dueling_gym.experiments.sweeps.sweep import SweepSpec, execute_sweep

    mine_specs, baseline_specs = _agent_specs(agents, baselines)
    mine = [spec.label for spec in mine_specs]
    out = benchmark_folder(quick) if out_dir is None else Path(out_dir)
    _check_out_dir(out)
    seeds = tuple(range(3 if quick else 10))
    problems = suite_problems(2 if quick else 5)
    horizons = {"short": 1000, "long": 10**4 if quick else 10**5}
    # Everything is validated before anything runs, once: the specs built here are the ones run.
    specs = {name: SweepSpec(agents=(*mine_specs, *baseline_specs), problems=tuple(problems), seeds=seeds,
                             horizon=horizon) for name, horizon in horizons.items()}
    out.mkdir(parents=True, exist_ok=True)
    lines = _report_heading(mine, len(baseline_specs), problems, len(seeds))
    all_ranks: dict[str, dict[tuple[str, str], int]] = {}
    records_long: list[dict[str, Any]] = []
    for name, horizon in horizons.items():
        result = execute_sweep(specs[name], out / name, jobs=jobs, backend=backend, address=address, progress=progress,
                               notion=_NOTION, title=f"Benchmark of {', '.join(mine)} (T = {horizon})")
        rows = summary_rows(aggregate(result.records, _NOTION))
        section, all_ranks[name] = _report_section(f"T = {horizon}", rows, mine)
        lines += section
        if name == "long":
            records_long = result.records
    everyone = [*mine, *(spec.label for spec in baseline_specs)]
    rank_lines, leaders = _mean_rank_section(all_ranks, horizons, mine, everyone)
    lines += rank_lines
    lines += _leaders_figure(records_long, mine, leaders, out, horizons["long"])
    report = out / "report.md"
    report.write_text("\n".join(lines) + "\n")
    return report


def _agent_specs(agents: Sequence[Any], baselines: Sequence[str] | None) -> tuple[list[Any], list[Any]]:
    """The sweep specs of the user's agents and of the baselines (those not among the user's agents)."""
    from dueling_gym.experiments.studies.learned_evaluation import classic_agents
    from dueling_gym.experiments.sweeps.sweep import AgentSpec

    mine_specs = [AgentSpec.parse(agent) if isinstance(agent, str) else agent for agent in agents]
    if not mine_specs:
        raise ValueError("benchmark needs at least one agent of yours (--agents)")
    mine = [spec.label for spec in mine_specs]
    chosen = list(baselines) if baselines is not None else classic_agents()
    baseline_specs = [AgentSpec.parse(name) for name in chosen if AgentSpec.parse(name).label not in mine]
    return mine_specs, baseline_specs


def _report_heading(mine: list[str], n_baselines: int, problems: list[str], n_runs: int) -> list[str]:
    from dueling_gym.stats import INTERVAL_METHOD

    return [f"# Benchmark: {', '.join(mine)}", "",
            f"Beside {n_baselines} baselines on {len(SUITE_PUBLISHED)} published matrices and "
            f"{len(problems) - len(SUITE_PUBLISHED)} generated problems ({', '.join(SUITE_FAMILIES)}, K = 5), "
            f"{n_runs} runs each.  Cumulative Copeland regret (Komiyama scale) at T, mean ± "
            f"{INTERVAL_METHOD}; rank by mean regret among all agents (1 = lowest).", ""]


def _mean_rank_section(all_ranks: dict[str, dict[tuple[str, str], int]], horizons: dict[str, int], mine: list[str],
                       everyone: list[str]) -> tuple[list[str], list[str]]:
    """The table of every agent's mean rank per horizon, and the five baselines of best mean rank at the long one."""
    lines = ["## Mean rank over the suite", "", "| agent | " + " | ".join(f"T = {h}" for h in horizons.values()) + " |",
             "|---|" + "---:|" * len(horizons)]
    mean_rank = {name: {horizon: float(np.mean([rank for (_, agent), rank in all_ranks[horizon].items() if agent == name]))
                        for horizon in horizons} for name in everyone}
    for name in sorted(everyone, key=lambda agent: mean_rank[agent]["long"]):
        marker = "**" if name in mine else ""
        lines.append(f"| {marker}{name}{marker} | " + " | ".join(f"{mean_rank[name][h]:.1f}" for h in horizons) + " |")
    leaders = [name for name in sorted(everyone, key=lambda agent: mean_rank[agent]["long"]) if name not in mine][:5]
    return lines, leaders


def _leaders_figure(records: list[dict[str, Any]], mine: list[str], leaders: list[str], out: Path,
                    horizon: int) -> list[str]:
    """Draw ``regret.png`` (the user's agents beside ``leaders``); the report's lines that show it."""
    from dueling_gym.experiments.sweeps.report import aggregate, plot_regret, problems_of

    shown = [record for record in records if record["agent"] in set(mine) | set(leaders)]
    try:
        curves = aggregate(shown, _NOTION)
        plot_regret(curves, out / "regret", problems=problems_of(shown), title=f"{', '.join(mine)} beside the "
                    f"five baselines of best mean rank (T = {horizon})")
        return ["", "![regret](regret.png)"]
    except ImportError:  # pragma: no cover - the plot extra is optional
        return ["", "(no figure: plots need the plot extra, pip install 'dueling-gym[plot]')"]
