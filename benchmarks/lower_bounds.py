"""Time of the Copeland lower-bound constants (LB by constraint generation, ECWB by sort-and-scan).

Run: ``python benchmarks/lower_bounds.py``.  CW-RMED solves the LB linear program at every
step, so it must stay fast up to K = 16.
"""

from __future__ import annotations

import time

import numpy as np

from dueling_gym.problems import list_problems, load_problem, unique_copeland_winner
from dueling_gym.problems.lower_bounds import ecw_lower_bound_constant, lower_bound_constant


def median_time(function, *args, repeats: int = 20) -> float:
    function(*args)  # warm-up: imports, HiGHS start-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    print(f"{'problem':<28} {'K':>3} {'LB':>10} {'LB ms':>8} {'ECWB':>10} {'ECWB ms':>8}")
    problems = [load_problem(name) for name in list_problems()]
    rng = np.random.default_rng(0)
    problems += [unique_copeland_winner(k, rng, min_gap=0.05) for k in (8, 16, 24)]
    for problem in problems:
        lb_time = median_time(lower_bound_constant, problem)
        ecw_time = median_time(ecw_lower_bound_constant, problem)
        print(f"{problem.name:<28} {problem.n_arms:>3} {lower_bound_constant(problem):>10.2f} {1e3 * lb_time:>8.2f} "
              f"{ecw_lower_bound_constant(problem):>10.2f} {1e3 * ecw_time:>8.3f}")


if __name__ == "__main__":
    main()
