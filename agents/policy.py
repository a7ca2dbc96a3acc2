"""PolicyAgent: a trained Stable-Baselines3 policy behind the :class:`~dueling_gym.agents.DuelingAgent` API.

A policy trained on ``DuelStatistics(gym.make("CopelandDuel-v0", ...))`` (optionally with
``FlatPairActions`` for DQN) sees the duel-statistics observation of
:mod:`dueling_gym.observations`;
:class:`PolicyAgent` rebuilds exactly that observation from the duels it plays, so the learned
policy runs in :func:`dueling_gym.experiments.simulate`, in sweeps and in Gymnasium loops like
any other dueling algorithm (CCB, RUCB, ...)::

    from stable_baselines3 import PPO
    from dueling_gym.agents.policy import PolicyAgent
    from dueling_gym.experiments import simulate

    model = PPO.load("ppo_copeland.zip")
    agent = PolicyAgent(model, n_arms=5, seed=0)
    result = simulate(agent, "multisol", horizon=2000, seed=0, fused=False)

The observation
---------------
The policy sees the *duel-statistics observation* of :mod:`dueling_gym.observations`: the
win-rate matrix and the normalised count matrix of the duels played so far, ``2 K^2`` values
in ``[0, 1]``.  Both the :class:`~dueling_gym.wrappers.DuelStatistics` wrapper (training) and
:class:`PolicyAgent` (deployment) build it with
:func:`~dueling_gym.observations.duel_statistics_observation` from a
:class:`~dueling_gym.observations.DuelStatisticsTracker`, so they see bit-identical
observations.

Registration
------------
``PolicyAgent`` is deliberately **not** registered with :func:`~dueling_gym.agents.make_agent`:
it cannot be built from ``n_arms`` and hyperparameters alone, it needs a trained policy object.
"""

from __future__ import annotations

from operator import index
from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from dueling_gym.agents._pair_statistics import empirical_copeland_winner
from dueling_gym.agents.base import DuelingAgent
from dueling_gym.observations import DuelStatisticsTracker, duel_statistics_space
from dueling_gym.validation import SeedLike, check_action, check_bool, check_n_arms, check_outcome

__all__ = ["PolicyAgent", "OBSERVATIONS"]

#: Observation builders a :class:`PolicyAgent` can maintain.
OBSERVATIONS = ("duel_statistics",)


def _action_kind(space: Any, n_arms: int) -> str | None:
    """``"pair"`` (MultiDiscrete([K, K])), ``"flat"`` (Discrete(K*K)) or None if unknown."""
    if space is None:
        return None
    if isinstance(space, spaces.MultiDiscrete):
        if space.shape == (2,) and np.all(space.nvec == n_arms):
            return "pair"
    elif isinstance(space, spaces.Discrete):
        if int(space.n) == n_arms * n_arms and int(space.start) == 0:
            return "flat"
    raise ValueError(
        f"the policy's action space {space} is not a duel of {n_arms} arms: expected "
        f"MultiDiscrete([{n_arms}, {n_arms}]) or Discrete({n_arms * n_arms}) (FlatPairActions)"
    )


def _has_categorical_distribution(network: Any) -> bool:
    """True when ``network`` is an SB3 policy with (multi-)categorical action distributions."""
    if not all(callable(getattr(network, name, None)) for name in ("get_distribution", "obs_to_tensor")):
        return False
    distribution_class = type(getattr(network, "action_dist", None)).__name__
    return distribution_class in ("CategoricalDistribution", "MultiCategoricalDistribution")


class PolicyAgent(DuelingAgent):
    """A trained policy (e.g. Stable-Baselines3 PPO, A2C or DQN) as a :class:`~dueling_gym.agents.DuelingAgent`.

    Parameters
    ----------
    policy : object with ``predict(observation, deterministic=...)``
        A Stable-Baselines3 model (``PPO``, ``A2C``, ``DQN``, ``MaskablePPO``...) or its
        ``.policy``, or any object with SB3's ``predict`` signature returning
        ``(action, state)``.  It must have been trained on the duel-statistics observation
        (the :class:`~dueling_gym.wrappers.DuelStatistics` wrapper) with either the dueling
        environment's ``MultiDiscrete([K, K])`` actions or ``FlatPairActions``'s
        ``Discrete(K*K)`` actions; when the policy exposes ``observation_space`` and
        ``action_space`` they are checked.
    n_arms : int
        Number of arms ``K >= 2``.
    observation : {"duel_statistics"}
        The observation the agent maintains (the only one implemented).
    deterministic : bool, default True
        True: the policy's greedy action (what ``predict(..., deterministic=True)`` returns),
        so the agent is deterministic whatever its seed.  False: a stochastic action,
        reproducible given the agent's seed: for SB3 actor-critic policies (PPO, A2C) it is
        drawn from the policy's categorical action distribution with the agent's own generator
        ``self.rng``; other policies are called with ``predict(..., deterministic=False)``
        while torch's and NumPy's global generators are temporarily seeded from ``self.rng``
        (DQN's epsilon-greedy also samples its action space's own generator, which this does
        not cover: use ``deterministic=True`` for DQN).
    seed : int, SeedSequence or None
        Seed of the agent's generator.

    Notes
    -----
    :meth:`~dueling_gym.agents.DuelingAgent.recommend` returns the empirical Copeland winner of the duels
    played (lowest index
    on ties).  The policy itself is never updated; ``reset`` puts it in evaluation mode
    (``set_training_mode(False)``).  One step costs one forward pass of the network (about
    0.1-0.2 ms for SB3's default MLP); :func:`~dueling_gym.experiments.simulate` runs it in its
    generic loop (``fused=False``).
    """

    def __init__(
        self,
        policy: Any,
        n_arms: int,
        *,
        observation: str = "duel_statistics",
        deterministic: bool = True,
        seed: SeedLike = None,
    ):
        if not callable(getattr(policy, "predict", None)):
            raise TypeError(f"policy must have a predict(observation, deterministic=...) method, got {type(policy).__name__}")
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {OBSERVATIONS}, got {observation!r}")
        self.deterministic = check_bool("deterministic", deterministic)
        n_arms = check_n_arms(n_arms)
        self.policy = policy
        self.observation = observation
        self._network = getattr(policy, "policy", policy)
        expected = duel_statistics_space(n_arms)
        observation_space = getattr(policy, "observation_space", None)
        if observation_space is not None and getattr(observation_space, "shape", None) != expected.shape:
            raise ValueError(
                f"the policy's observation space {observation_space} does not match the duel-statistics "
                f"observation of {n_arms} arms, {expected}"
            )
        self._kind = _action_kind(getattr(policy, "action_space", None), n_arms)
        self._use_distribution = _has_categorical_distribution(self._network)
        super().__init__(n_arms, seed=seed)

    def _reset_state(self) -> None:
        self.tracker = DuelStatisticsTracker(self.n_arms)
        if callable(getattr(self._network, "set_training_mode", None)):
            self._network.set_training_mode(False)  # evaluation mode (dropout, batch norm), once per run

    # ------------------------------------------------------------------ DuelingAgent API
    def act(self) -> tuple[int, int]:
        observation = self.tracker.observation()
        if self._use_distribution:
            action = self._from_distribution(observation)
        elif self.deterministic:
            action, _ = self.policy.predict(observation, deterministic=True)
        else:
            action = self._predict_seeded(observation)
        return self._to_duel(action)

    def observe(self, action: tuple[int, int], first_won: bool) -> None:
        first, second = check_action(action, self.n_arms)
        self.tracker.update(first, second, check_outcome(first_won))

    def recommend(self) -> int:
        return int(empirical_copeland_winner(self.tracker.wins))

    def __repr__(self) -> str:
        return (f"PolicyAgent({type(self.policy).__name__}, n_arms={self.n_arms}, observation={self.observation!r}, "
                f"deterministic={self.deterministic}, seed={self.seed!r})")

    # ------------------------------------------------------------------ helpers
    def _to_duel(self, action: Any) -> tuple[int, int]:
        values = np.asarray(action).reshape(-1)
        kind = self._kind or ("pair" if values.size == 2 else "flat" if values.size == 1 else None)
        n_arms = self.n_arms
        if kind == "pair" and values.size == 2:
            first, second = index(values[0]), index(values[1])
        elif kind == "flat" and values.size == 1:
            first, second = divmod(index(values[0]), n_arms)
        else:
            raise ValueError(f"cannot read a duel from the policy's action {action!r}")
        if not (0 <= first < n_arms and 0 <= second < n_arms):
            raise ValueError(f"the policy's action {action!r} is out of range for {n_arms} arms")
        return int(first), int(second)

    def _from_distribution(self, observation: NDArray[np.float32]) -> NDArray[np.int64]:
        """SB3 actor-critic policies: the action distribution's mode (exactly what ``predict(...,
        deterministic=True)`` returns, without its per-call overhead) or a draw from it with ``self.rng``."""
        import torch

        network = self._network
        with torch.no_grad():
            tensor, _ = network.obs_to_tensor(observation)
            distribution = network.get_distribution(tensor)
            if self.deterministic:
                return distribution.mode().cpu().numpy().reshape(-1)
            parts = distribution.distribution
            parts = parts if isinstance(parts, (list, tuple)) else [parts]
            choices = []
            for part in parts:
                cumulative = np.cumsum(part.probs.reshape(-1).double().cpu().numpy())
                choice = int(np.searchsorted(cumulative, self.rng.random() * cumulative[-1], side="right"))
                choices.append(min(choice, cumulative.size - 1))
        return np.array(choices, dtype=np.int64)

    def _predict_seeded(self, observation: NDArray[np.float32]) -> Any:
        """Other policies: ``predict(..., deterministic=False)`` with torch's and NumPy's global
        generators temporarily seeded from ``self.rng`` (and restored afterwards)."""
        seed = int(self.rng.integers(0, 2**32 - 1))
        numpy_state = np.random.get_state()
        np.random.seed(seed)
        try:
            try:
                import torch
            except ImportError:  # a policy that does not use torch
                action, _ = self.policy.predict(observation, deterministic=False)
                return action
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                action, _ = self.policy.predict(observation, deterministic=False)
            return action
        finally:
            np.random.set_state(numpy_state)
