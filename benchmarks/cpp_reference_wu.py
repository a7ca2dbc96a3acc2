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

import hashlib
import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The measuring harness (the driver protocol "RESULT seconds regret", alternation, table, csv) is
# shared with the other C++ reference's script.
from cpp_reference import Reference, check_arguments, common_parser, compile_driver, fail, run_comparison  # noqa: E402,E501

#: Our registry name -> (algorithm name in the driver, make_agent arguments given T).
AGENTS: dict[str, tuple[str, object]] = {
    "rcs": ("RCS", lambda horizon: {"alpha": 0.51}),
    "btm": ("BTM", lambda horizon: {"horizon": horizon, "gamma": 1.3}),
    "multisbm": ("MultiSBM", lambda horizon: {"a": 3.0}),
}
#: The reference's file of each algorithm.
ALGORITHM_SOURCES = {"rcs": "Alg_RCS.cpp", "btm": "Alg_BTM.cpp", "multisbm": "Alg_MultiSBM.cpp"}
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
    compiled = list(COMMON_SOURCES) + sorted(ALGORITHM_SOURCES.values())
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
    compile_driver(command)
    return binary


def write_matrix(matrix: np.ndarray, path: Path) -> None:
    """The reference's getPrefMat file format: ``K`` on the first line, then one row per line.

    ``%.17g`` round-trips every double, so ``P[i, j] + P[j, i] == 1`` holds in the file exactly when
    it holds in memory (``singleRun`` stops on any matrix for which it does not).
    """
    rows = "".join(" ".join(f"{value:.17g}" for value in row) + "\n" for row in matrix)
    path.write_text(f"{len(matrix)}\n{rows}")


def check_matrix(problem_name: str, matrix: np.ndarray) -> None:
    """``singleRun`` stops on a matrix with ``P[i, j] + P[j, i] != 1`` in floating point."""
    if not np.array_equal(matrix + matrix.T, np.ones_like(matrix)):
        fail(f"{problem_name}: P + P^T is not exactly 1 in floating point; the reference rejects such matrices")


WU = Reference(
    script="cpp_reference_wu.py",
    agents=AGENTS,
    notion="copeland_zoghi",
    runs_as="HuasenWu/DuelingBandits CMAB_singleAlg::singleRun driven as its DuelingBandit_singleAlg.cpp main() does",
    write_matrix=write_matrix,
    check_matrix=check_matrix,
)


def main(argv: list[str] | None = None) -> int:
    parser = common_parser(WU, __doc__.split("\n\n")[0],
                           "checkout of https://github.com/HuasenWu/DuelingBandits (or its DuelingBandit folder)",
                           "dueling-gym-cpp-reference-wu", tuple(AGENTS))
    parser.add_argument("--shim-dir", type=Path, help="where the stand-in headers go (default: BUILD_DIR/shim)")
    args = parser.parse_args(argv)
    reference_dir = check_arguments(parser, args, "git clone https://github.com/HuasenWu/DuelingBandits")
    sources = find_sources(reference_dir)
    binary = build_driver(sources, args.build_dir, args.shim_dir or args.build_dir / "shim", args.cxx, args.cxxflags)
    run_comparison(WU, args, binary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
