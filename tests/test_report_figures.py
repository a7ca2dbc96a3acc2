"""The library's figures: one style per agent across panels, bands that say what they are and stay
above zero, reference lines that do not flatten the curves, y labels in words, and "n/a" for one run."""

from __future__ import annotations

import numpy as np
import pytest

from dueling_gym.experiments.sweeps import report
from dueling_gym.experiments.plot_style import agent_styles, band_caption, percentile_band, regret_label
from dueling_gym.experiments.sweeps.report import RegretCurve, plot_regret, summary_markdown
from dueling_gym.stats import NO_SPREAD_NOTE, bootstrap_mean_interval

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

CHECKPOINTS = np.array([1, 10, 100, 1000, 10_000])


def _curve(agent: str, problem: str, runs: np.ndarray) -> RegretCurve:
    runs = np.asarray(runs, dtype=float)
    return RegretCurve(agent, problem, "copeland_komiyama", CHECKPOINTS, runs, np.ones(runs.shape[0], dtype=bool))


def _logarithmic(scale: float, n_runs: int = 4) -> np.ndarray:
    return np.outer(1.0 + np.arange(n_runs) / n_runs, scale * np.log1p(CHECKPOINTS))


def _drawn_figure(monkeypatch, curves, **kwargs):
    """The figure :func:`plot_regret` draws (kept instead of written)."""
    figures = []
    monkeypatch.setattr(report, "_save_figure", lambda figure, path, formats: figures.append(figure) or [])
    plot_regret(curves, "unused", **kwargs)
    return figures[0]


def _line_styles(figure, names):
    """Agent -> the set of (colour, line style, marker) its lines have in the figure's panels."""
    from matplotlib.colors import to_hex

    seen: dict[str, set] = {}
    for axis in figure.axes:
        for line in axis.get_lines():
            if line.get_label() in names:
                seen.setdefault(line.get_label(), set()).add((to_hex(line.get_color()), line.get_linestyle(),
                                                              line.get_marker()))
        for container in axis.containers:  # error bars: the data line of each
            if container.get_label() in names:
                line = container.lines[0]
                seen.setdefault(container.get_label(), set()).add((to_hex(line.get_color()), line.get_linestyle(),
                                                                   line.get_marker()))
    return seen


def test_thirty_agents_get_thirty_styles_and_two_of_one_colour_differ_in_line_and_marker():
    names = [f"agent_{index:02d}" for index in range(30)]
    styles = agent_styles(names)
    triples = [(s["color"], s["linestyle"], s["marker"]) for s in styles.values()]
    assert len(set(triples)) == 30
    for first in range(30):
        for second in range(first + 1, 30):
            a, b = triples[first], triples[second]
            if a[0] == b[0]:
                assert a[1] != b[1] and a[2] != b[2], (names[first], names[second])
    # Computed from the set of names, not their order: reading results in another order changes nothing.
    assert agent_styles(reversed(names + names[:4])) == styles
    with pytest.raises(TypeError, match="strings"):
        agent_styles(["rucb", 3])


def test_an_agent_keeps_its_style_in_every_panel_of_a_regret_figure(monkeypatch):
    rng = np.random.default_rng(5)
    names = [f"agent_{index:02d}" for index in range(30)]
    curves = []
    for problem in range(4):  # each panel draws its own subset of the agents, in its own order
        for name in rng.permutation(names)[:20 + problem * 3]:
            curves.append(_curve(str(name), f"problem{problem}", _logarithmic(1.0 + names.index(name))))
    figure = _drawn_figure(monkeypatch, curves)
    seen = _line_styles(figure, set(names))
    assert set(seen) == {curve.agent for curve in curves}
    assert all(len(styles) == 1 for styles in seen.values()), {k: v for k, v in seen.items() if len(v) > 1}
    assert len({next(iter(styles)) for styles in seen.values()}) == len(seen)  # and no two agents alike


def test_the_learned_figure_keeps_one_style_per_agent_and_bootstrap_bars_above_zero(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from dueling_gym.experiments.studies.learned_evaluation import _plot, _regret_rows

    rng = np.random.default_rng(0)
    horizons = [100, 1000, 10_000]
    per_run = {}
    agents = ["learned", "rucb", "ccb", "dts", "rmed1", "ecw_rmed", "savage", "btm", "scb"]
    for set_number, set_name in enumerate(["cyclic4", "gap", "mslr5-condorcet"]):
        for agent_number, agent in enumerate(agents):
            # Skewed runs: most near zero, one run locked onto a wrong arm (a t interval reaches below zero).
            regrets = np.outer(rng.exponential(1.0, 20), [1.0, 2.0, 3.0]) * (1 + (agent_number + set_number) % 5)
            regrets[0] *= 200.0
            per_run[set_name, agent] = regrets
    rows = _regret_rows(per_run, horizons)
    assert any(row["mean"] - row["ci95"] < 0 for row in rows)  # the t interval would cross zero here
    figures = []
    monkeypatch.setattr(Figure, "savefig", lambda self, *args, **kwargs: figures.append(self))
    _plot(rows, horizons, tmp_path / "regret.png", per_run)
    figure = figures[0]
    seen = _line_styles(figure, set(agents))
    assert seen and all(len(styles) == 1 for styles in seen.values())
    for axis in figure.axes:
        if axis.get_visible():
            assert axis.get_ylabel() == "cumulative regret (Copeland, Komiyama scale)"
            for container in axis.containers:
                low_bars = container.lines[2][0].get_segments()
                assert min(segment[:, 1].min() for segment in low_bars) >= 0.0
    assert any("error bars: 95% percentile-bootstrap interval of the mean" in text.get_text()
               and "20 runs per point" in text.get_text() for text in figure.texts)


def test_the_band_is_the_percentile_bootstrap_of_the_tables_and_the_figure_says_so(monkeypatch):
    skewed = np.zeros((10, CHECKPOINTS.size))
    skewed[0] = 50.0 * np.log1p(CHECKPOINTS)  # one run of ten pays, the others do not
    curve = _curve("rucb", "sushi", skewed)
    assert (curve.mean - curve.half_width).min() < 0  # Student's t would reach below zero
    low, high = curve.band
    assert low.min() >= 0.0
    assert (low[-1], high[-1]) == pytest.approx(bootstrap_mean_interval(skewed[:, -1]), rel=1e-12)
    figure = _drawn_figure(monkeypatch, [curve, _curve("ccb", "sushi", _logarithmic(3.0))])
    polygons = figure.axes[0].collections
    assert polygons and min(p.get_paths()[0].vertices[:, 1].min() for p in polygons) >= 0.0
    texts = " ".join(text.get_text() for text in figure.texts)
    assert "bands: 95% percentile-bootstrap interval of the mean (10 000 resamples of the runs), 4-10 runs per curve" \
        in texts.replace("\n", " ")


def test_percentile_band_checks_its_input():
    with pytest.raises(ValueError, match="shape"):
        percentile_band(np.zeros(5))
    with pytest.raises(ValueError, match="finite"):
        percentile_band(np.array([[1.0, np.nan], [2.0, 3.0]]))
    np.testing.assert_array_equal(percentile_band(np.array([[1.0, 2.0]]))[0], [1.0, 2.0])


def test_a_reference_line_far_above_the_curves_is_clipped_marked_and_in_the_legend(monkeypatch):
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots()
    curves = [_curve("rucb", "p", _logarithmic(5.0)), _curve("ccb", "p", _logarithmic(8.0))]
    data_top = max(float(c.band[1].max()) for c in curves)
    marked = report._draw_over_t(axis, curves, agent_styles(["rucb", "ccb"]), {"LB": 4.0, "ECWB": 400.0})
    top = axis.get_ylim()[1]
    # ECWB reaches 400 ln 10^4 = 3684 at T: the axis stays at the curves (and LB, which lies among them).
    assert data_top < top < 1.5 * data_top and marked
    assert any("off scale" in text.get_text() and "ECWB 3.68e+03" in text.get_text() for text in axis.texts)
    labels = axis.get_legend_handles_labels()[1]
    assert {"LB · ln t", "ECWB · ln t"} <= set(labels)
    for line in axis.get_lines():  # every dashed or dotted line has a legend entry
        if line.get_linestyle() in ("--", ":", "-.") and len(line.get_xdata()) > 1:
            assert not line.get_label().startswith("_"), line
    plt.close(figure)


def test_y_labels_are_words_and_the_figure_names_its_bounds(monkeypatch):
    from dueling_gym.problems import load_problem

    curves = [_curve("rucb", "cyclic4", _logarithmic(20.0)), _curve("ecw_rmed", "cyclic4", _logarithmic(10.0))]
    figure = _drawn_figure(monkeypatch, curves, problems={"cyclic4": load_problem("cyclic4")})
    assert figure.axes[0].get_ylabel() == "cumulative regret (Copeland, Komiyama scale)"
    assert "_" not in figure.axes[0].get_ylabel()
    texts = " ".join(text.get_text() for text in figure.texts).replace("\n", " ")
    assert "LB: the asymptotic regret lower bound" in texts and "Theorems 2 and 4" in texts
    assert regret_label("condorcet_weak", at_horizon=True) == "regret at T (weak Condorcet)"
    with pytest.raises(ValueError, match="unknown regret notion"):
        regret_label("copeland")


def test_one_run_prints_n_a_with_its_note_and_draws_no_band(monkeypatch, tmp_path, capsys):
    from dueling_gym.cli import main

    one = [_curve("rucb", "sushi", _logarithmic(2.0, n_runs=1))]
    table = summary_markdown(one)
    assert "± n/a" in table and "| n/a |" in table and NO_SPREAD_NOTE in table
    assert "± 0.0" not in table and "[" not in table.split("Intervals:")[0].split("|---|")[-1]
    figure = _drawn_figure(monkeypatch, one)
    assert not figure.axes[0].collections  # no band
    assert any("one run per curve: no bands (one run gives no spread)" in text.get_text() for text in figure.texts)
    assert band_caption([1, 5]).endswith("1-5 runs per curve (curves of one run have none)")
    # The summary the command line prints.
    assert main(["run", "--agents", "rucb", "--problems", "cyclic4", "--seeds", "1", "--horizon", "200",
                 "--out", str(tmp_path / "one"), "--no-progress", "--no-plot"]) == 0
    printed = capsys.readouterr().out
    assert "± n/a" in printed and NO_SPREAD_NOTE in printed and "± 0.0" not in printed


def test_the_learned_summary_prints_n_a_for_one_run():
    from dueling_gym.experiments.studies.learned_evaluation import _paired_summary, _regret_rows, _summary, paired_comparison

    per_run = {("gap", "learned"): np.array([[3.0, 9.0]]), ("gap", "rucb"): np.array([[4.0, 12.0]])}
    rows = _regret_rows(per_run, [100, 1000])
    text = _summary(rows, [100, 1000], per_run) + _paired_summary(paired_comparison(per_run, [100, 1000]))
    assert "± n/a" in text and NO_SPREAD_NOTE in text and "± 0.0" not in text


def test_the_sample_complexity_figure_names_its_sizes_and_its_points(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from dueling_gym.experiments.studies.sample_complexity import plot

    rows = [{"instance": f"l{l}_s0", "n_positions": l, "hardness": 10.0 * l, "agent": agent, "samples": 1000 * l,
             "seed": seed} for l in (2, 4) for agent in ("clucb_borda_exact", "clucb_borda_pac") for seed in (0, 1)]
    figures = []
    monkeypatch.setattr(Figure, "savefig", lambda self, *args, **kwargs: figures.append(self))
    plot(rows, 0.05, tmp_path / "samples.png")
    axis = figures[0].axes[0]
    assert "l = 2..4" in axis.get_title()  # the sizes drawn, not those of the full study
    assert any("each point: one run (2 per instance and agent)" in text.get_text() for text in figures[0].texts)
    assert "samples = H^B ln(1/δ)" in axis.get_legend_handles_labels()[1]
    with pytest.raises(ValueError, match="no runs"):
        plot([], 0.05, tmp_path / "none.png")
