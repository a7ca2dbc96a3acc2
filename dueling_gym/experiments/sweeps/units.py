"""Units of a regret sweep: one agent x problem x seed run, its identity, its run and its checks.

A unit's :attr:`Unit.identity` holds everything that changes its numbers: the agent with all
its hyperparameters (defaults filled in), the canonical problem with a digest of its matrix,
the seed, the horizon, arm shuffling, the checkpoints and the package version.  A unit comes
from :meth:`~dueling_gym.experiments.sweeps.spec.SweepSpec.units`, which validated all of it,
or from a unit file (:meth:`Unit.from_record`, which checks what the file says); so its run
plays the validated loop of :func:`~dueling_gym.experiments.simulate.simulate_validated`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from dueling_gym.experiments.runs.work_units import WorkUnit, canonical_json, identity_digest, package_version, safe_name
from dueling_gym.experiments.sweeps.agent_spec import AgentSpec
from dueling_gym.experiments.sweeps.problem_spec import ProblemSpec
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.validation import check_bool, check_integer

__all__ = ["Unit", "unit_problem", "arm_permutation", "relabelled_arms", "resolve_checkpoints"]


@dataclass(frozen=True)
class Unit(WorkUnit):
    """One run of a regret sweep: agent x problem x seed, at the sweep's horizon, shuffling and checkpoints."""

    agent: AgentSpec
    problem: ProblemSpec
    seed: int
    horizon: int
    shuffle_arms: bool
    checkpoints: tuple[int, ...]

    @cached_property
    def identity(self) -> dict[str, Any]:
        """Everything that changes this unit's numbers, as JSON-ready data."""
        from dueling_gym.agents.external import is_import_path, source_identity

        hyperparameters = self.agent.resolved_hyperparameters(self.horizon)
        agent: dict[str, Any] = {"name": self.agent.name, "hyperparameters": hyperparameters}
        # Files the agent reads (a policy) enter by content: one rewritten at its path is another run.
        files = self.agent.agent_class.content_digests(self.problem.matrix.n_arms, hyperparameters)
        if files:
            agent["files"] = files
        if is_import_path(self.agent.name):  # an agent of the user's: its code enters by content
            agent["source"] = source_identity(self.agent.agent_class)
        return json.loads(canonical_json({
            "agent": agent,
            "problem": self.problem.identity,
            "seed": self.seed,
            "horizon": self.horizon,
            "shuffle_arms": self.shuffle_arms,
            "checkpoints": list(self.checkpoints),
            "dueling_gym": package_version(),
        }))

    volatile_fields = ("wall_time",)

    @cached_property
    def digest(self) -> str:
        return identity_digest(self.identity)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Unit:
        from dueling_gym.experiments.simulate import MAX_HORIZON

        identity = record["identity"]
        agent, problem = identity["agent"], identity["problem"]
        # A file is an entry like a SweepSpec: what the run trusts is checked here.  Checkpoints
        # are resolved as a spec resolves them; a file that held others names another unit's key.
        horizon = check_integer("horizon", identity["horizon"], minimum=1, maximum=MAX_HORIZON)
        # The hyperparameters as given (the identity holds them with the defaults filled in).
        return cls(AgentSpec(agent["name"], dict(record["hyperparameters"]), str(record.get("agent", ""))),
                   ProblemSpec(problem["name"], problem["n_arms"], problem["problem_seed"], dict(problem["options"])),
                   check_integer("seed", identity["seed"], minimum=0), horizon,
                   check_bool("shuffle_arms", identity["shuffle_arms"]),
                   resolve_checkpoints(horizon, identity["checkpoints"]))

    @property
    def key(self) -> str:
        """File stem of the unit, readable names plus a digest of the identity."""
        # The problem's own label: a unit's file name never depends on the folder it is run into.
        return f"{safe_name(self.agent.name)}__{safe_name(self.problem.own_label)}__seed{self.seed}__{self.digest[:16]}"

    def run(self) -> dict[str, Any]:
        """Play the run; regret at every checkpoint and the recommendations in the problem's own labels."""
        from dueling_gym.experiments.simulate import simulate_validated

        problem, run_problem, permutation = unit_problem(self)
        agent = self.agent.build(problem.n_arms, self.horizon)
        # The sweep's spec (or from_record) checked the horizon, seed and checkpoints: not again per run.
        result = simulate_validated(agent, run_problem, self.horizon, seed=self.seed,
                                    checkpoints=np.asarray(self.checkpoints, dtype=np.int64))
        recommendations = permutation[result.recommendations]
        return {
            "agent": self.agent.label,
            "agent_name": self.agent.name,
            "hyperparameters": self.agent.hyperparameters,
            "agent_repr": result.agent,
            "problem": self.problem.own_label,  # the folder's label is put on by labelled()
            "problem_spec": self.problem.to_json(),
            "seed": self.seed,
            "horizon": self.horizon,
            "n_arms": problem.n_arms,
            "permutation": permutation.tolist(),
            "checkpoints": result.checkpoints.tolist(),
            "cumulative_regret": {notion: values.tolist() for notion, values in result.cumulative_regret.items()},
            "recommendations": recommendations.tolist(),
            "recommendation_is_copeland_winner": np.isin(recommendations, problem.copeland_winners).tolist(),
            "wall_time": result.wall_time,
            "fused": result.fused,
        }

    def check_result(self, record: dict[str, Any]) -> str | None:
        """Why ``record`` cannot be this run's result: every field is what the run implies.

        Checked: the run's seed, horizon, number of arms, problem, agent, arm permutation and
        checkpoints; exactly the regret notions defined on the problem, each a finite,
        non-negative, non-decreasing curve bounded by ``t`` times the notion's largest per-duel
        regret; recommendations that are arms; and the Copeland-winner flags those
        recommendations imply.
        """
        problem = self.problem.matrix
        permutation = arm_permutation(self.seed, problem.n_arms, self.shuffle_arms)
        expected = {"seed": self.seed, "horizon": self.horizon, "n_arms": problem.n_arms, "agent_name": self.agent.name,
                    "problem_spec": self.problem.to_json(), "permutation": permutation.tolist(),
                    "checkpoints": list(self.checkpoints)}
        for name, value in expected.items():
            if canonical_json(record.get(name)) != canonical_json(value):
                return f"{name} is {record.get(name)!r:.60}, the run's is {value!r:.60}"
        for name, kind in (("wall_time", float), ("fused", bool), ("agent_repr", str), ("hyperparameters", dict),
                           ("agent", str), ("problem", str)):
            if not isinstance(record.get(name), kind):
                return f"{name} is missing or not a {kind.__name__}"
        given = AgentSpec(self.agent.name, record["hyperparameters"]).resolved_hyperparameters(self.horizon)
        if canonical_json(given) != canonical_json(self.identity["agent"]["hyperparameters"]):
            return "hyperparameters are not those of the run's identity"
        if not math.isfinite(record["wall_time"]) or record["wall_time"] < 0:
            return "wall_time is not a finite non-negative number"
        regret = record.get("cumulative_regret")
        if not isinstance(regret, dict):
            return "cumulative_regret is missing"
        notions = self.problem.max_duel_regrets
        if set(regret) != set(notions):
            return (f"cumulative_regret has the notions {sorted(regret)}, the problem defines "
                    f"{sorted(notions)}")
        for notion, values in regret.items():
            reason = _curve_problem(values, self.checkpoints, notions[notion])
            if reason is not None:
                return f"regret of {notion!r} {reason}"
        recommendations = record.get("recommendations")
        if (not isinstance(recommendations, list) or len(recommendations) != len(self.checkpoints)
                or not all(type(arm) is int and 0 <= arm < problem.n_arms for arm in recommendations)):
            return f"recommendations are not {len(self.checkpoints)} arms of 0..{problem.n_arms - 1}"
        winners = record.get("recommendation_is_copeland_winner")
        if winners != np.isin(recommendations, problem.copeland_winners).tolist():
            return "recommendation_is_copeland_winner does not match the recommendations"
        return None

    def labelled(self, record: dict[str, Any]) -> dict[str, Any]:
        # Tables use the labels of the current sweep (labels are not part of a unit's identity).
        return record | {"agent": self.agent.label, "problem": self.problem.label}


def _curve_problem(values: Any, checkpoints: tuple[int, ...], max_duel_regret: float) -> str | None:
    """Why ``values`` is not a cumulative-regret curve at ``checkpoints`` (None when it can be one)."""
    if not isinstance(values, list) or len(values) != len(checkpoints):
        return f"is not {len(checkpoints)} values"
    # JSON numbers of a written file are floats; an int (possibly beyond any float) was typed in.
    if not all(type(value) is float and math.isfinite(value) for value in values):
        return "holds values that are not finite numbers"
    previous = 0.0
    for value, t in zip(values, checkpoints):
        if value < previous:
            return f"is negative or decreases at t={t}"
        # Each duel costs at most max_duel_regret; the margin covers the rounding of a running sum.
        if value > t * max_duel_regret * (1 + 1e-9) + 1e-9:
            return f"exceeds t times the largest per-duel regret at t={t}"
        previous = value
    return None


def arm_permutation(seed: int, n_arms: int, shuffle_arms: bool) -> np.ndarray:
    """The relabelling of a run's arms, drawn from its seed (the identity without shuffling)."""
    if not shuffle_arms:
        return np.arange(n_arms)
    shuffle_seed = np.random.SeedSequence([seed, 0x5EED]).generate_state(1)[0]
    return np.random.default_rng(shuffle_seed).permutation(n_arms)


def unit_problem(unit: Unit) -> tuple[PreferenceMatrix, PreferenceMatrix, np.ndarray]:
    """The problem of ``unit``, the problem its run plays and the permutation between them.

    With arm shuffling, arm ``k`` of the run is arm ``permutation[k]`` of the problem; the
    permutation is drawn from the unit's seed, so every backend plays the same run.
    """
    problem = unit.problem.build()
    run_problem, permutation = relabelled_arms(problem, unit.seed, unit.shuffle_arms)
    return problem, run_problem, permutation


def relabelled_arms(problem: PreferenceMatrix, seed: int, shuffle_arms: bool = True
                    ) -> tuple[PreferenceMatrix, np.ndarray]:
    """``problem`` with its arms relabelled by :func:`arm_permutation` of ``seed`` (arm ``k`` of the
    result is arm ``permutation[k]`` of ``problem``), and that permutation."""
    permutation = arm_permutation(seed, problem.n_arms, shuffle_arms)
    return PreferenceMatrix(problem.matrix[np.ix_(permutation, permutation)], name=problem.name), permutation


def resolve_checkpoints(horizon: int, checkpoints: Sequence[int] | None) -> tuple[int, ...]:
    """The checkpoints a run records: the given ones (validated, sorted, horizon added) or the default."""
    from dueling_gym.experiments.simulate import log_checkpoints

    if checkpoints is None:
        return tuple(int(c) for c in log_checkpoints(horizon))
    values = sorted({check_integer("checkpoint", c, minimum=1, maximum=horizon) for c in checkpoints})
    if not values or values[-1] != horizon:
        values.append(horizon)
    return tuple(values)
