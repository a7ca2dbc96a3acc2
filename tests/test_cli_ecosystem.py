"""What users of the ecosystem expect of the command line, the examples and the README.

``python -m dueling_gym`` and ``--version``; every option's help states its default once;
``benchmark`` without ``--out``; examples that need an extra say which one in one line; the
README's Python blocks run as written; the own-agent tutorial's module is quiet on import.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dueling_gym
from dueling_gym.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENT = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", MPLBACKEND="Agg")


def _python(*arguments: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *arguments], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env=ENVIRONMENT)


# --------------------------------------------------------------------------- python -m, --version


def test_python_m_dueling_gym_is_the_command_line(tmp_path):
    completed = _python("-m", "dueling_gym", "--version", cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == f"dueling-gym {dueling_gym.__version__}"
    completed = _python("-m", "dueling_gym", "--help", cwd=tmp_path)
    assert completed.returncode == 0 and "benchmark" in completed.stdout and "--version" in completed.stdout


def test_version_option(capsys):
    with pytest.raises(SystemExit) as exit_status:
        main(["--version"])
    assert exit_status.value.code == 0
    assert capsys.readouterr().out.strip() == f"dueling-gym {dueling_gym.__version__}"


# --------------------------------------------------------------------------- help texts


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("dueling-gym",)):
    """Every (sub-)command's parser, with its command line."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def test_no_help_text_states_a_default_twice(capsys):
    commands = list(_parsers(build_parser()))
    assert {"benchmark", "problems", "run", "train"} <= {path[1] for path, _ in commands if len(path) > 1}
    doubled = []
    for path, parser in commands:
        formatter = parser._get_formatter()
        for action in parser._actions:
            if not action.help or action.help is argparse.SUPPRESS:
                continue
            text = formatter._expand_help(action)  # the help as --help prints it, before wrapping
            twice = len(re.findall(r"\bdefault\b", text, re.IGNORECASE)) > 1
            if twice or re.search(r"\(default: (None|False)\)", text):
                doubled.append(f"{' '.join(path)} {'/'.join(action.option_strings) or action.dest}: {text}")
        # And the rendered page: no two "(default: ...)" in a row, whatever the wrapping.
        with pytest.raises(SystemExit) as exit_status:
            main([*path[1:], "--help"])
        assert exit_status.value.code == 0
        page = " ".join(capsys.readouterr().out.split())
        pairs = re.findall(r"\(default:[^()]*\) \(default:[^()]*\)", page)
        doubled += [f"{' '.join(path)}: {match}" for match in pairs]
    assert not doubled, "\n".join(doubled)


def test_every_option_default_is_shown_once_where_the_formatter_adds_it(capsys):
    with pytest.raises(SystemExit):
        main(["problems", "--help"])
    page = " ".join(capsys.readouterr().out.split())
    assert "column naming the first system (default: first)" in page
    assert "the problem's name (default: the file's)" in page and "(default: None)" not in page


# --------------------------------------------------------------------------- benchmark --out


def test_benchmark_needs_no_out_and_writes_results_benchmark_quick(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert build_parser().parse_args(["benchmark", "--agents", "x:Y", "--quick"]).out is None
    assert main(["benchmark", "--agents", "rucb", "--baselines", "random", "--quick", "--no-progress"]) == 0
    folder = tmp_path / "results" / "benchmark-quick"
    assert (folder / "report.md").is_file() and (folder / "short" / "manifest.json").is_file()
    assert "report: results/benchmark-quick/report.md" in capsys.readouterr().out


def test_benchmark_creates_missing_parents_of_out(tmp_path, monkeypatch):
    from dueling_gym.experiments.sweeps import sweep

    class Stop(Exception):
        pass

    def stop(spec, out_dir, **options):
        assert Path(out_dir).parent.is_dir()
        raise Stop

    monkeypatch.setattr(sweep, "execute_sweep", stop)
    out = tmp_path / "fresh" / "results" / "bench"
    with pytest.raises(Stop):
        main(["benchmark", "--agents", "rucb", "--baselines", "random", "--quick", "--no-progress", "--out", str(out)])
    assert out.is_dir()


def test_benchmark_refuses_an_unusable_out_in_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    for out, pattern in [(tmp_path / "file", "is a file"), (tmp_path / "file" / "below" / "bench", "is a file")]:
        with pytest.raises(SystemExit) as exit_status:
            main(["benchmark", "--agents", "rucb", "--quick", "--no-progress", "--out", str(out)])
        assert exit_status.value.code == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and pattern in error and "Errno" not in error


# --------------------------------------------------------------------------- tutorial scripts without their extras

_WITHOUT = "import runpy, sys\nfor name in {missing!r}: sys.modules[name] = None\n" \
           "sys.argv = [{script!r}, '--help']\nrunpy.run_path({script!r}, run_name='__main__')\n"


@pytest.mark.parametrize("script, missing, extra", [
    ("train_ppo.py", ["torch"], "dueling-gym[rl]"),
    ("train_ppo.py", ["stable_baselines3"], "dueling-gym[rl]"),
    ("sparring_ppo_selfplay.py", ["torch"], "dueling-gym[rl,multiagent]"),
    ("sparring_ppo_selfplay.py", ["pettingzoo"], "dueling-gym[rl,multiagent]"),
    ("selfplay.py", ["pettingzoo"], "dueling-gym[multiagent]"),
])
def test_an_example_without_its_extra_says_what_to_install(tmp_path, script, missing, extra):
    path = str(ROOT / "docs" / "tutorials" / script)
    completed = _python("-c", _WITHOUT.format(missing=missing, script=path), cwd=tmp_path)
    assert completed.returncode == 1
    assert "Traceback" not in completed.stderr and completed.stderr.count("\n") == 1, completed.stderr
    assert f"pip install '{extra}'" in completed.stderr and missing[0] in completed.stderr.lower()


# --------------------------------------------------------------------------- README and tutorial


def _python_blocks(text: str) -> list[str]:
    """The README's ```python blocks (shell blocks are ```bash and are left out)."""
    return re.findall(r"^```python\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


def test_readme_python_blocks_run_as_written(tmp_path):
    blocks = _python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 5
    # Each block alone, in a fresh namespace (no names borrowed from a block above), in an empty folder.
    runner = ("import sys\nblocks = " + repr(blocks) + "\nfor index, block in enumerate(blocks):\n"
              "    exec(compile(block, f'README python block {index + 1}', 'exec'), {'__name__': '__main__'})\n")
    completed = _python("-c", runner, cwd=tmp_path, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]


def test_own_agent_tutorial_module_only_defines_the_agent_on_import(tmp_path):
    shutil.copy(ROOT / "docs" / "tutorials" / "own_agent.py", tmp_path / "explore_commit.py")
    completed = _python("-c", "import explore_commit\nfrom dueling_gym.agents import make_agent\n"
                              "agent = make_agent('explore_commit', 4, rounds=10, seed=0)\n"
                              "print(type(agent).__name__)", cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "ExploreThenCommit\n"
