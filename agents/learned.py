"""The ``learned`` agent: a shipped, reinforcement-learned dueling policy evaluated with NumPy.

``make_agent("learned", n_arms=5, seed=0)`` loads the weights trained for ``K = 5`` arms
(``agents/data/learned_k5.npz``; ``agents/data/README.md`` records the command and seed that
produced each file) and runs the permutation-equivariant pair network of
:mod:`dueling_gym.experiments.pair_policy` in NumPy -- no torch at inference.

Each step the agent rebuilds the observation the policy was trained on from its own win
counts (:mod:`dueling_gym.observations`), scores every duel ``(i, j)`` with the network and
draws the duel from the softmax of the scores with its own generator ``self.rng``
(``deterministic=True``: the highest score, lowest flat index on ties).  Only the pair just
played changes its features, so ``observe`` refreshes that pair's embedding and the arm
summaries incrementally; ``act`` adds the time term and evaluates the output layer.  The
per-step arithmetic runs in small Numba-compiled loops over NumPy arrays (the network is a
few hundred multiply-adds; NumPy's per-call overhead would dominate it).
:meth:`recommend` is the empirical Copeland winner of the duels played.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numba
import numpy as np

from dueling_gym.agents._pair_statistics import empirical_copeland_winner
from dueling_gym.agents.base import DuelingAgent, SeedLike, check_action, register_agent
from dueling_gym.observations import N_PAIR_CHANNELS, pair_features, time_feature
from dueling_gym.validation import check_bool, check_n_arms, check_outcome

__all__ = ["LearnedAgent", "shipped_policies", "load_policy_weights", "DATA_DIRECTORY"]

#: Where the shipped weights live (``learned_k{K}.npz``).
DATA_DIRECTORY = Path(__file__).resolve().parent / "data"
_WEIGHT_NAMES = ("W1", "b1", "W2", "b2", "A", "B", "C", "c", "d", "w", "w0", "S", "s_b", "s_t", "s", "s0")


def shipped_policies() -> list[int]:
    """Numbers of arms ``K`` with a shipped policy."""
    found = []
    for path in DATA_DIRECTORY.glob("learned_k*.npz"):
        digits = path.stem[len("learned_k"):]
        if digits.isdigit():
            found.append(int(digits))
    return sorted(found)


def load_policy_weights(path: str | Path, n_arms: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read exported pair-network weights (float64 copies) and their metadata; check ``n_arms``."""
    with np.load(Path(path), allow_pickle=False) as archive:
        missing = [name for name in _WEIGHT_NAMES + ("n_arms", "hidden") if name not in archive.files]
        if missing:
            raise ValueError(f"{path} is not an exported pair policy (missing arrays {missing})")
        weights = {name: archive[name].astype(np.float64) for name in _WEIGHT_NAMES}
        trained_arms = int(archive["n_arms"])
        hidden = int(archive["hidden"])
        metadata = json.loads(str(archive["metadata"])) if "metadata" in archive.files else {}
    if trained_arms != n_arms:
        raise ValueError(f"{path} holds a policy for {trained_arms} arms, not {n_arms}")
    expected = {"W1": (N_PAIR_CHANNELS, hidden), "W2": (hidden, hidden), "A": (hidden, hidden), "B": (hidden, hidden),
                "C": (N_PAIR_CHANNELS, hidden), "S": (hidden, hidden), "w": (hidden,), "s": (hidden,)}
    for name, shape in expected.items():
        if weights[name].shape != shape:
            raise ValueError(f"{path}: array {name} has shape {weights[name].shape}, expected {shape}")
    metadata["hidden"] = hidden
    return weights, metadata


_TAU_TABLE = np.zeros(0)


def _grow_tau_table(t: int) -> None:
    global _TAU_TABLE
    size = max(2 * _TAU_TABLE.size, t + 1, 1 << 12)
    _TAU_TABLE = time_feature(np.arange(size)).astype(np.float64)


@numba.njit(cache=True, nogil=True)
def pair_feature_values(wins_ij: int, wins_ji: int, out: np.ndarray) -> None:
    """The four channels of one ordered pair, exactly as :func:`~dueling_gym.observations.pair_features`
    computes them (float64 arithmetic in the same order, rounded to float32)."""
    counts = float(wins_ij + wins_ji)
    margin = wins_ij / counts - 0.5 if counts > 0 else 0.0
    evidence = min(max((float(wins_ij) - float(wins_ji)) / np.sqrt(counts + 1.0) / 4.0, -2.5), 2.5)
    out[0] = np.float32(margin)
    out[1] = np.float32(evidence)
    out[2] = np.float32(1.0 / np.sqrt(1.0 + counts))
    out[3] = np.float32(np.log1p(counts) / 8.0)


@numba.njit(cache=True, nogil=True)
def _refresh_pair(wins, winner, loser, embedding, pair_input, W1, b1, W2, b2, C, c):  # pragma: no cover - compiled
    features = np.empty(W1.shape[0])
    hidden = np.empty(W1.shape[1])
    for row, col in ((winner, loser), (loser, winner)):
        pair_feature_values(wins[row, col], wins[col, row], features)
        for k in range(W1.shape[1]):
            value = b1[k]
            for f in range(W1.shape[0]):
                value += features[f] * W1[f, k]
            hidden[k] = value if value > 0.0 else 0.0
        for k in range(W2.shape[1]):
            value = b2[k]
            for f in range(W2.shape[0]):
                value += hidden[f] * W2[f, k]
            embedding[row, col, k] = value if value > 0.0 else 0.0
            value = c[k]
            for f in range(C.shape[0]):
                value += features[f] * C[f, k]
            pair_input[row, col, k] = value


@numba.njit(cache=True, nogil=True)
def _refresh_summaries(embedding, pair_input, A, B, S, s_b, base, self_base):  # pragma: no cover - compiled
    n_arms, _, hidden = embedding.shape
    summary = np.zeros((n_arms, hidden))
    for i in range(n_arms):
        for j in range(n_arms):
            if i != j:
                summary[i] += embedding[i, j]
    summary /= n_arms - 1
    as_first = summary @ A
    as_second = summary @ B
    own = summary @ S
    for i in range(n_arms):
        self_base[i] = own[i] + s_b
        for j in range(n_arms):
            base[i, j] = as_first[i] + as_second[j] + pair_input[i, j]


@numba.njit(cache=True, nogil=True)
def _scores(base, self_base, tau, d, w, w0, s_t, s, s0, out):  # pragma: no cover - compiled
    n_arms, _, hidden = base.shape
    for i in range(n_arms):
        for j in range(n_arms):
            if i == j:
                value = s0
                for k in range(hidden):
                    pre = self_base[i, k] + tau * s_t[k]
                    if pre > 0.0:
                        value += pre * s[k]
            else:
                value = w0
                for k in range(hidden):
                    pre = base[i, j, k] + tau * d[k]
                    if pre > 0.0:
                        value += pre * w[k]
            out[i, j] = value


@numba.njit(cache=True, nogil=True)
def _choose(base, self_base, tau, d, w, w0, s_t, s, s0, uniform):  # pragma: no cover - compiled
    """Flat index of the duel: argmax of the scores (``uniform < 0``) or a softmax draw."""
    n_arms = base.shape[0]
    scores = np.empty((n_arms, n_arms))
    _scores(base, self_base, tau, d, w, w0, s_t, s, s0, scores)
    flat = scores.ravel()
    best = np.argmax(flat)
    if uniform < 0.0:
        return best
    top = flat[best]
    total = 0.0
    for index in range(flat.size):
        flat[index] = np.exp(flat[index] - top)
        total += flat[index]
    target = uniform * total
    running = 0.0
    for index in range(flat.size):
        running += flat[index]
        if target < running:
            return index
    return flat.size - 1


@register_agent("learned")
class LearnedAgent(DuelingAgent):
    """A PPO-trained pair policy over sufficient statistics, shipped with the package.

    Parameters
    ----------
    n_arms : int
        Number of arms; a policy must be shipped for it (see :func:`shipped_policies`), else
        ``ValueError``.
    deterministic : bool, default False
        False: duels drawn from the policy's distribution (what it was trained with).  True: the
        most likely duel.
    seed : int, SeedSequence or None
        Seed of ``self.rng``, which draws the duels.

    Notes
    -----
    The policy was trained on a fixed horizon (see ``agents/data/README.md``) but reads no
    horizon: its only notion of time is ``log(1 + t)``, so it runs anytime; far beyond the
    training horizon it extrapolates.
    """

    def __init__(self, n_arms: int, *, deterministic: bool = False, seed: SeedLike = None):
        self.deterministic = check_bool("deterministic", deterministic)
        n_arms = check_n_arms(n_arms)
        available = shipped_policies()
        if n_arms not in available:
            raise ValueError(f"no learned policy is shipped for n_arms={n_arms}; available: {available}")
        self._weights: dict[str, np.ndarray] | None = None
        super().__init__(n_arms, seed=seed)

    @property
    def metadata(self) -> dict[str, Any]:
        """The training configuration and command recorded with the shipped weights."""
        return dict(self._metadata)

    def _load(self) -> dict[str, np.ndarray]:
        if self._weights is None:
            self._weights, self._metadata = load_policy_weights(DATA_DIRECTORY / f"learned_k{self.n_arms}.npz", self.n_arms)
        return self._weights

    def _reset_state(self) -> None:
        weights = self._load()
        n_arms = self.n_arms
        self.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        self.t = 0
        # Unplayed pairs all share one feature vector; every cache starts from it.
        zeros = np.zeros((n_arms, n_arms), dtype=np.int64)
        features = pair_features(zeros, zeros).astype(np.float64)
        self._pair_input = features @ weights["C"] + weights["c"]  # (K, K, H)
        hidden = np.maximum(features @ weights["W1"] + weights["b1"], 0.0)
        self._embedding = np.maximum(hidden @ weights["W2"] + weights["b2"], 0.0)
        self._embedding[np.arange(n_arms), np.arange(n_arms)] = 0.0
        self._base = np.empty_like(self._pair_input)
        self._self_base = np.empty((n_arms, self._pair_input.shape[2]))
        _refresh_summaries(self._embedding, self._pair_input, weights["A"], weights["B"], weights["S"], weights["s_b"],
                           self._base, self._self_base)

        self._score_weights = (weights["d"], weights["w"], float(weights["w0"][0]), weights["s_t"], weights["s"],
                               float(weights["s0"][0]))
        self._pair_weights = tuple(weights[name] for name in ("W1", "b1", "W2", "b2", "C", "c"))
        self._summary_weights = (weights["A"], weights["B"], weights["S"], weights["s_b"])

    def _tau(self) -> float:
        # The time value of the observation, from a table filled in blocks (exactly time_feature).
        if self.t >= _TAU_TABLE.size:
            _grow_tau_table(self.t)
        return _TAU_TABLE[self.t]

    def logits(self) -> np.ndarray:
        """The policy's score of every duel as a ``K x K`` array (``[i, j]`` for duel ``(i, j)``)."""
        out = np.empty((self.n_arms, self.n_arms))
        _scores(self._base, self._self_base, self._tau(), *self._score_weights, out)
        return out

    # ------------------------------------------------------------------ DuelingAgent API
    def act(self) -> tuple[int, int]:
        uniform = -1.0 if self.deterministic else self.rng.random()
        choice = _choose(self._base, self._self_base, self._tau(), *self._score_weights, uniform)
        return divmod(int(choice), self.n_arms)

    def observe(self, action: tuple[int, int], first_won: bool) -> None:
        first, second = check_action(action, self.n_arms)
        first_won = check_outcome(first_won)
        self.t += 1
        if first == second:
            self.wins[first, first] += 1
            return
        winner, loser = (first, second) if first_won else (second, first)
        self.wins[winner, loser] += 1
        _refresh_pair(self.wins, winner, loser, self._embedding, self._pair_input, *self._pair_weights)
        _refresh_summaries(self._embedding, self._pair_input, *self._summary_weights, self._base, self._self_base)

    def recommend(self) -> int:
        return int(empirical_copeland_winner(self.wins))
