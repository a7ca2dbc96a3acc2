"""Problems: the ground truth that environments sample duels from.

* :class:`~dueling_gym.problems.PreferenceMatrix` -- a validated K-armed problem with its winners and regrets.
* The published matrices (:func:`load_problem`, :func:`~dueling_gym.problems.list_problems`).
* Problems from pairwise-comparison logs (:func:`~dueling_gym.problems.load_comparisons`) and from learning-to-rank
  data, rankers compared by interleaving with simulated clicks (:func:`~dueling_gym.problems.ranker_evaluation`).
* Problem files: any problem saved with its provenance (:func:`save_problem`,
  :func:`read_problem_file`).
* Random generators driven by a ``numpy.random.Generator`` and :class:`~dueling_gym.problems.ProblemSampler`.
* The lower-bound constants of Komiyama et al. (2016) (:mod:`.lower_bounds`).
* :class:`~dueling_gym.problems.BipartiteDuelProblem` for combinatorial pure exploration (:mod:`.bipartite`).
"""

from dueling_gym.problems.bipartite import BipartiteDuelProblem, TooManyMatchingsError, max_weight_matching
from dueling_gym.problems.datasets import (
    BIPARTITE_PROBLEMS,
    PUBLISHED_PROBLEMS,
    dataset_info,
    five_edge_example,
    list_problems,
    load_bipartite_problem,
)
from dueling_gym.problems.generators import (
    GENERATORS,
    BipartiteProblemSampler,
    ProblemSampler,
    cyclic_copeland_winners,
    no_condorcet_winner,
    random_bipartite_graph,
    random_bipartite_problem,
    unique_copeland_winner,
    utility_based,
)
from dueling_gym.problems.preference import REGRET_NOTIONS, PreferenceMatrix
from dueling_gym.problems.loading import as_preference_matrix, load_problem
from dueling_gym.problems.comparisons import load_comparisons
from dueling_gym.problems.ltr_files import LTRData, read_ltr_file
from dueling_gym.problems.ranker_budget import ComparisonBudget
from dueling_gym.problems.ranker_problems import RankerEvaluationProblem, ranker_evaluation
from dueling_gym.problems.structure_confidence import StructureConfidence, structure_confidence
from dueling_gym.problems.problem_files import read_problem_file, save_problem

# The lower-bound constants need Numba and SciPy's optimisers; they are imported on first use
# (module ``__getattr__``) so that importing the problems stays as cheap as importing NumPy.
_LAZY = {
    "lower_bound_constant": "dueling_gym.problems.lower_bounds",
    "ecw_lower_bound_constant": "dueling_gym.problems.lower_bounds",
}

__all__ = [
    "PreferenceMatrix",
    "REGRET_NOTIONS",
    "as_preference_matrix",
    "load_problem",
    "save_problem",
    "load_comparisons",
    "ranker_evaluation",
    "RankerEvaluationProblem",
    "ComparisonBudget",
    "structure_confidence",
    "StructureConfidence",
    "read_ltr_file",
    "LTRData",
    "read_problem_file",
    "list_problems",
    "dataset_info",
    "PUBLISHED_PROBLEMS",
    "GENERATORS",
    "ProblemSampler",
    "utility_based",
    "no_condorcet_winner",
    "cyclic_copeland_winners",
    "unique_copeland_winner",
    "lower_bound_constant",
    "ecw_lower_bound_constant",
    "BipartiteDuelProblem",
    "BipartiteProblemSampler",
    "BIPARTITE_PROBLEMS",
    "TooManyMatchingsError",
    "five_edge_example",
    "load_bipartite_problem",
    "max_weight_matching",
    "random_bipartite_graph",
    "random_bipartite_problem",
]


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
