"""Distillation of teachers into the pair policy (dueling_gym.experiments.learning.distillation)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from dueling_gym.agents.learned import DATA_DIRECTORY, load_policy_weights
from dueling_gym.experiments.learning.distillation import distill_policy, parse_teachers, teacher_states

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

INIT = DATA_DIRECTORY / "learned_k5.npz"


def test_teacher_states_are_the_counts_before_each_duel():
    duels = np.array([[0, 1], [1, 0], [2, 2], [0, 1]])
    outcomes = np.array([True, True, False, False])
    states = teacher_states(duels, outcomes, 3)
    assert states.shape == (4, 3, 3)
    assert not states[0].any()
    assert states[1][0, 1] == 1 and states[1].sum() == 1
    assert states[2][1, 0] == 1 and states[2].sum() == 2
    # A self-duel is counted on the diagonal whatever its outcome, as the learned agent counts it.
    assert states[3][2, 2] == 1 and states[3].sum() == 3


def test_parse_teachers_reads_pairs_and_refuses_malformed_ones():
    assert parse_teachers("utility_based=winner_stays_strong, no_condorcet_winner=init") == {
        "utility_based": "winner_stays_strong", "no_condorcet_winner": "init"}
    with pytest.raises(ValueError, match="family=agent"):
        parse_teachers("utility_based")
    with pytest.raises(ValueError, match="two teachers"):
        parse_teachers("utility_based=init,utility_based=rucb")


@pytest.mark.parametrize("teachers, message", [
    ({"no_such_family": "init"}, "unknown family"),
    ({"utility_based": "no_such_agent"}, "unknown teacher"),
    ({"utility_based": "savage_pac"}, "pure-exploration"),
    ({}, "at least one"),
])
def test_bad_teachers_are_refused(tmp_path, teachers, message):
    if message == "pure-exploration":
        from dueling_gym.agents import AGENT_REGISTRY

        teachers = {"utility_based": next(name for name, cls in AGENT_REGISTRY.items() if cls.pure_exploration)}
    with pytest.raises(ValueError, match=message):
        distill_policy(tmp_path, init=INIT, teachers=teachers)


def test_missing_init_is_refused(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        distill_policy(tmp_path / "out", init=tmp_path / "none.npz", teachers={"utility_based": "init"})


def _tiny(tmp_path, name, **options):
    settings = dict(init=INIT, n_arms=5, horizon=60, runs_per_family=3, epochs=2, batch_size=64, eval_problems=2,
                    seed=1, progress=False, command="test")
    settings.update(options)
    return distill_policy(tmp_path / name, **settings)


def test_distilling_a_policy_into_itself_changes_nothing_and_the_file_is_a_policy(tmp_path):
    # The student starts as its own teacher: the loss is at its minimum and the gradients are zero up to
    # float32 rounding (which Adam scales up to steps of at most the learning rate).
    path = _tiny(tmp_path, "still", teachers={"utility_based": "init"}, learning_rate=1e-5)
    weights, metadata = load_policy_weights(path, 5)
    initial, _ = load_policy_weights(INIT, 5)
    for name, array in initial.items():
        np.testing.assert_allclose(weights[name], array, rtol=0, atol=1e-4, err_msg=name)
    assert metadata["command"] == "test" and metadata["config"]["teachers"] == {"utility_based": "init"}
    rows = list(csv.DictReader((tmp_path / "still" / "evaluations.csv").open()))
    assert [row["epoch"] for row in rows] == ["0", "1", "2"] and "utility_based" in rows[0]
    # The loss is the policy's own entropy on the visited states, and stays there.
    assert float(rows[1]["loss"]) > 0 and float(rows[2]["loss"]) == pytest.approx(float(rows[1]["loss"]), rel=1e-3)
    assert json.loads((tmp_path / "still" / "config.json").read_text())["algorithm"] == "distill"


def test_distillation_is_deterministic_and_learns_the_teacher(tmp_path):
    teachers = {"utility_based": "winner_stays_strong", "no_condorcet_winner": "init"}
    first = _tiny(tmp_path, "a", teachers=teachers, epochs=4, learning_rate=0.01)
    second = _tiny(tmp_path, "b", teachers=teachers, epochs=4, learning_rate=0.01)
    with np.load(first) as a, np.load(second) as b:
        for name in ("W1", "A", "S", "w", "s_n"):
            np.testing.assert_array_equal(a[name], b[name])
        assert not np.array_equal(a["w"], np.load(INIT)["w"])
    losses = [float(row["loss"]) for row in csv.DictReader((tmp_path / "a" / "evaluations.csv").open())][1:]
    assert losses[-1] < losses[0]


def test_a_wider_student_starts_as_the_starting_policy_and_narrower_is_refused(tmp_path):
    path = _tiny(tmp_path, "wide", teachers={"utility_based": "winner_stays_strong"}, hidden=20)
    weights, metadata = load_policy_weights(path, 5)
    assert weights["W2"].shape == (20, 20) and metadata["config"]["hidden"] == 20
    rows = list(csv.DictReader((tmp_path / "wide" / "evaluations.csv").open()))
    reference = _tiny(tmp_path, "narrow", teachers={"utility_based": "winner_stays_strong"})
    narrow = list(csv.DictReader((tmp_path / "narrow" / "evaluations.csv").open()))
    # Epoch 0 validates the student before any step: the widened network plays exactly as the narrow one.
    assert rows[0]["utility_based"] == narrow[0]["utility_based"]
    assert load_policy_weights(reference, 5)[0]["W2"].shape == (16, 16)
    with pytest.raises(ValueError, match="narrower"):
        _tiny(tmp_path, "thin", teachers={"utility_based": "init"}, hidden=8)


def test_cli_train_distill_writes_a_policy_and_names_a_malformed_teacher(tmp_path, capsys, monkeypatch):
    from dueling_gym.cli import main as cli_main
    from dueling_gym.experiments.studies import learned_evaluation

    reports = []

    def record_report(output_dir, **options):  # the full comparison with 27 agents is tested elsewhere
        reports.append(options)
        Path(output_dir).mkdir(parents=True)
        (Path(output_dir) / "summary.md").write_text("table")

    monkeypatch.setattr(learned_evaluation, "evaluate", record_report)
    out = tmp_path / "cli"
    code = cli_main(["train", "distill", "--out", str(out), "--init", str(INIT), "--teachers",
                     "utility_based=winner_stays_strong", "--horizon", "40", "--runs-per-family", "2", "--epochs", "1",
                     "--eval-problems", "2", "--no-progress", "--report-problems", "2"])
    assert code == 0
    # The report compares the policy on the teachers' families, at the training horizon.
    assert [(report["families"], report["horizons"], report["n_problems"]) for report in reports] == [
        (["utility_based"], [40], 2)]
    _, metadata = load_policy_weights(out / "policy.npz", 5)
    assert metadata["command"].startswith("dueling-gym train distill --out")
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["train", "distill", "--out", str(tmp_path / "bad"), "--init", str(INIT), "--teachers", "utility_based"])
    assert exit_info.value.code == 2
    assert "family=agent" in capsys.readouterr().err
