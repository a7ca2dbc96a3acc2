"""CPE-DB sample complexity: CLUCB-Borda samples to stop vs the Borda hardness ``H^B``.

Protocol (issue "CPE-DB", Chen, Du, Huang, Zhao, ICML 2020): a family of random bipartite
instances with ``l = 2..10`` positions and ``n = l + 2`` candidates (planted Condorcet matching,
edge density 0.35, minimum preference gap cycling through 0.1 / 0.2 / 0.3; instances whose
``H^B`` exceeds a cap are skipped so that the run stays short).  On each instance:

* ``clucb_borda_exact`` -- CLUCB-Borda-Exact as printed (statistics discarded every epoch);
* ``clucb_borda_exact_reuse`` -- the same with ``reuse_samples_if_exact=True`` (valid with the
  exact sampler, spec §4.4 gap (ii));
* ``clucb_borda_pac`` -- CLUCB-Borda-PAC with ``ε`` = half the smallest Borda-score gap
  ``min_e Δ^B_e / l``, so that its ε-optimal answer must be the Borda matching.

Reported per run: samples to stop, whether the answer is the Borda matching, wall time per
sample; per agent: the ratio samples / (``H^B ln(1/δ)``, Theorem 3's lower-bound scale) and
the log-log slope of samples against it.  The plot (log-log) is written to
``benchmarks/results/combinatorial.png``.  Runs are spread over ``--workers`` processes
(default 2); wall times are per core and depend on the machine's load.

Run: ``python benchmarks/combinatorial.py [--quick] [--seeds 1] [--delta 0.05] [--json out.json]``.
Default (27 instances, 81 runs): about 5 minutes on 2 cores; ``--quick``: under 1 minute.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results"
AGENTS = ("clucb_borda_exact", "clucb_borda_exact_reuse", "clucb_borda_pac")
MIN_GAPS = (0.1, 0.2, 0.3)


def instance_family(positions: list[int], per_size: int, hardness_cap: float) -> list[dict]:
    """Deterministic list of instance specifications (seed search skips too-hard or tied instances)."""
    from dueling_gym.problems import random_bipartite_problem

    specs = []
    for l in positions:
        seed, found = 0, 0
        while found < per_size and seed < 200:
            min_gap = MIN_GAPS[(found + l) % len(MIN_GAPS)]
            problem = random_bipartite_problem(l, l + 2, np.random.default_rng(10_000 * l + seed),
                                               planted_condorcet=True, min_gap=min_gap, edge_probability=0.35)
            seed += 1
            hardness = problem.borda_hardness()
            if problem.count_max_matchings() < 2 or not math.isfinite(hardness) or hardness > hardness_cap:
                continue
            specs.append({"n_positions": l, "n_candidates": l + 2, "seed": 10_000 * l + seed - 1,
                          "min_gap": min_gap, "hardness": hardness})
            found += 1
    return specs


def build(spec: dict):
    from dueling_gym.problems import random_bipartite_problem

    return random_bipartite_problem(spec["n_positions"], spec["n_candidates"], np.random.default_rng(spec["seed"]),
                                    planted_condorcet=True, min_gap=spec["min_gap"], edge_probability=0.35,
                                    name=f"l{spec['n_positions']}_s{spec['seed']}")


def run_one(job: tuple[dict, str, int, float]) -> dict:
    """One (instance, agent, seed) run, in a worker process."""
    from dueling_gym.agents.clucb_borda import CLUCBBordaExact, CLUCBBordaPAC
    from dueling_gym.experiments.pure_exploration import run_pure_exploration

    spec, agent_name, seed, delta = job
    problem = build(spec)
    smallest_score_gap = float(problem.borda_gaps().min()) / problem.n_positions
    if agent_name == "clucb_borda_pac":
        agent = CLUCBBordaPAC(problem, delta=delta, epsilon=0.5 * smallest_score_gap)
    else:
        agent = CLUCBBordaExact(problem, delta=delta, reuse_samples_if_exact=agent_name.endswith("reuse"))
    result = run_pure_exploration(agent, problem, seed=seed)
    return {
        "instance": problem.name,
        "n_positions": problem.n_positions,
        "n_candidates": problem.n_candidates,
        "n_edges": problem.n_edges,
        "n_pairs": problem.n_comparable_pairs,
        "hardness": spec["hardness"],
        "agent": agent_name,
        "seed": seed,
        "samples": result.samples,
        "correct": result.correct,
        "epochs": getattr(agent, "epoch", None) if agent_name != "clucb_borda_pac" else None,
        "wall_time_s": result.wall_time,
        "us_per_sample": 1e6 * result.time_per_sample,
    }


def slope(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 2 or np.ptp(np.log(x)) == 0:
        return float("nan")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def table(rows: list[dict], delta: float) -> str:
    scale = math.log(1 / delta)
    lines = [f"{'instance':<14}{'l':>3}{'m':>4}{'K':>5}{'H^B':>9}  {'agent':<24}{'samples':>10}{'/(H ln1/d)':>11}"
             f"{'us/sample':>10}{'epochs':>7}{'ok':>4}"]
    for row in sorted(rows, key=lambda r: (r["hardness"], r["instance"], r["agent"], r["seed"])):
        lines.append(f"{row['instance']:<14}{row['n_positions']:>3}{row['n_edges']:>4}{row['n_pairs']:>5}"
                     f"{row['hardness']:>9.1f}  {row['agent']:<24}{row['samples']:>10}"
                     f"{row['samples'] / (row['hardness'] * scale):>11.0f}{row['us_per_sample']:>10.1f}"
                     f"{row['epochs'] if row['epochs'] is not None else '-':>7}{'y' if row['correct'] else 'N':>4}")
    lines.append("")
    lines.append(f"{'agent':<24}{'runs':>5}{'correct':>8}{'median ratio':>13}{'log-log slope':>14}{'us/sample':>10}")
    for agent in AGENTS:
        mine = [row for row in rows if row["agent"] == agent]
        if not mine:
            continue
        x = np.array([row["hardness"] * scale for row in mine])
        y = np.array([row["samples"] for row in mine], dtype=float)
        lines.append(f"{agent:<24}{len(mine):>5}{sum(row['correct'] for row in mine):>8}"
                     f"{np.median(y / x):>13.0f}{slope(x, y):>14.2f}"
                     f"{np.median([row['us_per_sample'] for row in mine]):>10.1f}")
    return "\n".join(lines)


def plot(rows: list[dict], delta: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scale = math.log(1 / delta)
    fig, ax = plt.subplots(figsize=(6.5, 4.8))
    markers = {"clucb_borda_exact": "o", "clucb_borda_exact_reuse": "s", "clucb_borda_pac": "^"}
    for agent in AGENTS:
        mine = [row for row in rows if row["agent"] == agent]
        if not mine:
            continue
        x = np.array([row["hardness"] * scale for row in mine])
        y = np.array([row["samples"] for row in mine], dtype=float)
        ax.scatter(x, y, marker=markers[agent], alpha=0.75,
                   label=f"{agent} (slope {slope(x, y):.2f})")
    xs = np.array([row["hardness"] * scale for row in rows])
    grid = np.geomspace(xs.min() / 1.3, xs.max() * 1.3, 50)
    ax.plot(grid, grid, "k--", lw=0.8, label="samples = H^B ln(1/δ)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"$H^B \ln(1/\delta)$  (Borda lower-bound scale)")
    ax.set_ylabel("samples to stop")
    ax.set_title(f"CLUCB-Borda on random CPE-DB instances (l = 2..10, δ = {delta})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="l in {2,4,6,8,10}, one easy instance each (~1 min)")
    parser.add_argument("--seeds", type=int, default=1, help="runs per (instance, agent)")
    parser.add_argument("--delta", type=float, default=0.05)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--agents", nargs="*", default=list(AGENTS), choices=AGENTS)
    parser.add_argument("--plot", type=Path, default=RESULTS / "combinatorial.png")
    parser.add_argument("--json", type=Path, default=None, help="also write the raw rows here")
    args = parser.parse_args()

    if args.quick:
        specs = instance_family([2, 4, 6, 8, 10], per_size=1, hardness_cap=150.0)
    else:
        specs = instance_family(list(range(2, 11)), per_size=3, hardness_cap=600.0)
    jobs = [(spec, agent, seed, args.delta) for spec in specs for agent in args.agents for seed in range(args.seeds)]
    # Longest jobs first keeps the workers busy until the end.
    cost = {"clucb_borda_exact": 10.0, "clucb_borda_exact_reuse": 2.0, "clucb_borda_pac": 1.0}
    jobs.sort(key=lambda job: -job[0]["hardness"] * cost[job[1]])
    print(f"{len(specs)} instances, {len(jobs)} runs on {args.workers} workers ...", flush=True)
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        rows = list(pool.map(run_one, jobs))
    print(table(rows, args.delta))
    print(f"\ntotal wall time {time.perf_counter() - start:.1f} s")
    plot(rows, args.delta, args.plot)
    print(f"plot written to {args.plot}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
