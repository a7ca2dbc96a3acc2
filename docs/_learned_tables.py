"""The tables of the learned-vs-classic evaluation on ``learned.md``, read from the files it wrote.

``dueling-gym reproduce learned-vs-classic`` writes ``regret.csv``, ``paired.csv``,
``follow_up.csv`` and ``consistency.csv``; copies of them lie in ``docs/data/learned_vs_classic/``
and the page takes these fragments in (``{generated} learned/<name>``), so its tables are the
run's numbers and nothing else:

* ``learned/regret``: per problem set and horizon, the learned policy's mean regret and the best
  classic agent's, each with its 95% Student's t half-width;
* ``learned/paired``: learned minus the best classic agent over the same runs, with the verdict;
* ``learned/follow-up``: the second stage's comparisons;
* ``learned/consistency``: the regret's growth from 10^4 to 10^5 duels on the published matrices
  (and on to 10^6 where the run went that far), the learned policy's and the classic references',
  and the regret at the longest horizon as a share of the lower bound.
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
    if (folder / "follow_up.csv").exists():
        fragments["learned/follow-up"] = follow_up_table(_rows(folder / "follow_up.csv"))
    if (folder / "consistency.csv").exists():
        fragments["learned/consistency"] = consistency_table(_rows(folder / "consistency.csv"))
    return fragments
