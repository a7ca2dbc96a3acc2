"""Presets: the published experiments that :func:`~dueling_gym.experiments.reproduce` (``dueling-gym reproduce NAME``) runs.

Each preset has a full version (the paper's protocol) and a ``quick`` version that finishes in
a few minutes on two cores.  A preset is a type per kind of study: :class:`Preset` runs a
regret sweep, :class:`SampleComplexityPreset` the CPE-DB sample-complexity study and
:class:`LearnedPreset` the evaluation of the learned policies; each knows how to run and
report itself (:meth:`Preset.run`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from dueling_gym.experiments.sweeps.folder_report import Report

__all__ = ["Preset", "BaselinesPreset", "SampleComplexityPreset", "LearnedPreset", "PRESETS", "get_preset", "reproduce"]


@dataclass(frozen=True)
class Preset:
    """A reproducible experiment; this base class runs a regret sweep.

    ``full`` and ``quick`` hold the keyword arguments of the study: for a regret sweep those of
    :class:`~dueling_gym.experiments.sweeps.sweep.SweepSpec` (agents, problems, seeds, horizon, ...).
    Subclasses for other studies set :attr:`kind` and implement :meth:`run` and :meth:`describe`.
    """

    name: str
    title: str
    reference: str
    full: dict[str, Any]
    quick: dict[str, Any]
    notion: str = "copeland_komiyama"
    notes: str = ""
    #: The kind of study (``"regret"``, ``"pure_exploration"``, ``"learned"``).
    kind: ClassVar[str] = "regret"

    def sweep_arguments(self, quick: bool) -> dict[str, Any]:
        """The study's keyword arguments at the chosen size (a copy)."""
        return dict(self.quick if quick else self.full)

    def label(self, quick: bool) -> str:
        return f"{self.title} [{'quick' if quick else 'full'}]"

    def describe(self, quick: bool) -> str:
        """One line: what :meth:`run` will do."""
        from dueling_gym.experiments.sweeps.sweep import SweepSpec

        spec = SweepSpec(**self.sweep_arguments(quick))
        return (f"{self.label(quick)}: {len(spec.agents)} agents x {len(spec.problems)} problems x "
                f"{len(spec.seeds)} seeds, T = {spec.horizon}")

    def run(self, out_dir: Path, *, quick: bool = False, jobs: int = 1, backend: str = "local",
            address: str | None = None, progress: bool = True, plot: bool = True, notion: str | None = None,
            svg: bool = False) -> Report:
        """Run the study into ``out_dir`` (only what is missing) and write its report."""
        from dueling_gym.experiments.sweeps.folder_report import run_and_report
        from dueling_gym.experiments.sweeps.sweep import SweepSpec

        return run_and_report(SweepSpec(**self.sweep_arguments(quick)), out_dir, jobs=jobs, backend=backend,
                              address=address, progress=progress, notion=notion or self.notion,
                              title=self.title + (" (quick)" if quick else ""), plot=plot, svg=svg)


@dataclass(frozen=True)
class BaselinesPreset(Preset):
    """A regret sweep of every registered regret-minimising dueling agent (default
    hyperparameters) that can play every problem of the preset: read from the registry when the
    preset runs, so a new agent joins it by registering (``full``/``quick`` hold the rest of the
    sweep's arguments).  The learned policy is left out: this preset reproduces the published
    algorithms, and the learned one has a preset of its own, on held-out problems
    (``learned-vs-classic``)."""

    def sweep_arguments(self, quick: bool) -> dict[str, Any]:
        from dueling_gym.agents.catalogue import regret_minimisers
        from dueling_gym.experiments.sweeps.sweep import ProblemSpec

        arguments = dict(self.quick if quick else self.full)
        arm_counts = sorted({ProblemSpec.parse(problem).build().n_arms for problem in arguments["problems"]})
        agents = tuple(name for name in regret_minimisers(arm_counts) if name != "learned")
        return {"agents": agents, **arguments}


@dataclass(frozen=True)
class SampleComplexityPreset(Preset):
    """The CPE-DB sample-complexity study (``full``/``quick``: ``seeds``, ``delta``)."""

    kind: ClassVar[str] = "pure_exploration"

    def describe(self, quick: bool) -> str:
        return self.label(quick)

    def run(self, out_dir: Path, *, quick: bool = False, jobs: int = 1, backend: str = "local",
            address: str | None = None, progress: bool = True, plot: bool = True, notion: str | None = None,
            svg: bool = False) -> Report:
        from dueling_gym.atomic_files import atomic_write_text
        from dueling_gym.experiments.studies.sample_complexity import plot as plot_study
        from dueling_gym.experiments.studies.sample_complexity import run_study, table

        options = self.sweep_arguments(quick)
        rows = run_study(out_dir, quick=quick, seeds=options["seeds"], delta=options["delta"], jobs=jobs,
                         progress=progress, backend=backend, address=address)
        text = table(rows, options["delta"])
        files = [out_dir / "summary.txt"]
        atomic_write_text(files[0], text + "\n")
        if plot:
            files.append(out_dir / "samples_vs_hardness.png")
            plot_study(rows, options["delta"], files[-1])
        return Report(out_dir, text, tuple(files))


@dataclass(frozen=True)
class LearnedPreset(Preset):
    """The learned policies against every classic agent (``full``/``quick``: the arguments of
    :func:`~dueling_gym.experiments.studies.learned_evaluation.evaluate`)."""

    kind: ClassVar[str] = "learned"

    def describe(self, quick: bool) -> str:
        options = self.sweep_arguments(quick)
        counts = options["n_problems"]
        per_family = (f"{counts} problems" if isinstance(counts, int) else
                      ", ".join(f"{count} (K = {k})" for k, count in counts.items()) + " problems")
        return (f"{self.label(quick)}: K = {', '.join(map(str, options['n_arms']))}, {per_family} per family, "
                f"T = {', '.join(map(str, options['horizons']))}")

    def run(self, out_dir: Path, *, quick: bool = False, jobs: int = 1, backend: str = "local",
            address: str | None = None, progress: bool = True, plot: bool = True, notion: str | None = None,
            svg: bool = False) -> Report:
        from dueling_gym.atomic_files import atomic_write_text
        from dueling_gym.experiments.studies.learned_consistency import check_consistency, consistency_summary
        from dueling_gym.experiments.studies.learned_evaluation import evaluate

        options = self.sweep_arguments(quick)
        if out_dir.exists() and not out_dir.is_dir():
            raise ValueError(f"--out {out_dir} is a file, not a folder")
        run = dict(jobs=jobs, progress=progress, backend=backend, address=address)
        evaluate(out_dir, n_arms=options["n_arms"], horizons=options["horizons"], n_problems=options["n_problems"],
                 published=options["published"], follow_up_problems=options["follow_up_problems"],
                 follow_up_horizon=options["follow_up_horizon"], plot=plot, **run)
        for stale in ("consistency.csv", "consistency_paired.csv"):  # from an earlier run into the same folder
            (out_dir / stale).unlink(missing_ok=True)
        if options.get("consistency"):
            rows = check_consistency(out_dir, **options["consistency"], **run)
            summary = out_dir / "summary.md"
            atomic_write_text(summary, consistency_summary(rows) + "\n" + summary.read_text())
        names = ("regret.csv", "paired.csv", "follow_up.csv", "robustness.csv", "consistency.csv",
                 "consistency_paired.csv", "summary.md", "regret.png")
        files = tuple(out_dir / name for name in names if (out_dir / name).exists())
        return Report(out_dir, (out_dir / "summary.md").read_text(), files)


_KOMIYAMA_AGENTS = ("random", "savage", "rucb", "rmed1", "ccb", "ecw_rmed")
_KOMIYAMA_PROBLEMS = ("sushi", "arxiv", "mslr5-condorcet", "mslr5-noncondorcet", "gap", "multisol", "cyclic4")
#: Held-out problems per family and K of ``learned-vs-classic``: fewer at K = 16, where CW-RMED's
#: per-duel optimisation costs about 30 s a run of 10^4 duels (300 problems would take about six hours
#: of one core, 20 take 25 minutes).
_LEARNED_PROBLEMS = {4: 300, 5: 300, 8: 300, 16: 20}
#: Fresh problems per family of its second stage; none at K = 16 (the same cost).
_LEARNED_FOLLOW_UPS = {4: 40_000, 5: 40_000, 8: 40_000, 16: 0}
#: The learned agent as shipped, with the safeguard from duel 1000 and with the Thompson check from
#: duel 1000, in the consistency check.
_LEARNED_VARIANTS = {"as shipped": {}, "safeguard from 1000": {"safeguard_from": 1000},
                     "Thompson check from 1000": {"thompson_check_from": 1000}}
#: Classic agents beside it, on the same runs: the two asymptotically optimal ones (RMED1 for a
#: Condorcet winner, ECW-RMED for Copeland winners), D-TS+ (a proven O(K^2 log T) Copeland bound) and
#: Winner Stays (strong), the best classic agent of most published rows at 10^4.
_CONSISTENCY_REFERENCES = ("rmed1", "ecw_rmed", "dts_plus", "winner_stays_strong")




def _random_matrices(arm_counts: range | tuple[int, ...], games: int) -> tuple[str, ...]:
    return tuple(f"unique_copeland_winner:n_arms={k},problem_seed={game}" for k in arm_counts for game in range(games))


def _random_games(games: int, lowest: int, highest: int, seed: int) -> tuple[str, ...]:
    """``games`` random matrices with a unique Copeland winner, each with its number of arms drawn
    uniformly from ``lowest..highest`` by a generator seeded with ``seed`` (fixed, so the preset is
    the same sweep on every machine)."""
    arm_counts = np.random.default_rng(seed).integers(lowest, highest + 1, size=games)
    return tuple(f"unique_copeland_winner:n_arms={int(k)},problem_seed={game}" for game, k in enumerate(arm_counts))


#: The presets of ``dueling-gym reproduce`` (and :func:`~dueling_gym.experiments.reproduce`), by name.
PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in [
        Preset(
            name="komiyama2016",
            title="Copeland regret on the published matrices (ECW-RMED paper, Figures 1-2)",
            reference="Komiyama, Honda, Nakagawa, ICML 2016, Section 7 and Appendix A",
            full=dict(agents=_KOMIYAMA_AGENTS, problems=_KOMIYAMA_PROBLEMS, seeds=tuple(range(100)), horizon=10**6),
            quick=dict(agents=_KOMIYAMA_AGENTS, problems=_KOMIYAMA_PROBLEMS, seeds=tuple(range(10)), horizon=10**5),
            notes="100 runs, T = 10^6, arm order shuffled per run; LB and ECWB lines drawn in Komiyama units. "
                  "SAVAGE needs the horizon: its curve is one run with horizon T (the paper runs one per horizon).",
        ),
        Preset(
            name="komiyama2016-sushi",
            title="Copeland regret on Sushi (ECW-RMED paper, Figure 1)",
            reference="Komiyama, Honda, Nakagawa, ICML 2016, Figure 1",
            full=dict(agents=_KOMIYAMA_AGENTS, problems=("sushi",), seeds=tuple(range(100)), horizon=10**6),
            quick=dict(agents=_KOMIYAMA_AGENTS, problems=("sushi",), seeds=tuple(range(8)), horizon=20_000),
            notes="The paper's scale, 6 algorithms x 100 runs x 10^6 duels; the full run is also a throughput check.",
        ),
        Preset(
            name="zoghi2015-scalability",
            title="CCB, SCB and RUCB on the 500-armed synthetic problem (CCB paper, Figure 2)",
            reference="Zoghi, Karnin, Whiteson, de Rijke, NIPS 2015, Appendix A, Figure 2",
            full=dict(agents=("ccb", "scb", "rucb"), problems=("zoghi2015_scalability:n_arms=500,problem_seed=0",),
                      seeds=tuple(range(10)), horizon=10**7),
            quick=dict(agents=("ccb", "scb", "rucb"), problems=("zoghi2015_scalability:n_arms=100,problem_seed=0",),
                       seeds=tuple(range(2)), horizon=10**5),
            notion="copeland_zoghi",
            notes="Three Copeland winners in a cycle (score 498), the other arms 0..496; winning probabilities "
                  "uniform on [0.6, 0.9] (the paper prints none). RUCB is the one baseline the paper keeps for "
                  "this figure. The paper gives neither horizon nor run count: T = 10^7 and 10 runs fit 30 minutes "
                  "on two cores. SCB's epoch-5 solver needs about 4.7e7 duels here, so at T = 10^7 SCB is still "
                  "exploring; docs/algorithms/scb.md follows it to 10^8.",
        ),
        Preset(
            name="agrawal2019",
            title="RUCB, DTS and Sup-KLUCB on random matrices with a unique Copeland winner",
            reference="Agrawal, Chaporkar, 2019, Section 5",
            full=dict(agents=("rucb", "dts", "sup_klucb"), problems=_random_games(25, 3, 36, seed=2019),
                      seeds=tuple(range(25)), horizon=10**5),
            quick=dict(agents=("rucb", "dts", "sup_klucb"), problems=_random_matrices((4, 8, 12), 2),
                       seeds=(0, 1), horizon=20_000),
            notes="Figure (a) of the paper: 25 games, each a random matrix with a unique Copeland winner and a "
                  "number of arms drawn from 3..36, each played 25 times up to T = 10^5. The games form one "
                  "generator family, so the figure pools them: mean regret over t per algorithm and regret at T "
                  "against K (the per-game rows are in summary.csv). The paper's figure (b) (100 games) is not "
                  "part of the preset: four times the cost for the same comparison.",
        ),
        SampleComplexityPreset(
            name="chen2020-cpe-db",
            title="CPE-DB sample complexity: CLUCB-Borda samples to stop vs the Borda hardness",
            reference="Chen, Du, Huang, Zhao, ICML 2020, Theorem 3 (CLUCB-Borda)",
            full=dict(seeds=3, delta=0.05),
            quick=dict(seeds=1, delta=0.05),
            notes="27 random bipartite instances with l = 2..10 positions (5 when quick); "
                  "samples to stop plotted against H^B ln(1/delta).",
        ),
        BaselinesPreset(
            name="baselines",
            title="Every regret-minimising dueling agent on the seven published matrices",
            reference="the agents' papers (dueling-gym agents); matrices of Komiyama, Honda, Nakagawa, ICML 2016, "
                      "Appendix A",
            full=dict(problems=_KOMIYAMA_PROBLEMS, seeds=tuple(range(10)), horizon=10**5),
            quick=dict(problems=_KOMIYAMA_PROBLEMS, seeds=(0, 1), horizon=10**4),
            notes="30 agents x 7 matrices x 10 runs, T = 10^5, arm order shuffled per run, default hyperparameters "
                  "(horizon-aware agents get T). About two minutes with --jobs 2; CW-RMED takes half of it (its "
                  "per-step optimisation). Copeland regret in Komiyama units, so the agents that target the "
                  "Condorcet winner pay linear regret on the three matrices without one (MSLR-5 non-Condorcet, "
                  "Gap, MultiSol).",
        ),
        LearnedPreset(
            name="learned-vs-classic",
            title="The shipped learned policies against every classic agent on held-out problems",
            reference="dueling-gym (learned agent); generator families of Komiyama et al. 2016 and Zoghi et al. 2015",
            full=dict(n_arms=(4, 5, 8, 16), horizons=(100, 1000, 10_000), n_problems=_LEARNED_PROBLEMS,
                      published=_KOMIYAMA_PROBLEMS, follow_up_problems=_LEARNED_FOLLOW_UPS, follow_up_horizon=1000,
                      consistency=dict(published=_KOMIYAMA_PROBLEMS, runs=20, horizon=10_000, long_horizon=100_000,
                                       further_horizon=1_000_000, variants=_LEARNED_VARIANTS,
                                       references=_CONSISTENCY_REFERENCES)),
            quick=dict(n_arms=(5,), horizons=(100, 1000), n_problems=10, published=(),
                       follow_up_problems=20, follow_up_horizon=1000,
                       consistency=dict(published=("cyclic4",), runs=2, horizon=1000, long_horizon=10_000,
                                        variants=_LEARNED_VARIANTS, references=("rmed1",))),
            notes="Held-out problems of no_condorcet_winner, unique_copeland_winner and utility_based with 4, 5, 8 "
                  "and 16 arms (fresh draws from a stream independent of training and validation; 300 per family, "
                  "20 at K = 16), one run each, plus the seven published matrices (20 runs each, the arms relabelled "
                  "run by run: the published order lists the best arm first). Mean cumulative "
                  "Copeland regret (Komiyama units) at each horizon; horizon-aware agents are run once per horizon. "
                  "Then, at T = 1000, every classic agent the policy is not yet below (paired, 95%) on a family "
                  "plays it again on 40 000 fresh problems of that family (K = 4, 5, 8): one run's regret varies by "
                  "about 100 units from problem to problem, so 300 problems leave a half-width near 11 and 40 000 "
                  "bring it near 1. Last, the consistency check: the learned policy (as shipped, and with its "
                  "safeguard from duel 1000) on the published matrices to T = 10^6, the same 20 runs, and its "
                  "regret's growth from 10^4 to 10^5 and from 10^5 to 10^6 (at most 2 reads as logarithmic; an "
                  "agent still exploring at 10^4 may grow more in the first step only), beside RMED1, ECW-RMED, "
                  "D-TS+ and Winner Stays (strong) on the same runs, with every agent's regret at 10^6 as a share of "
                  "the lower bound LB ln T (Komiyama et al. 2016, Theorem 2).",
        ),
    ]
}


def get_preset(name: str) -> Preset:
    """A preset by name; ValueError lists the valid names."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    return PRESETS[name]


def preset_folder(preset: Preset, quick: bool) -> Path:
    """The default results folder of a preset: ``results/NAME`` (``results/NAME-quick``)."""
    return Path("results") / (preset.name + ("-quick" if quick else ""))


def reproduce(name: str, *, quick: bool = False, out: str | os.PathLike | None = None, jobs: int = 1,
              backend: str = "local", address: str | None = None, progress: bool = True, plot: bool = True,
              notion: str | None = None, svg: bool = False) -> Report:
    """Run the preset ``name`` (only what its folder lacks) and write its report.

    Parameters
    ----------
    name : str
        A preset of :data:`~dueling_gym.experiments.studies.presets.PRESETS` (``dueling-gym reproduce --list``).
    quick : bool, default False
        The preset's quick version (a few minutes on two cores) instead of the paper's protocol.
    out : path, optional
        The results folder (default: :func:`~dueling_gym.experiments.studies.presets.preset_folder`, ``results/NAME[-quick]``).
    jobs, backend, address, progress :
        Where and how the units run (see :func:`~dueling_gym.experiments.sweeps.sweep.run_sweep`).
    plot, svg :
        Draw the figure (PNG, and SVG too).
    notion : str, optional
        The regret notion of the figure (default: the preset's).

    Returns
    -------
    Report
        The folder, the summary table, the files written and the verified records.

    Examples
    --------
    >>> report = reproduce("komiyama2016", quick=True, out="results/k16", jobs=2)  # doctest: +SKIP
    >>> print(report.summary)  # doctest: +SKIP
    """
    preset = get_preset(name)
    if out is None:
        out_dir = preset_folder(preset, quick)
        out_dir.parent.mkdir(exist_ok=True)
    else:
        out_dir = Path(out)
    return preset.run(out_dir, quick=quick, jobs=jobs, backend=backend, address=address, progress=progress,
                      plot=plot, notion=notion, svg=svg)
