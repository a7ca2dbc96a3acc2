"""Beat the Winner: a queue of challengers and matches of growing length.

Peköz, Ross, Zhang. *Dueling Bandit Problems.* Probability in the Engineering and
Informational Sciences 36(2), 2022 (first online 2020), the "beat the winner" rule.

The arms start in a uniformly random queue.  The first two arms play a match; in the ``r``-th
match the first arm to win ``r`` duels wins the match.  The winner stays (it is the incumbent of
the next match), the loser goes to the back of the queue and the arm at the front of the queue
is the next challenger.  Matches grow by one duel-win each time, so once the Condorcet winner is
the incumbent it loses a match with a probability that decays geometrically in ``r``: the
number of duels without the Condorcet winner (the weak regret) stays bounded.
"""

from __future__ import annotations

import numba
import numpy as np

from dueling_gym.agents.base import KernelDuelingAgent, PaperLink
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.validation import SeedLike

__all__ = ["BeatTheWinner"]


class BeatTheWinnerState(AgentState, fields=[
    "rng",
    "queue",             # ring buffer of the waiting arms (K - 2 of them), length K
    "head",              # index of the front of the queue in the ring
    "incumbent",
    "challenger",
    "incumbent_wins",    # duels won in the current match
    "challenger_wins",
    "match",             # r: the current match is won by the first to win r duels
    "t",
]):
    """Numba-side state of :class:`BeatTheWinner`."""


@numba.njit(cache=True, nogil=True)
def beat_the_winner_act(state):
    return state.incumbent, state.challenger


@numba.njit(cache=True, nogil=True)
def beat_the_winner_observe(state, first, second, first_won):
    state.t += 1
    # Only the duel of the current match counts (in either orientation).
    if first == state.incumbent and second == state.challenger:
        incumbent_won = first_won
    elif first == state.challenger and second == state.incumbent:
        incumbent_won = not first_won
    else:
        return
    if incumbent_won:
        state.incumbent_wins += 1
    else:
        state.challenger_wins += 1
    if state.incumbent_wins < state.match and state.challenger_wins < state.match:
        return
    if state.challenger_wins == state.match:
        state.incumbent, state.challenger = state.challenger, state.incumbent
    # The loser (now in ``challenger``) joins the back; the front of the queue challenges next.
    n_arms = state.queue.shape[0]
    n_waiting = n_arms - 2
    if n_waiting > 0:
        state.queue[(state.head + n_waiting) % n_arms] = state.challenger
        state.challenger = state.queue[state.head]
        state.head = (state.head + 1) % n_arms
    state.incumbent_wins = 0
    state.challenger_wins = 0
    state.match += 1


@numba.njit(cache=True, nogil=True)
def beat_the_winner_recommend(state):
    return state.incumbent


@register_agent("beat_the_winner", target="condorcet")
class BeatTheWinner(KernelDuelingAgent):
    """Beat the Winner (Peköz, Ross & Zhang, Probab. Eng. Inf. Sci. 2022): winner stays, the ``r``-th match is first to ``r`` wins.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K >= 2``.
    seed : int, optional
        Seed of the agent's generator (the initial queue is a uniform permutation drawn from it
        at reset; nothing else is random).

    Notes
    -----
    Made for weak regret with a Condorcet winner: once the winner leads, the matches it plays
    lengthen and the chance of losing one shrinks geometrically.  It never plays a self-duel,
    so its strong regret grows linearly.  The duel is always ``(incumbent, challenger)``.  A
    public Java implementation also offers a variant that restarts the match length at 1 when
    the incumbent loses (for non-stationary problems); the paper's rule never restarts it, which
    is what we follow.  :meth:`~dueling_gym.agents.DuelingAgent.recommend` returns the incumbent.  ``O(1)`` per step.
    """

    paper = (PaperLink("Probability in the Engineering and Informational Sciences 36(2), 2022"),)
    guarantee = (
        "Bounded expected weak regret: with a Condorcet winner, the expected number of duels in which it does "
        "not play stays bounded as ``T`` grows, because matches lengthen and the Condorcet winner, once "
        "incumbent, loses one with a geometrically decaying probability (Peköz, Ross & Zhang, Probab. Eng. "
        "Inf. Sci. 36(2), 2022; no theorem number cited); its strong regret is linear, since the incumbent "
        "always plays a challenger."
    )

    act_kernel = beat_the_winner_act
    observe_kernel = beat_the_winner_observe
    recommend_kernel = beat_the_winner_recommend

    def __init__(self, n_arms: int, *, seed: SeedLike = None):
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        order = self.rng.permutation(self.n_arms).astype(np.int64)
        queue = np.zeros(self.n_arms, dtype=np.int64)
        queue[: self.n_arms - 2] = order[2:]
        self.state = BeatTheWinnerState(
            rng=self.rng, queue=queue, head=0, incumbent=int(order[0]), challenger=int(order[1]), incumbent_wins=0,
            challenger_wins=0, match=1, t=0,
        )
