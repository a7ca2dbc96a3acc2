"""Moved to :mod:`dueling_gym.experiments.learning.evolution` (this path keeps working, also with ``python -m``)."""

from __future__ import annotations

from dueling_gym.experiments.learning.evolution import (
    FAMILIES,
    NORMALISATIONS,
    OBJECTIVES,
    REFERENCE_AGENTS,
    EvolutionTrainer,
    build_parser,
    main,
    random_weights,
    reference_regret,
    run_from_arguments,
    train_evolution,
    widen_weights,
)

__all__ = ["FAMILIES", "NORMALISATIONS", "OBJECTIVES", "REFERENCE_AGENTS", "EvolutionTrainer", "random_weights",
           "widen_weights", "reference_regret", "train_evolution", "build_parser", "run_from_arguments", "main"]

if __name__ == "__main__":
    main()
