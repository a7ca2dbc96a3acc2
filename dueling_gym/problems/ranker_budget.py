"""How many interleaved comparisons each pair of rankers gets in :func:`~dueling_gym.problems.ranker_evaluation`.

A :class:`ComparisonBudget` is either **sequential** (the default, :data:`DEFAULT_BUDGET`) or
**fixed** (:meth:`ComparisonBudget.fixed`).  A sequential budget plays every pair ``i < j`` in
batches that end at the looks ``first_batch``, ``first_batch * growth``, ``first_batch *
growth**2``, ... (rounded up) and ``max_comparisons``; after each look the pair's interval for
``P[i, j]`` decides:

* **settled**: the interval excludes 1/2 (the sign of ``P[i, j] - 1/2`` is known), and the pair stops;
* **near-tie**: the interval lies inside ``(1/2 - tolerance, 1/2 + tolerance)``, and the pair stops;
* **unsettled**: neither, at the last look (``max_comparisons``); otherwise the pair plays on.

A fixed budget of ``n`` has one look at ``n``: every pair plays ``n`` comparisons and gets the
status of that look.

**The error rule.**  A comparison scores 1 (the first ranker wins), 1/2 (tie) or 0, so
``P[i, j]`` is the mean of scores in ``[0, 1]``.  With ``m`` pairs and ``L`` looks, the interval
of a pair at a look has level ``delta = error_rate / (m * L)``: the narrower of Hoeffding's
interval (Hoeffding, JASA 1963, Theorem 2), radius ``sqrt(ln(4 / delta) / (2 n))``, and the
empirical Bernstein interval of Maurer & Pontil (COLT 2009, Theorem 4, applied to both tails),
radius ``sqrt(2 V ln(8 / delta) / n) + 7 ln(8 / delta) / (3 (n - 1))`` with ``V`` the unbiased
sample variance of the scores, each at level ``delta / 2``.  A union bound over the ``m`` pairs
and the ``L`` looks of the (fixed, finite) schedule makes every interval of every look hold at
once with probability at least ``1 - error_rate``, whenever the pairs stop.  Hence, **with
probability at least 1 - error_rate, every pair declared settled lies on the side of 1/2 where
its estimate lies, and every pair declared a near-tie has |P[i, j] - 1/2| < tolerance**.  The
empirical Bernstein interval is the one that profits from ties: a tie scores 1/2, so pairs that
tie often have a small variance and settle sooner.

The project's choices: a geometric schedule (growth 2) keeps the number of looks, and so the
price of the union bound, logarithmic in ``max_comparisons``; batches are drawn from the pair's
own generator, so a sequential pair that stops after ``n`` comparisons played exactly the first
``n`` comparisons of the fixed budget ``n`` with the same seed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dueling_gym.validation import check_integer, check_number

__all__ = ["ComparisonBudget", "DEFAULT_BUDGET", "PAIR_STATUSES", "UNSETTLED", "NEAR_TIE", "SETTLED", "NOT_A_PAIR",
           "pair_statuses", "resolve_budget"]

#: Status code of a pair still undecided at its last look.
UNSETTLED = 0
#: Status code of a pair whose interval lies within the tolerance of 1/2.
NEAR_TIE = 1
#: Status code of a pair whose interval excludes 1/2.
SETTLED = 2
#: The name of each status code, ``PAIR_STATUSES[code]``.
PAIR_STATUSES = ("unsettled", "near-tie", "settled")
#: The code on the diagonal of a status matrix (a ranker is no pair with itself).
NOT_A_PAIR = -1
#: More looks than this make the union bound's price (ln of the looks) large for nothing.
_MAX_LOOKS = 200


@dataclass(frozen=True)
class ComparisonBudget:
    """The comparisons each pair of rankers gets: a sequential rule, or a fixed count (:meth:`fixed`).

    The rule, its statuses and its error guarantee are in the notes of
    :mod:`dueling_gym.problems.ranker_budget`.

    Parameters
    ----------
    max_comparisons : int, default 20000
        The last look: a pair still unsettled here stops as **unsettled**.
    error_rate : float, default 0.05
        The probability, at most, that some pair's status is wrong (over all pairs and looks).
    tolerance : float, default 0.025
        Half-width of the band around 1/2 inside which an interval declares a **near-tie**.
    first_batch : int, default 200
        The first look (at least 2, at most ``max_comparisons``).
    growth : float, default 2.0
        Each look is the previous one times ``growth``, rounded up (at most 200 looks in all).

    Raises
    ------
    TypeError
        A count that is not an integer, a rate that is not a number.
    ValueError
        A value out of its range, or a schedule of more than 200 looks.
    """

    max_comparisons: int = 20_000
    error_rate: float = 0.05
    tolerance: float = 0.025
    first_batch: int = 200
    growth: float = 2.0

    def __post_init__(self) -> None:
        first = check_integer("first_batch", self.first_batch, minimum=2)
        last = check_integer("max_comparisons", self.max_comparisons, minimum=2)
        if last < first:
            raise ValueError(f"max_comparisons ({last}) must be at least first_batch ({first})")
        error_rate = check_number("error_rate", self.error_rate, minimum=0.0, maximum=1.0, strict_maximum=True)
        tolerance = check_number("tolerance", self.tolerance, minimum=0.0, maximum=0.5, strict_maximum=True)
        growth = check_number("growth", self.growth, minimum=1.0)
        for name, value in (("first_batch", first), ("max_comparisons", last), ("error_rate", error_rate),
                            ("tolerance", tolerance), ("growth", growth)):
            object.__setattr__(self, name, value)
        if first < last and math.log(last / first) / math.log(growth) > _MAX_LOOKS - 1:
            raise ValueError(f"growth={growth} from first_batch={first} to max_comparisons={last} makes more than "
                             f"{_MAX_LOOKS} looks; choose a larger growth (2 is usual)")

    @classmethod
    def fixed(cls, comparisons: int, *, error_rate: float = 0.05, tolerance: float = 0.025) -> ComparisonBudget:
        """Every pair plays ``comparisons`` comparisons (one look, which gives each pair its status).

        Parameters
        ----------
        comparisons : int
            Comparisons per pair (at least 2).
        error_rate, tolerance : float
            As the class: they classify the pairs at the one look.

        Returns
        -------
        ComparisonBudget
            ``first_batch == max_comparisons == comparisons``.
        """
        comparisons = check_integer("comparisons_per_pair", comparisons, minimum=2)
        return cls(max_comparisons=comparisons, error_rate=error_rate, tolerance=tolerance, first_batch=comparisons)

    @property
    def is_fixed(self) -> bool:
        """Whether every pair plays ``max_comparisons`` comparisons (a single look)."""
        return self.first_batch == self.max_comparisons

    @cached_property
    def looks(self) -> tuple[int, ...]:
        """The cumulative comparisons at which a pair is judged, ending at ``max_comparisons``."""
        looks = [self.first_batch]
        while looks[-1] < self.max_comparisons:
            looks.append(min(self.max_comparisons, max(looks[-1] + 1, math.ceil(looks[-1] * self.growth))))
        return tuple(looks)

    @property
    def largest_batch(self) -> int:
        """The most comparisons drawn at once for one pair (their uniforms are held in memory together)."""
        return max(b - a for a, b in zip((0,) + self.looks, self.looks))

    def level(self, n_pairs: int) -> float:
        """``delta``: the level of one pair's interval at one look, ``error_rate / (n_pairs * looks)``."""
        n_pairs = check_integer("n_pairs", n_pairs, minimum=1)
        return self.error_rate / (n_pairs * len(self.looks))

    def radius(self, wins: int, losses: int, ties: int, n_pairs: int) -> float:
        """Half-width of the interval of ``P[i, j]`` after these counts (the narrower of Hoeffding's and
        the empirical Bernstein interval, see the module's notes).

        Parameters
        ----------
        wins, losses, ties : int
            The pair's counts so far (at least 2 comparisons in all).
        n_pairs : int
            Pairs judged together (the union bound's ``m``).

        Returns
        -------
        float
            The radius around ``(wins + ties / 2) / n``.
        """
        n = wins + losses + ties
        if n < 2:
            raise ValueError(f"an interval needs at least 2 comparisons, got {n}")
        delta = self.level(n_pairs)
        hoeffding = math.sqrt(math.log(4.0 / delta) / (2.0 * n))
        total, squares = wins + 0.5 * ties, wins + 0.25 * ties
        variance = max(squares - total * total / n, 0.0) / (n - 1)
        log_term = math.log(8.0 / delta)
        bernstein = math.sqrt(2.0 * variance * log_term / n) + 7.0 * log_term / (3.0 * (n - 1))
        return min(hoeffding, bernstein)

    def status(self, wins: int, losses: int, ties: int, n_pairs: int) -> int:
        """:data:`SETTLED`, :data:`NEAR_TIE` or :data:`UNSETTLED` for a pair with these counts.

        Parameters
        ----------
        wins, losses, ties : int
            The pair's counts (the first ranker's wins and losses, the ties).
        n_pairs : int
            Pairs judged together.

        Returns
        -------
        int
            The status code (``PAIR_STATUSES[code]`` names it).
        """
        n = wins + losses + ties
        distance = abs((wins + 0.5 * ties) / n - 0.5)
        radius = self.radius(wins, losses, ties, n_pairs)
        if distance > radius:
            return SETTLED
        if distance + radius < self.tolerance:
            return NEAR_TIE
        return UNSETTLED

    def describe(self) -> dict[str, Any]:
        """The rule as plain values (cache keys, provenance)."""
        return {"mode": "fixed" if self.is_fixed else "sequential", "max_comparisons": self.max_comparisons,
                "first_batch": self.first_batch, "growth": self.growth, "error_rate": self.error_rate,
                "tolerance": self.tolerance, "looks": list(self.looks),
                "interval": "min(Hoeffding, empirical Bernstein), union bound over pairs and looks"}

    def __str__(self) -> str:
        if self.is_fixed:
            return (f"fixed budget of {self.max_comparisons} comparisons per pair (statuses at error rate "
                    f"{self.error_rate:g}, tolerance {self.tolerance:g})")
        return (f"sequential budget: {self.first_batch} to {self.max_comparisons} comparisons per pair in "
                f"{len(self.looks)} looks, error rate {self.error_rate:g}, near-tie tolerance {self.tolerance:g}")


#: The one default of :func:`~dueling_gym.problems.ranker_evaluation`, ``RankerDuel-v0`` and
#: ``dueling-gym problems --from-ltr``.
DEFAULT_BUDGET = ComparisonBudget()


def resolve_budget(comparisons_per_pair: int | None, budget: ComparisonBudget | None) -> ComparisonBudget:
    """The budget that ``comparisons_per_pair`` (a fixed count) or ``budget`` names; neither: :data:`DEFAULT_BUDGET`.

    Parameters
    ----------
    comparisons_per_pair : int or None
        A fixed number of comparisons per pair.
    budget : ComparisonBudget or None
        A rule.

    Returns
    -------
    ComparisonBudget

    Raises
    ------
    ValueError
        When both are given.
    TypeError
        When ``budget`` is not a :class:`ComparisonBudget`.
    """
    if comparisons_per_pair is not None and budget is not None:
        raise ValueError("give comparisons_per_pair (a fixed budget) or budget (a rule), not both")
    if comparisons_per_pair is not None:
        return ComparisonBudget.fixed(comparisons_per_pair)
    if budget is None:
        return DEFAULT_BUDGET
    if not isinstance(budget, ComparisonBudget):
        raise TypeError(f"budget must be a ComparisonBudget, got {type(budget).__name__}")
    return budget


def pair_statuses(budget: ComparisonBudget, counts: Mapping[str, NDArray[np.int64]]) -> NDArray[np.int8]:
    """The status code of every pair from its counts (symmetric, :data:`NOT_A_PAIR` on the diagonal).

    Parameters
    ----------
    budget : ComparisonBudget
        The rule the counts were played under.
    counts : mapping
        ``wins`` and ``ties`` (K x K; ``wins[i, j]``: ``i`` beat ``j``).

    Returns
    -------
    ndarray of int8, shape (K, K)
    """
    wins, ties = counts["wins"], counts["ties"]
    n_rankers = wins.shape[0]
    n_pairs = n_rankers * (n_rankers - 1) // 2
    statuses = np.full((n_rankers, n_rankers), NOT_A_PAIR, dtype=np.int8)
    for first, second in zip(*np.triu_indices(n_rankers, 1)):
        code = budget.status(int(wins[first, second]), int(wins[second, first]), int(ties[first, second]), n_pairs)
        statuses[first, second] = statuses[second, first] = code
    return statuses
