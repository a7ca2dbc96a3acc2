"""The ``baselines`` preset: every regret-minimising dueling agent on the seven published matrices."""

from __future__ import annotations

import dataclasses

from dueling_gym.agents import list_agents
from dueling_gym.agents.catalogue import agent_role
from dueling_gym.cli import main
from dueling_gym.experiments.studies import presets
from dueling_gym.experiments.sweeps.spec import SweepSpec
from dueling_gym.problems import list_problems


def _regret_minimisers() -> set[str]:
    """The registered regret minimisers, less the learned policy (compared in a preset of its own)."""
    return {name for name in list_agents("dueling") if agent_role(name) == "regret minimiser"} - {"learned"}


def test_preset_runs_every_regret_minimiser_on_the_published_matrices():
    preset = presets.get_preset("baselines")
    for quick in (False, True):
        arguments = preset.sweep_arguments(quick)
        assert set(arguments["agents"]) == _regret_minimisers()
        assert len(arguments["agents"]) == len(set(arguments["agents"]))
        assert set(arguments["problems"]) == set(list_problems()) and len(arguments["problems"]) == 7
    full = preset.sweep_arguments(False)
    assert full["horizon"] == 10**5 and len(full["seeds"]) == 10
    assert len(SweepSpec(**full).units()) == len(full["agents"]) * 7 * 10


def test_preset_end_to_end_at_a_tiny_scale(tmp_path, capsys, monkeypatch):
    # Every agent and every matrix through the CLI path, one run of 300 duels each.
    preset = presets.get_preset("baselines")
    tiny = dataclasses.replace(preset, full=dict(preset.full, seeds=(0,), horizon=300))
    monkeypatch.setitem(presets.PRESETS, "baselines", tiny)
    assert main(["reproduce", "baselines", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    for agent in ("versatile_db", "cw_rmed", "savage", "sup_klucb"):
        assert f"| cyclic4 | {agent} | 1 | 300 |" in out
    assert len(list((tmp_path / "units").glob("*.json"))) == len(preset.sweep_arguments(False)["agents"]) * 7
    assert (tmp_path / "regret.png").exists() and (tmp_path / "summary.md").exists()
