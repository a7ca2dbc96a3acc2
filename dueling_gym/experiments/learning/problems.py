"""The training and validation problems of the trainers: draws from mixtures of generator families."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from dueling_gym.experiments.learning import REGRET_NOTION
from dueling_gym.problems.generators import GENERATORS, ProblemSampler
from dueling_gym.validation import check_integer

__all__ = ["check_families", "extrapolate_regret", "MixtureSampler", "ProblemBatch"]


def check_families(families: Sequence[str]) -> tuple[str, ...]:
    """``families`` as a tuple of generator names; a ValueError names the unknown ones (a TypeError:
    one string, which would otherwise read as its letters)."""
    if isinstance(families, (str, bytes)):
        raise TypeError(f"families must be a sequence of generator names, not the single string {families!r}")
    families = tuple(families)
    unknown = [name for name in families if name not in GENERATORS]
    if not families or unknown:
        raise ValueError(f"families must name generators from {sorted(GENERATORS)}, got {list(families)}")
    return families


class MixtureSampler:
    """A picklable ``rng -> PreferenceMatrix`` sampler drawing each problem from a family chosen
    uniformly at random (one ``rng.integers`` draw, then the family's generator)."""

    def __init__(self, families: Sequence[str], n_arms: int):
        families = tuple(families)
        if not families:
            raise ValueError("families must name at least one generator")
        unknown = [name for name in families if name not in GENERATORS]
        if unknown:
            raise ValueError(f"unknown problem families {unknown}; choose from {sorted(GENERATORS)}")
        self.families = families
        self.n_arms = check_integer("n_arms", n_arms, minimum=2)
        self._samplers = [ProblemSampler(name, n_arms=self.n_arms) for name in families]

    @property
    def always_has_condorcet_winner(self) -> bool:
        """True when every family always has a Condorcet winner."""
        return all(sampler.always_has_condorcet_winner for sampler in self._samplers)

    def __call__(self, rng: np.random.Generator) -> Any:
        return self._samplers[int(rng.integers(len(self._samplers)))](rng)

    def __repr__(self) -> str:
        return f"MixtureSampler({list(self.families)!r}, n_arms={self.n_arms})"


def extrapolate_regret(regret: np.ndarray, horizons: Sequence[int], later: int) -> np.ndarray:
    """The regret at ``later`` duels extrapolated from its last two columns, read at the last two
    ``horizons`` ``T0 < T``, as a regret that grows like ``log t`` would grow:
    ``R(T) + (R(T) - R(T0)) * log(later / T) / log(T / T0)``.

    Exact for ``C log t + c``; a regret that grows linearly from ``T0`` on at rate ``g`` reads
    ``R(T) + g (T - T0) log(later / T) / log(T / T0)`` (with ``T0 = T / 2`` and ``later = 10 T``,
    ``R(T) + 1.66 g T`` where the truth is ``R(T) + 9 g T``): still far above a regret that has
    stopped growing, which is what the extrapolation is for, at the cost of runs to ``T`` only.

    Parameters
    ----------
    regret : ndarray, shape (..., len(horizons))
        Regret read at each of ``horizons``.
    horizons : sequence of int
        Strictly increasing times, two or more.
    later : int
        The time to extrapolate to, after the last horizon.

    Returns
    -------
    ndarray, shape (...)
    """
    if len(horizons) < 2:
        raise ValueError(f"extrapolating needs two horizons or more, got {list(horizons)}")
    earlier, last = float(horizons[-2]), float(horizons[-1])
    if not later > last:
        raise ValueError(f"the time to extrapolate to ({later}) must come after the last horizon ({int(last)})")
    regret = np.asarray(regret, dtype=float)
    return regret[..., -1] + (regret[..., -1] - regret[..., -2]) * (np.log(later / last) / np.log(last / earlier))


class ProblemBatch:
    """``per_family`` problems of each family as stacked arrays, with each family's regret of
    uniformly random duels over ``horizon`` duels (known in closed form), or over each of
    ``horizons`` when the regret is read at several times.

    Attributes
    ----------
    problems : list of list of dueling_gym.problems.PreferenceMatrix
        The problems, family by family (drawn in that order from ``rng``).
    probabilities, regrets : ndarray, shape (n_families * per_family, K, K)
        The matrices and their per-duel regret tables (:data:`~dueling_gym.experiments.learning.REGRET_NOTION`).
    labels : ndarray of int
        The family index of every problem.
    normaliser : ndarray of float, shape (n_families,) or (n_families, len(horizons))
        What :meth:`score` divides each family's mean regret (at each horizon) by (default: the
        random-duel regret).
    objective : {"mean", "worst", "hinge"}
        How :meth:`score` combines the families.
    floor : float or None
        With objective ``"hinge"``, the normalised regret below which a family counts as ``floor``.
    extrapolate_to : int or None
        With two horizons or more, :meth:`score` reads each family's regret (and normaliser) at
        this later time instead, extrapolated from the last two horizons as a logarithmic regret
        would grow (:func:`extrapolate_regret`).  None (default): the horizons themselves.
    """

    def __init__(self, families: Sequence[str], n_arms: int, per_family: int, horizon: int, rng: np.random.Generator,
                 horizons: Sequence[int] | None = None):
        matrices, regrets, labels, random_regret = [], [], [], []
        self.problems: list[list[Any]] = []
        for index, family in enumerate(families):
            sampler = ProblemSampler(family, n_arms=n_arms)
            problems = [sampler(rng) for _ in range(per_family)]
            self.problems.append(problems)
            matrices += [problem.matrix for problem in problems]
            regrets += [problem.regret_matrix(REGRET_NOTION) for problem in problems]
            labels += [index] * per_family
            per_duel = np.mean([problem.expected_random_regret(REGRET_NOTION) for problem in problems])
            random_regret.append(per_duel * (horizon if horizons is None else np.asarray(horizons, dtype=float)))
        self.probabilities = np.stack(matrices)
        self.regrets = np.stack(regrets)
        self.labels = np.asarray(labels)
        self.random_regret = np.asarray(random_regret)
        self.normaliser = self.random_regret
        self.objective = "mean"
        self.floor: float | None = None
        self.horizons = None if horizons is None else tuple(int(value) for value in horizons)
        self.extrapolate_to: int | None = None
        self.n_families = len(families)
        self.n_arms = n_arms

    def family_means(self, totals: np.ndarray) -> np.ndarray:
        """The mean of ``totals`` (one per problem, or one row of horizons per problem) over each
        family's problems."""
        return np.array([totals[self.labels == index].mean(axis=0) for index in range(self.n_families)])

    def score(self, totals: np.ndarray) -> float:
        """Mean (or, with objective "worst", maximum) over families (and horizons) of (mean regret
        / the family's normaliser): lower is better.  With objective "hinge", the mean of each family's
        ratio raised to ``floor`` when below it: a family already that far below the reference stops
        counting, so the score moves only with the families near or above it.  A family whose
        normaliser is 0 (e.g. every arm a winner: no duel costs anything) contributes 0."""
        means, normaliser = self.family_means(totals), np.asarray(self.normaliser, dtype=float)
        if self.extrapolate_to is not None:
            if self.horizons is None or len(self.horizons) < 2:
                raise ValueError("extrapolate_to needs the regret read at two horizons or more")
            means = extrapolate_regret(means, self.horizons, self.extrapolate_to)
            normaliser = extrapolate_regret(normaliser, self.horizons, self.extrapolate_to)
        ratios = np.divide(means, normaliser, out=np.zeros_like(means), where=normaliser > 0)
        if ratios.ndim == 2:
            ratios = ratios.mean(axis=1)  # horizons weigh the same within a family
        if self.objective == "worst":
            return float(np.max(ratios))
        if self.objective == "hinge":
            if self.floor is None:
                raise ValueError("objective 'hinge' needs a floor")
            return float(np.mean(np.maximum(ratios, self.floor)))
        return float(np.mean(ratios))
