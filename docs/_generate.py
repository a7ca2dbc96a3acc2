"""Generate the documentation pages that are read off the package at build time.

* ``environments/<id>.md``: one page per registered environment, from the environment class's
  docstring (the Gymnasium sections Description / Action Space / Observation Space / Rewards /
  Episode End / Arguments / Version History), with the spaces of a default instance.
* ``algorithms/index.md``: the table of every registered agent (name, class, kind, target, paper).
* ``algorithms/generated/<module>.md``: one page per algorithm module without a hand-written page
  ``algorithms/<module>.md`` (paper, algorithm, pseudocode mapping, hyperparameters, choices,
  measured regret with its figure, duels per second; see ``_algorithm_pages.py``).
* ``algorithms/generated/measured/<module>.md``: the measured sections alone, which the
  hand-written pages include.

Generated files are not committed (see ``.gitignore``).
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections import defaultdict
from pathlib import Path

import gymnasium as gym

import dueling_gym
from dueling_gym.agents import AGENT_REGISTRY
from dueling_gym.agents.catalogue import agent_role, agent_target

from _algorithm_pages import algorithm_page, load_measurements, measured_fragment

_ROLE = re.compile(r":(class|func|meth|data|attr|mod|obj):`([^`]+)`")

def _markdown(docstring: str) -> str:
    """A docstring written with Markdown section headings and reST inline roles, as MyST Markdown."""
    text = textwrap.dedent(docstring.partition("\n")[2]) if "\n" in docstring else ""
    summary = docstring.partition("\n")[0].strip()
    text = _ROLE.sub(lambda match: "{%s}`%s`" % (match.group(1), match.group(2)), text)
    return summary + "\n\n" + text.strip() + "\n"


def _write_if_changed(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != content:
        path.write_text(content)


def _environment_page(env_id: str) -> str:
    spec = gym.spec(env_id)
    env = gym.make(env_id)
    try:
        cls = type(env.unwrapped)
        lines = [
            f"# {env_id}",
            "",
            "| | |",
            "|---|---|",
            f"| Action space | `{env.action_space}` |",
            f"| Observation space | `{env.observation_space}` |",
            f"| Default horizon (`max_episode_steps`) | {spec.max_episode_steps} |",
            f"| Vectorised (`vector_entry_point`) | {'yes' if spec.vector_entry_point else 'no'} |",
            f"| Import | `gym.make(\"{env_id}\")` after `import dueling_gym` |",
            f"| Class | {{class}}`{cls.__module__}.{cls.__name__}` |",
            "",
            _markdown(inspect.getdoc(cls) or ""),  # its "## Version History" section included
        ]
    finally:
        env.close()
    return "\n".join(lines)


def _first_sentence(cls: type) -> str:
    doc = inspect.getdoc(cls) or ""
    return doc.partition("\n")[0].strip().rstrip(".")


def generate_pages(docs: Path) -> None:
    """Write the generated pages below ``docs``."""
    for env_id in dueling_gym.ENV_IDS:
        _write_if_changed(docs / "environments" / f"{env_id.lower()}.md", _environment_page(env_id))

    modules: dict[str, list[tuple[str, type]]] = defaultdict(list)
    for name, cls in sorted(AGENT_REGISTRY.items()):
        modules[cls.__module__.rpartition(".")[2]].append((name, cls))

    data = load_measurements(docs)
    pages: list[str] = []
    rows = ["| name | class | kind | target | algorithm | page |", "|---|---|---|---|---|---|"]
    for module, entries in sorted(modules.items()):
        hand_written = (docs / "algorithms" / f"{module}.md").exists()
        page = f"{module}" if hand_written else f"generated/{module}"
        pages.append(page)
        if hand_written:
            _write_if_changed(docs / "algorithms" / "generated" / "measured" / f"{module}.md",
                              measured_fragment(module, entries, data, docs))
        else:
            _write_if_changed(docs / "algorithms" / "generated" / f"{module}.md",
                              algorithm_page(module, entries, data, docs))
        for name, cls in entries:
            rows.append(
                f"| `{name}` | `{cls.__name__}` | {agent_role(name)} | {agent_target(name)} | {_first_sentence(cls)} "
                f"| [{module}]({page}.md) |"
            )

    index = [
        "# Algorithms",
        "",
        "Every algorithm runs behind the same API (`act() -> (i, j)`, `observe(action, first_won)`,",
        "`recommend()`, `reset(seed=)`) and is built by name with",
        "`dueling_gym.agents.make_agent(name, n_arms, seed=...)`.",
        "",
        *rows,
        "",
        "```{toctree}",
        ":hidden:",
        "",
        *pages,
        "```",
        "",
    ]
    _write_if_changed(docs / "algorithms" / "index.md", "\n".join(index))
