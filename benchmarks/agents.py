"""Agent throughput: fused loop vs act/observe loop, compile time, peak memory.

Protocol: for every registered dueling agent, on Sushi (K = 16) and MSLR-5 non-Condorcet (K = 5):

* first-call time of a 10-step run in a fresh process (JIT compilation, or loading Numba's
  on-disk cache when it is warm), reported separately;
* steps/second of the fused loop over 10^6 duels and of the act/observe loop over 10^5 duels,
  compile time excluded;
* peak resident memory of the measuring process.

Each (agent, problem) pair is measured in its own spawned process, one at a time, so figures
are per core and memory is not shared between agents.

Run: ``python benchmarks/agents.py [--agents rucb rmed1 ...] [--quick] [--json out.json]``;
``--arm-scaling`` measures instead how the fused throughput of MergeRUCB (and RUCB for contrast)
changes with the number of arms.

``--k-scaling [--quick]`` measures fused duels/second and peak memory of every regret-minimising
dueling agent at K = 16, 100, 500, 2000 on a utility-based problem (it has a Condorcet winner, which
is also its unique Copeland winner, so every agent's assumptions hold), then runs every other
registered dueling agent (the identification agents) at K = 2000.  Each cell runs in its own fresh
process (``max_tasks_per_child=1``), so its peak resident memory is its own.  A cell's horizon is
chosen from a short probe run so that the measured run takes about ``--cell-seconds`` (1.5 s; 0.3 s
with ``--quick``), and never fewer than 10^4 duels; an agent whose probe rate says 10^4 duels would
take longer than ``--max-seconds`` (default 120) is shown as "too slow" with the probe's rate.
Targets checked: >= 100k duels/s at K = 500 for CCB, RUCB, RMED1, SCB; and, for every agent
measured at K = 2000, 10^4 duels within 2 GB peak resident memory and 120 s (from its measured
rate), listed agent by agent; the command exits with status 1 when an agent misses this rule.
``--csv PATH`` also writes the rows (agent, n_arms, duels, seconds, peak_mb, fused_duels_per_s)
with a comment header naming the command, version and date (``docs/data/k_scaling_2000.csv``).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import multiprocessing
import resource
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

PROBLEMS = ("sushi", "mslr5-noncondorcet")
#: Hyperparameters some agents need to be built (horizon-dependent algorithms).
EXTRA_ARGUMENTS: dict[str, dict] = {
    "rmed2fh": {"horizon": lambda horizon: horizon},
    "btm": {"horizon": lambda horizon: horizon},
    "interleaved_filtering": {"horizon": lambda horizon: horizon},
    "rex3": {"horizon": lambda horizon: horizon},
}


def measure(agent_name: str, problem_name: str, fused_horizon: int, loop_horizon: int) -> dict:
    """Measure one agent on one problem (runs inside a fresh process)."""
    from dueling_gym.agents import make_agent
    from dueling_gym.experiments import simulate
    from dueling_gym.problems import load_problem

    problem = load_problem(problem_name)
    extra = {key: (value(fused_horizon) if callable(value) else value)
             for key, value in EXTRA_ARGUMENTS.get(agent_name, {}).items()}
    agent = make_agent(agent_name, n_arms=problem.n_arms, seed=0, **extra)
    start = time.perf_counter()
    simulate(agent, problem, 10, seed=0)
    simulate(agent, problem, 10, seed=0, fused=False)
    first_call = time.perf_counter() - start

    fused = simulate(agent, problem, fused_horizon, seed=1)
    loop = simulate(agent, problem, loop_horizon, seed=1, fused=False)
    return {
        "agent": agent_name,
        "problem": problem_name,
        "first_call_s": first_call,
        "fused_steps_per_s": fused_horizon / fused.wall_time,
        "act_observe_steps_per_s": loop_horizon / loop.wall_time,
        "copeland_regret_fused": fused.final_regret(),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


#: Large-K study: agents and numbers of arms (near-tie utility-based problems, see below).
ARM_SCALING_AGENTS = ("merge_rucb", "rucb")
ARM_SCALING_ARMS = (16, 64, 256, 1024)


def measure_arm_scaling(agent_name: str, n_arms: int, horizon: int) -> dict:
    """Fused steps/second on a utility-based problem with ``n_arms`` arms (inside a fresh process).

    The utilities are nearly equal (spread 0.05), so no arm is eliminated within the horizon and
    every step does the full work of its algorithm (a self-duel after convergence would be
    cheaper and blur the comparison).  MergeRUCB's per-step work does not depend on K (it only
    looks at the current batch); what remains is memory traffic in the K x K win matrix once it
    outgrows the caches.
    """
    import numpy as np

    from dueling_gym.agents import make_agent
    from dueling_gym.experiments import simulate
    from dueling_gym.problems.generators import utility_based

    problem = utility_based(n_arms, np.random.default_rng(n_arms), spread=0.05)
    agent = make_agent(agent_name, n_arms=n_arms, seed=0)
    simulate(agent, problem, 10, seed=0)
    result = simulate(agent, problem, horizon, seed=1, checkpoints=[horizon])
    return {"agent": agent_name, "n_arms": n_arms, "fused_steps_per_s": horizon / result.wall_time,
            "condorcet_regret": result.final_regret("condorcet_strong")}


#: K-scaling study: numbers of arms, headline agents and targets.
K_SCALING_ARMS = (16, 100, 500, 2000)
K_SCALING_HEADLINE = ("ccb", "rucb", "rmed1", "scb")
K_SCALING_RATE_TARGET = 100_000  # duels/s at K = 500 for the headline agents
K_SCALING_TARGET_ARMS = 2000  # every dueling agent with K = 2000 arms ...
K_SCALING_MIN_DUELS = 10_000  # ... runs 10^4 duels ...
K_SCALING_MEMORY_TARGET_MB = 2048  # ... within 2 GB peak RSS ...
K_SCALING_TIME_TARGET_S = 120.0  # ... and 2 minutes
K_SCALING_CSV_COLUMNS = ("agent", "n_arms", "duels", "seconds", "peak_mb", "fused_duels_per_s")
_MAX_HORIZON = 50_000_000


def _current_rss_mb() -> float:
    """Resident memory of this process now (Linux ``/proc``; falls back to the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
        return pages * resource.getpagesize() / 2**20
    except OSError:  # pragma: no cover - not Linux
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_k_scaling(agent_name: str, n_arms: int, cell_seconds: float, max_seconds: float) -> dict:
    """Fused duels/second and peak memory of one agent with ``n_arms`` arms (inside a fresh process).

    The problem is ``utility_based(n_arms, default_rng(n_arms))`` (Bradley-Terry, utilities
    uniform on [0, 3]).  After a 10-duel warm-up (compilation), probe runs of growing length
    estimate the rate; the measured run then has ``max(10^4, rate * cell_seconds)`` duels, one
    checkpoint at the horizon.  ``peak_rss_mb`` is the process's peak resident memory (imports
    included); ``delta_rss_mb`` subtracts the resident memory after the imports, so it counts the
    problem, its duel table, the agent and compiling its loop.
    """
    import numpy as np

    from dueling_gym.agents import make_agent
    from dueling_gym.experiments import simulate
    from dueling_gym.problems.generators import utility_based

    baseline = _current_rss_mb()
    row: dict = {"agent": agent_name, "n_arms": n_arms, "status": "ok"}
    start = time.perf_counter()
    problem = utility_based(n_arms, np.random.default_rng(n_arms))
    row["problem_s"] = time.perf_counter() - start

    def run(horizon: int):
        extra = {key: (value(horizon) if callable(value) else value)
                 for key, value in EXTRA_ARGUMENTS.get(agent_name, {}).items()}
        agent = make_agent(agent_name, n_arms=n_arms, seed=0, **extra)
        # One checkpoint: recommend() (O(K^2) for some agents) is not part of the rate.
        return simulate(agent, problem, horizon, seed=1, checkpoints=[horizon])

    try:
        start = time.perf_counter()
        run(10)
    except ValueError as error:  # e.g. a learned policy shipped for another K
        row.update(status="n/a", note=str(error).split(";")[0])
        return row
    row["first_call_s"] = time.perf_counter() - start

    # Probe: runs of growing length (x2 to x20) until one takes a tenth of the cell; once the
    # probes have taken ``max_seconds`` the agent is reported too slow with the last probe's rate.
    horizon, probe_start = 100, time.perf_counter()
    while True:
        result = run(horizon)
        wall = max(result.wall_time, 1e-9)
        if wall >= 0.1 * cell_seconds or horizon >= _MAX_HORIZON:
            break
        if time.perf_counter() - probe_start > max_seconds:
            row.update(status="too slow", duels=horizon, fused=result.fused, duels_per_s=horizon / wall,
                       wall_s=wall, note=f"probes took over {max_seconds:g} s")
            break
        horizon = min(_MAX_HORIZON, int(horizon * min(20.0, max(2.0, 0.15 * cell_seconds / wall))))
    if row["status"] == "ok":
        rate = horizon / wall
        final = min(_MAX_HORIZON, max(K_SCALING_MIN_DUELS, int(rate * cell_seconds)))
        if final > horizon and final / rate > max_seconds:
            row.update(status="too slow", duels=horizon, fused=result.fused, duels_per_s=rate, wall_s=wall,
                       note=f"{final:,} duels would take {final / rate:,.0f} s")
        else:
            if final > horizon:
                result = run(final)
                horizon = final
            row.update(duels=horizon, fused=result.fused, duels_per_s=horizon / result.wall_time,
                       wall_s=result.wall_time)
    row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    row["delta_rss_mb"] = row["peak_rss_mb"] - baseline
    return row


def k_scaling(agents: list[str] | None, arms: tuple[int, ...], cell_seconds: float, max_seconds: float,
              json_path: str | None, csv_path: str | None = None, command: str = "") -> list[str]:
    """Print the K-scaling table (one fresh process per cell) and check its targets.

    Returns the agents that miss the rule at K = 2000 (10^4 duels within 2 GB and 120 s).
    """
    from dueling_gym.agents import list_agents
    from dueling_gym.agents.catalogue import agent_role

    dueling = list_agents("dueling")
    names = agents or dueling
    minimisers = [name for name in names if agent_role(name) == "regret minimiser"]
    others = [name for name in names if name not in minimisers]
    cells = [(name, n_arms) for name in minimisers for n_arms in arms]
    cells += [(name, max(arms)) for name in others]  # identification agents: the largest K only
    context = multiprocessing.get_context("spawn")
    rows: list[dict] = []
    print(f"{'agent':<30} {'K':>5} {'duels':>11} {'duels/s':>13} {'peak RSS MB':>12} {'delta MB':>9}  note")
    with ProcessPoolExecutor(max_workers=1, mp_context=context, max_tasks_per_child=1) as pool:
        futures = [pool.submit(measure_k_scaling, name, n_arms, cell_seconds, max_seconds)
                   for name, n_arms in cells]
        for future in futures:
            row = future.result()
            rows.append(row)
            if row["status"] == "n/a":
                print(f"{row['agent']:<30} {row['n_arms']:>5} {'':>11} {'n/a':>13} {'':>12} {'':>9}  {row['note']}",
                      flush=True)
                continue
            note = f"too slow: {row['note']}" if row["status"] == "too slow" else ""
            if not row.get("fused", True):
                note = (note + " act/observe loop").strip()
            print(f"{row['agent']:<30} {row['n_arms']:>5} {row['duels']:>11,} {row['duels_per_s']:>13,.0f} "
                  f"{row['peak_rss_mb']:>12,.0f} {row['delta_rss_mb']:>9,.0f}  {note}", flush=True)
    missed = _check_k_scaling_targets(rows)
    if json_path:
        with open(json_path, "w") as handle:
            json.dump(rows, handle, indent=2)
    if csv_path:
        write_k_scaling_csv(rows, csv_path, command)
    return missed


def _check_k_scaling_targets(rows: list[dict]) -> list[str]:
    """Print the targets; returns the agents that miss the rule at K = 2000 (empty if none was measured there)."""
    print("\nTargets")
    for row in rows:
        if row["agent"] in K_SCALING_HEADLINE and row["n_arms"] == 500 and row["status"] != "n/a":
            verdict = "met" if row["status"] == "ok" and row["duels_per_s"] >= K_SCALING_RATE_TARGET else "MISSED"
            print(f"  {row['agent']:<12} K=500: {row['duels_per_s']:>12,.0f} duels/s "
                  f"(target >= {K_SCALING_RATE_TARGET:,}) {verdict}")
    checked = [row for row in rows if row["n_arms"] == K_SCALING_TARGET_ARMS and row["status"] != "n/a"]
    rule = (f"{K_SCALING_MIN_DUELS:,} duels at K={K_SCALING_TARGET_ARMS} within {K_SCALING_MEMORY_TARGET_MB:,} MB "
            f"peak RSS and {K_SCALING_TIME_TARGET_S:g} s")
    if not checked:
        print(f"  {rule}: not checked (no agent measured at K={K_SCALING_TARGET_ARMS})")
        return []
    print(f"  {rule}, agent by agent (seconds for {K_SCALING_MIN_DUELS:,} duels from the measured rate):")
    missed = []
    for row in sorted(checked, key=lambda row: row["agent"]):
        seconds = K_SCALING_MIN_DUELS / row["duels_per_s"]
        problems = []
        if row["peak_rss_mb"] > K_SCALING_MEMORY_TARGET_MB:
            problems.append("memory")
        if seconds > K_SCALING_TIME_TARGET_S:
            problems.append("time")
        if row["duels"] < K_SCALING_MIN_DUELS:
            # Stopped after its probes: its memory was not seen over 10^4 duels.
            problems.append(f"ran {row['duels']:,} duels only")
        verdict = "met" if not problems else "MISSED (" + ", ".join(problems) + ")"
        print(f"    {row['agent']:<30} {seconds:>10,.2f} s {row['peak_rss_mb']:>8,.0f} MB  {verdict}")
        if problems:
            missed.append(row["agent"])
    print(f"  K={K_SCALING_TARGET_ARMS}: {len(checked) - len(missed)}/{len(checked)} agents met the rule"
          + (": missed by " + ", ".join(missed) if missed else ""))
    skipped = sorted({row["agent"] for row in rows if row["status"] == "n/a"})
    if skipped:
        print(f"  not applicable: {', '.join(skipped)}")
    return missed


def write_k_scaling_csv(rows: list[dict], path: str, command: str) -> None:
    """Write the measured K-scaling rows as CSV, with a comment header (command, version, commit, date)."""
    from dueling_gym import __version__

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
                                cwd=Path(__file__).resolve().parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    header = [
        f"command: {command}",
        f"dueling-gym {__version__} (commit {commit}), {datetime.date.today().isoformat()}",
        "fused duels on utility_based(K, default_rng(K)) (Bradley-Terry, utilities uniform on [0, 3]), one core, each",
        "agent in a fresh process; duels: the measured run (at least 10^4, about --cell-seconds long), seconds: its",
        "wall time; peak_mb: peak resident memory of the process (imports, problem, compilation included);",
        f"rule checked: {K_SCALING_MIN_DUELS:,} duels at K = {K_SCALING_TARGET_ARMS} within "
        f"{K_SCALING_MEMORY_TARGET_MB} MB and {K_SCALING_TIME_TARGET_S:g} s",
    ]
    measured = sorted((row for row in rows if row["status"] != "n/a"), key=lambda row: (row["agent"], row["n_arms"]))
    with open(path, "w", newline="") as handle:
        handle.write("".join(f"# {line}\n" for line in header))
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(K_SCALING_CSV_COLUMNS)
        for row in measured:
            writer.writerow([row["agent"], row["n_arms"], row["duels"], f"{row['wall_s']:.2f}",
                             f"{row['peak_rss_mb']:.0f}", f"{row['duels_per_s']:.0f}"])
    print(f"wrote {path} ({len(measured)} rows)")


def _command_line(agents: list[str] | None) -> str:
    """This run's command, with an ``--agents`` list naming every dueling agent but a few said as such."""
    from dueling_gym.agents import list_agents

    words = ["python", "benchmarks/agents.py"]
    arguments = sys.argv[1:]
    if agents:
        start = arguments.index("--agents")
        end = start + 1
        while end < len(arguments) and not arguments[end].startswith("--"):
            end += 1
        arguments = arguments[:start] + arguments[end:]
        left_out = [name for name in list_agents("dueling") if name not in agents]
        if set(agents) <= set(list_agents("dueling")) and len(left_out) < len(agents):
            but = " but " + ", ".join(left_out) if left_out else ""
            arguments += ["--agents", f"(every dueling agent{but})"]
        else:
            arguments += ["--agents", *agents]
    return " ".join(words + arguments)


def main() -> None:
    from dueling_gym.agents import list_agents

    parser = argparse.ArgumentParser(description="Agent throughput benchmark")
    parser.add_argument("--agents", nargs="*", help="registry names (default: every dueling agent)")
    parser.add_argument("--problems", nargs="*", default=list(PROBLEMS))
    parser.add_argument("--quick", action="store_true", help="10^5 / 10^4 steps instead of 10^6 / 10^5")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--arm-scaling", action="store_true",
                        help=f"instead: fused steps/s of {', '.join(ARM_SCALING_AGENTS)} for K = {ARM_SCALING_ARMS}")
    parser.add_argument("--k-scaling", action="store_true",
                        help=f"instead: fused duels/s and peak memory of every dueling agent for K = {K_SCALING_ARMS}")
    parser.add_argument("--arms", nargs="*", type=int, help=f"numbers of arms for --k-scaling (default {K_SCALING_ARMS})")
    parser.add_argument("--cell-seconds", type=float, help="--k-scaling: length of each measured run (1.5; 0.3 quick)")
    parser.add_argument("--max-seconds", type=float, default=K_SCALING_TIME_TARGET_S,
                        help="--k-scaling: an agent needing longer than this for 10^4 duels is not run that long "
                             f"('too slow'; default {K_SCALING_TIME_TARGET_S:g})")
    parser.add_argument("--csv", help="--k-scaling: also write the rows to this CSV file (with a comment header)")
    args = parser.parse_args()
    if args.k_scaling:
        cell_seconds = args.cell_seconds or (0.3 if args.quick else 1.5)
        max_seconds = min(args.max_seconds, 10.0) if args.quick else args.max_seconds
        missed = k_scaling(args.agents, tuple(args.arms or K_SCALING_ARMS), cell_seconds, max_seconds, args.json,
                           args.csv, _command_line(args.agents))
        if missed:
            sys.exit(1)
        return
    if args.arm_scaling:
        arm_scaling(10**5 if args.quick else 10**6)
        return
    names = args.agents or list_agents("dueling")
    fused_horizon, loop_horizon = (10**5, 10**4) if args.quick else (10**6, 10**5)

    rows = []
    print(f"{'agent':<20} {'problem':<20} {'first call s':>12} {'fused steps/s':>15} {'act/observe steps/s':>20} {'peak MB':>8}")
    context = multiprocessing.get_context("spawn")
    for name in names:
        for problem in args.problems:
            with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
                row = pool.submit(measure, name, problem, fused_horizon, loop_horizon).result()
            rows.append(row)
            print(f"{name:<20} {problem:<20} {row['first_call_s']:>12.2f} {row['fused_steps_per_s']:>15,.0f} "
                  f"{row['act_observe_steps_per_s']:>20,.0f} {row['peak_rss_mb']:>8.0f}", flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)


def arm_scaling(horizon: int) -> None:
    """Print fused steps/s against the number of arms (one fresh process per measurement)."""
    print(f"{'agent':<12} {'K':>6} {'fused steps/s':>15} {'Condorcet regret':>17}")
    context = multiprocessing.get_context("spawn")
    for n_arms in ARM_SCALING_ARMS:
        for name in ARM_SCALING_AGENTS:
            with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
                row = pool.submit(measure_arm_scaling, name, n_arms, horizon).result()
            print(f"{name:<12} {n_arms:>6} {row['fused_steps_per_s']:>15,.0f} {row['condorcet_regret']:>17,.0f}", flush=True)


if __name__ == "__main__":
    main()
