"""What a sweep runs: the :class:`SweepSpec` (agents x problems x seeds at one horizon) and its units.

The sweep's parameters are validated and canonicalised when it is constructed, before a sweep
writes or runs anything; this is where a sweep's input is checked, and the layers below (the
runner, the units, the simulation loop) take it as checked:

* the horizon, seeds, checkpoints and arm shuffling are checked here;
* every agent is built once per number of arms of the sweep's problems, so a bad
  hyperparameter is refused up front;
* duplicate agents, problems and seeds are removed (with a warning), so a sweep never counts
  one run twice.

The parts live beside it and are re-exported here: agent specifications
(:mod:`~dueling_gym.experiments.sweeps.agent_spec`), problem specifications and their labels
(:mod:`~dueling_gym.experiments.sweeps.problem_spec`), and units with their identities
(:mod:`~dueling_gym.experiments.sweeps.units`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Iterable

from dueling_gym.experiments.runs.work_units import canonical_json, package_version
from dueling_gym.experiments.sweeps.agent_spec import AgentSpec
from dueling_gym.experiments.sweeps.problem_spec import ProblemSpec, with_distinct_labels
from dueling_gym.experiments.sweeps.units import Unit, arm_permutation, resolve_checkpoints, unit_problem
from dueling_gym.validation import check_bool, check_integer

__all__ = ["AgentSpec", "ProblemSpec", "SweepSpec", "Unit", "unit_problem", "arm_permutation", "package_version",
           "canonical_json", "with_distinct_labels", "MAX_RUNS"]


#: (agent name and hyperparameters as canonical JSON, K, horizon) of the agents built successfully.
_AGENTS_THAT_BUILD: set[tuple[str, int, int]] = set()


def _dedupe(items: Iterable[Any], key: Any, what: str, describe: Any) -> tuple[tuple[Any, ...], list[str]]:
    kept: dict[str, Any] = {}
    dropped = []
    for item in items:
        identity = key(item)
        if identity in kept:
            first, again = describe(kept[identity]), describe(item)
            dropped.append(f"{what} {first} given more than once" if first == again
                           else f"{what} {again} is the same as {first}")
        else:
            kept[identity] = item
    return tuple(kept.values()), dropped


#: The most runs one results folder holds.  Each is a file, and the folder's tables, plots and
#: verification hold every run in memory (at this size, about 2 GB and minutes of reading).
MAX_RUNS = 200_000


@dataclass(frozen=True)
class SweepSpec:
    """What a sweep runs, validated and de-duplicated when constructed.

    Parameters
    ----------
    agents, problems : sequences of AgentSpec / ProblemSpec (or their string forms)
    seeds : sequence of int
        Non-negative run seeds (see :func:`dueling_gym.experiments.derive_seeds`); duplicates are
        dropped with a warning.
    horizon : int
        Duels per run.
    checkpoints : sequence of int, optional
        Default: log-spaced (:func:`dueling_gym.experiments.log_checkpoints`).
    shuffle_arms : bool, default True
        Relabel the arms of the problem by a random permutation drawn from the run seed, so
        lowest-index tie-breaking cannot favour the winner (the DTS authors' simulator does the
        same).  Recommendations are reported in the problem's original labels.

    Raises
    ------
    ValueError, TypeError
        On an unknown agent or problem, a hyperparameter the agent refuses (every agent is built
        once per number of arms), a bad seed, horizon or checkpoint.
    """

    agents: tuple[AgentSpec, ...]
    problems: tuple[ProblemSpec, ...]
    seeds: tuple[int, ...]
    horizon: int
    checkpoints: tuple[int, ...] | None = None
    shuffle_arms: bool = True

    def __post_init__(self) -> None:
        from dueling_gym.experiments.simulate import MAX_HORIZON

        horizon = check_integer("horizon", self.horizon, minimum=1, maximum=MAX_HORIZON)
        object.__setattr__(self, "horizon", horizon)
        object.__setattr__(self, "shuffle_arms", check_bool("shuffle_arms", self.shuffle_arms))
        for what, values in (("agents", self.agents), ("problems", self.problems), ("seeds", self.seeds)):
            if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
                raise TypeError(f"{what} must be a sequence, got {values!r}")
        agents = [AgentSpec.parse(a) if isinstance(a, str) else a for a in self.agents]
        problems = [ProblemSpec.parse(p) if isinstance(p, str) else p for p in self.problems]
        seeds = [check_integer("seed", s, minimum=0) for s in self.seeds]
        if not agents or not problems or not seeds:
            raise ValueError("a sweep needs at least one agent, one problem and one seed")
        runs = len(agents) * len(problems) * len(seeds)
        if runs > MAX_RUNS:
            raise ValueError(f"a sweep of {runs} runs ({len(agents)} agents x {len(problems)} problems x {len(seeds)} seeds) "
                             f"is more than the {MAX_RUNS} one results folder holds; split it over several folders")
        if self.checkpoints is not None:
            object.__setattr__(self, "checkpoints", resolve_checkpoints(horizon, self.checkpoints))
        problems_kept, dropped_problems = _dedupe(problems, lambda p: canonical_json(p.to_json()), "problem",
                                                  lambda p: repr(p.label))
        agents_kept, dropped_agents = _dedupe(
            agents, lambda a: canonical_json([a.name, a.resolved_hyperparameters(horizon)]), "agent",
            lambda a: repr(a.label))
        seeds_kept, dropped_seeds = _dedupe(seeds, str, "seed", str)
        problems_kept = with_distinct_labels(problems_kept)
        labels = [a.label for a in agents_kept]
        if len(set(labels)) != len(labels):
            raise ValueError(f"agent labels must be distinct, got {labels}")
        object.__setattr__(self, "agents", agents_kept)
        object.__setattr__(self, "problems", problems_kept)
        object.__setattr__(self, "seeds", seeds_kept)
        dropped = dropped_agents + dropped_problems + dropped_seeds
        if dropped:
            warnings.warn("duplicates dropped (each unit runs and counts once): " + "; ".join(dropped),
                          UserWarning, stacklevel=3)
        self._check_agents_build()

    def _check_agents_build(self) -> None:
        """Build every agent once per number of arms: a refused hyperparameter fails here, not mid-sweep.

        An agent that built once is not built again in this process (a sweep re-reads its
        folder's requests as specs, and each spec checks its agents).
        """
        arm_counts = sorted({problem.matrix.n_arms for problem in self.problems})
        for agent in self.agents:
            identity = canonical_json([agent.name, agent.hyperparameters])
            for n_arms in arm_counts:
                if (identity, n_arms, self.horizon) in _AGENTS_THAT_BUILD:
                    continue
                try:
                    agent.build(n_arms, self.horizon)
                except (TypeError, ValueError) as error:
                    raise type(error)(f"agent {agent.label!r} (K={n_arms}): {error}") from None
                _AGENTS_THAT_BUILD.add((identity, n_arms, self.horizon))

    @property
    def resolved_checkpoints(self) -> tuple[int, ...]:
        return self.checkpoints if self.checkpoints is not None else resolve_checkpoints(self.horizon, None)

    def units(self) -> list[Unit]:
        checkpoints = self.resolved_checkpoints
        return [Unit(a, p, s, self.horizon, self.shuffle_arms, checkpoints)
                for p in self.problems for a in self.agents for s in self.seeds]

    def check_notion(self, notion: str) -> None:
        """Refuse a regret notion that some problem of the sweep does not define (before running)."""
        from dueling_gym.problems.preference import REGRET_NOTIONS

        if notion not in REGRET_NOTIONS:
            raise ValueError(f"unknown regret notion {notion!r}; choose one of {sorted(REGRET_NOTIONS)}")
        lacking = [p.label for p in self.problems if notion not in p.matrix.defined_regret_notions]
        if lacking:
            shown = ", ".join(lacking[:5]) + (f" and {len(lacking) - 5} more" if len(lacking) > 5 else "")
            raise ValueError(f"regret notion {notion!r} is not defined on {shown} "
                             f"(no Condorcet winner); choose another --notion")

    def to_json(self) -> dict[str, Any]:
        return {
            "agents": [{"name": a.name, "hyperparameters": a.hyperparameters, "label": a.label} for a in self.agents],
            "problems": [p.to_json() | {"label": p.label} for p in self.problems],
            "seeds": list(self.seeds),
            "horizon": self.horizon,
            "checkpoints": None if self.checkpoints is None else list(self.checkpoints),
            "shuffle_arms": self.shuffle_arms,
        }
