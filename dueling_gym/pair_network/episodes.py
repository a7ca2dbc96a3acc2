"""Whole runs of a pair policy in one compiled loop: the batch evaluator of training.

:func:`policy_episode_regret` plays one run of ``horizon`` duels on each of a batch of problems
with the kernels of :mod:`dueling_gym.pair_network.kernels`, in the order the ``learned`` agent
calls them (act, then observe), so it is the agent's twin without the per-step Python calls: a
run of 1000 duels on five arms takes a few milliseconds, which is what makes evolution
strategies over whole runs affordable.  The loop releases the GIL, so threads evaluate several
policies at once.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numba
import numpy as np

from dueling_gym.pair_network.kernels import (
    choose_duel,
    fill_unplayed,
    new_network_caches,
    record_network_duel,
    refresh_network_duel,
    time_value,
)
from dueling_gym.pair_network.safeguard import (
    reset_safeguard,
    safeguard_observe,
    safeguard_origin,
    safeguard_threshold,
    safeguarded_duel,
)
from dueling_gym.pair_network.weights import pack_weights
from dueling_gym.validation import check_bool, check_integer, check_rng

__all__ = ["policy_episode_regret"]


@numba.njit(cache=True, nogil=True)
def _play_episodes(weights, opening_weights, opening_duels, middle_weights, middle_until, probabilities, regrets,
                   action_uniforms, outcome_uniforms, deterministic, safeguard_from, origin,
                   checkpoints):  # pragma: no cover - compiled
    """Cumulative regret of the policy on each problem after each of the increasing
    ``checkpoints`` (the last is the horizon): the agent's kernels in one loop, duels drawn as
    ``outcome_uniform < P[first, second]``.  ``opening_weights`` choose the first
    ``opening_duels`` duels (0: none), ``middle_weights`` the following ones up to duel
    ``middle_until`` (not above ``opening_duels``: none) and ``weights`` the rest, each network
    having read every duel before its turn (the agent's opening, size policy and late policy)."""
    n_problems, n_arms, _ = probabilities.shape
    horizon = outcome_uniforms.shape[1]
    totals = np.zeros((n_problems, checkpoints.size))
    wins = np.empty((n_arms, n_arms), dtype=np.int64)
    evidence = np.empty((n_arms, n_arms))
    status = np.empty((n_arms, n_arms), dtype=np.int8)
    bounds = np.empty((2, n_arms), dtype=np.int64)
    expiry = np.empty(1)
    caches = new_network_caches(n_arms, weights)
    # A network without duels of its own is never read: no second set of caches for it.
    has_opening = opening_duels > 0
    has_middle = middle_until > opening_duels
    opening_caches = new_network_caches(n_arms, opening_weights) if has_opening else caches
    middle_caches = new_network_caches(n_arms, middle_weights) if has_middle else caches
    for problem in range(n_problems):
        wins[:] = 0
        reset_safeguard(evidence, status, bounds, expiry)
        fill_unplayed(caches, weights, wins)
        if has_opening:
            fill_unplayed(opening_caches, opening_weights, wins)
        if has_middle:
            fill_unplayed(middle_caches, middle_weights, wins)
        total = 0.0
        checkpoint = 0
        for t in range(horizon):
            uniform = -1.0 if deterministic else action_uniforms[problem, t]
            if t < opening_duels:
                choice = choose_duel(opening_caches, wins, time_value(t), opening_weights, uniform)
            elif t < middle_until:
                choice = choose_duel(middle_caches, wins, time_value(t), middle_weights, uniform)
            else:
                choice = choose_duel(caches, wins, time_value(t), weights, uniform)
            if safeguard_from > 0:
                threshold = safeguard_threshold(t, safeguard_from, origin)
                choice = safeguarded_duel(wins, threshold, evidence, status, bounds, expiry, choice // n_arms,
                                          choice % n_arms)
            first, second = choice // n_arms, choice % n_arms
            total += regrets[problem, first, second]
            first_won = outcome_uniforms[problem, t] < probabilities[problem, first, second]
            # As the agent observes: the last policy counts every duel, the earlier networks'
            # caches follow while they still have duels to choose.
            record_network_duel(wins, first, second, first_won, caches, weights)
            if has_middle and t + 1 < middle_until:
                refresh_network_duel(wins, first, second, first_won, middle_caches, middle_weights)
            if has_opening and t + 1 < opening_duels:
                refresh_network_duel(wins, first, second, first_won, opening_caches, opening_weights)
            if safeguard_from > 0:
                safeguard_observe(wins, first, second, safeguard_threshold(t + 1, safeguard_from, origin), evidence,
                                  status, bounds, expiry)
            while checkpoint < checkpoints.size and checkpoints[checkpoint] == t + 1:
                totals[problem, checkpoint] = total
                checkpoint += 1
    return totals


def policy_episode_regret(
    weights: Mapping[str, np.ndarray],
    probabilities: np.ndarray,
    regrets: np.ndarray,
    horizon: int,
    rng: np.random.Generator,
    *,
    deterministic: bool = False,
    safeguard_from: int | None = None,
    safeguard_clock: str = "run",
    checkpoints: np.ndarray | list[int] | None = None,
    handover: Mapping[str, np.ndarray] | None = None,
    handover_at: int | None = None,
    preceded_by: Sequence[tuple[Mapping[str, np.ndarray], int]] | None = None,
) -> np.ndarray:
    """Cumulative regret of a pair policy over one run of ``horizon`` duels on each problem.

    The compiled twin of running :class:`~dueling_gym.agents.learned.LearnedAgent` with the same
    weights and no opening (``opening=None``: the weights play every duel; its ``act`` and
    ``observe`` kernels, in the same order), or, with ``handover``, of the agent whose opening is
    ``weights`` and whose size policy is ``handover``, or, with ``preceded_by``, of the agent whose
    late policy is ``weights`` -- used to train and evaluate policies quickly.  The duels and the policy's draws come from ``rng`` (not the same
    streams as the environment's): first ``n_problems x horizon`` uniforms for the policy's
    draws, then as many for the duels' outcomes.

    Parameters
    ----------
    weights : mapping of str to ndarray
        The arrays :data:`~dueling_gym.pair_network.weights.WEIGHT_NAMES` of a pair policy
        (``w0`` and ``s0`` of shape (1,)).
    probabilities, regrets : ndarray of float, shape (n_problems, K, K)
        Preference matrices and the per-duel regret tables (e.g. ``P.regret_matrix("copeland_komiyama")``).
    horizon : int
        Duels per run (at least 0).
    rng : numpy.random.Generator
    deterministic : bool
        Play the highest-scoring duel instead of drawing from the softmax.
    safeguard_from : int or None
        The duel from which the safeguard may replace the policy's duels
        (:mod:`dueling_gym.pair_network.safeguard`), as in the agent; None (default): never.
    safeguard_clock : {"run", "start"}
        The safeguard's threshold, as in the agent: ``log t`` (``"run"``, default) or
        ``log(t / safeguard_from)`` (``"start"``).
    checkpoints : sequence of int, optional
        Strictly increasing times in ``1..horizon`` at which to report the cumulative regret;
        default: the horizon alone.
    handover : mapping of str to ndarray, optional
        The weights of the policy that chooses from duel ``handover_at + 1`` on, having read every
        duel before (the agent with ``opening=`` a file of ``weights``, ``opening_duels=handover_at``
        and ``policy=`` a file of ``handover``).  None (default): ``weights`` choose every duel.
    handover_at : int, optional
        How many duels ``weights`` choose before ``handover`` takes over (at least 1); required
        with ``handover``, refused without it.
    preceded_by : sequence of (weights, int), optional
        One or two fixed policies that choose the duels before ``weights`` do, each up to the duel
        given (strictly increasing): ``[(opening, 100), (size_policy, 1000)]`` is the agent whose
        opening plays 100 duels, whose size policy plays up to duel 1000 and whose late policy,
        ``weights``, plays the rest, every network having read every duel before its turn.  Not
        with ``handover``.

    Returns
    -------
    ndarray of float, shape (n_problems,), or (n_problems, len(checkpoints)) with ``checkpoints``

    Raises
    ------
    ValueError
        The arrays have inconsistent shapes, or a weight is missing or misshapen.
    TypeError
        ``rng`` is no generator, ``horizon`` no integer or ``deterministic`` no bool.
    """
    probabilities = np.ascontiguousarray(probabilities, dtype=np.float64)
    regrets = np.ascontiguousarray(regrets, dtype=np.float64)
    if probabilities.ndim != 3 or probabilities.shape != regrets.shape or probabilities.shape[1] != probabilities.shape[2]:
        raise ValueError(f"probabilities and regrets must both have shape (n_problems, K, K), got "
                         f"{probabilities.shape} and {regrets.shape}")
    rng = check_rng(rng)
    horizon = check_integer("horizon", horizon, minimum=0)
    deterministic = check_bool("deterministic", deterministic)
    start = 0 if safeguard_from is None else check_integer("safeguard_from", safeguard_from, minimum=1)
    origin = safeguard_origin(start, safeguard_clock)
    if checkpoints is None:
        times = np.array([horizon], dtype=np.int64)
    else:
        times = np.asarray(checkpoints)
        if times.ndim != 1 or times.size == 0 or times.dtype.kind not in "iu":
            raise ValueError(f"checkpoints must be a non-empty sequence of integers, got {checkpoints!r}")
        times = times.astype(np.int64)
        if times[0] < 1 or times[-1] > horizon or (np.diff(times) <= 0).any():
            raise ValueError(f"checkpoints must increase strictly within 1..horizon={horizon}, got {times.tolist()}")
    if (handover is None) != (handover_at is None):
        raise ValueError("handover and handover_at go together: pass both (a policy taking over after so many "
                         "duels) or neither")
    packed = pack_weights(weights)
    # The kernel's three networks: the opening, the middle one and the last, which counts every duel.
    last, opening, opening_duels, middle, middle_until = packed, packed, 0, packed, 0
    if handover is not None:
        if preceded_by is not None:
            raise ValueError("handover and preceded_by exclude each other: the trained weights either open the "
                             "run or follow fixed policies")
        last, opening = pack_weights(handover), packed
        opening_duels = check_integer("handover_at", handover_at, minimum=1)
    elif preceded_by is not None:
        phases = _check_phases(preceded_by)
        opening, opening_duels = pack_weights(phases[0][0]), phases[0][1]
        if len(phases) == 2:
            middle, middle_until = pack_weights(phases[1][0]), phases[1][1]
    n_problems = probabilities.shape[0]
    action_uniforms = rng.random((n_problems, horizon))
    outcome_uniforms = rng.random((n_problems, horizon))
    totals = _play_episodes(last, opening, opening_duels, middle, middle_until, probabilities, regrets,
                            action_uniforms, outcome_uniforms, deterministic, start, origin, times)
    return totals[:, 0] if checkpoints is None else totals


def _check_phases(preceded_by: Any) -> list[tuple[Mapping[str, np.ndarray], int]]:
    """``preceded_by`` as a list of one or two (weights, last duel) pairs, the duels strictly increasing."""
    if isinstance(preceded_by, (str, bytes, Mapping)) or not isinstance(preceded_by, Sequence):
        raise TypeError(f"preceded_by must be a sequence of (weights, duels) pairs, got {type(preceded_by).__name__}")
    if not 1 <= len(preceded_by) <= 2:
        raise ValueError(f"preceded_by must hold one or two (weights, duels) pairs, got {len(preceded_by)}")
    phases = []
    for phase in preceded_by:
        if not isinstance(phase, (tuple, list)) or len(phase) != 2 or not isinstance(phase[0], Mapping):
            raise TypeError(f"each entry of preceded_by must be a (weights, duels) pair, got {phase!r:.80}")
        phases.append((phase[0], check_integer("preceded_by duels", phase[1], minimum=1)))
    if len(phases) == 2 and phases[1][1] <= phases[0][1]:
        raise ValueError(f"the duels of preceded_by must increase strictly, got {phases[0][1]} then {phases[1][1]}")
    return phases
