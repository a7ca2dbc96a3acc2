"""Sweep scaling: the Komiyama et al. (2016) presets at 1, 2, 4, ... worker processes.

For each preset (``--presets quick full``) and each job count (1, 2, 4, ... up to the machine's
cores, or ``--jobs``), runs the whole command a user runs,
``dueling-gym reproduce komiyama2016 [--quick] --jobs J`` into a fresh folder, in a fresh
process, and records its wall time and CPU time (the process and its workers).  Beside it, the
same preset's duels alone: every unit's ``simulate`` in one warm process (agents built, problems
shuffled, compiled code loaded before the clock starts), which is what the runner's own cost is
measured against.  Compiled code is loaded from Numba's on-disk cache, which a first untimed
quick run fills.

Writes ``docs/data/sweep_scaling.csv`` (or ``--csv``) and prints a table with the speed-up of
each job count over ``--jobs 1``, the runner's CPU over the duels' CPU, and the parallel
efficiency: the units' own simulation seconds over ``jobs x wall`` (how much of the cores'
time went into duels; it needs no ``--jobs 1`` run, so it also judges job counts whose
single-process run would take too long to measure).

``--plot CSV [CSV ...] --png PATH`` draws wall time against job counts from such tables (one
line per preset and machine, and the time the units' own simulations would take spread over
the workers: the floor a runner with no cost of its own would reach).

Run: ``python benchmarks/sweep_scaling.py [--presets quick full] [--jobs 1 2] [--repeats 1]``.
On 2 cores the full preset takes about 20 minutes with ``--jobs 1`` and 10 with ``--jobs 2``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "docs" / "data" / "sweep_scaling.csv"


def job_counts(cores: int) -> list[int]:
    """1, 2, 4, ... up to ``cores`` (``cores`` itself included)."""
    counts, jobs = [], 1
    while jobs < cores:
        counts.append(jobs)
        jobs *= 2
    return counts + [cores]


def run_command(preset: str, jobs: int, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``dueling-gym reproduce`` in a fresh process (workers included)."""
    command = [sys.executable, "-m", "dueling_gym.cli", "reproduce", "komiyama2016", "--jobs", str(jobs),
               "--out", str(out), "--no-progress"] + (["--quick"] if preset == "quick" else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


_DUELS_ALONE = """
import sys, time
from dueling_gym.experiments.studies.presets import get_preset
from dueling_gym.experiments.simulate import simulate
from dueling_gym.experiments.sweeps.sweep import SweepSpec, unit_problem

spec = SweepSpec(**get_preset("komiyama2016").sweep_arguments(sys.argv[1] == "quick"))
runs = []
for unit in spec.units():
    problem, shuffled, _ = unit_problem(unit)
    runs.append((unit.agent.build(problem.n_arms, unit.horizon), shuffled, unit))
for agent, problem, unit in runs[:: max(1, len(runs) // 50)]:  # load every compiled loop first
    simulate(agent, problem, 10, seed=unit.seed, checkpoints=[10])
start_cpu, start_wall = time.process_time(), time.perf_counter()
for agent, problem, unit in runs:
    simulate(agent, problem, unit.horizon, seed=unit.seed, checkpoints=list(unit.checkpoints))
print(time.process_time() - start_cpu, time.perf_counter() - start_wall)
"""


def duels_alone(preset: str) -> tuple[float, float]:
    """CPU and wall seconds of the preset's simulations in one warm process."""
    result = subprocess.run([sys.executable, "-c", _DUELS_ALONE, preset], capture_output=True, text=True, check=True)
    cpu, wall = (float(value) for value in result.stdout.split())
    return cpu, wall


def plot(tables: list[Path], png: Path) -> None:
    """Wall seconds against jobs, per preset (panel) and machine (line), with the simulation floor."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    rows = []
    for table in tables:
        with open(table) as stream:
            rows += list(csv.DictReader(stream))
    presets = list(dict.fromkeys(row["preset"] for row in rows))
    figure, axes = plt.subplots(1, len(presets), figsize=(5.2 * len(presets), 4.0), squeeze=False)
    for axis, preset in zip(axes.flat, presets):
        groups: dict[str, list[dict]] = {}
        for row in rows:
            if row["preset"] == preset:
                groups.setdefault(row["machine"], []).append(row)
        for index, (label, members) in enumerate(groups.items()):
            members.sort(key=lambda row: int(row["jobs"]))
            jobs = [int(row["jobs"]) for row in members]
            colour = f"C{index}"
            axis.plot(jobs, [float(row["wall_s"]) for row in members], "o-", color=colour, label=f"{label}: wall")
            floor = [(int(row["jobs"]), float(row["units_simulate_s"]) / int(row["jobs"]))
                     for row in members if row["units_simulate_s"] not in ("", "nan")]
            if floor:
                axis.plot(*zip(*floor), "--", color=colour, alpha=0.7, label=f"{label}: simulations / jobs")
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        counts = sorted({int(row["jobs"]) for row in rows if row["preset"] == preset})
        axis.set_xticks(counts, [str(count) for count in counts])
        axis.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        axis.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        axis.set_xlabel("--jobs")
        axis.set_ylabel("seconds")
        axis.set_title(f"reproduce komiyama2016 ({preset})", fontsize=10)
        axis.grid(True, which="major", alpha=0.3)
        axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(png, dpi=110)
    print(f"written: {png}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", choices=["quick", "full"], default=["quick", "full"])
    parser.add_argument("--jobs", nargs="+", type=int, default=None,
                        help="job counts (default: 1, 2, 4, ... up to the machine's cores)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per (preset, jobs); the median is kept")
    parser.add_argument("--csv", type=Path, default=DATA)
    parser.add_argument("--plot", nargs="+", type=Path, default=None, metavar="CSV",
                        help="draw the figure from these tables instead of measuring")
    parser.add_argument("--png", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "sweep_scaling.png")
    parser.add_argument("--machine", default=None, help="how the machine is named in the table and figure")
    parser.add_argument("--no-duels-alone", action="store_true",
                        help="skip the one-process reference (for the full preset it takes as long as --jobs 1)")
    args = parser.parse_args()
    if args.plot:
        plot(args.plot, args.png)
        return

    cores = os.cpu_count() or 1
    counts = args.jobs or job_counts(cores)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        run_command("quick", min(2, cores), Path(folder) / "fill-cache")  # untimed: fills Numba's cache
        for preset in args.presets:
            duels_cpu = float("nan")
            if not args.no_duels_alone:
                duels_cpu, duels_wall = duels_alone(preset)
                print(f"{preset}: duels alone in one warm process {duels_cpu:.1f} s CPU, {duels_wall:.1f} s wall",
                      flush=True)
            for jobs in counts:
                walls, cpus, simulated = [], [], []
                for repeat in range(args.repeats):
                    out = Path(folder) / f"{preset}-{jobs}-{repeat}"
                    wall, cpu = run_command(preset, jobs, out)
                    simulated.append(sum(json.loads(path.read_text())["wall_time"] for path in (out / "units").glob("*.json")))
                    shutil.rmtree(out)
                    walls.append(wall)
                    cpus.append(cpu)
                row = {"preset": preset, "jobs": jobs, "wall_s": statistics.median(walls),
                       "cpu_s": statistics.median(cpus), "duels_cpu_s": duels_cpu,
                       "units_simulate_s": statistics.median(simulated), "cores": cores,
                       "machine": args.machine or f"{cores} cores, {platform.processor() or platform.machine()}"}
                rows.append(row)
                print(f"  --jobs {jobs}: {row['wall_s']:.1f} s wall, {row['cpu_s']:.1f} s CPU", flush=True)
    print("\n| preset | jobs | wall s | speed-up over --jobs 1 | CPU s | CPU / duels alone | "
          "simulate s in the units | parallel efficiency |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        base = next((r for r in rows if r["preset"] == row["preset"] and r["jobs"] == 1), None)
        speedup = f"{base['wall_s'] / row['wall_s']:.2f}x" if base else "-"
        # The units' own simulate time over jobs x wall: how busy the workers kept the cores.
        efficiency = row["units_simulate_s"] / (row["jobs"] * row["wall_s"])
        print(f"| {row['preset']} | {row['jobs']} | {row['wall_s']:.1f} | {speedup} | {row['cpu_s']:.1f} | "
              f"{row['cpu_s'] / row['duels_cpu_s']:.2f}x | {row['units_simulate_s']:.1f} | {efficiency:.0%} |")
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with open(args.csv, "w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"\nwritten: {args.csv}")


if __name__ == "__main__":
    main()
