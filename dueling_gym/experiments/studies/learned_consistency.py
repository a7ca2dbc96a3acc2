"""Whether the learned policy's regret keeps growing like a logarithm beyond the horizons of its tables.

A consistent algorithm's regret grows like ``log T`` once it has identified the winner: from
``T = 10^4`` to ``10^5`` it grows by a factor near ``log(10^5) / log(10^4) = 1.25`` (more while it
is still exploring: on the published matrices whose pairs all lie close to 1/2, RMED1 and D-TS+
grow by more than 2 over this range); a policy that has committed to a wrong arm for good grows
tenfold.  :func:`check_consistency`
plays the learned policy on each published matrix to a long horizon, with the same runs (matrix
and run seed) as the first stage of :func:`~dueling_gym.experiments.studies.learned_evaluation.evaluate`,
so its regret at that evaluation's longest horizon is the one in the evaluation's tables, and
reports the growth factor ``mean regret(T_long) / mean regret(T_short)`` with a 95%
percentile-bootstrap interval (runs resampled together at both horizons).  The verdict compares
the factor itself with :data:`GROWTH_LIMIT`, which separates a logarithmic growth (with room for
a policy still exploring at ``T_short``) from a linear one.

Variants of the agent (for instance the safeguard of :mod:`dueling_gym.pair_network.safeguard`,
``{"safeguard_from": 1000}``) run beside the shipped settings, so the table shows what each costs
and what each buys.  Classic agents (``references``) run on the same runs with their papers'
defaults, so the growth factor can be read against theirs: on a matrix whose pairs lie close to
1/2 a provably consistent agent is still exploring at ``10^4`` and grows faster than 1.25 too.

The growth factor alone cannot show consistency: a policy that never checks the arm it exploits
grows slowly for as long as that arm is right.  So every row also reports the regret at the long
horizon as a share of the lower bound ``LB ln T`` of Komiyama, Honda and Nakagawa (*Copeland
Dueling Bandit Problem: Regret Lower Bound, Optimal Algorithm, and Computationally Efficient
Algorithm*, ICML 2016, Theorem 2; :func:`~dueling_gym.problems.lower_bound_constant`), which
every strongly consistent algorithm's expected regret eventually exceeds: a share far below 1 at
``10^5`` duels says the agent has not yet paid for the checks a consistent algorithm makes on
that matrix (the bound is asymptotic, so this is evidence, not proof).

From the command line (every classic agent of the registry as a reference with ``--references
all``, another setting of the learned agent beside the shipped one with ``--variant``; a unit is
one agent on one matrix, so an interrupted check resumes)::

    python -m dueling_gym.experiments.studies.learned_consistency --out results/classic-consistency \\
        --references all --jobs 2
    python -m dueling_gym.experiments.studies.learned_consistency --out results/consistency-own-clock \\
        --variant safeguard_from=10000,safeguard_clock=start --jobs 2

Twenty runs decide the verdict of a policy whose runs commit to a wrong arm now and then by the
draw of a few runs, so every row also counts the *fast* runs (their own regret grows more than
:data:`FAST_RUN_GROWTH`-fold) and the share of resampled checks of :data:`CHECK_RUNS` runs that
pass (:func:`check_pass_share`); ``--runs 100`` plays the check's 20 runs and 80 more::

    python -m dueling_gym.experiments.studies.learned_consistency --out results/consistency-runs \\
        --runs 100 --references cw_rmed,ecw_rmed,dts,dts_plus,winner_stays_strong,self_sparring --jobs 2
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from dueling_gym.experiments.runs.runner import run_units
from dueling_gym.experiments.studies.learned_evaluation import (KIND, EvaluationUnit, classic_agents, paired_comparison,
                                                                published_runs, published_source, write_csv)
from dueling_gym.experiments.studies.learned_validation import check_agent_options, parse_agent_options
from dueling_gym.problems import lower_bound_constant, load_problem
from dueling_gym.validation import check_bool, check_integer

__all__ = ["GROWTH_LIMIT", "FAST_RUN_GROWTH", "CHECK_RUNS", "PAPER_DEFAULTS", "check_consistency", "consistency_summary",
           "growth_interval", "check_pass_share"]

#: Largest growth factor from the short to the long horizon that reads as logarithmic (``log``
#: growth from 10^4 to 10^5 is 1.25, linear regret 10; an agent still exploring lies between).
GROWTH_LIMIT = 2.0
#: Growth of one run's regret from the short to the long horizon above which the run counts as
#: *fast*: it kept paying a share of a duel's regret on most duels in between (a wrong arm exploited,
#: tenfold from 10^4 to 10^5), where a run past its exploration grows like the logarithm (1.25).
FAST_RUN_GROWTH = 5.0
#: Runs per matrix of the evaluation's check, the sample size of :func:`check_pass_share`'s resamples.
CHECK_RUNS = 20
#: The variant every check runs: the agent as shipped.
SHIPPED = "as shipped"
#: The ``variant`` of a classic reference agent's rows.
PAPER_DEFAULTS = "paper's defaults"


def growth_interval(short: np.ndarray, long: np.ndarray, *, level: float = 0.95, resamples: int = 10_000,
                    seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap interval of ``mean(long) / mean(short)``, runs resampled in pairs.

    ``short[i]`` and ``long[i]`` are the same run's regret at the two horizons.  Resampling
    draws from ``numpy.random.default_rng(seed)``, so the interval is reproducible.  Fewer than two
    runs give no spread: ``(nan, nan)``.
    """
    short, long = np.asarray(short, dtype=float), np.asarray(long, dtype=float)
    if short.shape != long.shape or short.ndim != 1:
        raise ValueError(f"short and long must be two 1-D arrays of the same runs, got shapes {short.shape} and {long.shape}")
    if short.size < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, short.size, size=(resamples, short.size))
    denominators = short[picks].mean(axis=1)
    ratios = np.divide(long[picks].mean(axis=1), denominators, out=np.full(resamples, np.inf), where=denominators > 0)
    low, high = np.quantile(ratios, [0.5 * (1.0 - level), 0.5 * (1.0 + level)])
    return float(low), float(high)


def check_pass_share(short: np.ndarray, long: np.ndarray, *, runs: int = CHECK_RUNS, resamples: int = 10_000,
                     seed: int = 0) -> float:
    """How often a check on ``runs`` runs like these would read the growth as logarithmic.

    The share of ``resamples`` samples of ``runs`` runs drawn with replacement from the given ones
    (``short[i]`` and ``long[i]`` together) whose ``mean(long) / mean(short)`` is at most
    :data:`GROWTH_LIMIT`.  On the check's own runs it says how firmly its verdict stands; on more
    runs of the same matrix (seeds beyond the check's), how likely a check of ``runs`` runs is to
    pass: a policy whose runs commit to a wrong arm now and then passes a short check by the draw
    of a few runs.  Resampling draws from ``numpy.random.default_rng(seed)``.
    """
    short, long = np.asarray(short, dtype=float), np.asarray(long, dtype=float)
    if short.shape != long.shape or short.ndim != 1 or short.size == 0:
        raise ValueError(f"short and long must be two non-empty 1-D arrays of the same runs, got shapes {short.shape} "
                         f"and {long.shape}")
    runs = check_integer("runs", runs, minimum=1)
    resamples = check_integer("resamples", resamples, minimum=1)
    picks = np.random.default_rng(seed).integers(0, short.size, size=(resamples, runs))
    shorts, longs = short[picks].mean(axis=1), long[picks].mean(axis=1)
    passing = np.where(shorts > 0, longs <= GROWTH_LIMIT * shorts, longs <= 0)
    return float(passing.mean())


def check_consistency(output_dir: str | Path, published: Sequence[str], *, runs: int = 20, horizon: int = 10_000,
                      long_horizon: int = 100_000, further_horizon: int | None = None,
                      variants: Mapping[str, dict[str, Any]] | None = None,
                      references: Sequence[str] = (), relabel: bool = True, jobs: int = 1, backend: str = "local",
                      address: str | None = None, progress: bool = False) -> list[dict]:
    """The learned policy's regret growth from ``horizon`` to ``long_horizon`` on each ``published`` matrix.

    Parameters
    ----------
    output_dir : str or Path
        The evaluation's folder: the runs are units of the same study (kept in ``units/``, resumable).
    published : sequence of str
        Published matrices (:func:`~dueling_gym.problems.load_problem` names).
    runs : int
        Runs per matrix, seeds ``0 .. runs - 1`` (those of the evaluation's first stage).
    horizon, long_horizon : int
        The two horizons compared, ``1 <= horizon < long_horizon``.
    further_horizon : int, optional
        A third horizon, ``> long_horizon``: the same runs are played that far, and every row
        also reports the growth from ``long_horizon`` to it (the ``further_*`` fields).  An agent
        still exploring at ``horizon`` on a matrix whose pairs lie close to 1/2 may grow more than
        :data:`GROWTH_LIMIT` in the first step and not in the second; linear regret grows in both.
    variants : mapping of str to dict, optional
        Name -> options of the ``learned`` agent; default ``{"as shipped": {}}``.
    references : sequence of str
        Classic agents (registry names) run on the same runs with their papers' defaults.
    relabel : bool
        Relabel each run's arms as the evaluation does
        (:func:`~dueling_gym.experiments.studies.learned_evaluation.published_runs`); ``False`` plays the
        published order.
    jobs, backend, address, progress
        As for :func:`~dueling_gym.experiments.runs.runner.run_units`.

    Returns
    -------
    list of dict
        One row per variant (then reference agent) and matrix: the agent, the variant (:data:`PAPER_DEFAULTS`
        for a reference), mean regret at both horizons, the growth factor with its 95%
        percentile-bootstrap interval, the verdict (``"logarithmic"`` when the factor is at most
        :data:`GROWTH_LIMIT`, else ``"too fast"``), the runs whose own regret grows more than
        :data:`FAST_RUN_GROWTH`-fold (``fast_runs``), the share of resampled checks of
        :data:`CHECK_RUNS` runs that pass (``pass_share``, :func:`check_pass_share`), the lower
        bound ``LB ln T`` at both horizons and the mean regret at ``long_horizon`` as a share of
        its bound (with ``further_horizon``, the same from ``long_horizon`` to it:
        ``further_mean``, ``further_growth``, ``further_growth_low``, ``further_growth_high``,
        ``further_verdict``, ``further_fast_runs``, ``further_pass_share``, ``further_lower_bound``,
        ``further_bound_share``); also written to ``consistency.csv``.  With ``references``,
        ``consistency_paired.csv`` holds each setting of the learned agent against the reference
        with the lowest mean at each of the horizons, paired over the runs (95% Student's t; the
        rows of :func:`~dueling_gym.experiments.studies.learned_evaluation.paired_comparison` with
        a ``variant`` field): the evaluation's comparison, on these runs and these references only.
    """
    runs = check_integer("runs", runs, minimum=1)
    relabel = check_bool("relabel", relabel)
    horizon = check_integer("horizon", horizon, minimum=1)
    long_horizon = check_integer("long_horizon", long_horizon, minimum=horizon + 1)
    if further_horizon is not None:
        further_horizon = check_integer("further_horizon", further_horizon, minimum=long_horizon + 1)
    horizons = (horizon, long_horizon) if further_horizon is None else (horizon, long_horizon, further_horizon)
    variants = {SHIPPED: {}} if variants is None else dict(variants)
    if not variants:
        raise ValueError("variants must name at least one setting of the learned agent")
    for name, options in variants.items():
        if not isinstance(name, str) or not isinstance(options, dict):
            raise TypeError(f"variants must map names to dicts of learned-agent options, got {name!r}: {options!r}")
    if isinstance(references, str) or not all(isinstance(agent, str) for agent in references):
        raise TypeError(f"references must be a sequence of agent names, got {references!r}")
    if "learned" in references or len(set(references)) != len(references):
        raise ValueError(f"references must be distinct classic agents (the learned agent's settings are variants), "
                         f"got {list(references)}")
    unknown = [agent for agent in references if agent not in classic_agents()]
    if unknown:
        raise ValueError(f"references must be classic regret-minimising agents of the registry; unknown: {unknown} "
                         f"(known: {', '.join(classic_agents())})")
    matrices = {name: load_problem(name) for name in published}  # an unknown name is refused before any folder is made
    output = Path(output_dir)
    output.mkdir(parents=True, exist_ok=True)
    # LB ln T: what a strongly consistent algorithm's regret eventually exceeds on each matrix.
    bounds = {name: lower_bound_constant(matrix) for name, matrix in matrices.items()}
    checks = [("learned", variant, options) for variant, options in variants.items()]
    checks += [(agent, PAPER_DEFAULTS, {}) for agent in references]
    # Every agent plays the same runs: each matrix's relabelled copies are built once.
    run_problems = {name: tuple(problem for problem, _ in published_runs(matrix, range(runs), relabel))
                    for name, matrix in matrices.items()}
    rows, per_run = [], {}
    for agent, variant, options in checks:
        units = [EvaluationUnit(agent, name, published_source(name, relabel), 0, run_problems[name],
                                tuple(range(runs)), horizons, dict(options))
                 for name in matrices]
        request = {"stage": "consistency", "published": list(published), "runs": runs, "relabel": relabel, "horizons": list(horizons),
                   "agent": agent, "variant": variant, "options": options}
        records = run_units(units, output, kind=KIND, request=request, jobs=jobs, backend=backend, address=address,
                            progress=progress, desc=f"consistency ({agent}, {variant})")
        for unit, record in zip(units, records):
            regrets = np.asarray(record["regrets"], dtype=float)
            per_run[unit.problem_set, agent, variant] = regrets
            short, long = regrets[:, 0], regrets[:, 1]
            constant = bounds[unit.problem_set]
            row = {"problems": unit.problem_set, "agent": agent, "variant": variant, "horizon": horizon,
                   "long_horizon": long_horizon, "mean": float(short.mean()), "long_mean": float(long.mean()),
                   **_growth(short, long), "runs": runs,
                   "lower_bound": constant * math.log(horizon), "long_lower_bound": constant * math.log(long_horizon),
                   "bound_share": float(long.mean()) / (constant * math.log(long_horizon))}
            if further_horizon is not None:
                further = regrets[:, 2]
                row.update({"further_horizon": further_horizon, "further_mean": float(further.mean()),
                            **{f"further_{key}": value for key, value in _growth(long, further).items()},
                            "further_lower_bound": constant * math.log(further_horizon),
                            "further_bound_share": float(further.mean()) / (constant * math.log(further_horizon))})
            rows.append(row)
    write_csv(output / "consistency.csv", rows)
    (output / "consistency_paired.csv").unlink(missing_ok=True)  # from an earlier check into the same folder
    if references:
        comparisons = []
        for variant in variants:
            compared = {(name, agent): regrets for (name, agent, setting), regrets in per_run.items()
                        if setting in (variant, PAPER_DEFAULTS)}
            comparisons += [{"variant": variant, **comparison, "runs": runs}
                            for comparison in paired_comparison(compared, horizons)]
        write_csv(output / "consistency_paired.csv", comparisons)
    return rows


def _growth(short: np.ndarray, long: np.ndarray) -> dict[str, Any]:
    """The growth factor of the mean regret from one horizon to the next, its interval and verdict."""
    growth = float(long.mean() / short.mean()) if short.mean() > 0 else math.inf
    low, high = growth_interval(short, long)
    return {"growth": growth, "growth_low": low, "growth_high": high,
            "verdict": "logarithmic" if growth <= GROWTH_LIMIT else "too fast",
            "fast_runs": int((long > FAST_RUN_GROWTH * short).sum()), "pass_share": check_pass_share(short, long)}


def consistency_summary(rows: Sequence[dict]) -> str:
    """The rows of :func:`check_consistency` as a Markdown section."""
    if not rows:
        return ""
    short, long = rows[0]["horizon"], rows[0]["long_horizon"]
    further = rows[0].get("further_horizon")
    title = f"regret at T = {long} over regret at T = {short}" + (f", then T = {further} over T = {long}" if further else "")
    runs = rows[0]["runs"]
    header = (f"| problems | agent | variant | T = {short} | T = {long} | growth (95% bootstrap) | verdict | "
              f"fast runs (of {runs}) | checks of {CHECK_RUNS} passing |")
    rule = "|---|---|---|---:|---:|---:|---|---:|---:|"
    if further:
        header += f" T = {further} | growth (95% bootstrap) | verdict |"
        rule += "---:|---:|---|"
    last = further or long
    lines = [f"### Consistency: {title}", "", header + f" share of LB ln T at T = {last} |", rule + "---:|"]
    for row in rows:
        cells = [row["problems"], row["agent"], row["variant"], f"{row['mean']:.1f}", f"{row['long_mean']:.1f}",
                 _growth_cell(row, ""), row["verdict"], str(row["fast_runs"]), f"{row['pass_share']:.2f}"]
        if further:
            cells += [f"{row['further_mean']:.1f}", _growth_cell(row, "further_"), row["further_verdict"]]
        cells.append(f"{row['further_bound_share' if further else 'bound_share']:.2f}")
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    lines += ["", f"Growth at most {GROWTH_LIMIT:g} reads as logarithmic ({short} to {long} duels: log growth "
              f"{math.log(long) / math.log(short):.2f}); runs resampled in pairs for the interval.  A fast run's own "
              f"regret grows more than {FAST_RUN_GROWTH:g}-fold; the share of {CHECK_RUNS}-run checks passing is "
              f"that of 10 000 samples of {CHECK_RUNS} of the runs, drawn with replacement.  LB ln T is the "
              "regret every strongly consistent algorithm eventually exceeds (Komiyama et al., ICML 2016, "
              "Theorem 2): a share far below 1 says the agent has not paid for the checks consistency needs.", ""]
    return "\n".join(lines)


def _growth_cell(row: dict, prefix: str) -> str:
    low, high = row[f"{prefix}growth_low"], row[f"{prefix}growth_high"]
    interval = "n/a" if math.isnan(low) else f"[{low:.2f}, {high:.2f}]"
    return f"{row[f'{prefix}growth']:.2f} {interval}"


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point: the check of the learned agent as shipped, beside classic references."""
    parser = argparse.ArgumentParser(description="Regret growth of the learned agent (and classic references) "
                                                 "from one horizon to a longer one on the published matrices.")
    parser.add_argument("--out", required=True)
    from dueling_gym.experiments.studies.presets import PRESETS

    # By default the matrices of the ``learned-vs-classic`` preset's check, in its order (the order
    # is part of a folder's request, so the same command resumes the same folder).
    matrices = PRESETS["learned-vs-classic"].sweep_arguments(False)["consistency"]["published"]
    parser.add_argument("--published", default=",".join(matrices),
                        help="comma-separated published matrices (default: the seven of the preset's check)")
    parser.add_argument("--references", default="",
                        help="comma-separated classic agents, or 'all' for every classic agent of the registry")
    parser.add_argument("--variant", action="append", default=[], metavar="OPTIONS",
                        help="a setting of the learned agent checked beside the shipped one, as agent options "
                             "(e.g. safeguard_from=10000,safeguard_clock=start); repeatable")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--published-order", action="store_true",
                        help="play the matrices in their published arm order (best first) instead of relabelling "
                             "their arms run by run, as the evaluation does")
    parser.add_argument("--horizon", type=int, default=10_000)
    parser.add_argument("--long-horizon", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--backend", choices=["local", "ray"], default="local", help="execution backend")
    parser.add_argument("--address", help="Ray cluster address (with --backend ray), e.g. auto")
    arguments = parser.parse_args(argv)
    references = (classic_agents() if arguments.references == "all"
                  else [name for name in arguments.references.split(",") if name])
    try:
        variants = {SHIPPED: {}}
        for text in arguments.variant:
            variants[text] = check_agent_options("--variant", parse_agent_options(text))
        rows = check_consistency(arguments.out, arguments.published.split(","), runs=arguments.runs,
                                 horizon=arguments.horizon, long_horizon=arguments.long_horizon, variants=variants,
                                 references=references, relabel=not arguments.published_order,
                                 jobs=arguments.jobs, backend=arguments.backend, address=arguments.address,
                                 progress=True)
    except (ValueError, TypeError) as error:  # bad settings: a usage error, not a traceback
        parser.error(str(error))
    print(consistency_summary(rows))
    if references:
        print(f"Each setting against the reference with the lowest mean, paired over the runs: "
              f"{Path(arguments.out) / 'consistency_paired.csv'}")


if __name__ == "__main__":
    main()
