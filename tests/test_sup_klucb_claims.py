"""The lock-in behaviour of Sup-KLUCB that docs/algorithms/sup_klucb.md measures.

Agrawal & Chaporkar (2019, Algorithm 1) play the super-arm with the largest KL-UCB index.  A
self-duel changes no statistic, and the self-pair ``(i, i)`` of an arm whose plug-in Copeland
score is 1 has mean 1, hence index 1, above every other super-arm.  So once such a self-pair is
chosen after the initial phase, it is chosen at every later step, whether or not ``i`` is the
Copeland winner.  These tests check that absorption step by step, that it does capture
non-winners on random matrices with a unique Copeland winner (the cause of the linear-regret
runs on the documentation page), and that the opt-in forced exploration leaves such a state.
"""

from __future__ import annotations

import numpy as np
import pytest

from dueling_gym.agents.sup_klucb import SupKLUCB
from dueling_gym.problems import unique_copeland_winner

HORIZON = 3_000


def _play(agent: SupKLUCB, matrix: np.ndarray, rng: np.random.Generator, horizon: int):
    """Yield ``(t, duel, scores before the duel)`` for ``t = 1..horizon`` of an act/observe loop."""
    for t in range(1, horizon + 1):
        scores = agent.scores.copy()
        first, second = agent.act()
        yield t, (first, second), scores
        agent.observe((first, second), bool(rng.random() < matrix[first, second]))


def _first_absorbing_step(agent: SupKLUCB, matrix: np.ndarray, seed: int, horizon: int):
    """Run the agent; return ``(t0, arm, duels)`` for the first post-initial self-duel of an arm with score 1."""
    rng = np.random.default_rng(seed)
    n_super = agent.n_arms * (agent.n_arms + 1) // 2
    start, arm, duels = None, None, []
    for t, duel, scores in _play(agent, matrix, rng, horizon):
        duels.append(duel)
        if start is None and t > n_super and duel[0] == duel[1] and scores[duel[0]] == 1.0:
            start, arm = t, duel[0]
    return start, arm, duels


# K >= 4: at K = 3 the paper's c2 = 41 lets the index of a mean-0 super-arm round to exactly 1.0
# (documented in the agent), which ties with the locked self-pair instead of staying below it.
CASES = [(n_arms, game, seed) for n_arms in (4, 5, 6) for game in range(3) for seed in range(4)]


@pytest.mark.slow
def test_a_self_pair_with_plugin_score_one_absorbs_and_catches_non_winners():
    absorbed_non_winners = 0
    for n_arms, game, seed in CASES:
        problem = unique_copeland_winner(n_arms, np.random.default_rng(game))
        agent = SupKLUCB(n_arms, seed=seed)
        start, arm, duels = _first_absorbing_step(agent, np.asarray(problem.matrix), seed, HORIZON)
        if start is None:
            continue
        assert all(duel == (arm, arm) for duel in duels[start - 1:]), (n_arms, game, seed)
        assert agent.scores[arm] == 1.0
        absorbed_non_winners += arm not in problem.copeland_winners
    # The absorption is not a property of the winner only: some runs lock onto a non-winner.
    assert absorbed_non_winners >= 1


@pytest.mark.slow
def test_forced_exploration_can_leave_a_non_winner_self_pair():
    locked, recovered = 0, 0
    for n_arms, game, seed in CASES:
        problem = unique_copeland_winner(n_arms, np.random.default_rng(game))
        matrix = np.asarray(problem.matrix)
        start, arm, _ = _first_absorbing_step(SupKLUCB(n_arms, seed=seed), matrix, seed, HORIZON)
        if start is None or arm in problem.copeland_winners:
            continue
        locked += 1
        agent = SupKLUCB(n_arms, seed=seed, forced_exploration=True)
        _first_absorbing_step(agent, matrix, seed, HORIZON)
        # Every non-self pair keeps being sampled about sqrt(ln n) times (the safeguard's rule) ...
        duels_per_pair = agent.wins + agent.wins.T
        assert duels_per_pair[np.triu_indices(n_arms, 1)].min() >= np.sqrt(np.log(HORIZON)) - 1
        # ... which lets a lucky majority be overturned, but not always within the horizon.
        recovered += agent.recommend() in problem.copeland_winners
    assert locked >= 2
    assert recovered >= 1
