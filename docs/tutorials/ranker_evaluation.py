from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from dueling_gym.agents import make_agent
from dueling_gym.experiments import simulate
from dueling_gym.experiments.pure_exploration import run_pure_exploration
from dueling_gym.problems.ltr_files import read_ltr_file, write_ltr_file
from dueling_gym.problems import ranker_evaluation
from dueling_gym.problems.ranker_problems import synthetic_ltr_data

# 1. A learning-to-rank file.  The project ships no third-party data, so we write a small
#    synthetic one in the LETOR format of MSLR-WEB10K: grades 0-4, 25 features.
path = Path("synthetic-ltr.txt")
write_ltr_file(path, synthetic_ltr_data(n_queries=300, documents_per_query=(10, 60), n_features=25, seed=2))
data = read_ltr_file(path)
print(f"{path}: {data.n_documents} documents, {data.n_queries} queries, {data.n_features} features")

# 2. The problem: each feature is a ranker; two rankers duel by team-draft interleaving of
#    their top-10 lists, a navigational user clicks, the ranker with more clicks wins.  The
#    default budget is sequential: each pair plays batches of comparisons until its interval
#    says which ranker is preferred (settled), that the two are within 0.025 of a coin flip
#    (near-tie), or 20 000 comparisons are spent (unsettled).
problem = ranker_evaluation(path, interleaving="team_draft", click_model="navigational", cutoff=10,
                            seed=0, jobs=1, progress=False)
K = problem.n_arms
errors = problem.provenance["standard_errors"]
print(problem)
print("facts:", {key: problem.summary()[key] for key in ("K", "condorcet_winner", "copeland_winners", "C")})
print(f"pairs: {problem.provenance['status_counts']}, {problem.provenance['total_comparisons']:,} comparisons, "
      f"from {problem.provenance['comparisons'][np.triu_indices(K, 1)].min()} to "
      f"{problem.provenance['comparisons'].max()} per pair")
confidence = problem.provenance["structure_confidence"]
print(f"P(Copeland winners = {confidence['copeland_winners']}) = {confidence['p_copeland']:.3f}, "
      f"P(Condorcet winner = {confidence['condorcet_winner']}) = {confidence['p_condorcet']:.3f}")

#    A fixed budget is the alternative: every pair plays the same number of comparisons, and
#    the same confidence says whether that was enough.
fixed = ranker_evaluation(path, interleaving="team_draft", click_model="navigational", cutoff=10,
                          comparisons_per_pair=200, seed=0, jobs=1, progress=False)
confidence = fixed.provenance["structure_confidence"]
print(f"fixed, 200 per pair: {fixed.provenance['total_comparisons']:,} comparisons, Copeland winners "
      f"{confidence['copeland_winners']} with P = {confidence['p_copeland']:.3f}, Condorcet winner "
      f"{confidence['condorcet_winner']} with P = {confidence['p_condorcet']:.3f}")
best = problem.copeland_winners[0]
closest = [j for j in np.argsort(problem[best]) if j != best][:4]
print(f"ranker {best} beats its closest rivals with probability "
      + ", ".join(f"{problem[best, j]:.3f} (ranker {j}, +-{errors[best, j]:.3f})" for j in closest))

# 3. Regret minimisers, as in the online-evaluation experiments of RUCB, MergeRUCB and CCB.
#    The regret is measured against the estimated matrix above.
notion = "condorcet_strong" if problem.condorcet_winner is not None else "copeland_komiyama"
horizon = 100_000
figure, axis = plt.subplots(figsize=(6.4, 4.0))
for name in ("merge_rucb", "rucb", "ccb", "dts"):
    result = simulate(make_agent(name, K, seed=0), problem, horizon, seed=0)
    regret = result.cumulative_regret[notion]
    axis.plot(result.checkpoints, regret, label=name)
    print(f"{name:>10}: {notion} regret {regret[-1]:8.1f} after {horizon:,} duels, "
          f"recommends ranker {result.recommendations[-1]}")
axis.set(xscale="log", xlabel="duels (interleaved comparisons)", ylabel=f"cumulative {notion} regret",
         title=f"{K} feature rankers, team draft, navigational clicks (one run per agent)")
axis.legend()
figure.tight_layout()
figure.savefig("ranker_evaluation_regret.png", dpi=120)

# 4. Identification: find the best ranker with as few comparisons as possible.
for name in ("single_elimination", "pl_pac", "multisort"):
    outcome = run_pure_exploration(make_agent(name, K, seed=0), problem, seed=0, max_samples=2_000_000)
    print(f"{name:>12}: answers ranker {outcome.winner} after {outcome.samples:,} duels "
          f"(stopped: {outcome.stopped}, a {outcome.target} winner: {outcome.winner_correct})")
