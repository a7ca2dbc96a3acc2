"""RMED2 and RMED2FH (Komiyama et al., COLT 2015): loop equivalence, forced exploration, the
regret-aware opponent against a literal transcription, behaviour and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_checks import assert_observe_validates_the_action, refusal_test
from agent_helpers import assert_paths_agree
from condorcet_behaviour import (
    CONDORCET_PROBLEMS,
    assert_finds_condorcet_winner_with_sublinear_regret,
    assert_linear_regret_without_condorcet_winner,
)
from dueling_gym.agents import RMED2, RMED2FH, make_agent
from dueling_gym.agents.rmed.rmed2 import regret_aware_partner
from dueling_gym.problems import load_problem
from dueling_gym.stats import kl_bernoulli

FACTORIES = {
    "rmed2": lambda n_arms, horizon=30_000: RMED2(n_arms),
    "rmed2fh": lambda n_arms, horizon=30_000: RMED2FH(n_arms, horizon=horizon),
}


def _means(wins: np.ndarray) -> np.ndarray:
    totals = wins + wins.T
    return np.divide(wins, totals, out=np.full(wins.shape, 0.5), where=totals > 0)


def _reference_partner(wins: np.ndarray, arm: int, best: int) -> int:
    """b_hat(arm): argmin over the arms beating `arm` empirically of the floored regret per information."""
    means = _means(wins)
    values = {}
    for j in range(wins.shape[0]):
        if j != arm and means[arm, j] < 0.5:
            regret = max(means[best, arm] + means[best, j] - 1.0, 0.01)
            values[j] = regret / kl_bernoulli(means[arm, j], 0.5)
    return min(values, key=lambda j: (values[j], j)) if values else best


def _reference_opponent(wins: np.ndarray, arm: int, best: int, partner: int, t: int):
    """The opponent rule of RMED2 (None when RMED1's rule needs a random tie-break)."""
    means = _means(wins)
    totals = wins + wins.T
    opponents = [j for j in range(wins.shape[0]) if j != arm and means[arm, j] <= 0.5]
    if best in opponents and totals[arm, best] * math.log(math.log(t)) <= totals[arm, partner]:
        return best
    if partner in opponents:
        return partner
    if not opponents or best in opponents:
        return best
    worst = min(means[arm, j] for j in opponents)
    tied = [j for j in opponents if means[arm, j] == worst]
    return tied[0] if len(tied) == 1 else None


def _replay(agent, problem_name: str, steps: int, seed: int):
    """Yield (t, wins before the duel, duel) while playing ``problem_name`` through act/observe."""
    matrix = load_problem(problem_name).matrix
    rng = np.random.default_rng(seed)
    for t in range(1, steps + 1):
        wins = agent.wins.copy()
        duel = agent.act()
        yield t, wins, duel
        agent.observe(duel, bool(rng.random() < matrix[duel]))


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("problem", ["sushi", "multisol"])
def test_fused_generic_and_gym_loops_are_identical(name, problem):
    n_arms = load_problem(problem).n_arms
    assert_paths_agree(lambda: FACTORIES[name](n_arms, 3000), problem, 3000, seed=9)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_initial_round_then_forced_exploration_of_deficient_pairs(name):
    agent = FACTORIES[name](4, 5000)
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    forced = 0
    for t, wins, duel in _replay(agent, "cyclic4", 5000, seed=1):
        totals = wins + wins.T
        if t <= len(pairs):
            assert duel == pairs[t - 1]
            continue
        level = 3.0 * math.log(math.log(agent.horizon if name == "rmed2fh" else t))
        required = math.ceil(level) if level > 0 else 0
        deficient = [pair for pair in pairs if totals[pair] < required]
        if deficient:
            assert duel == deficient[0]
            forced += 1
    assert forced > 0
    counts = (agent.wins + agent.wins.T)[np.triu_indices(4, 1)]
    assert counts.min() >= math.ceil(3.0 * math.log(math.log(5000)))


@pytest.mark.parametrize("problem", ["sushi", "arxiv"])
def test_rmed2_opponent_matches_a_literal_transcription(problem):
    n_arms = load_problem(problem).n_arms
    agent = RMED2(n_arms, seed=2)
    checked = 0
    for t, wins, (arm, opponent) in _replay(agent, problem, 6000, seed=3):
        if t <= n_arms * (n_arms - 1) // 2:
            continue
        totals = wins + wins.T
        required = math.ceil(3.0 * math.log(math.log(t)))
        if (totals[np.triu_indices(n_arms, 1)] < required).any():
            continue
        divergence = np.where(_means(wins) < 0.5, totals * kl_bernoulli(_means(wins), np.full(wins.shape, 0.5)), 0.0)
        info = divergence.sum(axis=1)
        if np.sum(info == info.min()) > 1:
            continue  # i_hat* drawn at random
        best = int(np.argmin(info))
        partner = _reference_partner(wins, arm, best)
        expected = _reference_opponent(wins, arm, best, partner, t)
        if expected is None:
            continue
        assert opponent == expected, (t, arm, best, partner)
        checked += 1
    assert checked > 4000


def test_regret_aware_partner_prefers_cheap_information():
    # Arm 2 is beaten by the winner 0 narrowly (0.45) and by arm 1 clearly (0.2); arm 1 is
    # nearly as good as 0.  Comparing 2 with 1 costs about the same regret as with 0 but
    # brings far more information per duel, so b_hat(2) = 1 although i_hat* = 0.
    wins = np.array([[0, 52, 55], [48, 0, 80], [45, 20, 0]])
    agent = RMED2(3, seed=0)
    for i, j in zip(*np.nonzero(wins)):
        for _ in range(wins[i, j]):
            agent.observe((i, j), True)
    assert agent.recommend() == 0
    assert regret_aware_partner(agent.state, 2, 0) == 1 == _reference_partner(wins, 2, 0)
    # Arm 1 is beaten only by 0; arm 0 by nobody (b_hat falls back to i_hat*).
    assert regret_aware_partner(agent.state, 1, 0) == 0
    assert regret_aware_partner(agent.state, 0, 0) == 0


def test_rmed2fh_fixes_the_partners_after_exploration():
    horizon = 20_000
    agent = RMED2FH(6, horizon=horizon, seed=4)
    assert (agent.partners == -1).all()
    required = math.ceil(3.0 * math.log(math.log(horizon)))
    fixed = None
    for t, wins, duel in _replay(agent, "arxiv", 3000, seed=5):
        totals = wins + wins.T
        if (totals[np.triu_indices(6, 1)] < required).any():
            assert (agent.partners == -1).all()
        elif fixed is None:
            fixed = agent.partners
            assert (fixed >= 0).all()
            assert t == 15 * required + 1  # every pair explored first, nothing else
        else:
            np.testing.assert_array_equal(agent.partners, fixed)
    assert fixed is not None


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("problem", CONDORCET_PROBLEMS)
def test_finds_the_condorcet_winner_with_logarithmic_regret(name, problem):
    assert_finds_condorcet_winner_with_sublinear_regret(lambda n_arms: FACTORIES[name](n_arms, 30_000), problem)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_linear_copeland_regret_without_a_condorcet_winner(name):
    # As for RMED1: without a Condorcet winner every arm keeps re-entering the loops.
    assert_linear_regret_without_condorcet_winner(lambda n_arms: FACTORIES[name](n_arms, 20_000))


def test_registry_and_hyperparameters():
    rmed2 = make_agent("rmed2", 5, seed=0, alpha=2.0)
    assert isinstance(rmed2, RMED2) and rmed2.name == "rmed2"
    assert rmed2.hyperparameters == {"alpha": 2.0, "f_scale": 0.3, "f_exponent": 1.01}
    assert rmed2.f_value == pytest.approx(0.3 * 5 ** 1.01)
    fh = make_agent("rmed2fh", 5, seed=0, horizon=1000)
    assert isinstance(fh, RMED2FH) and fh.name == "rmed2fh"
    assert fh.hyperparameters == {"horizon": 1000, "alpha": 3.0, "f_scale": 0.3, "f_exponent": 1.01}
    assert "horizon=1000" in repr(fh)


test_bad_hyperparameters_raise = refusal_test(
    (lambda: RMED2(5, alpha=-1.0), ValueError),
    (lambda: RMED2(5, alpha="3"), TypeError),
    (lambda: RMED2(5, f_scale=-0.1), ValueError),
    (lambda: RMED2(5, f_exponent=float("nan")), ValueError),
    (lambda: RMED2(1), ValueError),
    (lambda: RMED2FH(5), TypeError),
    (lambda: RMED2FH(5, horizon=2), ValueError),
    (lambda: RMED2FH(5, horizon=100.0), TypeError),
    (lambda: RMED2FH(5, horizon=True), TypeError),
    (lambda: make_agent("rmed2", 5, horizon=10), TypeError),
)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_observe_validates_the_action(name):
    assert_observe_validates_the_action(FACTORIES[name](4))
