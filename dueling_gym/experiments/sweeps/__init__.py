"""Regret sweeps: agents x problems x seeds, their specification, reports and figures.

* :mod:`~dueling_gym.experiments.sweeps.spec` -- what a sweep runs (the sweep's specification,
  validated once where it enters), re-exporting its parts:
  :mod:`~dueling_gym.experiments.sweeps.agent_spec` (agents with hyperparameters),
  :mod:`~dueling_gym.experiments.sweeps.problem_spec` (problems and their labels),
  :mod:`~dueling_gym.experiments.sweeps.units` (units and their identities) and
  :mod:`~dueling_gym.experiments.sweeps.settings` (``key=value`` settings);
* :mod:`~dueling_gym.experiments.sweeps.sweep` -- a sweep's units through the one runner, plus
  what only a sweep has (its manifest);
* :mod:`~dueling_gym.experiments.sweeps.report` -- regret curves with bands, tables and plots;
* :mod:`~dueling_gym.experiments.sweeps.folder_report` -- a results folder's report as one Python call.
"""
