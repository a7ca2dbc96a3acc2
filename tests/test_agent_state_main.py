"""A kernel agent's state class declared in ``__main__`` is refused where it is declared.

Numba hands a state back to Python by rebuilding its class from a pickle, and a class of
``__main__`` is pickled by value: the copy has no fields, so building a state would fail later
with an unrelated error.  The declaration says so instead.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from dueling_gym.agents import AgentState


def test_a_state_class_of_main_is_a_type_error_naming_the_fix():
    with pytest.raises(TypeError, match="MainState is defined in __main__.*importable module"):
        type("MainState", (AgentState,), {"__module__": "__main__"}, fields=["wins", "t"])


def test_a_script_that_declares_a_state_stops_at_the_class_statement(tmp_path):
    script = tmp_path / "my_agent_script.py"
    script.write_text("from dueling_gym.agents import AgentState\n\n"
                      "class ScriptState(AgentState, fields=['t']):\n"
                      "    pass\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "TypeError: ScriptState is defined in __main__ (a script run directly): Numba cannot build the states of "
        "such a class; define the agent and its state in an importable module (e.g. my_agents.py next to the "
        "script) and import it from there")


def test_the_same_class_in_an_imported_module_builds(tmp_path):
    (tmp_path / "my_state_module.py").write_text("from dueling_gym.agents import AgentState\n\n"
                                                 "class ModuleState(AgentState, fields=['t']):\n"
                                                 "    pass\n", encoding="utf-8")
    code = "from my_state_module import ModuleState\nprint(type(ModuleState(t=3)).__name__)\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "ModuleState"
