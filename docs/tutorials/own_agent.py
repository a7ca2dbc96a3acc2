import numpy as np

from dueling_gym.agents import DuelingAgent, register_agent


@register_agent("explore_commit")
class ExploreThenCommit(DuelingAgent):
    """Duel uniformly random pairs for `rounds` steps, then exploit the empirical Copeland winner."""

    def __init__(self, n_arms, *, rounds: int = 1000, seed=None):
        self.rounds = rounds
        super().__init__(n_arms, seed=seed)

    def _reset_state(self):
        self.wins = np.zeros((self.n_arms, self.n_arms), dtype=np.int64)
        self.t = 0
        self.committed = None  # the arm exploited once exploration is over

    def act(self):
        if self.t < self.rounds:  # a uniformly random pair of distinct arms
            first = int(self.rng.integers(self.n_arms))
            second = (first + 1 + int(self.rng.integers(self.n_arms - 1))) % self.n_arms
            return first, second
        if self.committed is None:
            self.committed = self.recommend()
        return self.committed, self.committed

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


def compare(n_runs=20, horizon=20_000):
    """The new agent beside a built-in one: same problem, same seeds, 95% intervals."""
    from dueling_gym.agents import make_agent
    from dueling_gym.experiments import simulate
    from dueling_gym.problems import load_problem
    from dueling_gym.stats import NO_SPREAD, mean_half_width

    winners = set(load_problem("sushi").copeland_winners)
    checkpoints = [horizon // 4, horizon // 2, horizon]
    agents = {"explore_commit (rounds=500)": make_agent("explore_commit", 16, rounds=500),  # by its registered name
              "rucb": make_agent("rucb", 16)}
    print(f"Sushi (16 arms), {n_runs} runs of {horizon:,} duels per agent (seeds 0-{n_runs - 1}).")
    print("Cumulative Copeland regret: mean [95% Student's t interval of the mean, n - 1 degrees of freedom]")
    print(f"{'agent':<28}" + "".join(f"{f't = {t:,}':>24}" for t in checkpoints) + "   found the winner")
    for label, agent in agents.items():
        runs = [simulate(agent, "sushi", horizon=horizon, seed=seed, checkpoints=checkpoints)
                for seed in range(n_runs)]
        regret = np.array([run.cumulative_regret["copeland_komiyama"] for run in runs])  # runs x checkpoints
        half = mean_half_width(regret, axis=0)  # Student's t, n - 1 degrees of freedom
        cells = [f"{m:7.0f} [{m - h:6.0f}, {m + h:6.0f}]" if n_runs > 1 else f"{m:7.0f} [{NO_SPREAD} (one run)]"
                 for m, h in zip(regret.mean(axis=0), half)]
        found = sum(int(run.recommendations[-1]) in winners for run in runs)
        print(f"{label:<28}" + "".join(f"{cell:>24}" for cell in cells) + f"   {found} of {n_runs} runs")
        if label.startswith("explore_commit"):
            wrong = regret[[int(run.recommendations[-1]) not in winners for run in runs]]
            if len(wrong):
                growth = (wrong[:, -1] - wrong[:, -2]) / (checkpoints[-1] - checkpoints[-2])
                spread = (f"± {mean_half_width(growth):.3f} (95% t, {len(growth)} runs)" if len(growth) > 1
                          else f"± {NO_SPREAD} (one run)")
                print(f"{'':<28}runs that committed to a wrong arm: regret grows by {growth.mean():.3f} {spread} "
                      "per duel for ever (linear regret)")


if __name__ == "__main__":  # importing this module (dueling-gym run / benchmark do) only defines the agent
    compare()
