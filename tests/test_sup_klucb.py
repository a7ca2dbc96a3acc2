"""Sup-KLUCB (Agrawal & Chaporkar 2019, Algorithm 1) and the pair reduction it is built on (their §3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_helpers import assert_paths_agree
from dueling_gym.agents import make_agent
from dueling_gym.agents.sup_klucb import SupKLUCB, klucb_select, klucb_select_reference
from dueling_gym.experiments import derive_seeds, simulate
from dueling_gym.problems import load_problem, unique_copeland_winner
from dueling_gym.reductions import (
    BORDA,
    COPELAND,
    PairReduction,
    n_super_arms,
    pair_tables,
    plugin_scores,
    record_scored_duel,
    super_arm_index,
    super_arm_means,
    super_arm_pair,
)
from dueling_gym.stats import kl_upper_bound


# ---------------------------------------------------------------------------------------------
# The pair reduction
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n_arms", [2, 3, 4, 5, 16, 37])
def test_pair_indexing_round_trips(n_arms):
    expected = [(i, j) for i in range(n_arms) for j in range(i, n_arms)]  # lexicographic, self-pairs included
    assert n_super_arms(n_arms) == len(expected) == n_arms * (n_arms + 1) // 2
    firsts, seconds, index = pair_tables(n_arms)
    assert list(zip(firsts.tolist(), seconds.tolist())) == expected
    reduction = PairReduction(n_arms)
    assert reduction.n_super_arms == len(expected)
    assert [tuple(pair) for pair in reduction.pairs.tolist()] == expected
    for k, (i, j) in enumerate(expected):
        assert super_arm_pair(k, n_arms) == (i, j)
        assert super_arm_index(i, j, n_arms) == super_arm_index(j, i, n_arms) == k
        assert index[i, j] == index[j, i] == k
        assert reduction.pair(k) == (i, j)
        assert reduction.index(j, i) == k


# wins[i, j] = duels of {i, j} won by i.  Pair (0, 1): 3-1 for arm 0; (0, 2): 1-1 (tied);
# (1, 2): 2-2 (tied); arm 3 never played.
KNOWN_WINS = np.array([[0, 3, 1, 0], [1, 0, 2, 0], [1, 2, 0, 0], [0, 0, 0, 0]])


def test_copeland_scores_and_means_on_a_known_matrix():
    # Ties at exactly 1/2 (and unplayed pairs) count for neither side.
    scores = plugin_scores(KNOWN_WINS, COPELAND, np.empty(4))
    np.testing.assert_array_equal(scores, [1 / 3, 0.0, 0.0, 0.0])
    means = super_arm_means(scores, np.empty(10))
    expected = np.zeros(10)
    expected[0] = 1 / 9  # (0, 0); every other pair involves a zero score
    np.testing.assert_allclose(means, expected, rtol=0, atol=1e-15)


def test_borda_scores_and_means_on_a_known_matrix():
    # b_i = mean over j != i of mu_hat_ij, with 1/2 for an unplayed pair.
    scores = plugin_scores(KNOWN_WINS, BORDA, np.empty(4))
    expected_scores = np.array([(0.75 + 0.5 + 0.5) / 3, (0.25 + 0.5 + 0.5) / 3, 0.5, 0.5])
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-15)
    means = super_arm_means(scores, np.empty(10))
    pairs = [(i, j) for i in range(4) for j in range(i, 4)]
    np.testing.assert_allclose(means, [expected_scores[i] * expected_scores[j] for i, j in pairs], rtol=1e-15)


@pytest.mark.parametrize("score", ["copeland", "borda"])
def test_incremental_updates_equal_recomputation(score):
    rng = np.random.default_rng(5)
    reduction = PairReduction(6, score=score)
    kind = COPELAND if score == "copeland" else BORDA
    assert reduction.scores().tolist() == ([0.0] * 6 if score == "copeland" else [0.5] * 6)
    for _ in range(400):
        first, second = rng.integers(0, 6, size=2)
        reduction.update(first, second, rng.random() < 0.5)
        scores = plugin_scores(reduction.wins, kind, np.empty(6))
        np.testing.assert_array_equal(reduction.scores(), scores)  # bit for bit
        np.testing.assert_array_equal(reduction.means(), super_arm_means(scores, np.empty(21)))
    k = reduction.index(1, 4)
    assert reduction.mean(k) == reduction.scores()[1] * reduction.scores()[4]
    assert reduction.best_arm() == int(np.argmax(reduction.scores()))


def test_reduction_update_semantics_and_validation():
    reduction = PairReduction(3)
    reduction.update(2, 0, True)  # duel (2, 0) and duel (0, 2) update the same counts
    reduction.update(0, 2, False)
    assert reduction.wins[2, 0] == 2 and reduction.wins[0, 2] == 0
    before = reduction.means()
    reduction.update(1, 1, True)  # a self-duel carries no information
    np.testing.assert_array_equal(reduction.means(), before)
    assert reduction.wins.sum() == 2
    assert reduction.scores().tolist() == [0.0, 0.0, 0.5] and reduction.best_arm() == 2
    with pytest.raises(ValueError):
        reduction.wins[0, 0] = 1  # read-only view
    reduction.reset()
    assert reduction.wins.sum() == 0 and not reduction.means().any()
    with pytest.raises(ValueError, match="out of range"):
        reduction.update(0, 3, True)
    with pytest.raises(ValueError, match="out of range"):
        reduction.pair(6)
    with pytest.raises(TypeError):
        reduction.index(0.5, 1)
    with pytest.raises(ValueError, match="score"):
        PairReduction(3, score="kemeny")
    with pytest.raises(ValueError, match="n_arms"):
        PairReduction(1)
    assert repr(PairReduction(4, "Borda")) == "PairReduction(n_arms=4, score='borda')"


def test_record_duel_reports_which_scores_changed():
    wins = np.zeros((3, 3), dtype=np.int64)
    scores = np.zeros(3)
    assert record_scored_duel(wins, scores, 0, 1, True, COPELAND) == 1  # arm 0 now beats arm 1; arm 1 still 0
    assert record_scored_duel(wins, scores, 1, 0, True, COPELAND) == 2  # 1-1: arm 0 (second) loses its win
    assert record_scored_duel(wins, scores, 2, 2, True, COPELAND) == 0
    assert record_scored_duel(wins, scores, 1, 2, False, BORDA) == 3


# ---------------------------------------------------------------------------------------------
# The KL-UCB step: the pruned argmax equals the plain one
# ---------------------------------------------------------------------------------------------
def test_pruned_klucb_argmax_equals_the_plain_argmax():
    # Means on a coarse grid (exact ties, 0 and 1 included), counts from 1 to 10^6, a growing
    # level (up to the 40+ that K = 3 reaches), random changes that invalidate certificates.
    rng = np.random.default_rng(11)
    grid = np.concatenate([[0.0, 1.0, 0.25 ** 2, 0.5 ** 2], rng.random(6)])
    for size in (3, 15, 40):
        means = rng.choice(grid, size)
        counts = rng.integers(1, 4, size)
        cert_value = np.full(size, np.inf)
        cert_level = np.full(size, -1.0)
        ties, values = np.zeros(size, dtype=np.int64), np.zeros(size)
        fast_rng, plain_rng = np.random.default_rng(3), np.random.default_rng(3)
        level = 0.0
        for step in range(3000):
            level += rng.exponential(0.02)
            if step == 2000:
                counts = counts * 1000 + rng.integers(0, 3, size)
                cert_level[:] = -1.0
            chosen = klucb_select(means, counts, level, cert_value, cert_level, ties, values, fast_rng)
            assert chosen == klucb_select_reference(means, counts, level, plain_rng)
            counts[chosen] += 1
            cert_level[chosen] = -1.0
            if rng.random() < 0.1:
                k = rng.integers(0, size)
                means[k] = rng.choice(grid)
                cert_level[k] = -1.0
        assert fast_rng.random() == plain_rng.random()  # same number of tie-breaking draws


class PlainSupKLUCB:
    """A literal NumPy transcription of Algorithm 1 (every index by bisection, every step)."""

    def __init__(self, n_arms, seed, *, score="copeland", forced_exploration=None):
        self.n_arms = n_arms
        self.rng = np.random.default_rng(seed)
        self.pairs = [(i, j) for i in range(n_arms) for j in range(i, n_arms)]
        self.c1 = 2 / n_arms
        self.c2 = 3 / n_arms + 40 / max(1, (n_arms - 2) ** 2)
        self.score = score
        self.c0 = forced_exploration
        self.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        self.counts = np.zeros(len(self.pairs))
        self.n = 1

    def scores(self):
        wins, n_arms = self.wins, self.n_arms
        if self.score == "copeland":
            return np.array([sum(wins[i, j] > wins[j, i] for j in range(n_arms) if j != i) / (n_arms - 1)
                             for i in range(n_arms)])
        totals = []
        for i in range(n_arms):
            total = 0.0  # sequential sum, as the kernels add
            for j in range(n_arms):
                if j != i:
                    played = wins[i, j] + wins[j, i]
                    total += 0.5 if played == 0 else wins[i, j] / played
            totals.append(total / (n_arms - 1))
        return np.array(totals)

    def act(self):
        n, n_super = self.n, len(self.pairs)
        if n <= n_super:
            return self.pairs[n - 1]
        if self.c0 is not None:
            threshold = self.c0 * math.sqrt(math.log(n))
            for i, j in self.pairs:
                if i < j and self.wins[i, j] + self.wins[j, i] < threshold:
                    return i, j
        scores = self.scores()
        means = np.array([scores[i] * scores[j] for i, j in self.pairs])
        log_m = math.log(n - n_super)
        level = self.c1 * log_m + self.c2 * math.log(log_m + 1)
        indices = kl_upper_bound(means, self.counts, level)
        tied = np.flatnonzero(indices == indices.max())
        k = tied[self.rng.integers(0, tied.size)] if tied.size > 1 else tied[0]
        return self.pairs[k]

    def observe(self, first, second, first_won):
        self.n += 1
        self.counts[self.pairs.index((min(first, second), max(first, second)))] += 1
        if first != second:
            if first_won:
                self.wins[first, second] += 1
            else:
                self.wins[second, first] += 1


@pytest.mark.parametrize("problem,options", [
    ("multisol", {}),  # three tied Copeland winners: many exact ties between indices
    ("cyclic4", {"forced_exploration": 1.0}),
    ("arxiv", {"score": "borda"}),
    ("sushi", {}),
])
def test_decisions_equal_the_literal_algorithm(problem, options):
    horizon, seed = 1000, 4
    n_arms = load_problem(problem).n_arms
    result = simulate(SupKLUCB(n_arms, **options), problem, horizon, seed=seed, record_duels=True)
    plain = PlainSupKLUCB(n_arms, derive_seeds(seed)[1], **options)
    for t in range(horizon):
        assert tuple(plain.act()) == tuple(result.duels[t]), f"first difference at duel {t + 1}"
        plain.observe(*result.duels[t], result.outcomes[t])
    if problem == "multisol":  # exact ties were met and broken by the same random draws
        assert plain.rng.random() != np.random.default_rng(derive_seeds(seed)[1]).random()


# ---------------------------------------------------------------------------------------------
# The agent
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("problem,options", [
    ("multisol", {}),
    ("cyclic4", {"forced_exploration": 1.0}),
    ("mslr5-noncondorcet", {"score": "borda"}),
])
def test_fused_generic_and_gym_loops_are_identical(problem, options):
    horizon, seed = 2500, 7
    n_arms = load_problem(problem).n_arms
    assert_paths_agree(lambda: SupKLUCB(n_arms, **options), problem, horizon, seed)


def test_initial_phase_plays_every_pair_once_in_lexicographic_order():
    result = simulate(SupKLUCB(5), "gap", 15, seed=0, record_duels=True)
    assert [tuple(duel) for duel in result.duels.tolist()] == [(i, j) for i in range(5) for j in range(i, 5)]


def test_defaults_registry_and_repr():
    agent = make_agent("sup_klucb", n_arms=5, seed=1)
    assert isinstance(agent, SupKLUCB)
    assert agent.c1 == pytest.approx(0.4) and agent.c2 == pytest.approx(5.044444444)  # paper: 2/K, 3/K + 40/(K-2)^2
    assert SupKLUCB(2).c2 == pytest.approx(1.5 + 40.0)  # K = 2: 40 / max(1, (K-2)^2)
    assert agent.hyperparameters == {"horizon": None, "c1": agent.c1, "c2": agent.c2, "score": "copeland",
                                     "forced_exploration": None}
    assert repr(SupKLUCB(4, forced_exploration=True, seed=3)).startswith("SupKLUCB(n_arms=4, horizon=None")
    assert SupKLUCB(4, forced_exploration=True).forced_exploration == 1.0
    assert SupKLUCB(4, forced_exploration=False).forced_exploration is None


def test_horizon_is_informational():
    plain = simulate(SupKLUCB(5), "multisol", 3000, seed=2, record_duels=True)
    with_horizon = simulate(SupKLUCB(5, horizon=3000), "multisol", 3000, seed=2, record_duels=True)
    np.testing.assert_array_equal(plain.duels, with_horizon.duels)


@pytest.mark.parametrize("options,error", [
    ({"c1": -0.1}, ValueError),
    ({"c2": float("nan")}, ValueError),
    ({"c1": "big"}, TypeError),
    ({"score": "kemeny"}, ValueError),
    ({"score": 1}, TypeError),
    ({"horizon": 0}, ValueError),
    ({"horizon": 10.5}, TypeError),
    ({"forced_exploration": 0.0}, ValueError),
    ({"forced_exploration": -1}, ValueError),
    ({"forced_exploration": "yes"}, TypeError),
])
def test_bad_hyperparameters_raise(options, error):
    with pytest.raises(error):
        SupKLUCB(5, **options)


def _feed(agent, duels_and_outcomes):
    for first, second, first_won in duels_and_outcomes:
        agent.observe((first, second), first_won)


def test_lock_in_on_a_lucky_arm_and_the_safeguard():
    # K = 4: arm 3 wins its three single duels of the initial phase, so Sup_3 = 1 and the self-pair
    # (3, 3) has index 1; self-duels bring no information, so the paper's rule never leaves it.
    # The forced-exploration safeguard keeps sampling the other pairs and recovers.
    pairs = [(i, j) for i in range(4) for j in range(i, 4)]
    initial = [(i, j, j != 3) for i, j in pairs]  # the lower index wins, except against arm 3
    locked = SupKLUCB(4, seed=0)
    _feed(locked, initial)
    for _ in range(2000):
        duel = locked.act()
        assert duel == (3, 3)
        locked.observe(duel, True)
    assert locked.recommend() == 3

    guarded = SupKLUCB(4, forced_exploration=1.0, seed=0)
    _feed(guarded, initial)
    duels = []
    for _ in range(2000):
        duel = guarded.act()
        duels.append(duel)
        guarded.observe(duel, duel[0] < duel[1])  # from now on the lower index wins every duel
    assert {(0, 3), (1, 3), (2, 3)} <= set(duels)
    assert guarded.recommend() == 0
    assert duels[-100:] == [(0, 0)] * 100


def _random_unique_winner_runs(n_problems, seeds, forced_exploration, horizon=20_000, draw=0):
    rng = np.random.default_rng(draw)
    problems = [unique_copeland_winner(int(k), rng, min_gap=0.1) for k in rng.integers(4, 9, size=n_problems)]
    regrets, random_regrets, converged = [], [], 0
    for problem in problems:
        for seed in seeds:
            agent = SupKLUCB(problem.n_arms, forced_exploration=forced_exploration)
            result = simulate(agent, problem, horizon, seed=seed, checkpoints=[3 * horizon // 4, horizon])
            three_quarters, total = result.cumulative_regret["copeland_komiyama"]
            regrets.append(total)
            random_regrets.append(horizon * problem.expected_random_regret("copeland_komiyama"))
            # Converged: recommends the winner and pays < 0.01 per duel over the last quarter.
            converged += (result.recommendations[-1] == problem.copeland_winners[0]
                          and total - three_quarters < 0.01 * horizon / 4)
    return np.mean(regrets), np.mean(random_regrets), converged


def test_beats_random_and_the_safeguard_converges_more_often():
    # The paper's rule can lock onto a lucky self-pair (test above): convergence is not required on
    # every seed.
    regret, random_regret, converged = _random_unique_winner_runs(20, range(3), None)
    assert regret < 0.3 * random_regret
    assert converged >= 0.7 * 60
    guarded_regret, _, guarded_converged = _random_unique_winner_runs(20, range(3), 1.0)
    assert guarded_regret < 0.3 * random_regret
    assert guarded_converged > converged


@pytest.mark.slow
@pytest.mark.parametrize("draw", [1, 2])
def test_beats_random_and_the_safeguard_converges_more_often_more_draws(draw):
    regret, random_regret, converged = _random_unique_winner_runs(40, range(3), None, draw=draw)
    assert regret < 0.3 * random_regret
    _, _, guarded_converged = _random_unique_winner_runs(40, range(3), 1.0, draw=draw)
    assert guarded_converged > converged


@pytest.mark.parametrize("name", ["sushi", "cyclic4"])
def test_finds_the_condorcet_winner_on_most_seeds(name):
    problem = load_problem(name)
    horizon = 20_000
    random_regret = problem.expected_random_regret("copeland_komiyama") * horizon
    found = sum(simulate(SupKLUCB(problem.n_arms), problem, horizon, seed=seed, checkpoints=[horizon])
                .recommendations[-1] == problem.condorcet_winner for seed in range(5))
    assert found >= 3
    regret = simulate(SupKLUCB(problem.n_arms), problem, horizon, seed=0).final_regret()
    assert regret < 0.25 * random_regret
