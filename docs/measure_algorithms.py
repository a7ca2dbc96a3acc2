"""Regenerate the measured data of the algorithm pages (``docs/data/*.csv``).

The documentation build only reads these files (it must stay fast); this script measures them.
Run from the repository root::

    python docs/measure_algorithms.py                  # both files
    python docs/measure_algorithms.py --regret --jobs 2 --results /tmp/baselines
    python docs/measure_algorithms.py --speed

* ``docs/data/regret_published_matrices.csv``: ``dueling-gym reproduce baselines`` (every
  regret-minimising dueling agent, default hyperparameters, the seven matrices of Komiyama,
  Honda, Nakagawa, ICML 2016, Appendix A; 10 runs of ``T = 10^5`` with the arm order shuffled
  per run).  Per agent and matrix: the mean cumulative Copeland regret (Komiyama normalisation)
  at ``T`` with its standard error, the fraction of runs whose final recommendation is a
  Copeland winner, and the mean regret at a few checkpoints (the curve).  An existing results
  folder is reused: the sweep runs only its missing units.
* ``docs/data/duels_per_second.csv``: ``python benchmarks/agents.py --problems sushi`` (every
  dueling agent on Sushi, ``K = 16``, each in a fresh process): duels per second of the fused
  (compiled) loop over ``10^6`` duels and of the ``act``/``observe`` loop over ``10^5`` duels,
  compilation excluded.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
REGRET_CSV = DATA / "regret_published_matrices.csv"
SPEED_CSV = DATA / "duels_per_second.csv"
#: Points of the regret curve kept in the CSV (the preset records 48 log-spaced checkpoints).
CURVE_POINTS = (100, 1_000, 3_162, 10_000, 31_623, 100_000)
NOTION = "copeland_komiyama"

REGRET_COLUMNS = ["agent", "problem", "n_arms", "runs", "horizon", "regret_mean", "regret_sem", "winner_rate",
                  *[f"mean_at_{t}" for t in CURVE_POINTS]]
SPEED_COLUMNS = ["agent", "problem", "n_arms", "fused_duels_per_s", "act_observe_duels_per_s", "first_call_s"]


def _version() -> str:
    import dueling_gym

    return dueling_gym.__version__


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _header(command: str, notes: list[str]) -> str:
    today = datetime.date.today().isoformat()
    lines = [f"command: {command}", f"dueling-gym {_version()} (commit {_commit()}), {today}", *notes,
             "regenerate: python docs/measure_algorithms.py"]
    return "".join(f"# {line}\n" for line in lines)


def measure_regret(results: Path, jobs: int) -> None:
    """Run (or complete) the ``baselines`` preset into ``results`` and write :data:`REGRET_CSV`."""
    from dueling_gym.experiments.sweeps.sweep import load_results

    command = ["dueling-gym", "reproduce", "baselines", "--jobs", str(jobs), "--out", str(results), "--no-plot"]
    subprocess.run(command, check=True)
    records = load_results(results)
    groups: dict[tuple[str, str], list[dict]] = {}
    for record in records:
        groups.setdefault((record["agent"], record["problem"]), []).append(record)
    rows = []
    for (agent, problem), members in sorted(groups.items()):
        checkpoints = list(members[0]["checkpoints"])
        runs = np.array([member["cumulative_regret"][NOTION] for member in members], dtype=float)
        final = runs[:, -1]
        sem = float(final.std(ddof=1) / math.sqrt(len(final))) if len(final) > 1 else 0.0
        row = {"agent": agent, "problem": problem, "n_arms": members[0]["n_arms"], "runs": len(members),
               "horizon": members[0]["horizon"], "regret_mean": f"{final.mean():.1f}", "regret_sem": f"{sem:.1f}",
               "winner_rate": f"{np.mean([m['recommendation_is_copeland_winner'][-1] for m in members]):.2f}"}
        for t in CURVE_POINTS:
            row[f"mean_at_{t}"] = f"{runs[:, checkpoints.index(t)].mean():.1f}" if t in checkpoints else ""
        rows.append(row)
    header = _header(
        f"dueling-gym reproduce baselines --jobs {jobs} --out RESULTS (full preset: 10 runs, T = 10^5)",
        [f"cumulative Copeland regret ({NOTION}) of each agent (default hyperparameters; horizon-aware agents get T)",
         "on the matrices of Komiyama, Honda, Nakagawa (ICML 2016, Appendix A); arm order shuffled per run;",
         "regret_mean, regret_sem: mean and standard error at T over the runs; winner_rate: fraction of runs whose",
         "final recommendation is a Copeland winner; mean_at_t: mean regret after t duels"],
    )
    _write(REGRET_CSV, header, REGRET_COLUMNS, rows)


#: Dueling agents not timed here: ``learned`` has a throughput benchmark of its own
#: (``benchmarks/training.py``).
SPEED_SKIPPED = ("learned",)


def measure_speed() -> None:
    """Run ``benchmarks/agents.py`` on Sushi and write :data:`SPEED_CSV`."""
    from dueling_gym.agents import list_agents
    from dueling_gym.problems import load_problem

    n_arms = load_problem("sushi").n_arms
    agents = [name for name in list_agents("dueling") if name not in SPEED_SKIPPED]
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "agents.json"
        command = [sys.executable, str(ROOT / "benchmarks" / "agents.py"), "--problems", "sushi", "--json", str(output),
                   "--agents", *agents]
        subprocess.run(command, check=True, cwd=ROOT)
        measured = json.loads(output.read_text())
    rows = [{"agent": row["agent"], "problem": row["problem"], "n_arms": n_arms,
             "fused_duels_per_s": f"{row['fused_steps_per_s']:.0f}",
             "act_observe_duels_per_s": f"{row['act_observe_steps_per_s']:.0f}",
             "first_call_s": f"{row['first_call_s']:.2f}"} for row in measured]
    header = _header(
        "python benchmarks/agents.py --problems sushi --agents (every dueling agent but "
        + ", ".join(SPEED_SKIPPED) + ")",
        ["duels per second on Sushi (K = 16), one core, each agent in a fresh process, compilation excluded:",
         "fused (compiled) loop over 10^6 duels and act/observe loop over 10^5 duels; first_call_s: first",
         "10-duel run of both loops (compilation, or loading the compiled cache)"],
    )
    _write(SPEED_CSV, header, SPEED_COLUMNS, sorted(rows, key=lambda row: row["agent"]))


def _write(path: Path, header: str, columns: list[str], rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        handle.write(header)
        writer = csv.DictWriter(handle, columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {path.relative_to(ROOT)} ({len(rows)} rows)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--regret", action="store_true", help="only the regret table")
    parser.add_argument("--speed", action="store_true", help="only the duels-per-second table")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes of the regret sweep (default 2)")
    parser.add_argument("--results", type=Path, default=Path("results/baselines"),
                        help="results folder of the sweep (reused if it exists; default results/baselines)")
    args = parser.parse_args()
    both = not (args.regret or args.speed)
    if args.regret or both:
        measure_regret(args.results, args.jobs)
    if args.speed or both:
        measure_speed()


if __name__ == "__main__":
    main()
