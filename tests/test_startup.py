"""Start-up: a light import, and nothing compiled twice on one machine (Numba's on-disk cache).

Times are not asserted here (they live in ``benchmarks/startup.py``); what is checked is *what*
happens: which modules an import loads, and whether a second process compiles anything.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numba", "scipy", "matplotlib", "torch", "stable_baselines3", "pettingzoo", "ray")


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def test_importing_the_package_loads_no_heavy_dependency():
    loaded = json.loads(_run("import sys, json, dueling_gym; print(json.dumps(sorted(sys.modules)))"))
    assert not [name for name in loaded if name.split(".")[0] in HEAVY]
    # The environments are registered all the same, and the lazy names resolve.
    listed = _run("import gymnasium as gym, dueling_gym; print(sorted(k for k in gym.registry if 'Duel' in k)); "
                  "print(dueling_gym.load_problem('sushi').n_arms)")
    assert "CopelandDuel-v0" in listed and listed.split()[-1] == "16"


def test_problems_and_one_agent_load_no_optimiser():
    loaded = json.loads(_run(
        "import sys, json; from dueling_gym.problems import load_problem; from dueling_gym.agents import make_agent; "
        "make_agent('rucb', 3, seed=0); load_problem('sushi').copeland_winners; "
        "print(json.dumps(sorted(sys.modules)))"))
    assert "scipy.optimize" not in loaded and "matplotlib" not in loaded
    assert "dueling_gym.agents.ccb" not in loaded


_COMPILE_REPORT = """
import json
from dueling_gym.agents import make_agent
from dueling_gym.experiments.pure_exploration import run_pure_exploration
from dueling_gym.experiments.simulate import fused_loop, simulate
from dueling_gym.experiments.kernel_loops import loop_for
import dueling_gym.experiments.pure_exploration as pure_exploration

report = {}
for name in ("rucb", "ccb"):
    agent = make_agent(name, 4, seed=0)
    simulate(agent, "cyclic4", 200, seed=0)
    for label, dispatcher in (("loop", fused_loop(type(agent))),
                              ("state", type(agent.state)._compiled_constructor)):
        report[f"{name} {label}"] = [sum(dispatcher.stats.cache_hits.values()),
                                     sum(dispatcher.stats.cache_misses.values())]
agent = make_agent("knockout", 4, seed=0)
run_pure_exploration(agent, "cyclic4", seed=0, max_samples=500)
until_done = loop_for(pure_exploration._fused_until_done, type(agent),
                      {"act": "act_kernel", "observe": "observe_kernel", "done": "done_kernel"})
report["knockout loop"] = [sum(until_done.stats.cache_hits.values()), sum(until_done.stats.cache_misses.values())]
print(json.dumps(report))
"""


@pytest.mark.slow
def test_a_second_process_loads_the_compiled_loops_and_states_from_the_cache():
    _run(_COMPILE_REPORT)  # compiles what is not cached yet
    report = json.loads(_run(_COMPILE_REPORT))
    for what, (hits, misses) in report.items():
        assert (hits, misses) == (1, 0), f"{what}: {hits} cache hits, {misses} misses"


def test_the_fused_loop_is_rebuilt_when_the_kernels_change(tmp_path, monkeypatch):
    from dueling_gym.experiments import kernel_loops

    source = tmp_path / "kernel_module.py"
    source.write_text("def act(state):\n    return 0, 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import kernel_module

    class Agent:
        act_kernel = kernel_module.act

    stamp = kernel_loops._kernel_stamp({"act": Agent.act_kernel})
    source.write_text("def act(state):\n    return 1, 1  # changed\n")
    assert kernel_loops._kernel_stamp({"act": Agent.act_kernel}) != stamp


def test_warmup_runs_the_named_tasks_and_refuses_unknown_ones(capsys):
    from dueling_gym.cli import main
    from dueling_gym.experiments.runs.warmup import warmup, warmup_tasks

    tasks = warmup_tasks()
    assert "agent:rucb" in tasks and "agent:car_cond" in tasks and "environments" in tasks
    report = warmup(tasks=["agent:rucb", "agent:ucb1", "agent:knockout", "statistics"], progress=False)
    assert list(report.seconds) == ["agent:rucb", "agent:ucb1", "agent:knockout", "statistics"]
    assert report.total > 0
    with pytest.raises(ValueError, match="unknown warm-up tasks"):
        warmup(tasks=["agent:nope"], progress=False)
    with pytest.raises(ValueError, match="jobs"):
        warmup(jobs=0, progress=False)
    with pytest.raises(SystemExit):
        main(["warmup", "--jobs", "0"])
    assert "--jobs" in capsys.readouterr().err
