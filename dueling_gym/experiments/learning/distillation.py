"""Distil teachers into a pair policy: supervised learning on the duels they play.

:func:`distill_policy` starts from an exported pair policy and trains its actor
(:class:`~dueling_gym.experiments.learning.pair_policy.PairNetwork`) to play like a *teacher* on
each problem family: a classic agent of the registry (its duels are the targets: cross-entropy on
the duel it played, i.e. behaviour cloning, Pomerleau, *Efficient Training of Artificial Neural
Networks for Autonomous Navigation*, Neural Computation 3(1), 1991) or the starting policy itself
(``"init"``: its own action distribution is the target, as in policy distillation, Rusu et al.,
*Policy Distillation*, ICLR 2016, so the student is pulled back towards what it
already did well).  The states are the ones each teacher visits: each teacher plays
``runs_per_family`` runs of ``horizon`` duels on fresh problems of its family, and the win counts
before every duel are encoded as the policy's observation
(:func:`dueling_gym.observations.encode_wins`).

Why: evolution strategies improve a policy by small random steps and stall when the better
behaviour is far from the current one.  Distillation moves the policy in one go towards a
teacher's behaviour where the teacher is strong (e.g. Winner Stays on utility-based problems)
while keeping its own behaviour elsewhere; evolution strategies then fine-tune the result on the
regret itself (``dueling-gym train es --init``).  The observation is the duel statistics only,
so the student learns the teacher's choice *given the counts*; a teacher whose choice depends on
more (its history, phases) is imitated in distribution.

    dueling-gym train distill --out results/distilled --init agents/data/learned_k5.npz \\
        --teachers no_condorcet_winner=init,unique_copeland_winner=init,utility_based=winner_stays_strong

Needs torch (the ``rl`` extra).  The result is deterministic for a given command (torch on one
thread, seeded); a run takes a few minutes and is not resumable (it restarts).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Mapping

import numpy as np

from dueling_gym.experiments.learning import REGRET_NOTION
from dueling_gym.experiments.learning import trainer as base
from dueling_gym.experiments.learning.config import TrainerConfig, check_policy_path, setting
from dueling_gym.experiments.learning.weights import widen_weights
from dueling_gym.observations import encode_wins
from dueling_gym.pair_network import load_policy_weights, policy_episode_regret
from dueling_gym.problems.generators import GENERATORS, ProblemSampler
from dueling_gym.validation import check_integer, check_number

__all__ = ["INIT_TEACHER", "DistillationConfig", "DistillationTrainer", "distill_policy", "parse_teachers",
           "teacher_states"]

#: Teacher name meaning "the starting policy itself".
INIT_TEACHER = "init"
_VALIDATION_SALT = 0xD157
_WIDEN_SALT = 0x1D3


def parse_teachers(text: str) -> dict[str, str]:
    """``"family=agent,family=agent"`` as a dict (the ``--teachers`` option)."""
    teachers: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        family, separator, agent = item.partition("=")
        if not separator or not family or not agent:
            raise ValueError(f"teachers must read family=agent,family=agent; got {item!r}")
        if family in teachers:
            raise ValueError(f"family {family!r} is given two teachers")
        teachers[family] = agent
    return teachers


def _check_teachers(teachers: Mapping[str, str]) -> dict[str, str]:
    from dueling_gym.agents import AGENT_REGISTRY

    if not isinstance(teachers, Mapping) or not teachers:
        raise ValueError("teachers must map at least one generator family to an agent name or 'init'")
    for family, agent in teachers.items():
        if family not in GENERATORS:
            raise ValueError(f"unknown family {family!r}; choose from {sorted(GENERATORS)}")
        if agent != INIT_TEACHER and agent not in AGENT_REGISTRY:
            raise ValueError(f"unknown teacher {agent!r} for {family}; use 'init' or an agent of the registry")
        if agent != INIT_TEACHER and AGENT_REGISTRY[agent].pure_exploration:
            raise ValueError(f"teacher {agent!r} is a pure-exploration agent; choose a regret minimiser")
    return dict(teachers)


def teacher_states(duels: np.ndarray, outcomes: np.ndarray, n_arms: int) -> np.ndarray:
    """Win counts before every duel of a recorded run, shape ``(T, K, K)`` (self-duels counted on
    the diagonal, as the ``learned`` agent counts them)."""
    duels = np.asarray(duels)
    first, second = duels[:, 0], duels[:, 1]
    won = np.asarray(outcomes, dtype=bool)
    winner = np.where(won, first, second)
    loser = np.where(won, second, first)
    increments = np.zeros((len(duels), n_arms, n_arms), dtype=np.int64)
    increments[np.arange(len(duels)), winner, loser] = 1
    counts = np.cumsum(increments, axis=0)
    return np.concatenate([np.zeros((1, n_arms, n_arms), dtype=np.int64), counts[:-1]])


def _teacher_agent(teacher: str, n_arms: int, horizon: int, init: str) -> Any:
    from dueling_gym.agents import AGENT_REGISTRY, make_agent

    if teacher == INIT_TEACHER:
        return make_agent("learned", n_arms, seed=0, policy=init)
    needs_horizon = "horizon" in inspect.signature(AGENT_REGISTRY[teacher].__init__).parameters
    return make_agent(teacher, n_arms, seed=0, **({"horizon": horizon} if needs_horizon else {}))


def _record_teachers(config: Mapping[str, Any], seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The states every teacher visits, the duels it played there, and whether the teacher is
    ``"init"`` (whose target is its action distribution rather than its duel)."""
    from dueling_gym.experiments.simulate import simulate

    n_arms, horizon = config["n_arms"], config["horizon"]
    observations, actions, from_init = [], [], []
    for index, (family, teacher) in enumerate(config["teachers"].items()):
        rng = np.random.default_rng(np.random.SeedSequence([seed, index]))
        sampler = ProblemSampler(family, n_arms=n_arms)
        for run in range(config["runs_per_family"]):
            problem = sampler(rng)
            agent = _teacher_agent(teacher, n_arms, horizon, config["init"])
            # simulate seeds the agent and the duels from this one number.
            run_seed = int(np.random.SeedSequence([seed, index, run]).generate_state(1)[0])
            result = simulate(agent, problem, horizon, seed=run_seed, record_duels=True)
            observations.append(encode_wins(teacher_states(result.duels, result.outcomes, n_arms)))
            actions.append(np.asarray(result.duels[:, 0]) * n_arms + np.asarray(result.duels[:, 1]))
            from_init.append(np.full(horizon, teacher == INIT_TEACHER))
    return np.concatenate(observations), np.concatenate(actions), np.concatenate(from_init)


@dataclass(frozen=True, kw_only=True)
class DistillationConfig(TrainerConfig):
    """The settings of :func:`distill_policy` (each field's help is its ``--help`` line).

    ``teachers`` maps a generator family to its teacher: an agent of the registry (default
    hyperparameters; a horizon-aware agent gets ``horizon``) or ``"init"``, the starting policy
    itself.  Each teacher plays ``runs_per_family`` runs of ``horizon`` duels on fresh problems
    of its family with ``n_arms`` arms; Adam then minimises the mean loss over all recorded
    states (every family weighs by its number of states, i.e. equally) for ``epochs`` passes.
    ``seed`` seeds the problems, the teachers' runs, the shuffling and torch.  A student wider
    than the starting policy (``hidden``) starts as exactly that policy, with new units whose
    output weights are zero (:func:`~dueling_gym.experiments.learning.weights.widen_weights`,
    drawn from ``seed``); the supervised steps then train them with the rest.
    """

    algorithm_name: ClassVar[str] = "distill"

    init: str = setting(help="exported policy to start from (also the teacher 'init')")
    teachers: dict[str, str] = setting(help="family=agent pairs, comma-separated; agent 'init' keeps the starting "
                                            "policy's behaviour", parse=parse_teachers)
    n_arms: int = setting(5, help="number of arms K of the problems")
    horizon: int = setting(1000, help="duels per teacher run")
    runs_per_family: int = setting(300, help="teacher runs recorded per family")
    epochs: int = setting(6, help="passes over the recorded duels")
    learning_rate: float = setting(2e-3, help="optimiser step size")
    batch_size: int = setting(4096, help="minibatch size")
    eval_problems: int = setting(150, help="held-out validation problems per family")
    seed: int = setting(0, help="seed of every random draw of the training")
    hidden: int | None = setting(None, help="width of the student (default: the starting policy's; wider starts as "
                                            "the same policy)")

    def __post_init__(self) -> None:
        self._set("teachers", _check_teachers(self.teachers))
        self._set("n_arms", check_integer("n_arms", self.n_arms, minimum=2))
        for name in ("horizon", "runs_per_family", "epochs", "batch_size", "eval_problems"):
            self._set(name, check_integer(name, getattr(self, name), minimum=1))
        self._set("seed", check_integer("seed", self.seed, minimum=0))
        self._set("learning_rate", check_number("learning_rate", self.learning_rate, minimum=0.0))
        if self.hidden is not None:
            self._set("hidden", check_integer("hidden", self.hidden, minimum=1))
        self._set("init", check_policy_path("init", self.init))

    @property
    def problem_families(self) -> list[str]:
        """The teachers' families (the final comparison of ``dueling-gym train distill``)."""
        return list(self.teachers)


class DistillationTrainer(base.Trainer):
    """Distillation of teachers into the pair network (see :func:`distill_policy` for the settings).

    One unit of the budget is an epoch of Adam over every recorded state; not resumable (a run
    takes minutes and restarts).
    """

    algorithm = "distill"
    resumable = False
    budget_unit = "epoch"

    config_class = DistillationConfig

    def configure(self) -> dict[str, Any]:
        s: DistillationConfig = self.settings
        config = s.recorded()
        self.initial, _ = load_policy_weights(s.init)  # any K: the weights do not depend on it
        init_hidden = int(self.initial["W1"].shape[1])
        if s.hidden is not None and s.hidden < init_hidden:
            raise ValueError(f"hidden={s.hidden} is narrower than the starting policy ({init_hidden} units); "
                             "a student can only be as wide or wider")
        config["hidden"] = init_hidden if s.hidden is None else s.hidden
        return config

    @property
    def budget(self) -> int:
        return self.config["epochs"]

    def setup(self) -> None:
        import torch

        from dueling_gym.experiments.learning.pair_policy import network_from_weights

        c = self.config
        self.seed_torch()
        observations, actions, from_init = _record_teachers(c, self.seed)
        self.observations, self.actions = torch.as_tensor(observations), torch.as_tensor(actions)
        self.init_mask = torch.as_tensor(from_init)
        student = widen_weights(self.initial, c["hidden"], self.stream(_WIDEN_SALT))
        self.network = network_from_weights(student, c["n_arms"])
        self.reference = network_from_weights(self.initial, c["n_arms"])  # the frozen starting policy: the "init" teacher
        parameters = [parameter for name, parameter in self.network.named_parameters() if not name.startswith("value")]
        self.optimiser = torch.optim.Adam(parameters, lr=c["learning_rate"])
        self.shuffle = torch.Generator().manual_seed(self.seed)
        validation_rng = self.stream(_VALIDATION_SALT)
        self.validation = []
        for family in c["teachers"]:
            sampler = ProblemSampler(family, n_arms=c["n_arms"])
            problems = [sampler(validation_rng) for _ in range(c["eval_problems"])]
            self.validation.append((np.stack([problem.matrix for problem in problems]),
                                    np.stack([problem.regret_matrix(REGRET_NOTION) for problem in problems])))
        self.last_loss = float("nan")

    def update(self) -> None:
        import torch

        n_states, batch_size = self.observations.shape[0], self.config["batch_size"]
        order = torch.randperm(n_states, generator=self.shuffle)
        total = 0.0
        for start in range(0, n_states, batch_size):
            rows = order[start:start + batch_size]
            logits = self.network.forward_actor(self.observations[rows])
            targets = torch.nn.functional.one_hot(self.actions[rows], logits.shape[1]).to(logits.dtype)
            own = self.init_mask[rows]
            if own.any():
                with torch.no_grad():
                    targets[own] = torch.softmax(self.reference.forward_actor(self.observations[rows][own]), dim=1)
            loss = torch.nn.functional.cross_entropy(logits, targets)
            self.optimiser.zero_grad()
            loss.backward()
            self.optimiser.step()
            total += loss.item() * len(rows)
        self.last_loss = total / n_states

    def validate(self) -> None:
        from dueling_gym.experiments.learning.pair_policy import network_weights

        c, families = self.config, list(self.config["teachers"])
        weights = {name: value.astype(np.float64) for name, value in network_weights(self.network).items()}
        means = [float(policy_episode_regret(weights, probabilities, regrets, c["horizon"],
                                             self.stream(_VALIDATION_SALT, 1)).mean())
                 for probabilities, regrets in self.validation]
        row = {"epoch": self.completed, "loss": round(self.last_loss, 5), "wall_time": self.elapsed()}
        row.update({family: round(mean, 2) for family, mean in zip(families, means)})
        self.log_validation(row, f"epoch {self.completed}: loss {self.last_loss:.4f}, validation regret at "
                            f"T={c['horizon']} " + ", ".join(f"{family} {mean:.1f}" for family, mean in zip(families, means)))

    def export_metadata(self) -> dict[str, Any]:
        return {"epochs": self.config["epochs"]}

    def export(self) -> Path:
        from dueling_gym.experiments.learning.pair_policy import network_weights

        return self.export_policy(network_weights(self.network), n_arms=np.array(self.config["n_arms"]),
                                  hidden=np.array(self.config["hidden"]))


def distill_policy(output_dir: str | Path, config: DistillationConfig | None = None, *, progress: bool = True,
                   command: str | None = None, **settings: Any) -> Path:
    """Distil teachers into a starting policy; return the path of the exported ``policy.npz``.

    Parameters
    ----------
    output_dir : path
        Receives ``config.json``, ``evaluations.csv`` (validation regret after every epoch) and
        ``policy.npz`` (the last epoch's weights, with the configuration and command; written
        atomically, and refused with a ValueError if the weights are not all finite).
    config : DistillationConfig, optional
        The settings; or give them as keyword arguments (``**settings``, the fields of
        :class:`DistillationConfig`: ``init`` and ``teachers`` are required), not both.
    progress : bool
        Show a tqdm progress bar.
    command : str, optional
        The command line recorded with the exported weights (default: ``sys.argv``).
    **settings
        The fields of :class:`DistillationConfig`.

    Raises
    ------
    TypeError, ValueError
        A setting of the wrong type or out of range (the message names it), or a student
        narrower than the starting policy.
    """
    config = base.make_config(DistillationConfig, config, settings)
    return DistillationTrainer(output_dir, config, resume=False, progress=progress, command=command).run()


#: ``dueling-gym train distill`` (its final comparison is on the teachers' families).
TRAIN_COMMANDS = (
    base.TrainCommand("distill", "supervised learning of teachers' duels, per family (torch; the rl extra)",
                      DistillationTrainer, requires=("torch",)),
)
