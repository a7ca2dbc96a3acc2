"""Experiments: running agents on problems at scale and reporting the results."""

from dueling_gym.experiments.simulate import SimulationResult, derive_seeds, log_checkpoints, simulate

__all__ = ["simulate", "SimulationResult", "log_checkpoints", "derive_seeds", "run_pure_exploration",
           "PureExplorationResult", "reproduce", "run_and_report", "plot_folder", "Report"]

# Imported on first use (module ``__getattr__``): what the command line does, as Python calls.
_REPORTING = {"reproduce": "dueling_gym.experiments.studies.presets",
              "run_and_report": "dueling_gym.experiments.sweeps.folder_report",
              "plot_folder": "dueling_gym.experiments.sweeps.folder_report",
              "Report": "dueling_gym.experiments.sweeps.folder_report"}


def __getattr__(name: str):
    # The pure-exploration runner brings the combinatorial agents and SciPy's optimisers, which a
    # regret sweep never needs: it is imported on first use.
    if name in ("run_pure_exploration", "PureExplorationResult"):
        from dueling_gym.experiments import pure_exploration

        return getattr(pure_exploration, name)
    if name in _REPORTING:
        from importlib import import_module

        return getattr(import_module(_REPORTING[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
