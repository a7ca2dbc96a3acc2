"""Fused duels per second before and after a change: a git revision against the working tree.

A refactor must leave every trajectory bit-identical (``tests/test_golden.py``) and the kernels
as fast as they were.  This measures the second, side by side in one run: for each agent, each
round runs two fresh processes, one on the package as it is at ``--base`` and one on the
working tree (the order alternates by round).  Each process warms up (compiles, or loads Numba's
on-disk cache), then times one fused run of ``T`` duels on ``--problem`` in CPU seconds.  The
table gives the best round of each side, their ratio, and whether both runs ended with the same
regret (they must: the same seed plays the same trajectory).

Run: ``python benchmarks/refactor_speed.py --base HEAD rucb:8000000 dts:600000 ...``
(``NAME:T``; ``T`` defaults to 10^6).  Both packages are copied into a temporary folder laid out
as installed (``agents/`` as ``dueling_gym/agents``), so neither uses the other's compiled cache.

On a shared machine single readings vary by 10% or more; ``--rounds`` (default 5) takes the
best of several, and an agent whose code did not change (``random``) shows the noise left.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Source folder in the repository -> its place in the installed package.
LAYOUT = {"dueling_gym": "dueling_gym", "agents": "dueling_gym/agents", "wrappers": "dueling_gym/wrappers"}

_MEASURE = r"""
import json, sys, time
from dueling_gym.agents import make_agent
from dueling_gym.experiments.simulate import simulate
from dueling_gym.problems import load_problem
name, problem_name, horizon = sys.argv[1], sys.argv[2], int(sys.argv[3])
problem = load_problem(problem_name)
simulate(make_agent(name, problem.n_arms, seed=0), problem, 100, seed=0)  # compile or load the cache
agent = make_agent(name, problem.n_arms, seed=1)
start = time.process_time()
result = simulate(agent, problem, horizon, seed=1)
seconds = time.process_time() - start
regret = float(next(iter(result.cumulative_regret.values()))[-1])
print(json.dumps({"rate": horizon / seconds, "regret": regret}))
"""


def _site_from_revision(revision: str, site: Path) -> None:
    archive = subprocess.run(["git", "archive", "--format=tar", revision, *LAYOUT], cwd=ROOT, check=True,
                             capture_output=True).stdout
    with tempfile.TemporaryDirectory() as unpacked:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(unpacked, filter="data")
        _site_from_folder(Path(unpacked), site)


def _site_from_folder(source: Path, site: Path) -> None:
    for folder, target in LAYOUT.items():
        shutil.copytree(source / folder, site / target, ignore=shutil.ignore_patterns("__pycache__"))


def _run(site: Path, name: str, problem: str, horizon: int) -> dict[str, float]:
    environment = dict(os.environ, PYTHONPATH=str(site))
    finished = subprocess.run([sys.executable, "-c", _MEASURE, name, problem, str(horizon)], env=environment,
                              cwd=site, capture_output=True, text=True)
    if finished.returncode:
        raise RuntimeError(f"{name} on {site.name}: {finished.stderr.strip().splitlines()[-1]}")
    return json.loads(finished.stdout.strip().splitlines()[-1])


def compare(sites: dict[str, Path], name: str, problem: str, horizon: int, rounds: int) -> str:
    """One table row: the best rate of each side over ``rounds`` alternating rounds, and their ratio."""
    rates: dict[str, list[float]] = {side: [] for side in sites}
    regrets: dict[str, float] = {}
    for round_index in range(rounds):
        order = list(sites) if round_index % 2 == 0 else list(reversed(sites))
        for side in order:
            row = _run(sites[side], name, problem, horizon)
            rates[side].append(row["rate"])
            regrets[side] = row["regret"]
    before, after = max(rates["base"]), max(rates["working tree"])
    same = "yes" if regrets["base"] == regrets["working tree"] else "NO"
    return f"| {name} | {problem} | {horizon:,} | {before:,.0f} | {after:,.0f} | {after / before:.2f} | {same} |"


def _agent_argument(text: str) -> tuple[str, int]:
    name, _, horizon = text.partition(":")
    try:
        value = int(horizon) if horizon else 10**6
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME or NAME:T with a whole number T, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"T must be at least 1, got {value}")
    return name, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("agents", nargs="+", type=_agent_argument, metavar="NAME[:T]")
    parser.add_argument("--base", default="HEAD", help="the git revision to compare with (default HEAD)")
    parser.add_argument("--problem", default="sushi", help="a registered problem (default sushi, K = 16)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds per agent; the best counts")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    with tempfile.TemporaryDirectory(prefix="dueling-gym-refactor-speed-") as folder:
        sites = {"base": Path(folder) / "base", "working tree": Path(folder) / "working-tree"}
        _site_from_revision(args.base, sites["base"])
        _site_from_folder(ROOT, sites["working tree"])
        print(f"Fused duels per CPU-second, {args.base} ('base') against the working tree; best of {args.rounds} "
              "alternating rounds, each in a fresh process.\n")
        print(f"| agent | problem | T | {args.base} duels/s | working tree duels/s | ratio | same regret |")
        print("|---|---|---|---|---|---|---|", flush=True)
        for name, horizon in args.agents:
            print(compare(sites, name, args.problem, horizon, args.rounds), flush=True)


if __name__ == "__main__":
    main()
