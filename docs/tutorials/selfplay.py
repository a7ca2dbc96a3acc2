"""Sparring self-play in PettingZoo: random seats first, then two bandit learners in the two seats.

    python docs/tutorials/selfplay.py                                   # Sushi, 5·10^4 duels, 5 seeds
    python docs/tutorials/selfplay.py --problem arxiv --horizon 5000 --seeds 3
    python docs/tutorials/selfplay.py --learners thompson --horizon 100000
"""

import argparse
import time
from collections import Counter

import numpy as np

from dueling_gym.agents import UCB1, UCBSBM, BernoulliThompson
from dueling_gym.experiments import derive_seeds
from dueling_gym.problems import as_preference_matrix
from dueling_gym.stats import NO_SPREAD, mean_half_width

try:
    from dueling_gym.multiagent import sparring_v0
except ImportError:  # one line saying what to install, not a traceback
    raise SystemExit("selfplay.py needs PettingZoo: pip install 'dueling-gym[multiagent]'") from None

#: seat learner name -> bandit-agent class (``act() -> arm``, ``observe(arm, reward)``, ``recommend()``)
LEARNERS = {"ucb_sbm": UCBSBM, "thompson": BernoulliThompson, "ucb1": UCB1}


def random_play(problem, duels, seed):
    """``duels`` duels of uniformly random arms: the net reward of each seat and the pair's Copeland regret."""
    env = sparring_v0.parallel_env(preferences=problem, max_cycles=duels)
    env_seed, agent_seed = derive_seeds(seed)  # the seats' draws must not be the environment's
    observations, infos = env.reset(seed=env_seed)
    for offset, agent in enumerate(env.agents):
        env.action_space(agent).seed(agent_seed + offset)
    net_reward = Counter()
    while env.agents:
        actions = {agent: env.action_space(agent).sample() for agent in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)
        net_reward.update(rewards)  # +1 to the winner's seat, -1 to the loser's
    env.close()
    return dict(net_reward), infos["player_0"]["cumulative_regret"]["copeland_komiyama"]


def selfplay(learner, problem, horizon, seed, *, record_duels=False):
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
    result = {
        "plays": env.plays,
        "most_played": tuple(int(np.argmax(row)) for row in env.plays),
        "recommend": tuple(seat.recommend() for seat in seats.values()),
        "regret": dict(infos["player_0"]["cumulative_regret"]),
    }
    if record_duels:
        result["duels"] = np.array(duels, dtype=np.int64).reshape(-1, 2)
    env.close()
    return result


def mean_interval(values):
    """``mean ± half-width`` of the 95% Student's t interval of the mean over runs, saying so;
    a single run has no interval ("n/a"), never "± 0.0"."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return f"{values.mean():.1f} ± {NO_SPREAD} (one run)"
    return f"{values.mean():.1f} ± {mean_half_width(values):.1f} (95% Student's t interval, {values.size} runs)"


def main(argv=None):
    parser = argparse.ArgumentParser(description="Sparring self-play in PettingZoo.")
    parser.add_argument("--problem", default="sushi", help="shipped problem name (default: sushi)")
    parser.add_argument("--horizon", type=int, default=50_000, help="duels per learners' run (default: 50000)")
    parser.add_argument("--seeds", type=int, default=5, help="number of seeds 0..N-1 (default: 5)")
    parser.add_argument("--learners", nargs="+", default=["ucb_sbm", "thompson"], choices=sorted(LEARNERS),
                        help="seat learners to try (default: ucb_sbm thompson)")
    args = parser.parse_args(argv)
    if args.horizon < 1 or args.seeds < 1:
        parser.error("--horizon and --seeds must be positive")

    problem = as_preference_matrix(args.problem)
    net_reward, regret = random_play(problem, 1000, seed=0)
    print(f"1000 duels of uniformly random arms, net reward per seat: {net_reward}")
    print(f"cumulative Copeland regret of the pair: {regret:.1f}\n")

    winner = problem.condorcet_winner
    targets = {winner} if winner is not None else {int(a) for a in problem.copeland_winners}
    label = f"Condorcet winner {winner}" if winner is not None else f"Copeland winners {sorted(targets)}"
    random_regret = args.horizon * problem.expected_random_regret("copeland_komiyama")
    print(f"Sparring self-play on {problem.name or args.problem} (K={problem.n_arms}, {label}), "
          f"horizon {args.horizon}, seeds 0..{args.seeds - 1}")
    print(f"(uniformly random duels would cost {random_regret:.0f} Copeland regret, Komiyama scale)\n")
    print(f"{'learner':<9} {'seed':>4}  {'most played p0/p1':>17}  {'recommend':>9}  "
          f"{'share of p0/p1 on target':>24}  {'Copeland regret K / Z':>22}  {'time':>6}")
    for learner in args.learners:
        hits, regrets = 0, []
        for seed in range(args.seeds):
            start = time.perf_counter()
            run = selfplay(learner, problem, args.horizon, seed)
            elapsed = time.perf_counter() - start
            shares = [run["plays"][s, sorted(targets)].sum() / args.horizon for s in range(2)]
            hits += set(run["most_played"]) <= targets
            regrets.append(run["regret"]["copeland_komiyama"])
            most = "/".join(map(str, run["most_played"]))
            recommended = "/".join(map(str, run["recommend"]))
            share = f"{shares[0]:.2f}/{shares[1]:.2f}"
            regret = f"{run['regret']['copeland_komiyama']:.1f} / {run['regret']['copeland_zoghi']:.1f}"
            print(f"{learner:<9} {seed:>4}  {most:>17}  {recommended:>9}  {share:>24}  {regret:>22}  {elapsed:5.1f}s")
        print(f"{learner}: both seats' most played arm is the {label.split(' ')[0]} winner in "
              f"{hits}/{args.seeds} seeds; mean Copeland regret {mean_interval(regrets)} "
              f"(mean {np.mean(regrets) / random_regret:.1%} of uniformly random duels)\n")


if __name__ == "__main__":
    main()
