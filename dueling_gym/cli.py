"""The ``dueling-gym`` command line.

Subcommands
-----------
``dueling-gym problems``
    A table of the shipped problems (K, Condorcet winner, Copeland winners, C, L_C, ...).
``dueling-gym demo``
    A uniformly random agent on ``CopelandDuel-v0``, printing its cumulative regret.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

import numpy as np

__all__ = ["main", "build_parser", "problems_table"]


def _format_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    separator = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), separator, *(line(row) for row in rows)])


def problems_table(with_bounds: bool = True) -> str:
    """Markdown table of the shipped problems (arms are 0-based)."""
    from dueling_gym.problems import list_problems, load_problem

    header = ["name", "K", "Condorcet winner", "Copeland winners", "C", "L_C", "Borda winners", "ties"]
    bound_functions = None
    if with_bounds:
        try:
            from dueling_gym.problems.lower_bounds import ecw_lower_bound_constant, lower_bound_constant

            bound_functions = (lower_bound_constant, ecw_lower_bound_constant)
            header += ["LB", "ECWB"]
        except ImportError:  # pragma: no cover - lower bounds always ship
            bound_functions = None
    rows = []
    for name in list_problems():
        problem = load_problem(name)
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
        rows.append(row)
    return _format_table(header, rows)


def _command_problems(args: argparse.Namespace) -> int:
    print(problems_table(with_bounds=not args.no_bounds))
    print("\nArms are 0-based. C = number of Copeland winners, L_C = losses of a Copeland winner;"
          " LB / ECWB = lower-bound constants of Komiyama et al. (2016), Copeland regret (Komiyama scale) per ln T.")
    return 0


def _command_demo(args: argparse.Namespace) -> int:
    import gymnasium as gym

    import dueling_gym  # noqa: F401  (registers the environments)

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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``dueling-gym`` command."""
    parser = argparse.ArgumentParser(prog="dueling-gym", description="Dueling bandits for the RL ecosystem.")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")
    subcommands.required = True

    problems = subcommands.add_parser("problems", help="table of the shipped preference matrices")
    problems.add_argument("--no-bounds", action="store_true", help="skip the LB/ECWB lower-bound columns")
    problems.set_defaults(handler=_command_problems)

    from dueling_gym.problems import list_problems

    demo = subcommands.add_parser("demo", help="a random agent on CopelandDuel-v0, printing its regret")
    demo.add_argument("--problem", default="multisol", choices=list_problems(), help="shipped problem (default: multisol)")
    demo.add_argument("--horizon", type=_positive_int, default=10_000, help="number of duels (default: 10000)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    demo.set_defaults(handler=_command_demo)
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dueling-gym`` console script."""
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
