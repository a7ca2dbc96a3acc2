"""Side-by-side speed of our fused loops and the C++ research code of Wu & Liu (DuelingBandits).

The C++ code behind the experiments of Wu & Liu, "Double Thompson Sampling for Dueling Bandits"
(NIPS 2016), is a Visual Studio project (folder ``DuelingBandit``).  Get it with::

    git clone https://github.com/HuasenWu/DuelingBandits

and pass its ``DuelingBandit`` folder (or the checkout) with ``--reference-dir``.  Nothing of it
is copied into this project: this script only generates, in its build folder, a driver, two
stand-in headers and link stubs (see below), and compiles them with the reference's own files.

What is measured
----------------
For every (agent, problem) cell, with the same horizon ``T`` and number of runs ``R``:

* **C++**: the reference's ``DuelingBandit_singleAlg.cpp`` has a hard-coded algorithm, data set,
  Windows paths and ``system("PAUSE")``, so this script generates a driver (``DRIVER`` below)
  that does what that ``main()`` does for one algorithm: ``srand(seed)``, the same ``struConfig``
  values, read the matrix file in the format of its ``getPrefMat`` (``K``, then the ``K x K``
  entries, whitespace separated), one ``CMAB_singleAlg`` for all runs (as ``main()`` builds it),
  and per run ``random_shuffle`` of the arms, the permuted matrix printed and
  ``CMAB_singleAlg::singleRun``.  Per duel ``singleRun`` draws a fresh outcome for *every* pair
  (``K(K+1)/2`` calls of ``rand()``), copies the reward vector and the ``K x K`` outcome matrix
  into the algorithm's ``pull`` (passed by value), and adds the Copeland scores of the chosen pair
  to a per-round total; it prints ``t = ...`` every 10,000 duels.  The driver averages the totals
  as ``main()`` does but does not write them to a file (``T`` lines).  It reads a steady clock on
  entering ``main()`` and after the last run: process start-up and exit are all it excludes.
  Compiled: ``Alg.cpp``, ``SBM.cpp``, ``MAB_singleAlg.cpp`` and the measured algorithms'
  ``Alg_*.cpp``, with ``g++ -O2 -std=c++11`` (``--cxxflags``).
* **ours**: ``make_agent`` + :func:`dueling_gym.experiments.simulate` (fused loop) per run, timed
  with ``perf_counter`` around both; one short warm-up run first (Numba compilation excluded).

Building a Windows project with g++ needs two things that do not touch its algorithms:

* ``stdafx.h`` includes ``targetver.h`` (not in the repository) and ``<tchar.h>`` (MSVC only); the
  build folder's ``shim`` folder holds stand-ins for both, and the ``tchar.h`` stand-in includes
  ``<cfloat>``, which ``SBM.cpp`` needs for ``DBL_MAX`` and which MSVC's headers include on the way.
* ``MAB_singleAlg.cpp`` constructs every algorithm of the project, so linking it needs all of
  them; the ones not measured here are replaced by link stubs (``STUBS``) that abort if called.

duels/s = ``T * R / seconds``; ratio = ours / C++; target: ratio >= 10.  With ``--repeats N``
each side is measured N times, alternately, and its fastest repeat is kept.  Also reported: the
mean final Copeland regret of both (the reference's per-duel reward is the sum of the normalized
Copeland scores of the two arms, so ``2 T cpld* - total`` is our ``copeland_zoghi`` notion), a
check that both ran the same algorithm on the same matrix.  Seeds differ (``rand()`` and a
``random_device``-seeded mt19937 vs NumPy), so regrets agree only statistically.

Hyperparameters are those of the reference's ``main()``: RCS ``ucb_scale_factor = 0.51`` (our
``alpha = 0.51``: both use ``sqrt(alpha ln t / N)``), BTM ``btm_gamma = 1.3`` with
``delta = 1/(2KT)`` (ours ``gamma = 1.3``, same radius ``3 gamma^2 sqrt(ln(2KT) / n)``), MultiSBM
``sbm_scale_factor = 3`` (our ``a = 3``: ``sqrt((a + 2) ln t / (2N))``).  Differences that remain:
the reference starts every count at 1e-6 and every win at 1e-5 (RCS; SBM rewards at 5e-6), takes
the lowest index on ties where we break them at random, and its MultiSBM object keeps its
learners from one run to the next (``init`` appends ``K`` new ones and keeps using the first).

Run: ``python benchmarks/cpp_reference_wu.py --reference-dir /path/to/DuelingBandits
[--horizon 100000] [--runs 5] [--problems sushi arxiv cyclic4] [--agents rcs btm multisbm]
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
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpp_reference import time_cpp  # noqa: E402  (same driver protocol: "RESULT seconds regret")

#: Our registry name -> (algorithm name in the driver, reference .cpp file, make_agent arguments).
AGENTS: dict[str, tuple[str, str, object]] = {
    "rcs": ("RCS", "Alg_RCS.cpp", lambda horizon: {"alpha": 0.51}),
    "btm": ("BTM", "Alg_BTM.cpp", lambda horizon: {"horizon": horizon, "gamma": 1.3}),
    "multisbm": ("MultiSBM", "Alg_MultiSBM.cpp", lambda horizon: {"a": 3.0}),
}
DEFAULT_PROBLEMS = ("sushi", "arxiv", "cyclic4")
TARGET_RATIO = 10.0
#: Reference files compiled for every algorithm (the base class, the SBM learner, the simulator).
COMMON_SOURCES = ("Alg.cpp", "SBM.cpp", "MAB_singleAlg.cpp")

#: One algorithm of the reference, run as its DuelingBandit_singleAlg.cpp main() runs one.
DRIVER = r"""
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include "stdafx.h"
#include "DuelingBandit.h"
#include "MAB_singleAlg.h"

int main(int argc, char *argv[]){
  const auto start = std::chrono::steady_clock::now();
  if(argc != 6){ std::cerr << "usage: driver ALGORITHM MATRIX_FILE T RUNS SEED" << std::endl; return 2; }
  const std::string name = argv[1];
  int algInd = -1;
  if(name == "RCS") algInd = ALG_RCS;
  if(name == "BTM") algInd = ALG_BTM;
  if(name == "MultiSBM") algInd = ALG_MULTISBM;
  if(algInd < 0){ std::cerr << "unknown algorithm " << name << std::endl; return 2; }
  const int num_slots = std::atoi(argv[3]), num_sims = std::atoi(argv[4]);
  srand((unsigned int)std::strtoul(argv[5], 0, 10));

  struConfig config;  // main()'s policy parameters
  config.regret_type = REGRET_TYPE_DIFF;
  config.btm_gamma = 1.3;
  config.ucb_scale_factor = 0.51;
  config.klucb_ctrl_factor = 3.0;
  config.klucb_eps = 0.000001;
  config.sbm_scale_factor = 3.0;
  config.rmed2_alpha = 3.0;
  config.ecwrmed_alpha = 3.0;
  config.ecwrmed_beta = 0.01;

  std::ifstream fin(argv[2]);  // getPrefMat's INPUT_TYPE_FILE format
  int num_arms = 0;
  fin >> num_arms;
  vector<vector<double>> pref_mat(num_arms, vector<double>(num_arms, 0.0));
  for(int i = 0; i < num_arms; i++) for(int j = 0; j < num_arms; j++) fin >> pref_mat[i][j];
  if(!fin || num_arms < 2){ std::cerr << "cannot read " << argv[2] << std::endl; return 2; }
  for(int i = 0; i < num_arms; i++){ for(int j = 0; j < num_arms; j++) cout << pref_mat[i][j] << " "; cout << endl; }

  CMAB_singleAlg objMAB = CMAB_singleAlg(algInd);
  vector<double> total_reward(num_slots, 0.0);
  for(int ind_sim = 0; ind_sim < num_sims; ind_sim++){
    cout << "Sim # " << ind_sim << endl;
    vector<int> ind_arms;
    for(int i = 0; i < num_arms; i++) ind_arms.push_back(i);
    random_shuffle(ind_arms.begin(), ind_arms.end());
    vector<vector<double>> cur_pref_mat;
    for(int i = 0; i < num_arms; i++){
      vector<double> pref_vec;
      for(int j = 0; j < num_arms; j++) pref_vec.push_back(pref_mat[ind_arms[i]][ind_arms[j]]);
      cur_pref_mat.push_back(pref_vec);
    }
    for(int i = 0; i < num_arms; i++){ for(int j = 0; j < num_arms; j++) cout << cur_pref_mat[i][j] << " "; cout << endl; }
    vector<double> total_reward_temp = objMAB.singleRun(num_slots, cur_pref_mat, config);
    for(int ind_slot = 0; ind_slot < num_slots; ind_slot++) total_reward[ind_slot] += total_reward_temp[ind_slot];
  }
  for(int ind_slot = 0; ind_slot < num_slots; ind_slot++) total_reward[ind_slot] /= num_sims;
  const auto stop = std::chrono::steady_clock::now();

  double best = 0.0;  // the largest normalized Copeland score, as singleRun computes it
  for(int i = 0; i < num_arms; i++){
    double num_wins = 0.0;
    for(int j = 0; j < num_arms; j++) if(i != j && pref_mat[i][j] > 0.5) num_wins += 1.0;
    best = std::max(best, num_wins / (num_arms - 1));
  }
  std::printf("\nRESULT %.9f %.9f\n", std::chrono::duration<double>(stop - start).count(),
              2.0 * best * num_slots - total_reward[num_slots - 1]);
  return 0;
}
"""

#: Algorithms MAB_singleAlg.cpp constructs but that are not measured: link stubs, never called.
UNMEASURED = ("CAlg_SAVAGE", "CAlg_RUCB", "CAlg_Sparring", "CAlg_CCB", "CAlg_SCB", "CAlg_RMED",
              "CAlg_ECWRMED", "CAlg_DTS", "CAlg_DTS2")
STUB_HEADERS = ("Alg_SAVAGE.h", "Alg_RUCB.h", "Alg_Sparring.h", "Alg_CCB.h", "Alg_SCB.h", "Alg_RMED.h",
                "Alg_ECWRMED.h", "Alg_DTS.h", "Alg_DTS2.h")


def stubs_source() -> str:
    """Constructors, destructors, ``init`` and ``pull`` of the unmeasured classes, aborting if run."""
    lines = ['#include "stdafx.h"'] + [f'#include "{header}"' for header in STUB_HEADERS]
    lines.append('static void unmeasured(){ cerr << "algorithm not built by cpp_reference_wu.py" << endl; abort(); }')
    for name in UNMEASURED:
        lines += [f"{name}::{name}(){{}}", f"{name}::~{name}(){{}}",
                  f"void {name}::init(int, int, struConfig){{ unmeasured(); }}",
                  f"int {name}::pull(int, vector<double>, vector<vector<int>>, vector<int>&){{ unmeasured(); return 0; }}"]
    lines.append("CAlg_RMED::CAlg_RMED(int){}")
    return "\n".join(lines) + "\n"


#: Stand-ins for the two MSVC headers stdafx.h includes.
SHIMS = {
    "targetver.h": "// Stand-in for MSVC's targetver.h (Windows SDK version macros): nothing needed on Linux.\n",
    "tchar.h": "// Stand-in for MSVC's <tchar.h>; SBM.cpp uses DBL_MAX, which MSVC's headers bring in.\n"
               "#pragma once\n#include <cfloat>\n",
}


def fail(message: str) -> None:
    """Stop with a one-line error."""
    raise SystemExit(f"cpp_reference_wu: error: {message}")


def find_sources(reference_dir: Path) -> Path:
    """The folder holding ``MAB_singleAlg.cpp``: the checkout's ``DuelingBandit`` or the folder itself."""
    for folder in (reference_dir / "DuelingBandit", reference_dir):
        if (folder / "MAB_singleAlg.cpp").is_file():
            return folder
    fail(f"{reference_dir} is not a DuelingBandits checkout (no DuelingBandit/MAB_singleAlg.cpp); "
         "get it with: git clone https://github.com/HuasenWu/DuelingBandits")


def build_driver(sources: Path, build_dir: Path, shim_dir: Path, cxx: str, cxxflags: str) -> Path:
    """Compile the driver, the reference's files and the stubs (once per inputs)."""
    if shutil.which(cxx) is None:
        fail(f"C++ compiler {cxx!r} not found")
    compiled = list(COMMON_SOURCES) + sorted({AGENTS[name][1] for name in AGENTS})
    missing = [name for name in compiled if not (sources / name).is_file()]
    if missing:
        fail(f"{sources} has no {missing[0]}")
    digest = hashlib.sha256("\0".join([str(sources), cxx, cxxflags, DRIVER, stubs_source(), *SHIMS.values()]).encode())
    for path in sorted(sources.glob("*.h")) + [sources / name for name in compiled]:
        digest.update(path.read_bytes())
    binary = build_dir / f"driver-wu-{digest.hexdigest()[:12]}"
    if binary.exists():
        return binary
    build_dir.mkdir(parents=True, exist_ok=True)
    shim_dir.mkdir(parents=True, exist_ok=True)
    for name, text in SHIMS.items():
        (shim_dir / name).write_text(text)
    (build_dir / "driver_wu.cpp").write_text(DRIVER)
    (build_dir / "stubs_wu.cpp").write_text(stubs_source())
    units = [sources / name for name in compiled] + [build_dir / "driver_wu.cpp", build_dir / "stubs_wu.cpp"]
    command = [cxx, *cxxflags.split(), "-I", str(sources), "-I", str(shim_dir), "-o", str(binary), *map(str, units)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if "error" in line] or done.stderr.splitlines() or ["?"]
        fail(f"building the reference driver failed ({' '.join(command)}): {lines[0]}")
    return binary


def write_matrix(matrix: np.ndarray, path: Path) -> None:
    """The reference's getPrefMat file format: ``K`` on the first line, then one row per line.

    ``%.17g`` round-trips every double, so ``P[i, j] + P[j, i] == 1`` holds in the file exactly when
    it holds in memory (``singleRun`` stops on any matrix for which it does not).
    """
    rows = "".join(" ".join(f"{value:.17g}" for value in row) + "\n" for row in matrix)
    path.write_text(f"{len(matrix)}\n{rows}")


def time_ours(agent_name: str, problem, horizon: int, runs: int, seed: int) -> tuple[float, float]:
    """Seconds (agent construction + fused ``simulate`` per run) and mean final Copeland regret."""
    from dueling_gym.agents import make_agent
    from dueling_gym.experiments import simulate

    extra = AGENTS[agent_name][2](horizon)
    total, regrets = 0.0, []
    for run in range(runs):
        start = time.perf_counter()
        agent = make_agent(agent_name, n_arms=problem.n_arms, seed=seed + run, **extra)
        result = simulate(agent, problem, horizon, seed=seed + run, fused=True)
        total += time.perf_counter() - start
        regrets.append(result.final_regret("copeland_zoghi"))
    return total, float(np.mean(regrets))


def measure(args: argparse.Namespace, binary: Path, work_dir: Path) -> list[dict]:
    """Every (agent, problem) cell, C++ and ours alternately, best of ``--repeats``."""
    from dueling_gym.agents import make_agent
    from dueling_gym.experiments import simulate
    from dueling_gym.problems import load_problem

    rows = []
    for problem_name in args.problems:
        problem = load_problem(problem_name)
        matrix = np.asarray(problem.matrix, dtype=float)
        if not np.array_equal(matrix + matrix.T, np.ones_like(matrix)):
            fail(f"{problem_name}: P + P^T is not exactly 1 in floating point; the reference rejects such matrices")
        matrix_file = work_dir / f"pref_{problem_name}.txt"
        write_matrix(matrix, matrix_file)
        duels = args.horizon * args.runs
        for agent_name in args.agents:
            algorithm = AGENTS[agent_name][0]
            warm = make_agent(agent_name, n_arms=problem.n_arms, seed=0, **AGENTS[agent_name][2](1000))
            simulate(warm, problem, 1000, seed=0, fused=True)  # compilation / cache load
            cpp, ours = [], []
            for repeat in range(args.repeats):
                cpp.append(time_cpp(binary, algorithm, matrix_file, args.horizon, args.runs, args.seed + repeat))
                ours.append(time_ours(agent_name, problem, args.horizon, args.runs, args.seed + 1000 * repeat))
            cpp_rate = duels / min(seconds for seconds, _ in cpp)
            ours_rate = duels / min(seconds for seconds, _ in ours)
            row = {
                "agent": agent_name, "cpp_algorithm": algorithm, "problem": problem_name, "n_arms": problem.n_arms,
                "horizon": args.horizon, "runs": args.runs,
                "cpp_duels_per_s": cpp_rate, "ours_duels_per_s": ours_rate, "ratio": ours_rate / cpp_rate,
                "cpp_regret": float(np.mean([regret for _, regret in cpp])),
                "ours_regret": float(np.mean([regret for _, regret in ours])),
            }
            row["pass"] = row["ratio"] >= TARGET_RATIO
            rows.append(row)
            print(f"  {agent_name:<9} {problem_name:<8} C++ {cpp_rate:>12,.0f}/s  ours {ours_rate:>12,.0f}/s"
                  f"  x{row['ratio']:.1f}", file=sys.stderr, flush=True)
    return rows


def print_table(rows: list[dict], args: argparse.Namespace) -> None:
    header = (f"{'agent':<9} {'problem':<8} {'C++ duels/s':>13} {'ours duels/s':>13} {'ratio':>7} "
              f"{'>=10x':>6} {'C++ regret':>11} {'our regret':>11}")
    print(f"T = {args.horizon}, {args.runs} runs per side, best of {args.repeats}; C++ timed from main() "
          "entry to its last duel (process start-up excluded, nothing else); ours: make_agent + fused "
          "simulate, compilation excluded; regret: mean final copeland_zoghi regret")
    print(header)
    print("-" * len(header))
    for row in rows:
        print(f"{row['agent']:<9} {row['problem']:<8} {row['cpp_duels_per_s']:>13,.0f} "
              f"{row['ours_duels_per_s']:>13,.0f} {row['ratio']:>6.1f}x {'pass' if row['pass'] else 'FAIL':>6} "
              f"{row['cpp_regret']:>11.1f} {row['ours_regret']:>11.1f}")


def write_csv(rows: list[dict], path: Path, args: argparse.Namespace) -> None:
    """The docs/data format: comment header (command, date, machine, load), then one line per cell."""
    command = "python benchmarks/cpp_reference_wu.py " + shlex.join(sys.argv[1:])
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
        "# C++ = HuasenWu/DuelingBandits CMAB_singleAlg::singleRun driven as its DuelingBandit_singleAlg.cpp main() "
        "does; timed from main() to the last duel (process start-up excluded); ours = make_agent + fused simulate "
        f"(compilation excluded); {args.runs} runs per side, fastest of {args.repeats} repeats",
        "agent,problem,horizon,cpp_duels_per_s,ours_duels_per_s,ratio",
    ]
    lines += [f"{row['agent']},{row['problem']},{row['horizon']},{row['cpp_duels_per_s']:.0f},"
              f"{row['ours_duels_per_s']:.0f},{row['ratio']:.2f}" for row in rows]
    path.write_text("\n".join(lines) + "\n")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference-dir", type=Path, required=True,
                        help="checkout of https://github.com/HuasenWu/DuelingBandits (or its DuelingBandit folder)")
    parser.add_argument("--build-dir", type=Path, default=Path(tempfile.gettempdir()) / "dueling-gym-cpp-reference-wu",
                        help="where the driver is built (default: a folder in the temporary directory)")
    parser.add_argument("--shim-dir", type=Path, help="where the stand-in headers go (default: BUILD_DIR/shim)")
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3, help="measure each side this often, keep the fastest")
    parser.add_argument("--problems", nargs="+", default=list(DEFAULT_PROBLEMS))
    parser.add_argument("--agents", nargs="+", default=list(AGENTS), choices=sorted(AGENTS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--cxxflags", default="-O2 -std=c++11")
    parser.add_argument("--load-note", default="other jobs running", help="what else ran, for the csv header")
    parser.add_argument("--json", type=Path, help="also write the rows (and settings) as JSON")
    parser.add_argument("--csv", type=Path, help="also write the rows as CSV with a comment header")
    args = parser.parse_args(argv)
    for name in ("horizon", "runs", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be a positive integer")
    if args.horizon > 2**31 - 1:
        parser.error("--horizon must fit the reference's int slot counter")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    reference_dir = args.reference_dir.expanduser().resolve()
    if not reference_dir.is_dir():
        fail(f"--reference-dir {args.reference_dir} does not exist; "
             "get it with: git clone https://github.com/HuasenWu/DuelingBandits")
    from dueling_gym.problems import list_problems

    unknown = [name for name in args.problems if name not in list_problems()]
    if unknown:
        fail(f"unknown problem {unknown[0]!r}; choose from {', '.join(list_problems())}")
    sources = find_sources(reference_dir)
    shim_dir = args.shim_dir or args.build_dir / "shim"
    binary = build_driver(sources, args.build_dir, shim_dir, args.cxx, args.cxxflags)
    args.load_average = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    with tempfile.TemporaryDirectory(prefix="cpp-reference-wu-") as work:
        rows = measure(args, binary, Path(work))
    print_table(rows, args)
    if args.json:
        settings = {key: (str(value) if isinstance(value, Path) else value) for key, value in vars(args).items()}
        args.json.write_text(json.dumps({"settings": settings, "rows": rows}, indent=2))
    if args.csv:
        write_csv(rows, args.csv, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
