"""D-TS and D-TS+ with many arms: the same duels as before their large-K speed-ups, Beta draws included.

The golden trajectories play K = 16 and smaller; here every arm stays an optimistic Copeland
candidate for a long time, so the lazy first sample cuts rows short, draws pairs from rows
looked at earlier and abandons most candidates, and the optimistic counts see only the
played pairs.  The digests were recorded with the implementation that stored every
``theta_ij`` with a round stamp, scanned every pair for the optimistic counts and drew
``Beta(1, 1)`` with ``Generator.beta``.
"""

from __future__ import annotations

import hashlib

import numba
import numpy as np
import pytest

from dueling_gym.agents import make_agent
from dueling_gym.agents.dts import beta_variate
from dueling_gym.experiments import simulate
from dueling_gym.problems.generators import utility_based

#: (agent, K, duels) -> digest of duels, outcomes and recommendations (agent seed 0, simulate seed 7)
RECORDED = {
    ("dts", 40, 20_000): "460b2885451335eb",
    ("dts_plus", 40, 20_000): "824f8632dc839d8c",
    ("dts", 300, 1_500): "93958713f42a5acc",
    ("dts_plus", 300, 1_500): "01f8fcc33c9b9e4c",
    ("dts", 2000, 40): "9db7a8698f5f9260",
}


@pytest.mark.parametrize(("name", "n_arms", "horizon"), sorted(RECORDED))
def test_many_arms_trajectory_is_unchanged(name, n_arms, horizon):
    problem = utility_based(n_arms, np.random.default_rng(n_arms))
    agent = make_agent(name, n_arms=n_arms, seed=0)
    result = simulate(agent, problem, horizon, seed=7, record_duels=True)
    digest = hashlib.sha256(np.ascontiguousarray(result.duels).tobytes()
                            + np.ascontiguousarray(result.outcomes).tobytes()
                            + np.asarray(result.recommendations).tobytes()).hexdigest()[:16]
    assert digest == RECORDED[name, n_arms, horizon]


@numba.njit
def _draws(rng, a, b, n, fast):
    out = np.empty(n + 1)
    for index in range(n):
        out[index] = beta_variate(rng, a, b) if fast else rng.beta(a, b)
    out[n] = rng.random()  # the generator is left in the same state
    return out


@pytest.mark.parametrize(("a", "b"), [(1.0, 1.0), (1.0, 3.0), (4.0, 1.0), (2.5, 7.0)])
def test_beta_variate_is_generator_beta(a, b):
    fast = _draws(np.random.default_rng(3), a, b, 5000, True)
    reference = _draws(np.random.default_rng(3), a, b, 5000, False)
    np.testing.assert_array_equal(fast, reference)

