"""The algorithm pages: every agent's example runs, the peers' comparison and its intervals."""

from __future__ import annotations

import math

import pytest

from dueling_gym.agents import AGENT_REGISTRY

from repository_paths import import_docs_module  # noqa: E402




AGENT_REGISTRY.load_all()
usage = import_docs_module("_algorithm_usage")
figures = import_docs_module("_algorithm_figures")


# Slow: a first run compiles each agent's kernels (minutes for all of them without a warm cache).
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(AGENT_REGISTRY))
def test_the_example_of_every_agent_runs(name, capsys):
    code = usage.example_code(name, horizon=200)
    exec(compile(code, f"<example of {name}>", "exec"), {"__name__": "__main__"})
    printed = capsys.readouterr().out
    assert printed.strip(), "the example prints its result"


def test_the_page_shows_the_example_with_its_own_horizon():
    lines = usage.example_section(["rmed2", "rmed2fh"])
    text = "\n".join(lines)
    assert text.startswith("## Example") and "```python" in text
    assert "make_agent('rmed2', problem.n_arms, seed=0)" in text
    assert "make_agent('rmed2fh', problem.n_arms, seed=0, horizon=10_000)" in text  # needs T: given it


def test_example_code_rejects_a_bad_horizon():
    for bad in (0, -5, 2.5, True):
        with pytest.raises(ValueError, match="horizon"):
            usage.example_code("rucb", horizon=bad)


def test_when_to_use_reads_the_catalogue():
    text = "\n".join(usage.when_to_use(["rucb", "ccb", "btm", "knockout"], {}))
    rows = {line.split(" | ")[0].strip("| `"): line for line in text.splitlines() if line.startswith("| `")}
    assert "yes: its guarantees assume a Condorcet winner" in rows["rucb"]
    assert "no: a Copeland winner always exists" in rows["ccb"] and "``" not in rows["ccb"]
    assert "Expected regret `O((K² + (C + L_C) K ln T) / Δ²)`" in rows["ccb"]  # CCB.guarantee
    assert "needs the horizon" in rows["btm"] and "anytime (no horizon)" in rows["rucb"]
    assert "identification" in rows["knockout"] and "stops by itself" in rows["knockout"]


# The library's own agents: a user's agent registered in the same process may declare nothing.
LIBRARY_AGENTS = sorted(name for name, cls in AGENT_REGISTRY.items() if cls.__module__.startswith("dueling_gym."))


@pytest.mark.parametrize("name", LIBRARY_AGENTS)
def test_every_library_agent_declares_what_its_paper_proves(name):
    cls = AGENT_REGISTRY[name]
    # Declared on the class itself: a subclass (SAVAGEBorda, SparringUCB1, ...) must not inherit
    # its parent's statement, which is about another variant.
    stated = vars(cls).get("guarantee")
    assert isinstance(stated, str) and stated.strip(), f"{cls.__name__} declares no guarantee"
    assert stated == " ".join(stated.split()) and stated.endswith("."), "one sentence, single-spaced"
    assert usage.guarantee(name) == stated


def test_the_guarantee_column_reads_the_class_attribute():
    rows = "\n".join(usage.when_to_use(["dts_plus", "learned"], {}))
    assert "No bound of its own" in rows and "None proven: dueling-gym's own" in rows
    assert "none declared" not in rows


def test_an_agent_without_a_guarantee_states_none(monkeypatch):
    class Plain:  # a user's agent: no ``guarantee`` attribute at all
        pass

    monkeypatch.setattr(usage, "AGENT_REGISTRY", {"mine": Plain})
    assert usage.guarantee("mine") == ""


def test_intervals_are_student_t_from_the_standard_error():
    from scipy.stats import t

    assert figures.half_width(10.0, 10) == pytest.approx(10.0 * t.ppf(0.975, 9))
    assert figures.half_width(10.0, 10) == pytest.approx(22.62, abs=0.01)
    assert math.isnan(figures.half_width(1.0, 1))
    with pytest.raises(ValueError, match="standard error"):
        figures.half_width(-1.0, 10)


def _regret(rows):
    return {(agent, problem): {"regret_mean": str(mean), "regret_sem": "1.0", "runs": "10", "n_arms": "5",
                               "horizon": "1000", "winner_rate": "1.0"} for agent, problem, mean in rows}


def test_peers_share_the_target_and_come_best_first():
    regret = _regret([("rucb", "gap", 50), ("rmed1", "gap", 20), ("ccb", "gap", 5), ("random", "gap", 100)])
    assert figures.peers(["rucb"], regret, ("gap",)) == ["rmed1", "rucb"]  # ccb targets Copeland
    assert figures.peers(["ccb"], regret, ("gap",)) == ["ccb"]


def test_comparison_figure_is_a_linear_dot_plot(tmp_path):
    pytest.importorskip("matplotlib")
    regret = _regret([("rucb", "gap", 50), ("rmed1", "gap", 20), ("random", "gap", 100)])
    image = tmp_path / "img" / "rucb.png"
    assert figures.comparison_figure(["rucb"], ["rmed1", "rucb"], regret, ("gap",), image, [])
    assert image.read_bytes().startswith(b"\x89PNG")
    table = "\n".join(figures.comparison_table(["rucb"], ["rmed1", "rucb"], regret, ("gap",)))
    assert "| **`rucb`** | 50 ± 2 |" in table and "| `random` | 100 ± 2 |" in table
