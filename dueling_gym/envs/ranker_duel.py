"""Online ranker evaluation by interleaving as a Gymnasium environment (``RankerDuel-v0``).

The environment is documented on :class:`RankerDuelEnv` (Gymnasium's sections).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numpy.typing import ArrayLike

from dueling_gym.envs._render import blank_frame, frame_labels, preference_frame
from dueling_gym.problems.ltr_files import LTRData, read_ltr_file
from dueling_gym.problems.preference import REGRET_NOTIONS, PreferenceMatrix
from dueling_gym.problems.ranker_budget import ComparisonBudget
from dueling_gym.problems.ranker_problems import RankerEvaluationProblem, ranker_evaluation, synthetic_ltr_data
from dueling_gym.validation import check_action, check_reset_options, check_seed

__all__ = ["RankerDuelEnv", "DEFAULT_SYNTHETIC_DATA"]

_OBSERVATIONS = (np.int64(0), np.int64(1))
#: The synthetic data set of the default problem (see :func:`~dueling_gym.problems.ranker_problems.synthetic_ltr_data`).
DEFAULT_SYNTHETIC_DATA = {"n_queries": 200, "documents_per_query": (10, 40), "n_features": 10, "seed": 0}
#: Uniform rows drawn from ``np_random`` per Generator call (one row per duel).
_UNIFORM_ROWS = 512
#: Provenance facts of ``preferences=`` that must agree with the environment's own problem.
_MATCHING_FACTS = ("rankers", "interleaving", "click_probabilities", "stop_probabilities", "cutoff",
                   "tie_break_seed", "n_rankers")


class RankerDuelEnv(gym.Env[np.int64, np.ndarray]):
    """Rankers duel by interleaving their result lists for a simulated user.

    ## Description

    Online ranker evaluation (Zoghi, Whiteson, Munos & de Rijke, ICML 2014, Section 6): the arms
    are ``K`` rankers of a learning-to-rank data set, by default its feature rankers (ranker
    ``f`` orders a query's documents by feature ``f``).  A duel of rankers ``i`` and ``j`` draws
    a query uniformly, interleaves the two rankers' top-``cutoff`` lists (team-draft
    interleaving, Radlinski, Kurup & Joachims, CIKM 2008, or probabilistic interleave, Hofmann,
    Whiteson & de Rijke, CIKM 2011), simulates a user's clicks with a cascade click model
    (Hofmann, Whiteson & de Rijke, ACM TOIS 2013) and credits the clicks to the rankers: the one
    with more credit wins.  A tie (no clicks, or equal credit) is settled by a fair coin, so the
    first ranker wins with probability ``P[i, j]`` = P(win) + P(tie) / 2, the entry of the
    preference matrix estimated by :func:`~dueling_gym.problems.ranker_evaluation`.

    Nobody knows the exact ``P`` of real rankers: the **regret is measured against the
    Monte-Carlo estimate** that the environment computes when it is made (or that is given as
    ``preferences=``), whose standard errors are in ``env.unwrapped.problem.provenance``.

    The default problem (no ``data``) is a small **synthetic** data set generated from a fixed
    seed (:data:`~dueling_gym.envs.ranker_duel.DEFAULT_SYNTHETIC_DATA`: 200 queries of 10 to 40 documents,
    10 features, grades
    0-4 with MSLR-like frequencies), with its 10 feature rankers, team-draft interleaving and the
    perfect click model; it is not drawn from any real data set.

    ## Action Space

    ``MultiDiscrete([K, K])``: the pair ``(first, second)`` of rankers to compare; ``first ==
    second`` is allowed (its outcome is a fair coin in distribution).  Tuples, lists and 1-D
    integer arrays of length 2 are accepted; other types raise ``TypeError``, rankers outside
    ``[0, K)`` ``ValueError``.

    ## Observation Space

    ``Discrete(2)``: ``1`` if the first ranker won the last duel (``0`` after reset), as an
    ``np.int64``.

    ## Rewards

    Minus the regret of the duel under ``reward_regret`` (default ``"copeland_komiyama"``,
    defined on every problem; the Condorcet notions are available when the estimated matrix has
    a Condorcet winner), computed on the estimated matrix.  See
    :data:`~dueling_gym.problems.preference.REGRET_NOTIONS`.

    ## Info

    Fresh dicts of Python values:

    * ``info["regret"][notion]`` and ``info["cumulative_regret"][notion]``: this duel's regret and
      the episode's running total, for every notion defined on the estimated matrix;
    * ``info["t"]``: duels so far in the episode;
    * ``step`` only: ``info["duel"]`` (the duel played, ``(first, second)``), ``info["query"]`` (the
      index of the query drawn), ``info["credit"]`` (the clicks credited to each ranker: counts for
      team draft, expected counts for probabilistic interleave) and ``info["tie"]`` (whether the
      comparison tied and the coin decided).

    ## Starting State

    No duel played: observation ``0``, regret totals ``0.0``.  The problem is fixed when the
    environment is made; ``reset(seed=s)`` fixes the queries, interleavings and clicks.

    ## Episode End

    Never terminates on its own; ``gymnasium.make`` truncates after ``max_episode_steps`` duels.

    ## Arguments

    ```python
    env = RankerDuelEnv("MSLR-WEB10K/Fold1/train.txt", interleaving="probabilistic",
                        click_model="navigational", cache_dir="~/.cache/dueling-gym")
    ```

    * ``data``: a LETOR file, an :class:`~dueling_gym.problems.LTRData`, or ``None`` for
      the synthetic default.
    * ``single_document_queries``, ``group_file``, ``missing``, ``lower_is_better``,
      ``max_decompressed_bytes``: how to read a ``data`` file, as
      :func:`~dueling_gym.problems.read_ltr_file` (drop one-document queries, a side file of
      query sizes, ``NULL`` values, rank-valued features, the limit on a compressed file's
      text); given with data that is not a file path, they are refused (``ValueError``).
    * ``rankers``, ``interleaving``, ``click_model``, ``cutoff``, ``tie_break_seed``: as
      :class:`~dueling_gym.problems.RankerEvaluationProblem`.
    * ``preferences``: the matrix of :func:`~dueling_gym.problems.ranker_evaluation` for the same data and settings
      (checked against its provenance: the settings, and the digest of the data's top lists and
      grades, so a matrix estimated on other data is refused); default: estimated when the environment is made by
      :func:`~dueling_gym.problems.ranker_evaluation` with its default budget (sequential: each
      pair plays until its interval settles which side of 1/2 it is on, see
      :mod:`dueling_gym.problems.ranker_budget`), or ``comparisons_per_pair`` comparisons per
      pair, or the rule ``budget``; seed ``estimate_seed``, ``jobs`` threads and the cache
      folder ``cache_dir``.  Each pair's status and the probability that the estimate's winners
      are right are in ``env.unwrapped.problem.provenance``.
    * ``reward_regret``: the regret notion of the reward.
    * ``render_mode``: ``"ansi"`` (win counts as text) or ``"rgb_array"`` (heat maps of the
      empirical preference matrix and of the duel counts, an ``(H, W, 3)`` ``uint8`` array).

    ## Version History

    * v0: initial version.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    default_reward_regret = "copeland_komiyama"

    def __init__(self, data: LTRData | str | os.PathLike | None = None, *, rankers: str | ArrayLike = "features",
                 interleaving: str = "team_draft", click_model: Any = "perfect", cutoff: int = 10,
                 tie_break_seed: int = 0, preferences: PreferenceMatrix | None = None,
                 comparisons_per_pair: int | None = None, budget: ComparisonBudget | None = None,
                 estimate_seed: int = 0, jobs: int | None = 1,
                 cache_dir: str | os.PathLike | None = None, reward_regret: str | None = None,
                 render_mode: str | None = None, single_document_queries: Literal["error", "drop"] = "error",
                 group_file: str | os.PathLike | Literal[False] | None = None,
                 missing: Literal["error", "zero", "worst"] = "error", lower_is_better: bool | Sequence[int] = False,
                 max_decompressed_bytes: int | None = None):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.render_mode = render_mode
        reading: dict[str, Any] = {"single_document_queries": single_document_queries, "group_file": group_file,
                                   "missing": missing, "lower_is_better": lower_is_better,
                                   "max_decompressed_bytes": max_decompressed_bytes}
        if isinstance(data, (str, os.PathLike)):
            if isinstance(group_file, (str, os.PathLike)):
                reading["group_file"] = os.path.expanduser(os.fspath(group_file))
            data = read_ltr_file(os.path.expanduser(os.fspath(data)), **reading)
        else:
            # Options of a file read would be silently ignored for data already in memory.
            given = [name for name, value in reading.items()
                     if not (value is None or value is False or (isinstance(value, str) and value == "error")
                             or (isinstance(value, (list, tuple)) and not value))]
            if given:
                raise ValueError(f"the read options {', '.join(given)} apply only when data is the path of a "
                                 "learning-to-rank file (data already read carries its own ascending_columns)")
            if data is None:
                data = synthetic_ltr_data(**DEFAULT_SYNTHETIC_DATA)
        settings = dict(rankers=rankers, interleaving=interleaving, click_model=click_model, cutoff=cutoff,
                        tie_break_seed=tie_break_seed)
        self.ranker_problem = RankerEvaluationProblem(data, **settings)
        if preferences is not None and (comparisons_per_pair is not None or budget is not None):
            raise ValueError("comparisons_per_pair and budget decide how preferences are estimated; they do not apply "
                             "to preferences given as a matrix")
        if preferences is None:
            preferences = ranker_evaluation(data, **settings, comparisons_per_pair=comparisons_per_pair,
                                            budget=budget, seed=estimate_seed, jobs=jobs, progress=False,
                                            cache_dir=None if cache_dir is None else os.path.expanduser(cache_dir))
        self.problem: PreferenceMatrix = self._matching(preferences)
        self.n_arms = self.problem.n_arms
        self.regret_notions = self.problem.defined_regret_notions
        reward_regret = self.default_reward_regret if reward_regret is None else reward_regret
        if reward_regret not in REGRET_NOTIONS:
            raise ValueError(f"unknown reward_regret {reward_regret!r}; choose one of {sorted(REGRET_NOTIONS)}")
        if reward_regret not in self.regret_notions:
            raise ValueError(f"reward_regret={reward_regret!r} is not defined on the estimated matrix (no Condorcet "
                             f"winner); defined notions: {list(self.regret_notions)}")
        self.reward_regret = reward_regret
        self._reward_column = self.regret_notions.index(reward_regret)
        regrets = self.problem.duel_table(self.regret_notions)[:, 1:]
        self._regrets = [tuple(row) for row in regrets.tolist()]
        self.action_space = spaces.MultiDiscrete([self.n_arms, self.n_arms])
        self.observation_space = spaces.Discrete(2)
        self._width = self.ranker_problem.uniforms_per_comparison
        self._has_reset = False
        self._start_episode()

    def _matching(self, preferences: Any) -> PreferenceMatrix:
        """``preferences`` if it is the estimate for this environment's rankers and settings."""
        if not isinstance(preferences, PreferenceMatrix):
            raise TypeError(f"preferences must be the PreferenceMatrix of ranker_evaluation, got "
                            f"{type(preferences).__name__}")
        facts = self.ranker_problem.describe()
        names = _MATCHING_FACTS + (("ranker_weights_sha256",) if "ranker_weights_sha256" in facts else ())
        for name in names:
            if name not in preferences.provenance:
                raise ValueError(f"preferences has no {name!r} in its provenance: pass the matrix returned by "
                                 "ranker_evaluation for this data")
            if preferences.provenance[name] != facts[name]:
                raise ValueError(f"preferences was estimated with {name}={preferences.provenance[name]!r}, the "
                                 f"environment uses {facts[name]!r}")
        # Same settings on other data give another matrix: the digest of what the comparisons read
        # (top lists, grades) must be this environment's, or the regret uses the wrong winner.
        estimated_on = preferences.provenance.get("comparison_data_sha256")
        if estimated_on is None:
            raise ValueError("preferences has no 'comparison_data_sha256' in its provenance: pass the matrix returned "
                             "by ranker_evaluation for this data")
        if estimated_on != self.ranker_problem.comparison_data_sha256:
            raise ValueError(f"preferences was estimated on other data than the environment's (data digest "
                             f"{str(estimated_on)[:12]}..., the environment's data gives "
                             f"{self.ranker_problem.comparison_data_sha256[:12]}...): estimate it with "
                             "ranker_evaluation on this data and these settings")
        return preferences

    def _start_episode(self) -> None:
        self._uniforms = np.empty((0, self._width + 1))
        self._cursor = 0
        self._counts = np.zeros((self.n_arms, self.n_arms), dtype=np.int64)
        self._first_wins = np.zeros((self.n_arms, self.n_arms), dtype=np.int64)
        self._cumulative = [0.0] * len(self.regret_notions)
        self._t = 0

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.int64, dict[str, Any]]:
        check_reset_options(options)
        super().reset(seed=check_seed("seed", seed, allow_sequence=False))
        self._start_episode()
        self._has_reset = True
        zeros = dict.fromkeys(self.regret_notions, 0.0)
        return _OBSERVATIONS[0], {"regret": zeros, "cumulative_regret": dict(zeros), "t": 0}

    def step(self, action: Any) -> tuple[np.int64, SupportsFloat, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise gym.error.ResetNeeded("call reset() before step()")
        first, second = check_action(action, self.n_arms)
        if self._cursor == self._uniforms.shape[0]:
            self._uniforms = self.np_random.random((_UNIFORM_ROWS, self._width + 1))
            self._cursor = 0
        row = self._uniforms[self._cursor]
        self._cursor += 1
        comparison = self.ranker_problem.compare_with_uniforms(first, second, row)
        tie = comparison.outcome == 0
        # A tie is settled by the row's last uniform, a fair coin.
        first_won = comparison.outcome > 0 or (tie and float(row[self._width]) < 0.5)
        self._counts[first, second] += 1
        if first_won:
            self._first_wins[first, second] += 1
        regrets = self._regrets[first * self.n_arms + second]
        self._cumulative = [total + regret for total, regret in zip(self._cumulative, regrets)]
        self._t += 1
        notions = self.regret_notions
        info = {
            "regret": dict(zip(notions, regrets)),
            "cumulative_regret": dict(zip(notions, self._cumulative)),
            "t": self._t,
            "duel": (first, second),
            "query": comparison.query,
            "credit": (comparison.credit_first, comparison.credit_second),
            "tie": tie,
        }
        return _OBSERVATIONS[first_won], -regrets[self._reward_column], False, False, info

    # ------------------------------------------------------------------ inspection
    @property
    def win_counts(self) -> np.ndarray:
        """How often ranker ``i`` beat ranker ``j`` this episode, ``W[i, j]`` (self-duels on the diagonal)."""
        losses = self._counts - self._first_wins
        return self._first_wins + losses.T

    @property
    def cumulative_regret(self) -> dict[str, float]:
        """Regret accumulated this episode, per notion."""
        return dict(zip(self.regret_notions, self._cumulative))

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the win counts as text; ``"rgb_array"``: heat maps of the empirical preference
        matrix and of the duel counts between rankers, with axis labels and colour bars, under a
        title naming the environment, its problem and the step ``t``, an ``(H, W, 3)`` ``uint8``
        array."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            if not self._has_reset:
                return blank_frame(**frame_labels(self), contestant="ranker")
            return preference_frame(self.win_counts, t=self._t, **frame_labels(self), contestant="ranker")
        wins = self.win_counts
        width = max(4, len(str(int(wins.max()))) + 1)
        lines = [f"t={self._t}  problem={self.problem.name}  "
                 + "  ".join(f"{k}={v:.3f}" for k, v in self.cumulative_regret.items()),
                 "W[i,j]".rjust(7) + "".join(str(j).rjust(width) for j in range(self.n_arms))]
        for i in range(self.n_arms):
            lines.append(str(i).rjust(7) + "".join(str(int(w)).rjust(width) for w in wins[i]))
        return "\n".join(lines) + "\n"
