"""The simulator: fused loop, act/observe loop and a plain Gymnasium loop agree exactly."""

from __future__ import annotations

import numpy as np
import pytest

from agent_helpers import assert_paths_agree, gym_loop
from dueling_gym.agents.base import DuelingAgent
from dueling_gym.agents.rucb import RUCB
from dueling_gym.experiments import derive_seeds, log_checkpoints, simulate
from dueling_gym.problems import load_problem


class CyclingAgent(DuelingAgent):
    """A pure-Python agent (no kernels) that cycles through all ordered pairs."""

    def __init__(self, n_arms, *, seed=None):
        super().__init__(n_arms, seed=seed)

    def _reset_state(self):
        self.t = 0
        self.seen = []

    def act(self):
        duel = divmod(self.t % (self.n_arms * self.n_arms), self.n_arms)
        self.t += 1
        return duel

    def observe(self, action, first_won):
        self.seen.append((tuple(action), first_won))

    def recommend(self):
        return 0


@pytest.mark.parametrize("problem", ["cyclic4", "multisol"])
def test_fused_generic_and_gym_loops_are_identical(problem):
    horizon, seed = 3000, 7
    n_arms = load_problem(problem).n_arms
    assert_paths_agree(lambda: RUCB(n_arms), problem, horizon, seed)


def test_generic_loop_for_python_agents_matches_gym():
    agent = CyclingAgent(5)
    result = simulate(agent, "multisol", 500, seed=3, record_duels=True)
    assert not result.fused
    duels, outcomes, regret = gym_loop(CyclingAgent(5), "multisol", 500, 3)
    np.testing.assert_array_equal(result.duels, duels)
    np.testing.assert_array_equal(result.outcomes, outcomes)
    assert result.final_regret() == pytest.approx(regret["copeland_komiyama"])
    # The agent saw exactly the outcomes the environment produced.
    assert [won for _, won in agent.seen] == outcomes.tolist()


def test_regret_at_checkpoints_is_exact():
    result = simulate(CyclingAgent(4), "cyclic4", 160, seed=0, checkpoints=[16, 32, 160], record_duels=True)
    problem = load_problem("cyclic4")
    per_duel = problem.regret("copeland_zoghi", result.duels[:, 0], result.duels[:, 1])
    np.testing.assert_allclose(result.cumulative_regret["copeland_zoghi"], np.cumsum(per_duel)[[15, 31, 159]])
    assert result.checkpoints.tolist() == [16, 32, 160]


def test_same_seed_same_result_and_seed_derivation():
    first = simulate(RUCB(16), "sushi", 2000, seed=11)
    second = simulate(RUCB(16), "sushi", 2000, seed=11)
    third = simulate(RUCB(16), "sushi", 2000, seed=12)
    np.testing.assert_array_equal(first.cumulative_regret["copeland_komiyama"],
                                  second.cumulative_regret["copeland_komiyama"])
    assert first.final_regret() != third.final_regret()
    assert derive_seeds(11) == (first.metadata["env_seed"], first.metadata["agent_seed"])
    assert derive_seeds(11) != derive_seeds(12)


def test_log_checkpoints():
    points = log_checkpoints(10**6)
    assert points[0] == 1 and points[-1] == 10**6
    assert np.all(np.diff(points) > 0) and 50 <= points.size <= 70
    assert log_checkpoints(1).tolist() == [1]
    with pytest.raises(ValueError, match="horizon"):
        log_checkpoints(0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="arms"):
        simulate(RUCB(4), "sushi", 10)
    with pytest.raises(ValueError, match="horizon"):
        simulate(RUCB(16), "sushi", 0)
    with pytest.raises(ValueError, match="checkpoints"):
        simulate(RUCB(16), "sushi", 10, checkpoints=[20])
    with pytest.raises(ValueError, match="kernels"):
        simulate(CyclingAgent(16), "sushi", 10, fused=True)
    with pytest.raises(TypeError, match="DuelingAgent"):
        simulate(object(), "sushi", 10)
    with pytest.raises(ValueError, match="seed"):
        simulate(RUCB(16), "sushi", 10, seed=-1)


def test_progress_bar_runs(capsys):
    result = simulate(RUCB(5), "multisol", 1000, seed=0, progress=True)
    assert result.horizon == 1000
