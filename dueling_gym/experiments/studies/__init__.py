"""Studies built on the runner and the sweeps: the published experiments and the library's own.

* :mod:`~dueling_gym.experiments.studies.presets` -- the presets of ``dueling-gym reproduce``;
* :mod:`~dueling_gym.experiments.studies.benchmark` -- an outside agent beside every baseline;
* :mod:`~dueling_gym.experiments.studies.sample_complexity` -- CPE-DB samples to stop against the hardness;
* :mod:`~dueling_gym.experiments.studies.learned_evaluation` -- the learned policy against the
  classic agents on held-out problems.
"""
