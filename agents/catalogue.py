"""What each registered agent is for: its role and the winner notion it targets.

Both facts live on the agent classes (the role follows from the class's family and its
``pure_exploration`` / ``explore_then_exploit`` flags; the target is declared with
``register_agent(name, target=...)``); ``dueling-gym agents``, the README's table
(:func:`agent_table_markdown`, also ``python -m dueling_gym.agents.catalogue``), the
documentation's algorithm index and the presets read them through this module.  Roles:

* ``"regret minimiser"``: a dueling agent that runs for ever and is judged by its regret
  (explore-then-exploit agents such as SAVAGE included);
* ``"identification"``: a dueling agent that stops and answers (``pure_exploration``);
* ``"bandit"``: a cardinal multi-armed bandit learner (``act() -> arm``);
* ``"combinatorial"``: a pure-exploration agent over matchings of a bipartite problem.

Targets: ``"condorcet"``, ``"copeland"``, ``"borda"``; ``"utility"`` for the reductions to
cardinal bandits whose guarantees assume a utility-based (linear link) model, where the best arm
is the Condorcet winner; ``"best mean"`` for the bandit learners; ``"-"`` for uniform random play.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable

from dueling_gym.agents.base import DuelingAgent
from dueling_gym.agents.registry import AGENT_REGISTRY, agent_kind, declared_target, list_agents

__all__ = ["ROLES", "agent_role", "agent_summary", "agent_table_markdown", "agent_target", "regret_minimisers"]

#: The roles in the order the agent table lists them.
ROLES = ("regret minimiser", "identification", "combinatorial", "bandit")
#: A reST role with its target (``:class:`~a.B```, ``:mod:`a.b```): Markdown shows the target.
_REST_ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")


def agent_role(name: str) -> str:
    """``"regret minimiser"``, ``"identification"``, ``"bandit"`` or ``"combinatorial"``, from the
    agent class: its family, ``pure_exploration`` and ``explore_then_exploit``."""
    cls = _registered(name)
    kind = agent_kind(cls)
    if kind != "dueling":
        return kind
    assert issubclass(cls, DuelingAgent)
    if cls.pure_exploration and not cls.explore_then_exploit:
        return "identification"
    return "regret minimiser"


def agent_target(name: str) -> str:
    """The winner notion agent ``name`` targets, as its class declares it when registered
    (``register_agent(name, target=...)``, or the class's ``target``; ``"?"`` when it declares none)."""
    _registered(name)  # loads the agent's module, which registers it
    return declared_target(name)


def regret_minimisers(arm_counts: Iterable[int] = ()) -> list[str]:
    """The registered dueling agents judged by their regret, sorted by name; with ``arm_counts``,
    those whose class plays every one of these numbers of arms with its default hyperparameters
    (:meth:`~dueling_gym.agents.DuelingAgent.plays_arms`)."""
    counts = tuple(arm_counts)
    return [name for name in list_agents("dueling") if agent_role(name) == "regret minimiser"
            and all(AGENT_REGISTRY[name].plays_arms(count) for count in counts)]


def _registered(name: str) -> type:
    key = str(name).lower()
    if key not in AGENT_REGISTRY:
        raise ValueError(f"unknown agent {name!r}")
    return AGENT_REGISTRY[key]


def agent_summary(name: str) -> str:
    """The first line of agent ``name``'s class docstring (the algorithm and its paper, as cited
    there), in Markdown: a reST role becomes a code span of its target (of the target's last
    component after a ``~``), and double backquotes become single ones."""
    doc = inspect.getdoc(_registered(name)) or ""
    line = _REST_ROLE.sub(_role_as_code, doc.partition("\n")[0].strip())
    return line.replace("``", "`").replace("|", "\\|")


def _role_as_code(match: re.Match[str]) -> str:
    # ``~`` asks reST to show the last component of the dotted path only.
    target = match.group(2).rsplit(".", 1)[-1] if match.group(1) else match.group(2)
    return f"``{target}``"


def agent_table_markdown() -> str:
    """The table of every registered agent in Markdown, as the README shows it.

    One row per agent of the library (``dueling_gym.agents``; agents other packages register are
    left out), grouped by role (:data:`ROLES` order) and sorted by name within a role:
    name, role, target, the class's summary (:func:`agent_summary`) and the paper its class
    declares (``paper``: the venue, linked to the publisher's page where one is declared; ``-``
    for the library's own agents).  Every cell is read from the agent classes, so the README's
    table is regenerated, never edited: print it with ``python -m dueling_gym.agents.catalogue``.

    Returns
    -------
    str
        The header, the separator and one row per agent, each line ending in a newline.
    """
    AGENT_REGISTRY.load_all()
    library = [key for key, cls in AGENT_REGISTRY.items() if cls.__module__.startswith("dueling_gym.agents.")]
    names = sorted(library, key=lambda key: (ROLES.index(agent_role(key)), key))
    lines = ["| name | kind | target | algorithm | paper |", "|---|---|---|---|---|"]
    for name in names:
        links = AGENT_REGISTRY[name].paper
        paper = "; ".join(f"[{link.venue}]({link.url})" if link.url else link.venue for link in links) or "-"
        lines.append(f"| `{name}` | {agent_role(name)} | {agent_target(name)} | {agent_summary(name)} | {paper} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(agent_table_markdown(), end="")
