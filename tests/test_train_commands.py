"""``dueling-gym train``: sub-commands declared by the trainer modules, options generated from
their configuration dataclasses, and the configuration checked once for Python and the command line."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import pytest

from dueling_gym.cli import build_parser
from dueling_gym.cli import main as cli_main
from dueling_gym.cli_train import add_config_options, config_from_arguments, option_name
from dueling_gym.experiments.learning import FAMILIES, train_commands
from dueling_gym.experiments.learning.config import TrainerConfig, setting
from dueling_gym.experiments.learning.distillation import DistillationConfig
from dueling_gym.experiments.learning.evolution import ESConfig, EvolutionTrainer, train_evolution
from dueling_gym.experiments.learning.trainer import TrainCommand
from dueling_gym.experiments.learning.training import PPOConfig

POLICY = str(Path(__file__).resolve().parent.parent / "agents" / "data" / "learned_k5.npz")


def _train_parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    train = next(action for action in parser._subparsers._group_actions[0].choices["train"]._actions  # noqa: SLF001
                 if isinstance(action, argparse._SubParsersAction))  # noqa: SLF001
    return dict(train.choices)


def test_every_trainer_module_declares_its_commands():
    commands = train_commands()
    assert {name: module.__name__.rpartition(".")[2] for name, (module, _) in commands.items()} == {
        "distill": "distillation", "es": "evolution", "ppo": "training", "a2c": "training"}
    for name, (module, command) in commands.items():
        assert command.name == name
        assert dataclasses.is_dataclass(command.trainer.config_class)
        assert not hasattr(module, "build_parser") and not hasattr(module, "OPTIONS")


def test_the_command_line_offers_exactly_the_declared_commands():
    assert list(_train_parsers()) == list(train_commands())


@pytest.mark.parametrize("name", ["es", "ppo", "a2c", "distill"])
def test_every_field_is_an_option_with_its_default_and_help(name):
    parser = _train_parsers()[name]
    _, command = train_commands()[name]
    options = {action.dest: action for action in parser._actions}  # noqa: SLF001
    for item in dataclasses.fields(command.trainer.config_class):
        if item.name in command.fixed:
            assert item.name not in options
            continue
        action = options[item.name]
        assert action.option_strings == [option_name(item.name)] and action.help == item.metadata["help"]
        assert action.required == (item.default is dataclasses.MISSING)
    # Parsing nothing but the required options gives the configuration's defaults.
    required = {"distill": ["--init", POLICY, "--teachers", "utility_based=init"]}.get(name, [])
    arguments = parser.parse_args(["--out", "o", *required])
    config = config_from_arguments(command.trainer.config_class, arguments, fixed=command.fixed)
    defaults = {"distill": dict(init=POLICY, teachers={"utility_based": "init"})}.get(name, {})
    assert config == command.trainer.config_class(**defaults, **command.fixed)


@pytest.mark.parametrize("name", ["es", "ppo", "distill"])
def test_help_shows_each_default_once(name):
    parser = _train_parsers()[name]
    formatter = parser._get_formatter()  # noqa: SLF001
    for action in parser._actions:  # noqa: SLF001
        text = formatter._get_help_string(action) % {"default": action.default}  # noqa: SLF001
        assert text.lower().count("default") <= 1, text
    if name == "es":
        assert "(default: no_condorcet_winner,unique_copeland_winner,utility_based)" in " ".join(
            parser.format_help().split()).replace("no_condor cet", "no_condorcet")
    if name == "ppo":
        assert "--checkpoint-episodes" in parser.format_help() and "--algorithm" not in parser.format_help()


def test_options_parse_into_the_configuration_types():
    parser = _train_parsers()["es"]
    arguments = parser.parse_args(["--out", "o", "--n-arms", "3,5", "--horizons", "10,60", "--families",
                                   "utility_based,no_condorcet_winner", "--sigma", "0.5"])
    config = config_from_arguments(ESConfig, arguments)
    assert config.n_arms == (3, 5) and config.horizons == (10, 60) and config.sigma == 0.5
    assert config.problem_families == ["utility_based", "no_condorcet_winner"]
    assert config_from_arguments(ESConfig, parser.parse_args(["--out", "o", "--n-arms", "4"])).n_arms == 4
    distill = _train_parsers()["distill"].parse_args(["--out", "o", "--init", POLICY, "--teachers",
                                                      "utility_based=rucb,no_condorcet_winner=init"])
    distill_config = config_from_arguments(DistillationConfig, distill)
    assert distill_config.problem_families == ["utility_based", "no_condorcet_winner"]
    a2c = train_commands()["a2c"][1]
    assert config_from_arguments(PPOConfig, _train_parsers()["a2c"].parse_args(["--out", "o"]),
                                 fixed=a2c.fixed).algorithm == "a2c"


def test_malformed_option_text_is_one_line_naming_the_option(capsys):
    for arguments, expected in ((["--n-arms", "4,x"], "--n-arms takes comma-separated int values"),
                                (["--horizons", "a"], "--horizons takes comma-separated int values"),
                                (["--normalise", "best"], "invalid choice: 'best'")):
        with pytest.raises(SystemExit):
            cli_main(["train", "es", "--out", "o", *arguments])
        assert expected in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["train", "distill", "--out", "o", "--init", POLICY, "--teachers", "utility_based"])
    assert "teachers must read family=agent" in capsys.readouterr().err


def test_out_of_range_settings_are_refused_naming_the_field(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["train", "es", "--out", str(tmp_path / "run"), "--sigma", "-1"])
    assert exit_info.value.code == 2 and "sigma must be" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("changes", "error", "message"), [
    ({"sigma": -1.0}, ValueError, "sigma"), ({"horizon": 2.5}, TypeError, "horizon"),
    ({"families": "utility_based"}, TypeError, "families"), ({"families": ("nope",)}, ValueError, "families"),
    ({"n_arms": (3, 3)}, ValueError, "n_arms"), ({"horizons": (60, 10)}, ValueError, "horizons"),
    ({"normalise": "best"}, ValueError, "normalise"), ({"init": "missing.npz"}, ValueError, "init"),
    ({"init": 3}, TypeError, "init"), ({"threads": 0}, ValueError, "threads"), ({"sigmaa": 1}, TypeError, "sigmaa"),
    ({"handover": POLICY}, ValueError, "handover and handover_at go together"),
    ({"handover_at": 100}, ValueError, "handover and handover_at go together"),
    ({"handover": "missing.npz", "handover_at": 100}, ValueError, "handover"),
    ({"handover": POLICY, "handover_at": 0}, ValueError, "handover_at"),
    ({"after_shipped": 0}, ValueError, "after_shipped"), ({"after_shipped": 1.5}, TypeError, "after_shipped"),
    ({"after_shipped": 100, "handover": POLICY, "handover_at": 10}, ValueError, "exclude each other"),
])
def test_es_config_checks_every_field(changes, error, message):
    with pytest.raises(error, match=message):
        ESConfig(**changes)


def test_other_configs_check_their_fields():
    with pytest.raises(ValueError, match="n_steps .* must divide horizon"):
        PPOConfig(horizon=10, n_steps=3)
    with pytest.raises(ValueError, match="algorithm must be one of"):
        PPOConfig(algorithm="dqn")
    with pytest.raises(ValueError, match="gamma"):
        PPOConfig(gamma=1.5)
    with pytest.raises(TypeError, match="teachers"):
        DistillationConfig(init=POLICY)
    with pytest.raises(ValueError, match="unknown teacher"):
        DistillationConfig(init=POLICY, teachers={"utility_based": "nobody"})


def test_configs_are_frozen_and_normalised():
    config = ESConfig(n_arms=[3, 5], horizons=[10, 60], families=list(FAMILIES))
    assert config.n_arms == (3, 5) and config.horizons == (10, 60) and config.families == FAMILIES
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.sigma = 1.0  # type: ignore[misc]
    assert config.replace(sigma=0.5).sigma == 0.5
    with pytest.raises(ValueError, match="sigma"):
        config.replace(sigma=-0.5)


def test_recorded_configuration_keeps_the_keys_resume_compares():
    record = ESConfig().recorded()
    assert set(record) == {"algorithm", "families", "n_arms", "horizon", "pairs", "problems_per_family", "sigma",
                           "learning_rate", "learning_rate_decay", "init", "hidden", "seed", "eval_every",
                           "eval_problems", "normalise", "objective"}
    assert record["algorithm"] == "es" and record["families"] == list(FAMILIES)
    assert {"horizons", "safeguard_from"} <= set(ESConfig(horizons=(10, 60), safeguard_from=5).recorded())
    assert {"handover", "handover_at"} <= set(ESConfig(handover=POLICY, handover_at=50).recorded())
    assert ESConfig(after_shipped=1000).recorded()["after_shipped"] == 1000
    assert set(PPOConfig().recorded()) == {"families", "n_arms", "horizon", "timesteps", "algorithm", "policy", "seed",
                                           "n_envs", "n_steps", "batch_size", "n_epochs", "hidden", "gamma",
                                           "gae_lambda", "learning_rate", "ent_coef"}
    assert json.loads(json.dumps(PPOConfig().recorded())) == PPOConfig().recorded()


def test_a_trainer_takes_a_config_or_keywords_not_both(tmp_path):
    with pytest.raises(TypeError, match="not both"):
        train_evolution(tmp_path, ESConfig(), sigma=0.1)
    with pytest.raises(TypeError, match="config must be a ESConfig"):
        train_evolution(tmp_path, PPOConfig())
    with pytest.raises(TypeError, match="config must be a ESConfig"):
        EvolutionTrainer(tmp_path, PPOConfig())


def test_a_field_without_a_text_form_needs_a_parse():
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Odd(TrainerConfig):
        table: dict[str, int] = setting(help="a table", default=None)

    with pytest.raises(TypeError, match=r"Odd\.table: no command-line form"):
        add_config_options(argparse.ArgumentParser(), Odd)


def test_a_missing_requirement_is_one_line_naming_the_extra():
    command = TrainCommand("demo", "a demonstration", EvolutionTrainer, requires=("a_module_that_is_not_installed",))
    with pytest.raises(ImportError, match=r"dueling-gym train demo needs a_module_that_is_not_installed: "
                                          r"pip install 'dueling-gym\[rl\]'"):
        command.check_installed()
    TrainCommand("numpy-only", "needs nothing extra", EvolutionTrainer, requires=("numpy",)).check_installed()
