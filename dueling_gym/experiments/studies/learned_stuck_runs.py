"""Where the learned agent's regret beyond its training horizons comes from: runs stuck on a wrong arm.

The consistency check (:mod:`~dueling_gym.experiments.studies.learned_consistency`) reads the
growth of the *mean* regret from ``10^4`` to ``10^5`` duels.  This diagnosis splits it by run: a run
is **stuck** when its regret still grows by at least :data:`STUCK_RATE` per duel over the second
half of the run (from ``horizon / 2`` to ``horizon``), which a run past its exploration, whose
regret grows like ``log t``, does not; it was stuck **by duel 1000** when it grew that fast from
duel 300 to 1000 too.  For each size and family it reports how many runs were stuck, the growth
of the mean regret from ``horizon / 10`` to ``horizon`` with and without them, and the share of the
increase they carry.  For each stuck run it also replays the first ``horizon / 10`` duels (the
same seed plays them again) and lists the pairs the counts then misread among those of the arm the
run self-dueled most and of the problem's Copeland winners (``stuck_pairs.csv``).

Problems come from a diagnostic stream that training, validation and the held-out evaluation do
not use: family ``f`` (its index in
:data:`~dueling_gym.experiments.studies.learned_validation.ALL_FAMILIES`) with ``K`` arms draws in
order from ``default_rng(SeedSequence([35, 0xD1A6, K, f]))``; run ``i`` has seed ``i``.  The
table of ``agents/data/README.md`` (measured before ``learned_k4.npz`` and before the present late
policy, so the commands name the files played then; the first late policy lies in
``training-history/``)::

    python -m dueling_gym.experiments.studies.learned_stuck_runs --out results/stuck-runs-58 \\
        --n-arms 5,8 --problems 200 --horizon 100000 --jobs 2 \\
        --agent late=training-history/es_late_k4_5_8.npz
    python -m dueling_gym.experiments.studies.learned_stuck_runs --out results/stuck-runs-4 \\
        --n-arms 4 --problems 200 --horizon 100000 --jobs 2 \\
        --agent policy=agents/data/learned_k5.npz,opening=agents/data/learned_opening.npz,late=training-history/es_late_k4_5_8.npz
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
from dueling_gym.pair_network import pair_evidence
from dueling_gym.problems import PreferenceMatrix
from dueling_gym.problems.generators import ProblemSampler
from dueling_gym.validation import check_integer

__all__ = ["STUCK_RATE", "stuck_runs", "stuck_runs_and_pairs", "misread_pairs", "stuck_summary"]

#: Regret per duel over the second half of a run from which the run counts as stuck (a wrong arm
#: exploited for good costs a quarter to a half per duel in Copeland regret; a run past its
#: exploration, a small fraction of that).
STUCK_RATE = 0.05
#: The words of the diagnostic stream.
_STREAM_WORDS = (35, 0xD1A6)
#: Regret notion of the table.
_NOTION = "copeland_komiyama"


def _growth(short: np.ndarray, long: np.ndarray) -> float:
    """The ratio of the mean regrets; NaN without runs or without regret at the short horizon."""
    return float(long.mean() / short.mean()) if short.size and short.mean() > 0 else float("nan")


def misread_pairs(wins: np.ndarray, problem: PreferenceMatrix, arm: int) -> list[dict[str, Any]]:
    """The pairs the counts ``wins`` misread that bear on ``arm`` being exploited: those of
    ``arm`` itself and those of the problem's Copeland winners that the counts lead the wrong way
    round (``"wrong"``) or not at all (``"tied"``: equal wins, or never played), though the
    preference is not exactly 1/2.  Either way the pair's Copeland point goes to the wrong arm or
    to neither, which is how a non-winner comes to lead the empirical Copeland scores.

    Returns one dict per pair, ``arm``'s first, then by the winners' index: the two arms
    (``first`` leads in the counts, or truly for a tied pair), how the counts read it, the duels
    played, the evidence ``N KL(p, 1/2)`` of the counts
    (``dueling_gym.pair_network.pair_evidence``) and the first arm's true preference."""
    winners = [int(arm_index) for arm_index in problem.copeland_winners]
    pairs, seen = [], set()
    for owner in [arm, *winners]:
        for other in range(problem.n_arms):
            key = (min(owner, other), max(owner, other))
            if other == owner or key in seen:
                continue
            seen.add(key)
            ahead, behind = int(wins[owner, other]), int(wins[other, owner])
            truth = problem.matrix[owner, other]
            if truth == 0.5 or (ahead != behind and (ahead > behind) == (truth > 0.5)):
                continue
            leads = ahead > behind if ahead != behind else truth > 0.5
            first, second = (owner, other) if leads else (other, owner)
            pairs.append({"first": first, "second": second, "read": "tied" if ahead == behind else "wrong",
                          "duels": ahead + behind, "evidence": float(pair_evidence(ahead, behind)),
                          "preference": float(problem.matrix[first, second])})
    return pairs


def _cell(task: tuple[int, int, str, int, int, dict[str, Any]]) -> tuple[dict, list[dict]]:
    n_arms, family_index, family, n_problems, horizon, options = task
    rng = np.random.default_rng(np.random.SeedSequence([*_STREAM_WORDS, n_arms, family_index]))
    sampler = ProblemSampler(family, n_arms=n_arms)
    agent = make_agent("learned", n_arms, **options)
    points = [300, 1000, horizon // 10, horizon // 2, horizon]
    problems = [sampler(rng) for _ in range(n_problems)]
    regret = np.array([simulate(agent, problem, horizon, seed=index, checkpoints=points)
                       .cumulative_regret[_NOTION] for index, problem in enumerate(problems)])
    stuck = (regret[:, 4] - regret[:, 3]) / (horizon - horizon // 2) >= STUCK_RATE
    early = stuck & ((regret[:, 1] - regret[:, 0]) / 700 >= STUCK_RATE)
    increase = regret[:, 4] - regret[:, 2]
    free = ~stuck
    row = {"n_arms": n_arms, "family": family, "runs": n_problems, "stuck": int(stuck.sum()),
           "stuck_by_1000": int(early.sum()), "mean_short": float(regret[:, 2].mean()),
           "mean_long": float(regret[:, 4].mean()), "growth": _growth(regret[:, 2], regret[:, 4]),
           "growth_without_stuck": _growth(regret[free, 2], regret[free, 4]),
           "share_from_stuck": float(increase[stuck].sum() / increase.sum()) if increase.sum() > 0 else 0.0}
    details = []
    for index in np.flatnonzero(stuck):
        # The same seed replays the run's first horizon / 10 duels exactly: the counts the agent
        # had when the growth measured above began.
        problem = problems[index]
        simulate(agent, problem, horizon // 10, seed=int(index))
        wins = np.array(agent.wins)
        arm = int(np.argmax(np.diag(wins)))  # the arm it self-dueled most
        pairs = misread_pairs(wins, problem, arm)
        details.append({"n_arms": n_arms, "family": family, "run": int(index), "duels": horizon // 10,
                        "exploited_arm": arm, "exploited_regret": float(problem.regret_matrix(_NOTION)[arm, arm]),
                        "misread_pairs": len(pairs),
                        "misread_pairs_of_the_arm": sum(arm in (pair["first"], pair["second"]) for pair in pairs),
                        "tied_pairs": sum(pair["read"] == "tied" for pair in pairs),
                        "largest_evidence": max((pair["evidence"] for pair in pairs), default=float("nan")),
                        "pairs": "; ".join(f"{pair['first']}{'>' if pair['read'] == 'wrong' else '='}{pair['second']} "
                                           f"p={pair['preference']:.3f} {pair['duels']} duels evidence "
                                           f"{pair['evidence']:.2f}" for pair in pairs)})
    return row, details


def stuck_runs(n_arms: Sequence[int], n_problems: int, horizon: int = 100_000, *,
               agent_options: Mapping[str, Any] | None = None, families: Sequence[str] = FAMILIES,
               jobs: int = 1) -> list[dict]:
    """Stuck runs of the learned agent on the diagnostic stream, by size and family: the first
    list of :func:`stuck_runs_and_pairs` (same arguments)."""
    return stuck_runs_and_pairs(n_arms, n_problems, horizon, agent_options=agent_options, families=families,
                                jobs=jobs)[0]


def stuck_runs_and_pairs(n_arms: Sequence[int], n_problems: int, horizon: int = 100_000, *,
                         agent_options: Mapping[str, Any] | None = None, families: Sequence[str] = FAMILIES,
                         jobs: int = 1) -> tuple[list[dict], list[dict]]:
    """Stuck runs of the learned agent on the diagnostic stream, by size and family, and what each
    stuck run's counts got wrong when the measured growth began.

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
    list of dict
        Per stuck run, after its first ``horizon / 10`` duels (replayed with the same seed): the
        arm it had self-dueled most, that arm's Copeland regret per self-duel, and the pairs the
        counts misread among that arm's and the Copeland winners' (:func:`misread_pairs`): how
        many, how many of them the arm's own, how many read as ties, the largest evidence among
        them and each pair in words (``i>j``: led the wrong way, ``i=j``: tied, ``i`` the true leader).
    """
    sizes = [check_integer("n_arms", value, minimum=2) for value in n_arms]
    n_problems = check_integer("n_problems", n_problems, minimum=1)
    horizon = check_integer("horizon", horizon, minimum=20_000)
    jobs = check_integer("jobs", jobs, minimum=1)
    options = check_agent_options("agent_options", agent_options)
    check_families(families, sizes)
    tasks = [(size, ALL_FAMILIES.index(family), family, n_problems, horizon, options) for size in sizes for family in families]
    if jobs == 1:
        cells = [_cell(task) for task in tasks]
    else:
        with ProcessPoolExecutor(jobs) as pool:
            cells = list(pool.map(_cell, tasks))
    return [row for row, _ in cells], [detail for _, details in cells for detail in details]


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
    rows, details = stuck_runs_and_pairs([int(value) for value in args.n_arms.split(",")], args.problems, args.horizon,
                                         agent_options=parse_agent_options(args.agent), jobs=args.jobs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "stuck_runs.csv", rows)
    write_csv(out / "stuck_pairs.csv", details)
    summary = stuck_summary(rows, args.horizon)
    (out / "summary.md").write_text(summary)
    print(summary)


if __name__ == "__main__":
    main()
