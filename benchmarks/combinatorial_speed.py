"""Speed and exactness of the CPE-DB agents (CLUCB-Borda-PAC/Exact, CAR-Cond/Verify/Parallel).

For each case (agent, hyperparameters, problem, run seed) this records the number of samples,
the recommended matching, a SHA-256 digest of the full duel sequence (every ``(e, e2, outcome)``
in order) and the samples per second of :func:`~dueling_gym.experiments.pure_exploration.run_pure_exploration`.

The duel sequence is taken from a plain ``act()`` / ``step_edges`` / ``observe()`` loop seeded
exactly as ``run_pure_exploration`` seeds its run (the agent's public API, so it works on any
version of the agents).  When the runner can record its duels (``record_duels=True``), its own
sequence is hashed and checked too, and its speed is timed in a separate run without recording.

Run::

    python benchmarks/combinatorial_speed.py --save /tmp/cpe_reference.json      # record a reference
    python benchmarks/combinatorial_speed.py --compare /tmp/cpe_reference.json   # check + speed-up ratios

``--quick`` skips the long cases (the full CLUCB-Borda-Exact run at delta = 0.05 and the
CAR-Parallel runs); ``--only WORD`` keeps the cases whose label contains ``WORD``;
``--no-api`` skips the act/observe loop (then the digest comes from the runner only).
``--compare`` exits with status 1 when a case differs from the reference.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from dueling_gym.agents.registry import make_agent
from dueling_gym.envs.combinatorial_duel import CombinatorialDuelEnv
from dueling_gym.experiments.pure_exploration import run_pure_exploration
from dueling_gym.experiments.simulate import derive_seeds
from dueling_gym.problems import five_edge_example, random_bipartite_problem


def larger_problem():
    """A planted random instance with 4 positions and 6 candidates (the "larger" problem)."""
    return random_bipartite_problem(4, 6, np.random.default_rng(1004), planted_condorcet=True, min_gap=0.3,
                                    edge_probability=0.6, name="planted_4x6")


PROBLEMS = {"five_edge": five_edge_example, "planted_4x6": larger_problem}

#: (label, problem, agent name, hyperparameters, run seed, long?)
CASES: list[tuple[str, str, str, dict[str, Any], int, bool]] = [
    *[(f"five_edge/clucb_borda_pac/eps0.02/seed{s}", "five_edge", "clucb_borda_pac",
       {"delta": 0.1, "epsilon": 0.02}, s, False) for s in range(3)],
    ("five_edge/clucb_borda_pac/rejection/seed0", "five_edge", "clucb_borda_pac",
     {"delta": 0.1, "epsilon": 0.02, "sampler": "rejection"}, 0, False),
    ("five_edge/clucb_borda_exact/delta0.05/seed0", "five_edge", "clucb_borda_exact", {"delta": 0.05}, 0, True),
    *[(f"five_edge/clucb_borda_exact/reuse/seed{s}", "five_edge", "clucb_borda_exact",
       {"delta": 0.1, "reuse_samples_if_exact": True}, s, False) for s in (1, 2)],
    *[(f"five_edge/car_cond/seed{s}", "five_edge", "car_cond", {"delta": 0.05}, s, False) for s in range(2)],
    *[(f"five_edge/car_verify/seed{s}", "five_edge", "car_verify", {"delta": 0.005}, s, False) for s in range(2)],
    *[(f"five_edge/car_parallel/seed{s}", "five_edge", "car_parallel", {"delta": 0.005}, s, True) for s in range(2)],
    *[(f"planted_4x6/clucb_borda_pac/eps0.05/seed{s}", "planted_4x6", "clucb_borda_pac",
       {"delta": 0.1, "epsilon": 0.05}, s, False) for s in range(2)],
    ("planted_4x6/car_cond/seed0", "planted_4x6", "car_cond", {"delta": 0.05}, 0, False),
    ("planted_4x6/car_verify/seed0", "planted_4x6", "car_verify", {"delta": 0.005}, 0, False),
]


def duel_digest(duels: np.ndarray) -> str:
    """SHA-256 of the ``(e, e2, outcome)`` rows as little-endian int64."""
    return hashlib.sha256(np.ascontiguousarray(duels, dtype="<i8").tobytes()).hexdigest()


def api_run(agent: Any, problem: Any, seed: int) -> tuple[int, list[int], str, float]:
    """The runner's loop through the public API, recording every duel: samples, matching, digest, seconds."""
    env = CombinatorialDuelEnv(problem)
    env_seed, agent_seed = derive_seeds(seed)
    env.reset(seed=env_seed)
    agent.reset(seed=agent_seed)
    record: list[tuple[int, int, int]] = []
    start = time.perf_counter()
    while not agent.done:
        first, second = agent.act()
        won = bool(env.step_edges(first, second)[0])
        agent.observe((first, second), won)
        record.append((first, second, int(won)))
    seconds = time.perf_counter() - start
    duels = np.array(record, dtype=np.int64).reshape(-1, 3)
    return len(record), [int(e) for e in agent.recommend()], duel_digest(duels), seconds


def runner_can_record() -> bool:
    return "record_duels" in inspect.signature(run_pure_exploration).parameters


def measure(case: tuple[str, str, str, dict[str, Any], int, bool], *, api: bool) -> dict[str, Any]:
    label, problem_name, agent_name, hyperparameters, seed, _ = case
    problem = PROBLEMS[problem_name]()
    row: dict[str, Any] = {"label": label}
    if api:
        agent = make_agent(agent_name, problem, **hyperparameters)
        samples, matching, digest, seconds = api_run(agent, problem, seed)
        row.update(samples=samples, matching=matching, duel_sha256=digest, api_seconds=seconds,
                   api_samples_per_s=samples / seconds if seconds else None)
    agent = make_agent(agent_name, problem, **hyperparameters)
    if runner_can_record():
        recorded = run_pure_exploration(agent, problem, seed=seed, record_duels=True)
        runner_digest = duel_digest(recorded.duels)
        if api and (recorded.samples, list(recorded.recommendation), runner_digest) != (
                row["samples"], row["matching"], row["duel_sha256"]):
            row["runner_mismatch"] = {"samples": recorded.samples, "matching": list(recorded.recommendation),
                                      "duel_sha256": runner_digest}
        row.setdefault("samples", recorded.samples)
        row.setdefault("matching", list(recorded.recommendation))
        row.setdefault("duel_sha256", runner_digest)
        row["runner_sha256"] = runner_digest
        result = run_pure_exploration(agent, problem, seed=seed)
        row.update(runner_seconds=result.wall_time, samples_per_s=result.samples / result.wall_time)
    else:
        # The reference code: its runner is the same loop as api_run, so the API run is its timing.
        if not api:
            raise SystemExit("this version of run_pure_exploration cannot record duels: drop --no-api")
        row.update(runner_seconds=row["api_seconds"], samples_per_s=row["api_samples_per_s"])
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--save", type=Path, help="write the rows here (JSON)")
    parser.add_argument("--compare", type=Path, help="check against these reference rows and print ratios")
    parser.add_argument("--quick", action="store_true", help="skip the long cases")
    parser.add_argument("--only", default="", help="keep the cases whose label contains this")
    parser.add_argument("--no-api", dest="api", action="store_false", help="skip the act/observe loop")
    args = parser.parse_args()

    cases = [case for case in CASES if args.only in case[0] and not (args.quick and case[5])]
    reference = {}
    if args.compare:
        reference = {row["label"]: row for row in json.loads(args.compare.read_text())["rows"]}
    rows, ok = [], True
    for case in cases:
        row = measure(case, api=args.api)
        rows.append(row)
        line = f"{row['label']:<48} samples={row['samples']:>9} matching={row['matching']} " \
               f"{row['samples_per_s']:>12,.0f} samples/s"
        old = reference.get(row["label"])
        if old is not None:
            same = all(old[key] == row[key] for key in ("samples", "matching", "duel_sha256"))
            same = same and "runner_mismatch" not in row
            ok &= same
            line += f"  x{row['samples_per_s'] / old['samples_per_s']:8.1f} vs {old['samples_per_s']:>9,.0f}" \
                    f"  {'same' if same else 'DIFFERENT'}"
            if args.api and "api_samples_per_s" in row:
                line += f"  (act/observe x{row['api_samples_per_s'] / old['samples_per_s']:.1f})"
        elif "runner_mismatch" in row:
            ok = False
            line += "  RUNNER DIFFERS FROM act/observe"
        print(line, flush=True)
    if args.save:
        args.save.write_text(json.dumps({"python": sys.version, "rows": rows}, indent=1))
        print(f"written to {args.save}")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
