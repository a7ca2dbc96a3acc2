"""CCB (Zoghi et al., NIPS 2015, Algorithm 1): exactness against a literal transcription and behaviour."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from agent_helpers import assert_paths_agree
from dueling_gym.agents._confidence_bounds import rucb_lower_bound, rucb_upper_bound
from dueling_gym.agents._pair_statistics import empirical_copeland_counts
from dueling_gym.agents import RUCB, DuelingAgent, make_agent
from dueling_gym.agents.ccb import CCB
from dueling_gym.experiments import simulate
from dueling_gym.problems import PreferenceMatrix, load_problem

HORIZON = 20_000
SEEDS = range(5)


def choose(items, rng):
    return items[rng.integers(0, len(items))] if len(items) > 1 else items[0]


class LiteralCCB(DuelingAgent):
    """Algorithm 1 of Zoghi et al. (2015) transcribed line by line, with the readings of its ambiguous
    lines documented in :mod:`dueling_gym.agents.ccb`: full ``u``/``l`` matrices every step, Python sets.

    It draws from its generator exactly when and as :class:`CCB` does (coins always;
    ``integers(0, n)`` for a uniform choice among ``n > 1`` candidates, nothing for a single
    one; partial Fisher-Yates over the sorted members for line 9C), so both must produce the
    same duels.  ``events`` counts the
    branches taken, to show that a comparison exercised them.
    """

    def __init__(self, n_arms, *, alpha=0.51, seed=None):
        self.alpha = alpha
        super().__init__(n_arms, seed=seed)

    def _reset_state(self):
        self.wins = np.zeros((self.n_arms, self.n_arms), dtype=np.int64)
        self.t = 0
        self.events = Counter()
        self._reset_lists()

    def _reset_lists(self):
        self.B = set(range(self.n_arms))
        self.Bopp = [set() for _ in range(self.n_arms)]
        self.LC = self.n_arms

    def act(self):
        K, rng, events = self.n_arms, self.rng, self.events
        log_t = math.log(self.t + 1)  # this is duel t + 1
        u = [[rucb_upper_bound(self.wins, i, j, self.alpha, log_t) for j in range(K)] for i in range(K)]
        l = [[rucb_lower_bound(self.wins, i, j, self.alpha, log_t) for j in range(K)] for i in range(K)]
        up = [sum(u[i][k] >= 0.5 for k in range(K) if k != i) for i in range(K)]
        lo = [sum(l[i][k] >= 0.5 for k in range(K) if k != i) for i in range(K)]
        Ct = [i for i in range(K) if up[i] == max(up)]
        if any(l[i][j] > 0.5 for i in range(K) for j in self.Bopp[i]):  # 9A
            events["reset 9A"] += 1
            self._reset_lists()
        for i in sorted(self.B):  # 9B
            if up[i] < max(lo):
                self.B.discard(i)
                if len(self.Bopp[i]) != self.LC + 1:
                    events["rebuild 9B"] += 1
                    self.Bopp[i] = {k for k in range(K) if u[i][k] < 0.5}
        if not self.B:
            events["reset 9B"] += 1
            self._reset_lists()
        for i in Ct:  # 9C
            if up[i] == lo[i]:
                self.B.add(i)
                self.Bopp[i] = set()
                self.LC = K - 1 - up[i]
                keep = self.LC + 1
                for j in range(K):
                    if j != i and len(self.Bopp[j]) < keep:
                        self.Bopp[j] = set()
                    elif j != i and len(self.Bopp[j]) > keep:
                        events["subset 9C"] += 1
                        members = sorted(self.Bopp[j])
                        for r in range(keep):
                            pick = r + rng.integers(0, len(members) - r)
                            members[r], members[pick] = members[pick], members[r]
                        self.Bopp[j] = set(members[:keep])
        if rng.random() < 0.25:  # 10
            Q = [(i, j) for i in range(K) for j in sorted(self.Bopp[i]) if l[i][j] <= 0.5 <= u[i][j]]
            if Q:
                events["line 10"] += 1
                return choose(Q, rng)
        both = [i for i in Ct if i in self.B]  # 11
        candidates = both if both and rng.random() < 2 / 3 else Ct
        c = choose(candidates, rng)  # 12
        E = []
        if rng.random() < 0.5:  # 13, pool B^c (the printed B^i read as the chosen c's list)
            E = [j for j in sorted(self.Bopp[c]) if l[j][c] <= 0.5]
            events["pool B^c" if E else "fallback to all arms"] += 1
        if not E:
            E = [j for j in range(K) if l[j][c] <= 0.5]
        v = max(u[j][c] for j in E)
        tie = [j for j in E if u[j][c] == v]
        if tie == [c]:
            events["self-duel"] += 1
            return c, c
        others = [j for j in tie if j != c]
        return c, choose(others, rng)

    def observe(self, action, first_won):
        i, j = action
        self.t += 1
        if i != j:
            self.wins[(i, j) if first_won else (j, i)] += 1

    def recommend(self):
        counts = empirical_copeland_counts(self.wins)
        winners = np.flatnonzero(counts == counts.max())
        return int(next((i for i in winners if i in self.B), winners[0]))


def reversed_problem(name):
    """The problem with its arm order reversed, so lowest-index tie-breaking cannot favour a winner."""
    problem = load_problem(name)
    return PreferenceMatrix(problem.matrix[::-1, ::-1], name=f"{name}-reversed")


# ---------------------------------------------------------------------------------------------
# Exactness: the fast kernels follow the literal transcription duel for duel
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("problem", ["cyclic4", "multisol"])
def test_fused_generic_and_gym_loops_are_identical(problem):
    horizon, seed = 3000, 5
    n_arms = load_problem(problem).n_arms
    assert_paths_agree(lambda: CCB(n_arms), problem, horizon, seed)


@pytest.mark.parametrize("problem,horizon", [
    ("cyclic4", 6000), ("multisol", 6000), ("mslr5-noncondorcet", 4000), ("arxiv", 4000), ("sushi", 1000),
])
def test_same_duels_as_a_literal_transcription_of_algorithm_1(problem, horizon):
    n_arms = load_problem(problem).n_arms
    for seed in range(2):
        fast = simulate(CCB(n_arms), problem, horizon, seed=seed, record_duels=True)
        literal = simulate(LiteralCCB(n_arms), problem, horizon, seed=seed, record_duels=True, fused=False)
        np.testing.assert_array_equal(fast.duels, literal.duels)
        np.testing.assert_array_equal(fast.recommendations, literal.recommendations)


def test_same_duels_and_shortlists_through_resets():
    # The preferences flip half-way (P, then P transposed): arms that provably beat others
    # become provably beaten, so the line-9A reset and every shortlist branch are exercised.
    def drive(agent, matrix, steps, seed):
        rng = np.random.default_rng(seed)
        duels = []
        for current in (matrix, matrix.T):
            for _ in range(steps):
                first, second = agent.act()
                agent.observe((first, second), rng.random() < current[first, second])
                duels.append((first, second))
        return duels

    events = Counter()
    for problem, seed in [("multisol", 0), ("multisol", 1), ("cyclic4", 1)]:
        matrix = load_problem(problem).matrix
        literal = LiteralCCB(len(matrix), seed=seed)
        fast = CCB(len(matrix), seed=seed)
        assert drive(fast, matrix, 1500, seed) == drive(literal, matrix, 1500, seed)
        assert set(np.flatnonzero(fast.shortlist)) == literal.B
        assert [set(np.flatnonzero(row)) for row in fast.opponents] == literal.Bopp
        assert fast.lc_bar == literal.LC
        events += literal.events
    for branch in ["reset 9A", "rebuild 9B", "subset 9C", "line 10", "pool B^c", "fallback to all arms", "self-duel"]:
        assert events[branch] > 0, branch


# ---------------------------------------------------------------------------------------------
# Behaviour on the shipped problems
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["multisol", "cyclic4"])
def test_finds_a_copeland_winner_with_sublinear_regret(name):
    problem = load_problem(name)
    random_regret = problem.expected_random_regret("copeland_komiyama") * HORIZON
    totals = []
    for seed in SEEDS:
        result = simulate(CCB(problem.n_arms), problem, HORIZON, seed=seed, checkpoints=[HORIZON // 2, HORIZON])
        first_half, total = result.cumulative_regret["copeland_komiyama"]
        assert result.recommendations[-1] in problem.copeland_winners
        assert total < 0.1 * random_regret
        assert total - first_half < 0.5 * first_half  # sublinear: the second half costs far less
        totals.append(total)
    # Measured at T = 2e4, seeds 0-4: MultiSol 96-121 (mean 108), cyclic4 610-686 (mean 636).
    assert np.mean(totals) < {"multisol": 200, "cyclic4": 800}[name]


def test_shortlists_settle_on_the_copeland_winners():
    # MultiSol: winners {0, 1, 2} with L_C = 1; each loser keeps L_C + 1 = 2 formidable opponents.
    agent = CCB(5)
    simulate(agent, "multisol", HORIZON, seed=0)
    assert agent.shortlist.tolist() == [True, True, True, False, False]
    assert agent.lc_bar == 1
    assert agent.opponents.sum(axis=1).tolist() == [0, 0, 0, 2, 2]
    # Cyclic: Condorcet winner 0, L_C = 0, one opponent per loser; then CCB exploits with (0, 0).
    agent = CCB(4)
    result = simulate(agent, "cyclic4", HORIZON, seed=0, record_duels=True)
    assert agent.shortlist.tolist() == [True, False, False, False]
    assert agent.lc_bar == 0
    assert agent.opponents.sum(axis=1).tolist() == [0, 1, 1, 1]
    last = result.duels[-2000:]
    assert np.mean((last[:, 0] == 0) & (last[:, 1] == 0)) > 0.9


@pytest.mark.parametrize("name", ["multisol", "mslr5-noncondorcet", "cyclic4"])
def test_recommends_a_copeland_winner_whatever_the_arm_order(name):
    problem = reversed_problem(name)
    found = sum(
        simulate(CCB(problem.n_arms), problem, HORIZON, seed=seed, checkpoints=[HORIZON]).recommendations[-1]
        in problem.copeland_winners
        for seed in SEEDS
    )
    assert found >= 4


def mean_final_regret(agent_class, problem, horizon):
    runs = [simulate(agent_class(problem.n_arms), problem, horizon, seed=seed, checkpoints=[horizon]) for seed in SEEDS]
    return np.mean([run.final_regret() for run in runs])


def test_beats_rucb_without_a_condorcet_winner():
    # RUCB's candidate set empties on MultiSol and it pays linear regret (~0.125 per duel).
    problem = load_problem("multisol")
    assert mean_final_regret(CCB, problem, HORIZON) < 0.05 * mean_final_regret(RUCB, problem, HORIZON)


def test_comparable_to_rucb_with_a_condorcet_winner():
    # Cyclic (Komiyama et al. 2016, Table 2) has a Condorcet winner, RUCB's home ground: both pay for the three
    # pairs (0, j) with gap 0.1.  Komiyama et al. (2016) report CCB "similar to RUCB" on
    # Condorcet instances; measured means over seeds 0-4: CCB ~640, RUCB ~580.
    problem = load_problem("cyclic4")
    assert mean_final_regret(CCB, problem, HORIZON) < 1.5 * mean_final_regret(RUCB, problem, HORIZON)


def test_finds_the_sushi_winner():
    problem = load_problem("sushi")
    for seed in range(3):
        result = simulate(CCB(16), problem, HORIZON, seed=seed, checkpoints=[HORIZON])
        assert result.recommendations[-1] == 0
        assert result.final_regret() < 0.25 * problem.expected_random_regret("copeland_komiyama") * HORIZON


@pytest.mark.slow
def test_mslr_non_condorcet_long_horizon():
    # Gaps of 0.003-0.04: at 2e4 duels CCB and RUCB are both still near Random; by 1e6 CCB is
    # clearly below both (measured: CCB ~97k, RUCB ~125k, Random 250k).
    horizon = 1_000_000
    problem = load_problem("mslr5-noncondorcet")
    random_regret = problem.expected_random_regret("copeland_komiyama") * horizon
    ccb = [simulate(CCB(5), problem, horizon, seed=seed, checkpoints=[horizon]) for seed in SEEDS]
    assert sum(result.recommendations[-1] in problem.copeland_winners for result in ccb) >= 4
    ccb_regret = np.mean([result.final_regret() for result in ccb])
    assert ccb_regret < 0.5 * random_regret
    assert ccb_regret < 0.9 * mean_final_regret(RUCB, problem, horizon)


# ---------------------------------------------------------------------------------------------
# API
# ---------------------------------------------------------------------------------------------
def test_registry_repr_and_reset():
    agent = make_agent("ccb", n_arms=5, seed=3, alpha=0.6)
    assert isinstance(agent, CCB) and agent.alpha == 0.6 and agent.name == "ccb"
    assert repr(CCB(4, seed=1)) == "CCB(n_arms=4, alpha=0.51, seed=1)"
    assert CCB(4).hyperparameters == {"alpha": 0.51}
    first = simulate(agent, "multisol", 500, seed=1, record_duels=True).duels
    assert agent.wins.sum() > 0
    agent.reset()
    assert agent.wins.sum() == 0 and agent.shortlist.all() and not agent.opponents.any() and agent.lc_bar == 5
    np.testing.assert_array_equal(simulate(agent, "multisol", 500, seed=1, record_duels=True).duels, first)


def test_recommend_prefers_shortlist_members_then_lowest_index():
    # Writes into the live views are fine here: only recommend() runs afterwards.
    agent = CCB(3)
    agent.wins[0, 1] = agent.wins[1, 2] = agent.wins[2, 0] = 2  # a cycle: every arm has one empirical win
    assert agent.recommend() == 0
    agent.shortlist[:] = [False, False, True]
    assert agent.recommend() == 2
    agent.shortlist[:] = False
    assert agent.recommend() == 0
    agent.wins[1, 0] = 5  # now arm 1 beats 0 and 2
    assert agent.recommend() == 1


@pytest.mark.parametrize("alpha", [0.5, 0.3, -1.0, float("nan"), float("inf")])
def test_alpha_must_exceed_one_half(alpha):
    with pytest.raises(ValueError, match="alpha"):
        CCB(5, alpha=alpha)


@pytest.mark.parametrize("alpha", ["big", None, True])
def test_alpha_type_checked(alpha):
    with pytest.raises(TypeError, match="alpha"):
        CCB(5, alpha=alpha)


def test_bad_arguments():
    with pytest.raises(TypeError, match="does not accept"):
        make_agent("ccb", n_arms=5, beta=1.0)
    with pytest.raises(ValueError, match="n_arms"):
        CCB(1)
    with pytest.raises(TypeError):
        CCB(5, 0.6)  # hyperparameters are keyword-only
