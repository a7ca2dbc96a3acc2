"""``load_problem("file:PATH")``: a saved problem by its file, wherever a problem is named."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import dueling_gym  # noqa: F401  (registers the environments)
from dueling_gym.experiments.sweeps.sweep import ProblemSpec
from dueling_gym.problems import PreferenceMatrix, as_preference_matrix, list_problems, load_problem, save_problem

MATRIX = [[0.5, 0.7, 0.4], [0.3, 0.5, 0.8], [0.6, 0.2, 0.5]]


def _saved(tmp_path, name: str = "log, v1.json"):
    problem = PreferenceMatrix(MATRIX, name="three-systems", source="a test log",
                               provenance={"wins": np.array([[0, 7, 4], [3, 0, 8], [6, 2, 0]])})
    return problem, save_problem(problem, tmp_path / name)  # the comma belongs to the path


def test_load_problem_reads_a_saved_problem_with_its_name_source_and_provenance(tmp_path):
    problem, path = _saved(tmp_path)
    for text in (f"file:{path}", f"FILE:{path}", f" File :{path}"):
        again = load_problem(text)
        assert again == problem and again.name == "three-systems" and again.source == "a test log"
        assert again.provenance["wins"].tolist() == [[0, 7, 4], [3, 0, 8], [6, 2, 0]]
    assert as_preference_matrix(f"file:{path}") == problem


def test_a_problem_file_is_read_afresh_so_a_file_saved_again_is_seen(tmp_path):
    _, path = _saved(tmp_path)
    first = load_problem(f"file:{path}")
    other = [[0.5, 0.9, 0.4], [0.1, 0.5, 0.8], [0.6, 0.2, 0.5]]
    save_problem(PreferenceMatrix(other, name="three-systems"), path)
    assert load_problem(f"file:{path}") == PreferenceMatrix(other) and first == PreferenceMatrix(MATRIX)


def test_a_missing_or_empty_path_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="problem file not found"):
        load_problem(f"file:{tmp_path / 'absent.json'}")
    with pytest.raises(ValueError, match="names no file: write file:PATH"):
        load_problem("file:")


def test_a_file_the_reader_refuses_is_refused_with_its_reason(tmp_path):
    _, path = _saved(tmp_path)
    document = json.loads(path.read_text())
    document["matrix"][0][1] = 0.71  # edited by hand: no longer matches its digest
    document["matrix"][1][0] = 0.29
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="does not match its recorded SHA-256"):
        load_problem(f"file:{path}")
    not_json = tmp_path / "notes.json"
    not_json.write_text("sushi, but not JSON")
    with pytest.raises(ValueError, match="not a problem file"):
        load_problem(f"file:{not_json}")
    with pytest.raises(ValueError, match="not a regular file|is a folder|folder"):
        load_problem(f"file:{tmp_path}")


def test_an_unknown_name_lists_the_shipped_problems_and_the_file_form():
    with pytest.raises(ValueError) as caught:
        load_problem("sushy")
    message = str(caught.value)
    assert "unknown problem 'sushy'" in message and "file:PATH" in message
    assert all(repr(name) in message for name in list_problems())
    with pytest.raises(TypeError, match="must be a string"):
        load_problem(3)  # type: ignore[arg-type]


def test_the_environment_and_a_sweep_take_a_saved_problem_by_its_file(tmp_path):
    problem, path = _saved(tmp_path)  # cyclic: CopelandDuel-v0's regret is defined on it
    env = gym.make("CopelandDuel-v0", preferences=f"file:{path}", max_episode_steps=5)
    assert env.unwrapped.problem == problem
    env.reset(seed=0)
    env.close()
    assert gym.make(env.spec).unwrapped.problem == problem  # the spec keeps file:PATH, which reads again
    condorcet = save_problem(PreferenceMatrix([[0.5, 0.7], [0.3, 0.5]], name="two"), tmp_path / "two.json")
    assert gym.make("DuelingBandit-v0", preferences=f"file:{condorcet}").unwrapped.problem.name == "two"
    for spec in (ProblemSpec.parse(f"file:{path}"), ProblemSpec(f"file:{path}")):
        assert spec.name == "file" and spec.options == {"path": str(path)} and spec.matrix == problem
    assert ProblemSpec(f"file:{path}") == ProblemSpec.parse(f"file:{path}")
    with pytest.raises(ValueError, match="file:PATH"):
        ProblemSpec(f"file:{path}", options={"extra": 1})
    with pytest.raises(ValueError, match="file:PATH"):
        ProblemSpec.parse("nonesuch")
