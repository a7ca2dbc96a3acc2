"""The paired validation draws and the stuck-run diagnosis of the learned agent."""

import csv
import math

import numpy as np
import pytest
import torch

from dueling_gym.agents import make_agent
from dueling_gym.agents.learned import DATA_DIRECTORY, GENERAL_POLICY
from dueling_gym.experiments.simulate import simulate
from dueling_gym.experiments.studies import learned_stuck_runs, learned_validation
from dueling_gym.experiments.studies.learned_stuck_runs import stuck_runs, stuck_summary
from dueling_gym.experiments.studies.learned_validation import (
    ALL_FAMILIES,
    FAMILIES,
    paired_validation,
    parse_agent_options,
    validation_problems,
    validation_summary,
)
from dueling_gym.problems.generators import ProblemSampler

torch.set_num_threads(1)


def test_a_draw_is_its_seed_sequence_and_the_family_generator_in_order():
    problems = validation_problems(4, 94, "utility_based", 3)
    rng = np.random.default_rng(np.random.SeedSequence([34, 0x5E1EC7, 4, 94]).spawn(3)[2])
    sampler = ProblemSampler("utility_based", n_arms=4)
    for problem in problems:
        assert np.array_equal(problem.matrix, sampler(rng).matrix)
    # Another draw or family is another stream.
    assert not np.array_equal(validation_problems(4, 95, "utility_based", 1)[0].matrix, problems[0].matrix)
    assert not np.array_equal(validation_problems(4, 94, "no_condorcet_winner", 1)[0].matrix, problems[0].matrix)


def test_the_cyclic_family_is_the_fourth_stream_and_leaves_the_first_three_as_they_were():
    # Spawned children depend on their index only: a fourth stream moves none of the first three.
    assert ALL_FAMILIES[:3] == FAMILIES and ALL_FAMILIES[3] == "cyclic_copeland_winners"
    three = np.random.SeedSequence([34, 0x5E1EC7, 5, 99]).spawn(3)
    four = np.random.SeedSequence([34, 0x5E1EC7, 5, 99]).spawn(4)
    assert [child.generate_state(4).tolist() for child in three] == [child.generate_state(4).tolist() for child in four[:3]]
    (problem,) = validation_problems(5, 99, "cyclic_copeland_winners", 1)
    expected = ProblemSampler("cyclic_copeland_winners", n_arms=5)(np.random.default_rng(four[3]))
    assert np.array_equal(problem.matrix, expected.matrix)
    scores = (problem.matrix > 0.5).sum(axis=1)
    assert sorted(scores.tolist()) == [0, 1, 3, 3, 3]  # three Copeland winners in a cycle
    # The family needs 4 arms: refused before any run, whichever size comes first.
    with pytest.raises(ValueError, match="n_arms"):
        paired_validation([4, 3], 99, 2, 200, families=["cyclic_copeland_winners"])
    with pytest.raises(ValueError, match="at least one family"):
        paired_validation([4], 99, 2, 200, families=[])
    with pytest.raises(TypeError, match="single string"):
        paired_validation([4], 99, 2, 200, families="utility_based")


def test_the_comparison_pairs_each_problem_and_run_seed():
    # The candidate hands over to no late policy from duel 150: identical before, the agent's own runs after.
    rows = paired_validation([4], 7, 3, 300, candidate={"late": None}, baseline={"late_from": 150},
                             families=["unique_copeland_winner"])
    assert [row["horizon"] for row in rows] == [100, 300]
    first, last = rows
    assert first["identical"] and first["difference"] == 0.0 and first["verdict"] == "tied"
    assert not last["identical"] and last["runs"] == 3
    problems = validation_problems(4, 7, "unique_copeland_winner", 3)
    expected = [simulate(make_agent("learned", 4, late=None), problem, 300, seed=1_000_003 * index + 17)
                .final_regret("copeland_komiyama") for index, problem in enumerate(problems)]
    assert last["candidate"] == pytest.approx(np.mean(expected), abs=1e-9)
    assert last["difference"] == pytest.approx(last["candidate"] - last["baseline"], abs=1e-9)
    assert "| 4 | unique_copeland_winner | 100 |" in validation_summary(rows) and "identical" in validation_summary(rows)


def test_reference_agents_play_the_same_problems_and_seeds_and_the_best_is_named():
    references = ("winner_stays_strong", "ecw_rmed", "dts")
    rows = paired_validation([4], 7, 3, 300, families=["no_condorcet_winner"], references=references)
    problems = validation_problems(4, 7, "no_condorcet_winner", 3)
    for row in rows:
        means = {name: np.mean([simulate(make_agent(name, 4), problem, 300, seed=1_000_003 * index + 17,
                                         checkpoints=[100, 300]).cumulative_regret["copeland_komiyama"][int(row["horizon"] > 100)]
                                for index, problem in enumerate(problems)]) for name in references}
        best = min(means, key=means.get)
        assert row["best_reference"] == best and row["best_reference_mean"] == pytest.approx(means[best], abs=1e-9)
        assert row["candidate_over_reference"] == pytest.approx(row["candidate"] / means[best], abs=1e-12)
    summary = validation_summary(rows)
    assert "candidate / best reference" in summary and f"| {rows[0]['best_reference']} " in summary
    # Without references the rows and the table are as before.
    plain = paired_validation([4], 7, 3, 300, families=["no_condorcet_winner"])
    assert "best_reference" not in plain[0] and "best reference" not in validation_summary(plain)
    assert plain[0]["candidate"] == rows[0]["candidate"]
    with pytest.raises(ValueError, match="not a classic dueling agent"):
        paired_validation([4], 7, 3, 300, references=["learned"])
    with pytest.raises(ValueError, match="not a classic dueling agent"):
        paired_validation([4], 7, 3, 300, references=["nonesuch"])
    with pytest.raises(ValueError, match="twice"):
        paired_validation([4], 7, 3, 300, references=["dts", "dts"])
    with pytest.raises(TypeError, match="single string"):
        paired_validation([4], 7, 3, 300, references="dts")


def test_the_general_policy_file_can_be_named_at_a_size_with_a_file_of_its_own():
    # 4 arms now play learned_k4.npz; naming the K = 5 weights replays the agent from before it.
    named = make_agent("learned", 4, policy=str(GENERAL_POLICY), opening=str(DATA_DIRECTORY / "learned_opening.npz"),
                       late=str(DATA_DIRECTORY / "learned_late.npz"), seed=0)
    assert named.metadata["n_arms"] == 5
    with pytest.raises(ValueError, match="holds a policy for 4 arms, not 5"):
        make_agent("learned", 5, policy=str(DATA_DIRECTORY / "learned_k4.npz"))


def test_agent_options_are_parsed_and_checked():
    assert parse_agent_options("late=none, late_from=2000,policy=p.npz") == {"late": None, "late_from": 2000, "policy": "p.npz"}
    assert parse_agent_options("") == {}
    with pytest.raises(ValueError, match="key=value"):
        parse_agent_options("late")
    with pytest.raises(ValueError, match="twice"):
        parse_agent_options("late=none,late=none")
    with pytest.raises(ValueError, match="not options of the learned agent"):
        parse_agent_options("seed=3")
    with pytest.raises(TypeError, match="mapping"):
        paired_validation([4], 1, 2, 100, candidate=["late"])
    with pytest.raises(ValueError, match="family"):
        paired_validation([4], 1, 2, 100, families=["cyclic"])
    with pytest.raises(ValueError, match="n_problems"):
        paired_validation([4], 1, 1, 100)


def test_the_validation_command_line_writes_its_table(tmp_path, capsys):
    learned_validation.main(["--out", str(tmp_path), "--n-arms", "3", "--draw", "1", "--problems", "2", "--horizon", "150",
                             "--candidate", "late=none", "--families", "no_condorcet_winner"])
    rows = list(csv.DictReader((tmp_path / "paired.csv").open()))
    assert [row["horizon"] for row in rows] == ["100", "150"] and rows[0]["identical"] == "True"
    assert "baseline → candidate" in capsys.readouterr().out and (tmp_path / "summary.md").is_file()
    # The files each agent plays are written beside the table, so the table says what it compared.
    agents = list(csv.DictReader((tmp_path / "agents.csv").open()))
    assert [(row["agent"], row["late"]) for row in agents] == [("baseline", "learned_late_small.npz"), ("candidate", "none")]
    assert "| 3 | candidate | learned_k5.npz | learned_opening.npz (100) | none (-) | none (-) | off |" in (tmp_path / "summary.md").read_text()
    learned_validation.main(["--out", str(tmp_path / "with"), "--n-arms", "3", "--draw", "1", "--problems", "2",
                             "--horizon", "150", "--families", "no_condorcet_winner", "--references", "rmed1,dts"])
    rows = list(csv.DictReader((tmp_path / "with" / "paired.csv").open()))
    assert {row["best_reference"] for row in rows} <= {"rmed1", "dts"} and float(rows[1]["candidate_over_reference"]) > 0


def test_agent_files_name_what_each_phase_plays(tmp_path):
    assert learned_validation.agent_files(5) == {
        "policy": "learned_k5_average.npz", "opening": "learned_opening_k5.npz", "opening_duels": "100",
        "late": "learned_late_small.npz", "late_from": "1000", "cycle": "learned_cycle_k5.npz", "cycle_until": "1000",
        "safeguard": "off", "thompson_check": "off"}
    assert learned_validation.agent_files(5, {"cycle": None})["cycle"] == "none"
    assert learned_validation.agent_files(5, {"cycle_until": 500})["cycle_until"] == "500"
    assert learned_validation.agent_files(4)["cycle"] == "none"  # 5 arms only
    assert learned_validation.agent_files(16)["opening_duels"] == "1000"
    assert learned_validation.agent_files(4, {"safeguard_from": 1000, "late_from": 2000})["late_from"] == "2000"
    assert learned_validation.agent_files(4, {"safeguard_from": 1000})["safeguard"] == "on"
    assert learned_validation.agent_files(4, {"thompson_check_from": 1000})["thompson_check"] == "1000"
    # "shipped" beside a policy file of one's own plays no opening and no late policy: the table says so.
    own = tmp_path / "own.npz"
    own.write_bytes(GENERAL_POLICY.read_bytes())
    other = tmp_path / "other.npz"
    with np.load(GENERAL_POLICY) as data:
        arrays = {key: data[key] for key in data.files}
    arrays["w0"] = arrays["w0"] + 1.0
    np.savez(other, **arrays)
    files = learned_validation.agent_files(5, {"policy": str(other), "opening": "shipped", "late": "shipped"})
    assert files["opening"] == "none" and files["late"] == "none" and files["policy"].startswith("sha256:")
    assert learned_validation.agent_files(5, {"policy": str(own)})["policy"] == "learned_k5.npz"  # known by content
    with pytest.raises(ValueError, match="does not exist"):
        learned_validation.agent_files(5, {"policy": str(tmp_path / "missing.npz")})
    with pytest.raises(ValueError, match="not options"):
        learned_validation.agent_files(5, {"horizon": 3})


def test_stuck_runs_split_the_growth_by_run(monkeypatch):
    # With a threshold of zero every run counts as stuck, with one above any regret rate none does.
    monkeypatch.setattr(learned_stuck_runs, "STUCK_RATE", 0.0)
    rows = stuck_runs([3], 2, 20_000, agent_options={"late": None}, families=["utility_based"])
    (row,) = rows
    assert row["stuck"] == 2 and row["runs"] == 2 and row["share_from_stuck"] == pytest.approx(1.0)
    assert row["growth"] == pytest.approx(row["mean_long"] / row["mean_short"])
    assert "| 3 | utility_based | 2 of 2 |" in stuck_summary(rows, 20_000)
    # Each stuck run is replayed to horizon / 10 with its seed: the arm it self-dueled most and the
    # pairs its counts got wrong then.
    rows_again, details = learned_stuck_runs.stuck_runs_and_pairs([3], 2, 20_000, agent_options={"late": None},
                                                                  families=["utility_based"])
    assert [(again["stuck"], again["mean_long"]) for again in rows_again] == [(2, row["mean_long"])]
    assert [detail["run"] for detail in details] == [0, 1]
    for detail in details:
        assert detail["duels"] == 2000 and 0 <= detail["exploited_arm"] < 3 and detail["exploited_regret"] >= 0
        assert detail["misread_pairs"] >= detail["misread_pairs_of_the_arm"] >= 0
        assert detail["pairs"].count(" duels evidence ") == detail["misread_pairs"] >= detail["tied_pairs"]
    monkeypatch.setattr(learned_stuck_runs, "STUCK_RATE", 2.0)  # no regret grows faster than 1 per duel
    (row,) = stuck_runs([3], 2, 20_000, agent_options={"late": None}, families=["utility_based"])
    assert row["stuck"] == 0 and row["share_from_stuck"] == 0.0
    assert row["growth_without_stuck"] == pytest.approx(row["growth"])
    with pytest.raises(ValueError, match="horizon"):
        stuck_runs([3], 2, 10_000)
    with pytest.raises(ValueError, match="not options of the learned agent"):
        stuck_runs([3], 2, 20_000, agent_options={"seed": 1})
    with pytest.raises(ValueError, match="family"):
        stuck_runs([3], 2, 20_000, families=["cyclic"])
    with pytest.raises(ValueError, match="n_arms must be at least 4"):
        stuck_runs([4, 3], 2, 20_000, families=["cyclic_copeland_winners"], jobs=2)


def test_misread_pairs_are_those_of_the_arm_and_of_the_winners_the_counts_get_wrong():
    from dueling_gym.problems import PreferenceMatrix

    # Arm 0 is the Condorcet winner; arm 3 beats arm 2 (0.6) but the counts say otherwise.
    matrix = np.array([[0.5, 0.55, 0.7, 0.8],
                       [0.45, 0.5, 0.6, 0.7],
                       [0.3, 0.4, 0.5, 0.4],
                       [0.2, 0.3, 0.6, 0.5]])
    problem = PreferenceMatrix(matrix)
    wins = np.zeros((4, 4), dtype=np.int64)
    wins[1, 0], wins[0, 1] = 7, 3      # 1 leads the winner: wrong, the arm's own and the winner's
    wins[0, 2], wins[2, 0] = 5, 5      # tied in the counts: the winner's point goes to neither
    wins[3, 0], wins[0, 3] = 2, 1      # the winner's pair, wrong
    wins[2, 3], wins[3, 2] = 9, 1      # wrong, but neither the arm's nor a winner's
    wins[1, 2], wins[2, 1] = 4, 1      # the arm's, read right
    wins[1, 3], wins[3, 1] = 3, 0      # the arm's, read right
    pairs = learned_stuck_runs.misread_pairs(wins, problem, 1)
    assert [(pair["first"], pair["second"], pair["read"], pair["duels"]) for pair in pairs] == [
        (1, 0, "wrong", 10), (0, 2, "tied", 10), (3, 0, "wrong", 3)]
    assert pairs[0]["preference"] == pytest.approx(0.45) and pairs[1]["preference"] == pytest.approx(0.7)
    assert pairs[0]["evidence"] == pytest.approx(10 * (0.7 * math.log(1.4) + 0.3 * math.log(0.6)))
    assert pairs[1]["evidence"] == 0.0
    # Before any duel every pair of the arm and of the winner is read as a tie.
    unplayed = learned_stuck_runs.misread_pairs(np.zeros((4, 4), dtype=np.int64), problem, 0)
    assert [(pair["first"], pair["second"], pair["read"]) for pair in unplayed] == [(0, 1, "tied"), (0, 2, "tied"),
                                                                                   (0, 3, "tied")]


def test_the_stuck_runs_command_line_writes_its_table(tmp_path, capsys):
    learned_stuck_runs.main(["--out", str(tmp_path), "--n-arms", "3", "--problems", "1", "--horizon", "20000",
                             "--agent", "late=none"])
    rows = list(csv.DictReader((tmp_path / "stuck_runs.csv").open()))
    assert [row["family"] for row in rows] == ["no_condorcet_winner", "unique_copeland_winner", "utility_based"]
    assert "runs stuck" in capsys.readouterr().out and (tmp_path / "summary.md").is_file()
