"""Distil teachers into a pair policy: supervised learning on the duels they play.

:func:`distill_policy` starts from an exported pair policy and trains its actor
(:class:`~dueling_gym.experiments.pair_policy.PairNetwork`) to play like a *teacher* on each
problem family: a classic agent of the registry (its duels are the targets: cross-entropy on the
duel it played, i.e. behaviour cloning) or the starting policy itself (``"init"``: its own action
distribution is the target, so the student is pulled back towards what it already did well).
The states are the ones each teacher visits: each teacher plays ``runs_per_family`` runs of
``horizon`` duels on fresh problems of its family, and the win counts before every duel are
encoded as the policy's observation (:func:`dueling_gym.observations.encode_wins`).

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

import argparse
import csv
import inspect
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from dueling_gym.agents import AGENT_REGISTRY, make_agent
from dueling_gym.agents.learned import load_policy_weights, policy_episode_regret
from dueling_gym.experiments.evolution import widen_weights
from dueling_gym.experiments.npz_files import save_policy_atomically
from dueling_gym.experiments.simulate import simulate
from dueling_gym.observations import encode_wins
from dueling_gym.problems.generators import GENERATORS, ProblemSampler
from dueling_gym.validation import check_integer, check_number

__all__ = ["INIT_TEACHER", "distill_policy", "parse_teachers", "teacher_states", "build_parser", "run_from_arguments"]

#: Teacher name meaning "the starting policy itself".
INIT_TEACHER = "init"
_NOTION = "copeland_komiyama"
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


def distill_policy(
    output_dir: str | Path,
    *,
    init: str | Path,
    teachers: Mapping[str, str],
    n_arms: int = 5,
    horizon: int = 1000,
    runs_per_family: int = 300,
    epochs: int = 6,
    learning_rate: float = 2e-3,
    batch_size: int = 4096,
    eval_problems: int = 150,
    seed: int = 0,
    hidden: int | None = None,
    progress: bool = True,
    command: str | None = None,
) -> Path:
    """Distil ``teachers`` into the policy ``init``; return the path of the exported ``policy.npz``.

    Parameters
    ----------
    output_dir : path
        Receives ``config.json``, ``evaluations.csv`` (validation regret after every epoch) and
        ``policy.npz`` (the last epoch's weights, with the configuration and command; written
        atomically, and refused with a ValueError if the weights are not all finite).
    init : path
        The exported pair policy to start from; also the teacher ``"init"``.
    teachers : mapping of str to str
        Generator family -> teacher: an agent of the registry (default hyperparameters; a
        horizon-aware agent gets ``horizon``) or ``"init"``.
    n_arms, horizon, runs_per_family
        Each teacher plays ``runs_per_family`` runs of ``horizon`` duels on fresh problems of its
        family with ``n_arms`` arms.
    epochs, learning_rate, batch_size
        Adam on the mean loss over all recorded states (every family weighs by its number of
        states, i.e. equally).
    eval_problems : int
        Validation problems per family (an independent stream), one run each after every epoch.
    seed : int
        Seeds the problems, the teachers' runs, the shuffling and torch.
    hidden : int, optional
        Width of the student (default: the starting policy's).  A wider student starts as
        exactly the starting policy, with new units whose output weights are zero
        (:func:`~dueling_gym.experiments.evolution.widen_weights`, drawn from ``seed``); the
        supervised steps then train them with the rest.
    """
    import torch
    from tqdm.auto import tqdm

    from dueling_gym.experiments.pair_policy import network_from_weights, network_weights

    teachers = _check_teachers(teachers)
    config: dict[str, Any] = {
        "algorithm": "distill", "teachers": teachers, "n_arms": check_integer("n_arms", n_arms, minimum=2),
        "horizon": check_integer("horizon", horizon, minimum=1),
        "runs_per_family": check_integer("runs_per_family", runs_per_family, minimum=1),
        "epochs": check_integer("epochs", epochs, minimum=1),
        "learning_rate": check_number("learning_rate", learning_rate, minimum=0.0),
        "batch_size": check_integer("batch_size", batch_size, minimum=1),
        "eval_problems": check_integer("eval_problems", eval_problems, minimum=1),
        "init": str(init), "seed": check_integer("seed", seed, minimum=0),
    }
    if not Path(init).is_file():
        raise ValueError(f"init file {str(init)!r} does not exist")
    initial, _ = load_policy_weights(init)  # any K: the weights do not depend on it
    init_hidden = int(initial["W1"].shape[1])
    if hidden is not None and check_integer("hidden", hidden, minimum=1) < init_hidden:
        raise ValueError(f"hidden={hidden} is narrower than the starting policy ({init_hidden} units); "
                         "a student can only be as wide or wider")
    config["hidden"] = init_hidden if hidden is None else int(hidden)
    output = Path(output_dir)
    output.mkdir(parents=True, exist_ok=True)
    (output / "config.json").write_text(json.dumps(config, indent=1) + "\n")
    command = command if command is not None else shlex.join([Path(sys.executable).name, *sys.argv])
    torch.set_num_threads(1)  # one thread: the result does not depend on the machine's cores
    torch.manual_seed(seed)

    # The teachers' runs: the states they visit and what they played (or, for "init", the states only).
    families = list(teachers)
    observations, actions, from_init = [], [], []
    for index, family in enumerate(families):
        rng = np.random.default_rng(np.random.SeedSequence([seed, index]))
        sampler = ProblemSampler(family, n_arms=n_arms)
        teacher = teachers[family]
        for run in range(runs_per_family):
            problem = sampler(rng)
            if teacher == INIT_TEACHER:
                agent = make_agent("learned", n_arms, seed=0, policy=str(init))
            else:
                needs_horizon = "horizon" in inspect.signature(AGENT_REGISTRY[teacher].__init__).parameters
                agent = make_agent(teacher, n_arms, seed=0, **({"horizon": horizon} if needs_horizon else {}))
            # simulate seeds the agent and the duels from this one number.
            run_seed = int(np.random.SeedSequence([seed, index, run]).generate_state(1)[0])
            result = simulate(agent, problem, horizon, seed=run_seed, record_duels=True)
            observations.append(encode_wins(teacher_states(result.duels, result.outcomes, n_arms)))
            actions.append(np.asarray(result.duels[:, 0]) * n_arms + np.asarray(result.duels[:, 1]))
            from_init.append(np.full(horizon, teacher == INIT_TEACHER))
    observation_tensor = torch.as_tensor(np.concatenate(observations))
    action_tensor = torch.as_tensor(np.concatenate(actions))
    init_mask = torch.as_tensor(np.concatenate(from_init))

    student = widen_weights(initial, config["hidden"], np.random.default_rng(np.random.SeedSequence([seed, _WIDEN_SALT])))
    network = network_from_weights(student, n_arms)
    reference = network_from_weights(initial, n_arms)  # the frozen starting policy: the "init" teacher
    parameters = [parameter for name, parameter in network.named_parameters() if not name.startswith("value")]
    optimiser = torch.optim.Adam(parameters, lr=learning_rate)
    shuffle = torch.Generator().manual_seed(seed)

    validation_rng = np.random.default_rng(np.random.SeedSequence([seed, _VALIDATION_SALT]))
    validation = []
    for family in families:
        sampler = ProblemSampler(family, n_arms=n_arms)
        problems = [sampler(validation_rng) for _ in range(eval_problems)]
        validation.append((np.stack([problem.matrix for problem in problems]),
                           np.stack([problem.regret_matrix(_NOTION) for problem in problems])))

    def validate() -> list[float]:
        weights = {name: value.astype(np.float64) for name, value in network_weights(network).items()}
        return [float(policy_episode_regret(weights, probabilities, regrets, horizon,
                                            np.random.default_rng(np.random.SeedSequence([seed, _VALIDATION_SALT, 1]))).mean())
                for probabilities, regrets in validation]

    evaluations_path = output / "evaluations.csv"
    started = time.perf_counter()

    def log(epoch: int, loss: float) -> None:
        means = validate()
        row = {"epoch": epoch, "loss": round(loss, 5), "wall_time": round(time.perf_counter() - started, 1)}
        row.update({family: round(mean, 2) for family, mean in zip(families, means)})
        with evaluations_path.open("w" if epoch == 0 else "a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(row))
            if epoch == 0:
                writer.writeheader()
            writer.writerow(row)
        tqdm.write(f"epoch {epoch}: loss {loss:.4f}, validation regret at T={horizon} "
                   + ", ".join(f"{family} {mean:.1f}" for family, mean in zip(families, means)))

    log(0, float("nan"))
    n_states = observation_tensor.shape[0]
    with tqdm(total=epochs, unit="epoch", disable=not progress) as bar:
        for epoch in range(1, epochs + 1):
            order = torch.randperm(n_states, generator=shuffle)
            total = 0.0
            for start in range(0, n_states, batch_size):
                rows = order[start:start + batch_size]
                logits = network.forward_actor(observation_tensor[rows])
                targets = torch.nn.functional.one_hot(action_tensor[rows], logits.shape[1]).to(logits.dtype)
                own = init_mask[rows]
                if own.any():
                    with torch.no_grad():
                        targets[own] = torch.softmax(reference.forward_actor(observation_tensor[rows][own]), dim=1)
                loss = torch.nn.functional.cross_entropy(logits, targets)
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                total += loss.item() * len(rows)
            log(epoch, total / n_states)
            bar.update(1)

    weights = network_weights(network)
    metadata = {"config": config, "command": command, "epochs": epochs,
                "observation": "dueling_gym.observations (pair features v1)"}
    target = output / "policy.npz"
    save_policy_atomically(target, weights, n_arms=np.array(n_arms), hidden=np.array(config["hidden"]),
                           metadata=np.array(json.dumps(metadata)))
    return target


def _teachers_argument(text: str) -> dict[str, str]:
    # argparse shows an ArgumentTypeError's own message (a ValueError becomes "invalid value").
    try:
        return parse_teachers(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of :func:`distill_policy` (``dueling-gym train distill``, its only entry point)."""
    parser = parser or argparse.ArgumentParser(description="Distil teachers into a pair policy.")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--init", required=True, help="exported policy to start from (also the teacher 'init')")
    parser.add_argument("--teachers", required=True, type=_teachers_argument,
                        help="family=agent pairs, comma-separated; agent 'init' keeps the starting policy's behaviour")
    parser.add_argument("--n-arms", type=int, default=5, help='number of arms K of the problems')
    parser.add_argument("--horizon", type=int, default=1000, help='duels per teacher run')
    parser.add_argument("--runs-per-family", type=int, default=300, help='teacher runs recorded per family')
    parser.add_argument("--epochs", type=int, default=6, help='passes over the recorded duels')
    parser.add_argument("--learning-rate", type=float, default=2e-3, help='optimiser step size')
    parser.add_argument("--batch-size", type=int, default=4096, help='minibatch size')
    parser.add_argument("--eval-problems", type=int, default=150, help='held-out validation problems per family')
    parser.add_argument("--seed", type=int, default=0, help='seed of every random draw')
    parser.add_argument("--hidden", type=int, default=None,
                        help="width of the student (default: the starting policy's; wider starts as the same policy)")
    parser.add_argument("--no-progress", action="store_true", help='no progress bar')
    return parser


def run_from_arguments(arguments: argparse.Namespace, command: str) -> Path:
    """Call :func:`distill_policy` with parsed :func:`build_parser` options."""
    return distill_policy(
        arguments.out, init=arguments.init, teachers=arguments.teachers, n_arms=arguments.n_arms,
        horizon=arguments.horizon, runs_per_family=arguments.runs_per_family, epochs=arguments.epochs,
        learning_rate=arguments.learning_rate, batch_size=arguments.batch_size,
        eval_problems=arguments.eval_problems, seed=arguments.seed, hidden=arguments.hidden,
        progress=not arguments.no_progress,
        command=command,
    )

