"""Train pair policies with evolution strategies on the regret they are judged by.

:func:`train_evolution` optimises the weights of the permutation-equivariant pair network
(:mod:`dueling_gym.pair_network`, whose compiled batch evaluator plays whole runs) with natural
evolution strategies (Salimans, Ho, Chen, Sidor and Sutskever, *Evolution Strategies as a
Scalable Alternative to Reinforcement Learning*, arXiv:1703.03864, 2017, section 2, with the
mirrored sampling and rank-based fitness shaping they use): antithetic Gaussian perturbations of
the weights, centred-rank fitness shaping and Adam steps (Kingma and Ba, *Adam*, ICLR 2015,
Algorithm 1).  Each generation draws fresh training problems from the families (the same
problems, duel outcomes and policy draws for every perturbation: common random numbers), scores
every perturbation by its cumulative regret over whole runs of ``horizon`` duels, and moves the
weights towards the better ones.

Why not only PPO: the objective here is exactly the one the policy is compared on (mean
cumulative regret at the horizon, per family), with no value function, discounting or reward
normalisation in between, and a whole run of 1000 duels costs about a millisecond in the
compiled loop, so a generation of 32 perturbations x 90 runs takes seconds without torch.  It can
start from a PPO-trained policy (``init``) or from random weights.

Fitness is normalised per family, so each family weighs the same whatever its scale: by default
by the regret of the best of a few strong classic agents on the family's validation problems
(measured once), otherwise by the regret of uniformly random duels (known in closed form).  The
policy with the best normalised regret on a fixed set of validation problems (independent of
training and of the held-out problems used for reporting) is exported.  Checkpoints hold the whole
optimiser state and the generator, so a resumed run is bit-identical to an uninterrupted one;
they and the policy are written atomically (a crash leaves the previous file whole), and a
checkpoint that is damaged or holds non-finite weights is refused on resume rather than trained
on.  Across machines the gradient's matrix-vector product goes through NumPy's BLAS, whose kernel
(chosen for the CPU) decides the last place; ``OPENBLAS_CORETYPE`` fixes it
(``agents/data/README.md``).

    dueling-gym train es --out results/learned-k5-es --n-arms 5 --generations 400
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from dueling_gym.experiments.learning import FAMILIES, REGRET_NOTION
from dueling_gym.experiments.learning import trainer as base
from dueling_gym.experiments.learning.problems import ProblemBatch, check_families
from dueling_gym.experiments.learning.weights import flatten_weights, random_weights, unflatten_weights, widen_weights
from dueling_gym.experiments.npz_files import check_finite, load_npz
from dueling_gym.pair_network import load_policy_weights, policy_episode_regret
from dueling_gym.validation import check_integer, check_number

__all__ = ["FAMILIES", "REFERENCE_AGENTS", "EvolutionTrainer", "random_weights", "widen_weights", "reference_regret",
           "train_evolution", "build_parser", "run_from_arguments", "main"]

_VALIDATION_SALT = 0x5E1EC7
#: Classic agents whose best mean regret per family normalises the fitness (``normalise="classic"``):
#: the strongest at short horizons on these families.
REFERENCE_AGENTS = ("ecw_rmed", "dts_plus", "dts", "winner_stays_strong", "self_sparring")
NORMALISATIONS = ("random", "classic")
OBJECTIVES = ("mean", "worst")
#: Adam's moment decay rates (Kingma and Ba's defaults).
_BETA1, _BETA2 = 0.9, 0.999


def reference_regret(problems: Sequence[Any], horizon: int, agents: Sequence[str] = REFERENCE_AGENTS) -> float:
    """The lowest mean cumulative regret at ``horizon`` of ``agents`` over ``problems`` (one run
    each, run seed = the problem's index, agent seed 0), through :func:`~dueling_gym.experiments.simulate.simulate`."""
    import inspect

    from dueling_gym.agents import AGENT_REGISTRY, make_agent
    from dueling_gym.experiments.simulate import simulate

    best = np.inf
    for name in agents:
        needs_horizon = "horizon" in inspect.signature(AGENT_REGISTRY[name].__init__).parameters
        options = {"horizon": horizon} if needs_horizon else {}
        regrets = [simulate(make_agent(name, problem.n_arms, seed=0, **options), problem, horizon,
                            seed=index).final_regret(REGRET_NOTION) for index, problem in enumerate(problems)]
        best = min(best, float(np.mean(regrets)))
    return best


#: The arrays of ``checkpoint.npz``.
_CHECKPOINT_ARRAYS = ("theta", "first_moment", "second_moment", "best_theta", "best_score", "generation", "rng_state")
#: How to get past a checkpoint that cannot be resumed, in the words of the command line.
_START_AFRESH = f"the run cannot resume from it: delete it, or start afresh by re-running the command with {base.START_AFRESH}"


def _load_checkpoint(path: Path, n_parameters: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, int]:
    """``theta``, the Adam moments, ``best_theta``, ``best_score`` and ``generation`` of the
    checkpoint ``path`` of a network with ``n_parameters`` weights; restores ``rng``'s state.

    Everything is checked first (a readable archive, every array, the sizes, finite values), so
    a damaged checkpoint stops the run with one ValueError naming the file instead of a crash
    or a silently NaN policy.
    """
    saved = load_npz(path, _CHECKPOINT_ARRAYS, hint=_START_AFRESH)

    def refuse(name: str, problem: str) -> ValueError:
        return ValueError(f"{path}: array {name} {problem}; {_START_AFRESH}")

    vectors = {name: saved[name] for name in _CHECKPOINT_ARRAYS[:4]}
    for name, vector in vectors.items():
        if vector.dtype.kind != "f" or vector.shape != (n_parameters,):
            raise refuse(name, f"has dtype {vector.dtype} and shape {vector.shape}, expected {n_parameters} "
                               "floating-point numbers (the network's weights)")
    check_finite(vectors, str(path), _START_AFRESH)
    if (vectors["second_moment"] < 0).any():
        raise refuse("second_moment", "holds negative values")
    best_score, generation, rng_state = saved["best_score"], saved["generation"], saved["rng_state"]
    if best_score.dtype.kind != "f" or best_score.shape != () or np.isnan(best_score):
        raise refuse("best_score", f"is {best_score!r}, expected one number")
    if generation.dtype.kind not in "iu" or generation.shape != () or generation < 0:
        raise refuse("generation", f"is {generation!r}, expected one integer >= 0")
    if rng_state.dtype.kind != "U" or rng_state.shape != ():
        raise refuse("rng_state", f"has dtype {rng_state.dtype} and shape {rng_state.shape}, expected one JSON string")
    try:
        rng.bit_generator.state = json.loads(str(rng_state))
    except (ValueError, TypeError, KeyError, OverflowError, RecursionError) as error:
        raise refuse("rng_state", f"is not the state of the run's generator ({type(error).__name__}: {error})") from error
    return (vectors["theta"], vectors["first_moment"], vectors["second_moment"], vectors["best_theta"],
            float(best_score), int(generation))


class EvolutionTrainer(base.Trainer):
    """Evolution strategies on the pair network (see :func:`train_evolution` for the settings).

    One unit of the budget is a generation: ``2 * pairs`` mirrored perturbations scored on fresh
    problems, then one Adam step on the rank-shaped gradient estimate.
    """

    algorithm = "es"
    budget_unit = "generation"

    def configure(self) -> dict[str, Any]:
        s = self.settings
        config: dict[str, Any] = {
            "algorithm": self.algorithm, "families": list(check_families(s["families"])),
            "n_arms": check_integer("n_arms", s["n_arms"], minimum=2),
            "horizon": check_integer("horizon", s["horizon"], minimum=1),
            "pairs": check_integer("pairs", s["pairs"], minimum=1),
            "problems_per_family": check_integer("problems_per_family", s["problems_per_family"], minimum=1),
            "sigma": check_number("sigma", s["sigma"], minimum=0.0),
            "learning_rate": check_number("learning_rate", s["learning_rate"], minimum=0.0),
            "learning_rate_decay": check_number("learning_rate_decay", s["learning_rate_decay"], minimum=0.0, maximum=1.0),
            "init": None if s["init"] is None else str(s["init"]), "seed": self.seed,
            "eval_every": check_integer("eval_every", s["eval_every"], minimum=1),
            "eval_problems": check_integer("eval_problems", s["eval_problems"], minimum=2),
            "normalise": s["normalise"], "objective": s["objective"],
        }
        if s["objective"] not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {s['objective']!r}")
        if s["normalise"] not in NORMALISATIONS:
            raise ValueError(f"normalise must be one of {NORMALISATIONS}, got {s['normalise']!r}")
        self.generations = check_integer("generations", s["generations"], minimum=1)
        self.threads = check_integer("threads", s["threads"], minimum=1)
        if s["init"] is not None:
            # The network's weights do not depend on K (arm summaries are means over opponents), so a
            # policy trained for another number of arms is a valid starting point.
            if not Path(s["init"]).is_file():
                raise ValueError(f"init file {str(s['init'])!r} does not exist")
            self.initial, _ = load_policy_weights(s["init"])
            config["hidden"] = int(self.initial["W1"].shape[1])
        else:
            config["hidden"] = check_integer("hidden", s["hidden"], minimum=1)
            self.initial = random_weights(config["hidden"], self.stream(0))
        return config

    @property
    def budget(self) -> int:
        return self.generations

    def progress_text(self) -> str:
        return f"generation {self.completed}"

    def setup(self) -> None:
        c = self.config
        self.validation = ProblemBatch(c["families"], c["n_arms"], c["eval_problems"], c["horizon"],
                                       self.stream(_VALIDATION_SALT))
        if c["normalise"] == "classic":
            self.validation.normaliser = self._reference_normaliser()
        self.validation.objective = c["objective"]
        self.theta = flatten_weights(self.initial)
        self.first_moment, self.second_moment = np.zeros_like(self.theta), np.zeros_like(self.theta)
        self.rng = self.stream(1)
        self.best_theta, self.best_score = self.theta.copy(), np.inf

    def _reference_normaliser(self) -> np.ndarray:
        """The best reference agent's regret per family, measured once per folder."""
        families, path = self.config["families"], self.output / "reference_regret.json"
        if path.exists():
            reference = json.loads(path.read_text())
        else:
            print(f"measuring the reference agents {', '.join(REFERENCE_AGENTS)} on the validation problems ...")
            reference = {family: reference_regret(problems, self.config["horizon"])
                         for family, problems in zip(families, self.validation.problems)}
            path.write_text(json.dumps(reference, indent=1) + "\n")
        return np.array([reference[family] for family in families])

    def load_checkpoint(self) -> bool:
        path = self.output / "checkpoint.npz"
        if not path.exists():
            return False
        (self.theta, self.first_moment, self.second_moment, self.best_theta, self.best_score,
         self.completed) = _load_checkpoint(path, self.theta.size, self.rng)
        return True

    def learn(self) -> None:
        # The compiled evaluator releases the GIL: threads score the perturbations in parallel.
        with ThreadPoolExecutor(max_workers=self.threads) as self.pool:
            super().learn()

    def _fitness(self, vector: np.ndarray, batch: ProblemBatch, run_seed: int) -> float:
        totals = policy_episode_regret(unflatten_weights(vector, self.config["hidden"]), batch.probabilities,
                                       batch.regrets, self.config["horizon"], np.random.default_rng(run_seed))
        return batch.score(totals)

    def update(self) -> None:
        c, rng, pairs, sigma = self.config, self.rng, self.config["pairs"], self.config["sigma"]
        batch = ProblemBatch(c["families"], c["n_arms"], c["problems_per_family"], c["horizon"], rng)
        batch.normaliser, batch.objective = self.validation.normaliser, c["objective"]
        run_seed = int(rng.integers(2**63))
        noise = rng.standard_normal((pairs, self.theta.size))
        candidates = [self.theta + sigma * row for row in noise] + [self.theta - sigma * row for row in noise]
        scores = np.fromiter(self.pool.map(lambda vector: self._fitness(vector, batch, run_seed), candidates),
                             dtype=np.float64, count=len(candidates))
        ranks = np.empty(scores.size)
        ranks[np.argsort(scores, kind="stable")] = np.arange(scores.size)
        ranks = ranks / (scores.size - 1) - 0.5  # centred ranks: the best (lowest regret) gets -0.5
        gradient = (ranks[:pairs] - ranks[pairs:]) @ noise / (2 * pairs * sigma)
        generation = self.completed + 1
        self.first_moment = _BETA1 * self.first_moment + (1 - _BETA1) * gradient
        self.second_moment = _BETA2 * self.second_moment + (1 - _BETA2) * gradient**2
        step = c["learning_rate"] * c["learning_rate_decay"] ** (generation - 1)
        self.theta = self.theta - step * (self.first_moment / (1 - _BETA1**generation)) / (
            np.sqrt(self.second_moment / (1 - _BETA2**generation)) + 1e-8)

    def validation_due(self) -> bool:
        return self.completed % self.config["eval_every"] == 0

    def validate(self) -> None:
        c = self.config
        totals = policy_episode_regret(unflatten_weights(self.theta, c["hidden"]), self.validation.probabilities,
                                       self.validation.regrets, c["horizon"], self.stream(_VALIDATION_SALT, 1))
        score, means = self.validation.score(totals), self.validation.family_means(totals)
        best = score if self.completed == 0 else min(score, self.best_score)
        row = {"generation": self.completed,
               "duels": self.completed * 2 * c["pairs"] * len(c["families"]) * c["problems_per_family"] * c["horizon"],
               "wall_time": self.elapsed(), "normalised_regret": round(score, 4)}
        row.update({family: round(float(mean), 2) for family, mean in zip(c["families"], means)})
        self.log_validation(row, f"generation {self.completed}: validation regret at T={c['horizon']} "
                            + ", ".join(f"{family} {mean:.1f}" for family, mean in zip(c["families"], means))
                            + f" (normalised {score:.3f}, best {best:.3f})")
        if self.completed == 0:
            self.best_score = score
        elif score < self.best_score:
            self.best_score, self.best_theta = score, self.theta.copy()

    def save_checkpoint(self) -> None:
        state = {"theta": self.theta, "first_moment": self.first_moment, "second_moment": self.second_moment,
                 "best_theta": self.best_theta}
        self.save_checkpoint_arrays(self.output / "checkpoint.npz", state, best_score=self.best_score,
                                    generation=self.completed, rng_state=json.dumps(self.rng.bit_generator.state))

    def export_metadata(self) -> dict[str, Any]:
        return {"generations": self.completed, "validation_normalised_regret": self.best_score}

    def export(self) -> Path:
        weights = {name: array.copy() for name, array in unflatten_weights(self.best_theta, self.config["hidden"]).items()}
        return self.export_policy(weights, n_arms=np.array(self.config["n_arms"]), hidden=np.array(self.config["hidden"]))


def train_evolution(
    output_dir: str | Path,
    *,
    families: Sequence[str] = FAMILIES,
    n_arms: int = 5,
    horizon: int = 1000,
    generations: int = 400,
    pairs: int = 16,
    problems_per_family: int = 30,
    sigma: float = 0.02,
    learning_rate: float = 0.01,
    learning_rate_decay: float = 0.995,
    init: str | Path | None = None,
    hidden: int = 16,
    seed: int = 0,
    eval_every: int = 10,
    eval_problems: int = 150,
    normalise: str = "classic",
    objective: str = "mean",
    threads: int = 2,
    resume: bool = True,
    progress: bool = True,
    command: str | None = None,
) -> Path:
    """Train a pair policy with evolution strategies; return the path of the exported ``policy.npz``.

    Parameters
    ----------
    output_dir : path
        Receives ``config.json``, ``evaluations.csv``, ``checkpoint.npz`` and ``policy.npz``.  With
        ``resume`` and a checkpoint of the same configuration there, training continues from it
        (a damaged checkpoint, or one with non-finite weights, raises ValueError: delete it or
        pass ``resume=False``).
    families, n_arms, horizon
        Training problems (``problems_per_family`` fresh ones of each family per generation) and
        the length of every run.
    generations : int
        Total number of generations (a resumed run stops there too).
    pairs : int
        Antithetic pairs per generation (``2 * pairs`` perturbed policies).
    sigma : float
        Standard deviation of the weight perturbations.
    learning_rate, learning_rate_decay : float
        Adam step size and its factor per generation.
    init : path, optional
        An exported pair policy (e.g. from PPO, possibly for another number of arms: the weights
        do not depend on K) to start from; default: random weights of width ``hidden``.
    hidden : int
        Width of a randomly initialised network (``init`` fixes its own).
    seed : int
        Seeds the initial weights, the training problems and every draw; validation problems
        come from an independent stream.
    eval_every, eval_problems : int
        Validation interval (generations) and validation problems per family.
    normalise : {"classic", "random"}
        What each family's mean regret is divided by in the fitness: the best of
        ``REFERENCE_AGENTS`` on that family's validation problems (measured once at the start,
        so the fitness reads "fraction of the strongest baseline's regret" and no family is
        neglected), or the regret of uniformly random duels on the same problems.
    objective : {"mean", "worst"}
        Fitness over families: the mean of the normalised regrets, or the worst family's.
    threads : int
        Worker threads evaluating perturbations; the result does not depend on it.
    resume : bool
        Continue from the folder's checkpoint (False: start afresh, replacing it).
    progress : bool
        Show a tqdm progress bar.
    command : str, optional
        The command line recorded with the exported weights (default: ``sys.argv``).
    """
    settings = dict(families=families, n_arms=n_arms, horizon=horizon, generations=generations, pairs=pairs,
                    problems_per_family=problems_per_family, sigma=sigma, learning_rate=learning_rate,
                    learning_rate_decay=learning_rate_decay, init=init, hidden=hidden, eval_every=eval_every,
                    eval_problems=eval_problems, normalise=normalise, objective=objective, threads=threads)
    return EvolutionTrainer(output_dir, settings, seed=seed, resume=resume, progress=progress, command=command).run()


#: The command-line options of :func:`train_evolution`, in ``--help`` order.
OPTIONS = (
    base.Option("--out", "output folder (resumes from its checkpoint)", required=True, keyword=""),
    base.families_option(FAMILIES),
    base.Option("--n-arms", "number of arms K of the training problems", 5, int),
    base.Option("--horizon", "duels per training run (the regret the fitness measures)", 1000, int),
    base.Option("--generations", "generations of evolution strategies", 400, int),
    base.Option("--pairs", "antithetic pairs per generation", 16, int),
    base.Option("--problems-per-family", "problems drawn per family for each generation", 30, int),
    base.Option("--sigma", "standard deviation of the weight perturbations", 0.02, float),
    base.Option("--learning-rate", "Adam step size on the estimated gradient", 0.01, float),
    base.Option("--learning-rate-decay", "factor applied to the step size every generation", 0.995, float),
    base.Option("--init", "exported policy to start from (default: random weights)"),
    base.Option("--hidden", "width of the pair network (ignored with --init)", 16, int),
    base.SEED,
    base.Option("--eval-every", "generations between held-out validations", 10, int),
    base.Option("--eval-problems", "held-out validation problems per family", 150, int),
    base.Option("--normalise", "divide each family's regret by the best reference agent's (classic) or random duels'",
                "classic", choices=NORMALISATIONS),
    base.Option("--objective", "fitness over families: mean or worst normalised regret", "mean", choices=OBJECTIVES),
    base.Option("--threads", "worker threads evaluating the perturbations", 2, int),
    base.NO_RESUME,
    base.NO_PROGRESS,
)


#: ``dueling-gym train es``.
TRAIN_COMMANDS = (
    base.TrainCommand("es", "evolution strategies on the held-out regret itself (NumPy only)",
                      families=base.families_of_option),
)


def build_parser(parser: argparse.ArgumentParser | None = None, *,
                 algorithm: str | None = None) -> argparse.ArgumentParser:
    """The options of :func:`train_evolution` (shared with ``dueling-gym train es``; ``algorithm``
    is the sub-command's name, the one there is)."""
    return base.build_parser(OPTIONS, parser, description="Train a learned dueling policy with evolution strategies.")


def run_from_arguments(arguments: argparse.Namespace, command: str) -> Path:
    """Call :func:`train_evolution` with parsed :func:`build_parser` options."""
    return base.run_from_arguments(train_evolution, OPTIONS, arguments, command)


def main(argv: Sequence[str] | None = None) -> Path:
    """Command-line entry point (``python -m dueling_gym.experiments.evolution --help``)."""
    return base.command_line_main(build_parser(), run_from_arguments, "dueling_gym.experiments.evolution", argv)


if __name__ == "__main__":
    main()
