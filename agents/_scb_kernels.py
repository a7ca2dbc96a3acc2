"""Small Numba kernels of SCB and its Copeland PAC solver, shared by both agents.

Zoghi, Karnin, Whiteson, de Rijke. *Copeland Dueling Bandits.* NIPS 2015 (Algorithms 2, 3, 4).

The divergences and KL confidence bounds come from :mod:`dueling_gym.stats`; this module only
adds the formulas that are specific to SCB:

* :func:`kl_sign_test` -- the anytime-valid KL sequential sign test that answers "is
  ``p_ij > 1/2``?" with error probability at most ``δ'`` (Algorithm 2, line 1);
* :func:`kl_bai_level` -- the confidence level ``ρ = ln(4tK/δ) + 2 ln ln t`` of Algorithm 4
  (line 10);
* :func:`kl_bai_should_stop` -- Algorithm 4's stopping rule (line 8) with ``|B| = 1`` added and the
  ``0/0 := 1``, ``x/0 := +∞`` conventions (the paper leaves the ``ε = 0`` case open);
* :func:`squaring_epoch` -- the epoch length ``T_r = 2^(2^r)`` and ``ln(1/δ_r)`` with
  ``δ_r = ln T_r / T_r`` of Algorithm 3 (line 2), computed without overflow.

Every level is passed as a logarithm (``ln(1/δ)``) so that the tiny ``δ_r`` of late epochs never
underflows.
"""

from __future__ import annotations

import math

import numba

from dueling_gym.stats import kl_bernoulli_scalar

__all__ = ["kl_sign_test", "kl_bai_level", "kl_bai_should_stop", "squaring_epoch", "MAX_EPOCH", "BUDGET_CAP"]

#: Largest epoch index whose length ``2^(2^r)`` is represented exactly; later epochs get
#: :data:`BUDGET_CAP` duels (``T_6 = 2^64`` already exceeds any horizon a simulation can reach).
MAX_EPOCH = 5
BUDGET_CAP = 1 << 62


@numba.njit(cache=True, nogil=True)
def kl_sign_test(first_wins: int, total: int, log_inv_level: float) -> int:
    """Decision of the KL sequential sign test after ``total`` duels of a pair (Algorithm 2, line 1).

    Stops as soon as ``n · d(p̂, 1/2) > ln(n (n+1) / δ')`` with ``n = total`` and
    ``p̂ = first_wins / n``; ``log_inv_level = ln(1/δ')``.  By a Chernoff bound and a union
    bound over ``n >= 1`` the wrong sign is returned with probability at most ``δ'``, whatever
    the (non-tied) ``p``; a true tie never stops.

    Returns
    -------
    int
        ``+1`` (the first arm wins the pair), ``-1`` (the second arm wins) or ``0`` (undecided).
    """
    if total <= 0:
        return 0
    n = float(total)
    mean = first_wins / n
    if mean == 0.5:
        return 0
    if n * kl_bernoulli_scalar(mean, 0.5) > math.log(n * (n + 1.0)) + log_inv_level:
        return 1 if mean > 0.5 else -1
    return 0


@numba.njit(cache=True, nogil=True)
def kl_bai_level(t: int, n_arms: int, log_inv_delta: float) -> float:
    """``ρ = ln(4 t K / δ) + 2 ln ln t`` of Algorithm 4, line 10 (used as printed for ``t >= 2``)."""
    return math.log(4.0 * t * n_arms) + log_inv_delta + 2.0 * math.log(math.log(float(t)))


@numba.njit(cache=True, nogil=True)
def kl_bai_should_stop(n_candidates: int, max_lower: float, max_upper: float, epsilon: float) -> bool:
    """Algorithm 4's stop rule: ``|B| = 1`` or ``(1 − max lo) / (1 − max hi) <= 1 + ε``.

    ``0/0 := 1`` (stop) and ``x/0 := +∞`` for ``x > 0`` (continue): with ``ε = 0`` the ratio is
    only ever ``<= 1`` when the best interval is a point (exact scores) or ``B`` has one arm.
    """
    if n_candidates <= 1:
        return True
    numerator = 1.0 - max_lower
    denominator = 1.0 - max_upper
    if denominator <= 0.0:
        return numerator <= 0.0
    return numerator / denominator <= 1.0 + epsilon


@numba.njit(cache=True, nogil=True)
def squaring_epoch(epoch: int) -> tuple[int, float]:
    """``(T_r, ln(1/δ_r))`` of Algorithm 3, line 2: ``T_r = 2^(2^r)``, ``δ_r = ln T_r / T_r``.

    ``ln(1/δ_r) = 2^r ln 2 − ln(2^r ln 2)``.  ``T_r`` is capped at :data:`BUDGET_CAP` for
    ``r > MAX_EPOCH``.
    """
    log_length = (2.0 ** epoch) * math.log(2.0)
    log_inv_delta = log_length - math.log(log_length)
    if epoch <= MAX_EPOCH:
        budget = 1 << (1 << epoch)
    else:
        budget = BUDGET_CAP
    return budget, log_inv_delta
