"""What a sweep runs: agent and problem specifications, units and their identities.

Everything here is validated and canonicalised when it is constructed, before a sweep writes
or runs anything:

* agent names are checked against the registry and every agent is built once per number of
  arms of the sweep's problems, so a bad hyperparameter is refused up front;
* problem aliases are resolved to the canonical name and generator options equal to their
  defaults are dropped, so ``cyclic`` and ``cyclic4`` (or ``min_gap=0.0`` and nothing) are the
  same problem;
* duplicate agents, problems and seeds are removed (with a warning), so a sweep never counts
  one run twice.

A unit's :attr:`Unit.identity` holds everything that changes its numbers: the agent with all
its hyperparameters (defaults filled in), the canonical problem with a digest of its matrix,
the seed, the horizon, arm shuffling, the checkpoints and the package version.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import warnings
from pathlib import Path
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable, Sequence

import numpy as np

from dueling_gym.experiments.work_units import WorkUnit, canonical_json, identity_digest, package_version, safe_name
from dueling_gym.problems.generators import GENERATORS
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.validation import check_bool, check_integer, check_number, echo

__all__ = ["AgentSpec", "ProblemSpec", "SweepSpec", "Unit", "unit_problem", "arm_permutation", "package_version",
           "canonical_json", "with_distinct_labels", "MAX_RUNS"]


def _check_json_values(values: dict[str, Any], what: str) -> None:
    """Settings are stored in the manifest and unit files, so they must survive a JSON round trip."""
    try:
        same = json.loads(json.dumps(values)) == values
    except (TypeError, ValueError):
        same = False
    if not same:
        raise TypeError(f"{what} must be JSON values (numbers, strings, booleans, lists), got {values!r}")


def _declares_float(parameter: inspect.Parameter | None) -> bool:
    """Whether a keyword declares a real number (a float default, or ``float`` / ``float | None``)."""
    if parameter is None:
        return False
    if isinstance(parameter.default, float):
        return True
    annotation = parameter.annotation
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return {part.strip() for part in str(text).split("|")} in ({"float"}, {"float", "None"})


def _canonical_value(value: Any, parameter: inspect.Parameter | None, what: str) -> Any:
    """``value`` in the canonical form of its declared type: an integer given for a real number becomes a float.

    So ``alpha=1`` and ``alpha=1.0`` (or ``min_gap=0`` and the default ``0.0``) are one setting,
    one run and one row.  Nothing else is converted: a wrong type is left for the agent or
    generator to refuse with its own message.
    """
    if type(value) is int and _declares_float(parameter):
        try:
            return float(value)
        except OverflowError:
            raise ValueError(f"{what} must be a real number within float range, got an integer of "
                             f"{len(str(abs(value)))} digits") from None
    return value


def _parse_options(text: str, what: str) -> dict[str, Any]:
    """``key=value,key=value`` -> dict (values read as JSON when possible, else kept as text)."""
    values: dict[str, Any] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, separator, value = item.partition("=")
        key = key.strip()
        if not separator or not key:
            raise ValueError(f"{what}: {item!r} must look like key=value")
        if key in values:
            raise ValueError(f"{what}: {key!r} is given twice")
        try:
            values[key] = json.loads(value)
        except json.JSONDecodeError:
            values[key] = value.strip()
    return values


@dataclass(frozen=True)
class AgentSpec:
    """A registered dueling agent with hyperparameters, e.g. ``AgentSpec("ccb", {"alpha": 0.6})``.

    ``AgentSpec.parse("ccb:alpha=0.6")`` reads the command-line form.  ``label`` (default:
    ``name:key=value,...``) names the agent in tables and plots.
    """

    name: str
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    label: str = ""

    def __post_init__(self) -> None:
        from dueling_gym.agents import AGENT_REGISTRY, DuelingAgent, agent_class, list_agents
        from dueling_gym.agents.external import is_import_path

        if not isinstance(self.name, str):
            raise TypeError(f"agent name must be a string, got {type(self.name).__name__}")
        if not isinstance(self.hyperparameters, dict):
            raise TypeError(f"hyperparameters of {echo(self.name)} must be a dict, got {type(self.hyperparameters).__name__}")
        # An import path keeps its case (module and class names); registered names are case-blind.
        name = self.name.strip() if is_import_path(self.name) else self.name.strip().lower()
        if is_import_path(name):
            cls = agent_class(name)  # ValueError/TypeError naming what is wrong with the path
        elif name in AGENT_REGISTRY:  # one look-up imports that agent's module only (listing imports all)
            cls = AGENT_REGISTRY[name]
        else:
            cls = None
        if cls is None or not issubclass(cls, DuelingAgent):
            raise ValueError(f"unknown agent {echo(self.name)}; choose one of {list_agents('dueling')} "
                             "or a class by import path (package.module:ClassName)")
        _check_json_values(self.hyperparameters, f"hyperparameters of agent {echo(self.name)}")
        for reserved in ("seed", "n_arms"):
            if reserved in self.hyperparameters:
                raise ValueError(f"agent {echo(name)}: {reserved!r} is set by the sweep, not as a hyperparameter")
        object.__setattr__(self, "name", name)
        if not self.label:  # as typed: alpha=2 stays alpha=2 in tables, though it runs as 2.0
            suffix = ",".join(f"{key}={value}" for key, value in sorted(self.hyperparameters.items()))
            object.__setattr__(self, "label", f"{name}:{suffix}" if suffix else name)
        parameters = inspect.signature(cls.__init__).parameters
        object.__setattr__(self, "hyperparameters", {
            key: _canonical_value(value, parameters[key] if key in parameters else None, f"{key} of agent {echo(name)}")
            for key, value in self.hyperparameters.items()})

    @classmethod
    def parse(cls, text: str) -> AgentSpec:
        """Parse ``name`` or ``name:key=value,key=value`` (values read as JSON when possible).

        An agent named by import path is ``package.module:ClassName`` or
        ``package.module:ClassName:key=value,...``: a name before the first colon that is not a
        registered agent is a module, and the part after it, when it holds no ``=``, a class.
        """
        from dueling_gym.agents import AGENT_REGISTRY

        name, _, rest = str(text).partition(":")
        head, _, options = rest.partition(":")
        if rest and "=" not in head and name.strip().lower() not in AGENT_REGISTRY:
            name, rest = f"{name}:{head}", options
        return cls(name.strip(), _parse_options(rest, f"agent {text!r}"))

    @property
    def agent_class(self) -> type:
        """The agent's class (registered, or imported by path)."""
        from dueling_gym.agents import agent_class

        return agent_class(self.name)

    def resolved_hyperparameters(self, horizon: int) -> dict[str, Any]:
        """Every hyperparameter the agent runs with: its defaults updated with the given ones."""
        defaults, takes_horizon = _keyword_defaults(self.agent_class)
        resolved = dict(defaults)
        if takes_horizon:
            resolved["horizon"] = horizon
        resolved.update(self.hyperparameters)
        return resolved

    def build(self, n_arms: int, horizon: int) -> Any:
        """Instantiate the agent; horizon-aware agents (a ``horizon`` keyword) receive the sweep's."""
        from dueling_gym.agents import make_agent
        from dueling_gym.agents.registry import constructor_keywords

        parameters = dict(self.hyperparameters)
        if "horizon" in constructor_keywords(self.agent_class) and "horizon" not in parameters:
            parameters["horizon"] = horizon
        try:
            return make_agent(self.name, n_arms, **parameters)
        except SystemExit as error:
            # A user's constructor that exits would end the command without a word.
            raise ValueError(f"the agent {echo(self.name)} called sys.exit({echo(error.code)}) while it was built; "
                             "an agent must raise an exception, not exit") from None


@functools.lru_cache(maxsize=None)
def _keyword_defaults(cls: type) -> tuple[dict[str, Any], bool]:
    """The keyword defaults of ``cls``'s constructor (``seed`` aside) and whether it takes a ``horizon``.

    Read once per class: every unit's identity and every loaded unit file resolve hyperparameters.
    """
    parameters = inspect.signature(cls.__init__).parameters
    defaults = {key: spec.default for key, spec in parameters.items()
                if spec.kind == spec.KEYWORD_ONLY and key != "seed" and spec.default is not spec.empty}
    return defaults, "horizon" in parameters


#: (agent name and hyperparameters as canonical JSON, K, horizon) of the agents built successfully.
_AGENTS_THAT_BUILD: set[tuple[str, int, int]] = set()


#: The name of a problem saved in a file (``file:PATH``).
FILE_PROBLEM = "file"


def _generator_defaults(name: str) -> dict[str, Any]:
    parameters = inspect.signature(GENERATORS[name]).parameters
    return {key: spec.default for key, spec in parameters.items()
            if spec.kind == spec.KEYWORD_ONLY and spec.default is not spec.empty}


@dataclass(frozen=True)
class ProblemSpec:
    """A shipped problem (``ProblemSpec("sushi")``), a generated one, or one saved in a file.

    Generated problems: ``ProblemSpec("unique_copeland_winner", n_arms=8, problem_seed=3)``
    draws the matrix from ``np.random.default_rng(problem_seed)``.  Saved problems (a matrix
    estimated from a comparison log or an interleaving experiment, written by
    :func:`~dueling_gym.problems.save_problem`): ``ProblemSpec("file", options={"path": PATH})``;
    the identity holds the path and the SHA-256 of the matrix, so a changed file is a different
    problem.  ``ProblemSpec.parse`` reads ``sushi``,
    ``unique_copeland_winner:n_arms=8,problem_seed=3,min_gap=0.1`` or ``file:PATH``.  Aliases of
    shipped problems become their canonical name; generator options equal to their defaults are
    dropped.

    A problem is its content, not its name: two saved problems may share a name (the default
    name is the log's file stem, so every ``battles.csv`` gives ``battles``).  Where they meet,
    in one sweep or one results folder, the later one is shown as ``NAME@DIGEST`` (the first 8
    hex digits of its matrix's SHA-256; see ``with_distinct_labels``), held in
    ``display_label``; nothing else about the problem, its units or their files changes.
    """

    name: str
    n_arms: int | None = None
    problem_seed: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    #: The label in tables and plots when it is not :attr:`own_label` (``own_label@DIGEST``).
    display_label: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        self._canonicalise()
        if not isinstance(self.display_label, str):
            raise TypeError(f"problem label must be a string, got {type(self.display_label).__name__}")
        if self.display_label:  # a saved problem's own label is its file's: read only when needed
            self._check_display_label(self.display_label)

    def _check_display_label(self, label: str) -> None:
        """Keep ``label`` as the display label: the own label (kept as none) or the own label with a digest tag."""
        own = self.own_label
        if label != own and not _is_tagged_label(label, own):
            raise ValueError(f"problem {own!r} cannot be labelled {echo(label)} "
                             f"(only {own!r} or {own + '@'}<8 hex digits of its matrix's SHA-256>)")
        object.__setattr__(self, "display_label", "" if label == own else label)

    def _canonicalise(self) -> None:
        from dueling_gym.problems import list_problems, load_problem

        if not isinstance(self.name, str):
            raise TypeError(f"problem name must be a string, got {type(self.name).__name__}")
        if not isinstance(self.options, dict):
            raise TypeError(f"problem options must be a dict, got {type(self.options).__name__}")
        _check_json_values(self.options, f"options of problem {echo(self.name)}")
        name = self.name.strip().lower()
        prefix, colon, path = self.name.partition(":")
        if colon and prefix.strip().lower() == FILE_PROBLEM:  # ProblemSpec("file:PATH"), as parse reads it
            if self.options:
                raise ValueError(f"a saved problem is named by its file: file:PATH, got options {self.options!r}")
            name = FILE_PROBLEM
            object.__setattr__(self, "options", {"path": path})
        if name == FILE_PROBLEM:
            path = self.options.get("path")
            if set(self.options) != {"path"} or not isinstance(path, str) or not path:
                raise ValueError(f"a saved problem is named by its file: file:PATH, got options {self.options!r}")
            if self.n_arms is not None or self.problem_seed is not None:
                raise ValueError("a saved problem (file:PATH) takes no n_arms or problem_seed")
        elif name in GENERATORS:
            if self.n_arms is None or self.problem_seed is None:
                raise ValueError(f"generated problem {echo(name)} needs n_arms and problem_seed "
                                 f"({name}:n_arms=K,problem_seed=S)")
            object.__setattr__(self, "n_arms", check_integer(f"n_arms of problem {echo(name)}", self.n_arms, minimum=2))
            object.__setattr__(self, "problem_seed",
                               check_integer(f"problem_seed of problem {echo(name)}", self.problem_seed, minimum=0))
            defaults = _generator_defaults(name)
            unknown = sorted(set(self.options) - set(defaults))
            if unknown:
                raise ValueError(f"generator {echo(name)} has no option {unknown}; its options are "
                                 f"{sorted(defaults) + ['n_arms', 'problem_seed']}")
            parameters = inspect.signature(GENERATORS[name]).parameters
            canonical = {key: _canonical_value(value, parameters[key], f"{key} of problem {echo(name)}")
                         for key, value in self.options.items()}
            object.__setattr__(self, "options", canonical)
            for key, value in self.options.items():
                default = defaults[key]
                if isinstance(default, bool):
                    if not isinstance(value, bool):
                        raise TypeError(f"{key} of problem {echo(name)} must be true or false, got {value!r}")
                elif isinstance(default, (int, float)):
                    check_number(f"{key} of problem {echo(name)}", value, strict=False)
            options = {key: value for key, value in self.options.items()
                       if not (type(value) is type(defaults[key]) and value == defaults[key])}
            object.__setattr__(self, "options", options)
        else:
            try:
                name = load_problem(name).name
            except ValueError:
                raise ValueError(f"unknown problem {echo(self.name)}; choose a shipped problem {list_problems()}, "
                                 f"a generator {sorted(GENERATORS)} (GENERATOR:n_arms=K,problem_seed=S) "
                                 "or a saved problem (file:PATH)") from None
            if self.n_arms is not None or self.problem_seed is not None or self.options:
                raise ValueError(f"shipped problem {echo(name)} takes no n_arms, problem_seed or options")
            object.__setattr__(self, "options", {})
        object.__setattr__(self, "name", name)

    @property
    def generated(self) -> bool:
        return self.name in GENERATORS

    @property
    def label(self) -> str:
        """The problem's name in tables and plots (:attr:`display_label`, else :attr:`own_label`)."""
        return self.display_label or self.own_label

    @property
    def own_label(self) -> str:
        """The name the problem gives itself (a saved problem's name, else its file's stem)."""
        if self.name == FILE_PROBLEM:
            return self.matrix.name or Path(self.options["path"]).stem
        if not self.generated:
            return self.name
        options = "".join(f"-{key}={value}" for key, value in sorted(self.options.items()))
        return f"{self.name}-K{self.n_arms}-s{self.problem_seed}{options}"

    @property
    def family(self) -> str:
        """The problem's family (problems drawn by one generator with the same options form one; a shipped problem is its own)."""
        if self.name == FILE_PROBLEM:
            return self.label
        if not self.generated:
            return self.name
        return self.name + "".join(f"-{key}={value}" for key, value in sorted(self.options.items()))

    @classmethod
    def parse(cls, text: str) -> ProblemSpec:
        name, _, rest = str(text).partition(":")
        if name.strip().lower() == FILE_PROBLEM:  # the rest is a path: commas and = are part of it
            return cls(FILE_PROBLEM, options={"path": rest})
        values = _parse_options(rest, f"problem {text!r}")
        n_arms = values.pop("n_arms", None)
        problem_seed = values.pop("problem_seed", None)
        for field_name, value in (("n_arms", n_arms), ("problem_seed", problem_seed)):
            if value is not None:
                check_integer(f"{field_name} in problem {text!r}", value)
        return cls(name.strip(), n_arms, problem_seed, values)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "n_arms": self.n_arms, "problem_seed": self.problem_seed,
                "options": dict(self.options)}

    @cached_property
    def matrix(self) -> PreferenceMatrix:
        """The problem (built once; a generator's bad option is reported with the problem's label)."""
        if self.generated:
            try:
                problem = GENERATORS[self.name](self.n_arms, np.random.default_rng(self.problem_seed), **self.options)
            except (TypeError, ValueError) as error:
                raise type(error)(f"problem {self.label!r}: {error}") from None
            return PreferenceMatrix(problem.matrix, name=self.label, source=problem.source)
        from dueling_gym.problems import load_problem

        if self.name == FILE_PROBLEM:
            return load_problem(f"{FILE_PROBLEM}:{self.options['path']}")
        return load_problem(self.name)

    def build(self) -> PreferenceMatrix:
        return self.matrix

    @property
    def tagged_label(self) -> str:
        """:attr:`own_label` with the first 8 hex digits of the matrix's SHA-256 (``battles@1a2b3c4d``)."""
        return f"{self.own_label}@{self.identity['matrix_sha256'][:_TAG_DIGITS]}"

    def relabelled(self, label: str) -> ProblemSpec:
        """This problem shown as ``label`` (its own label, or its own label with a digest)."""
        copy = ProblemSpec(self.name, self.n_arms, self.problem_seed, dict(self.options))
        # What was built or read stays built: a saved problem's file is read once per spec.
        copy.__dict__.update({key: value for key, value in self.__dict__.items() if key in _BUILT})
        copy._check_display_label(label)
        return copy

    @cached_property
    def max_duel_regrets(self) -> dict[str, float]:
        """The largest regret one duel can cost under each regret notion defined on the problem."""
        problem = self.matrix
        return {notion: float(problem.regret_matrix(notion).max()) for notion in problem.defined_regret_notions}

    @cached_property
    def identity(self) -> dict[str, Any]:
        """The canonical problem with the SHA-256 of its matrix (catches changed data or generators)."""
        from dueling_gym.problems.problem_files import matrix_digest

        return self.to_json() | {"matrix_sha256": matrix_digest(self.matrix)}


#: The cached properties of a ProblemSpec (what it built or read).
_BUILT = ("matrix", "identity", "max_duel_regrets")
#: Hex digits of a matrix's SHA-256 that tell apart problems of one name (a 32-bit tag).
_TAG_DIGITS = 8
_HEX = frozenset("0123456789abcdef")


def _is_tagged_label(label: str, own: str) -> bool:
    base, separator, tag = label.rpartition("@")
    return bool(separator) and base == own and len(tag) == _TAG_DIGITS and set(tag) <= _HEX


def with_distinct_labels(problems: Sequence[ProblemSpec],
                         taken: dict[str, str] | None = None) -> tuple[ProblemSpec, ...]:
    """``problems`` labelled so that no label names two different problems.

    A problem already holding a label (``taken``: label -> canonical JSON of the problem's
    :meth:`~ProblemSpec.to_json`, e.g. a results folder's) keeps it; another keeps the label it
    was given, or is shown by its own label, or, when those are taken by different problems, by
    its own label with the digest of its matrix (:attr:`ProblemSpec.tagged_label`).  So a
    folder's tables never merge the runs of two problems that share a name, and a problem's
    label never changes once given.

    Parameters
    ----------
    problems : sequence of ProblemSpec
        Distinct problems (as :class:`SweepSpec` keeps them).
    taken : dict, optional
        Labels already given, each with the problem it names.

    Returns
    -------
    tuple of ProblemSpec
        The problems, in order, each with its label.

    Raises
    ------
    ValueError
        When even the label with the digest is taken: two files hold the same matrix under the
        same name (give it once).
    """
    holders = dict(taken or {})
    by_problem = {problem: label for label, problem in holders.items()}
    labelled = []
    for problem in problems:
        content = canonical_json(problem.to_json())
        label = by_problem.get(content)
        if label is None:
            # The label it was given (a folder's manifest), else its own, else its own with the digest.
            label = next((candidate for candidate in (problem.label, problem.own_label) if candidate not in holders),
                         problem.tagged_label)
            if label in holders:
                raise ValueError(f"problem {problem.own_label!r} ({_described(problem)}) is the same matrix under "
                                 f"the same name as a problem already labelled {label!r}; give it once")
            holders[label], by_problem[content] = content, label
        labelled.append(problem if label == problem.label else problem.relabelled(label))
    return tuple(labelled)


def _described(problem: ProblemSpec) -> str:
    return f"file {problem.options['path']}" if problem.name == FILE_PROBLEM else problem.name


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
        identity = record["identity"]
        agent, problem = identity["agent"], identity["problem"]
        # The hyperparameters as given (the identity holds them with the defaults filled in).
        return cls(AgentSpec(agent["name"], dict(record["hyperparameters"]), str(record.get("agent", ""))),
                   ProblemSpec(problem["name"], problem["n_arms"], problem["problem_seed"], dict(problem["options"])),
                   identity["seed"], identity["horizon"], identity["shuffle_arms"], tuple(identity["checkpoints"]))

    @property
    def key(self) -> str:
        """File stem of the unit, readable names plus a digest of the identity."""
        # The problem's own label: a unit's file name never depends on the folder it is run into.
        return f"{safe_name(self.agent.name)}__{safe_name(self.problem.own_label)}__seed{self.seed}__{self.digest[:16]}"

    def run(self) -> dict[str, Any]:
        """Play the run; regret at every checkpoint and the recommendations in the problem's own labels."""
        from dueling_gym.experiments.simulate import simulate

        problem, run_problem, permutation = unit_problem(self)
        agent = self.agent.build(problem.n_arms, self.horizon)
        result = simulate(agent, run_problem, self.horizon, seed=self.seed, checkpoints=list(self.checkpoints))
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
    permutation = arm_permutation(unit.seed, problem.n_arms, unit.shuffle_arms)
    run_problem = PreferenceMatrix(problem.matrix[np.ix_(permutation, permutation)], name=problem.name)
    return problem, run_problem, permutation


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


def resolve_checkpoints(horizon: int, checkpoints: Sequence[int] | None) -> tuple[int, ...]:
    """The checkpoints a run records: the given ones (validated, sorted, horizon added) or the default."""
    from dueling_gym.experiments.simulate import log_checkpoints

    if checkpoints is None:
        return tuple(int(c) for c in log_checkpoints(horizon))
    values = sorted({check_integer("checkpoint", c, minimum=1, maximum=horizon) for c in checkpoints})
    if not values or values[-1] != horizon:
        values.append(horizon)
    return tuple(values)


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
