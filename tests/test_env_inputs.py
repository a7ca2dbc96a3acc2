"""Inputs of environments, wrappers and problems: every valid input gives the exact result, every
bad one a clear TypeError or ValueError (never a silently different duel or matrix)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dueling_gym  # noqa: F401  (registers the environments)
from dueling_gym.envs.combinatorial_duel import CombinatorialDuelEnv
from dueling_gym.envs.vector import CopelandDuelVectorEnv, DuelingBanditVectorEnv
from dueling_gym.problems import BipartiteDuelProblem, PreferenceMatrix, ProblemSampler
from dueling_gym.problems import BipartiteProblemSampler, five_edge_example
from dueling_gym.problems.generators import cyclic_copeland_winners, no_condorcet_winner, utility_based
from dueling_gym.problems.preference import MAX_ATOL
from dueling_gym.wrappers import BordaReductionWrapper, DuelStatistics, FlatPairActions, PairReductionWrapper

INTEGER_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
N_ARMS = 20  # 19 * 20 + 0 = 380 overflows int8 and uint8: the flat duel index must be widened


@pytest.fixture(scope="module")
def problem_20() -> PreferenceMatrix:
    return no_condorcet_winner(N_ARMS, np.random.default_rng(1))


# ---------------------------------------------------------------------------------------------
# Preference matrices
# ---------------------------------------------------------------------------------------------
@st.composite
def antisymmetric_matrices(draw, min_arms=2, max_arms=6):
    n_arms = draw(st.integers(min_arms, max_arms))
    upper = draw(st.lists(st.floats(0.0, 1.0), min_size=n_arms * (n_arms - 1) // 2,
                          max_size=n_arms * (n_arms - 1) // 2))
    matrix = np.full((n_arms, n_arms), 0.5)
    rows, columns = np.triu_indices(n_arms, 1)
    matrix[rows, columns] = upper
    matrix[columns, rows] = 1.0 - matrix[rows, columns]
    return matrix


@SETTINGS
@given(antisymmetric_matrices())
def test_valid_matrices_are_accepted_unchanged(matrix):
    problem = PreferenceMatrix(matrix)
    assert np.array_equal(problem.matrix, matrix)
    assert PreferenceMatrix(matrix, atol=0.0) == problem


@SETTINGS
@given(antisymmetric_matrices(), st.data())
def test_non_antisymmetric_matrices_are_refused(matrix, data):
    n_arms = matrix.shape[0]
    i = data.draw(st.integers(0, n_arms - 2))
    j = data.draw(st.integers(i + 1, n_arms - 1))
    # move the lower entry by more than the tolerance, staying inside [0, 1]
    room = max(matrix[j, i], 1.0 - matrix[j, i])
    shift = data.draw(st.floats(1e-6, room))
    matrix[j, i] += shift if matrix[j, i] + shift <= 1.0 else -shift
    with pytest.raises(ValueError, match="sum to 1"):
        PreferenceMatrix(matrix)


@SETTINGS
@given(antisymmetric_matrices(), st.data())
def test_out_of_range_and_non_finite_entries_are_refused(matrix, data):
    n_arms = matrix.shape[0]
    i, j = data.draw(st.integers(0, n_arms - 1)), data.draw(st.integers(0, n_arms - 1))
    bad = data.draw(st.one_of(st.floats(1.0, 1e300, exclude_min=True), st.floats(-1e300, 0.0, exclude_max=True),
                              st.sampled_from([np.nan, np.inf, -np.inf])))
    matrix[i, j] = bad
    with pytest.raises(ValueError, match=rf"\[{i}, {j}\]"):
        PreferenceMatrix(matrix)


@SETTINGS
@given(antisymmetric_matrices(), st.one_of(
    st.sampled_from([np.nan, np.inf, -np.inf, -1e-12, -1.0, MAX_ATOL * 1.01, 1.0]),
    st.floats(-1e9, 0.0, exclude_max=True), st.floats(MAX_ATOL, 1e9, exclude_min=True)))
def test_bad_atol_is_refused(matrix, atol):
    with pytest.raises(ValueError, match="atol"):
        PreferenceMatrix(matrix, atol=atol)


@pytest.mark.parametrize("atol", [None, "1e-9", True, [1e-9]])
def test_atol_of_the_wrong_type_is_refused(atol):
    with pytest.raises(TypeError, match="atol"):
        PreferenceMatrix([[0.5, 0.7], [0.3, 0.5]], atol=atol)


def test_nan_atol_no_longer_rebuilds_a_wrong_lower_triangle():
    wrong = np.array([[0.5, 0.7], [0.9, 0.5]])
    with pytest.raises(ValueError, match="atol must be finite"):
        PreferenceMatrix(wrong, atol=np.nan)
    with pytest.raises(ValueError, match="sum to 1"):
        PreferenceMatrix(wrong)


@pytest.mark.parametrize("atol,error", [(np.nan, ValueError), (-1e-9, ValueError), (0.5, ValueError),
                                        ("0", TypeError)])
def test_bipartite_problems_refuse_bad_atol(atol, error):
    example = five_edge_example()
    with pytest.raises(error, match="atol"):
        BipartiteDuelProblem(example.n_candidates, example.n_positions, example.edges, example.preferences, atol=atol)
    # valid tolerances still accept the example unchanged
    again = BipartiteDuelProblem(example.n_candidates, example.n_positions, example.edges, example.preferences,
                                 atol=0.0)
    assert np.array_equal(again.preferences, example.preferences)


# ---------------------------------------------------------------------------------------------
# Seeds and generator options
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: gym.make("CopelandDuel-v0"),
    lambda: gym.make("DuelingBandit-v0"),
    lambda: gym.make("CombinatorialDuel-v0"),
    lambda: CopelandDuelVectorEnv(3),
    lambda: BordaReductionWrapper(gym.make("CopelandDuel-v0")),
])
@pytest.mark.parametrize("seed,error", [(-1, ValueError), (1.5, TypeError), (True, TypeError), ("3", TypeError),
                                        (np.random.SeedSequence(0), TypeError)])
def test_bad_reset_seeds_name_the_seed(make, seed, error):
    with pytest.raises(error, match="seed"):
        make().reset(seed=seed)


@pytest.mark.parametrize("make", [lambda: gym.make("CopelandDuel-v0"), lambda: CopelandDuelVectorEnv(3),
                                  lambda: gym.make("CombinatorialDuel-v0")])
def test_numpy_integer_seed_is_the_same_seed(make):
    def trajectory(seed):
        env = make()
        env.reset(seed=seed)
        env.action_space.seed(0)
        return [env.step(env.action_space.sample())[:2] for _ in range(50)]

    assert str(trajectory(np.int64(7))) == str(trajectory(7))


def test_bipartite_sampler_refuses_a_negative_graph_seed():
    with pytest.raises(ValueError, match="graph_seed"):
        BipartiteProblemSampler(2, 3, graph_seed=-1)
    assert BipartiteProblemSampler(2, 3, graph_seed=np.int64(4)).edges == BipartiteProblemSampler(2, 3, graph_seed=4).edges


@pytest.mark.parametrize("call,error,pattern", [
    (lambda rng: utility_based(4, rng, spread=np.nan), ValueError, "spread"),
    (lambda rng: utility_based(4, rng, spread="3"), TypeError, "spread"),
    (lambda rng: no_condorcet_winner(4, rng, min_gap=np.nan), ValueError, "min_gap"),
    (lambda rng: no_condorcet_winner(4, rng, min_gap=0.5), ValueError, "min_gap"),
    (lambda rng: no_condorcet_winner(4.0, rng), TypeError, "n_arms"),
    (lambda rng: cyclic_copeland_winners(5, rng, low=np.nan), ValueError, "low"),
    (lambda rng: cyclic_copeland_winners(5, rng, low=0.8, high=0.7), ValueError, "low <= high"),
    (lambda rng: cyclic_copeland_winners(5, rng, shuffle="no"), TypeError, "shuffle"),
    (lambda rng: no_condorcet_winner(4, np.random.RandomState(0)), TypeError, "Generator"),
])
def test_generator_options_are_validated(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call(np.random.default_rng(0))


def test_env_n_arms_is_validated():
    sampler = ProblemSampler("utility_based", n_arms=4)
    with pytest.raises(TypeError, match="n_arms"):
        gym.make("DuelingBandit-v0", problem_sampler=lambda rng: sampler(rng), n_arms=4.0)
    with pytest.raises(ValueError, match="disagrees"):
        gym.make("CopelandDuel-v0", preferences="multisol", n_arms=4)


# ---------------------------------------------------------------------------------------------
# Single-environment actions
# ---------------------------------------------------------------------------------------------
def _pairs(n_arms: int):
    return st.lists(st.tuples(st.integers(0, n_arms - 1), st.integers(0, n_arms - 1)), min_size=1, max_size=30)


@SETTINGS
@given(st.sampled_from(INTEGER_DTYPES), _pairs(N_ARMS), st.sampled_from(["array", "tuple", "list"]))
def test_single_env_plays_exactly_the_duel_of_any_integer_dtype(problem_20, dtype, duels, container):
    env = gym.make("CopelandDuel-v0", preferences=problem_20).unwrapped
    reference = gym.make("CopelandDuel-v0", preferences=problem_20).unwrapped
    env.reset(seed=3)
    reference.reset(seed=3)
    for first, second in duels:
        if container == "array":
            action = np.array([first, second], dtype=dtype)
        else:
            action = (dtype(first), dtype(second)) if container == "tuple" else [dtype(first), dtype(second)]
        observation, reward, _, _, info = env.step(action)
        assert reward == -problem_20.regret("copeland_komiyama", first, second)
        for notion, value in info["regret"].items():
            assert value == problem_20.regret(notion, first, second)
        assert info["duel"] == (first, second) and type(info["duel"][0]) is int
        # the outcome is the reference env's outcome for the same duel given as plain ints
        assert observation == reference.step((first, second))[0]
    assert np.array_equal(env.win_counts, reference.win_counts)


BAD_PAIR_ACTIONS = [
    {0: 1, 1: 2}, {0, 1}, frozenset({2, 3}), (True, False), [False, True], np.array([True, False]),
    np.array([0.0, 1.0]), (0.0, 1.0), (np.float32(1), 0), np.array([0, 1], dtype=object), ("0", "1"), "01",
    b"01", None, 3, np.int64(3), np.array([[0, 1]]), np.array([[0], [1]]), np.array([0, 1, 2]), (0, 1, 2), (0,),
    np.array(1), (np.array([0]), 1), (None, 1), np.array([0, 1], dtype=np.complex128),
]


@pytest.mark.parametrize("action", BAD_PAIR_ACTIONS, ids=repr)
@pytest.mark.parametrize("env_id", ["CopelandDuel-v0", "DuelingBandit-v0"])
def test_single_env_refuses_non_integer_pairs(env_id, action):
    env = gym.make(env_id)
    env.reset(seed=0)
    with pytest.raises(TypeError, match="action"):
        env.step(action)


@pytest.mark.parametrize("action", [(0, 5), (-1, 0), np.array([0, -1], dtype=np.int8),
                                    np.array([2**64 - 1, 0], dtype=np.uint64), np.array([5, 5], dtype=np.uint8)])
def test_single_env_refuses_arms_out_of_range(action):
    env = gym.make("CopelandDuel-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="out of range"):
        env.step(action)


@pytest.mark.parametrize("action", [{0: 1}, {1}, True, np.True_, 1.0, np.float64(2.0), "1", None, [0, 1],
                                    np.array([1, 2]), np.array([[1]]), np.array(1.0), np.array([True])], ids=repr)
def test_combinatorial_env_refuses_non_integer_actions(action):
    env = CombinatorialDuelEnv()
    env.reset(seed=0)
    with pytest.raises(TypeError, match="action"):
        env.step(action)


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
def test_combinatorial_env_accepts_every_integer_dtype(dtype):
    env = CombinatorialDuelEnv()
    reference = CombinatorialDuelEnv()
    env.reset(seed=1)
    reference.reset(seed=1)
    for k in [3, 0, 2, 1, 3, 3]:
        for action in (dtype(k), np.array(k, dtype=dtype), np.array([k], dtype=dtype)):
            observation, reward, _, _, info = env.step(action)
            expected = reference.step(k)
            assert info["duel"] == k and observation == expected[0] and reward == expected[1]


# ---------------------------------------------------------------------------------------------
# Vector-environment actions
# ---------------------------------------------------------------------------------------------
@SETTINGS
@given(st.sampled_from(INTEGER_DTYPES), st.integers(1, 9), st.booleans(), st.data())
def test_vector_env_plays_exactly_the_duels_of_any_integer_dtype(problem_20, dtype, num_envs, sampled, data):
    source = ({"problem_sampler": ProblemSampler("no_condorcet_winner", n_arms=N_ARMS)} if sampled
              else {"preferences": problem_20})
    env = CopelandDuelVectorEnv(num_envs, **source)
    reference = CopelandDuelVectorEnv(num_envs, **source)
    env.reset(seed=11)
    reference.reset(seed=11)
    for _ in range(3):
        duels = np.array(data.draw(st.lists(st.tuples(st.integers(0, N_ARMS - 1), st.integers(0, N_ARMS - 1)),
                                            min_size=num_envs, max_size=num_envs)), dtype=np.int64)
        duels[0] = (N_ARMS - 1, 0)  # the largest flat index, which overflows 8-bit dtypes
        observations, rewards, _, _, info = env.step(duels.astype(dtype))
        for k in range(num_envs):
            first, second = int(duels[k, 0]), int(duels[k, 1])
            problem = env.problems[k]  # with a sampler, each sub-environment reads its own problem
            assert rewards[k] == -problem.regret("copeland_komiyama", first, second)
            for notion in env.regret_notions:
                assert info["regret"][notion][k] == problem.regret(notion, first, second)
        assert info["duel"].dtype == np.int64 and np.array_equal(info["duel"], duels)
        expected = reference.step(duels)
        assert np.array_equal(observations, expected[0]) and np.array_equal(rewards, expected[1])


def test_vector_env_problems_differ_per_sub_env_with_a_sampler(problem_20):
    env = CopelandDuelVectorEnv(8, problem_sampler=ProblemSampler("no_condorcet_winner", n_arms=N_ARMS))
    env.reset(seed=0)
    duels = np.tile(np.array([[19, 0]], dtype=np.int8), (8, 1))
    rewards = env.step(duels)[1]
    expected = [-p.regret("copeland_komiyama", 19, 0) for p in env.problems]
    assert rewards.tolist() == expected
    assert len({p.matrix.tobytes() for p in env.problems}) == 8


def test_vector_env_reports_no_duel_for_sub_envs_that_reset():
    env = CopelandDuelVectorEnv(2, max_episode_steps=1, preferences="multisol")
    env.reset(seed=0)
    info = env.step(np.array([[0, 1], [2, 3]]))[4]
    assert info["duel"].tolist() == [[0, 1], [2, 3]] and info["_duel"].tolist() == [True, True]
    info = env.step(np.array([[0, 1], [2, 3]]))[4]  # both sub-environments reset instead of playing
    assert "duel" not in info and "_duel" not in info


def test_vector_env_does_not_alias_the_callers_actions():
    env = CopelandDuelVectorEnv(2, preferences="multisol")
    env.reset(seed=0)
    actions = np.array([[0, 1], [2, 3]])
    info = env.step(actions)[4]
    actions[:] = 4
    assert info["duel"].tolist() == [[0, 1], [2, 3]]


@pytest.mark.parametrize("actions,error", [
    (np.array([[0.0, 1.0], [1.0, 0.0]]), TypeError),
    (np.array([[True, False], [False, True]]), TypeError),
    (np.array([[0, 1], [1, 0]], dtype=object), TypeError),
    (np.array([["0", "1"], ["1", "0"]]), TypeError),
    (np.array([[0, 1], [1, 0]], dtype=np.complex64), TypeError),
    ({0: (0, 1), 1: (1, 0)}, TypeError),
    ([[0, 1], [1]], ValueError),
    (np.array([0, 1]), ValueError),
    (np.array([[0, 1, 2], [1, 0, 2]]), ValueError),
    (np.zeros((2, 2, 1), dtype=int), ValueError),
    (np.array([[0, 1], [-1, 0]], dtype=np.int8), ValueError),
    (np.array([[0, 1], [2**63, 0]], dtype=np.uint64), ValueError),
    (np.array([[0, 1], [5, 0]], dtype=np.uint8), ValueError),
])
def test_vector_env_refuses_bad_actions(actions, error):
    env = DuelingBanditVectorEnv(2, preferences="multisol", reward_regret="copeland_komiyama")
    env.reset(seed=0)
    with pytest.raises(error, match="actions"):
        env.step(actions)


# ---------------------------------------------------------------------------------------------
# Wrappers
# ---------------------------------------------------------------------------------------------
WRAPPERS = {
    "pair": PairReductionWrapper,
    "borda": BordaReductionWrapper,
    "flat": FlatPairActions,
    "statistics": DuelStatistics,
}


@pytest.mark.parametrize("action", [{0: 1}, {0, 1}, (True, False), True, np.bool_(False), 1.0, "1", None,
                                    np.array([1.0]), np.array([[1]]), np.array([True])], ids=repr)
@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_wrappers_refuse_non_integer_actions(wrapper, action):
    env = WRAPPERS[wrapper](gym.make("CopelandDuel-v0", preferences="multisol"))
    env.reset(seed=0)
    with pytest.raises(TypeError, match="action"):
        env.step(action)


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
@pytest.mark.parametrize("wrapper", ["pair", "borda", "flat"])
def test_discrete_wrappers_accept_every_integer_dtype(wrapper, dtype):
    def run(convert):
        env = WRAPPERS[wrapper](gym.make("CopelandDuel-v0", preferences="multisol"))
        env.reset(seed=2)
        return [env.step(convert(k))[4]["duel"] for k in (0, 4, 2, 3, 1, 4)]

    plain = run(int)
    assert run(dtype) == plain
    assert run(lambda k: np.array(k, dtype=dtype)) == plain
    assert run(lambda k: np.array([k], dtype=dtype)) == plain


class ReversedArms(gym.ActionWrapper):
    """An action remapping: arm ``i`` of the action is arm ``K - 1 - i`` of the environment."""

    def __init__(self, env):
        super().__init__(env)
        self.n_arms = env.unwrapped.n_arms

    def action(self, action):
        return self.n_arms - 1 - np.asarray(action, dtype=np.int64)


@pytest.mark.parametrize("stack", [
    lambda env: DuelStatistics(ReversedArms(env)),
    lambda env: DuelStatistics(FlatPairActions(ReversedArms(env))),
    lambda env: DuelStatistics(PairReductionWrapper(env)),
    lambda env: DuelStatistics(BordaReductionWrapper(ReversedArms(env))),
    lambda env: DuelStatistics(PairReductionWrapper(ReversedArms(env))),
])
def test_duel_statistics_records_the_duel_the_environment_played(stack):
    env = stack(gym.make("CopelandDuel-v0", preferences="mslr5-noncondorcet"))
    base = env.unwrapped
    env.reset(seed=4)
    env.action_space.seed(4)
    for _ in range(200):
        observation, *_ = env.step(env.action_space.sample())
        # the environment's own win counts are the ground truth of what was played
        assert np.array_equal(env.tracker.wins, base.win_counts)
    assert observation.shape == env.observation_space.shape


def test_duel_statistics_needs_the_played_duel_in_info():
    class NoDuelInfo(gym.Wrapper):
        def step(self, action):
            observation, reward, terminated, truncated, info = self.env.step(action)
            return observation, reward, terminated, truncated, {k: v for k, v in info.items() if k != "duel"}

    env = DuelStatistics(NoDuelInfo(gym.make("CopelandDuel-v0")))
    env.reset(seed=0)
    with pytest.raises(TypeError, match="info\\['duel'\\]"):
        env.step(np.array([0, 1]))


def test_duel_statistics_refuses_a_malformed_played_duel():
    class BadDuelInfo(gym.Wrapper):
        def step(self, action):
            observation, reward, terminated, truncated, info = self.env.step(action)
            return observation, reward, terminated, truncated, {**info, "duel": (0, 99)}

    env = DuelStatistics(BadDuelInfo(gym.make("CopelandDuel-v0")))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="info\\['duel'\\]"):
        env.step(np.array([0, 1]))


# ---------------------------------------------------------------------------------------------
# Bipartite problems: indices and preference blocks
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call,pattern", [
    (lambda p: p.canonical_matching([True, 4]), "boolean"),
    (lambda p: p.canonical_matching([0.0, 4]), "integer"),
    (lambda p: p.copeland_regret(True, 1), "boolean"),
    (lambda p: p.edge_index(0.0, 0), "integer"),
    (lambda p: p.max_weight_matching(np.ones(5), required=[np.True_]), "boolean"),
    (lambda p: BipartiteDuelProblem.from_position_preferences(
        2, [([1, 0], [["0.5", "0.7"], ["0.3", "0.5"]]), ([0], [[0.5]])]), "real numbers"),
])
def test_bipartite_indices_and_blocks_are_not_coerced(call, pattern):
    with pytest.raises(TypeError, match=pattern):
        call(five_edge_example())
