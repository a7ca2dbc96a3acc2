"""Paired validation draws: the comparison by which the learned agent's files were shipped or not.

Each file the ``learned`` agent plays after the first ones was shipped only if it passed a rule
written down before its validation draw (``agents/data/README.md`` lists every rule and draw).  A
draw is a set of validation problems that neither training nor the held-out evaluation uses:
for ``K`` arms and draw number ``w``, family ``f`` (its index in :data:`ALL_FAMILIES`) draws its
problems in order from ``numpy.random.default_rng(SeedSequence([34, 0x5E1EC7, K, w]).spawn(4)[f])``
with the family's generator (a child of ``spawn`` depends on its index only, so the three
training families draw the same problems as when a draw spawned three streams).  Every problem is played once by two versions of the agent, the
*baseline* and the *candidate* (keyword arguments of ``make_agent("learned", K, ...)``), with the
same run seed ``1_000_003 i + 17`` for problem ``i``, so they draw the same outcome uniforms and
agent seeds; the candidate's regret minus the baseline's is averaged over the problems, with its
95% Student's t half-width, at every checkpoint: *lower* or *higher* when the interval excludes
zero, *tied* when it contains it, and *identical* when every run's difference is exactly zero
(as the runs of two agents that differ only after a given duel are before it).

From the command line, e.g. the draws that shipped ``learned_k4.npz``::

    python -m dueling_gym.experiments.studies.learned_validation --out results/validation-k4 \\
        --n-arms 4 --draw 94 --problems 600 --horizon 10000 \\
        --baseline policy=agents/data/learned_k5.npz,opening=agents/data/learned_opening.npz,late=training-history/es_late_k4_5_8.npz \\
        --candidate late=training-history/es_late_k4_5_8.npz

(the candidate defaults to the agent as shipped; the late policy of that time lies in
``training-history/``).  ``paired.csv``, ``agents.csv`` (the files each agent plays, by size:
:func:`agent_files`) and ``summary.md`` (both tables) are written to ``--out``.

``--references ecw_rmed,dts_plus,...`` also plays those classic agents (their papers' defaults) on
the same problems with the same run seeds, and each row names the one with the lowest mean regret
at that checkpoint and the candidate's mean as a share of it: a rule may then be stated against
the classic agents the learned agent is compared with, not only against the shipped agent.
"""

from __future__ import annotations

import argparse
import hashlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from dueling_gym.agents import make_agent
from dueling_gym.agents.learned import DATA_DIRECTORY, LearnedAgent
from dueling_gym.experiments.simulate import simulate
from dueling_gym.experiments.studies.learned_evaluation import classic_agents, write_csv
from dueling_gym.problems import PreferenceMatrix
from dueling_gym.problems.generators import ProblemSampler
from dueling_gym.stats import mean_half_width
from dueling_gym.validation import check_integer

__all__ = ["FAMILIES", "ALL_FAMILIES", "AGENT_OPTIONS", "validation_problems", "paired_validation", "validation_summary",
           "parse_agent_options", "check_agent_options", "check_families", "check_references"]

#: The generator families of a draw by default, the three every shipped file was trained on.
FAMILIES = ("no_condorcet_winner", "unique_copeland_winner", "utility_based")
#: Every family a draw may hold, in the order of their stream index (the fourth is the large
#: synthetic problem of Zoghi et al., 2015, §6: three Copeland winners in a cycle; 4 arms or more).
ALL_FAMILIES = FAMILIES + ("cyclic_copeland_winners",)
#: The keyword arguments of the learned agent a baseline or candidate may set.
AGENT_OPTIONS = ("policy", "opening", "opening_duels", "late", "late_from", "cycle", "cycle_until", "safeguard_from",
                 "safeguard_clock", "thompson_check_from")
#: The words of the validation streams (the first is the seed of the trainers' validation draws).
_STREAM_WORDS = (34, 0x5E1EC7)
#: Regret notion of every comparison.
_NOTION = "copeland_komiyama"


def validation_problems(n_arms: int, draw: int, family: str, n_problems: int) -> list[PreferenceMatrix]:
    """The first ``n_problems`` problems of ``family`` with ``n_arms`` arms in validation draw ``draw``."""
    check_families([family])
    n_arms = check_integer("n_arms", n_arms, minimum=2)
    draw = check_integer("draw", draw, minimum=0)
    n_problems = check_integer("n_problems", n_problems, minimum=1)
    stream = np.random.SeedSequence([*_STREAM_WORDS, n_arms, draw]).spawn(len(ALL_FAMILIES))[ALL_FAMILIES.index(family)]
    rng = np.random.default_rng(stream)
    sampler = ProblemSampler(family, n_arms=n_arms)
    return [sampler(rng) for _ in range(n_problems)]


def _checkpoints(horizon: int) -> list[int]:
    """100, 1000, ... below ``horizon``, and ``horizon``."""
    points = [10 ** power for power in range(2, 12) if 10 ** power < horizon]
    return points + [horizon]


def _cell(task: tuple[int, int, str, int, int, dict[str, Any], dict[str, Any], tuple[str, ...]]) -> np.ndarray:
    """The regret at every checkpoint on one size and family of a draw of the baseline, the
    candidate and each reference agent, in that order (shape: agents, problems, checkpoints)."""
    n_arms, draw, family, n_problems, horizon, baseline, candidate, references = task
    points = _checkpoints(horizon)
    agents = [make_agent("learned", n_arms, **options) for options in (baseline, candidate)]
    agents += [make_agent(name, n_arms) for name in references]
    regret = np.empty((len(agents), n_problems, len(points)))
    for index, problem in enumerate(validation_problems(n_arms, draw, family, n_problems)):
        for which, agent in enumerate(agents):
            result = simulate(agent, problem, horizon, seed=1_000_003 * index + 17, checkpoints=points)
            regret[which, index] = result.cumulative_regret[_NOTION]
    return regret


def paired_validation(n_arms: Sequence[int], draw: int, n_problems: int, horizon: int, *,
                      candidate: Mapping[str, Any] | None = None, baseline: Mapping[str, Any] | None = None,
                      families: Sequence[str] = FAMILIES, references: Sequence[str] = (), jobs: int = 1) -> list[dict]:
    """The candidate minus the baseline on validation draw ``draw``, by size, family and checkpoint.

    Parameters
    ----------
    n_arms : sequence of int
        The sizes of the draw.
    draw : int
        The draw number ``w`` (see the module docstring).
    n_problems : int
        Problems per family and size (at least 2).
    horizon : int
        Duels per run; the regret is read at 100, 1000, ... below it and at it.
    candidate, baseline : mapping, optional
        Keyword arguments of ``make_agent("learned", K, ...)`` (:data:`AGENT_OPTIONS`); default: the
        agent as shipped.
    families : sequence of str
        A subset of :data:`ALL_FAMILIES` (default: :data:`FAMILIES`).
    references : sequence of str
        Classic regret minimisers of the registry played on the same problems with the same run
        seeds, with their papers' defaults (default: none).
    jobs : int
        Worker processes (one size and family at a time each).

    Returns
    -------
    list of dict
        One row per size, family and checkpoint: both means, the mean difference, its 95% Student's
        t half-width, the verdict (``"lower"``, ``"higher"``, ``"tied"``) and whether every run's
        difference was exactly zero; with ``references``, also the one with the lowest mean regret
        (``best_reference``), that mean, and the candidate's mean divided by it
        (``candidate_over_reference``; infinite when that mean is 0).
    """
    sizes = [check_integer("n_arms", value, minimum=2) for value in n_arms]
    horizon = check_integer("horizon", horizon, minimum=1)
    jobs = check_integer("jobs", jobs, minimum=1)
    n_problems = check_integer("n_problems", n_problems, minimum=2)  # a paired interval needs two runs
    options = [check_agent_options(name, value) for name, value in (("baseline", baseline), ("candidate", candidate))]
    draw = check_integer("draw", draw, minimum=0)
    check_families(families, sizes)  # argument errors before any worker starts
    references = check_references(references)
    tasks = [(size, draw, family, n_problems, horizon, *options, references) for size in sizes for family in families]
    if jobs == 1:
        results = [_cell(task) for task in tasks]
    else:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(_cell, tasks))
    rows = []
    for (size, _, family, *_), regret in zip(tasks, results):
        before, after = regret[0], regret[1]
        for column, point in enumerate(_checkpoints(horizon)):
            differences = after[:, column] - before[:, column]
            mean, half_width = float(differences.mean()), float(mean_half_width(differences))
            verdict = "lower" if mean + half_width < 0 else "higher" if mean - half_width > 0 else "tied"
            rows.append({"n_arms": size, "family": family, "horizon": point, "baseline": float(before[:, column].mean()),
                         "candidate": float(after[:, column].mean()), "difference": mean, "ci95": half_width,
                         "verdict": verdict, "identical": bool(np.all(differences == 0)), "runs": int(differences.size)})
            if references:
                means = regret[2:, :, column].mean(axis=1)
                best = int(np.argmin(means))
                rows[-1].update({"best_reference": references[best], "best_reference_mean": float(means[best]),
                                 "candidate_over_reference": rows[-1]["candidate"] / float(means[best])
                                 if means[best] > 0 else float("inf")})
    return rows


def check_references(references: Sequence[str]) -> tuple[str, ...]:
    """``references`` as a tuple, refused unless each is a distinct classic regret minimiser of the
    registry (:func:`~dueling_gym.experiments.studies.learned_evaluation.classic_agents`, the agents
    the evaluation compares the learned agent with)."""
    if isinstance(references, (str, bytes)):
        raise TypeError(f"references must be a sequence of agent names, not the single string {references!r}")
    known = classic_agents()
    references = tuple(references)
    for name in references:
        if name not in known:
            raise ValueError(f"reference {name!r} is not a classic dueling agent of the registry "
                             f"({', '.join(known)})")
    if len(set(references)) != len(references):
        raise ValueError(f"references name an agent twice: {list(references)}")
    return references


def check_families(families: Sequence[str], sizes: Sequence[int] = ()) -> None:
    """Refuse a family that is not one of :data:`ALL_FAMILIES`, no family at all, and a size one of
    the families cannot have (the cyclic family needs 4 arms)."""
    if isinstance(families, (str, bytes)):
        raise TypeError(f"families must be a sequence of family names, not the single string {families!r}")
    if len(families) == 0:
        raise ValueError("families must name at least one family")
    for family in families:
        if family not in ALL_FAMILIES:
            raise ValueError(f"family must be one of {ALL_FAMILIES}, got {family!r}")
    for size in sizes:
        for family in families:
            ProblemSampler(family, n_arms=size)


def check_agent_options(name: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``options`` (None: none) as a dict, refused unless every key is one of :data:`AGENT_OPTIONS`."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"{name} must be a mapping of agent options, got {type(options).__name__}")
    unknown = sorted(set(options) - set(AGENT_OPTIONS))
    if unknown:
        raise ValueError(f"{name} sets {unknown}, which are not options of the learned agent here: {AGENT_OPTIONS}")
    return dict(options)


def parse_agent_options(text: str) -> dict[str, Any]:
    """``"late=none,late_from=2000,policy=PATH"`` as agent options (``none``: None; integers as such)."""
    options: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, separator, value = item.partition("=")
        if not separator or not key:
            raise ValueError(f"agent options are key=value pairs separated by commas, got {item!r}")
        if key in options:
            raise ValueError(f"agent option {key!r} is given twice")
        options[key] = None if value.lower() == "none" else int(value) if value.lstrip("-").isdigit() else value
    return check_agent_options("the options", options)


def agent_files(n_arms: int, options: Mapping[str, Any] | None = None) -> dict[str, str]:
    """What ``make_agent("learned", n_arms, **options)`` plays, phase by phase: the file of its policy,
    opening, late policy and cycle policy, each as the shipped file's name when its SHA-256 is one of
    the package's files and else as ``sha256:`` and the first 12 hex digits, or ``none``; the
    opening's length, the duel the late policy takes over after, the duel up to which the cycle
    policy chooses, whether the safeguard is on, and the duel after which the Thompson check judges
    the network's self-duels (``off``: never).

    A draw's table says what was compared only if both agents are the ones meant: ``opening="shipped"``
    beside a policy file of one's own, for instance, plays no opening (the agent's rule for "shipped").
    """
    n_arms = check_integer("n_arms", n_arms, minimum=2)
    digests = LearnedAgent.content_digests(n_arms, dict(check_agent_options("options", options)))
    if not digests:
        raise ValueError(f"the policy file of {dict(options or {})} does not exist")
    shipped = {hashlib.sha256(path.read_bytes()).hexdigest(): path.name
               for path in sorted(DATA_DIRECTORY.glob("*.npz"))}

    def name(key: str) -> str:
        digest = digests.get(key)
        return "none" if digest is None else shipped.get(digest, f"sha256:{digest[:12]}")

    return {"policy": name("policy_sha256"), "opening": name("opening_sha256"),
            "opening_duels": digests.get("opening_duels", "-"), "late": name("late_sha256"),
            "late_from": digests.get("late_from", "-"), "cycle": name("cycle_sha256"),
            "cycle_until": digests.get("cycle_until", "-"),
            "safeguard": "on" if "safeguard_sha256" in digests else "off",
            "thompson_check": (str((options or {})["thompson_check_from"]) if "thompson_check_sha256" in digests
                               else "off")}


def validation_summary(rows: Sequence[dict], agents: Sequence[dict] = ()) -> str:
    """The rows as a Markdown table (mean regret, baseline → candidate, and the paired difference;
    with the best reference agent and the candidate's share of its mean when the rows have them),
    followed by the files each agent plays when ``agents`` (rows of ``n_arms``, ``agent`` and
    :func:`agent_files`) are given."""
    with_references = any("best_reference" in row for row in rows)
    lines = ["| K | family | T | baseline → candidate | candidate − baseline (paired) | verdict |"
             + (" best reference | candidate / best reference |" if with_references else ""),
             "|---|---|---:|---:|---:|---|" + ("---|---:|" if with_references else "")]
    for row in rows:
        verdict = "identical" if row["identical"] else row["verdict"]
        line = (f"| {row['n_arms']} | {row['family']} | {row['horizon']} | {row['baseline']:.1f} → "
                f"{row['candidate']:.1f} | {row['difference']:+.1f} ± {row['ci95']:.1f} | {verdict} |")
        if with_references:
            line += (f" {row['best_reference']} {row['best_reference_mean']:.1f} |"
                     f" {row['candidate_over_reference']:.2f} |")
        lines.append(line)
    lines += ["", "Intervals: 95% Student's t half-width of the mean paired difference over the problems."]
    if agents:
        lines += ["", "| K | agent | policy | opening (duels) | late policy (after duel) | cycle policy (up to duel) "
                  "| safeguard | Thompson check (after duel) |", "|---|---|---|---|---|---|---|---|"]
        for row in agents:
            lines.append(f"| {row['n_arms']} | {row['agent']} | {row['policy']} | {row['opening']} ({row['opening_duels']}) "
                         f"| {row['late']} ({row['late_from']}) | {row['cycle']} ({row['cycle_until']}) "
                         f"| {row['safeguard']} | {row['thompson_check']} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A candidate learned agent against a baseline on a validation draw.")
    parser.add_argument("--out", required=True)
    parser.add_argument("--n-arms", required=True, help="number(s) of arms, comma-separated")
    parser.add_argument("--draw", type=int, required=True, help="the draw number w")
    parser.add_argument("--problems", type=int, required=True, help="problems per family and size")
    parser.add_argument("--horizon", type=int, default=10_000)
    parser.add_argument("--candidate", default="", help="agent options, e.g. late=PATH,late_from=1000 (default: as shipped)")
    parser.add_argument("--baseline", default="", help="agent options of the baseline (default: as shipped)")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help=f"comma-separated, from {', '.join(ALL_FAMILIES)} (default: the first three)")
    parser.add_argument("--references", default="",
                        help="comma-separated classic agents played on the same problems and seeds (default: none)")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    sizes = [int(value) for value in args.n_arms.split(",")]
    candidate, baseline = parse_agent_options(args.candidate), parse_agent_options(args.baseline)
    agents = [{"n_arms": size, "agent": agent, **agent_files(size, options)}
              for size in sizes for agent, options in (("baseline", baseline), ("candidate", candidate))]
    rows = paired_validation(sizes, args.draw, args.problems, args.horizon, candidate=candidate, baseline=baseline,
                             families=args.families.split(","),
                             references=[name for name in args.references.split(",") if name], jobs=args.jobs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "paired.csv", rows)
    write_csv(out / "agents.csv", agents)
    summary = validation_summary(rows, agents)
    (out / "summary.md").write_text(summary)
    print(summary)


if __name__ == "__main__":
    main()
