"""Portable fallbacks of the Linux-only paths of the sweep runner, each absence simulated here.

* The folder lock: ``fcntl`` missing (Windows) -> the ``filelock`` library.
* Parent-death handling: ``ctypes`` or ``prctl`` missing (macOS, Windows, exotic libc) -> the
  watchdog thread alone.
* Worker start: ``fork`` not offered (Windows, some builds) -> ``spawn``.

Each fallback runs a small sweep and must give the records and table of the default path.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from pathlib import Path

import filelock  # noqa: F401 - imported with fcntl present, so it picks the platform's native lock
import pytest

from dueling_gym.experiments.runs import backends as sweep_backends
from dueling_gym.experiments.sweeps.sweep import SweepSpec, run_sweep
from dueling_gym.experiments.runs.store import FolderLock, locked_folder

SMALL = SweepSpec(agents=("rucb", "rmed1"), problems=("cyclic4",), seeds=(0, 1), horizon=2000)


def _strip(records):
    return [{k: v for k, v in r.items() if k not in ("wall_time", "content_sha256")} for r in records]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The default path's records and table (serial, fcntl lock)."""
    out = tmp_path_factory.mktemp("reference") / "sweep"
    records = run_sweep(SMALL, out, jobs=1, progress=False)
    return _strip(records), (out / "results.csv").read_text()


def _same_as_reference(reference, records, out):
    expected_records, expected_table = reference
    assert _strip(records) == expected_records
    assert (out / "results.csv").read_text() == expected_table


# --- the folder lock without fcntl ---------------------------------------------------------------


@pytest.fixture
def no_fcntl(monkeypatch):
    """``import fcntl`` raises ImportError, as on Windows."""
    monkeypatch.setitem(sys.modules, "fcntl", None)
    with pytest.raises(ImportError):
        import fcntl  # noqa: F401


def test_lock_without_fcntl_refuses_a_busy_folder_with_the_same_message(tmp_path, no_fcntl):
    with FolderLock(tmp_path) as held:
        assert held._portable is not None and held._handle is None  # the filelock route
        with pytest.raises(ValueError, match=f"^{tmp_path} is in use by another running sweep$"):
            with FolderLock(tmp_path):
                pass
    with FolderLock(tmp_path):  # released on exit
        pass


def test_fcntl_and_filelock_exclude_each_other(tmp_path, monkeypatch):
    with FolderLock(tmp_path) as held:  # the fcntl route
        assert held._handle is not None
        monkeypatch.setitem(sys.modules, "fcntl", None)
        with pytest.raises(ValueError, match="in use by another running sweep"):
            with FolderLock(tmp_path):
                pass
        monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "fcntl", None)
    with FolderLock(tmp_path):  # the filelock route
        monkeypatch.undo()
        with pytest.raises(ValueError, match="in use by another running sweep"):
            with FolderLock(tmp_path):
                pass


def test_sweep_without_fcntl_gives_the_default_results(tmp_path, reference, no_fcntl):
    out = tmp_path / "sweep"
    records = run_sweep(SMALL, out, jobs=1, progress=False)
    _same_as_reference(reference, records, out)
    assert run_sweep(SMALL, out, jobs=1, progress=False) == records  # resumes from its files
    with FolderLock(out):
        with pytest.raises(ValueError, match="in use by another running sweep"):
            run_sweep(SMALL, out, jobs=1, progress=False)


def test_refused_new_folder_is_removed_without_fcntl(tmp_path, no_fcntl):
    out = tmp_path / "new"
    with pytest.raises(RuntimeError, match="refused"):
        with locked_folder(out):
            assert (out / ".lock").exists()
            raise RuntimeError("refused")
    assert not out.exists()


# --- parent-death handling without prctl ---------------------------------------------------------


def test_parent_death_signal_without_ctypes(monkeypatch):
    monkeypatch.setitem(sys.modules, "ctypes", None)
    assert sweep_backends._set_parent_death_signal() is False


def test_parent_death_signal_without_prctl(monkeypatch):
    import ctypes

    class NoPrctl:  # a libc without prctl
        pass

    monkeypatch.setattr(ctypes, "CDLL", lambda *args, **kwargs: NoPrctl())
    assert sweep_backends._set_parent_death_signal() is False
    monkeypatch.setattr(sys, "platform", "darwin")
    assert sweep_backends._set_parent_death_signal() is False


def test_watchdog_notices_a_dead_parent(monkeypatch):
    class Parent:
        alive = True

        def is_alive(self):
            return self.alive

    parent = Parent()
    assert not sweep_backends._parent_gone(os.getppid(), None)
    assert not sweep_backends._parent_gone(os.getppid(), parent)
    assert sweep_backends._parent_gone(os.getppid() + 1, None)  # re-parented (POSIX)
    parent.alive = False
    assert sweep_backends._parent_gone(os.getppid(), parent)  # sentinel closed (Windows)

    class Exited(Exception):
        pass

    def exit_(code):
        raise Exited(code)

    monkeypatch.setattr(os, "_exit", exit_)
    with pytest.raises(Exited):
        sweep_backends._watch_parent(os.getppid(), parent)


def test_pool_sweep_without_prctl_gives_the_default_results(tmp_path, reference, monkeypatch):
    import ctypes

    marker = tmp_path / "fallback-used"
    real = ctypes.CDLL

    class NoPrctl:
        pass

    def cdll(name, *args, **kwargs):
        if name is None:  # the libc lookup of the parent-death signal
            marker.touch()
            return NoPrctl()
        return real(name, *args, **kwargs)

    monkeypatch.setattr(ctypes, "CDLL", cdll)  # forked workers inherit the patch
    out = tmp_path / "sweep"
    records = run_sweep(SMALL, out, jobs=2, progress=False)
    _same_as_reference(reference, records, out)
    if sweep_backends._start_method() == "fork":
        assert marker.exists()  # the workers took the fallback


# --- workers without fork ------------------------------------------------------------------------


def test_start_method_falls_back_to_spawn(monkeypatch):
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn", "forkserver"])
    assert sweep_backends._start_method() == "spawn"
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["fork", "spawn", "forkserver"])
    monkeypatch.setattr(sys, "platform", "darwin")  # fork offered but unsafe
    assert sweep_backends._start_method() == "spawn"
    monkeypatch.setattr(sys, "platform", "linux")
    assert sweep_backends._start_method() == "fork"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="compares with the forked path, Linux only")
def test_pool_sweep_without_fork_gives_the_default_results(tmp_path, reference, monkeypatch):
    forked = run_sweep(SMALL, tmp_path / "forked", jobs=2, progress=False)
    _same_as_reference(reference, forked, tmp_path / "forked")

    methods = []
    real_get_context = multiprocessing.get_context

    def get_context(method=None):
        methods.append(method)
        return real_get_context(method)

    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn", "forkserver"])
    monkeypatch.setattr(multiprocessing, "get_context", get_context)
    out = tmp_path / "spawned"
    spawned = run_sweep(SMALL, out, jobs=2, progress=False)
    assert methods == ["spawn"]
    _same_as_reference(reference, spawned, out)


# --- project metadata: licence, citation, changelog ----------------------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _project():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as handle:
        return tomllib.load(handle)["project"]


def test_license_file_is_the_mit_text_pyproject_declares():
    project = _project()
    assert project["license"] == "MIT" and "LICENSE" in project["license-files"]
    text = Path(ROOT, "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    holder = project["authors"][0]["name"]
    assert f"Copyright (c) 2026 {holder}\n" in text
    assert "Permission is hereby granted, free of charge" in text and 'THE SOFTWARE IS PROVIDED "AS IS"' in text
    assert "filelock>=3" in project["dependencies"]


def test_citation_file_is_valid_cff():
    yaml = pytest.importorskip("yaml")
    project = _project()
    with open(os.path.join(ROOT, "CITATION.cff"), encoding="utf-8") as handle:
        citation = yaml.safe_load(handle)
    assert isinstance(citation, dict)
    # The keys CFF 1.2.0 requires, with their types.
    assert citation["cff-version"] == "1.2.0"
    assert isinstance(citation["message"], str) and citation["message"].strip()
    assert isinstance(citation["title"], str) and citation["title"] == project["name"]
    authors = citation["authors"]
    assert isinstance(authors, list) and authors
    for author in authors:
        assert isinstance(author, dict) and (author.get("name") or author.get("family-names"))
    assert [author["name"] for author in authors] == [author["name"] for author in project["authors"]]
    # Optional keys used here: as pyproject says, and only keys CFF 1.2.0 defines.
    assert citation["version"] == project["version"]
    assert citation["license"] == project["license"]
    assert citation.get("type", "software") in ("software", "dataset")
    known = {"abstract", "authors", "cff-version", "commit", "contact", "date-released", "doi", "identifiers",
             "keywords", "license", "license-url", "message", "preferred-citation", "references", "repository",
             "repository-artifact", "repository-code", "title", "type", "url", "version"}
    assert set(citation) <= known
    assert all(isinstance(word, str) for word in citation.get("keywords", []))
    assert ("repository-code" in citation) == bool(project.get("urls"))


def test_changelog_keeps_an_unreleased_section_without_invented_dates():
    import re

    text = Path(ROOT, "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n") and "Keep a Changelog" in text
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert headings[0] == "[Unreleased]"
    for heading in headings[1:]:  # a release heading: [X.Y.Z] - YYYY-MM-DD
        assert re.fullmatch(r"\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}", heading)
    for section in re.findall(r"^### (.+)$", text, flags=re.MULTILINE):
        assert section in ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
