"""OptMax = OPT-MAXIMIZE (Falahatgar et al., NeurIPS 2017, Algorithm 3): loop equivalence, the
phases, the δ <= 1/K branch, the duel envelope, the PAC guarantee under strong stochastic
transitivity (Theorem 6) and its linear complexity."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_checks import bradley_terry, refusal_test
from agent_helpers import assert_paths_agree
from dueling_gym.agents import OptMax, SequentialElimination, make_agent
from dueling_gym.experiments.pure_exploration import run_pure_exploration
from dueling_gym.problems import PreferenceMatrix
from dueling_gym.problems.generators import utility_based


def indifferent(n_arms: int) -> PreferenceMatrix:
    """Every duel a fair coin: every arm is an ε-maximum and the COMPAREs run long."""
    return PreferenceMatrix(np.full((n_arms, n_arms), 0.5), name="indifferent")


def budget(lower: float, upper: float, confidence: float) -> int:
    """Lemma 1: COMPARE(·, ·, ε_l, ε_u, δ') stops within ceil(2 ln(2/δ') / (ε_u - ε_l)²) duels."""
    return math.ceil(2 * math.log(2 / confidence) / (upper - lower) ** 2)


@pytest.mark.parametrize(("problem", "n_arms", "delta"), [("sushi", 16, 0.2), ("cyclic4", 4, 0.2), ("sushi", 16, 0.05)])
def test_fused_act_observe_and_gym_paths_agree(problem, n_arms, delta):
    assert_paths_agree(lambda: OptMax(n_arms, epsilon=0.2, delta=delta), problem, 3000, seed=3)


def test_phases_sample_and_answer():
    agent = OptMax(20, epsilon=0.1, delta=0.1, seed=0)
    # n' = sqrt(6 K ln K); PICK-ANCHOR samples min(ceil((K/n') ln(8/δ)), K) arms.
    assert agent.cutoff == pytest.approx(math.sqrt(120 * math.log(20)))
    assert agent.subset_size == math.ceil(20 / agent.cutoff * math.log(80)) == 5
    assert not agent.small_delta and agent.stage == "anchor"
    assert agent.pure_exploration and agent.hyperparameters == {"epsilon": 0.1, "delta": 0.1}
    problem = bradley_terry(np.linspace(0.0, 4.0, 20))
    result = run_pure_exploration(agent, problem, seed=1)
    assert result.stopped and agent.done and agent.stage == "done"
    assert agent.prune_rounds == 0  # 20 arms <= 2n': PRUNE has nothing to do
    assert agent.act() == (result.winner, result.winner)  # after stopping: the answer's self-duel
    ranking = agent.ranking()
    assert sorted(ranking.tolist()) == list(range(20)) and ranking[0] == result.winner == agent.recommend()
    survivors = agent.survivors
    assert len(set(survivors.tolist())) == len(survivors) and set(survivors) <= set(range(20))
    others = [arm for arm in survivors.tolist() if arm != ranking[0]]
    assert ranking[1:1 + len(others)].tolist() == others
    # The duels asked for are always (challenger, anchor); other duels are ignored.
    fresh = OptMax(5, seed=2)
    first, second = fresh.act()
    fresh.observe(((first + 1) % 5, second), True)
    assert fresh.compare_duels == 0
    fresh.observe((first, second), True)
    assert fresh.compare_duels == 1


def test_small_delta_branch_is_seq_eliminate():
    # δ <= 1/K: SEQ-ELIMINATE(S, 0, ε, δ) with each COMPARE at δ/K, i.e. SequentialElimination
    # (which uses δ/(K - 1) per COMPARE) run with δ (K - 1)/K; same seed, same duels.
    n_arms, epsilon, delta = 8, 0.15, 0.1
    problem = bradley_terry(np.linspace(0.0, 1.5, n_arms))
    for seed in range(3):
        agent = OptMax(n_arms, epsilon=epsilon, delta=delta, seed=seed)
        reference = SequentialElimination(n_arms, epsilon=epsilon, delta=delta * (n_arms - 1) / n_arms, seed=seed)
        assert agent.small_delta and agent.stage == "final"
        rng = np.random.default_rng(seed)
        steps = 0
        while not reference.done:
            action = agent.act()
            assert action == reference.act()
            first_won = bool(rng.random() < problem.matrix[action])
            agent.observe(action, first_won)
            reference.observe(action, first_won)
            steps += 1
        assert agent.done and agent.recommend() == reference.recommend() and steps > 0


@pytest.mark.parametrize("n_arms", [12, 160])
def test_every_duel_is_budgeted(n_arms):
    # Worst case: indifferent arms.  Every COMPARE stops within its Lemma 1 budget, so the run
    # stays within the sum over the phases of Algorithm 3 (PRUNE round t at (δ/4)/2^{t+1}).
    epsilon, delta = 0.25, 0.1
    agent = OptMax(n_arms, epsilon=epsilon, delta=delta, seed=0)
    result = run_pure_exploration(agent, indifferent(n_arms), seed=0)
    sample, rounds, kept = agent.subset_size, agent.prune_rounds, len(agent.survivors)
    bound = ((sample - 1) * budget(0, epsilon / 3, delta / 8 / sample)
             + sum((n_arms - 1) * budget(epsilon / 3, 2 * epsilon / 3, delta / 4 / 2 ** (t + 1))
                   for t in range(1, rounds + 1))
             + kept * budget(2 * epsilon / 3, epsilon, delta / (4 * max(kept, 1)))
             + max(kept - 1, 0) * budget(0, epsilon, delta / (4 * max(kept, 1))))
    assert result.stopped and result.samples <= bound
    # Lemma 5: PRUNE runs while |Q| > 2n' and t < (ln K)², and then leaves |Q| <= 2n'.
    assert rounds < agent.max_rounds and kept <= 2 * agent.cutoff
    assert (rounds > 0) == (n_arms - 1 > 2 * agent.cutoff)


@pytest.mark.parametrize(("n_arms", "epsilon", "runs", "problem_seed"), [(12, 0.1, 40, 0), (12, 0.1, 40, 1),
                                                                        (150, 0.2, 12, 2)])
def test_is_pac_under_strong_stochastic_transitivity(n_arms, epsilon, runs, problem_seed):
    # Theorem 6: an ε-maximum (P[b*, answer] <= 1/2 + ε) with probability at least 1 - δ.
    delta = 0.1
    problem = utility_based(n_arms, np.random.default_rng(problem_seed))
    agent = OptMax(n_arms, epsilon=epsilon, delta=delta)
    results = [run_pure_exploration(agent, problem, seed=seed) for seed in range(runs)]
    assert all(result.stopped for result in results)
    assert np.mean([result.epsilon_correct for result in results]) >= 1 - delta


def test_duels_per_arm_are_flat_in_k():
    # Theorem 6: O(K/ε² ln(1/δ)) duels, against SEQ-ELIMINATE's O(K/ε² ln(K/δ)).  On indifferent
    # arms (both regimes with PRUNE, K > 2n'), OptMax's duels per arm stay flat in K while
    # SEQ-ELIMINATE's grow like ln K.  (The constants of OPT-MAXIMIZE are larger, so at these K
    # it still takes more duels than SEQ-ELIMINATE.)
    epsilon, delta = 0.25, 0.1

    def per_arm(factory, n_arms):
        samples = [run_pure_exploration(factory(n_arms), indifferent(n_arms), seed=seed).samples for seed in range(2)]
        return np.mean(samples) / n_arms

    opt_small = per_arm(lambda k: OptMax(k, epsilon=epsilon, delta=delta), 150)
    opt_large = per_arm(lambda k: OptMax(k, epsilon=epsilon, delta=delta), 1200)
    seq_small = per_arm(lambda k: SequentialElimination(k, epsilon=epsilon, delta=delta), 150)
    seq_large = per_arm(lambda k: SequentialElimination(k, epsilon=epsilon, delta=delta), 1200)
    assert opt_large < 1.05 * opt_small, (opt_small, opt_large)
    assert seq_large > 1.15 * seq_small, (seq_small, seq_large)


test_bad_hyperparameters_raise = refusal_test(
    (lambda: OptMax(5, epsilon=0.0), ValueError),
    (lambda: OptMax(5, epsilon=0.6), ValueError),
    (lambda: OptMax(5, delta=1.0), ValueError),
    (lambda: OptMax(5, delta="0.1"), TypeError),
    (lambda: OptMax(1), ValueError),
    (lambda: make_agent("opt_max", 5, gamma=1.0), TypeError),
)
