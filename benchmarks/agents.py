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


def main() -> None:
    from dueling_gym.agents import list_agents

    parser = argparse.ArgumentParser(description="Agent throughput benchmark")
    parser.add_argument("--agents", nargs="*", help="registry names (default: every dueling agent)")
    parser.add_argument("--problems", nargs="*", default=list(PROBLEMS))
    parser.add_argument("--quick", action="store_true", help="10^5 / 10^4 steps instead of 10^6 / 10^5")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--arm-scaling", action="store_true",
                        help=f"instead: fused steps/s of {', '.join(ARM_SCALING_AGENTS)} for K = {ARM_SCALING_ARMS}")
    args = parser.parse_args()
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
