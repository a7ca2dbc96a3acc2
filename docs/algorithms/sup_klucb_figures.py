"""Regenerate the numbers and figures of ``docs/algorithms/sup_klucb.md``.

Run from the repository root::

    python docs/algorithms/sup_klucb_figures.py random --processes 2      # Sup-KLUCB vs DTS vs RUCB
    python docs/algorithms/sup_klucb_figures.py published                 # the seven published matrices
    python docs/algorithms/sup_klucb_figures.py cost                      # time per duel
    python docs/algorithms/sup_klucb_figures.py report                    # tables and plots from the saved runs

``random`` follows Agrawal & Chaporkar (2019, Section 4): random preference matrices with a
unique Copeland winner, ``K`` from 3 to 36, ``T = 10^5``, cumulative Copeland regret.  Game
``g`` with ``K`` arms is ``unique_copeland_winner(K, numpy.random.default_rng(g))`` (the matrices
of the ``agrawal2019`` preset).  Every run permutes the arms with a generator seeded by
``(K, g, run)``, so the lexicographic order of the initial phase and of ties favours no arm.
Per-run rows go to ``--out`` (default ``sup_klucb_runs/``): ``random.csv``, ``published.csv``
and the regret curves in ``random_curves.npz``; ``report`` reads them back.

Lock-in (Sup-KLUCB): a run is *locked* when one self-pair ``(i, i)`` makes up at least 99% of
the duels of the last tenth of the horizon, ``t in (0.9 T, T]``, and the agent's plug-in score
of ``i`` is exactly 1 at ``T`` (the state in which no super-arm's index can exceed the
self-pair's).  A lock-in is a *failure* when ``i`` is not a Copeland winner; its cost is the
regret accumulated after the last duel that was not ``(i, i)``.
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dueling_gym.agents import make_agent  # noqa: E402
from dueling_gym.experiments import log_checkpoints, simulate  # noqa: E402
from dueling_gym.problems import PreferenceMatrix, load_problem, unique_copeland_winner  # noqa: E402
from dueling_gym.stats import mean_half_width  # noqa: E402

HORIZON = 100_000
NOTION = "copeland_komiyama"
AGENTS = ("sup_klucb", "dts", "rucb")
PUBLISHED = ("sushi", "multisol", "gap", "arxiv", "mslr5-condorcet", "mslr5-noncondorcet", "cyclic4")
IMAGES = Path(__file__).resolve().parent / "img"
LOCK_WINDOW = 0.1
LOCK_SHARE = 0.99
FIELDS = ("agent", "variant", "problem", "n_arms", "game", "run", "regret", "correct", "dominant_duel", "share",
          "self_pair", "winner", "score", "locked", "failure", "lock_start", "lock_cost", "seconds")


def random_matrix(n_arms: int, game: int) -> PreferenceMatrix:
    return unique_copeland_winner(n_arms, np.random.default_rng(game))


def lock_in(result, problem: PreferenceMatrix, agent, horizon: int) -> dict:
    """Classify the end of a run (see the module docstring)."""
    duels = result.duels
    start = int(np.floor((1.0 - LOCK_WINDOW) * horizon))
    tail = duels[start:]
    codes = tail[:, 0] * problem.n_arms + tail[:, 1]
    values, counts = np.unique(codes, return_counts=True)
    dominant = int(values[np.argmax(counts)])
    first, second = divmod(dominant, problem.n_arms)
    share = float(counts.max() / tail.shape[0])
    self_pair = first == second
    winner = first in problem.copeland_winners
    scores = getattr(agent, "scores", None)
    score = float(scores[first]) if scores is not None and self_pair else float("nan")
    locked = self_pair and share >= LOCK_SHARE and (scores is None or score == 1.0)
    failure = locked and not winner
    lock_start, lock_cost = -1, 0.0
    if locked:
        other = np.flatnonzero((duels[:, 0] != first) | (duels[:, 1] != first))
        lock_start = int(other[-1]) + 2 if other.size else 1  # first t (1-based) of the final streak
        lock_cost = float((horizon - lock_start + 1) * problem.regret(NOTION, first, first))
    return {"dominant_duel": f"{first}-{second}", "share": share, "self_pair": self_pair, "winner": winner,
            "score": score, "locked": locked, "failure": failure, "lock_start": lock_start, "lock_cost": lock_cost}


def run_one(task: tuple) -> tuple[dict, np.ndarray]:
    agent_name, variant, problem_name, n_arms, game, run, horizon = task
    if problem_name == "random":
        base = random_matrix(n_arms, game)
        order = np.random.default_rng([n_arms, game, run]).permutation(n_arms)
    else:
        base = load_problem(problem_name)
        order = np.random.default_rng(10_000 + run).permutation(base.n_arms)
    problem = PreferenceMatrix(np.asarray(base.matrix)[np.ix_(order, order)], name=base.name)
    options = {"forced_exploration": True} if variant == "forced" else {}
    agent = make_agent(agent_name, problem.n_arms, **options)
    started = time.perf_counter()
    result = simulate(agent, problem, horizon, seed=run, checkpoints=log_checkpoints(horizon), record_duels=True)
    row = {"agent": agent_name, "variant": variant, "problem": problem_name, "n_arms": problem.n_arms,
           "game": game, "run": run, "regret": result.final_regret(NOTION),
           "correct": int(result.recommendations[-1]) in problem.copeland_winners,
           **lock_in(result, problem, agent, horizon), "seconds": time.perf_counter() - started}
    return row, result.cumulative_regret[NOTION]


def execute(tasks: list[tuple], processes: int, sink=None) -> list[tuple[dict, np.ndarray]]:
    """Run the tasks in the given order; ``sink(outputs)`` saves what is done every 50 runs."""
    outputs, started = [], time.perf_counter()
    if processes == 1:
        iterator = map(run_one, tasks)
        pool = None
    else:
        pool = multiprocessing.get_context("spawn").Pool(processes)
        iterator = pool.imap_unordered(run_one, tasks)
    for done, output in enumerate(iterator, 1):
        outputs.append(output)
        if done % 50 == 0 or done == len(tasks):
            print(f"  {done}/{len(tasks)} runs, {time.perf_counter() - started:.0f} s", flush=True)
            if sink is not None:
                sink(outputs)
    if pool is not None:
        pool.close()
        pool.join()
    return outputs


def write_rows(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def read_rows(path: Path) -> list[dict]:
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        for key in ("n_arms", "game", "run", "lock_start"):
            row[key] = int(row[key])
        for key in ("regret", "share", "score", "lock_cost", "seconds"):
            row[key] = float(row[key])
        for key in ("correct", "self_pair", "winner", "locked", "failure"):
            row[key] = row[key] == "True"
    return rows


def command_random(args) -> None:
    # Run by run, so that an interrupted sweep still holds complete (game, run) triples of all
    # three algorithms; the extra Sup-KLUCB runs (lock-in frequency only) come last.
    tasks = [(agent, "paper", "random", n_arms, game, run, HORIZON)
             for run in range(args.runs) for game in range(args.games_per_k)
             for n_arms in range(36, 2, -1) for agent in AGENTS]
    tasks += [("sup_klucb", "paper", "random", n_arms, game, run, HORIZON)
              for run in range(args.runs, args.lock_runs) for game in range(args.games_per_k) for n_arms in range(3, 37)]
    print(f"{len(tasks)} runs on {args.processes} process(es)", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)

    def save(outputs):
        outputs = sorted(outputs, key=lambda item: (item[0]["agent"], item[0]["n_arms"], item[0]["game"],
                                                    item[0]["run"]))
        write_rows(args.out / "random.csv", [row for row, _ in outputs])
        np.savez_compressed(args.out / "random_curves.npz", checkpoints=log_checkpoints(HORIZON),
                            keys=np.array([f"{r['agent']}|{r['n_arms']}|{r['game']}|{r['run']}" for r, _ in outputs]),
                            curves=np.array([curve for _, curve in outputs]))

    execute(tasks, args.processes, save)


def command_published(args) -> None:
    tasks = [("sup_klucb", variant, name, 0, 0, run, HORIZON)
             for name in PUBLISHED for variant in ("paper", "forced") for run in range(args.published_runs)]
    outputs = execute(tasks, args.processes)
    outputs.sort(key=lambda item: (PUBLISHED.index(item[0]["problem"]), item[0]["variant"], item[0]["run"]))
    args.out.mkdir(parents=True, exist_ok=True)
    write_rows(args.out / "published.csv", [row for row, _ in outputs])


def command_cost(args) -> None:
    print("| problem | K | ns per duel | duels per second |\n|---|---|---|---|")
    cases = [(f"random K={k}", random_matrix(k, 0)) for k in (3, 12, 24, 36)]
    cases += [(name, load_problem(name)) for name in ("sushi", "mslr5-noncondorcet")]
    for label, problem in cases:
        agent = make_agent("sup_klucb", problem.n_arms)
        simulate(agent, problem, 100, seed=0)  # compile / load the cache
        best = np.inf
        for seed in range(1, 4):
            started = time.perf_counter()
            simulate(agent, problem, 10**6, seed=seed)
            best = min(best, time.perf_counter() - started)
        print(f"| {label} | {problem.n_arms} | {best * 1e3:.0f} | {1e6 / best / 1e6:.2f} M |", flush=True)


def mean_ci(values: np.ndarray) -> tuple[float, float]:
    """Mean and the half-width of its 95% Student's t interval."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return float(values.mean()), float("nan")
    return float(values.mean()), float(mean_half_width(values))


def game_means(rows: list[dict], agent: str, runs: range, field: str = "regret") -> dict[tuple[int, int], float]:
    """Per game ``(K, g)``: the mean of ``field`` over the given runs (the unit of the intervals)."""
    table: dict[tuple[int, int], list[float]] = {}
    for row in rows:
        if row["agent"] == agent and row["run"] in runs:
            table.setdefault((row["n_arms"], row["game"]), []).append(float(row[field]))
    return {key: float(np.mean(values)) for key, values in table.items()}


K_BINS = ((3, 5), (6, 8), (9, 12), (13, 18), (19, 24), (25, 30), (31, 36))


def report_random(out: Path) -> None:
    all_rows = read_rows(out / "random.csv")
    # The comparison uses the (game, run) pairs that every algorithm has finished.
    done = [{(row["n_arms"], row["game"], row["run"]) for row in all_rows if row["agent"] == agent} for agent in AGENTS]
    complete = set.intersection(*done)
    rows = [row for row in all_rows if (row["n_arms"], row["game"], row["run"]) in complete]
    runs = range(0, 1 + max(key[2] for key in complete))
    means = {agent: game_means(rows, agent, runs) for agent in AGENTS}
    games = sorted(means["dts"])
    print(f"{len(complete)} (game, run) pairs with all three algorithms; runs per game: "
          f"{min(sum(1 for key in complete if key[:2] == game) for game in games)}-"
          f"{max(sum(1 for key in complete if key[:2] == game) for game in games)}")
    print(f"\n## Random matrices: {len(games)} games, runs {runs.start}-{runs.stop - 1} per game, T = {HORIZON}")
    print("\n| algorithm | mean regret at T (95% CI over games) | median over runs | games where it has the lowest mean |")
    print("|---|---|---|---|")
    stacked = np.array([[means[agent][game] for game in games] for agent in AGENTS])
    best = stacked.argmin(axis=0)
    for position, agent in enumerate(AGENTS):
        mean, half = mean_ci(stacked[position])
        median = np.median([row["regret"] for row in rows if row["agent"] == agent and row["run"] in runs])
        print(f"| {agent} | {mean:.0f} ± {half:.0f} | {median:.0f} | {np.count_nonzero(best == position)}/{len(games)} |")
    for other in ("dts", "rucb"):
        difference = stacked[0] - stacked[AGENTS.index(other)]
        mean, half = mean_ci(difference)
        print(f"\nSup-KLUCB minus {other}: {mean:.0f} ± {half:.0f} per game (95% CI); "
              f"Sup-KLUCB lower on {np.count_nonzero(difference < 0)}/{len(games)} games")

    print("\n| K | " + " | ".join(AGENTS) + " | Sup-KLUCB without its lock-in runs | Sup-KLUCB failures "
          "| Sup-KLUCB / DTS wrong at T |")
    print("|---|" + "---|" * (len(AGENTS) + 3))
    all_sup = [row for row in all_rows if row["agent"] == "sup_klucb"]
    for low, high in K_BINS:
        cells = []
        for position, agent in enumerate(AGENTS):
            values = [means[agent][game] for game in games if low <= game[0] <= high]
            mean, half = mean_ci(values)
            cells.append(f"{mean:.0f} ± {half:.0f}")
        clean = [row["regret"] for row in rows if row["agent"] == "sup_klucb" and low <= row["n_arms"] <= high
                 and not row["failure"]]
        failures = [row["failure"] for row in all_sup if low <= row["n_arms"] <= high]
        cells.append(f"{np.mean(clean):.0f} (median {np.median(clean):.0f})")
        cells.append(f"{sum(failures)}/{len(failures)}")
        wrong = [sum(not row["correct"] for row in rows if row["agent"] == agent and low <= row["n_arms"] <= high)
                 for agent in ("sup_klucb", "dts")]
        total = sum(1 for row in rows if row["agent"] == "dts" and low <= row["n_arms"] <= high)
        cells.append(f"{wrong[0]} / {wrong[1]} of {total}")
        print(f"| {low}-{high} | " + " | ".join(cells) + " |")

    failures = [row for row in all_sup if row["failure"]]
    locked_right = [row for row in all_sup if row["locked"] and not row["failure"]]
    print(f"\nSup-KLUCB, all {len(all_sup)} runs: {len(failures)} lock-in failures "
          f"({100 * len(failures) / len(all_sup):.1f}%), {len(locked_right)} runs locked on the winner's self-pair, "
          f"{sum(not row['correct'] for row in all_sup)} wrong recommendations at T")
    if failures:
        starts = np.array([row["lock_start"] for row in failures])
        costs = np.array([row["lock_cost"] for row in failures])
        regrets = np.array([row["regret"] for row in failures])
        print(f"  lock-in starts: median t = {np.median(starts):.0f}, 90% before t = {np.quantile(starts, 0.9):.0f}, "
              f"latest {starts.max()}; cost after the start: mean {costs.mean():.0f} "
              f"({100 * costs.sum() / regrets.sum():.0f}% of those runs' regret)")
        sup_runs = [row for row in rows if row["agent"] == "sup_klucb"]
        total = sum(row["regret"] for row in sup_runs)
        print(f"  share of Sup-KLUCB's total regret (compared runs) due to lock-in failures: "
              f"{100 * sum(row['regret'] for row in sup_runs if row['failure']) / total:.0f}%")
    print("\nEnding on a non-winner (last tenth of the duels >= 95% one non-winner self-pair, any score):")
    for agent in AGENTS:
        stuck = [row for row in rows if row["agent"] == agent and row["self_pair"] and not row["winner"]
                 and row["share"] >= 0.95]
        print(f"  {agent}: {len(stuck)} of {sum(row['agent'] == agent for row in rows)} runs, "
              f"of which {sum(row['failure'] for row in stuck)} are lock-ins (score 1); mean regret of these runs "
              f"{np.mean([row['regret'] for row in stuck]) if stuck else float('nan'):.0f}")
    data = np.load(out / "random_curves.npz")
    checkpoints = data["checkpoints"]
    half = int(np.searchsorted(checkpoints, HORIZON // 2))
    print(f"\nRegret accrued over the second half, t in ({checkpoints[half]}, {HORIZON}] vs the first half:")
    for agent in AGENTS:
        late, early = [], []
        for key, curve in zip(data["keys"], data["curves"]):
            name, n_arms, game, run = str(key).split("|")
            if name == agent and (int(n_arms), int(game), int(run)) in complete:
                late.append(curve[-1] - curve[half])
                early.append(curve[half])
        print(f"  {agent}: second half {np.mean(late):.0f}, first half {np.mean(early):.0f} (mean over runs)")
    for agent in ("dts", "rucb"):
        stuck = [row for row in rows if row["agent"] == agent and row["self_pair"] and not row["winner"]
                 and row["share"] >= LOCK_SHARE]
        print(f"{agent}: {len(stuck)} of {sum(row['agent'] == agent for row in rows)} runs whose last tenth is >= 99% one non-winner self-pair; "
              f"{sum(not row['correct'] for row in rows if row['agent'] == agent)} wrong recommendations at T")
    plot_random(out, rows, means, games, complete)


def plot_random(out: Path, rows, means, games, complete) -> None:
    styles = {"sup_klucb": ("Sup-KLUCB", "-"), "dts": ("DTS", ":"), "rucb": ("RUCB", "--")}
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for agent in AGENTS:
        label, style = styles[agent]
        ks = np.arange(3, 37)
        per_k = [[means[agent][game] for game in games if game[0] == k] for k in ks]
        axes[0].plot(ks, [np.mean(v) for v in per_k], style, marker="o", markersize=3, label=f"{label}, mean")
        centres, values, halves = [], [], []
        for low, high in K_BINS:
            mean, half = mean_ci([means[agent][game] for game in games if low <= game[0] <= high])
            centres.append((low + high) / 2)
            values.append(mean)
            halves.append(half)
        axes[0].errorbar(centres, values, yerr=halves, fmt="none", capsize=3,
                         color=axes[0].lines[-1].get_color())
        medians = [np.median([r["regret"] for r in rows if r["agent"] == agent and r["n_arms"] == k])
                   for k in ks]
        axes[1].plot(ks, medians, style, marker="o", markersize=3, label=label)
    axes[0].set(xlabel="number of arms K", ylabel="Copeland regret at T = 10^5 (Komiyama et al.)", yscale="log",
                title="mean per K; bars: 95% CI over the games of a K range")
    axes[1].set(xlabel="number of arms K", ylabel="median regret at T over runs", yscale="log",
                title="median per K")
    for axis in axes:
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(IMAGES / "sup_klucb-regret-vs-k.png", dpi=110)

    data = np.load(out / "random_curves.npz")
    checkpoints, keys, curves = data["checkpoints"], data["keys"], data["curves"]
    figure, axis = plt.subplots(figsize=(6.5, 4.2))
    for agent in AGENTS:
        label, style = styles[agent]
        per_game: dict[str, list[np.ndarray]] = {}
        for key, curve in zip(keys, curves):
            name, n_arms, game, run = str(key).split("|")
            if name == agent and (int(n_arms), int(game), int(run)) in complete:
                per_game.setdefault(f"{n_arms}|{game}", []).append(curve)
        game_curves = np.array([np.mean(v, axis=0) for v in per_game.values()])
        mean = game_curves.mean(axis=0)
        half = mean_half_width(game_curves, axis=0)
        axis.plot(checkpoints, mean, style, label=label)
        axis.fill_between(checkpoints, mean - half, mean + half, alpha=0.2)
    axis.set(xscale="log", xlabel="duels t", ylabel="mean cumulative Copeland regret",
             title=f"K = 3..36: {len(games)} games, {len(complete)} runs per algorithm (95% CI)")
    axis.legend()
    figure.tight_layout()
    figure.savefig(IMAGES / "sup_klucb-regret-vs-t.png", dpi=110)


def report_published(out: Path) -> None:
    rows = read_rows(out / "published.csv")
    runs = len({row["run"] for row in rows})
    print(f"\n## Published matrices, T = {HORIZON}, {runs} runs (arms permuted per run)")
    print("\n| problem | K | variant | regret at T (mean ± 95% CI) | median | lock-in failures | "
          "locked on a winner | wrong at T | mean cost of a failure |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in PUBLISHED:
        for variant in ("paper", "forced"):
            chosen = [row for row in rows if row["problem"] == name and row["variant"] == variant]
            mean, half = mean_ci([row["regret"] for row in chosen])
            failures = [row for row in chosen if row["failure"]]
            cost = f"{np.mean([row['lock_cost'] for row in failures]):.0f}" if failures else "-"
            print(f"| {name} | {chosen[0]['n_arms']} | {variant} | {mean:.0f} ± {half:.0f} | "
                  f"{np.median([row['regret'] for row in chosen]):.0f} | {len(failures)}/{len(chosen)} | "
                  f"{sum(row['locked'] and not row['failure'] for row in chosen)} | "
                  f"{sum(not row['correct'] for row in chosen)} | {cost} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("command", choices=("random", "published", "cost", "report"))
    parser.add_argument("--out", type=Path, default=Path("sup_klucb_runs"))
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--games-per-k", type=int, default=3, help="matrices per K (problem seeds 0..n-1)")
    parser.add_argument("--runs", type=int, default=5, help="runs per game of every algorithm")
    parser.add_argument("--lock-runs", type=int, default=5, help="runs per game of Sup-KLUCB (extra ones count lock-ins only)")
    parser.add_argument("--published-runs", type=int, default=20)
    args = parser.parse_args()
    if args.command == "random":
        command_random(args)
    elif args.command == "published":
        command_published(args)
    elif args.command == "cost":
        command_cost(args)
    else:
        if (args.out / "random.csv").exists():
            report_random(args.out)
        if (args.out / "published.csv").exists():
            report_published(args.out)


if __name__ == "__main__":
    main()
