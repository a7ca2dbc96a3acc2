"""The "when to use it" summary and the runnable example of each algorithm page.

Both are read off the agent classes, never written by hand per agent: the role and the winner
notion come from :mod:`dueling_gym.agents.catalogue`, whether the horizon is needed from the
constructor's signature, the guarantee from the class's ``guarantee`` attribute (what its paper
proves, stated on the class), the cost from ``data/duels_per_second.csv`` and the sentence of the
docstrings that gives the cost per step (the class's own docstring first, then its module's).
The example is a complete script; :func:`example_code` with a small ``horizon`` is what the
tests run for every registered agent.
"""

from __future__ import annotations

import importlib
import inspect
import re

from dueling_gym.agents import AGENT_REGISTRY
from dueling_gym.agents.catalogue import agent_role, agent_target

#: Horizon of the examples shown on the pages (a few seconds for the slowest agent).
EXAMPLE_HORIZON = 10_000
#: Duels an identification example may spend before it is cut.
EXAMPLE_SAMPLE_CAP = 200_000

#: The problem of each example: a matrix with a Condorcet winner for the agents that assume one,
#: one without for the others (both have 5 arms, which every dueling agent plays, the learned
#: policy included).
CONDORCET_PROBLEM = "mslr5-condorcet"
NO_CONDORCET_PROBLEM = "mslr5-noncondorcet"

#: What each winner notion asks of the matrix, and the regret the agent is judged by.
_TARGETS = {
    "condorcet": ("yes: its guarantees assume a Condorcet winner; on a matrix without one it keeps "
                  "paying linear Copeland regret", "Condorcet regret (the Copeland regret when a Condorcet "
                  "winner exists)"),
    "utility": ("yes: its guarantees assume a utility-based (linear link) model, whose best arm is the "
                "Condorcet winner; on other matrices it has none", "regret against the best arm of the "
                "utility model (the Condorcet winner)"),
    "copeland": ("no: a Copeland winner always exists", "Copeland regret"),
    "borda": ("no: a Borda winner always exists", "Borda regret"),
    "best mean": ("not a dueling agent: it plays cardinal arms", "regret against the arm of the highest mean"),
    "-": ("no", "none: uniform play, the scale of the other agents"),
}

_PER_STEP = re.compile(r"\b(?:per step|cost per step)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.;])\s+(?=[A-Z*`(])")


def _sentences(text: str) -> list[str]:
    flat = " ".join(line.strip() for line in text.splitlines() if not re.fullmatch(r"\s*-{3,}\s*", line))
    flat = re.sub(r"\b(Notes|Parameters|Attributes|References|Returns)\s+(?=[A-Z`])", "", flat)
    return [sentence.strip(" *") for sentence in _SENTENCE.split(flat) if sentence.strip()]


def _docstring_sentence(cls: type, pattern: re.Pattern[str]) -> str:
    """The first sentence of the class docstring (then its module's) that ``pattern`` finds."""
    module = importlib.import_module(cls.__module__)
    for text in (inspect.getdoc(cls) or "", inspect.getdoc(module) or ""):
        for sentence in _sentences(text.split("\nParameters\n")[0] + "\n" + _notes(text)):
            if (pattern.search(sentence) and len(sentence) < 400 and "**" not in sentence
                    and sentence[:1].isupper() and not _names_another_class(sentence, cls)):
                return sentence.rstrip(";.") + "."
    return ""


def _names_another_class(sentence: str, cls: type) -> bool:
    """Whether ``sentence`` (of a module docstring shared by several agents) is about another class."""
    siblings = {other.__name__ for other in AGENT_REGISTRY.values() if other.__module__ == cls.__module__}
    return any(re.search(rf"\b{re.escape(name)}\b", sentence) for name in siblings - {cls.__name__})


def _notes(docstring: str) -> str:
    match = re.search(r"^Notes\n-{3,}\n(.*?)(?=^\S[^\n]*\n-{3,}\n|\Z)", docstring, re.S | re.M)
    return match.group(1) if match else ""


def guarantee(name: str) -> str:
    """What the paper of agent ``name`` proves: its class's ``guarantee``, or ``""`` when it declares none."""
    stated = getattr(AGENT_REGISTRY[name], "guarantee", "")
    return stated.strip() if isinstance(stated, str) else ""


def horizon_use(cls: type) -> str:
    """Whether the agent needs the horizon ``T``: read from its constructor's ``horizon`` keyword."""
    parameter = inspect.signature(cls.__init__).parameters.get("horizon")
    if parameter is None:
        return "anytime (no horizon)"
    if parameter.default is parameter.empty:
        return "needs the horizon `T` (`horizon=` is required)"
    return "anytime, or given `horizon=T` (the measurements below give it `T`)"


def when_to_use(names: list[str], speed: dict[str, dict[str, str]]) -> list[str]:
    """The "When to use it" section of a page (MyST lines): one table row per agent of ``names``.

    ``speed``: rows of ``data/duels_per_second.csv`` by agent, for the cost column.
    """
    lines = ["## When to use it", "",
             "| agent | kind | needs a Condorcet winner | horizon | judged by | guarantee (its paper) | cost |",
             "|---|---|---|---|---|---|---|"]
    for name in names:
        cls = AGENT_REGISTRY[name]
        role, target = agent_role(name), agent_target(name)
        needs, notion = _TARGETS.get(target, ("not declared", "not declared"))
        if role == "identification":
            notion = f"its answer (the {target} winner) and the duels it takes to stop"
        elif role == "combinatorial":
            notion = f"its answer (the {target} matching) and the duels it takes to stop"
        horizon = horizon_use(cls) if role == "regret minimiser" else "stops by itself"
        stated = guarantee(name) or "none declared by the agent; see its paper"
        lines.append(f"| `{name}` | {role} | {needs} | {horizon} | {notion} | {_cell(stated)} | "
                     f"{_cell(_cost(name, cls, speed))} |")
    lines.append("")
    return lines


def _cost(name: str, cls: type, speed: dict[str, dict[str, str]]) -> str:
    per_step = _docstring_sentence(cls, _PER_STEP)
    row = speed.get(name)
    measured = (f"{float(row['fused_duels_per_s']):,.0f} duels/s fused, "
                f"{float(row['act_observe_duels_per_s']):,.0f} through act/observe (Sushi, K = 16)") if row else ""
    return " ".join(part for part in (per_step, measured) if part) or "not measured"


def _cell(text: str) -> str:
    text = re.sub(r":(?:class|func|meth|attr|mod|data):`~?([^`]+)`", lambda m: f"`{m.group(1).split('.')[-1]}`", text)
    return " ".join(text.replace("``", "`").split()).replace("|", "\\|")


# --------------------------------------------------------------------------- the example


def example_code(name: str, horizon: int = EXAMPLE_HORIZON) -> str:
    """A complete script that builds agent ``name`` and runs it for ``horizon`` duels (or samples).

    Regret minimisers run :func:`~dueling_gym.experiments.simulate` on a shipped matrix (one with
    a Condorcet winner when the agent assumes one); identification and combinatorial agents run
    :func:`~dueling_gym.experiments.run_pure_exploration`, cut at ``horizon`` samples; bandit
    learners play Bernoulli arms in an ``act``/``observe`` loop.
    """
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1:
        raise ValueError(f"horizon must be a positive int, got {horizon!r}")
    role, target = agent_role(name), agent_target(name)
    problem = CONDORCET_PROBLEM if target in ("condorcet", "utility", "-") else NO_CONDORCET_PROBLEM
    if role == "bandit":
        return _bandit_example(name, horizon)
    if role == "combinatorial":
        return _combinatorial_example(name, horizon)
    if role == "identification":
        return (
            "from dueling_gym.agents import make_agent\n"
            "from dueling_gym.experiments import run_pure_exploration\n"
            "from dueling_gym.problems import load_problem\n\n"
            f"problem = load_problem({problem!r})\n"
            f"agent = make_agent({name!r}, problem.n_arms, seed=0)\n"
            f"result = run_pure_exploration(agent, problem, seed=1, max_samples={horizon:_})\n"
            "print(f\"answer {result.recommendation} after {result.samples:,} duels; \"\n"
            "      f\"stopped by itself: {result.stopped}; correct: {result.correct}\")\n"
        )
    extra = f", horizon={horizon:_}" if "horizon" in inspect.signature(AGENT_REGISTRY[name].__init__).parameters else ""
    return (
        "from dueling_gym.agents import make_agent\n"
        "from dueling_gym.experiments import simulate\n"
        "from dueling_gym.problems import load_problem\n\n"
        f"problem = load_problem({problem!r})\n"
        f"agent = make_agent({name!r}, problem.n_arms, seed=0{extra})\n"
        f"result = simulate(agent, problem, horizon={horizon:_}, seed=1)\n"
        "regret = result.cumulative_regret[\"copeland_komiyama\"][-1]\n"
        "print(f\"Copeland regret after {result.checkpoints[-1]:,} duels: {regret:,.1f}; \"\n"
        "      f\"recommends arm {agent.recommend()}\")\n"
    )


def _bandit_example(name: str, horizon: int) -> str:
    return (
        "import numpy as np\n\n"
        "from dueling_gym.agents import make_agent\n\n"
        "means = np.array([0.3, 0.5, 0.7])  # Bernoulli arms\n"
        "rng = np.random.default_rng(1)\n"
        f"agent = make_agent({name!r}, len(means), seed=0)\n"
        f"for t in range({horizon:_}):\n"
        "    arm = agent.act()\n"
        "    agent.observe(arm, float(rng.random() < means[arm]))\n"
        "print(f\"recommends arm {agent.recommend()} (the best is {means.argmax()})\")\n"
    )


def _combinatorial_example(name: str, horizon: int) -> str:
    cls = AGENT_REGISTRY[name]
    return (
        "from dueling_gym import agents\n"
        "from dueling_gym.experiments import run_pure_exploration\n"
        "from dueling_gym.problems import five_edge_example\n\n"
        "problem = five_edge_example()  # Chen et al. (ICML 2020), Figures 1-4\n"
        f"agent = agents.{cls.__name__}(problem, seed=0)\n"
        f"result = run_pure_exploration(agent, problem, seed=1, max_samples={horizon:_})\n"
        "print(f\"matching {result.recommendation} after {result.samples:,} duels; \"\n"
        "      f\"stopped by itself: {result.stopped}; correct: {result.correct}\")\n"
    )


def example_section(names: list[str]) -> list[str]:
    """The "Example" section of a page (MyST lines): a script for its first agent, the names of the others."""
    first = names[0]
    role = agent_role(first)
    horizon = EXAMPLE_SAMPLE_CAP if role in ("identification", "combinatorial") else EXAMPLE_HORIZON
    lines = ["## Example", "", "```python", example_code(first, horizon).rstrip("\n"), "```", ""]
    others = [_agent_line(name, horizon) for name in names[1:]]
    if others:
        lines += ["The other agents of this page run the same script with their own `agent = ...` line:", "",
                  "```python", *others, "```", ""]
    return lines


def _agent_line(name: str, horizon: int) -> str:
    return next(line for line in example_code(name, horizon).splitlines() if line.startswith("agent = "))
