"""A results folder's report as a Python call: run a sweep, write its tables and figures, return them.

Everything ``dueling-gym run``, ``plot`` and ``reproduce`` do is a call here first; the command
line only parses arguments and prints what comes back:

* :func:`~dueling_gym.experiments.run_and_report` runs a :class:`~dueling_gym.experiments.sweeps.sweep.SweepSpec` into a folder
  and reports it;
* :func:`~dueling_gym.experiments.sweeps.folder_report.report_folder` writes ``summary.md`` / ``summary.csv`` (one
  section per regret notion)
  and the figure of one notion, from verified unit records;
* :func:`~dueling_gym.experiments.plot_folder` does the same for a folder on disk.

Each returns a :class:`~dueling_gym.experiments.Report`: the folder, the summary to show, the files written and the
verified records.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Report", "report_folder", "run_and_report", "plot_folder", "checked_records", "summary_sections",
           "summary_files"]


@dataclass(frozen=True)
class Report:
    """What a study produced.

    Attributes
    ----------
    folder : pathlib.Path
        The results folder.
    summary : str
        The table to show (Markdown), with how its intervals are made.
    files : tuple of pathlib.Path
        The report files written (tables, figures), in the order they were written.
    records : list of dict
        The verified unit records the report was made from (regret sweeps; empty otherwise).
    figure_note : str
        Why no figure was drawn, when none was (empty otherwise).
    """

    folder: Path
    summary: str
    files: tuple[Path, ...] = ()
    records: list[dict[str, Any]] = field(default_factory=list, repr=False)
    figure_note: str = ""

    @property
    def figures(self) -> tuple[Path, ...]:
        """The figures among ``files``."""
        return tuple(path for path in self.files if path.suffix in (".png", ".svg"))


def checked_records(out_dir: Path, units: list, records: list) -> list:
    """``records`` of the folder's ``units``; warns of stray files and unfinished units.

    Raises
    ------
    ValueError
        If no unit of the folder is finished.
    """
    from dueling_gym.experiments.sweeps.sweep import stray_files

    strays = stray_files(out_dir, units)
    if strays:
        warnings.warn(f"{len(strays)} file(s) in {out_dir / 'units'} belong to no unit of this folder and are "
                      f"ignored (e.g. {strays[0].name})", stacklevel=2)
    if not records:
        raise ValueError(f"no finished units in {out_dir}")
    if len(records) < len(units):
        warnings.warn(f"{len(units) - len(records)} of {len(units)} units of {out_dir} are not finished; the "
                      "tables and plots show the finished ones (re-run the sweep to complete it)", stacklevel=2)
    return records


def report_folder(records: list[dict[str, Any]], out_dir: str | os.PathLike, *, notion: str, title: str = "",
                  plot: bool = True, primary_notion: str | None = None, svg: bool = False) -> Report:
    """Write ``summary.md`` / ``summary.csv`` (every regret notion, one section each) and the figure of ``notion``.

    The figure of the folder's own notion (``primary_notion``, the first one it was run with) is
    ``regret.png``; other notions get ``regret-NOTION.png``, so no notion overwrites another's
    files.  A figure that cannot be drawn (matplotlib missing, nothing to draw) is skipped with
    the reason in ``Report.figure_note``; the tables are written all the same.

    Raises
    ------
    ValueError
        If some problem of the records lacks ``notion`` (before anything is written).
    """
    from dueling_gym.atomic_files import atomic_write_text
    from dueling_gym.experiments.sweeps.report import (
        MAX_PROBLEM_PANELS,
        aggregate,
        family_summary_markdown,
        panel_layout,
        plot_regret,
        problems_of,
        summary_markdown,
    )

    out_dir = Path(out_dir)
    curves = aggregate(records, notion)  # refuses a notion some problem lacks, before writing anything
    primary = primary_notion or notion
    markdown, table = summary_files(summary_sections(records, {notion: curves}), primary)
    files = [out_dir / "summary.md", out_dir / "summary.csv"]
    atomic_write_text(files[0], markdown)
    atomic_write_text(files[1], table)
    if len({curve.problem for curve in curves}) > MAX_PROBLEM_PANELS:
        summary = (family_summary_markdown(curves)
                   + f"\n(one row per problem: {out_dir / 'summary.md'}, {out_dir / 'summary.csv'})\n")
    else:
        summary = summary_markdown(curves)
    note = ""
    if plot:
        stem = "regret" if notion == primary else f"regret-{notion}"
        try:
            single = [panel.title for panel in panel_layout(curves) if panel.kind == "problem"]
            files += plot_regret(curves, out_dir / stem, problems=problems_of(records, single), title=title,
                                 formats=("png", "svg") if svg else ("png",))
        except (ImportError, ValueError) as error:
            note = str(error)
    return Report(out_dir, summary, tuple(files), list(records), note)


def summary_sections(records: list[dict[str, Any]],
                     known: dict[str, list[Any]] | None = None) -> dict[str, tuple[str, str]]:
    """Regret notion -> (its ``summary.md`` section, its ``summary.csv`` rows without header), per recorded notion.

    Parameters
    ----------
    records : list of dict
        Verified unit records.
    known : dict, optional
        Notion -> curves already aggregated from ``records`` (not aggregated, nor bootstrapped, again).

    Returns
    -------
    dict
        In the order of :data:`~dueling_gym.problems.preference.REGRET_NOTIONS`.
    """
    from dueling_gym.experiments.sweeps.report import aggregate, summary_csv, summary_markdown
    from dueling_gym.problems.preference import REGRET_NOTIONS

    sections = {}
    for notion in REGRET_NOTIONS:
        members = [r for r in records if notion in r["cumulative_regret"]]
        if not members:
            continue
        curves = (known or {}).get(notion)
        if curves is None:
            curves = aggregate(members, notion)
        sections[notion] = (summary_markdown(curves), summary_csv(curves, header=False))
    return sections


def summary_files(sections: dict[str, tuple[str, str]], primary: str) -> tuple[str, str]:
    """The texts of ``summary.md`` and ``summary.csv``: the ``primary`` notion's section first, then the others."""
    from dueling_gym.experiments.sweeps.report import summary_csv

    order = [notion for notion in [primary, *sections] if notion in sections]
    order = list(dict.fromkeys(order))
    markdown = "\n".join(sections[notion][0] for notion in order)
    table = (summary_csv([], header=True) if order else "") + "".join(sections[notion][1] for notion in order)
    return markdown, table


def run_and_report(spec: Any, out_dir: str | os.PathLike, *, jobs: int = 1, backend: str = "local",
                   address: str | None = None, progress: bool = True, notion: str | None = None, title: str = "",
                   plot: bool = True, svg: bool = False) -> Report:
    """Run the sweep ``spec`` into ``out_dir`` (only its missing units) and report the whole folder.

    ``notion`` (default: the folder's own, else ``"copeland_komiyama"``) is the regret notion of
    the figure; the tables hold every notion.  The other arguments are those of
    :func:`~dueling_gym.experiments.sweeps.sweep.execute_sweep` and
    :func:`~dueling_gym.experiments.sweeps.folder_report.report_folder`.
    """
    from dueling_gym.experiments.sweeps.sweep import execute_sweep

    out_dir = Path(out_dir)
    result = execute_sweep(spec, out_dir, jobs=jobs, backend=backend, address=address, progress=progress,
                           notion=notion, title=title or None)
    records = checked_records(out_dir, result.folder_units, result.folder_records)
    primary = result.manifest.get("notion")
    return report_folder(records, out_dir, notion=notion or primary or "copeland_komiyama", title=title, plot=plot,
                         primary_notion=primary, svg=svg)


def plot_folder(out_dir: str | os.PathLike, *, notion: str | None = None, svg: bool = False) -> Report:
    """Report a results folder from its verified unit files, with the title it was run with."""
    from dueling_gym.experiments.sweeps.sweep import folder_units, load_results

    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise ValueError(f"no results in {out_dir} (not a folder)")
    units, manifest = folder_units(out_dir)
    records = checked_records(out_dir, units, load_results(out_dir))
    title = manifest.get("title") if isinstance(manifest.get("title"), str) else ""
    return report_folder(records, out_dir, notion=notion or manifest.get("notion") or "copeland_komiyama",
                         title=title, plot=True, primary_notion=manifest.get("notion"), svg=svg)
