"""Regenerate the figure and the numbers of ``docs/algorithms/savage.md``.

Run from the repository root: ``python docs/algorithms/savage_figures.py [--runs 100]``.
Each run uses the horizon ``T = 10^5`` (SAVAGE's behaviour depends on ``T``: explore-then-exploit
with ``delta = 1/T``), permutes the arms with ``numpy.random.default_rng(10_000 + run)`` so that
the lowest-index tie rule favours no arm, and records the ``copeland_komiyama`` regret.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dueling_gym.agents.savage import SAVAGE  # noqa: E402
from dueling_gym.experiments import log_checkpoints, simulate  # noqa: E402
from dueling_gym.problems import load_problem  # noqa: E402

PROBLEMS = ("sushi", "multisol", "gap", "arxiv", "mslr5-condorcet", "mslr5-noncondorcet", "cyclic4")
HORIZON = 100_000
IMAGE = Path(__file__).resolve().parent / "img" / "savage-regret.png"


def measure(name: str, variant: str, runs: int) -> dict:
    problem = load_problem(name)
    matrix = np.asarray(problem.matrix)
    checkpoints = log_checkpoints(HORIZON)
    curves, stops, correct = [], [], 0
    for run in range(runs):
        order = np.random.default_rng(10_000 + run).permutation(problem.n_arms)
        agent = SAVAGE(problem.n_arms, horizon=HORIZON, variant=variant)
        result = simulate(agent, matrix[np.ix_(order, order)], HORIZON, seed=run, checkpoints=checkpoints)
        curves.append(result.cumulative_regret["copeland_komiyama"])
        stops.append(agent.exploration_duels)
        correct += agent.done and agent.exploration_duels < HORIZON and order[agent.recommend()] in problem.copeland_winners
    curves = np.array(curves)
    return {"checkpoints": checkpoints, "mean": curves.mean(axis=0),
            "sem": curves[:, -1].std(ddof=1) / np.sqrt(runs), "stop": float(np.mean(stops)), "correct": correct}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    runs = parser.parse_args().runs
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=False)
    print("| problem | variant | regret at 10^5 | exploration duels | finished and right |")
    print("|---|---|---|---|---|")
    for axis, variant in zip(axes, ("copeland", "condorcet")):
        for name in PROBLEMS:
            if variant == "condorcet" and load_problem(name).condorcet_winner is None:
                continue
            row = measure(name, variant, runs)
            axis.plot(row["checkpoints"], row["mean"], label=name)
            print(f"| {name} | {variant} | {row['mean'][-1]:.0f} ± {row['sem']:.0f} | {row['stop']:.0f} | "
                  f"{row['correct']}/{runs} |", flush=True)
        axis.set(xscale="log", xlabel="duels t", ylabel="cumulative Copeland regret (Komiyama et al.)",
                 title=f"SAVAGE, variant={variant!r}, T = 10^5, {runs} runs")
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(IMAGE, dpi=110)

    print("\nper-duel cost (fused loop, horizon 10^6, one core):")
    for name in ("sushi", "mslr5-noncondorcet"):
        problem = load_problem(name)
        for variant in ("copeland", "borda"):
            agent = SAVAGE(problem.n_arms, horizon=10**6, variant=variant)
            simulate(agent, problem, 10, seed=0)  # compile / load the cache
            start = time.perf_counter()
            simulate(agent, problem, 10**6, seed=1)
            elapsed = time.perf_counter() - start
            explored = agent.exploration_duels or 10**6
            print(f"  {name:20s} {variant:9s} {elapsed / 1e6 * 1e9:6.0f} ns per duel ({1e6 / elapsed / 1e6:.1f} M duels/s), "
                  f"{explored} exploration duels")


if __name__ == "__main__":
    main()
