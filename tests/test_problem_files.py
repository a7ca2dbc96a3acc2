"""Problem files: a problem saved with its provenance, named by its file in sweeps."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dueling_gym.cli import main
from dueling_gym.experiments.sweeps.sweep import ProblemSpec
from dueling_gym.problems import PreferenceMatrix, load_problem, read_problem_file, save_problem

MATRIX = [[0.5, 0.7, 0.4], [0.3, 0.5, 0.8], [0.6, 0.2, 0.5]]


def _problem() -> PreferenceMatrix:
    wins = np.array([[0, 7, 4], [3, 0, 8], [6, 2, 0]])
    lower = np.where(np.eye(3, dtype=bool), np.nan, 0.25)
    return PreferenceMatrix(MATRIX, name="three-systems", source="a test log",
                            provenance={"arms": ["a", "b", "c"], "wins": wins, "tie_rule": "half", "ci_lower": lower,
                                        "interval": {"method": "Wilson", "level": 0.95}})


def test_a_saved_problem_reads_back_with_its_name_source_and_provenance(tmp_path):
    problem = _problem()
    path = save_problem(problem, tmp_path / "problem.json")
    again = read_problem_file(path)
    assert again == problem and again.name == "three-systems" and again.source == "a test log"
    assert again.provenance["arms"] == ["a", "b", "c"]
    assert again.provenance["wins"].dtype == np.int64 and again.provenance["wins"].tolist() == [[0, 7, 4], [3, 0, 8],
                                                                                                  [6, 2, 0]]
    assert not again.provenance["wins"].flags.writeable
    assert again.provenance["interval"] == {"method": "Wilson", "level": 0.95}
    lower = again.provenance["ci_lower"]  # NaN (undefined on the diagonal) survives as null
    assert lower.dtype == np.float64 and np.isnan(np.diag(lower)).all() and lower[0, 1] == 0.25
    # A shipped problem round-trips bit for bit.
    sushi = load_problem("sushi")
    assert np.array_equal(read_problem_file(save_problem(sushi, tmp_path / "sushi.json")).matrix, sushi.matrix)


def test_an_edited_or_foreign_file_is_refused_naming_the_file(tmp_path):
    path = save_problem(_problem(), tmp_path / "problem.json")
    document = json.loads(path.read_text())
    document["matrix"][0][1], document["matrix"][1][0] = 0.75, 0.25  # still a valid matrix, but not the saved one
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="problem.json: the matrix does not match its recorded SHA-256"):
        read_problem_file(path)
    for text, message in (("{", "invalid JSON"), ("[]", "not a problem file"),
                          ('{"format": "dueling-gym problem", "version": 7}', "version 7 is not supported"),
                          ('{"format": "dueling-gym problem", "version": 1, "name": null}', "lacks")):
        path.write_text(text)
        with pytest.raises(ValueError, match=message):
            read_problem_file(path)
    with pytest.raises(TypeError, match="provenance.when: a date cannot be saved"):
        import datetime

        save_problem(PreferenceMatrix(MATRIX, provenance={"when": datetime.date(2026, 1, 1)}), tmp_path / "x.json")
    with pytest.raises(ValueError, match="infinity"):
        save_problem(PreferenceMatrix(MATRIX, provenance={"se": np.array([np.inf])}), tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_a_sweep_runs_a_saved_problem_and_refuses_it_once_the_file_changed(tmp_path, capsys):
    path = save_problem(_problem(), tmp_path / "log problem, v1.json")  # commas belong to the path
    spec = ProblemSpec.parse(f"file:{path}")
    assert spec.label == "three-systems" and spec.identity["options"] == {"path": str(path)}
    assert len(spec.identity["matrix_sha256"]) == 64
    out = tmp_path / "results"
    arguments = ["run", "--agents", "rucb", "random", "--problems", f"file:{path}", "--seeds", "2", "--horizon", "300",
                 "--out", str(out)]
    assert main(arguments) == 0
    assert "three-systems" in (out / "summary.md").read_text()
    assert len(list((out / "units").glob("*.json"))) == 4
    assert main(["verify", str(out)]) == 0
    save_problem(PreferenceMatrix([[0.5, 0.9, 0.4], [0.1, 0.5, 0.8], [0.6, 0.2, 0.5]], name="three-systems"), path)
    assert main(arguments) == 0  # another matrix: other units, run afresh beside the old ones
    assert len(list((out / "units").glob("*.json"))) == 8
    with pytest.raises(ValueError, match="file:PATH"):
        ProblemSpec("file", options={"path": str(path), "extra": 1})
    with pytest.raises(ValueError, match="takes no n_arms"):
        ProblemSpec("file", n_arms=3, options={"path": str(path)})


def test_the_problems_command_describes_and_saves_a_comparison_log(tmp_path, capsys):
    log = tmp_path / "arena.csv"
    log.write_text("model_a,model_b,winner\nx,y,model_a\nx,y,model_b\nx,z,model_a\ny,z,tie\nz,y,model_a\nx,y,x\n")
    saved = tmp_path / "arena.json"
    assert main(["problems", "--from-comparisons", str(log), "--first", "model_a", "--second", "model_b",
                 "--save", str(saved)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| arena"))
    # x beats y 2:1 and z 1:0, so x (arm 0) is the Condorcet winner.
    assert [cell.strip() for cell in row.strip("|").split("|")][:4] == ["arena", "3", "0", "0"]
    assert "Arms: 0 = x, 1 = y, 2 = z" in out and f"file:{saved}" in out
    assert read_problem_file(saved).provenance["arms"] == ["x", "y", "z"]
    with pytest.raises(SystemExit) as exit_status:  # the default column names are not in this log
        main(["problems", "--from-comparisons", str(log)])
    assert exit_status.value.code == 2 and "missing column(s) ['first', 'second']" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_status:
        main(["problems", "--save", str(tmp_path / "nothing.json")])
    assert exit_status.value.code == 2 and "--from-comparisons FILE or --from-ltr FILE" in capsys.readouterr().err


def test_the_problems_command_estimates_saves_and_caches_a_ranker_evaluation(tmp_path, capsys):
    from dueling_gym.problems.ltr_files import write_ltr_file
    from dueling_gym.problems.ranker_problems import synthetic_ltr_data

    data = tmp_path / "train.txt"
    write_ltr_file(data, synthetic_ltr_data(40, 8, 4, seed=1))
    cache, saved = tmp_path / "cache", tmp_path / "rankers.json"
    arguments = ["problems", "--from-ltr", str(data), "--comparisons-per-pair", "50", "--cache-dir", str(cache),
                 "--jobs", "1", "--save", str(saved)]
    assert main(arguments) == 0
    first = capsys.readouterr().out
    assert "| ranker-evaluation K=4 team_draft/perfect |" in first and f"file:{saved}" in first
    assert len(list(cache.glob("*.npz"))) == 1
    problem = read_problem_file(saved)
    assert problem.n_arms == 4 and problem.provenance["comparisons"][0, 1] == 50
    assert main(arguments) == 0  # the second time from the cache: the same problem
    assert np.array_equal(read_problem_file(saved).matrix, problem.matrix)
