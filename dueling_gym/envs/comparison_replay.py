"""A dueling bandit that replays a log of pairwise comparisons (``ReplayDuel-v0``).

The environment is documented on :class:`ComparisonReplayEnv` (Gymnasium's sections).
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any, SupportsFloat

import numpy as np
from numpy.typing import NDArray

from dueling_gym.envs._duels import DuelEngine
from dueling_gym.envs.dueling_bandit import DuelingBanditEnv
from dueling_gym.problems.comparisons import OUTCOME_TIE, load_comparisons
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.problems.loading import load_problem

__all__ = ["ComparisonReplayEnv", "default_replay_problem", "DEFAULT_REPLAY_PROBLEM", "NO_LOG_ROW", "NO_LOG_OUTCOME"]

#: ``info["log_row"]`` and ``info["log_line"]`` when there is no row or line to name (an ``int``, so
#: that every ``info`` key keeps one type, which Gymnasium's vector environments need).
NO_LOG_ROW = -1
#: The name of the default problem (:func:`default_replay_problem`), accepted as ``preferences=``.
DEFAULT_REPLAY_PROBLEM = "mslr5-condorcet-synthetic-log"
#: ``info["log_outcome"]`` when no logged comparison was replayed.
NO_LOG_OUTCOME = ""

#: The log keys that :func:`~dueling_gym.problems.load_comparisons` writes in the provenance.
_LOG_KEYS = ("arms", "tie_rule", "log_first", "log_second", "log_outcome", "log_lines")
#: What the default problem's synthetic log is drawn from, and how.
_DEFAULT_MATRIX, _DEFAULT_COMPARISONS_PER_PAIR, _DEFAULT_SEED = "mslr5-condorcet", 40, 0
_OUTCOME_NAMES = ("first_won", "tie", "second_won")


class _ReplayEngine(DuelEngine):
    """The shared duel engine, which also tells which uniform decided the last duel."""

    @property
    def last_uniform(self) -> float:
        """The uniform in ``[0, 1)`` drawn by the last :meth:`duel`."""
        return self._uniforms[self._cursor - 1]


class ComparisonReplayEnv(DuelingBanditEnv):
    """A K-armed dueling bandit whose duels replay the outcomes of a comparison log.

    ## Description

    The problem is a :class:`~dueling_gym.problems.PreferenceMatrix` returned by
    :func:`~dueling_gym.problems.load_comparisons`: ``P[i, j]`` is the share of the
    log's comparisons of systems ``i`` and ``j`` that ``i`` won.  Dueling ``(i, j)`` draws one of
    the logged comparisons of that pair uniformly at random, with replacement, and reveals its
    outcome; over many duels the replayed outcomes of each pair have the log's frequencies.
    Regret is computed on the matrix of means, exactly as in ``DuelingBandit-v0``.

    The draw: the pair's logged comparisons are ordered "first arm won", "tie", "second arm
    won" (log order within each group) and the same uniform ``u`` that decides the outcome in
    ``DuelingBandit-v0`` (the first arm wins iff ``u < P[first, second]``) picks comparison
    ``floor(u n)`` of the ``n``.  So the observations are those of ``DuelingBandit-v0`` on the
    same matrix with the same seed, duel for duel, and the replayed comparison agrees with the
    observation: a comparison the first arm won is only replayed when it won.  A replayed tie
    (tie rule ``"half"``) is half a win for each side: its observation is ``1`` when ``u`` falls
    in the first half of the ties' share of ``[0, 1)``.  With the tie rules ``"drop"`` and
    ``"separate"`` the matrix is the win probability of a comparison that has a winner, and only
    those comparisons are replayed.

    Pairs the log never compared (filled by a Bradley–Terry model, ``fill_missing=
    "bradley_terry"``) have nothing to replay: their duels are Bernoulli draws of the fitted
    probability, and ``info`` says so.  A self-duel ``(i, i)`` is a fair coin, as in
    ``DuelingBandit-v0``.

    By default the problem is estimated from a synthetic log: 40 comparisons of every pair of
    the 5 arms of the published ``"mslr5-condorcet"`` matrix (Komiyama et al., ICML 2016,
    Appendix A), each drawn from that matrix with a fixed seed
    (:func:`~dueling_gym.envs.comparison_replay.default_replay_problem`).
    It is a sample: its means differ from the published ones, though its Condorcet winner,
    arm 0, is the same.

    ## Action Space

    ``MultiDiscrete([K, K])``: the pair ``(first, second)`` of arms to duel (arm ``i`` is
    ``problem.provenance["arms"][i]``); ``first == second`` is allowed.  As
    ``DuelingBandit-v0``: tuples, lists and 1-D integer arrays of length 2.

    ## Observation Space

    ``Discrete(2)``: ``1`` if the first arm won the last duel (``0`` after reset), as an
    ``np.int64``.

    ## Rewards

    Minus the instantaneous regret of the duel on the matrix of means under
    ``reward_regret``; see ``DuelingBandit-v0``.

    ## Info

    The keys of ``DuelingBandit-v0`` (``regret``, ``cumulative_regret``, ``t``, ``duel``), and
    after every ``step`` the keys below.  Each keeps one type on every step (a sentinel stands
    for "nothing to name"), as Gymnasium's vector environments need:

    * ``info["replay"]`` (``str``): where the outcome came from: ``"log"`` (a logged comparison),
      ``"bradley_terry"`` (a pair filled by the model) or ``"self_duel"``;
    * ``info["replayed"]`` (``bool``): whether a logged comparison was replayed
      (``info["replay"] == "log"``); when ``False`` the three ``log_`` keys hold their sentinels;
    * ``info["log_row"]`` (``int``): the replayed comparison's row of the log (0-based, in the
      order read), or ``-1`` (:data:`~dueling_gym.envs.comparison_replay.NO_LOG_ROW`) when nothing was replayed;
    * ``info["log_line"]`` (``int``): its line in a CSV, TSV or JSON-lines file (the header of a
      CSV file is line 1), or ``-1`` (a table, a Parquet file, nothing replayed);
    * ``info["log_outcome"]`` (``str``): the replayed outcome from the duel's point of view,
      ``"first_won"``, ``"tie"`` or ``"second_won"``, or ``""`` (:data:`~dueling_gym.envs.comparison_replay.NO_LOG_OUTCOME`) when
      nothing was replayed;
    * ``info["replay_mean"]`` (``float``): the probability that the first arm wins this duel: the
      pair's empirical mean, the fitted Bradley–Terry probability, or ``0.5`` for a self-duel.

    ## Starting State

    No duel played: observation ``0``, regret totals ``0.0``.

    ## Episode End

    Never terminates on its own; ``gymnasium.make`` truncates after ``max_episode_steps``
    duels (default 10 000).

    ## Arguments

    ```python
    problem = load_comparisons("battles.csv")
    env = gym.make("ReplayDuel-v0", preferences=problem)
    ```

    * ``preferences``: the :class:`~dueling_gym.problems.PreferenceMatrix` that
      ``load_comparisons`` returned (a matrix without a log in its provenance is refused), the
      path of a comparison log file (read by ``load_comparisons`` with its defaults), or
      ``"mslr5-condorcet-synthetic-log"`` (:data:`~dueling_gym.envs.comparison_replay.DEFAULT_REPLAY_PROBLEM`), the default, which
      ``gym.spec("ReplayDuel-v0").kwargs`` shows.  ``env.spec`` records the default and a path as
      such, so ``env.spec.to_json()`` works; for any other ``PreferenceMatrix`` it raises a
      ``ValueError`` naming ``preferences`` (pass the log's path to get a serialisable spec).
    * ``reward_regret``: the regret notion of the reward; default ``"condorcet_strong"`` when
      the matrix has a Condorcet winner, ``"copeland_komiyama"`` otherwise.
    * ``render_mode``: as ``DuelingBandit-v0`` (``"ansi"``, ``"rgb_array"``; ``"human"`` is refused).

    ## Version History

    * v0: initial version.  ``info["replayed"]`` was added, and the sentinels ``-1`` and ``""``
      replaced ``None`` in the ``log_`` keys, without a version bump: no transition or reward
      changed.
    """

    def __init__(self, preferences: PreferenceMatrix | str | os.PathLike | None = None, *,
                 reward_regret: str | None = None, render_mode: str | None = None):
        problem = _replay_problem(preferences)
        replay = _ReplayIndex(problem)
        if reward_regret is None:
            reward_regret = "condorcet_strong" if problem.condorcet_winner is not None else "copeland_komiyama"
        super().__init__(problem, reward_regret=reward_regret, render_mode=render_mode)
        self._replay = replay
        self._engine = _ReplayEngine(self.regret_notions)
        self._duel = self._engine.duel
        self._install_problem(problem)

    @classmethod
    def registered_default_kwargs(cls) -> dict[str, Any]:
        """The default problem as the registration's ``kwargs``: ``{"preferences": DEFAULT_REPLAY_PROBLEM}``."""
        return {"preferences": DEFAULT_REPLAY_PROBLEM}

    @staticmethod
    def preferences_json_form(preferences: Any) -> Any:
        """How ``env.spec`` records ``preferences``: the default problem by its name
        (:data:`~dueling_gym.envs.comparison_replay.DEFAULT_REPLAY_PROBLEM`), a log file by its path; any other problem stays an object,
        and ``env.spec.to_json()`` then raises a ``ValueError`` naming ``preferences``."""
        if isinstance(preferences, PreferenceMatrix) and preferences is default_replay_problem():
            return DEFAULT_REPLAY_PROBLEM
        if isinstance(preferences, os.PathLike):
            return os.fspath(preferences)
        return preferences

    def step(self, action: Any) -> tuple[np.int64, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = super().step(action)
        first, second = info["duel"]
        self._replay.describe(info, first, second, self._engine.last_uniform, observation == 1)
        return observation, reward, terminated, truncated, info


class _ReplayIndex:
    """Where each pair's logged comparisons lie, ordered for the draw.

    For the pair ``(lo, hi)``, ``lo < hi``, its replayable comparisons are
    ``order[start : start + size]``, ordered lo-won, tie, hi-won.  Seen from the duel
    ``(hi, lo)`` the order is reversed, which is again first-won, tie, second-won.
    """

    def __init__(self, problem: Any):
        if not isinstance(problem, PreferenceMatrix):
            raise TypeError("preferences must be the PreferenceMatrix returned by "
                            f"dueling_gym.problems.comparisons.load_comparisons, got {type(problem).__name__}")
        provenance = problem.provenance
        absent = [key for key in _LOG_KEYS if key not in provenance]
        if absent:
            raise ValueError(f"problem {problem.name!r} has no comparison log in its provenance (missing "
                             f"{absent}): build it with dueling_gym.problems.comparisons.load_comparisons, or use "
                             "DuelingBandit-v0 for a matrix without a log")
        n_arms = problem.n_arms
        first = np.asarray(provenance["log_first"], dtype=np.int64)
        second = np.asarray(provenance["log_second"], dtype=np.int64)
        outcome = np.asarray(provenance["log_outcome"], dtype=np.int64)
        replayable = np.ones(first.size, dtype=bool) if provenance["tie_rule"] == "half" else outcome != OUTCOME_TIE
        rows = np.flatnonzero(replayable)
        low, high = np.minimum(first[rows], second[rows]), np.maximum(first[rows], second[rows])
        # 0: the lower arm won, 1: tie, 2: the higher arm won.
        low_won = np.where(first[rows] == low, outcome[rows], -outcome[rows])
        group = 1 - low_won
        pair = low * n_arms + high
        self.order: NDArray[np.int64] = rows[np.argsort(pair * 3 + group, kind="stable")]
        sizes = np.bincount(pair, minlength=n_arms * n_arms)
        low_wins = np.bincount(pair[group == 0], minlength=n_arms * n_arms)
        ties = np.bincount(pair[group == 1], minlength=n_arms * n_arms)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        lines = provenance["log_lines"]
        self.lines: list[int] | None = None if lines is None else np.asarray(lines).tolist()
        self.matrix = problem.matrix.tolist()
        self._tables(n_arms, sizes, low_wins, ties, starts)
        self._check_means(problem)

    def _tables(self, n_arms: int, sizes: NDArray[np.int64], low_wins: NDArray[np.int64], ties: NDArray[np.int64],
                starts: NDArray[np.int64]) -> None:
        """Per ordered duel ``first * K + second``: size, first-arm wins, ties, start, reversed."""
        first, second = np.divmod(np.arange(n_arms * n_arms), n_arms)
        reverse = first > second
        pair = np.minimum(first, second) * n_arms + np.maximum(first, second)
        size = sizes[pair]
        self.size = size.tolist()
        self.first_wins = np.where(reverse, size - low_wins[pair] - ties[pair], low_wins[pair]).tolist()
        self.ties = ties[pair].tolist()
        self.start = starts[pair].tolist()
        self.reverse = reverse.tolist()
        self.n_arms = n_arms

    def _check_means(self, problem: PreferenceMatrix) -> None:
        """The replayed frequencies must give the matrix: refuse a provenance that does not match it."""
        size = np.asarray(self.size, dtype=np.float64).reshape(problem.n_arms, problem.n_arms)
        wins = np.asarray(self.first_wins, dtype=np.float64).reshape(size.shape)
        ties = np.asarray(self.ties, dtype=np.float64).reshape(size.shape)
        logged = size > 0
        means = np.divide(wins + 0.5 * ties, size, out=np.full(size.shape, 0.5), where=logged)
        mismatch = np.argwhere(logged & (np.abs(means - problem.matrix) > 1e-9))
        if mismatch.size:
            i, j = mismatch[0]
            raise ValueError(f"the comparison log in the provenance of problem {problem.name!r} gives "
                             f"P[{i}, {j}] = {means[i, j]}, the matrix {problem.matrix[i, j]}: the log does not "
                             "belong to this matrix")
        unlogged = np.argwhere(~logged & ~np.eye(problem.n_arms, dtype=bool))
        filled = {tuple(pair) for pair in problem.provenance.get("filled_pairs", ())}
        arms = problem.provenance["arms"]
        stray = [(arms[i], arms[j]) for i, j in unlogged if i < j and (arms[i], arms[j]) not in filled]
        if stray:
            raise ValueError(f"pairs {stray} have no logged comparison and were not filled by a model")

    def replayed(self, first: int, second: int, uniform: float, first_won: bool) -> dict[str, Any]:
        """The ``info`` entries of a duel decided by ``uniform`` (its outcome ``first_won``)."""
        info: dict[str, Any] = {}
        self.describe(info, first, second, uniform, first_won)
        return info

    def describe(self, info: dict[str, Any], first: int, second: int, uniform: float, first_won: bool) -> None:
        """Write the replay entries of ``info`` for a duel decided by ``uniform`` (outcome ``first_won``)."""
        duel = first * self.n_arms + second
        size = self.size[duel]
        if not size:
            info["replay"] = "self_duel" if first == second else "bradley_terry"
            info["replayed"] = False
            info["log_row"] = info["log_line"] = NO_LOG_ROW
            info["log_outcome"] = NO_LOG_OUTCOME
            info["replay_mean"] = self.matrix[first][second]
            return
        wins, ties = self.first_wins[duel], self.ties[duel]
        position = int(uniform * size)
        # u < P decided the outcome; floor(u n) agrees with it except within rounding of a
        # block boundary, where the replayed comparison is moved into the block of that outcome.
        if first_won:
            if position >= wins + ties:
                position = wins + ties - 1
        elif position < wins:
            position = wins
        elif position >= size:
            position = size - 1
        row = int(self.order[self.start[duel] + (size - 1 - position if self.reverse[duel] else position)])
        info["replay"] = "log"
        info["replayed"] = True
        info["log_row"] = row
        info["log_line"] = NO_LOG_ROW if self.lines is None else int(self.lines[row])
        info["log_outcome"] = _OUTCOME_NAMES[0 if position < wins else (1 if position < wins + ties else 2)]
        info["replay_mean"] = self.matrix[first][second]


def _replay_problem(preferences: Any) -> Any:
    """The problem of the ``preferences`` argument: the default, a log file read by
    :func:`~dueling_gym.problems.load_comparisons`, or the given problem (checked later)."""
    if preferences is None or (isinstance(preferences, str) and preferences == DEFAULT_REPLAY_PROBLEM):
        return default_replay_problem()
    if isinstance(preferences, (str, os.PathLike)):
        path = os.path.expanduser(os.fspath(preferences))
        if not os.path.isfile(path):
            raise ValueError(f"preferences={os.fspath(preferences)!r} is neither {DEFAULT_REPLAY_PROBLEM!r} (the "
                             "default problem) nor a comparison log file (CSV, TSV, JSON lines or Parquet)")
        return load_comparisons(path)
    return preferences


@lru_cache(maxsize=1)
def default_replay_problem() -> PreferenceMatrix:
    """The default problem of ``ReplayDuel-v0``: a synthetic log, loaded with ``load_comparisons``.

    Every pair of the 5 arms of the published ``"mslr5-condorcet"`` matrix is compared 40 times;
    each comparison puts the two arms in a random order and draws the winner from the matrix,
    with ``numpy.random.default_rng(0)``.  The systems are named ``"mslr5-condorcet-0"`` ...
    ``"mslr5-condorcet-4"``, so that arm ``i`` is the matrix's arm ``i``.
    """
    source = load_problem(_DEFAULT_MATRIX)
    rng = np.random.default_rng(_DEFAULT_SEED)
    names = [f"{_DEFAULT_MATRIX}-{arm}" for arm in range(source.n_arms)]
    firsts, seconds, winners = [], [], []
    for i in range(source.n_arms):
        for j in range(i + 1, source.n_arms):
            swapped = rng.random(_DEFAULT_COMPARISONS_PER_PAIR) < 0.5
            i_won = rng.random(_DEFAULT_COMPARISONS_PER_PAIR) < source[i, j]
            for swap, won in zip(swapped.tolist(), i_won.tolist()):
                firsts.append(names[j] if swap else names[i])
                seconds.append(names[i] if swap else names[j])
                winners.append(names[i] if won else names[j])
    table = {"first": firsts, "second": seconds, "winner": winners}
    return load_comparisons(table, name=f"{_DEFAULT_MATRIX} (synthetic log, {_DEFAULT_COMPARISONS_PER_PAIR} "
                                        "comparisons per pair, seed 0)")
