"""CPE-DB (Chen, Du, Huang, Zhao, ICML 2020): shared primitives, CLUCB-Borda-PAC/Exact, CAR-Cond/Verify/Parallel.

Oracle numbers of the paper's 5-edge example: tests/data/oracles.json, key "CPE_DB_5edge_example".
Statistical tests assert a failure count at most ``floor(δ n / 2)`` over ``n`` runs (the
``1 - δ`` guarantee with a margin; with few runs this means no failure at all).
"""

from __future__ import annotations

import copy
import hashlib
import math
import pickle

import numpy as np
import pytest
from scipy.stats import chisquare

import dueling_gym  # noqa: F401
from dueling_gym.agents.cpe import (
    CARCond,
    CARParallel,
    CARVerify,
    CLUCBBordaExact,
    CLUCBBordaPAC,
    CombinatorialAgent,
    CondorcetOracle,
    ExactMatchingSampler,
    MatchingSampler,
    MatchingSolver,
    PairStatistics,
    RejectionMatchingSampler,
    bound_matrices,
    condorcet_oracle,
    confidence_radius,
    graph_only,
    log_constant,
    make_sampler,
    oracle_drift,
)
from dueling_gym.agents.cpe.bounds import preference_bounds
from dueling_gym.agents.registry import AGENT_REGISTRY, list_agents, make_agent
from dueling_gym.envs.combinatorial_duel import CombinatorialDuelEnv
from dueling_gym.experiments.pure_exploration import PureExplorationResult, run_pure_exploration
from dueling_gym.problems import BipartiteDuelProblem, five_edge_example, random_bipartite_problem

from cpe_reference import (
    brute_force_max_min,
    car_cond_reference,
    frank_wolfe_condorcet_oracle,
    frank_wolfe_paper_cost,
)

BORDA_5EDGE = (0, 4)      # {e1, e5}
CONDORCET_5EDGE = (1, 4)  # {e2, e5}


def planted(n_positions, n_candidates, seed, *, min_gap=0.3, edge_probability=0.4):
    return random_bipartite_problem(n_positions, n_candidates, np.random.default_rng(seed), planted_condorcet=True,
                                    min_gap=min_gap, edge_probability=edge_probability)


def easy_borda_instances(count, sizes, *, min_borda_gap=0.15, start=0):
    """Planted random instances whose Borda gaps are all at least ``min_borda_gap`` (deterministic search)."""
    out, seed = [], start
    while len(out) < count:
        n_positions = sizes[len(out) % len(sizes)]
        problem = planted(n_positions, n_positions + 1, 1000 + seed)
        seed += 1
        if problem.count_max_matchings() > 1 and problem.borda_gaps().min() >= min_borda_gap:
            out.append(problem)
    return out


def assert_rate(results, delta, *, attribute="correct"):
    failures = sum(not getattr(result, attribute) for result in results)
    assert all(result.stopped for result in results)
    assert failures <= math.floor(delta * len(results) / 2), [
        (result.problem, result.seed, result.recommendation) for result in results if not getattr(result, attribute)
    ]


# ---------------------------------------------------------------------------------------------
# Primitives
# ---------------------------------------------------------------------------------------------
def test_log_constant_and_radius_formula():
    assert log_constant(4, 5) == 5                       # max(K, m): the union bound over m edges holds
    assert log_constant(4, 5, paper_log_constant=True) == 4
    assert log_constant(7, 3) == 7
    assert log_constant(6) == 6                          # Condorcet algorithms: K
    assert log_constant(0) == 1
    counts = np.array([0, 1, 10, 250])
    radius = confidence_radius(counts, t=7, delta=0.05, constant=5)
    level = math.log(4 * 5 * 7**3 / 0.05)
    assert radius[0] == 1.0                              # x/0 := 1
    np.testing.assert_allclose(radius[1:], np.sqrt(level / (2 * counts[1:])), rtol=1e-14)
    assert confidence_radius([3], 1, 0.1, 1)[0] == pytest.approx(math.sqrt(math.log(40) / 6))
    with pytest.raises(ValueError):
        confidence_radius([1], 0, 0.1, 1)
    with pytest.raises(ValueError):
        confidence_radius([1], 1, 1.0, 1)


def test_preference_bounds_and_matrices(example):
    stats = PairStatistics(example)
    # pairs: (0,1), (0,2), (1,2) at s1; (3,4) at s2
    for first_won in (True, True, False, True):
        stats.record(0, 1, first_won)
    stats.record(2, 1, True)      # reversed order: a win of edge 2 is a loss of the pair's first edge 1
    stats.record(3, 3, True)      # self-duels are not recorded
    np.testing.assert_array_equal(stats.counts, [4, 0, 1, 0])
    np.testing.assert_array_equal(stats.wins, [3, 0, 0, 0])
    lower, upper = stats.bounds(5, 0.1, 4)
    c4, c1 = confidence_radius([4, 1], 5, 0.1, 4)
    assert lower[0] == pytest.approx(max(0.0, 0.75 - c4)) and upper[0] == pytest.approx(min(1.0, 0.75 + c4))
    assert (lower[1], upper[1]) == (0.0, 1.0) and (lower[3], upper[3]) == (0.0, 1.0)
    assert lower[2] == pytest.approx(max(0.0, 0.0 - c1)) and upper[2] == pytest.approx(min(1.0, c1))
    p_upper, p_lower = bound_matrices(example, lower, upper)
    np.testing.assert_array_equal(np.diag(p_upper), 0.5)
    np.testing.assert_array_equal(np.diag(p_lower), 0.5)
    assert p_upper[0, 3] == p_lower[0, 4] == p_upper[3, 1] == 0.0           # incomparable
    assert p_upper[0, 1] == upper[0] and p_upper[1, 0] == pytest.approx(1 - lower[0])
    assert p_lower[0, 1] == lower[0] and p_lower[1, 0] == pytest.approx(1 - upper[0])
    assert np.all(p_lower <= p_upper)
    # direct function on arrays
    lower2, upper2 = preference_bounds([0, 2], [0, 2], 3, 0.2, 2)
    assert (lower2[0], upper2[0]) == (0.0, 1.0) and upper2[1] == 1.0


def test_lp_oracle_on_the_five_edge_example(cpe, example):
    data = cpe["exact_LP_oracle_on_true_P"]
    oracle = CondorcetOracle(example)
    solution = oracle.solve(example.preferences)
    assert solution.value == pytest.approx(data["max_x_min_y_(A=R=empty)"], abs=1e-9)
    np.testing.assert_allclose(solution.x, data["argmax_x"], atol=1e-8)   # chi of {e2, e5}
    for edge in range(5):
        values = data[f"e{edge + 1}"]
        assert oracle.value(example.preferences, [edge]) == pytest.approx(values["In(A={e})"], abs=1e-9)
        assert oracle.value(example.preferences, [], [edge]) == pytest.approx(values["Ex(R={e})"], abs=1e-9)
    assert condorcet_oracle(example, example.preferences) == pytest.approx(0.5)


def test_lp_oracle_infinity_conventions(example):
    oracle = CondorcetOracle(example)
    P = example.preferences
    assert oracle.value(P, [2, 3]) == -math.inf              # e3 and e4 share candidate c3
    assert oracle.value(P, [0, 1]) == -math.inf              # two edges at one position
    assert oracle.value(P, [], [3, 4]) == -math.inf          # no edge left at s2
    assert oracle.value(P, [], [], [2, 3]) == math.inf       # empty y polytope
    assert oracle.value(P, [2, 3], [], [2, 3]) == -math.inf  # x checked first
    assert not oracle.feasible([0], [3, 4]) and oracle.feasible([0], [3])
    # forcing both sides to one matching gives f of that pair
    assert oracle.value(P, [0, 4], [], [1, 3]) == pytest.approx(example.matching_preference((0, 4), (1, 3)))


def test_lp_oracle_equals_brute_force_max_min_on_random_instances():
    rng = np.random.default_rng(7)
    checked = 0
    for trial in range(12):
        n_positions = int(rng.integers(2, 4))
        problem = random_bipartite_problem(n_positions, n_positions + int(rng.integers(0, 3)), rng,
                                           edge_probability=0.7)
        oracle = CondorcetOracle(problem)
        # random "bound-like" matrices: arbitrary values in [0, 1] on comparable pairs
        same = problem.edge_positions[:, None] == problem.edge_positions[None, :]
        for _ in range(3):
            Q = np.where(same, rng.random((problem.n_edges, problem.n_edges)), 0.0)
            np.fill_diagonal(Q, 0.5)
            sets = [list(rng.choice(problem.n_edges, size=int(rng.integers(0, 2)), replace=False)) for _ in range(4)]
            value = oracle.value(Q, *sets)
            expected = brute_force_max_min(problem, Q, *sets)
            if math.isinf(expected):
                assert value == expected
            else:
                assert value == pytest.approx(expected, abs=1e-7)
                checked += 1
    assert checked >= 20


def test_lp_oracle_monotone_in_q_and_lipschitz_drift():
    rng = np.random.default_rng(3)
    problem = planted(3, 4, 11, edge_probability=0.7)
    oracle = CondorcetOracle(problem)
    K = problem.n_comparable_pairs
    for _ in range(8):
        lower = rng.random(K) * 0.5
        upper = np.minimum(1.0, lower + rng.random(K) * 0.5)
        lower2 = np.clip(lower + rng.normal(0, 0.05, K), 0, None)
        upper2 = np.clip(np.maximum(lower2, upper + rng.normal(0, 0.05, K)), None, 1)
        drift = oracle_drift(problem, lower, upper, lower2, upper2)
        p_upper, p_lower = bound_matrices(problem, lower, upper)
        q_upper, q_lower = bound_matrices(problem, lower2, upper2)
        edge = int(rng.integers(problem.n_edges))
        for sets in (([edge], [], [], []), ([], [edge], [], []), ([], [], [], [])):
            high, low = oracle.value(p_upper, *sets), oracle.value(p_lower, *sets)
            if math.isinf(high):
                continue
            assert low <= high + 1e-9                                       # P̲ <= P̄ entrywise
            assert abs(oracle.value(q_upper, *sets) - high) <= drift + 1e-7
            assert abs(oracle.value(q_lower, *sets) - low) <= drift + 1e-7
    batch = oracle_drift(problem, np.zeros((2, K)), np.ones((2, K)), np.zeros(K), np.ones(K))
    np.testing.assert_array_equal(batch, [0.0, 0.0])


def test_frank_wolfe_oracle_is_a_lower_bound_and_documents_its_cost(example):
    # The paper's approximate oracle (Appendix C.2), kept as a test reference: its value never
    # exceeds the exact LP's, and its printed parameters are far out of reach.
    cost = frank_wolfe_paper_cost(example, 0.5)
    assert cost["outer"] == 4096 and cost["matchings"] > 2e11        # ≈ 2.7e11 assignment problems
    P = example.preferences
    exact = condorcet_oracle(example, P)
    approx = frank_wolfe_condorcet_oracle(example, P, max_outer=200, max_inner=200)
    assert exact - 0.05 <= approx <= exact + 1e-12
    forced = frank_wolfe_condorcet_oracle(example, P, [2], max_outer=30, max_inner=30)
    assert forced <= condorcet_oracle(example, P, [2]) + 1e-12
    assert frank_wolfe_condorcet_oracle(example, P, [2, 3]) == -math.inf
    assert frank_wolfe_condorcet_oracle(example, P, [], [], [2, 3]) == math.inf


def test_matching_solver_matches_the_shared_mwmc_routine():
    rng = np.random.default_rng(2)
    for trial in range(20):
        problem = random_bipartite_problem(int(rng.integers(1, 6)), 6, rng, edge_probability=0.6)
        solver = MatchingSolver(problem)
        for weights in (rng.random(problem.n_edges), rng.integers(0, 3, problem.n_edges).astype(float),
                        np.zeros(problem.n_edges)):
            assert solver(weights) == problem.max_weight_matching(weights)
            assert solver(weights, maximize=False) == problem.max_weight_matching(weights, maximize=False)
            edge = int(rng.integers(problem.n_edges))
            assert solver(weights, forbidden=[edge]) == problem.max_weight_matching(weights, forbidden=[edge])
            assert solver(weights, required=[edge]) == problem.max_weight_matching(weights, required=[edge])
    with pytest.raises(ValueError):
        solver(np.full(problem.n_edges, np.nan))


def test_exact_samplers_are_uniform(example):
    problem = random_bipartite_problem(3, 4, np.random.default_rng(5), edge_probability=0.8)
    matchings = problem.max_matchings()
    counts = np.array(problem.edge_matching_counts(), dtype=float)
    rng = np.random.default_rng(0)
    n = 6000
    for sampler in (ExactMatchingSampler(graph_only(problem)), ExactMatchingSampler(problem, method="matching"),
                    RejectionMatchingSampler(problem)):
        assert isinstance(sampler, MatchingSampler) and sampler.eta == 0.0
        draws = [sampler.sample(rng) for _ in range(n)]
        observed = np.array([draws.count(M) for M in matchings])
        assert chisquare(observed).pvalue > 1e-4
        position = 1
        group = problem.edges_by_position[position]
        opponents = [sampler.sample_opponent(position, rng) for _ in range(n)]
        observed = np.array([opponents.count(e) for e in group])
        expected = counts[list(group)] / counts[list(group)].sum() * n
        assert chisquare(observed, expected).pvalue > 1e-4
    assert isinstance(make_sampler(example, "auto"), ExactMatchingSampler)
    assert isinstance(make_sampler(example, "rejection"), RejectionMatchingSampler)
    custom = RejectionMatchingSampler(example)
    assert make_sampler(example, custom) is custom
    with pytest.raises(ValueError):
        make_sampler(example, "mcmc")


# ---------------------------------------------------------------------------------------------
# Agent API
# ---------------------------------------------------------------------------------------------
AGENT_FACTORIES = {
    "clucb_borda_pac": lambda problem, **kw: CLUCBBordaPAC(problem, delta=0.1, epsilon=0.02, **kw),
    "clucb_borda_exact": lambda problem, **kw: CLUCBBordaExact(problem, delta=0.1, **kw),
    "car_cond": lambda problem, **kw: CARCond(problem, delta=0.05, **kw),
    "car_verify": lambda problem, **kw: CARVerify(problem, delta=0.005, **kw),
    "car_parallel": lambda problem, **kw: CARParallel(problem, delta=0.005, **kw),
}


def test_registry_keeps_combinatorial_agents_out_of_the_dueling_list(example):
    names = set(AGENT_FACTORIES)
    assert names <= set(AGENT_REGISTRY)
    assert not names & set(list_agents("dueling")) and not names & set(list_agents("bandit"))
    for name in names:
        assert issubclass(AGENT_REGISTRY[name], CombinatorialAgent)
    agent = make_agent("car_cond", example, seed=0, delta=0.1)
    assert isinstance(agent, CARCond) and agent.hyperparameters == {"delta": 0.1}
    pac = make_agent("clucb_borda_pac", example, seed=1, delta=0.2, epsilon=0.1)
    assert pac.hyperparameters == {"delta": 0.2, "epsilon": 0.1, "paper_log_constant": False, "sampler": "exact"}
    assert CLUCBBordaExact(example).hyperparameters == {
        "delta": 0.05, "paper_log_constant": False, "reuse_samples_if_exact": False, "sampler": "exact"}
    assert CARParallel(example).hyperparameters["delta0"] == 0.01
    assert "CARCond(graph:" in repr(agent)
    assert {AGENT_REGISTRY[n].target for n in names} == {"borda", "condorcet"}


def test_invalid_arguments(example):
    with pytest.raises(ValueError):
        CLUCBBordaPAC(example, delta=0.0)
    with pytest.raises(ValueError):
        CLUCBBordaPAC(example, delta=1.5)
    with pytest.raises(ValueError):
        CLUCBBordaPAC(example, epsilon=0.0)
    with pytest.raises(ValueError):
        CARVerify(example, delta=0.05)          # needs delta < delta0 = 0.01
    with pytest.raises(ValueError):
        CARParallel(example, delta=0.01)
    with pytest.raises(TypeError):
        CARCond(example, oracle="lp")           # one oracle, the exact LP: no option to choose another
    with pytest.raises(TypeError):
        CARCond(5)                              # sweeps would pass n_arms: a clear error

    class Biased(RejectionMatchingSampler):
        eta = 0.01

    with pytest.raises(ValueError):
        CLUCBBordaPAC(example, epsilon=0.05, sampler=Biased(example))   # eta > eps/8
    with pytest.raises(ValueError):
        CLUCBBordaExact(example, sampler=Biased(example))
    assert CLUCBBordaPAC(example, epsilon=0.1, sampler=Biased(example)).done is False


def test_act_observe_protocol_and_reset(example):
    agent = CLUCBBordaPAC(example, delta=0.1, epsilon=0.02, seed=3)
    duel = agent.act()
    assert agent.act() == duel and example.are_comparable(*duel)
    wrong = (duel[0], 3 if duel[1] != 3 else 4)
    with pytest.raises(ValueError):
        agent.observe(wrong, True)
    with pytest.raises(TypeError):
        agent.observe("ab", True)
    env = CombinatorialDuelEnv(example)
    first = run_pure_exploration(agent, env, seed=5)
    assert agent.done and agent.recommend() == first.recommendation
    with pytest.raises(RuntimeError):
        agent.act()
    with pytest.raises(RuntimeError):
        agent.observe(duel, True)
    again = run_pure_exploration(agent, env, seed=5)             # reset(seed=) inside: reproducible
    assert (again.samples, again.recommendation) == (first.samples, first.recommendation)
    other = run_pure_exploration(agent, env, seed=6)
    assert other.samples == env.samples and other.samples != first.samples


def test_runner_result_fields_and_cap(example):
    agent = CARCond(example, delta=0.05)
    capped = run_pure_exploration(agent, example, seed=0, max_samples=50)
    assert isinstance(capped, PureExplorationResult)
    assert capped.samples == 50 and not capped.stopped and not capped.correct and capped.epsilon_correct is None
    assert capped.valid and capped.target == "condorcet" and capped.agent == "car_cond"
    row = capped.to_dict()
    assert row["recommendation"] == list(capped.recommendation) and row["time_per_sample"] > 0
    with pytest.raises(ValueError):
        run_pure_exploration(agent, planted(3, 4, 0), seed=0)    # different graph
    with pytest.raises(TypeError):
        run_pure_exploration(agent, 42)
    import gymnasium as gym
    wrapped = gym.make("CombinatorialDuel-v0", max_episode_steps=10)
    result = run_pure_exploration(CLUCBBordaPAC(example, delta=0.2, epsilon=0.1), wrapped, seed=1)
    assert result.stopped and result.samples > 10            # the TimeLimit is bypassed


class _NoPreferences(BipartiteDuelProblem):
    """A problem that refuses to reveal anything derived from its preferences."""

    def _refuse(self, *args, **kwargs):
        raise AssertionError("an agent read the preferences")

    preferences = property(_refuse)
    edge_rewards = borda_winner = condorcet_winner = borda_gaps = borda_score = _refuse
    matching_preference = is_condorcet_winner = condorcet_challenge = score = _refuse


def _replay(agent, outcomes_source_env, steps):
    """Play ``steps`` duels of ``agent`` against ``outcomes_source_env``; return the duels and outcomes."""
    record = []
    for _ in range(steps):
        if agent.done:
            break
        duel = agent.act()
        observation = bool(outcomes_source_env.step_edges(*duel)[0])
        agent.observe(duel, observation)
        record.append((duel, observation))
    return record


@pytest.mark.parametrize("name", sorted(AGENT_FACTORIES))
def test_agents_never_touch_preferences(name, example):
    hidden = _NoPreferences(example.n_candidates, example.n_positions, example.edges, example.preferences)
    agent = AGENT_FACTORIES[name](hidden, seed=0)
    env = CombinatorialDuelEnv(example)
    env.reset(seed=0)
    record = _replay(agent, env, 300)
    assert len(record) == 300 and agent.recommend() is not None
    # Same graph, preferences replaced by ties: same duels when fed the same outcomes.
    ties = np.where(example.edge_positions[:, None] == example.edge_positions[None, :], 0.5, 0.0)
    dummy = BipartiteDuelProblem(example.n_candidates, example.n_positions, example.edges, ties)
    twin = AGENT_FACTORIES[name](dummy, seed=0)
    for duel, observation in record:
        assert twin.act() == duel
        twin.observe(duel, observation)
    assert twin.recommend() == agent.recommend()


def test_skipping_oracle_calls_keeps_car_cond_as_printed():
    # CAR-Cond skips LPs whose outcome cannot change a decision: the same duels, outcomes and
    # answer as Algorithm 2 evaluating all four oracle values of every undecided edge each round.
    problem = planted(2, 3, 0, min_gap=0.35, edge_probability=0.8)
    rng = np.random.default_rng(1)
    draws = rng.random(10**6)
    cursor = iter(range(draws.size))

    def duel(e, e2):
        return bool(draws[next(cursor)] < problem.preferences[e, e2])

    reference, answer, reference_calls = car_cond_reference(problem, 0.1, duel, 10**6)
    agent = CARCond(problem, delta=0.1)
    played = []
    cursor = iter(range(draws.size))
    while not agent.done:
        e, e2 = agent.act()
        won = duel(e, e2)
        agent.observe((e, e2), won)
        played.append((e, e2, won))
    assert played == reference and agent.recommend() == answer and not agent.failed
    assert agent.state.skipped_evaluations > 0 and agent.state.oracle_calls < reference_calls / 3


# ---------------------------------------------------------------------------------------------
# Behaviour on the 5-edge example and random instances
# ---------------------------------------------------------------------------------------------
def test_clucb_borda_pac_on_the_five_edge_example(example):
    # epsilon = 0.02 < the runner-up's Borda gap 0.025: the PAC answer must be {e1, e5}
    results = [run_pure_exploration(CLUCBBordaPAC(example, delta=0.1, epsilon=0.02), example, seed=seed)
               for seed in range(4)]
    assert all(result.recommendation == BORDA_5EDGE for result in results)
    assert_rate(results, 0.1)
    assert_rate(results, 0.1, attribute="epsilon_correct")
    assert 2_000 < np.mean([result.samples for result in results]) < 60_000


def test_clucb_self_duels_are_played_and_counted(example):
    # {e1, e5} is in 2 of the 5 matchings: the opponent of e5 is e5 itself w.p. 3/5 (a played, counted fair coin).
    agent = CLUCBBordaExact(example, delta=0.1, seed=0)
    env = CombinatorialDuelEnv(example)
    env.reset(seed=0)
    record = _replay(agent, env, 3000)
    self_duels = sum(duel[0] == duel[1] for duel, _ in record)
    assert self_duels > 0 and self_duels == agent.self_duels == int(env.self_duel_counts.sum())
    assert agent.counts.sum() == agent.t - 1 <= len(record)   # every duel of the epoch is a sample


def test_car_cond_on_the_five_edge_example(example):
    results = [run_pure_exploration(CARCond(example, delta=0.05), example, seed=seed) for seed in range(2)]
    assert all(result.recommendation == CONDORCET_5EDGE for result in results)
    assert_rate(results, 0.05)


def test_car_verify_on_the_five_edge_example(example):
    agent = CARVerify(example, delta=0.005)
    result = run_pure_exploration(agent, example, seed=0)
    assert result.recommendation == CONDORCET_5EDGE and result.correct and agent.phase == "verify"
    assert result.samples > agent.state.samples                 # verification duels on top of CAR-Cond's


def test_pac_guarantee_with_a_loose_epsilon():
    # A large epsilon lets the PAC algorithm stop on any epsilon-good matching.
    problems = [planted(n, n + 2, 40 + n, min_gap=0.1, edge_probability=0.6) for n in (3, 4, 5)]
    results = []
    for problem in problems:
        for seed in range(3):
            results.append(run_pure_exploration(CLUCBBordaPAC(problem, delta=0.1, epsilon=0.1), problem, seed=seed))
    assert_rate(results, 0.1, attribute="epsilon_correct")
    assert all(result.borda_gap <= 0.1 for result in results)


def test_quick_correctness_on_small_random_instances():
    problems = easy_borda_instances(3, (2, 3, 4), min_borda_gap=0.2)
    results = []
    for i, problem in enumerate(problems):
        results.append(run_pure_exploration(CLUCBBordaPAC(problem, delta=0.1, epsilon=0.05), problem, seed=i))
        results.append(run_pure_exploration(CARCond(problem, delta=0.1), problem, seed=i))
    results.append(run_pure_exploration(CLUCBBordaExact(problems[0], delta=0.1), problems[0], seed=0))
    assert_rate(results, 0.1)


def test_single_matching_graph_stops_without_sampling():
    ties = [[0.5]]
    problem = BipartiteDuelProblem(1, 1, [(0, 0)], ties)
    for name in ("car_cond", "car_verify", "car_parallel"):
        agent = AGENT_FACTORIES[name](problem)
        assert agent.done and agent.recommend() == (0,) and agent.samples == 0


@pytest.mark.slow
def test_slow_five_edge_exact_and_parallel(example):
    # CLUCB-Borda-Exact as printed needs 16-17 epochs here (0.3-0.9 M duels, see the module
    # docstring of dueling_gym.agents.cpe.clucb_borda): one run as printed, two with reused statistics.
    exact = [run_pure_exploration(CLUCBBordaExact(example, delta=0.1), example, seed=0)]
    exact += [run_pure_exploration(CLUCBBordaExact(example, delta=0.1, reuse_samples_if_exact=True), example,
                                   seed=seed) for seed in (1, 2)]
    assert all(result.recommendation == BORDA_5EDGE for result in exact)
    parallel = [run_pure_exploration(CARParallel(example, delta=0.005), example, seed=seed) for seed in range(2)]
    assert all(result.recommendation == CONDORCET_5EDGE for result in parallel)
    verify = [run_pure_exploration(CARVerify(example, delta=0.005), example, seed=seed) for seed in range(1, 3)]
    cond = [run_pure_exploration(CARCond(example, delta=0.05), example, seed=seed) for seed in range(2, 5)]
    pac = [run_pure_exploration(CLUCBBordaPAC(example, delta=0.1, epsilon=0.02), example, seed=seed)
           for seed in range(4, 12)]
    assert_rate(exact + pac, 0.1)
    assert_rate(parallel + verify, 0.005)
    assert_rate(cond, 0.05)


@pytest.mark.slow
def test_slow_random_planted_instances_rates():
    problems = easy_borda_instances(8, (4, 5, 6, 7, 8), min_borda_gap=0.15, start=100)
    pac = [run_pure_exploration(CLUCBBordaPAC(problem, delta=0.1, epsilon=0.05), problem, seed=i)
           for i, problem in enumerate(problems)]
    assert_rate(pac, 0.1)
    assert_rate(pac, 0.1, attribute="epsilon_correct")
    small = [problem for problem in problems if problem.n_positions <= 5][:3]
    exact = [run_pure_exploration(CLUCBBordaExact(problem, delta=0.1), problem, seed=i)
             for i, problem in enumerate(small)]
    assert_rate(exact, 0.1)
    condorcet = [planted(n, n + 1, 500 + n, min_gap=0.35) for n in (4, 4, 5, 6)]
    cond = [run_pure_exploration(CARCond(problem, delta=0.05), problem, seed=i) for i, problem in enumerate(condorcet)]
    assert_rate(cond, 0.05)
    verify = [run_pure_exploration(CARVerify(problem, delta=0.005), problem, seed=i)
              for i, problem in enumerate(condorcet[:2])]
    parallel = [run_pure_exploration(CARParallel(problem, delta=0.005), problem, seed=i)
                for i, problem in enumerate(condorcet[:2])]
    assert_rate(verify + parallel, 0.005)


# ---------------------------------------------------------------------------------------------
# Compiled agents reproduce the Python implementation exactly
# ---------------------------------------------------------------------------------------------
# (sample count, matching, SHA-256 of the duel sequence) recorded with the generator-based
# Python agents before they were compiled (benchmarks/combinatorial_speed.py); the digest covers
# every (e, e2, first_won) row, as little-endian int64, of a run_pure_exploration run.
PINNED_RUNS = {
    ("five_edge", "clucb_borda_pac", (("delta", 0.1), ("epsilon", 0.02)), 0):
        (18189, (0, 4), "43d59950a7fee08d5369f095e49d9e2abf0b3ae475d8a97dd026311acfb3c6d2"),
    ("five_edge", "clucb_borda_pac", (("delta", 0.1), ("epsilon", 0.02), ("sampler", "rejection")), 0):
        (17640, (0, 4), "2186529198f53278d78b343d914dcc36ffdc9cd2df2c902f7df8e070b70ebe78"),
    ("five_edge", "clucb_borda_exact", (("delta", 0.1), ("reuse_samples_if_exact", True)), 1):
        (73509, (0, 4), "c959d37d6e64a1c1e372af25fc6eaa8c98e72355b7f414382db2dbd0a0a63896"),
    ("planted_4x6", "clucb_borda_pac", (("delta", 0.1), ("epsilon", 0.05)), 1):
        (4212, (2, 3, 8, 11), "cbee38f3966ee34e4fffd5c031a71d2da8dbde2b08f3ac8c02fa70d2920fe59b"),
    ("five_edge", "car_cond", (("delta", 0.05),), 0):
        (9463, (1, 4), "908fcd34e301966bd60cd28677c1cbf5b83060ac3615b2e7ce9765133ab3bb3d"),
}
PINNED_SLOW_RUNS = {
    ("five_edge", "clucb_borda_exact", (("delta", 0.05),), 0):
        (840844, (0, 4), "6dd32a381be28651fa4bd6e35c6c18cf6e806804dc73adde8a9230cbbc00189b"),
    ("five_edge", "car_verify", (("delta", 0.005),), 0):
        (22317, (1, 4), "5a4f1ba088b8366d5dfe2428a5810a9648864296169e88dc2e56fb3e61e08271"),
    ("five_edge", "car_parallel", (("delta", 0.005),), 1):
        (48867, (1, 4), "000e82ffe683dbf82c7546598162d97c1f6ebf0701913221108440ff07eda7b6"),
    ("planted_4x6", "car_verify", (("delta", 0.005),), 0):
        (4266, (2, 3, 8, 11), "5c42a8e6ba42836e06a4516105200ceea8b8fc279e945265314ae4f16008701d"),
}


def pinned_problem(name):
    if name == "five_edge":
        return five_edge_example()
    return random_bipartite_problem(4, 6, np.random.default_rng(1004), planted_condorcet=True, min_gap=0.3,
                                    edge_probability=0.6, name="planted_4x6")


def duel_digest(duels):
    return hashlib.sha256(np.ascontiguousarray(duels, dtype="<i8").tobytes()).hexdigest()


def check_pinned(key, expected):
    problem_name, agent_name, hyperparameters, seed = key
    agent = make_agent(agent_name, pinned_problem(problem_name), **dict(hyperparameters))
    result = run_pure_exploration(agent, pinned_problem(problem_name), seed=seed, record_duels=True)
    assert (result.samples, result.recommendation, duel_digest(result.duels)) == expected
    assert result.duels.shape == (result.samples, 3) and agent.samples == result.samples


@pytest.mark.parametrize("key", list(PINNED_RUNS), ids=lambda key: f"{key[0]}-{key[1]}-{key[3]}")
def test_runs_match_the_python_implementation(key):
    check_pinned(key, PINNED_RUNS[key])


@pytest.mark.slow
@pytest.mark.parametrize("key", list(PINNED_SLOW_RUNS), ids=lambda key: f"{key[0]}-{key[1]}-{key[3]}")
def test_slow_runs_match_the_python_implementation(key):
    check_pinned(key, PINNED_SLOW_RUNS[key])


def test_act_observe_loop_equals_the_compiled_runner(example):
    # The public API (one kernel call per duel) and the compiled loop of run_pure_exploration
    # play the same duels and leave the environment in the same state.
    key = ("five_edge", "clucb_borda_pac", (("delta", 0.1), ("epsilon", 0.02)), 0)
    expected = PINNED_RUNS[key]
    agent = CLUCBBordaPAC(example, delta=0.1, epsilon=0.02)
    env = CombinatorialDuelEnv(example)
    loop = run_pure_exploration(agent, env, seed=0, fused=False, record_duels=True)
    assert (loop.samples, loop.recommendation, duel_digest(loop.duels)) == expected
    after_loop = (env.samples, env.duel_counts.tolist(), env.duel_wins.tolist(), env.self_duel_counts.tolist(),
                  env.cumulative_regret, env.step_edges(0, 1)[0])
    fused = run_pure_exploration(agent, env, seed=0, fused=True, record_duels=True)
    assert (fused.samples, fused.recommendation, duel_digest(fused.duels)) == expected
    after_fused = (env.samples, env.duel_counts.tolist(), env.duel_wins.tolist(), env.self_duel_counts.tolist(),
                   env.cumulative_regret, env.step_edges(0, 1)[0])
    assert after_fused == after_loop and fused.samples == agent.samples
    with pytest.raises(ValueError):
        run_pure_exploration(CARCond(example), env, seed=0, fused=True)   # CAR runs duel by duel


def test_compiled_agents_copy_and_pickle_mid_run(example):
    agent = CLUCBBordaExact(example, delta=0.1, seed=4)
    env = CombinatorialDuelEnv(example)
    env.reset(seed=0)
    _replay(agent, env, 700)
    clones = [copy.deepcopy(agent), pickle.loads(pickle.dumps(agent))]
    for clone in clones:
        assert (clone.samples, clone.t, clone.epoch, clone.self_duels, clone.act()) == \
            (agent.samples, agent.t, agent.epoch, agent.self_duels, agent.act())
        np.testing.assert_array_equal(clone.counts, agent.counts)
    outcomes = np.random.default_rng(1).random(2000) < 0.5
    played = []
    for subject in [agent, *clones]:
        duels = []
        for won in outcomes:
            if subject.done:
                break
            duel = subject.act()
            subject.observe(duel, bool(won))
            duels.append(duel)
        played.append(duels)
    assert played[0] == played[1] == played[2]


def test_python_sampler_path_equals_the_compiled_sampler(example):
    # A sampler subclass is called from Python once per round; drawing the same marginals, it
    # gives exactly the compiled sampler's run.
    class PythonMarginals(ExactMatchingSampler):
        """The exact sampler as a subclass: the agents call it from Python instead of their kernels."""

    compiled = CLUCBBordaPAC(example, delta=0.1, epsilon=0.05)
    python = CLUCBBordaPAC(example, delta=0.1, epsilon=0.05, sampler=PythonMarginals(graph_only(example)))
    runs = [run_pure_exploration(agent, example, seed=3, record_duels=True) for agent in (compiled, python)]
    assert runs[0].samples == runs[1].samples > 0
    np.testing.assert_array_equal(runs[0].duels, runs[1].duels)
    whole = run_pure_exploration(CLUCBBordaPAC(example, delta=0.1, epsilon=0.05, sampler="exact_matching"), example,
                                 seed=3)
    assert whole.stopped and whole.recommendation == BORDA_5EDGE
