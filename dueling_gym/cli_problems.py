"""The ``dueling-gym problems`` command: the table of the shipped problems, and problems built from data.

Without options the command prints :func:`problems_table`, one row per shipped preference matrix.
With ``--from-comparisons FILE`` it prints the same row for a problem estimated from a comparison
log (:func:`dueling_gym.problems.load_comparisons`), with ``--from-ltr FILE`` for rankers of a
learning-to-rank file compared by interleaving with simulated clicks
(:func:`dueling_gym.problems.ranker_problems.ranker_evaluation`, under its sequential comparison
budget unless ``--comparisons N`` fixes one, printing beside the winners the probability that
they are right and a warning when it is below 0.95); ``--save PATH`` writes that problem to a
problem file.  :func:`add_problems_command` adds the command, its options and their
argparse types to the parser of :mod:`dueling_gym.cli`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from dueling_gym.cli_common import DefaultsHelpFormatter, format_table, fraction, non_negative_int, positive_int
from dueling_gym.problems.ranker_budget import DEFAULT_BUDGET

__all__ = ["add_problems_command", "problems_table"]


def _bound_functions() -> tuple | None:
    try:
        from dueling_gym.problems.lower_bounds import ecw_lower_bound_constant, lower_bound_constant
    except ImportError:  # pragma: no cover - lower bounds always ship
        return None
    return lower_bound_constant, ecw_lower_bound_constant


_PROBLEM_COLUMNS = ["name", "K", "Condorcet winner", "Copeland winners", "C", "L_C", "Borda winners", "ties"]


def _problem_row(name: str, problem: Any, bound_functions: tuple | None) -> list[str]:
    facts = problem.summary()
    row = [
        name,
        str(facts["K"]),
        "none" if facts["condorcet_winner"] is None else str(facts["condorcet_winner"]),
        ",".join(map(str, facts["copeland_winners"])),
        str(facts["C"]),
        str(facts["L_C"]),
        ",".join(map(str, facts["borda_winners"])),
        ";".join(f"{i}~{j}" for i, j in facts["ties"]) or "-",
    ]
    if bound_functions is not None:
        row += [f"{function(problem):.2f}" for function in bound_functions]
    return row


def problems_table(with_bounds: bool = True) -> str:
    """Markdown table of the shipped problems (arms are 0-based).

    Parameters
    ----------
    with_bounds : bool, default True
        Add the LB and ECWB columns, the lower-bound constants of Komiyama et al. (2016).

    Returns
    -------
    str
        One row per shipped problem: K, Condorcet winner, Copeland winners, C, L_C, Borda winners,
        ties (and LB, ECWB).
    """
    from dueling_gym.problems import list_problems, load_problem

    bound_functions = _bound_functions() if with_bounds else None
    header = _PROBLEM_COLUMNS + (["LB", "ECWB"] if bound_functions is not None else [])
    rows = [_problem_row(name, load_problem(name), bound_functions) for name in list_problems()]
    return format_table(header, rows)


_PROBLEMS_NOTE = ("Arms are 0-based. C = number of Copeland winners, L_C = losses of a Copeland winner;"
                  " LB / ECWB = lower-bound constants of Komiyama et al. (2016), Copeland regret (Komiyama scale) "
                  "per ln T.")


def _default_cache_dir() -> Path:
    import os

    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dueling-gym"


def _problem_from_data(args: argparse.Namespace) -> Any:
    """The problem that ``problems --from-comparisons`` / ``--from-ltr`` describe."""
    if args.from_comparisons is not None:
        from dueling_gym.problems import load_comparisons

        return load_comparisons(args.from_comparisons, first=args.first, second=args.second, winner=args.winner,
                                loser=args.loser, counts=args.counts, format=args.format, ties=args.ties,
                                fill_missing=args.fill_missing, min_comparisons=args.min_comparisons,
                                components=args.components, name=args.name)
    from dueling_gym.problems import PreferenceMatrix
    from dueling_gym.problems.ranker_problems import ranker_evaluation

    problem = ranker_evaluation(args.from_ltr, interleaving=args.interleaving,
                                click_model=_click_model_from_arguments(args),
                                cutoff=args.cutoff, budget=_budget_from_arguments(args), seed=args.seed,
                                jobs=args.jobs, progress=True, cache_dir=None if args.no_cache else args.cache_dir,
                                **_ltr_read_options(args))
    return problem if args.name is None else PreferenceMatrix(problem, name=args.name)


def _command_problems(args: argparse.Namespace) -> int:
    if args.from_comparisons is None and args.from_ltr is None:
        if args.save is not None:
            raise ValueError("--save needs a problem made from data: --from-comparisons FILE or --from-ltr FILE")
        print(problems_table(with_bounds=not args.no_bounds))
        print("\n" + _PROBLEMS_NOTE)
        return 0
    if args.save is not None:  # refused now, not after an estimate that may take minutes (save_problem checks again)
        from dueling_gym.validation import check_regular_file

        check_regular_file(args.save, "problem file", new_ok=True, follow_symlinks=False)
    problem = _problem_from_data(args)
    bound_functions = None if args.no_bounds else _bound_functions()
    header = _PROBLEM_COLUMNS + (["LB", "ECWB"] if bound_functions is not None else [])
    print(format_table(header, [_problem_row(problem.name or "problem", problem, bound_functions)]))
    arms = problem.provenance.get("arms")
    if arms is not None:
        print("\nArms: " + ", ".join(f"{index} = {name}" for index, name in enumerate(arms)))
    print(f"Source: {problem.source}")
    if "structure_confidence" in problem.provenance:
        print("\n" + "\n".join(_confidence_lines(problem.provenance)))
    print("\n" + _PROBLEMS_NOTE)
    if args.save is not None:
        from dueling_gym.problems import save_problem

        path = save_problem(problem, args.save)
        print(f"\nSaved to {path}; run agents on it with: dueling-gym run --problems file:{path} ...")
    return 0


def add_problems_command(subcommands: Any) -> None:
    """Add the ``problems`` command, with its options, to the subcommands of the ``dueling-gym`` parser.

    Parameters
    ----------
    subcommands : argparse._SubParsersAction
        What :meth:`argparse.ArgumentParser.add_subparsers` returned; the command's parser sets
        ``handler`` to the function that runs it.
    """
    problems = subcommands.add_parser(
        "problems", help="table of the shipped preference matrices, or of a problem made from data",
        description="Without options: the table of the shipped problems. With --from-comparisons or --from-ltr: "
                    "the same row for a problem built from a comparison log or a learning-to-rank file, which "
                    "--save writes to a problem file that 'dueling-gym run --problems file:PATH' runs.",
        formatter_class=DefaultsHelpFormatter)
    problems.add_argument("--no-bounds", action="store_true", help="skip the LB/ECWB lower-bound columns")
    source = problems.add_mutually_exclusive_group()
    source.add_argument("--from-comparisons", metavar="FILE", default=None,
                        help="a comparison log (CSV, TSV, JSON lines, Parquet): one row per comparison")
    source.add_argument("--from-ltr", metavar="FILE", default=None,
                        help="a learning-to-rank file (LETOR/SVMlight: 'label qid:Q 1:v 2:v ...'); its features "
                             "are the rankers, compared by interleaving with simulated clicks")
    problems.add_argument("--name", default=None, help="the problem's name (default: the file's)")
    problems.add_argument("--save", metavar="PATH", default=None, help="write the problem to this problem file")
    _add_comparison_log_options(problems.add_argument_group("comparison logs (--from-comparisons)"))
    _add_ranker_evaluation_options(problems.add_argument_group("ranker evaluation (--from-ltr)"))
    problems.set_defaults(handler=_command_problems)


def _add_comparison_log_options(logs: Any) -> None:
    logs.add_argument("--first", default="first", help="column naming the first system")
    logs.add_argument("--second", default="second", help="column naming the second system")
    logs.add_argument("--winner", default="winner",
                      help="column naming the winner (a system's name, or first/second/tie labels; with --loser, "
                           "the winning system)")
    logs.add_argument("--loser", metavar="COLUMN", default=None,
                      help="column naming the losing system, in a table of winners and losers (then --first and "
                           "--second do not apply)")

    def count_columns(text: str) -> tuple[str, ...]:
        names = tuple(text.split(","))
        if len(names) not in (2, 3) or not all(names):
            raise argparse.ArgumentTypeError(f"expected COL_A,COL_B or COL_A,COL_B,COL_TIES (2 or 3 column names "
                                             f"separated by commas), got {text!r}")
        return names

    logs.add_argument("--counts", metavar="COL_A,COL_B[,COL_TIES]", type=count_columns, default=None,
                      help="a table with one row per pair (--first, --second): the columns counting the wins of "
                           "each and, optionally, the ties")
    logs.add_argument("--format", default=None, choices=("csv", "tsv", "jsonl", "ndjson", "parquet"),
                      help="the file's format when its name does not say it (default: from the suffix, under "
                           ".gz/.bz2/.xz)")
    logs.add_argument("--ties", default="half", choices=("half", "drop", "separate"),
                      help="half a win each, dropped, or counted apart from the win probability")
    logs.add_argument("--fill-missing", default=None, choices=("bradley_terry",),
                      help="fill pairs never compared from a Bradley-Terry fit (default: refuse them)")
    logs.add_argument("--min-comparisons", metavar="N", type=non_negative_int, default=0,
                      help="drop systems with fewer comparisons, repeatedly, until every system left has N")
    logs.add_argument("--components", default="error", choices=("error", "largest"),
                      help="'largest' keeps only the largest group of systems compared with each other; 'error' "
                           "refuses a log whose groups a Bradley-Terry fill cannot relate")


def _add_ranker_evaluation_options(ltr: Any) -> None:
    ltr.add_argument("--interleaving", default="team_draft", choices=("team_draft", "probabilistic"),
                     help="interleaving method")
    ltr.add_argument("--click-model", default="perfect", type=_click_model_argument, metavar="MODEL",
                     help="simulated users (cascade click model): perfect, navigational or informational, on the "
                          "three-grade table for data graded 0-2 and the five-grade table for 0-4; NAME:3 or NAME:5 "
                          "forces a table (e.g. perfect:5); custom takes --click-probabilities and "
                          "--stop-probabilities")
    ltr.add_argument("--click-probabilities", metavar="P0,P1,...", type=_probability_list, default=None,
                     help="with --click-model custom: the click probability of each relevance grade 0, 1, ...")
    ltr.add_argument("--stop-probabilities", metavar="P0,P1,...", type=_probability_list, default=None,
                     help="with --click-model custom: the probability of stopping after a click, per grade")
    ltr.add_argument("--cutoff", type=positive_int, default=10, help="length of the result lists compared")
    default = DEFAULT_BUDGET
    ltr.add_argument("--comparisons", "--comparisons-per-pair", metavar="N", type=positive_int, default=None,
                     help="a fixed budget: N interleaved comparisons per pair of rankers (default: the sequential "
                          "budget, which plays each pair until its interval settles which ranker is preferred)")
    ltr.add_argument("--max-comparisons", metavar="N", type=positive_int, default=None,
                     help=f"sequential budget: the most comparisons a pair plays before it is reported unsettled "
                          f"(default {default.max_comparisons}; batches end at {default.first_batch}, "
                          f"{default.looks[1]}, ... comparisons)")
    ltr.add_argument("--error-rate", metavar="P", type=fraction, default=None,
                     help=f"the probability, at most, that some pair reported settled or near-tie is wrong "
                          f"(default {default.error_rate:g})")
    ltr.add_argument("--tolerance", metavar="T", type=fraction, default=None,
                     help=f"a pair whose interval lies within T of 1/2 stops as a near-tie "
                          f"(default {default.tolerance:g})")
    ltr.add_argument("--seed", type=non_negative_int, default=0, help="seed of the simulation")
    ltr.add_argument("--jobs", type=positive_int, default=None,
                     help="worker threads (default: every core; the result does not depend on it)")
    ltr.add_argument("--cache-dir", default=str(_default_cache_dir()),
                     help="folder of estimated matrices, named by a digest of the data file and every setting")
    ltr.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    # How the file is laid out (see read_ltr_file): the layouts the ranking tools write.
    ltr.add_argument("--single-document-queries", default="error", choices=("error", "drop"),
                     help="refuse a query with one document, or drop it (an interleaved comparison needs two)")
    side = ltr.add_mutually_exclusive_group()
    side.add_argument("--group-file", metavar="PATH", default=None,
                      help="side file of query sizes for lines without qid: (one integer per line, the number of "
                           "consecutive rows of each query); default: FILE.query or FILE.group next to the data "
                           "when one exists")
    side.add_argument("--no-group-file", action="store_true",
                      help="never use a side file of query sizes (the lines have qid: fields)")
    ltr.add_argument("--missing", default="error", choices=("error", "zero", "worst"),
                     help="a NULL feature value: refuse the file, read 0, or read a value worse than every value "
                          "of its feature (its ranker puts the document last)")
    ltr.add_argument("--lower-is-better", metavar="INDEX", type=positive_int, nargs="*", default=None,
                     help="rank-valued features, whose rankers put the smallest value first: the feature indices "
                          "as the file writes them (1-based), or none for every feature")
    ltr.add_argument("--max-decompressed-bytes", metavar="N", type=positive_int, default=None,
                     help="the most bytes a .gz/.bz2/.xz file may decompress to (default: 100 times its size, "
                          "at least 1 GiB); more is refused as a decompression bomb")


def _ltr_read_options(args: argparse.Namespace) -> dict[str, Any]:
    """The reading options of ``--from-ltr`` as keyword arguments of ranker_evaluation."""
    lower = args.lower_is_better  # None: not given; []: given without indices, every feature
    return {"single_document_queries": args.single_document_queries,
            "group_file": False if args.no_group_file else args.group_file, "missing": args.missing,
            "lower_is_better": False if lower is None else (lower or True),
            "max_decompressed_bytes": args.max_decompressed_bytes}


def _click_model_argument(text: str) -> str:
    """``--click-model``: a named model, optionally with its grade scale, or ``custom``."""
    if text == "custom":
        return text
    from dueling_gym.problems.interleaving import parse_click_model

    try:
        parse_click_model(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{error}; or custom with --click-probabilities and "
                                         "--stop-probabilities") from None
    return text


def _probability_list(text: str) -> list[float]:
    """``P0,P1,...``: one number per relevance grade (the click model checks they lie in [0, 1])."""
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated probabilities, one per relevance grade "
                                         f"(e.g. 0,0.5,1), got {text!r}") from None


def _click_model_from_arguments(args: argparse.Namespace) -> Any:
    """The ``click_model`` of ranker_evaluation that ``--click-model`` and the probability lists describe."""
    lists = {"--click-probabilities": args.click_probabilities, "--stop-probabilities": args.stop_probabilities}
    given = [option for option, values in lists.items() if values is not None]
    if args.click_model != "custom":
        if given:
            verb = "need" if len(given) > 1 else "needs"
            raise ValueError(f"{' and '.join(given)} {verb} --click-model custom (the {args.click_model} model has its "
                             "own probabilities)")
        return args.click_model
    if len(given) < 2:
        raise ValueError("--click-model custom needs --click-probabilities and --stop-probabilities, one "
                         "comma-separated probability per relevance grade 0, 1, ... (e.g. 0,0.5,1)")
    return {"click": args.click_probabilities, "stop": args.stop_probabilities}



def _budget_from_arguments(args: argparse.Namespace) -> Any:
    """The ``budget`` of ranker_evaluation that ``--comparisons``, ``--max-comparisons``, ``--error-rate``
    and ``--tolerance`` describe."""
    from dueling_gym.problems.ranker_budget import ComparisonBudget

    error_rate = DEFAULT_BUDGET.error_rate if args.error_rate is None else args.error_rate
    tolerance = DEFAULT_BUDGET.tolerance if args.tolerance is None else args.tolerance
    if args.comparisons is not None:
        if args.max_comparisons is not None:
            raise ValueError("--max-comparisons bounds the sequential budget; --comparisons N gives every pair N "
                             "(give one of them)")
        return ComparisonBudget.fixed(args.comparisons, error_rate=error_rate, tolerance=tolerance)
    if args.max_comparisons is None and args.error_rate is None and args.tolerance is None:
        return DEFAULT_BUDGET
    maximum = DEFAULT_BUDGET.max_comparisons if args.max_comparisons is None else args.max_comparisons
    return ComparisonBudget(max_comparisons=maximum, error_rate=error_rate, tolerance=tolerance,
                            first_batch=min(DEFAULT_BUDGET.first_batch, maximum), growth=DEFAULT_BUDGET.growth)


def _confidence_lines(provenance: Any) -> list[str]:
    """The lines printed beside a ranker evaluation's winners: how settled they are, and a warning below 0.95."""
    from dueling_gym.problems.structure_confidence import CONFIDENCE_WARNING_LEVEL

    confidence, counts, budget = (provenance["structure_confidence"], provenance["status_counts"],
                                  provenance["budget"])
    condorcet = confidence["condorcet_winner"]
    lines = [(f"Confidence: P(Copeland winners = {','.join(map(str, confidence['copeland_winners']))}) = "
              f"{confidence['p_copeland']:.3f}, P(Condorcet winner = {'none' if condorcet is None else condorcet}) = "
              f"{confidence['p_condorcet']:.3f} ({confidence['draws']} posterior draws from the counts)"),
             (f"Pairs: {counts['settled']} settled, {counts['near-tie']} near-ties (within {budget['tolerance']:g} "
              f"of 1/2), {counts['unsettled']} unsettled after {budget['max_comparisons']} comparisons; "
              f"{provenance['total_comparisons']} comparisons in all ({budget['mode']} budget, error rate "
              f"{budget['error_rate']:g})")]
    low = min(confidence["p_copeland"], confidence["p_condorcet"])
    if low < CONFIDENCE_WARNING_LEVEL:
        advice = ("a larger --comparisons N, or the sequential default (without --comparisons)"
                  if budget["mode"] == "fixed" else "a larger --max-comparisons or a smaller --tolerance")
        lines.append(f"WARNING: the printed winners are not settled (probability {low:.3f} < "
                     f"{CONFIDENCE_WARNING_LEVEL}): another --seed may print other winners; run again with "
                     f"{advice}")
    return lines
