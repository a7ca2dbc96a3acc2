"""Click models per relevance-grade scale: the published tables, the choice of table from the data's
grades, refused mismatches, custom models, the cache key, and five-grade results as before."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dueling_gym.cli import main
from dueling_gym.envs.ranker_duel import RankerDuelEnv
from dueling_gym.problems import ranker_cache
from dueling_gym.problems.interleaving import (
    CLICK_MODEL_NAMES,
    CLICK_MODEL_TABLES,
    CLICK_MODELS,
    CascadeClickModel,
    click_model,
    parse_click_model,
    select_click_model,
)
from dueling_gym.problems.ltr_files import write_ltr_file
from dueling_gym.problems.ranker_budget import ComparisonBudget
from dueling_gym.problems.ranker_problems import (
    RankerEvaluationProblem,
    ranker_evaluation,
    synthetic_ltr_data,
)

# Oosterhuis & de Rijke (CIKM 2018), the cascade click models of their experiments, as their
# published experiment code defines them: (click per grade, stop per grade).
FIVE_GRADES = {
    "perfect": ((0.0, 0.2, 0.4, 0.8, 1.0), (0.0, 0.0, 0.0, 0.0, 0.0)),
    "navigational": ((0.05, 0.3, 0.5, 0.7, 0.95), (0.2, 0.3, 0.5, 0.7, 0.9)),
    "informational": ((0.4, 0.6, 0.7, 0.8, 0.9), (0.1, 0.2, 0.3, 0.4, 0.5)),
}
THREE_GRADES = {
    "perfect": ((0.0, 0.5, 1.0), (0.0, 0.0, 0.0)),
    "navigational": ((0.05, 0.5, 0.95), (0.2, 0.5, 0.9)),
    "informational": ((0.4, 0.7, 0.9), (0.1, 0.3, 0.5)),
}


def _three_grade_data(seed: int = 0, n_queries: int = 12):
    """LETOR-4.0-like data: grades 0-2 only."""
    return synthetic_ltr_data(n_queries, (3, 7), 4, seed=seed, grade_frequencies=(0.6, 0.3, 0.1))


# ---------------------------------------------------------------------------------- the tables
@pytest.mark.parametrize("scale, table", [(5, FIVE_GRADES), (3, THREE_GRADES)])
def test_the_tables_hold_the_published_values(scale, table):
    assert set(CLICK_MODEL_TABLES) == {3, 5} and set(CLICK_MODEL_NAMES) == set(table)
    for name, (click, stop) in table.items():
        model = CLICK_MODEL_TABLES[scale][name]
        assert (model.name, model.click, model.stop, model.n_grades) == (name, click, stop, scale)
        assert click_model(f"{name}:{scale}") == model == click_model(name, grades=scale)
    assert CLICK_MODEL_TABLES[5] is CLICK_MODELS  # the five-grade models are the ones the library always had


def test_a_bare_name_outside_a_problem_is_the_five_grade_model_as_before():
    for name in CLICK_MODEL_NAMES:
        assert click_model(name) is CLICK_MODELS[name]
        assert parse_click_model(name) == name  # left for the data to choose


# ---------------------------------------------------------------------------------- the choice
def test_three_grade_data_gets_the_three_grade_table_and_perfect_clicks_its_top_grade():
    data = _three_grade_data()
    assert int(data.relevance.max()) == 2
    problem = RankerEvaluationProblem(data, click_model="perfect")
    assert problem.click_model == CLICK_MODEL_TABLES[3]["perfect"]
    assert problem.click_model.click[2] == 1.0
    top_grade_list = np.full(10, 2)
    assert problem.click_model.simulate(top_grade_list, np.random.default_rng(0), n_sessions=300).all()
    facts = problem.describe()
    assert facts["click_model_grades"] == 3 and facts["click_probabilities"] == [0.0, 0.5, 1.0]
    assert "three-grade table" in facts["click_model_table"]
    assert "chosen from the data's largest grade 2" in facts["click_model_table"]
    assert "(3 grades)" in repr(problem)


@pytest.mark.parametrize("name", CLICK_MODEL_NAMES)
@pytest.mark.parametrize("top_grade, scale", [(0, 3), (1, 3), (2, 3), (3, 5), (4, 5)])
def test_a_bare_name_takes_the_table_of_the_largest_grade(name, top_grade, scale):
    model, how = select_click_model(name, top_grade)
    assert model is CLICK_MODEL_TABLES[scale][name]
    assert how.endswith(f"chosen from the data's largest grade {top_grade}")


def test_a_forced_table_is_used_when_the_data_fits_it():
    model, how = select_click_model("perfect:5", 2)  # five grades on 0-2 data: only when asked for
    assert model is CLICK_MODELS["perfect"] and how.endswith("given explicitly") and "five-grade" in how
    problem = RankerEvaluationProblem(_three_grade_data(), click_model="navigational:5")
    assert problem.click_model is CLICK_MODELS["navigational"] and problem.describe()["click_model_grades"] == 5
    assert select_click_model(CLICK_MODELS["informational"], 1)[0] is CLICK_MODELS["informational"]


@pytest.mark.parametrize("spec, top_grade, message", [
    ("perfect", 5, r"grade 5 but the named click models cover grades 0\.\.2 .* or 0\.\.4"),
    ("perfect:3", 3, (r"grade 3 but the 'perfect' click model \(three-grade table\) covers grades 0\.\.2; "
                      r"use 'perfect'")),
    ("informational:3", 4, r"grade 4 but .*three-grade table"),
    ("navigational:5", 7, r"grade 7 but the 'navigational' click model \(five-grade table\) covers grades 0\.\.4"),
    ({"click": [0.0, 1.0], "stop": [0.0, 0.0]}, 2, r"grade 2 but the 'custom' click model covers grades 0\.\.1"),
    (CascadeClickModel("impatient", (0.5,), (1.0,)), 1, r"'impatient' click model covers grades 0\.\.0"),
])
def test_data_beyond_the_model_is_refused(spec, top_grade, message):
    with pytest.raises(ValueError, match=message):
        select_click_model(spec, top_grade)


def test_a_problem_refuses_data_beyond_its_model():
    five = synthetic_ltr_data(12, (3, 7), 4, seed=2)
    assert int(five.relevance.max()) >= 3
    with pytest.raises(ValueError, match="three-grade table"):
        RankerEvaluationProblem(five, click_model="perfect:3")
    with pytest.raises(ValueError, match="three-grade table"):
        ranker_evaluation(five, click_model="perfect:3", comparisons_per_pair=10, progress=False)
    six = synthetic_ltr_data(12, (3, 7), 4, seed=2, grade_frequencies=(0.4, 0.2, 0.1, 0.1, 0.1, 0.1))
    with pytest.raises(ValueError, match="named click models cover"):
        RankerEvaluationProblem(six)
    custom = {"click": [0.0, 0.1, 0.2, 0.4, 0.8, 1.0], "stop": [0.0] * 6}
    assert RankerEvaluationProblem(six, click_model=custom).click_model.n_grades == 6
    with pytest.raises(TypeError, match="top_grade"):
        select_click_model("perfect", 2.0)
    with pytest.raises(ValueError, match="top_grade"):
        select_click_model("perfect", -1)


# ---------------------------------------------------------------------------------- custom models
def test_a_custom_model_is_checked_and_used():
    model = click_model({"click": (0.0, 0.5, 1.0), "stop": np.array([0.0, 0.25, 0.5])})
    assert (model.name, model.click, model.stop) == ("custom", (0.0, 0.5, 1.0), (0.0, 0.25, 0.5))
    assert all(type(value) is float for value in model.click + model.stop)
    problem = RankerEvaluationProblem(_three_grade_data(), click_model=model)
    assert problem.click_model == model and problem.click_model_choice.startswith("custom, 3 grades")
    direct = CascadeClickModel("mine", [0.1, 0.9], [0.0, 0.5])  # lists are stored as tuples
    assert direct.click == (0.1, 0.9) and hash(direct) == hash(CascadeClickModel("mine", (0.1, 0.9), (0.0, 0.5)))


@pytest.mark.parametrize("spec, error, message", [
    ({"click": [0.0, 1.5], "stop": [0.0, 0.0]}, ValueError, r"click model click\[1\] must be <= 1\.0"),
    ({"click": [0.0, 1.0], "stop": [-0.1, 0.0]}, ValueError, r"click model stop\[0\] must be >= 0\.0"),
    ({"click": [0.0, float("nan")], "stop": [0.0, 0.0]}, ValueError, r"click\[1\] must be finite"),
    ({"click": [0.0, 1.0], "stop": [0.0]}, ValueError, "as many stop as click probabilities"),
    ({"click": [], "stop": []}, ValueError, "at least one"),
    ({"click": [0.0, 1.0]}, ValueError, "exactly the keys 'click' and 'stop'"),
    ({"click": [0.0], "stop": [0.0], "name": "x"}, ValueError, "exactly the keys"),
    ({"click": "0,1", "stop": [0.0, 0.0]}, TypeError, "must be a sequence of probabilities"),
    ({"click": [0.0, "1"], "stop": [0.0, 0.0]}, TypeError, r"click\[1\] must be a number"),
    ({"click": [0.0, True], "stop": [0.0, 0.0]}, TypeError, r"click\[1\] must be a number"),
    (0.5, TypeError, "must be a name, a {'click'"),
    ("Perfect", ValueError, "unknown click model 'Perfect'; choose one of"),
    ("custom", ValueError, "unknown click model 'custom'"),
    ("perfect:4", ValueError, r"grade scale after ':' must be one of \[3, 5\]"),
    ("perfect:", ValueError, "grade scale after ':'"),
    ("perfect:3:5", ValueError, "grade scale after ':'"),
])
def test_bad_click_models_are_refused_by_name(spec, error, message):
    with pytest.raises(error, match=message):
        parse_click_model(spec)
    with pytest.raises(error, match=message):
        RankerEvaluationProblem(_three_grade_data(), click_model=spec)


def test_bad_models_and_scales_are_refused():
    with pytest.raises(ValueError, match=r"click\[0\] must be <= 1\.0"):
        CascadeClickModel("mine", (2.0,), (0.0,))
    with pytest.raises(TypeError, match="name must be a non-empty string"):
        CascadeClickModel("", (0.5,), (0.0,))
    with pytest.raises(TypeError, match="'stop' must be a sequence"):
        CascadeClickModel("mine", (0.5,), 0.0)
    with pytest.raises(ValueError, match="names the 3-grade table but grades=5"):
        click_model("perfect:3", grades=5)
    with pytest.raises(ValueError, match=r"grades must name a grade scale .* \[3, 5\], got 4"):
        click_model("perfect", grades=4)
    with pytest.raises(ValueError, match="covers 2 grades but grades=3"):
        click_model({"click": [0.0, 1.0], "stop": [0.0, 0.0]}, grades=3)


# ---------------------------------------------------------------------------------- cache
def test_the_cache_key_differs_by_table():
    settings = {"rankers": "features", "interleaving": "team_draft", "cutoff": 10, "tie_break_seed": 0}

    def key(spec):
        return ranker_cache.cache_key("digest", {**settings, "click_model": parse_click_model(spec)},
                                      ComparisonBudget.fixed(100), 0, "error")

    specs = ["perfect", "perfect:3", "perfect:5", "navigational", "navigational:3",
             {"click": [0.0, 0.5, 1.0], "stop": [0.0, 0.0, 0.0]}, {"click": [0.0, 0.5, 1.0, 1.0], "stop": [0.0] * 4}]
    keys = [key(spec) for spec in specs]
    assert len(set(keys)) == len(specs)
    assert key("perfect:3") == key(CLICK_MODEL_TABLES[3]["perfect"])  # the same request, however it is spelled


def test_cached_estimates_follow_the_table(tmp_path):
    path, cache = tmp_path / "three.txt", tmp_path / "cache"
    write_ltr_file(path, _three_grade_data(seed=1))
    options = {"comparisons_per_pair": 60, "cutoff": 4, "cache_dir": cache, "progress": False, "jobs": 1}
    chosen = ranker_evaluation(path, click_model="perfect", **options)
    forced = ranker_evaluation(path, click_model="perfect:5", **options)
    same_values = ranker_evaluation(path, click_model={"click": [0.0, 0.5, 1.0], "stop": [0.0, 0.0, 0.0]}, **options)
    assert len(list(cache.glob("ranker_evaluation-*.npz"))) == 3
    keys = {matrix.provenance["cache_key"] for matrix in (chosen, forced, same_values)}
    assert len(keys) == 3
    assert chosen.provenance["click_model_grades"] == 3 and forced.provenance["click_model_grades"] == 5
    assert "three-grade table" in chosen.source and "five-grade table" in forced.source
    # The data's choice plays exactly the comparisons of the three-grade probabilities given by hand.
    assert np.array_equal(chosen.provenance["wins"], same_values.provenance["wins"])
    assert not np.array_equal(chosen.provenance["wins"], forced.provenance["wins"])
    again = ranker_evaluation(path, click_model="perfect", **options)  # a hit: no new file, the same facts
    assert len(list(cache.glob("ranker_evaluation-*.npz"))) == 3
    assert again == chosen and again.provenance["click_model_table"] == chosen.provenance["click_model_table"]


def test_the_environment_refuses_a_matrix_of_another_table():
    data = _three_grade_data(seed=3, n_queries=8)
    forced = ranker_evaluation(data, click_model="perfect:5", comparisons_per_pair=40, progress=False)
    with pytest.raises(ValueError, match="click_probabilities"):
        RankerDuelEnv(data, click_model="perfect", preferences=forced)
    env = RankerDuelEnv(data, click_model="perfect", comparisons_per_pair=40)
    assert env.problem.provenance["click_model_grades"] == 3


# ---------------------------------------------------------------------------------- five grades as before
# Counts of ranker_evaluation(synthetic_ltr_data(12, (3, 7), 4, seed=2), cutoff=5, comparisons_per_pair=300,
# seed=3) from the library before the three-grade tables existed: (wins, ties).
FIVE_GRADE_COUNTS = {
    ("team_draft", "perfect"): (
        [[0, 46, 49, 59], [79, 0, 64, 82], [70, 60, 0, 75], [79, 58, 51, 0]],
        [[0, 175, 181, 162], [175, 0, 176, 160], [181, 176, 0, 174], [162, 160, 174, 0]]),
    ("probabilistic", "navigational"): (
        [[0, 57, 63, 74], [83, 0, 78, 95], [83, 85, 0, 101], [84, 54, 80, 0]],
        [[0, 160, 154, 142], [160, 0, 137, 151], [154, 137, 0, 119], [142, 151, 119, 0]]),
    ("team_draft", "informational"): (
        [[0, 100, 90, 87], [105, 0, 107, 114], [109, 98, 0, 97], [106, 95, 105, 0]],
        [[0, 95, 101, 107], [95, 0, 95, 91], [101, 95, 0, 98], [107, 91, 98, 0]]),
}
# RankerEvaluationProblem(same data, click_model="navigational", cutoff=5).compare_with_uniforms(0, 2, row) for
# the rows of default_rng(7).random((5, width)), from the same earlier library.
FIVE_GRADE_COMPARISONS = [(-1, 7, 0.0, 1.0), (1, 11, 1.0, 0.0), (-1, 0, 0.0, 1.0), (-1, 6, 0.0, 1.0), (0, 5, 0.0, 0.0)]


@pytest.mark.parametrize("interleaving, name", sorted(FIVE_GRADE_COUNTS))
def test_five_grade_data_gives_the_same_estimates_as_before(interleaving, name):
    data = synthetic_ltr_data(12, (3, 7), 4, seed=2)
    assert int(data.relevance.max()) >= 3
    matrix = ranker_evaluation(data, interleaving=interleaving, click_model=name, cutoff=5, comparisons_per_pair=300,
                               seed=3, progress=False, jobs=1)
    wins, ties = FIVE_GRADE_COUNTS[(interleaving, name)]
    assert matrix.provenance["wins"].tolist() == wins and matrix.provenance["ties"].tolist() == ties
    assert matrix.provenance["click_model_grades"] == 5
    assert matrix.provenance["click_probabilities"] == list(CLICK_MODELS[name].click)
    forced = ranker_evaluation(data, interleaving=interleaving, click_model=f"{name}:5", cutoff=5,
                               comparisons_per_pair=300, seed=3, progress=False, jobs=1)
    assert forced.provenance["wins"].tolist() == wins


def test_five_grade_comparisons_are_the_same_as_before():
    problem = RankerEvaluationProblem(synthetic_ltr_data(12, (3, 7), 4, seed=2), click_model="navigational", cutoff=5)
    assert problem.click_model is CLICK_MODELS["navigational"]
    rows = np.random.default_rng(7).random((5, problem.uniforms_per_comparison))
    assert [tuple(problem.compare_with_uniforms(0, 2, row)) for row in rows] == FIVE_GRADE_COMPARISONS


# ---------------------------------------------------------------------------------- command line
def _cli(path, *options):
    return main(["problems", "--from-ltr", str(path), "--comparisons-per-pair", "20", "--no-cache", "--no-bounds",
                 "--jobs", "1", "--cutoff", "4", *options])


def test_the_command_line_prints_the_chosen_table(tmp_path, capsys):
    path = tmp_path / "three.txt"
    write_ltr_file(path, _three_grade_data(seed=4, n_queries=6))
    assert _cli(path) == 0
    out = capsys.readouterr().out
    assert "click model: perfect, three-grade table (click 0.0 0.5 1.0, stop 0.0 0.0 0.0), chosen from the data's " \
           "largest grade 2" in out
    assert _cli(path, "--click-model", "navigational:5") == 0
    assert "click model: navigational, five-grade table" in capsys.readouterr().out
    assert _cli(path, "--click-model", "custom", "--click-probabilities", "0,0.5,1",
                "--stop-probabilities", "0,0.25,0.5") == 0
    assert "click model: custom, 3 grades (click 0.0 0.5 1.0, stop 0.0 0.25 0.5), given explicitly" in \
        capsys.readouterr().out


@pytest.mark.parametrize("options, message", [
    (["--click-model", "perfect:4"], "argument --click-model: click model 'perfect:4'"),
    (["--click-model", "impatient"], "argument --click-model: unknown click model 'impatient'"),
    (["--click-probabilities", "0,x"], "argument --click-probabilities: expected comma-separated probabilities"),
    (["--click-model", "custom", "--click-probabilities", "0,1"], "needs --click-probabilities and --stop-prob"),
    (["--click-model", "perfect", "--stop-probabilities", "0,1"], "--stop-probabilities needs --click-model custom"),
    (["--click-model", "custom", "--click-probabilities", "0,1", "--stop-probabilities", "0"],
     "as many stop as click probabilities"),
    (["--click-model", "custom", "--click-probabilities", "0,1.5,1", "--stop-probabilities", "0,0,0"],
     r"click model click[1] must be <= 1.0"),
    (["--click-model", "custom", "--click-probabilities", "0,1", "--stop-probabilities", "0,0"],
     "grade 2 but the 'custom' click model covers grades 0..1"),
    (["--click-model", "perfect:3"], None),
])
def test_the_command_line_refuses_bad_click_models(tmp_path, capsys, options, message):
    path = tmp_path / "three.txt"
    write_ltr_file(path, _three_grade_data(seed=4, n_queries=6))
    if message is None:  # the forced three-grade table fits 0-2 data
        assert _cli(path, *options) == 0
        return
    with pytest.raises(SystemExit) as exited:
        _cli(path, *options)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_five_grade_perfect_would_click_the_top_of_three_grades_rarely():
    """Why the table follows the data: under the five-grade table grade 2 is "somewhat relevant"."""
    grades, n = np.full(1, 2), 4000
    clicks_five = CLICK_MODELS["perfect"].simulate(grades, np.random.default_rng(5), n_sessions=n)[:, 0].mean()
    assert abs(clicks_five - 0.4) <= 4.5 * math.sqrt(0.4 * 0.6 / n)
    assert CLICK_MODEL_TABLES[3]["perfect"].simulate(grades, np.random.default_rng(5), n_sessions=n).all()
