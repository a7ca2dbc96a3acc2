"""Agent throughput: fused loop vs act/observe loop, compile time, peak memory.

Protocol (issues "Agents I" and "Agents II"): for every registered dueling agent, on Sushi
(K = 16) and MSLR-5 non-Condorcet (K = 5):

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
take longer than ``--max-seconds`` is shown as "too slow" with the probe's rate.  Targets checked:
>= 100k duels/s at K = 500 for CCB, RUCB, RMED1, SCB; every dueling agent runs 10^4 duels at
K = 2000 within 2 GB.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import time
from concurrent.futures import ProcessPoolExecutor

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
K_SCALING_MIN_DUELS = 10_000  # every dueling agent at K = 2000 ...
K_SCALING_MEMORY_TARGET_MB = 2048  # ... within 2 GB
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
                       note=f"probes took over {max_seconds:g} s")
            break
        horizon = min(_MAX_HORIZON, int(horizon * min(20.0, max(2.0, 0.15 * cell_seconds / wall))))
    if row["status"] == "ok":
        rate = horizon / wall
        final = min(_MAX_HORIZON, max(K_SCALING_MIN_DUELS, int(rate * cell_seconds)))
        if final > horizon and final / rate > max_seconds:
            row.update(status="too slow", duels=horizon, fused=result.fused, duels_per_s=rate,
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
              json_path: str | None) -> list[dict]:
    """Print the K-scaling table (one fresh process per cell) and check its targets."""
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
    _check_k_scaling_targets(rows, max(arms))
    if json_path:
        with open(json_path, "w") as handle:
            json.dump(rows, handle, indent=2)
    return rows


def _check_k_scaling_targets(rows: list[dict], largest: int) -> None:
    print("\nTargets")
    for row in rows:
        if row["agent"] in K_SCALING_HEADLINE and row["n_arms"] == 500 and row["status"] != "n/a":
            verdict = "met" if row["status"] == "ok" and row["duels_per_s"] >= K_SCALING_RATE_TARGET else "MISSED"
            print(f"  {row['agent']:<12} K=500: {row['duels_per_s']:>12,.0f} duels/s "
                  f"(target >= {K_SCALING_RATE_TARGET:,}) {verdict}")
    failures = []
    for row in rows:
        if row["n_arms"] != largest or row["status"] == "n/a":
            continue
        if row["status"] != "ok" or row["duels"] < K_SCALING_MIN_DUELS or row["peak_rss_mb"] > K_SCALING_MEMORY_TARGET_MB:
            failures.append(f"{row['agent']} ({row['status']}, {row['duels']:,} duels, {row['peak_rss_mb']:,.0f} MB)")
    checked = sum(1 for row in rows if row["n_arms"] == largest and row["status"] != "n/a")
    print(f"  K={largest}: {checked - len(failures)}/{checked} dueling agents ran >= {K_SCALING_MIN_DUELS:,} duels "
          f"within {K_SCALING_MEMORY_TARGET_MB:,} MB peak RSS" + (": missed by " + ", ".join(failures) if failures else ""))
    skipped = sorted({row["agent"] for row in rows if row["status"] == "n/a"})
    if skipped:
        print(f"  not applicable: {', '.join(skipped)}")


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
    parser.add_argument("--max-seconds", type=float, default=30.0,
                        help="--k-scaling: an agent needing longer than this for 10^4 duels is 'too slow'")
    args = parser.parse_args()
    if args.k_scaling:
        cell_seconds = args.cell_seconds or (0.3 if args.quick else 1.5)
        max_seconds = min(args.max_seconds, 10.0) if args.quick else args.max_seconds
        k_scaling(args.agents, tuple(args.arms or K_SCALING_ARMS), cell_seconds, max_seconds, args.json)
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
