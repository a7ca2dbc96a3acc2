"""Interleaved comparisons of two rankers with simulated users: interleaving, cascade clicks, credit.

Two rankers A and B each propose a top-``k`` list of documents for a query; an interleaving
method merges them into one list shown to a (simulated) user, whose clicks are credited to A or B.

**Team-draft interleaving** (Radlinski, Kurup & Joachims, CIKM 2008, Algorithm 2).  The rankers
pick in turn, like captains choosing teams: the one with fewer picks so far goes next, a fair coin
decides when both have picked equally often, and a pick is the picker's best document not yet
shown.  A click counts for the team that picked the document.

**Probabilistic interleave** (Hofmann, Whiteson & de Rijke, CIKM 2011, Section 4).  Each ranker
becomes a softmax over its list, ``P_X(d) proportional to 1 / r_X(d)^tau`` with ``r_X(d)`` the
rank of ``d`` in X's list and ``tau = 3`` as in that paper.  At each position a fair coin picks
a ranker, which draws a document from its softmax renormalised over the documents not yet shown.
Credit is the paper's marginalised outcome: the expected outcome over every assignment of the
shown documents to rankers, weighted by its posterior given the list.  The posterior factorises
over positions, ``P(a_r = A | list) = p_A,r / (p_A,r + p_B,r)`` with ``p_X,r`` the probability
that X's softmax draws the document shown at ``r`` from what was left, so the expectation is
computed exactly by a convolution over the clicked positions.

Choices where the papers leave room, and why:

* Lists are each ranker's top ``cutoff`` documents.  The softmax of the probabilistic method is
  over that list (a document below the cutoff would have weight ``1/r^3 <= 1/1331`` of the top
  one at ``cutoff = 10``); when a ranker has no document left, the other one contributes.
* A ranker's ties (equal scores) are broken by a fixed per-document key, see
  :mod:`dueling_gym.problems.ranker_problems`.
* Winner: team draft -- more credited clicks wins; probabilistic -- the sign of the expected
  outcome (``|E[o]| <= 1e-12`` is a tie).  No clicks, or equal credit, is a **tie**.  A tie counts
  as half a win in the preference matrix; the online environment settles it with a fair coin,
  so that the first ranker wins a duel with exactly the probability the matrix states.

**Cascade click models**: the simulated user and the named tables of click and stop
probabilities per relevance grade are in :mod:`dueling_gym.problems.click_models`; its public
names (:class:`~dueling_gym.problems.click_models.CascadeClickModel`, ``CLICK_MODELS``,
``CLICK_MODEL_TABLES``, ``click_model``, ``parse_click_model``, ``select_click_model``, ...)
are importable from this module too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

# The click models are re-exported: they were defined here before click_models.py held them.
from dueling_gym.problems.click_models import (
    CLICK_MODEL_NAMES,
    CLICK_MODEL_TABLES,
    CLICK_MODELS,
    CascadeClickModel,
    click_model,
    parse_click_model,
    select_click_model,
)
# The cascade user's kernel, under the name the comparison kernels call it by (compiled with them).
from dueling_gym.problems.click_models import cascade_clicks as _cascade_clicks
from dueling_gym.problems.ltr_kernels import jit_in_place
from dueling_gym.validation import check_number, check_rng

__all__ = [
    "CascadeClickModel",
    "CLICK_MODELS",
    "CLICK_MODEL_NAMES",
    "CLICK_MODEL_TABLES",
    "INTERLEAVING_METHODS",
    "PROBABILISTIC_TAU",
    "TIE_TOLERANCE",
    "click_model",
    "parse_click_model",
    "select_click_model",
    "team_draft_interleave",
    "probabilistic_interleave",
    "probabilistic_outcome",
    "uniforms_per_comparison",
]

#: The interleaving methods, by name (the codes of the compiled kernels).
INTERLEAVING_METHODS = {"team_draft": 0, "probabilistic": 1}
#: The softmax exponent of probabilistic interleave (Hofmann et al. 2011).
PROBABILISTIC_TAU = 3.0
#: Expected outcomes of probabilistic interleave within this distance of 0 are ties.
TIE_TOLERANCE = 1e-12


def uniforms_per_comparison(method: str, cutoff: int) -> int:
    """Uniforms one comparison consumes: the query, the interleaving's coins, two per shown document."""
    return 1 + cutoff * (3 if INTERLEAVING_METHODS[method] == 0 else 4)


# ---------------------------------------------------------------------------------- Python API
def team_draft_interleave(ranking_a: ArrayLike, ranking_b: ArrayLike, rng: np.random.Generator | None = None, *,
                          coins: Sequence[bool] | None = None) -> tuple[NDArray[np.int64], NDArray[np.int8]]:
    """Team-draft interleaving of two rankings (document ids, best first).

    Give either ``rng`` or ``coins``: ``coins[n]`` is the coin of position ``n`` (``True``: A
    picks), read only when both teams have picked equally often.  Returns the interleaved
    documents and their teams (0 for A, 1 for B); the list has ``min(len(a), len(b))``
    documents or more, up to the size of their union and at most ``max(len(a), len(b))``.
    """
    list_a, list_b = _rankings(ranking_a, ranking_b)
    length = max(list_a.size, list_b.size)
    if (rng is None) == (coins is None):
        raise ValueError("give exactly one of rng= and coins=")
    if coins is not None:
        if len(coins) < length:
            raise ValueError(f"coins must have one entry per position ({length}), got {len(coins)}")
        flips = np.array([0.0 if _coin(n, value) else 1.0 for n, value in enumerate(coins[:length])])
    else:
        flips = check_rng(rng).random(length)
    _compile()
    docs = np.empty(length, dtype=np.int64)
    teams = np.empty(length, dtype=np.int8)
    shown = _team_draft(list_a, list_a.size, list_b, list_b.size, flips, docs, teams)
    return docs[:shown].copy(), teams[:shown].copy()


def probabilistic_interleave(ranking_a: ArrayLike, ranking_b: ArrayLike, rng: np.random.Generator, *,
                             tau: float = PROBABILISTIC_TAU) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Probabilistic interleave of two rankings (document ids, best first).

    Returns the interleaved documents (as many as the union of the lists holds, at most
    ``max(len(a), len(b))``) and, for each, the posterior probability that ranker A contributed
    it given the list.
    """
    list_a, list_b = _rankings(ranking_a, ranking_b)
    rng = check_rng(rng)
    tau = check_number("tau", tau, minimum=0.0)
    length = max(list_a.size, list_b.size)
    weights = 1.0 / np.arange(1, length + 1, dtype=np.float64) ** tau
    choices, draws = rng.random(length), rng.random(length)
    _compile()
    docs = np.empty(length, dtype=np.int64)
    posterior = np.empty(length, dtype=np.float64)
    shown = _probabilistic(list_a, list_a.size, list_b, list_b.size, weights, choices, draws, docs, posterior)
    return docs[:shown].copy(), posterior[:shown].copy()


def probabilistic_outcome(posterior_a: ArrayLike, clicks: ArrayLike) -> float:
    """The marginalised outcome ``E[o] = P(A credited more clicks) - P(B credited more clicks)``.

    ``posterior_a[r]`` is the probability that A contributed the document at ``r``, ``clicks``
    the clicked positions (booleans of the same length).
    """
    posterior = np.asarray(posterior_a, dtype=np.float64)
    clicked = np.asarray(clicks)
    if clicked.dtype != np.bool_ or clicked.shape != posterior.shape or posterior.ndim != 1:
        raise TypeError("clicks must be a boolean array of the shape of posterior_a (one entry per position)")
    _compile()
    scratch = np.empty(2 * posterior.size + 1)
    return float(_marginal_outcome(posterior, clicked, posterior.size, scratch))


def _coin(position: int, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"coins[{position}] must be a bool (True: A picks), got {value!r}")
    return bool(value)


def _rankings(ranking_a: ArrayLike, ranking_b: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    lists = []
    for name, ranking in (("ranking_a", ranking_a), ("ranking_b", ranking_b)):
        array = np.asarray(ranking)
        if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iu":
            raise TypeError(f"{name} must be a non-empty 1-D array of integer document ids, got {ranking!r}")
        if np.unique(array).size != array.size:
            raise ValueError(f"{name} lists a document twice: {ranking!r}")
        lists.append(array.astype(np.int64))
    return lists[0], lists[1]


# ---------------------------------------------------------------------------------- kernels
# Plain functions, compiled with Numba on first use (see jit_in_place).
def _contains(docs, count, doc):
    for index in range(count):
        if docs[index] == doc:
            return True
    return False


def _team_draft(list_a, length_a, list_b, length_b, coins, docs, teams):
    """Radlinski et al. (2008), Algorithm 2 on top-k lists; returns the number of documents shown."""
    shown = 0
    picks_a = 0
    picks_b = 0
    next_a = 0
    next_b = 0
    while shown < docs.shape[0]:
        while next_a < length_a and _contains(docs, shown, list_a[next_a]):
            next_a += 1
        while next_b < length_b and _contains(docs, shown, list_b[next_b]):
            next_b += 1
        if next_a >= length_a or next_b >= length_b:
            break
        if picks_a < picks_b or (picks_a == picks_b and coins[shown] < 0.5):
            docs[shown] = list_a[next_a]
            teams[shown] = 0
            picks_a += 1
        else:
            docs[shown] = list_b[next_b]
            teams[shown] = 1
            picks_b += 1
        shown += 1
    return shown


def _remaining_weight(ranking, length, docs, shown, weights):
    total = 0.0
    for rank in range(length):
        if not _contains(docs, shown, ranking[rank]):
            total += weights[rank]
    return total


def _weight_of(ranking, length, doc, weights):
    for rank in range(length):
        if ranking[rank] == doc:
            return weights[rank]
    return 0.0


def _probabilistic(list_a, length_a, list_b, length_b, weights, choices, draws, docs, posterior_a):
    """Hofmann et al. (2011): the interleaved list and each position's posterior P(contributor = A)."""
    shown = 0
    while shown < docs.shape[0]:
        total_a = _remaining_weight(list_a, length_a, docs, shown, weights)
        total_b = _remaining_weight(list_b, length_b, docs, shown, weights)
        if total_a <= 0.0 and total_b <= 0.0:
            break
        use_a = choices[shown] < 0.5
        if use_a and total_a <= 0.0:
            use_a = False
        elif not use_a and total_b <= 0.0:
            use_a = True
        ranking = list_a if use_a else list_b
        length = length_a if use_a else length_b
        target = draws[shown] * (total_a if use_a else total_b)
        cumulative = 0.0
        chosen = -1
        for rank in range(length):
            if _contains(docs, shown, ranking[rank]):
                continue
            chosen = ranking[rank]
            cumulative += weights[rank]
            if cumulative > target:
                break
        probability_a = _weight_of(list_a, length_a, chosen, weights) / total_a if total_a > 0.0 else 0.0
        probability_b = _weight_of(list_b, length_b, chosen, weights) / total_b if total_b > 0.0 else 0.0
        docs[shown] = chosen
        posterior_a[shown] = probability_a / (probability_a + probability_b)
        shown += 1
    return shown


def _marginal_outcome(posterior_a, clicks, shown, scratch):
    """E[sign(clicks credited to A - clicks credited to B)] with independent per-position credits."""
    middle = shown
    for index in range(2 * shown + 1):
        scratch[index] = 0.0
    scratch[middle] = 1.0
    low = middle
    high = middle
    for position in range(shown):
        if not clicks[position]:
            continue
        p = posterior_a[position]
        low -= 1
        high += 1
        # After a click the support moves one step out and flips parity, so the new entries never
        # overwrite an old one that is still to be read; the old ones are cleared afterwards.
        for difference in range(low, high + 1, 2):
            below = scratch[difference - 1] if difference - 1 >= low + 1 else 0.0
            above = scratch[difference + 1] if difference + 1 <= high - 1 else 0.0
            scratch[difference] = p * below + (1.0 - p) * above
        for difference in range(low + 1, high, 2):
            scratch[difference] = 0.0
    outcome = 0.0
    for difference in range(low, high + 1):
        if difference > middle:
            outcome += scratch[difference]
        elif difference < middle:
            outcome -= scratch[difference]
    return outcome


def _compare(list_a, list_b, length, relevance, method, click, stop, weights, uniforms, docs, teams, posterior,
             clicks, scratch):
    """One interleaved comparison on one query: (outcome of A in {-1, 0, 1}, credit of A, credit of B)."""
    cutoff = docs.shape[0]
    if method == 0:
        shown = _team_draft(list_a, length, list_b, length, uniforms[1:1 + cutoff], docs, teams)
        click_uniforms = uniforms[1 + cutoff:]
    else:
        shown = _probabilistic(list_a, length, list_b, length, weights, uniforms[1:1 + cutoff],
                               uniforms[1 + cutoff:1 + 2 * cutoff], docs, posterior)
        click_uniforms = uniforms[1 + 2 * cutoff:]
    _cascade_clicks(docs, shown, relevance, click, stop, click_uniforms, clicks)
    credit_a = 0.0
    credit_b = 0.0
    for position in range(shown):
        if clicks[position]:
            if method == 0:
                if teams[position] == 0:
                    credit_a += 1.0
                else:
                    credit_b += 1.0
            else:
                credit_a += posterior[position]
                credit_b += 1.0 - posterior[position]
    if method == 0:
        outcome = credit_a - credit_b
    else:
        outcome = _marginal_outcome(posterior, clicks, shown, scratch)
    if outcome > _TIE:
        return 1, credit_a, credit_b
    if outcome < -_TIE:
        return -1, credit_a, credit_b
    return 0, credit_a, credit_b


def _compare_on_random_query(lists, lengths, relevance, first, second, method, click, stop, weights, uniforms,
                             docs, teams, posterior, clicks, scratch):
    """Draw a query from ``uniforms[0]`` and compare rankers ``first`` and ``second`` on it."""
    n_queries = lists.shape[0]
    query = int(uniforms[0] * n_queries)
    if query >= n_queries:  # guards against rounding of a uniform just below 1
        query = n_queries - 1
    outcome, credit_a, credit_b = _compare(lists[query, first], lists[query, second], lengths[query], relevance,
                                           method, click, stop, weights, uniforms, docs, teams, posterior, clicks,
                                           scratch)
    return outcome, credit_a, credit_b, query


def _duel_counts(lists, lengths, relevance, first, second, method, click, stop, weights, uniforms):
    """``uniforms.shape[0]`` comparisons of two rankers: (wins of first, wins of second, ties)."""
    cutoff = lists.shape[2]
    docs = np.empty(cutoff, dtype=np.int32)
    teams = np.empty(cutoff, dtype=np.int8)
    posterior = np.empty(cutoff, dtype=np.float64)
    clicks = np.empty(cutoff, dtype=np.bool_)
    scratch = np.empty(2 * cutoff + 1, dtype=np.float64)
    wins_first = 0
    wins_second = 0
    ties = 0
    for comparison in range(uniforms.shape[0]):
        outcome, _, _, _ = _compare_on_random_query(lists, lengths, relevance, first, second, method, click, stop,
                                                    weights, uniforms[comparison], docs, teams, posterior,
                                                    clicks, scratch)
        if outcome > 0:
            wins_first += 1
        elif outcome < 0:
            wins_second += 1
        else:
            ties += 1
    return wins_first, wins_second, ties


def _top_lists(scores, offsets, tie_keys, first_doc, lists):
    """Each ranker's top-``cutoff`` documents of every query (score descending, then tie key ascending).

    ``scores[d, ranker]`` covers documents ``first_doc + d``; ``offsets`` are relative to
    ``first_doc``; ``lists[q, ranker]`` receives global document ids.
    """
    cutoff = lists.shape[2]
    n_rankers = scores.shape[1]
    largest = 0
    for query in range(offsets.shape[0] - 1):
        size = offsets[query + 1] - offsets[query]
        if size > largest:
            largest = size
    taken = np.zeros(largest, dtype=np.bool_)
    for query in range(offsets.shape[0] - 1):
        start = offsets[query]
        size = offsets[query + 1] - start
        length = min(cutoff, size)
        for ranker in range(n_rankers):
            taken[:size] = False
            for rank in range(length):
                best = -1
                for doc in range(size):
                    if taken[doc]:
                        continue
                    if best < 0:
                        best = doc
                        continue
                    score = scores[start + doc, ranker]
                    best_score = scores[start + best, ranker]
                    if score > best_score or (score == best_score
                                              and tie_keys[start + doc] < tie_keys[start + best]):
                        best = doc
                taken[best] = True
                lists[query, ranker, rank] = first_doc + start + best
            for rank in range(length, cutoff):
                lists[query, ranker, rank] = -1


_TIE = TIE_TOLERANCE
_KERNEL_NAMES = ("_contains", "_team_draft", "_remaining_weight", "_weight_of", "_probabilistic",
                 "_cascade_clicks", "_marginal_outcome", "_compare", "_compare_on_random_query", "_duel_counts",
                 "_top_lists")


def _compile() -> None:
    """Compile the kernels on first use (Numba's on-disk cache makes later processes fast)."""
    jit_in_place(globals(), _KERNEL_NAMES)


def kernels() -> dict[str, Any]:
    """The compiled kernels by name (compiled on first call), for the ranker-evaluation problem."""
    _compile()
    return {name: globals()[name] for name in _KERNEL_NAMES}

