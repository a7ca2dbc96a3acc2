"""Experiments: running agents on problems at scale and reporting the results."""

from dueling_gym.experiments.simulate import SimulationResult, derive_seeds, log_checkpoints, simulate

__all__ = ["simulate", "SimulationResult", "log_checkpoints", "derive_seeds", "run_pure_exploration",
           "PureExplorationResult"]


def __getattr__(name: str):
    # The pure-exploration runner brings the combinatorial agents and SciPy's optimisers, which a
    # regret sweep never needs: it is imported on first use.
    if name in ("run_pure_exploration", "PureExplorationResult"):
        from dueling_gym.experiments import pure_exploration

        return getattr(pure_exploration, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
