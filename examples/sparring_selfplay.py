"""Sparring self-play in PettingZoo: two multi-armed-bandit learners play the two seats.

``sparring_v0`` is the dueling bandit as a two-player zero-sum game: ``player_0`` picks the
first arm of each duel, ``player_1`` the second, and the winner's seat gets +1.  Putting one
ordinary (cardinal) bandit learner in each seat *is* Sparring (Ailon, Karnin & Joachims, 2014):
each learner treats "my arm won" -- its observation, equal to ``(reward + 1) / 2`` -- as a
Bernoulli reward.  Both seats drift to the Condorcet winner, and the environment's ``infos``
report the Copeland regret of the joint duels, which the learners never see.

With UCB-SBM in both seats this loop reproduces ``dueling_gym.agents.Sparring`` duel for duel.

Sushi's winner beats the runner-up with probability only 0.512: UCB-SBM seats settle on arm 0
within 2·10^4 duels (5/5 seeds), Thompson seats need about 5·10^4 (4/5) to 10^5 (5/5).  On
problems with clear gaps both do it within 2·10^4 duels (``--problem mslr5-condorcet``).

Run::

    python examples/sparring_selfplay.py                        # Sushi, 5·10^4 duels, 5 seeds
    python examples/sparring_selfplay.py --problem arxiv --horizon 5000 --seeds 3
    python examples/sparring_selfplay.py --learners thompson --horizon 100000
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from dueling_gym.agents import UCB1, UCBSBM, BernoulliThompson
from dueling_gym.experiments import derive_seeds
from dueling_gym.problems import as_preference_matrix
from dueling_gym.stats import NO_SPREAD, mean_half_width

try:
    from dueling_gym.multiagent import sparring_v0
except ImportError:  # one line saying what to install, not a traceback
    raise SystemExit("sparring_selfplay.py needs PettingZoo: pip install 'dueling-gym[multiagent]'") from None

#: seat learner name -> bandit-agent class (``act() -> arm``, ``observe(arm, reward)``, ``recommend()``)
LEARNERS = {"ucb_sbm": UCBSBM, "thompson": BernoulliThompson, "ucb1": UCB1}


def selfplay(learner: str, problem: Any, horizon: int, seed: int, *, record_duels: bool = False) -> dict[str, Any]:
    """Play one ``horizon``-duel episode of ``sparring_v0`` with a ``learner`` in each seat.

    ``seed`` is split as :func:`dueling_gym.experiments.simulate` splits it (the environment
    gets the same seed as ``simulate(..., seed=seed)``); the two seats get independent child
    seeds of the agent seed.  Returns the seats' plays, most played arms and recommendations,
    the cumulative regret of the joint duels per notion and (optionally) the duels.
    """
    env = sparring_v0.parallel_env(preferences=problem, max_cycles=horizon)
    env_seed, agent_seed = derive_seeds(seed)
    seat_seeds = np.random.SeedSequence(agent_seed).spawn(len(env.possible_agents))
    seats = {agent: LEARNERS[learner](env.n_arms, seed=s) for agent, s in zip(env.possible_agents, seat_seeds)}
    observations, infos = env.reset(seed=env_seed)
    duels = []
    while env.agents:
        actions = {agent: seat.act() for agent, seat in seats.items()}
        observations, rewards, terminations, truncations, infos = env.step(actions)
        for agent, seat in seats.items():
            seat.observe(actions[agent], float(observations[agent]))  # 1 iff my arm won
        if record_duels:
            duels.append((actions["player_0"], actions["player_1"]))
    plays = env.plays
    result = {
        "problem": env.problem,
        "plays": plays,
        "most_played": tuple(int(np.argmax(row)) for row in plays),
        "recommend": tuple(seat.recommend() for seat in seats.values()),
        "regret": dict(infos["player_0"]["cumulative_regret"]),
        "wins": env.wins,
    }
    if record_duels:
        result["duels"] = np.array(duels, dtype=np.int64).reshape(-1, 2)
    env.close()
    return result


def mean_interval(values: Any) -> str:
    """``mean ± half-width`` of the 95% Student's t interval of the mean over runs, saying so;
    a single run has no interval ("n/a"), never "± 0.0"."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return f"{values.mean():.1f} ± {NO_SPREAD} (one run)"
    return f"{values.mean():.1f} ± {mean_half_width(values):.1f} (95% Student's t interval, {values.size} runs)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", default="sushi", help="shipped problem name (default: sushi)")
    parser.add_argument("--horizon", type=int, default=50_000, help="duels per run (default: 50000)")
    parser.add_argument("--seeds", type=int, default=5, help="number of seeds 0..N-1 (default: 5)")
    parser.add_argument("--learners", nargs="+", default=["ucb_sbm", "thompson"], choices=sorted(LEARNERS),
                        help="seat learners to try (default: ucb_sbm thompson)")
    args = parser.parse_args(argv)
    if args.horizon < 1 or args.seeds < 1:
        parser.error("--horizon and --seeds must be positive")

    problem = as_preference_matrix(args.problem)
    winner = problem.condorcet_winner
    targets = {winner} if winner is not None else {int(a) for a in problem.copeland_winners}
    label = f"Condorcet winner {winner}" if winner is not None else f"Copeland winners {sorted(targets)}"
    random_regret = args.horizon * problem.expected_random_regret("copeland_komiyama")
    print(f"Sparring self-play on {problem.name or args.problem} (K={problem.n_arms}, {label}), "
          f"horizon {args.horizon}, seeds 0..{args.seeds - 1}")
    print(f"(uniform random duels would cost {random_regret:.0f} Copeland regret, Komiyama scale)\n")
    print(f"{'learner':<9} {'seed':>4}  {'most played p0/p1':>17}  {'recommend':>9}  "
          f"{'share of p0/p1 on target':>24}  {'Copeland regret K / Z':>22}  {'time':>6}")
    for learner in args.learners:
        hits = 0
        regrets = []
        for seed in range(args.seeds):
            start = time.perf_counter()
            run = selfplay(learner, problem, args.horizon, seed)
            elapsed = time.perf_counter() - start
            plays = run["plays"]
            shares = [plays[s, sorted(targets)].sum() / args.horizon for s in range(2)]
            hit = set(run["most_played"]) <= targets
            hits += hit
            regrets.append(run["regret"]["copeland_komiyama"])
            most = "/".join(map(str, run["most_played"]))
            rec = "/".join(map(str, run["recommend"]))
            share = f"{shares[0]:.2f}/{shares[1]:.2f}"
            regret = f"{run['regret']['copeland_komiyama']:.1f} / {run['regret']['copeland_zoghi']:.1f}"
            print(f"{learner:<9} {seed:>4}  {most:>17}  {rec:>9}  {share:>24}  {regret:>22}  {elapsed:5.1f}s")
        print(f"{learner}: both seats' most played arm is the {label.split(' ')[0]} winner in "
              f"{hits}/{args.seeds} seeds; mean Copeland regret {mean_interval(regrets)} "
              f"(mean {np.mean(regrets) / random_regret:.1%} of uniform random)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
