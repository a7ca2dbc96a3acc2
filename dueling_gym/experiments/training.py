"""Moved to :mod:`dueling_gym.experiments.learning.training` (this path keeps working, also with ``python -m``)."""

from __future__ import annotations

from dueling_gym.experiments.learning.training import (
    ALGORITHMS,
    FAMILIES,
    POLICIES,
    MixtureSampler,
    StableBaselinesTrainer,
    build_parser,
    held_out_regret,
    main,
    make_training_env,
    run_from_arguments,
    train,
)

__all__ = ["ALGORITHMS", "FAMILIES", "POLICIES", "MixtureSampler", "StableBaselinesTrainer", "make_training_env",
           "held_out_regret", "train", "build_parser", "run_from_arguments", "main"]

if __name__ == "__main__":
    main()
