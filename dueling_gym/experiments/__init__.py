"""Experiments: running agents on problems at scale and reporting the results."""

from dueling_gym.experiments.pure_exploration import PureExplorationResult, run_pure_exploration
from dueling_gym.experiments.simulate import SimulationResult, derive_seeds, log_checkpoints, simulate

__all__ = ["simulate", "SimulationResult", "log_checkpoints", "derive_seeds", "run_pure_exploration",
           "PureExplorationResult"]
