"""The README's agent table is the catalogue's, and every published algorithm declares its paper."""

from __future__ import annotations

import difflib
import importlib
import sys

from dueling_gym.agents import AGENT_REGISTRY, PaperLink
from dueling_gym.agents.catalogue import agent_summary, agent_table_markdown
from repository_paths import REPOSITORY_ROOT

HEADER = "| name | kind | target | algorithm | paper |"


def _readme_table() -> list[str]:
    lines = (REPOSITORY_ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert HEADER in lines, f"README.md has no agent table headed {HEADER!r}"
    start = lines.index(HEADER)
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return lines[start:end]


def _own_agent_modules() -> set[str]:
    """The modules of the library's own agents, as the documentation lists them (``OWN_AGENTS``)."""
    docs = str(REPOSITORY_ROOT / "docs")
    sys.path.insert(0, docs)
    try:
        return set(importlib.import_module("_algorithm_pages").OWN_AGENTS)
    finally:
        sys.path.remove(docs)


def test_the_readme_agent_table_is_the_one_the_catalogue_prints():
    expected = agent_table_markdown().splitlines()
    found = _readme_table()
    if found != expected:
        diff = "\n".join(difflib.unified_diff(found, expected, "README.md", "agent_table_markdown()", lineterm=""))
        names = sorted({line.split("|")[1].strip() for line in set(found) ^ set(expected) if line.count("|") > 2})
        raise AssertionError(f"README.md's agent table differs from the catalogue in the rows {', '.join(names)}; "
                             f"paste the output of `python -m dueling_gym.agents.catalogue` over it:\n{diff}")


def test_the_table_has_one_row_per_library_agent_in_role_order():
    rows = agent_table_markdown().splitlines()[2:]
    names = [row.split("|")[1].strip().strip("`") for row in rows]
    library = {name for name, cls in AGENT_REGISTRY.items() if cls.__module__.startswith("dueling_gym.agents.")}
    assert len(names) == len(set(names)) and set(names) == library and len(names) >= 52
    kinds = [row.split("|")[2].strip() for row in rows]
    assert kinds == sorted(kinds, key=["regret minimiser", "identification", "combinatorial", "bandit"].index)


def test_a_summary_shows_rest_roles_as_markdown_code():
    assert agent_summary("savage_borda").startswith('`SAVAGE` with `variant="borda"` (Urvoy et al., ICML 2013')
    assert "``" not in agent_table_markdown() and ":class:" not in agent_table_markdown()


def test_every_published_algorithm_declares_its_paper():
    AGENT_REGISTRY.load_all()
    own = _own_agent_modules()
    library = {name: cls for name, cls in AGENT_REGISTRY.items() if cls.__module__.startswith("dueling_gym.agents.")}
    published = {name: cls for name, cls in library.items() if cls.__module__.rpartition(".")[2] not in own}
    missing = sorted(name for name, cls in published.items() if not cls.paper)
    assert not missing, f"published algorithms without a declared paper: {missing}"
    for name, cls in published.items():
        assert all(isinstance(link, PaperLink) and link.venue for link in cls.paper), name
    assert {cls.paper for name, cls in library.items() if name in ("learned", "preference_estimator")} == {()}
    # The five cited by venue only (no publisher's page declared).
    assert library["btm"].paper == library["btm_pac"].paper == (PaperLink("ICML 2011"),)
    assert library["merge_rucb"].paper == (PaperLink("WSDM 2015"),)
    assert library["self_sparring"].paper == (PaperLink("UAI 2017"),)
    assert "2022" in library["beat_the_winner"].paper[0].venue


def test_a_paper_without_a_page_is_cited_by_its_venue_only():
    link = PaperLink("UAI 2017")
    assert link.url == "" and "[UAI 2017]" not in agent_table_markdown() and "| UAI 2017 |" in agent_table_markdown()
