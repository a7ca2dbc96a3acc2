"""CPE-DB sample complexity: CLUCB-Borda samples to stop against the Borda hardness ``H^B``.

The study behind ``dueling-gym reproduce chen2020-cpe-db`` and
``benchmarks/combinatorial.py`` (Chen, Du, Huang, Zhao, ICML 2020, Theorem 3): random bipartite
instances with ``l`` positions and ``n = l + 2`` candidates (planted Condorcet matching, edge
density 0.35, minimum preference gap cycling through 0.1 / 0.2 / 0.3; instances whose ``H^B``
exceeds a cap are skipped), on which

* ``clucb_borda_exact`` -- CLUCB-Borda-Exact as printed (statistics discarded every epoch);
* ``clucb_borda_exact_reuse`` -- the same with ``reuse_samples_if_exact=True``;
* ``clucb_borda_pac`` -- CLUCB-Borda-PAC with ``ε`` = half the smallest Borda-score gap,

run to their stopping rule.  Every run is a unit of the one runner
(:mod:`dueling_gym.experiments.runs.runner`): written atomically to its own verified file, so an
interrupted study resumes where it stopped, on this process, a local pool or Ray.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from dueling_gym.experiments.runs.runner import run_units
from dueling_gym.experiments.runs.work_units import WorkUnit, identity_digest, package_version
from dueling_gym.validation import check_integer, check_probability

__all__ = ["AGENTS", "KIND", "SampleComplexityUnit", "instance_family", "study_units", "run_study", "table", "plot"]

#: What ``manifest.json`` says a folder of this study holds.
KIND = "CPE-DB sample-complexity study"

AGENTS = ("clucb_borda_exact", "clucb_borda_exact_reuse", "clucb_borda_pac")
MIN_GAPS = (0.1, 0.2, 0.3)
#: Relative cost of the agents, to start the longest runs first.
_COST = {"clucb_borda_exact": 10.0, "clucb_borda_exact_reuse": 2.0, "clucb_borda_pac": 1.0}


def instance_family(positions: list[int], per_size: int, hardness_cap: float) -> list[dict]:
    """Deterministic list of instance specifications (seed search skips too-hard or tied instances)."""
    from dueling_gym.problems import random_bipartite_problem

    specs = []
    for l in positions:
        seed, found = 0, 0
        while found < per_size and seed < 200:
            min_gap = MIN_GAPS[(found + l) % len(MIN_GAPS)]
            problem = random_bipartite_problem(l, l + 2, np.random.default_rng(10_000 * l + seed),
                                               planted_condorcet=True, min_gap=min_gap, edge_probability=0.35)
            seed += 1
            hardness = problem.borda_hardness()
            if problem.count_max_matchings() < 2 or not math.isfinite(hardness) or hardness > hardness_cap:
                continue
            specs.append({"n_positions": l, "n_candidates": l + 2, "seed": 10_000 * l + seed - 1,
                          "min_gap": min_gap, "hardness": hardness})
            found += 1
    return specs


def build(spec: dict):
    from dueling_gym.problems import random_bipartite_problem

    return random_bipartite_problem(spec["n_positions"], spec["n_candidates"], np.random.default_rng(spec["seed"]),
                                    planted_condorcet=True, min_gap=spec["min_gap"], edge_probability=0.35,
                                    name=f"l{spec['n_positions']}_s{spec['seed']}")


#: Fields of a run's result and their types (what a unit file must hold to be reused).
_RESULT_FIELDS: dict[str, tuple[type, ...]] = {
    "instance": (str,), "n_positions": (int,), "n_candidates": (int,), "n_edges": (int,), "n_pairs": (int,),
    "hardness": (int, float), "agent": (str,), "seed": (int,), "samples": (int,), "correct": (bool,),
    "epochs": (int, type(None)), "wall_time_s": (int, float), "us_per_sample": (int, float),
}


@dataclass(frozen=True, eq=False)
class SampleComplexityUnit(WorkUnit):
    """One run of the study: an instance (a specification of :func:`instance_family`), an agent, a seed.

    Its identity holds the agent, ``delta``, the seed, the instance's specification and a
    SHA-256 of the instance's graph and preferences (so a changed generator is noticed).
    """

    instance: dict[str, Any]
    agent: str
    seed: int
    delta: float

    volatile_fields = ("wall_time_s", "us_per_sample")

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> SampleComplexityUnit:
        identity = record["identity"]
        return cls(dict(identity["instance"]), identity["agent"], identity["seed"], identity["delta"])

    @cached_property
    def identity(self) -> dict[str, Any]:
        problem = build(self.instance)
        digest = hashlib.sha256(np.ascontiguousarray(problem.edges, dtype="<i8").tobytes()
                                + np.ascontiguousarray(problem.preferences, dtype="<f8").tobytes()).hexdigest()
        return {"study": KIND, "agent": self.agent, "delta": self.delta, "seed": self.seed,
                "instance": dict(self.instance), "problem_sha256": digest, "dueling_gym": package_version()}

    @property
    def key(self) -> str:
        return (f"l{self.instance['n_positions']}_s{self.instance['seed']}__{self.agent}__seed{self.seed}"
                f"__{identity_digest(self.identity)[:16]}")

    @property
    def cost(self) -> float:
        """Relative expected cost, to start the longest runs first."""
        return self.instance["hardness"] * _COST[self.agent]

    def run(self) -> dict[str, Any]:
        """Run the agent to its stopping rule; the table's row."""
        from dueling_gym.agents.cpe import CLUCBBordaExact, CLUCBBordaPAC
        from dueling_gym.experiments.pure_exploration import run_pure_exploration

        problem = build(self.instance)
        smallest_score_gap = float(problem.borda_gaps().min()) / problem.n_positions
        if self.agent == "clucb_borda_pac":
            agent = CLUCBBordaPAC(problem, delta=self.delta, epsilon=0.5 * smallest_score_gap)
        else:
            agent = CLUCBBordaExact(problem, delta=self.delta, reuse_samples_if_exact=self.agent.endswith("reuse"))
        result = run_pure_exploration(agent, problem, seed=self.seed)
        return {
            "instance": problem.name,
            "n_positions": problem.n_positions,
            "n_candidates": problem.n_candidates,
            "n_edges": problem.n_edges,
            "n_pairs": problem.n_comparable_pairs,
            "hardness": self.instance["hardness"],
            "agent": self.agent,
            "seed": self.seed,
            "samples": result.samples,
            "correct": result.correct,
            "epochs": getattr(agent, "epoch", None) if self.agent != "clucb_borda_pac" else None,
            "wall_time_s": result.wall_time,
            "us_per_sample": 1e6 * result.time_per_sample,
        }

    def check_result(self, record: dict[str, Any]) -> str | None:
        for name, types in _RESULT_FIELDS.items():
            value = record.get(name)
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                return f"{name} is missing or not {' or '.join(t.__name__ for t in types)}"
            if isinstance(value, float) and not math.isfinite(value):
                return f"{name} is not finite"
        if record["samples"] < 0 or record["agent"] != self.agent or record["seed"] != self.seed:
            return "agent, seed or samples do not match"
        return None


def slope(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 2 or np.ptp(np.log(x)) == 0:
        return float("nan")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def _per_agent(rows: list[dict], scale: float):
    """For each agent of :data:`AGENTS` with runs in ``rows``: the agent, its rows, their
    ``H^B ln(1/δ)`` (``scale`` is ``ln(1/δ)``) and their sample counts."""
    for agent in AGENTS:
        mine = [row for row in rows if row["agent"] == agent]
        if mine:
            yield (agent, mine, np.array([row["hardness"] * scale for row in mine]),
                   np.array([row["samples"] for row in mine], dtype=float))


def table(rows: list[dict], delta: float) -> str:
    scale = math.log(1 / delta)
    lines = [f"{'instance':<14}{'l':>3}{'m':>4}{'K':>5}{'H^B':>9}  {'agent':<24}{'samples':>10}{'/(H ln1/d)':>11}"
             f"{'us/sample':>10}{'epochs':>7}{'ok':>4}"]
    for row in sorted(rows, key=lambda r: (r["hardness"], r["instance"], r["agent"], r["seed"])):
        lines.append(f"{row['instance']:<14}{row['n_positions']:>3}{row['n_edges']:>4}{row['n_pairs']:>5}"
                     f"{row['hardness']:>9.1f}  {row['agent']:<24}{row['samples']:>10}"
                     f"{row['samples'] / (row['hardness'] * scale):>11.0f}{row['us_per_sample']:>10.1f}"
                     f"{row['epochs'] if row['epochs'] is not None else '-':>7}{'y' if row['correct'] else 'N':>4}")
    lines.append("")
    lines.append(f"{'agent':<24}{'runs':>5}{'correct':>8}{'median ratio':>13}{'log-log slope':>14}{'us/sample':>10}")
    for agent, mine, x, y in _per_agent(rows, scale):
        lines.append(f"{agent:<24}{len(mine):>5}{sum(row['correct'] for row in mine):>8}"
                     f"{np.median(y / x):>13.0f}{slope(x, y):>14.2f}"
                     f"{np.median([row['us_per_sample'] for row in mine]):>10.1f}")
    return "\n".join(lines)


def plot(rows: list[dict], delta: float, path: Path) -> None:
    """Samples to stop against ``H^B ln(1/δ)`` (log-log), one marker per agent, with the reference line."""
    if not rows:
        raise ValueError("nothing to plot: no runs")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scale = math.log(1 / delta)
    fig, ax = plt.subplots(figsize=(6.5, 4.8))
    markers = {"clucb_borda_exact": "o", "clucb_borda_exact_reuse": "s", "clucb_borda_pac": "^"}
    for agent, _, x, y in _per_agent(rows, scale):
        ax.scatter(x, y, marker=markers[agent], alpha=0.75,
                   label=f"{agent} (slope {slope(x, y):.2f})")
    xs = np.array([row["hardness"] * scale for row in rows])
    grid = np.geomspace(xs.min() / 1.3, xs.max() * 1.3, 50)
    ax.plot(grid, grid, "k--", lw=0.8, label="samples = H^B ln(1/δ)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"$H^B \ln(1/\delta)$  (Borda lower-bound scale)")
    ax.set_ylabel("samples to stop")
    positions = sorted({row["n_positions"] for row in rows})
    runs = sorted(set(Counter((row["instance"], row["agent"]) for row in rows).values()))
    per_pair = str(runs[0]) if len(runs) == 1 else f"{runs[0]}-{runs[-1]}"
    ax.set_title(f"CLUCB-Borda on random CPE-DB instances (l = {positions[0]}..{positions[-1]}, δ = {delta})")
    # Each point is one run: say so, since a scatter of single runs has no interval to show.
    fig.text(0.5, 0.01, f"each point: one run ({per_pair} per instance "
             "and agent); the dashed line is the reference, not a fit", ha="center", va="bottom", fontsize=7.5,
             color="#333333")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def study_instances(quick: bool) -> list[dict]:
    """The instance family: ``l`` in {2, 4, 6, 8, 10} (one each) when quick, else 2..10 (three each)."""
    if quick:
        return instance_family([2, 4, 6, 8, 10], per_size=1, hardness_cap=150.0)
    return instance_family(list(range(2, 11)), per_size=3, hardness_cap=600.0)


def study_units(quick: bool, seeds: int = 1, delta: float = 0.05,
                agents: tuple[str, ...] = AGENTS) -> list[SampleComplexityUnit]:
    """The study's runs, the longest expected first."""
    units = [SampleComplexityUnit(spec, agent, seed, delta)
             for spec in study_instances(quick) for agent in agents for seed in range(seeds)]
    return sorted(units, key=lambda unit: -unit.cost)


def run_study(out_dir: str | os.PathLike | None, *, quick: bool = False, seeds: int = 1, delta: float = 0.05,
              jobs: int = 1, agents: tuple[str, ...] = AGENTS, progress: bool = True, backend: str = "local",
              address: str | None = None) -> list[dict]:
    """Run (or resume) the study and return one row per run.

    With ``out_dir``, every finished run is a verified file in ``out_dir/units`` (see
    :func:`~dueling_gym.experiments.runs.runner.run_units`, which also explains ``jobs``, ``backend``
    and ``address``); running again runs only what is missing.
    """
    unknown = sorted(set(agents) - set(AGENTS))
    if unknown:
        raise ValueError(f"unknown agents {unknown}; choose from {list(AGENTS)}")
    delta = check_probability("delta", delta, open_low=True, open_high=True)
    seeds = check_integer("seeds", seeds, minimum=1)
    units = study_units(quick, seeds, delta, tuple(agents))
    request = {"quick": bool(quick), "seeds": seeds, "delta": delta, "agents": list(agents)}
    return run_units(units, out_dir, kind=KIND, request=request, jobs=jobs, backend=backend, address=address,
                     progress=progress, desc="CPE-DB study")
