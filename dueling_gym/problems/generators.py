"""Random problem generators, all driven by a :class:`numpy.random.Generator`.

Each K-armed generator is a plain function ``generator(n_arms, rng, **options) -> PreferenceMatrix``.
:class:`~dueling_gym.problems.ProblemSampler` binds one to its options so that an environment can draw a fresh
problem at every reset (``problem_sampler=ProblemSampler("utility_based", n_arms=8)``).  Both
samplers have a JSON form (``to_json`` / ``from_json``), which the environments also accept,
so that ``env.spec.to_json()`` works and ``gym.make`` rebuilds the same environment from it.

Bipartite CPE-DB instances (Chen et al. 2020) come from :func:`~dueling_gym.problems.random_bipartite_problem` on a
graph of :func:`~dueling_gym.problems.random_bipartite_graph`; :class:`BipartiteProblemSampler` redraws only the
preferences on one fixed graph, as ``CombinatorialDuel-v0`` needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.problems.bipartite import BipartiteDuelProblem
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.validation import (
    check_bool,
    check_integer,
    check_n_arms,
    check_pairwise_memory,
    check_number,
    check_probability,
    check_rng,
    check_seed,
)

__all__ = [
    "utility_based",
    "no_condorcet_winner",
    "cyclic_copeland_winners",
    "unique_copeland_winner",
    "zoghi2015_scalability",
    "ProblemSampler",
    "GENERATORS",
    "random_bipartite_graph",
    "random_bipartite_problem",
    "BipartiteProblemSampler",
]

_MAX_REJECTIONS = 10_000


def _json_options(owner: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` as JSON values (NumPy scalars become Python scalars); a ``TypeError`` names
    the first option JSON cannot hold."""
    converted: dict[str, Any] = {}
    for key, value in options.items():
        if isinstance(value, np.generic):
            value = value.item()
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise TypeError(f"{owner} option {key}={value!r} has no JSON form (JSON holds numbers, strings, "
                            "booleans and null)")
        converted[key] = value
    return converted


def _json_fields(owner: str, data: Any, required: tuple[str, ...], optional: tuple[str, ...]) -> dict[str, Any]:
    """The fields of a sampler's JSON form, checked: a mapping with exactly the expected keys."""
    if not isinstance(data, Mapping):
        raise TypeError(f"the JSON form of a {owner} is a mapping (its to_json()), got {type(data).__name__}")
    missing = [key for key in required if key not in data]
    unknown = sorted(set(data) - set(required) - set(optional))
    if missing or unknown:
        raise ValueError(f"the JSON form of a {owner} has the keys {list(required)} (and optionally "
                         f"{list(optional)}); missing {missing}, unknown {unknown}")
    options = data.get("options", {})
    if not isinstance(options, Mapping) or not all(isinstance(key, str) for key in options):
        raise TypeError(f"the options of a {owner}'s JSON form must map option names to values, got {options!r}")
    return dict(data)


def _check_gap(min_gap: Any) -> float:
    """A margin ``|P[i, j] - 1/2|`` below which no generated entry falls: a number in ``[0, 0.5)``."""
    return check_number("min_gap", min_gap, strict=False, minimum=0.0, maximum=0.5, strict_maximum=True)


def _random_upper(n_arms: int, rng: np.random.Generator, min_gap: float) -> NDArray[np.float64]:
    """Independent entries uniform on ``[0, 1/2 - min_gap] ∪ [1/2 + min_gap, 1]`` above the diagonal."""
    size = n_arms * (n_arms - 1) // 2
    magnitude = rng.uniform(min_gap, 0.5, size=size)
    sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
    matrix = np.full((n_arms, n_arms), 0.5)
    rows, cols = np.triu_indices(n_arms, 1)
    matrix[rows, cols] = 0.5 + sign * magnitude
    matrix[cols, rows] = 1.0 - matrix[rows, cols]
    return matrix


def utility_based(
    n_arms: int,
    rng: np.random.Generator,
    *,
    model: str = "bradley_terry",
    spread: float = 3.0,
) -> PreferenceMatrix:
    """A utility-based (totally ordered) problem; its best arm is a Condorcet winner.

    Utilities ``theta_i ~ Uniform(0, spread)``; Bradley-Terry gives
    ``P[i, j] = 1 / (1 + exp(-(theta_i - theta_j)))``, ``model="thurstone"`` gives
    ``Phi((theta_i - theta_j) / sqrt(2))``.  Utilities are drawn until they are pairwise
    distinct, so every pair has a strict winner.
    """
    n_arms = check_n_arms(n_arms)
    check_pairwise_memory("a generated problem", n_arms)
    rng = check_rng(rng)
    spread = check_number("spread", spread, minimum=0.0)
    if model not in ("bradley_terry", "thurstone"):
        raise ValueError(f"model must be 'bradley_terry' or 'thurstone', got {model!r}")
    for _ in range(_MAX_REJECTIONS):
        utilities = rng.uniform(0.0, spread, size=n_arms)
        difference = utilities[:, None] - utilities[None, :]
        if model == "bradley_terry":
            matrix = 1.0 / (1.0 + np.exp(-difference))
        else:
            from scipy.special import ndtr

            matrix = ndtr(difference / np.sqrt(2.0))
        np.fill_diagonal(matrix, 0.5)
        off_diagonal = ~np.eye(n_arms, dtype=bool)
        if np.all(matrix[off_diagonal] != 0.5):
            return PreferenceMatrix.from_upper_triangle(matrix, name=f"utility_based_{model}_K{n_arms}",
                                                       source="generated: utility-based")
    raise RuntimeError("could not draw distinct utilities")  # pragma: no cover


def no_condorcet_winner(n_arms: int, rng: np.random.Generator, *, min_gap: float = 0.05) -> PreferenceMatrix:
    """A random problem without a Condorcet winner (entries at least ``min_gap`` from 1/2).

    Off-diagonal entries are drawn independently (uniform away from 1/2) and the matrix is
    redrawn until no arm beats all others.  Needs ``n_arms >= 3``.
    """
    n_arms = check_n_arms(n_arms, minimum=3)
    check_pairwise_memory("a generated problem", n_arms)
    rng = check_rng(rng)
    min_gap = _check_gap(min_gap)
    for _ in range(_MAX_REJECTIONS):
        matrix = _random_upper(n_arms, rng, min_gap)
        if not np.any((matrix > 0.5).sum(axis=1) == n_arms - 1):
            return PreferenceMatrix(matrix, name=f"no_condorcet_K{n_arms}", source="generated: no Condorcet winner")
    raise RuntimeError("rejection sampling failed to avoid a Condorcet winner")  # pragma: no cover


def cyclic_copeland_winners(
    n_arms: int,
    rng: np.random.Generator,
    *,
    low: float = 0.6,
    high: float = 0.9,
    shuffle: bool = True,
) -> PreferenceMatrix:
    """The large synthetic problem of Zoghi et al. (2015, §6): three Copeland winners in a cycle.

    Arms ``a, b, c`` beat each other in a cycle and beat every other arm, so each has Copeland
    score ``K - 2``; the remaining ``K - 3`` arms form a total order with scores
    ``K - 4, ..., 0`` (with ``K = 500``: 498 for the winners, 0..496 for the rest, as in the
    paper).  The winning probability of every pair is drawn uniformly from ``[low, high]``
    (the paper does not print its values).  With ``shuffle`` the arm labels are permuted at
    random, so index-based tie-breaking cannot favour the winners.  Needs ``n_arms >= 4``.
    """
    n_arms = check_n_arms(n_arms, minimum=4)
    check_pairwise_memory("a generated problem", n_arms)
    rng = check_rng(rng)
    low = check_number("low", low, minimum=0.5, maximum=1.0)
    high = check_number("high", high, minimum=0.5, maximum=1.0)
    if low > high:
        raise ValueError(f"need 0.5 < low <= high <= 1, got low={low}, high={high}")
    shuffle = check_bool("shuffle", shuffle)
    strength = rng.uniform(low, high, size=(n_arms, n_arms))
    # Default orientation: lower index wins (a total order), then the 3-cycle among 0, 1, 2.
    beats = np.triu(np.ones((n_arms, n_arms), dtype=bool), 1)
    beats[0, 2], beats[2, 0] = False, True
    matrix = np.where(beats, strength, 1.0 - strength.T)
    matrix = np.triu(matrix, 1) + np.triu(1.0 - matrix, 1).T
    np.fill_diagonal(matrix, 0.5)
    if shuffle:
        order = rng.permutation(n_arms)
        matrix = matrix[np.ix_(order, order)]
    return PreferenceMatrix(matrix, name=f"cyclic_copeland_K{n_arms}",
                            source="generated: Zoghi et al. (2015) large synthetic (three cyclic Copeland winners)")


def unique_copeland_winner(n_arms: int, rng: np.random.Generator, *, min_gap: float = 0.0) -> PreferenceMatrix:
    """A random matrix with a unique Copeland winner (Agrawal and Chaporkar 2019, §5).

    Off-diagonal entries are drawn independently (uniform, at least ``min_gap`` from 1/2)
    and redrawn until exactly one arm has the maximal Copeland score.
    """
    n_arms = check_n_arms(n_arms)
    check_pairwise_memory("a generated problem", n_arms)
    rng = check_rng(rng)
    min_gap = _check_gap(min_gap)
    for _ in range(_MAX_REJECTIONS):
        matrix = _random_upper(n_arms, rng, min_gap)
        wins = (matrix > 0.5).sum(axis=1)
        if np.count_nonzero(wins == wins.max()) == 1:
            return PreferenceMatrix(matrix, name=f"unique_copeland_K{n_arms}",
                                    source="generated: random with a unique Copeland winner")
    raise RuntimeError("rejection sampling failed to find a unique Copeland winner")  # pragma: no cover


#: Generators by name, for samplers, the CLI and sweeps.
GENERATORS: dict[str, Callable[..., PreferenceMatrix]] = {
    "utility_based": utility_based,
    "no_condorcet_winner": no_condorcet_winner,
    "cyclic_copeland_winners": cyclic_copeland_winners,
    "unique_copeland_winner": unique_copeland_winner,
}

#: Whether every problem a generator draws has a Condorcet winner.
_ALWAYS_CONDORCET = {"utility_based": True, "no_condorcet_winner": False,
                     "cyclic_copeland_winners": False, "unique_copeland_winner": False}


class ProblemSampler:
    """A picklable ``rng -> PreferenceMatrix`` callable: a named generator bound to its options.

    Parameters
    ----------
    generator : str
        A key of :data:`~dueling_gym.problems.generators.GENERATORS`.
    n_arms : int
        Number of arms of every drawn problem.
    **options
        Keyword options of the generator.

    Notes
    -----
    :meth:`to_json` describes the sampler as JSON (generator, number of arms, options) and
    :meth:`from_json` rebuilds it; the rebuilt sampler draws the same problems from the same
    generator state.  The environments accept either form for ``problem_sampler``, and
    ``gymnasium.make`` records a sampler in ``env.spec`` in its JSON form, so that
    ``env.spec.to_json()`` works and ``gym.make(EnvSpec.from_json(...))`` rebuilds the environment.

    Examples
    --------
    >>> sampler = ProblemSampler("utility_based", n_arms=5)
    >>> sampler(np.random.default_rng(0)).n_arms
    5
    >>> sampler.to_json()
    {'generator': 'utility_based', 'n_arms': 5, 'options': {}}
    >>> ProblemSampler.from_json(sampler.to_json())
    ProblemSampler('utility_based', n_arms=5)
    """

    def __init__(self, generator: str, n_arms: int, **options: Any):
        if generator not in GENERATORS:
            raise ValueError(f"unknown generator {generator!r}; choose one of {sorted(GENERATORS)}")
        self.generator = generator
        self.n_arms = check_n_arms(n_arms)
        self.options = dict(options)
        # Validate the options once, eagerly, with a throwaway generator.
        GENERATORS[generator](self.n_arms, np.random.default_rng(0), **self.options)

    @property
    def always_has_condorcet_winner(self) -> bool:
        """True when every drawn problem has a Condorcet winner (Condorcet regret is defined)."""
        return _ALWAYS_CONDORCET[self.generator]

    def __call__(self, rng: np.random.Generator) -> PreferenceMatrix:
        return GENERATORS[self.generator](self.n_arms, rng, **self.options)

    def to_json(self) -> dict[str, Any]:
        """The sampler as a JSON-compatible dict: ``{"generator", "n_arms", "options"}``.

        Raises
        ------
        TypeError
            If an option is not a number, string, boolean or ``None`` (JSON could not hold it).
        """
        return {"generator": self.generator, "n_arms": self.n_arms,
                "options": _json_options("ProblemSampler", self.options)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProblemSampler:
        """Rebuild a sampler from :meth:`to_json`'s dict (also as parsed from JSON text).

        Raises
        ------
        TypeError, ValueError
            If ``data`` is not such a dict, or names an unknown generator or bad options.
        """
        fields = _json_fields("ProblemSampler", data, ("generator", "n_arms"), ("options",))
        return cls(fields["generator"], fields["n_arms"], **fields.get("options", {}))

    def __repr__(self) -> str:
        options = "".join(f", {key}={value!r}" for key, value in self.options.items())
        return f"ProblemSampler({self.generator!r}, n_arms={self.n_arms}{options})"


def zoghi2015_scalability(
    n_arms: int,
    rng: np.random.Generator,
    *,
    low: float = 0.6,
    high: float = 0.9,
) -> PreferenceMatrix:
    """The 500-armed synthetic problem of Zoghi, Karnin, Whiteson, de Rijke (NIPS 2015, Appendix A,
    Figure 2), for any ``n_arms >= 4`` (the paper uses ``n_arms = 500``).

    The paper fixes "a preference matrix in which the three Copeland winners are in a cycle, each
    with a Copeland score of 498, and the other arms have Copeland scores ranging from 0 to 496".
    With ``K = 500`` this determines every pairwise *winner*: the three winners beat each other in a
    cycle and beat all ``K − 3`` other arms (score ``K − 2``), and the other arms, whose ``K − 3``
    distinct scores ``0, ..., K − 4`` leave no room for a cycle, form a total order.  The paper
    does not print the winning *probabilities*; here each pair's winner wins with a probability
    drawn uniformly from ``[low, high]`` (default ``[0.6, 0.9]``: every pair clearly decided,
    no pair near-deterministic), and the arm labels are permuted at random so that no
    index-based tie rule favours the winners.  The construction is that of
    :func:`~dueling_gym.problems.cyclic_copeland_winners` (same draws, same matrix for the same ``rng``); this function
    adds the paper's provenance and checks the Copeland structure of the result.
    """
    problem = cyclic_copeland_winners(n_arms, rng, low=low, high=high, shuffle=True)
    n_arms = problem.n_arms
    wins = np.rint(problem.copeland_scores * (n_arms - 1)).astype(np.int64)
    winners = problem.copeland_winners
    expected = np.concatenate([np.arange(n_arms - 3), np.full(3, n_arms - 2)])
    if winners.size != 3 or not np.array_equal(np.sort(wins), expected):  # pragma: no cover
        raise RuntimeError("the drawn matrix lost the Copeland structure of the paper's problem")
    return PreferenceMatrix(problem.matrix, name=f"zoghi2015_scalability_K{n_arms}",
                            source="generated: Zoghi et al. (NIPS 2015), Appendix A, the synthetic problem of "
                                   "Figure 2 (three Copeland winners in a cycle; probabilities uniform on "
                                   f"[{low}, {high}], not given in the paper)")


GENERATORS["zoghi2015_scalability"] = zoghi2015_scalability
_ALWAYS_CONDORCET["zoghi2015_scalability"] = False


# ---------------------------------------------------------------------------------------------
# Bipartite CPE-DB instances
# ---------------------------------------------------------------------------------------------
def _random_graph(n_positions: int, n_candidates: int, rng: np.random.Generator,
                  edge_probability: float) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    # A random injective position -> candidate map is always kept, so a covering matching exists.
    planted = rng.choice(n_candidates, size=n_positions, replace=False)
    present = rng.random((n_positions, n_candidates)) < edge_probability
    present[np.arange(n_positions), planted] = True
    edges = [(int(c), j) for j in range(n_positions) for c in np.flatnonzero(present[j])]
    return edges, [(int(planted[j]), j) for j in range(n_positions)]


def random_bipartite_graph(
    n_positions: int,
    n_candidates: int,
    rng: np.random.Generator,
    *,
    edge_probability: float = 0.5,
) -> list[tuple[int, int]]:
    """A random graph with a matching covering every position, edges in canonical order.

    A uniformly random injective assignment of candidates to positions is planted, then every
    other (candidate, position) pair becomes an edge independently with ``edge_probability``.
    """
    n_positions = check_integer("n_positions", n_positions, minimum=1)
    n_candidates = check_integer("n_candidates", n_candidates, minimum=n_positions)
    edge_probability = check_probability("edge_probability", edge_probability)
    return _random_graph(n_positions, n_candidates, check_rng(rng), edge_probability)[0]


def random_bipartite_problem(
    n_positions: int,
    n_candidates: int,
    rng: np.random.Generator,
    *,
    edge_probability: float = 0.5,
    edges: ArrayLike | None = None,
    planted_condorcet: bool = False,
    min_gap: float = 0.05,
    name: str | None = None,
) -> BipartiteDuelProblem:
    """A random CPE-DB instance, guaranteed to have a matching covering every position.

    Parameters
    ----------
    n_positions, n_candidates : int
        Graph size (``n_candidates >= n_positions``).
    rng : numpy.random.Generator
        All randomness comes from here.
    edge_probability : float, default 0.5
        Density of the random graph (see :func:`~dueling_gym.problems.random_bipartite_graph`); ignored with ``edges``.
    edges : array_like, optional
        A fixed graph (canonical order) on which only the preferences are drawn; it must have a
        covering matching.
    planted_condorcet : bool, default False
        Plant a Condorcet matching: a covering matching (the graph's planted one, or a random
        max-weight matching when ``edges`` is given) whose every edge beats every comparable edge
        with probability in ``(1/2 + min_gap, 1]``.  Then ``f(M*, M)`` is an average of terms
        ``>= 1/2``, strictly above 1/2 wherever ``M`` differs, so ``M*`` beats every other
        matching; this is verified before returning.
    min_gap : float, default 0.05
        Every comparable pair has ``|p - 1/2| >= min_gap`` (in ``[0, 0.5)``).
    name : str, optional
        Label of the problem.
    """
    n_positions = check_integer("n_positions", n_positions, minimum=1)
    n_candidates = check_integer("n_candidates", n_candidates, minimum=n_positions)
    rng = check_rng(rng)
    edge_probability = check_probability("edge_probability", edge_probability)
    min_gap = _check_gap(min_gap)
    if edges is None:
        edge_list, planted = _random_graph(n_positions, n_candidates, rng, edge_probability)
        planted_edges = [edge_list.index(edge) for edge in planted]
    else:
        edge_list = [tuple(edge) for edge in np.asarray(edges).tolist()]
        graph = BipartiteDuelProblem.tied(n_candidates, n_positions, edge_list)
        planted_edges = list(graph.max_weight_matching(rng.random(len(edge_list)))) if planted_condorcet else []

    positions = np.array([position for _, position in edge_list])
    rows, columns = np.nonzero(np.triu(positions[:, None] == positions[None, :], 1))
    magnitude = rng.uniform(min_gap, 0.5, size=rows.size)
    sign = np.where(rng.random(rows.size) < 0.5, -1.0, 1.0)
    upper = 0.5 + sign * magnitude
    if planted_condorcet:
        planted_mask = np.zeros(len(edge_list), dtype=bool)
        planted_mask[planted_edges] = True
        # 1 - U[0, 1/2 - min_gap) lies in (1/2 + min_gap, 1]: strictly above 1/2 even if min_gap = 0.
        winning = 1.0 - rng.uniform(0.0, 0.5 - min_gap, size=rows.size)
        upper = np.where(planted_mask[rows], winning, np.where(planted_mask[columns], 1.0 - winning, upper))
    preferences = np.zeros((len(edge_list), len(edge_list)))
    preferences[rows, columns] = upper
    preferences[columns, rows] = 1.0 - upper
    np.fill_diagonal(preferences, 0.5)

    default_name = f"random_bipartite_l{n_positions}_n{n_candidates}" + ("_condorcet" if planted_condorcet else "")
    problem = BipartiteDuelProblem(
        n_candidates, n_positions, edge_list, preferences, name=name or default_name,
        source="generated: random bipartite CPE-DB instance" + (" with a planted Condorcet matching"
                                                                if planted_condorcet else ""),
    )
    if planted_condorcet and not problem.is_condorcet_winner(planted_edges):  # pragma: no cover - by construction
        raise RuntimeError("planted matching is not a Condorcet winner")
    return problem


class BipartiteProblemSampler:
    """A picklable ``rng -> BipartiteDuelProblem`` callable on a fixed graph.

    Environments keep their action space (one action per comparable pair) fixed, so every
    problem drawn for them must share one graph; only the preferences are redrawn.

    Parameters
    ----------
    n_positions, n_candidates : int
        Graph size.
    edges : array_like, optional
        The fixed graph (canonical order).  If omitted, one random graph is drawn once, at
        construction, from ``np.random.default_rng(graph_seed)`` with ``edge_probability``.
    graph_seed : int, default 0
        Seed of that one-off graph draw.
    edge_probability : float, default 0.5
        Density of that graph.
    **options
        ``planted_condorcet``, ``min_gap`` of :func:`~dueling_gym.problems.random_bipartite_problem`.

    Notes
    -----
    :meth:`to_json` describes the sampler as JSON with its graph's edges listed (not the seed
    that drew them), and :meth:`from_json` rebuilds it; ``CombinatorialDuel-v0`` accepts either
    form for ``problem_sampler``, so its ``env.spec.to_json()`` works.

    Examples
    --------
    >>> sampler = BipartiteProblemSampler(3, 5, planted_condorcet=True)
    >>> problem = sampler(np.random.default_rng(1))
    >>> problem.condorcet_winner() is not None
    True
    """

    def __init__(self, n_positions: int, n_candidates: int, *, edges: ArrayLike | None = None,
                 graph_seed: int = 0, edge_probability: float = 0.5, **options: Any):
        self.n_positions = check_integer("n_positions", n_positions, minimum=1)
        self.n_candidates = check_integer("n_candidates", n_candidates, minimum=self.n_positions)
        if edges is None:
            graph_seed = check_seed("graph_seed", graph_seed)
            edges = random_bipartite_graph(self.n_positions, self.n_candidates, np.random.default_rng(graph_seed),
                                           edge_probability=edge_probability)
        self.edges = tuple((int(c), int(s)) for c, s in np.asarray(edges).tolist())
        unknown = set(options) - {"planted_condorcet", "min_gap"}
        if unknown:
            raise TypeError(f"unknown sampler options {sorted(unknown)}; allowed: planted_condorcet, min_gap")
        self.options = dict(options)
        # Validate graph and options once, eagerly.
        self(np.random.default_rng(0))

    def __call__(self, rng: np.random.Generator) -> BipartiteDuelProblem:
        return random_bipartite_problem(self.n_positions, self.n_candidates, rng, edges=self.edges, **self.options)

    def to_json(self) -> dict[str, Any]:
        """The sampler as a JSON-compatible dict: ``{"n_positions", "n_candidates", "edges", "options"}``.

        The graph is stored as its edges ``[candidate, position]``, so the JSON form does not
        depend on how the graph was drawn.

        Raises
        ------
        TypeError
            If an option is not a number, string, boolean or ``None`` (JSON could not hold it).
        """
        return {"n_positions": self.n_positions, "n_candidates": self.n_candidates,
                "edges": [list(edge) for edge in self.edges],
                "options": _json_options("BipartiteProblemSampler", self.options)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BipartiteProblemSampler:
        """Rebuild a sampler from :meth:`to_json`'s dict (also as parsed from JSON text).

        Raises
        ------
        TypeError, ValueError
            If ``data`` is not such a dict, or its graph or options are invalid.
        """
        fields = _json_fields("BipartiteProblemSampler", data, ("n_positions", "n_candidates", "edges"),
                              ("options",))
        return cls(fields["n_positions"], fields["n_candidates"], edges=fields["edges"], **fields.get("options", {}))

    def __repr__(self) -> str:
        options = "".join(f", {key}={value!r}" for key, value in self.options.items())
        return (f"BipartiteProblemSampler(n_positions={self.n_positions}, n_candidates={self.n_candidates}, "
                f"n_edges={len(self.edges)}{options})")
