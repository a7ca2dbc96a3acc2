"""Compare the ``learned`` agent with the classic dueling algorithms on held-out problems.

:func:`evaluate` runs every agent on the same held-out problems (fresh draws of each
generator family, from a stream independent of training, and optionally the published
matrices) at several horizons and writes ``regret.csv``, ``summary.md`` (mean cumulative
Copeland regret, Komiyama scale, with 95% confidence half-widths, and the learned policy's paired
difference to the best classic agent of each problem set) and ``regret.png`` (regret against the
horizon, one panel per problem set; needs matplotlib).

Every agent plays the same runs (problem and run seed), so the learned policy is compared with the
best classic agent run by run: the mean of the differences and its 95% half-width say whether it
is below, above, or tied with that agent (the interval contains zero), which two separate means
with their own intervals cannot tell.

A few hundred problems cannot tell a difference of a few percent: on ``utility_based`` one run's
regret varies by about 100 Copeland units from problem to problem, so the 95% half-width of a
paired mean over 300 problems is about 11.  ``follow_up_problems`` adds a second stage that
settles what the first left open: at ``follow_up_horizon``, every classic agent that the learned
policy is not yet below (paired, with 95% confidence) on a generated problem set plays again
against it on that many fresh problems of the family (a stream of its own, independent of the
first stage's problems); the result goes to ``follow_up.csv`` and to ``summary.md``.  Agents the
first stage already put above the policy are re-run too, so the second stage reports every
comparison that matters with the same rule.

Both stages run through the one runner of every study (:mod:`dueling_gym.experiments.runs.runner`):
one agent on a share of a problem set's runs is a unit, written to its own verified file in
``units/``, so an interrupted evaluation resumes where it stopped, on this process, a local
pool of workers or Ray.

    python -m dueling_gym.experiments.studies.learned_evaluation --out results/learned-eval --n-arms 5
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import inspect
import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from dueling_gym.agents import AGENT_REGISTRY, list_agents, make_agent
from dueling_gym.agents.learned import LearnedAgent, policy_sizes, shipped_policies
from dueling_gym.experiments.runs.runner import check_backend, run_units
from dueling_gym.experiments.simulate import simulate
from dueling_gym.experiments.sweeps.units import relabelled_arms
from dueling_gym.experiments.runs.work_units import WorkUnit, identity_digest, package_version, safe_name
from dueling_gym.pair_network import load_policy_weights
from dueling_gym.problems import load_problem
from dueling_gym.problems.generators import ProblemSampler
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.stats import INTERVAL_METHOD, NO_SPREAD, NO_SPREAD_NOTE, bootstrap_mean_interval, mean_half_width
from dueling_gym.validation import check_bool, check_integer

__all__ = ["classic_agents", "evaluate", "paired_comparison", "robustness", "robustness_summary", "EvaluationUnit", "KIND", "PUBLISHED_SMALL", "PUBLISHED", "published_source", "published_runs", "write_csv"]

#: What ``manifest.json`` says a folder of this study holds.
KIND = "learned-vs-classic evaluation"

#: Published matrices with 4 to 6 arms.
PUBLISHED_SMALL = ("cyclic4", "gap", "multisol", "mslr5-condorcet", "mslr5-noncondorcet", "arxiv")
#: Every published matrix: those with 4 to 6 arms and Sushi (16 arms).
PUBLISHED = (*PUBLISHED_SMALL, "sushi")
_HELD_OUT_SALT = 0x4E1D
#: The follow-up stage's problems come from a stream of their own.
_FOLLOW_UP_SALT = 0xF011
#: Runs per unit (several units per agent keep every worker busy when a single comparison is left).
_RUNS_PER_UNIT = 2000
#: How a published matrix's source says that its runs relabel the arms.
_RELABELLED = "relabelled per run"


def classic_agents() -> list[str]:
    """Every registered regret-minimising dueling agent except ``learned`` (pure-exploration agents excluded)."""
    return [name for name in list_agents("dueling")
            if name != "learned" and not AGENT_REGISTRY[name].pure_exploration]


def _needs_horizon(name: str) -> bool:
    return "horizon" in inspect.signature(AGENT_REGISTRY[name].__init__).parameters


def _generated_sets(families: Sequence[str], arm_counts: Sequence[int]) -> dict[str, tuple[int, str, int]]:
    """Name of every generated problem set -> (family index, family, K)."""
    return {f"{family} K={n_arms}": (index, family, n_arms) for n_arms in arm_counts
            for index, family in enumerate(families)}


def _problem_sets(generated: dict[str, tuple[int, str, int]], n_problems: dict[int, int], seed: int,
                  published: Sequence[str], relabel: bool = True) -> dict[str, dict[str, Any]]:
    """Where every problem set comes from: a generator stream or a published matrix (see :func:`_draw_source`)."""
    sets: dict[str, dict[str, Any]] = {}
    for set_name, (index, family, n_arms) in generated.items():
        # K = 5 keeps the stream of the single-K evaluation; other K get their own.
        key = [seed, _HELD_OUT_SALT, index] if n_arms == 5 else [seed, _HELD_OUT_SALT, index, n_arms]
        sets[set_name] = {"family": family, "n_arms": n_arms, "stream": key, "n_problems": n_problems[n_arms]}
    for name in published:
        sets[name] = published_source(name, relabel)
    return sets


def published_source(name: str, relabel: bool = True) -> dict[str, Any]:
    """The source of a published matrix's problem set: the matrix, its arms relabelled run by run
    (:func:`published_runs`), or with ``relabel=False`` in the published order."""
    return {"published": name, "arm_order": _RELABELLED} if relabel else {"published": name}


def published_runs(matrix: PreferenceMatrix, run_seeds: Sequence[int], relabel: bool = True
                   ) -> list[tuple[PreferenceMatrix, int]]:
    """The runs of a published matrix: run seed ``s`` plays ``matrix`` with its arms relabelled by
    ``dueling_gym.experiments.sweeps.units.relabelled_arms(matrix, s)`` (arm ``k`` of the run is
    arm ``permutation[k]`` of the matrix), as every sweep relabels a run's arms.

    The published matrices list their arms best first, so in their own order an agent that breaks
    ties towards the lowest index plays the winner before it has learned anything: on Gap at
    T = 100, SCB's regret is 15.8 in the published order and 23.8 with the arms relabelled (40 runs,
    seeds 100 to 139; uniformly random duels cost 25).  Relabelling leaves every regret notion
    unchanged and takes that head start away; the generated families need none (every arm index
    is as likely to be a winner).  ``relabel=False`` plays the published order
    (how this study ran before it relabelled them).
    """
    if not relabel:
        return [(matrix, int(seed)) for seed in run_seeds]
    return [(relabelled_arms(matrix, int(seed))[0], int(seed)) for seed in run_seeds]


def _draw_source(source: dict[str, Any]) -> list[PreferenceMatrix]:
    """The problems of a source: ``n_problems`` draws of a family's stream, or one published matrix."""
    if "published" in source:
        return [load_problem(source["published"])]
    return _draw(source["family"], source["n_arms"], source["n_problems"], list(source["stream"]))


def _draw(family: str, n_arms: int, n_problems: int, key: list[int]) -> list:
    rng = np.random.default_rng(np.random.SeedSequence(key))
    sampler = ProblemSampler(family, n_arms=n_arms)
    return [sampler(rng) for _ in range(n_problems)]


def _agent_regrets(task: tuple[str, list, list[int], dict[str, Any]]) -> np.ndarray:
    """Cumulative Copeland regret (Komiyama units) of one agent on ``runs`` (problem, run seed), at
    every horizon: one row per run.  Module-level so that worker processes can run it."""
    name, runs, horizons, options = task
    regrets = np.zeros((len(runs), len(horizons)))
    for run, (problem, run_seed) in enumerate(runs):
        if _needs_horizon(name):
            for column, horizon in enumerate(horizons):
                agent = make_agent(name, problem.n_arms, seed=0, horizon=horizon, **options)
                regrets[run, column] = simulate(agent, problem, horizon, seed=run_seed).final_regret("copeland_komiyama")
        else:
            agent = make_agent(name, problem.n_arms, seed=0, **options)
            result = simulate(agent, problem, horizons[-1], seed=run_seed, checkpoints=horizons)
            curve = result.cumulative_regret["copeland_komiyama"]
            regrets[run] = [curve[list(result.checkpoints).index(h)] for h in horizons]
    return regrets


@dataclass(frozen=True, eq=False)
class EvaluationUnit(WorkUnit):
    """One agent on a share of a problem set's runs (run ``i`` plays ``problems[i]`` with seed ``run_seeds[i]``).

    ``source`` says where the set's problems come from (a generator stream, or a published
    matrix played by every run) and ``part`` which share of the set's runs this is.  The
    identity holds the agent and its options (for ``learned``, the SHA-256 of the policy file
    rather than its path), the problem set, its source, a SHA-256 of the runs' matrices, the
    run seeds and the horizons; the result, the cumulative Copeland regret (Komiyama scale) of
    every run at every horizon.
    """

    agent: str
    problem_set: str
    source: dict[str, Any]
    part: int
    problems: tuple[PreferenceMatrix, ...]
    run_seeds: tuple[int, ...]
    horizons: tuple[int, ...]
    options: dict[str, Any]

    @cached_property
    def identity(self) -> dict[str, Any]:
        matrices = hashlib.sha256()
        for problem in self.problems:
            matrices.update(np.ascontiguousarray(problem.matrix, dtype="<f8").tobytes())
        options = {key: value for key, value in self.options.items() if key != "policy"}
        agent: dict[str, Any] = {"name": self.agent, "options": options}
        if self.agent in AGENT_REGISTRY:  # files the agent reads (a policy) enter by content, not path
            agent.update(AGENT_REGISTRY[self.agent].content_digests(self.problems[0].n_arms, self.options))
        return {"study": KIND, "agent": agent, "problem_set": self.problem_set, "source": dict(self.source),
                "part": self.part, "problems_sha256": matrices.hexdigest(), "run_seeds": list(self.run_seeds),
                "horizons": list(self.horizons), "dueling_gym": package_version()}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> EvaluationUnit:
        """The unit of a record, its problems drawn again from their source (the options, a policy's path
        included, as the record says they ran)."""
        identity = record["identity"]
        agent = identity["agent"]
        options = dict(record["options"])
        if "published" in identity["source"]:  # one matrix, relabelled run by run
            runs = published_runs(_draw_source(identity["source"])[0], identity["run_seeds"],
                                  identity["source"].get("arm_order") == _RELABELLED)
        else:
            start = identity["part"] * _RUNS_PER_UNIT
            runs = _source_runs(_draw_source(identity["source"]))[start:start + _RUNS_PER_UNIT]
        problems = tuple(problem for problem, _ in runs)
        return cls(agent["name"], identity["problem_set"], dict(identity["source"]), identity["part"], problems,
                   tuple(identity["run_seeds"]), tuple(identity["horizons"]), options)

    @property
    def key(self) -> str:
        return f"{safe_name(self.problem_set)}__{safe_name(self.agent)}__part{self.part}__{identity_digest(self.identity)[:16]}"

    def run(self) -> dict[str, Any]:
        runs = list(zip(self.problems, self.run_seeds))
        return {"agent": self.agent, "problem_set": self.problem_set, "options": dict(self.options),
                "regrets": _agent_regrets((self.agent, runs, list(self.horizons), self.options)).tolist()}

    def check_result(self, record: dict[str, Any]) -> str | None:
        regrets = record.get("regrets")
        if not isinstance(regrets, list) or len(regrets) != len(self.run_seeds):
            return "regrets are incomplete"
        for row in regrets:
            if (not isinstance(row, list) or len(row) != len(self.horizons)
                    or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in row)):
                return "regrets are incomplete"
        return None


def _source_runs(problems: list[PreferenceMatrix], runs_per_published: int | None = None, relabel: bool = True
                 ) -> list[tuple[PreferenceMatrix, int]]:
    """The runs of a problem set: each generated problem once (seed = its index), a published one
    repeatedly, relabelled run by run (:func:`published_runs`)."""
    if len(problems) == 1 and runs_per_published is not None:
        return published_runs(problems[0], range(runs_per_published), relabel)
    return [(problem, index) for index, problem in enumerate(problems)]


def _units(agent: str, problem_set: str, source: dict[str, Any], runs: list[tuple[PreferenceMatrix, int]],
           horizons: Sequence[int], options: dict[str, Any]) -> list[EvaluationUnit]:
    """``agent`` on ``runs``, in units of at most :data:`_RUNS_PER_UNIT` runs."""
    return [EvaluationUnit(agent, problem_set, dict(source), start // _RUNS_PER_UNIT,
                           tuple(problem for problem, _ in runs[start:start + _RUNS_PER_UNIT]),
                           tuple(int(seed) for _, seed in runs[start:start + _RUNS_PER_UNIT]), tuple(horizons),
                           dict(options))
            for start in range(0, len(runs), _RUNS_PER_UNIT)]


def _regrets_by_agent(units: list[EvaluationUnit], output: Path, request: dict[str, Any], jobs: int, backend: str,
                      address: str | None, progress: bool, desc: str) -> dict[tuple[str, str], np.ndarray]:
    """Run ``units`` (resuming from ``output/units``); each (problem set, agent)'s regrets, runs in order."""
    records = run_units(units, output, kind=KIND, request=request, jobs=jobs, backend=backend, address=address,
                        progress=progress, desc=desc)
    collected: dict[tuple[str, str], list[list[list[float]]]] = {}
    for unit, record in zip(units, records):
        collected.setdefault((unit.problem_set, unit.agent), []).append(record["regrets"])
    return {key: np.array([row for part in parts for row in part], dtype=float) for key, parts in collected.items()}


def evaluate(
    output_dir: str | Path,
    *,
    agents: Sequence[str] | None = None,
    families: Sequence[str] = ("no_condorcet_winner", "unique_copeland_winner", "utility_based"),
    n_arms: int | Sequence[int] = 5,
    horizons: Sequence[int] = (100, 1000, 10_000),
    n_problems: int | Mapping[int, int] = 50,
    published: Sequence[str] = (),
    runs_per_published: int = 20,
    relabel_published: bool = True,
    seed: int = 0,
    policy: str | Path | None = None,
    follow_up_problems: int | Mapping[int, int] = 0,
    follow_up_horizon: int | None = None,
    jobs: int = 1,
    progress: bool = False,
    backend: str = "local",
    address: str | None = None,
    plot: bool = True,
) -> list[dict]:
    """Run ``agents`` (default: ``learned`` and :func:`~dueling_gym.experiments.studies.learned_evaluation.classic_agents`) and write the comparison.

    Each generated problem is run once (seed = its index); each published matrix
    ``runs_per_published`` times, its arms relabelled run by run (:func:`published_runs`; in the
    published order with ``relabel_published=False``); ``n_arms`` may list several K (one problem set per family and K;
    ``learned`` plays the K it has a policy for); ``n_problems`` is the number of problems per family,
    the same for every K or a mapping K -> number (the agents' cost grows with K).  ``policy`` runs ``learned`` with an exported policy file
    instead of the shipped one; ``progress`` shows a progress bar over agents and problem sets.
    ``follow_up_problems`` > 0 adds the second stage (module docstring) at ``follow_up_horizon``
    (a mapping K -> number sets it per K; 0 skips that K)
    (one of ``horizons``).  ``jobs`` worker processes (or Ray, ``backend="ray"`` at ``address``)
    share the runs; the results do not depend on them.  Finished runs are kept in
    ``output_dir/units`` (see :func:`~dueling_gym.experiments.runs.runner.run_units`): an interrupted
    evaluation, run again with the same arguments, runs only what is missing.  ``plot=False``
    skips ``regret.png`` (drawn only when matplotlib is installed).
    Returns the rows of ``regret.csv`` (problem set, agent, horizon, mean, 95% half-width, runs).
    """
    arm_counts, horizons, follow_ups_per_size = _checked_settings(n_arms, horizons, jobs, backend, follow_up_problems,
                                                                  follow_up_horizon)
    problems_per_size = _problems_per_size(n_problems, arm_counts)
    agents = list(agents) if agents is not None else ["learned", *classic_agents()]
    policy_arms = _policy_arms(policy)
    relabel_published = check_bool("relabel_published", relabel_published)
    output = Path(output_dir)
    output.mkdir(parents=True, exist_ok=True)
    generated = _generated_sets(families, arm_counts)
    problem_sets = _problem_sets(generated, problems_per_size, seed, published, relabel_published)
    learned_options = {"policy": str(policy)} if policy is not None else {}
    units = _first_stage_units(problem_sets, agents, policy_arms, runs_per_published, horizons, learned_options)
    request = {"agents": agents, "families": list(families), "n_arms": arm_counts, "horizons": horizons,
               "n_problems": n_problems if isinstance(n_problems, (int, np.integer)) else
               {str(k): count for k, count in problems_per_size.items()}, "published": list(published), "runs_per_published": runs_per_published,
               "relabel_published": relabel_published, "seed": seed, "policy": None if policy is None else str(policy)}
    run = dict(jobs=jobs, backend=backend, address=address, progress=progress)
    per_run = _regrets_by_agent(units, output, request | {"stage": "first"}, desc="evaluation", **run)
    rows = _regret_rows(per_run, horizons)
    write_csv(output / "regret.csv", rows)
    for stale in ("paired.csv", "follow_up.csv", "robustness.csv"):  # from an earlier run into the same folder
        (output / stale).unlink(missing_ok=True)
    comparisons = paired_comparison(per_run, horizons)
    write_csv(output / "paired.csv", comparisons)
    robust = robustness(per_run, horizons)
    write_csv(output / "robustness.csv", robust)
    follow_ups = []
    if any(follow_ups_per_size.values()):
        follow_ups = _follow_up(per_run, horizons.index(follow_up_horizon), horizons, follow_ups_per_size, seed,
                                generated, learned_options,
                                lambda units: _regrets_by_agent(units, output, request | {"stage": "follow-up"},
                                                                desc="follow-up", **run))
        write_csv(output / "follow_up.csv", follow_ups)
    (output / "summary.md").write_text(_paired_summary(comparisons) + _follow_up_summary(follow_ups, follow_ups_per_size)
                                       + robustness_summary(robust) + _summary(rows, horizons, per_run) + f"\nIntervals: {INTERVAL_METHOD}.\n")
    if plot:
        _plot(rows, horizons, output / "regret.png", per_run)
    return rows


def _checked_settings(n_arms: int | Sequence[int], horizons: Sequence[int], jobs: int, backend: str,
                      follow_up_problems: int | Mapping[int, int], follow_up_horizon: int | None
                      ) -> tuple[list[int], list[int], dict[int, int]]:
    """The numbers of arms, the sorted horizons and the follow-up problems per K, checked with the rest of the
    settings before anything runs."""
    arm_counts = [n_arms] if isinstance(n_arms, (int, np.integer)) else list(n_arms)
    arm_counts = [check_integer("n_arms", count, minimum=2) for count in arm_counts]
    horizons = sorted(check_integer("horizon", h, minimum=1) for h in horizons)
    check_backend(jobs, backend)
    follow_ups = _problems_per_size(follow_up_problems, arm_counts, "follow_up_problems", minimum=0)
    if any(follow_ups.values()) and follow_up_horizon not in horizons:
        raise ValueError(f"follow_up_horizon must be one of the horizons {horizons}, got {follow_up_horizon!r}")
    return arm_counts, horizons, follow_ups


def _problems_per_size(n_problems: int | Mapping[int, int], arm_counts: list[int], label: str = "n_problems",
                       minimum: int = 1) -> dict[int, int]:
    """Problems per family for every K: one number for all, or a mapping that names exactly the Ks evaluated."""
    if isinstance(n_problems, Mapping):
        if sorted(n_problems) != sorted(arm_counts):
            raise ValueError(f"{label} must give a number for each of n_arms {arm_counts}, got one for "
                             f"{sorted(n_problems)}")
        return {check_integer("n_arms", k, minimum=2): check_integer(f"{label}[{k}]", count, minimum=minimum)
                for k, count in n_problems.items()}
    count = check_integer(label, n_problems, minimum=minimum)
    return {k: count for k in arm_counts}


def _policy_arms(policy: str | Path | None) -> list[int] | None:
    """The numbers of arms ``learned`` has a policy for (None: every number): the shipped general
    policy plays every K, as does a policy file trained on a mixture of sizes; a file trained on
    one size plays that size."""
    if policy is None:
        return None if LearnedAgent.plays_arms(2) else shipped_policies()
    # The whole file is checked (a damaged one is refused naming it) before anything runs.
    return policy_sizes(load_policy_weights(policy)[1])


def _first_stage_units(problem_sets: dict[str, dict[str, Any]], agents: list[str], policy_arms: list[int] | None,
                       runs_per_published: int, horizons: list[int],
                       learned_options: dict[str, Any]) -> list[EvaluationUnit]:
    """Every agent on every problem set (``learned`` only where it has a policy for the number of arms)."""
    units = []
    for set_name, source in problem_sets.items():
        problems = _draw_source(source)
        runs = _source_runs(problems, runs_per_published if "published" in source else None,
                            source.get("arm_order") == _RELABELLED)
        for name in agents:
            if name == "learned" and policy_arms is not None and problems[0].n_arms not in policy_arms:
                continue  # no policy trained for this number of arms
            units += _units(name, set_name, source, runs, horizons, learned_options if name == "learned" else {})
    return units


def _regret_rows(per_run: dict[tuple[str, str], np.ndarray], horizons: list[int]) -> list[dict]:
    """The rows of ``regret.csv``: each (problem set, agent, horizon)'s mean regret, its half-width and runs."""
    rows = []
    for key, regrets in per_run.items():
        for column, horizon in enumerate(horizons):
            values = regrets[:, column]
            rows.append({"problems": key[0], "agent": key[1], "horizon": horizon, "mean": float(values.mean()),
                         "ci95": _half_width(values), "runs": int(values.size)})
    return rows


def write_csv(path: Path, rows: Sequence[dict]) -> None:
    """``rows`` as a CSV file with a header (nothing written when there are none)."""
    if rows:
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


def _follow_up(per_run: dict[tuple[str, str], np.ndarray], column: int, horizons: list[int], n_problems: dict[int, int],
               seed: int, generated: dict[str, tuple[int, str, int]], learned_options: dict[str, Any],
               run: Any) -> list[dict]:
    """The second stage: every comparison the first left short of *below*, on ``n_problems[K]`` fresh problems.

    ``run(units)`` runs :class:`EvaluationUnit` s and returns each (problem set, agent)'s regrets.
    """
    horizon = horizons[column]
    plan = []
    for set_name, (index, family, n_arms) in generated.items():
        if (set_name, "learned") not in per_run or not n_problems[n_arms]:
            continue  # no policy for this K, or no second stage asked for it
        mine = per_run[set_name, "learned"][:, column]
        undecided = [agent for (name, agent), values in per_run.items()
                     if name == set_name and agent != "learned" and _paired(mine, values[:, column])[2] != "below"]
        if undecided:
            plan.append((set_name, index, family, n_arms, undecided))
    units = []
    for set_name, index, family, n_arms, undecided in plan:
        source = {"family": family, "n_arms": n_arms, "stream": [seed, _FOLLOW_UP_SALT, index, n_arms],
                  "n_problems": n_problems[n_arms]}
        runs = _source_runs(_draw_source(source))
        for agent in ["learned", *undecided]:
            units += _units(agent, set_name, source, runs, [horizon], learned_options if agent == "learned" else {})
    collected = run(units) if units else {}
    follow_ups = []
    for set_name, _, _, _, undecided in plan:
        mine = collected[set_name, "learned"][:, 0]
        for agent in undecided:
            theirs = collected[set_name, agent][:, 0]
            mean, half_width, verdict = _paired(mine, theirs)
            follow_ups.append({"problems": set_name, "horizon": horizon, "classic_agent": agent,
                               "learned_mean": float(mine.mean()), "classic_mean": float(theirs.mean()),
                               "difference": mean, "ci95": half_width, "verdict": verdict, "runs": int(mine.size)})
    return follow_ups


def _follow_up_summary(follow_ups: list[dict], n_problems: dict[int, int]) -> str:
    if not follow_ups:
        return ""
    counts = sorted(set(row["runs"] for row in follow_ups))
    lines = [f"### Follow-up: the comparisons above short of *below*, on {' or '.join(map(str, counts))} fresh "
             "problems", "",
             "| problems | horizon | classic agent | learned | classic | difference | verdict |",
             "|---|---:|---|---:|---:|---:|---|"]
    for row in follow_ups:
        lines.append(f"| {row['problems']} | {row['horizon']} | {row['classic_agent']} | {row['learned_mean']:.1f} | "
                     f"{row['classic_mean']:.1f} | {_interval_text(row['difference'], row['ci95'], '+')} | "
                     f"{row['verdict']} |")
    return "\n".join(lines + ["", *_notes(lines)]) + "\n"


def _half_width(values: np.ndarray) -> float:
    """95% half-width of the mean of ``values`` (Student's t; NaN for a single value: no spread can be estimated)."""
    return float(mean_half_width(values)) if values.size >= 2 else math.nan


def _interval_text(mean: float, half_width: float, sign: str = "") -> str:
    """``mean ± half-width`` in a table; ``± n/a`` where one run gives no interval."""
    return f"{mean:{sign}.1f} ± " + (NO_SPREAD if math.isnan(half_width) else f"{half_width:.1f}")


def _notes(lines: list[str]) -> list[str]:
    """The legend line a table needs when it prints n/a."""
    return [NO_SPREAD_NOTE + ".", ""] if any(f"± {NO_SPREAD}" in line for line in lines) else []


def _paired(mine: np.ndarray, theirs: np.ndarray) -> tuple[float, float, str]:
    """Mean of ``mine − theirs`` over the same runs, its 95% half-width and the verdict."""
    differences = mine - theirs
    half_width = _half_width(differences)
    mean = float(differences.mean())
    if differences.size < 2:  # one run cannot tell the two apart (and a follow-up replays it)
        return mean, half_width, "tied"
    verdict = "below" if mean + half_width < 0 else "above" if mean - half_width > 0 else "tied"
    return mean, half_width, verdict


def paired_comparison(per_run: dict[tuple[str, str], np.ndarray], horizons: Sequence[int],
                      subject: str = "learned") -> list[dict]:
    """``subject`` against the best other agent of each problem set, run by run.

    ``per_run[(problem_set, agent)]`` holds each run's regret (rows: runs, the same runs for every
    agent; columns: ``horizons``).  For every problem set where ``subject`` played and every
    horizon: the other agent with the lowest mean, the mean of the differences ``subject − best``
    with its 95% half-width (Student's t), and the verdict: ``"below"`` or ``"above"``
    when the interval excludes zero, ``"tied"`` when it contains it.
    """
    comparisons = []
    for set_name in dict.fromkeys(key[0] for key in per_run):
        if (set_name, subject) not in per_run:
            continue
        mine = per_run[set_name, subject]
        others = {agent: values for (name, agent), values in per_run.items() if name == set_name and agent != subject}
        if not others:
            continue  # nothing to compare with
        for column, horizon in enumerate(horizons):
            best = min(others, key=lambda agent: others[agent][:, column].mean())
            mean, half_width, verdict = _paired(mine[:, column], others[best][:, column])
            comparisons.append({"problems": set_name, "horizon": horizon, "best_classic": best,
                                "difference": mean, "ci95": half_width, "verdict": verdict})
    return comparisons


def robustness(per_run: dict[tuple[str, str], np.ndarray], horizons: Sequence[int]) -> list[dict]:
    """Every agent held to the learned policy's standard: at each horizon, on how many problem
    sets its regret is below, tied with or above the best *other classic* agent's (paired, 95%
    Student's t, over the first stage's runs: :func:`paired_comparison` with the agent as its
    subject and ``learned`` left out of its opponents).

    Where the best other agent differs from set to set, an agent tied with the best everywhere is
    what the comparison asks of the learned policy; this shows how far each classic agent is from
    it, by the same rule.  Returns one row per agent and horizon (``agent``, ``horizon``,
    ``problem_sets``, ``below``, ``tied``, ``above``).
    """
    classic = {key: values for key, values in per_run.items() if key[1] != "learned"}
    rows = []
    for agent in dict.fromkeys(key[1] for key in per_run):
        comparisons = paired_comparison(per_run if agent == "learned" else classic, horizons, subject=agent)
        if not comparisons:
            continue  # the only classic agent: nothing to compare it with
        for horizon in horizons:
            verdicts = [row["verdict"] for row in comparisons if row["horizon"] == horizon]
            rows.append({"agent": agent, "horizon": horizon, "problem_sets": len(verdicts),
                         **{verdict: verdicts.count(verdict) for verdict in ("below", "tied", "above")}})
    return rows


def robustness_summary(rows: Sequence[dict]) -> str:
    """The rows of :func:`robustness` as a Markdown section: one line per agent, fewest losses first."""
    if not rows:
        return ""
    horizons = list(dict.fromkeys(row["horizon"] for row in rows))
    above: dict[str, list[int]] = {}
    sets: dict[str, int] = {}
    for row in rows:
        above.setdefault(row["agent"], []).append(row["above"])
        sets[row["agent"]] = sets.get(row["agent"], 0) + row["problem_sets"]
    lines = ["### Every agent against the best other classic agent (paired, first stage)", "",
             "| agent | " + " | ".join(f"above at T = {h}" for h in horizons) + " | above, all rows |",
             "|---|" + "---:|" * (len(horizons) + 1)]
    for agent in sorted(above, key=lambda name: (sum(above[name]), name)):
        lines.append(f"| {agent} | " + " | ".join(map(str, above[agent])) + f" | {sum(above[agent])} of {sets[agent]} |")
    return "\n".join(lines + ["", "Above: the agent's mean regret is significantly above (95% Student's t, paired over "
                              "the same runs) that of the best classic agent other than itself on a problem set.", ""]) + "\n"


def _paired_summary(comparisons: list[dict]) -> str:
    if not comparisons:
        return ""
    lines = ["### learned − best classic agent (paired over the same runs)", "",
             "| problems | horizon | best classic agent | difference | verdict |", "|---|---:|---|---:|---|"]
    for row in comparisons:
        lines.append(f"| {row['problems']} | {row['horizon']} | {row['best_classic']} | "
                     f"{_interval_text(row['difference'], row['ci95'], '+')} | {row['verdict']} |")
    return "\n".join(lines + ["", *_notes(lines)]) + "\n"


def _summary(rows: list[dict], horizons: list[int], per_run: dict[tuple[str, str], np.ndarray] | None = None) -> str:
    """Mean regret per problem set, agent and horizon with its 95% interval.

    Regret is non-negative: where the Student's t interval would reach below zero (a skewed
    sample) the cell shows the percentile bootstrap of ``per_run`` instead, and says so.
    """
    from dueling_gym.experiments.sweeps.report import interval_notes, regret_interval_cell

    lines: list[str] = []
    shown: list[str] = []
    for set_name in dict.fromkeys(row["problems"] for row in rows):
        subset = [row for row in rows if row["problems"] == set_name]
        agents = list(dict.fromkeys(row["agent"] for row in subset))
        final = {row["agent"]: row["mean"] for row in subset if row["horizon"] == horizons[-1]}
        lines += [f"### {set_name}", "", "| agent | " + " | ".join(f"T = {h}" for h in horizons) + " |",
                  "|---|" + "---:|" * len(horizons)]
        for name in sorted(agents, key=lambda a: final[a]):
            cells = []
            for column, h in enumerate(horizons):
                for row in subset:
                    if row["agent"] == name and row["horizon"] == h:
                        crosses = row["runs"] >= 2 and row["mean"] - row["ci95"] < 0.0
                        bootstrap = (bootstrap_mean_interval(per_run[set_name, name][:, column])
                                     if crosses and per_run is not None else None)
                        cells.append(regret_interval_cell(row["mean"], row["ci95"], row["runs"], bootstrap,
                                                          show_bootstrap=True))
            shown += cells
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    notes = interval_notes(shown)
    return "\n".join(lines + ([*notes, ""] if notes else []))


def _plot(rows: list[dict], horizons: list[int], path: Path, per_run: dict[tuple[str, str], np.ndarray]) -> None:
    """Regret against the horizon, one panel per problem set: its six best agents and ``learned``.

    Error bars are 95% percentile-bootstrap intervals of the mean over ``per_run`` (regret is
    non-negative and skewed: on a published matrix with 20 runs a Student's t interval reaches
    below zero); the tables keep the t interval.  A caption under the panels says so.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # the plot extra is optional; the table is written regardless
        return
    from dueling_gym.experiments.plot_style import agent_styles, band_caption, percentile_band, regret_label

    sets = list(dict.fromkeys(row["problems"] for row in rows))
    columns = min(3, len(sets))
    lines = -(-len(sets) // columns)
    shown_in: dict[str, list[str]] = {}
    for set_name in sets:
        final = {row["agent"]: row["mean"] for row in rows if row["problems"] == set_name and row["horizon"] == horizons[-1]}
        shown = sorted(final, key=final.get)[:6]
        if "learned" in final and "learned" not in shown:
            shown.append("learned")
        shown_in[set_name] = shown
    # One style per agent for the whole figure, from the sorted set of every agent a panel shows.
    styles = agent_styles(name for shown in shown_in.values() for name in shown)
    caption_height = 0.45
    figure, axes = plt.subplots(lines, columns, figsize=(4.8 * columns, 3.9 * lines + caption_height), squeeze=False)
    for axis in axes.flat[len(sets):]:
        axis.set_visible(False)
    run_counts = []
    for axis, set_name in zip(axes.flat, sets):
        for name in shown_in[set_name]:
            regrets = per_run[set_name, name]
            means = regrets.mean(axis=0)
            low, high = percentile_band(regrets)
            run_counts.append(regrets.shape[0])
            style = styles[name]
            # A sample whose runs agree (e.g. every regret 0) gives a bootstrap interval equal to the mean up
            # to rounding, which can put the mean a few ulps outside it: those bars have length 0.
            spread = np.maximum(np.vstack([means - low, high - means]), 0.0)
            axis.errorbar(horizons, means, yerr=spread, label=name, color=style["color"],
                          linestyle=style["linestyle"], marker=style["marker"] or ".", markersize=5,
                          linewidth=2.5 if name == "learned" else 1.2, capsize=2)
        axis.set_xscale("log")
        axis.set_title(set_name)
        axis.set_xlabel("horizon T (duels)")
        axis.set_ylabel(regret_label("copeland_komiyama"))
        axis.legend(fontsize=7)
    figure.text(0.5, 0.01, band_caption(run_counts, mark="error bars") + "; each panel: its six best agents at the "
                "longest horizon, and learned", ha="center", va="bottom", fontsize=8, color="#333333")
    figure.tight_layout(rect=(0, caption_height / figure.get_figheight(), 1, 1))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description="Compare the learned agent with classic dueling algorithms.")
    parser.add_argument("--out", required=True)
    parser.add_argument("--n-arms", default="5", help="number(s) of arms, comma-separated")
    parser.add_argument("--horizons", default="100,1000,10000")
    parser.add_argument("--problems", type=int, default=50, help="held-out problems per family")
    parser.add_argument("--agents", default=None, help="comma-separated agents (default: learned and every classic agent)")
    parser.add_argument("--published", nargs="?", const="small", choices=["small", "all"], default=None,
                        help="also the published matrices: those with 4-6 arms (small, the default) or all seven")
    parser.add_argument("--published-order", action="store_true",
                        help="play the published matrices in their published arm order (best first) instead of "
                        "relabelling their arms run by run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--policy", default=None, help="exported policy file for `learned`, played from the first duel "
                        "(default: the shipped policies with their opening)")
    parser.add_argument("--follow-up-problems", type=int, default=0,
                        help="fresh problems per family for the comparisons the first stage left short of 'below'")
    parser.add_argument("--follow-up-horizon", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--backend", choices=["local", "ray"], default="local", help="execution backend")
    parser.add_argument("--address", help="Ray cluster address (with --backend ray), e.g. auto")
    arguments = parser.parse_args(argv)
    evaluate(arguments.out, agents=arguments.agents.split(",") if arguments.agents else None,
             n_arms=[int(k) for k in arguments.n_arms.split(",")], horizons=[int(h) for h in arguments.horizons.split(",")], n_problems=arguments.problems,
             published={"small": PUBLISHED_SMALL, "all": PUBLISHED, None: ()}[arguments.published],
             relabel_published=not arguments.published_order, seed=arguments.seed,
             policy=arguments.policy, follow_up_problems=arguments.follow_up_problems,
             follow_up_horizon=arguments.follow_up_horizon, jobs=arguments.jobs, progress=True,
             backend=arguments.backend, address=arguments.address)
    print((Path(arguments.out) / "summary.md").read_text())


if __name__ == "__main__":
    main()
