"""Dueling-bandit and multi-armed bandit algorithms (installed as ``dueling_gym.agents``).

Every algorithm lives in its own module, named after the paper's algorithm, behind one API:
``act() -> (i, j)``, ``observe(action, first_won)``, ``recommend()``, ``reset(seed=)``.
Agents never see rewards, ``info`` or the true preference matrix.  Build them by class or by
name::

    from dueling_gym.agents import RUCB, make_agent
    agent = make_agent("rucb", n_arms=5, seed=0)

See :mod:`dueling_gym.agents.base` for how to add an algorithm.
"""

from dueling_gym.agents.base import (
    AGENT_REGISTRY,
    BanditAgent,
    DuelingAgent,
    KernelBanditAgent,
    KernelDuelingAgent,
    agent_class,
    list_agents,
    make_agent,
    register_agent,
)

# Where each agent lives: module -> {class name: registry name (None for a base class)}.  The
# modules are imported on first use -- ``make_agent("ccb", ...)`` imports ``ccb`` alone, and
# ``from dueling_gym.agents import CCB`` likewise (module ``__getattr__``) -- because importing
# all of them cost more than a short run.  tests/test_catalogue.py checks this table against
# the classes' own ``@register_agent`` names.
_AGENT_MODULES: dict[str, dict[str, str | None]] = {
    "beat_the_mean": {"BeatTheMean": "btm"},
    "beat_the_mean_pac": {"BeatTheMeanPAC": "btm_pac"},
    "beat_the_winner": {"BeatTheWinner": "beat_the_winner"},
    "ccb": {"CCB": "ccb"},
    "cpe.base": {"CombinatorialAgent": None},
    "cpe.car": {"CARCond": "car_cond", "CARVerify": "car_verify", "CARParallel": "car_parallel"},
    "cpe.clucb_borda": {"CLUCBBordaPAC": "clucb_borda_pac", "CLUCBBordaExact": "clucb_borda_exact"},
    "cw_rmed": {"CWRMED": "cw_rmed"},
    "dts": {"DTS": "dts"},
    "dts_plus": {"DTSPlus": "dts_plus"},
    "ecw_rmed": {"ECWRMED": "ecw_rmed"},
    "interleaved_filter": {"InterleavedFilter2": "interleaved_filtering"},
    "kl_ucb": {"KLUCB": "kl_ucb"},
    "knockout": {"Knockout": "knockout"},
    "learned": {"LearnedAgent": "learned"},
    "mallows_mpi": {"MallowsMPI": "mallows_mpi"},
    "mallows_mpr": {"MallowsMPR": "mallows_mpr"},
    "merge_rucb": {"MergeRUCB": "merge_rucb"},
    "multi_rucb": {"MultiRUCB": "multi_rucb"},
    "multisbm": {"MultiSBM": "multisbm"},
    "multisort": {"Multisort": "multisort"},
    "opt_max": {"OptMax": "opt_max"},
    "pl_pac": {"PLPAC": "pl_pac"},
    "policy": {"PolicyAgent": None},
    "preference_estimator": {"PreferenceEstimator": "preference_estimator"},
    "random_agent": {"UniformRandom": "random"},
    "rcs": {"RCS": "rcs"},
    "rex3": {"REX3": "rex3"},
    "rmed": {"RMED1": "rmed1"},
    "rmed2": {"RMED2": "rmed2", "RMED2FH": "rmed2fh"},
    "rucb": {"RUCB": "rucb"},
    "savage": {"SAVAGE": "savage", "SAVAGEBorda": "savage_borda", "SAVAGECondorcet": "savage_condorcet"},
    "scb": {"SCB": "scb", "CopelandPAC": "copeland_pac"},
    "self_sparring": {"SelfSparring": "self_sparring"},
    "sequential_elimination": {"SequentialElimination": "sequential_elimination"},
    "single_elimination": {"SingleElimination": "single_elimination"},
    "sparring": {"Sparring": "sparring", "SparringThompson": "sparring_thompson", "SparringUCB1": "sparring_ucb1"},
    "successive_elimination_borda": {"SuccessiveEliminationBorda": "successive_elimination_borda"},
    "sup_klucb": {"SupKLUCB": "sup_klucb"},
    "thompson": {"BernoulliThompson": "thompson"},
    "ucb1": {"UCB1": "ucb1"},
    "ucb_sbm": {"UCBSBM": "ucb_sbm"},
    "versatile_db": {"VersatileDB": "versatile_db"},
    "winner_stays": {"WinnerStaysWeak": "winner_stays_weak", "WinnerStaysStrong": "winner_stays_strong"},
}
_CLASS_MODULES = {
    class_name: f"{__name__}.{module}" for module, classes in _AGENT_MODULES.items() for class_name in classes
}
for _module, _classes in _AGENT_MODULES.items():
    AGENT_REGISTRY.declare(f"{__name__}.{_module}", [name for name in _classes.values() if name is not None])


def __getattr__(name: str):
    module = _CLASS_MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_CLASS_MODULES))


__all__ = [
    "DuelingAgent",
    "KernelDuelingAgent",
    "BanditAgent",
    "KernelBanditAgent",
    "make_agent",
    "agent_class",
    "list_agents",
    "register_agent",
    "AGENT_REGISTRY",
    # multi-armed bandit agents
    "UCB1",
    "KLUCB",
    "BernoulliThompson",
    "UCBSBM",
    # dueling baselines
    "UniformRandom",
    "RUCB",
    "RMED1",
    "RMED2",
    "RMED2FH",
    "DTS",
    "DTSPlus",
    "RCS",
    "MergeRUCB",
    "MultiRUCB",
    "Sparring",
    "SparringThompson",
    "SparringUCB1",
    "SelfSparring",
    "BeatTheMean",
    "InterleavedFilter2",
    "MultiSBM",
    "REX3",
    "BeatTheWinner",
    "WinnerStaysWeak",
    "WinnerStaysStrong",
    "VersatileDB",
    # Copeland algorithms
    "SAVAGE",
    "SAVAGEBorda",
    "SAVAGECondorcet",
    "SupKLUCB",
    "CCB",
    "SCB",
    "CWRMED",
    "ECWRMED",
    "CopelandPAC",
    # combinatorial pure exploration
    "CombinatorialAgent",
    "CLUCBBordaPAC",
    "CLUCBBordaExact",
    "CARCond",
    "CARVerify",
    "CARParallel",
    # identification (pure exploration over K arms)
    "Knockout",
    "SingleElimination",
    "SequentialElimination",
    "SuccessiveEliminationBorda",
    "PreferenceEstimator",
    "PLPAC",
    "MallowsMPI",
    "MallowsMPR",
    "Multisort",
    "OptMax",
    "BeatTheMeanPAC",
    # learned policies
    "PolicyAgent",
]
