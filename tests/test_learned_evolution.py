"""Evolution-strategies training of pair policies, the compiled episode loop it relies on, and
``dueling-gym train``."""

from __future__ import annotations

import csv
import functools
import hashlib
import json

import numpy as np
import pytest

from dueling_gym.agents import make_agent
from dueling_gym.agents.learned import (
    DATA_DIRECTORY,
    LearnedAgent,
    WEIGHT_NAMES,
    load_policy_weights,
    policy_episode_regret,
    time_value,
)
from dueling_gym.cli import main as cli_main
from dueling_gym.experiments import simulate
from dueling_gym.experiments.learning.evolution import random_weights, train_evolution, widen_weights
from dueling_gym.experiments.learning.problems import ProblemBatch, extrapolate_regret
from dueling_gym.observations import time_feature
from dueling_gym.problems import load_problem

TINY = dict(families=("no_condorcet_winner", "utility_based"), n_arms=4, horizon=40, pairs=2, problems_per_family=2,
            hidden=4, eval_every=2, eval_problems=3, normalise="random", threads=1, progress=False, command="test")


def _agent_regret(agent: LearnedAgent, problem, horizon: int, outcome_uniforms: np.ndarray) -> float:
    regret_table = problem.regret_matrix("copeland_komiyama")
    total = 0.0
    for t in range(horizon):
        first, second = agent.act()
        total += regret_table[first, second]
        agent.observe((first, second), bool(outcome_uniforms[t] < problem.matrix[first, second]))
    return total


@pytest.mark.parametrize("deterministic", [False, True])
def test_compiled_episodes_play_exactly_the_agent(deterministic):
    problem = load_problem("mslr5-noncondorcet")
    weights, _ = load_policy_weights(DATA_DIRECTORY / "learned_k5.npz", 5)
    horizon = 300
    for seed in (0, 5):
        draws = np.random.default_rng(seed).random(2 * horizon)  # the function's action, then outcome draws
        # Without the opening: the batch runs play one network from the first duel.
        # (the K = 5 file named: with 5 arms the agent's own size policy is the averaged one)
        agent = LearnedAgent(5, deterministic=deterministic, policy=str(DATA_DIRECTORY / "learned_k5.npz"), seed=seed)
        expected = _agent_regret(agent, problem, horizon, draws[horizon:])
        got = policy_episode_regret(weights, problem.matrix[None], problem.regret_matrix("copeland_komiyama")[None],
                                    horizon, np.random.default_rng(seed), deterministic=deterministic)
        assert got.shape == (1,)
        assert got[0] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("handover_at", [1, 40, 299])
def test_compiled_episodes_with_a_handover_play_exactly_the_agent_with_an_opening(handover_at):
    problem = load_problem("mslr5-noncondorcet")
    opening_path, size_path = DATA_DIRECTORY / "learned_opening.npz", DATA_DIRECTORY / "learned_k5.npz"
    opening, _ = load_policy_weights(opening_path)
    size_policy, _ = load_policy_weights(size_path)
    horizon = 300
    for seed in (0, 5):
        draws = np.random.default_rng(seed).random(2 * horizon)
        agent = LearnedAgent(5, policy=str(size_path), opening=str(opening_path), opening_duels=handover_at, seed=seed)
        expected = _agent_regret(agent, problem, horizon, draws[horizon:])
        got = policy_episode_regret(opening, problem.matrix[None], problem.regret_matrix("copeland_komiyama")[None],
                                    horizon, np.random.default_rng(seed), handover=size_policy, handover_at=handover_at)
        assert got[0] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("opening_duels, late_from", [(40, 120), (1, 2), (100, 299), (150, 60)])
def test_compiled_episodes_preceded_by_fixed_policies_play_exactly_the_agent_with_a_late_policy(opening_duels, late_from):
    # The agent's three networks (opening, size policy, late policy) against the batch runs whose
    # trained weights come last; an opening longer than late_from hands over to the late policy.
    problem = load_problem("mslr5-noncondorcet")
    opening_path, size_path = DATA_DIRECTORY / "learned_opening.npz", DATA_DIRECTORY / "learned_k5.npz"
    late_path = DATA_DIRECTORY / "learned_opening_large.npz"  # any weights trained on a mixture of sizes
    opening, size_policy, late = (load_policy_weights(path)[0] for path in (opening_path, size_path, late_path))
    phases = ([(opening, opening_duels), (size_policy, late_from)] if opening_duels < late_from
              else [(opening, opening_duels)])
    horizon = 300
    for seed in (0, 5):
        draws = np.random.default_rng(seed).random(2 * horizon)
        agent = LearnedAgent(5, policy=str(size_path), opening=str(opening_path), opening_duels=opening_duels,
                             late=str(late_path), late_from=late_from, seed=seed)
        expected = _agent_regret(agent, problem, horizon, draws[horizon:])
        got = policy_episode_regret(late, problem.matrix[None], problem.regret_matrix("copeland_komiyama")[None],
                                    horizon, np.random.default_rng(seed), preceded_by=phases)
        assert got[0] == pytest.approx(expected, abs=1e-9)
    # The late policy changes the run only from its first duel on.
    without = LearnedAgent(5, policy=str(size_path), opening=str(opening_path), opening_duels=opening_duels, seed=0)
    with_late = LearnedAgent(5, policy=str(size_path), opening=str(opening_path), opening_duels=opening_duels,
                             late=str(late_path), late_from=late_from, seed=0)
    start = max(opening_duels, late_from)
    for t in range(start + 1):
        if t == start:
            assert not np.array_equal(without.logits(), with_late.logits())
            break
        np.testing.assert_array_equal(without.logits(), with_late.logits())
        first, second = without.act()
        assert tuple(with_late.act()) == (first, second)
        won = bool(draws[t] < problem.matrix[first, second])
        without.observe((first, second), won)
        with_late.observe((first, second), won)


def test_preceded_by_is_checked():
    weights, _ = load_policy_weights(DATA_DIRECTORY / "learned_k5.npz", 5)
    problem = load_problem("arxiv")
    run = functools.partial(policy_episode_regret, weights, problem.matrix[None], problem.matrix[None], 10,
                            np.random.default_rng(0))
    with pytest.raises(ValueError, match="exclude each other"):
        run(handover=weights, handover_at=5, preceded_by=[(weights, 5)])
    with pytest.raises(TypeError, match="sequence of"):
        run(preceded_by=weights)
    with pytest.raises(ValueError, match="one or two"):
        run(preceded_by=[(weights, 1), (weights, 2), (weights, 3)])
    with pytest.raises(ValueError, match="one or two"):
        run(preceded_by=[])
    with pytest.raises(TypeError, match="pair"):
        run(preceded_by=[(5, weights)])
    with pytest.raises(ValueError, match="preceded_by duels"):
        run(preceded_by=[(weights, 0)])
    with pytest.raises(ValueError, match="increase strictly"):
        run(preceded_by=[(weights, 5), (weights, 5)])


def test_time_value_is_the_observation_time_channel():
    for t in (0, 1, 2, 999, 10**6, 2**40):
        assert time_value(t) == float(time_feature(t))


def test_policy_episode_regret_checks_its_inputs():
    weights, _ = load_policy_weights(DATA_DIRECTORY / "learned_k5.npz", 5)
    problem = load_problem("arxiv")
    with pytest.raises(ValueError, match="shape"):
        policy_episode_regret(weights, problem.matrix, problem.matrix, 10, np.random.default_rng(0))
    with pytest.raises(TypeError, match="Generator"):
        policy_episode_regret(weights, problem.matrix[None], problem.matrix[None], 10, 0)
    for extra in ({"handover": weights}, {"handover_at": 5}):
        with pytest.raises(ValueError, match="handover and handover_at go together"):
            policy_episode_regret(weights, problem.matrix[None], problem.matrix[None], 10, np.random.default_rng(0),
                                  **extra)
    with pytest.raises(ValueError, match="handover_at"):
        policy_episode_regret(weights, problem.matrix[None], problem.matrix[None], 10, np.random.default_rng(0),
                              handover=weights, handover_at=0)


def test_random_weights_have_every_array_and_are_seeded():
    first = random_weights(6, np.random.default_rng(1))
    assert list(first) == list(WEIGHT_NAMES) and first["W2"].shape == (6, 6) and first["w0"].shape == (1,)
    again = random_weights(6, np.random.default_rng(1))
    assert all(np.array_equal(first[name], again[name]) for name in WEIGHT_NAMES)


def test_a_widened_policy_plays_exactly_the_narrow_one_and_its_new_units_are_live():
    weights, _ = load_policy_weights(DATA_DIRECTORY / "learned_k5.npz", 5)
    wide = widen_weights(weights, 24, np.random.default_rng(3))
    assert list(wide) == list(WEIGHT_NAMES) and wide["W2"].shape == (24, 24) and wide["A"].shape == (48, 24)
    problem = load_problem("mslr5-noncondorcet")
    matrices, regrets = problem.matrix[None].repeat(4, 0), problem.regret_matrix("copeland_komiyama")[None].repeat(4, 0)
    narrow_regret = policy_episode_regret(weights, matrices, regrets, 300, np.random.default_rng(8))
    np.testing.assert_array_equal(policy_episode_regret(wide, matrices, regrets, 300, np.random.default_rng(8)),
                                  narrow_regret)
    # The new scorer units read the pairs (fresh weights) but are read out with zero; changing the
    # read-out changes the play, so training can use them.
    assert np.all(wide["w"][16:] == 0) and np.any(wide["C"][:, 16:] != 0)
    changed = dict(wide, w=wide["w"] + np.r_[np.zeros(16), np.full(8, 0.5)])
    assert not np.array_equal(policy_episode_regret(changed, matrices, regrets, 300, np.random.default_rng(8)),
                              narrow_regret)
    again = widen_weights(weights, 24, np.random.default_rng(3))
    assert all(np.array_equal(wide[name], again[name]) for name in WEIGHT_NAMES)
    same = widen_weights(weights, 16, np.random.default_rng(3))
    assert all(np.array_equal(same[name], weights[name]) for name in WEIGHT_NAMES)
    with pytest.raises(ValueError, match="hidden"):
        widen_weights(weights, 8, np.random.default_rng(3))


def test_evolution_is_reproducible_resumes_bit_identically_and_exports_a_usable_policy(tmp_path):
    full = train_evolution(tmp_path / "full", generations=4, **TINY)
    again = train_evolution(tmp_path / "again", generations=4, **TINY)
    stopped = train_evolution(tmp_path / "resumed", generations=2, **TINY)
    with np.load(stopped) as archive:
        assert json.loads(str(archive["metadata"]))["generations"] == 2
    resumed = train_evolution(tmp_path / "resumed", generations=4, **TINY)
    with np.load(full) as a, np.load(again) as b, np.load(resumed) as c:
        for name in WEIGHT_NAMES:
            np.testing.assert_array_equal(a[name], b[name])
            np.testing.assert_array_equal(a[name], c[name])
        metadata = json.loads(str(a["metadata"]))
        assert metadata["command"] == "test" and metadata["config"]["algorithm"] == "es"
        assert metadata["generations"] == 4 and int(a["n_arms"]) == 4 and int(a["hidden"]) == 4
    rows = (tmp_path / "full" / "evaluations.csv").read_text().splitlines()
    assert rows[0].startswith("generation,duels,wall_time,normalised_regret,no_condorcet_winner,utility_based")
    assert [row.split(",")[0] for row in rows[1:]] == ["0", "2", "4"]
    resumed_rows = (tmp_path / "resumed" / "evaluations.csv").read_text().splitlines()
    assert [row.split(",")[0] for row in resumed_rows[1:]] == ["0", "2", "4"]
    other = train_evolution(tmp_path / "other", generations=4, **{**TINY, "seed": 1})
    with np.load(full) as a, np.load(other) as b:
        assert not np.array_equal(a["W1"], b["W1"])
    # The exported file runs as the learned agent, on every code path.
    agent = make_agent("learned", n_arms=4, policy=str(full), seed=0)
    result = simulate(agent, "cyclic4", 200, seed=1)
    assert result.fused and result.final_regret("copeland_komiyama") >= 0
    slow = simulate(make_agent("learned", n_arms=4, policy=str(full), seed=0), "cyclic4", 200, seed=1, fused=False)
    np.testing.assert_array_equal(result.cumulative_regret["copeland_komiyama"], slow.cumulative_regret["copeland_komiyama"])


def test_evolution_refuses_bad_settings(tmp_path):
    train_evolution(tmp_path / "run", generations=1, **TINY)
    with pytest.raises(ValueError, match="another configuration"):
        train_evolution(tmp_path / "run", generations=2, **{**TINY, "sigma": 0.5})
    with pytest.raises(ValueError, match="families"):
        train_evolution(tmp_path / "bad", generations=1, **{**TINY, "families": ("no_such_family",)})
    with pytest.raises(ValueError, match="sigma"):
        train_evolution(tmp_path / "bad", generations=1, **{**TINY, "sigma": -1.0})
    with pytest.raises(ValueError, match="does not exist"):
        train_evolution(tmp_path / "bad", generations=1, init=tmp_path / "missing.npz", **TINY)
    # A policy for five arms starts a four-armed run (the weights do not depend on K).
    start = train_evolution(tmp_path / "from_k5", generations=1, init=DATA_DIRECTORY / "learned_k5.npz", **TINY)
    with np.load(start) as archive:
        assert int(archive["n_arms"]) == 4 and int(archive["hidden"]) == 16


def test_learned_agent_policy_file_option(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        make_agent("learned", n_arms=3, policy=str(tmp_path / "missing.npz"))
    with pytest.raises(TypeError, match="path"):
        LearnedAgent(3, policy=3)
    assert make_agent("learned", n_arms=5, seed=0).hyperparameters["policy"] is None


def test_cli_train_es_writes_a_policy_and_refuses_a_file_as_output(tmp_path, capsys):
    out = tmp_path / "cli"
    code = cli_main(["train", "es", "--out", str(out), "--n-arms", "3", "--horizon", "30", "--generations", "2",
                     "--pairs", "2", "--problems-per-family", "2", "--hidden", "4", "--eval-every", "1",
                     "--eval-problems", "2", "--threads", "1", "--no-progress", "--report-problems", "0"])
    assert code == 0
    with np.load(out / "policy.npz") as archive:
        metadata = json.loads(str(archive["metadata"]))
    assert metadata["command"].startswith("dueling-gym train es --out")
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["train", "es", "--out", str(tmp_path / "file"), "--generations", "1"])
    assert exit_info.value.code == 2
    assert "is a file" in capsys.readouterr().err


def test_classic_normalisation_measures_the_reference_once(tmp_path):
    settings = {**TINY, "normalise": "classic", "families": ("unique_copeland_winner",)}
    train_evolution(tmp_path / "run", generations=1, **settings)
    reference = json.loads((tmp_path / "run" / "reference_regret.json").read_text())
    assert set(reference) == {"unique_copeland_winner"} and reference["unique_copeland_winner"] > 0
    with pytest.raises(ValueError, match="normalise"):
        train_evolution(tmp_path / "bad", generations=1, **{**settings, "normalise": "best"})


def test_evaluation_over_several_arm_counts_plays_learned_where_it_has_a_policy(tmp_path):
    from dueling_gym.experiments.studies.learned_evaluation import evaluate

    # A policy file trained for one size plays that size only ...
    rows = evaluate(tmp_path, agents=["learned", "random"], families=("utility_based",), n_arms=(5, 4),
                    horizons=(20, 50), n_problems=3, policy=DATA_DIRECTORY / "learned_k5.npz")
    played = {(row["problems"], row["agent"]) for row in rows}
    assert played == {("utility_based K=5", "learned"), ("utility_based K=5", "random"), ("utility_based K=4", "random")}
    # ... while the shipped policies (the general one for sizes without a file) play every size.
    shipped = evaluate(tmp_path / "shipped", agents=["learned", "random"], families=("utility_based",), n_arms=(5, 4),
                       horizons=(20,), n_problems=2)
    assert {(row["problems"], row["agent"]) for row in shipped} == {
        (f"utility_based K={k}", agent) for k in (4, 5) for agent in ("learned", "random")}
    assert all(row["runs"] == 3 for row in rows)
    summary = (tmp_path / "summary.md").read_text()
    assert summary.count("###") == 4 and "| utility_based K=5 | 20 | random |" in summary  # the paired table first
    # The only classic agent has no other to be compared with: the learned policy's line alone.
    robust = list(csv.DictReader((tmp_path / "robustness.csv").open()))
    assert [(row["agent"], row["horizon"], row["problem_sets"]) for row in robust] == [
        ("learned", "20", "1"), ("learned", "50", "1")]
    paired = list(csv.DictReader((tmp_path / "paired.csv").open()))
    assert [(row["problems"], row["horizon"], row["best_classic"]) for row in paired] == [
        ("utility_based K=5", "20", "random"), ("utility_based K=5", "50", "random")]


def test_the_paired_comparison_takes_the_best_other_agent_and_says_below_above_or_tied():
    from dueling_gym.experiments.studies.learned_evaluation import paired_comparison

    runs = {("set", "learned"): np.array([[1.0, 10.0], [3.0, 14.0], [2.0, 12.0]]),
            ("set", "weak"): np.array([[9.0, 9.0], [9.0, 9.0], [9.0, 9.0]]),
            ("set", "strong"): np.array([[5.0, 2.0], [6.0, 3.0], [7.0, 1.0]]),
            ("other", "strong"): np.ones((3, 2))}
    first, second = paired_comparison(runs, (100, 1000))
    # T = 100: the best other agent is "strong" (mean 6); differences -4, -3, -5.
    assert first["best_classic"] == "strong" and first["difference"] == pytest.approx(-4.0)
    assert first["ci95"] == pytest.approx(4.302653 * 1.0 / np.sqrt(3)) and first["verdict"] == "below"  # t_2
    # T = 1000: "strong" again (mean 2); differences 8, 11, 11.
    assert second["difference"] == pytest.approx(10.0) and second["verdict"] == "above"
    tied = paired_comparison({("s", "learned"): np.array([[1.0], [3.0]]), ("s", "x"): np.array([[2.0], [2.0]])}, (10,))
    assert tied[0]["difference"] == 0.0 and tied[0]["verdict"] == "tied"


def test_the_learned_vs_classic_preset_is_listed():
    from dueling_gym.experiments.studies.presets import get_preset

    preset = get_preset("learned-vs-classic")
    assert preset.kind == "learned" and preset.full["n_arms"] == (4, 5, 8, 16) and preset.full["horizons"] == (100, 1000, 10_000)


def test_policies_are_shipped_for_four_five_and_eight_arms_with_their_commands():
    from dueling_gym.agents.learned import shipped_policies

    assert shipped_policies() == [4, 5, 8]
    for n_arms, init in ((4, "agents/data/learned_k5.npz"), (5, "agents/data/distilled3_k5.npz"),
                         (8, "agents/data/learned_k5.npz")):
        # With 5 arms the agent plays the mean of the K = 4 and K = 5 files; the K = 5 file's own command here.
        agent = make_agent("learned", n_arms=n_arms, seed=0,
                           **({"policy": str(DATA_DIRECTORY / "learned_k5.npz")} if n_arms == 5 else {}))
        assert agent.metadata["command"].startswith("dueling-gym train es") and f"--init {init}" in agent.metadata["command"]
        result = simulate(agent, _problem(n_arms), 300, seed=0)
        assert result.final_regret("copeland_komiyama") >= 0
    # The four-arm policy was trained as it is played: after the shipped opening's 100 duels.
    four = make_agent("learned", n_arms=4, seed=0).metadata
    assert four["config"]["n_arms"] == 4 and four["config"]["after_shipped"] == 100
    assert list(four["config"]["after_shipped_files"]["4"]) == ["learned_opening.npz"]
    opening = make_agent("learned", n_arms=6, seed=0).opening_metadata  # every size's first duels
    assert opening["command"].startswith("dueling-gym train es") and "--init agents/data/learned_k5.npz" in opening["command"]
    assert opening["config"]["n_arms"] == [4, 5, 8, 16] and opening["config"]["horizons"] == [100, 1000]
    large = make_agent("learned", n_arms=16, seed=0).opening_metadata  # the first duels from 16 arms on
    assert large["command"].startswith("dueling-gym train es") and "--handover agents/data/learned_k8.npz" in large["command"]
    assert large["config"]["n_arms"] == [16, 24] and large["config"]["horizons"] == [100, 1000, 10000]
    assert large["config"]["handover_at"] == 1000  # trained as it is played: an opening of 1000 duels
    total = sum((DATA_DIRECTORY / name).stat().st_size
                for name in ("learned_k4.npz", "learned_k5.npz", "learned_k8.npz", "learned_opening.npz", "learned_opening_large.npz",
                             "learned_opening_k5.npz", "learned_late.npz", "learned_late_small.npz", "learned_late_large.npz",
                             "learned_cycle_k5.npz", "learned_k5_average.npz"))
    assert total < 5 * 2**20


def _problem(n_arms: int):
    from dueling_gym.problems.generators import ProblemSampler

    return ProblemSampler("unique_copeland_winner", n_arms=n_arms)(np.random.default_rng(0))


def test_training_a_late_policy_scores_the_agent_it_will_play(tmp_path):
    # The trained weights take over after the shipped agent's first 130 duels at K = 4: its
    # opening's 100, then the K = 4 weights' 30, as the agent with late_from=130 plays them.
    late = train_evolution(tmp_path / "late", generations=2, **{**TINY, "horizon": 160, "after_shipped": 130})
    config = json.loads((tmp_path / "late" / "config.json").read_text())
    assert config["after_shipped"] == 130
    assert set(config["after_shipped_files"]["4"]) == {"learned_opening.npz", "learned_k4.npz"}
    weights, metadata = load_policy_weights(late)
    assert metadata["config"]["after_shipped"] == 130
    problem = _problem(4)
    opening, _ = load_policy_weights(DATA_DIRECTORY / "learned_opening.npz")
    four, _ = load_policy_weights(DATA_DIRECTORY / "learned_k4.npz")
    draws = np.random.default_rng(3).random(320)
    agent = make_agent("learned", n_arms=4, late=str(late), late_from=130, seed=3)
    expected = _agent_regret(agent, problem, 160, draws[160:])
    got = policy_episode_regret(weights, problem.matrix[None], problem.regret_matrix("copeland_komiyama")[None], 160,
                                np.random.default_rng(3), preceded_by=[(opening, 100), (four, 130)])
    assert got[0] == pytest.approx(expected, abs=1e-9)


def test_a_mixture_of_sizes_and_horizons_under_the_safeguard(tmp_path):
    settings = {**TINY, "n_arms": [3, 5], "horizons": [10, 60], "safeguard_from": 20, "normalise": "classic"}
    policy = train_evolution(tmp_path / "mix", generations=2, **settings)
    reference = json.loads((tmp_path / "mix" / "reference_regret.json").read_text())
    assert set(reference) == {"K=3", "K=5"}
    assert all(len(values) == 2 for table in reference.values() for values in table.values())  # one per horizon
    header = (tmp_path / "mix" / "evaluations.csv").read_text().splitlines()[0].split(",")
    assert "K=3 utility_based@10" in header and "K=5 no_condorcet_winner@60" in header
    _, metadata = load_policy_weights(policy)
    assert metadata["config"]["n_arms"] == [3, 5] and metadata["config"]["safeguard_from"] == 20
    assert metadata["config"]["horizon"] == 60
    # A policy trained on a mixture plays every size, under the safeguard it was trained with.
    agent = make_agent("learned", n_arms=7, policy=str(policy), seed=0)
    assert agent._safeguard_start() == 20
    assert make_agent("learned", n_arms=7, policy=str(policy), safeguard_from=None, seed=0)._safeguard_start() == 0
    # The same command gives the same weights whatever the threads.
    again = train_evolution(tmp_path / "again", generations=2, **{**settings, "threads": 2})
    first, _ = load_policy_weights(policy)
    second, _ = load_policy_weights(again)
    for name in first:
        np.testing.assert_array_equal(first[name], second[name])
    with pytest.raises(ValueError, match="horizons"):
        train_evolution(tmp_path / "bad", generations=1, **{**settings, "horizons": [60, 10]})
    with pytest.raises(ValueError, match="n_arms"):
        train_evolution(tmp_path / "bad2", generations=1, **{**settings, "n_arms": [3, 3]})


def test_extrapolated_regret_is_exact_for_logarithmic_growth_and_large_for_linear():
    horizons = (5000, 10000)
    logarithmic = np.array([[30 * np.log(5000.0) + 7, 30 * np.log(10000.0) + 7]])
    np.testing.assert_allclose(extrapolate_regret(logarithmic, horizons, 100000), [30 * np.log(100000.0) + 7])
    # Regret that stops growing stays; regret growing at 0.1 a duel from 5000 on reads 1.66 * 0.1 * T more.
    np.testing.assert_allclose(extrapolate_regret(np.array([200.0, 200.0]), horizons, 100000), 200.0)
    linear = extrapolate_regret(np.array([200.0, 700.0]), horizons, 100000)
    assert linear == pytest.approx(700 + 500 * np.log(10) / np.log(2))
    with pytest.raises(ValueError, match="two horizons"):
        extrapolate_regret(np.array([1.0]), (100,), 1000)
    with pytest.raises(ValueError, match="after the last horizon"):
        extrapolate_regret(np.array([1.0, 2.0]), horizons, 10000)


def test_training_with_the_extrapolated_fitness_scores_the_extrapolation(tmp_path):
    settings = {**TINY, "horizons": [30, 60], "extrapolate_to": 600, "normalise": "classic"}
    policy = train_evolution(tmp_path / "extrapolated", generations=1, **settings)
    _, metadata = load_policy_weights(policy)
    assert metadata["config"]["extrapolate_to"] == 600 and metadata["config"]["horizon"] == 60
    # The validation score is the extrapolated regret over the extrapolated reference, family by family.
    rows = list(csv.DictReader((tmp_path / "extrapolated" / "evaluations.csv").open()))
    reference = json.loads((tmp_path / "extrapolated" / "reference_regret.json").read_text())
    families = TINY.get("families", ["no_condorcet_winner", "unique_copeland_winner", "utility_based"])
    ratios = [extrapolate_regret(np.array([float(rows[0][f"{family}@30"]), float(rows[0][f"{family}@60"])]), (30, 60), 600)
              / extrapolate_regret(np.array(reference[family]), (30, 60), 600) for family in families]
    assert float(rows[0]["normalised_regret"]) == pytest.approx(np.mean(ratios), abs=2e-3)
    # Without extrapolation the same runs are scored at the horizons themselves: another score.
    plain = train_evolution(tmp_path / "plain", generations=1, **{**settings, "extrapolate_to": None})
    assert load_policy_weights(plain)[1]["config"].get("extrapolate_to") is None
    with pytest.raises(ValueError, match="two times or more"):
        train_evolution(tmp_path / "bad", generations=1, **{**TINY, "extrapolate_to": 600})
    with pytest.raises(ValueError, match="after the last horizon"):
        train_evolution(tmp_path / "bad2", generations=1, **{**settings, "extrapolate_to": 60})


def test_episode_regret_at_checkpoints_and_with_the_safeguard_matches_the_agent():
    problem = load_problem("mslr5-condorcet")
    weights, _ = load_policy_weights(DATA_DIRECTORY / "learned_k5.npz", 5)
    horizon = 400
    draws = np.random.default_rng(3).random(2 * horizon)
    agent = LearnedAgent(5, safeguard_from=100, policy=str(DATA_DIRECTORY / "learned_k5.npz"), seed=3)  # no opening
    expected = _agent_regret(agent, problem, horizon, draws[horizon:])
    got = policy_episode_regret(weights, problem.matrix[None], problem.regret_matrix("copeland_komiyama")[None],
                                horizon, np.random.default_rng(3), safeguard_from=100, checkpoints=[50, 400])
    assert got.shape == (1, 2) and got[0, 1] == pytest.approx(expected, abs=1e-9) and got[0, 0] <= got[0, 1]
    # The safeguard's own clock, in the batch runs as in the agent.
    agent = LearnedAgent(5, safeguard_from=100, safeguard_clock="start", policy=str(DATA_DIRECTORY / "learned_k5.npz"),
                         seed=3)
    expected_own = _agent_regret(agent, problem, horizon, draws[horizon:])
    got_own = policy_episode_regret(weights, problem.matrix[None], problem.regret_matrix("copeland_komiyama")[None],
                                    horizon, np.random.default_rng(3), safeguard_from=100, safeguard_clock="start")
    assert got_own[0] == pytest.approx(expected_own, abs=1e-9) and got_own[0] != pytest.approx(expected, abs=1e-9)
    with pytest.raises(ValueError, match="safeguard_clock"):
        policy_episode_regret(weights, problem.matrix[None], problem.matrix[None], 10, np.random.default_rng(0),
                              safeguard_from=5, safeguard_clock="late")
    with pytest.raises(ValueError, match="checkpoints"):
        policy_episode_regret(weights, problem.matrix[None], problem.matrix[None], 10, np.random.default_rng(0),
                              checkpoints=[5, 20])


def test_training_an_opening_with_a_handover_scores_the_agent_it_will_play(tmp_path):
    # The trained weights choose the first duels, the fixed policy the rest (another width here; a
    # policy trained on a mixture of sizes, which plays any K).
    handover = str(DATA_DIRECTORY / "learned_opening.npz")
    opening = train_evolution(tmp_path / "opening", generations=2, **{**TINY, "handover": handover, "handover_at": 10})
    config = json.loads((tmp_path / "opening" / "config.json").read_text())
    assert config["handover"] == handover and config["handover_at"] == 10
    train_evolution(tmp_path / "plain", generations=2, **TINY)

    def first_validation(folder):
        return (tmp_path / folder / "evaluations.csv").read_text().splitlines()[1].split(",")[3:]

    assert first_validation("opening") != first_validation("plain")  # the same start, another agent scored
    agent = make_agent("learned", n_arms=4, policy=handover, opening=str(opening), opening_duels=10, seed=0)
    assert simulate(agent, "cyclic4", 40, seed=1).final_regret("copeland_komiyama") >= 0


def test_an_opening_handed_over_to_the_shipped_size_policies_scores_each_size_with_its_own(tmp_path):
    # "shipped": each size hands over to the file the learned agent plays after its opening, and the
    # files' digests enter the configuration (another size policy shipped later is another run).
    train_evolution(tmp_path / "shipped", generations=2, **{**TINY, "n_arms": 5, "handover": "shipped", "handover_at": 10})
    explicit = str(DATA_DIRECTORY / "learned_k5_average.npz")  # the size policy of 5 arms
    train_evolution(tmp_path / "explicit", generations=2, **{**TINY, "n_arms": 5, "handover": explicit, "handover_at": 10})
    scores = [(tmp_path / folder / "evaluations.csv").read_text().splitlines()[1:] for folder in ("shipped", "explicit")]
    assert scores[0] == scores[1]
    train_evolution(tmp_path / "mixture", generations=1, **{**TINY, "n_arms": (4, 5), "handover": "shipped",
                                                            "handover_at": 10})
    config = json.loads((tmp_path / "mixture" / "config.json").read_text())
    assert config["handover"] == "shipped"
    for size, name in ((4, "learned_k4.npz"), (5, "learned_k5_average.npz")):
        digest = hashlib.sha256((DATA_DIRECTORY / name).read_bytes()).hexdigest()
        assert config["handover_files"][str(size)] == {name: digest}


def test_the_fitness_combines_families_by_their_mean_their_worst_or_a_hinge():
    batch = ProblemBatch(("no_condorcet_winner", "utility_based", "cyclic_copeland_winners"), 4, 2, 100,
                         np.random.default_rng(0))
    batch.normaliser = np.array([10.0, 20.0, 5.0])
    totals = np.array([5.0, 7.0, 24.0, 20.0, 6.0, 6.0])  # family means 6, 22, 6: ratios 0.6, 1.1, 1.2
    assert batch.score(totals) == pytest.approx((0.6 + 1.1 + 1.2) / 3)
    batch.objective = "worst"
    assert batch.score(totals) == pytest.approx(1.2)
    batch.objective, batch.floor = "hinge", 0.8
    assert batch.score(totals) == pytest.approx((0.8 + 1.1 + 1.2) / 3)  # 0.6 counts as the floor
    lower_where_below = totals.copy()
    lower_where_below[:2] = 1.0  # the family already below the floor gains nothing more
    assert batch.score(lower_where_below) == pytest.approx(batch.score(totals))
    batch.floor = None
    with pytest.raises(ValueError, match="floor"):
        batch.score(totals)


def test_training_with_the_hinge_objective_records_its_floor_and_scores_by_it(tmp_path):
    settings = {**TINY, "normalise": "classic", "objective": "hinge", "hinge_floor": 0.9}
    policy = train_evolution(tmp_path / "hinge", generations=1, **settings)
    config = load_policy_weights(policy)[1]["config"]
    assert config["objective"] == "hinge" and config["hinge_floor"] == 0.9
    rows = list(csv.DictReader((tmp_path / "hinge" / "evaluations.csv").open()))
    reference = json.loads((tmp_path / "hinge" / "reference_regret.json").read_text())
    ratios = [float(rows[0][family]) / reference[family] for family in TINY["families"]]
    assert float(rows[0]["normalised_regret"]) == pytest.approx(np.mean(np.maximum(ratios, 0.9)), abs=2e-3)
    # Runs without the hinge keep their configuration as before: no floor recorded.
    plain = train_evolution(tmp_path / "plain", generations=1, **{**TINY, "normalise": "classic"})
    assert "hinge_floor" not in load_policy_weights(plain)[1]["config"]
    for bad in ({"objective": "hinge"}, {"hinge_floor": 0.9}):
        with pytest.raises(ValueError, match="hinge_floor go together"):
            train_evolution(tmp_path / "bad", generations=1, **{**TINY, **bad})
    with pytest.raises(ValueError, match="hinge_floor"):
        train_evolution(tmp_path / "bad2", generations=1, **{**settings, "hinge_floor": -1.0})
