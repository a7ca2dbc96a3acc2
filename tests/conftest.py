"""Shared fixtures: the project's own oracle numbers (tests/data/oracles.json)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

#: oracle key -> shipped problem name
ORACLE_TO_PROBLEM = {
    "Sushi16": "sushi",
    "Gap": "gap",
    "MultiSol": "multisol",
    "ArXiv": "arxiv",
    "MSLR5_Condorcet": "mslr5-condorcet",
    "MSLR5_nonCondorcet": "mslr5-noncondorcet",
    "Table2_Cyclic4": "cyclic4",
}
#: (oracle key, problem name) pairs in a stable order, for parametrising.
ORACLE_CASES = sorted(ORACLE_TO_PROBLEM.items())
#: Absolute tolerance against the oracle numbers: the oracle file rounds to 6 decimals.
ORACLE_TOLERANCE = 1e-5


def load_oracles() -> dict:
    return json.loads((DATA / "oracles.json").read_text())


#: The folder ``SB3_LOGDIR`` names while the tests run, when this process made it.
_SB3_LOG_FOLDER: str | None = None


def pytest_configure(config):
    """Stable-Baselines3 models trained in the tests, or in the scripts they run, log into one
    temporary folder that is removed at the end.

    Without a logger of their own, SB3's ``learn`` creates an empty ``SB3-<date>`` folder in the
    system's temporary directory on every call.  Set before collection, so that the environments
    test modules copy from ``os.environ`` for their subprocesses carry it too.
    """
    global _SB3_LOG_FOLDER
    if "SB3_LOGDIR" not in os.environ:
        _SB3_LOG_FOLDER = tempfile.mkdtemp(prefix="dueling-gym-tests-sb3-")
        os.environ["SB3_LOGDIR"] = _SB3_LOG_FOLDER


def pytest_unconfigure(config):
    if _SB3_LOG_FOLDER is not None:
        shutil.rmtree(_SB3_LOG_FOLDER, ignore_errors=True)
        if os.environ.get("SB3_LOGDIR") == _SB3_LOG_FOLDER:
            del os.environ["SB3_LOGDIR"]


@pytest.fixture(scope="session")
def oracles() -> dict:
    return load_oracles()


@pytest.fixture(scope="module")
def cpe(oracles):
    """The oracle numbers of the CPE-DB five-edge example (combinatorial tests)."""
    return oracles["CPE_DB_5edge_example"]


@pytest.fixture(scope="module")
def example():
    """The five-edge bipartite problem of the CPE-DB paper (combinatorial tests)."""
    from dueling_gym.problems import five_edge_example

    return five_edge_example()


try:  # keep torch from oversubscribing the two CI cores in any test that imports it
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass
