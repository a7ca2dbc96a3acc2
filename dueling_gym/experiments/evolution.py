"""Train pair policies with evolution strategies on the regret they are judged by.

:func:`train_evolution` optimises the weights of the permutation-equivariant pair network
(:mod:`dueling_gym.experiments.pair_policy`, evaluated by the ``learned`` agent's compiled
kernels) with natural evolution strategies (Salimans et al., *Evolution Strategies as a Scalable
Alternative to Reinforcement Learning*, 2017): antithetic Gaussian perturbations of the weights,
centred-rank fitness shaping and Adam steps.  Each generation draws fresh training problems from
the families (the same problems, duel outcomes and policy draws for every perturbation: common
random numbers), scores every perturbation by its cumulative regret over whole runs of
``horizon`` duels, and moves the weights towards the better ones.

Why not only PPO: the objective here is exactly the one the policy is compared on (mean
cumulative regret at the horizon, per family), with no value function, discounting or reward
normalisation in between, and a whole run of 1000 duels costs about a millisecond in the
compiled loop, so a generation of 32 perturbations x 90 runs takes seconds without torch.  It can
start from a PPO-trained policy (``init``) or from random weights.

Fitness is normalised per family, so each family weighs the same whatever its scale: by default
by the regret of the best of a few strong classic agents on the family's validation problems
(measured once), otherwise by the regret of uniformly random duels (known in closed form).  The
policy with the best normalised regret on a fixed set of validation problems (independent of
training and of the held-out problems used for reporting) is exported.  Checkpoints hold the whole optimiser state
and the generator, so a resumed run is bit-identical to an uninterrupted one; they and the policy are
written atomically (a crash leaves the previous file whole), and a checkpoint that is damaged or
holds non-finite weights is refused on resume rather than trained on.  Across machines
the gradient's matrix-vector product goes through NumPy's BLAS, whose kernel (chosen for the CPU)
decides the last place; ``OPENBLAS_CORETYPE`` fixes it (``agents/data/README.md``).

    dueling-gym train es --out results/learned-k5-es --n-arms 5 --generations 400
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from dueling_gym.agents.learned import WEIGHT_NAMES, load_policy_weights, policy_episode_regret
from dueling_gym.experiments.npz_files import check_finite, load_npz, save_npz_atomically, save_policy_atomically
from dueling_gym.observations import N_PAIR_CHANNELS, N_RECORD_FEATURES
from dueling_gym.problems.generators import GENERATORS, ProblemSampler
from dueling_gym.validation import check_integer, check_number

__all__ = ["FAMILIES", "REFERENCE_AGENTS", "random_weights", "widen_weights", "reference_regret", "train_evolution", "main"]

#: The generator families a policy is trained and evaluated on by default.
FAMILIES = ("no_condorcet_winner", "unique_copeland_winner", "utility_based")
_VALIDATION_SALT = 0x5E1EC7
_NOTION = "copeland_komiyama"
#: Classic agents whose best mean regret per family normalises the fitness (``normalise="classic"``):
#: the strongest at short horizons on these families.
REFERENCE_AGENTS = ("ecw_rmed", "dts_plus", "dts", "winner_stays_strong", "self_sparring")
NORMALISATIONS = ("random", "classic")
OBJECTIVES = ("mean", "worst")


def _shapes(hidden: int) -> dict[str, tuple[int, ...]]:
    square = (hidden, hidden)
    summary = (2 * hidden, hidden)  # arm summaries and the global context: mean and max parts
    return {"W1": (N_PAIR_CHANNELS, hidden), "b1": (hidden,), "W2": square, "b2": (hidden,), "A": summary,
            "B": summary, "C": (N_PAIR_CHANNELS, hidden), "c": (hidden,), "d": (hidden,), "w": (hidden,), "w0": (1,),
            "S": summary, "s_b": (hidden,), "s_t": (hidden,), "s": (hidden,), "s0": (1,), "G": summary,
            "G_s": summary, "s_n": (hidden,), "R_a": (N_RECORD_FEATURES, hidden), "R_b": (N_RECORD_FEATURES, hidden),
            "R_s": (N_RECORD_FEATURES, hidden)}


def random_weights(hidden: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Weights of a fresh pair network: uniform in ``+-1/sqrt(fan_in)`` (the usual linear-layer
    initialisation), drawn in :data:`WEIGHT_NAMES` order from ``rng``."""
    fan_in = {"W1": N_PAIR_CHANNELS, "b1": N_PAIR_CHANNELS, "C": N_PAIR_CHANNELS, "c": N_PAIR_CHANNELS,
              "R_a": N_RECORD_FEATURES, "R_b": N_RECORD_FEATURES, "R_s": N_RECORD_FEATURES,
              **{name: 2 * hidden for name in ("A", "B", "S", "G", "G_s")}}
    weights = {}
    for name, shape in _shapes(hidden).items():
        bound = 1.0 / np.sqrt(fan_in.get(name, hidden))
        weights[name] = rng.uniform(-bound, bound, size=shape)
    return weights


#: Weights whose rows read the arm summaries ``[mean part, max part]`` of the pair embedding.
_SUMMARY_ROWS = ("A", "B", "S", "G", "G_s")


def widen_weights(weights: dict[str, np.ndarray], hidden: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The pair network ``weights`` grown to ``hidden`` units per layer, computing the same scores.

    The new units of every layer get fresh incoming weights (drawn as :func:`random_weights`
    draws them, in :data:`WEIGHT_NAMES` order from ``rng``), and everything they feed into the
    existing units, or into the scores, is zero: the embedding's new units enter the old
    embedding units and the old scorer units with zero weight, and the new scorer units have zero
    output weights (``w``, ``s``).  So the wider network starts as exactly the narrower policy,
    and training (gradient or evolution strategies) can put the new units to use.
    """
    old = int(np.shape(weights["W1"])[1])
    hidden = check_integer("hidden", hidden, minimum=old)
    if hidden == old:
        return {name: np.array(value, dtype=np.float64) for name, value in weights.items()}
    fresh = random_weights(hidden, rng)
    wide: dict[str, np.ndarray] = {}
    for name, shape in _shapes(hidden).items():
        value = np.asarray(weights[name], dtype=np.float64)
        if name in ("w", "s"):
            grown = np.zeros(shape)
            grown[:old] = value
        elif name in ("w0", "s0"):
            grown = value.copy()
        elif name == "W2" or name in _SUMMARY_ROWS:
            # The old units read the old units as before and the new ones with zero weight.
            grown = fresh[name].copy()
            grown[:, :old] = 0.0
            for part in range(value.shape[0] // old):  # W2: one block; the summaries: mean rows, then max rows
                grown[part * hidden:part * hidden + old, :old] = value[part * old:(part + 1) * old]
        else:  # only the new units' incoming weights are new
            grown = fresh[name].copy()
            grown[..., :old] = value
        wide[name] = grown
    return wide


def _flatten(weights: dict[str, np.ndarray]) -> np.ndarray:
    return np.concatenate([np.asarray(weights[name], dtype=np.float64).ravel() for name in WEIGHT_NAMES])


def _unflatten(vector: np.ndarray, hidden: int) -> dict[str, np.ndarray]:
    weights, offset = {}, 0
    for name, shape in _shapes(hidden).items():
        size = int(np.prod(shape))
        weights[name] = vector[offset:offset + size].reshape(shape)
        offset += size
    return weights


class _ProblemBatch:
    """Problems of several families as stacked arrays, with each family's random-duel regret."""

    def __init__(self, families: Sequence[str], n_arms: int, per_family: int, horizon: int, rng: np.random.Generator):
        matrices, regrets, labels, random_regret = [], [], [], []
        self.problems: list[list[Any]] = []
        for index, family in enumerate(families):
            sampler = ProblemSampler(family, n_arms=n_arms)
            problems = [sampler(rng) for _ in range(per_family)]
            self.problems.append(problems)
            matrices += [problem.matrix for problem in problems]
            regrets += [problem.regret_matrix(_NOTION) for problem in problems]
            labels += [index] * per_family
            random_regret.append(horizon * np.mean([problem.expected_random_regret(_NOTION) for problem in problems]))
        self.probabilities = np.stack(matrices)
        self.regrets = np.stack(regrets)
        self.labels = np.asarray(labels)
        self.random_regret = np.asarray(random_regret)
        self.normaliser = self.random_regret
        self.objective = "mean"
        self.n_families = len(families)

    def family_means(self, totals: np.ndarray) -> np.ndarray:
        return np.array([totals[self.labels == index].mean() for index in range(self.n_families)])

    def score(self, totals: np.ndarray) -> float:
        """Mean (or, with objective "worst", maximum) over families of (mean regret / the family's
        normaliser): lower is better.  A family
        whose normaliser is 0 (e.g. every arm a winner: no duel costs anything) contributes 0."""
        means = self.family_means(totals)
        ratios = np.divide(means, self.normaliser, out=np.zeros_like(means), where=self.normaliser > 0)
        return float(np.max(ratios) if self.objective == "worst" else np.mean(ratios))


def reference_regret(problems: Sequence[Any], horizon: int, agents: Sequence[str] = REFERENCE_AGENTS) -> float:
    """The lowest mean cumulative regret at ``horizon`` of ``agents`` over ``problems`` (one run
    each, run seed = the problem's index, agent seed 0), through :func:`simulate`."""
    import inspect

    from dueling_gym.agents import AGENT_REGISTRY, make_agent
    from dueling_gym.experiments.simulate import simulate

    best = np.inf
    for name in agents:
        needs_horizon = "horizon" in inspect.signature(AGENT_REGISTRY[name].__init__).parameters
        options = {"horizon": horizon} if needs_horizon else {}
        regrets = [simulate(make_agent(name, problem.n_arms, seed=0, **options), problem, horizon,
                            seed=index).final_regret(_NOTION) for index, problem in enumerate(problems)]
        best = min(best, float(np.mean(regrets)))
    return best


#: The arrays of ``checkpoint.npz``.
_CHECKPOINT_ARRAYS = ("theta", "first_moment", "second_moment", "best_theta", "best_score", "generation", "rng_state")
#: How to get past a checkpoint that cannot be resumed, in the words of the command line.
_START_AFRESH = ("the run cannot resume from it: delete it, or start afresh by re-running the command with "
                 "--no-resume (resume=False from Python)")


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
        do not depend on K) to start from; default: random weights.
    hidden : int
        Width of a randomly initialised network (``init`` fixes its own).
    seed : int
        Seeds the initial weights, the training problems and every draw; validation problems
        come from an independent stream.
    eval_every, eval_problems : int
        Validation interval (generations) and validation problems per family.
    normalise : {"classic", "random"}
        What each family's mean regret is divided by in the fitness: the best of
        :data:`REFERENCE_AGENTS` on that family's validation problems (measured once at the start,
        so the fitness reads "fraction of the strongest baseline's regret" and no family is
        neglected), or the regret of uniformly random duels on the same problems.
    objective : {"mean", "worst"}
        Fitness over families: the mean of the normalised regrets, or the worst family's (the
        policy is then judged by the family where it stands weakest against the reference).
    threads : int
        Worker threads evaluating perturbations (the compiled loop releases the GIL); the
        result does not depend on it.
    progress : bool
        Show a tqdm progress bar.
    command : str, optional
        The command line recorded with the exported weights (default: ``sys.argv``).
    """
    from tqdm.auto import tqdm

    families = tuple(families)
    unknown = [name for name in families if name not in GENERATORS]
    if not families or unknown:
        raise ValueError(f"families must name generators from {sorted(GENERATORS)}, got {list(families)}")
    config: dict[str, Any] = {
        "algorithm": "es", "families": list(families), "n_arms": check_integer("n_arms", n_arms, minimum=2),
        "horizon": check_integer("horizon", horizon, minimum=1), "pairs": check_integer("pairs", pairs, minimum=1),
        "problems_per_family": check_integer("problems_per_family", problems_per_family, minimum=1),
        "sigma": check_number("sigma", sigma, minimum=0.0), "learning_rate": check_number("learning_rate", learning_rate, minimum=0.0),
        "learning_rate_decay": check_number("learning_rate_decay", learning_rate_decay, minimum=0.0, maximum=1.0),
        "init": None if init is None else str(init), "seed": check_integer("seed", seed, minimum=0),
        "eval_every": check_integer("eval_every", eval_every, minimum=1),
        "eval_problems": check_integer("eval_problems", eval_problems, minimum=2),
        "normalise": normalise,
        "objective": objective,
    }
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    if normalise not in NORMALISATIONS:
        raise ValueError(f"normalise must be one of {NORMALISATIONS}, got {normalise!r}")
    generations = check_integer("generations", generations, minimum=1)
    threads = check_integer("threads", threads, minimum=1)
    if init is not None:
        # The network's weights do not depend on K (arm summaries are means over opponents), so a
        # policy trained for another number of arms is a valid starting point.
        if not Path(init).is_file():
            raise ValueError(f"init file {str(init)!r} does not exist")
        initial, _ = load_policy_weights(init)
        hidden = initial["W1"].shape[1]
    else:
        hidden = check_integer("hidden", hidden, minimum=1)
        initial = random_weights(hidden, np.random.default_rng(np.random.SeedSequence([seed, 0])))
    config["hidden"] = hidden
    output = Path(output_dir)
    output.mkdir(parents=True, exist_ok=True)
    config_path = output / "config.json"
    if config_path.exists() and resume and json.loads(config_path.read_text()) != config:
        raise ValueError(f"{output} holds a run with another configuration; use another output folder or start afresh with "
                         "--no-resume (resume=False from Python)")
    config_path.write_text(json.dumps(config, indent=1) + "\n")
    command = command if command is not None else shlex.join([Path(sys.executable).name, *sys.argv])

    validation = _ProblemBatch(families, n_arms, config["eval_problems"], horizon,
                               np.random.default_rng(np.random.SeedSequence([seed, _VALIDATION_SALT])))
    reference_path = output / "reference_regret.json"
    if normalise == "classic":
        if reference_path.exists():
            reference = json.loads(reference_path.read_text())
        else:
            print(f"measuring the reference agents {', '.join(REFERENCE_AGENTS)} on the validation problems ...")
            reference = {family: reference_regret(problems, horizon) for family, problems in zip(families, validation.problems)}
            reference_path.write_text(json.dumps(reference, indent=1) + "\n")
        normaliser = np.array([reference[family] for family in families])
        validation.normaliser = normaliser
    validation.objective = objective
    theta = _flatten(initial)
    first_moment, second_moment = np.zeros_like(theta), np.zeros_like(theta)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    generation, best_theta, best_score = 0, theta.copy(), np.inf
    checkpoint_path = output / "checkpoint.npz"
    evaluations_path = output / "evaluations.csv"
    if resume and checkpoint_path.exists():
        theta, first_moment, second_moment, best_theta, best_score, generation = _load_checkpoint(
            checkpoint_path, theta.size, rng)
        print(f"resuming {output} from generation {generation}")
    elif evaluations_path.exists():
        evaluations_path.unlink()  # a fresh run owns its log

    def validate(vector: np.ndarray) -> tuple[float, np.ndarray]:
        totals = policy_episode_regret(_unflatten(vector, hidden), validation.probabilities, validation.regrets, horizon,
                                       np.random.default_rng(np.random.SeedSequence([seed, _VALIDATION_SALT, 1])))
        return validation.score(totals), validation.family_means(totals)

    started = time.perf_counter()

    def log(score: float, means: np.ndarray) -> None:
        row = {"generation": generation, "duels": generation * 2 * pairs * len(families) * problems_per_family * horizon,
               "wall_time": round(time.perf_counter() - started, 1), "normalised_regret": round(score, 4)}
        row.update({family: round(float(mean), 2) for family, mean in zip(families, means)})
        new = not evaluations_path.exists()
        with evaluations_path.open("a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)
        tqdm.write(f"generation {generation}: validation regret at T={horizon} "
                   + ", ".join(f"{family} {mean:.1f}" for family, mean in zip(families, means))
                   + f" (normalised {score:.3f}, best {min(score, best_score):.3f})")

    if generation == 0:
        best_score, means = validate(theta)
        log(best_score, means)
    beta1, beta2 = 0.9, 0.999
    with ThreadPoolExecutor(max_workers=threads) as pool, \
            tqdm(total=generations, initial=generation, unit="generation", disable=not progress) as bar:
        while generation < generations:
            batch = _ProblemBatch(families, n_arms, problems_per_family, horizon, rng)
            batch.normaliser, batch.objective = validation.normaliser, objective
            run_seed = int(rng.integers(2**63))
            noise = rng.standard_normal((pairs, theta.size))
            candidates = [theta + sigma * row for row in noise] + [theta - sigma * row for row in noise]

            def fitness(vector: np.ndarray) -> float:
                totals = policy_episode_regret(_unflatten(vector, hidden), batch.probabilities, batch.regrets, horizon,
                                               np.random.default_rng(run_seed))
                return batch.score(totals)

            scores = np.fromiter(pool.map(fitness, candidates), dtype=np.float64, count=len(candidates))
            ranks = np.empty(scores.size)
            ranks[np.argsort(scores, kind="stable")] = np.arange(scores.size)
            ranks = ranks / (scores.size - 1) - 0.5  # centred ranks: the best (lowest regret) gets -0.5
            gradient = (ranks[:pairs] - ranks[pairs:]) @ noise / (2 * pairs * sigma)
            generation += 1
            first_moment = beta1 * first_moment + (1 - beta1) * gradient
            second_moment = beta2 * second_moment + (1 - beta2) * gradient**2
            step = learning_rate * learning_rate_decay ** (generation - 1)
            theta = theta - step * (first_moment / (1 - beta1**generation)) / (
                np.sqrt(second_moment / (1 - beta2**generation)) + 1e-8)
            bar.update(1)
            if generation % config["eval_every"] == 0 or generation == generations:
                score, means = validate(theta)
                log(score, means)
                if score < best_score:
                    best_score, best_theta = score, theta.copy()
                state = {"theta": theta, "first_moment": first_moment, "second_moment": second_moment,
                         "best_theta": best_theta}
                # A diverged run stops here, keeping its last good checkpoint, rather than saving
                # a state that every resume would refuse.
                check_finite(state, f"refusing to write {checkpoint_path}",
                             f"training diverged by generation {generation} (the previous checkpoint is kept)")
                save_npz_atomically(checkpoint_path, **state, best_score=best_score, generation=generation,
                                    rng_state=json.dumps(rng.bit_generator.state))

    weights = {name: array.copy() for name, array in _unflatten(best_theta, hidden).items()}
    metadata = {"config": config, "command": command, "generations": generation,
                "validation_normalised_regret": best_score,
                "observation": "dueling_gym.observations (pair features v1)"}
    target = output / "policy.npz"
    save_policy_atomically(target, weights, n_arms=np.array(n_arms), hidden=np.array(hidden),
                           metadata=np.array(json.dumps(metadata)))
    return target


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of :func:`train_evolution` (shared with ``dueling-gym train --algorithm es``)."""
    parser = parser or argparse.ArgumentParser(description="Train a learned dueling policy with evolution strategies.")
    parser.add_argument("--out", required=True, help="output folder (resumes from its checkpoint)")
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated generator families")
    parser.add_argument("--n-arms", type=int, default=5, help='number of arms K of the training problems')
    parser.add_argument("--horizon", type=int, default=1000, help='duels per training run (the regret the fitness measures)')
    parser.add_argument("--generations", type=int, default=400, help='generations of evolution strategies')
    parser.add_argument("--pairs", type=int, default=16, help="antithetic pairs per generation")
    parser.add_argument("--problems-per-family", type=int, default=30, help='problems drawn per family for each generation')
    parser.add_argument("--sigma", type=float, default=0.02, help='standard deviation of the weight perturbations')
    parser.add_argument("--learning-rate", type=float, default=0.01, help='Adam step size on the estimated gradient')
    parser.add_argument("--learning-rate-decay", type=float, default=0.995, help='factor applied to the step size every generation')
    parser.add_argument("--init", default=None, help="exported policy to start from (default: random weights)")
    parser.add_argument("--hidden", type=int, default=16, help='width of the pair network (ignored with --init)')
    parser.add_argument("--seed", type=int, default=0, help='seed of every random draw of the training')
    parser.add_argument("--eval-every", type=int, default=10, help='generations between held-out validations')
    parser.add_argument("--eval-problems", type=int, default=150, help='held-out validation problems per family')
    parser.add_argument("--normalise", choices=NORMALISATIONS, default="classic",
                        help="divide each family's regret by the best reference agent's (classic) or random duels'")
    parser.add_argument("--objective", choices=OBJECTIVES, default="mean",
                        help="fitness over families: mean or worst normalised regret")
    parser.add_argument("--threads", type=int, default=2, help='worker threads evaluating the perturbations')
    parser.add_argument("--no-resume", action="store_true", help="start afresh instead of resuming from the folder's checkpoint")
    parser.add_argument("--no-progress", action="store_true", help='no progress bar')
    return parser


def run_from_arguments(arguments: argparse.Namespace, command: str) -> Path:
    """Call :func:`train_evolution` with parsed :func:`build_parser` options."""
    return train_evolution(
        arguments.out, families=[name for name in arguments.families.split(",") if name], n_arms=arguments.n_arms,
        horizon=arguments.horizon, generations=arguments.generations, pairs=arguments.pairs,
        problems_per_family=arguments.problems_per_family, sigma=arguments.sigma, learning_rate=arguments.learning_rate,
        learning_rate_decay=arguments.learning_rate_decay, init=arguments.init, hidden=arguments.hidden,
        seed=arguments.seed, eval_every=arguments.eval_every, eval_problems=arguments.eval_problems,
        normalise=arguments.normalise, objective=arguments.objective, threads=arguments.threads,
        resume=not arguments.no_resume, progress=not arguments.no_progress, command=command,
    )


def main(argv: Sequence[str] | None = None) -> Path:
    """Command-line entry point (``python -m dueling_gym.experiments.evolution --help``)."""
    arguments = build_parser().parse_args(argv)
    command = shlex.join(["python", "-m", "dueling_gym.experiments.evolution", *(sys.argv[1:] if argv is None else argv)])
    path = run_from_arguments(arguments, command)
    print(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()
