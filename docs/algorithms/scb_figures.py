"""Regenerate the figure and the numbers of ``docs/algorithms/scb.md``.

Run from the repository root after the preset (``dueling-gym reproduce zoghi2015-scalability
--jobs 2``)::

    python docs/algorithms/scb_figures.py --preset-results results/zoghi2015-scalability

It follows SCB alone to ``T = 10^8`` on the same 500-armed problem (SCB is cheap per duel;
CCB and RUCB at 10^8 would need about an hour per run), reads the CCB and RUCB curves of the
preset run (``T = 10^7``), and measures the sample complexity of SCB's epoch-5 solver for three
ranges of winning probabilities.  Writes ``docs/algorithms/img/scb-regret.png`` and prints the
Markdown tables of the page.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dueling_gym.agents._scb_kernels import squaring_epoch  # noqa: E402
from dueling_gym.agents.scb import SCB, CopelandPAC  # noqa: E402
from dueling_gym.experiments import log_checkpoints, simulate  # noqa: E402
from dueling_gym.problems.generators import zoghi2015_scalability  # noqa: E402
from dueling_gym.stats import mean_half_width  # noqa: E402

N_ARMS = 500
LONG_HORIZON = 10**8
IMAGE = Path(__file__).resolve().parent / "img" / "scb-regret.png"
EPOCH_5_START = sum(2 ** (2**r) for r in range(1, 5))  # 4 + 16 + 256 + 65 536 duels before epoch 5


def long_scb_runs(runs: int) -> dict:
    """SCB to 10^8: regret curve, the time its epoch-5 solver returns, and its answer."""
    problem = zoghi2015_scalability(N_ARMS, np.random.default_rng(0))
    checkpoints = log_checkpoints(LONG_HORIZON)
    curves, transitions, correct = [], [], 0
    for run in range(runs):
        order = np.random.default_rng(20_000 + run).permutation(N_ARMS)  # arm labels differ per run
        matrix = problem.matrix[np.ix_(order, order)]
        agent = SCB(N_ARMS)
        result = simulate(agent, matrix, LONG_HORIZON, seed=run, checkpoints=checkpoints)
        curves.append(result.cumulative_regret["copeland_zoghi"])
        assert agent.epoch == 5
        transitions.append(EPOCH_5_START + agent.solver_duels if agent.exploiting else math.nan)
        correct += bool(agent.exploiting and order[agent.recommend()] in problem.copeland_winners)
    return {"checkpoints": np.asarray(checkpoints), "curves": np.array(curves),
            "transitions": np.array(transitions, dtype=float), "correct": correct}


def preset_curves(folder: Path) -> dict[str, dict]:
    """Per agent: checkpoints, regret curves and final recommendation correctness of the preset."""
    grouped: dict[str, dict] = {}
    for path in sorted((folder / "units").glob("*.json")):
        record = json.loads(path.read_text())
        agent = record["identity"]["agent"]
        agent = agent if isinstance(agent, str) else agent.get("name", str(agent))
        entry = grouped.setdefault(agent, {"checkpoints": np.asarray(record["checkpoints"]), "curves": [],
                                           "correct": 0})
        entry["curves"].append(record["cumulative_regret"]["copeland_zoghi"])
        entry["correct"] += bool(record["recommendation_is_copeland_winner"][-1])
    for entry in grouped.values():
        entry["curves"] = np.array(entry["curves"])
    return grouped


def solver_cost(low: float, high: float) -> dict:
    """One epoch-5 solver run (δ_5 = ln T_5 / T_5) on the problem with winning probabilities in [low, high]."""
    problem = zoghi2015_scalability(N_ARMS, np.random.default_rng(0), low=low, high=high)
    agent = CopelandPAC(N_ARMS, delta=math.exp(-squaring_epoch(5)[1]), seed=0)
    simulate(agent, problem, LONG_HORIZON, seed=0)
    decided = int(np.count_nonzero(agent.sign)) // 2
    return {"duels": agent.sample_complexity, "pairs": decided, "per_pair": agent.wins.sum() / decided,
            "correct": agent.done and agent.recommend() in problem.copeland_winners}


def _band(curves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean curve and the half-width of its 95% Student's t interval at every checkpoint."""
    return curves.mean(axis=0), np.asarray(mean_half_width(curves, axis=0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--preset-results", type=Path, default=Path("results/zoghi2015-scalability"))
    arguments = parser.parse_args()

    scb = long_scb_runs(arguments.runs)
    preset = preset_curves(arguments.preset_results) if arguments.preset_results.exists() else {}

    figure, axis = plt.subplots(figsize=(7.5, 4.5))
    for name, entry in sorted(preset.items()):
        mean, half = _band(entry["curves"])
        axis.plot(entry["checkpoints"], mean, label=f"{name.upper()} (preset, T = 10^7)")
        axis.fill_between(entry["checkpoints"], mean - half, mean + half, alpha=0.25)
    mean, half = _band(scb["curves"])
    axis.plot(scb["checkpoints"], mean, label="SCB (followed to T = 10^8)", color="black")
    axis.fill_between(scb["checkpoints"], mean - half, mean + half, color="black", alpha=0.2)
    axis.axvline(np.nanmean(scb["transitions"]), color="black", linestyle=":", linewidth=1)
    # Logarithmic regret axis: SCB's exploration (about 4 * 10^7 by 10^8) would flatten CCB's and
    # RUCB's curves on a linear one.
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_ylim(bottom=1)
    axis.set_xlabel("duels t")
    axis.set_ylabel("cumulative Copeland regret (Zoghi scale, log)")
    axis.set_title("500 arms, three cyclic Copeland winners (mean, 95% Student's t band)")
    axis.legend(loc="upper left", fontsize=8)
    figure.tight_layout()
    IMAGE.parent.mkdir(exist_ok=True)
    figure.savefig(IMAGE, dpi=110)

    print("| agent | horizon | regret at the horizon | regret at 10^7 | Copeland winner recommended |")
    print("|---|---|---|---|---|")
    at_1e7 = int(np.searchsorted(scb["checkpoints"], 10**7))
    for name, entry in sorted(preset.items()):
        final = entry["curves"][:, -1]
        print(f"| {name} | 10^7 | {final.mean():,.0f} ± {mean_half_width(final):,.0f} | (same) | "
              f"{entry['correct']}/{len(final)} |")
    final = scb["curves"][:, -1]
    print(f"| scb | 10^8 | {final.mean():,.0f} ± {mean_half_width(final):,.0f} | "
          f"{scb['curves'][:, at_1e7].mean():,.0f} | {scb['correct']}/{len(final)} |")
    transitions = scb["transitions"]
    print(f"\nSCB leaves exploration at t = {np.nanmean(transitions):,.0f} on average "
          f"(min {np.nanmin(transitions):,.0f}, max {np.nanmax(transitions):,.0f}; "
          f"{np.count_nonzero(np.isfinite(transitions))}/{len(transitions)} runs)\n")
    print("| winning probabilities | epoch-5 solver duels | pairs decided | duels per pair | right answer |")
    print("|---|---|---|---|---|")
    for low, high in ((0.6, 0.9), (0.75, 1.0), (0.9, 1.0)):
        row = solver_cost(low, high)
        print(f"| [{low}, {high}] | {row['duels']:,} | {row['pairs']:,} of {N_ARMS * (N_ARMS - 1) // 2:,} | "
              f"{row['per_pair']:.0f} | {row['correct']} |")


if __name__ == "__main__":
    main()
