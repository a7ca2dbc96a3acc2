"""The Bradley–Terry fit against an independent, maintained implementation (choix).

choix's iterative Luce spectral ranking (Maystre & Grossglauser, NIPS 2015) reaches the same
maximum-likelihood estimate by another route; with no regularisation (``alpha=0``) the two must
agree to the tolerance of choix's iteration, up to the additive constant (both are centred here).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dueling_gym.problems.bradley_terry import bradley_terry_probabilities, fit_bradley_terry

choix = pytest.importorskip("choix")


def _choix_fit(wins: np.ndarray) -> np.ndarray:
    strengths = choix.ilsr_pairwise_dense(wins, alpha=0.0, tol=1e-14, max_iter=100_000)
    return strengths - strengths.mean()


@settings(max_examples=40, deadline=None)
@given(n_systems=st.integers(2, 9), seed=st.integers(0, 2**32 - 1), fraction=st.booleans())
def test_the_fit_agrees_with_choix_on_random_logs(n_systems, seed, fraction):
    rng = np.random.default_rng(seed)
    # Every pair compared and every system with a win and a loss against each other: the MLE exists.
    wins = rng.integers(1, 60, size=(n_systems, n_systems)).astype(float)
    if fraction:  # ties counted as half a win for each side
        wins += 0.5 * rng.integers(0, 4, size=(n_systems, n_systems))
    np.fill_diagonal(wins, 0.0)
    ours = fit_bradley_terry(wins).log_strengths
    np.testing.assert_allclose(ours, _choix_fit(wins), atol=1e-7)
    assert ours.sum() == pytest.approx(0.0, abs=1e-12)


def test_the_fit_agrees_with_choix_on_a_sparse_connected_log():
    # A chain of neighbours and a few long comparisons: strongly connected, most pairs never met.
    theta = np.array([2.0, 1.1, 0.4, 0.0, -0.3, -1.2, -2.0])
    truth = bradley_terry_probabilities(theta)
    rng = np.random.default_rng(3)
    wins = np.zeros((7, 7))
    for i, j in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (0, 3), (2, 6)]:
        won = int((rng.random(400) < truth[i, j]).sum())
        wins[i, j], wins[j, i] = won, 400 - won
    np.testing.assert_allclose(fit_bradley_terry(wins).log_strengths, _choix_fit(wins), atol=1e-7)


def test_the_fit_does_not_stall_where_the_likelihood_cannot_rank_the_last_steps():
    # Found by the test above: next to the maximum the ascent a Newton step promised was below the
    # rounding of the log-likelihood, every backtracking halving was refused, and the fit gave up.
    fit = fit_bradley_terry([[0, 49], [41, 0]])
    assert fit.log_strengths[0] == pytest.approx(np.log(49 / 41) / 2, abs=1e-12)
