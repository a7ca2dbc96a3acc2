"""The registration tables (agents, environments, trainer commands) agree with the code, both ways.

Each kind of addition is registered by one explicit table, name -> ``"module:attribute"``,
imported on first use: :data:`~dueling_gym.agents.registry.LIBRARY_AGENTS`,
``dueling_gym._ENVIRONMENTS`` (Gymnasium entry points) with ``dueling_gym.envs._LAZY``, and
:data:`~dueling_gym.experiments.learning.TRAINERS`.  These tests import every module of each
package and check that what the modules declare is what the tables name.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
from pkgutil import resolve_name

import gymnasium as gym
import pytest

import dueling_gym
import dueling_gym.agents as agents_package
import dueling_gym.envs as envs_package
import dueling_gym.experiments.learning as learning_package
from dueling_gym.agents import AGENT_REGISTRY, DuelingAgent, register_agent
from dueling_gym.agents.registry import LIBRARY_AGENTS, AgentRegistry
from dueling_gym.experiments.learning import TRAINERS, train_commands


def _modules(package) -> list[str]:
    return [info.name for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]


def test_every_library_agent_is_in_the_table_and_every_entry_registers_its_class():
    for module in _modules(agents_package):
        importlib.import_module(module)
    registered = {name: f"{cls.__module__}:{cls.__name__}" for name, cls in AGENT_REGISTRY._classes.items()
                  if cls.__module__.startswith("dueling_gym.agents.")}
    assert registered == LIBRARY_AGENTS
    for name, target in LIBRARY_AGENTS.items():
        assert resolve_name(target) is AGENT_REGISTRY[name] and AGENT_REGISTRY[name].name == name
    assert len(LIBRARY_AGENTS) >= 52 and all(name == name.lower() for name in LIBRARY_AGENTS)


def test_every_table_class_is_exported_by_the_package_and_its_room():
    exported = set(agents_package.__all__)
    for target in LIBRARY_AGENTS.values():
        class_name = target.partition(":")[2]
        assert class_name in exported and getattr(agents_package, class_name) is resolve_name(target)
    rmed = importlib.import_module("dueling_gym.agents.rmed")
    assert set(rmed.__all__) == set(rmed._CLASSES) == {"RMED1", "RMED2", "RMED2FH", "CWRMED", "ECWRMED"}
    assert all(getattr(rmed, name) is getattr(agents_package, name) for name in rmed.__all__)


def test_a_library_module_cannot_register_a_name_the_table_lacks():
    class Undeclared(DuelingAgent):
        pass

    Undeclared.__module__ = "dueling_gym.agents.undeclared"
    with pytest.raises(ValueError, match='add "undeclared_agent": "dueling_gym.agents.undeclared:Undeclared"'):
        register_agent("undeclared_agent")(Undeclared)
    assert "undeclared_agent" not in AGENT_REGISTRY


def test_a_declared_name_belongs_to_its_declared_class_only():
    registry = AgentRegistry({"mine": "my_package.agents:Mine"})

    class Other(DuelingAgent):
        pass

    Other.__module__ = "my_package.agents"
    with pytest.raises(ValueError, match="declared as my_package.agents:Mine, not Other"):
        registry.register("mine", Other)
    Other.__module__ = "elsewhere"
    with pytest.raises(ValueError, match="already taken by an agent of my_package.agents"):
        registry.register("mine", Other)
    with pytest.raises(ValueError, match="'package.module:ClassName'"):
        AgentRegistry({"bad": "no_colon"})


def test_an_external_agent_registers_and_builds_by_name_and_by_import_path(tmp_path):
    (tmp_path / "my_registry_agents.py").write_text(
        "from dueling_gym.agents import DuelingAgent, register_agent\n\n"
        "@register_agent('my_registry_agent', target='-')\n"
        "class MyAgent(DuelingAgent):\n"
        "    def __init__(self, n_arms, *, seed=None, rounds=3):\n"
        "        self.rounds = rounds\n"
        "        super().__init__(n_arms, seed=seed)\n"
        "    def _reset_state(self):\n        pass\n"
        "    def act(self):\n        return 0, 1\n"
        "    def observe(self, action, first_won):\n        pass\n"
        "    def recommend(self):\n        return 0\n",
        encoding="utf-8")
    code = ("import my_registry_agents\n"
            "from dueling_gym.agents import make_agent, list_agents\n"
            "a = make_agent('my_registry_agent', 3, seed=0, rounds=5)\n"
            "b = make_agent('my_registry_agents:MyAgent', 3, seed=0)\n"
            "print(type(a).__name__, a.rounds, type(b).__name__, 'my_registry_agent' in list_agents())\n")
    printed = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                             check=True).stdout
    assert printed.split() == ["MyAgent", "5", "MyAgent", "True"]


def _declares_train_commands(path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "TRAIN_COMMANDS" for t in node.targets)
               for node in tree.body)


def test_every_train_command_is_in_the_table_and_every_entry_names_its_module():
    from pathlib import Path

    folder = Path(learning_package.__file__).parent
    declared = {}
    for path in sorted(folder.glob("*.py")):
        if _declares_train_commands(path):
            module = importlib.import_module(f"{learning_package.__name__}.{path.stem}")
            declared.update({command.name: f"{module.__name__}:TRAIN_COMMANDS" for command in module.TRAIN_COMMANDS})
    assert declared == TRAINERS
    assert list(train_commands()) == list(TRAINERS)
    assert all(command.name == name and module is sys.modules[TRAINERS[name].partition(":")[0]]
               for name, (module, command) in train_commands().items())


def test_every_environment_entry_point_and_lazy_class_resolves():
    for env_id, spec in dueling_gym._ENVIRONMENTS.items():
        assert callable(resolve_name(spec["entry_point"])), env_id
        if "vector_entry_point" in spec:
            assert inspect.isclass(resolve_name(spec["vector_entry_point"])), env_id
        assert gym.spec(env_id).entry_point == spec["entry_point"]
    for name, target in envs_package._LAZY.items():
        assert target.partition(":")[2] == name and resolve_name(target) is getattr(envs_package, name)


def test_every_environment_class_is_exported_by_the_envs_package():
    classes = set()
    for module in _modules(envs_package):
        for name, value in vars(importlib.import_module(module)).items():
            if (inspect.isclass(value) and value.__module__ == module and issubclass(value, gym.Env)
                    and not name.startswith("_")):
                classes.add(name)
    assert classes <= set(envs_package.__all__)
    made = {type(gym.make(env_id).unwrapped).__name__ for env_id in dueling_gym.ENV_IDS}
    assert made <= classes


def test_importing_the_agents_package_imports_no_agent_module():
    code = ("import sys, dueling_gym.agents as a; a.AGENT_REGISTRY.__contains__('rucb'); "
            "print(sorted(m for m in sys.modules if m.startswith('dueling_gym.agents.')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    agent_modules = {target.partition(":")[0] for target in LIBRARY_AGENTS.values()}
    assert "dueling_gym.agents.registry" in loaded and not agent_modules & set(ast.literal_eval(loaded))
