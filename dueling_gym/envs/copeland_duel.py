"""Copeland dueling bandit environment (``CopelandDuel-v0``).

The environment is documented on :class:`~dueling_gym.envs.CopelandDuelEnv` (Gymnasium's sections).
"""

from __future__ import annotations

from dueling_gym.envs.dueling_bandit import DuelingBanditEnv, PreferencesLike

__all__ = ["CopelandDuelEnv"]


class CopelandDuelEnv(DuelingBanditEnv):
    """A K-armed dueling bandit scored against the Copeland winners (Zoghi et al. 2015).

    ## Description

    Same dynamics as ``DuelingBandit-v0`` (duel two arms, observe the winner: the first arm
    wins iff a uniform from ``np_random`` is below ``P[first, second]``), but the target is the
    set of *Copeland winners* (the arms that beat the most other arms), which always exists,
    whereas a Condorcet winner may not (Zoghi, Karnin, Whiteson & de Rijke, NeurIPS 2015).  The
    default problem is the published ``"multisol"`` matrix of Komiyama, Honda & Nakagawa (ICML
    2016): 5 arms, three Copeland winners in a cycle and no Condorcet winner, so algorithms
    that assume one (RUCB, RMED1) pay linear regret on it.

    ## Action Space

    ``MultiDiscrete([K, K])``: the pair ``(first, second)`` of arms to duel; ``first ==
    second`` is allowed (pure exploitation, fair-coin outcome).  Tuples, lists and 1-D integer
    arrays of length 2 are accepted; other types raise ``TypeError``, arms outside ``[0, K)``
    ``ValueError``.

    ## Observation Space

    ``Discrete(2)``: ``1`` if the first arm won the last duel (``0`` after reset), as an
    ``np.int64``.

    ## Rewards

    Minus the Copeland regret of the duel on the Komiyama scale,
    ``(L_i + L_j - 2 L^(1)) / (2 (K - 1))`` in ``[0, 1]``, where ``L_i`` is the number of arms
    that beat ``i`` and ``L^(1)`` its minimum: zero exactly when both arms are Copeland
    winners.  Zoghi et al. use twice this value without ties (``"copeland_zoghi"``, in
    ``[0, 2]``); ``reward_regret=`` selects any notion defined on the problem.

    ## Info

    As ``DuelingBandit-v0``, fresh dicts of Python values:

    * ``info["regret"][notion]`` and ``info["cumulative_regret"][notion]``: this duel's regret
      and the episode's running total, for both Copeland scales, Borda and (when the problem
      has a Condorcet winner) the two Condorcet notions;
    * ``info["t"]``: duels so far in the episode;
    * ``info["duel"]`` (``step`` only): the duel actually played, ``(first, second)``.

    ## Starting State

    No duel played: observation ``0``, regret totals ``0.0``; with ``problem_sampler`` a new
    problem is drawn from ``np_random`` at every reset.

    ## Episode End

    Never terminates on its own; ``gymnasium.make`` truncates after ``max_episode_steps``
    duels (default 10 000).

    ## Arguments

    As ``DuelingBandit-v0``: ``preferences`` (default ``"multisol"``), ``problem_sampler``,
    ``n_arms``, ``reward_regret`` (default ``"copeland_komiyama"``), ``render_mode``
    (``"ansi"``: win counts as text; ``"rgb_array"``: heat maps of the empirical preference
    matrix and of the duel counts, an ``(H, W, 3)`` ``uint8`` array).

    ```python
    env = gym.make("CopelandDuel-v0", preferences="mslr5-noncondorcet")
    env = gym.make("CopelandDuel-v0",
                   problem_sampler=ProblemSampler("no_condorcet_winner", n_arms=6))
    ```

    ## Version History

    * v0: initial version.  The ``rgb_array`` render mode was added later without a version
      bump: it changes no transition, reward or info.
    """

    default_reward_regret = "copeland_komiyama"

    @classmethod
    def default_preferences(cls) -> PreferencesLike | None:
        return "multisol"
