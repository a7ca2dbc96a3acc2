"""``dueling-gym train``: its sub-commands, their options generated from the trainers' configurations.

Every trainer declares its settings once, as a frozen dataclass
(:class:`~dueling_gym.experiments.learning.config.TrainerConfig`), and its sub-commands in its
module's ``TRAIN_COMMANDS``, which :data:`~dueling_gym.experiments.learning.TRAINERS` names by
sub-command.  This module turns each field into an option: the name from the
field's (``n_arms`` -> ``--n-arms``), the value's type from its annotation (an integer, a number,
a word, comma-separated values for a tuple, one value or several for ``int | tuple[int, ...]``,
or the field's own ``parse``), the default (shown once in ``--help`` by
``dueling_gym.cli_common.DefaultsHelpFormatter``), the help and the choices from the
field's metadata.  The parsed options build the configuration, which checks them, and the
trainer runs it; the sub-command then compares the policy with every classic agent on held-out
problems (``--report-problems``).
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
import types
import typing
from pathlib import Path
from typing import Any, Callable, Mapping

from dueling_gym.cli_common import DefaultsHelpFormatter, non_negative_int

__all__ = ["add_train_command", "add_config_options", "config_from_arguments", "option_name"]


def option_name(field_name: str) -> str:
    """The option of a configuration field: ``n_arms`` -> ``--n-arms``."""
    return "--" + field_name.replace("_", "-")


def _as_text(value: Any) -> Any:
    """A default of several values as the text that parses back to it (argparse parses a text
    default with the option's type); a single value or None as it is."""
    if isinstance(value, (tuple, list)):
        return ",".join(str(item) for item in value)
    if isinstance(value, Mapping):
        return ",".join(f"{key}={item}" for key, item in value.items())
    return value


def _without_none(hint: Any) -> Any:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        kept = tuple(argument for argument in typing.get_args(hint) if argument is not type(None))
        return kept[0] if len(kept) == 1 else typing.Union[kept]  # noqa: UP007 (a tuple of types)
    return hint


def _scalar(kind: Any) -> Callable[[str], Any] | None:
    return kind if kind in (int, float, str) else None


def _several(kind: Callable[[str], Any], flag: str) -> Callable[[str], tuple[Any, ...]]:
    def parse(text: str) -> tuple[Any, ...]:
        try:
            return tuple(kind(part) for part in text.split(",") if part.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{flag} takes comma-separated {kind.__name__} values, got {text!r}") from None
    return parse


def _one_or_several(kind: Callable[[str], Any], flag: str) -> Callable[[str], Any]:
    several = _several(kind, flag)

    def parse(text: str) -> Any:
        values = several(text)
        return values[0] if len(values) == 1 else values
    return parse


def _reported(parse: Callable[[str], Any], flag: str) -> Callable[[str], Any]:
    # argparse shows an ArgumentTypeError's own message (a ValueError becomes "invalid value").
    def parse_text(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"{flag}: {error}") from None
    return parse_text


def _text_type(config_class: type, item: dataclasses.Field, hint: Any) -> Callable[[str], Any]:
    """How an option's text becomes the field's value (see the module docstring)."""
    flag = option_name(item.name)
    if item.metadata.get("parse") is not None:
        return _reported(item.metadata["parse"], flag)
    hint = _without_none(hint)
    if _scalar(hint):
        return hint
    arguments = typing.get_args(hint)
    if typing.get_origin(hint) is tuple and len(arguments) == 2 and arguments[1] is Ellipsis and _scalar(arguments[0]):
        return _several(arguments[0], flag)
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(arguments) == 2:
        single, sequence = arguments
        if _scalar(single) and typing.get_origin(sequence) is tuple and typing.get_args(sequence) == (single, Ellipsis):
            return _one_or_several(single, flag)
    raise TypeError(f"{config_class.__name__}.{item.name}: no command-line form for {hint}; declare a parse for it")


def _command_line_fields(config_class: type, fixed: Mapping[str, Any]) -> list[dataclasses.Field]:
    return [item for item in dataclasses.fields(config_class)
            if item.metadata.get("command_line", True) and item.name not in fixed]


def add_config_options(parser: argparse.ArgumentParser, config_class: type, *,
                       fixed: Mapping[str, Any] | None = None) -> None:
    """Add an option for every field of ``config_class`` but those in ``fixed`` (and those the
    configuration keeps off the command line), in the order of the fields.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    config_class : type
        A dataclass of :func:`~dueling_gym.experiments.learning.config.setting` fields.
    fixed : mapping, optional
        Settings the command fixes itself (no option).

    Raises
    ------
    TypeError
        A field's type has no text form and the field declares no ``parse``.
    """
    hints = typing.get_type_hints(config_class)
    for item in _command_line_fields(config_class, fixed or {}):
        extra: dict[str, Any] = {"type": _text_type(config_class, item, hints[item.name]),
                                 "help": item.metadata["help"]}
        if item.default is dataclasses.MISSING:
            extra["required"] = True
        else:
            extra["default"] = _as_text(item.default)
        if item.metadata.get("choices") is not None:
            extra["choices"] = item.metadata["choices"]
        parser.add_argument(option_name(item.name), dest=item.name, **extra)


def config_from_arguments(config_class: type, arguments: argparse.Namespace, *,
                          fixed: Mapping[str, Any] | None = None) -> Any:
    """The configuration of parsed :func:`add_config_options` options and ``fixed`` (checked by
    the configuration: a ValueError or TypeError names the setting)."""
    fixed = dict(fixed or {})
    settings = {item.name: getattr(arguments, item.name) for item in _command_line_fields(config_class, fixed)}
    return config_class(**settings, **fixed)


def add_train_command(subcommands: Any) -> None:
    """Add ``dueling-gym train`` and one sub-command per declared trainer command."""
    from dueling_gym.experiments.learning import train_commands

    commands = train_commands()
    names = list(commands)
    train = subcommands.add_parser(
        "train", help=f"train a learned dueling policy ({', '.join(names[:-1])} or {names[-1]})",
        description="Train the pair policy of the `learned` agent on a mixture of problem families, then compare it "
                    "with every classic agent on held-out problems. Re-running the same command resumes.")
    algorithms = train.add_subparsers(dest="algorithm", metavar="ALGORITHM")
    algorithms.required = True
    for name, (_, command) in commands.items():
        # Every option shows its default in --help, once.
        parser = algorithms.add_parser(name, help=command.help, formatter_class=DefaultsHelpFormatter,
                                       description=f"dueling-gym train {name}: {command.help}.")
        resumable = command.trainer.resumable
        parser.add_argument("--out", required=True,
                            help="output folder (resumes from its checkpoint)" if resumable else "output folder")
        add_config_options(parser, command.trainer.config_class, fixed=command.fixed)
        if resumable:
            parser.add_argument("--no-resume", action="store_true",
                                help="start afresh instead of resuming from the folder's checkpoint")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument("--report-problems", type=non_negative_int, default=100,
                            help="held-out problems per family of the final comparison (0: none)")
        parser.set_defaults(handler=command_train, argv=None)


def command_train(args: argparse.Namespace) -> int:
    """Run ``dueling-gym train ALGORITHM``: train, then compare the policy on held-out problems."""
    from dueling_gym.experiments.learning import train_commands

    out_dir = Path(args.out)
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"--out {out_dir} is a file, not a folder")
    argv = sys.argv[1:] if args.argv is None else args.argv
    _, command = train_commands()[args.algorithm]
    command.check_installed()
    config = config_from_arguments(command.trainer.config_class, args, fixed=command.fixed)
    resume = command.trainer.resumable and not args.no_resume
    trainer = command.trainer(out_dir, config, resume=resume, progress=not args.no_progress,
                              command=shlex.join(["dueling-gym", *argv]))
    policy = trainer.run()
    print(f"policy: {policy}")
    if args.report_problems and policy.suffix == ".npz":
        _compare(config, policy, out_dir, args.report_problems, progress=not args.no_progress)
    return 0


def _compare(config: Any, policy: Path, out_dir: Path, n_problems: int, *, progress: bool) -> None:
    """The final comparison with every classic agent, for each size the policy was trained on."""
    from dueling_gym.experiments.studies.learned_evaluation import evaluate

    sizes = list(config.n_arms) if isinstance(config.n_arms, tuple) else [config.n_arms]
    horizons = list(getattr(config, "horizons", None) or [config.horizon])
    for n_arms in sizes:
        report_dir = out_dir / "report" if len(sizes) == 1 else out_dir / "report" / f"K{n_arms}"
        print(f"comparing the policy with every classic agent on {n_problems} held-out problems per family "
              f"with K = {n_arms} at T = {', '.join(map(str, horizons))} ...")
        evaluate(report_dir, families=config.problem_families, n_arms=n_arms, horizons=horizons,
                 n_problems=n_problems, policy=policy, progress=progress)
        print((report_dir / "summary.md").read_text())
        print(f"report: {report_dir}/ (regret.csv, paired.csv, summary.md, regret.png)")
