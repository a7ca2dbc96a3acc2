"""The kernel-agent tutorial (docs/tutorials/kernel_agent.py) does what docs/contributing.md says.

It runs fused and in Python with the same trajectory, pickles and continues identically, plays
exactly the duels of the pure-Python own-agent tutorial, loads from Numba's on-disk cache in a
second process, and its regret is the one its rule implies.  The module is imported by path from
a copy in a temporary folder, with Numba's cache there too, so the tests write nothing below
docs/ or the package.
"""

from __future__ import annotations

import copy
import importlib.util
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest

import dueling_gym.experiments  # noqa: F401 - imported before Numba's cache folder is redirected
from dueling_gym.experiments import simulate
from dueling_gym.problems import PreferenceMatrix

TUTORIALS = Path(__file__).resolve().parent.parent / "docs" / "tutorials"
MODULE = "kernel_agent_tutorial"


def _easy_problem(n_arms: int = 4) -> PreferenceMatrix:
    """Arm ``i`` beats every arm ``j > i`` with probability 0.9: arm 0 is the Condorcet winner."""
    matrix = np.full((n_arms, n_arms), 0.5)
    upper = np.triu_indices(n_arms, 1)
    matrix[upper] = 0.9
    matrix[upper[1], upper[0]] = 0.1
    return PreferenceMatrix(matrix, name="easy")


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory):
    """The tutorial module, imported by path from a copy (Numba's cache beside it)."""
    folder = tmp_path_factory.mktemp("kernel_agent")
    path = folder / f"{MODULE}.py"
    shutil.copy(TUTORIALS / "kernel_agent.py", path)
    with pytest.MonkeyPatch.context() as patch:
        # Kernels, state constructor and fused loop are cached where they are first compiled.
        patch.setattr(numba.config, "CACHE_DIR", str(folder / "numba-cache"))
        spec = importlib.util.spec_from_file_location(MODULE, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[MODULE] = module  # pickle finds the classes by module and name
        try:
            spec.loader.exec_module(module)
            module.KernelExploreThenCommit(3, rounds=2, seed=0).act()  # compile while redirected
            simulate(module.KernelExploreThenCommit(3, rounds=2), _easy_problem(3), 5, fused=True)
            yield module
        finally:
            sys.modules.pop(MODULE, None)


@pytest.mark.parametrize("seed", [0, 7])
def test_the_fused_loop_and_the_python_loop_play_the_same_run(tutorial, seed):
    agent = tutorial.KernelExploreThenCommit(16, rounds=300)
    runs = [simulate(agent, "sushi", horizon=2_000, seed=seed, fused=fused, record_duels=True)
            for fused in (True, False)]
    assert [run.fused for run in runs] == [True, False]
    fused, python = runs
    np.testing.assert_array_equal(fused.duels, python.duels)
    np.testing.assert_array_equal(fused.outcomes, python.outcomes)
    np.testing.assert_array_equal(fused.recommendations, python.recommendations)
    assert fused.cumulative_regret.keys() == python.cumulative_regret.keys()
    for notion, regret in fused.cumulative_regret.items():
        np.testing.assert_array_equal(regret, python.cumulative_regret[notion])
    assert (fused.duels[300:] == fused.duels[300]).all() and fused.duels[300, 0] == fused.duels[300, 1]


def _play(agent, matrix: np.ndarray, rng: np.random.Generator, duels: int) -> list[tuple[int, int]]:
    played = []
    for _ in range(duels):
        first, second = agent.act()
        agent.observe((first, second), bool(rng.random() < matrix[first, second]))
        played.append((first, second))
    return played


@pytest.mark.parametrize("copier", [lambda agent: pickle.loads(pickle.dumps(agent)), copy.deepcopy],
                         ids=["pickle", "deepcopy"])
def test_a_copy_continues_exactly_where_the_original_was(tutorial, copier):
    matrix = _easy_problem(5).matrix
    agent = tutorial.KernelExploreThenCommit(5, rounds=200, seed=3)
    _play(agent, matrix, np.random.default_rng(11), 150)  # mid-exploration: the generator's stream matters
    clone = copier(agent)
    assert clone.state is not agent.state and clone.wins is not agent.wins
    np.testing.assert_array_equal(clone.wins, agent.wins)
    original = _play(agent, matrix, np.random.default_rng(12), 250)  # through the commitment
    continued = _play(clone, matrix, np.random.default_rng(12), 250)
    assert continued == original and clone.recommend() == agent.recommend()
    # The kernels wrote the clone's counts into ``clone.wins``: attribute and state still share one array.
    np.testing.assert_array_equal(clone.wins, agent.wins)
    assert clone.wins.sum() == agent.wins.sum() > 150


def test_regret_is_the_exploration_cost_and_then_stops(tutorial):
    """Uniform distinct pairs for ``rounds`` duels, then the Condorcet winner against itself."""
    problem = _easy_problem(4)
    rounds, horizon, seeds = 400, 5_000, range(20)
    agent = tutorial.KernelExploreThenCommit(4, rounds=rounds)
    explored = []
    for seed in seeds:
        run = simulate(agent, problem, horizon, seed=seed, checkpoints=[rounds], record_duels=True)
        assert run.fused and list(run.checkpoints) == [rounds, horizon]
        assert (run.duels[:rounds, 0] != run.duels[:rounds, 1]).all()
        assert (run.duels[rounds:] == 0).all() and (run.recommendations == 0).all()
        for notion, regret in run.cumulative_regret.items():
            per_duel = problem.regret_matrix(notion)[run.duels[:rounds, 0], run.duels[:rounds, 1]]
            assert regret[0] == pytest.approx(per_duel.sum(), rel=1e-12) and regret[1] == regret[0], notion
        explored.append(problem.regret_matrix("condorcet_strong")[run.duels[:rounds, 0], run.duels[:rounds, 1]])
    # Exploration duels are uniform over ordered pairs of distinct arms, whatever the outcomes.
    per_duel = np.concatenate(explored)
    expected = problem.expected_random_regret("condorcet_strong")
    assert abs(per_duel.mean() - expected) < 5 * per_duel.std() / np.sqrt(per_duel.size)


def test_bad_hyperparameters_are_refused(tutorial):
    with pytest.raises(ValueError, match="rounds"):
        tutorial.KernelExploreThenCommit(4, rounds=-1)
    with pytest.raises(TypeError, match="rounds"):
        tutorial.KernelExploreThenCommit(4, rounds=2.5)


_SECOND_PROCESS = textwrap.dedent("""
    import json, sys
    import numpy as np
    from dueling_gym.agents import agent_class
    from dueling_gym.experiments import simulate
    from dueling_gym.experiments.simulate import fused_loop

    kernel = agent_class("kernel_agent_tutorial:KernelExploreThenCommit")  # as `dueling-gym run --agents` does
    python = agent_class("own_agent_tutorial:ExploreThenCommit")
    runs = [simulate(cls(k, rounds=rounds), "sushi" if k == 16 else np.array([[.5, .7], [.3, .5]]), 3_000,
                     seed=seed, fused=False, record_duels=True)
            for k, rounds, seed in ((16, 500, 1), (2, 40, 2)) for cls in (kernel, python)]
    same = all((a.duels == b.duels).all() and (a.outcomes == b.outcomes).all() for a, b in zip(runs[::2], runs[1::2]))
    simulate(kernel(16, rounds=500), "sushi", 3_000, seed=1, fused=True)
    compiled = {"fused loop": fused_loop(kernel), "act": kernel.act_kernel, "observe": kernel.observe_kernel,
                "recommend": kernel.recommend_kernel}
    print(json.dumps({"same": bool(same), "stats": {name: [function.stats.cache_hits.total(),
                                                           function.stats.cache_misses.total()]
                                                    for name, function in compiled.items()}}))
""")


def test_a_second_process_loads_the_compiled_code_from_the_cache(tmp_path):
    """And the kernel agent plays exactly the duels of the pure-Python own-agent tutorial."""
    import json
    import os

    shutil.copy(TUTORIALS / "kernel_agent.py", tmp_path / f"{MODULE}.py")
    shutil.copy(TUTORIALS / "own_agent.py", tmp_path / "own_agent_tutorial.py")
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"), "PYTHONDONTWRITEBYTECODE": "1"}
    reports = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", _SECOND_PROCESS], cwd=tmp_path, env=environment,
                              capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stderr
        reports.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert reports[0]["same"] and reports[1]["same"]
    assert reports[0]["stats"]["fused loop"] == [0, 1]  # compiled and written by the first process
    assert all(hits >= 1 and misses == 0 for hits, misses in reports[1]["stats"].values()), reports[1]
