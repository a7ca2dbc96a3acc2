import numpy as np

from dueling_gym.agents import DuelingAgent, make_agent, register_agent
from dueling_gym.experiments import simulate


@register_agent("explore_commit")
class ExploreThenCommit(DuelingAgent):
    """Duel uniformly random pairs for `rounds` steps, then exploit the empirical Copeland winner."""

    def __init__(self, n_arms, *, rounds: int = 1000, seed=None):
        self.rounds = rounds
        super().__init__(n_arms, seed=seed)

    def _reset_state(self):
        self.wins = np.zeros((self.n_arms, self.n_arms), dtype=np.int64)
        self.t = 0

    def act(self):
        if self.t < self.rounds:
            first, second = self.rng.choice(self.n_arms, size=2, replace=False)
            return int(first), int(second)
        best = self.recommend()
        return best, best

    def observe(self, action, first_won):
        first, second = action
        self.wins[first, second] += first_won
        self.wins[second, first] += not first_won
        self.t += 1

    def recommend(self):
        totals = self.wins + self.wins.T
        with np.errstate(invalid="ignore"):
            beats = np.where(totals > 0, self.wins / np.maximum(totals, 1), 0.5) > 0.5
        return int(np.argmax(beats.sum(axis=1)))


# The new agent beside a built-in one, on the same problem and seeds.
agents = {"explore_commit (rounds=2000)": ExploreThenCommit(16, rounds=2000),
          "explore_commit (rounds=500)": make_agent("explore_commit", 16, rounds=500),
          "rucb": make_agent("rucb", 16)}
for label, agent in agents.items():
    runs = [simulate(agent, "sushi", horizon=20_000, seed=seed) for seed in range(3)]
    regrets = [run.cumulative_regret["copeland_komiyama"][-1] for run in runs]
    print(f"{label:<28} mean Copeland regret over 3 runs of 20,000 duels: {np.mean(regrets):7.1f}")
