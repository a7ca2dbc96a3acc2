"""docs/contributing.md's table of which files an addition touches names files and tables that exist.

Every path in the table (but the placeholders, ``<algorithm>`` and the like) is a file or folder
of the repository, every "`NAME` in `path`" is a name that file defines, and each kind's row
names the registration table that the code reads.
"""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium
import pytest

from repository_paths import REPOSITORY_ROOT

PAGE = REPOSITORY_ROOT / "docs" / "contributing.md"
#: "`NAME` in `path`", "`NAME` entry in `path`", "`NAME` of `path`" in the table's cells.
NAME_IN_FILE = re.compile(r"`([A-Z_][A-Z0-9_]*)`(?: entry| entries)? (?:in|of) `([\w./]+\.py)`")


def _rows() -> dict[str, str]:
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    start = lines.index("| adding | the module | also | its test | its documentation |")
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows[line.split("|")[1].strip()] = line
    return rows


def _paths(row: str) -> list[str]:
    """The backticked repository paths of a row, placeholders left out."""
    return [token for token in re.findall(r"`([^`\s]+)`", row)
            if "/" in token and "<" not in token and ":" not in token and not token.startswith("algorithms/")
            and re.search(r"(\.py|\.md|\.json|/)$", token)]


def test_the_table_has_a_row_per_kind_of_addition():
    assert list(_rows()) == ["an algorithm", "an environment", "a problem source", "a preset", "a trainer"]


@pytest.mark.parametrize("kind", ["an algorithm", "an environment", "a problem source", "a preset", "a trainer"])
def test_every_path_of_a_row_exists(kind):
    paths = _paths(_rows()[kind])
    assert paths, kind
    # Gymnasium's own files are cited from the installed package.
    gymnasium_root = Path(gymnasium.__file__).parent.parent
    missing = [path for path in paths
               if not (gymnasium_root if path.startswith("gymnasium/") else REPOSITORY_ROOT).joinpath(path).exists()]
    assert not missing, f"{kind}: docs/contributing.md names missing paths {missing}"


def test_every_name_in_a_file_is_defined_there():
    found = NAME_IN_FILE.findall("\n".join(_rows().values()))
    assert len(found) >= 6
    for name, path in found:
        text = (REPOSITORY_ROOT / path).read_text(encoding="utf-8")
        defined = re.search(rf"^(?:{re.escape(name)}\s*(?::[^=\n]*)?=|def {name}\b|class {name}\b)", text, re.M)
        assert defined, f"docs/contributing.md says {path} defines {name}, which it does not"


def test_each_row_names_the_registration_table_the_code_reads():
    import dueling_gym
    import dueling_gym.envs
    from dueling_gym.agents.registry import LIBRARY_AGENTS
    from dueling_gym.experiments.learning import TRAINERS

    rows = _rows()
    assert LIBRARY_AGENTS and "`LIBRARY_AGENTS` in `agents/registry.py`" in rows["an algorithm"]
    assert dueling_gym._ENVIRONMENTS and "`_ENVIRONMENTS` in `dueling_gym/__init__.py`" in rows["an environment"]
    assert dueling_gym.envs._LAZY and "`_LAZY`" in rows["an environment"]
    assert TRAINERS and "`TRAINERS` in `dueling_gym/experiments/learning/__init__.py`" in rows["a trainer"]
    for kind in ("an algorithm", "a trainer"):
        assert "tests/test_registry_table.py" in rows[kind]
