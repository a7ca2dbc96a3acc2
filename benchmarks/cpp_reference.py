"""Side-by-side speed of our fused loops and the C++ reference library DuelingBanditLib.

DuelingBanditLib (Komiyama, Honda, Kashima, Nakagawa; the code behind the experiments of
"Regret Lower Bound and Optimal Algorithm in Dueling Bandit Problem", COLT 2015) is a small
header-only C++ library.  Get it with::

    git clone https://github.com/jkomiyama/duelingbanditlib

and pass the checkout with ``--reference-dir``.  Nothing of it is copied into this project.

What is measured
----------------
For every (agent, problem) cell, with the same horizon ``T`` and number of runs ``R``:

* **C++**: the reference's own ``main.cpp`` runs all its ten policies together in one loop and
  has no option to run one of them, so this script generates a small driver (``DRIVER`` below,
  written into the build folder) that includes the reference's headers and does exactly what
  ``main.cpp`` does for one policy: read the matrix file (``prefMatrixFromFile``), build an
  ``ArmSet``, and for each run construct the policy with ``main.cpp``'s arguments and call
  ``Simulator<RoundwiseLog>::run``, which per duel calls ``selectNextPair``, ``ArmSet::pull``,
  ``updateState``, ``regretIncrease`` and ``RoundwiseLog::record`` (an in-memory per-round
  regret add; the reference has no mode without it).  The reference writes no per-round output;
  its per-run ``debugPrint`` (the matrix and the policy's name) is kept; its final text log
  (``RoundwiseLogWriter``, about 40 lines) is not written.  The driver reads a steady clock on
  entering ``main()`` and after the last run: the wall-clock time excludes nothing but process
  start-up and exit.  It is built with ``g++ -O2 -std=c++11`` (``--cxxflags``; the reference's
  ``wscript`` uses ``-O3 -std=c++0x``).
* **ours**: ``make_agent`` + :func:`dueling_gym.experiments.simulate` (fused loop) per run, timed
  with ``perf_counter`` around both; one short warm-up run first, so Numba compilation (and
  loading its cache) is excluded.

duels/s = ``T * R / seconds``; ratio = ours / C++; target: ratio >= 10.  With ``--repeats N``
each side is measured N times, alternately, and its fastest repeat is kept.  Also reported: the
mean final regret of both (the reference's ``regretIncrease`` is
``(P[i*, i] + P[i*, j] - 1) / 2``, our ``condorcet_strong`` notion), a check that the two ran
the same algorithm on the same matrix.  Seeds differ (mt19937 vs NumPy), so regrets agree only
statistically.

Hyperparameters are the reference's ``main.cpp`` ones, matched where ours differ in name:
RMED ``f(K) = 0.3 K^1.01``, RMED2 ``alpha = 3``, RUCB ``alpha = 0.51``, SAVAGE the Condorcet
variant with ``delta = 1/T``, IF ``delta = 1/(T K^2)``, UCB learners of Sparring / MultiSBM with
``sqrt(2.5 ln n / N)`` (our ``a = 3``: ``(a + 2) / 2 = 2.5``).  One cannot be matched: the
reference's BTM uses the radius ``1.2^2 sqrt(ln(1/delta) / n)``, ours ``3 gamma^2 sqrt(...)``
with ``gamma >= 1`` (the paper's); both are run with their defaults, so our BTM explores longer.

Run: ``python benchmarks/cpp_reference.py --reference-dir /path/to/duelingbanditlib
[--horizon 100000] [--runs 5] [--problems sushi arxiv cyclic4] [--agents rmed1 ...]
[--repeats 3] [--json out.json] [--csv out.csv]``.  Run it on an otherwise idle core.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

#: Our registry name -> (C++ policy name in the driver, extra make_agent arguments given T).
AGENTS: dict[str, tuple[str, object]] = {
    "rmed1": ("RMED1", lambda horizon: {}),
    "rmed2": ("RMED2", lambda horizon: {}),
    "rmed2fh": ("RMED2F", lambda horizon: {"horizon": horizon}),
    "btm": ("BTM", lambda horizon: {"horizon": horizon}),
    "interleaved_filtering": ("IF", lambda horizon: {"horizon": horizon}),
    "multisbm": ("MultiSBM", lambda horizon: {"a": 3.0}),
    "rucb": ("RUCB", lambda horizon: {"alpha": 0.51}),
    "savage": ("Savage", lambda horizon: {"horizon": horizon, "variant": "condorcet"}),
    "sparring": ("Sparring", lambda horizon: {"a": 3.0}),
    "random": ("Random", lambda horizon: {}),
}
#: Every agent, the uniform random one included: its row is the loop floor of both sides.
DEFAULT_AGENTS = tuple(AGENTS)
DEFAULT_PROBLEMS = ("sushi", "arxiv", "cyclic4")
TARGET_RATIO = 10.0

#: One policy of the reference, run as its main.cpp runs all ten (same constructor arguments).
DRIVER = r"""
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include "bandit/util.hpp"
#include "arm/armset.hpp"
#include "policy/policy.hpp"
#include "policy/policy_random.hpp"
#include "policy/policy_rmed.hpp"
#if __has_include("policy/policy_rucb_icml.hpp")
#include "policy/policy_rucb_icml.hpp"
#else
#include "policy/policy_rucb.hpp"
#endif
#include "policy/policy_btm.hpp"
#include "policy/policy_if.hpp"
#include "policy/policy_savage.hpp"
#include "policy/policy_ucb.hpp"
#include "policy/policy_sparring.hpp"
#include "policy/policy_multisbm.hpp"
#include "bandit/simulator.hpp"
using namespace bandit;

PolicyPtr makePolicy(const std::string &name, uint K, uint T){
  if(name == "RMED1") return PolicyPtr(new RMEDPolicy(K, T, 1));
  if(name == "RMED2") return PolicyPtr(new RMEDPolicy(K, T, 2));
  if(name == "RMED2F") return PolicyPtr(new RMEDPolicy(K, T, 3));
  if(name == "RUCB") return PolicyPtr(new RUCBPolicy(K, T));
  if(name == "Random") return PolicyPtr(new RandomPolicy(K));
  if(name == "BTM") return PolicyPtr(new BTMPolicy(K, T));
  if(name == "IF") return PolicyPtr(new IFPolicy(K, T));
  if(name == "Savage") return PolicyPtr(new SavagePolicy(K, T, 1.0/T));
  if(name == "Sparring"){
    MABPolicyPtr leftMAB(new UCBMABPolicy(K, 2.50));
    MABPolicyPtr rightMAB(new UCBMABPolicy(K, 2.50));
    return PolicyPtr(new SparringPolicy(K, T, leftMAB, rightMAB));
  }
  if(name == "MultiSBM"){
    std::vector<MABPolicyPtr> sbm;
    for(uint si=0;si<K;++si){ sbm.push_back(MABPolicyPtr(new UCBMABPolicy(K, 2.50))); }
    return PolicyPtr(new MultiSBMPolicy(K, T, sbm));
  }
  std::cerr << "unknown policy " << name << std::endl;
  exit(2);
}

int main(int argc, char *argv[]){
  const auto start = std::chrono::steady_clock::now();
  if(argc != 6){ std::cerr << "usage: driver POLICY MATRIX_FILE T RUNS SEED" << std::endl; return 2; }
  const std::string name = argv[1];
  const uint T = std::strtoul(argv[3], 0, 10), RunNum = std::strtoul(argv[4], 0, 10);
  randomEngine = std::mt19937(std::strtoul(argv[5], 0, 10));
  std::vector<std::vector<double> > prefMatrix = prefMatrixFromFile(argv[2]);
  const uint K = prefMatrix.size();
  RoundwiseLog log(1, T + 1);  // main.cpp allocates T slots and records t = 1..T
  ArmSet armset(prefMatrix, K);
  for(uint run=0;run<RunNum;++run){
    std::vector<PolicyPtr> policies;
    policies.push_back(makePolicy(name, K, T));
    Simulator<RoundwiseLog> sim(armset, policies);
    sim.run(log, T);
  }
  const auto stop = std::chrono::steady_clock::now();
  double regret = 0.0;
  for(uint t=0;t<=T;++t){ regret += log.roundwiseRegrets[0][t]; }
  std::printf("\nRESULT %.9f %.9f\n", std::chrono::duration<double>(stop - start).count(), regret / RunNum);
  return 0;
}
"""


def fail(message: str) -> None:
    """Stop with a one-line error, named after the script that runs."""
    raise SystemExit(f"{Path(sys.argv[0]).stem or 'cpp_reference'}: error: {message}")


def build_driver(reference_dir: Path, build_dir: Path, cxx: str, cxxflags: str) -> Path:
    """Compile the driver against ``reference_dir`` (once per checkout, flags and driver text)."""
    needed = ["bandit/simulator.hpp", "arm/armset.hpp", "policy/policy_rmed.hpp", "policy/policy_btm.hpp"]
    missing = [name for name in needed if not (reference_dir / name).is_file()]
    if missing:
        fail(f"{reference_dir} is not a DuelingBanditLib checkout (no {missing[0]}); "
             "get it with: git clone https://github.com/jkomiyama/duelingbanditlib")
    if shutil.which(cxx) is None:
        fail(f"C++ compiler {cxx!r} not found")
    headers = sorted(reference_dir.glob("*/*.hpp"))
    digest = hashlib.sha256("\0".join([str(reference_dir), cxx, cxxflags, DRIVER]).encode())
    for header in headers:
        digest.update(header.read_bytes())
    binary = build_dir / f"driver-{digest.hexdigest()[:12]}"
    if binary.exists():
        return binary
    build_dir.mkdir(parents=True, exist_ok=True)
    source = build_dir / "driver.cpp"
    source.write_text(DRIVER)
    command = [cxx, *cxxflags.split(), "-I", str(reference_dir), "-o", str(binary), str(source)]
    compile_driver(command)
    return binary


def compile_driver(command: list[str]) -> None:
    """Run the compiler; on failure stop with its first error line."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if "error" in line] or done.stderr.splitlines() or ["?"]
        fail(f"building the reference driver failed ({' '.join(command)}): {lines[0]}")


def write_matrix(matrix: np.ndarray, path: Path) -> None:
    """The reference's preference-matrix format: one row per line, single spaces, no header."""
    path.write_text("".join(" ".join(f"{value:.17g}" for value in row) + "\n" for row in matrix))


def time_cpp(binary: Path, policy: str, matrix_file: Path, horizon: int, runs: int, seed: int) -> tuple[float, float]:
    """Seconds (steady clock from main() to the last duel) and mean final regret of the C++ run."""
    done = subprocess.run([str(binary), policy, str(matrix_file), str(horizon), str(runs), str(seed)],
                          capture_output=True, text=True)
    result = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not result:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        fail(f"reference run {policy} on {matrix_file.name} failed: {tail[0]}")
    seconds, regret = map(float, result[-1].split()[1:])
    return seconds, regret


@dataclass(frozen=True)
class Reference:
    """What differs between the C++ references this harness measures against our fused loops.

    Attributes
    ----------
    script : str
        The benchmark script (for the command line recorded in the csv).
    agents : dict
        Our registry name -> (the algorithm's name in the generated driver, ``make_agent``
        arguments given the horizon).
    notion : str
        The regret notion the driver reports (its final regret is compared with ours).
    runs_as : str
        What the C++ side runs, for the csv header.
    write_matrix : callable
        ``(matrix, path)``: the preference matrix in the reference's file format.
    check_matrix : callable, optional
        ``(problem name, matrix)``: refuses (with :func:`fail`) a matrix the reference cannot take.
    """

    script: str
    agents: dict[str, tuple[str, Callable[[int], dict]]]
    notion: str
    runs_as: str
    write_matrix: Callable[[np.ndarray, Path], None]
    check_matrix: Callable[[str, np.ndarray], None] | None = None


def time_ours(reference: Reference, agent_name: str, problem, horizon: int, runs: int, seed: int) -> tuple[float, float]:
    """Seconds (agent construction + fused ``simulate`` per run) and mean final regret."""
    from dueling_gym.agents import make_agent
    from dueling_gym.experiments import simulate

    extra = reference.agents[agent_name][1](horizon)
    total, regrets = 0.0, []
    for run in range(runs):
        start = time.perf_counter()
        agent = make_agent(agent_name, n_arms=problem.n_arms, seed=seed + run, **extra)
        result = simulate(agent, problem, horizon, seed=seed + run, fused=True)
        total += time.perf_counter() - start
        regrets.append(result.final_regret(reference.notion))
    return total, float(np.mean(regrets))


def measure(reference: Reference, args: argparse.Namespace, binary: Path, work_dir: Path) -> list[dict]:
    """Every (agent, problem) cell, C++ and ours alternately, best of ``--repeats``."""
    from dueling_gym.agents import make_agent
    from dueling_gym.experiments import simulate
    from dueling_gym.problems import load_problem

    rows = []
    for problem_name in args.problems:
        problem = load_problem(problem_name)
        matrix = np.asarray(problem.matrix, dtype=float)
        if reference.check_matrix is not None:
            reference.check_matrix(problem_name, matrix)
        matrix_file = work_dir / f"pref_{problem_name}.txt"
        reference.write_matrix(matrix, matrix_file)
        duels = args.horizon * args.runs
        for agent_name in args.agents:
            cpp_name, arguments = reference.agents[agent_name]
            warm = make_agent(agent_name, n_arms=problem.n_arms, seed=0, **arguments(1000))
            simulate(warm, problem, 1000, seed=0, fused=True)  # compilation / cache load
            cpp, ours = [], []
            for repeat in range(args.repeats):
                cpp.append(time_cpp(binary, cpp_name, matrix_file, args.horizon, args.runs, args.seed + repeat))
                ours.append(time_ours(reference, agent_name, problem, args.horizon, args.runs,
                                      args.seed + 1000 * repeat))
            cpp_rate = duels / min(seconds for seconds, _ in cpp)
            ours_rate = duels / min(seconds for seconds, _ in ours)
            row = {
                "agent": agent_name, "cpp_name": cpp_name, "problem": problem_name, "n_arms": problem.n_arms,
                "horizon": args.horizon, "runs": args.runs,
                "cpp_duels_per_s": cpp_rate, "ours_duels_per_s": ours_rate, "ratio": ours_rate / cpp_rate,
                "cpp_regret": float(np.mean([regret for _, regret in cpp])),
                "ours_regret": float(np.mean([regret for _, regret in ours])),
            }
            row["pass"] = row["ratio"] >= TARGET_RATIO
            rows.append(row)
            print(f"  {agent_name:<22} {problem_name:<8} C++ {cpp_rate:>12,.0f}/s  ours {ours_rate:>12,.0f}/s"
                  f"  x{row['ratio']:.1f}", file=sys.stderr, flush=True)
    return rows


def print_table(reference: Reference, rows: list[dict], args: argparse.Namespace) -> None:
    header = (f"{'agent':<22} {'problem':<8} {'C++ duels/s':>13} {'ours duels/s':>13} {'ratio':>7} "
              f"{'>=10x':>6} {'C++ regret':>11} {'our regret':>11}")
    print(f"T = {args.horizon}, {args.runs} runs per side, best of {args.repeats}; C++ timed from main() "
          "entry to its last duel (process start-up excluded, nothing else); ours: make_agent + fused "
          f"simulate, compilation excluded; regret: mean final {reference.notion} regret")
    print(header)
    print("-" * len(header))
    for row in rows:
        print(f"{row['agent']:<22} {row['problem']:<8} {row['cpp_duels_per_s']:>13,.0f} "
              f"{row['ours_duels_per_s']:>13,.0f} {row['ratio']:>6.1f}x {'pass' if row['pass'] else 'FAIL':>6} "
              f"{row['cpp_regret']:>11.1f} {row['ours_regret']:>11.1f}")
    failing = sorted({row["agent"] for row in rows if not row["pass"]})
    print(f"target >= {TARGET_RATIO:g}x: " + ("met everywhere" if not failing else "missed by " + ", ".join(failing)))


def write_csv(reference: Reference, rows: list[dict], path: Path, args: argparse.Namespace) -> None:
    """The docs/data format: comment header (command, date, machine, load), then one line per cell."""
    command = f"python benchmarks/{reference.script} " + shlex.join(sys.argv[1:])
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError, StopIteration):  # no /proc/cpuinfo: keep the platform's name
        with open("/proc/cpuinfo") as handle:
            cpu = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    lines = [
        f"# command: {command}",
        f"# date: {datetime.date.today().isoformat()}; machine: {cpu}, {os.cpu_count()} cores, load average "
        f"{args.load_average:.1f} at start ({args.load_note}); one measurement at a time, C++ and ours alternately "
        "(both sides see the same load, so the ratios stay fair when other jobs run); "
        f"C++: {args.cxx} {args.cxxflags}",
        f"# C++ = {reference.runs_as}; timed from main() to the last duel (process start-up excluded); "
        f"ours = make_agent + fused simulate (compilation excluded); {args.runs} runs per side, "
        f"fastest of {args.repeats} repeats",
        "agent,problem,horizon,cpp_duels_per_s,ours_duels_per_s,ratio",
    ]
    lines += [f"{row['agent']},{row['problem']},{row['horizon']},{row['cpp_duels_per_s']:.0f},"
              f"{row['ours_duels_per_s']:.0f},{row['ratio']:.2f}" for row in rows]
    path.write_text("\n".join(lines) + "\n")


def common_parser(reference: Reference, description: str, reference_help: str, build_dir: str,
                  default_agents: tuple[str, ...]) -> argparse.ArgumentParser:
    """The options every reference comparison takes (the caller may add its own)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--reference-dir", type=Path, required=True, help=reference_help)
    parser.add_argument("--build-dir", type=Path, default=Path(tempfile.gettempdir()) / build_dir,
                        help="where the driver is built (default: a folder in the temporary directory)")
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3, help="measure each side this often, keep the fastest")
    parser.add_argument("--problems", nargs="+", default=list(DEFAULT_PROBLEMS))
    parser.add_argument("--agents", nargs="+", default=list(default_agents), choices=sorted(reference.agents))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--cxxflags", default="-O2 -std=c++11")
    parser.add_argument("--load-note", default="other jobs running", help="what else ran, for the csv header")
    parser.add_argument("--json", type=Path, help="also write the rows (and settings) as JSON")
    parser.add_argument("--csv", type=Path, help="also write the rows as CSV with a comment header")
    return parser


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace, clone_hint: str) -> Path:
    """Validate the common options; return the resolved reference folder."""
    for name in ("horizon", "runs", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be a positive integer")
    if args.horizon > 2**31 - 1:
        parser.error("--horizon must fit the references' 32-bit counters")
    reference_dir = args.reference_dir.expanduser().resolve()
    if not reference_dir.is_dir():
        fail(f"--reference-dir {args.reference_dir} does not exist; get it with: {clone_hint}")
    from dueling_gym.problems import list_problems

    unknown = [name for name in args.problems if name not in list_problems()]
    if unknown:
        fail(f"unknown problem {unknown[0]!r}; choose from {', '.join(list_problems())}")
    return reference_dir


def run_comparison(reference: Reference, args: argparse.Namespace, binary: Path) -> list[dict]:
    """Measure every cell, print the table and write the requested JSON / csv files."""
    args.load_average = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    with tempfile.TemporaryDirectory(prefix="cpp-reference-") as work:
        rows = measure(reference, args, binary, Path(work))
    print_table(reference, rows, args)
    if args.json:
        settings = {key: (str(value) if isinstance(value, Path) else value) for key, value in vars(args).items()}
        args.json.write_text(json.dumps({"settings": settings, "rows": rows}, indent=2))
    if args.csv:
        write_csv(reference, rows, args.csv, args)
    return rows


KOMIYAMA = Reference(
    script="cpp_reference.py",
    agents=AGENTS,
    notion="condorcet_strong",
    runs_as="jkomiyama/duelingbanditlib headers run one policy as its main.cpp does",
    write_matrix=write_matrix,
)


def main(argv: list[str] | None = None) -> int:
    parser = common_parser(KOMIYAMA, __doc__.split("\n\n")[0], "checkout of https://github.com/jkomiyama/duelingbanditlib",
                           "dueling-gym-cpp-reference", DEFAULT_AGENTS)
    args = parser.parse_args(argv)
    reference_dir = check_arguments(parser, args, "git clone https://github.com/jkomiyama/duelingbanditlib")
    binary = build_driver(reference_dir, args.build_dir, args.cxx, args.cxxflags)
    run_comparison(KOMIYAMA, args, binary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
