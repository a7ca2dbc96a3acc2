"""Every registered agent has a role and a target, consistent with what the agent itself declares."""

from __future__ import annotations

import pytest

from dueling_gym.agents import AGENT_REGISTRY
from dueling_gym.agents.catalogue import AGENT_TARGETS, agent_role, agent_target
from dueling_gym.agents.identification import IdentificationMixin
from dueling_gym.cli import main


def test_every_registered_agent_is_catalogued():
    assert set(AGENT_TARGETS) == set(AGENT_REGISTRY)
    assert set(AGENT_TARGETS.values()) <= {"condorcet", "copeland", "borda", "utility", "best mean", "-"}


@pytest.mark.parametrize("name", sorted(AGENT_REGISTRY))
def test_role_and_target_agree_with_the_class(name):
    cls = AGENT_REGISTRY[name]
    role = agent_role(name)
    assert role in {"regret minimiser", "identification", "bandit", "combinatorial"}
    if issubclass(cls, IdentificationMixin):
        assert role == "identification"
    declared = cls.__dict__.get("target", None)
    for base in cls.__mro__:  # the class's own declaration, unless it is an instance property
        if "target" in base.__dict__:
            declared = base.__dict__["target"]
            break
    if isinstance(declared, str) and role in {"identification", "combinatorial"}:
        assert agent_target(name) == declared


def test_new_agents_and_the_cli_listing(capsys):
    assert (agent_role("versatile_db"), agent_target("versatile_db")) == ("regret minimiser", "condorcet")
    assert (agent_role("opt_max"), agent_role("btm_pac"), agent_role("savage")) == (
        "identification", "identification", "regret minimiser")
    assert main(["agents", "--kind", "dueling"]) == 0
    rows = {line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")[1:-1]]
            for line in capsys.readouterr().out.splitlines() if line.startswith("| ")}
    assert rows["name"][:3] == ["name", "kind", "target"]
    assert rows["opt_max"][1:3] == ["identification", "condorcet"]
    assert rows["successive_elimination_borda"][1:3] == ["identification", "borda"]
    with pytest.raises(ValueError, match="unknown agent"):
        agent_role("nope")
