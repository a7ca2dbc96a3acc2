"""Reports of a sweep folder: CSV quoting, one summary per notion, figures that stay readable."""

from __future__ import annotations

import csv
import io
import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dueling_gym.cli import main
from dueling_gym.experiments.sweeps.report import MAX_PROBLEM_PANELS, RegretCurve, panel_layout, plot_regret, series_styles

HORIZON = "300"


def test_labels_with_commas_are_quoted_and_notions_do_not_overwrite(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(["run", "--agents", "ecw_rmed:alpha=2,beta=0.1", "rucb", "--problems", "mslr5-condorcet",
                 "multisol", "--seeds", "2", "--horizon", HORIZON, "--out", str(out), "--no-progress"]) == 0
    for name in ("summary.csv", "results.csv"):
        rows = list(csv.reader(io.StringIO((out / name).read_text())))
        assert len({len(row) for row in rows}) == 1, name  # no ragged rows
        assert any(row[:2] == ["ecw_rmed:alpha=2,beta=0.1", "mslr5-condorcet"] or row[1] == "ecw_rmed:alpha=2,beta=0.1"
                   for row in rows)
    summary = (out / "summary.md").read_text()
    assert summary.startswith("Regret notion: copeland_komiyama")
    assert "Regret notion: borda" in summary and "Regret notion: condorcet_strong" in summary
    notions = {row["notion"] for row in csv.DictReader(io.StringIO((out / "summary.csv").read_text()))}
    assert {"copeland_komiyama", "copeland_zoghi", "borda", "condorcet_strong"} <= notions
    before = {name: (out / name).read_text() for name in ("summary.md", "summary.csv")}
    regret_png = (out / "regret.png").read_bytes()
    capsys.readouterr()
    assert main(["plot", str(out), "--notion", "borda"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Regret notion: borda")
    assert {name: (out / name).read_text() for name in before} == before  # summaries hold every notion
    assert (out / "regret-borda.png").exists() and (out / "regret.png").read_bytes() == regret_png
    # MultiSol has no Condorcet winner: plotting a Condorcet notion is refused and writes nothing.
    with pytest.raises(SystemExit):
        main(["plot", str(out), "--notion", "condorcet_strong"])
    assert "multisol" in capsys.readouterr().err
    assert not (out / "regret-condorcet_strong.png").exists()
    assert {name: (out / name).read_text() for name in before} == before


def _curves(problems: int, family_size: int) -> list[RegretCurve]:
    checkpoints = np.array([1, 10, 100])
    curves = []
    for index in range(problems):
        family = f"family{index // family_size}" if family_size > 1 else f"shipped{index}"
        for agent in ("a", "b"):
            curves.append(RegretCurve(agent, f"{family}-K{3 + index % 5}-s{index}", "copeland_komiyama", checkpoints,
                                      np.ones((2, 3)) * index, np.array([True, False]), family, 3 + index % 5))
    return curves


def test_a_few_problems_get_a_panel_each():
    panels = panel_layout(_curves(MAX_PROBLEM_PANELS, 4))
    assert len(panels) == MAX_PROBLEM_PANELS and {p.kind for p in panels} == {"problem"}


def test_problem_families_are_pooled_above_the_threshold():
    panels = panel_layout(_curves(850, 850))  # the full agrawal2019 preset: one family of 850 matrices
    assert [p.kind for p in panels] == ["family", "family_vs_k"]
    assert len(panels[0].curves) == 1700
    with pytest.raises(ValueError, match="panels"):
        panel_layout(_curves(40, 1))  # 40 unrelated problems cannot be pooled


def test_many_generated_problems_plot_as_two_family_panels(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    problems = [f"unique_copeland_winner:n_arms={k},problem_seed={s}" for k in (3, 4, 5, 6, 7) for s in range(3)]
    out = tmp_path / "family"
    assert main(["run", "--agents", "rucb", "random", "--problems", *problems, "sushi", "--seeds", "1",
                 "--horizon", "200", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "| unique_copeland_winner | 3 | rucb | 3 | 3 | 200 |" in printed  # pooled per family and K
    assert "| sushi | 16 | random | 1 | 1 | 200 |" in printed
    from PIL import Image

    width, height = Image.open(out / "regret.png").size
    assert width < 2500 and height < 1200  # three panels, not sixteen


def test_forty_series_get_distinct_styles():
    labels = [f"agent{i}" for i in range(40)]
    styles = series_styles(labels + labels[:5])  # repeated labels keep their first style
    assert list(styles) == labels
    triples = {(s["color"], s["linestyle"], s["marker"]) for s in styles.values()}
    assert len(triples) == 40
    assert {s["linestyle"] for s in list(styles.values())[:10]} == {"-"}  # ten agents: plain solid lines
    assert len({s["color"] for s in list(styles.values())[:10]}) == 10
    assert len({(s["color"], s["linestyle"], s["marker"]) for s in series_styles(map(str, range(280))).values()}) == 280


def test_legend_of_thirty_agents_sits_outside_every_panel(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    checkpoints = np.array([1, 10, 100, 1000])
    curves = [RegretCurve(f"agent_{a:02d}", f"problem{p}", "copeland_komiyama", checkpoints,
                          np.outer(np.ones(2), np.log1p(checkpoints)) * (a + 1), np.array([True, False]))
              for p in range(7) for a in range(30)]
    seen = {}
    original = Figure.savefig

    def keep(self, *args, **kwargs):
        written = original(self, *args, **kwargs)
        renderer = self.canvas.get_renderer()  # the Agg canvas, before the figure is closed
        [seen["legend"]] = self.legends
        seen["box"] = seen["legend"].get_window_extent(renderer)
        # each visible panel with its tick labels, x-label and title
        seen["panels"] = {axis.get_title(): axis.get_tightbbox(renderer) for axis in self.axes if axis.get_visible()}
        return written

    monkeypatch.setattr(Figure, "savefig", keep)
    [png] = plot_regret(curves, tmp_path / "regret", formats=("png",), title="thirty agents")
    legend, box = seen["legend"], seen["box"]
    assert len(legend.get_texts()) == 30 and len(seen["panels"]) == 7
    for title, panel in seen["panels"].items():
        assert not box.overlaps(panel), title
    handles = {(line.get_color(), line.get_linestyle(), line.get_marker()) for line in legend.get_lines()}
    assert len(handles) == 30
    from PIL import Image

    width, height = Image.open(png).size
    assert height * 72 / 130 > box.y1 - box.y0  # the saved image holds the legend


def test_the_figure_title_is_in_the_saved_image(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    from PIL import Image

    checkpoints = np.array([1, 10, 100])
    curves = [RegretCurve("agent", "sushi", "copeland_komiyama", checkpoints, np.array([[0.0, 1.0, 2.0]] * 2),
                          np.array([True, True]))]
    [plain] = plot_regret(curves, tmp_path / "plain", formats=("png",))
    saved = {}
    original = Figure.savefig

    def keep(self, *args, **kwargs):
        renderer = self.canvas.get_renderer()
        saved["box"] = self.get_tightbbox(renderer, bbox_extra_artists=kwargs.get("bbox_extra_artists"))
        saved["title"] = self._suptitle.get_window_extent(renderer).transformed(self.dpi_scale_trans.inverted())
        saved["text"] = self._suptitle.get_text()
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    [titled] = plot_regret(curves, tmp_path / "titled", formats=("png",), title="A title")
    # The saved (tight) box holds the title: it used to be cut off.
    assert saved["text"] == "A title" and saved["box"].y1 >= saved["title"].y1
    assert Image.open(titled).size[1] > Image.open(plain).size[1]


def test_output_folder_errors_are_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    base = ["run", "--agents", "rucb", "--problems", "sushi", "--seeds", "1", "--horizon", "10", "--no-progress"]
    for out, pattern in [(tmp_path / "file", "is a file"), (tmp_path / "no" / "such", "does not exist")]:
        with pytest.raises(SystemExit) as excinfo:
            main([*base, "--out", str(out)])
        assert excinfo.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and pattern in err[0]


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root ignores folder permissions")
def test_read_only_folder_is_a_one_line_error(tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(SystemExit):
            main(["run", "--agents", "rucb", "--problems", "sushi", "--seeds", "1", "--horizon", "10",
                  "--no-progress", "--out", str(folder / "x")])
        assert "permission denied" in capsys.readouterr().err
    finally:
        folder.chmod(0o755)


def test_write_failures_are_one_line(tmp_path, capsys, monkeypatch):
    from dueling_gym.experiments.runs import runner

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runner, "atomic_write_text", full_disk)  # the runner writes a sweep's manifest
    with pytest.raises(SystemExit) as excinfo:
        main(["run", "--agents", "rucb", "--problems", "sushi", "--seeds", "1", "--horizon", "10", "--no-progress",
              "--out", str(tmp_path / "x")])
    assert excinfo.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left" in err[0]


# Valid words are repeated so that a good share of the drawn command lines run.
VALID_AGENTS = ["rucb", "RUCB", "rmed1", "random", "rucb:alpha=0.6", "rucb:alpha=0.51", "ecw_rmed:alpha=2,beta=0.1"] * 4
VALID_PROBLEMS = ["cyclic4", "cyclic", "multisol", "unique_copeland_winner:n_arms=3,problem_seed=1",
                  "unique_copeland_winner:n_arms=3,problem_seed=1,min_gap=0.0"] * 5
AGENT_WORDS = VALID_AGENTS + ["rucb:alpha=-1", "rucb:alpha=abc", "rucb:alpha",
               "rucb:alpha=1,alpha=2", "nope", "", ":", "rucb:=3", "ecw_rmed:alpha=2,beta=0.1", "linear_ucb"]
PROBLEM_WORDS = VALID_PROBLEMS + ["sushi:n_arms=3", "sush", "",
                 "unique_copeland_winner:n_arms=3,problem_seed=1", "unique_copeland_winner:n_arms=abc,problem_seed=1",
                 "unique_copeland_winner:n_arms=1,problem_seed=1", "unique_copeland_winner:n_arms=3",
                 "unique_copeland_winner:n_arms=3,problem_seed=-2", "unique_copeland_winner:n_arms=3,problem_seed=1,x=1",
                 "unique_copeland_winner:n_arms=3,problem_seed=1,min_gap=0.7"]
SEED_WORDS = ["2", "1,1,2"] * 4 + ["0-1", "3-1", "-1", "a", "0", "1,", "99999999999", "2-", "1,-1"]
HORIZON_WORDS = ["20"] * 6 + ["0", "-5", "x", "1"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(agents=st.lists(st.sampled_from(AGENT_WORDS), min_size=1, max_size=3),
       problems=st.lists(st.sampled_from(PROBLEM_WORDS), min_size=1, max_size=3),
       seeds=st.sampled_from(SEED_WORDS), horizon=st.sampled_from(HORIZON_WORDS),
       notion=st.sampled_from([None, "copeland_komiyama", "condorcet_strong", "borda"]))
def test_any_command_line_runs_correctly_or_fails_in_one_line(tmp_path_factory, capsys, agents, problems, seeds,
                                                            horizon, notion):
    out = tmp_path_factory.mktemp("cli") / "out"
    argv = ["run", "--agents", *agents, "--problems", *problems, "--seeds", seeds, "--horizon", horizon,
            "--out", str(out), "--no-progress", "--no-plot"] + (["--notion", notion] if notion else [])
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    if code != 0:
        assert code == 2
        errors = [line for line in captured.err.splitlines() if "error" in line]
        assert len(errors) == 1, captured.err
        assert not out.exists()  # refused before anything was written
        return
    # Success: every distinct unit ran once and the table counts each once.
    event("ran")
    rows = list(csv.DictReader(io.StringIO((out / "summary.csv").read_text())))
    units = list((out / "units").glob("*.json"))
    first_notion = rows[0]["notion"]
    assert sum(int(row["runs"]) for row in rows if row["notion"] == first_notion) == len(units)


def _curve(agent: str, values, runs: int = 3):
    from dueling_gym.experiments.sweeps.report import RegretCurve

    t = np.array([1, 10, 100, 1000, 10_000])
    values = np.asarray(values, dtype=float)
    return RegretCurve(agent, "p", "copeland_komiyama", t, np.vstack([values] * runs), np.ones(runs, dtype=bool))


def test_the_y_axis_shows_the_sublinear_curves_and_the_bounds_and_marks_the_linear_ones():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dueling_gym.experiments.sweeps.report import _draw_over_t, series_styles

    logarithmic = _curve("ccb", [0, 20, 40, 60, 80])
    linear = _curve("rucb", [0, 5, 50, 500, 5000])
    styles = series_styles(["ccb", "rucb"])
    figure, axis = plt.subplots()
    _draw_over_t(axis, [logarithmic, linear], styles, {"LB": 10.0})
    top = axis.get_ylim()[1]
    # The logarithmic curve and the bound (10 ln 10^4 = 92.1) fit; the linear one is marked off scale.
    assert 92.1 < top < 5000 / 10 and axis.get_yscale() == "linear"
    assert any("off scale" in text.get_text() and "rucb 5e+03" in text.get_text() for text in axis.texts)
    figure, axis = plt.subplots()
    _draw_over_t(axis, [linear, _curve("savage", [0, 3, 30, 300, 3000])], styles | series_styles(["savage"]), {"LB": 10.0})
    assert axis.get_yscale() == "log"  # every agent linear at this horizon: nothing hidden
    plt.close("all")


def test_plot_draws_a_folder_with_the_title_it_was_run_with(tmp_path, monkeypatch):
    from dueling_gym.cli import main
    from dueling_gym.experiments.sweeps import report
    from dueling_gym.experiments.sweeps.sweep import SweepSpec, execute_sweep

    execute_sweep(SweepSpec(agents=("rucb",), problems=("cyclic4",), seeds=(0, 1), horizon=200), tmp_path / "run",
                  progress=False, title="A preset's title")
    titles = []
    monkeypatch.setattr(report, "plot_regret", lambda *args, **kwargs: titles.append(kwargs["title"]) or [])
    assert main(["plot", str(tmp_path / "run")]) == 0
    assert titles == ["A preset's title"]


def test_summaries_give_a_bootstrap_interval_beside_the_t_interval_and_say_how_each_is_made():
    from dueling_gym.experiments.sweeps.report import summary_csv, summary_markdown, summary_rows
    from dueling_gym.stats import bootstrap_mean_interval, mean_half_width

    # Bimodal regret at T: eight runs found the winner, two locked onto a wrong arm.
    finals = np.array([10.0, 11, 9, 12, 10, 11, 9, 10, 900, 950])
    runs = np.column_stack([np.zeros_like(finals), finals / 2, finals])
    curve = RegretCurve("ccb", "gap", "copeland_komiyama", np.array([1, 10, 100]), runs, np.ones(10, dtype=bool))
    row = summary_rows([curve])[0]
    assert row["ci95"] == pytest.approx(mean_half_width(finals))
    assert (row["bootstrap_low"], row["bootstrap_high"]) == bootstrap_mean_interval(finals)
    # The skewed sample's bootstrap interval is not symmetric about the mean, and starts above the t interval's low end.
    mean = finals.mean()
    assert row["bootstrap_low"] > mean - row["ci95"] and mean - row["bootstrap_low"] != pytest.approx(
        row["bootstrap_high"] - mean, rel=0.05)
    text = summary_markdown([curve])
    assert f"[{row['bootstrap_low']:.1f}, {row['bootstrap_high']:.1f}]" in text
    assert "Student's t" in text and "percentile-bootstrap" in text
    parsed = next(csv.DictReader(io.StringIO(summary_csv([curve]))))
    assert float(parsed["bootstrap_high"]) == pytest.approx(row["bootstrap_high"])
