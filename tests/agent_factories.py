"""Building any registered agent on a small problem, and driving it with reproducible outcomes.

Used by the tests that must cover every registered agent (input checks, pickling), so that an
agent registered later is covered without touching them.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from dueling_gym.agents.registry import AGENT_REGISTRY, agent_kind, make_agent
from dueling_gym.problems import five_edge_example

N_ARMS = 5
#: Horizon passed to agents that take one (explore-then-exploit agents, REX3's gamma).
HORIZON = 2000
#: A 5-armed problem with a Condorcet winner (arm 0) and one cycle among the others.
PREFERENCES = np.array([
    [0.50, 0.60, 0.65, 0.70, 0.80],
    [0.40, 0.50, 0.70, 0.30, 0.60],
    [0.35, 0.30, 0.50, 0.65, 0.55],
    [0.30, 0.70, 0.35, 0.50, 0.60],
    [0.20, 0.40, 0.45, 0.40, 0.50],
])
#: Bernoulli means of the bandit arms.
MEANS = np.array([0.2, 0.5, 0.45, 0.7, 0.1])
COMBINATORIAL_PROBLEM = five_edge_example()


def build_agent(name: str, seed: int = 0):
    """A fresh agent ``name`` on :data:`PREFERENCES` / :data:`MEANS` / the five-edge example."""
    cls = AGENT_REGISTRY[name]
    if agent_kind(cls) == "combinatorial":
        return make_agent(name, COMBINATORIAL_PROBLEM, seed=seed)
    parameters = inspect.signature(cls.__init__).parameters
    extra = {"horizon": HORIZON} if "horizon" in parameters else {}
    missing = [
        parameter for parameter, spec in parameters.items()
        if spec.kind == spec.KEYWORD_ONLY and spec.default is spec.empty and parameter not in extra
    ]
    if missing:
        pytest.fail(f"{name} needs {missing} to be built; teach tests/agent_factories.py how to choose them")
    return make_agent(name, N_ARMS, seed=seed, **extra)


def drive(agent, steps: int, outcome_seed: int) -> list[tuple]:
    """Play up to ``steps`` rounds with outcomes drawn from ``outcome_seed``; return what happened.

    Each entry holds the action, its outcome (or reward), the recommendation and ``done``; a
    pure-exploration agent that stops ends the list.  Outcomes depend only on the seed and the
    actions, so two agents in the same state produce the same list.
    """
    rng = np.random.default_rng(outcome_seed)
    kind = agent_kind(type(agent))
    trace = []
    for _ in range(steps):
        if kind == "bandit":
            arm = agent.act()
            reward = float(rng.random() < MEANS[arm])
            agent.observe(arm, reward)
            trace.append((arm, reward, agent.recommend()))
            continue
        if agent.done and kind == "combinatorial":
            break
        first, second = agent.act()
        matrix = COMBINATORIAL_PROBLEM.preferences if kind == "combinatorial" else PREFERENCES
        first_won = bool(rng.random() < matrix[first, second])
        agent.observe((first, second), first_won)
        recommendation = agent.recommend()
        trace.append(((first, second), first_won, np.asarray(recommendation).tolist(), agent.done))
    return trace
