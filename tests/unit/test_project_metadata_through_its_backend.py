"""A project's name, version and build requirements come from its own build backend, run by
pypa/build on a copy (toolkit/env/project.py's module text): isolated first, then (a backend
importing what it does not declare) once more in the toolkit's own interpreter; a failure of
both is one line naming each and the log. The projects carry an in-tree backend
(``backend-path``, PEP 517) that needs nothing installed, so the real pypa/build and the real
uv (its isolated environment) run in well under a second."""

from __future__ import annotations

import io
import json
import os
import re
import sys
import textwrap
from pathlib import Path

import pytest

from toolkit.core.errors import StepFailed, UsageError
from toolkit.env.project import ProjectInfo, _runner, check_project, read_project

BACKEND = """\
import json, os
{head}
def get_requires_for_build_wheel(config_settings=None):
    return {extra!r}

def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    with open(os.environ["SEEN_OUT"], "w") as fh:
        json.dump(sorted(os.listdir(".")), fh)
    open("written-by-the-backend", "w").close()
    info = os.path.join(metadata_directory, "demo_pkg-1.2.3.dist-info")
    os.makedirs(info)
    with open(os.path.join(info, "METADATA"), "w") as fh:
        fh.write({metadata!r})
    return "demo_pkg-1.2.3.dist-info"

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise RuntimeError("not asked for")
"""
METADATA = "Metadata-Version: 2.1\nName: Demo.Pkg\nVersion: 1.2.3\n\nlong description\n"


def _project(root: Path, *, head: str = "", extra: tuple[str, ...] = (), metadata: str = METADATA) -> Path:
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(textwrap.dedent("""\
        [build-system]
        requires = []
        build-backend = "inbackend"
        backend-path = ["."]
        """))
    (root / "inbackend.py").write_text(BACKEND.format(head=head, extra=list(extra), metadata=metadata))
    for name in ("build", "dist", ".git", "demo.egg-info", "__pycache__", ".nox", ".venv"):
        (root / name).mkdir()
    (root / "kept.txt").write_text("")
    return root


def test_the_backend_names_the_project_and_runs_on_a_copy(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    seen = tmp_path / "seen.json"
    monkeypatch.setenv("SEEN_OUT", str(seen))
    # the backend's own import would write a __pycache__ into the copy before it lists it
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    project = _project(tmp_path / "proj")
    (project / "latest").symlink_to("build/out")  # a link to what no build made yet
    log = tmp_path / "logs" / "meta.log"
    info = read_project(str(project), log)
    assert info == ProjectInfo(str(project.resolve()), "Demo.Pkg", "1.2.3", ())
    assert info.package == "demo_pkg"
    # the copy leaves out what is no part of the source (a link is copied as a link, not
    # followed); the checkout itself is untouched
    assert json.loads(seen.read_text()) == ["inbackend.py", "kept.txt", "latest", "pyproject.toml"]
    assert not (project / "written-by-the-backend").exists()
    assert log.read_text(encoding="utf-8").startswith("# isolated: the project's metadata\n")


def test_a_backend_importing_what_it_does_not_declare_is_asked_again_not_isolated(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEEN_OUT", str(tmp_path / "seen.json"))
    # packaging is in the toolkit's interpreter, not in the empty isolated environment
    project = _project(tmp_path / "proj", head="import packaging", extra=("zlib-ng", "cmake", "zlib-ng"))
    log = tmp_path / "meta.log"
    info = read_project(str(project), log)
    assert (info.name, info.version, info.requires) == ("Demo.Pkg", "1.2.3", ("cmake", "zlib-ng"))
    text = log.read_text(encoding="utf-8")
    isolated, _, rest = text.partition("# not isolated: the project's metadata\n")
    assert isolated.startswith("# isolated: the project's metadata\n")
    assert "# failed: Backend 'inbackend' is not available." in isolated
    assert "# failed" not in rest


def test_metadata_without_a_version_fails_both_ways_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEEN_OUT", str(tmp_path / "seen.json"))
    project = _project(tmp_path / "proj", metadata="Metadata-Version: 2.1\nName: Demo\n")
    log = tmp_path / "meta.log"
    with pytest.raises(StepFailed) as caught:
        read_project(str(project), log)
    line = str(caught.value)
    assert caught.value.exit_code == 5 and "\n" not in line
    assert line.startswith(f"cannot read the metadata of the project at {project} (isolated: the project's "
                           "metadata names no Name or Version (")
    assert "; not isolated: the project's metadata names no Name or Version (" in line
    assert line.endswith(f"); its log: {log}")


def test_a_source_that_is_no_project_is_named(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        check_project(str(tmp_path / "none"))
    assert str(caught.value) == (f"--source {tmp_path / 'none'}: no such folder; give the folder holding the "
                                 "project's pyproject.toml or setup.py")
    with pytest.raises(UsageError) as caught:
        check_project(str(tmp_path))
    assert str(caught.value) == (f"--source {tmp_path}: not a Python project (no pyproject.toml, setup.py, "
                                 f"setup.cfg)")
    (tmp_path / "setup.cfg").write_text("")
    assert check_project(str(tmp_path)) == tmp_path.resolve()


def test_a_project_holding_a_named_pipe_is_refused_as_not_readable_unless_ignored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """shutil.copyfile refuses a FIFO (SpecialFileError, "is a named pipe") before opening it,
    so the copy the backend runs on cannot be made: a one-line refusal naming --source, the
    folder and the reason. A FIFO inside a folder the copy leaves out (build/) is never met."""
    monkeypatch.setenv("SEEN_OUT", str(tmp_path / "seen.json"))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    project = _project(tmp_path / "proj")
    os.mkfifo(project / "build" / "ignored.fifo")
    assert read_project(str(project), tmp_path / "ok.log").name == "Demo.Pkg"
    os.mkfifo(project / "events.fifo")
    with pytest.raises(UsageError) as caught:
        read_project(str(project), tmp_path / "meta.log")
    line = str(caught.value)
    assert line.startswith(f"--source {project}: not readable")
    assert "events.fifo" in line and "named pipe" in line
    assert "ignored.fifo" not in line


def test_a_hook_exiting_non_zero_is_named_by_the_interpreter_and_its_exit_status(
        tmp_path: Path) -> None:
    """The backend's hook ends the interpreter pypa/build runs it in with ``sys.exit(3)``: each
    way names that interpreter (the toolkit's own, not isolated) and the status 3."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[build-system]\nrequires = []\n'
                                            'build-backend = "inbackend"\nbackend-path = ["."]\n')
    (project / "inbackend.py").write_text("import sys\n\n"
                                          "def get_requires_for_build_wheel(config_settings=None):\n"
                                          "    sys.exit(3)\n")
    with pytest.raises(StepFailed) as caught:
        read_project(str(project), tmp_path / "meta.log")
    line = caught.value.message
    assert re.search(r"\(isolated: [^;]*/bin/python exited 3\W", line), line
    assert "; not isolated: " in line and f"{sys.executable} exited 3" in line


def test_a_hook_interpreter_that_cannot_be_started_is_named(tmp_path: Path) -> None:
    """The runner pypa/build calls for each hook: an interpreter that is not there is an
    ``OSError`` naming it and why (pypa/build reports it as the hook's failure)."""
    gone = tmp_path / "gone" / "python"
    log = io.StringIO()
    with pytest.raises(OSError) as caught:
        _runner(log)([str(gone), "-c", "pass"])  # type: ignore[operator]
    assert str(caught.value).startswith(f"{gone}: command not found")
    assert log.getvalue() == f"$ {gone} -c pass\n"


def test_an_uncopyable_project_is_refused_with_its_log_under_new_folders(tmp_path: Path) -> None:
    """A FIFO in the project: the copy fails (shutil.copytree: SpecialFileError) and the
    refusal is one ``UsageError``; the log file is made first, with the folders above it."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\nversion = '1'\n")
    os.mkfifo(project / "pipe")
    log = tmp_path / "logs" / "deeper" / "meta.log"
    with pytest.raises(UsageError, match="not readable"):
        read_project(str(project), log)
    assert log.is_file()
