"""SCB and its Copeland PAC solver (Zoghi, Karnin, Whiteson, de Rijke, NIPS 2015, Algorithms 2-4)."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from agent_helpers import assert_paths_agree
from dueling_gym.agents import make_agent
from dueling_gym.agents._scb_kernels import kl_bai_should_stop, kl_sign_test, squaring_epoch
from dueling_gym.agents.scb import SCB, CopelandPAC
from dueling_gym.experiments import simulate
from dueling_gym.problems import cyclic_copeland_winners, load_problem, unique_copeland_winner
from dueling_gym.problems.generators import GENERATORS, zoghi2015_scalability
from dueling_gym.stats import kl_bernoulli, kl_lower_bound, kl_upper_bound


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------
def run_to_done(agent, matrix, rng, max_duels=1_000_000):
    """Drive a pure-exploration agent with act/observe until it is done; return the duel count."""
    uniforms, cursor, duels = rng.random(4096), 0, 0
    while True:
        first, second = agent.act()
        if first == second:  # the solver never asks for a self-duel while exploring
            assert agent.done
            return duels
        if cursor == uniforms.size:
            uniforms, cursor = rng.random(4096), 0
        agent.observe((first, second), uniforms[cursor] < matrix[first, second])
        cursor += 1
        duels += 1
        assert duels <= max_duels, "the solver did not terminate"


def reference_solver(n_arms, log_inv_delta, epsilon, with_replacement, rng, wins):
    """Algorithms 2 + 4 written as a plain Python generator, straight from the paper's pseudocode.

    Yields the duels ``(i, j)`` it needs and receives ``True`` iff ``i`` won; returns the answer.
    Opponents without replacement are drawn by the same swap procedure as the agent, so the
    two consume the generator identically.
    """
    log_inv_level = log_inv_delta + 2.0 * math.log(n_arms)  # δ' = δ / K²
    signs = {}
    opponents = [[j for j in range(n_arms) if j != i] for i in range(n_arms)]
    position = [0] * n_arms

    def test(i, j):  # Algorithm 2, line 1: stop once n d(p̂, 1/2) > ln(n (n+1) / δ')
        n = wins[i, j] + wins[j, i]
        if n == 0:
            return 0
        mean = wins[i, j] / n
        if n * kl_bernoulli(mean, 0.5) > math.log(n * (n + 1.0)) + log_inv_level:
            return 1 if mean > 0.5 else -1
        return 0

    def reward(i):  # Algorithm 2, line 1
        if with_replacement:
            j = int(rng.integers(0, n_arms - 1))
            j += j >= i
        else:
            remaining = n_arms - 1 - position[i]
            if remaining > 1:
                pick = position[i] + int(rng.integers(0, remaining))
                opponents[i][pick], opponents[i][position[i]] = opponents[i][position[i]], opponents[i][pick]
            j = opponents[i][position[i]]
            position[i] += 1
        while (i, j) not in signs:
            sign = test(i, j)
            if sign:
                signs[i, j], signs[j, i] = sign, -sign
                break
            i_won = yield (i, j)
            wins[(i, j) if i_won else (j, i)] += 1
        return int(signs[i, j] > 0)

    def exact_update(t, candidates, lower, upper):
        met_all = t == n_arms - 1 if not with_replacement else all(
            sum((i, j) in signs for j in range(n_arms) if j != i) == n_arms - 1 for i in candidates)
        if met_all:
            for i in candidates:
                lower[i] = upper[i] = sum(signs.get((i, j), 0) > 0 for j in range(n_arms)) / (n_arms - 1)

    def stop(candidates, lower, upper):
        if len(candidates) == 1:
            return True
        numerator = 1 - max(lower[i] for i in candidates)
        denominator = 1 - max(upper[i] for i in candidates)
        if denominator <= 0:
            return numerator <= 0
        return numerator / denominator <= 1 + epsilon

    # Algorithm 4
    sums = np.zeros(n_arms)
    for i in range(n_arms):
        sums[i] = yield from reward(i)
    lower, upper = np.zeros(n_arms), np.ones(n_arms)
    candidates = list(range(n_arms))
    t = 1
    exact_update(t, candidates, lower, upper)
    candidates = [i for i in candidates if upper[i] >= max(lower[j] for j in candidates)]
    while not stop(candidates, lower, upper):
        t += 1
        for i in candidates:
            sums[i] += yield from reward(i)
        rho = math.log(4 * t * n_arms) + log_inv_delta + 2 * math.log(math.log(t))
        for i in candidates:
            lower[i] = kl_lower_bound(sums[i] / t, t, rho)
            upper[i] = kl_upper_bound(sums[i] / t, t, rho)
        exact_update(t, candidates, lower, upper)
        best_lower = max(lower[j] for j in candidates)
        candidates = [i for i in candidates if upper[i] >= best_lower]
    return max(candidates, key=lambda i: (lower[i], -i))


def reference_scb(n_arms, rng, *, first_r=1, with_replacement=False, reuse=False):
    """Algorithm 3 around :func:`reference_solver`, one duel per ``yield``."""
    wins = np.zeros((n_arms, n_arms), dtype=np.int64)
    r = first_r
    while True:
        budget = 2 ** (2 ** r)
        log_inv_delta = -math.log(math.log(budget) / budget)
        if not reuse:
            wins[:] = 0
        solver = reference_solver(n_arms, log_inv_delta, 0.0, with_replacement, rng, wins)
        used = 0
        try:
            duel = next(solver)
            while True:
                won = yield duel
                used += 1
                if used >= budget:  # force-terminate; the last outcome still counts when reused
                    wins[duel if won else duel[::-1]] += 1
                    break
                duel = solver.send(won)
        except StopIteration as finished:
            while used < budget:  # Algorithm 3, line 3
                yield finished.value, finished.value
                used += 1
        r += 1


def replay_against_reference(agent, reference, matrix, horizon, env_seed):
    env = np.random.default_rng(env_seed)
    duel = next(reference)
    for _ in range(horizon):
        assert agent.act() == duel
        won = bool(env.random() < matrix[duel])
        agent.observe(duel, won)
        duel = reference.send(won)


# ------------------------------------------------------------------------------------------
# the three code paths and the reference implementation
# ------------------------------------------------------------------------------------------
AGENTS = [
    ("scb", lambda: SCB(5)),
    ("scb-replacement-reuse", lambda: SCB(5, with_replacement=True, reuse_across_epochs=True)),
    ("copeland_pac", lambda: CopelandPAC(5, delta=0.1)),
]


@pytest.mark.parametrize("label,build", AGENTS, ids=[label for label, _ in AGENTS])
def test_fused_generic_and_gym_loops_are_identical(label, build):
    horizon, seed = 3000, 7
    assert_paths_agree(lambda: build(), "multisol", horizon, seed)


@pytest.mark.parametrize("problem", ["multisol", "cyclic4"])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_pac_solver_matches_the_reference_generator(problem, with_replacement):
    matrix = load_problem(problem).matrix
    for seed in range(3):
        agent = CopelandPAC(len(matrix), delta=0.1, with_replacement=with_replacement, seed=seed)
        reference = reference_solver(len(matrix), -math.log(0.1), 0.0, with_replacement,
                                     np.random.default_rng(seed), np.zeros(matrix.shape, dtype=np.int64))
        env = np.random.default_rng(100 + seed)
        try:
            duel = next(reference)
            while True:
                assert not agent.done and agent.act() == duel
                won = bool(env.random() < matrix[duel])
                agent.observe(duel, won)
                duel = reference.send(won)
        except StopIteration as finished:
            assert agent.done and agent.recommend() == finished.value
            assert agent.act() == (finished.value, finished.value)


@pytest.mark.parametrize("options", [{}, {"with_replacement": True}, {"reuse_across_epochs": True}, {"first_r": 3}],
                         ids=["default", "replacement", "reuse", "first_r=3"])
def test_scb_matches_the_reference_generator(options):
    matrix = load_problem("multisol").matrix
    agent = SCB(5, seed=4, **options)
    reference = reference_scb(5, np.random.default_rng(4), first_r=options.get("first_r", 1),
                              with_replacement=options.get("with_replacement", False),
                              reuse=options.get("reuse_across_epochs", False))
    replay_against_reference(agent, reference, matrix, 6000, env_seed=5)


# ------------------------------------------------------------------------------------------
# the sign test, the squaring schedule, Algorithm 4's stop rule
# ------------------------------------------------------------------------------------------
@numba.njit(cache=False)
def _sign_test_runs(p, log_inv_level, runs, rng):
    signs = np.zeros(runs, dtype=np.int64)
    lengths = np.zeros(runs, dtype=np.int64)
    for run in range(runs):
        wins, total, sign = 0, 0, 0
        while sign == 0:
            wins += rng.random() < p
            total += 1
            sign = kl_sign_test(wins, total, log_inv_level)
        signs[run], lengths[run] = sign, total
    return signs, lengths


def test_sign_test_errs_less_often_than_its_level():
    # On p = 0.55 the empirical error frequency stays below δ'.
    level = 0.05
    signs, lengths = _sign_test_runs(0.55, -math.log(level), 3000, np.random.default_rng(0))
    assert np.mean(signs < 0) < level
    signs, _ = _sign_test_runs(0.45, -math.log(level), 1000, np.random.default_rng(1))
    assert np.mean(signs > 0) < level
    # Expected length ~ ln(n^2/δ') / d(0.55, 1/2) ≈ 4 000 duels.
    assert 1500 < np.mean(lengths) < 8000


def test_sign_test_threshold_and_ties():
    # n d(p̂, 1/2) > ln(n (n+1)) + ln(1/δ'): 20 straight wins decide at δ' = 0.01, 5 do not.
    assert kl_sign_test(20, 20, -math.log(0.01)) == 1
    assert kl_sign_test(0, 20, -math.log(0.01)) == -1
    assert kl_sign_test(5, 5, -math.log(0.01)) == 0
    assert kl_sign_test(50, 100, 0.0) == 0 and kl_sign_test(0, 0, 0.0) == 0
    n = 1  # all wins: d(1, 1/2) = ln 2, so the test stops at the first n with n ln 2 > ln(n (n+1) / δ')
    while kl_sign_test(n, n, -math.log(0.01)) == 0:
        n += 1
    assert n * math.log(2) > math.log(n * (n + 1) / 0.01)
    assert (n - 1) * math.log(2) <= math.log((n - 1) * n / 0.01)


def test_squaring_schedule_follows_algorithm_3():
    # Algorithm 3, line 2: T_r = 4, 16, 256, 65 536 and δ_r = ln T_r / T_r.
    expected_delta = [0.34657359, 0.173286795, 0.021660849, 0.000169225]
    for r, delta in zip(range(1, 5), expected_delta):
        budget, log_inv_delta = squaring_epoch(r)
        assert budget == 2 ** (2 ** r)
        assert math.exp(-log_inv_delta) == pytest.approx(delta, abs=1e-9)
    assert squaring_epoch(5)[0] == 2 ** 32 and squaring_epoch(6)[0] >= 2 ** 62
    assert math.isfinite(squaring_epoch(12)[1])


def test_epoch_boundaries_follow_the_schedule():
    agent = SCB(5, seed=0)
    matrix = load_problem("multisol").matrix
    rng = np.random.default_rng(0)
    epochs = []
    for _ in range(4 + 16 + 256 + 10):
        epochs.append(agent.epoch)
        duel = agent.act()
        agent.observe(duel, rng.random() < matrix[duel])
    epochs = np.array(epochs)
    assert (epochs[:4] == 1).all() and (epochs[4:20] == 2).all() and (epochs[20:276] == 3).all()
    assert (epochs[276:] == 4).all()
    assert SCB(5, first_r=3, seed=0).epoch == 3


def test_stop_rule_conventions():
    assert kl_bai_should_stop(1, 0.0, 1.0, 0.0)  # |B| = 1
    assert not kl_bai_should_stop(3, 0.2, 1.0, 0.0)  # x/0 = +inf: keep exploring
    assert kl_bai_should_stop(3, 1.0, 1.0, 0.0)  # 0/0 = 1
    assert kl_bai_should_stop(3, 0.75, 0.75, 0.0)  # exact scores
    assert not kl_bai_should_stop(3, 0.5, 0.75, 0.5) and kl_bai_should_stop(3, 0.5, 0.75, 1.0)


# ------------------------------------------------------------------------------------------
# the PAC solver
# ------------------------------------------------------------------------------------------
DELTA = 0.1
RUNS = 20


def _error_rate(problem, runs=RUNS, **options):
    errors, lengths = 0, []
    for seed in range(runs):
        agent = CopelandPAC(problem.n_arms, delta=DELTA, seed=seed, **options)
        lengths.append(run_to_done(agent, problem.matrix, np.random.default_rng(10_000 + seed)))
        assert agent.sample_complexity == lengths[-1]
        errors += agent.recommend() not in problem.copeland_winners
    return errors / runs, lengths


def _random_problems():
    rng = np.random.default_rng(2015)
    return [unique_copeland_winner(n_arms, rng, min_gap=0.1) for n_arms in (4, 5, 6)]


@pytest.mark.parametrize("problem", ["multisol", "cyclic4", *_random_problems()],
                         ids=["multisol", "cyclic4", "random-K4", "random-K5", "random-K6"])
def test_pac_solver_finds_a_copeland_winner_with_the_promised_confidence(problem):
    problem = load_problem(problem) if isinstance(problem, str) else problem
    error_rate, lengths = _error_rate(problem)
    assert error_rate <= DELTA + 0.1
    assert max(lengths) < 20_000


@pytest.mark.slow
def test_pac_solver_on_mslr_condorcet():
    # One pair is at 0.51 vs 0.49 (arms 4, 5): ~1.5e5 duels per run (≈ 10 s in a Python loop).
    error_rate, lengths = _error_rate(load_problem("mslr5-condorcet"))
    assert error_rate <= DELTA + 0.1
    assert 50_000 < np.mean(lengths) < 400_000


def test_tie_between_three_copeland_winners_terminates():
    # MultiSol: arms 1, 2, 3 all have Copeland score 3/4.  Without replacement the scores become
    # exact after K - 1 = 4 rounds and the stop rule fires with ε = 0.
    problem = load_problem("multisol")
    for seed in range(5):
        agent = CopelandPAC(5, delta=DELTA, seed=seed)
        run_to_done(agent, problem.matrix, np.random.default_rng(seed))
        assert agent.candidate_arms.tolist() == [0, 1, 2]
        np.testing.assert_array_equal(agent.lower[:3], 0.75)
        np.testing.assert_array_equal(agent.upper[:3], 0.75)
        assert agent.recommend() == 0  # argmax of lo, lowest index on ties
        assert agent.act() == (0, 0)
        # With replacement it stops too, once every surviving arm has met all its opponents.
        agent = CopelandPAC(5, delta=DELTA, with_replacement=True, seed=seed)
        run_to_done(agent, problem.matrix, np.random.default_rng(seed))
        assert agent.recommend() in problem.copeland_winners


def test_epsilon_approximate_winner_stops_earlier():
    problem = load_problem("cyclic4")
    exact, approximate = [], []
    for seed in range(10):
        for epsilon, lengths in ((0.0, exact), (2.0, approximate)):
            agent = make_agent("copeland_pac", 4, delta=DELTA, epsilon=epsilon, seed=seed)
            lengths.append(run_to_done(agent, problem.matrix, np.random.default_rng(seed)))
            # ε-Copeland winner: 1 - cpld_i <= (1 + ε)(1 - cpld*).
            score = problem.copeland_scores[agent.recommend()]
            assert 1 - score <= (1 + epsilon) * (1 - problem.copeland_scores.max()) + 1e-12
    assert np.mean(approximate) <= np.mean(exact)


def test_two_arms_use_the_exact_update():
    matrix = np.array([[0.5, 0.3], [0.7, 0.5]])
    agent = CopelandPAC(2, delta=0.05, seed=0)
    run_to_done(agent, matrix, np.random.default_rng(0))
    assert agent.recommend() == 1 and agent.candidate_arms.tolist() == [1]
    assert agent.act() == (1, 1)


def test_pure_exploration_api():
    agent = CopelandPAC(5, seed=0)
    assert CopelandPAC.pure_exploration and not SCB.pure_exploration
    assert agent.done is False and SCB(5).done is False
    run_to_done(agent, load_problem("multisol").matrix, np.random.default_rng(0))
    assert agent.done is True
    complexity = agent.sample_complexity
    for _ in range(10):  # after done: self-duels, nothing changes
        duel = agent.act()
        assert duel[0] == duel[1] == agent.recommend()
        agent.observe(duel, True)
    assert agent.sample_complexity == complexity
    agent.reset(seed=0)
    assert agent.done is False and agent.sample_complexity == 0


# ------------------------------------------------------------------------------------------
# SCB regret
# ------------------------------------------------------------------------------------------
def test_scb_regret_on_multisol_and_exploitation_of_a_winner():
    # Random pays 0.25 per duel (17 500 at T = 7e4, Komiyama scale).
    problem = load_problem("multisol")
    horizon = 70_000
    random_regret = problem.expected_random_regret("copeland_komiyama") * horizon
    exploiting = 0
    for seed in range(3):
        agent = SCB(5)
        result = simulate(agent, problem, horizon, seed=seed, record_duels=True)
        assert result.final_regret() < 0.25 * random_regret
        # Epoch 4 covers t = 277 .. 65 812: a short exploration, then self-duels of a winner.
        epoch4 = result.duels[276:65_812]
        assert np.mean(epoch4[:, 0] == epoch4[:, 1]) > 0.9
        assert (epoch4[-1000:, 0] == epoch4[-1000:, 1]).all() and epoch4[-1, 0] in problem.copeland_winners
        # Epoch 5 began at t = 65 813 (δ_5 ≈ 5e-9, ~3 000-4 000 exploration duels on MultiSol);
        # once its solver has returned, SCB exploits a Copeland winner again.
        assert agent.epoch == 5
        if agent.exploiting:
            exploiting += 1
            last = result.duels[-200:]
            assert (last[:, 0] == last[:, 1]).all() and last[0, 0] in problem.copeland_winners
            assert result.recommendations[-1] == last[0, 0]
    assert exploiting >= 2


def test_scb_near_linear_on_gap_at_short_horizons():
    # The 0.51 pair makes every epoch's sign tests outlast the budget.
    problem = load_problem("gap")
    result = simulate(SCB(5), problem, 70_000, seed=0)
    assert result.final_regret() > 0.8 * problem.expected_random_regret("copeland_komiyama") * 70_000


def test_scb_runs_on_the_large_cyclic_synthetic():
    problem = cyclic_copeland_winners(500, np.random.default_rng(0))
    agent = SCB(500)
    result = simulate(agent, problem, 50_000, seed=0, record_duels=True)
    assert result.duels.min() >= 0 and result.duels.max() < 500
    assert agent.epoch == 4 and not agent.exploiting
    assert 0 <= result.recommendations[-1] < 500


def test_scb_regret_is_sublinear_on_a_small_problem():
    # Theorem 13: O(log T) expected regret.  On MultiSol every solver run of epoch 4 (T = 65 536)
    # and epoch 5 (T = 2^32) ends after a few thousand duels, so the regret accrued from
    # t = 10^5 to 10^6 is tiny compared with the 0.25 per duel that a linear learner pays.
    problem = load_problem("multisol")
    checkpoints = np.array([10_000, 100_000, 1_000_000])
    for seed in range(2):
        agent = SCB(5)
        result = simulate(agent, problem, 1_000_000, seed=seed, checkpoints=checkpoints)
        regret = result.cumulative_regret["copeland_komiyama"]
        assert agent.epoch == 5 and agent.exploiting and 0 < agent.solver_duels < 20_000
        assert regret[2] - regret[1] < 0.01 * 0.25 * 900_000
        assert regret[2] < 0.02 * 0.25 * 1_000_000
        assert result.recommendations[-1] in problem.copeland_winners


def test_zoghi2015_problem_has_the_structure_the_paper_describes():
    # Appendix A: three Copeland winners in a cycle, each with Copeland score 498; the other arms
    # have Copeland scores 0, ..., 496.
    problem = zoghi2015_scalability(500, np.random.default_rng(0))
    beats = problem.matrix > 0.5
    scores = beats.sum(axis=1)
    winners = problem.copeland_winners
    assert winners.size == 3 and (scores[winners] == 498).all()
    others = np.setdiff1d(np.arange(500), winners)
    assert sorted(scores[others].tolist()) == list(range(497))
    a, b, c = winners
    cycle = beats[np.ix_(winners, winners)]
    assert cycle.sum(axis=1).tolist() == [1, 1, 1] and cycle.sum(axis=0).tolist() == [1, 1, 1]
    assert beats[np.ix_(winners, others)].all()  # every winner beats every non-winner
    off_diagonal = ~np.eye(500, dtype=bool)
    winning = problem.matrix[off_diagonal & beats]
    assert winning.min() >= 0.6 and winning.max() <= 0.9
    np.testing.assert_allclose(problem.matrix + problem.matrix.T, 1.0)
    # The labels are permuted: the winners are not simply arms 0, 1, 2.
    assert set(winners.tolist()) != {0, 1, 2}
    assert GENERATORS["zoghi2015_scalability"] is zoghi2015_scalability
    same = cyclic_copeland_winners(500, np.random.default_rng(0))
    np.testing.assert_array_equal(problem.matrix, same.matrix)
    small = zoghi2015_scalability(12, np.random.default_rng(3), low=0.7, high=0.8)
    assert sorted((small.matrix > 0.5).sum(axis=1).tolist()) == [*range(9), 10, 10, 10]
    with pytest.raises(ValueError, match="low"):
        zoghi2015_scalability(10, np.random.default_rng(0), low=0.4)


@pytest.mark.slow
def test_pac_solver_at_the_epoch_5_level_finds_a_winner_of_the_synthetic_problem():
    # SCB's fifth epoch runs the solver at δ_5 = ln T_5 / T_5 (T_5 = 2^32).  On the paper's
    # problem with K = 60 only the three tied winners survive and their scores are exact.
    problem = zoghi2015_scalability(60, np.random.default_rng(1))
    delta = math.exp(-squaring_epoch(5)[1])
    for seed in range(2):
        agent = CopelandPAC(60, delta=delta, seed=seed)
        result = simulate(agent, problem, 3_000_000, seed=seed)
        assert agent.done and agent.recommend() in problem.copeland_winners
        assert sorted(agent.candidate_arms.tolist()) == sorted(problem.copeland_winners.tolist())
        np.testing.assert_allclose(agent.lower[agent.candidate_arms], 58 / 59)
        assert result.recommendations[-1] == agent.recommend()


def test_reuse_and_replacement_variants_learn_multisol():
    problem = load_problem("multisol")
    for options in ({"reuse_across_epochs": True}, {"with_replacement": True}, {"first_r": 3}):
        result = simulate(SCB(5, **options), problem, 70_000, seed=1)
        assert result.final_regret() < 0.3 * 0.25 * 70_000, options
        assert result.recommendations[-1] in problem.copeland_winners


def test_foreign_duels_count_but_teach_nothing():
    agent = SCB(5, seed=0)
    pending = agent.act()
    other = next((i, j) for i in range(5) for j in range(5) if {i, j} != set(pending) and i != j)
    for _ in range(3):
        agent.observe(other, True)
    assert agent.act() == pending and agent.wins.sum() == 0
    assert agent.epoch == 1  # 3 of epoch 1's 4 duels are spent
    agent.observe(other, True)
    assert agent.epoch == 2


# ------------------------------------------------------------------------------------------
# construction
# ------------------------------------------------------------------------------------------
def test_registry_repr_and_hyperparameters():
    agent = make_agent("scb", n_arms=6, seed=1, first_r=2)
    assert isinstance(agent, SCB) and agent.name == "scb" and agent.epoch == 2
    assert agent.hyperparameters == {"first_r": 2, "with_replacement": False, "reuse_across_epochs": False}
    assert repr(agent) == "SCB(n_arms=6, first_r=2, with_replacement=False, reuse_across_epochs=False, seed=1)"
    solver = make_agent("copeland_pac", n_arms=4, delta=0.2)
    assert isinstance(solver, CopelandPAC) and solver.name == "copeland_pac"
    assert solver.hyperparameters == {"delta": 0.2, "epsilon": 0.0, "with_replacement": False}
    with pytest.raises(TypeError, match="does not accept"):
        make_agent("scb", n_arms=4, delta=0.1)


@pytest.mark.parametrize("first_r,error", [(0, ValueError), (7, ValueError), (1.5, TypeError), (True, TypeError)])
def test_first_r_validation(first_r, error):
    with pytest.raises(error, match="first_r"):
        SCB(5, first_r=first_r)


@pytest.mark.parametrize("options,error", [
    ({"delta": 0.0}, ValueError), ({"delta": 1.0}, ValueError), ({"delta": -0.1}, ValueError),
    ({"delta": "small"}, TypeError), ({"epsilon": -0.5}, ValueError), ({"epsilon": float("inf")}, ValueError),
])
def test_pac_validation(options, error):
    with pytest.raises(error, match="delta|epsilon"):
        CopelandPAC(5, **options)
