"""Time and memory of the Copeland lower-bound constants of Komiyama et al. (ICML 2016).

Run: ``python benchmarks/lower_bounds.py`` (about a minute; ``--quick`` skips K = 500).

* Published problems: LB (compact LP) and ECWB (sort and scan), and LB by constraint
  generation, the method CW-RMED runs at every step on its empirical matrix (it must stay fast
  up to K = 16).
* K-scaling: LB and ECWB of random problems with K = 16 .. 500 -- a unique Copeland winner,
  no Condorcet winner, and the 500-armed problem of Zoghi et al. (2015): three Copeland
  winners in a cycle (score K - 2), the other arms' scores 0 .. K - 4.  Each cell is measured
  in a fresh process, so "peak MB" is that process's peak resident memory (interpreter, NumPy,
  SciPy and the compiled kernels included; the baseline of a process that only imports the
  package is printed first).  The target is 10 s and well under 2 GB per constant at K = 500.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import time

import numpy as np

SCALING_SIZES = (16, 50, 100, 200, 500)
SCALING_PROBLEMS = ("unique_copeland_winner", "no_condorcet_winner", "cyclic_copeland_winners")


def median_time(function, *args, repeats: int = 20) -> float:
    function(*args)  # warm-up: imports, HiGHS start-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _peak_megabytes() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kilobytes on Linux


def _baseline() -> float:
    import dueling_gym.problems.lower_bounds  # noqa: F401 - what every measurement imports

    return _peak_megabytes()


def _measure(generator: str, n_arms: int, bound: str) -> tuple[float, float, float]:
    """(value, seconds, peak MB) of one constant, in a fresh process."""
    from dueling_gym.problems import GENERATORS, load_problem
    from dueling_gym.problems.lower_bounds import ecw_lower_bound_constant, lower_bound_constant

    problem = GENERATORS[generator](n_arms, np.random.default_rng(2015))
    function = lower_bound_constant if bound == "LB" else ecw_lower_bound_constant
    function(load_problem("gap"))  # warm-up: load the compiled kernels, start HiGHS
    start = time.perf_counter()
    value = function(problem)
    return value, time.perf_counter() - start, _peak_megabytes()


def published_table() -> None:
    from dueling_gym.problems import list_problems, load_problem, unique_copeland_winner
    from dueling_gym.problems.lower_bounds import (
        ConstraintPool,
        CopelandLowerBoundStructure,
        ecw_lower_bound_constant,
        lower_bound_constant,
    )

    def by_rows(problem) -> float:
        structure = CopelandLowerBoundStructure(problem)
        return min(structure.full_region_constant(int(i1), ConstraintPool()).value for i1 in structure.winners)

    print(f"{'problem':<28} {'K':>3} {'LB':>10} {'LB ms':>8} {'rows ms':>8} {'ECWB':>10} {'ECWB ms':>8}")
    problems = [load_problem(name) for name in list_problems()]
    rng = np.random.default_rng(0)
    problems += [unique_copeland_winner(k, rng, min_gap=0.05) for k in (8, 16, 24)]
    for problem in problems:
        lb_time = median_time(lower_bound_constant, problem, repeats=5)
        rows_time = median_time(by_rows, problem, repeats=3)
        ecw_time = median_time(ecw_lower_bound_constant, problem)
        print(f"{problem.name:<28} {problem.n_arms:>3} {lower_bound_constant(problem):>10.2f} {1e3 * lb_time:>8.2f} "
              f"{1e3 * rows_time:>8.1f} {ecw_lower_bound_constant(problem):>10.2f} {1e3 * ecw_time:>8.3f}")


def scaling_table(sizes: tuple[int, ...]) -> None:
    context = multiprocessing.get_context("spawn")
    with context.Pool(1, maxtasksperchild=1) as pool:
        baseline = pool.apply(_baseline)
    print(f"\nK-scaling (fresh process per cell; baseline after import: {baseline:.0f} MB)")
    print(f"{'problem':<26} {'K':>4} {'LB':>12} {'LB s':>7} {'LB MB':>6} {'ECWB':>12} {'ECWB s':>7} {'ECWB MB':>7}")
    for generator in SCALING_PROBLEMS:
        for n_arms in sizes:
            cells = []
            for bound in ("LB", "ECWB"):
                with context.Pool(1, maxtasksperchild=1) as pool:
                    cells.append(pool.apply(_measure, (generator, n_arms, bound)))
            (lb, lb_time, lb_peak), (ecwb, ecw_time, ecw_peak) = cells
            print(f"{generator:<26} {n_arms:>4} {lb:>12.2f} {lb_time:>7.2f} {lb_peak:>6.0f} "
                  f"{ecwb:>12.2f} {ecw_time:>7.3f} {ecw_peak:>7.0f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip K = 500")
    arguments = parser.parse_args()
    published_table()
    scaling_table(tuple(k for k in SCALING_SIZES if not (arguments.quick and k == 500)))


if __name__ == "__main__":
    main()
