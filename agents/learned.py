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
summaries incrementally (and the arm records, which are cheap: each arm's wins minus losses);
``act`` adds the time term and evaluates the output layer.  The per-step arithmetic runs in
small Numba-compiled loops over NumPy arrays (the network is a few hundred multiply-adds;
NumPy's per-call overhead would dominate it).
:meth:`~dueling_gym.agents.base.DuelingAgent.recommend` is the empirical Copeland winner of the duels played.
"""

from __future__ import annotations

import copy
import functools
import hashlib
from pathlib import Path
from typing import Any

import numba
import numpy as np

from dueling_gym.agents import _policy_validation as policy_files
from dueling_gym.agents._pair_statistics import empirical_copeland_winner
from dueling_gym.agents.base import AgentState, KernelDuelingAgent, SeedLike, register_agent
from dueling_gym.validation import check_bool, check_n_arms

__all__ = ["LearnedAgent", "shipped_policies", "load_policy_weights", "policy_episode_regret", "WEIGHT_NAMES", "DATA_DIRECTORY"]

#: Where the shipped weights live (``learned_k{K}.npz``).
DATA_DIRECTORY = Path(__file__).resolve().parent / "data"
WEIGHT_NAMES = _WEIGHT_NAMES = policy_files.WEIGHT_NAMES
#: Arrays of the first version of the network (mean-pooled arm summaries, no global context).
_MEAN_ONLY_NAMES = policy_files.MEAN_ONLY_NAMES


def shipped_policies() -> list[int]:
    """Numbers of arms ``K`` with a shipped policy."""
    found = []
    for path in DATA_DIRECTORY.glob("learned_k*.npz"):
        digits = path.stem[len("learned_k"):]
        if digits.isdigit():
            found.append(int(digits))
    return sorted(found)


def load_policy_weights(path: str | Path, n_arms: int | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read exported pair-network weights (float64 copies) and their metadata; check ``n_arms``
    (``None``: accept the file's own, e.g. for a starting point of training, since the weights do
    not depend on K).

    A file of the first version of the network (arm summaries by mean only, no global context:
    no ``G``, ``A`` of ``hidden`` rows) is read as the same network with the max-pooling rows of
    ``A``, ``B``, ``S`` and the context weights ``G``, ``G_s`` set to zero; likewise a file
    without the self-duel weights ``s_n`` or the arm-record weights ``R_a``, ``R_b``, ``R_s``
    (written before they existed) gets them at zero, which leaves its scores unchanged.

    Every array is checked before the compiled kernels see it (they index the arrays without
    bounds checks): its dtype (real floating point for the weights, one integer for ``n_arms``
    and ``hidden``, one JSON object string for ``metadata``), its exact shape for the declared
    ``hidden``, and finite values.  Nothing is unpickled.

    Raises
    ------
    ValueError
        The file is not a readable ``.npz`` policy, or an array is missing or wrong (the message
        names the file and the array), or the policy is for another number of arms.
    OSError
        The file cannot be opened.
    """
    weights, trained_arms, hidden, metadata = policy_files.read_policy_file(path)
    if n_arms is not None and trained_arms != n_arms:
        raise ValueError(f"{path} holds a policy for {trained_arms} arms, not {n_arms}")
    metadata["hidden"] = hidden
    metadata["n_arms"] = trained_arms
    return weights, metadata


def _read_weights(path: Path, n_arms: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """:func:`load_policy_weights` through a cache keyed by the file's identity (path, size and
    modification time): an evaluation creates one agent per run, and reading the archive costs
    more than a thousand duels.  Callers copy what they keep."""
    resolved = path.resolve()
    status = resolved.stat()
    return _read_weights_cached(str(resolved), status.st_size, status.st_mtime_ns, n_arms)


@functools.lru_cache(maxsize=16)
def _read_weights_cached(path: str, size: int, modified_ns: int, n_arms: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    return load_policy_weights(path, n_arms)


@numba.njit(cache=True, nogil=True)
def time_value(n_duels: int) -> float:
    """The time channel after ``n_duels`` duels, exactly :func:`~dueling_gym.observations.time_feature`
    (``log(1 + t) / 10`` rounded to float32)."""
    return np.float64(np.float32(np.log1p(np.float64(n_duels)) / 10.0))


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
def _refresh_arm(embedding, arm, A, B, S, summary, projections):  # pragma: no cover - compiled
    """Arm ``arm``'s summary ``[mean_j g_arm,j, max_j g_arm,j]`` (over opponents ``j``) and its
    three projections ``summary @ A``, ``@ B``, ``@ S``."""
    n_arms, _, hidden = embedding.shape
    for k in range(hidden):
        total = 0.0
        largest = 0.0  # embeddings are ReLU outputs, so 0 is below every one of them
        for j in range(n_arms):
            if j != arm:
                value = embedding[arm, j, k]
                total += value
                if value > largest:
                    largest = value
        summary[arm, k] = total / (n_arms - 1)
        summary[arm, hidden + k] = largest
    for k in range(hidden):
        as_first = 0.0
        as_second = 0.0
        own = 0.0
        for f in range(2 * hidden):
            value = summary[arm, f]
            as_first += value * A[f, k]
            as_second += value * B[f, k]
            own += value * S[f, k]
        projections[0, arm, k] = as_first
        projections[1, arm, k] = as_second
        projections[2, arm, k] = own


@numba.njit(cache=True, nogil=True)
def arm_record_values(wins, out):  # pragma: no cover - compiled
    """Every arm's record, exactly :func:`~dueling_gym.observations.arm_records` (float64
    arithmetic in the same order, rounded to float32)."""
    n_arms = wins.shape[0]
    net = np.zeros(n_arms)
    duels = np.zeros(n_arms)
    for i in range(n_arms):
        for j in range(n_arms):
            if i != j:
                net[i] += wins[i, j] - wins[j, i]
                duels[i] += wins[i, j] + wins[j, i]
    leader = net.max()
    for i in range(n_arms):
        root = np.sqrt(duels[i] + 1.0)
        out[i, 0] = np.float32(min(max(net[i] / root / 4.0, -2.5), 2.5))
        out[i, 1] = np.float32(max((net[i] - leader) / root / 4.0, -2.5))
        out[i, 2] = np.float32(net[i] / (duels[i] + 1.0))


@numba.njit(cache=True, nogil=True)
def _refresh_bases(summary, projections, pair_input, G, G_s, s_b, base, self_base, wins, R_a, R_b, R_s):  # pragma: no cover - compiled
    """The score layers' inputs (before the time term) from the arm projections, the pair inputs,
    the global context ``mean_i summary_i`` (through ``G`` for duels, ``G_s`` for self-duels) and
    the arm records of ``wins`` (through ``R_a``, ``R_b`` for the two arms of a duel, ``R_s`` for
    a self-duel)."""
    n_arms, width = summary.shape
    hidden = base.shape[2]
    context = np.zeros(width)
    for i in range(n_arms):
        for f in range(width):
            context[f] += summary[i, f]
    context /= n_arms
    duel_context = np.zeros(hidden)
    self_context = np.zeros(hidden)
    for k in range(hidden):
        for f in range(width):
            duel_context[k] += context[f] * G[f, k]
            self_context[k] += context[f] * G_s[f, k]
    record = np.empty((n_arms, R_a.shape[0]))
    arm_record_values(wins, record)
    record_terms = np.zeros((3, n_arms, hidden))
    for i in range(n_arms):
        for k in range(hidden):
            for f in range(R_a.shape[0]):
                record_terms[0, i, k] += record[i, f] * R_a[f, k]
                record_terms[1, i, k] += record[i, f] * R_b[f, k]
                record_terms[2, i, k] += record[i, f] * R_s[f, k]
    for i in range(n_arms):
        for k in range(hidden):
            self_base[i, k] = projections[2, i, k] + s_b[k] + self_context[k] + record_terms[2, i, k]
        for j in range(n_arms):
            for k in range(hidden):
                base[i, j, k] = (projections[0, i, k] + projections[1, j, k] + pair_input[i, j, k] + duel_context[k]
                                 + record_terms[0, i, k] + record_terms[1, j, k])


@numba.njit(cache=True, nogil=True)
def _scores(base, self_base, wins, tau, d, w, w0, s_t, s_n, s, s0, out):  # pragma: no cover - compiled
    n_arms, _, hidden = base.shape
    for i in range(n_arms):
        for j in range(n_arms):
            if i == j:
                # How often the arm has been played against itself: exploitation so far.
                plays = np.float64(np.float32(np.log1p(np.float64(wins[i, i])) / 8.0))
                value = s0
                for k in range(hidden):
                    pre = self_base[i, k] + tau * s_t[k] + plays * s_n[k]
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
def _choose(base, self_base, wins, tau, d, w, w0, s_t, s_n, s, s0, uniform):  # pragma: no cover - compiled
    """Flat index of the duel: argmax of the scores (``uniform < 0``) or a softmax draw."""
    n_arms = base.shape[0]
    scores = np.empty((n_arms, n_arms))
    _scores(base, self_base, wins, tau, d, w, w0, s_t, s_n, s, s0, scores)
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


@numba.njit(cache=True, nogil=True)
def _fill_unplayed(embedding, pair_input, summary, projections, base, self_base,
                   W1, b1, W2, b2, A, B, C, c, S, s_b, G, G_s, wins, R_a, R_b, R_s):  # pragma: no cover - compiled
    """Caches of a run with no duels yet: every pair has the features of zero counts."""
    n_arms, _, hidden = embedding.shape
    features = np.empty(W1.shape[0])
    pair_feature_values(0, 0, features)
    first_layer = np.empty(hidden)
    for k in range(hidden):
        value = b1[k]
        for f in range(W1.shape[0]):
            value += features[f] * W1[f, k]
        first_layer[k] = value if value > 0.0 else 0.0
    for i in range(n_arms):
        for j in range(n_arms):
            for k in range(hidden):
                value = c[k]
                for f in range(C.shape[0]):
                    value += features[f] * C[f, k]
                pair_input[i, j, k] = value
                if i == j:
                    embedding[i, j, k] = 0.0  # no self-pair enters the arm summaries
                else:
                    value = b2[k]
                    for f in range(hidden):
                        value += first_layer[f] * W2[f, k]
                    embedding[i, j, k] = value if value > 0.0 else 0.0
    for arm in range(n_arms):
        _refresh_arm(embedding, arm, A, B, S, summary, projections)
    _refresh_bases(summary, projections, pair_input, G, G_s, s_b, base, self_base, wins, R_a, R_b, R_s)


@numba.njit(cache=True, nogil=True)
def _record(wins, first, second, first_won, embedding, pair_input, summary, projections, base, self_base,
            W1, b1, W2, b2, A, B, C, c, S, s_b, G, G_s, R_a, R_b, R_s):  # pragma: no cover - compiled
    """Count a duel and refresh the caches of the pair it changed (a self-duel changes none)."""
    if first == second:
        wins[first, first] += 1
        return
    winner, loser = (first, second) if first_won else (second, first)
    wins[winner, loser] += 1
    _refresh_pair(wins, winner, loser, embedding, pair_input, W1, b1, W2, b2, C, c)
    # Only the two arms of the pair change their summaries; the context changes every score.
    _refresh_arm(embedding, winner, A, B, S, summary, projections)
    _refresh_arm(embedding, loser, A, B, S, summary, projections)
    _refresh_bases(summary, projections, pair_input, G, G_s, s_b, base, self_base, wins, R_a, R_b, R_s)


@numba.njit(cache=True, nogil=True)
def _play_episodes(W1, b1, W2, b2, A, B, C, c, d, w, w0, S, s_b, s_t, s, s0, G, G_s, s_n, R_a, R_b, R_s,
                   probabilities, regrets, action_uniforms, outcome_uniforms, deterministic):  # pragma: no cover - compiled
    """Cumulative regret of the policy on each problem: the agent's kernels in one loop, duels
    drawn as ``outcome_uniform < P[first, second]``."""
    n_problems, n_arms, _ = probabilities.shape
    horizon = outcome_uniforms.shape[1]
    hidden = W1.shape[1]
    totals = np.zeros(n_problems)
    wins = np.empty((n_arms, n_arms), dtype=np.int64)
    embedding = np.empty((n_arms, n_arms, hidden))
    pair_input = np.empty((n_arms, n_arms, hidden))
    summary = np.empty((n_arms, 2 * hidden))
    projections = np.empty((3, n_arms, hidden))
    base = np.empty((n_arms, n_arms, hidden))
    self_base = np.empty((n_arms, hidden))
    for problem in range(n_problems):
        wins[:] = 0
        _fill_unplayed(embedding, pair_input, summary, projections, base, self_base,
                       W1, b1, W2, b2, A, B, C, c, S, s_b, G, G_s, wins, R_a, R_b, R_s)
        total = 0.0
        for t in range(horizon):
            uniform = -1.0 if deterministic else action_uniforms[problem, t]
            choice = _choose(base, self_base, wins, time_value(t), d, w, w0, s_t, s_n, s, s0, uniform)
            first, second = choice // n_arms, choice % n_arms
            total += regrets[problem, first, second]
            first_won = outcome_uniforms[problem, t] < probabilities[problem, first, second]
            _record(wins, first, second, first_won, embedding, pair_input, summary, projections, base, self_base,
                    W1, b1, W2, b2, A, B, C, c, S, s_b, G, G_s, R_a, R_b, R_s)
        totals[problem] = total
    return totals


def policy_episode_regret(
    weights: dict[str, np.ndarray],
    probabilities: np.ndarray,
    regrets: np.ndarray,
    horizon: int,
    rng: np.random.Generator,
    *,
    deterministic: bool = False,
) -> np.ndarray:
    """Cumulative regret of a pair policy over one run of ``horizon`` duels on each problem.

    The compiled twin of running :class:`LearnedAgent` with the same weights (its ``act`` and
    ``observe`` kernels, in the same order) -- used to train and evaluate policies quickly.  The
    duels and the policy's draws come from ``rng`` (not the same streams as the environment's).

    Parameters
    ----------
    weights : dict of str to ndarray
        The arrays :data:`WEIGHT_NAMES` of an exported pair policy (``w0`` and ``s0`` of shape (1,)).
    probabilities, regrets : ndarray of float, shape (n_problems, K, K)
        Preference matrices and the per-duel regret tables (e.g. ``P.regret_matrix("copeland_komiyama")``).
    horizon : int
    rng : numpy.random.Generator
    deterministic : bool
        Play the highest-scoring duel instead of drawing from the softmax.

    Returns
    -------
    ndarray of float, shape (n_problems,)
    """
    probabilities = np.ascontiguousarray(probabilities, dtype=np.float64)
    regrets = np.ascontiguousarray(regrets, dtype=np.float64)
    if probabilities.ndim != 3 or probabilities.shape != regrets.shape or probabilities.shape[1] != probabilities.shape[2]:
        raise ValueError(f"probabilities and regrets must both have shape (n_problems, K, K), got "
                         f"{probabilities.shape} and {regrets.shape}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    n_problems = probabilities.shape[0]
    action_uniforms = rng.random((n_problems, horizon))
    outcome_uniforms = rng.random((n_problems, horizon))
    arrays = [np.ascontiguousarray(weights[name], dtype=np.float64) for name in _WEIGHT_NAMES]
    arrays[10] = float(arrays[10].reshape(-1)[0])  # w0
    arrays[15] = float(arrays[15].reshape(-1)[0])  # s0
    return _play_episodes(*arrays, probabilities, regrets, action_uniforms, outcome_uniforms,
                          bool(deterministic))


class LearnedState(AgentState, fields=[
    "rng",
    "wins",           # W[i, j]: wins of i over j; self-duels counted on the diagonal
    "embedding",      # g_ij: pair embeddings (K, K, H), zero on the diagonal
    "pair_input",     # C e_ij + c: the pair's direct input to its score (K, K, H)
    "summary",        # arm summaries [mean_j g_ij, max_j g_ij] (K, 2H)
    "projections",    # summary @ A, @ B, @ S (3, K, H)
    "base",           # the score layer's input before the time term (K, K, H)
    "self_base",      # the self-duel scorer's input before the time term (K, H)
    "W1", "b1", "W2", "b2", "A", "B", "C", "c", "d", "w", "w0", "S", "s_b", "s_t", "s", "s0", "G", "G_s", "s_n",
    "R_a", "R_b", "R_s",
    "deterministic",  # play the highest score instead of drawing from the softmax
    "t",
]):
    """Numba-side state of :class:`LearnedAgent`."""


@numba.njit(cache=True, nogil=True)
def learned_act(state):
    uniform = -1.0 if state.deterministic else state.rng.random()
    choice = _choose(state.base, state.self_base, state.wins, time_value(state.t), state.d, state.w, state.w0,
                     state.s_t, state.s_n, state.s, state.s0, uniform)
    n_arms = state.wins.shape[0]
    return choice // n_arms, choice % n_arms


@numba.njit(cache=True, nogil=True)
def learned_observe(state, first, second, first_won):
    state.t += 1
    _record(state.wins, first, second, first_won, state.embedding, state.pair_input, state.summary, state.projections,
            state.base, state.self_base, state.W1, state.b1, state.W2, state.b2, state.A, state.B, state.C, state.c,
            state.S, state.s_b, state.G, state.G_s, state.R_a, state.R_b, state.R_s)


@numba.njit(cache=True, nogil=True)
def learned_recommend(state):
    return empirical_copeland_winner(state.wins)


@numba.njit(cache=True, nogil=True)
def _learned_logits(state, out):
    _scores(state.base, state.self_base, state.wins, time_value(state.t), state.d, state.w, state.w0, state.s_t,
            state.s_n, state.s, state.s0, out)


@register_agent("learned")
class LearnedAgent(KernelDuelingAgent):
    """A learned pair policy over sufficient statistics, shipped with the package (dueling-gym's own; no paper).

    Parameters
    ----------
    n_arms : int
        Number of arms; a policy must be shipped for it (see :func:`shipped_policies`), else
        ``ValueError``.
    deterministic : bool, default False
        False: duels drawn from the policy's distribution (what it was trained with).  True: the
        most likely duel.
    policy : str, optional
        Path of an exported policy file (``policy.npz`` written by ``dueling-gym train``) to run
        instead of the shipped one.
    seed : int, SeedSequence or None
        Seed of ``self.rng``, which draws the duels.

    Notes
    -----
    The policy was trained on a fixed horizon (see ``agents/data/README.md``) but reads no
    horizon: its only notion of time is ``log(1 + t)``, so it runs anytime; far beyond the
    training horizon it extrapolates.
    """

    act_kernel = learned_act
    observe_kernel = learned_observe
    recommend_kernel = learned_recommend

    def __init__(self, n_arms: int, *, deterministic: bool = False, policy: str | None = None, seed: SeedLike = None):
        self.deterministic = check_bool("deterministic", deterministic)
        n_arms = check_n_arms(n_arms)
        if policy is None:
            available = shipped_policies()
            if n_arms not in available:
                raise ValueError(f"no learned policy is shipped for n_arms={n_arms}; available: {available} "
                                 f"(train one with `dueling-gym train` and pass policy=PATH)")
        else:
            if not isinstance(policy, (str, Path)):
                raise TypeError(f"policy must be the path of an exported policy file, got {type(policy).__name__}")
            if not Path(policy).is_file():
                raise ValueError(f"policy file {str(policy)!r} does not exist")
            policy = str(policy)
        self.policy = policy
        self._weights: dict[str, np.ndarray] | None = None
        super().__init__(n_arms, seed=seed)

    @classmethod
    def content_digests(cls, n_arms: int, hyperparameters: dict[str, Any]) -> dict[str, str]:
        """The SHA-256 of the policy file the agent plays (the shipped one for ``n_arms`` by default)."""
        policy = hyperparameters.get("policy")
        path = DATA_DIRECTORY / f"learned_k{n_arms}.npz" if policy is None else Path(policy)
        if not path.is_file():
            return {}  # the constructor refuses it with its own message
        return {"policy_sha256": hashlib.sha256(path.read_bytes()).hexdigest()}

    @property
    def metadata(self) -> dict[str, Any]:
        """The training configuration and command recorded with the shipped weights."""
        self._load()
        return dict(self._metadata)

    def _load(self) -> dict[str, np.ndarray]:
        if self._weights is None:
            path = DATA_DIRECTORY / f"learned_k{self.n_arms}.npz" if self.policy is None else Path(self.policy)
            weights, metadata = _read_weights(path, self.n_arms)
            self._weights = {name: array.copy() for name, array in weights.items()}
            self._metadata = copy.deepcopy(metadata)
        return self._weights

    def _reset_state(self) -> None:
        weights = self._load()
        n_arms, hidden = self.n_arms, weights["W1"].shape[1]
        self.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        caches = {name: np.empty(shape) for name, shape in (
            ("embedding", (n_arms, n_arms, hidden)), ("pair_input", (n_arms, n_arms, hidden)),
            ("summary", (n_arms, 2 * hidden)), ("projections", (3, n_arms, hidden)),
            ("base", (n_arms, n_arms, hidden)), ("self_base", (n_arms, hidden)))}
        _fill_unplayed(caches["embedding"], caches["pair_input"], caches["summary"], caches["projections"],
                       caches["base"], caches["self_base"],
                       *(weights[name] for name in ("W1", "b1", "W2", "b2", "A", "B", "C", "c", "S", "s_b", "G", "G_s")),
                       self.wins, weights["R_a"], weights["R_b"], weights["R_s"])
        arrays = {name: weights[name] for name in _WEIGHT_NAMES if name not in ("w0", "s0")}
        self.state = LearnedState(rng=self.rng, wins=self.wins, **caches, **arrays, w0=float(weights["w0"][0]),
                                  s0=float(weights["s0"][0]), deterministic=self.deterministic, t=0)

    def logits(self) -> np.ndarray:
        """The policy's score of every duel as a ``K x K`` array (``[i, j]`` for duel ``(i, j)``)."""
        out = np.empty((self.n_arms, self.n_arms))
        _learned_logits(self.state, out)
        return out
