"""SAVAGE (Urvoy, Clérot, Féraud & Naamane, ICML 2013): kernels, bookkeeping and the paper's claims."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numba
import numpy as np
import pytest

from agent_helpers import assert_paths_agree
from dueling_gym.agents.registry import make_agent
from dueling_gym.agents.savage import SAVAGE, SAVAGEBorda, SAVAGECondorcet, savage_act, savage_observe
from dueling_gym.experiments import simulate
from dueling_gym.problems import load_problem

DATA = Path(__file__).resolve().parent / "data"
SEEDS = range(5)
DUEL_CAP = 3_000_000  # the slowest run below (Copeland on "gap") stops after ~2.5e5 duels


@numba.njit(cache=True)
def _explore_until_done(state, matrix, rng, cap):
    """The act/observe loop against Bernoulli draws, compiled; returns the duels played.

    Exploration is over at the first self-duel (the agent then exploits its answer).  The kernels
    are called as globals, not passed as arguments (a cached function taking dispatchers as
    arguments cannot be cached reliably, numba issue #2956).
    """
    for t in range(cap):
        first, second = savage_act(state)
        if first == second:
            return t
        savage_observe(state, first, second, rng.random() < matrix[first, second])
    return cap


def explore(agent, matrix, seed, cap=DUEL_CAP):
    assert type(agent).act_kernel is savage_act and type(agent).observe_kernel is savage_observe
    return _explore_until_done(agent.state, np.asarray(matrix), np.random.default_rng(seed), cap)


def python_loop(agent, matrix, seed, cap):
    rng = np.random.default_rng(seed)
    duels = []
    while not agent.done and len(duels) < cap:
        first, second = agent.act()
        agent.observe((first, second), rng.random() < matrix[first, second])
        duels.append((first, second))
    return duels


# ---------------------------------------------------------------------------------------------
# A literal, slow transcription of Algorithm 1: argmin over the working set, every IndepTest
# recomputed from scratch after every sample.  The kernels must reproduce it duel for duel.
# ---------------------------------------------------------------------------------------------
class LiteralSAVAGE:
    def __init__(self, n_arms, variant, horizon=None, delta=None):
        self.K, self.variant, self.T = n_arms, variant, horizon
        self.delta = delta if delta is not None else (1 / horizon if horizon else 0.05)
        if variant == "borda":
            self.params = [(i, -1) for i in range(n_arms)]
        else:
            self.params = [(i, j) for i in range(n_arms) for j in range(i + 1, n_arms)]
        N = self.N = len(self.params)
        self.n, self.w = [0] * N, [0] * N
        self.a, self.b = [0.0] * N, [1.0] * N
        self.Wk = list(range(N))
        self.t, self.answer = 0, None

    def radius(self, n):
        if self.T is None:
            return math.sqrt(math.log(math.pi ** 2 * self.N * n * n / (3 * self.delta)) / (2 * n))
        return math.sqrt(math.log(2 * self.N * self.T / self.delta) / (2 * n))

    def select(self):
        return min(self.Wk, key=lambda k: (self.n[k], k))

    def copeland_bounds(self):
        lo, up = [0] * self.K, [0] * self.K
        for k, (i, j) in enumerate(self.params):
            lo[i] += self.a[k] > 0.5
            up[i] += self.b[k] > 0.5
            lo[j] += 1 - self.b[k] > 0.5
            up[j] += 1 - self.a[k] > 0.5
        return lo, up

    def independent(self, k):
        i, j = self.params[k]
        if self.variant == "borda":
            best = max(self.a)
            survivors = sum(self.b[arm] >= best for arm in range(self.K))
            return self.b[k] < best or survivors <= 1
        if self.a[k] > 0.5 or self.b[k] < 0.5:
            return True
        lo, up = self.copeland_bounds()
        if self.variant == "copeland":
            return max(up[i], up[j]) < max(lo)
        return up[i] < self.K - 1 or up[j] < self.K - 1

    def update(self, k, x):
        self.t += 1
        self.n[k] += 1
        self.w[k] += x
        mean, c = self.w[k] / self.n[k], self.radius(self.n[k])
        self.a[k], self.b[k] = max(self.a[k], mean - c), min(self.b[k], mean + c)
        self.Wk = [p for p in self.Wk if not self.independent(p)]
        if not self.Wk:
            self.answer = self.decide()
        elif self.T is not None and self.t >= self.T:
            self.answer = -1  # budget exhausted (the guess is checked elsewhere)

    def decide(self):
        if self.variant == "borda":
            return int(np.argmax(self.a))
        lo, up = self.copeland_bounds()
        unbeaten = [arm for arm in range(self.K) if up[arm] == self.K - 1]
        if self.variant == "condorcet" and len(unbeaten) == 1:
            return unbeaten[0]
        return int(np.argmax(lo))


@pytest.mark.parametrize("variant,name,horizon", [
    ("copeland", "multisol", None), ("copeland", "arxiv", 3_000), ("copeland", "cyclic4", None),
    ("condorcet", "mslr5-condorcet", None), ("condorcet", "gap", 5_000),
    ("borda", "cyclic4", None), ("borda", "multisol", 4_000), ("borda", "mslr5-condorcet", 8_000),
])
def test_kernels_match_a_literal_transcription_of_algorithm_1(variant, name, horizon):
    problem = load_problem(name)
    matrix = problem.matrix
    agent = SAVAGE(problem.n_arms, horizon=horizon, variant=variant, seed=3)
    literal = LiteralSAVAGE(problem.n_arms, variant, horizon)
    rng = np.random.default_rng(11)
    cap = 20_000
    for _ in range(cap):
        if literal.answer is not None:
            break
        first, second = agent.act()
        k = literal.select()
        if variant == "borda":
            # parameter k = arm k against the agent's uniformly drawn opponent
            assert first == k and second != first
            x = rng.random() < matrix[first, second]
            agent.observe((first, second), x)
            literal.update(k, x)
        else:
            assert (first, second) == literal.params[k]
            x = rng.random() < matrix[first, second]
            agent.observe((first, second), x)
            literal.update(k, x)
        assert agent.working_set.tolist() == literal.Wk
    np.testing.assert_allclose(agent.lower, literal.a, rtol=0, atol=1e-12)
    np.testing.assert_allclose(agent.upper, literal.b, rtol=0, atol=1e-12)
    assert agent.counts.tolist() == literal.n
    assert literal.answer is not None, "the scenario should stop within the cap"
    assert agent.done and agent.exploration_duels == literal.t
    if literal.answer >= 0:
        assert agent.recommend() == literal.answer


# ---------------------------------------------------------------------------------------------
# The three execution paths agree
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("problem,kwargs", [
    ("multisol", {"horizon": 3000}),                         # explores, then exploits
    ("cyclic4", {"horizon": 3000, "variant": "borda"}),      # random opponents from the agent's rng
    ("mslr5-condorcet", {"variant": "condorcet"}),           # anytime radius
])
def test_fused_generic_and_gym_loops_are_identical(problem, kwargs):
    horizon, seed = 3000, 5
    n_arms = load_problem(problem).n_arms
    fused = assert_paths_agree(lambda: SAVAGE(n_arms, **kwargs), problem, horizon, seed)
    if problem == "multisol":
        first_self_duel = int(np.argmax(fused.duels[:, 0] == fused.duels[:, 1]))
        assert 0 < first_self_duel < horizon


# ---------------------------------------------------------------------------------------------
# Pure exploration (anytime radius, delta = 0.05) finds the right winners
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["multisol", "cyclic4", "mslr5-condorcet", "sushi", "gap", "arxiv"])
def test_copeland_variant_identifies_a_copeland_winner(name):
    problem = load_problem(name)
    for seed in SEEDS:
        agent = SAVAGE(problem.n_arms, seed=seed)
        assert agent.horizon is None and agent.confidence == 0.05
        duels = explore(agent, problem.matrix, 100 + seed)
        assert agent.done and agent.exploration_duels == duels < DUEL_CAP
        assert agent.recommend() in problem.copeland_winners


@pytest.mark.parametrize("name", ["multisol", "cyclic4"])
def test_python_act_observe_loop_matches_the_compiled_loop(name):
    problem = load_problem(name)
    agent = SAVAGE(problem.n_arms, seed=0)
    duels = python_loop(agent, problem.matrix, 100, cap=50_000)
    assert agent.done and len(duels) == agent.exploration_duels
    assert agent.recommend() in problem.copeland_winners
    twin = SAVAGE(problem.n_arms, seed=0)
    assert explore(twin, problem.matrix, 100) == len(duels) and twin.recommend() == agent.recommend()
    # After stopping, the default agent exploits its answer with self-duels.
    assert agent.act() == (agent.recommend(), agent.recommend())


@pytest.mark.parametrize("name", ["sushi", "mslr5-condorcet", "cyclic4"])
def test_condorcet_variant_finds_the_condorcet_winner(name):
    problem = load_problem(name)
    for seed in SEEDS:
        agent = SAVAGECondorcet(problem.n_arms, seed=seed)
        explore(agent, problem.matrix, 200 + seed)
        assert agent.done and agent.recommend() == problem.condorcet_winner == 0
    # It needs fewer duels than the Copeland variant, which must also rule out Copeland ties.
    condorcet, copeland = SAVAGECondorcet(problem.n_arms), SAVAGE(problem.n_arms)
    assert explore(condorcet, problem.matrix, 7) < explore(copeland, problem.matrix, 7)


@pytest.mark.parametrize("name", ["cyclic4", "mslr5-condorcet", "gap"])
def test_borda_variant_finds_the_borda_winner(name):
    # Borda gaps: cyclic4 0.6 vs 0.467, mslr5-condorcet 0.667 vs 0.627, gap 0.578 vs 0.5
    # (Sushi's 0.7394 vs 0.7337 would need ~10^7 duels).
    problem = load_problem(name)
    (winner,) = problem.borda_winners
    for seed in SEEDS:
        agent = SAVAGEBorda(problem.n_arms, seed=seed)
        explore(agent, problem.matrix, 300 + seed)
        assert agent.done and agent.recommend() == winner
        assert agent.working_set.size == 0 and agent.n_parameters == problem.n_arms


def test_borda_opponents_are_uniform_over_the_other_arms():
    agent = SAVAGEBorda(5, seed=0)
    counts = np.zeros((5, 5), dtype=int)
    rng = np.random.default_rng(0)
    for _ in range(5000):
        first, second = agent.act()
        counts[first, second] += 1
        agent.observe((first, second), rng.random() < 0.5)
    assert np.all(np.diag(counts) == 0)
    assert np.all(counts.sum(axis=1) == 1000)  # round robin over the 5 arm parameters
    off = counts[~np.eye(5, dtype=bool)]
    assert off.min() > 200 and off.max() < 300  # 250 expected per ordered pair


def test_exact_borda_ties_never_resolve_without_a_horizon():
    # MultiSol: three Borda winners with the same score; only a budget ends exploration.
    problem = load_problem("multisol")
    agent = SAVAGEBorda(5, seed=0)
    assert explore(agent, problem.matrix, 0, cap=200_000) == 200_000 and not agent.done
    assert agent.recommend() in problem.borda_winners
    bounded = SAVAGEBorda(5, horizon=50_000, seed=0)
    assert explore(bounded, problem.matrix, 0, cap=200_000) == 50_000
    assert bounded.done and bounded.exploration_duels == 50_000 and bounded.recommend() in problem.borda_winners


# ---------------------------------------------------------------------------------------------
# Regret version: horizon T, delta = 1/T, explore then exploit
# ---------------------------------------------------------------------------------------------
def test_regret_version_on_multisol_exploits_a_copeland_winner():
    horizon = 20_000
    problem = load_problem("multisol")
    random_regret = problem.expected_random_regret("copeland_komiyama") * horizon
    for seed in SEEDS:
        agent = SAVAGE(5, horizon=horizon, seed=seed)
        assert agent.confidence == 1 / horizon
        result = simulate(agent, problem, horizon, seed=seed, record_duels=True)
        assert result.final_regret() < 0.15 * random_regret
        assert agent.done and agent.exploration_duels < horizon // 4
        winner = agent.recommend()
        assert winner in problem.copeland_winners
        assert np.all(result.duels[agent.exploration_duels:] == winner)
        assert np.all(result.duels[:agent.exploration_duels, 0] != result.duels[:agent.exploration_duels, 1])
        assert result.recommendations[-1] == winner


@pytest.mark.parametrize("name", ["cyclic4", "mslr5-condorcet"])
def test_regret_version_at_1e5_exploits_the_condorcet_winner(name):
    horizon = 100_000
    problem = load_problem(name)
    random_regret = problem.expected_random_regret("copeland_komiyama") * horizon
    for seed in range(3):
        agent = SAVAGE(problem.n_arms, horizon=horizon)
        result = simulate(agent, problem, horizon, seed=seed, checkpoints=[horizon])
        assert agent.exploration_duels < horizon // 2 and agent.recommend() == problem.condorcet_winner
        assert result.final_regret() < 0.2 * random_regret


def test_the_horizon_ends_exploration():
    agent = SAVAGE(16, horizon=500, seed=0)
    result = simulate(agent, "sushi", 600, seed=0, record_duels=True)
    assert agent.done and agent.exploration_duels == 500
    answer = agent.recommend()
    assert np.all(result.duels[500:] == answer)
    assert result.duels[499, 0] != result.duels[499, 1]
    # 500 duels cover only ~4 rounds of the 120 pairs: the answer is the empirical guess.
    assert 0 <= answer < 16


def test_exploit_false_refuses_to_duel_after_stopping():
    problem = load_problem("multisol")
    agent = SAVAGE(5, exploit=False, seed=0)
    python_loop(agent, problem.matrix, 1, cap=50_000)
    assert agent.done
    with pytest.raises(RuntimeError, match="done"):
        agent.act()
    with pytest.raises(RuntimeError, match="done"):
        simulate(SAVAGE(5, horizon=100, exploit=False), problem, 200, seed=0)


def test_radius_forms():
    finite = SAVAGE(5, horizon=1000)
    assert finite.n_parameters == 10
    anytime = SAVAGE(5, delta=0.1)
    # One sample of pair (0, 1) that arm 0 wins: [1 - c, 1] intersected with [0, 1].
    for agent, c in [(finite, math.sqrt(math.log(2 * 10 * 1000 / 1e-3) / 2)),
                     (anytime, math.sqrt(math.log(math.pi ** 2 * 10 / (3 * 0.1)) / 2))]:
        assert agent.act() == (0, 1)
        agent.observe((0, 1), True)
        assert agent.lower[0] == pytest.approx(max(0.0, 1 - c)) and agent.upper[0] == 1.0
        assert agent.act() == (0, 2)
    many = SAVAGE(3, delta=0.1)
    for _ in range(30):  # pair (0, 1) at n = 10: anytime radius grows with ln n^2
        duel = many.act()
        many.observe(duel, duel == (0, 1))
    c10 = math.sqrt(math.log(math.pi ** 2 * 3 * 100 / (3 * 0.1)) / 20)
    assert many.lower[0] == pytest.approx(1 - c10)


# ---------------------------------------------------------------------------------------------
# API
# ---------------------------------------------------------------------------------------------
def test_registry_repr_and_hyperparameters():
    agent = make_agent("savage", n_arms=5, seed=1, horizon=100)
    assert isinstance(agent, SAVAGE) and agent.pure_exploration and not agent.done
    assert agent.hyperparameters == {"horizon": 100, "delta": None, "variant": "copeland", "exploit": True}
    assert repr(agent) == "SAVAGE(n_arms=5, horizon=100, delta=None, variant='copeland', exploit=True, seed=1)"
    borda = make_agent("savage_borda", n_arms=4, delta=0.1)
    assert isinstance(borda, SAVAGEBorda) and borda.variant == "borda" and borda.confidence == 0.1
    assert "variant" not in borda.hyperparameters
    condorcet = make_agent("savage_condorcet", n_arms=4)
    assert condorcet.variant == "condorcet" and condorcet.n_parameters == 6
    with pytest.raises(TypeError, match="does not accept"):
        make_agent("savage_borda", n_arms=4, variant="copeland")
    assert SAVAGE(4, variant="Borda").variant == "borda"


def test_reset_replays_and_forgets():
    agent = SAVAGEBorda(6, seed=4)
    first = python_loop(agent, np.full((6, 6), 0.5), 0, cap=300)
    assert agent.counts.sum() == 300
    agent.reset(seed=4)
    assert agent.counts.sum() == 0 and not agent.done
    assert python_loop(agent, np.full((6, 6), 0.5), 0, cap=300) == first


def test_self_duels_and_foreign_duels():
    agent = SAVAGE(4, seed=0)
    agent.observe((2, 2), True)  # no information
    assert agent.counts.sum() == 0 and agent.act() == (0, 1)
    agent.observe((3, 1), True)  # a duel act() did not propose: a sample of pair (1, 3), lost by 1
    k = int(np.flatnonzero((agent.first == 1) & (agent.second == 3))[0])
    assert agent.counts[k] == 1 and agent.wins[k] == 0 and agent.counts.sum() == 1
    assert agent.act() == (0, 1)  # the round robin did not move


@pytest.mark.parametrize("kwargs,error", [
    ({"variant": "kemeny"}, ValueError), ({"variant": 3}, ValueError), ({"variant": "borda_pairwise"}, ValueError),
    ({"horizon": 0}, ValueError), ({"horizon": -5}, ValueError), ({"horizon": 10.0}, TypeError),
    ({"horizon": True}, TypeError),
    ({"delta": 0.0}, ValueError), ({"delta": 1.0}, ValueError), ({"delta": 1.5}, ValueError),
    ({"delta": -0.1}, ValueError), ({"delta": float("nan")}, ValueError), ({"delta": "small"}, TypeError),
])
def test_bad_hyperparameters_raise(kwargs, error):
    with pytest.raises(error):
        SAVAGE(5, **kwargs)


# ---------------------------------------------------------------------------------------------
# The paper's claims
# ---------------------------------------------------------------------------------------------
def copeland_bounds(agent):
    """(CopLo, CopUp) of every arm on the agent's box H, recomputed from its intervals."""
    lo = np.zeros(agent.n_arms, dtype=int)
    up = np.zeros(agent.n_arms, dtype=int)
    for a, b, i, j in zip(agent.lower, agent.upper, agent.first, agent.second):
        lo[i] += a > 0.5
        up[i] += b > 0.5
        lo[j] += b < 0.5
        up[j] += a < 0.5
    return lo, up


@pytest.mark.parametrize("name", ["multisol", "cyclic4", "mslr5-condorcet", "arxiv"])
def test_empty_working_set_means_the_decision_is_constant_on_the_box(name):
    # Algorithm 1 stops when every parameter is independent; the Copeland decision must then be
    # the same for every matrix of H, and H must hold the true matrix (probability >= 1 - delta).
    problem = load_problem(name)
    matrix = np.asarray(problem.matrix)
    for seed in range(3):
        agent = SAVAGE(problem.n_arms, seed=seed)
        explore(agent, matrix, 400 + seed)
        assert agent.done and agent.working_set.size == 0
        truth = matrix[agent.first, agent.second]
        assert np.all(agent.lower <= truth) and np.all(truth <= agent.upper)
        lo, up = copeland_bounds(agent)
        possible = np.flatnonzero(up >= lo.max())
        # Every arm that may still be a winner on H is fully settled at the best score.
        assert np.all(lo[possible] == up[possible]) and np.all(lo[possible] == lo.max())
        assert set(possible.tolist()) == set(np.asarray(problem.copeland_winners).tolist())
        assert agent.recommend() in possible


@pytest.mark.slow
@pytest.mark.parametrize("variant,name", [
    ("copeland", "cyclic4"), ("copeland", "multisol"), ("condorcet", "mslr5-condorcet"), ("borda", "cyclic4"),
])
def test_wrong_answers_are_at_most_delta(variant, name):
    # Theorems 1-3: with probability >= 1 - delta the answer is right.  delta = 0.3 makes the
    # radius as small as the guarantee allows; 40 runs with more than 20 errors would have
    # probability < 1e-3 if the error rate really were <= 0.3.
    problem = load_problem(name)
    winners = problem.borda_winners if variant == "borda" else problem.copeland_winners
    errors = 0
    for seed in range(40):
        agent = SAVAGE(problem.n_arms, delta=0.3, variant=variant, seed=seed)
        explore(agent, problem.matrix, 500 + seed)
        assert agent.done
        errors += agent.recommend() not in winners
    assert errors <= 20


def test_round_robin_spends_fewer_samples_than_uniform_exploration():
    # Theorem 1's remark: eliminated parameters stop being sampled, so SAVAGE beats a uniform
    # policy (every parameter sampled as often as the last one to leave) when the gaps differ.
    problem = load_problem("cyclic4")
    agent = SAVAGE(problem.n_arms, seed=0)
    duels = explore(agent, problem.matrix, 9)
    assert duels == agent.counts.sum()
    assert agent.counts.min() < agent.counts.max() / 2
    assert duels < 0.7 * agent.n_parameters * agent.counts.max()


@pytest.mark.slow
@pytest.mark.parametrize("name,short", [("cyclic4", 10_000), ("mslr5-condorcet", 100_000)])
def test_regret_grows_like_log_t_when_every_gap_is_positive(name, short):
    # Appendix B.1: with delta = 1/T, regret = O(exploration time) + O(1), and exploration time
    # grows like ln(eta / delta) = ln(2 N T^2) (Theorem 2).  Multiplying T by 100 therefore
    # multiplies the exploration time by about ln(2 N (100 T)^2) / ln(2 N T^2), not by 100.
    problem = load_problem(name)
    n_params = problem.n_arms * (problem.n_arms - 1) // 2
    stops, regrets = {}, {}
    long = 100 * short
    for horizon in (short, long):
        runs = [SAVAGE(problem.n_arms, horizon=horizon) for _ in range(3)]
        results = [simulate(agent, problem, horizon, seed=seed, checkpoints=[horizon]) for seed, agent in enumerate(runs)]
        assert all(agent.done and agent.exploration_duels < horizon for agent in runs)
        stops[horizon] = np.mean([agent.exploration_duels for agent in runs])
        regrets[horizon] = np.mean([result.final_regret() for result in results])
    expected = math.log(2 * n_params * long ** 2) / math.log(2 * n_params * short ** 2)
    assert 0.75 * expected < stops[long] / stops[short] < 1.33 * expected
    assert regrets[long] / regrets[short] < 2.5  # a linear regret would give 100


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["copeland", "condorcet"])
def test_regret_at_1e5_matches_the_public_reference_implementation(variant):
    # Regret of the same algorithm in a public implementation (see the data file), measured with
    # the arms shuffled so that the lowest-index tie rule does not favour either side.
    reference = json.loads((DATA / "savage_reference_regret.json").read_text())
    horizon = reference["horizon"]
    for name, expected in reference["regret"][variant].items():
        problem = load_problem(name)
        matrix = np.asarray(problem.matrix)
        regrets = []
        for seed in range(40):
            order = np.random.default_rng(10_000 + seed).permutation(problem.n_arms)
            agent = SAVAGE(problem.n_arms, horizon=horizon, variant=variant)
            result = simulate(agent, matrix[np.ix_(order, order)], horizon, seed=seed, checkpoints=[horizon])
            regrets.append(result.final_regret(reference["notion"]))
        mean, sem = np.mean(regrets), np.std(regrets, ddof=1) / math.sqrt(len(regrets))
        assert abs(mean - expected["mean"]) <= 4 * math.hypot(sem, expected["sem"]), (name, mean, expected)
