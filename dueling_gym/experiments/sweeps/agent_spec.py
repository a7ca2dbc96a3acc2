"""Agent specifications: a registered agent (or one named by import path) with its hyperparameters.

An :class:`AgentSpec` is checked against the registry when it is constructed, its
hyperparameters are canonicalised (:mod:`~dueling_gym.experiments.sweeps.settings`) and
:meth:`AgentSpec.resolved_hyperparameters` fills in the defaults a unit's identity records.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any

from dueling_gym.experiments.sweeps.settings import canonical_value, check_json_values, parse_options
from dueling_gym.validation import echo

__all__ = ["AgentSpec", "keyword_defaults"]


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
        check_json_values(self.hyperparameters, f"hyperparameters of agent {echo(self.name)}")
        for reserved in ("seed", "n_arms"):
            if reserved in self.hyperparameters:
                raise ValueError(f"agent {echo(name)}: {reserved!r} is set by the sweep, not as a hyperparameter")
        object.__setattr__(self, "name", name)
        if not self.label:  # as typed: alpha=2 stays alpha=2 in tables, though it runs as 2.0
            suffix = ",".join(f"{key}={value}" for key, value in sorted(self.hyperparameters.items()))
            object.__setattr__(self, "label", f"{name}:{suffix}" if suffix else name)
        parameters = inspect.signature(cls.__init__).parameters
        object.__setattr__(self, "hyperparameters", {
            key: canonical_value(value, parameters[key] if key in parameters else None, f"{key} of agent {echo(name)}")
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
        return cls(name.strip(), parse_options(rest, f"agent {text!r}"))

    @property
    def agent_class(self) -> type:
        """The agent's class (registered, or imported by path)."""
        from dueling_gym.agents import agent_class

        return agent_class(self.name)

    def resolved_hyperparameters(self, horizon: int) -> dict[str, Any]:
        """Every hyperparameter the agent runs with: its defaults updated with the given ones."""
        defaults, takes_horizon = keyword_defaults(self.agent_class)
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
def keyword_defaults(cls: type) -> tuple[dict[str, Any], bool]:
    """The keyword defaults of ``cls``'s constructor (``seed`` aside) and whether it takes a ``horizon``.

    Read once per class: every unit's identity and every loaded unit file resolve hyperparameters.
    """
    parameters = inspect.signature(cls.__init__).parameters
    defaults = {key: spec.default for key, spec in parameters.items()
                if spec.kind == spec.KEYWORD_ONLY and key != "seed" and spec.default is not spec.empty}
    return defaults, "horizon" in parameters
