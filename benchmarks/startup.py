"""Time to first result: what a user waits for in a fresh process.

Measures (each in new Python processes, CPU seconds of the process and its children, and wall
seconds; the median of ``--repeats`` runs):

* ``import dueling_gym`` beside ``import gymnasium, numpy`` (target: at most 2x), and
  ``import numba`` plus one call of a trivial cached ``njit`` function: the fixed cost of any
  process that runs a compiled kernel, which no kernel of ours can go below;
* the tiny run ``dueling-gym run --agents ccb --problems sushi --seeds 1 --horizon 1000``, with
  and without its plot (target: at most 3x ``import gymnasium, numpy``);
* for every registered dueling agent, ``make_agent`` then one ``simulate`` of 1000 duels on a
  5-armed problem, against the same call repeated in that process (target: the first use adds
  at most 0.5 s once the on-disk cache is warm);
* with ``--cold``: the first use after installation, every compiled function built from
  nothing (Numba's cache pointed at an empty folder): ``dueling-gym warmup`` and the tiny run.

Run: ``python benchmarks/startup.py [--repeats 5] [--agents ccb rucb ...] [--cold] [--json out.json]``
(about 3 minutes warm on 2 cores; ``--cold`` adds the compilation of everything, several minutes).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_TRIVIAL_KERNEL = """
import numba

@numba.njit(cache=True)
def increment(x):
    return x + 1
"""

_FIRST_SIMULATE = """
import sys, time
start = time.perf_counter()
from dueling_gym.agents import make_agent
from dueling_gym.experiments.simulate import simulate
from dueling_gym.problems import load_problem
problem = load_problem("mslr5-condorcet")  # five arms: the shipped learned policy needs K = 5 or 8
imported = time.perf_counter()
agent = make_agent(sys.argv[1], problem.n_arms, seed=0, **({"horizon": 1000} if sys.argv[2] == "1" else {}))
simulate(agent, problem, 1000, seed=0)
first = time.perf_counter()
agent = make_agent(sys.argv[1], problem.n_arms, seed=1, **({"horizon": 1000} if sys.argv[2] == "1" else {}))
simulate(agent, problem, 1000, seed=1)
warm = time.perf_counter()
print(imported - start, first - imported, warm - first)
"""


def measure(command: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None) -> tuple[float, float, str]:
    """(CPU seconds of the command and its children, wall seconds, stdout) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, result.stdout


def median_of(repeats: int, command: list[str], **kwargs) -> tuple[float, float]:
    runs = [measure(command, **kwargs)[:2] for _ in range(repeats)]
    return statistics.median(cpu for cpu, _ in runs), statistics.median(wall for _, wall in runs)


def tiny_run(out: Path, plot: bool) -> list[str]:
    command = [sys.executable, "-m", "dueling_gym.cli", "run", "--agents", "ccb", "--problems", "sushi", "--seeds", "1",
               "--horizon", "1000", "--out", str(out), "--no-progress"]
    return command + ([] if plot else ["--no-plot"])


def imports_and_tiny_run(repeats: int, env: dict[str, str]) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "trivial_kernel.py").write_text(_TRIVIAL_KERNEL)
        subprocess.run([sys.executable, "-c", "import trivial_kernel; trivial_kernel.increment(1)"], cwd=folder,
                       env=env, check=True)
        cases = [
            ("import gymnasium, numpy", [sys.executable, "-c", "import gymnasium, numpy"], {}),
            ("import dueling_gym", [sys.executable, "-c", "import dueling_gym"], {}),
            ("import numba + one cached njit call", [sys.executable, "-c",
                                                     "import trivial_kernel; trivial_kernel.increment(1)"],
             {"cwd": folder}),
        ]
        for plot in (False, True):
            out = Path(folder) / f"tiny-{plot}"
            subprocess.run(tiny_run(out, plot), env=env, check=True, capture_output=True)  # compiled, cache warm
            cases.append((f"tiny run ({'with' if plot else 'without'} plot)", tiny_run(out, plot), {}))
        for label, command, options in cases:
            cpu, wall = median_of(repeats, command, env=env, **options)
            rows.append({"what": label, "cpu_s": cpu, "wall_s": wall})
    baseline = rows[0]["cpu_s"]
    for row in rows:
        row["cpu_ratio_to_gymnasium_numpy"] = row["cpu_s"] / baseline
    return rows


def first_simulate(agents: list[str], env: dict[str, str]) -> list[dict]:
    from dueling_gym.agents import AGENT_REGISTRY

    rows = []
    for name in agents:
        needs_horizon = "horizon" in inspect.signature(AGENT_REGISTRY[name].__init__).parameters
        command = [sys.executable, "-c", _FIRST_SIMULATE, name, "1" if needs_horizon else "0"]
        measure(command, env=env)  # the cache is warm from here on
        _, _, text = measure(command, env=env)
        imported, first, warm = (float(value) for value in text.split())
        rows.append({"agent": name, "import_s": imported, "first_simulate_s": first, "warm_simulate_s": warm,
                     "added_by_first_use_s": first - warm})
    return rows


def cold_start(env: dict[str, str]) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as folder:
        cold = dict(env, NUMBA_CACHE_DIR=cache)
        cpu, wall, _ = measure(tiny_run(Path(folder) / "cold", plot=True), env=cold)
        rows.append({"what": "tiny run, nothing compiled", "cpu_s": cpu, "wall_s": wall})
        with tempfile.TemporaryDirectory() as empty:
            cpu, wall, _ = measure([sys.executable, "-m", "dueling_gym.cli", "warmup", "--no-progress"],
                                   env=dict(env, NUMBA_CACHE_DIR=empty))
            rows.append({"what": "dueling-gym warmup, nothing compiled", "cpu_s": cpu, "wall_s": wall})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--agents", nargs="*", default=None, help="agents of the first-simulate table (default: all)")
    parser.add_argument("--cold", action="store_true", help="also measure the first use after installation")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    from dueling_gym.agents import list_agents

    env = dict(os.environ)
    report: dict = {"imports_and_tiny_run": imports_and_tiny_run(args.repeats, env)}
    print("| what | CPU s | wall s | CPU / import gymnasium, numpy |\n|---|---:|---:|---:|")
    for row in report["imports_and_tiny_run"]:
        print(f"| {row['what']} | {row['cpu_s']:.2f} | {row['wall_s']:.2f} | {row['cpu_ratio_to_gymnasium_numpy']:.1f}x |")
    agents = args.agents or [name for name in list_agents("dueling")]
    report["first_simulate"] = first_simulate(agents, env)
    print("\n| agent | import s | first make+simulate s | warm make+simulate s | added by first use s |\n"
          "|---|---:|---:|---:|---:|")
    for row in report["first_simulate"]:
        print(f"| {row['agent']} | {row['import_s']:.2f} | {row['first_simulate_s']:.3f} | "
              f"{row['warm_simulate_s']:.4f} | {row['added_by_first_use_s']:.3f} |")
    worst = max(report["first_simulate"], key=lambda row: row["added_by_first_use_s"])
    print(f"\nlargest cost of a first use: {worst['agent']} {worst['added_by_first_use_s']:.3f} s")
    if args.cold:
        report["cold"] = cold_start(env)
        print("\n| first use after installation | CPU s | wall s |\n|---|---:|---:|")
        for row in report["cold"]:
            print(f"| {row['what']} | {row['cpu_s']:.1f} | {row['wall_s']:.1f} |")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
