"""CPE-DB sample complexity: CLUCB-Borda samples to stop vs the Borda hardness ``H^B``, and time per sample.

The study itself lives in :mod:`dueling_gym.experiments.sample_complexity` (also run by
``dueling-gym reproduce cpe-db-sample-complexity``); this script times it and writes the table
and the log-log plot of samples against ``H^B ln(1/δ)`` (Theorem 3's lower-bound scale).

Run: ``python benchmarks/combinatorial.py [--quick] [--seeds 1] [--delta 0.05] [--json out.json]``.
Default (27 instances, 81 runs): about 5 minutes on 2 cores; ``--quick``: under 1 minute.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from dueling_gym.experiments.sample_complexity import AGENTS, plot, run_study, table

RESULTS = Path(__file__).parent / "results"


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

    start = time.perf_counter()
    rows = run_study(None, quick=args.quick, seeds=args.seeds, delta=args.delta, jobs=args.workers,
                     agents=tuple(args.agents), progress=False)
    print(table(rows, args.delta))
    print(f"\ntotal wall time {time.perf_counter() - start:.1f} s")
    plot(rows, args.delta, args.plot)
    print(f"plot written to {args.plot}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
