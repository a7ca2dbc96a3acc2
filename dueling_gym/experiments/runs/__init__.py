"""How work runs: units of work, the one runner that executes them, its backends and its store.

Every study of the library is a list of units (:mod:`~dueling_gym.experiments.runs.work_units`),
each fully named by its identity and saved as one verified file.  This room owns running them:

* :mod:`~dueling_gym.experiments.runs.runner` -- :func:`run_units`: resumable, locked, on any backend
  (a study's folder beside its units is a :class:`StudyFolder`), and :func:`run_tasks`, the one
  entry to the backends;
* :mod:`~dueling_gym.experiments.runs.backends` -- in this process, a local process pool, or Ray;
* :mod:`~dueling_gym.experiments.runs.store` -- a results folder's manifest, unit files and tidy table;
* :mod:`~dueling_gym.experiments.runs.warmup` -- compiling every kernel ahead, through the runner's entry to the backends.

Nothing here knows what a unit computes: the sweeps and the studies above say that.
"""
