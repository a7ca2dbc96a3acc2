"""The ``learned`` agent: a shipped, reinforcement-learned dueling policy evaluated with NumPy.

``make_agent("learned", n_arms=5, seed=0)`` loads the mean of the weights trained for 5 and 4 arms
(``agents/data/learned_k5_average.npz``; ``agents/data/README.md`` records the command and seed that
produced each file, and which file each other number of arms plays) and runs the
permutation-equivariant pair network of :mod:`dueling_gym.pair_network` with its Numba kernels --
no torch at inference.  The first 100 duels are played by the opening's weights
(``agents/data/learned_opening.npz``, trained for the early duels; with 5 arms
``learned_opening_k5.npz``, the same trained further with three cyclic Copeland winners in the mix;
from 16 arms on the first 1000, by ``agents/data/learned_opening_large.npz``, trained on 16 and 24
arms), which the size's network
then follows with everything they played; below 17 arms every duel after the 1000th is played by
a late policy (``agents/data/learned_late.npz``, trained on runs of 10^4 duels after the
shipped agent's first 1000 for their regret extrapolated to 10^5; up to 5 arms
``learned_late_small.npz``, the same trained one round further; from 12 arms on
``learned_late_large.npz``).  With 5 arms, while the counts show three or more Copeland winners
beating each other in turn above the other arms, ``learned_cycle_k5.npz`` chooses instead of the
size's network up to duel 1000, and the size's network instead of the late policy after it.

Each step the agent rebuilds the observation the policy was trained on from its own win
counts (:mod:`dueling_gym.observations`), scores every duel ``(i, j)`` with the network and
draws the duel from the softmax of the scores with its own generator ``self.rng``
(``deterministic=True``: the highest score, lowest flat index on ties).  Only the pair just
played changes its features, so ``observe`` refreshes that pair's embedding and the arm
summaries incrementally (and the arm records, which are cheap: each arm's wins minus losses);
``act`` adds the time term and evaluates the output layer
(:mod:`dueling_gym.pair_network.kernels`).
:meth:`~dueling_gym.agents.DuelingAgent.recommend` is the empirical Copeland winner of the duels played.

The weight file format, the kernels and the batch evaluator of training live in
:mod:`dueling_gym.pair_network`, and the shipped files with the rules that pick a run's files in
:mod:`dueling_gym.agents.learned_files`; their names are re-exported here for the code that
imports them from this module.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
from pathlib import Path
from typing import Any

import numba
import numpy as np

from dueling_gym.agents._pair_statistics import empirical_copeland_winner, empirical_top_cycle
from dueling_gym.agents.base import KernelDuelingAgent
from dueling_gym.agents.learned_files import (
    AS_SHIPPED,
    CYCLE_POLICY,
    DATA_DIRECTORY,
    FIVE_ARM_OPENING_POLICY,
    FIVE_ARM_POLICY,
    GENERAL_POLICY,
    LARGE_LATE_POLICY,
    LARGE_LATE_POLICY_UNTIL,
    LARGE_POLICY,
    LARGE_POLICY_FROM,
    LATE_FROM,
    LATE_POLICY,
    LONG_OPENING_DUELS,
    LONG_OPENING_FROM,
    LONG_OPENING_POLICY,
    OPENING_DUELS,
    OPENING_POLICY,
    SMALL_LATE_POLICY,
    SMALL_LATE_POLICY_UNTIL,
    opening_length,
    own_policy_path,
    policy_sizes,
    shipped_cycle_path,
    shipped_late_path,
    shipped_opening_path,
    shipped_policies,
    shipped_policy_path,
)
from dueling_gym.agents.registry import register_agent
from dueling_gym.agents.state import AgentState
from dueling_gym.pair_network import (
    WEIGHT_NAMES,
    arm_record_values,
    check_safeguard_clock,
    choose_duel,
    duel_scores,
    fill_unplayed,
    load_policy_weights,
    new_check_arrays,
    new_network_caches,
    new_safeguard_arrays,
    pack_weights,
    pair_feature_values,
    policy_episode_regret,
    record_network_duel,
    refresh_network_duel,
    safeguard_observe,
    safeguard_origin,
    safeguard_rule_digest,
    safeguard_threshold,
    safeguarded_duel,
    thompson_check_digest,
    thompson_check_observe,
    thompson_checked_duel,
    time_value,
)
from dueling_gym.validation import SeedLike, check_bool, check_integer, check_n_arms

__all__ = ["LearnedAgent", "shipped_policies", "shipped_policy_path", "policy_sizes", "GENERAL_POLICY",
           "LARGE_POLICY", "LARGE_POLICY_FROM", "OPENING_POLICY", "OPENING_DUELS", "LONG_OPENING_FROM",
           "LONG_OPENING_DUELS", "LONG_OPENING_POLICY", "FIVE_ARM_OPENING_POLICY", "FIVE_ARM_POLICY", "opening_length",
           "shipped_opening_path", "LATE_POLICY",
           "SMALL_LATE_POLICY", "SMALL_LATE_POLICY_UNTIL", "LARGE_LATE_POLICY", "LARGE_LATE_POLICY_UNTIL", "LATE_FROM",
           "shipped_late_path", "CYCLE_POLICY", "shipped_cycle_path", "cycle_rule_digest", "load_policy_weights",
           "policy_episode_regret", "WEIGHT_NAMES",
           "DATA_DIRECTORY", "pair_feature_values", "arm_record_values", "time_value"]

#: ``safeguard_from`` value meaning "as the policy file records it was trained".
AS_TRAINED = "as_trained"


def _opening_path(policy: str | None, opening: Any, n_arms: int) -> Path | None:
    """The opening file a run plays (None: none)."""
    return _phase_path(policy, opening, shipped_opening_path(n_arms))


def _late_path(policy: str | None, late: Any, n_arms: int) -> Path | None:
    """The late policy file a run plays (None: none)."""
    return _phase_path(policy, late, shipped_late_path(n_arms))


def cycle_rule_digest() -> str:
    """The SHA-256 of the source of the rule that hands top cycles to the cycle policy (the test of a
    top cycle and the choice of the network), so that a study's runs of an earlier version of the
    rule are run again rather than reused as if they were this version's."""
    source = inspect.getsource(empirical_top_cycle.py_func) + inspect.getsource(_network_choosing.py_func)
    return hashlib.sha256(source.encode()).hexdigest()


def _cycle_path(policy: str | None, cycle: Any, n_arms: int) -> Path | None:
    """The cycle policy file a run plays (None: none)."""
    return _phase_path(policy, cycle, shipped_cycle_path(n_arms))


def _phase_path(policy: str | None, value: Any, shipped: Path | None) -> Path | None:
    """The file an opening or late policy argument names (None: none): ``"shipped"`` is the
    ``shipped`` file with the shipped policies and none with a policy file of the user's."""
    if value is None:
        return None
    if isinstance(value, str) and value == AS_SHIPPED:
        return shipped if policy is None else None
    return Path(value)


def _check_phase_argument(name: str, value: Any) -> str | None:
    """An opening or late policy argument: None, ``"shipped"`` or the path of an existing file (as str)."""
    if value is None or (isinstance(value, str) and value == AS_SHIPPED):
        return value
    if not isinstance(value, (str, Path)):
        raise TypeError(f"{name} must be the path of an exported policy file, {AS_SHIPPED!r} or None, "
                        f"got {type(value).__name__}")
    if not Path(value).is_file():
        raise ValueError(f"{name} policy file {str(value)!r} does not exist")
    return str(value)


def _read_weights(path: Path, n_arms: int | None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """:func:`load_policy_weights` through a cache keyed by the file's identity (path, size and
    modification time): an evaluation creates one agent per run, and reading the archive costs
    more than a thousand duels.  Callers copy what they keep."""
    resolved = path.resolve()
    status = resolved.stat()
    return _read_weights_cached(str(resolved), status.st_size, status.st_mtime_ns, n_arms)


@functools.lru_cache(maxsize=16)
def _read_weights_cached(path: str, size: int, modified_ns: int, n_arms: int | None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    return load_policy_weights(path, n_arms)


class LearnedState(AgentState, fields=[
    "rng",
    "wins",           # W[i, j]: wins of i over j; self-duels counted on the diagonal
    "caches",         # the caches (dueling_gym.pair_network.NetworkCaches) of the network that plays last:
    "weights",        # the late policy when there is one, else the size's (dueling_gym.pair_network.PairWeights)
    # The opening network's caches and weights (the last network's when there is no opening) and
    # how many duels it plays (0: none).
    "opening_caches",
    "opening_weights",
    "opening_duels",
    # With a late policy, the size network's caches and weights and the duel up to which it
    # chooses (0: no late policy, the size's network is the last).
    "middle_caches",
    "middle_weights",
    "middle_until",
    # The cycle policy's caches and weights and the duel up to which it may choose (0: none).
    "cycle_caches",
    "cycle_weights",
    "cycle_until",
    "cycle_counts",   # scratch of K empirical Copeland counts for the top-cycle test (allocated once)
    "deterministic",  # play the highest score instead of drawing from the softmax
    "evidence",       # the safeguard's arrays (dueling_gym.pair_network.safeguard): N_ij KL(p_ij, 1/2),
    "status",         # the pairs' decisions,
    "bounds",         # the arms' Copeland bounds
    "expiry",         # and when the decisions must be rebuilt
    "safeguard_from", # the duel from which the safeguard is on (0: never)
    "safeguard_origin",  # its threshold is log(t / safeguard_origin)
    "check_from",     # the duel from which the Thompson check judges the network's self-duels (0: never)
    "posterior",      # the check's arrays (dueling_gym.pair_network.thompson_check): P(i beats j) a posteriori,
    "sampled_wins",   # scratch of one posterior sample's orientations
    "check_scores",   # and of the sample's and the counts' Copeland scores (2 x K)
    "t",
]):
    """Numba-side state of :class:`LearnedAgent`."""


@numba.njit(cache=True, nogil=True)
def _network_choosing(state):
    """Which network chooses the next duel: 0 the opening, 1 the cycle policy, 2 the size's, 3 the last."""
    if state.t < state.opening_duels:
        return 0
    if state.cycle_until > 0 and empirical_top_cycle(state.wins, state.cycle_counts):
        # Three Copeland winners beating each other in turn cost nothing to duel: the late policy's
        # checks cost more there than they find, so the size's network keeps choosing after the cycle
        # policy's duels (with no late policy, the last network is the size's).
        return 1 if state.t < state.cycle_until else (2 if state.middle_until > 0 else 3)
    return 2 if state.t < state.middle_until else 3


@numba.njit(cache=True, nogil=True)
def learned_act(state):
    uniform = -1.0 if state.deterministic else state.rng.random()
    network = _network_choosing(state)
    if network == 0:
        choice = choose_duel(state.opening_caches, state.wins, time_value(state.t), state.opening_weights, uniform)
    elif network == 1:
        choice = choose_duel(state.cycle_caches, state.wins, time_value(state.t), state.cycle_weights, uniform)
    elif network == 2:
        choice = choose_duel(state.middle_caches, state.wins, time_value(state.t), state.middle_weights, uniform)
    else:
        choice = choose_duel(state.caches, state.wins, time_value(state.t), state.weights, uniform)
    n_arms = state.wins.shape[0]
    if state.check_from > 0 and state.t >= state.check_from and choice // n_arms == choice % n_arms:
        choice = thompson_checked_duel(state.wins, state.posterior, state.sampled_wins, state.check_scores,
                                       state.rng, choice // n_arms, np.log(state.t + 1.0))
    if state.safeguard_from > 0:  # off: not even the bookkeeping, which costs a quarter of a duel
        threshold = safeguard_threshold(state.t, state.safeguard_from, state.safeguard_origin)
        choice = safeguarded_duel(state.wins, threshold, state.evidence, state.status, state.bounds, state.expiry,
                                  choice // n_arms, choice % n_arms)
    return choice // n_arms, choice % n_arms


@numba.njit(cache=True, nogil=True)
def learned_observe(state, first, second, first_won):
    state.t += 1
    if first == second:
        # A self-duel refreshes no cache (record_network_duel): counted here without reading the
        # caches and weights from the state, which costs a reference count per array.
        state.wins[first, first] += 1
    else:
        # Every network reads every duel before its turn, so each takes over with caches of
        # every duel played.
        record_network_duel(state.wins, first, second, first_won, state.caches, state.weights)
        if state.t < state.middle_until or (state.cycle_until > 0 and state.middle_until > 0):
            refresh_network_duel(state.wins, first, second, first_won, state.middle_caches, state.middle_weights)
        if state.t < state.opening_duels:
            refresh_network_duel(state.wins, first, second, first_won, state.opening_caches, state.opening_weights)
        if state.t < state.cycle_until:
            refresh_network_duel(state.wins, first, second, first_won, state.cycle_caches, state.cycle_weights)
    if state.check_from > 0:
        thompson_check_observe(state.wins, first, second, state.posterior)
    if state.safeguard_from > 0:
        threshold = safeguard_threshold(state.t, state.safeguard_from, state.safeguard_origin)
        safeguard_observe(state.wins, first, second, threshold, state.evidence, state.status, state.bounds,
                          state.expiry)


@numba.njit(cache=True, nogil=True)
def learned_recommend(state):
    return empirical_copeland_winner(state.wins)


@numba.njit(cache=True, nogil=True)
def _learned_logits(state, out):
    network = _network_choosing(state)
    if network == 0:
        duel_scores(state.opening_caches, state.wins, time_value(state.t), state.opening_weights, out)
    elif network == 1:
        duel_scores(state.cycle_caches, state.wins, time_value(state.t), state.cycle_weights, out)
    elif network == 2:
        duel_scores(state.middle_caches, state.wins, time_value(state.t), state.middle_weights, out)
    else:
        duel_scores(state.caches, state.wins, time_value(state.t), state.weights, out)


@register_agent("learned", target="copeland")
class LearnedAgent(KernelDuelingAgent):
    """A learned pair policy over sufficient statistics, shipped with the package (dueling-gym's own; no paper).

    Parameters
    ----------
    n_arms : int
        Number of arms, at least 2: the policy file of that size when one is shipped
        (:func:`~dueling_gym.agents.learned_files.shipped_policies`), else the K = 8 weights from
        :data:`~dueling_gym.agents.learned_files.LARGE_POLICY_FROM` arms on and the general policy
        below (the weights do not depend on ``K``; :func:`~dueling_gym.agents.learned_files.shipped_policy_path`).
    deterministic : bool, default False
        False: duels drawn from the policy's distribution (what it was trained with).  True: the
        most likely duel.
    safeguard_from : int, None or "as_trained", default "as_trained"
        The duel from which the safeguard replaces the duels the data no longer justify
        (:mod:`dueling_gym.pair_network.safeguard`), which keeps the regret logarithmic whatever
        the network scores; None: never (the network alone).  ``"as_trained"``: what the policy
        file records it was trained with (``dueling-gym train es --safeguard-from``; None for
        a policy trained without).
    safeguard_clock : {"run", "start"}, default "run"
        The evidence the safeguard asks of a decided pair after ``t`` duels: ``log t`` (``"run"``),
        or ``log(t / safeguard_from)`` (``"start"``), which starts from nothing when the safeguard
        does, so that its checks come gradually instead of all at once.
    thompson_check_from : int or None, default None
        The number of duels after which every self-duel the network proposes is judged by a
        posterior sample of the preferences and by the counts
        (:mod:`dueling_gym.pair_network.thompson_check`): kept when both crown its arm a Copeland
        winner, else replaced by a duel of a pair on which they part (the sample draws from
        ``self.rng``).  None: never (as shipped).  The network's own choices
        are unchanged up to that duel; its price and its effect on the published matrices are in
        ``docs/learned-consistency.md``.  With the safeguard on too, the safeguard judges the result.
    policy : str, optional
        Path of an exported policy file (``policy.npz`` written by ``dueling-gym train``) to run
        instead of the shipped one.
    opening : str or None, default "shipped"
        The policy played for the first ``opening_duels`` duels before ``policy`` takes over.
        ``"shipped"``: the shipped opening (:func:`~dueling_gym.agents.learned_files.shipped_opening_path`) with
        the shipped policies, none with a ``policy`` file (which then plays from the first duel,
        as it was trained); None: none; a path: that exported policy file.
    opening_duels : int or None, default None
        How many duels the opening plays (at least 1); None: the shipped length for ``n_arms``,
        100 duels, 1000 from 16 arms on (:func:`~dueling_gym.agents.learned_files.opening_length`).
    late : str or None, default "shipped"
        The policy played after ``late_from`` duels (and after the opening), having read every
        duel (``dueling-gym train es --after-shipped`` trains one).  ``"shipped"``: the shipped
        late policy (:func:`~dueling_gym.agents.learned_files.shipped_late_path`; none for sizes
        without one) with the shipped policies, none with a ``policy`` file; None: none; a path:
        that exported policy file.
    late_from : int or None, default None
        The duel after which the late policy chooses (at least 1); None:
        :data:`~dueling_gym.agents.learned_files.LATE_FROM`.  When the opening is longer, the late policy
        takes over from the opening.
    cycle : str or None, default "shipped"
        The policy played instead of the size's, after the opening and up to ``cycle_until`` duels,
        in a top cycle (at least three arms, not all, tie on the most empirical Copeland wins and
        each beats every arm outside the tie); after it the size's policy chooses there instead of
        the late policy.  ``"shipped"``: :func:`~dueling_gym.agents.learned_files.shipped_cycle_path` (5
        arms only) with the shipped policies, none with a ``policy`` file; None: none; a path: that file.
    cycle_until : int or None, default None
        The duel up to which the cycle policy chooses in a top cycle (at least 1); None:
        :data:`~dueling_gym.agents.learned_files.LATE_FROM`.
    seed : int, SeedSequence or None
        Seed of ``self.rng``, which draws the duels.

    Notes
    -----
    The policy reads no horizon: its only notion of time is ``log(1 + t)``, so it runs anytime.
    With an opening, both networks read every duel from the first, and the size's network decides
    from duel ``opening_duels + 1`` on with everything the opening played; a late policy reads them
    all too and decides from duel ``max(opening_duels, late_from) + 1`` on, and a cycle policy
    reads every duel up to ``cycle_until`` and decides in the top cycles among them.
    Beyond the horizons it was trained on (``agents/data/README.md``) the network extrapolates
    and may commit to a wrong arm for good; ``safeguard_from`` bounds that (its price on the
    published matrices is in ``docs/learned-consistency.md``).
    """

    guarantee = (
        "None proven: dueling-gym's own reinforcement-learned policy (no paper) whose regret is measured on "
        "the published matrices, not bounded; beyond the horizons it was trained on (runs of 10^4 duels for its "
        "late policy) the network alone may "
        "commit to a wrong arm (linear regret), and the library's safeguard (``safeguard_from``) re-checks "
        "such commitments with RMED's divergence test so that the regret grows like ``log t``, an argument "
        "checked by measurement, not a proof; the cheaper Thompson check (``thompson_check_from``) re-checks "
        "its self-duels by posterior sampling, also measured, not proved."
    )

    act_kernel = learned_act
    observe_kernel = learned_observe
    recommend_kernel = learned_recommend

    def __init__(self, n_arms: int, *, deterministic: bool = False, policy: str | None = None,
                 opening: str | None = AS_SHIPPED, opening_duels: int | None = None,
                 late: str | None = AS_SHIPPED, late_from: int | None = None,
                 cycle: str | None = AS_SHIPPED, cycle_until: int | None = None,
                 safeguard_from: int | str | None = AS_TRAINED, safeguard_clock: str = "run",
                 thompson_check_from: int | None = None, seed: SeedLike = None):
        self.deterministic = check_bool("deterministic", deterministic)
        self.thompson_check_from = (None if thompson_check_from is None
                                    else check_integer("thompson_check_from", thompson_check_from, minimum=1))
        n_arms = check_n_arms(n_arms)
        if safeguard_from is not None and not (isinstance(safeguard_from, str) and safeguard_from == AS_TRAINED):
            if isinstance(safeguard_from, str):
                raise ValueError(f"safeguard_from must be an integer >= 1, None or {AS_TRAINED!r}, got {safeguard_from!r}")
            safeguard_from = check_integer("safeguard_from", safeguard_from, minimum=1)
        self.safeguard_from = safeguard_from
        self.safeguard_clock = check_safeguard_clock(safeguard_clock)
        if policy is None:
            if not shipped_policy_path(n_arms).is_file():
                raise ValueError(f"no learned policy is shipped for n_arms={n_arms} (the package lacks "
                                 f"{GENERAL_POLICY.name}); train one with `dueling-gym train` and pass policy=PATH")
        else:
            if not isinstance(policy, (str, Path)):
                raise TypeError(f"policy must be the path of an exported policy file, got {type(policy).__name__}")
            if not Path(policy).is_file():
                raise ValueError(f"policy file {str(policy)!r} does not exist")
            policy = str(policy)
        self.policy = policy
        self.opening_duels = (opening_length(n_arms) if opening_duels is None
                              else check_integer("opening_duels", opening_duels, minimum=1))
        self.opening = opening = _check_phase_argument("opening", opening)
        opening_path = _opening_path(policy, opening, n_arms)
        if opening_path is not None and not opening_path.is_file():
            raise ValueError(f"the package lacks its opening policy {opening_path.name}: pass opening=None to play "
                             f"the size's policy from the first duel")
        self.late_from = LATE_FROM if late_from is None else check_integer("late_from", late_from, minimum=1)
        self.late = _check_phase_argument("late", late)
        self.cycle_until = LATE_FROM if cycle_until is None else check_integer("cycle_until", cycle_until, minimum=1)
        self.cycle = _check_phase_argument("cycle", cycle)
        self._weights: dict[str, np.ndarray] | None = None
        # The opening's and the late policy's weights and metadata once read, by phase.
        self._phases: dict[str, tuple[dict[str, np.ndarray], dict[str, Any]]] = {}
        super().__init__(n_arms, seed=seed)

    @classmethod
    def plays_arms(cls, n_arms: int) -> bool:
        """The general policy plays every number of arms from 2."""
        return n_arms >= 2 and shipped_policy_path(n_arms).is_file()

    @classmethod
    def content_digests(cls, n_arms: int, hyperparameters: dict[str, Any]) -> dict[str, str]:
        """The SHA-256 of the policy file the agent plays (the shipped one for ``n_arms`` by default),
        of its opening's file with the opening's length when it plays one, of its late policy's file
        with the duel it takes over after when it plays one, of its cycle policy's file with the duel
        up to which it chooses and the source of the rule that hands it the top cycles when it plays one, and, when the safeguard is on, of the
        safeguard's rule (a run with another version of the rule is another run)."""
        policy = hyperparameters.get("policy")
        path = shipped_policy_path(n_arms) if policy is None else Path(policy)
        if not path.is_file():
            return {}  # the constructor refuses it with its own message
        digests = {"policy_sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
        opening = _opening_path(policy, hyperparameters.get("opening", AS_SHIPPED), n_arms)
        if opening is not None and opening.is_file():
            digests["opening_sha256"] = hashlib.sha256(opening.read_bytes()).hexdigest()
            # The default length enters too: a run with another default is another run.
            length = hyperparameters.get("opening_duels")
            digests["opening_duels"] = str(opening_length(n_arms) if length is None else length)
        late = _late_path(policy, hyperparameters.get("late", AS_SHIPPED), n_arms)
        if late is not None and late.is_file():
            digests["late_sha256"] = hashlib.sha256(late.read_bytes()).hexdigest()
            start = hyperparameters.get("late_from")
            digests["late_from"] = str(LATE_FROM if start is None else start)
        cycle = _cycle_path(policy, hyperparameters.get("cycle", AS_SHIPPED), n_arms)
        if cycle is not None and cycle.is_file():
            digests["cycle_sha256"] = hashlib.sha256(cycle.read_bytes()).hexdigest()
            until = hyperparameters.get("cycle_until")
            digests["cycle_until"] = str(LATE_FROM if until is None else until)
            digests["cycle_rule_sha256"] = cycle_rule_digest()
        start = hyperparameters.get("safeguard_from", AS_TRAINED)
        if isinstance(start, str) and start == AS_TRAINED:
            start = _read_weights(path, None)[1].get("config", {}).get("safeguard_from")
        if start is not None:
            digests["safeguard_sha256"] = safeguard_rule_digest()
        if hyperparameters.get("thompson_check_from") is not None:
            digests["thompson_check_sha256"] = thompson_check_digest()
        return digests

    @property
    def metadata(self) -> dict[str, Any]:
        """The training configuration and command recorded with the shipped weights."""
        self._load()
        return dict(self._metadata)

    @property
    def opening_metadata(self) -> dict[str, Any] | None:
        """The training configuration and command recorded with the opening's weights, or None without an opening."""
        return None if self._load_opening() is None else dict(self._phases["opening"][1])

    def _load(self) -> dict[str, np.ndarray]:
        if self._weights is None:
            if self.policy is None:
                path = shipped_policy_path(self.n_arms)
                # A size's own file must be that size's; another size's file plays any K (the
                # weights do not depend on K).
                own = path in (own_policy_path(self.n_arms), FIVE_ARM_POLICY)
                weights, metadata = _read_weights(path, self.n_arms if own else None)
            else:
                weights, metadata = self._read_exported(Path(self.policy))
            self._weights = {name: array.copy() for name, array in weights.items()}
            self._metadata = copy.deepcopy(metadata)
        return self._weights

    @property
    def late_metadata(self) -> dict[str, Any] | None:
        """The training configuration and command recorded with the late policy's weights, or None without one."""
        return None if self._load_late() is None else dict(self._phases["late"][1])

    def _load_opening(self) -> dict[str, np.ndarray] | None:
        return self._load_phase("opening", _opening_path(self.policy, self.opening, self.n_arms))

    def _load_late(self) -> dict[str, np.ndarray] | None:
        return self._load_phase("late", _late_path(self.policy, self.late, self.n_arms))

    @property
    def cycle_metadata(self) -> dict[str, Any] | None:
        """The training configuration and command recorded with the cycle policy's weights, or None without one."""
        return None if self._load_cycle() is None else dict(self._phases["cycle"][1])

    def _load_cycle(self) -> dict[str, np.ndarray] | None:
        return self._load_phase("cycle", _cycle_path(self.policy, self.cycle, self.n_arms))

    def _load_phase(self, phase: str, path: Path | None) -> dict[str, np.ndarray] | None:
        """The weights of the opening or the late policy (None: the run plays none), read once."""
        if path is None:
            return None
        if phase not in self._phases:
            weights, metadata = self._read_exported(path)
            self._phases[phase] = ({name: array.copy() for name, array in weights.items()}, copy.deepcopy(metadata))
        return self._phases[phase][0]

    def _read_exported(self, path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """An exported policy file's weights and metadata, refused when it was trained for one other
        size, unless it is the general policy's file, which the agent plays at other sizes itself (so
        a run can name the file a size played before it had one of its own)."""
        weights, metadata = _read_weights(path, None)
        sizes = policy_sizes(metadata)
        if sizes is not None and self.n_arms not in sizes and path.resolve() != GENERAL_POLICY.resolve():
            raise ValueError(f"{path} holds a policy for {metadata['n_arms']} arms, not {self.n_arms}")
        return weights, metadata

    def _reset_state(self) -> None:
        n_arms = self.n_arms
        self.wins = np.zeros((n_arms, n_arms), dtype=np.int64)
        size, late, opening = self._load(), self._load_late(), self._load_opening()
        opening_duels = 0 if opening is None else self.opening_duels
        # The network that plays last counts every duel: the late policy's when there is one.
        weights, caches = self._network(size if late is None else late)
        if late is not None and opening_duels < self.late_from:
            middle_weights, middle_caches = self._network(size)
            middle_until = self.late_from
        else:
            # No late policy, or one the opening hands over to itself: the size's network is the
            # last or never chooses (not built).  The state's types stay those of three networks.
            middle_weights, middle_caches, middle_until = weights, caches, 0
        opening_weights, opening_caches = (weights, caches) if opening is None else self._network(opening)
        cycle = self._load_cycle()
        cycle_weights, cycle_caches = (weights, caches) if cycle is None else self._network(cycle)
        cycle_until = 0 if cycle is None else self.cycle_until
        evidence, status, bounds, expiry = new_safeguard_arrays(n_arms)
        posterior, sampled_wins, check_scores = new_check_arrays(n_arms)
        start = self._safeguard_start()
        self.state = LearnedState(rng=self.rng, wins=self.wins, caches=caches, weights=weights,
                                  opening_caches=opening_caches, opening_weights=opening_weights,
                                  opening_duels=opening_duels, middle_caches=middle_caches,
                                  middle_weights=middle_weights, middle_until=middle_until,
                                  cycle_caches=cycle_caches, cycle_weights=cycle_weights, cycle_until=cycle_until,
                                  cycle_counts=np.zeros(n_arms, dtype=np.int64),
                                  deterministic=self.deterministic, evidence=evidence, status=status, bounds=bounds,
                                  expiry=expiry, safeguard_from=start,
                                  safeguard_origin=safeguard_origin(start, self.safeguard_clock),
                                  check_from=0 if self.thompson_check_from is None else self.thompson_check_from,
                                  posterior=posterior, sampled_wins=sampled_wins, check_scores=check_scores, t=0)

    def _network(self, weights: dict[str, np.ndarray]) -> tuple[Any, Any]:
        """Packed ``weights`` and their caches, filled for the run's (empty) win counts."""
        packed = pack_weights(weights)
        caches = new_network_caches(self.n_arms, packed)
        fill_unplayed(caches, packed, self.wins)
        return packed, caches

    def _safeguard_start(self) -> int:
        """The safeguard's first duel as the kernels read it (0: never)."""
        start = self.safeguard_from
        if isinstance(start, str):  # as trained
            start = self._metadata.get("config", {}).get("safeguard_from")
        return 0 if start is None else int(start)

    def logits(self) -> np.ndarray:
        """The policy's score of every duel as a ``K x K`` array (``[i, j]`` for duel ``(i, j)``)."""
        out = np.empty((self.n_arms, self.n_arms))
        _learned_logits(self.state, out)
        return out
