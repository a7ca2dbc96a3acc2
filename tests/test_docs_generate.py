"""The documentation generator: one page per algorithm, measured sections, environment pages.

The generator writes into a folder of the build, never below ``docs/``; these tests generate
into a temporary folder and check that the sources were left untouched.
"""

from __future__ import annotations

import csv
import re
import sys

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("sphinx")

import gymnasium as gym  # noqa: E402

import dueling_gym  # noqa: E402
from dueling_gym.agents import AGENT_REGISTRY  # noqa: E402
from dueling_gym.experiments.studies.presets import get_preset  # noqa: E402

from repository_paths import DOCS, import_docs_module  # noqa: E402


def docs_listing() -> dict[str, tuple[int, int]]:
    """Every file below ``docs/`` with its modification time and size."""
    return {path.relative_to(DOCS).as_posix(): (path.stat().st_mtime_ns, path.stat().st_size)
            for path in DOCS.rglob("*") if path.is_file()}




@pytest.fixture(scope="module")
def generate():
    return import_docs_module("_generate")


@pytest.fixture(scope="module")
def generated(tmp_path_factory, generate):
    """The generated pages and fragments, written to a temporary folder (the checkout is left alone)."""
    out = tmp_path_factory.mktemp("generated-sources")
    before = docs_listing()
    result = generate.generate_pages(DOCS, out, scripts=["run/quickstart.py"])
    assert docs_listing() == before, "generating the pages wrote below docs/"
    result.out = out
    return result


def _module(cls: type) -> str:
    return cls.__module__.rpartition(".")[2]


def _page(generated, docname: str) -> str:
    path = generated.pages[docname]
    assert generated.out in path.parents
    return path.read_text()


def test_nothing_is_generated_below_docs(generated, generate, tmp_path):
    assert all(generated.out in path.parents for path in generated.pages.values())
    with pytest.raises(ValueError, match="must not go below"):
        generate.generate_pages(DOCS, DOCS / "environments")


def test_every_registered_agent_has_a_page_with_the_sections(generated):
    index = _page(generated, "algorithms/index")
    for name, cls in AGENT_REGISTRY.items():
        assert f"`{name}`" in index
        module = _module(cls)
        if (DOCS / "algorithms" / f"{module}.md").exists():
            page = (DOCS / "algorithms" / f"{module}.md").read_text()
            for fragment in (f"algorithms/measured/{module}", f"algorithms/paper/{module}"):
                assert f"```{{generated}} {fragment}\n```" in page  # the hand-written page takes it in
                assert fragment in generated.fragments
            measured = generated.fragments[f"algorithms/measured/{module}"]
            assert "regret" in measured.lower() and "Duels per second" in measured
            continue
        page = _page(generated, f"algorithms/generated/{module}")
        for section in ("## The algorithm", "## Pseudocode mapping", "## Hyperparameters",
                        "## Implementation notes and choices where the paper is silent",
                        "## Measured regret on the published matrices", "## Per-step cost", "## API"):
            assert section in page, (module, section)
        assert f"| `{name}` |" in page


def test_algorithm_pages_are_titled_by_the_algorithm_name(generated):
    for docname in generated.pages:
        if docname.startswith("algorithms/generated/"):
            title = _page(generated, docname).splitlines()[0]
            assert title.startswith("# ") and ":" not in title and len(title) <= 45, title


def test_pages_link_the_papers_their_agent_classes_declare(generated, generate):
    pages = import_docs_module("_algorithm_pages")
    modules = {_module(cls) for cls in AGENT_REGISTRY.values()}
    linked = {module: pages.paper_links(module) for module in modules if pages.paper_links(module)}
    assert {"rmed", "cw_rmed", "ecw_rmed", "ccb", "scb", "car", "clucb_borda", "savage", "rucb", "dts"} <= set(linked)
    for module, links in linked.items():
        for label, url in links:
            if not url:  # a paper declared by its venue only
                assert label in _page(generated, "algorithms/index")
                continue
            assert re.fullmatch(r"https://(proceedings\.mlr\.press|proceedings\.neurips\.cc|doi\.org|arxiv\.org)/\S+",
                                url), url
            if (DOCS / "algorithms" / f"{module}.md").exists():
                assert url in generated.fragments[f"algorithms/paper/{module}"]
            else:
                assert f"[{label}]({url})" in _page(generated, f"algorithms/generated/{module}")
            assert url in _page(generated, "algorithms/index")


def test_hyperparameter_table_reads_signature_and_docstring(generated):
    page = _page(generated, "algorithms/generated/rucb")
    assert "| `alpha` | `0.51` | Exploration parameter" in page
    assert "| `n_arms` | required |" in page


def test_measured_regret_covers_the_baselines_preset(generated):
    lines = [line for line in (DOCS / "data" / "regret_published_matrices.csv").read_text().splitlines()
             if not line.startswith("#")]
    rows = list(csv.DictReader(lines))
    spec = get_preset("baselines").sweep_arguments(False)
    assert {(row["agent"], row["problem"]) for row in rows} == {(a, p) for a in spec["agents"] for p in spec["problems"]}
    for agent in spec["agents"]:
        module = _module(AGENT_REGISTRY[agent])
        image = generated.out / "algorithms" / "generated" / "img" / f"{module}-regret.png"
        assert image.exists()
        if (DOCS / "algorithms" / f"{module}.md").exists():  # referred to relative to the hand-written page
            reference = re.search(r"```\{image\} (\S+)", generated.fragments[f"algorithms/measured/{module}"]).group(1)
            assert ((DOCS / "algorithms") / reference).resolve() == image.resolve()


def test_environment_pages_show_the_version_history_once(generated):
    for env_id in dueling_gym.ENV_IDS:
        assert _page(generated, f"environments/{env_id.lower()}").count("## Version History") == 1


@pytest.mark.parametrize("env_id", dueling_gym.ENV_IDS)
def test_environment_pages_read_spaces_arguments_and_info_off_the_environment(generated, env_id):
    page = _page(generated, f"environments/{env_id.lower()}")
    env = gym.make(env_id)
    try:
        assert f"| Action Space | `{env.action_space}` |" in page
        assert f"| Observation Space | `{env.observation_space}` |" in page
        _, reset_info = env.reset(seed=0)
        step_info = env.step(env.action_space.sample())[4]
        cls = type(env.unwrapped)
    finally:
        env.close()
    for key in {*reset_info, *step_info}:
        row = next(line for line in page.splitlines() if line.startswith(f'| `info["{key}"]` |'))
        assert row.rstrip(" |").split("|")[-1].strip(), f"no meaning for info[{key!r}]"
    import inspect

    for name in inspect.signature(cls.__init__).parameters:
        if name != "self":
            row = next(line for line in page.splitlines() if line.startswith(f"| `{name}` |"))
            assert row.rstrip(" |").split(" | ")[-1].strip(), f"no meaning for argument {name!r}"
    assert "| `max_episode_steps` |" in page
    # the episode: an animated GIF of the build, referred to relative to the page
    image = re.search(r"```\{figure\} (\S+)", page).group(1)
    data = (generated.pages[f"environments/{env_id.lower()}"].parent / image).read_bytes()
    assert data.startswith(b"GIF89a") and len(data) < 500_000
    # the tables sit in containers whose class custom.css sizes and wraps
    assert "```{container} argument-table\n| argument | type | default | meaning |" in page
    assert "```{container} info-table\n| key | returned by | type | meaning |" in page


def test_overview_page_lists_every_registered_environment(generated):
    page = _page(generated, "environments/index")
    folder = generated.pages["environments/index"].parent
    for env_id in dueling_gym.ENV_IDS:
        target = f"{env_id.lower()}.md"
        assert f"[**{env_id}**]({target})" in page  # its name links its page ...
        thumbnail = re.search(rf"\[!\[[^]]*\]\((img/[^)]+)\)\]\({re.escape(target)}\)", page).group(1)
        assert (folder / thumbnail).read_bytes().startswith(b"\x89PNG")  # ... and so does its thumbnail
        assert f"environments/{env_id.lower()}" in generated.pages
    assert generated.fragments["environments/toctree"].index("environments/index") < \
        generated.fragments["environments/toctree"].index(f"environments/{dueling_gym.ENV_IDS[0].lower()}")


def test_png_bytes_round_trip(generate):
    import zlib

    import numpy as np

    rgb = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    data = generate.png_bytes(rgb)
    idat = data[data.index(b"IDAT") + 4:data.index(b"IEND") - 8]
    raw = zlib.decompress(idat)
    assert raw == b"\x00" + rgb[0].tobytes() + b"\x00" + rgb[1].tobytes()


def test_vector_page_fragment_has_spaces_and_arguments(generated):
    fragment = generated.fragments["environments/vector"]
    assert "`single_action_space`" in fragment and "| `num_envs` |" in fragment
    assert "```{generated} environments/vector\n```" in (DOCS / "environments" / "vector.md").read_text()


def test_every_script_a_page_shows_exists_and_is_shown_beside_its_source(generate):
    scripts = generate.script_blocks(DOCS)
    assert "run/quickstart.py" in scripts and "run/tutorials/ppo.py" in scripts
    for name in scripts:
        script = DOCS / name.removeprefix("run/")
        assert script.is_file(), name
        page = DOCS / "index.md" if script.name == "quickstart.py" else script.with_suffix(".md")
        assert f"{{literalinclude}} {script.name}" in page.read_text(), name


def test_a_script_s_output_and_figures_become_the_fragment(generate, tmp_path):
    docs = tmp_path / "docs"
    (docs / "tutorials").mkdir(parents=True)
    (docs / "tutorials" / "demo.py").write_text(
        "import matplotlib.pyplot as plt\nprint('hello from the build')\n"
        "plt.plot([0, 1]); plt.savefig('curve.png')\n")
    (docs / "tutorials" / "broken.py").write_text("raise SystemExit('no data')\n")
    fragments = generate.run_scripts(docs, ["run/tutorials/demo.py"], tmp_path / "out")
    text = fragments["run/tutorials/demo.py"]
    assert "```text\nhello from the build\n```" in text
    figure = re.search(r"```\{figure\} (\S+)", text).group(1)
    assert (docs / "tutorials" / figure).resolve() == (tmp_path / "out" / "run" / "tutorials" / "demo" / "curve.png")
    assert not (docs / "tutorials" / "curve.png").exists()
    with pytest.raises(RuntimeError, match="(?s)broken.py failed.*no data"):
        generate.run_scripts(docs, ["run/tutorials/broken.py"], tmp_path / "out")
    with pytest.raises(ValueError, match="no script"):
        generate.run_scripts(docs, ["run/../outside.py"], tmp_path / "out")


def test_quickstart_output_is_produced_by_running_it(generated):
    output = generated.fragments["run/quickstart.py"]
    lines = output.splitlines()[1:-1]
    regret = {line.split(":")[0].strip(): float(re.search(r"= +([\d.]+)", line).group(1)) for line in lines}
    assert set(regret) == {"rmed1", "random"}
    assert regret["rmed1"] < regret["random"] / 5  # what the index page says about it
    assert "rmed1" in lines[0] and "recommends arm 0" in lines[0]
    assert "```{generated} run/quickstart.py\n```" in (DOCS / "index.md").read_text()


def test_type_phrases_become_references_and_literals():
    phrases = import_docs_module("_type_phrases")
    aliases = {"ndarray": ":class:`~numpy.ndarray`", "array_like": ":term:`numpy:array_like`"}
    assert phrases.split_phrase("ndarray of int64, shape (K, K)") == ["ndarray", " of ", "int64", ", ",
                                                                     "shape (K, K)"]
    assert phrases.convert_phrase("ndarray of int64, shape (K, K)", aliases) == (
        ":class:`~numpy.ndarray` of :py:class:`int64`, shape ``(K, K)``")
    assert phrases.convert_phrase('{"copeland", "borda"}, default "copeland"', aliases) == (
        '``{"copeland", "borda"}``, *default* ``"copeland"``')
    assert phrases.convert_phrase("array_like or str, optional", aliases) == (
        ":term:`numpy:array_like` or :py:class:`str`, *optional*")
    assert phrases.convert_phrase("int or None", aliases) == ":py:class:`int` or :py:obj:`None`"
    assert phrases.convert_phrase("shipped name", aliases) == "shipped name"  # words name no object
    docstring = ["Summary.", "", "Parameters", "----------", "x : float, default 0.5", "    The value.",
                 "", "Returns", "-------", "ndarray, shape (K,)", "    The result."]
    converted = phrases.convert_docstring(docstring, aliases)
    assert converted[4] == "x : :py:class:`float`, *default* ``0.5``"
    assert converted[5] == "    The value."
    assert converted[9] == ":class:`~numpy.ndarray`, shape ``(K,)``"


def test_type_phrases_leave_prose_words_as_text():
    phrases = import_docs_module("_type_phrases")
    # Lower-case words that name no builtin or NumPy type are prose, not class names.
    assert phrases.convert_phrase("label or iterable of labels", {}) == "label or iterable of labels"
    assert phrases.convert_phrase("first, k", {}) == "first, k"
    assert phrases.convert_phrase("int, bool or int64", {}) == (
        ":py:class:`int`, :py:class:`bool` or :py:class:`int64`")
    assert phrases.convert_phrase("PreferenceMatrix or pathlib.Path", {}) == (
        ":py:class:`PreferenceMatrix` or :py:class:`pathlib.Path`")


def test_type_phrases_name_classes_as_the_docstring_s_module_binds_them():
    phrases = import_docs_module("_type_phrases")
    from dueling_gym.problems import PreferenceMatrix

    namespace = {"PreferenceMatrix": PreferenceMatrix, "Unrelated": 3}
    assert phrases.convert_phrase("PreferenceMatrix or None", {}, namespace) == (
        ":py:class:`~dueling_gym.problems.preference.PreferenceMatrix` or :py:obj:`None`")
    assert phrases.convert_phrase("Unrelated", {}, namespace) == ":py:class:`Unrelated`"  # not a class
    assert phrases.convert_phrase("int", {}, {"int": int}) == ":py:class:`int`"  # builtins keep their name
    assert phrases.convert_phrase("dueling_gym.envs.DuelingBanditEnv", {}) == (
        ":py:class:`~dueling_gym.envs.DuelingBanditEnv`")


def test_attribute_entries_naming_several_attributes_are_split():
    phrases = import_docs_module("_type_phrases")
    docstring = ["Summary.", "", "Attributes", "----------", "wins, losses : ndarray", "    Counts.", "",
                 "first, second", "    The pair.", "", "Parameters", "----------", "a, b : int", "    Two."]
    converted = phrases.convert_docstring(docstring, {"ndarray": ":class:`~numpy.ndarray`"})
    assert converted == ["Summary.", "", "Attributes", "----------",
                         "wins : :class:`~numpy.ndarray`", "    Counts.", "",
                         "losses : :class:`~numpy.ndarray`", "    Counts.", "",
                         "first", "    The pair.", "", "second", "    The pair.", "",
                         "Parameters", "----------", "a, b : :py:class:`int`", "    Two."]


def test_type_hints_name_aliases_instead_of_placeholders_and_expansions():
    phrases = import_docs_module("_type_phrases")
    placeholder = "TypeAliasForwardRef('numpy.typing.ArrayLike') | None"
    assert phrases.unwrap_forward_references(placeholder) == "numpy.typing.ArrayLike | None"
    assert phrases.unwrap_forward_references('dict[str, TypeAliasForwardRef("a.B")]') == "dict[str, a.B]"
    from numpy.typing import ArrayLike
    from sphinx.util.typing import stringify_annotation

    from dueling_gym.problems import PreferenceMatrix

    for mode, alias in (("fully-qualified", "numpy.typing.ArrayLike"), ("smart", "~numpy.typing.ArrayLike")):
        expansions = phrases.alias_expansions(mode)
        expanded = stringify_annotation(PreferenceMatrix | ArrayLike | str | None, mode)
        assert "_typing" in expanded  # what Sphinx writes for the evaluated union
        unwrapped = phrases.unwrap_forward_references(expanded, expansions)
        assert "_typing" not in unwrapped and alias in unwrapped
        assert unwrapped.endswith(f"{alias} | None")


class _FakeDocument:
    def __init__(self, annotations):
        self.autodoc_annotations = annotations


class _FakeApp:
    def __init__(self, annotations):
        from types import SimpleNamespace

        self.env = SimpleNamespace(current_document=_FakeDocument(annotations))
        self.config = SimpleNamespace(autodoc_typehints_format="fully-qualified",
                                      autodoc_type_aliases={"ArrayLike": "numpy.typing.ArrayLike"})


def test_class_type_hints_are_evaluated_from_the_initializer():
    phrases = import_docs_module("_type_phrases")
    from dueling_gym.wrappers import BordaReductionWrapper

    # What autodoc records for a class of a module with postponed annotations: the strings.
    annotations = {"dueling_gym.wrappers.BordaReductionWrapper": {"env": "gym.Env", "return": "None"}}
    app = _FakeApp(annotations)
    phrases.unwrap_type_aliases(app, "class", "dueling_gym.wrappers.BordaReductionWrapper", BordaReductionWrapper,
                                None, None, None)
    assert annotations["dueling_gym.wrappers.BordaReductionWrapper"]["env"] == "gymnasium.core.Env"
    # An attribute holding a callable gets the hints of its __call__, which are not its type.
    annotations["m.C.sampler"] = {"rng": "np.random.Generator"}
    phrases.unwrap_type_aliases(app, "attribute", "m.C.sampler", object(), None, None, None)
    assert "m.C.sampler" not in annotations


def test_intersphinx_inventories_are_the_script_output():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_inventories", DOCS / "_intersphinx" / "make_inventories.py")
    script = importlib.util.module_from_spec(spec)
    write_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(script)
    finally:
        sys.dont_write_bytecode = write_bytecode
    for project, entries in script.TABLES.items():
        stored = (DOCS / "_intersphinx" / f"{project}.inv").read_bytes()
        assert stored == script.inventory_bytes(project, entries), f"rerun make_inventories.py ({project})"
    from sphinx.util.inventory import InventoryFile

    numpy_inventory = InventoryFile.loads((DOCS / "_intersphinx" / "numpy.inv").read_bytes(),
                                          uri="https://numpy.org/doc/stable/")
    item = numpy_inventory.data["py:class"]["numpy.ndarray"]
    assert item.uri == "https://numpy.org/doc/stable/reference/generated/numpy.ndarray.html#numpy.ndarray"


def test_own_agents_say_they_implement_no_paper(generated):
    pages = import_docs_module("_algorithm_pages")
    for module in pages.OWN_AGENTS:
        assert pages.paper_links(module) == ()
        assert pages.OWN_AGENTS[module] in _page(generated, f"algorithms/generated/{module}")
    assert "none (this library's own agent)" in _page(generated, "algorithms/index")
