"""The documentation generator: one page per algorithm, measured sections, environment pages."""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from dueling_gym.agents import AGENT_REGISTRY  # noqa: E402
from dueling_gym.experiments.presets import get_preset  # noqa: E402

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """The generated pages, written into a copy of the docs sources (the checkout is left alone)."""
    root = tmp_path_factory.mktemp("docs")
    shutil.copytree(DOCS / "data", root / "data")
    (root / "algorithms").mkdir()
    for page in (DOCS / "algorithms").glob("*.md"):
        if page.name != "index.md":
            shutil.copy(page, root / "algorithms" / page.name)
    sys.path.insert(0, str(DOCS))
    try:
        from _generate import generate_pages

        generate_pages(root)
    finally:
        sys.path.remove(str(DOCS))
    return root


def _module(cls: type) -> str:
    return cls.__module__.rpartition(".")[2]


def test_every_registered_agent_has_a_page_with_the_sections(generated):
    index = (generated / "algorithms" / "index.md").read_text()
    for name, cls in AGENT_REGISTRY.items():
        assert f"`{name}`" in index
        module = _module(cls)
        if (DOCS / "algorithms" / f"{module}.md").exists():
            page = (generated / "algorithms" / f"{module}.md").read_text()
            assert f"generated/measured/{module}.md" in page  # the hand-written page includes the fragment
            fragment = (generated / "algorithms" / "generated" / "measured" / f"{module}.md").read_text()
            assert "regret" in fragment.lower() and "Duels per second" in fragment
            continue
        page = (generated / "algorithms" / "generated" / f"{module}.md").read_text()
        for section in ("## The algorithm", "## Pseudocode mapping", "## Hyperparameters",
                        "## Implementation notes and choices where the paper is silent",
                        "## Measured regret on the published matrices", "## Per-step cost", "## API"):
            assert section in page, (module, section)
        assert f"| `{name}` |" in page


def test_hyperparameter_table_reads_signature_and_docstring(generated):
    page = (generated / "algorithms" / "generated" / "rucb.md").read_text()
    assert "| `alpha` | `0.51` | Exploration parameter" in page
    assert "| `n_arms` | required |" in page


def test_measured_regret_covers_the_baselines_preset(generated):
    lines = [line for line in (DOCS / "data" / "regret_published_matrices.csv").read_text().splitlines()
             if not line.startswith("#")]
    rows = list(csv.DictReader(lines))
    spec = get_preset("baselines").full
    assert {(row["agent"], row["problem"]) for row in rows} == {(a, p) for a in spec["agents"] for p in spec["problems"]}
    for agent in spec["agents"]:
        module = _module(AGENT_REGISTRY[agent])
        assert (generated / "algorithms" / "generated" / "img" / f"{module}-regret.png").exists()


def test_environment_pages_show_the_version_history_once(generated):
    for page in (generated / "environments").glob("*-v0.md"):
        assert page.read_text().count("## Version History") == 1
