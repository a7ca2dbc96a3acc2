import csv

import numpy as np

from dueling_gym.agents import make_agent
from dueling_gym.envs.comparison_replay import ComparisonReplayEnv
from dueling_gym.experiments import simulate
from dueling_gym.problems.comparisons import load_comparisons

# 1. A synthetic arena log (the project ships no third-party data): six systems with hidden
#    Bradley-Terry strengths, 8% ties, and one pair that was never compared.
rng = np.random.default_rng(0)
systems = ["atlas", "borealis", "cirrus", "dynamo", "ember", "fjord"]
strength = dict(zip(systems, [1.0, 0.7, 0.6, 0.2, 0.0, -0.5]))
with open("battles.csv", "w", newline="") as stream:
    writer = csv.writer(stream)
    writer.writerow(["model_a", "model_b", "winner"])
    for _ in range(3000):
        a, b = rng.choice(systems, size=2, replace=False).tolist()
        if {a, b} == {"atlas", "fjord"}:
            continue  # never compared: filled by the model below
        p_a = 1.0 / (1.0 + np.exp(strength[b] - strength[a]))
        u = rng.random()
        writer.writerow([a, b, "tie" if u < 0.08 else ("model_a" if u < 0.08 + 0.92 * p_a else "model_b")])

# 2. The problem: empirical means, a tie as half a win, the missing pair from a Bradley-Terry fit.
problem = load_comparisons("battles.csv", first="model_a", second="model_b", fill_missing="bradley_terry")
facts = problem.provenance
arms = facts["arms"]
print(f"{facts['rows_read']} comparisons of {len(arms)} systems, {facts['ties_total']} ties "
      f"(rule: {facts['tie_rule']})")
print("Condorcet winner:", arms[problem.condorcet_winner] if problem.condorcet_winner is not None else None)
print("Copeland winners:", [arms[i] for i in problem.copeland_winners])
print("filled by Bradley-Terry:", facts["filled_pairs"])
for a, b in [("atlas", "borealis"), ("borealis", "cirrus"), ("dynamo", "ember"), ("atlas", "fjord")]:
    i, j = arms.index(a), arms.index(b)
    n, low, high = facts["counts"][i, j], facts["ci_lower"][i, j], facts["ci_upper"][i, j]
    interval = f"95% CI [{low:.3f}, {high:.3f}]" if n else "no comparison: Bradley-Terry"
    print(f"  P[{a} beats {b}] = {problem[i, j]:.3f}  ({facts['wins'][i, j]} wins, {facts['wins'][j, i]} losses, "
          f"{facts['ties'][i, j]} ties; {interval})")

# 3. Agents on the matrix of means: which system does each one recommend, at what regret?
horizon = 20_000
for name in ["rucb", "rmed1", "dts", "ecw_rmed"]:
    result = simulate(make_agent(name, problem.n_arms, seed=0), problem, horizon, seed=0)
    print(f"{name:>8}: recommends {arms[result.recommendations[-1]]:<9} "
          f"Condorcet regret {result.final_regret('condorcet_strong'):7.1f} after {horizon:,} duels")

# 4. The replay environment plays back logged comparisons (and Bernoulli draws for the filled pair).
env = ComparisonReplayEnv(problem)
env.reset(seed=0)
for duel in [(0, 1), (0, 5)]:
    observation, reward, _, _, info = env.step(duel)
    print(f"duel {arms[duel[0]]} vs {arms[duel[1]]}: first won={bool(observation)}, replay={info['replay']}, "
          f"log line={info['log_line']}, logged outcome={info['log_outcome']}")
