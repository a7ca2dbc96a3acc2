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


def load_oracles() -> dict:
    return json.loads((DATA / "oracles.json").read_text())


@pytest.fixture(scope="session")
def oracles() -> dict:
    return load_oracles()


try:  # keep torch from oversubscribing the two CI cores in any test that imports it
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass
