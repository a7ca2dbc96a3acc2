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
normalisation in between, and a whole run of 1000 duels on five arms costs a few milliseconds in
the compiled loop, so a generation of 32 perturbations x 90 runs takes seconds without torch.  It
can start from a PPO-trained policy (``init``) or from random weights.

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

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Sequence

import numpy as np

from dueling_gym.agents.learned import opening_length, shipped_opening_path, shipped_policy_path
from dueling_gym.experiments.learning import FAMILIES, REGRET_NOTION
from dueling_gym.experiments.learning import trainer as base
from dueling_gym.experiments.learning.config import TrainerConfig, check_policy_path, setting
from dueling_gym.experiments.learning.problems import ProblemBatch, check_families
from dueling_gym.experiments.learning.weights import flatten_weights, random_weights, unflatten_weights, widen_weights
from dueling_gym.experiments.learning.npz_files import check_finite, load_npz
from dueling_gym.pair_network import load_policy_weights, policy_episode_regret
from dueling_gym.validation import check_integer, check_number

__all__ = ["FAMILIES", "REFERENCE_AGENTS", "ESConfig", "EvolutionTrainer", "random_weights", "widen_weights",
           "reference_regret", "train_evolution"]

_VALIDATION_SALT = 0x5E1EC7
#: ``handover`` value meaning "each size's shipped size policy".
SHIPPED_HANDOVER = "shipped"
#: Classic agents whose best mean regret per family normalises the fitness (``normalise="classic"``):
#: the strongest at short horizons on these families.
REFERENCE_AGENTS = ("ecw_rmed", "dts_plus", "dts", "winner_stays_strong", "self_sparring")
NORMALISATIONS = ("random", "classic")
OBJECTIVES = ("mean", "worst", "hinge")
#: Adam's moment decay rates (Kingma and Ba's defaults).
_BETA1, _BETA2 = 0.9, 0.999


def reference_regret(problems: Sequence[Any], horizon: int, agents: Sequence[str] = REFERENCE_AGENTS,
                     horizons: Sequence[int] | None = None) -> float | list[float]:
    """The lowest mean cumulative regret at ``horizon`` of ``agents`` over ``problems`` (one run
    each, run seed = the problem's index, agent seed 0), through :func:`~dueling_gym.experiments.simulate.simulate`;
    with ``horizons`` (each at most ``horizon``), the lowest at each of them, a list (the best
    agent may differ from one horizon to the next)."""
    import inspect

    from dueling_gym.agents import AGENT_REGISTRY, make_agent
    from dueling_gym.experiments.simulate import simulate

    times = [horizon] if horizons is None else list(horizons)
    best = np.full(len(times), np.inf)
    for name in agents:
        needs_horizon = "horizon" in inspect.signature(AGENT_REGISTRY[name].__init__).parameters
        options = {"horizon": horizon} if needs_horizon else {}
        regrets = [simulate(make_agent(name, problem.n_arms, seed=0, **options), problem, horizon, seed=index,
                            checkpoints=times).cumulative_regret[REGRET_NOTION] for index, problem in enumerate(problems)]
        best = np.minimum(best, np.mean(regrets, axis=0))
    return float(best[0]) if horizons is None else [float(value) for value in best]


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


@dataclass(frozen=True, kw_only=True)
class ESConfig(TrainerConfig):
    """The settings of :func:`train_evolution` (each field's help is its ``--help`` line).

    Each generation draws ``problems_per_family`` fresh problems of each family and of each size
    of ``n_arms`` (several sizes: the fitness averages their scores, the network's weights do not
    depend on ``K``) and scores ``2 * pairs`` perturbations by their regret over runs of
    ``horizon`` duels.  ``normalise="classic"`` divides each family's mean regret by the best of
    ``REFERENCE_AGENTS`` on that family's validation problems (measured once at the start,
    so the fitness reads "fraction of the strongest baseline's regret" and no family is
    neglected); ``"random"`` by the regret of uniformly random duels.  ``horizons`` reads each
    run's regret at several strictly increasing times (the last replaces ``horizon``), each
    normalised by the reference at that time: one policy for several horizons.
    ``extrapolate_to`` reads instead each family's regret, and the reference's, at that later time,
    extrapolated from the last two ``horizons`` as a logarithmic regret would grow
    (:func:`~dueling_gym.experiments.learning.problems.extrapolate_regret`): a run that keeps
    paying at the end of its horizon is scored as one whose regret goes on growing, at the cost
    of runs that end at the last horizon.  ``safeguard_from`` trains under the safeguard
    (:mod:`dueling_gym.pair_network.safeguard`), which the exported policy records and the
    ``learned`` agent then plays by default.
    ``handover`` and ``handover_at`` train an opening: the trained weights choose the first
    ``handover_at`` duels of each run and the fixed ``handover`` policy the rest, having read every
    duel, as the ``learned`` agent plays an opening and its size policy; ``handover="shipped"``
    hands each size over to the size policy the ``learned`` agent ships for it (the files' SHA-256
    enter the configuration).  ``after_shipped`` trains
    a late policy: the shipped ``learned`` agent of each size (its opening and size policy) chooses
    the first ``after_shipped`` duels of each run and the trained weights the rest, having read
    every duel.  ``seed``
    seeds the initial weights, the training problems and every draw; the validation problems
    come from an independent stream.  ``generations`` and ``threads`` are not recorded in
    ``config.json`` (a resumed run may train further, on more threads: the result does not
    depend on them).
    """

    algorithm_name: ClassVar[str] = "es"

    families: tuple[str, ...] = setting(FAMILIES, help="comma-separated generator families")
    n_arms: int | tuple[int, ...] = setting(5, help="number of arms K of the training problems, or comma-separated "
                                               "sizes of a mixture (each size weighs the same in the fitness)")
    horizon: int = setting(1000, help="duels per training run (the regret the fitness measures)")
    generations: int = setting(400, help="generations of evolution strategies", recorded=False)
    pairs: int = setting(16, help="antithetic pairs per generation")
    problems_per_family: int = setting(30, help="problems drawn per family for each generation")
    sigma: float = setting(0.02, help="standard deviation of the weight perturbations")
    learning_rate: float = setting(0.01, help="Adam step size on the estimated gradient")
    learning_rate_decay: float = setting(0.995, help="factor applied to the step size every generation")
    init: str | None = setting(None, help="exported policy to start from, for any K (default: random weights)")
    hidden: int = setting(16, help="width of the pair network (ignored with --init)")
    seed: int = setting(0, help="seed of every random draw of the training")
    eval_every: int = setting(10, help="generations between held-out validations")
    eval_problems: int = setting(150, help="held-out validation problems per family")
    normalise: str = setting("classic", choices=NORMALISATIONS, help="divide each family's regret by the best "
                                                                      "reference agent's (classic) or random duels'")
    objective: str = setting("mean", choices=OBJECTIVES, help="fitness over families: mean or worst normalised "
                                                              "regret, or hinge (the mean with --hinge-floor)")
    hinge_floor: float | None = setting(
        None, omit_none=True, help="with --objective hinge: a family whose normalised regret is below this counts as "
                                   "this, so the fitness moves only with the families near or above the reference")
    horizons: tuple[int, ...] | None = setting(
        None, omit_none=True, help="comma-separated times at which the fitness reads the regret, each normalised by "
                                   "the reference at that time (the last replaces --horizon; default: --horizon alone)")
    extrapolate_to: int | None = setting(
        None, omit_none=True, help="read the fitness at this later time instead, extrapolated from the last two "
                                   "--horizons as a regret growing like log t would grow (default: the horizons)")
    safeguard_from: int | None = setting(None, omit_none=True, help="train under the safeguard from this duel on "
                                                                    "(recorded in the policy; default: no safeguard)")
    handover: str | None = setting(None, omit_none=True, help="exported policy that takes over after --handover-at "
                                                              "duels (the trained weights are then an opening), or "
                                                              "'shipped': each size's shipped size policy")
    handover_at: int | None = setting(None, omit_none=True, help="duels the trained weights choose before "
                                                                 "--handover takes over")
    after_shipped: int | None = setting(None, omit_none=True, help="train a late policy: the shipped learned agent "
                                                                   "of each size chooses this many duels first")
    threads: int = setting(2, help="worker threads evaluating the perturbations", recorded=False)

    def __post_init__(self) -> None:
        self._set("families", check_families(self.families))
        self._set("n_arms", _check_sizes(self.n_arms))
        for name in ("horizon", "generations", "pairs", "problems_per_family", "hidden", "eval_every", "threads"):
            self._set(name, check_integer(name, getattr(self, name), minimum=1))
        self._set("seed", check_integer("seed", self.seed, minimum=0))
        self._set("eval_problems", check_integer("eval_problems", self.eval_problems, minimum=2))
        self._set("sigma", check_number("sigma", self.sigma, minimum=0.0))
        self._set("learning_rate", check_number("learning_rate", self.learning_rate, minimum=0.0))
        self._set("learning_rate_decay", check_number("learning_rate_decay", self.learning_rate_decay, minimum=0.0,
                                                      maximum=1.0))
        self._check_choice("normalise")
        self._check_choice("objective")
        if (self.objective == "hinge") != (self.hinge_floor is not None):
            raise ValueError("objective 'hinge' and hinge_floor go together: pass both or neither")
        if self.hinge_floor is not None:
            self._set("hinge_floor", check_number("hinge_floor", self.hinge_floor, minimum=0.0))
        if self.init is not None:
            self._set("init", check_policy_path("init", self.init))
        if self.horizons is not None:
            if isinstance(self.horizons, (str, bytes)) or not isinstance(self.horizons, Sequence):
                raise TypeError(f"horizons must be a sequence of integers, got {self.horizons!r}")
            horizons = tuple(check_integer("horizons", value, minimum=1) for value in self.horizons)
            if not horizons or any(later <= earlier for earlier, later in zip(horizons, horizons[1:])):
                raise ValueError(f"horizons must be a non-empty, strictly increasing list, got {list(self.horizons)}")
            self._set("horizons", horizons)
        if self.extrapolate_to is not None:
            self._set("extrapolate_to", check_integer("extrapolate_to", self.extrapolate_to, minimum=1))
            if self.horizons is None or len(self.horizons) < 2:
                raise ValueError("extrapolate_to needs --horizons with two times or more (the last two are "
                                 "extrapolated from)")
            if self.extrapolate_to <= self.horizons[-1]:
                raise ValueError(f"extrapolate_to ({self.extrapolate_to}) must come after the last horizon "
                                 f"({self.horizons[-1]})")
        if self.safeguard_from is not None:
            self._set("safeguard_from", check_integer("safeguard_from", self.safeguard_from, minimum=1))
        if (self.handover is None) != (self.handover_at is None):
            raise ValueError("handover and handover_at go together: pass both (a policy taking over after so many "
                             "duels) or neither")
        if self.handover is not None:
            if not (isinstance(self.handover, str) and self.handover == SHIPPED_HANDOVER):
                self._set("handover", check_policy_path("handover", self.handover))
            self._set("handover_at", check_integer("handover_at", self.handover_at, minimum=1))
        if self.after_shipped is not None:
            self._set("after_shipped", check_integer("after_shipped", self.after_shipped, minimum=1))
            if self.handover is not None:
                raise ValueError("after_shipped and handover exclude each other: the trained weights either follow "
                                 "the shipped agent or open the run")


class EvolutionTrainer(base.Trainer):
    """Evolution strategies on the pair network (see :func:`train_evolution` for the settings).

    One unit of the budget is a generation: ``2 * pairs`` mirrored perturbations scored on fresh
    problems, then one Adam step on the rank-shaped gradient estimate.
    """

    algorithm = "es"
    budget_unit = "generation"

    config_class = ESConfig

    def configure(self) -> dict[str, Any]:
        s: ESConfig = self.settings
        config = s.recorded()
        if s.horizons is not None:
            config["horizon"] = s.horizons[-1]  # the last time read replaces the horizon
        self.generations, self.threads = s.generations, s.threads
        if s.init is not None:
            # The network's weights do not depend on K (arm summaries are means over opponents), so a
            # policy trained for another number of arms is a valid starting point.
            self.initial, _ = load_policy_weights(s.init)
            config["hidden"] = int(self.initial["W1"].shape[1])
        else:
            self.initial = random_weights(s.hidden, self.stream(0))
        # The policy that takes over is fixed: only the opening's weights are trained.
        self.handover_by_size: dict[int, dict[str, np.ndarray] | None] = {}
        sizes = s.n_arms if isinstance(s.n_arms, tuple) else (s.n_arms,)
        if s.handover == SHIPPED_HANDOVER:
            # As for a late policy, the files handed over to enter the configuration: a resumed run
            # with other shipped files would train another opening.
            config["handover_files"] = {}
            for n_arms in sizes:
                path = shipped_policy_path(n_arms)
                self.handover_by_size[n_arms] = load_policy_weights(path)[0]
                config["handover_files"][str(n_arms)] = {path.name: hashlib.sha256(path.read_bytes()).hexdigest()}
        else:
            fixed = None if s.handover is None else load_policy_weights(s.handover)[0]
            self.handover_by_size = {n_arms: fixed for n_arms in sizes}
        self.preceded_by: dict[int, list[tuple[dict[str, np.ndarray], int]]] = {}
        if s.after_shipped is not None:
            # The files the shipped agent plays enter the configuration: a resumed run with other
            # shipped files would train another late policy.
            config["after_shipped_files"] = {}
            for n_arms in sizes:
                self.preceded_by[n_arms], config["after_shipped_files"][str(n_arms)] = _shipped_phases(
                    n_arms, s.after_shipped)
        return config

    @property
    def budget(self) -> int:
        return self.generations

    def progress_text(self) -> str:
        return f"generation {self.completed}"

    @property
    def sizes(self) -> list[int]:
        """The numbers of arms of the training problems (one, or a mixture)."""
        n_arms = self.config["n_arms"]
        return list(n_arms) if isinstance(n_arms, list) else [n_arms]

    def setup(self) -> None:
        c = self.config
        # One validation batch per size; a single size keeps the stream of the runs made before
        # mixtures existed, so their commands still give the same weights.
        self.validations = [
            ProblemBatch(c["families"], n_arms, c["eval_problems"], c["horizon"],
                         self.stream(_VALIDATION_SALT) if len(self.sizes) == 1 else self.stream(_VALIDATION_SALT, n_arms),
                         horizons=c.get("horizons"))
            for n_arms in self.sizes]
        if c["normalise"] == "classic":
            for batch, normaliser in zip(self.validations, self._reference_normalisers()):
                batch.normaliser = normaliser
        for batch in self.validations:
            batch.objective, batch.floor = c["objective"], c.get("hinge_floor")
            batch.extrapolate_to = c.get("extrapolate_to")
        self.theta = flatten_weights(self.initial)
        self.first_moment, self.second_moment = np.zeros_like(self.theta), np.zeros_like(self.theta)
        self.rng = self.stream(1)
        self.best_theta, self.best_score = self.theta.copy(), np.inf

    def _reference_normalisers(self) -> list[np.ndarray]:
        """The best reference agent's regret per family (and horizon) for each size, measured
        once per folder (``reference_regret.json``: by family, or by ``K=<size>`` then family
        for a mixture of sizes)."""
        families, path = self.config["families"], self.output / "reference_regret.json"
        mixture = len(self.sizes) > 1
        if path.exists():
            reference = json.loads(path.read_text())
        else:
            print(f"measuring the reference agents {', '.join(REFERENCE_AGENTS)} on the validation problems ...")
            reference = {}
            for n_arms, batch in zip(self.sizes, self.validations):
                measured = {family: reference_regret(problems, self.config["horizon"], horizons=self.config.get("horizons"))
                            for family, problems in zip(families, batch.problems)}
                if mixture:
                    reference[f"K={n_arms}"] = measured
                else:
                    reference = measured
            path.write_text(json.dumps(reference, indent=1) + "\n")
        tables = [reference[f"K={n_arms}"] for n_arms in self.sizes] if mixture else [reference]
        return [np.array([table[family] for family in families]) for table in tables]

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

    def _episode_regret(self, vector: np.ndarray, batch: ProblemBatch, rng: np.random.Generator) -> np.ndarray:
        c = self.config
        return policy_episode_regret(unflatten_weights(vector, c["hidden"]), batch.probabilities, batch.regrets,
                                     c["horizon"], rng, safeguard_from=c.get("safeguard_from"),
                                     checkpoints=c.get("horizons"), handover=self.handover_by_size[batch.n_arms],
                                     handover_at=c.get("handover_at"), preceded_by=self.preceded_by.get(batch.n_arms))

    def _fitness(self, vector: np.ndarray, batches: list[ProblemBatch], run_seed: int) -> float:
        """The mean over sizes of each size's score (one size: its score, as before mixtures)."""
        return float(np.mean([batch.score(self._episode_regret(vector, batch, np.random.default_rng(run_seed + index)))
                              for index, batch in enumerate(batches)]))

    def update(self) -> None:
        c, rng, pairs, sigma = self.config, self.rng, self.config["pairs"], self.config["sigma"]
        batches = []
        for n_arms, validation in zip(self.sizes, self.validations):
            batch = ProblemBatch(c["families"], n_arms, c["problems_per_family"], c["horizon"], rng,
                                 horizons=c.get("horizons"))
            # Scored as its size's validation batch is: the same normaliser, objective and time.
            batch.normaliser, batch.objective, batch.floor, batch.extrapolate_to = (
                validation.normaliser, validation.objective, validation.floor, validation.extrapolate_to)
            batches.append(batch)
        run_seed = int(rng.integers(2**63))
        noise = rng.standard_normal((pairs, self.theta.size))
        candidates = [self.theta + sigma * row for row in noise] + [self.theta - sigma * row for row in noise]
        scores = np.fromiter(self.pool.map(lambda vector: self._fitness(vector, batches, run_seed), candidates),
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
        mixture = len(self.sizes) > 1
        scores, columns, summaries = [], {}, []
        for index, (n_arms, batch) in enumerate(zip(self.sizes, self.validations)):
            # A single size keeps the validation stream of the runs made before mixtures existed.
            rng = self.stream(_VALIDATION_SALT, 1) if not mixture else self.stream(_VALIDATION_SALT, 1, n_arms)
            totals = self._episode_regret(self.theta, batch, rng)
            scores.append(batch.score(totals))
            means = batch.family_means(totals)
            prefix = f"K={n_arms} " if mixture else ""
            if means.ndim == 2:
                # One column per family and horizon; the text reports the longest horizon.
                columns.update({f"{prefix}{family}@{horizon}": round(float(value), 2)
                                for family, row in zip(c["families"], means) for horizon, value in zip(c["horizons"], row)})
                means = means[:, -1]
            else:
                columns.update({f"{prefix}{family}": round(float(mean), 2) for family, mean in zip(c["families"], means)})
            summaries.append(prefix + ", ".join(f"{family} {mean:.1f}" for family, mean in zip(c["families"], means)))
        score = float(np.mean(scores))
        best = score if self.completed == 0 else min(score, self.best_score)
        row = {"generation": self.completed,
               "duels": self.completed * 2 * c["pairs"] * len(c["families"]) * c["problems_per_family"] * c["horizon"]
               * len(self.sizes),
               "wall_time": self.elapsed(), "normalised_regret": round(score, 4)}
        row.update(columns)
        scored = "" if c.get("extrapolate_to") is None else f" at T={c['extrapolate_to']} extrapolated"
        self.log_validation(row, f"generation {self.completed}: validation regret at T={c['horizon']} "
                            + "; ".join(summaries) + f" (normalised{scored} {score:.3f}, best {best:.3f})")
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
        # A mixture's file records its largest size; the agent reads a general policy for any size.
        return self.export_policy(weights, n_arms=np.array(max(self.sizes)), hidden=np.array(self.config["hidden"]))


def train_evolution(output_dir: str | Path, config: ESConfig | None = None, *, resume: bool = True,
                    progress: bool = True, command: str | None = None, **settings: Any) -> Path:
    """Train a pair policy with evolution strategies; return the path of the exported ``policy.npz``.

    Parameters
    ----------
    output_dir : path
        Receives ``config.json``, ``evaluations.csv``, ``checkpoint.npz`` and ``policy.npz``.  With
        ``resume`` and a checkpoint of the same configuration there, training continues from it
        (a damaged checkpoint, or one with non-finite weights, raises ValueError: delete it or
        pass ``resume=False``); another configuration is refused.
    config : ESConfig, optional
        The settings; or give them as keyword arguments (``**settings``, the fields of
        :class:`ESConfig`), not both.
    resume : bool
        Continue from the folder's checkpoint (False: start afresh, replacing it).
    progress : bool
        Show a tqdm progress bar.
    command : str, optional
        The command line recorded with the exported weights (default: ``sys.argv``).
    **settings
        The fields of :class:`ESConfig` (``generations=400``, ``sigma=0.02``, ...).

    Raises
    ------
    TypeError, ValueError
        A setting of the wrong type or out of range (the message names it).
    """
    config = base.make_config(ESConfig, config, settings)
    return EvolutionTrainer(output_dir, config, resume=resume, progress=progress, command=command).run()


def _shipped_phases(n_arms: int, duels: int) -> tuple[list[tuple[dict[str, np.ndarray], int]], dict[str, str]]:
    """The shipped ``learned`` agent's duels before a late policy that takes over after ``duels``
    with ``n_arms`` arms, as the phases of :func:`~dueling_gym.pair_network.policy_episode_regret`:
    its opening, then its size policy up to duel ``duels`` if the opening ends first (a longer
    opening hands over to the late policy itself, as the agent plays it); and the SHA-256 of each
    file by name.  The compiled runs read no test of the counts, so with 5 arms and ``duels`` past
    the opening they are the agent without its cycle policy (``cycle=None``)."""
    opening_path, policy_path = shipped_opening_path(n_arms), shipped_policy_path(n_arms)
    opening_duels = opening_length(n_arms)
    phases = [(load_policy_weights(opening_path)[0], opening_duels)]
    files = {opening_path.name: hashlib.sha256(opening_path.read_bytes()).hexdigest()}
    if opening_duels < duels:
        phases.append((load_policy_weights(policy_path)[0], duels))
        files[policy_path.name] = hashlib.sha256(policy_path.read_bytes()).hexdigest()
    return phases, files


def _check_sizes(n_arms: Any) -> int | tuple[int, ...]:
    """One number of arms, or a non-empty sequence of distinct ones (each at least 2; one alone is that number)."""
    if isinstance(n_arms, (list, tuple)):
        sizes = tuple(check_integer("n_arms", value, minimum=2) for value in n_arms)
        if not sizes or len(set(sizes)) != len(sizes):
            raise ValueError(f"n_arms must list distinct numbers of arms, got {list(n_arms)}")
        return sizes[0] if len(sizes) == 1 else sizes
    return check_integer("n_arms", n_arms, minimum=2)


#: ``dueling-gym train es``.
TRAIN_COMMANDS = (
    base.TrainCommand("es", "evolution strategies on the held-out regret itself (NumPy only)", EvolutionTrainer),
)
