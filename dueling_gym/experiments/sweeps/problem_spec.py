"""Problem specifications: a shipped, generated or saved problem, canonicalised, and its labels.

A :class:`ProblemSpec` resolves aliases to the canonical name and drops generator options equal
to their defaults, so one problem has one identity (its canonical form and the SHA-256 of its
matrix).  :func:`with_distinct_labels` gives problems that share a name distinct labels, so a
table never merges the runs of two problems.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from dueling_gym.experiments.runs.work_units import canonical_json
from dueling_gym.experiments.sweeps.settings import canonical_value, check_json_values, parse_options
from dueling_gym.problems.generators import GENERATORS
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.validation import check_integer, check_number, echo

__all__ = ["ProblemSpec", "FILE_PROBLEM", "with_distinct_labels"]


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
        check_json_values(self.options, f"options of problem {echo(self.name)}")
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
            canonical = {key: canonical_value(value, parameters[key], f"{key} of problem {echo(name)}")
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
        values = parse_options(rest, f"problem {text!r}")
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

