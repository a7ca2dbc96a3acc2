"""One documentation page per algorithm module, read off the package and the measured data.

Each page has: the paper (the citation paragraph of the module docstring), the algorithm (the
rest of the module docstring and each registered class's description), the pseudocode mapping
(the comments of the module and of the kernels it imports that name a line or step of the
paper's pseudocode, with the function they sit in), the hyperparameters (constructor signature
defaults and the NumPy ``Parameters`` descriptions), implementation notes and the choices where
the paper is silent (docstring paragraphs and ``Notes``), and the measured sections: regret on
the seven published matrices (``data/regret_published_matrices.csv``, a figure drawn here at
build time) and duels per second (``data/duels_per_second.csv``).  The two CSV files are
measured by ``docs/measure_algorithms.py``, never at build time.

Modules with a hand-written page ``algorithms/<module>.md`` get only the measured sections (and
the paper link), as fragments that the page takes in with ``{generated}`` blocks (see
``_generate.py``).

The links to the papers are declared by the agent classes (their ``paper`` attribute); the page
title is the algorithm's name, the part of the module docstring's summary line before its colon.
"""

from __future__ import annotations

import ast
import csv
import importlib
import inspect
import io
import re
import textwrap
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from dueling_gym.agents import AGENT_REGISTRY, PaperLink
from dueling_gym.agents.catalogue import agent_role, agent_target

from _algorithm_figures import INTERVAL_METHOD, REFERENCE_AGENT, comparison_figure, comparison_table, peers
from _algorithm_usage import example_section, when_to_use

#: The seven matrices of Komiyama, Honda, Nakagawa (ICML 2016, Appendix A), in the preset's order.
PUBLISHED_MATRICES = ("sushi", "arxiv", "mslr5-condorcet", "mslr5-noncondorcet", "gap", "multisol", "cyclic4")

def paper_links(module: str) -> tuple[PaperLink, ...]:
    """The publisher's pages of the paper that the agents of ``module`` implement.

    Each agent class declares them (its ``paper`` attribute); ``module`` is the last component of
    the module's dotted path, as the pages name it.  The classes of one module implement one paper,
    so they must agree.
    """
    declared = {cls.paper for cls in AGENT_REGISTRY.values() if cls.__module__.rpartition(".")[2] == module}
    if len(declared) > 1:
        raise ValueError(f"the agents of module {module!r} declare different papers: {sorted(declared)}")
    return declared.pop() if declared else ()


#: The library's own agents, which implement no published algorithm: their pages and the index
#: say so where other modules link their paper.
OWN_AGENTS = {
    "learned": "None: a policy trained by reinforcement learning for this library, not the implementation "
               "of a published algorithm.",
    "preference_estimator": "None: this library's own identification baseline, not the implementation of a "
                            "published algorithm; the strategy it follows is discussed in the work cited below.",
}


def paper_cell(module: str) -> str:
    """The paper column of the algorithm index for ``module`` (MyST)."""
    if module in OWN_AGENTS:
        return "none (this library's own agent)"
    return paper_link_line(module).removeprefix("Paper: ") or "-"


def paper_link_line(module: str) -> str:
    """``Paper: [venue](url)`` for ``module`` (MyST; the venue alone for a paper declared without a
    page), or ``""`` when its agents declare no paper."""
    links = paper_links(module)
    return ("Paper: " + "; ".join(f"[{link.venue}]({link.url})" if link.url else link.venue for link in links)
            if links else "")


#: Page titles that the rule of :func:`algorithm_title` would get wrong, by module.
TITLES = {"successive_elimination_borda": "Successive Elimination (Borda)"}


def algorithm_title(summary: str, module: str) -> str:
    """The algorithm's name for the page title and the sidebar: the summary before its colon.

    Without a colon, the summary is cut before a qualifying " for ..." / " with ..." phrase
    ("KL-UCB for Bernoulli rewards." -> "KL-UCB").
    """
    if module in TITLES:
        return TITLES[module]
    title = summary.strip().rstrip(".")
    if ":" in title:
        title = title.partition(":")[0]
    else:
        title = re.split(r" (?:for|with) ", title, maxsplit=1)[0]
    return title.strip() or module

_ROLE = re.compile(r":(class|func|meth|data|attr|mod|obj):`([^`]+)`")
_UNDERLINED = re.compile(r"^(\S[^\n]*)\n(-{3,}|={3,})$", re.M)
_YEAR = re.compile(r"\b(19[6-9]\d|20[0-4]\d)\b")
_CHOICE = re.compile(r"choice|silent|leaves? .*open|ambigu|implementation note|not specified|unspecified|differ", re.I)
_PSEUDOCODE = re.compile(r"\b((?:lines?|steps?)\s+\d+[A-Za-z]?(?:\s*[-–,]\s*\d+[A-Za-z]?)*"
                         r"|algorithm\s+\d+(?:,\s*lines?\s+\d+(?:\s*[-–]\s*\d+)?)?)", re.I)


@dataclass
class Measurements:
    """The measured data files: rows by (agent, problem) and by agent, with their header comments."""

    regret: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    regret_header: list[str] = field(default_factory=list)
    speed: dict[str, dict[str, str]] = field(default_factory=dict)
    speed_header: list[str] = field(default_factory=list)
    regret_path: Path | None = None


def _read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    if not path.exists():
        return [], []
    lines = path.read_text().splitlines()
    header = [line[1:].strip() for line in lines if line.startswith("#")]
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    return header, rows


def load_measurements(docs: Path) -> Measurements:
    """Read ``docs/data/regret_published_matrices.csv`` and ``docs/data/duels_per_second.csv``."""
    regret_path = docs / "data" / "regret_published_matrices.csv"
    regret_header, regret_rows = _read_csv(regret_path)
    speed_header, speed_rows = _read_csv(docs / "data" / "duels_per_second.csv")
    return Measurements(
        regret={(row["agent"], row["problem"]): row for row in regret_rows},
        regret_header=regret_header,
        speed={row["agent"]: row for row in speed_rows},
        speed_header=speed_header,
        regret_path=regret_path,
    )


# --------------------------------------------------------------------------- docstrings


def _markdown(text: str) -> str:
    """reST inline roles as MyST roles; ``Title`` + underline as a level-3 heading; ``|`` kept."""
    text = _ROLE.sub(lambda match: "{%s}`%s`" % (match.group(1), match.group(2)), text)
    return _UNDERLINED.sub(lambda match: f"### {match.group(1)}", text)


_SHORT_ROLE = re.compile(r":(class|meth|attr):`([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?`")


def _qualify(text: str, classes: list[type]) -> str:
    """Short references of a class docstring (``:meth:`name```, ``:attr:`Class.name```,
    ``:class:`Class```) written out with the documented path of ``classes``, so that they resolve
    on the page as they do inside the class's own documentation (which lists inherited members
    too); a reference to anything else is left as it is."""
    by_name = {cls.__name__: cls for cls in classes}

    def qualified(match: re.Match[str]) -> str:
        role, first, second = match.groups()
        if role == "class":
            cls = by_name.get(first)
            return f":class:`~{_public_class_path(cls)}`" if cls and second is None else match.group(0)
        if second is not None:
            cls, member = by_name.get(first), second
        else:
            cls, member = next((c for c in classes if hasattr(c, first)), None), first
        if cls is None or not hasattr(cls, member):
            return match.group(0)
        title = match.group(0)[len(role) + 3:-1]
        return f":{role}:`{title} <{_public_class_path(cls)}.{member}>`"

    return _SHORT_ROLE.sub(qualified, text)


def _cell(text: str) -> str:
    """One Markdown table cell: a single line, pipes escaped."""
    return _markdown(" ".join(text.split())).replace("|", "\\|")


def _paragraphs(text: str) -> list[str]:
    """Blank-line separated blocks; a block that is a list or indented continues the previous one."""
    blocks: list[str] = []
    for block in re.split(r"\n\s*\n", text.strip()):
        if blocks and (block.startswith((" ", "*", "-")) or re.match(r"\d+\. ", block)):
            blocks[-1] += "\n\n" + block
        else:
            blocks.append(block)
    return [block for block in blocks if block.strip()]


def _sections(docstring: str) -> tuple[str, dict[str, str]]:
    """A NumPy docstring as (description, {section title: body})."""
    parts = re.split(r"^(\S[^\n]*)\n-{3,}\n", docstring, flags=re.M)
    description, sections = parts[0], {}
    for title, body in zip(parts[1::2], parts[2::2]):
        sections[title.strip()] = textwrap.dedent(body).strip()
    return description.strip(), sections


def _split_module_docstring(module: ModuleType) -> tuple[str, str, list[str], list[str]]:
    """(summary, paper paragraph, algorithm paragraphs, choice paragraphs) of a module docstring."""
    doc = inspect.getdoc(module) or ""
    summary, _, rest = doc.partition("\n")
    paragraphs = _paragraphs(textwrap.dedent(rest))
    paper = next((block for block in paragraphs if _YEAR.search(block)), "")
    algorithm, choices, in_choices = [], [], False
    for block in paragraphs:
        if block is paper:
            continue
        first_line = block.splitlines()[0]
        if _UNDERLINED.match("\n".join(block.splitlines()[:2])):
            in_choices = bool(_CHOICE.search(first_line))
        elif first_line.startswith(("#", "**")):
            in_choices = bool(_CHOICE.search(first_line))
        elif _CHOICE.search(first_line):
            choices.append(block)
            continue
        (choices if in_choices else algorithm).append(block)
    return summary.strip(), paper, algorithm, choices


def _parameter_descriptions(section: str) -> dict[str, str]:
    descriptions: dict[str, str] = {}
    name = None
    for line in section.splitlines():
        if line and not line.startswith(" "):
            names = line.partition(" : ")[0]
            name = names.split(",")[0].strip().lstrip("*")
            descriptions.setdefault(name, "")
            for alias in names.split(",")[1:]:
                descriptions.setdefault(alias.strip().lstrip("*"), "")
        elif name is not None:
            descriptions[name] = (descriptions[name] + " " + line.strip()).strip()
    return descriptions


def _hyperparameters(cls: type) -> list[str]:
    """The hyperparameter table of ``cls``: constructor defaults and docstring descriptions."""
    _, sections = _sections(inspect.getdoc(cls) or "")
    descriptions = _parameter_descriptions(sections.get("Parameters", ""))
    rows = ["| name | default | description |", "|---|---|---|"]
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        if name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        default = "required" if parameter.default is parameter.empty else f"`{parameter.default!r}`"
        rows.append(f"| `{name}` | {default} | {_cell(_qualify(descriptions.get(name, ''), [cls]))} |")
    return rows


# --------------------------------------------------------------------------- pseudocode mapping


def _enclosing(tree: ast.Module) -> list[tuple[int, int, str]]:
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            spans.append((node.lineno, node.end_lineno or node.lineno, node.name))
    for node in ast.walk(tree):  # qualify methods with their class
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    spans.append((item.lineno, item.end_lineno or item.lineno, f"{node.name}.{item.name}"))
    return spans


def _tagged_comments(module: ModuleType, functions: set[str] | None) -> list[tuple[str, str, str]]:
    """(pseudocode reference, qualified function, comment) for the tagged comments of ``module``.

    ``functions``: only comments inside these top-level functions (a shared kernel module), or
    every comment (the algorithm's own module).
    """
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return []
    spans = _enclosing(ast.parse(source))
    steps = (inspect.getdoc(module) or "").lower()
    comments = [(token.start[0], token.line.strip().startswith("#"), token.string.lstrip("#").strip())
                for token in tokenize.generate_tokens(io.StringIO(source).readline) if token.type == tokenize.COMMENT]
    found = []
    for index, (line, standalone, text) in enumerate(comments):
        match = _PSEUDOCODE.search(text) or _named_step(text, steps)
        if not match:
            continue
        following = index + 1  # a standalone comment continues on the next comment-only lines
        while (standalone and following < len(comments) and comments[following][1]
               and comments[following][0] == line + following - index and not _PSEUDOCODE.search(comments[following][2])):
            text += " " + comments[following][2]
            following += 1
        inside = [span for span in spans if span[0] <= line <= span[1]]
        if not inside:  # a section comment above a function: the next function
            inside = sorted(span for span in spans if span[0] > line and "." not in span[2])[:1]
        if not inside:
            continue
        name = max(inside, key=lambda span: (span[0], span[2].count(".")))[2]
        if functions is not None and name.split(".")[0] not in functions:
            continue
        found.append((match.group(1), f"{module.__name__.rpartition('.')[2]}.{name}", text.strip("-").strip()))
    return found


def _named_step(comment: str, docstring: str) -> re.Match[str] | None:
    """``Label: ...`` where the module docstring names the step ``label`` (e.g. RMED's "choice")."""
    match = re.match(r"([A-Z][a-z]+(?: [a-z]+){0,2}):", comment)
    return match if match and match.group(1).lower() in docstring else None


def _imported_kernels(module: ModuleType) -> dict[str, set[str]]:
    """Private agent modules that ``module`` imports from, with the names it imports."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return {}
    kernels: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("dueling_gym.agents"):
            if node.module.rpartition(".")[2].startswith("_"):
                kernels.setdefault(node.module, set()).update(alias.name for alias in node.names)
    return kernels


def _pseudocode_rows(module: ModuleType) -> list[str]:
    found = _tagged_comments(module, None)
    for kernel, names in sorted(_imported_kernels(module).items()):
        found += _tagged_comments(importlib.import_module(kernel), names)
    if not found:
        return []
    rows = ["| pseudocode | code | comment |", "|---|---|---|"]
    seen = set()
    for reference, where, comment in found:
        if (reference, where, comment) in seen:
            continue
        seen.add((reference, where, comment))
        rows.append(f"| {_cell(reference)} | `{where}` | {_cell(comment)} |")
    return rows


# --------------------------------------------------------------------------- measured sections


def measured_sections(module: str, agents: list[str], data: Measurements, image: Path, image_ref: str,
                      headings: tuple[str, str] = ("Measured regret on the published matrices", "Per-step cost"),
                      ) -> list[str]:
    """The measured-regret and duels-per-second sections of one algorithm page (MyST lines).

    The regret of ``agents`` is shown beside that of their peers (:func:`_algorithm_figures.peers`),
    as a table and a dot plot drawn to ``image`` (a file of the build, never of ``docs/``), which
    the page refers to as ``image_ref``, a path relative to the page's own folder.
    """
    lines = [f"## {headings[0]}", ""]
    measured = [a for a in agents if any((a, p) in data.regret for p in PUBLISHED_MATRICES)]
    if not measured:
        reasons = {agent: _not_measured_reason(agent) for agent in agents}
        lines += [f"* `{agent}`: {reason}" for agent, reason in reasons.items()] + [""]
    else:
        first = data.regret[next((a, p) for a in measured for p in PUBLISHED_MATRICES if (a, p) in data.regret)]
        rows = peers(measured, data.regret, PUBLISHED_MATRICES)
        targets = sorted({agent_target(a) for a in measured})
        lines += [
            f"Cumulative Copeland regret (normalisation of Komiyama et al. 2016) after `T = {int(first['horizon']):,}` "
            f"duels, beside the peers: every other regret minimiser of the `baselines` preset that targets the "
            f"same winner ({', '.join(targets)}), best first (by the mean over the matrices of the regret as a "
            f"fraction of uniform play's). Mean with its "
            + INTERVAL_METHOD.format(runs=first["runs"])
            + "; arm order shuffled in every run, default hyperparameters (horizon-aware agents are given `T`), "
            "matrices of Komiyama, Honda, Nakagawa (ICML 2016, Appendix A). This page's agents are in bold; "
            f"`{REFERENCE_AGENT}` (uniform play) is the scale.",
            "",
            *comparison_table(measured, rows, data.regret, PUBLISHED_MATRICES),
            "",
        ]
        sources = [data.regret_path, Path(__file__), Path(comparison_figure.__code__.co_filename)]
        if comparison_figure(measured, rows, data.regret, PUBLISHED_MATRICES, image, [s for s in sources if s]):
            lines += [f"```{{image}} {image_ref}",
                      f":alt: regret at T of {', '.join(measured)} and their peers on the seven published matrices, "
                      "with 95% intervals", "```", ""]
        lines += ["Fraction of runs whose final recommendation is a Copeland winner:", "",
                  "| agent | " + " | ".join(PUBLISHED_MATRICES) + " |", "|---|" + "---|" * len(PUBLISHED_MATRICES)]
        for agent in measured:
            cells = [f"{float(data.regret[(agent, p)]['winner_rate']):.0%}" if (agent, p) in data.regret else "-"
                     for p in PUBLISHED_MATRICES]
            lines.append(f"| `{agent}` | " + " | ".join(cells) + " |")
        lines.append("")
        checkpoints = [key for key in first if key.startswith("mean_at_") and first[key]]
        lines += ["The regret curve (mean regret after `t` duels):", "",
                  "| agent | matrix | " + " | ".join(f"t = {int(key[8:]):,}" for key in checkpoints) + " |",
                  "|---|---|" + "---|" * len(checkpoints)]
        for agent in measured:
            for problem in PUBLISHED_MATRICES:
                row = data.regret.get((agent, problem))
                if row:
                    lines.append(f"| `{agent}` | {problem} | "
                                 + " | ".join(f"{float(row[key]):,.0f}" for key in checkpoints) + " |")
        lines += ["", "Reproduce these numbers (about two minutes on two cores; the table with its 95% intervals "
                  "lands in `results/baselines/summary.md`, every agent's runs in `results/baselines`):", "",
                  "```console", "$ dueling-gym reproduce baselines --jobs 2", "```", "",
                  f"Data shown here: `docs/data/regret_published_matrices.csv` ({_made_by(data.regret_header)}).", ""]
    lines += [f"## {headings[1]}", ""]
    timed = [a for a in agents if a in data.speed]
    if timed:
        lines += ["Duels per second on Sushi (`K = 16`), one core, compilation excluded: the fused (compiled) "
                  "loop of {func}`~dueling_gym.experiments.simulate` over 10^6 duels and the `act`/`observe` "
                  "loop over 10^5 duels.", "",
                  "| agent | fused duels/s | act/observe duels/s |", "|---|---|---|"]
        for agent in timed:
            row = data.speed[agent]
            lines.append(f"| `{agent}` | {float(row['fused_duels_per_s']):,.0f} "
                         f"| {float(row['act_observe_duels_per_s']):,.0f} |")
        lines += ["", "Data: `docs/data/duels_per_second.csv`, measured from a source checkout with "
                  "`python benchmarks/agents.py --problems sushi` (each agent in a fresh process; "
                  f"{_made_by(data.speed_header)}).", ""]
    untimed = [a for a in agents if a not in data.speed]
    if untimed:
        lines += [f"* `{agent}`: not timed on Sushi ({_not_timed_reason(agent)})." for agent in untimed] + [""]
    return lines


def _made_by(header: list[str]) -> str:
    version = next((line for line in header if line.startswith("dueling-gym ")), "")
    return version or "not yet measured"


def _not_measured_reason(agent: str) -> str:
    role = agent_role(agent)
    if role == "identification":
        return ("an identification agent: it stops and answers, so it is judged by its sample count and "
                "its answer, not by regret (see `dueling-gym reproduce` and "
                "{func}`~dueling_gym.experiments.run_pure_exploration`).")
    if role == "bandit":
        return ("a cardinal multi-armed bandit learner; it plays duels through the reductions of "
                "{mod}`dueling_gym.wrappers` or inside Sparring-type agents.")
    if role == "combinatorial":
        return "a pure-exploration agent over matchings of a bipartite problem (`CombinatorialDuel-v0`)."
    if agent == "learned":
        return ("evaluated by a preset of its own, on held-out problems and the published matrices "
                "(`dueling-gym reproduce learned-vs-classic`; the learned policies page).")
    return "not part of the `baselines` preset."


def _not_timed_reason(agent: str) -> str:
    role = agent_role(agent)
    if role in ("bandit", "combinatorial"):
        return "not a dueling agent"
    if agent == "learned":
        return "its throughput is measured by `benchmarks/training.py`; the learned policies page"
    return "not measured yet"


# --------------------------------------------------------------------------- pages


def algorithm_page(module_name: str, entries: list[tuple[str, type]], data: Measurements, image: Path) -> str:
    """The generated page of one algorithm module (its registered agents ``entries``).

    ``image``: where to draw the regret figure, in the folder ``img/`` beside the page.
    """
    module = importlib.import_module(entries[0][1].__module__)
    summary, paper, algorithm, choices = _split_module_docstring(module)
    classes = sorted({cls for _, cls in entries}, key=lambda cls: cls.__name__)

    def _md(text: str) -> str:  # the page's text: short references of its classes resolvable
        return _markdown(_qualify(text, classes))

    names = [name for name, _ in entries]
    title = algorithm_title(summary, module_name)
    lines = [f"# {title}", ""]
    subtitle = summary.strip()
    if subtitle.startswith(title + ":"):
        subtitle = subtitle[len(title) + 1:].strip()
        subtitle = subtitle[:1].upper() + subtitle[1:]
    if subtitle.rstrip(".") != title:
        lines += [f"*{_md(subtitle)}*", ""]
    lines += ["| registered name | class | kind | target |", "|---|---|---|---|"]
    lines += [f"| `{name}` | {{class}}`~{cls.__module__}.{cls.__name__}` | {agent_role(name)} | "
              f"{agent_target(name)} |" for name, cls in entries]
    lines += ["", *when_to_use(names, data.speed), *example_section(names)]
    link = paper_link_line(module_name)
    if module_name in OWN_AGENTS:
        lines += ["## Paper", "", OWN_AGENTS[module_name], "", *([_md(paper), ""] if paper else [])]
    elif paper or link:
        lines += ["## Paper", "", _md(paper), "", link, ""]
    lines += ["## The algorithm", ""]
    lines += [_md(block) + "\n" for block in algorithm]
    notes = []
    for cls in classes:
        description, sections = _sections(inspect.getdoc(cls) or "")
        # The description is shown here, in the algorithm's story; the API section below omits it
        # (see skip_described_docstring) so that it is read once.
        lines += [f"### `{cls.__name__}`", "", _md(description), ""]
        if sections.get("Notes"):
            notes.append((cls.__name__, sections["Notes"]))
    lines += ["## Pseudocode mapping", ""]
    rows = _pseudocode_rows(module)
    if rows:
        lines += ["The comments of the code that name a line or step of the paper's pseudocode, with the "
                  "function they sit in (kernels: the compiled functions shared by the fused loop and "
                  "`act`/`observe`).", "", *rows, ""]
    else:
        lines += ["The code tags no pseudocode line; `act` and `observe` of "
                  + ", ".join(f"`{cls.__name__}`" for cls in classes)
                  + " implement the steps described above, in that order.", ""]
    lines += ["## Hyperparameters", ""]
    for cls in classes:
        lines += [f"`{cls.__name__}`:", "", *_hyperparameters(cls), ""]
    lines += ["## Implementation notes and choices where the paper is silent", ""]
    lines += [_md(block) + "\n" for block in choices]
    for name, body in notes:
        lines += [f"**`{name}`.** " + _md(body), ""]
    if not choices and not notes:
        lines += ["None recorded beyond the description above.", ""]
    lines += measured_sections(module_name, names, data, image, f"img/{image.name}")
    lines += ["## API", "", "```{eval-rst}"]
    # The module is a target of its own (the pages and docstrings refer to it); its docstring is
    # this page, so it is declared rather than documented again.
    lines += [f".. py:module:: {module.__name__}", ""]
    # The class is documented once, here, under the path users import it from; autodoc records
    # its defining module's path as the canonical name, so references by either path resolve.
    for cls in _other_public_classes(module, classes):  # e.g. the state a method returns
        lines += [f".. autoclass:: {cls.__module__}.{cls.__name__}", "   :members:", ""]
    for cls in classes:
        # Inherited members too: the docstrings refer to them (``ranking``, ``recommend``) as
        # members of the class, and a reader looks for a class's whole API on its page.
        lines += [f".. autoclass:: {_public_class_path(cls)}", "   :members:", "   :inherited-members:", ""]
    lines += ["```", ""]
    return "\n".join(lines)


def _other_public_classes(module: ModuleType, registered: list[type]) -> list[type]:
    """The classes that ``module`` exports besides its registered agents, defined there, except
    the Numba structref types of the kernel states (internal to the compiled kernels)."""
    found = []
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name, None)
        if (isinstance(obj, type) and obj.__module__ == module.__name__ and obj not in registered
                and not any(base.__module__.startswith("numba") for base in inspect.getmro(obj)[1:])):
            found.append(obj)
    return found


def _public_class_path(cls: type) -> str:
    """``dueling_gym.agents.<Class>`` when the package exports the class, else its module's path."""
    import dueling_gym.agents

    exported = cls.__name__ in dueling_gym.agents.__all__ and getattr(dueling_gym.agents, cls.__name__) is cls
    return f"dueling_gym.agents.{cls.__name__}" if exported else f"{cls.__module__}.{cls.__name__}"


def measured_fragment(module_name: str, entries: list[tuple[str, type]], data: Measurements, image: Path,
                      image_ref: str) -> str:
    """The measured sections alone, for a hand-written page to take in (``image_ref``: relative to it)."""
    headings = ("Measured regret of the baselines preset (default hyperparameters)", "Duels per second")
    return "\n".join(measured_sections(module_name, [name for name, _ in entries], data, image, image_ref, headings))


def usage_fragment(entries: list[tuple[str, type]], data: Measurements) -> str:
    """The "When to use it" and "Example" sections, for a hand-written page to take in."""
    names = [name for name, _ in entries]
    return "\n".join([*when_to_use(names, data.speed), *example_section(names)])


#: Folder of the generated algorithm pages, whose API section leaves out what the page shows above.
GENERATED_PAGES = "algorithms/generated/"


def skip_described_docstring(app, what: str, name: str, obj: object, options: object, lines: list[str]) -> None:
    """``autodoc-process-docstring`` listener: on a generated algorithm page, drop a registered
    agent class's description and ``Notes`` from its API entry, which the page shows above (under
    "The algorithm" and "Implementation notes"); its ``Parameters``, ``Attributes`` and the
    members stay.  Connected before napoleon, so ``lines`` is still the NumPy docstring."""
    docname = getattr(getattr(app, "env", None), "docname", "") or ""
    if what != "class" or not docname.startswith(GENERATED_PAGES) or obj not in set(AGENT_REGISTRY.values()):
        return
    kept: list[str] = []
    section = "description"
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if line.strip() and not line.startswith(" ") and re.fullmatch(r"-{3,}", following.strip()):
            section = line.strip()
        if section not in ("description", "Notes"):
            kept.append(line)
    lines[:] = kept
