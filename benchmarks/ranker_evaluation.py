"""Online ranker evaluation at MSLR-WEB10K's size: reading, the 136 x 136 matrix, the environment.

1. Writes once a synthetic LETOR file shaped like MSLR-WEB10K (about 1.2 million documents in
   10 000 queries of 40 to 200 documents, 136 features, grades 0-4 with MSLR's frequencies) into
   ``--folder`` (default: a folder under the system's temporary directory), unless it is there.
2. In a fresh Python process, measures: reading the file, building the rankers' top-10 lists,
   the 136 x 136 matrix (``comparisons_per_pair`` team-draft comparisons per pair, perfect
   clicks), wall time and peak resident memory (``resource.getrusage(RUSAGE_SELF).ru_maxrss``).
3. In the same process, the duels per second of :class:`~dueling_gym.envs.ranker_duel.RankerDuelEnv`
   on the loaded data (random actions, the matrix just estimated as its preferences).

Targets: the matrix in minutes on 2 cores, at most 4 GB; the environment at least 10 000 duels/s.

Run: ``python benchmarks/ranker_evaluation.py [--jobs 1] [--comparisons 1000] [--folder DIR]``.
With 1000 comparisons per pair the standard error of every entry is at most 0.5 / sqrt(1000)
= 0.016.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_MEASURE = r"""
import json, resource, sys, time
import numpy as np

path, jobs, comparisons, duels = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
report = {}
start = time.perf_counter()
from dueling_gym.problems.ltr_files import read_ltr_file
from dueling_gym.problems.ranker_problems import RankerEvaluationProblem, estimate_preferences, ranker_evaluation
from dueling_gym.envs.ranker_duel import RankerDuelEnv
report["import_s"] = time.perf_counter() - start

start = time.perf_counter()
data = read_ltr_file(path)
report["read_s"] = time.perf_counter() - start
report["shape"] = [data.n_documents, data.n_features, data.n_queries]
report["rss_after_read_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

start = time.perf_counter()
matrix = ranker_evaluation(data, comparisons_per_pair=comparisons, jobs=jobs, progress=False)
report["matrix_s"] = time.perf_counter() - start
report["max_standard_error"] = float(matrix.provenance["standard_errors"].max())
report["summary"] = {key: matrix.summary()[key] for key in ("K", "condorcet_winner", "copeland_winners")}
report["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

start = time.perf_counter()
env = RankerDuelEnv(data, preferences=matrix)
report["env_make_s"] = time.perf_counter() - start
del data
env.reset(seed=0)
actions = [tuple(pair) for pair in np.random.default_rng(0).integers(0, env.n_arms, size=(duels, 2)).tolist()]
step = env.step
start = time.perf_counter()
for action in actions:
    step(action)
report["env_duels_per_s"] = duels / (time.perf_counter() - start)
report["final_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(report))
"""


def write_data(folder: Path, n_queries: int, seed: int) -> Path:
    """The synthetic MSLR-shaped file in ``folder`` (written once; reused when present)."""
    path = folder / f"synthetic-mslr-{n_queries}q-seed{seed}.txt"
    if path.exists():
        return path
    from dueling_gym.problems.ltr_files import write_ltr_file
    from dueling_gym.problems.ranker_problems import synthetic_ltr_data

    start = time.perf_counter()
    data = synthetic_ltr_data(n_queries, (40, 200), 136, seed=seed)
    write_ltr_file(path, data, decimals=4)
    print(f"wrote {path} ({data.n_documents} documents, {path.stat().st_size / 2**30:.2f} GiB) in "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "dueling-gym-ltr-benchmark")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--comparisons", type=int, default=1000, help="comparisons per pair")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--duels", type=int, default=200_000, help="environment steps timed")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    path = write_data(args.folder, args.queries, args.seed)
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", _MEASURE, str(path), str(args.jobs), str(args.comparisons),
                             str(args.duels)], capture_output=True, text=True, check=True)
    report = json.loads(result.stdout.strip().splitlines()[-1])
    report["process_wall_s"] = time.perf_counter() - start
    report.update(jobs=args.jobs, comparisons_per_pair=args.comparisons)
    print(json.dumps(report, indent=2))
    documents, features, queries = report["shape"]
    print(f"\n{documents} documents x {features} features, {queries} queries, jobs={args.jobs}")
    print(f"read {report['read_s']:.1f} s; 136x136 matrix ({args.comparisons} comparisons/pair, max standard "
          f"error {report['max_standard_error']:.4f}) {report['matrix_s']:.1f} s; peak memory "
          f"{report['final_peak_rss_mb']:.0f} MB (target <= 4096)")
    print(f"environment: {report['env_duels_per_s']:,.0f} duels/s (target >= 10,000)")


if __name__ == "__main__":
    main()
