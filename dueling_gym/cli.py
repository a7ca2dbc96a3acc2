"""The ``dueling-gym`` command line: its parser, :func:`main` and every command but ``problems`` and ``train``.

The ``problems`` command lives in :mod:`dueling_gym.cli_problems` (:func:`problems_table` is
re-exported here), the ``train`` command in :mod:`dueling_gym.cli_train`; the argparse types,
the help formatter and the table formatting that the commands share live in
:mod:`dueling_gym.cli_common`.

Subcommands
-----------
``dueling-gym problems``
    A table of the shipped problems (K, Condorcet winner, Copeland winners, C, L_C, LB, ECWB),
    or of a problem built from a comparison log or a learning-to-rank file.
``dueling-gym agents``
    The registered agents with their hyperparameters.
``dueling-gym run``
    A sweep of agents x problems x seeds into a results folder (resumable), with table and plot.
``dueling-gym plot DIR``
    Plot and tabulate a results folder.
``dueling-gym reproduce NAME [--quick]``
    One of the published experiments (``--list`` shows them).
``dueling-gym train ALGORITHM``
    Train the ``learned`` agent's pair policy, then compare it with every classic agent.
``dueling-gym demo``
    A uniformly random agent on ``CopelandDuel-v0``, printing its cumulative regret.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
import time
from typing import Any, Sequence

import numpy as np

from dueling_gym.cli_common import format_table, fraction, non_negative_int, positive_int
from dueling_gym.interrupts import acknowledge_interrupt, caused_by_interrupt, install_console_interrupts
from dueling_gym.cli_problems import add_problems_command, problems_table
from dueling_gym.cli_train import add_train_command, command_train

__all__ = ["main", "build_parser", "problems_table"]


def _command_demo(args: argparse.Namespace) -> int:
    import gymnasium as gym

    importlib.import_module("dueling_gym")  # registers the environments

    env = gym.make("CopelandDuel-v0", preferences=args.problem, max_episode_steps=args.horizon)
    rng = np.random.default_rng(args.seed)
    observation, info = env.reset(seed=args.seed)
    n_arms = env.unwrapped.n_arms
    checkpoints = sorted({int(x) for x in np.unique(np.geomspace(10, args.horizon, 6).astype(int))})
    print(f"Random agent on CopelandDuel-v0 ({args.problem}, K={n_arms}, horizon {args.horizon}, seed {args.seed})")
    print(f"{'t':>10} {'Copeland regret (Komiyama)':>28} {'Copeland regret (Zoghi)':>25}")
    truncated = False
    while not truncated:
        first, second = rng.choice(n_arms, size=2, replace=False)
        observation, reward, terminated, truncated, info = env.step(np.array([first, second]))
        if info["t"] in checkpoints:
            cumulative = info["cumulative_regret"]
            print(f"{info['t']:>10} {cumulative['copeland_komiyama']:>28.2f} {cumulative['copeland_zoghi']:>25.2f}")
    expected = env.unwrapped.problem.expected_random_regret("copeland_komiyama") * args.horizon
    print(f"Expected for uniform random play: {expected:.2f} (linear in t, as it must be).")
    return 0


def _command_warmup(args: argparse.Namespace) -> int:
    from dueling_gym.experiments.runs.warmup import warmup

    start = time.perf_counter()
    report = warmup(jobs=args.jobs, progress=not args.no_progress)
    slowest = sorted(report.seconds.items(), key=lambda item: -item[1])[:3]
    print(f"compiled or loaded {len(report.seconds)} tasks in {time.perf_counter() - start:.1f} s "
          f"(slowest: {', '.join(f'{task} {seconds:.1f} s' for task, seconds in slowest)}); "
          "later processes load everything from Numba's cache")
    return 0


_ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")


def _plain_text(text: str) -> str:
    """A docstring line without reST markup: ``:class:`~a.B``` -> ``B``, double backquotes dropped."""
    text = _ROLE.sub(lambda match: match.group(2).rsplit(".", 1)[-1] if match.group(1) else match.group(2), text)
    return text.replace("``", "")


def _hyperparameter(name: str, parameter: inspect.Parameter) -> str:
    """``name=default``, or ``name (required)`` for a keyword without a default (e.g. a horizon)."""
    if parameter.default is inspect.Parameter.empty:
        return f"{name} (required)"
    return f"{name}={parameter.default!r}"


def _command_agents(args: argparse.Namespace) -> int:
    from dueling_gym.agents import AGENT_REGISTRY, list_agents
    from dueling_gym.agents.catalogue import agent_role, agent_target

    import shutil

    kind = args.kind.replace("-", " ") if args.kind else None
    # --kind takes what the table's kind column prints, and the three families of agents.
    names = list_agents(kind) if kind in ("dueling", "bandit", "combinatorial") else list_agents()
    if kind not in (None, "dueling", "bandit", "combinatorial"):
        names = [name for name in names if agent_role(name) == kind]
    rows = []
    for name in names:
        cls = AGENT_REGISTRY[name]
        parameters = inspect.signature(cls.__init__).parameters
        hyperparameters = ", ".join(_hyperparameter(key, parameter) for key, parameter in parameters.items()
                                    if parameter.kind == parameter.KEYWORD_ONLY and key != "seed")
        doc = inspect.getdoc(cls)
        summary = _plain_text(doc.splitlines()[0]) if doc else ""
        rows.append([name, agent_role(name), agent_target(name), cls.__name__, hyperparameters or "-", summary])
    header = ["name", "kind", "target", "class", "hyperparameters (defaults)", "description"]
    if not args.wide:
        # Fit the terminal: name, kind, target and the description, cut with "…" at the edge;
        # --wide adds the class and the hyperparameters and cuts nothing.
        keep = [0, 1, 2, 5]
        header, rows = [header[i] for i in keep], [[row[i] for i in keep] for row in rows]
        width = shutil.get_terminal_size((120, 24)).columns
        fixed = sum(max(len(str(cell)) for cell in column) + 3 for column in zip(header[:3], *(r[:3] for r in rows)))
        room = max(30, width - fixed - 5)
        rows = [row[:3] + [_cut(row[3], room)] for row in rows]
    print(format_table(header, rows))
    return 0


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "…"


_MAX_SEEDS = 1_000_000


def _parse_seeds(text: str) -> tuple[int, ...]:
    """``"10"`` = seeds 0..9; ``"3-7"`` = 3..7; ``"1,5,9"`` = those (duplicates are dropped later, with a warning)."""
    message = f"seeds must be a count (10), a range (0-9) or a list (1,5,9) of non-negative integers; got {text!r}"
    try:
        if "," in text:
            seeds = tuple(int(part) for part in text.split(",") if part.strip())
        elif "-" in text.strip().strip("-"):
            low, high = (int(part) for part in text.split("-", 1))
            if low > high or high - low >= _MAX_SEEDS:
                raise argparse.ArgumentTypeError(f"{message} (a range LOW-HIGH with LOW <= HIGH, "
                                                 f"at most {_MAX_SEEDS} seeds)")
            seeds = tuple(range(low, high + 1))
        else:
            count = int(text)
            if count > _MAX_SEEDS:
                raise argparse.ArgumentTypeError(f"at most {_MAX_SEEDS} seeds, got {count}")
            seeds = tuple(range(count))
    except ValueError:
        raise argparse.ArgumentTypeError(message) from None
    if not seeds or min(seeds) < 0:
        raise argparse.ArgumentTypeError(message)
    return seeds


def _print_report(report: Any, listing: str) -> int:
    """Print what a study returned: its summary, its figures (or why none), its folder."""
    print(report.summary.rstrip("\n"))
    if report.figure_note:
        print(f"(no plot: {report.figure_note})")
    elif report.figures:
        print("plots: " + ", ".join(str(path) for path in report.figures))
    print(f"results: {report.folder}/ ({listing})")
    return 0


_SWEEP_FILES = "units/, results.csv, manifest.json, summary.md, summary.csv"


def _require_plot_extra(args: argparse.Namespace) -> None:
    """Refuse, before any work, a command that will draw a figure without matplotlib (one line)."""
    if getattr(args, "no_plot", False):
        return
    try:
        importlib.import_module("matplotlib")
    except ImportError:
        raise ImportError("this command draws figures and needs the plot extra: pip install 'dueling-gym[plot]' "
                          "(or pass --no-plot)") from None


def _command_run(args: argparse.Namespace) -> int:
    _require_plot_extra(args)
    from dueling_gym.experiments.sweeps.folder_report import run_and_report
    from dueling_gym.experiments.sweeps.sweep import SweepSpec

    spec = SweepSpec(agents=tuple(args.agents), problems=tuple(args.problems), seeds=args.seeds,
                     horizon=args.horizon, shuffle_arms=not args.no_shuffle)
    report = run_and_report(spec, args.out, jobs=args.jobs, backend=args.backend, address=args.address,
                            progress=not args.no_progress, notion=args.notion, plot=not args.no_plot, svg=args.svg)
    return _print_report(report, _SWEEP_FILES)


def _command_plot(args: argparse.Namespace) -> int:
    _require_plot_extra(args)
    from dueling_gym.experiments.sweeps.folder_report import plot_folder

    return _print_report(plot_folder(args.results, notion=args.notion, svg=args.svg), _SWEEP_FILES)


def _command_benchmark(args: argparse.Namespace) -> int:
    from dueling_gym.experiments.studies.benchmark import benchmark

    report = benchmark(args.agents, args.out, quick=args.quick, baselines=args.baselines, jobs=args.jobs,
                       backend=args.backend, address=args.address, progress=not args.no_progress)
    print(report.read_text())
    print(f"report: {report}")
    return 0


def _command_verify(args: argparse.Namespace) -> int:
    from dueling_gym.experiments.verify import verify_folder

    report = verify_folder(args.results, fraction=args.fraction, seed=args.seed, jobs=args.jobs,
                           progress=not args.no_progress)
    print("\n".join(report.lines()))
    return 0 if report.ok else 1


def _command_reproduce(args: argparse.Namespace) -> int:
    from dueling_gym.experiments.studies.presets import PRESETS, get_preset, reproduce

    if args.list or args.name is None:
        rows = [[p.name, p.title, p.reference] for p in PRESETS.values()]
        print(format_table(["name", "experiment", "reference"], rows))
        if args.name is None and not args.list:
            raise ValueError("give a preset NAME (above) or --list")
        return 0
    _require_plot_extra(args)
    preset = get_preset(args.name)
    print(preset.describe(args.quick))
    report = reproduce(args.name, quick=args.quick, out=args.out,
                       jobs=args.jobs, backend=args.backend, address=args.address, progress=not args.no_progress,
                       plot=not args.no_plot, notion=args.notion, svg=args.svg)
    listing = ", ".join(["units/", *(path.name for path in report.files)]) if preset.kind != "regret" else _SWEEP_FILES
    return _print_report(report, listing)


def _add_sweep_options(parser: argparse.ArgumentParser, notion_default: str | None) -> None:
    from dueling_gym.problems.preference import REGRET_NOTIONS

    parser.add_argument("--jobs", type=positive_int, default=1, help="worker processes (default: 1)")
    parser.add_argument("--backend", choices=["local", "ray"], default="local", help="execution backend")
    parser.add_argument("--address", help="Ray cluster address (with --backend ray), e.g. auto")
    parser.add_argument("--notion", choices=sorted(REGRET_NOTIONS), default=notion_default,
                        help="regret notion of the table and plot")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG plot")
    parser.add_argument("--svg", action="store_true", help="also write the plot as SVG")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``dueling-gym`` command."""
    import dueling_gym

    parser = argparse.ArgumentParser(prog="dueling-gym", description="Dueling bandits for the RL ecosystem.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {dueling_gym.__version__}")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")
    subcommands.required = True
    # The order of the subcommands is the order of the --help listing.
    for add_command in (add_problems_command, _add_demo_command, _add_agents_command, _add_run_command,
                        _add_benchmark_command, _add_plot_command, _add_verify_command, _add_reproduce_command,
                        _add_warmup_command, add_train_command):
        add_command(subcommands)
    return parser


def _add_demo_command(subcommands: Any) -> None:
    from dueling_gym.problems import list_problems

    demo = subcommands.add_parser("demo", help="a random agent on CopelandDuel-v0, printing its regret")
    demo.add_argument("--problem", default="multisol", choices=list_problems(), help="shipped problem (default: multisol)")
    demo.add_argument("--horizon", type=_horizon, default=10_000, help="number of duels (default: 10000)")
    demo.add_argument("--seed", type=non_negative_int, default=0, help="random seed (default: 0)")
    demo.set_defaults(handler=_command_demo)


def _add_agents_command(subcommands: Any) -> None:
    agents = subcommands.add_parser("agents", help="the registered agents")
    agents.add_argument("--kind", choices=["dueling", "bandit", "combinatorial", "regret-minimiser", "identification"],
                        help="only agents of this kind (the table's kind column, or dueling = every K-armed one)")
    agents.add_argument("--wide", action="store_true", help="print every column whole (default: fit the terminal)")
    agents.set_defaults(handler=_command_agents)


def _add_run_command(subcommands: Any) -> None:
    run = subcommands.add_parser(
        "run", help="sweep agents x problems x seeds (resumable)",
        description="Run a sweep. Agents: NAME or NAME:key=value,...; problems: a shipped name or "
                    "GENERATOR:n_arms=K,problem_seed=S[,option=value]. Re-running the same command resumes.")
    run.add_argument("--agents", nargs="+", required=True, metavar="AGENT")
    run.add_argument("--problems", nargs="+", required=True, metavar="PROBLEM")
    run.add_argument("--seeds", type=_parse_seeds, default=tuple(range(10)), help="count, range or list (default: 10)")
    # Checked by SweepSpec (at most MAX_HORIZON), whose error main() prints as one line.
    run.add_argument("--horizon", type=positive_int, required=True, help="duels per run (at most 10^12)")
    run.add_argument("--out", required=True, help="results folder")
    run.add_argument("--no-shuffle", action="store_true", help="keep the problem's arm order in every run")
    _add_sweep_options(run, "copeland_komiyama")
    run.set_defaults(handler=_command_run)


def _add_benchmark_command(subcommands: Any) -> None:
    bench = subcommands.add_parser(
        "benchmark", help="your agents beside every baseline on a standard suite, with a report card",
        description="Run your agents (registered names or import paths, package.module:ClassName[:key=value,...]) "
                    "beside every regret-minimising baseline on the seven published matrices and three generator "
                    "families, at a short and a long horizon; writes OUT/report.md and OUT/regret.png. "
                    "Re-running the same command resumes.")
    bench.add_argument("--agents", nargs="+", required=True, metavar="AGENT", help="your agents")
    bench.add_argument("--baselines", nargs="+", metavar="AGENT", help="compare with these only (default: all)")
    bench.add_argument("--quick", action="store_true", help="T = 1000 and 10^4, 3 runs (default: 1000 and 10^5, 10)")
    bench.add_argument("--out", help="results folder, created with any missing parent "
                                     "(default: results/benchmark, or results/benchmark-quick with --quick)")
    bench.add_argument("--jobs", type=positive_int, default=1, help="worker processes (default: 1)")
    bench.add_argument("--backend", choices=["local", "ray"], default="local", help="execution backend")
    bench.add_argument("--address", help="Ray cluster address (with --backend ray), e.g. auto")
    bench.add_argument("--no-progress", action="store_true", help="no progress bar")
    bench.set_defaults(handler=_command_benchmark)


def _add_plot_command(subcommands: Any) -> None:
    from dueling_gym.problems.preference import REGRET_NOTIONS

    plot = subcommands.add_parser("plot", help="plot and tabulate a results folder")
    plot.add_argument("results", help="results folder of a run or reproduce")
    plot.add_argument("--notion", choices=sorted(REGRET_NOTIONS), default=None,
                      help="regret notion (default: the one the folder was run with)")
    plot.add_argument("--svg", action="store_true", help="also write the plot as SVG")
    plot.set_defaults(handler=_command_plot)


def _add_verify_command(subcommands: Any) -> None:
    verify = subcommands.add_parser("verify", help="re-play a results folder's runs and compare them with their files")
    verify.add_argument("results", help="results folder (of run, reproduce or a study)")
    verify.add_argument("--fraction", type=fraction, default=1.0,
                        help="share of the unit files re-played, drawn at random (default: 1, all)")
    verify.add_argument("--seed", type=non_negative_int, default=0, help="seed of the random share (default: 0)")
    verify.add_argument("--jobs", type=positive_int, default=1, help="worker processes (default: 1)")
    verify.add_argument("--no-progress", action="store_true", help="no progress bar")
    verify.set_defaults(handler=_command_verify)


def _add_reproduce_command(subcommands: Any) -> None:
    reproduce = subcommands.add_parser("reproduce", help="run a published experiment (--list shows them)")
    reproduce.add_argument("name", nargs="?", help="preset name")
    reproduce.add_argument("--list", action="store_true", help="list the presets")
    reproduce.add_argument("--quick", action="store_true", help="the few-minutes version")
    reproduce.add_argument("--out", help="results folder (default: results/NAME[-quick])")
    _add_sweep_options(reproduce, None)
    reproduce.set_defaults(handler=_command_reproduce)


def _add_warmup_command(subcommands: Any) -> None:
    warm = subcommands.add_parser(
        "warmup", help="compile every agent, environment and bound ahead (the first use after installing)",
        description="Compile every compiled function of dueling-gym once; Numba caches them on disk, so later "
                    "processes start without compiling.")
    warm.add_argument("--jobs", type=positive_int, default=1, help="worker processes (default: 1)")
    warm.add_argument("--no-progress", action="store_true", help="no progress bar")
    warm.set_defaults(handler=_command_warmup)


def _horizon(text: str) -> int:
    from dueling_gym.experiments.simulate import MAX_HORIZON

    value = positive_int(text)
    if value > MAX_HORIZON:
        raise argparse.ArgumentTypeError(f"expected a horizon of at most 10^12 duels, got {value}")
    return value


def _show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    print(f"dueling-gym: warning: {message}", file=sys.stderr)


def _take_back_interrupts() -> None:
    """Give Ctrl-C back to Python: while the console script imported this module, ``import
    dueling_gym`` had it exit with one line (see the package's ``__init__``); from here on it is
    a KeyboardInterrupt, which :func:`main` and the sweeps handle, raised by the handler of
    :mod:`dueling_gym.interrupts`, which makes sure that none is lost."""
    import signal

    import dueling_gym

    if signal.getsignal(signal.SIGINT) is dueling_gym._interrupted_while_starting:
        install_console_interrupts()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dueling-gym`` console script."""
    try:
        _take_back_interrupts()
        return _main(argv)
    except BaseException as error:
        # Ctrl-C while starting (imports, validation) or in a command that keeps nothing: one line.
        # A library that wraps the KeyboardInterrupt it was stopped by (while it was imported,
        # say) raises another error: still an interrupt, not a failure to report.
        if not caused_by_interrupt(error):
            raise
        acknowledge_interrupt()
        print("dueling-gym: interrupted", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None) -> int:
    import warnings

    from dueling_gym.experiments.sweeps.sweep import SweepInterrupted, UnitFailed

    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is command_train:
        args.argv = None if argv is None else list(argv)  # the command recorded with the weights
    with warnings.catch_warnings():
        warnings.simplefilter("always", UserWarning)
        warnings.showwarning = _show_warning
        try:
            return int(args.handler(args))
        except SweepInterrupted as interrupt:
            print(f"dueling-gym: {interrupt}", file=sys.stderr)
            return 130
        except (ValueError, TypeError, ImportError) as error:
            # Bad names, options or folders: one line, with the valid choices in the message.
            parser.exit(2, f"dueling-gym: error: {error}\n")
        except (OSError, UnitFailed) as error:
            # Unwritable folders, full disks, unreachable clusters, a unit that raised.
            parser.exit(1, f"dueling-gym: error: {error}\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
