"""The permutation-equivariant pair policy of the ``learned`` agent, as a Stable-Baselines3 policy.

The network reads the pair-feature observation (:mod:`dueling_gym.observations`) and scores
every duel ``(i, j)`` with the same small network, so relabelling the arms relabels the
scores and one policy serves every problem of a family:

* pair embedding ``g_ij = relu(W2 relu(W1 e_ij + b1) + b2)`` of the features ``e_ij`` of each
  ordered pair ``i != j``;
* arm summary ``h_i = [mean_{j != i} g_ij, max_{j != i} g_ij]`` (how ``i`` fares against the
  others on average and at best: the maximum lets a unit say "some opponent beats ``i``" or "``i``
  beats every opponent", which an average blurs);
* global context ``m = mean_i h_i`` (what the whole problem looks like, e.g. whether some arm
  already beats all the others, which no pair and no single arm can tell);
* arm record ``r_i`` (:func:`dueling_gym.observations.arm_records`): the arm's wins minus losses
  over all its duels, as evidence, as the gap to the best record and as an average margin --
  the statistic Winner Stays plays by, which pooling the per-pair features cannot sum exactly
  (they are normalised per pair);
* duel score for ``i != j``: ``w . relu(A h_i + B h_j + R_a r_i + R_b r_j + C e_ij + c + G m
  + tau * d) + w0``, with ``tau`` the time value;
* self-duel score ``(i, i)``: ``s . relu(S h_i + R_s r_i + s_b + G_s m + tau * s_t + n_i * s_n)
  + s0`` (pure exploitation), ``n_i`` the self-duel count channel of arm ``i``, so that the
  policy can tell how long it has been exploiting an arm;
* the ``K^2`` scores are the logits of a categorical distribution over ``Discrete(K^2)``
  (``first * K + second``); the critic reads ``[mean_i h_i, max_i h_i, tau]``.

:func:`export_policy_weights` writes the actor's weights as NumPy arrays (the names
:data:`~dueling_gym.pair_network.weights.WEIGHT_NAMES`), which the ``learned`` agent evaluates with
:mod:`dueling_gym.pair_network`, without torch.  Needs the ``rl`` extra.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from stable_baselines3.common.policies import ActorCriticPolicy
from torch import nn

from dueling_gym.observations import N_PAIR_CHANNELS, N_RECORD_FEATURES
from dueling_gym.pair_network import WEIGHT_NAMES

__all__ = ["PairNetwork", "PairPolicy", "export_policy_weights", "network_weights", "network_from_weights", "WEIGHT_NAMES"]


class PairNetwork(nn.Module):
    """Actor logits and critic latent of the pair policy (SB3's ``mlp_extractor`` slot)."""

    def __init__(self, n_arms: int, hidden: int):
        super().__init__()
        self.n_arms = n_arms
        self.hidden = hidden
        self.embed1 = nn.Linear(N_PAIR_CHANNELS, hidden)
        self.embed2 = nn.Linear(hidden, hidden)
        self.first = nn.Linear(2 * hidden, hidden, bias=False)
        self.second = nn.Linear(2 * hidden, hidden, bias=False)
        self.context = nn.Linear(2 * hidden, hidden, bias=False)
        self.self_context = nn.Linear(2 * hidden, hidden, bias=False)
        self.pair = nn.Linear(N_PAIR_CHANNELS, hidden)
        self.pair_time = nn.Parameter(torch.zeros(hidden))
        self.score = nn.Linear(hidden, 1)
        self.self_hidden = nn.Linear(2 * hidden, hidden)
        self.self_time = nn.Parameter(torch.zeros(hidden))
        self.self_plays = nn.Parameter(torch.zeros(hidden))
        self.self_score = nn.Linear(hidden, 1)
        self.record_first = nn.Linear(N_RECORD_FEATURES, hidden, bias=False)
        self.record_second = nn.Linear(N_RECORD_FEATURES, hidden, bias=False)
        self.record_self = nn.Linear(N_RECORD_FEATURES, hidden, bias=False)
        self.value_hidden = nn.Linear(4 * hidden + 1, hidden)
        # The arm records enter at zero: a network read from a file without them keeps its scores.
        for layer in (self.record_first, self.record_second, self.record_self):
            nn.init.zeros_(layer.weight)
        # Near-uniform initial policy: small output weights keep the first rollouts exploratory.
        for layer in (self.score, self.self_score):
            nn.init.normal_(layer.weight, std=0.01)
            nn.init.zeros_(layer.bias)
        mask = 1.0 - torch.eye(n_arms)
        self.register_buffer("off_diagonal", mask)
        self.latent_dim_pi = n_arms * n_arms
        self.latent_dim_vf = hidden

    def _embed(self, observation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        n_arms = self.n_arms
        pairs = observation[:, :-1].reshape(-1, N_PAIR_CHANNELS, n_arms, n_arms).permute(0, 2, 3, 1)
        tau = observation[:, -1:]
        g = torch.relu(self.embed2(torch.relu(self.embed1(pairs)))) * self.off_diagonal[None, :, :, None]
        # g >= 0 and zero on the diagonal, so the maximum over all j is the maximum over j != i.
        h = torch.cat([g.sum(dim=2) / (n_arms - 1), g.max(dim=2).values], dim=-1)
        return pairs, tau, g, h

    def _records(self, pairs: torch.Tensor) -> torch.Tensor:
        """The arm records of :func:`dueling_gym.observations.arm_records` from the pair channels:
        the counts are recovered exactly (rounded) from channels 3 and 0, then the features are
        computed in float64 and rounded to float32, as the NumPy agent computes them."""
        margins = pairs[..., 0].double()
        counts = torch.round(torch.expm1(8.0 * pairs[..., 3].double())) * self.off_diagonal.double()
        net = torch.round(2.0 * margins * counts).sum(dim=2)
        duels = counts.sum(dim=2)
        root = torch.sqrt(duels + 1.0)
        leader = net.max(dim=1, keepdim=True).values
        return torch.stack([torch.clamp(net / root / 4.0, -2.5, 2.5), torch.clamp((net - leader) / root / 4.0, min=-2.5),
                            net / (duels + 1.0)], dim=-1).float()

    def forward_actor(self, observation: torch.Tensor) -> torch.Tensor:
        pairs, tau, _, h = self._embed(observation)
        return self._logits(pairs, tau, h)

    def _logits(self, pairs: torch.Tensor, tau: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        tau3 = tau[:, :, None, None]
        context = h.mean(dim=1)
        records = self._records(pairs)
        hidden = torch.relu(self.first(h)[:, :, None, :] + self.second(h)[:, None, :, :]
                            + self.record_first(records)[:, :, None, :] + self.record_second(records)[:, None, :, :]
                            + self.pair(pairs) + self.context(context)[:, None, None, :] + tau3 * self.pair_time)
        duel = self.score(hidden).squeeze(-1)
        plays = torch.diagonal(pairs[..., 3], dim1=1, dim2=2)
        own = self.self_score(torch.relu(self.self_hidden(h) + self.self_context(context)[:, None, :]
                                         + self.record_self(records)
                                         + tau[:, :, None] * self.self_time
                                         + plays[:, :, None] * self.self_plays)).squeeze(-1)
        eye = 1.0 - self.off_diagonal
        logits = duel * self.off_diagonal + torch.diag_embed(own) * eye
        return logits.reshape(logits.shape[0], -1)

    def forward_critic(self, observation: torch.Tensor) -> torch.Tensor:
        _, tau, _, h = self._embed(observation)
        return self._critic(tau, h)

    def _critic(self, tau: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        summary = torch.cat([h.mean(dim=1), h.max(dim=1).values, tau], dim=1)
        return torch.relu(self.value_hidden(summary))

    def forward(self, observation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        pairs, tau, _, h = self._embed(observation)
        return self._logits(pairs, tau, h), self._critic(tau, h)


class PairPolicy(ActorCriticPolicy):
    """SB3 actor-critic policy whose logits are the :class:`PairNetwork` duel scores.

    Extra keyword arguments: ``n_arms`` and ``hidden`` (width of every hidden layer).
    """

    def __init__(self, observation_space: Any, action_space: Any, lr_schedule: Any, *,
                 n_arms: int, hidden: int = 32, **kwargs: Any):
        self.n_arms = int(n_arms)
        self.hidden = int(hidden)
        kwargs.setdefault("ortho_init", False)
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = PairNetwork(self.n_arms, self.hidden)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        # The pair network already outputs one logit per duel: no extra linear layer.
        self.action_net = nn.Identity()
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(n_arms=self.n_arms, hidden=self.hidden)
        return data


def network_weights(network: PairNetwork) -> dict[str, np.ndarray]:
    """The actor's weights of ``network`` as float32 arrays keyed by :data:`~dueling_gym.pair_network.weights.WEIGHT_NAMES` (row
    vector convention: ``x @ W``)."""

    def array(tensor: torch.Tensor) -> np.ndarray:
        return tensor.detach().cpu().numpy().astype(np.float32).copy()

    return {
        "W1": array(network.embed1.weight.T), "b1": array(network.embed1.bias),
        "W2": array(network.embed2.weight.T), "b2": array(network.embed2.bias),
        "A": array(network.first.weight.T), "B": array(network.second.weight.T),
        "C": array(network.pair.weight.T), "c": array(network.pair.bias), "d": array(network.pair_time),
        "w": array(network.score.weight[0]), "w0": array(network.score.bias),
        "S": array(network.self_hidden.weight.T), "s_b": array(network.self_hidden.bias),
        "s_t": array(network.self_time), "s": array(network.self_score.weight[0]), "s0": array(network.self_score.bias),
        "G": array(network.context.weight.T), "G_s": array(network.self_context.weight.T),
        "s_n": array(network.self_plays), "R_a": array(network.record_first.weight.T),
        "R_b": array(network.record_second.weight.T), "R_s": array(network.record_self.weight.T),
    }


def network_from_weights(weights: dict[str, np.ndarray], n_arms: int) -> PairNetwork:
    """A float32 :class:`PairNetwork` for ``n_arms`` arms whose actor computes the scores of
    ``weights`` (e.g. from :func:`dueling_gym.pair_network.load_policy_weights`); the critic keeps
    its fresh initialisation."""
    hidden = int(np.shape(weights["W1"])[1])
    network = PairNetwork(n_arms, hidden)

    def tensor(name: str) -> torch.Tensor:
        return torch.as_tensor(np.asarray(weights[name], dtype=np.float32))

    with torch.no_grad():
        for layer, weight, bias in ((network.embed1, "W1", "b1"), (network.embed2, "W2", "b2"),
                                    (network.pair, "C", "c"), (network.self_hidden, "S", "s_b")):
            layer.weight.copy_(tensor(weight).T)
            layer.bias.copy_(tensor(bias))
        for layer, weight in ((network.first, "A"), (network.second, "B"), (network.context, "G"),
                              (network.self_context, "G_s"), (network.record_first, "R_a"),
                              (network.record_second, "R_b"), (network.record_self, "R_s")):
            layer.weight.copy_(tensor(weight).T)
        network.pair_time.copy_(tensor("d"))
        network.self_time.copy_(tensor("s_t"))
        network.self_plays.copy_(tensor("s_n"))
        network.score.weight.copy_(tensor("w")[None])
        network.score.bias.copy_(tensor("w0").reshape(1))
        network.self_score.weight.copy_(tensor("s")[None])
        network.self_score.bias.copy_(tensor("s0").reshape(1))
    return network


def export_policy_weights(policy: PairPolicy) -> dict[str, np.ndarray]:
    """The actor's weights as float32 arrays keyed by :data:`~dueling_gym.pair_network.weights.WEIGHT_NAMES` (row vector convention:
    ``x @ W``), plus ``n_arms`` and ``hidden``."""
    network: PairNetwork = policy.mlp_extractor
    weights = network_weights(network)
    weights["n_arms"] = np.array(network.n_arms, dtype=np.int64)
    weights["hidden"] = np.array(network.hidden, dtype=np.int64)
    return weights
