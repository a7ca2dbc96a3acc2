"""Where the learned agent's regret beyond its training horizons comes from: runs stuck on a wrong arm.

The consistency check (:mod:`~dueling_gym.experiments.studies.learned_consistency`) reads the
growth of the *mean* regret from ``10^4`` to ``10^5`` duels.  This diagnosis splits it by run: a run
is **stuck** when its regret still grows by at least :data:`STUCK_RATE` per duel over the second
half of the run (from ``horizon / 2`` to ``horizon``), which a run past its exploration, whose
regret grows like ``log t``, does not; it was stuck **by duel 1000** when it grew that fast from
duel 300 to 1000 too.  For each size and family it reports how many runs were stuck, the growth
of the mean regret from ``horizon / 10`` to ``horizon`` with and without them, and the share of the
increase they carry.

Problems come from a diagnostic stream that training, validation and the held-out evaluation do
not use: family ``f`` (its index in
:data:`~dueling_gym.experiments.studies.learned_validation.ALL_FAMILIES`) with ``K`` arms draws in
order from ``default_rng(SeedSequence([35, 0xD1A6, K, f]))``; run ``i`` has seed ``i``.  The
table of ``agents/data/README.md`` (measured before ``learned_k4.npz``, so 4 arms name the files
they played then; 5 and 8 arms are played as shipped)::

    python -m dueling_gym.experiments.studies.learned_stuck_runs --out results/stuck-runs-58 \\
        --n-arms 5,8 --problems 200 --horizon 100000 --jobs 2
    python -m dueling_gym.experiments.studies.learned_stuck_runs --out results/stuck-runs-4 \\
        --n-arms 4 --problems 200 --horizon 100000 --jobs 2 \\
        --agent policy=agents/data/learned_k5.npz,opening=agents/data/learned_opening.npz,late=agents/data/learned_late.npz
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from dueling_gym.agents import make_agent
from dueling_gym.experiments.simulate import simulate
from dueling_gym.experiments.studies.learned_evaluation import write_csv
from dueling_gym.experiments.studies.learned_validation import (
    ALL_FAMILIES,
    FAMILIES,
    check_agent_options,
    check_families,
    parse_agent_options,
)
from dueling_gym.problems.generators import ProblemSampler
from dueling_gym.validation import check_integer

__all__ = ["STUCK_RATE", "stuck_runs", "stuck_summary"]

#: Regret per duel over the second half of a run from which the run counts as stuck (a wrong arm
#: exploited for good costs a quarter to a half per duel in Copeland regret; a run past its
#: exploration, a small fraction of that).
STUCK_RATE = 0.05
#: The words of the diagnostic stream.
_STREAM_WORDS = (35, 0xD1A6)


def _growth(short: np.ndarray, long: np.ndarray) -> float:
    """The ratio of the mean regrets; NaN without runs or without regret at the short horizon."""
    return float(long.mean() / short.mean()) if short.size and short.mean() > 0 else float("nan")


def _cell(task: tuple[int, int, str, int, int, dict[str, Any]]) -> dict:
    n_arms, family_index, family, n_problems, horizon, options = task
    rng = np.random.default_rng(np.random.SeedSequence([*_STREAM_WORDS, n_arms, family_index]))
    sampler = ProblemSampler(family, n_arms=n_arms)
    agent = make_agent("learned", n_arms, **options)
    points = [300, 1000, horizon // 10, horizon // 2, horizon]
    regret = np.array([simulate(agent, sampler(rng), horizon, seed=index, checkpoints=points)
                       .cumulative_regret["copeland_komiyama"] for index in range(n_problems)])
    stuck = (regret[:, 4] - regret[:, 3]) / (horizon - horizon // 2) >= STUCK_RATE
    early = stuck & ((regret[:, 1] - regret[:, 0]) / 700 >= STUCK_RATE)
    increase = regret[:, 4] - regret[:, 2]
    free = ~stuck
    return {"n_arms": n_arms, "family": family, "runs": n_problems, "stuck": int(stuck.sum()),
            "stuck_by_1000": int(early.sum()), "mean_short": float(regret[:, 2].mean()),
            "mean_long": float(regret[:, 4].mean()), "growth": _growth(regret[:, 2], regret[:, 4]),
            "growth_without_stuck": _growth(regret[free, 2], regret[free, 4]),
            "share_from_stuck": float(increase[stuck].sum() / increase.sum()) if increase.sum() > 0 else 0.0}


def stuck_runs(n_arms: Sequence[int], n_problems: int, horizon: int = 100_000, *,
               agent_options: Mapping[str, Any] | None = None, families: Sequence[str] = FAMILIES,
               jobs: int = 1) -> list[dict]:
    """Stuck runs of the learned agent on the diagnostic stream, by size and family.

    Parameters
    ----------
    n_arms : sequence of int
        Sizes.
    n_problems : int
        Problems per family and size, one run each.
    horizon : int, default 100 000
        Duels per run (at least 20 000, so that ``horizon / 10`` lies beyond the first 1000 duels).
    agent_options : mapping, optional
        Keyword arguments of ``make_agent("learned", K, ...)``; default: as shipped.
    families : sequence of str
        A subset of :data:`~dueling_gym.experiments.studies.learned_validation.ALL_FAMILIES`
        (default: the three training families).
    jobs : int
        Worker processes.

    Returns
    -------
    list of dict
        Per size and family: runs, stuck runs, those stuck by duel 1000, the mean regret at
        ``horizon / 10`` and ``horizon``, the growth between them with and without the stuck runs,
        and the share of the increase the stuck runs carry.
    """
    sizes = [check_integer("n_arms", value, minimum=2) for value in n_arms]
    n_problems = check_integer("n_problems", n_problems, minimum=1)
    horizon = check_integer("horizon", horizon, minimum=20_000)
    jobs = check_integer("jobs", jobs, minimum=1)
    options = check_agent_options("agent_options", agent_options)
    check_families(families, sizes)
    tasks = [(size, ALL_FAMILIES.index(family), family, n_problems, horizon, options) for size in sizes for family in families]
    if jobs == 1:
        return [_cell(task) for task in tasks]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(_cell, tasks))


def stuck_summary(rows: Sequence[dict], horizon: int) -> str:
    """The rows as a Markdown table."""
    lines = [f"| K | family | runs stuck | stuck by duel 1000 | growth {horizon // 10} → {horizon} | without the stuck runs | "
             "share of the increase from stuck runs |", "|---|---|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {row['n_arms']} | {row['family']} | {row['stuck']} of {row['runs']} | {row['stuck_by_1000']} | "
                     f"{row['growth']:.2f} | {row['growth_without_stuck']:.2f} | {row['share_from_stuck']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Runs of the learned agent stuck on a wrong arm, by size and family.")
    parser.add_argument("--out", required=True)
    parser.add_argument("--n-arms", default="4,5,8", help="number(s) of arms, comma-separated")
    parser.add_argument("--problems", type=int, default=200, help="problems per family and size")
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--agent", default="", help="agent options, e.g. late=none (default: as shipped)")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    rows = stuck_runs([int(value) for value in args.n_arms.split(",")], args.problems, args.horizon,
                      agent_options=parse_agent_options(args.agent), jobs=args.jobs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "stuck_runs.csv", rows)
    summary = stuck_summary(rows, args.horizon)
    (out / "summary.md").write_text(summary)
    print(summary)


if __name__ == "__main__":
    main()
