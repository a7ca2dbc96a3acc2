"""Training files survive crashes: atomic writes, checkpoints checked on resume, finite exports."""

from __future__ import annotations

import io
import os
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dueling_gym.agents.learned import WEIGHT_NAMES, load_policy_weights
from dueling_gym.cli import main as cli_main
from dueling_gym.experiments.learning.evolution import train_evolution
from dueling_gym.atomic_files import atomic_write
from dueling_gym.experiments.learning.npz_files import check_finite, load_npz, save_npz_atomically
from dueling_gym.pair_network.files import save_policy_atomically

TINY = dict(families=("no_condorcet_winner", "utility_based"), n_arms=4, horizon=40, pairs=2, problems_per_family=2,
            hidden=4, eval_every=2, eval_problems=3, normalise="random", threads=1, progress=False, command="test")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".tmp"))


def _broken_savez(original):
    """np.savez that writes part of the archive, then fails like a full disk."""

    def savez(file, *args, **kwargs):
        buffer = io.BytesIO()
        original(buffer, *args, **kwargs)
        file.write(buffer.getvalue()[:100])
        raise OSError(28, "No space left on device")

    return savez


# --- the helpers ----------------------------------------------------------------------------------

def test_an_atomic_write_gives_the_file_normal_permissions_and_leaves_nothing_behind(tmp_path):
    path = save_npz_atomically(tmp_path / "state.npz", a=np.arange(3.0), label=np.array("x"))
    assert path == tmp_path / "state.npz" and _leftovers(tmp_path) == []
    assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()
    arrays = load_npz(path, ("a", "label"))
    np.testing.assert_array_equal(arrays["a"], np.arange(3.0))
    assert str(arrays["label"]) == "x"
    # Replacing keeps the name (no ".npz" added to a name without it).
    save_npz_atomically(tmp_path / "state", a=np.zeros(2))
    assert (tmp_path / "state").is_file() and not (tmp_path / "state.npz.npz").exists()


@pytest.mark.parametrize("failure", ["savez", "fsync", "replace"])
def test_a_write_failing_midway_leaves_the_old_file_intact(tmp_path, monkeypatch, failure):
    path = save_npz_atomically(tmp_path / "checkpoint.npz", theta=np.arange(5.0))
    before = path.read_bytes()
    if failure == "savez":
        monkeypatch.setattr(np, "savez", _broken_savez(np.savez))
    else:
        def fail(*args, **kwargs):
            raise OSError(5, f"{failure} failed")

        monkeypatch.setattr(os, failure, fail)
    with pytest.raises(OSError):
        save_npz_atomically(path, theta=np.arange(7.0))
    monkeypatch.undo()
    assert path.read_bytes() == before and _leftovers(tmp_path) == []
    np.testing.assert_array_equal(load_npz(path, ("theta",))["theta"], np.arange(5.0))


def test_an_interrupted_block_leaves_the_old_file_intact(tmp_path):
    path = tmp_path / "model.zip"
    path.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_write(path) as handle:
            handle.write(b"new, half")
            raise KeyboardInterrupt
    assert path.read_bytes() == b"old" and _leftovers(tmp_path) == []
    with atomic_write(path) as handle:
        handle.write(b"new")
        handle.close()  # a writer may close the file itself
    assert path.read_bytes() == b"new"


def test_unreadable_npz_files_are_one_value_error_naming_the_file(tmp_path):
    good = save_npz_atomically(tmp_path / "good.npz", theta=np.arange(4.0))
    content = good.read_bytes()
    cases = {"empty.npz": b"", "truncated.npz": content[: len(content) // 2], "random.npz": os.urandom(300)}
    flipped = bytearray(content)
    flipped[content.find(np.arange(4.0).tobytes()) + 9] ^= 1
    cases["flipped.npz"] = bytes(flipped)
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ValueError, match="is not a readable .npz file") as info:
            load_npz(tmp_path / name, ("theta",), hint="start afresh")
        assert str(tmp_path / name) in str(info.value) and str(info.value).endswith("start afresh")
    with pytest.raises(ValueError, match=r"missing arrays \['moment'\]"):
        load_npz(good, ("theta", "moment"))
    np.savez(tmp_path / "objects.npz", theta=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="objects.npz is not a readable .npz file"):
        load_npz(tmp_path / "objects.npz", ("theta",))
    np.save(tmp_path / "single.npy", np.arange(3))
    with pytest.raises(ValueError, match="single.npy is not a readable .npz file"):
        load_npz(tmp_path / "single.npy", ("theta",))


def test_non_finite_weights_are_never_exported(tmp_path):
    weights, _ = load_policy_weights(Path(__file__).resolve().parent.parent / "agents" / "data" / "learned_k5.npz", 5)
    target = save_policy_atomically(tmp_path / "policy.npz", weights, n_arms=np.array(5), hidden=np.array(16))
    before = target.read_bytes()
    for bad in (np.nan, np.inf):
        broken = dict(weights, s=weights["s"].copy())
        broken["s"][2] = bad
        with pytest.raises(ValueError, match=r"refusing to write .*policy.npz: array s holds non-finite values"):
            save_policy_atomically(target, broken, n_arms=np.array(5), hidden=np.array(16))
        assert target.read_bytes() == before and _leftovers(tmp_path) == []
    with pytest.raises(ValueError, match="where: array b holds non-finite"):
        check_finite({"a": np.zeros(2), "b": np.array([1.0, np.nan]), "text": np.array("nan")}, "where")


# --- evolution strategies -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def es_runs(tmp_path_factory):
    """An uninterrupted run of four generations, and one stopped after two (its checkpoint)."""
    folder = tmp_path_factory.mktemp("es")
    full = train_evolution(folder / "full", generations=4, **TINY)
    train_evolution(folder / "stopped", generations=2, **TINY)
    return full, folder / "stopped"


def _copy(folder: Path, target: Path) -> Path:
    shutil.copytree(folder, target)
    return target


def _stopped_checkpoint(es_runs, tmp_path: Path) -> tuple[Path, Path, dict[str, np.ndarray]]:
    """A copy of the stopped ES run, its checkpoint's path and the checkpoint's arrays."""
    _, stopped = es_runs
    run = _copy(stopped, tmp_path / "run")
    checkpoint = run / "checkpoint.npz"
    with np.load(checkpoint) as archive:
        saved = {key: archive[key] for key in archive.files}
    return run, checkpoint, saved


def _assert_same_policy(first: Path, second: Path) -> None:
    with np.load(first) as a, np.load(second) as b:
        for name in WEIGHT_NAMES:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_es_resumes_from_a_good_checkpoint_bit_identically(es_runs, tmp_path):
    full, stopped = es_runs
    run = _copy(stopped, tmp_path / "run")
    assert _leftovers(run) == []
    assert (run / "checkpoint.npz").stat().st_mode & 0o777 == 0o666 & ~_umask()
    _assert_same_policy(train_evolution(run, generations=4, **TINY), full)


def test_es_refuses_a_truncated_checkpoint_then_starts_afresh_on_request(es_runs, tmp_path):
    full, stopped = es_runs
    run = _copy(stopped, tmp_path / "run")
    checkpoint = run / "checkpoint.npz"
    checkpoint.write_bytes(checkpoint.read_bytes()[:-200])
    with pytest.raises(ValueError) as info:
        train_evolution(run, generations=4, **TINY)
    message = str(info.value)
    assert str(checkpoint) in message and "is not a readable .npz file" in message
    assert "--no-resume" in message and "resume=False" in message
    # Starting afresh writes a good checkpoint and the same policy as an uninterrupted run.
    _assert_same_policy(train_evolution(run, generations=4, resume=False, **TINY), full)
    train_evolution(run, generations=4, **TINY)  # resumable again


@pytest.mark.parametrize("name", ["theta", "first_moment", "second_moment", "best_theta"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_es_refuses_a_checkpoint_with_non_finite_parameters(es_runs, tmp_path, name, bad):
    run, checkpoint, saved = _stopped_checkpoint(es_runs, tmp_path)
    saved[name] = saved[name].copy()
    saved[name][1] = bad
    np.savez(checkpoint, **saved)
    policy = (run / "policy.npz").read_bytes()
    with pytest.raises(ValueError, match=f"array {name} holds non-finite values") as info:
        train_evolution(run, generations=4, **TINY)
    assert str(checkpoint) in str(info.value) and "--no-resume" in str(info.value)
    assert (run / "policy.npz").read_bytes() == policy  # nothing trained on NaN, nothing exported


@pytest.mark.parametrize("change, fragment", [
    ({"theta": np.zeros(5)}, "array theta has dtype float64 and shape (5,)"),
    ({"theta": None}, "missing arrays ['theta']"),
    ({"generation": np.array(2.5)}, "array generation is"),
    ({"best_score": np.array(np.nan)}, "array best_score is"),
    ({"second_moment": "negative"}, "array second_moment holds negative values"),
    ({"rng_state": np.array("{}")}, "array rng_state is not the state of the run's generator"),
    ({"rng_state": np.array([1, 2])}, "array rng_state has dtype int64"),
])
def test_es_refuses_a_checkpoint_with_wrong_arrays(es_runs, tmp_path, change, fragment):
    run, checkpoint, saved = _stopped_checkpoint(es_runs, tmp_path)
    for key, value in change.items():
        if value is None:
            del saved[key]
        elif isinstance(value, str):  # "negative"
            saved[key] = -np.abs(saved[key]) - 1.0
        else:
            saved[key] = value
    np.savez(checkpoint, **saved)
    with pytest.raises(ValueError) as info:
        train_evolution(run, generations=4, **TINY)
    assert str(checkpoint) in str(info.value) and fragment in str(info.value), str(info.value)


def test_es_crashing_while_writing_a_checkpoint_keeps_the_previous_one(es_runs, tmp_path, monkeypatch):
    full, stopped = es_runs
    run = _copy(stopped, tmp_path / "run")
    before = (run / "checkpoint.npz").read_bytes()
    monkeypatch.setattr(np, "savez", _broken_savez(np.savez))
    with pytest.raises(OSError, match="No space left"):
        train_evolution(run, generations=4, **TINY)
    monkeypatch.undo()
    assert (run / "checkpoint.npz").read_bytes() == before and _leftovers(run) == []
    _assert_same_policy(train_evolution(run, generations=4, **TINY), full)


def test_es_failing_to_export_keeps_the_previous_policy(es_runs, tmp_path, monkeypatch):
    _, stopped = es_runs
    run = _copy(stopped, tmp_path / "run")
    before = (run / "policy.npz").read_bytes()
    real_replace = os.replace

    def replace(source, target):
        if Path(target).name == "policy.npz":
            raise OSError(5, "Input/output error")
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="Input/output error"):
        train_evolution(run, generations=4, **TINY)
    monkeypatch.undo()
    assert (run / "policy.npz").read_bytes() == before and _leftovers(run) == []
    load_policy_weights(run / "policy.npz", 4)


def test_the_cli_reports_a_damaged_checkpoint_with_the_flag_to_type(es_runs, tmp_path, capsys):
    _, stopped = es_runs
    run = _copy(stopped, tmp_path / "run")
    (run / "checkpoint.npz").write_bytes(b"")
    (run / "config.json").unlink()  # the CLI's own defaults make another configuration
    arguments = ["train", "es", "--out", str(run), "--n-arms", "4", "--horizon", "40", "--generations", "2",
                 "--pairs", "2", "--problems-per-family", "2", "--hidden", "4", "--eval-every", "2",
                 "--eval-problems", "3", "--normalise", "random", "--threads", "1", "--no-progress",
                 "--report-problems", "0"]
    with pytest.raises(SystemExit) as exit_info:
        cli_main(arguments)
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and "checkpoint.npz is not a readable .npz file" in error and "--no-resume" in error
    assert cli_main([*arguments, "--no-resume"]) == 0


# --- PPO (Stable-Baselines3) ------------------------------------------------------------------------

PPO_SETTINGS = dict(n_arms=4, horizon=10, timesteps=80, n_envs=8, n_steps=5, batch_size=40, n_epochs=1, hidden=4,
                    eval_every=80, eval_problems=2, progress=False, seed=7, command="test")


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory):
    torch = pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    torch.set_num_threads(1)
    from dueling_gym.experiments.learning.training import train

    folder = tmp_path_factory.mktemp("ppo") / "run"
    train(folder, **PPO_SETTINGS)
    return folder


def _resume_ppo(run: Path) -> Path:
    from dueling_gym.experiments.learning.training import train

    return train(run, **{**PPO_SETTINGS, "timesteps": 160})


def test_ppo_writes_every_file_whole_and_resumes_reproducibly(ppo_run, tmp_path):
    assert _leftovers(ppo_run) == []
    for name in ("checkpoint_80.zip", "checkpoint_80.optim.pt", "checkpoint_80.state.npz", "policy.npz", "model.zip"):
        assert (ppo_run / name).stat().st_mode & 0o777 == 0o666 & ~_umask(), name
    first = _resume_ppo(_copy(ppo_run, tmp_path / "a"))
    second = _resume_ppo(_copy(ppo_run, tmp_path / "b"))
    _assert_same_policy(first, second)
    assert '"timesteps_trained": 160' in str(np.load(first)["metadata"])
    load_policy_weights(first, 4)


def _rewrite_policy_parameters(checkpoint: Path, change) -> None:
    import torch

    with zipfile.ZipFile(checkpoint) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    parameters = torch.load(io.BytesIO(members["policy.pth"]), weights_only=True)
    change(parameters)
    buffer = io.BytesIO()
    torch.save(parameters, buffer)
    members["policy.pth"] = buffer.getvalue()
    with zipfile.ZipFile(checkpoint, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def _nan_first_weight(parameters) -> None:
    name = next(key for key, value in parameters.items() if value.is_floating_point() and value.numel() > 1)
    parameters[name].view(-1)[0] = float("nan")


@pytest.mark.parametrize("damage", ["truncated state", "nan ret_rms", "bad json", "truncated model",
                                    "nan parameter", "truncated optimiser", "nan optimiser"])
def test_ppo_refuses_a_damaged_checkpoint_naming_the_file(ppo_run, tmp_path, damage):
    import torch

    run = _copy(ppo_run, tmp_path / "run")
    state, model, optimiser = (run / f"checkpoint_80{suffix}" for suffix in (".state.npz", ".zip", ".optim.pt"))
    with np.load(state) as archive:
        saved = {key: archive[key] for key in archive.files}
    if damage == "truncated state":
        state.write_bytes(state.read_bytes()[:150])
        culprit, fragment = state, "is not a readable .npz file"
    elif damage == "nan ret_rms":
        np.savez(state, **{**saved, "ret_rms": np.array([0.0, np.nan, 5.0])})
        culprit, fragment = state, "array ret_rms holds non-finite values"
    elif damage == "bad json":
        np.savez(state, **{**saved, "json": np.array("[]")})
        culprit, fragment = state, "holds no valid array json"
    elif damage == "truncated model":
        model.write_bytes(model.read_bytes()[:-300])
        culprit, fragment = model, "is not a readable checkpoint of this model"
    elif damage == "nan parameter":
        _rewrite_policy_parameters(model, _nan_first_weight)
        culprit, fragment = model, "holds non-finite values"
    elif damage == "truncated optimiser":
        optimiser.write_bytes(optimiser.read_bytes()[:100])
        culprit, fragment = optimiser, "is not a readable optimiser state"
    else:
        state_dict = torch.load(optimiser, weights_only=True)
        next(iter(state_dict["state"].values()))["exp_avg"].view(-1)[0] = float("inf")
        torch.save(state_dict, optimiser)
        culprit, fragment = optimiser, "holds non-finite values"
    with pytest.raises(ValueError) as info:
        _resume_ppo(run)
    message = str(info.value)
    assert str(culprit) in message and fragment in message, message
    assert "--no-resume" in message and "checkpoint_80.*" in message
