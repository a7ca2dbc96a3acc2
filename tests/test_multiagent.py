"""PettingZoo sparring game (``dueling_gym.multiagent.sparring_v0``): API, regret infos, seeding,
self-play with bandit learners and the two self-play scripts of ``docs/tutorials`` (their smoke
tests keep "example" in their names, as ``-k example`` selects them)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import (  # noqa: E402
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    seed_test,
)
from pettingzoo.utils.conversions import aec_to_parallel, parallel_to_aec  # noqa: E402

from dueling_gym.agents import Sparring  # noqa: E402
from dueling_gym.envs.dueling_bandit import DuelingBanditEnv  # noqa: E402
from dueling_gym.experiments import simulate  # noqa: E402
from dueling_gym.multiagent import SparringAECEnv, SparringParallelEnv, sparring_v0  # noqa: E402
from dueling_gym.problems import ProblemSampler, load_problem, utility_based  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = ROOT / "docs" / "tutorials"
SEATS = ("player_0", "player_1")


def _load_example(name: str):
    spec = importlib.util.spec_from_file_location(f"tutorial_{name}", TUTORIALS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def selfplay_example():
    return _load_example("selfplay")


def _random_actions(env, rng):
    return {agent: int(rng.integers(env.n_arms)) for agent in env.agents}


# ---------------------------------------------------------------- PettingZoo's own test suite
def test_parallel_api():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all may come from the parallel test
        parallel_api_test(sparring_v0.parallel_env(), num_cycles=1000)


def test_aec_api():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # observations are NumPy arrays: no warning about them...
        # ...except this heuristic for blank images: a seat observes 0 after every lost duel.
        warnings.filterwarnings("ignore", "Observation numpy array is all zeros", UserWarning)
        api_test(sparring_v0.env(), num_cycles=1000)
        api_test(parallel_to_aec(sparring_v0.parallel_env(preferences="mslr5-noncondorcet")), num_cycles=200)


def test_observations_are_arrays_of_the_observation_space():
    env = sparring_v0.parallel_env(max_cycles=20)
    observations, _ = env.reset(seed=0)
    seen = []
    rng = np.random.default_rng(0)
    while True:
        for agent, observation in observations.items():
            space = env.observation_space(agent)
            assert isinstance(observation, np.ndarray) and observation.shape == space.shape == ()
            assert observation.dtype == space.dtype == np.int64 and space.contains(observation)
            seen.append(observation)
        if not env.agents:
            break
        observations = env.step(_random_actions(env, rng))[0]
    assert {int(o) for o in seen} == {0, 1}
    assert len({id(o) for o in seen}) == len(seen)  # fresh arrays: a caller may keep or modify one


def test_seed_tests():
    seed_test(sparring_v0.env, num_cycles=500)
    parallel_seed_test(sparring_v0.parallel_env, num_cycles=500)
    seed_test(lambda: sparring_v0.env(problem_sampler=ProblemSampler("utility_based", n_arms=6)), num_cycles=100)


def test_max_cycles():
    max_cycles_test(sparring_v0)


def test_render_test_and_modes(capsys):
    render_test(sparring_v0.env, custom_tests={"ansi": lambda text: text.startswith("sparring_v0")})
    capsys.readouterr()

    env = sparring_v0.parallel_env(render_mode="ansi", max_cycles=5)
    assert env.render() == "sparring_v0 (not reset)\n"
    env.reset(seed=0)
    assert "no duel yet" in env.render()
    env.step({"player_0": 0, "player_1": 15})
    text = env.render()
    assert isinstance(text, str) and "player_0 arm 0 vs player_1 arm 15" in text and "t=1/5" in text
    assert capsys.readouterr().out == ""

    human = sparring_v0.parallel_env(render_mode="human", max_cycles=5)
    human.reset(seed=0)
    assert human.render() is None
    human.step({"player_0": 2, "player_1": 3})  # "human" also renders on every step
    out = capsys.readouterr().out
    assert out.count("sparring_v0  problem=sushi") == 2 and "player_0 arm 2 vs player_1 arm 3" in out

    silent = sparring_v0.parallel_env()
    silent.reset(seed=0)
    with pytest.warns(UserWarning, match="without a render_mode"):
        assert silent.render() is None


def test_module_convention_and_aec_forms():
    assert isinstance(sparring_v0.parallel_env(), SparringParallelEnv)
    assert isinstance(sparring_v0.raw_env(), SparringAECEnv)
    wrapped = sparring_v0.env(preferences="arxiv")
    assert isinstance(wrapped.unwrapped, SparringParallelEnv) and wrapped.unwrapped.n_arms == 6
    assert isinstance(aec_to_parallel(wrapped), SparringParallelEnv)  # round trip, no extra wrapper
    assert str(wrapped.unwrapped) == "sparring_v0" and wrapped.metadata["name"] == "sparring_v0"


# ---------------------------------------------------------------- spaces, observations, rewards
def test_spaces_reset_and_step_types():
    env = sparring_v0.parallel_env(preferences="arxiv", max_cycles=50)
    assert env.possible_agents == list(SEATS)
    for agent in SEATS:
        assert env.action_space(agent) is env.action_space(agent)
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) == gym.spaces.Discrete(6)
        assert env.observation_space(agent) == gym.spaces.Discrete(2)
    with pytest.raises(ValueError, match="unknown agent"):
        env.action_space("player_2")

    observations, infos = env.reset(seed=1)
    assert env.agents == list(SEATS)
    for agent in SEATS:
        assert isinstance(observations[agent], np.ndarray) and observations[agent] == 0
        assert infos[agent]["t"] == 0 and infos[agent]["duel"] is None
        assert set(infos[agent]["cumulative_regret"].values()) == {0.0}
    assert infos["player_0"] is not infos["player_1"]

    rng = np.random.default_rng(0)
    for _ in range(50):
        observations, rewards, terminations, truncations, infos = env.step(_random_actions(env, rng))
        first, second = infos["player_0"]["duel"]
        first_won = infos["player_0"]["first_won"]
        assert infos["player_1"]["duel"] == (first, second) and infos["player_1"]["first_won"] == first_won
        assert observations["player_0"].dtype == np.int64 and env.observation_space("player_0").contains(observations["player_0"])
        assert observations["player_0"] == int(first_won) and observations["player_1"] == 1 - int(first_won)
        assert rewards == ({"player_0": 1.0, "player_1": -1.0} if first_won else {"player_0": -1.0, "player_1": 1.0})
        assert all(type(r) is float for r in rewards.values())
        assert terminations == {"player_0": False, "player_1": False}
        assert all(type(x) is bool for x in [*terminations.values(), *truncations.values()])
    assert truncations == {"player_0": True, "player_1": True} and env.agents == []
    assert env.t == 50 and env.wins.sum() == 50 and env.plays.sum() == 100
    assert env.win_counts.sum() == 50


def test_outcomes_follow_the_preference_matrix():
    env = sparring_v0.parallel_env(preferences="sushi", max_cycles=100_000)
    env.reset(seed=3)
    n, p = 4000, load_problem("sushi").matrix[0, 15]
    wins = sum(env.step({"player_0": 0, "player_1": 15})[1]["player_0"] > 0 for _ in range(n))
    assert abs(wins / n - p) < 5 * np.sqrt(p * (1 - p) / n)
    self_wins = sum(env.step({"player_0": 4, "player_1": 4})[1]["player_0"] > 0 for _ in range(n))
    assert abs(self_wins / n - 0.5) < 5 * np.sqrt(0.25 / n)  # a self-duel is a fair coin


# ---------------------------------------------------------------- regret infos
@pytest.mark.parametrize("problem", ["sushi", "mslr5-noncondorcet", "arxiv"])
def test_regret_infos_are_exact(problem):
    matrix = load_problem(problem)
    env = sparring_v0.parallel_env(preferences=problem, max_cycles=300)
    expected_notions = set(matrix.defined_regret_notions)
    assert {"copeland_komiyama", "copeland_zoghi"} <= expected_notions
    assert set(env.regret_notions) == expected_notions
    _, infos = env.reset(seed=5)
    rng = np.random.default_rng(1)
    running = dict.fromkeys(env.regret_notions, 0.0)
    while env.agents:
        actions = _random_actions(env, rng)
        if rng.random() < 0.1:
            actions["player_1"] = actions["player_0"]  # self-duels too
        *_, infos = env.step(actions)
        first, second = actions["player_0"], actions["player_1"]
        for agent in SEATS:
            info = infos[agent]
            assert set(info["regret"]) == expected_notions
            assert info["duel"] == (first, second)
            for notion in env.regret_notions:
                assert info["regret"][notion] == matrix.regret(notion, first, second)
        for notion in env.regret_notions:
            running[notion] += matrix.regret(notion, first, second)
            assert infos["player_0"]["cumulative_regret"][notion] == running[notion]
    assert env.cumulative_regret == running
    assert infos["player_0"]["t"] == 300


def test_regret_scales():
    env = sparring_v0.parallel_env(preferences="sushi", max_cycles=10)
    env.reset(seed=0)
    *_, infos = env.step({"player_0": 0, "player_1": 0})
    assert infos["player_0"]["regret"]["copeland_komiyama"] == 0.0 == infos["player_0"]["regret"]["copeland_zoghi"]
    *_, infos = env.step({"player_0": 15, "player_1": 15})
    regret = infos["player_0"]["regret"]
    assert regret["copeland_komiyama"] == 1.0 and regret["copeland_zoghi"] == 2.0  # Sushi has no ties


# ---------------------------------------------------------------- seeding and problems
def _trajectory(env, seed, steps, action_seed=0):
    rng = np.random.default_rng(action_seed)
    record = [env.reset(seed=seed)]
    for _ in range(steps):
        record.append(env.step(_random_actions(env, rng)))
    return record


def test_same_seed_same_trajectory():
    make = lambda: sparring_v0.parallel_env(preferences="sushi", max_cycles=400)  # noqa: E731
    first, second = _trajectory(make(), 11, 400), _trajectory(make(), 11, 400)
    assert first == second
    env = make()
    assert _trajectory(env, 11, 400) == first  # reseeding one env replays it
    other = _trajectory(make(), 12, 400)
    assert [step[0] for step in other[1:]] != [step[0] for step in first[1:]]


def test_outcomes_match_the_single_agent_environment():
    """Same seed and same duels: the same outcomes and regrets as DuelingBandit-v0."""
    env = sparring_v0.parallel_env(preferences="arxiv", max_cycles=5000)
    single = DuelingBanditEnv("arxiv", reward_regret="copeland_zoghi")
    env.reset(seed=42)
    single.reset(seed=42)
    rng = np.random.default_rng(0)
    while env.agents:
        actions = _random_actions(env, rng)
        observations, _, _, _, infos = env.step(actions)
        observation, _, _, _, info = single.step(np.array([actions["player_0"], actions["player_1"]]))
        assert observations["player_0"] == observation
        assert infos["player_1"]["cumulative_regret"] == info["cumulative_regret"]
    np.testing.assert_array_equal(env.win_counts, single.win_counts)


def test_problem_sampler_draws_a_problem_per_reset():
    sampler = ProblemSampler("utility_based", n_arms=6)
    env = sparring_v0.parallel_env(problem_sampler=sampler, max_cycles=30)
    assert env.n_arms == 6 and env.action_space("player_0") == gym.spaces.Discrete(6)
    assert "condorcet_strong" in env.regret_notions  # the sampler guarantees a Condorcet winner
    problems = []
    rng = np.random.default_rng(0)
    for episode in range(3):
        env.reset(seed=100) if episode == 0 else env.reset()
        problems.append(env.problem)
        while env.agents:
            actions = _random_actions(env, rng)
            *_, infos = env.step(actions)
            assert infos["player_0"]["regret"]["copeland_zoghi"] == env.problem.regret(
                "copeland_zoghi", actions["player_0"], actions["player_1"])
    assert problems[0] != problems[1] != problems[2]
    again = sparring_v0.parallel_env(problem_sampler=sampler)
    again.reset(seed=100)
    assert again.problem == problems[0]

    custom = sparring_v0.parallel_env(problem_sampler=lambda rng: utility_based(4, rng), n_arms=4)
    custom.reset(seed=0)
    assert custom.problem.n_arms == 4 and "condorcet_strong" not in custom.regret_notions


def test_fixed_problem_forms():
    matrix = load_problem("cyclic4")
    for spec in ["cyclic4", matrix, matrix.matrix, matrix.matrix.tolist()]:
        env = sparring_v0.parallel_env(preferences=spec)
        assert env.problem == matrix and env.n_arms == 4
    assert sparring_v0.parallel_env().problem == load_problem("sushi")  # the default


# ---------------------------------------------------------------- episode end and errors
def test_truncation_and_reset_needed():
    env = sparring_v0.parallel_env(max_cycles=3)
    with pytest.raises(gym.error.ResetNeeded):
        env.step({"player_0": 0, "player_1": 1})
    env.reset(seed=0)
    for t in range(3):
        _, _, terminations, truncations, _ = env.step({"player_0": 0, "player_1": 1})
        assert truncations["player_0"] is (t == 2) and not any(terminations.values())
    assert env.agents == []
    with pytest.raises(gym.error.ResetNeeded, match="max_cycles=3"):
        env.step({"player_0": 0, "player_1": 1})
    env.reset()
    assert env.agents == list(SEATS) and env.t == 0 and env.plays.sum() == 0

    aec = sparring_v0.env(max_cycles=2)
    aec.reset(seed=0)
    steps = 0
    for agent in aec.agent_iter():
        _, _, termination, truncation, _ = aec.last()
        aec.step(None if termination or truncation else 1)
        steps += 1
    assert steps == 2 * 2 + 2  # two cycles, then one "dead" step per player


@pytest.mark.parametrize(
    ("action", "error", "match"),
    [
        (16, ValueError, "out of range"),
        (-1, ValueError, "out of range"),
        (1.0, TypeError, "integer arm"),
        (None, TypeError, "integer arm"),
        ("3", TypeError, "integer arm"),
        (True, TypeError, "boolean"),
        (np.array([1, 2]), TypeError, "shape"),
    ],
)
def test_bad_actions(action, error, match):
    env = sparring_v0.parallel_env()
    env.reset(seed=0)
    with pytest.raises(error, match=match):
        env.step({"player_0": 0, "player_1": action})
    aec = sparring_v0.env()
    aec.reset(seed=0)
    with pytest.raises(error, match=f"player_0's action.*{match}|{match}"):
        aec.step(action)  # player_0's bad action is rejected at once, not at the end of the cycle


def test_accepted_action_types():
    env = sparring_v0.parallel_env(max_cycles=10)
    env.reset(seed=0)
    *_, infos = env.step({"player_0": np.int32(3), "player_1": np.array(5)})
    assert infos["player_0"]["duel"] == (3, 5) and all(type(a) is int for a in infos["player_0"]["duel"])


def test_bad_action_dicts():
    env = sparring_v0.parallel_env()
    env.reset(seed=0)
    with pytest.raises(TypeError, match="dict"):
        env.step([0, 1])
    with pytest.raises(ValueError, match=r"missing \['player_1'\]"):
        env.step({"player_0": 0})
    with pytest.raises(ValueError, match=r"unexpected \['player_2'\]"):
        env.step({"player_0": 0, "player_1": 1, "player_2": 2})
    assert env.t == 0  # nothing was played


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"max_cycles": 0}, ValueError, "max_cycles"),
        ({"max_cycles": 2.5}, TypeError, "max_cycles"),
        ({"max_cycles": True}, TypeError, "max_cycles"),
        ({"render_mode": "rgb_array"}, ValueError, "render_mode"),
        ({"preferences": "no-such-problem"}, ValueError, "unknown problem"),
        ({"preferences": np.ones((3, 3))}, ValueError, "diagonal"),
        ({"preferences": "sushi", "problem_sampler": ProblemSampler("utility_based", n_arms=3)}, ValueError, "not both"),
        ({"problem_sampler": 3}, TypeError, "callable"),
        ({"problem_sampler": lambda rng: utility_based(3, rng)}, ValueError, "n_arms"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        sparring_v0.parallel_env(**kwargs)


def test_sampler_problem_of_the_wrong_size():
    env = sparring_v0.parallel_env(problem_sampler=lambda rng: utility_based(5, rng), n_arms=4)
    with pytest.raises(ValueError, match="5 arms"):
        env.reset(seed=0)


# ---------------------------------------------------------------- self-play with bandit learners
def test_ucb_sbm_selfplay_is_sparring(selfplay_example):
    """Two UCB-SBM seats reproduce ``agents.Sparring`` (UCB-SBM learners) duel for duel."""
    horizon, seed = 3000, 3
    run = selfplay_example.selfplay("ucb_sbm", "sushi", horizon, seed, record_duels=True)
    reference = simulate(Sparring(16), "sushi", horizon, seed=seed, record_duels=True, checkpoints=[horizon])
    np.testing.assert_array_equal(run["duels"], reference.duels)
    for notion in ("copeland_komiyama", "copeland_zoghi"):
        assert run["regret"][notion] == pytest.approx(reference.final_regret(notion), rel=1e-12)
    assert run["recommend"][0] == reference.recommendations[-1]


def _converges(example, learner, problem, horizon, seeds=5):
    matrix = load_problem(problem) if isinstance(problem, str) else problem
    winner = matrix.condorcet_winner
    random_regret = horizon * matrix.expected_random_regret("copeland_komiyama")
    hits = 0
    for seed in range(seeds):
        run = example.selfplay(learner, matrix, horizon, seed)
        hits += run["most_played"] == (winner, winner) and run["recommend"] == (winner, winner)
        assert run["regret"]["copeland_komiyama"] < 0.4 * random_regret
    return hits


def _clear_gap_problem():
    problem = utility_based(8, np.random.default_rng(0))
    winner = problem.condorcet_winner
    assert np.delete(problem.matrix[winner], winner).min() > 0.55  # the winner wins every duel w.p. > 0.55
    return problem


def test_ucb_sbm_selfplay_finds_the_sushi_condorcet_winner(selfplay_example):
    assert _converges(selfplay_example, "ucb_sbm", "sushi", 20_000) >= 4


@pytest.mark.parametrize("learner", ["ucb_sbm", "thompson"])
def test_selfplay_finds_the_condorcet_winner_with_clear_gaps(selfplay_example, learner):
    assert _converges(selfplay_example, learner, _clear_gap_problem(), 20_000) >= 4


@pytest.mark.slow
@pytest.mark.parametrize("learner", ["ucb_sbm", "thompson"])
@pytest.mark.parametrize("problem", ["mslr5-condorcet"])
def test_selfplay_finds_the_condorcet_winner_of_published_problems(selfplay_example, learner, problem):
    assert _converges(selfplay_example, learner, problem, 20_000) >= 4


@pytest.mark.slow
def test_thompson_selfplay_finds_the_sushi_condorcet_winner(selfplay_example):
    # Sushi's P[0, 1] = 0.512: Thompson seats need ~10^5 duels to separate arms 0 and 1.
    assert _converges(selfplay_example, "thompson", "sushi", 100_000) >= 4


# ---------------------------------------------------------------- tutorial scripts (smoke)
def _run_example(name, *args, timeout=240):
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    completed = subprocess.run([sys.executable, str(TUTORIALS / name), *args], capture_output=True, text=True,
                               timeout=timeout, env=env, cwd=ROOT)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


def test_selfplay_example_runs():
    out = _run_example("selfplay.py", "--horizon", "1000", "--seeds", "2")
    assert "1000 duels of uniformly random arms, net reward per seat" in out
    assert "Sparring self-play on sushi (K=16, Condorcet winner 0)" in out
    assert "ucb_sbm:" in out and "thompson:" in out and "Copeland regret" in out
    means = [line for line in out.splitlines() if "mean Copeland regret" in line]
    assert len(means) == 2 and all(re.search(r"regret \d+\.\d ± \d+\.\d \(95% Student's t interval, 2 runs\)", line)
                                   for line in means), out
    single = _run_example("selfplay.py", "--horizon", "200", "--seeds", "1", "--learners", "ucb1")
    assert "mean Copeland regret" in single and "± n/a (one run)" in single and "± 0.0" not in single


def test_ppo_selfplay_example_runs(tmp_path):
    pytest.importorskip("stable_baselines3")
    pytest.importorskip("supersuit")
    out = _run_example("sparring_ppo_selfplay.py", "--timesteps", "1024", "--eval-cycles", "200", "--seeds", "2",
                       "--out", str(tmp_path))
    assert "PPO self-play on sushi (K=16, Condorcet winner 0): 1024 seat-steps" in out
    assert "seed 1" in out
    assert "probability of the Condorcet winner" in out and "joint-duel Copeland regret" in out
    # The comparison with Sparring's learners over the same 512 duels (1024 seat-steps), two seeds each.
    assert "Online regret over the 512 duels played while learning (2 seeds" in out
    per_duel = next(line for line in out.splitlines() if line.startswith("regret per duel after learning"))
    assert "95% Student's t interval" in per_duel and len(re.findall(r"\d\.\d{4} ± \d\.\d{4}", per_duel)) == 3
    rows = [line for line in (tmp_path / "summary.md").read_text().splitlines() if line.startswith("| sushi |")]
    assert [row.split(" | ")[1] for row in rows] == ["PPO self-play (shared policy)", "sparring (UCB)",
                                                      "sparring (Thompson)"]
    assert all(row.split(" | ")[2:4] == ["2", "512"] for row in rows)
    assert (tmp_path / "regret.png").stat().st_size > 0 and (tmp_path / "regret.csv").is_file()


@pytest.mark.slow
def test_ppo_selfplay_learns_the_condorcet_winner():
    pytest.importorskip("stable_baselines3")
    out = _run_example("sparring_ppo_selfplay.py", "--timesteps", "100000", "--eval-cycles", "500")
    line = next(line for line in out.splitlines() if "probability of the Condorcet winner" in line)
    after_loss, after_win = (float(x) for x in line.split(":")[1].split("(")[0].split("/"))
    assert after_loss > 0.5 and after_win > 0.5, out
