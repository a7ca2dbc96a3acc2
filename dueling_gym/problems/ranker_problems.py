"""Online ranker evaluation as a dueling bandit: rankers are arms, a duel is an interleaved comparison.

The experiments of RUCB (Zoghi, Whiteson, Munos & de Rijke, ICML 2014, Section 6), RCS (Zoghi,
Whiteson, de Rijke & Munos, WSDM 2014), MergeRUCB (Zoghi, Whiteson & de Rijke, WSDM 2015) and CCB
(Zoghi, Karnin, Whiteson & de Rijke, NeurIPS 2015) take the feature rankers of a learning-to-rank
data set as arms (MSLR-WEB30K: 136 features, so K = 136 rankers, each ranking a query's documents
by one feature) and compare two of them by interleaving their result lists
(:mod:`dueling_gym.problems.interleaving`) and simulating a user's clicks with a cascade click
model (:mod:`dueling_gym.problems.click_models`).  The preference matrix is

    ``P[i, j]`` = P(ranker ``i`` wins an interleaved comparison with ranker ``j`` on a query
    drawn uniformly from the data), a tie counting as half a win,

which :func:`~dueling_gym.problems.ranker_evaluation` estimates by Monte Carlo, ``P[j, i] = 1 - P[i, j]``.
How many comparisons each pair ``i < j`` gets is a
:class:`~dueling_gym.problems.ranker_budget.ComparisonBudget`: by default a **sequential** rule
plays a pair in growing batches until its interval excludes 1/2 (settled), lies within a
tolerance of 1/2 (near-tie) or the pair reaches its maximum (unsettled), so that with probability
at least ``1 - error_rate`` every settled pair is on the right side of 1/2 (the rule and its
guarantee are in :mod:`dueling_gym.problems.ranker_budget`); ``comparisons_per_pair=n`` gives
every pair ``n``.  The standard error of each entry, the win, tie and comparison counts, each
pair's status and the probability that the printed winners are right
(:mod:`dueling_gym.problems.structure_confidence`) are in the result's ``provenance``; the
regret of an agent on this problem is therefore measured against the estimate, not against the
unknowable exact matrix.

Choices:

* **Rankers**: ``"features"`` (ranker ``f`` orders documents by feature ``f``, larger first, or
  smaller first for the data's ``ascending_columns``, rank-valued features) or a weight matrix
  ``W`` (ranker ``r`` scores document ``x`` by ``W[r] @ x``, linear rankers as in the online
  learning-to-rank literature).
* **Ties in a ranker's scores** (frequent: many features are counts or zero) are broken by one
  fixed pseudo-random key per document, drawn from ``tie_break_seed``.  File order would favour
  whichever documents the data set happens to list first, and a fresh draw per comparison would
  make the lists themselves random; one shared key keeps the lists fixed and unbiased.
* **Randomness**: the comparisons of pair number ``p`` (pairs ``i < j`` in row-major order) draw
  their uniforms from ``SeedSequence(seed, spawn_key=(p,))``, batch after batch from the one
  generator, so a pair that stops after ``n`` comparisons played exactly the first ``n`` of the
  fixed budget ``n``; whether a pair stops depends on its own counts only, so the matrix is the
  same for every number of worker threads ``jobs``.  The posterior draws of the structure's
  confidence come from ``SeedSequence(seed, spawn_key=(m,))``, ``m`` the number of pairs (a key
  no pair uses).
* **Cache**: results are stored under ``cache_dir`` in a file named by a SHA-256 digest of the
  data file's bytes (or of the arrays) and of every parameter that changes the result; the file
  also holds that digest, the facts of the estimate and a **signature**: an HMAC-SHA256 of all
  of it under a secret of the cache folder (``.signing-key``: 32 random bytes, readable by its
  owner only, made on first use).  A plain checksum can be recomputed by whoever edits the file
  (a swapped-wins file re-signed that way would change the winner); a keyed one cannot without
  the secret, so an edited file fails the check.  Replaying a sample of pairs instead would
  catch an edit too, but only after parsing the data again: several seconds for a file a hit
  now reads once for its digest.  Only a file that passes every check (key, signature,
  consistent counts) is used; otherwise it is **recomputed and rewritten** (with a warning
  naming the file).  Files are written to a temporary name and renamed (``os.replace``), so a
  reader never sees a partial file.  The cache itself is :mod:`dueling_gym.problems.ranker_cache`.
* **Data digest**: every estimate records in its provenance ``comparison_data_sha256``, a
  SHA-256 of what the comparisons read from the data (every ranker's top lists and the
  relevance grades), so that :class:`~dueling_gym.envs.ranker_duel.RankerDuelEnv` refuses a
  matrix estimated on other data.
* **Sizes**: the arrays that grow with ``K ** 2``, the top lists and the uniforms of the pairs
  played at once are checked against the memory available before they are allocated (a feature
  index of 999 999 in a file means 999 999 feature rankers), and refused with the size.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dueling_gym.problems import interleaving as _interleaving
from dueling_gym.problems import ltr_files as _ltr_files
from dueling_gym.problems.click_models import CascadeClickModel, parse_click_model, select_click_model
from dueling_gym.problems.interleaving import INTERLEAVING_METHODS, PROBABILISTIC_TAU, uniforms_per_comparison
from dueling_gym.problems.ltr_files import DEFAULT_CHUNK_BYTES, LTRData, _check_memory, _read, read_ltr_file
from dueling_gym.problems.ltr_sources import group_file_for, with_side_digest
from dueling_gym.problems.preference import PreferenceMatrix
from dueling_gym.problems.ranker_budget import (PAIR_STATUSES, UNSETTLED, ComparisonBudget, pair_statuses,
                                                resolve_budget)
from dueling_gym.problems.ranker_cache import arrays_digest, cache_key, file_digest, load_cached, store_counts
from dueling_gym.problems.structure_confidence import structure_confidence
from dueling_gym.validation import (check_bool, check_integer, check_pairwise_memory, check_regular_file, check_rng,
                                    read_only)

__all__ = [
    "RankerEvaluationProblem",
    "Comparison",
    "ranker_evaluation",
    "estimate_preferences",
    "synthetic_ltr_data",
    "MSLR_GRADE_FREQUENCIES",
    "TIE_RULE",
]

#: How ties are counted, recorded in every estimated matrix's provenance.
TIE_RULE = ("no clicks or equal credit is a tie; a tie counts as half a win in P[i, j] (the online "
            "environment settles it with a fair coin)")
#: Approximate share of the relevance grades 0-4 in MSLR-WEB10K (used by the synthetic data).
MSLR_GRADE_FREQUENCIES = (0.52, 0.32, 0.13, 0.02, 0.01)
_PAIRS_PER_TASK = 16
#: Posterior draws behind the structure's confidence (Monte-Carlo standard error at most 0.011).
_CONFIDENCE_DRAWS = 2000
#: K x K arrays alive at once while a matrix is estimated and wrapped: the win, tie and comparison
#: counts, the pair indices, the estimate, its errors and temporaries, the PreferenceMatrix's own.
_PAIRWISE_ARRAYS = 16


class Comparison(NamedTuple):
    """One simulated interleaved comparison: ``outcome`` is 1 (first ranker wins), -1 (second
    wins) or 0 (tie); credits are clicks (team draft) or expected clicks (probabilistic)."""

    outcome: int
    query: int
    credit_first: float
    credit_second: float


class RankerEvaluationProblem:
    """Rankers of a learning-to-rank data set compared by interleaving with a simulated user.

    Holds what a comparison needs and nothing else: every ranker's top-``cutoff`` list of every
    query (computed once, a ``(n_queries, n_rankers, cutoff)`` array of document ids, ``-1``
    past a short query's end), the documents' relevance grades, the interleaving method and the
    click model.  The features are not kept.

    Parameters
    ----------
    data : LTRData, str or path-like
        The data set, or a LETOR file to read with :func:`~dueling_gym.problems.read_ltr_file`.
    rankers : "features" or array_like, shape (n_rankers, n_features)
        Feature rankers, or linear rankers given by their weights.
    interleaving : {"team_draft", "probabilistic"}
    click_model : str, mapping or CascadeClickModel, default "perfect"
        ``"perfect"``, ``"navigational"`` or ``"informational"``: the named cascade model on the
        data's grade scale (three-grade table for grades 0-2, five-grade for 0-4, see
        :mod:`dueling_gym.problems.click_models`); ``"perfect:5"`` and the like force a table;
        ``{"click": [...], "stop": [...]}`` (one entry per grade) or a
        :class:`~dueling_gym.problems.click_models.CascadeClickModel` is used as given.  The
        model's table and how it was chosen are in ``click_model_choice`` and
        :meth:`describe`; data with a grade the model does not cover is refused (ValueError).
    cutoff : int, default 10
        Length of the rankers' lists (and of the interleaved list).
    tie_break_seed : int, default 0
        Seed of the per-document keys that order documents a ranker scores equally.
    """

    def __init__(self, data: LTRData | str | os.PathLike, *, rankers: str | ArrayLike = "features",
                 interleaving: str = "team_draft", click_model: Any = "perfect", cutoff: int = 10,
                 tie_break_seed: int = 0):
        if isinstance(data, (str, os.PathLike)):
            data = read_ltr_file(data)
        if not isinstance(data, LTRData):
            raise TypeError(f"data must be an LTRData or the path of a LETOR file, got {type(data).__name__}")
        if interleaving not in INTERLEAVING_METHODS:
            raise ValueError(f"unknown interleaving {interleaving!r}; choose one of {sorted(INTERLEAVING_METHODS)}")
        self.interleaving = interleaving
        request = parse_click_model(click_model)
        self.cutoff = check_integer("cutoff", cutoff, minimum=1, maximum=1000)
        self.tie_break_seed = check_integer("tie_break_seed", tie_break_seed, minimum=0)
        # A bare name takes the table of the data's scale: 0-2 data under the five-grade table
        # would have "perfect" click its best documents with probability 0.4, not 1.
        self.click_model: CascadeClickModel
        #: The chosen model's table and how it was chosen (also in :meth:`describe`).
        self.click_model_choice: str
        self.click_model, self.click_model_choice = select_click_model(request, int(data.relevance.max()))
        weights = _ranker_weights(rankers, data.n_features)
        self.rankers = "features" if weights is None else "weights"
        self.ranker_weights = None if weights is None else read_only(weights)
        self.n_rankers = data.n_features if weights is None else int(weights.shape[0])
        if self.n_rankers < 2:
            raise ValueError(f"a ranker-evaluation problem needs at least 2 rankers, got {self.n_rankers}")
        # A stray feature index (999 999 in one line) makes as many feature rankers: refuse the
        # K x K counts and the top lists before allocating them, naming the size.
        what = ("a ranker-evaluation problem (one ranker per feature column; the largest feature index is "
                f"{data.n_features})" if weights is None else "a ranker-evaluation problem")
        check_pairwise_memory(what, self.n_rankers, arrays=_PAIRWISE_ARRAYS)
        _check_memory(f"the top-{self.cutoff} lists of {self.n_rankers} rankers on {data.n_queries} queries (int32)",
                      data.n_queries * self.n_rankers * self.cutoff * 4)
        self.n_queries, self.n_documents, self.n_features = data.n_queries, data.n_documents, data.n_features
        self.query_ids = data.query_ids
        self.source = data.source
        self.dropped_queries = data.dropped_queries
        self.relevance = data.relevance
        self.ranked_lists = read_only(_ranked_lists(data, weights, self.cutoff, self.tie_break_seed))
        self.list_lengths = read_only(np.minimum(np.diff(data.query_offsets), self.cutoff).astype(np.int32))
        click, stop = self.click_model.arrays()
        self._click, self._stop = read_only(click), read_only(stop)
        self._method = INTERLEAVING_METHODS[interleaving]
        self._softmax = read_only(1.0 / np.arange(1, self.cutoff + 1, dtype=np.float64) ** PROBABILISTIC_TAU)
        self.uniforms_per_comparison = uniforms_per_comparison(interleaving, self.cutoff)
        self._scratch = _Scratch(self.cutoff)
        self._data_digest: str | None = None

    @property
    def comparison_data_sha256(self) -> str:
        """The SHA-256 of everything a comparison reads from the data (the top lists, their lengths, the grades).

        Two data sets with the same digest give the same comparisons for the same settings, so
        a matrix estimated on one is valid for the other; any other difference in the data is
        caught.  Computed on first use (tens of milliseconds at MSLR's size).
        """
        if self._data_digest is None:
            digest = hashlib.sha256()
            for array in (self.ranked_lists, self.list_lengths, self.relevance):
                digest.update(repr((array.dtype.str, array.shape)).encode())
                digest.update(np.ascontiguousarray(array).tobytes())
            self._data_digest = digest.hexdigest()
        return self._data_digest

    def __repr__(self) -> str:
        return (f"RankerEvaluationProblem(K={self.n_rankers} {self.rankers}, {self.n_queries} queries, "
                f"{self.interleaving}, click_model={self.click_model.name!r} ({self.click_model.n_grades} grades), "
                f"cutoff={self.cutoff})")

    def _check_rankers(self, first: Any, second: Any) -> tuple[int, int]:
        last = self.n_rankers - 1
        return (check_integer("first", first, minimum=0, maximum=last),
                check_integer("second", second, minimum=0, maximum=last))

    def compare(self, first: int, second: int, rng: np.random.Generator) -> Comparison:
        """Simulate one comparison of rankers ``first`` and ``second`` on a uniformly drawn query."""
        first, second = self._check_rankers(first, second)
        return self.compare_with_uniforms(first, second, check_rng(rng).random(self.uniforms_per_comparison))

    def compare_with_uniforms(self, first: int, second: int, uniforms: NDArray[np.float64]) -> Comparison:
        """One comparison driven by ``uniforms`` (``uniforms_per_comparison`` of them, in ``[0, 1)``):
        the first picks the query, then the interleaving's coins, then two per shown document.
        Rankers are not range-checked here (the environment has checked its action)."""
        scratch = self._scratch
        outcome, credit_first, credit_second, query = _interleaving._compare_on_random_query(
            self.ranked_lists, self.list_lengths, self.relevance, first, second, self._method, self._click,
            self._stop, self._softmax, uniforms, scratch.docs, scratch.teams, scratch.posterior, scratch.clicks,
            scratch.outcomes)
        return Comparison(int(outcome), int(query), float(credit_first), float(credit_second))

    def duel_counts(self, first: int, second: int, uniforms: NDArray[np.float64]) -> tuple[int, int, int]:
        """Comparisons driven by the rows of ``uniforms``: (wins of first, wins of second, ties)."""
        first, second = self._check_rankers(first, second)
        uniforms = np.ascontiguousarray(uniforms, dtype=np.float64)
        if uniforms.ndim != 2 or uniforms.shape[1] != self.uniforms_per_comparison:
            raise ValueError(f"uniforms must have shape (n, {self.uniforms_per_comparison}), got {uniforms.shape}")
        counts = _interleaving._duel_counts(self.ranked_lists, self.list_lengths, self.relevance, first, second,
                                            self._method, self._click, self._stop, self._softmax, uniforms)
        return int(counts[0]), int(counts[1]), int(counts[2])

    def describe(self) -> dict[str, Any]:
        """The problem's parameters as plain values (cache keys and provenance)."""
        facts: dict[str, Any] = {
            "rankers": self.rankers, "interleaving": self.interleaving, "click_model": self.click_model.name,
            "click_probabilities": list(self.click_model.click), "stop_probabilities": list(self.click_model.stop),
            "click_model_grades": self.click_model.n_grades, "click_model_table": self.click_model_choice,
            "cutoff": self.cutoff, "tie_break_seed": self.tie_break_seed, "n_rankers": self.n_rankers,
        }
        if self.ranker_weights is not None:
            facts["ranker_weights_sha256"] = hashlib.sha256(np.ascontiguousarray(self.ranker_weights).tobytes()
                                                            + repr(self.ranker_weights.shape).encode()).hexdigest()
        if self.interleaving == "probabilistic":
            facts["probabilistic_tau"] = PROBABILISTIC_TAU
        return facts


class _Scratch:
    """Work arrays of one comparison, allocated once per problem (the environment's hot path)."""

    def __init__(self, cutoff: int):
        self.docs = np.empty(cutoff, dtype=np.int32)
        self.teams = np.empty(cutoff, dtype=np.int8)
        self.posterior = np.empty(cutoff, dtype=np.float64)
        self.clicks = np.empty(cutoff, dtype=np.bool_)
        self.outcomes = np.empty(2 * cutoff + 1, dtype=np.float64)


def _ranker_weights(rankers: str | ArrayLike, n_features: int) -> NDArray[np.float32] | None:
    if isinstance(rankers, str):
        if rankers != "features":
            raise ValueError(f"rankers must be 'features' or a weight matrix (n_rankers x n_features), got {rankers!r}")
        return None
    weights = np.asarray(rankers)
    if weights.dtype.kind not in "fiu" or weights.ndim != 2:
        raise TypeError(f"rankers must be 'features' or a 2-D numeric weight matrix, got dtype {weights.dtype} and "
                        f"shape {weights.shape}")
    if weights.shape[1] != n_features:
        raise ValueError(f"the weight matrix has {weights.shape[1]} columns but the data has {n_features} features")
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    if not np.all(np.isfinite(weights)):
        raise ValueError("the ranker weights must be finite")
    return weights


def _ranked_lists(data: LTRData, weights: NDArray[np.float32] | None, cutoff: int,
                  tie_break_seed: int) -> NDArray[np.int32]:
    """Every ranker's top-``cutoff`` documents per query (global ids), ``-1`` past a short query's end."""
    n_rankers = data.n_features if weights is None else weights.shape[0]
    lists = np.empty((data.n_queries, n_rankers, cutoff), dtype=np.int32)
    tie_keys = np.random.default_rng(tie_break_seed).permutation(data.n_documents).astype(np.int64)
    kernel = _interleaving.kernels()["_top_lists"]
    offsets = data.query_offsets
    if weights is None and not data.ascending_columns:
        kernel(data.features, offsets, tie_keys, 0, lists)
        return lists
    # Rank-valued feature columns (lower is better) are negated, which reverses their order
    # exactly and keeps their ties, so the one descending kernel serves both directions.
    ascending = list(data.ascending_columns) if weights is None else []
    # Linear rankers, and feature rankers with ascending columns: blocks of about 2**16
    # documents at a time, to bound the memory of the scores.
    first_query = 0
    while first_query < data.n_queries:
        last_query = int(np.searchsorted(offsets, offsets[first_query] + (1 << 16), side="right")) - 1
        last_query = min(max(last_query, first_query + 1), data.n_queries)
        start, stop = int(offsets[first_query]), int(offsets[last_query])
        if weights is None:
            scores = np.array(data.features[start:stop])
            scores[:, ascending] *= -1
        else:
            scores = np.ascontiguousarray(data.features[start:stop] @ weights.T)
        kernel(scores, offsets[first_query:last_query + 1] - start, tie_keys[start:stop], start,
               lists[first_query:last_query])
        first_query = last_query
    return lists


# ---------------------------------------------------------------------------------- estimation
def estimate_preferences(problem: RankerEvaluationProblem, comparisons_per_pair: int | None = None, *,
                         budget: ComparisonBudget | None = None, seed: int = 0, jobs: int | None = 1,
                         progress: bool = False) -> dict[str, NDArray[np.int64]]:
    """Play the comparisons of every pair ``i < j`` under a budget: returns the counts.

    ``wins[i, j]`` is how often ``i`` beat ``j``, ``ties[i, j]`` (symmetric) how often they tied,
    ``comparisons[i, j]`` (symmetric) how often they were compared.  ``comparisons_per_pair=n``
    plays ``n`` per pair; otherwise ``budget`` (default
    :data:`~dueling_gym.problems.ranker_budget.DEFAULT_BUDGET`) plays each pair look after look
    until the rule stops it.  Pair number ``p`` draws from ``SeedSequence(seed, spawn_key=(p,))``
    and stops on its own counts, so the counts do not depend on ``jobs`` (worker threads; the
    compiled kernel releases the GIL).

    Parameters
    ----------
    problem : RankerEvaluationProblem
    comparisons_per_pair : int, optional
        A fixed budget (give this or ``budget``, not both).
    budget : ComparisonBudget, optional
        The rule (default: the sequential default).
    seed : int, default 0
    jobs : int, optional
        Worker threads (None: every core this process may use).
    progress : bool, default False
        Show a progress bar over the pairs.

    Returns
    -------
    dict of str to ndarray of int64
        ``wins``, ``ties`` and ``comparisons``, each K x K.
    """
    if not isinstance(problem, RankerEvaluationProblem):
        raise TypeError(f"problem must be a RankerEvaluationProblem, got {type(problem).__name__}")
    budget = resolve_budget(comparisons_per_pair, budget)
    seed = check_integer("seed", seed, minimum=0)
    jobs = _check_jobs(jobs)
    progress = check_bool("progress", progress)
    n_rankers = problem.n_rankers
    n_pairs = n_rankers * (n_rankers - 1) // 2
    tasks = [range(start, min(start + _PAIRS_PER_TASK, n_pairs)) for start in range(0, n_pairs, _PAIRS_PER_TASK)]
    _check_uniforms_memory(budget, problem.uniforms_per_comparison, min(jobs, len(tasks)))
    firsts, seconds = np.triu_indices(n_rankers, 1)
    wins = np.zeros((n_rankers, n_rankers), dtype=np.int64)
    ties = np.zeros((n_rankers, n_rankers), dtype=np.int64)
    comparisons = np.zeros((n_rankers, n_rankers), dtype=np.int64)
    duel_counts = _interleaving.kernels()["_duel_counts"]

    def play(pairs: range) -> list[tuple[int, ...]]:
        results = []
        for pair in pairs:
            first, second = int(firsts[pair]), int(seconds[pair])
            results.append((first, second) + _play_pair(duel_counts, problem, pair, first, second, budget, n_pairs,
                                                        seed))
        return results

    from tqdm.auto import tqdm

    with tqdm(total=int(firsts.size), unit="pair", desc=f"interleaved comparisons (K={n_rankers})",
              disable=not progress) as bar, ThreadPoolExecutor(max_workers=jobs) as pool:
        for future in as_completed([pool.submit(play, task) for task in tasks]):
            for first, second, first_wins, second_wins, tied, played in future.result():
                wins[first, second], wins[second, first] = first_wins, second_wins
                ties[first, second] = ties[second, first] = tied
                comparisons[first, second] = comparisons[second, first] = played
            bar.update(len(future.result()))
    return {"wins": wins, "ties": ties, "comparisons": comparisons}


def _play_pair(duel_counts: Any, problem: RankerEvaluationProblem, pair: int, first: int, second: int,
               budget: ComparisonBudget, n_pairs: int, seed: int) -> tuple[int, int, int, int]:
    """(wins of first, wins of second, ties, comparisons) of pair number ``pair`` (row-major over ``i < j``).

    The one place the comparisons of a pair are drawn: batch after batch from the pair's one
    generator, which draws the same uniforms, row after row, as one draw of all of them at once.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(pair,)))
    first_wins = second_wins = tied = played = 0
    for look in budget.looks:
        uniforms = rng.random((look - played, problem.uniforms_per_comparison))
        counts = duel_counts(problem.ranked_lists, problem.list_lengths, problem.relevance, first, second,
                             problem._method, problem._click, problem._stop, problem._softmax, uniforms)
        first_wins, second_wins, tied, played = (first_wins + int(counts[0]), second_wins + int(counts[1]),
                                                 tied + int(counts[2]), look)
        if look < budget.max_comparisons and budget.status(first_wins, second_wins, tied, n_pairs) != UNSETTLED:
            break
    return first_wins, second_wins, tied, played


def _check_uniforms_memory(budget: ComparisonBudget, width: int, pairs_at_once: int) -> None:
    """Refuse a budget whose largest batch of uniforms (drawn at once per pair) does not fit in memory."""
    what = (f"comparisons_per_pair={budget.max_comparisons}" if budget.is_fixed else
            f"max_comparisons={budget.max_comparisons} (batches of up to {budget.largest_batch})")
    _check_memory(f"{what} ({pairs_at_once} pair(s) at a time, {width} float64 uniforms per comparison)",
                  pairs_at_once * budget.largest_batch * width * 8)


def _check_jobs(jobs: Any) -> int:
    if jobs is None:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return check_integer("jobs", jobs, minimum=1)


def _matrix_and_errors(counts: Mapping[str, NDArray[np.int64]]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``P[i, j] = (wins + ties / 2) / n`` and the standard error of that mean of scores in {0, 1/2, 1}."""
    wins, ties, n = counts["wins"], counts["ties"], counts["comparisons"]
    off_diagonal = n > 0
    safe_n = np.where(off_diagonal, n, 1).astype(np.float64)
    mean = np.where(off_diagonal, (wins + 0.5 * ties) / safe_n, 0.5)
    second_moment = (wins + 0.25 * ties) / safe_n
    variance = np.maximum(second_moment - mean**2, 0.0) * safe_n / np.maximum(safe_n - 1.0, 1.0)
    errors = np.where(off_diagonal, np.sqrt(variance / safe_n), 0.0)
    return mean, errors


# ---------------------------------------------------------------------------------- entry point
def ranker_evaluation(path_or_arrays: str | os.PathLike | LTRData | Sequence[ArrayLike], *,
                      rankers: str | ArrayLike = "features", interleaving: str = "team_draft",
                      click_model: Any = "perfect", cutoff: int = 10, comparisons_per_pair: int | None = None,
                      budget: ComparisonBudget | None = None, seed: int = 0, tie_break_seed: int = 0,
                      cache_dir: str | os.PathLike | None = None,
                      jobs: int | None = None, progress: bool = True,
                      single_document_queries: str = "error",
                      group_file: str | os.PathLike | Literal[False] | None = None, missing: str = "error",
                      lower_is_better: bool | Sequence[int] = False,
                      max_decompressed_bytes: int | None = None) -> PreferenceMatrix:
    """Estimate the preference matrix of rankers compared by interleaving with simulated clicks.

    Parameters
    ----------
    path_or_arrays : path, LTRData or (features, relevance, query_offsets[, query_ids])
        A LETOR / SVMlight file, a loaded data set or its arrays.
    rankers, interleaving, click_model, cutoff, tie_break_seed
        As :class:`RankerEvaluationProblem`.
    comparisons_per_pair : int, optional
        A fixed budget: every pair ``i < j`` plays this many comparisons (the standard error of
        an entry is then at most ``0.5 / sqrt(n)``).  Give this or ``budget``, not both.
    budget : ComparisonBudget, optional
        The rule that decides each pair's comparisons; default
        :data:`~dueling_gym.problems.ranker_budget.DEFAULT_BUDGET`, sequential: a pair plays
        batches ending at 200, 400, ..., 12 800 and 20 000 comparisons, and stops as soon as its
        interval excludes 1/2 (**settled**) or lies within 0.025 of 1/2 (**near-tie**); at 20 000
        it stops **unsettled**.  The intervals are Hoeffding's or empirical Bernstein's, each at
        level ``0.05 / (pairs * looks)`` (a union bound over the pairs and the looks of the
        schedule), so that with probability at least 0.95 every settled pair lies on the side of
        1/2 where its estimate lies and every near-tie within 0.025 of 1/2 (the rule is in
        :mod:`dueling_gym.problems.ranker_budget`).
    seed : int, default 0
        Seed of the comparisons (and of the posterior draws of the structure's confidence).
    cache_dir : path, optional
        Folder of cached results (created if missing); ``None`` disables the cache.  A cached
        result is used only if its signature under the folder's secret matches (see the module's
        notes); a hit reads the data file's bytes once for their digest and parses nothing.
    jobs : int, optional
        Worker threads (default: every core this process may use).  The result does not depend on it.
    progress : bool, default True
        Show a tqdm progress bar over the pairs.
    single_document_queries : {"error", "drop"}
        Passed to the file reader.
    group_file, missing, lower_is_better, max_decompressed_bytes
        The layout of the file, passed to :func:`~dueling_gym.problems.read_ltr_file` (a side
        file of query sizes, ``NULL`` values, rank-valued features, the limit on a compressed
        file's text).  They apply to a file path only; data already read carries its own
        ``ascending_columns``.  The cache key holds the side file's digest beside the data
        file's, and ``missing`` and ``lower_is_better`` when they are set.

    Returns
    -------
    PreferenceMatrix
        The estimate; ``provenance`` holds ``standard_errors``, ``wins``, ``ties``,
        ``comparisons`` (K x K arrays), ``pair_status`` (K x K codes into ``pair_status_names``:
        unsettled, near-tie, settled; -1 on the diagonal), ``status_counts``, ``budget`` (the
        rule, its looks), ``total_comparisons``, ``structure_confidence`` (the printed Copeland
        winners and Condorcet winner with the posterior probability that each is right, see
        :func:`~dueling_gym.problems.structure_confidence.structure_confidence`), the
        parameters, the tie rule and the cache key.
    """
    budget = resolve_budget(comparisons_per_pair, budget)
    seed = check_integer("seed", seed, minimum=0)
    jobs = _check_jobs(jobs)
    progress = check_bool("progress", progress)
    if single_document_queries not in ("error", "drop"):
        raise ValueError(f"single_document_queries must be 'error' or 'drop', got {single_document_queries!r}")
    # Checked now, chosen once the data's grades are known: a bare name stays a name here.
    model = parse_click_model(click_model)
    if interleaving not in INTERLEAVING_METHODS:
        raise ValueError(f"unknown interleaving {interleaving!r}; choose one of {sorted(INTERLEAVING_METHODS)}")
    # A pair's batch of uniforms is the one allocation the budget alone decides: an
    # impossible count is refused before the data is read (for one pair at a time; the estimate
    # checks again for the pairs its threads play at once).
    width = uniforms_per_comparison(interleaving, check_integer("cutoff", cutoff, minimum=1, maximum=1000))
    _check_uniforms_memory(budget, width, 1)
    settings = {"rankers": rankers, "interleaving": interleaving, "click_model": model, "cutoff": cutoff,
                "tie_break_seed": tie_break_seed}
    cache_file = key = data_digest = None
    is_path = isinstance(path_or_arrays, (str, os.PathLike))
    reading = _ltr_files._check_read_options(single_document_queries=single_document_queries, group_file=group_file,
                                             missing=missing, lower_is_better=lower_is_better,
                                             max_decompressed_bytes=max_decompressed_bytes)
    reading_key = reading.cache_facts()
    if not is_path and (reading_key or group_file is not None or max_decompressed_bytes is not None):
        raise ValueError("group_file, missing, lower_is_better and max_decompressed_bytes describe a file to read; "
                         "they do not apply to data already in memory (give LTRData.from_arrays(..., "
                         "ascending_columns=...) for rank-valued features)")
    data = None if is_path else _as_data(path_or_arrays)
    if cache_dir is not None:
        # A hit costs one pass over the file's bytes (the key holds their digest) and no parsing.
        if is_path:
            source = Path(os.fspath(path_or_arrays))
            check_regular_file(source, "learning-to-rank file")
            data_digest = file_digest(source)
            side_file = group_file_for(source, reading.group_file)
            if side_file is not None:
                data_digest = with_side_digest(data_digest, file_digest(side_file))
        else:
            data_digest = arrays_digest(data)
        key = cache_key(data_digest, settings, budget, seed, single_document_queries, reading=reading_key)
        cache_file = Path(os.fspath(cache_dir)) / f"ranker_evaluation-{key[:40]}.npz"
        cached = load_cached(cache_file, key)
        if cached is not None:
            facts = {**cached["facts"], "data_source": str(path_or_arrays) if is_path else "arrays"}
            return _as_matrix(cached["counts"], facts, budget)
    if is_path:
        # The digest is taken again in the reading pass itself, so that the result is stored
        # under the digest of the bytes actually parsed even if the file was replaced meanwhile.
        data, read_digest = _read(Path(os.fspath(path_or_arrays)), None, single_document_queries,
                                  DEFAULT_CHUNK_BYTES, digest=cache_dir is not None, group_file=reading.group_file,
                                  missing=missing, lower_is_better=lower_is_better,
                                  max_decompressed_bytes=max_decompressed_bytes)
        if cache_dir is not None and read_digest != data_digest:
            data_digest = read_digest
            key = cache_key(data_digest, settings, budget, seed, single_document_queries, reading=reading_key)
            cache_file = Path(os.fspath(cache_dir)) / f"ranker_evaluation-{key[:40]}.npz"
    problem = RankerEvaluationProblem(data, **settings)
    del data  # the problem keeps the lists and the grades; the features can go
    facts = {**problem.describe(), "budget": budget.describe(),
             "comparisons_per_pair": budget.max_comparisons if budget.is_fixed else None, "seed": seed,
             "n_queries": problem.n_queries, "n_documents": problem.n_documents, "n_features": problem.n_features,
             "data_source": problem.source or "arrays", "dropped_queries": list(problem.dropped_queries),
             "data_sha256": data_digest, "comparison_data_sha256": problem.comparison_data_sha256,
             "cache_key": key}
    if reading_key:
        facts["read_options"] = reading_key
    counts = estimate_preferences(problem, budget=budget, seed=seed, jobs=jobs, progress=progress)
    n_pairs = problem.n_rankers * (problem.n_rankers - 1) // 2
    facts["total_comparisons"] = int(np.triu(counts["comparisons"], 1).sum())
    # A key that no pair's comparisons use (pairs are 0 .. n_pairs - 1).
    draws = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(n_pairs,)))
    facts["structure_confidence"] = structure_confidence(counts["wins"], counts["ties"], draws=_CONFIDENCE_DRAWS,
                                                         rng=draws).describe()
    if cache_file is not None:
        store_counts(cache_file, key, counts, facts)
    return _as_matrix(counts, facts, budget)


def _as_data(value: Any) -> LTRData:
    if isinstance(value, LTRData):
        return value
    if isinstance(value, (tuple, list)) and len(value) in (3, 4):
        return LTRData.from_arrays(*value)
    raise TypeError("path_or_arrays must be a file path, an LTRData or a tuple (features, relevance, query_offsets"
                    f"[, query_ids]), got {type(value).__name__}")


def _as_matrix(counts: Mapping[str, NDArray[np.int64]], facts: Mapping[str, Any],
               budget: ComparisonBudget) -> PreferenceMatrix:
    matrix, errors = _matrix_and_errors(counts)
    statuses = pair_statuses(budget, counts)
    upper = np.triu(statuses, 1)[np.triu_indices(statuses.shape[0], 1)]
    status_counts = {name: int((upper == code).sum()) for code, name in enumerate(PAIR_STATUSES)}
    name = f"ranker-evaluation K={facts['n_rankers']} {facts['interleaving']}/{facts['click_model']}"
    source = (f"Monte-Carlo estimate, {budget}: {facts['total_comparisons']} interleaved comparisons "
              f"({status_counts['settled']} pairs settled, {status_counts['near-tie']} near-ties, "
              f"{status_counts['unsettled']} unsettled; {facts['interleaving']}, {facts['click_model']} cascade "
              f"clicks, cutoff {facts['cutoff']}) of the {facts['rankers']} rankers on {facts['data_source']}")
    if "click_model_table" in facts:
        source += f"; click model: {facts['click_model_table']}"
    provenance = {**facts, "standard_errors": errors, "wins": counts["wins"], "ties": counts["ties"],
                  "comparisons": counts["comparisons"], "pair_status": statuses,
                  "pair_status_names": list(PAIR_STATUSES), "status_counts": status_counts, "tie_rule": TIE_RULE}
    return PreferenceMatrix(matrix, name=name, source=source, provenance=provenance)


# ---------------------------------------------------------------------------------- synthetic data
def synthetic_ltr_data(n_queries: int = 100, documents_per_query: int | tuple[int, int] = 20, n_features: int = 8,
                       *, seed: int = 0, grade_frequencies: Sequence[float] = MSLR_GRADE_FREQUENCIES) -> LTRData:
    """A synthetic learning-to-rank data set shaped like MSLR (grades 0-4, dense features).

    Grades are drawn with ``grade_frequencies``.  Feature ``f`` is ``a_f * grade + noise`` with
    an informativeness ``a_f`` drawn uniformly from ``[-0.3, 1.5]`` (some features useless or
    misleading, as in real data), standard normal noise; every third feature is rounded to a
    non-negative integer (a count, with many ties) and every fourth is zero for about half the
    documents, so the feature rankers differ and tie as real ones do.

    Parameters
    ----------
    n_queries : int
    documents_per_query : int or (low, high)
        A fixed number, or uniform in ``[low, high]`` per query (each at least 2).
    n_features : int
    seed : int
    grade_frequencies : sequence of float
        Probability of each grade (summing to 1).
    """
    n_queries = check_integer("n_queries", n_queries, minimum=1)
    n_features = check_integer("n_features", n_features, minimum=1)
    seed = check_integer("seed", seed, minimum=0)
    if isinstance(documents_per_query, tuple):
        low = check_integer("documents_per_query[0]", documents_per_query[0], minimum=2)
        high = check_integer("documents_per_query[1]", documents_per_query[1], minimum=low)
    else:
        low = high = check_integer("documents_per_query", documents_per_query, minimum=2)
    frequencies = np.asarray(grade_frequencies, dtype=np.float64)
    if frequencies.ndim != 1 or np.any(frequencies < 0) or abs(frequencies.sum() - 1.0) > 1e-9:
        raise ValueError(f"grade_frequencies must be non-negative and sum to 1, got {grade_frequencies!r}")
    rng = np.random.default_rng(seed)
    sizes = rng.integers(low, high + 1, size=n_queries)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    n_documents = int(offsets[-1])
    relevance = rng.choice(frequencies.size, size=n_documents, p=frequencies).astype(np.int32)
    informativeness = rng.uniform(-0.3, 1.5, size=n_features).astype(np.float32)
    features = np.empty((n_documents, n_features), dtype=np.float32)
    block = 1 << 16  # rows at a time, so that the float32 array is the only large allocation
    for start in range(0, n_documents, block):
        stop = min(start + block, n_documents)
        grades = relevance[start:stop, None].astype(np.float32)
        values = grades * informativeness + rng.standard_normal((stop - start, n_features), dtype=np.float32)
        counts = np.arange(n_features) % 3 == 2
        values[:, counts] = np.maximum(np.rint(values[:, counts]), 0.0)
        sparse = np.arange(n_features) % 4 == 3
        values[:, sparse] *= rng.random((stop - start, int(sparse.sum())), dtype=np.float32) < 0.5
        features[start:stop] = values
    query_ids = np.arange(1, n_queries + 1, dtype=np.int64)
    return LTRData.from_arrays(features, relevance, offsets, query_ids, source=f"synthetic (seed {seed})")
