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
    list_agents,
    make_agent,
    register_agent,
)
from dueling_gym.agents.beat_the_mean import BeatTheMean
from dueling_gym.agents.beat_the_mean_pac import BeatTheMeanPAC
from dueling_gym.agents.beat_the_winner import BeatTheWinner
from dueling_gym.agents.ccb import CCB
from dueling_gym.agents.cpe import CARCond, CARParallel, CARVerify, CLUCBBordaExact, CLUCBBordaPAC, CombinatorialAgent
from dueling_gym.agents.cw_rmed import CWRMED
from dueling_gym.agents.dts import DTS
from dueling_gym.agents.dts_plus import DTSPlus
from dueling_gym.agents.ecw_rmed import ECWRMED
from dueling_gym.agents.interleaved_filter import InterleavedFilter2
from dueling_gym.agents.kl_ucb import KLUCB
from dueling_gym.agents.knockout import Knockout
from dueling_gym.agents.learned import LearnedAgent
from dueling_gym.agents.mallows_mpi import MallowsMPI
from dueling_gym.agents.mallows_mpr import MallowsMPR
from dueling_gym.agents.merge_rucb import MergeRUCB
from dueling_gym.agents.multi_rucb import MultiRUCB
from dueling_gym.agents.multisbm import MultiSBM
from dueling_gym.agents.multisort import Multisort
from dueling_gym.agents.opt_max import OptMax
from dueling_gym.agents.pl_pac import PLPAC
from dueling_gym.agents.policy import PolicyAgent
from dueling_gym.agents.preference_estimator import PreferenceEstimator
from dueling_gym.agents.random_agent import UniformRandom
from dueling_gym.agents.rcs import RCS
from dueling_gym.agents.rex3 import REX3
from dueling_gym.agents.rmed import RMED1
from dueling_gym.agents.rmed2 import RMED2, RMED2FH
from dueling_gym.agents.rucb import RUCB
from dueling_gym.agents.savage import SAVAGE, SAVAGEBorda, SAVAGECondorcet
from dueling_gym.agents.scb import SCB, CopelandPAC
from dueling_gym.agents.self_sparring import SelfSparring
from dueling_gym.agents.sequential_elimination import SequentialElimination
from dueling_gym.agents.single_elimination import SingleElimination
from dueling_gym.agents.sup_klucb import SupKLUCB
from dueling_gym.agents.sparring import Sparring, SparringThompson, SparringUCB1
from dueling_gym.agents.successive_elimination_borda import SuccessiveEliminationBorda
from dueling_gym.agents.thompson import BernoulliThompson
from dueling_gym.agents.ucb1 import UCB1
from dueling_gym.agents.ucb_sbm import UCBSBM
from dueling_gym.agents.versatile_db import VersatileDB
from dueling_gym.agents.winner_stays import WinnerStaysStrong, WinnerStaysWeak

__all__ = [
    "DuelingAgent",
    "KernelDuelingAgent",
    "BanditAgent",
    "KernelBanditAgent",
    "make_agent",
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
