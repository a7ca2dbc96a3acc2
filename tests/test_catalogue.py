"""Every registered agent has a role and a target, consistent with what the agent itself declares."""

from __future__ import annotations

import pytest

from dueling_gym.agents import AGENT_REGISTRY
from dueling_gym.agents.catalogue import agent_role, agent_target, regret_minimisers
from dueling_gym.agents.identification import IdentificationMixin
from dueling_gym.agents.registry import TARGETS
from dueling_gym.cli import main


def test_the_modules_of_the_agent_table_match_the_registered_classes():
    """``dueling_gym.agents`` imports agent modules on first use; which module registers which
    name it reads from ``LIBRARY_AGENTS``, and importing them all agrees."""
    import dueling_gym.agents as agents_package
    from dueling_gym.agents.registry import LIBRARY_AGENTS

    AGENT_REGISTRY.load_all()
    read = {}
    for registry_name, target in LIBRARY_AGENTS.items():
        module, _, class_name = target.partition(":")
        cls = getattr(agents_package, class_name)
        assert cls.__module__ == module, class_name
        read[registry_name] = cls
    library = {name: cls for name, cls in AGENT_REGISTRY.items() if cls.__module__.startswith("dueling_gym.agents.")}
    assert read == library
    assert len(library) >= 52
    exported = set(agents_package.__all__)
    assert {cls.__name__ for cls in library.values()} <= exported
    assert {"CombinatorialAgent", "PolicyAgent", "PaperLink", "make_agent"} <= exported
    assert exported - {"AGENT_REGISTRY", "make_agent", "list_agents", "register_agent"} <= set(dir(agents_package))


def test_another_package_cannot_take_a_library_name_even_before_any_lookup():
    import subprocess
    import sys

    code = ("from dueling_gym.agents import register_agent, DuelingAgent\n"
            "class Mine(DuelingAgent):\n    pass\n"
            "Mine.__module__ = 'my_package.agents'\n"
            "try:\n    register_agent('rucb')(Mine)\nexcept ValueError as error:\n    print(error)\n")
    printed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "agent name 'rucb' is already taken by an agent of dueling_gym.agents.rucb" in printed


def test_one_agent_imports_its_own_module_only():
    import subprocess
    import sys

    code = ("import sys; from dueling_gym.agents import make_agent; make_agent('rucb', 3, seed=0); "
            "print(sorted(m for m in sys.modules if m.startswith('dueling_gym.agents.') and 'kernels' not in m))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "dueling_gym.agents.rucb" in loaded
    assert "dueling_gym.agents.ccb" not in loaded and "dueling_gym.agents.cpe" not in loaded


def test_every_registered_agent_declares_its_target():
    AGENT_REGISTRY.load_all()
    targets = {name: agent_target(name) for name in AGENT_REGISTRY}
    assert set(targets.values()) <= set(TARGETS) - {"?"}, {k: v for k, v in targets.items() if v == "?"}
    # A few declarations checked against the papers' definitions of their winners.
    assert (targets["ccb"], targets["rucb"], targets["savage_borda"], targets["sparring"], targets["kl_ucb"],
            targets["random"]) == ("copeland", "condorcet", "borda", "utility", "best mean", "-")
    assert set(regret_minimisers()) == {name for name in AGENT_REGISTRY if agent_role(name) == "regret minimiser"}


def test_a_target_is_declared_once_and_checked():
    from dueling_gym.agents import DuelingAgent, register_agent

    class Declared(DuelingAgent):
        target = "condorcet"

    with pytest.raises(ValueError, match="disagrees with the class's target 'condorcet'"):
        register_agent("test_disagreeing_target", target="copeland")(Declared)
    with pytest.raises(ValueError, match="target must be one of"):
        register_agent("test_unknown_target", target="kemeny")


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


def test_every_agent_names_its_paper_in_the_agents_table():
    """The description column (each class's first docstring line) names authors and year, or says
    the agent is the library's own."""
    import inspect
    import re

    from dueling_gym.agents import AGENT_REGISTRY, list_agents

    for name in list_agents():
        first = inspect.getdoc(AGENT_REGISTRY[name]).splitlines()[0]
        assert re.search(r"(19|20)\d\d", first) or "dueling-gym's own" in first, (name, first)
