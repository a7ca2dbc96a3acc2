"""The ranker-evaluation matrix against exact preferences enumerated by brute force, its
determinism and cache, and the RankerDuel environment."""

from __future__ import annotations

import itertools
import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from dueling_gym.envs.ranker_duel import RankerDuelEnv
from dueling_gym.problems import ranker_problems as ranker_evaluation_module
from dueling_gym.problems.interleaving import CLICK_MODELS, click_model
from dueling_gym.problems.ltr_files import LTRData, write_ltr_file
from dueling_gym.problems.ranker_problems import (
    RankerEvaluationProblem,
    ranker_evaluation,
    synthetic_ltr_data,
)

# Two queries (4 and 3 documents), three feature rankers without ties inside a query.
TINY_FEATURES = np.array([
    [4, 1, 2], [3, 4, 1], [2, 3, 4], [1, 2, 3],   # query 0, grades 2 0 1 4
    [3, 1, 2], [2, 3, 1], [1, 2, 3],              # query 1, grades 0 3 1
], dtype=np.float32)
TINY = LTRData.from_arrays(TINY_FEATURES, [2, 0, 1, 4, 0, 3, 1], [0, 4, 7])


# ---------------------------------------------------------------------------------- brute force
def _top(data, query, ranker, cutoff):
    start, stop = data.query_offsets[query], data.query_offsets[query + 1]
    order = sorted(range(start, stop), key=lambda doc: -data.features[doc, ranker])
    return order[:cutoff]


def _team_draft_lists(a, b):
    """Every team-draft list of a and b with its probability (one fair coin per position)."""
    length = max(len(a), len(b))
    for coins in itertools.product((True, False), repeat=length):
        shown, teams, picks = [], [], [0, 0]
        while len(shown) < length:
            rest = [[d for d in a if d not in shown], [d for d in b if d not in shown]]
            if not rest[0] or not rest[1]:
                break
            team = 0 if picks[0] < picks[1] or (picks[0] == picks[1] and coins[len(shown)]) else 1
            shown.append(rest[team][0])
            teams.append(team)
            picks[team] += 1
        yield shown, teams, 0.5 ** length


def _probabilistic_lists(a, b, tau=3.0):
    """Every probabilistic-interleave list with its probability and per-position posteriors."""
    length = max(len(a), len(b))
    results = []

    def weights(ranking, shown):
        return {doc: 1.0 / (rank + 1) ** tau for rank, doc in enumerate(ranking) if doc not in shown}

    def grow(shown, posterior, probability):
        remaining = [weights(a, shown), weights(b, shown)]
        if len(shown) == length or not (remaining[0] or remaining[1]):
            results.append((shown, posterior, probability))
            return
        totals = [sum(w.values()) for w in remaining]
        chooser_probability = [0.5, 0.5] if remaining[0] and remaining[1] else ([1.0, 0.0] if remaining[0] else [0.0, 1.0])
        for chooser in (0, 1):
            if chooser_probability[chooser] == 0.0:
                continue
            for doc, weight in remaining[chooser].items():
                p_a = remaining[0].get(doc, 0.0) / totals[0] if totals[0] else 0.0
                p_b = remaining[1].get(doc, 0.0) / totals[1] if totals[1] else 0.0
                grow(shown + [doc], posterior + [p_a / (p_a + p_b)],
                     probability * chooser_probability[chooser] * weight / totals[chooser])

    grow([], [], 1.0)
    return results


def _click_patterns(grades, model):
    """Every cascade click pattern on a list with the given grades, with its probability."""
    patterns = []

    def scan(position, clicks, probability):
        if position == len(grades):
            patterns.append((clicks, probability))
            return
        click, stop = model.click[grades[position]], model.stop[grades[position]]
        rest = len(grades) - position - 1
        if click > 0 and stop > 0:
            patterns.append((clicks + [True] + [False] * rest, probability * click * stop))
        if click > 0 and stop < 1:
            scan(position + 1, clicks + [True], probability * click * (1 - stop))
        if click < 1:
            scan(position + 1, clicks + [False], probability * (1 - click))

    scan(0, [], 1.0)
    return patterns


def _exact_preference(data, first, second, interleaving, model, cutoff):
    total = 0.0
    for query in range(data.n_queries):
        a, b = _top(data, query, first, cutoff), _top(data, query, second, cutoff)
        if interleaving == "team_draft":
            lists = [(shown, [1.0 if t == 0 else 0.0 for t in teams], p) for shown, teams, p in _team_draft_lists(a, b)]
        else:
            lists = _probabilistic_lists(a, b)
        for shown, posterior, probability in lists:
            grades = [int(data.relevance[doc]) for doc in shown]
            for clicks, click_probability in _click_patterns(grades, model):
                clicked = [pos for pos, c in enumerate(clicks) if c]
                outcome = 0.0  # E[sign(#A - #B)] over the assignments of the clicked documents
                for to_a in itertools.product((0, 1), repeat=len(clicked)):
                    weight = math.prod(posterior[p] if x else 1 - posterior[p] for p, x in zip(clicked, to_a))
                    outcome += weight * np.sign(2 * sum(to_a) - len(clicked))
                score = 1.0 if outcome > 1e-12 else (0.0 if outcome < -1e-12 else 0.5)
                total += probability * click_probability * score / data.n_queries
    return total


def test_brute_force_oracle_on_a_case_worked_by_hand():
    """Query [1, 2, 3] vs [2, 4, 1] style check: one query, A = (d0, d1, d2), B = (d1, d3, d0); a
    user who clicks exactly the grade-1 documents d0 and d3 (click 1 for grade 1, 0 otherwise, no
    stop).  Team draft: A wins half the coin outcomes and ties the rest, so P = 1/2 + 1/4 = 3/4."""
    features = np.array([[3, 1], [2, 3], [1, 0], [0, 2]], dtype=np.float32)
    data = LTRData.from_arrays(features, [1, 0, 0, 1], [0, 4])
    model = click_model({"click": [0.0, 1.0], "stop": [0.0, 0.0]})
    assert _exact_preference(data, 0, 1, "team_draft", model, 3) == pytest.approx(0.75)
    matrix = ranker_evaluation(data, click_model=model, cutoff=3, comparisons_per_pair=4000, progress=False)
    estimate, error = matrix[0, 1], matrix.provenance["standard_errors"][0, 1]
    assert abs(estimate - 0.75) <= 4.5 * error


@pytest.mark.parametrize("interleaving", ["team_draft", "probabilistic"])
@pytest.mark.parametrize("model_name", ["navigational", "informational"])
def test_estimates_lie_within_their_intervals_of_the_exact_preferences(interleaving, model_name):
    model = CLICK_MODELS[model_name]
    matrix = ranker_evaluation(TINY, interleaving=interleaving, click_model=model_name, cutoff=3,
                               comparisons_per_pair=6000, seed=1, progress=False)
    errors = matrix.provenance["standard_errors"]
    for first, second in itertools.combinations(range(3), 2):
        exact = _exact_preference(TINY, first, second, interleaving, model, 3)
        assert abs(matrix[first, second] - exact) <= 4.5 * errors[first, second] + 1e-12, (first, second, exact)
        assert 0 < errors[first, second] <= 0.5 / math.sqrt(6000)


@pytest.mark.parametrize("interleaving", ["team_draft", "probabilistic"])
def test_a_ranker_that_strictly_improves_another_wins_more_often(interleaving):
    """Ranker 1 is ranker 0 with a better document moved above a worse one in every query."""
    rng = np.random.default_rng(4)
    features, grades, offsets = [], [], [0]
    for _ in range(30):
        labels = rng.permutation([0, 0, 1, 0, 2, 0, 3, 1])
        base = np.arange(labels.size, 0, -1, dtype=np.float32)  # ranker 0: file order
        low, high = [int(i) for i in np.flatnonzero(labels == 0)[:1]] + [int(np.argmax(labels))]
        improved = base.copy()
        if low < high:  # put the best document just where the first non-relevant one was
            improved[[low, high]] = improved[[high, low]]
        else:
            improved[high] += 0.5
        features.append(np.column_stack([base, improved]))
        grades.extend(labels.tolist())
        offsets.append(offsets[-1] + labels.size)
    data = LTRData.from_arrays(np.vstack(features), grades, offsets)
    matrix = ranker_evaluation(data, interleaving=interleaving, click_model="perfect", cutoff=5,
                               comparisons_per_pair=3000, progress=False)
    assert matrix[1, 0] - 4 * matrix.provenance["standard_errors"][1, 0] > 0.5
    assert matrix.condorcet_winner == 1


def test_same_seed_same_matrix_for_any_number_of_jobs():
    data = synthetic_ltr_data(40, (3, 15), 6, seed=2)
    one = ranker_evaluation(data, comparisons_per_pair=300, seed=9, jobs=1, progress=False)
    two = ranker_evaluation(data, comparisons_per_pair=300, seed=9, jobs=2, progress=False)
    other = ranker_evaluation(data, comparisons_per_pair=300, seed=10, jobs=2, progress=False)
    assert one == two and one != other
    np.testing.assert_array_equal(one.provenance["wins"], two.provenance["wins"])
    np.testing.assert_array_equal(one.provenance["ties"], two.provenance["ties"])
    counts = one.provenance["wins"] + one.provenance["wins"].T + one.provenance["ties"]
    np.testing.assert_array_equal(counts, one.provenance["comparisons"])


def test_linear_rankers_equal_feature_rankers_for_unit_weights():
    data = synthetic_ltr_data(30, (3, 12), 4, seed=6)
    by_features = RankerEvaluationProblem(data)
    by_weights = RankerEvaluationProblem(data, rankers=np.eye(4)[[2, 0]])
    np.testing.assert_array_equal(by_weights.ranked_lists, by_features.ranked_lists[:, [2, 0]])
    with pytest.raises(ValueError, match="columns"):
        RankerEvaluationProblem(data, rankers=np.ones((2, 3)))


def test_cache_hit_and_tampered_cache(tmp_path, monkeypatch):
    data = synthetic_ltr_data(30, (3, 12), 4, seed=7)
    path = tmp_path / "train.txt"
    write_ltr_file(path, data)
    cache = tmp_path / "cache"
    first = ranker_evaluation(path, comparisons_per_pair=200, cache_dir=cache, progress=False)
    files = list(cache.glob("ranker_evaluation-*"))
    assert len(files) == 1 and sorted(path.name for path in cache.iterdir()) == [".signing-key", files[0].name]
    with np.load(files[0]) as stored:
        assert str(stored["key"]) == first.provenance["cache_key"]

    def no_simulation(*args, **kwargs):
        raise AssertionError("the cached result should have been used")

    with monkeypatch.context() as patch:
        patch.setattr(ranker_evaluation_module, "estimate_preferences", no_simulation)
        again = ranker_evaluation(path, comparisons_per_pair=200, cache_dir=cache, progress=False)
    assert again == first
    np.testing.assert_array_equal(again.provenance["standard_errors"], first.provenance["standard_errors"])

    # Tampering with the counts (the signature no longer matches): warned about, then recomputed.
    with np.load(files[0]) as stored:
        contents = {name: stored[name] for name in stored.files}
    contents["wins"] = contents["wins"].copy()
    contents["wins"][0, 1] += 1
    contents["ties"][0, 1] -= 1
    contents["ties"][1, 0] -= 1
    with open(files[0], "wb") as stream:
        np.savez(stream, **contents)
    with pytest.warns(UserWarning, match="signature does not match"):
        recomputed = ranker_evaluation(path, comparisons_per_pair=200, cache_dir=cache, progress=False)
    assert recomputed == first
    files[0].write_bytes(b"not a zip file")
    with pytest.warns(UserWarning, match="cannot be read"):
        assert ranker_evaluation(path, comparisons_per_pair=200, cache_dir=cache, progress=False) == first
    # Other parameters or other data: another cache file.
    ranker_evaluation(path, comparisons_per_pair=200, seed=1, cache_dir=cache, progress=False)
    assert len(list(cache.glob("ranker_evaluation-*"))) == 2
    assert not [name for name in cache.iterdir() if name.name.endswith(".tmp")]


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="unknown interleaving"):
        ranker_evaluation(TINY, interleaving="balanced", progress=False)
    with pytest.raises(ValueError, match="grade 4 but"):
        ranker_evaluation(TINY, click_model={"click": [0.1, 0.9], "stop": [0.0, 0.0]}, progress=False)
    with pytest.raises(ValueError, match="comparisons_per_pair"):
        ranker_evaluation(TINY, comparisons_per_pair=1, progress=False)
    with pytest.raises(TypeError, match="jobs"):
        ranker_evaluation(TINY, jobs=1.5, progress=False)
    with pytest.raises(ValueError, match="rankers must be"):
        ranker_evaluation(TINY, rankers="bm25", progress=False)
    with pytest.raises(TypeError, match="path_or_arrays"):
        ranker_evaluation(42, progress=False)


# ---------------------------------------------------------------------------------- environment
def test_environment_passes_the_checker_and_replays_for_a_seed():
    env = gym.make("RankerDuel-v0", render_mode="rgb_array").unwrapped  # made, so that it has a spec
    assert isinstance(env, RankerDuelEnv)
    check_env(env, skip_render_check=False)
    assert env.n_arms == 10 and "copeland_komiyama" in env.regret_notions

    def trajectory(seed):
        env.reset(seed=seed)
        actions = np.random.default_rng(seed).integers(0, env.n_arms, size=(400, 2))
        return [(int(obs), reward, info["query"], info["tie"]) for obs, reward, _, _, info in map(env.step, actions)]

    assert trajectory(3) == trajectory(3) != trajectory(4)
    assert env.win_counts.sum() == 400


def test_environment_outcomes_follow_the_estimated_matrix():
    env = RankerDuelEnv(TINY, click_model="navigational", cutoff=3, comparisons_per_pair=4000)
    env.reset(seed=0)
    n = 6000
    wins = sum(int(env.step((0, 2))[0]) for _ in range(n))
    probability = env.problem[0, 2]
    assert abs(wins / n - probability) <= 4.5 * math.sqrt(probability * (1 - probability) / n) + 4.5 * float(
        env.problem.provenance["standard_errors"][0, 2])


def test_environment_checks_its_preferences():
    data = synthetic_ltr_data(20, (3, 10), 4, seed=1)
    matrix = ranker_evaluation(data, comparisons_per_pair=100, progress=False)
    env = RankerDuelEnv(data, preferences=matrix, render_mode="ansi")
    env.reset(seed=0)
    env.step((0, 1))
    assert env.render().startswith("t=1")
    with pytest.raises(ValueError, match="interleaving"):
        RankerDuelEnv(data, interleaving="probabilistic", preferences=matrix)
    with pytest.raises(ValueError, match="provenance"):
        RankerDuelEnv(data, preferences=type(matrix)(matrix.matrix))
    with pytest.raises(gym.error.ResetNeeded):
        RankerDuelEnv(data, preferences=matrix).step((0, 1))
    with pytest.raises(ValueError, match="out of range"):
        env.step((0, 4))
