"""Copeland dueling bandit environment (``CopelandDuel-v0``)."""

from __future__ import annotations

from dueling_gym.envs.dueling_bandit import DuelingBanditEnv, ProblemSpec

__all__ = ["CopelandDuelEnv"]


class CopelandDuelEnv(DuelingBanditEnv):
    """A K-armed dueling bandit scored against the Copeland winners (Zoghi et al. 2015).

    ## Description

    Same dynamics as ``DuelingBandit-v0`` (duel two arms, observe the winner), but the target
    is the set of *Copeland winners* (the arms that beat the most other arms), which always
    exists, whereas a Condorcet winner may not.  The default problem is the published
    ``"multisol"`` matrix of Komiyama et al. (2016): 5 arms, three Copeland winners in a
    cycle and no Condorcet winner, so algorithms that assume one (RUCB, RMED1) pay linear
    regret on it.

    ## Action Space

    ``MultiDiscrete([K, K])``: the pair ``(first, second)`` of arms to duel; ``first ==
    second`` is allowed (pure exploitation, fair-coin outcome).

    ## Observation Space

    ``Discrete(2)``: ``1`` if the first arm won the last duel (``0`` after reset).

    ## Rewards

    Minus the Copeland regret of the duel on the Komiyama scale,
    ``(L_i + L_j - 2 L^(1)) / (2 (K - 1))`` in ``[0, 1]``, where ``L_i`` is the number of arms
    that beat ``i``.  Zoghi et al. plot twice this value (``"copeland_zoghi"``); both scales,
    with Borda regret and (when defined) Condorcet regret, are in ``info["regret"]`` and
    ``info["cumulative_regret"]``; ``info["duel"]`` is the duel actually played,
    ``(first, second)``.

    ## Episode End

    Never terminates on its own; ``gymnasium.make`` truncates after ``max_episode_steps``
    duels (default 10 000).

    ## Arguments

    As ``DuelingBandit-v0``: ``preferences``, ``problem_sampler``, ``n_arms``,
    ``reward_regret`` (default ``"copeland_komiyama"``), ``render_mode`` (``"ansi"``).

    ```python
    env = gym.make("CopelandDuel-v0", preferences="mslr5-noncondorcet")
    env = gym.make("CopelandDuel-v0",
                   problem_sampler=ProblemSampler("no_condorcet_winner", n_arms=6))
    ```
    """

    default_reward_regret = "copeland_komiyama"

    @classmethod
    def default_preferences(cls) -> ProblemSpec | None:
        return "multisol"
