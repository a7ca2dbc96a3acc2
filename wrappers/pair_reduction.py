"""The pair reduction of Sup-KLUCB as a Gymnasium wrapper: a dueling bandit seen as a K̄-armed bandit."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dueling_gym.reductions import PairReduction
from dueling_gym.validation import check_discrete_action
from dueling_gym.wrappers._checks import pair_action_arms

__all__ = ["PairReductionWrapper"]


class PairReductionWrapper(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Turn a K-armed dueling environment into a cardinal multi-armed bandit over pairs of arms.

    The reduction of Agrawal and Chaporkar (*KLUCB Approach to Copeland Bandits*, 2019, §3):
    every unordered pair of arms, self-pairs included, is one arm ("super-arm") of an
    ordinary bandit, ``K̄ = K (K + 1) / 2`` of them in lexicographic order
    (``0 <-> (0, 0), 1 <-> (0, 1), ..., K̄ - 1 <-> (K - 1, K - 1)``).  Any multi-armed bandit
    agent (UCB1, KL-UCB, Thompson sampling) then runs on the dueling problem unchanged;
    KL-UCB on this wrapper is Sup-KLUCB's composition.  The bookkeeping is
    :class:`dueling_gym.reductions.PairReduction`, shared with the compiled
    :class:`~dueling_gym.agents.SupKLUCB` agent.

    ## Action Space

    ``Discrete(K (K + 1) / 2)``: super-arm ``k`` duels the pair ``(i, j) = reduction.pair(k)``,
    ``i <= j``, with ``i`` as the first arm (a self-pair is a self-duel).

    ## Observation Space

    The wrapped environment's, unchanged: ``Discrete(2)``, ``1`` iff the first arm ``i`` (the
    lower index) won the duel.

    ## Rewards

    The **estimated** mean of the played super-arm **after** the duel has been recorded:
    ``reward = Sup_i * Sup_j`` (``Sup_i ** 2`` for a self-pair), where ``Sup`` are the plug-in
    normalised scores (Copeland: ``#{j != i : mu_hat_ij > 1/2} / (K - 1)``, ties at 1/2 count
    for neither side; Borda: ``mean_{j != i} mu_hat_ij`` with 1/2 for unplayed pairs) of the
    empirical preference matrix built from every non-self duel of the episode so far,
    including this step's.  Rewards lie in ``[0, 1]`` and are Python floats.  As in the
    paper, a duel outcome is not a sample of its super-arm's mean: one duel can move the
    means of up to ``2K - 1`` super-arms.  The wrapped environment's reward (minus the
    regret) is dropped; the regret stays in ``info``.

    ## Info

    The wrapped environment's ``info`` (every regret notion, per step and cumulative, and
    ``t``: one underlying duel per step, so the accounting is exact), plus
    ``info["duel"]``, the duel the environment played as it reports it: ``(i, j)`` unless a
    wrapper between them remaps actions (``(i, j)`` is filled in when the environment reports
    no duel).

    ## Arguments

    * ``env``: a K-armed dueling environment (``MultiDiscrete([K, K])`` actions).
    * ``score``: ``"copeland"`` (default) or ``"borda"``, the plug-in score ``Sup``.

    ```python
    env = PairReductionWrapper(gym.make("CopelandDuel-v0", preferences="multisol"))
    agent = KLUCB(env.action_space.n, seed=0)
    ```

    The statistics are reset at every ``reset``; ``reduction`` exposes them (e.g.
    ``wrapper.reduction.best_arm()``, the reduction's recommended arm).
    """

    def __init__(self, env: gym.Env, score: str = "copeland"):
        gym.utils.RecordConstructorArgs.__init__(self, score=score)
        gym.Wrapper.__init__(self, env)
        n_arms = pair_action_arms(env, type(self).__name__)
        self.n_arms = n_arms
        self.reduction = PairReduction(n_arms, score)
        self.score = self.reduction.score
        self._pairs = [tuple(int(a) for a in pair) for pair in self.reduction.pairs]
        self.action_space = spaces.Discrete(self.reduction.n_super_arms)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the wrapped environment and the reduction's statistics; its observation and
        ``info`` are returned unchanged."""
        observation, info = self.env.reset(seed=seed, options=options)
        self.reduction.reset()
        return observation, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Duel the pair of super-arm ``action``; the reward is ``Sup_i * Sup_j`` for that
        pair, as described under *Rewards*.

        ``info`` is the wrapped environment's, with ``info["duel"]`` added when it has none.
        """
        k = check_discrete_action(action, self.reduction.n_super_arms)
        first, second = self._pairs[k]
        observation, _, terminated, truncated, info = self.env.step(np.array((first, second), dtype=np.int64))
        self.reduction.update(first, second, bool(observation))
        if "duel" not in info:  # the environment's own report wins: a wrapper below may remap the duel
            info = {**info, "duel": (first, second)}
        return observation, self.reduction.mean(k), terminated, truncated, info
