"""Identification agents: correctness rate, mean duels to stop, and duels per second.

Protocol: for every identification agent, on problems satisfying its assumptions, ``--runs``
seeded runs of :func:`dueling_gym.experiments.pure_exploration.run_pure_exploration`:

* ``utility K=10`` -- a Bradley-Terry problem (``utility_based(10, rng(0))``, Plackett-Luce
  pairwise marginals, strong stochastic transitivity);
* ``spaced K=10`` -- Bradley-Terry with utilities ``0, 0.45, ..., 4.05`` in random order (adjacent
  pairs ``|P - 1/2| >= 0.11``, the gap Single-Elimination's default assumes);
* ``mallows K=10`` -- a Mallows model with ``phi = 0.7`` (for MallowsMPI / MallowsMPR).

Reported per (agent, problem): correctness (exact answer; for ε-PAC agents also the ε-guarantee),
mean Kendall tau for ranking answers, mean duels, and duels/second over all runs after one
warm-up run (Numba compilation excluded).

Run: ``python benchmarks/identification.py [--runs 50] [--agents knockout pl_pac ...]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dueling_gym.agents import make_agent
from dueling_gym.agents._mallows import mallows_preferences
from dueling_gym.experiments.pure_exploration import run_pure_exploration
from dueling_gym.problems import PreferenceMatrix
from dueling_gym.problems.bradley_terry import bradley_terry_probabilities
from dueling_gym.problems.generators import utility_based


def problems() -> dict[str, PreferenceMatrix]:
    spaced = np.random.default_rng(3).permutation(10) * 0.45
    return {
        "utility K=10": utility_based(10, np.random.default_rng(0)),
        "spaced K=10": PreferenceMatrix(bradley_terry_probabilities(spaced), name="spaced"),
        "mallows K=10": PreferenceMatrix(mallows_preferences(np.random.default_rng(0).permutation(10), 0.7),
                                         name="mallows"),
    }


#: agent -> (hyperparameters, problems it is run on)
PLAN = {
    "knockout": ({}, ("utility K=10", "spaced K=10")),
    "single_elimination": ({}, ("spaced K=10",)),
    "single_elimination:k=3": ({"k": 3}, ("spaced K=10",)),
    "sequential_elimination": ({}, ("utility K=10", "spaced K=10")),
    "successive_elimination_borda": ({}, ("utility K=10", "spaced K=10")),
    "pl_pac": ({}, ("utility K=10", "spaced K=10")),
    "mallows_mpi": ({}, ("mallows K=10", "spaced K=10")),
    "mallows_mpr": ({}, ("mallows K=10", "spaced K=10")),
    "multisort": ({}, ("spaced K=10",)),
    "preference_estimator": ({}, ("spaced K=10", "mallows K=10")),
}


def measure(label: str, problem: PreferenceMatrix, runs: int) -> dict:
    name = label.split(":")[0]
    agent = make_agent(name, problem.n_arms, **PLAN[label][0])
    run_pure_exploration(agent, problem, seed=10_000)  # warm-up: compilation
    start = time.perf_counter()
    results = [run_pure_exploration(agent, problem, seed=seed) for seed in range(runs)]
    elapsed = time.perf_counter() - start
    samples = np.array([r.samples for r in results])
    row = {
        "agent": label,
        "problem": problem.name,
        "correct": float(np.mean([r.correct for r in results])),
        "mean_duels": float(samples.mean()),
        "duels_per_second": float(samples.sum() / elapsed),
    }
    if results[0].epsilon_correct is not None:
        row["epsilon_correct"] = float(np.mean([r.epsilon_correct for r in results]))
    if results[0].kendall_tau is not None:
        row["kendall_tau"] = float(np.mean([r.kendall_tau for r in results]))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--agents", nargs="*", default=list(PLAN))
    args = parser.parse_args()
    table = problems()
    print("| agent | problem | correct | ε-correct | Kendall tau | mean duels | duels/s |")
    print("|---|---|---|---|---|---|---|")
    for label in args.agents:
        for problem_label in PLAN[label][1]:
            row = measure(label, table[problem_label], args.runs)
            epsilon = f"{row['epsilon_correct']:.2f}" if "epsilon_correct" in row else ""
            tau = f"{row['kendall_tau']:.3f}" if "kendall_tau" in row else ""
            print(f"| {label} | {problem_label} | {row['correct']:.2f} | {epsilon} | {tau} | "
                  f"{row['mean_duels']:.0f} | {row['duels_per_second']:.3g} |", flush=True)


if __name__ == "__main__":
    main()
