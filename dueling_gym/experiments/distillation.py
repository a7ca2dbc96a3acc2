"""Moved to :mod:`dueling_gym.experiments.learning.distillation` (this path keeps working, also with ``python -m``)."""

from __future__ import annotations

from dueling_gym.experiments.learning.distillation import (
    INIT_TEACHER,
    DistillationTrainer,
    build_parser,
    distill_policy,
    main,
    parse_teachers,
    run_from_arguments,
    teacher_states,
)

__all__ = ["INIT_TEACHER", "DistillationTrainer", "distill_policy", "parse_teachers", "teacher_states", "build_parser",
           "run_from_arguments", "main"]

if __name__ == "__main__":
    main()
