"""Generate the documentation pages that are read off the package at build time.

* ``environments/<id>.md``: one page per registered environment, in the layout of Gymnasium's
  environment pages: an animated episode of its ``rgb_array`` frames (``_env_media.py``), the spaces of a default instance, the
  class docstring's sections (Description / Action Space / Observation Space / Rewards / Info /
  Starting State / Episode End / Arguments / Version History), the ``info`` keys that
  ``reset`` and ``step`` actually return with their meaning, and the constructor's arguments
  (name, type, default, meaning) read from the signature and the docstring.
* ``environments/index.md``: the overview of the environments, a thumbnail and summary each.
* ``algorithms/index.md``: the table of every registered agent (name, class, kind, target, paper).
* ``algorithms/generated/<module>.md``: one page per algorithm module without a hand-written page
  ``algorithms/<module>.md`` (paper, algorithm, pseudocode mapping, hyperparameters, choices,
  measured regret with its figure, duels per second; see ``_algorithm_pages.py``).
* fragments that hand-written pages take in with a block

  ````
  ```{generated} NAME
  ```
  ````

  (replaced by the fragment ``NAME`` when Sphinx reads the page): ``algorithms/measured/<module>``
  and ``algorithms/paper/<module>`` for the hand-written algorithm pages, ``environments/vector``
  for the vector-environment page, ``environments/toctree`` for the index page (every registered
  environment, so a new one needs no entry), and ``run/<script>.py``: the output and figures of a script
  beside the page (the quickstart of the index page, the tutorials), run during the build;
  ``learned/...``: the tables of the learned-vs-classic evaluation from its files in
  ``data/learned_vs_classic/`` (``_learned_tables.py``).

Nothing is written below ``docs/``: the pages, figures and frames go to a folder of the build,
``<doctree dir>/generated-sources`` (``setup`` adds the pages to the Sphinx project as documents
whose source lies there), so a read-only checkout builds.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import struct
import subprocess
import sys
import textwrap
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from sphinx.project import Project

import dueling_gym
from dueling_gym.agents import AGENT_REGISTRY
from dueling_gym.agents.catalogue import agent_role, agent_target

from _env_media import episode_media, overview_page
from _learned_tables import learned_fragments
from _algorithm_pages import (
    _cell,
    _sections,
    algorithm_page,
    load_measurements,
    measured_fragment,
    paper_cell,
    paper_link_line,
    skip_described_docstring,
    usage_fragment,
)

#: Folder of the generated sources, below Sphinx's doctree directory (a folder of the build).
GENERATED_FOLDER = "generated-sources"
#: A hand-written page's ``{generated} NAME`` block, replaced by the fragment ``NAME``.
GENERATED_BLOCK = re.compile(r"^```\{generated\}[ \t]+(\S+)[ \t]*\n```[ \t]*$", re.M)

_ROLE = re.compile(r":(class|func|meth|data|attr|mod|obj):`([^`]+)`")
_SECTION = re.compile(r"^## (.+)$", re.M)


@dataclass
class Generated:
    """What :func:`generate_pages` made: whole pages (docname -> file) and in-page fragments."""

    pages: dict[str, Path] = field(default_factory=dict)
    fragments: dict[str, str] = field(default_factory=dict)


def _markdown(text: str) -> str:
    """reST inline roles as MyST roles."""
    return _ROLE.sub(lambda match: "{%s}`%s`" % (match.group(1), match.group(2)), text)


def _write_if_changed(path: Path, content: str | bytes) -> None:
    """Write ``path`` unless it already holds ``content`` (so Sphinx re-reads only what changed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode() if isinstance(content, str) else content
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def png_bytes(rgb: np.ndarray) -> bytes:
    """An ``(H, W, 3)`` ``uint8`` image as PNG bytes (zlib only, so the bytes are deterministic)."""
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    height, width, channels = rgb.shape
    if channels != 3:
        raise ValueError(f"expected an RGB image, got {channels} channels")
    raw = b"".join(b"\x00" + row.tobytes() for row in rgb)  # filter type 0 on every scanline

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


# --------------------------------------------------------------------------- environment pages

def _qualified(text: str, cls: type) -> str:
    """``:meth:`name``` / ``:attr:`name``` of a class docstring, resolvable outside the class."""
    return re.sub(r":(meth|attr):`([A-Za-z_]\w*)`",
                  lambda match: f":{match.group(1)}:`~{_public_path(cls)}.{match.group(2)}`", text)


def _docstring_sections(cls: type) -> tuple[str, list[tuple[str, str]]]:
    """(summary line, [(title, body)]) of a docstring written with ``## Title`` sections."""
    doc = _qualified(inspect.getdoc(cls) or "", cls)
    summary, _, rest = doc.partition("\n")
    parts = _SECTION.split(textwrap.dedent(rest))
    sections = [(title.strip(), body.strip()) for title, body in zip(parts[1::2], parts[2::2])]
    return summary.strip(), sections


def _bullets(text: str) -> list[str]:
    """The top-level ``* `` items of a Markdown section, each as one line."""
    items: list[str] = []
    for line in text.splitlines():
        if line.startswith("* "):
            items.append(line[2:].strip())
        elif items and line.startswith("  ") and line.strip():
            items[-1] += " " + line.strip()
        elif items and not line.strip():
            items.append("")  # a blank line ends the item
    return [item for item in items if item]


_LEAD_END = re.compile(r"``(?:\s*\([^)]*\))?:\s")


def _info_meanings(cls: type) -> dict[str, str]:
    """``info`` key -> meaning, from the ``## Info`` bullets of ``cls`` and of its bases.

    A bullet about one key is preferred to a bullet about several (a subclass may sum up what
    its base describes key by key); among those, the most derived class wins.
    """
    candidates: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for klass in inspect.getmro(cls):
        if not klass.__doc__:
            continue
        _, sections = _docstring_sections(klass)
        for item in _bullets(dict(sections).get("Info", "")):
            end = _LEAD_END.search(item)
            if not end:
                continue
            keys = list(dict.fromkeys(re.findall(r'info\["(\w+)"\]', item[: end.end()])))
            meaning = item[end.end():].strip().rstrip(";,").strip()
            for key in keys:
                candidates[key].append((len(keys), meaning))
    return {key: min(found, key=lambda entry: entry[0])[1] for key, found in candidates.items()}


def _describe_type(value: Any) -> str:
    if isinstance(value, dict):
        inner = sorted({_describe_type(v) for v in value.values()})
        return f"dict[str, {' | '.join(inner)}]" if inner else "dict"
    if isinstance(value, tuple):
        return "tuple[" + ", ".join(_describe_type(v) for v in value) + "]"
    if value is None:
        return "None"
    return type(value).__name__


def _info_rows(env: gym.Env, cls: type) -> list[str]:
    """The ``info`` keys of ``reset`` and of one ``step`` of ``env``, with type and meaning."""
    _, reset_info = env.reset(seed=0)
    env.action_space.seed(0)
    step_info = env.step(env.action_space.sample())[4]
    meanings = _info_meanings(cls)
    rows = ["| key | returned by | type | meaning |", "|---|---|---|---|"]
    for key in dict.fromkeys([*step_info, *reset_info]):
        returned = " and ".join(name for name, info in (("`reset`", reset_info), ("`step`", step_info)) if key in info)
        value = step_info.get(key, reset_info.get(key))
        if isinstance(value, dict):
            value_type = f"`{_describe_type(value)}` (keys: " + ", ".join(f"`{k}`" for k in value) + ")"
        else:
            value_type = f"`{_describe_type(value)}`"
        rows.append(f"| `info[\"{key}\"]` | {returned} | {value_type} | {_cell(meanings.get(key, ''))} |")
    return rows


def _argument_meanings(cls: type) -> dict[str, str]:
    """Argument -> meaning from the ``## Arguments`` bullets and the NumPy ``Parameters`` section."""
    meanings: dict[str, str] = {}
    _, sections = _docstring_sections(cls)
    for item in _bullets(dict(sections).get("Arguments", "")):
        match = re.match(r"``(\w+)``:\s*(.*)", item)
        if match:
            meanings[match.group(1)] = match.group(2).strip()
    _, numpy_sections = _sections(_qualified(inspect.getdoc(cls) or "", cls))
    names: list[str] = []
    for line in numpy_sections.get("Parameters", "").splitlines():
        if line and not line.startswith(" "):
            names = [name.strip().lstrip("*") for name in line.partition(" : ")[0].split(",")]
            for name in names:
                meanings.setdefault(name, "")
        elif names and line.strip():
            for name in names:
                meanings[name] = (meanings[name] + " " + line.strip()).strip()
    return meanings


def _resolved_default(classes: list[type], name: str) -> Any:
    """The value a ``None`` default stands for: the class attribute ``default_<name>`` (called
    when it is a method), or ``None``."""
    for klass in classes:
        attribute = getattr(klass, f"default_{name}", None)
        if attribute is not None:
            return attribute() if callable(attribute) else attribute
    return None


def _argument_rows(cls: type, fallbacks: list[type], extra: list[tuple[str, str, str, str]] = (),
                   defaults_of: dict[str, list[type]] | None = None) -> list[str]:
    """The arguments table of ``cls``: signature (name, type, default) and docstring (meaning).

    ``fallbacks``: classes whose descriptions (and types) stand in where ``cls`` only refers to
    them ("As for the single environment").  ``extra``: rows (name, type, default, meaning) of
    arguments that ``gymnasium.make`` takes for the environment.  ``defaults_of``: label ->
    classes, to show what a ``None`` default stands for in each of several environments.
    """
    own = _argument_meanings(cls)
    others = [_argument_meanings(klass) for klass in fallbacks]
    rows = ["| argument | type | default | meaning |", "|---|---|---|---|"]
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        if name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        meaning = own.get(name, "")
        if not meaning or meaning.lower().startswith("as for"):
            inherited = next((m[name] for m in others if m.get(name)), "")
            meaning = f"{inherited} {meaning}".strip()  # the base's description, then what ``cls`` adds
        annotation = parameter.annotation
        if annotation in (parameter.empty, "Any"):
            annotation = next((inspect.signature(k.__init__).parameters[name].annotation for k in fallbacks
                               if name in inspect.signature(k.__init__).parameters), annotation)
        if annotation is parameter.empty:
            kind = ""
        else:
            text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
            kind = f"`{text}`".replace("|", "\\|")  # a pipe would end the table cell
        if parameter.default is parameter.empty:
            default = "required"
        else:
            default = f"`{parameter.default!r}`"
            if parameter.default is None:
                sources = defaults_of or {"": [cls, *fallbacks]}
                resolved = {label: _resolved_default(classes, name) for label, classes in sources.items()}
                if len(set(map(repr, resolved.values()))) == 1:
                    value = next(iter(resolved.values()))
                    default += f" (`{value!r}`)" if value is not None else ""
                else:
                    default += " (" + ", ".join(f"`{value!r}` for {label}" for label, value in resolved.items()) + ")"
        rows.append(f"| `{name}` | {kind} | {default} | {_cell(meaning)} |")
    for name, kind, default, meaning in extra:
        rows.append(f"| `{name}` | " + f"`{kind}`".replace("|", "\\|") + f" | {default} | {_cell(meaning)} |")
    return rows


def _public_path(cls: type) -> str:
    """``dueling_gym.envs.<Class>`` for the classes that package imports eagerly (as the API page
    lists them), else the defining module's path (where the API page documents the classes the
    package imports on first use)."""
    import dueling_gym.envs

    eager = cls.__name__ in dueling_gym.envs.__all__ and cls.__name__ not in dueling_gym.envs._LAZY
    return f"dueling_gym.envs.{cls.__name__}" if eager else f"{cls.__module__}.{cls.__qualname__}"


def _environment_page(env_id: str, folder: Path) -> str:
    """The page of one registered environment; its episode (GIF) and last frame (PNG, the
    overview's thumbnail) are written to ``folder / "img"``."""
    spec = gym.spec(env_id)
    env = gym.make(env_id)
    try:
        cls = type(env.unwrapped)
        summary, sections = _docstring_sections(cls)
        info_rows = _info_rows(env, cls)
        lines = [f"# {env_id}", ""]
        if "rgb_array" in cls.metadata.get("render_modes", ()):
            media = episode_media(env_id, folder / "img", _write_if_changed, png_bytes)
            lines += [f"```{{figure}} img/{media.gif}", f":alt: animated rgb_array frames of an episode of {env_id}",
                      "", media.caption, "```", ""]
        lines += [
            "| | |",
            "|---|---|",
            f"| Action Space | `{env.action_space}` |",
            f"| Observation Space | `{env.observation_space}` |",
            f"| Default horizon (`max_episode_steps`) | {spec.max_episode_steps:,} |",
            f"| Render modes | {', '.join(f'`{mode}`' for mode in cls.metadata.get('render_modes', ()))} |",
            "| Vector environment (`vector_entry_point`) | "
            + (f"{{class}}`~{spec.vector_entry_point.replace(':', '.')}`" if spec.vector_entry_point else "none")
            + " |",
            f"| Import | `gym.make(\"{env_id}\")` after `import dueling_gym` |",
            f"| Class | {{class}}`{_public_path(cls)}` |",
            "",
            _markdown(summary),
            "",
        ]
        extra = [("max_episode_steps", "int | None", f"`{spec.max_episode_steps}`",
                  "An argument of `gymnasium.make`: the horizon, after which the `TimeLimit` wrapper "
                  "truncates the episode.")]
        argument_rows = _argument_rows(cls, [k for k in inspect.getmro(cls)[1:] if issubclass(k, gym.Env)
                                             and k.__module__.startswith("dueling_gym")], extra)
        added = {"Info": False, "Arguments": False}
        for title, body in sections:
            if title == "Version History":
                for missing in (name for name, done in added.items() if not done):
                    lines += _generated_section(missing, info_rows, argument_rows, heading=True)
            lines += [f"## {title}", "", _markdown(body), ""]
            if title in added:
                lines += _generated_section(title, info_rows, argument_rows, heading=False)
                added[title] = True
        for missing in (name for name, done in added.items() if not done):
            lines += _generated_section(missing, info_rows, argument_rows, heading=True)
    finally:
        env.close()
    return "\n".join(lines)


def _wrapped_table(kind: str, rows: list[str]) -> list[str]:
    """A Markdown table inside a container of class ``<kind>-table``, whose columns
    ``custom.css`` sizes to the content width and whose cells wrap (no sideways scrolling)."""
    return [f"```{{container}} {kind}-table", *rows, "```"]


def _generated_section(title: str, info_rows: list[str], argument_rows: list[str], heading: bool) -> list[str]:
    lines = [f"## {title}", ""] if heading else []
    if title == "Info":
        lines += ["The keys of one `reset` and one `step` of a default instance:", "",
                  *_wrapped_table("info", info_rows), ""]
    else:
        lines += ["From the constructor's signature and docstring:", "", *_wrapped_table("argument", argument_rows), ""]
    return lines


def _vector_fragment() -> str:
    """Spaces and arguments of the native vector environments (for ``environments/vector.md``)."""
    from dueling_gym.envs import vector

    num_envs = 4
    columns = [env_id for env_id in dueling_gym.ENV_IDS if gym.spec(env_id).vector_entry_point]
    envs = [gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point") for env_id in columns]
    try:
        rows = [
            ("Class", [f"{{class}}`~{type(e.unwrapped).__module__}.{type(e.unwrapped).__name__}`" for e in envs]),
            ("`single_action_space`", [f"`{e.single_action_space}`" for e in envs]),
            ("`single_observation_space`", [f"`{e.single_observation_space}`" for e in envs]),
            (f"`action_space` (`num_envs={num_envs}`)", [f"`{e.action_space}`" for e in envs]),
            (f"`observation_space` (`num_envs={num_envs}`)", [f"`{e.observation_space}`" for e in envs]),
            ("Autoreset mode", [f"`{e.metadata.get('autoreset_mode')}`" for e in envs]),
            ("Render modes", [", ".join(f"`{m}`" for m in e.metadata.get("render_modes", ())) for e in envs]),
        ]
        cls = type(envs[0].unwrapped)
    finally:
        for e in envs:
            e.close()
    lines = ["| | " + " | ".join(f"`{env_id}`" for env_id in columns) + " |", "|---|" + "---|" * len(columns)]
    lines += [f"| {name} | " + " | ".join(cells) + " |" for name, cells in rows]
    lines += ["", "Arguments (`gym.make_vec(env_id, num_envs=..., vectorization_mode=\"vector_entry_point\", "
              "**kwargs)` passes `num_envs`, `max_episode_steps` of the registration unless given, and the "
              "keyword arguments to the constructor):", ""]
    singles = {env_id: getattr(type(e.unwrapped), "single_env_class", vector.DuelingBanditEnv)
               for env_id, e in zip(columns, envs)}
    lines += _wrapped_table("argument", _argument_rows(
        cls, [singles[columns[0]]], defaults_of={f"`{env_id}`": [single] for env_id, single in singles.items()}))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- scripts run during the build


def _environments_toctree() -> str:
    """The index page's table of contents of the environments, in the order they are registered."""
    entries = ["environments/index", *(f"environments/{env_id.lower()}" for env_id in dueling_gym.ENV_IDS),
               "environments/vector"]
    return "```{toctree}\n:caption: Environments\n:maxdepth: 1\n\n" + "\n".join(entries) + "\n```\n"


def script_blocks(docs: Path) -> list[str]:
    """The scripts that hand-written pages show the output of (``{generated} run/<path>.py`` blocks)."""
    names = set()
    for page in docs.rglob("*.md"):
        if "_build" in page.relative_to(docs).parts:
            continue
        names.update(match.group(1) for match in GENERATED_BLOCK.finditer(page.read_text())
                     if match.group(1).startswith("run/"))
    return sorted(names)


def run_scripts(docs: Path, names: list[str], out: Path) -> dict[str, str]:
    """Run the scripts of the fragments ``names`` (``run/<path below docs>``) now and show what they made.

    Each script runs in its own Python process (what it registers or configures cannot leak
    into the pages generated from the package), all at once, with a fresh, empty working folder
    below ``out``: whatever it writes, data or figures, stays in the build.  Its printed output
    becomes a literal block and every PNG it saved there a figure, referenced relative to the
    script's folder (the page that shows the output lies beside the script).  A script that
    fails fails the build, with its error output.
    """
    environment = {**os.environ, "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    started = {}
    for name in names:
        script = (docs / name.removeprefix("run/")).resolve()
        if docs not in script.parents or script.suffix != ".py" or not script.is_file():
            raise ValueError(f"fragment {name!r}: no script {script} below {docs}")
        workdir = out / "run" / script.relative_to(docs).with_suffix("")
        if workdir.exists():
            shutil.rmtree(workdir)
        workdir.mkdir(parents=True)
        # Stable-Baselines3 logs below the working folder too, not in the system's temporary directory.
        process = subprocess.Popen([sys.executable, str(script)], cwd=workdir, text=True,
                                   env={**environment, "SB3_LOGDIR": str(workdir / "sb3-log")},
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started[name] = (script, workdir, process)
    fragments = {}
    for name, (script, workdir, process) in started.items():
        output, errors = process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"{script.relative_to(docs)} failed (exit status {process.returncode}):\n{errors}")
        lines = ["```text", output.rstrip("\n"), "```", ""]
        for image in sorted(workdir.glob("*.png")):
            reference = Path(os.path.relpath(image, script.parent)).as_posix()
            lines += [f"```{{figure}} {reference}", f":alt: {image.stem}, made by {script.name}", "",
                      f"`{image.name}`, saved by the script above while the documentation was built.", "```", ""]
        fragments[name] = "\n".join(lines)
    return fragments


# --------------------------------------------------------------------------- algorithm pages


def _first_sentence(cls: type) -> str:
    doc = inspect.getdoc(cls) or ""
    return doc.partition("\n")[0].strip().rstrip(".")


def _check_outside(docs: Path, out: Path) -> None:
    """Refuse to generate into the source tree (the build's own ``_build`` folder excepted)."""
    docs, out = docs.resolve(), out.resolve()
    if out == docs or docs in out.parents:
        if (docs / "_build") not in out.parents:
            raise ValueError(f"generated sources must not go below the documentation sources {docs}: {out}")


def generate_pages(docs: Path, out: Path, scripts: list[str] | None = None) -> Generated:
    """Generate every page and fragment from the package into ``out`` (never below ``docs``).

    ``docs``: the documentation sources (read only: the hand-written algorithm pages, the data
    files, the scripts whose output pages show).  ``scripts``: the ``run/...`` fragments to
    make (default: every one a page asks for).  Returns the pages (docname -> file below
    ``out``) and the fragments of hand-written pages.
    """
    docs, out = Path(docs).resolve(), Path(out).resolve()
    _check_outside(docs, out)
    generated = Generated()

    summaries = {}
    for env_id in dueling_gym.ENV_IDS:
        docname = f"environments/{env_id.lower()}"
        path = out / f"{docname}.md"
        _write_if_changed(path, _environment_page(env_id, path.parent))
        generated.pages[docname] = path
        env = gym.make(env_id)
        try:
            summaries[env_id] = _markdown(_docstring_sections(type(env.unwrapped))[0])
        finally:
            env.close()
    path = out / "environments" / "index.md"
    _write_if_changed(path, overview_page(list(dueling_gym.ENV_IDS), {env_id: f"{env_id.lower()}.png"
                                                                       for env_id in dueling_gym.ENV_IDS}, summaries))
    generated.pages["environments/index"] = path
    generated.fragments["environments/vector"] = _vector_fragment()
    generated.fragments["environments/toctree"] = _environments_toctree()
    generated.fragments.update(run_scripts(docs, script_blocks(docs) if scripts is None else scripts, out))
    generated.fragments.update(learned_fragments(docs))

    modules: dict[str, list[tuple[str, type]]] = defaultdict(list)
    for name, cls in sorted(AGENT_REGISTRY.items()):
        modules[cls.__module__.rpartition(".")[2]].append((name, cls))

    data = load_measurements(docs)
    pages: list[str] = []
    rows = ["| name | class | kind | target | algorithm | paper | page |", "|---|---|---|---|---|---|---|"]
    images = out / "algorithms" / "generated" / "img"
    for module, entries in sorted(modules.items()):
        hand_written = (docs / "algorithms" / f"{module}.md").exists()
        page = f"{module}" if hand_written else f"generated/{module}"
        pages.append(page)
        image = images / f"{module}-regret.png"
        if hand_written:
            image_ref = Path(os.path.relpath(image, docs / "algorithms")).as_posix()
            generated.fragments[f"algorithms/measured/{module}"] = measured_fragment(module, entries, data, image,
                                                                                      image_ref)
            generated.fragments[f"algorithms/paper/{module}"] = paper_link_line(module) + "\n"
            generated.fragments[f"algorithms/usage/{module}"] = usage_fragment(entries, data)
        else:
            path = out / "algorithms" / "generated" / f"{module}.md"
            _write_if_changed(path, algorithm_page(module, entries, data, image))
            generated.pages[f"algorithms/generated/{module}"] = path
        paper = paper_cell(module)
        for name, cls in entries:
            rows.append(
                f"| `{name}` | `{cls.__name__}` | {agent_role(name)} | {agent_target(name)} | {_first_sentence(cls)} "
                f"| {paper} | {{doc}}`{module} <{page}>` |"
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
    path = out / "algorithms" / "index.md"
    _write_if_changed(path, "\n".join(index))
    generated.pages["algorithms/index"] = path
    return generated


# --------------------------------------------------------------------------- Sphinx extension


class ProjectWithGenerated(Project):
    """A Sphinx project whose documents include the generated pages (``generated_pages``).

    Sphinx finds documents by scanning the source folder; the generated ones lie in the build,
    so every discovery adds them with their absolute paths (a document whose path is absolute is
    read from there).  A stale file of the same name in the sources loses.
    """

    generated_pages: dict[str, Path] = {}

    def discover(self, *args: Any, **kwargs: Any) -> set[str]:
        super().discover(*args, **kwargs)
        for docname, path in self.generated_pages.items():
            stale = self._docname_to_path.pop(docname, None)
            if stale is not None:
                self._path_to_docname.pop(stale, None)
            self.docnames.add(docname)
            self._docname_to_path[docname] = path
            self._path_to_docname[path] = docname
        return self.docnames


def _add_documents(project: Project, pages: dict[str, Path]) -> None:
    """Make ``project`` (the application's, shared with its environment) list ``pages``."""
    if not isinstance(project, Project):
        raise TypeError(f"expected a sphinx.project.Project, got {type(project).__name__}")
    project.__class__ = ProjectWithGenerated
    project.generated_pages = dict(pages)


def _builder_inited(app: Any) -> None:
    out = Path(app.doctreedir) / GENERATED_FOLDER
    app._dueling_gym_generated = generate_pages(Path(app.srcdir), out)
    _add_documents(app.project, app._dueling_gym_generated.pages)


def _source_read(app: Any, docname: str, source: list[str]) -> None:
    fragments = app._dueling_gym_generated.fragments

    def fragment(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in fragments:
            from sphinx.errors import ExtensionError

            raise ExtensionError(f"{docname}: no generated fragment {name!r} (known: {', '.join(sorted(fragments))})")
        return fragments[name]

    source[0] = GENERATED_BLOCK.sub(fragment, source[0])


def _pages_with_fragments(app: Any, env: Any, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """Re-read the hand-written pages that take in fragments: their text changes with the package."""
    users = []
    for docname in env.found_docs:
        path = Path(env.doc2path(docname))
        if path.suffix == ".md" and Path(app.srcdir) in path.parents and "```{generated}" in path.read_text():
            users.append(docname)
    return users


def setup(app: Any) -> dict[str, Any]:
    """Register the generation with Sphinx (called from ``conf.py``'s ``setup``)."""
    app.connect("builder-inited", _builder_inited)
    app.connect("source-read", _source_read)
    app.connect("env-get-outdated", _pages_with_fragments)
    # Ahead of napoleon (priority 500): it reads the NumPy sections of the class docstrings.
    app.connect("autodoc-process-docstring", skip_described_docstring, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
