"""The tables of the learned-vs-classic evaluation on ``learned.md``, read from the files it wrote.

``dueling-gym reproduce learned-vs-classic`` writes ``regret.csv``, ``paired.csv``,
``follow_up.csv``, ``robustness.csv`` and ``consistency.csv``, and ``python -m
dueling_gym.experiments.studies.learned_consistency --references all`` the check with every
classic agent (``classic_consistency.csv``); copies of them lie in ``docs/data/learned_vs_classic/``
and the page takes these fragments in (``{generated} learned/<name>``), so its tables are the
run's numbers and nothing else:

* ``learned/regret``: per problem set and horizon, the learned policy's mean regret and the best
  classic agent's, each with its 95% Student's t half-width;
* ``learned/paired``: learned minus the best classic agent over the same runs, with the verdict;
* ``learned/follow-up``: the second stage's comparisons;
* ``learned/consistency``: the regret's growth from 10^4 to 10^5 duels on the published matrices
  (and on to 10^6 where the run went that far), the learned policy's and the classic references',
  and the regret at the longest horizon as a share of the lower bound;
* ``learned/robustness``: every agent, the learned policy and each classic one, against the best
  classic agent other than itself, by the same paired rule: the rows where it is above;
* ``learned/scorecard``: the page's summary, read from the same files: per horizon, the rows
  where the learned policy is below, tied with or above the best classic agent (first stage), the
  rows above by name, and the published matrices on which its regret as shipped grows at most
  twofold from 10^4 to 10^5 duels and those on which it does not;
* ``learned/classic-consistency``: per published matrix, which classic agents grow at most twofold
  from 10^4 to 10^5 duels and how low their regret at 10^4 is, beside the lowest of all classic
  agents and the learned policy's (``classic_consistency.csv``: the same check with every classic
  agent of the registry as a reference, written by :func:`check_consistency` as described on the
  page).
* ``learned/consistency-runs``: the same check on five times as many runs of each matrix
  (``consistency_runs.csv``, written by :func:`check_consistency` with ``runs=100``): per matrix and
  agent, the growth with its interval, the runs whose own regret grows more than fivefold and the
  share of resampled checks of 20 runs that would read the growth as logarithmic; then the
  learned policy against the lowest of those references at both horizons, paired over the runs
  (``consistency_runs_paired.csv``).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

DATA = Path("data") / "learned_vs_classic"


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _plus_minus(mean: str, half_width: str, sign: str = "") -> str:
    width = float(half_width)
    return f"{float(mean):{sign}.1f} ± " + ("n/a" if math.isnan(width) else f"{width:.1f}")


def _set_order(names: list[str]) -> list[str]:
    """Generated sets by number of arms, then family; the published matrices after them."""
    def key(name: str) -> tuple:
        family, _, size = name.partition(" K=")
        return (0, int(size), family) if size else (1, 0, name)
    return sorted(dict.fromkeys(names), key=key)


def regret_table(regret: list[dict[str, str]], paired: list[dict[str, str]]) -> str:
    horizons = sorted({int(row["horizon"]) for row in regret})
    below = {(row["problems"], int(row["horizon"])) for row in paired if row["verdict"] == "below"}
    header = "| problems | " + " | ".join(f"T = {h}: learned | best classic" for h in horizons) + " |"
    lines = [header, "|---|" + "---:|---|" * len(horizons)]
    for name in _set_order([row["problems"] for row in regret]):
        cells = []
        for horizon in horizons:
            here = [row for row in regret if row["problems"] == name and int(row["horizon"]) == horizon]
            mine = [row for row in here if row["agent"] == "learned"]
            others = [row for row in here if row["agent"] != "learned"]
            if not mine or not others:
                cells += ["—", "—"]
                continue
            best = min(others, key=lambda row: float(row["mean"]))
            text = _plus_minus(mine[0]["mean"], mine[0]["ci95"])
            cells += [f"**{text}**" if (name, horizon) in below else text,
                      f"{best['agent']} {_plus_minus(best['mean'], best['ci95'])}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def paired_table(paired: list[dict[str, str]]) -> str:
    horizons = sorted({int(row["horizon"]) for row in paired})
    lines = ["| problems | " + " | ".join(f"T = {h}" for h in horizons) + " |", "|---|" + "---|" * len(horizons)]
    for name in _set_order([row["problems"] for row in paired]):
        cells = []
        for horizon in horizons:
            match = [row for row in paired if row["problems"] == name and int(row["horizon"]) == horizon]
            if not match:
                cells.append("—")
                continue
            row = match[0]
            text = f"{_plus_minus(row['difference'], row['ci95'], '+')} ({row['verdict']}; {row['best_classic']})"
            cells.append(f"**{text}**" if row["verdict"] == "below" else text)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def follow_up_table(follow_up: list[dict[str, str]]) -> str:
    lines = ["| problems | classic agent | fresh problems | learned | classic | difference (paired) | verdict |",
             "|---|---|---:|---:|---:|---:|---|"]
    for row in sorted(follow_up, key=lambda row: (_set_order([row["problems"]]), row["classic_agent"])):
        verdict = f"**{row['verdict']}**" if row["verdict"] == "below" else row["verdict"]
        lines.append(f"| {row['problems']} | {row['classic_agent']} | {row['runs']} | {float(row['learned_mean']):.1f} | "
                     f"{float(row['classic_mean']):.1f} | {_plus_minus(row['difference'], row['ci95'], '+')} | {verdict} |")
    return "\n".join(lines) + "\n"


def consistency_table(consistency: list[dict[str, str]]) -> str:
    short, long = consistency[0]["horizon"], consistency[0]["long_horizon"]
    further = consistency[0].get("further_horizon") or None  # absent from a two-horizon run
    header = f"| matrix | agent | T = {short} | T = {long} | growth [95% bootstrap] | verdict |"
    rule = "|---|---|---:|---:|---:|---|"
    if further:
        header += f" T = {further} | growth [95% bootstrap] | verdict |"
        rule += "---:|---:|---|"
    lines = [header + f" T = {further or long}: share of LB ln T |", rule + "---:|"]
    matrices = list(dict.fromkeys(row["problems"] for row in consistency))
    # Matrix by matrix, the learned policy's settings first, then the classic references, as run.
    for row in sorted(consistency, key=lambda row: matrices.index(row["problems"])):
        agent = f"learned, {row['variant']}" if row["agent"] == "learned" else row["agent"]
        cells = [row["problems"], agent, f"{float(row['mean']):.1f}", f"{float(row['long_mean']):.1f}",
                 _growth_cell(row, ""), _verdict_cell(row["verdict"])]
        if further:
            cells += [f"{float(row['further_mean']):.1f}", _growth_cell(row, "further_"),
                      _verdict_cell(row["further_verdict"])]
        cells.append(f"{float(row['further_bound_share' if further else 'bound_share']):.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def robustness_table(robustness: list[dict[str, str]]) -> str:
    """One line per agent, fewest rows above the best other classic agent first."""
    horizons = list(dict.fromkeys(row["horizon"] for row in robustness))
    above: dict[str, list[int]] = {}
    sets: dict[str, int] = {}
    for row in robustness:
        above.setdefault(row["agent"], []).append(int(row["above"]))
        sets[row["agent"]] = sets.get(row["agent"], 0) + int(row["problem_sets"])
    lines = ["| agent | " + " | ".join(f"T = {h}" for h in horizons) + " | all rows |",
             "|---|" + "---:|" * (len(horizons) + 1)]
    for agent in sorted(above, key=lambda name: (sum(above[name]), name)):
        name = f"**{agent}**" if agent == "learned" else agent
        lines.append(f"| {name} | " + " | ".join(map(str, above[agent])) + f" | {sum(above[agent])} of {sets[agent]} |")
    return "\n".join(lines) + "\n"


def classic_consistency_table(classic: list[dict[str, str]], learned: list[dict[str, str]]) -> str:
    """One row per matrix: the classic agents whose regret grows at most twofold, the lowest regret
    at the short horizon among them and among all classic agents, and the learned policy's."""
    short, long = classic[0]["horizon"], classic[0]["long_horizon"]
    agents = sorted({row["agent"] for row in classic if row["agent"] != "learned"})
    variants = list(dict.fromkeys(row["variant"] for row in learned if row["agent"] == "learned"))
    header = (f"| matrix | classic agents growing at most twofold (of {len(agents)}) | lowest regret at T = {short} "
              f"among them | lowest regret at T = {short} of all (growth) | "
              + " | ".join(f"learned, {variant} (growth)" for variant in variants) + " |")
    lines = [header, "|---|---|---|---|" + "---|" * len(variants)]

    def described(row: dict[str, str]) -> str:
        return f"{float(row['mean']):.1f} {row['agent']} ({float(row['growth']):.2f})"

    for matrix in dict.fromkeys(row["problems"] for row in classic):
        rows = [row for row in classic if row["problems"] == matrix and row["agent"] != "learned"]
        passing = sorted((row for row in rows if row["verdict"] == "logarithmic"), key=lambda row: float(row["mean"]))
        names = ", ".join(row["agent"] for row in passing) or "none"
        lowest_passing = f"{float(passing[0]['mean']):.1f} {passing[0]['agent']}" if passing else "—"
        mine = {row["variant"]: row for row in learned if row["problems"] == matrix and row["agent"] == "learned"}
        cells = [matrix, f"{len(passing)}: {names}", lowest_passing,
                 described(min(rows, key=lambda row: float(row["mean"])))]
        cells += [f"{float(mine[variant]['mean']):.1f} ({float(mine[variant]['growth']):.2f})" if variant in mine else "—"
                  for variant in variants]
        lines.append("| " + " | ".join(cells) + " |")
    runs = classic[0]["runs"]
    return "\n".join(lines) + (f"\n\nGrowth: mean regret at T = {long} over mean regret at T = {short}, {runs} runs "
                               "(an agent that takes the horizon plays one run per horizon).\n")


def consistency_runs_table(rows: list[dict[str, str]], paired: list[dict[str, str]]) -> str:
    """The check on more runs: one line per matrix and agent, the learned policy first, then the
    learned policy against the reference with the lowest mean at each horizon, paired."""
    short, long, runs = rows[0]["horizon"], rows[0]["long_horizon"], rows[0]["runs"]
    lines = [f"| matrix | agent | T = {short} | T = {long} | growth (95% bootstrap) | runs growing more than "
             f"fivefold (of {runs}) | checks of 20 runs that pass |", "|---|---|---:|---:|---:|---:|---:|"]
    for matrix in dict.fromkeys(row["problems"] for row in rows):
        mine = sorted((row for row in rows if row["problems"] == matrix), key=lambda row: row["agent"] != "learned")
        for row in mine:
            growth = _growth_cell(row, "")
            if row["verdict"] != "logarithmic":
                growth = f"**{growth}**"
            agent = row["agent"] if row["agent"] != "learned" or row["variant"] == "as shipped" else \
                f"learned, {row['variant']}"
            lines.append(f"| {matrix} | {agent} | {float(row['mean']):.1f} | {float(row['long_mean']):.1f} | "
                         f"{growth} | {row['fast_runs']} | {float(row['pass_share']):.2f} |")
    variants = list(dict.fromkeys(row["variant"] for row in paired))
    lines += ["", f"| matrix | learned{'' if len(variants) == 1 else ', setting'} − lowest reference at T = {short} "
              f"| at T = {long} |", "|---|---|---|"]
    for matrix in dict.fromkeys(row["problems"] for row in paired):
        for variant in variants:
            cells = {row["horizon"]: row for row in paired if row["problems"] == matrix and row["variant"] == variant}
            label = matrix if len(variants) == 1 else f"{matrix}, {variant}"
            lines.append(f"| {label} | " + " | ".join(
                f"{_plus_minus(cells[h]['difference'], cells[h]['ci95'], '+')} ({cells[h]['verdict']}; "
                f"{cells[h]['best_classic']})" for h in (short, long)) + " |")
    return "\n".join(lines) + (f"\n\nGrowth: mean regret at T = {long} over mean regret at T = {short}, runs with seeds "
                               f"0 to {int(runs) - 1} (the first 20 are the check's); bold: more than twofold.  Checks "
                               "that pass: the share of 10 000 samples of 20 of these runs, drawn with replacement, "
                               "whose growth is at most twofold.  The differences are paired over the same runs, with "
                               "their 95% Student's t half-widths, against the six references above only.\n")


def scorecard_table(paired: list[dict[str, str]], consistency: list[dict[str, str]] | None) -> str:
    """Rows below, tied and above per horizon, the rows above by name, then the consistency verdicts
    of the policy as shipped."""
    horizons = sorted({int(row["horizon"]) for row in paired})
    lines = ["| horizon | below | tied | above | rows above the best classic agent |", "|---|---:|---:|---:|---|"]
    for horizon in horizons:
        rows = [row for row in paired if int(row["horizon"]) == horizon]
        counts = {verdict: sum(row["verdict"] == verdict for row in rows) for verdict in ("below", "tied", "above")}
        names = ", ".join(f"{row['problems']} ({float(row['difference']):+.1f} ± {float(row['ci95']):.1f} against "
                          f"{row['best_classic']})" for row in rows if row["verdict"] == "above") or "none"
        lines.append(f"| T = {horizon} | {counts['below']} | {counts['tied']} | {counts['above']} | {names} |")
    sets = len({row["problems"] for row in paired})
    text = "\n".join(lines) + (f"\n\n{len(paired)} rows ({sets} problem set{'s' * (sets != 1)} × {len(horizons)} "
                                f"horizon{'s' * (len(horizons) != 1)}), paired 95% Student's t over the same runs.\n")
    if consistency:
        shipped = [row for row in consistency if row["agent"] == "learned" and row["variant"] == "as shipped"]
        short, long = shipped[0]["horizon"], shipped[0]["long_horizon"]
        passing = [f"{row['problems']} {float(row['growth']):.2f}" for row in shipped if row["verdict"] == "logarithmic"]
        failing = [f"{row['problems']} {float(row['growth']):.2f}" for row in shipped if row["verdict"] != "logarithmic"]
        text += (f"\nAs shipped, from T = {short} to {long} its regret grows at most twofold on {len(passing)} of "
                 f"{len(shipped)} published matrices ({', '.join(passing) or 'none'}) and faster on "
                 f"{len(failing)} ({', '.join(failing) or 'none'}).\n")
    return text


def _growth_cell(row: dict[str, str], prefix: str) -> str:
    return (f"{float(row[prefix + 'growth']):.2f} "
            f"[{float(row[prefix + 'growth_low']):.2f}, {float(row[prefix + 'growth_high']):.2f}]")


def _verdict_cell(verdict: str) -> str:
    return verdict if verdict == "logarithmic" else f"**{verdict}**"


def learned_fragments(docs: Path) -> dict[str, str]:
    """The ``learned/...`` fragments from the evaluation's files in ``docs/data/learned_vs_classic``."""
    folder = Path(docs) / DATA
    regret, paired = _rows(folder / "regret.csv"), _rows(folder / "paired.csv")
    fragments = {"learned/regret": regret_table(regret, paired), "learned/paired": paired_table(paired)}
    consistency = _rows(folder / "consistency.csv") if (folder / "consistency.csv").exists() else None
    fragments["learned/scorecard"] = scorecard_table(paired, consistency)
    if (folder / "follow_up.csv").exists():
        fragments["learned/follow-up"] = follow_up_table(_rows(folder / "follow_up.csv"))
    if (folder / "robustness.csv").exists():
        fragments["learned/robustness"] = robustness_table(_rows(folder / "robustness.csv"))
    if (folder / "consistency.csv").exists():
        fragments["learned/consistency"] = consistency_table(_rows(folder / "consistency.csv"))
        if (folder / "classic_consistency.csv").exists():
            fragments["learned/classic-consistency"] = classic_consistency_table(
                _rows(folder / "classic_consistency.csv"), _rows(folder / "consistency.csv"))
    if (folder / "consistency_runs.csv").exists():
        fragments["learned/consistency-runs"] = consistency_runs_table(_rows(folder / "consistency_runs.csv"),
                                                                       _rows(folder / "consistency_runs_paired.csv"))
    return fragments
