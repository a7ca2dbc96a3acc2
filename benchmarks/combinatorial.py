"""CPE-DB sample complexity: CLUCB-Borda samples to stop vs the Borda hardness ``H^B``, and time per sample.

The study is the preset ``chen2020-cpe-db`` (``dueling-gym reproduce chen2020-cpe-db``; Chen, Du,
Huang, Zhao, ICML 2020, Theorem 3): this script runs that preset through its public API
(:func:`dueling_gym.experiments.studies.presets.get_preset`, :meth:`SampleComplexityPreset.run`) into a
fresh folder, and adds what a benchmark needs on top: the wall time of the whole study, and the
preset's log-log plot of samples against ``H^B ln(1/δ)`` (Theorem 3's lower-bound scale) copied
where the docs keep it.  The preset's table already gives microseconds per sample for every run.

Run: ``python benchmarks/combinatorial.py [--quick] [--seeds N] [--delta D] [--out FOLDER]``.
``--seeds`` and ``--delta`` default to the preset's (3 runs per instance and agent, δ = 0.05:
about 15 minutes on 2 cores); ``docs/combinatorial.png`` was drawn with ``--seeds 1`` (about
5 minutes); ``--quick`` runs the preset's quick version (under 1 minute).
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import tempfile
import time
from pathlib import Path

from dueling_gym.experiments.studies.presets import get_preset

RESULTS = Path(__file__).parent / "results"
PRESET = "chen2020-cpe-db"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the preset's quick version (~1 min)")
    parser.add_argument("--seeds", type=int, default=None, help="runs per (instance, agent) (default: the preset's)")
    parser.add_argument("--delta", type=float, default=None, help="confidence parameter (default: the preset's)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--plot", type=Path, default=RESULTS / "combinatorial.png")
    parser.add_argument("--out", type=Path, default=None,
                        help="keep the results folder here (one verified file per run in units/, summary.txt, "
                             "the figure); must be new or empty (default: a temporary folder)")
    args = parser.parse_args()

    preset = get_preset(PRESET)
    overrides = {key: value for key, value in (("seeds", args.seeds), ("delta", args.delta)) if value is not None}
    if overrides:
        # The preset's own run with another protocol: a copy whose arguments differ, the loop unchanged.
        size = "quick" if args.quick else "full"
        preset = dataclasses.replace(preset, **{size: {**preset.sweep_arguments(args.quick), **overrides}})
    delta = preset.sweep_arguments(args.quick)["delta"]

    with tempfile.TemporaryDirectory(prefix="cpe-db-") as scratch:
        out_dir = args.out if args.out is not None else Path(scratch)
        # The preset resumes from the runs a folder already holds: timing them would time nothing.
        if out_dir.exists() and any(out_dir.iterdir()):
            parser.error(f"--out {out_dir} is not empty; the wall time needs a fresh folder")
        start = time.perf_counter()
        report = preset.run(out_dir, quick=args.quick, jobs=args.workers, progress=False, plot=True)
        elapsed = time.perf_counter() - start
        print(report.summary)
        print(f"\ntotal wall time {elapsed:.1f} s ({preset.label(args.quick)}, δ = {delta}, {args.workers} workers)")
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(report.figures[0], args.plot)
    print(f"plot written to {args.plot}")


if __name__ == "__main__":
    main()
