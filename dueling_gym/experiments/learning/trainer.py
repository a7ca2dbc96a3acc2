"""The base class of the trainers of the pair network, and the declaration of their sub-commands.

:class:`Trainer` follows the design of Stable-Baselines3's ``BaseAlgorithm``
(``stable_baselines3/common/base_class.py``; Raffin et al., *Stable-Baselines3: Reliable
Reinforcement Learning Implementations*, JMLR 22(268), 2021): a small abstract base owns what
every training run does the same way, and names exactly what each algorithm implements.

The base owns:

* **seeding**: :meth:`Trainer.stream` gives independent generators keyed by the run's seed and a
  salt (:class:`numpy.random.SeedSequence`), :meth:`Trainer.seed_torch` one-thread seeded torch;
* **the output folder**: ``config.json`` (a resumed run must have the same configuration, its
  budget aside), the "already finished, nothing to do" rule (``finished.json``, for trainers
  that declare :attr:`Trainer.finished_key`);
* **the budget**: :attr:`Trainer.budget` units (generations, epochs, duels), of which
  :attr:`Trainer.completed` are done, and the progress bar;
* **checkpoints**: resume when a checkpoint is there (:meth:`Trainer.load_checkpoint`), write
  them atomically and refuse non-finite ones (:meth:`Trainer.save_checkpoint_arrays`);
* **the validation log** ``evaluations.csv``: one row per evaluation, its first column the budget
  units done, strictly increasing, rewritten whole at every row (a kill leaves the previous log
  whole); a fresh run starts it afresh, and a resumed run first drops the rows past its
  checkpoint (the work after the checkpoint is done again, and logged again once);
* **stale temporary files**: a run killed while it wrote a file leaves the temporary file of
  ``atomic_write`` behind; the next run of the folder removes them;
* **the export** of ``policy.npz`` with the configuration and the command
  (:meth:`Trainer.export_policy`), and the final report;
* **the configuration**: a frozen dataclass of the trainer's settings
  (:class:`~dueling_gym.experiments.learning.config.TrainerConfig`, the trainer's
  :attr:`Trainer.config_class`), from which its Python call, its ``dueling-gym train`` options
  (built by the command line, :mod:`dueling_gym.cli_train`) and its ``config.json`` derive;
  a trainer module's ``TRAIN_COMMANDS`` (:class:`TrainCommand`) are its ``dueling-gym train``
  sub-commands: the command line finds them there, so a new trainer needs no entry elsewhere.

A subclass declares its :attr:`~Trainer.config_class`, may extend :meth:`~Trainer.configure`
(what ``config.json`` records: the recorded settings and what derives from them), and
implements :meth:`~Trainer.setup` (problems, model, starting weights),
:meth:`~Trainer.update` (one unit of the budget: a generation, an epoch),
:meth:`~Trainer.validate` (evaluate and log) and :meth:`~Trainer.export` (write the result);
resumable trainers add :meth:`~Trainer.load_checkpoint` and :meth:`~Trainer.save_checkpoint`.
A trainer whose library runs its own loop (Stable-Baselines3) overrides :meth:`~Trainer.learn`.
"""

from __future__ import annotations

import abc
import csv
import json
import re
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from dueling_gym.atomic_files import atomic_write
from dueling_gym.experiments.learning import OBSERVATION
from dueling_gym.experiments.learning.config import TrainerConfig
from dueling_gym.experiments.learning.npz_files import check_finite, save_npz_atomically
from dueling_gym.pair_network.files import save_policy_atomically
from dueling_gym.validation import check_bool, check_regular_file

__all__ = ["Trainer", "TrainCommand", "make_config", "START_AFRESH"]

#: How to get past a run that cannot resume, in the words of the command line and of Python.
START_AFRESH = "--no-resume (resume=False from Python)"

#: The temporary files of ``atomic_write``: ``.<target>.<12 hex digits>.tmp``
#: beside their target.  Only a killed writer leaves one; nothing ever reads it.
_TEMPORARY_FILE = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")


class Trainer(abc.ABC):
    """One training run of the pair network into an output folder (see the module docstring).

    Parameters
    ----------
    output_dir : path
        The run's folder (created if missing).
    config : TrainerConfig
        The run's settings, an instance of the trainer's :attr:`config_class` (kept as
        :attr:`settings`); its ``seed`` seeds every draw of the run (through :meth:`stream`).
    resume : bool
        Continue from the folder's checkpoint (if the trainer is resumable and there is one).
    progress : bool
        Show a progress bar.
    command : str, optional
        The command line recorded with the exported weights (default: ``sys.argv``).
    """

    #: Short name of the algorithm (``config["algorithm"]`` where the trainer records it).
    algorithm: ClassVar[str]
    #: The frozen dataclass of the trainer's settings.
    config_class: ClassVar[type[TrainerConfig]]
    #: Whether a run continues from the folder's checkpoint (and checks its configuration).
    resumable: ClassVar[bool] = True
    #: Key of ``finished.json`` counting the budget trained; None: no "already finished" rule.
    finished_key: ClassVar[str | None] = None
    #: What one unit of :attr:`budget` is called (progress bar, messages).
    budget_unit: ClassVar[str] = "step"
    #: The configuration key of the budget, ignored when a resumed run's configuration is compared.
    budget_key: ClassVar[str | None] = None

    def __init__(self, output_dir: str | Path, config: TrainerConfig, *, resume: bool = True,
                 progress: bool = True, command: str | None = None):
        if not isinstance(config, self.config_class):
            raise TypeError(f"config must be a {self.config_class.__name__}, got {type(config).__name__}")
        #: The run's settings (the frozen :attr:`config_class` instance).
        self.settings = config
        self.seed: int = config.seed
        self.resume = check_bool("resume", resume)
        self.progress = check_bool("progress", progress)
        self.output = Path(output_dir)
        #: The number of budget units done (resumed runs start at their checkpoint's).
        self.completed = 0
        self.config: dict[str, Any] = self.configure()
        self.command = command if command is not None else shlex.join([Path(sys.executable).name, *sys.argv])
        self.evaluations_path = self.output / "evaluations.csv"
        self.started = time.perf_counter()

    # --- what a subclass implements ------------------------------------------------------------

    @property
    @abc.abstractmethod
    def budget(self) -> int:
        """Total units of training (a resumed run stops there too)."""

    def configure(self) -> dict[str, Any]:
        """The configuration written to ``config.json`` and recorded with the policy: by default
        the recorded settings (:meth:`~dueling_gym.experiments.learning.config.TrainerConfig.recorded`);
        a trainer adds what derives from them (e.g. the width of a starting policy)."""
        return self.settings.recorded()

    @abc.abstractmethod
    def setup(self) -> None:
        """Build what training needs (problems, model, starting weights); the folder exists."""

    @abc.abstractmethod
    def update(self) -> None:
        """Train one unit of the budget (the base counts it in ``completed`` afterwards)."""

    @abc.abstractmethod
    def validate(self) -> None:
        """Evaluate the current policy and log it (:meth:`~dueling_gym.experiments.learning.trainer.Trainer.log_validation`)."""

    @abc.abstractmethod
    def export(self) -> Path:
        """Write the result of the run (usually through :meth:`~dueling_gym.experiments.learning.trainer.Trainer.export_policy`); return its path."""

    def validation_due(self) -> bool:
        """Whether to validate (and checkpoint) after the unit just completed (default: every unit)."""
        return True

    def load_checkpoint(self) -> bool:
        """Restore the folder's checkpoint if there is one (True), refusing a damaged one with a
        ValueError naming the file; resumable trainers implement it."""
        return False

    def save_checkpoint(self) -> None:
        """Write a checkpoint of the run (resumable trainers implement it)."""

    def progress_text(self) -> str:
        """Where the run stands, for messages (e.g. ``generation 3``)."""
        return f"{self.completed} {self.budget_unit}s"

    def export_metadata(self) -> dict[str, Any]:
        """What the exported policy's metadata records between the command and the observation."""
        return {}

    # --- the run ---------------------------------------------------------------------------------

    def run(self) -> Path:
        """Prepare the folder, set up, resume or start afresh, train the budget, export."""
        finished = self.prepare_output()
        if finished is not None:
            return finished
        self.setup()
        resumed = self.resumable and self.resume and self.load_checkpoint()
        if resumed:
            print(f"resuming {self.output} from {self.progress_text()}")
            self.trim_log(self.completed)
        elif self.evaluations_path.exists():
            self.evaluations_path.unlink()  # a fresh run owns its log
        self.learn()
        return self.finish()

    def prepare_output(self) -> Path | None:
        """Create the folder, refuse another configuration on resume, apply the finished rule
        (return the finished run's result) and write ``config.json``."""
        self.output.mkdir(parents=True, exist_ok=True)
        self.remove_stale_temporaries()
        config_path = self.output / "config.json"
        if self.resumable and self.resume and config_path.exists():
            if self._comparable(json.loads(config_path.read_text())) != self._comparable(self.config):
                raise ValueError(f"{self.output} holds a run with another configuration; use another output folder or "
                                 f"start afresh with {START_AFRESH}")
        if self.finished_key is not None:
            finished_path = self.output / "finished.json"
            if self.resume and finished_path.exists():
                finished = json.loads(finished_path.read_text())
                if finished.get(self.finished_key, -1) >= self.budget and (self.output / finished["result"]).exists():
                    # A finished run is left as it is: training again would go past its budget and
                    # replace its policy.
                    print(f"{self.output} finished its training ({finished[self.finished_key]} {self.budget_unit}s for a "
                          f"budget of {self.budget}); nothing to do (--no-resume trains again from scratch)")
                    return self.output / finished["result"]
            finished_path.unlink(missing_ok=True)  # this run is not finished until it says so
        config_path.write_text(json.dumps(self.config, indent=1) + "\n")
        return None

    def _comparable(self, config: Mapping[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in config.items() if key != self.budget_key}

    def learn(self) -> None:
        """Validate the starting point of a fresh run, then train unit by unit up to the budget,
        validating and checkpointing whenever :meth:`~dueling_gym.experiments.learning.trainer.Trainer.validation_due`."""
        from tqdm.auto import tqdm

        self.started = time.perf_counter()
        if self.completed == 0:
            self.validate()
        with tqdm(total=self.budget, initial=self.completed, unit=self.budget_unit, disable=not self.progress) as bar:
            while self.completed < self.budget:
                self.update()
                self.completed += 1
                bar.update(1)
                if self.validation_due() or self.completed == self.budget:
                    self.validate()
                    self.save_checkpoint()

    def finish(self) -> Path:
        """Export the result and, with the finished rule, record that the run is finished."""
        result = self.export()
        if self.finished_key is not None:
            text = json.dumps({self.finished_key: int(self.completed), "result": result.name})
            with atomic_write(self.output / "finished.json") as handle:
                handle.write(text.encode())
        return result

    # --- services for subclasses -----------------------------------------------------------------

    def stream(self, *salt: int) -> np.random.Generator:
        """An independent generator of this run: ``default_rng(SeedSequence([seed, *salt]))``."""
        return np.random.default_rng(np.random.SeedSequence([self.seed, *salt]))

    def seed_torch(self) -> None:
        """Seed torch for this run, on one thread (small networks on shared cores: more threads
        are slower and make the result depend on the machine)."""
        import torch

        torch.set_num_threads(1)
        torch.manual_seed(self.seed)

    def elapsed(self) -> float:
        """Seconds since training started, rounded to tenths (the log's ``wall_time``)."""
        return round(time.perf_counter() - self.started, 1)

    def remove_stale_temporaries(self) -> None:
        """Remove the temporary files that a run of this folder killed while writing left behind.

        Every file of a run is written through ``atomic_write``,
        whose temporary file is renamed over the target or removed, unless the process is killed
        in between; such a file is never read, so it only takes space.
        """
        for path in self.output.iterdir():
            if _TEMPORARY_FILE.fullmatch(path.name) and path.is_file() and not path.is_symlink():
                path.unlink(missing_ok=True)

    def _read_log(self) -> tuple[list[str], list[list[str]], int]:
        """The header, the well-formed rows of ``evaluations.csv`` and the number of rows dropped
        (none of either when it is missing).

        A row is well formed when it has one field per column and its first field (the budget
        units done) is an integer greater than the previous row's: anything else (a line cut
        short by a kill of an earlier version that appended, a row logged twice) is dropped, so
        the log read back has one row per evaluation.
        """
        path = check_regular_file(self.evaluations_path, "validation log", new_ok=True, follow_symlinks=False)
        if not path.exists():
            return [], [], 0
        try:
            # Undecodable bytes become U+FFFD: such a row is not well formed and is dropped below.
            with path.open(newline="", encoding="utf-8", errors="replace") as handle:
                lines = list(csv.reader(handle))
        except csv.Error as error:  # e.g. a field beyond the csv module's size limit
            raise ValueError(f"{path} is not a readable validation log ({error}); move it away or start afresh "
                             f"with {START_AFRESH}") from None
        if not lines:
            return [], [], 0
        header, rows, last = lines[0], [], -1
        for fields in lines[1:]:
            if len(fields) != len(header):
                continue
            try:
                key = int(fields[0])
            except ValueError:
                continue
            if key > last:
                rows.append(fields)
                last = key
        return header, rows, len(lines) - 1 - len(rows)

    def _write_log(self, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Replace ``evaluations.csv`` whole (a kill leaves the previous log, never a cut row)."""
        import io

        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer)
        writer.writerow(header)
        writer.writerows(rows)
        with atomic_write(self.evaluations_path, what="validation log") as handle:
            handle.write(buffer.getvalue().encode("utf-8"))

    def last_logged(self) -> int | None:
        """The budget units of the last row of ``evaluations.csv`` (None: no row yet)."""
        _, rows, _ = self._read_log()
        return int(rows[-1][0]) if rows else None

    def trim_log(self, completed: int) -> None:
        """Keep the rows of ``evaluations.csv`` up to ``completed`` budget units (the checkpoint a
        resumed run continues from): the rows after it are of work that is done again, and the
        same evaluations are logged again when it is."""
        header, rows, dropped = self._read_log()
        if not header:
            return
        kept = [fields for fields in rows if int(fields[0]) <= completed]
        if dropped or len(kept) < len(rows):
            self._write_log(header, kept)

    def log_validation(self, row: Mapping[str, Any], message: str) -> None:
        """Add ``row`` to ``evaluations.csv`` (with a header when the file is new) and show ``message``.

        The first column of ``row`` counts the budget units done: a row at or before the log's
        last one is an evaluation the log holds already (a resumed run reaching the point it
        resumed from) and is not written again.

        Raises
        ------
        ValueError
            When the log holds other columns than ``row`` (a log of another kind of run).
        """
        from tqdm.auto import tqdm

        header, rows, _ = self._read_log()
        columns = [str(column) for column in row]
        if header and header != columns:
            raise ValueError(f"{self.evaluations_path} has the columns {', '.join(header)}, not the columns of this run "
                             f"({', '.join(columns)}); move it away or start afresh with {START_AFRESH}")
        key = int(next(iter(row.values())))
        if not rows or int(rows[-1][0]) < key:
            self._write_log(columns, [*rows, list(row.values())])
        tqdm.write(message)

    def refuse_non_finite(self, path: Path, arrays: Mapping[str, object], kept: str) -> None:
        """Stop a diverged run before it writes ``path``: a ValueError if an array is not finite
        (the run keeps its last good checkpoint rather than saving a state every resume refuses)."""
        check_finite(arrays, f"refusing to write {path}", f"training diverged by {self.progress_text()} ({kept})")

    def save_checkpoint_arrays(self, path: Path, checked: Mapping[str, np.ndarray], **extra: object) -> None:
        """Write ``checked`` (which must be finite) and ``extra`` to ``path`` atomically."""
        self.refuse_non_finite(path, checked, "the previous checkpoint is kept")
        save_npz_atomically(path, **checked, **extra)

    def export_policy(self, weights: Mapping[str, np.ndarray], **sizes: np.ndarray) -> Path:
        """Write ``policy.npz``: ``weights``, ``sizes`` (``n_arms``, ``hidden``) and the metadata
        (configuration, command, :meth:`export_metadata`, observation), atomically and refusing
        non-finite weights."""
        metadata = {"config": self.config, "command": self.command, **self.export_metadata(), "observation": OBSERVATION}
        target = self.output / "policy.npz"
        save_policy_atomically(target, weights, **sizes, metadata=np.array(json.dumps(metadata)))
        return target


def make_config(config_class: type[TrainerConfig], config: TrainerConfig | None,
                settings: Mapping[str, Any]) -> TrainerConfig:
    """``config``, or ``config_class(**settings)`` when it is None (a trainer function's two ways
    of being called).

    Raises
    ------
    TypeError
        Both or a config of another class are given, or a setting is unknown or of the wrong type.
    ValueError
        A setting is out of range.
    """
    if config is None:
        return config_class(**settings)
    if settings:
        raise TypeError(f"pass a {config_class.__name__} or keyword settings, not both (got {sorted(settings)} too)")
    if not isinstance(config, config_class):
        raise TypeError(f"config must be a {config_class.__name__}, got {type(config).__name__}")
    return config


@dataclass(frozen=True)
class TrainCommand:
    """A ``dueling-gym train`` sub-command, declared by the trainer module that runs it.

    The module lists its commands in ``TRAIN_COMMANDS``;
    :func:`dueling_gym.experiments.learning.train_commands` collects them and the command line
    (:mod:`dueling_gym.cli_train`) builds each one's options from the trainer's
    :attr:`~Trainer.config_class`.

    Attributes
    ----------
    name : str
        The sub-command (``dueling-gym train NAME``).
    help : str
        Its line in ``dueling-gym train --help``.
    trainer : type of Trainer
        What it runs.
    requires : tuple of str
        Modules it needs beyond the core install (checked before it runs: a missing one is one
        line naming the extra that provides it).
    fixed : mapping
        Settings the sub-command fixes (no option for them), e.g. ``{"algorithm": "a2c"}``.
    """

    name: str
    help: str
    trainer: type[Trainer]
    requires: tuple[str, ...] = ()
    fixed: Mapping[str, Any] = field(default_factory=dict)

    def check_installed(self) -> None:
        """Refuse, before any work, a command whose modules are not installed (one line)."""
        import importlib.util

        for module in self.requires:
            if importlib.util.find_spec(module) is None:
                raise ImportError(f"dueling-gym train {self.name} needs {module}: pip install 'dueling-gym[rl]'")
