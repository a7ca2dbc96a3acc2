"""Shared fixtures: the project's own oracle numbers (tests/data/oracles.json)."""

from __future__ import annotations

import json
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


@pytest.fixture(scope="session", autouse=True)
def _sb3_log_folder(tmp_path_factory):
    """Stable-Baselines3 models trained here log into pytest's temporary folder.

    Without a logger of their own, SB3's ``learn`` creates an empty ``SB3-<date>`` folder in the
    system's temporary directory on every call, which pytest never removes.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))
        yield


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
