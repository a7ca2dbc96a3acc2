"""The RMED family (Relative Minimum Empirical Divergence), installed as ``dueling_gym.agents.rmed``.

Komiyama, Honda, Kashima and Nakagawa, *Regret Lower Bound and Optimal Algorithm in Dueling
Bandit Problem* (COLT 2015), for a Condorcet winner; Komiyama, Honda and Nakagawa, *Copeland
Dueling Bandit Problem: Regret Lower Bound, Optimal Algorithm, and Computationally Efficient
Algorithm* (ICML 2016), for the Copeland winners.  This room owns both papers' agents and the
kernels only they use:

* :mod:`.rmed` -- :class:`RMED1` and the RMED loop's compiled steps (initial phase, loop
  advance, win records) that :mod:`.rmed2` reuses.
* :mod:`.rmed2` -- :class:`RMED2` and :class:`RMED2FH`, the regret-aware opponent rules.
* :mod:`.cw_rmed` -- :class:`CWRMED`, Algorithm 1 of the ICML paper with the full linear
  programme of step 5.
* :mod:`.ecw_rmed` -- :class:`ECWRMED`, Algorithm 1 with the relaxed problem of Theorem 5.
* ``_copeland_kernels``, ``_copeland_loop``, ``_copeland_step5`` (private) -- the Numba state
  and pair statistics, the loop over pairs and the two step-5 solvers that CW-RMED and ECW-RMED
  share.

The agents are registered (``make_agent("rmed1", 5)``) and exported by ``dueling_gym.agents``;
the classes are also importable from here (``from dueling_gym.agents.rmed import RMED1``),
each module being imported on first use, so that one agent costs the import of its own module.
"""

from __future__ import annotations

from dueling_gym.agents.registry import LIBRARY_AGENTS, lazy_exports

#: The classes exported here, by name -> ``"module:Class"``, read off the library's table.
_CLASSES = {target.rpartition(":")[2]: target for target in LIBRARY_AGENTS.values()
            if target.startswith(f"{__name__}.")}

__all__ = ["CWRMED", "ECWRMED", "RMED1", "RMED2", "RMED2FH"]

__getattr__, __dir__ = lazy_exports(globals(), _CLASSES)
