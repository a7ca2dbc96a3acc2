"""The safeguard of the learned policy: its statistic, its rule (against a plain re-implementation),
its incremental bookkeeping, and the regret it guarantees against a network that never checks."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from dueling_gym.agents import make_agent
from dueling_gym.agents.learned import GENERAL_POLICY, LearnedAgent
from dueling_gym.experiments.simulate import simulate
from dueling_gym.pair_network import (
    new_safeguard_arrays,
    pair_evidence,
    safeguard_observe,
    safeguard_origin,
    safeguard_threshold,
    safeguarded_duel,
)
from dueling_gym.problems import PreferenceMatrix, load_problem


def _kl_half(p: float) -> float:
    return sum(q * math.log(2 * q) for q in (p, 1 - p) if q > 0)


def test_evidence_is_the_count_times_the_divergence_from_a_tie():
    assert pair_evidence(0, 0) == 0.0
    assert pair_evidence(3, 3) == 0.0
    for wins, losses in ((1, 0), (7, 3), (3, 7), (120, 80), (5000, 1)):
        n = wins + losses
        assert pair_evidence(wins, losses) == pytest.approx(n * _kl_half(wins / n), rel=1e-12)
        assert pair_evidence(wins, losses) == pytest.approx(pair_evidence(losses, wins), rel=1e-12)


def test_threshold_is_off_until_the_start_then_log_t():
    assert safeguard_threshold(10**6, 0) == -1.0  # start 0: never
    assert safeguard_threshold(1000, 1000) == -1.0
    assert safeguard_threshold(1001, 1000) == pytest.approx(math.log(1001))
    assert safeguard_threshold(10**5, 1000) == pytest.approx(math.log(10**5))
    # Its own clock: log(t / start), from nothing when the safeguard starts.
    assert safeguard_threshold(1000, 1000, 1000) == -1.0
    assert safeguard_threshold(1001, 1000, 1000) == pytest.approx(math.log(1.001))
    assert safeguard_threshold(10**5, 10**4, 10**4) == pytest.approx(math.log(10))
    assert (safeguard_origin(100, "run"), safeguard_origin(100, "start"), safeguard_origin(0, "start")) == (1, 100, 1)
    # The run's clock, named: bit for bit the default.
    for t in (101, 2345, 10**6):
        assert safeguard_threshold(t, 100, 1) == safeguard_threshold(t, 100) == math.log(t)


def _reference_duel(wins: np.ndarray, threshold: float, first: int, second: int) -> tuple[int, int]:
    """The rule of dueling_gym.pair_network.safeguard written plainly, from scratch each step."""
    n = wins.shape[0]
    if threshold < 0:
        return first, second

    def status(i, j):
        evidence = pair_evidence(int(wins[i, j]), int(wins[j, i]))
        if evidence < threshold or wins[i, j] == wins[j, i]:
            return 0
        return 1 if wins[i, j] > wins[j, i] else -1

    decided = {(i, j): status(i, j) for i in range(n) for j in range(n) if i != j}
    lower = [sum(decided[i, j] > 0 for j in range(n) if j != i) for i in range(n)]
    upper = [n - 1 - sum(decided[i, j] < 0 for j in range(n) if j != i) for i in range(n)]
    undecided = first != second and decided[first, second] == 0
    if first == second:
        arm = first
    elif undecided:
        arm = first if wins[first, second] >= wins[second, first] else second
    else:
        arm = first if decided[first, second] > 0 else second

    def confident(i):
        return lower[i] == n - 1 or lower[i] >= max(upper[j] for j in range(n) if j != i)

    if confident(arm):
        return arm, arm
    winners = [i for i in range(n) if confident(i)]
    if winners:
        best = max(lower[i] for i in winners)
        winner = min(i for i in winners if lower[i] == best)
        return winner, winner
    best_lower = max(lower)

    def matters(a, b):
        return upper[a] > best_lower or (upper[a] == best_lower and wins[a, b] >= wins[b, a])

    def useful(i, j):
        return decided[i, j] == 0 and (matters(i, j) or matters(j, i))

    useful_pairs = [(wins[i, j] + wins[j, i], i * n + j) for i in range(n) for j in range(i + 1, n) if useful(i, j)]
    if (undecided and useful(first, second)
            and wins[first, second] + wins[second, first] <= 2 * min(useful_pairs)[0] + threshold):
        return first, second
    unrefuted = [i for i in range(n) if upper[i] == n - 1]
    if unrefuted:
        def leads(i):
            return sum(wins[i, j] > wins[j, i] for j in range(n) if j != i)

        best = max(leads(i) for i in unrefuted)
        leader = arm if arm in unrefuted else min(i for i in unrefuted if leads(i) == best)
        if len(unrefuted) == 1 and lower[leader] < best_lower:
            checks = [(wins[leader, j] + wins[j, leader], j) for j in range(n) if j != leader and decided[leader, j] == 0]
            return leader, min(checks)[1]
        if len(unrefuted) == 1:
            checks = [(wins[leader, j] + wins[j, leader], j) for j in range(n) if j != leader
                      and (wins[leader, j] <= wins[j, leader] or wins[leader, j] + wins[j, leader] < threshold)]
            return (leader, min(checks)[1]) if checks else (leader, leader)
        rivals = []
        for j in unrefuted:
            options = [((wins[j, m] + 1) / (wins[j, m] + wins[m, j] + 2), wins[j, m] + wins[m, j], m)
                       for m in range(n) if m != j and decided[j, m] == 0
                       and not (j == leader and (wins[j, m] > wins[m, j] or m not in unrefuted))]
            if options:
                share, count, m = min(options)
                least_count, least = min((count, m) for share, count, m in options)
                if count > 10 * least_count + threshold:
                    count, m = least_count, least
                rivals.append((count, j, m))
        count, j, m = min(rivals)
        return j, m
    if useful_pairs:
        return divmod(min(useful_pairs)[1], n)
    raise AssertionError("no duel to play")


@pytest.mark.parametrize("n_arms, origin", [(2, 1), (3, 1), (5, 1), (8, 1), (3, 20), (5, 20)])
def test_incremental_rule_matches_the_rule_recomputed_every_step(n_arms, origin):
    """The compiled safeguard keeps its decisions up to date pair by pair; a plain
    re-implementation recomputes them every step.  Both pick the same duel on random runs, with
    the run's clock and with the safeguard's own (``origin`` = its start), whose threshold starts
    near zero, so that nearly every played pair is decided at first and lapses as it grows."""
    rng = np.random.default_rng(n_arms + origin)
    for run in range(3):
        matrix = rng.uniform(0.3, 0.7, (n_arms, n_arms))
        matrix = np.triu(matrix, 1) + np.tril(1 - matrix.T, -1)
        np.fill_diagonal(matrix, 0.5)
        wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        arrays = new_safeguard_arrays(n_arms)
        start = 20
        for t in range(1500):
            # A network that mostly exploits one arm and sometimes explores at random.
            if rng.random() < 0.7:
                first = second = int(rng.integers(n_arms)) if rng.random() < 0.2 else 0
            else:
                first, second = (int(x) for x in rng.integers(n_arms, size=2))
            threshold = safeguard_threshold(t, start, origin)
            expected = _reference_duel(wins, threshold, first, second)
            flat = safeguarded_duel(wins, threshold, *arrays, first, second)
            assert divmod(flat, n_arms) == expected, (run, t)
            a, b = expected
            if a == b:
                wins[a, a] += 1
            else:
                winner, loser = (a, b) if rng.random() < matrix[a, b] else (b, a)
                wins[winner, loser] += 1
            safeguard_observe(wins, a, b, safeguard_threshold(t + 1, start, origin), *arrays)


@numba.njit(cache=False)
def _stubborn_run(matrix, regrets, horizon, arm, start, uniforms, other=-1, origin=1):
    """Cumulative regret after every duel of a 'network' that always proposes the self-duel of
    ``arm`` (or the duel ``(arm, other)`` when ``other`` >= 0)."""
    n_arms = matrix.shape[0]
    wins = np.zeros((n_arms, n_arms), dtype=np.int64)
    evidence = np.zeros((n_arms, n_arms))
    status = np.zeros((n_arms, n_arms), dtype=np.int8)
    bounds = np.zeros((2, n_arms), dtype=np.int64)
    bounds[1, :] = n_arms - 1
    expiry = np.full(1, -np.inf)
    total = 0.0
    out = np.zeros(horizon)
    for t in range(horizon):
        proposed = arm if other < 0 else other
        flat = safeguarded_duel(wins, safeguard_threshold(t, start, origin), evidence, status, bounds, expiry, arm,
                                proposed)
        first, second = flat // n_arms, flat % n_arms
        total += regrets[first, second]
        if first == second:
            wins[first, first] += 1
        elif uniforms[t] < matrix[first, second]:
            wins[first, second] += 1
        else:
            wins[second, first] += 1
        safeguard_observe(wins, first, second, safeguard_threshold(t + 1, start, origin), evidence, status, bounds,
                          expiry)
        out[t] = total
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name, arm", [("mslr5-condorcet", 1), ("arxiv", 3), ("gap", 4), ("cyclic4", 2),
                                       ("multisol", 3), ("sushi", 5)])
@pytest.mark.parametrize("start, origin, last_share", [(100, 1, 0.01), (10**4, 10**4, 0.05)])
def test_a_network_that_commits_to_a_wrong_arm_is_found_out(name, arm, start, origin, last_share):
    """Without the safeguard, always playing a non-winner's self-duel costs a constant per duel
    (linear regret: tenfold from 10^5 to 10^6 duels).  With it the wrong arm is found out: the
    regret grows by less than half from 10^5 to 10^6 duels on average over runs, by less than
    double in every run, and by less than 1% of the stubborn network's over the last 10%.  So
    too with the safeguard's own clock from duel 10^4, after 10^4 duels of the wrong arm, except
    that the last 10% may cost up to 5%: at 10^6 duels that clock asks ``log 100`` of a decision
    where the run's asks ``log 10^6``, three times less, so more decisions are wrong, lapse and
    are checked again."""
    problem = load_problem(name)
    regrets = problem.regret_matrix("copeland_komiyama")
    assert regrets[arm, arm] > 0  # the arm is not a winner: linear regret without the safeguard
    horizon, ratios = 10**6, []
    for seed in range(4):
        uniforms = np.random.default_rng(seed).random(horizon)
        curve = _stubborn_run(problem.matrix, regrets, horizon, arm, start, uniforms, origin=origin)
        assert curve[-1] - curve[9 * horizon // 10 - 1] < last_share * regrets[arm, arm] * horizon / 10, seed
        ratios.append(curve[-1] / curve[10**5 - 1])
    assert np.mean(ratios) < 1.5 and max(ratios) < 2.0, ratios


@pytest.mark.slow
@pytest.mark.parametrize("first, second", [(2, 3), (3, 4)])
@pytest.mark.parametrize("start, origin", [(100, 1), (10**4, 10**4)])
def test_a_network_that_keeps_to_a_near_tie_is_overruled(first, second, start, origin):
    """MSLR-5 (non-Condorcet) has three Copeland winners (arms 0-2) and pairs at 0.504 (arms 2
    and 3) and 0.503 (3 and 4) that take hundreds of thousands of duels to decide.  A network
    that proposes one of them every time is played only as long as the pair is not far ahead of
    the other pairs that matter, and once a winner is confident it is exploited.  Played alone,
    the proposed duel's regret would grow tenfold from 10^5 to 10^6 duels; with the safeguard it
    grows less than threefold on average, and the last 10% of the duels cost under a fifth of
    what the proposed duel would (an adversary that never proposes a winner: the checks are all
    it gets).  So too with the safeguard's own clock from duel 10^4."""
    problem = load_problem("mslr5-noncondorcet")
    regrets = problem.regret_matrix("copeland_komiyama")
    assert regrets[first, second] > 0
    horizon, ratios = 10**6, []
    for seed in range(4):
        uniforms = np.random.default_rng(seed).random(horizon)
        curve = _stubborn_run(problem.matrix, regrets, horizon, first, start, uniforms, other=second, origin=origin)
        assert curve[-1] - curve[9 * horizon // 10 - 1] < 0.2 * regrets[first, second] * horizon / 10, seed
        ratios.append(curve[-1] / curve[10**5 - 1])
    assert np.mean(ratios) < 3.0, ratios


def test_a_network_that_commits_to_the_winner_is_left_alone_once_it_is_confident():
    problem = PreferenceMatrix(np.array([[0.5, 0.9, 0.9], [0.1, 0.5, 0.9], [0.1, 0.1, 0.5]]))
    regrets = problem.regret_matrix("copeland_komiyama")
    uniforms = np.random.default_rng(3).random(20000)
    curve = _stubborn_run(problem.matrix, regrets, 20000, 0, 100, uniforms)
    # Two pairs with preference 0.9 are decided after a few dozen duels each, re-checked as
    # log t grows: a few hundred duels of regret at most, nothing after that in between.
    assert curve[-1] < 60
    assert curve[-1] - curve[9999] < 20


def test_agent_safeguard_argument_is_checked():
    with pytest.raises(ValueError, match="safeguard_clock"):
        LearnedAgent(5, safeguard_from=100, safeguard_clock="duel")
    with pytest.raises(TypeError, match="safeguard_clock"):
        LearnedAgent(5, safeguard_from=100, safeguard_clock=1)
    with pytest.raises(ValueError, match="safeguard_from"):
        LearnedAgent(5, safeguard_from=0)
    with pytest.raises(ValueError, match="safeguard_from"):
        LearnedAgent(5, safeguard_from="always")
    with pytest.raises(TypeError):
        LearnedAgent(5, safeguard_from=2.5)


def test_agent_plays_as_the_network_before_the_start_and_as_trained_by_default():
    problem = load_problem("mslr5-condorcet")
    plain = simulate(make_agent("learned", 5, seed=1, safeguard_from=None), problem, 3000, seed=7, record_duels=True)
    guarded = simulate(make_agent("learned", 5, seed=1, safeguard_from=2000), problem, 3000, seed=7,
                       record_duels=True)
    assert np.array_equal(plain.duels[:2001], guarded.duels[:2001])
    # The shipped K = 5 file records no safeguard: by default it plays as the network alone.
    default = simulate(make_agent("learned", 5, seed=1), problem, 3000, seed=7, record_duels=True)
    assert LearnedAgent(5)._safeguard_start() == (LearnedAgent(5).metadata.get("config", {}).get("safeguard_from") or 0)
    if not LearnedAgent(5).metadata.get("config", {}).get("safeguard_from"):
        assert np.array_equal(default.duels, plain.duels)


def test_the_safeguards_own_clock_changes_nothing_before_its_start_and_checks_less_after():
    """With its own clock the safeguard plays the network's duels up to its start, as with the run's
    clock, then asks ``log(t / start)`` of a decided pair: the same run differs after the start and
    costs less than the run's clock (which asks ``log t`` at once).  The act/observe loop plays the
    fused run duel for duel."""
    problem = load_problem("mslr5-condorcet")

    def run(fused=True, **options):
        agent = make_agent("learned", 5, seed=1, **options)
        return simulate(agent, problem, 6000, seed=7, record_duels=True, fused=fused)

    plain = run(safeguard_from=None)
    by_run = run(safeguard_from=2000)
    own = run(safeguard_from=2000, safeguard_clock="start")
    assert np.array_equal(own.duels[:2001], plain.duels[:2001])
    assert not np.array_equal(own.duels, by_run.duels)
    assert own.final_regret() < by_run.final_regret()
    stepped = run(fused=False, safeguard_from=2000, safeguard_clock="start")
    assert np.array_equal(stepped.duels, own.duels) and np.array_equal(stepped.outcomes, own.outcomes)
    # Without a safeguard the clock changes nothing.
    assert np.array_equal(run(safeguard_from=None, safeguard_clock="start").duels, plain.duels)


@pytest.mark.skipif(not GENERAL_POLICY.is_file(), reason="no general policy shipped")
@pytest.mark.parametrize("n_arms", [2, 3, 4, 6, 7, 16])
def test_every_size_has_a_policy(n_arms):
    assert LearnedAgent.plays_arms(n_arms)
    problem = load_problem("sushi") if n_arms == 16 else None
    agent = make_agent("learned", n_arms, seed=0)
    if problem is not None:
        result = simulate(agent, problem, 2000, seed=0)
        assert result.final_regret() >= 0
    else:
        agent.act()


def test_kernels_refuse_arrays_that_do_not_match_the_counts():
    wins = np.zeros((4, 4), dtype=np.int64)
    evidence, status, bounds, expiry = new_safeguard_arrays(3)  # sized for 3 arms, not 4
    with pytest.raises(ValueError, match="safeguard arrays"):
        safeguarded_duel(wins, 1.0, evidence, status, bounds, expiry, 0, 0)
    with pytest.raises(ValueError, match="safeguard arrays"):
        safeguard_observe(wins, 0, 1, 1.0, evidence, status, bounds, expiry)
    arrays = new_safeguard_arrays(4)
    with pytest.raises(ValueError, match="arms"):
        safeguarded_duel(wins, 1.0, *arrays, 0, 4)
    with pytest.raises(ValueError, match="arms"):
        safeguard_observe(wins, -1, 1, 1.0, *arrays)


def test_a_safeguarded_run_is_identified_by_the_rule_as_well_as_the_weights():
    """A study reuses a unit whose identity matches: a safeguarded run must name the rule it
    ran with, so that a run of an earlier rule is not taken for this one's."""
    from dueling_gym.pair_network import safeguard_rule_digest

    digest = safeguard_rule_digest()
    assert len(digest) == 64 and int(digest, 16) >= 0
    plain = LearnedAgent.content_digests(5, {})
    guarded = LearnedAgent.content_digests(5, {"safeguard_from": 1000})
    assert "safeguard_sha256" not in plain  # the shipped files record no safeguard
    assert guarded["safeguard_sha256"] == digest
    assert guarded["policy_sha256"] == plain["policy_sha256"]
    assert "safeguard_sha256" not in LearnedAgent.content_digests(5, {"safeguard_from": None})
