"""The package's layer rule and module privacy, checked on the source.

Layers (lowest first): core (``problems``, ``stats``, ``reductions``, ``validation``) <
``envs``, ``agents``, ``wrappers`` < ``experiments``, ``multiagent`` < ``cli`` (with
``cli_problems``, ``cli_train`` and ``cli_common``, the rest of the command line).  A module may
import from its own layer or below; ``envs``, ``agents`` and ``wrappers`` are independent of
each other (a wrapper never imports an agent).  The same rule is enforced by import-linter (``lint-imports``
with the contract in ``pyproject.toml``) in CI; this test also runs without it and adds the
privacy rule: no module imports a private name (``_name``) from a module of another subpackage.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: source folder -> package name
SOURCES = {ROOT / "dueling_gym": "dueling_gym", ROOT / "agents": "dueling_gym.agents", ROOT / "wrappers": "dueling_gym.wrappers"}
LAYERS = [
    {"problems", "stats", "reductions", "validation", "observations", "atomic_files", "interrupts", "pair_network"},
    {"envs", "agents", "wrappers"},
    {"experiments", "multiagent"},
    {"cli", "cli_problems", "cli_common", "cli_train"},
]
#: Layers whose members are independent of each other (e.g. wrappers never import agents).
INDEPENDENT_LAYERS = {1}


def _modules():
    for folder, package in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            relative = path.relative_to(folder).with_suffix("")
            parts = [part for part in relative.parts if part != "__init__"]
            name = ".".join([package, *parts]) if parts else package
            if package == "dueling_gym" and parts and parts[0] in ("agents", "wrappers"):
                continue
            yield name, path


def _component(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "dueling_gym" else None


def _layer(component: str | None) -> int | None:
    for level, members in enumerate(LAYERS):
        if component in members:
            return level
    return None


def _imports(path: Path, module: str):
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                target = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []


MODULES = dict(_modules())


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down_the_layers(module):
    own = _layer(_component(module))
    if own is None:
        return
    for line, target, _ in _imports(MODULES[module], module):
        if not target.startswith("dueling_gym."):
            continue
        component = _component(target)
        level = _layer(component)
        assert level is None or level <= own, f"{module}:{line} imports {target}, a higher layer"
        if level == own and own in INDEPENDENT_LAYERS:
            assert component == _component(module), f"{module}:{line} imports its sibling {target}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_names_from_other_subpackages(module):
    for line, target, names in _imports(MODULES[module], module):
        if not target.startswith("dueling_gym") or _component(target) == _component(module):
            continue
        private = [name for name in names if name.startswith("_")]
        private_module = any(part.startswith("_") and part != "__init__" for part in target.split("."))
        assert not private and not private_module, f"{module}:{line} imports private {target} {private}"
