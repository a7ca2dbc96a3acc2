"""The K-armed dueling bandit as a Gymnasium environment (``DuelingBandit-v0``).

The environment is documented on :class:`~dueling_gym.envs.DuelingBanditEnv` (Gymnasium's sections).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any, Callable, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec
from numpy.typing import ArrayLike

from dueling_gym.envs._duels import DuelEngine
from dueling_gym.envs._render import blank_frame, frame_labels, preference_frame
from dueling_gym.problems.generators import ProblemSampler
from dueling_gym.problems.preference import REGRET_NOTIONS, PreferenceMatrix, defined_notions
from dueling_gym.problems.loading import as_preference_matrix
from dueling_gym.validation import check_action, check_integer, check_n_arms, check_reset_options, check_seed

__all__ = ["DuelingBanditEnv", "PreferencesLike"]

#: What the ``preferences`` argument of the environments accepts: a problem, a matrix, or a name.
PreferencesLike = PreferenceMatrix | ArrayLike | str
_OBSERVATIONS = (np.int64(0), np.int64(1))


class _OpaqueSamplerSpec(EnvSpec):
    """The spec of an environment whose ``problem_sampler`` or ``preferences`` has no JSON form.

    It remakes the environment in-process like any spec (``gym.make(env.spec)``); only
    :meth:`to_json` differs: it names the argument in its error, where ``json.dumps`` would only
    report "Object of type function is not JSON serializable".
    """

    def to_json(self) -> str:
        sampler = self.kwargs.get("problem_sampler")
        if sampler is not None and not isinstance(sampler, Mapping):
            reason = ""
            if callable(getattr(sampler, "to_json", None)):
                try:
                    sampler.to_json()
                except (TypeError, ValueError) as error:
                    reason = f" ({error})"
            raise ValueError(
                f"the spec of {self.id} cannot be written to JSON: problem_sampler={sampler!r} has no JSON form"
                f"{reason}; pass a ProblemSampler (a BipartiteProblemSampler for CombinatorialDuel-v0) or its "
                "to_json() dict instead to make the spec serialisable"
            )
        preferences = self.kwargs.get("preferences")
        if preferences is not None and not _is_json(preferences):
            raise ValueError(
                f"the spec of {self.id} cannot be written to JSON: preferences={preferences!r} has no JSON form "
                "(a problem whose provenance the environment needs); pass what the problem was made from instead "
                "(a comparison log's path for ReplayDuel-v0) to make the spec serialisable"
            )
        return super().to_json()


def _is_json(value: Any) -> bool:
    """Whether ``json.dumps`` writes ``value`` (an environment argument recorded in a spec)."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _sampler_form(sampler: Any, sampler_class: type) -> tuple[Any, bool]:
    """``(recorded form, serialisable)`` of a ``problem_sampler`` argument."""
    if isinstance(sampler, sampler_class):
        try:
            return sampler.to_json(), True
        except TypeError:  # an option JSON cannot hold: the sampler stays an object
            return sampler, False
    return sampler, isinstance(sampler, Mapping)


def _record_sampler_as_json(spec: EnvSpec | None, sampler_class: type,
                            preferences_form: Callable[[Any], Any] | None = None,
                            give_way: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> EnvSpec | None:
    """``spec`` with its ``kwargs`` recorded in JSON form where they have one.

    ``gymnasium.make`` records the constructor's keyword arguments in ``env.spec``, which
    ``EnvSpec.to_json`` cannot serialise when they hold objects.  A ``sampler_class``
    ``problem_sampler`` is replaced by its JSON form, and ``preferences`` by
    ``preferences_form(preferences)`` (a shipped problem's name, a nested list, or the object
    itself when it has no JSON form); the environments accept these forms and rebuild the same
    problem, so the recorded spec stays faithful and serialisable.  ``give_way`` drops a
    registered default that another argument replaces.  Arguments without a JSON form (any other
    callable, a problem whose provenance matters) make the spec an :class:`_OpaqueSamplerSpec`,
    whose ``to_json`` names the argument.
    """
    if spec is None:
        return spec
    kwargs = dict(spec.kwargs)
    if give_way is not None:
        kwargs = give_way(kwargs)
    serialisable = True
    if kwargs.get("problem_sampler") is not None:
        kwargs["problem_sampler"], serialisable = _sampler_form(kwargs["problem_sampler"], sampler_class)
    if preferences_form is not None and kwargs.get("preferences") is not None:
        kwargs["preferences"] = preferences_form(kwargs["preferences"])
        serialisable = serialisable and _is_json(kwargs["preferences"])
    spec_class: type[EnvSpec] = EnvSpec if serialisable else _OpaqueSamplerSpec
    unchanged = kwargs.keys() == spec.kwargs.keys() and all(kwargs[key] is spec.kwargs[key] for key in kwargs)
    if type(spec) is spec_class and unchanged:
        return spec
    # Rebuilt rather than mutated: gymnasium.make may still hold the kwargs dict it passed in.
    fields = {field.name: getattr(spec, field.name) for field in dataclasses.fields(EnvSpec) if field.init}
    fields["kwargs"] = kwargs
    return spec_class(**fields)


def _matrix_form(preferences: Any) -> Any:
    """The JSON form of a fixed ``preferences`` of ``DuelingBandit-v0``: a shipped problem by its
    name, any other :class:`~dueling_gym.problems.PreferenceMatrix` or array as its nested list
    of floats (which rebuilds the same matrix, hence the same duels)."""
    if isinstance(preferences, PreferenceMatrix):
        from dueling_gym.problems.datasets import list_problems
        from dueling_gym.problems.loading import load_problem

        if preferences.name in list_problems() and load_problem(preferences.name) == preferences:
            return preferences.name
        return preferences.matrix.tolist()
    if isinstance(preferences, np.ndarray):
        return preferences.tolist()
    return preferences


def _sampler_from_json(sampler_class: type, description: Mapping[str, Any]) -> Any:
    """Rebuild a ``problem_sampler`` given in its JSON form, naming the argument in errors."""
    try:
        return sampler_class.from_json(description)
    except (TypeError, ValueError) as error:
        raise type(error)(f"problem_sampler: {error}") from None


def _problem_source(preferences: PreferencesLike | None, problem_sampler: Any,
                    n_arms: int | None) -> tuple[PreferenceMatrix | None, Callable | None, int]:
    """``(fixed problem or None, sampler or None, K)`` from the constructor's arguments, checked
    against each other (exactly one source; ``n_arms`` agrees with it or completes a sampler)."""
    if preferences is not None and problem_sampler is not None:
        raise ValueError("give either preferences= (a fixed problem) or problem_sampler=, not both")
    if n_arms is not None:
        n_arms = check_n_arms(n_arms)
    if problem_sampler is None:
        problem = as_preference_matrix(preferences)
        if n_arms is not None and n_arms != problem.n_arms:
            raise ValueError(f"n_arms={n_arms} disagrees with the {problem.n_arms} arms of preferences=")
        return problem, None, problem.n_arms
    if isinstance(problem_sampler, Mapping):
        problem_sampler = _sampler_from_json(ProblemSampler, problem_sampler)
    if not callable(problem_sampler):
        raise TypeError(f"problem_sampler must be callable (rng -> PreferenceMatrix), got {problem_sampler!r}")
    sampler_arms = getattr(problem_sampler, "n_arms", None)
    if n_arms is None and sampler_arms is None:
        raise ValueError("a problem_sampler without an n_arms attribute needs n_arms=")
    if sampler_arms is not None:
        sampler_arms = check_integer("the problem_sampler's n_arms", sampler_arms, minimum=2)
    if n_arms is not None and sampler_arms is not None and n_arms != sampler_arms:
        raise ValueError(f"n_arms={n_arms} disagrees with the sampler's n_arms={sampler_arms}")
    return None, problem_sampler, n_arms if n_arms is not None else sampler_arms


class DuelingBanditEnv(gym.Env[np.int64, np.ndarray]):
    """A K-armed dueling bandit: each step duels two arms and reveals which one won.

    ## Description

    A dueling bandit (Yue, Broder, Kleinberg & Joachims, 2012) has ``K`` arms and an unknown
    preference matrix ``P``: when arm ``i`` duels arm ``j``, ``i`` wins with probability
    ``P[i, j]`` (and ``P[i, j] + P[j, i] = 1``).  The learner never sees rewards in the usual
    sense, only the winner of each duel.  One episode is one bandit run; its length (the
    horizon) is ``max_episode_steps``.

    The problem is either fixed (``preferences=``: a :class:`~dueling_gym.problems.PreferenceMatrix`, a K×K array
    or the name of a shipped matrix such as ``"sushi"``) or drawn anew from
    ``problem_sampler`` at every reset, which is how policies are trained across problems.
    By default a fresh utility-based (Bradley-Terry) problem with 8 arms is drawn at every
    reset; its best arm is a Condorcet winner.

    A duel draws one uniform ``u`` from the environment's ``np_random`` and the first arm wins
    iff ``u < P[first, second]``.  :func:`~dueling_gym.experiments.simulate` and the native
    vector environment with one sub-environment play duels the same way, so the same seed
    and the same duels give the same outcomes there too.

    ## Action Space

    ``MultiDiscrete([K, K])``: the pair ``(first, second)`` of arms to duel.  ``first ==
    second`` is allowed: a self-duel is pure exploitation and its outcome a fair coin.
    ``step`` accepts a tuple, a list or a 1-D NumPy array of length 2 of any integer dtype;
    anything else (floats, bools, sets, dicts, other shapes) raises a ``TypeError`` and arms
    outside ``[0, K)`` a ``ValueError``.

    ## Observation Space

    ``Discrete(2)``: ``1`` if the first arm won the last duel, ``0`` otherwise (``0`` after
    reset), as an ``np.int64``.

    ## Rewards

    Minus the instantaneous regret of the duel under ``reward_regret`` (default
    ``"condorcet_strong"``: ``(Delta_i + Delta_j) / 2`` with ``Delta_i = P[i*, i] - 1/2`` and
    ``i*`` the Condorcet winner).  The regret is ground truth that dueling-bandit algorithms
    never see; it is what makes reinforcement-learning training possible.  The notions (see
    :data:`~dueling_gym.problems.preference.REGRET_NOTIONS`):

    * ``"copeland_komiyama"``: ``(L_i + L_j - 2 L^(1)) / (2 (K - 1))`` in ``[0, 1]``, where
      ``L_i`` counts the arms that beat ``i`` (Komiyama, Honda & Nakagawa, 2016);
    * ``"copeland_zoghi"``: ``2 cpld* - cpld_i - cpld_j`` in ``[0, 2]`` with the normalised
      Copeland scores ``cpld`` (Zoghi, Karnin, Whiteson & de Rijke, 2015);
    * ``"condorcet_strong"``: ``(Delta_i + Delta_j) / 2`` (Yue et al., 2012);
    * ``"condorcet_weak"``: ``min(Delta_i, Delta_j)`` (Yue et al., 2012);
    * ``"borda"``: ``(2 b* - b_i - b_j) / 2`` with the Borda score ``b_i`` the mean of
      ``P[i, j]`` over ``j != i``.

    The Copeland and Borda notions are defined on every problem, the Condorcet notions only
    when a Condorcet winner exists (for a sampler: when it guarantees one).

    ## Info

    ``reset`` and ``step`` return fresh dicts; every value is a Python ``float``, ``int`` or
    ``tuple``:

    * ``info["regret"][notion]``: the regret of this step's duel, for every notion defined on
      the problem (``0.0`` after reset);
    * ``info["cumulative_regret"][notion]``: its running total over the episode, added duel by
      duel in float64;
    * ``info["t"]``: the number of duels so far in the episode;
    * ``info["duel"]`` (``step`` only): the duel actually played, ``(first, second)`` as Python
      ints.  Wrappers that remap actions pass it through, so it is where the played duel should
      be read.

    ## Starting State

    No duel played: observation ``0``, all regret totals ``0.0``.  With ``problem_sampler`` a
    new problem is drawn from ``np_random`` first, so ``reset(seed=s)`` fixes both the problem
    and the outcomes.

    ## Episode End

    The environment never terminates on its own; ``gymnasium.make`` adds a ``TimeLimit``
    that truncates the episode after ``max_episode_steps`` duels (default 10 000).

    ## Arguments

    ```python
    import gymnasium as gym
    import dueling_gym

    env = gym.make("DuelingBandit-v0", preferences="sushi", max_episode_steps=100_000)
    ```

    * ``preferences``: a fixed problem (``PreferenceMatrix``, array or shipped name).  ``env.spec``
      records a shipped problem by its name and any other matrix as its nested list of floats, so
      ``env.spec.to_json()`` works and rebuilds the same duels.  The default problem is the
      registration's ``kwargs`` (``gym.spec("DuelingBandit-v0").kwargs``: the sampler's JSON form;
      ``{"preferences": "multisol"}`` for ``CopelandDuel-v0``); ``gym.make`` drops it when the
      other source of problems is given.
    * ``problem_sampler``: a callable ``rng -> PreferenceMatrix`` drawn at each reset (e.g.
      :class:`~dueling_gym.problems.ProblemSampler`), or the JSON form of a ``ProblemSampler``
      (its ``to_json()`` dict); exclusive with ``preferences``.  ``gymnasium.make`` records a
      ``ProblemSampler`` in ``env.spec`` in its JSON form, so ``env.spec.to_json()`` works and
      ``gym.make(EnvSpec.from_json(text))`` rebuilds the same environment (same problems and
      outcomes for the same seed).  Other callables cannot be written to JSON: ``to_json``
      then raises a ``ValueError`` naming ``problem_sampler``.
    * ``n_arms``: number of arms of a custom sampler without an ``n_arms`` attribute.
    * ``reward_regret``: the regret notion of the reward (one of
      :data:`~dueling_gym.problems.preference.REGRET_NOTIONS`).
    * ``render_mode``: ``"ansi"`` returns the win counts ``W[i, j]`` of every ordered pair as
      text; ``"rgb_array"`` returns an ``(H, W, 3)`` ``uint8`` frame with two heat maps, the
      empirical preference matrix ``W[i, j] / (W[i, j] + W[j, i])`` (blue below 1/2, red above,
      grey where no duel was played) and the duel counts (white to green, logarithmic), with
      the arms' indices along their edges and the step ``t`` above them, drawn with NumPy
      alone so ``gymnasium.wrappers.RecordVideo`` can record episodes (the ``video`` extra
      provides moviepy, which it needs).  ``"human"`` is refused with a ``ValueError`` at
      ``gym.make`` naming the supported modes (the environment draws no window).

    ## Version History

    * v0: initial version.  The ``rgb_array`` render mode was added later without a version
      bump: it changes no transition, reward or info.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    #: Default problem when neither ``preferences`` nor ``problem_sampler`` is given.
    default_sampler = ProblemSampler("utility_based", n_arms=8)
    default_reward_regret = "condorcet_strong"
    _spec: EnvSpec | None = None

    @property
    def spec(self) -> EnvSpec | None:
        """How ``gymnasium.make`` built the environment (``None`` when built directly).

        A :class:`~dueling_gym.problems.ProblemSampler` among its ``kwargs`` is recorded in its
        JSON form, so ``spec.to_json()`` works and ``gym.make(spec)`` rebuilds the environment.
        """
        return self._spec

    @spec.setter
    def spec(self, spec: EnvSpec | None) -> None:
        self._spec = _record_sampler_as_json(spec, ProblemSampler, self.preferences_json_form,
                                             self.registered_default_gives_way)

    @staticmethod
    def preferences_json_form(preferences: Any) -> Any:
        """How ``env.spec`` records a fixed ``preferences``: a shipped problem by its name, any
        other matrix as its nested list of floats (the same matrix, hence the same duels)."""
        return _matrix_form(preferences)

    @classmethod
    def registered_default_kwargs(cls) -> dict[str, Any]:
        """The default problem as the ``kwargs`` of the environment's registration.

        ``gym.spec(env_id).kwargs`` shows it: ``{"preferences": name}`` for a fixed default,
        ``{"problem_sampler": json_form}`` for a sampled one.
        """
        preferences = cls.default_preferences()
        if preferences is not None:
            return {"preferences": preferences}
        return {"problem_sampler": cls.default_sampler.to_json()}

    @classmethod
    def registered_default_gives_way(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` without the registered default problem when the other source is also given.

        ``gymnasium.make`` merges the registration's ``kwargs`` (the default problem) with the
        caller's, so ``gym.make("CopelandDuel-v0", problem_sampler=...)`` passes both the default
        ``preferences`` and the sampler: the registered entry points (and the vector
        environments) apply this first, so the default gives way.  Any other pair of
        ``preferences`` and ``problem_sampler``, and any pair given to the constructor directly,
        is refused.
        """
        if kwargs.get("preferences") is None or kwargs.get("problem_sampler") is None:
            return kwargs
        default = cls.registered_default_kwargs()
        if "preferences" in default:
            if isinstance(kwargs["preferences"], str) and kwargs["preferences"] == default["preferences"]:
                return {key: value for key, value in kwargs.items() if key != "preferences"}
            return kwargs
        form, _ = _sampler_form(kwargs["problem_sampler"], ProblemSampler)
        if isinstance(form, Mapping) and _is_json(dict(form)) and json.loads(json.dumps(dict(form))) == \
                json.loads(json.dumps(default["problem_sampler"])):
            return {key: value for key, value in kwargs.items() if key != "problem_sampler"}
        return kwargs

    def __init__(
        self,
        preferences: PreferencesLike | None = None,
        *,
        problem_sampler: Callable[[np.random.Generator], PreferencesLike] | Mapping[str, Any] | None = None,
        n_arms: int | None = None,
        reward_regret: str | None = None,
        render_mode: str | None = None,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.render_mode = render_mode
        if preferences is None and problem_sampler is None:
            preferences = self.default_preferences()
            problem_sampler = self.default_sampler if preferences is None else None
        self._fixed_problem, self.problem_sampler, self.n_arms = _problem_source(preferences, problem_sampler, n_arms)
        if self._fixed_problem is not None:
            self.regret_notions = self._fixed_problem.defined_regret_notions
        else:
            self.regret_notions = defined_notions(bool(getattr(self.problem_sampler, "always_has_condorcet_winner",
                                                               False)))

        reward_regret = self.default_reward_regret if reward_regret is None else reward_regret
        if reward_regret not in REGRET_NOTIONS:
            raise ValueError(f"unknown reward_regret {reward_regret!r}; choose one of {sorted(REGRET_NOTIONS)}")
        if reward_regret not in self.regret_notions:
            raise ValueError(
                f"reward_regret={reward_regret!r} is not defined on this problem (no Condorcet winner "
                f"guaranteed); defined notions: {list(self.regret_notions)}"
            )
        self.reward_regret = reward_regret
        self._reward_column = self.regret_notions.index(reward_regret)

        self.action_space = spaces.MultiDiscrete([self.n_arms, self.n_arms])
        self.observation_space = spaces.Discrete(2)

        self.problem: PreferenceMatrix | None = None
        # The duel engine plays row first * K + second of the problem's duel table.
        self._engine = DuelEngine(self.regret_notions)
        self._duel = self._engine.duel
        self._has_reset = False
        if self._fixed_problem is not None:
            self._install_problem(self._fixed_problem)

    @classmethod
    def default_preferences(cls) -> PreferencesLike | None:
        """The fixed default problem, or ``None`` to use :attr:`~dueling_gym.envs.DuelingBanditEnv.default_sampler` instead."""
        return None

    # ------------------------------------------------------------------ problem handling
    def _install_problem(self, problem: PreferenceMatrix) -> None:
        self.problem = problem
        self._engine.load(problem.duel_table(self.regret_notions))

    def _validated(self, drawn: PreferencesLike) -> PreferenceMatrix:
        """Check that a sampled problem fits this environment's spaces and regret notions."""
        problem = as_preference_matrix(drawn)
        if problem.n_arms != self.n_arms:
            raise ValueError(f"problem_sampler returned a problem with {problem.n_arms} arms; the env has {self.n_arms}")
        missing = set(self.regret_notions) - set(problem.defined_regret_notions)
        if missing:
            raise ValueError(f"problem_sampler returned a problem on which {sorted(missing)} regret is undefined")
        return problem

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.int64, dict[str, Any]]:
        check_reset_options(options)
        super().reset(seed=check_seed("seed", seed, allow_sequence=False))
        if self.problem_sampler is not None:
            self._install_problem(self._validated(self.problem_sampler(self.np_random)))
        self._engine.reset(self.np_random)
        self._has_reset = True
        zeros = dict.fromkeys(self.regret_notions, 0.0)
        return _OBSERVATIONS[0], {"regret": zeros, "cumulative_regret": dict(zeros), "t": 0}

    def step(self, action: Any) -> tuple[np.int64, SupportsFloat, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise gym.error.ResetNeeded("call reset() before step()")
        first, second = check_action(action, self.n_arms)
        first_won, regrets = self._duel(first * self.n_arms + second)
        engine = self._engine
        notions = self.regret_notions
        info = {
            "regret": dict(zip(notions, regrets)),
            "cumulative_regret": dict(zip(notions, engine.cumulative)),
            "t": engine.t,
            "duel": (first, second),
        }
        return _OBSERVATIONS[first_won], -regrets[self._reward_column], False, False, info

    # ------------------------------------------------------------------ inspection
    @property
    def win_counts(self) -> np.ndarray:
        """How often ``i`` beat ``j`` this episode, ``W[i, j]`` (self-duels on the diagonal)."""
        n_arms = self.n_arms
        if not self._has_reset:
            return np.zeros((n_arms, n_arms), dtype=np.int64)
        # Row i * K + j of the engine is the duel (i, j): its first wins are wins of i over j,
        # its other duels wins of j over i.
        first_wins = self._engine.first_wins.reshape(n_arms, n_arms)
        losses = self._engine.counts.reshape(n_arms, n_arms) - first_wins
        return first_wins + losses.T

    @property
    def cumulative_regret(self) -> dict[str, float]:
        """Regret accumulated this episode, per notion."""
        return dict(zip(self.regret_notions, self._engine.cumulative))

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the win counts as text; ``"rgb_array"``: heat maps of the empirical
        preference matrix and of the duel counts, labelled with the arms, axis labels and colour
        bars, under a title naming the environment, its problem and the step ``t``, an
        ``(H, W, 3)`` ``uint8`` array."""
        if self.render_mode is None:
            gym.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi' or 'rgb_array' to the constructor"
            )
            return None
        if self.render_mode == "rgb_array":
            if not self._has_reset:
                return blank_frame(**frame_labels(self))
            return preference_frame(self.win_counts, t=self._engine.t, **frame_labels(self))
        if self.problem is None:
            return "(not reset)"
        wins = self.win_counts
        width = max(4, len(str(int(wins.max()))) + 1)
        header = "W[i,j]".rjust(7) + "".join(str(j).rjust(width) for j in range(self.n_arms))
        lines = [f"t={self._engine.t}  problem={self.problem.name or 'custom'}  "
                 + "  ".join(f"{k}={v:.3f}" for k, v in self.cumulative_regret.items()), header]
        for i in range(self.n_arms):
            lines.append(str(i).rjust(7) + "".join(str(int(w)).rjust(width) for w in wins[i]))
        return "\n".join(lines) + "\n"
